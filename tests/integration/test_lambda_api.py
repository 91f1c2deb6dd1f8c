"""The event-source-mapping API of Lambda on sqsemu's port, driven by boto3's ``lambda`` client and the AWS CLI:
create, get, list (filters, paging), update, delete, the states, and Lambda's errors for bad input (docs/lambda.md;
shapes, codes and statuses from botocore's Lambda service model). Queues are made over both SQS wire protocols."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import client_for

from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration


def _noop(event: dict[str, Any], context: Any) -> None:
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer(functions={"worker": _noop, "other": _noop}) as srv:
        yield srv


@pytest.fixture
def account() -> str:
    return new_account()


@pytest.fixture
def lam(server: SQSServer, account: str) -> Any:
    return server.lambda_client(account)


@pytest.fixture
def sqs(server: SQSServer, protocol: str, account: str) -> Iterator[Any]:
    client = client_for(server.endpoint_url, protocol, access_key_id=account)
    yield client
    client.close()


def _queue(sqs: Any, name: str, **attributes: str) -> str:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def _error(exc: pytest.ExceptionInfo[ClientError]) -> tuple[str, int, str]:
    response = exc.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]


def test_create_get_list_update_delete(server: SQSServer, lam: Any, sqs: Any, account: str) -> None:
    arn = _queue(sqs, "jobs")
    created = lam.create_event_source_mapping(
        EventSourceArn=arn,
        FunctionName="worker",
        BatchSize=5,
        FunctionResponseTypes=["ReportBatchItemFailures"],
        ScalingConfig={"MaximumConcurrency": 3},
        FilterCriteria={"Filters": [{"Pattern": '{"body": {"kind": ["order"]}}'}]},
    )
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert created["State"] == "Creating"
    uid = created["UUID"]
    assert str(uuid.UUID(uid)) == uid
    assert created["EventSourceArn"] == arn
    assert created["FunctionArn"] == f"arn:aws:lambda:us-east-1:{account}:function:worker"
    assert created["EventSourceMappingArn"] == f"arn:aws:lambda:us-east-1:{account}:event-source-mapping:{uid}"
    assert created["BatchSize"] == 5 and created["MaximumBatchingWindowInSeconds"] == 0
    assert created["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert created["ScalingConfig"] == {"MaximumConcurrency": 3}
    assert created["FilterCriteria"] == {"Filters": [{"Pattern": '{"body": {"kind": ["order"]}}'}]}

    got = lam.get_event_source_mapping(UUID=uid)
    assert got["State"] == "Enabled"
    assert got["LastProcessingResult"] == "No records processed"
    assert {k: got[k] for k in ("UUID", "BatchSize", "EventSourceArn")} == {
        "UUID": uid,
        "BatchSize": 5,
        "EventSourceArn": arn,
    }

    listed = lam.list_event_source_mappings()["EventSourceMappings"]
    assert [m["UUID"] for m in listed] == [uid]

    updated = lam.update_event_source_mapping(UUID=uid, Enabled=False, BatchSize=8)
    assert updated["State"] == "Disabling" and updated["BatchSize"] == 8
    assert lam.get_event_source_mapping(UUID=uid)["State"] == "Disabled"
    enabling = lam.update_event_source_mapping(UUID=uid, Enabled=True)
    assert enabling["State"] == "Enabling"
    plain = lam.update_event_source_mapping(UUID=uid, MaximumBatchingWindowInSeconds=2)
    assert plain["State"] == "Updating" and plain["MaximumBatchingWindowInSeconds"] == 2
    assert lam.get_event_source_mapping(UUID=uid)["State"] == "Enabled"

    deleted = lam.delete_event_source_mapping(UUID=uid)
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 202 and deleted["State"] == "Deleting"
    server.settle()
    with pytest.raises(ClientError) as exc:
        lam.get_event_source_mapping(UUID=uid)
    assert _error(exc) == ("ResourceNotFoundException", 404, "The resource you requested does not exist.")
    assert lam.list_event_source_mappings()["EventSourceMappings"] == []


def test_list_filters_and_paging(lam: Any, sqs: Any) -> None:
    arns = [_queue(sqs, f"q{n}") for n in range(3)]
    ids = [lam.create_event_source_mapping(EventSourceArn=a, FunctionName="worker")["UUID"] for a in arns]
    ids.append(lam.create_event_source_mapping(EventSourceArn=arns[0], FunctionName="other")["UUID"])

    first = lam.list_event_source_mappings(MaxItems=2)
    assert [m["UUID"] for m in first["EventSourceMappings"]] == ids[:2]
    second = lam.list_event_source_mappings(MaxItems=2, Marker=first["NextMarker"])
    assert [m["UUID"] for m in second["EventSourceMappings"]] == ids[2:]
    assert "NextMarker" not in second
    pages = lam.get_paginator("list_event_source_mappings").paginate(PaginationConfig={"PageSize": 1})
    assert [m["UUID"] for page in pages for m in page["EventSourceMappings"]] == ids

    by_queue = lam.list_event_source_mappings(EventSourceArn=arns[0])["EventSourceMappings"]
    assert [m["UUID"] for m in by_queue] == [ids[0], ids[3]]
    by_function = lam.list_event_source_mappings(FunctionName="other")["EventSourceMappings"]
    assert [m["UUID"] for m in by_function] == [ids[3]]
    by_arn = lam.list_event_source_mappings(FunctionName=by_function[0]["FunctionArn"])["EventSourceMappings"]
    assert [m["UUID"] for m in by_arn] == [ids[3]]

    with pytest.raises(ClientError) as exc:
        lam.list_event_source_mappings(Marker="not-a-marker")
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)


def test_another_account_sees_none_of_them(server: SQSServer, lam: Any, sqs: Any) -> None:
    lam.create_event_source_mapping(EventSourceArn=_queue(sqs, "mine"), FunctionName="worker")
    assert server.lambda_client(new_account()).list_event_source_mappings()["EventSourceMappings"] == []


def test_boto3_errors(lam: Any, sqs: Any, account: str) -> None:
    arn = _queue(sqs, "errs")
    fifo = _queue(sqs, "errs.fifo", FifoQueue="true")
    cases: list[tuple[dict[str, Any], str, int, str | None]] = [
        (
            {"BatchSize": 11},
            "InvalidParameterValueException",
            400,
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10",
        ),
        ({"BatchSize": 10_001, "MaximumBatchingWindowInSeconds": 1}, "InvalidParameterValueException", 400, None),
        ({"MaximumBatchingWindowInSeconds": 301}, "InvalidParameterValueException", 400, None),
        (
            {"StartingPosition": "LATEST"},
            "InvalidParameterValueException",
            400,
            "StartingPosition is not valid for SQS event sources.",
        ),
        ({"FunctionResponseTypes": ["Nope"]}, "InvalidParameterValueException", 400, None),
        (
            {"FilterCriteria": {"Filters": [{"Pattern": "{not json"}]}},
            "InvalidParameterValueException",
            400,
            None,
        ),
        (
            {"FilterCriteria": {"Filters": [{"Pattern": '{"body": {"a": [{"wat": 1}]}}'}]}},
            "InvalidParameterValueException",
            400,
            None,
        ),
    ]
    for extra, code, status, message in cases:
        with pytest.raises(ClientError) as exc:
            lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker", **extra)
        got = _error(exc)
        assert got[:2] == (code, status), extra
        if message is not None:
            assert got[2] == message
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(
            EventSourceArn=fifo, FunctionName="worker", BatchSize=11, MaximumBatchingWindowInSeconds=1
        )
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(EventSourceArn=fifo, FunctionName="worker", MaximumBatchingWindowInSeconds=1)
    assert _error(exc) == ("InvalidParameterValueException", 400, "Batching window is not supported for FIFO queues.")
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(EventSourceArn=arn.replace("errs", "missing"), FunctionName="worker")
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(
            EventSourceArn=f"arn:aws:kinesis:us-east-1:{account}:stream/s", FunctionName="worker"
        )
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="no-such-function")
    assert _error(exc) == (
        "ResourceNotFoundException",
        404,
        f"Function not found: arn:aws:lambda:us-east-1:{account}:function:no-such-function",
    )

    uid = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")["UUID"]
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=f"{account}:function:worker")
    assert _error(exc) == (
        "ResourceConflictException",
        409,
        f'An event source mapping with SQS arn (" {arn} ") and function (" worker ") already exists. Please update '
        f"or delete the existing mapping with UUID {uid}",
    )
    with pytest.raises(ClientError) as exc:
        lam.update_event_source_mapping(UUID=uid, BatchSize=50)
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)
    assert lam.get_event_source_mapping(UUID=uid)["BatchSize"] == 10  # a refused update changes nothing
    for call in (lam.get_event_source_mapping, lam.update_event_source_mapping, lam.delete_event_source_mapping):
        with pytest.raises(ClientError) as exc:
            call(UUID=str(uuid.uuid4()))
        assert _error(exc)[:2] == ("ResourceNotFoundException", 404)


def _raw(
    server: SQSServer, method: str, path: str, body: bytes | None, **headers: str
) -> tuple[int, str, dict[str, Any]]:
    request = urllib.request.Request(server.endpoint_url + path, data=body, method=method)
    request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, "", json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("X-Amzn-ErrorType", ""), json.loads(exc.read())


def test_errors_beyond_the_sdk_checks(server: SQSServer, sqs: Any) -> None:
    """Values botocore refuses before sending (ranges), a body that is not JSON, an unknown path: the server's own
    answers, in Lambda's error shape."""
    arn = _queue(sqs, "raw")
    base = "/2015-03-31/event-source-mappings/"
    for params in (
        {"BatchSize": 0},
        {"ScalingConfig": {"MaximumConcurrency": 1}},
        {"ScalingConfig": {"MaximumConcurrency": 1001}},
        {"MaximumBatchingWindowInSeconds": -1},
        {"BatchSize": "ten"},
    ):
        status, code, body = _raw(
            server, "POST", base, json.dumps({"EventSourceArn": arn, "FunctionName": "worker", **params}).encode()
        )
        assert (status, code) == (400, "InvalidParameterValueException"), params
        assert body["Type"] == "User" and body["message"]
    status, code, body = _raw(server, "POST", base, b"{nope")
    assert (status, code) == (400, "InvalidParameterValueException")
    status, code, _ = _raw(server, "POST", base, json.dumps({"EventSourceArn": arn}).encode())
    assert (status, code) == (400, "InvalidParameterValueException")
    status, code, _ = _raw(server, "GET", "/2015-03-31/functions/worker/policy", None)  # GetPolicy: not served
    assert (status, code) == (404, "UnknownOperationException")


class _AwsCli:
    def __init__(self, endpoint_url: str, account: str) -> None:
        self.endpoint_url = endpoint_url
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.env.update(
            AWS_ACCESS_KEY_ID=account,
            AWS_SECRET_ACCESS_KEY="test",
            AWS_DEFAULT_REGION="us-east-1",
            AWS_CONFIG_FILE=os.devnull,
            AWS_SHARED_CREDENTIALS_FILE=os.devnull,
            AWS_MAX_ATTEMPTS="1",
        )

    def __call__(self, *args: str, ok: bool = True) -> Any:
        argv = [sys.executable, "-m", "awscli", "lambda", *args, "--endpoint-url", self.endpoint_url]
        result = subprocess.run([*argv, "--output", "json"], env=self.env, capture_output=True, text=True, timeout=120)
        if not ok:
            assert result.returncode != 0
            return result.stderr
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else None


def test_aws_cli(server: SQSServer, sqs: Any, account: str) -> None:
    arn = _queue(sqs, "cli")
    aws = _AwsCli(server.endpoint_url, account)
    created = aws(
        "create-event-source-mapping",
        "--function-name",
        "worker",
        "--event-source-arn",
        arn,
        "--batch-size",
        "7",
        "--function-response-types",
        "ReportBatchItemFailures",
    )
    assert created["State"] == "Creating" and created["BatchSize"] == 7
    uid = created["UUID"]
    assert aws("get-event-source-mapping", "--uuid", uid)["State"] == "Enabled"
    listed = aws("list-event-source-mappings", "--event-source-arn", arn)["EventSourceMappings"]
    assert [m["UUID"] for m in listed] == [uid]
    updated = aws("update-event-source-mapping", "--uuid", uid, "--no-enabled", "--batch-size", "3")
    assert updated["State"] == "Disabling" and updated["BatchSize"] == 3
    assert aws("delete-event-source-mapping", "--uuid", uid)["State"] == "Deleting"
    server.settle()
    stderr = aws("get-event-source-mapping", "--uuid", uid, ok=False)
    assert "ResourceNotFoundException" in stderr
    stderr = aws(
        "create-event-source-mapping",
        "--function-name",
        "worker",
        "--event-source-arn",
        arn,
        "--batch-size",
        "11",
        ok=False,
    )
    assert "InvalidParameterValueException" in stderr
    assert "Maximum batch window in seconds must be greater than 0" in stderr


def test_a_browsers_cross_site_request_is_refused(server: SQSServer, sqs: Any) -> None:
    """As for SQS calls (docs/behaviour.md, security): a page of another site cannot create mappings."""
    arn = _queue(sqs, "browser")
    body = json.dumps({"EventSourceArn": arn, "FunctionName": "worker"}).encode()
    path = "/2015-03-31/event-source-mappings/"
    status, code, _ = _raw(server, "POST", path, body, Origin="http://evil.example")
    assert (status, code) == (403, "AccessDeniedException")
    status, code, _ = _raw(server, "GET", path, None, Sec_Fetch_Site="cross-site")
    assert (status, code) == (403, "AccessDeniedException")
    status, _, answer = _raw(server, "GET", path, None, Sec_Fetch_Site="same-origin")
    assert status == 200 and "EventSourceMappings" in answer
