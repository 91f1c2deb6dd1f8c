"""The harness's own promises: each client really speaks its protocol, and both look alike to a test."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from harness import LegacySQSClient, client_for, json_client, start_long_poll
from harness.legacy import LEGACY_BOTO3, LEGACY_BOTOCORE

pytestmark = pytest.mark.integration


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def test_legacy_client_sends_aws_query(server: Any) -> None:
    client = client_for(server.endpoint_url, "query")
    try:
        assert isinstance(client, LegacySQSClient)
        assert client.meta.protocol == "query"
        assert client.meta.versions == {"boto3": LEGACY_BOTO3, "botocore": LEGACY_BOTOCORE}
        client.list_queues()
        sent = client.last_request()
        headers = {k.lower(): v for k, v in sent["headers"].items()}
        assert sent["method"] == "POST"
        assert headers["content-type"].startswith("application/x-www-form-urlencoded")
        assert "x-amz-target" not in headers
        assert "Action=ListQueues" in sent["body"].split("&")
        assert "Version=2012-11-05" in sent["body"].split("&")
    finally:
        client.close()


def test_current_boto3_sends_aws_json(server: Any) -> None:
    client = json_client(server.endpoint_url)
    seen: list[Any] = []
    client.meta.events.register("before-send.sqs", lambda request, **_: seen.append(request))
    client.list_queues()
    assert client.meta.protocol == "json"
    (request,) = seen
    assert _text(request.headers["Content-Type"]) == "application/x-amz-json-1.0"
    assert _text(request.headers["X-Amz-Target"]) == "AmazonSQS.ListQueues"


def test_errors_raise_client_error_with_the_modelled_class(sqs: Any, server: Any) -> None:
    missing = f"{server.endpoint_url}/000000000000/harness-missing-queue"
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_attributes(QueueUrl=missing, AttributeNames=["All"])
    assert isinstance(exc.value, sqs.exceptions.QueueDoesNotExist)
    assert exc.value.operation_name == "GetQueueAttributes"
    assert exc.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_binary_values_round_trip_as_bytes(sqs: Any, make_queue: Any) -> None:
    url = make_queue()
    blob = bytes(range(256))
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody="binary",
        MessageAttributes={"blob": {"DataType": "Binary", "BinaryValue": blob}},
    )
    assert sent["ResponseMetadata"]["RequestId"]
    (message,) = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    value = message["MessageAttributes"]["blob"]["BinaryValue"]
    assert isinstance(value, bytes)
    assert value == blob


def test_a_client_serves_calls_from_several_threads_at_once(
    manual_server: Any, manual_sqs: Any, manual_make_queue: Any
) -> None:
    # A long poll in one thread must not hold up a send in another, as with a real boto3 client. On the manual
    # clock the poll can only end through the send, so a client that ran one call at a time would not get
    # "wake up" from its poll (it would end in a read timeout first).
    url = manual_make_queue()
    poller = start_long_poll(manual_server.endpoint_url, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_sqs.send_message(QueueUrl=url, MessageBody="wake up")
        poller.join(timeout=30)
        assert not poller.is_alive()
        assert [m["Body"] for m in poller.messages()] == ["wake up"]
    finally:
        if poller.is_alive():
            manual_server.advance(20)
            poller.join(timeout=5)


def test_make_queue_names_are_unique_prefixed_and_attributes_applied(sqs: Any, make_queue: Any) -> None:
    first, second = make_queue("same"), make_queue("same", VisibilityTimeout=45)
    assert first != second
    assert first.rsplit("/", 1)[1].startswith("same-")
    attributes = sqs.get_queue_attributes(QueueUrl=second, AttributeNames=["VisibilityTimeout"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "45"


def test_client_for_a_12_digit_access_key_selects_that_account(server: Any, protocol: str) -> None:
    other = client_for(server.endpoint_url, protocol, access_key_id="111122223333")
    try:
        url = other.create_queue(QueueName="harness-account-check")["QueueUrl"]
        assert "/111122223333/" in url
        other.delete_queue(QueueUrl=url)
    finally:
        other.close()


def test_a_closed_query_client_leaves_its_worker_to_the_next_client_with_its_own_endpoint_and_account(
    server: Any, manual_server: Any
) -> None:
    first = client_for(server.endpoint_url, "query", access_key_id="111122223333")
    first.list_queues()
    worker_pid = first._worker.proc.pid
    first.close()
    second = client_for(manual_server.endpoint_url, "query", access_key_id="222233334444")
    try:
        assert second._worker.proc.pid == worker_pid  # the same process, a new client in it
        assert second.last_request() == {}  # nothing of the first client's is left
        url = second.create_queue(QueueName="harness-kept-worker")["QueueUrl"]
        assert url.startswith(manual_server.endpoint_url) and "/222233334444/" in url
        assert second.last_request()["url"].startswith(manual_server.endpoint_url)
        second.delete_queue(QueueUrl=url)
    finally:
        second.close()


def test_a_query_client_closed_with_a_call_still_running_does_not_leave_its_worker_to_the_next(
    manual_server: Any,
) -> None:
    url = json_client(manual_server.endpoint_url).create_queue(QueueName="harness-abandoned-poll")["QueueUrl"]
    client = client_for(manual_server.endpoint_url, "query")
    poller = start_long_poll(manual_server.endpoint_url, client, QueueUrl=url, WaitTimeSeconds=20)
    worker = client._worker
    try:
        client.close()  # the poll is still waiting: the worker is stopped, not kept
        assert worker.proc.poll() is not None
        other = client_for(manual_server.endpoint_url, "query")
        assert other._worker is not worker
        other.close()
        poller.join(timeout=10)
        assert not poller.is_alive()  # its call ended with the worker
    finally:
        json_client(manual_server.endpoint_url).delete_queue(QueueUrl=url)
