"""Functions written with AWS Lambda Powertools' BatchProcessor, run in-process and behind a real Lambda Invoke
API endpoint (``--lambda-endpoint``, ``[functions.NAME]``), their events validated with Powertools' own SQS model;
an unreachable endpoint; mappings declared in the config file and kept in durable mode (a real server process).
SQS calls go over both wire protocols."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.parser.models import SqsModel
from harness import ServerProcess, client_for
from harness.invoke import InvokeEndpoint

from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration


class OrdersFunction:
    """A Lambda function as Powertools' documentation writes one: BatchProcessor over SQS, one record handler that
    raises for the orders it cannot take; every event is validated with Powertools' parser model first."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.processed: list[str] = []

    def record_handler(self, record: SQSRecord) -> None:
        order = json.loads(record.body)
        if order.get("bad"):
            raise ValueError(f"cannot take order {order['id']}")
        self.processed.append(order["id"])

    def __call__(self, event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
        SqsModel.model_validate(event)  # Powertools' own SQS event model accepts it
        self.events.append(event)
        processor = BatchProcessor(event_type=EventType.SQS)
        return process_partial_response(event, self.record_handler, processor, context)

    def ids_per_invocation(self) -> list[list[str]]:
        return [[json.loads(r["body"])["id"] for r in e["Records"]] for e in self.events]


ORDERS = [{"id": "o1"}, {"id": "o2", "bad": True}, {"id": "o3"}, {"id": "o4", "bad": True}, {"id": "o5"}]


def _queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def _send_orders(sqs: Any, url: str) -> None:
    entries = [{"Id": str(n), "MessageBody": json.dumps(o)} for n, o in enumerate(ORDERS)]
    assert not sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed")


def _walk_partial_failures(server: SQSServer, protocol: str, function: OrdersFunction, name: str) -> None:
    """Five orders, two bad: the bad ones (and only they) come back once the visibility timeout ends, with the
    same message ids and a receive count of 2, as Lambda sends them again."""
    account = new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
    try:
        url, arn = _queue(sqs, "orders", VisibilityTimeout="20")
        server.lambda_client(account).create_event_source_mapping(
            EventSourceArn=arn, FunctionName=name, FunctionResponseTypes=["ReportBatchItemFailures"]
        )
        _send_orders(sqs, url)
        server.settle()
        assert function.ids_per_invocation() == [["o1", "o2", "o3", "o4", "o5"]]
        assert sorted(function.processed) == ["o1", "o3", "o5"]
        left = server.peek(url, account)
        assert sorted(json.loads(m["body"])["id"] for m in left) == ["o2", "o4"]
        first_ids = {r["messageId"] for r in function.events[0]["Records"] if "bad" in r["body"]}
        server.advance(20)
        server.settle()
        assert function.ids_per_invocation()[1:] == [["o2", "o4"]]
        again = function.events[1]["Records"]
        assert {r["messageId"] for r in again} == first_ids
        assert [r["attributes"]["ApproximateReceiveCount"] for r in again] == ["2", "2"]
    finally:
        sqs.close()


def test_powertools_batch_processor_in_process(protocol: str) -> None:
    function = OrdersFunction()
    with SQSServer(functions={"orders": function}) as server:
        _walk_partial_failures(server, protocol, function, "orders")


def test_powertools_batch_processor_behind_an_invoke_endpoint(protocol: str) -> None:
    function = OrdersFunction()
    with InvokeEndpoint({"orders": function}) as endpoint, SQSServer(lambda_endpoint=endpoint.url) as server:
        _walk_partial_failures(server, protocol, function, "orders")
        assert [name for name, _ in endpoint.calls] == ["orders", "orders"]


def test_function_error_behind_an_invoke_endpoint(protocol: str) -> None:
    def broken(event: dict[str, Any], context: Any) -> None:
        raise RuntimeError("boom")

    with InvokeEndpoint({"broken": broken}) as endpoint, SQSServer(lambda_endpoint=endpoint.url) as server:
        account = new_account()
        sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
        try:
            url, arn = _queue(sqs, "fails", VisibilityTimeout="30")
            lam = server.lambda_client(account)
            uid = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="broken")["UUID"]
            sqs.send_message(QueueUrl=url, MessageBody="x")
            server.settle()
            assert len(endpoint.calls) == 1
            assert [m["state"] for m in server.peek(url, account)] == ["in_flight"]
            result = lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"]
            assert result == "PROBLEM: Unhandled: boom"
            server.advance(30)
            server.settle()
            assert len(endpoint.calls) == 2
        finally:
            sqs.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_endpoint_leaves_the_messages_to_come_back(protocol: str) -> None:
    """Lambda keeps retrying; the messages return after their visibility timeout (docs/lambda.md)."""
    with SQSServer(lambda_endpoint=f"http://127.0.0.1:{_closed_port()}") as server:
        account = new_account()
        sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
        try:
            url, arn = _queue(sqs, "nowhere", VisibilityTimeout="10")
            lam = server.lambda_client(account)
            uid = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="anything")["UUID"]
            sqs.send_message(QueueUrl=url, MessageBody="kept")
            server.settle()
            (message,) = server.peek(url, account)
            assert message["state"] == "in_flight" and message["receive_count"] == 1
            assert lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"].startswith("PROBLEM: Invoke")
            server.advance(10)
            server.settle()
            (message,) = server.peek(url, account)
            assert message["receive_count"] == 2  # received again and tried again
        finally:
            sqs.close()


@pytest.fixture
def rie_endpoint() -> Iterator[tuple[InvokeEndpoint, OrdersFunction]]:
    """An endpoint serving one function named ``function``, as the runtime interface emulator does."""
    function = OrdersFunction()
    with InvokeEndpoint({"function": function}) as endpoint:
        yield endpoint, function


def test_config_file_and_durable_mode(
    tmp_path: Path, protocol: str, rie_endpoint: tuple[InvokeEndpoint, OrdersFunction]
) -> None:
    """``[[event_source_mappings]]`` and ``[functions.NAME]`` in the config file of a real server process; a
    mapping created over the API survives a restart in durable mode."""
    endpoint, function = rie_endpoint
    config = tmp_path / "sqsemu.toml"
    config.write_text(
        f"""
[[queues]]
name = "declared"

[[queues]]
name = "made-later"

[[event_source_mappings]]
queue = "declared"
function = "orders"
batch_size = 5
function_response_types = ["ReportBatchItemFailures"]

[functions.orders]
endpoint = "{endpoint.url}"
function_name = "function"
"""
    )
    args = ["--config", str(config), "--data-dir", str(tmp_path / "data"), "--clock", "manual"]
    server = ServerProcess(args).start()
    try:
        sqs = client_for(server.endpoint_url, protocol)
        lam = SQSServer.lambda_client_for(server.endpoint_url)
        (declared,) = lam.list_event_source_mappings()["EventSourceMappings"]
        assert declared["BatchSize"] == 5 and declared["State"] == "Enabled"
        assert declared["FunctionArn"].endswith(":function:orders")
        url = sqs.get_queue_url(QueueName="declared")["QueueUrl"]
        _send_orders(sqs, url)
        endpoint.wait_for(1)
        assert function.ids_per_invocation() == [["o1", "o2", "o3", "o4", "o5"]]
        later_arn = declared["EventSourceArn"].replace("declared", "made-later")
        made = lam.create_event_source_mapping(EventSourceArn=later_arn, FunctionName="orders", BatchSize=2)
        sqs.close()
    finally:
        assert server.stop() == 0
    server = ServerProcess(args).start()
    try:
        lam = SQSServer.lambda_client_for(server.endpoint_url)
        listed = {m["UUID"]: m for m in lam.list_event_source_mappings()["EventSourceMappings"]}
        assert set(listed) == {declared["UUID"], made["UUID"]}
        assert listed[made["UUID"]]["BatchSize"] == 2 and listed[made["UUID"]]["State"] == "Enabled"
        sqs = client_for(server.endpoint_url, protocol)
        url = sqs.get_queue_url(QueueName="made-later")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": "after-restart"}))
        calls = endpoint.wait_for(2)
        assert json.loads(calls[-1][1]["Records"][0]["body"]) == {"id": "after-restart"}
        sqs.close()
    finally:
        assert server.stop() == 0


def test_config_file_errors_are_refused_at_start(tmp_path: Path) -> None:
    from sqsemu.declare import ConfigFileError, config_from_file

    config = tmp_path / "bad.toml"
    config.write_text('[[event_source_mappings]]\nqueue = "q"\nfunction = "f"\nbatch_sise = 3\n')
    with pytest.raises(ConfigFileError, match="batch_sise"):
        config_from_file(str(config))
    config.write_text('[[event_source_mappings]]\nqueue = "q.fifo"\nfunction = "f"\nbatch_size = 11\n')
    with pytest.raises(ConfigFileError, match="BatchSize must be between 1 and 10 for FIFO queues"):
        config_from_file(str(config))
    config.write_text('[functions.f]\nendpoint = "ftp://nope"\n')
    with pytest.raises(ConfigFileError, match="endpoint"):
        config_from_file(str(config))
