"""Event source mappings under faults and hostile input (issue 28): a function endpoint that misbehaves in every
way is a function error for the batch and no worker dies; a body the filter cannot evaluate matches nothing; a
worker that still fails is restarted, counted, logged once with its traceback and said in LastProcessingResult;
a batching window longer than the visibility timeout never puts one message in a batch twice. Real sockets: the
SQS calls over both wire protocols, the Lambda API through boto3, the endpoint a raw TCP server
(``harness/badinvoke.py``); the manual clock, never sleeps."""

from __future__ import annotations

import json
import logging
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from harness import client_for
from harness.badinvoke import MODES, MisbehavingEndpoint

from sqsemu.eventsource import poller
from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def endpoint() -> Iterator[MisbehavingEndpoint]:
    with MisbehavingEndpoint(hang_s=5.0) as bad:
        yield bad


@pytest.fixture(scope="module")
def server(endpoint: MisbehavingEndpoint) -> Iterator[SQSServer]:
    with SQSServer(lambda_endpoint=endpoint.url) as srv:
        yield srv


def _queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def _restarts(server: SQSServer) -> float:
    with urllib.request.urlopen(f"{server.endpoint_url}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    for line in text.splitlines():
        if line.startswith("sqsemu_lambda_worker_restarts_total "):
            return float(line.split()[1])
    raise AssertionError("sqsemu_lambda_worker_restarts_total is not exposed")


def _workers(server: SQSServer, uid: str) -> int:
    return len(server._event_sources().runners[uid].workers)  # noqa: SLF001 - the workers alive, for the check


@pytest.mark.parametrize("mode", MODES)
def test_a_misbehaving_endpoint_is_a_function_error_and_no_worker_dies(
    server: SQSServer, endpoint: MisbehavingEndpoint, protocol: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(poller, "MIN_INVOKE_TIMEOUT_S", 1.0)  # the hang ends the invocation after 1 real second
    account = new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
    lam = server.lambda_client(account)
    restarts_before = _restarts(server)
    try:
        url, arn = _queue(sqs, f"bad-{mode}", VisibilityTimeout="0")
        endpoint.mode = mode
        calls_before = endpoint.calls[mode]
        uid = lam.create_event_source_mapping(
            EventSourceArn=arn,
            FunctionName="fn",
            FunctionResponseTypes=["ReportBatchItemFailures"],
            ScalingConfig={"MaximumConcurrency": 2},
        )["UUID"]
        sqs.send_message(QueueUrl=url, MessageBody="m1")
        server.settle(timeout=30)
        assert endpoint.calls[mode] > calls_before
        left = server.peek(url, account)
        assert [m["body"] for m in left] == ["m1"]  # not deleted: the whole batch comes back
        result = lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"]
        assert result.startswith("PROBLEM: "), result
        # the same message again, more than the workers there are: none of them dies
        for _ in range(3):
            server.advance(31)  # past the longest back-off
            server.settle(timeout=30)
        assert _workers(server, uid) == 2
        assert _restarts(server) == restarts_before  # a misbehaving function is an outcome, not a failure
        endpoint.mode = "ok"
        server.advance(31)
        server.settle(timeout=30)
        assert server.peek(url, account) == []
        assert lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"
        lam.delete_event_source_mapping(UUID=uid)
        server.settle()
    finally:
        endpoint.mode = "ok"
        sqs.close()


@pytest.fixture
def recorder_server() -> Iterator[tuple[SQSServer, list[list[str]]]]:
    seen: list[list[str]] = []

    def record(event: dict[str, Any], context: Any) -> None:
        seen.append([r["body"] for r in event["Records"]])

    with SQSServer(functions={"rec": record}) as srv:
        yield srv, seen


HOSTILE_BODIES = [
    "[" * 100_000 + "]" * 100_000,  # RecursionError in json.loads before
    '{"n": ' + "[" * 5000 + "1" + "]" * 5000 + "}",
    '{"n": 1' + "0" * 400 + "}",  # OverflowError in float() before
    '{"n": -1' + "0" * 400 + "}",
    '{"s": "' + "\\\\" * 50_000 + '"}',
]


def test_a_body_the_filter_cannot_evaluate_matches_nothing(
    recorder_server: tuple[SQSServer, list[list[str]]], protocol: str
) -> None:
    server, seen = recorder_server
    account = new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
    try:
        url, arn = _queue(sqs, "filtered")
        lam = server.lambda_client(account)
        pattern = {"body": {"n": [{"numeric": [">", 5]}]}}
        uid = lam.create_event_source_mapping(
            EventSourceArn=arn,
            FunctionName="rec",
            FilterCriteria={"Filters": [{"Pattern": json.dumps(pattern)}]},
            ScalingConfig={"MaximumConcurrency": 2},
        )["UUID"]
        for body in HOSTILE_BODIES:
            sqs.send_message(QueueUrl=url, MessageBody=body)
            server.settle()
        sqs.send_message(QueueUrl=url, MessageBody='{"n": 7}')
        server.settle()
        big = '{"n": 1' + "0" * 400 + "}"
        assert seen == [[big], ['{"n": 7}']]  # a huge number is a number, compared without overflow
        assert server.peek(url, account) == []
        assert _workers(server, uid) == 2
        assert server._event_sources().worker_restarts == 0  # noqa: SLF001
    finally:
        sqs.close()


def test_a_pattern_nested_too_deep_is_refused(recorder_server: tuple[SQSServer, list[list[str]]]) -> None:
    server, _ = recorder_server
    account = new_account()
    sqs = client_for(server.endpoint_url, "json", access_key_id=account)
    try:
        _, arn = _queue(sqs, "deep")
        lam = server.lambda_client(account)
        pattern = '{"a":' * 300 + "[1]" + "}" * 300
        with pytest.raises(lam.exceptions.InvalidParameterValueException):
            lam.create_event_source_mapping(
                EventSourceArn=arn, FunctionName="rec", FilterCriteria={"Filters": [{"Pattern": pattern}]}
            )
    finally:
        sqs.close()


def test_a_worker_that_fails_is_restarted_counted_and_logged_once(
    recorder_server: tuple[SQSServer, list[list[str]]],
    protocol: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, seen = recorder_server
    account = new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
    real_record = poller.record  # type: ignore[attr-defined]
    failures = {"left": 2}

    def failing_record(queue: Any, received: Any) -> dict[str, Any]:
        if failures["left"] > 0:
            failures["left"] -= 1
            raise RuntimeError("internal error for the test")
        return real_record(queue, received)

    monkeypatch.setattr(poller, "record", failing_record)
    caplog.set_level(logging.WARNING, logger="sqsemu.eventsource")
    try:
        url, arn = _queue(sqs, "dies", VisibilityTimeout="10")
        lam = server.lambda_client(account)
        uid = lam.create_event_source_mapping(
            EventSourceArn=arn, FunctionName="rec", ScalingConfig={"MaximumConcurrency": 2}
        )["UUID"]
        server.settle()
        sqs.send_message(QueueUrl=url, MessageBody="survives")
        server.settle()
        assert seen == []
        result = lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"]
        assert result.startswith("PROBLEM: Worker restarted after an internal error: RuntimeError"), result
        assert _workers(server, uid) == 2
        server.advance(11)  # the visibility timeout ends; the back-off (1 s, then 2 s) too
        server.settle()
        server.advance(11)
        server.settle()
        assert seen == [["survives"]]
        assert server.peek(url, account) == []
        assert _restarts(server) >= 2
        tracebacks = [r for r in caplog.records if r.exc_info and "internal error for the test" in str(r.exc_info[1])]
        assert len(tracebacks) == 1  # once with its traceback, a line after that
        assert lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"
    finally:
        sqs.close()


def test_a_batch_never_holds_the_same_message_twice(
    recorder_server: tuple[SQSServer, list[list[str]]], protocol: str
) -> None:
    server, seen = recorder_server
    account = new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
    try:
        url, arn = _queue(sqs, "window", VisibilityTimeout="1")
        lam = server.lambda_client(account)
        lam.create_event_source_mapping(
            EventSourceArn=arn,
            FunctionName="rec",
            BatchSize=50,
            MaximumBatchingWindowInSeconds=5,
            ScalingConfig={"MaximumConcurrency": 2},
        )
        server.settle()
        sqs.send_message(QueueUrl=url, MessageBody="once")
        server.settle()
        for _ in range(6):  # the visibility timeout (1 s) ends four times within the window (5 s)
            server.advance(1)
            server.settle()
        assert seen and all(len(batch) == len(set(batch)) for batch in seen), seen
        assert seen[0] == ["once"]
        assert server.peek(url, account) == []
    finally:
        sqs.close()
