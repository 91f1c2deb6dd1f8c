"""The SQS endpoint driven as raw ASGI: both protocols, queue-URL paths, errors, limits, long-poll disconnects."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest

from sqsemu.clock import Clock, ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace, Queue, Received
from sqsemu.engine.message import SendEntry
from tests.unit.app_helpers import call_asgi, json_call, make_app, query_call
from tests.unit.engine_helpers import START_MS

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
JSON_CT = "application/x-amz-json-1.0"
DEFAULT = Namespace("000000000000", "us-east-1")


def xml(resp: Any) -> ET.Element:
    return ET.fromstring(resp.body)


@pytest.fixture
def app() -> tuple[Any, Broker]:
    app, broker = make_app()
    broker.create_queue(DEFAULT, "q", {}, {})
    return app, broker


def test_query_send_and_receive_round_trip(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    body = '"&quot;&quot;\r\n<x>'
    resp = query_call(
        asgi,
        {
            "Action": "SendMessage",
            "Version": "2012-11-05",
            "QueueUrl": "http://localhost:9324/000000000000/q",
            "MessageBody": body,
            "MessageAttribute.1.Name": "Foo",
            "MessageAttribute.1.Value.DataType": "String",
            "MessageAttribute.1.Value.StringValue": "Bar",
        },
    )
    assert resp.status == 200
    assert resp.headers["content-type"] == "text/xml"
    root = xml(resp)
    assert root.tag == NS + "SendMessageResponse"
    assert root.findtext(f"{NS}SendMessageResult/{NS}MD5OfMessageAttributes") == "ae7155c6026991b6d54b11589678bf9c"
    assert root.findtext(f"{NS}ResponseMetadata/{NS}RequestId") == resp.headers["x-amzn-requestid"]

    resp = query_call(
        asgi,
        {"Action": "ReceiveMessage", "QueueUrl": "q", "MessageAttributeName.1": "All", "AttributeName": "All"},
        method="GET",
    )
    assert resp.status == 200
    assert "&#xD;" in resp.text and "&quot;&amp;quot;" in resp.text
    msg = xml(resp).find(f"{NS}ReceiveMessageResult/{NS}Message")
    assert msg is not None
    assert msg.findtext(NS + "Body") == body
    assert msg.findtext(f"{NS}MessageAttribute/{NS}Value/{NS}StringValue") == "Bar"
    names = [a.findtext(NS + "Name") for a in msg.findall(NS + "Attribute")]
    assert set(names) == {"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp"}


def test_query_empty_receive(app: tuple[Any, Broker]) -> None:
    resp = query_call(app[0], {"Action": "ReceiveMessage", "QueueUrl": "q", "WaitTimeSeconds": "0"})
    assert b"<ReceiveMessageResult/>" in resp.body


def test_query_to_queue_url_path(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    broker.create_queue(DEFAULT, "other", {}, {})
    resp = query_call(asgi, {"Action": "SendMessage", "MessageBody": "x"}, path="/000000000000/q/")
    assert resp.status == 200
    assert len(broker.get_queue(DEFAULT, "q").messages) == 1
    # the QueueUrl parameter wins over the path
    resp = query_call(asgi, {"Action": "SendMessage", "MessageBody": "x", "QueueUrl": "other"}, path="/000000000000/q")
    assert resp.status == 200
    assert len(broker.get_queue(DEFAULT, "other").messages) == 1
    assert len(broker.get_queue(DEFAULT, "q").messages) == 1
    # GetQueueUrl works on another queue's URL
    resp = query_call(asgi, {"Action": "GetQueueUrl", "QueueName": "other"}, path="/000000000000/q")
    assert xml(resp).findtext(f"{NS}GetQueueUrlResult/{NS}QueueUrl") == "http://localhost:9324/000000000000/other"


@pytest.mark.parametrize("action", ["CreateQueue", "ListQueues", "Bogus"])
def test_invalid_action_on_queue_url(app: tuple[Any, Broker], action: str) -> None:
    resp = query_call(app[0], {"Action": action, "QueueName": "x"}, method="GET", path="/000000000000/q")
    assert resp.status == 400
    root = xml(resp)
    assert root.findtext(f"{NS}Error/{NS}Code") == "InvalidAction"
    assert root.findtext(f"{NS}Error/{NS}Message") == f"The action {action} is not valid for this endpoint."
    assert resp.headers["x-amzn-query-error"] == "InvalidAction;Sender"


def test_unknown_query_action_on_root(app: tuple[Any, Broker]) -> None:
    resp = query_call(app[0], {"Action": "Bogus"})
    assert resp.status == 400
    assert xml(resp).findtext(f"{NS}Error/{NS}Code") == "InvalidAction"


def test_no_action_is_404(app: tuple[Any, Broker]) -> None:
    resp = asyncio.run(call_asgi(app[0], "GET", "/000000000000/q", {"Host": "h"}))
    assert resp.status == 404
    assert resp.body == b"<UnknownOperationException/>"
    assert resp.headers["x-amzn-requestid"]


def test_query_errors(app: tuple[Any, Broker]) -> None:
    resp = query_call(app[0], {"Action": "SendMessage", "QueueUrl": "nope", "MessageBody": "x"})
    assert resp.status == 400
    root = xml(resp)
    assert root.findtext(f"{NS}Error/{NS}Code") == "AWS.SimpleQueueService.NonExistentQueue"
    assert root.findtext(f"{NS}Error/{NS}Message") == "The specified queue does not exist for this wsdl version."
    assert root.findtext(NS + "RequestId") == resp.headers["x-amzn-requestid"]
    resp = query_call(app[0], {"Action": "SendMessage", "MessageBody": "x"})
    assert xml(resp).findtext(f"{NS}Error/{NS}Message") == "The request must contain the parameter QueueUrl."


def test_query_create_queue_legacy(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    resp = query_call(asgi, {"Action": "CreateQueue", "QueueName": "new", "DefaultVisibilityTimeout": "45"})
    assert resp.status == 200
    assert broker.get_queue_attributes(broker.get_queue(DEFAULT, "new"), ["VisibilityTimeout"]) == {
        "VisibilityTimeout": "45"
    }


def test_query_no_output_response(app: tuple[Any, Broker]) -> None:
    resp = query_call(app[0], {"Action": "PurgeQueue", "QueueUrl": "q"})
    root = xml(resp)
    assert root.tag == NS + "PurgeQueueResponse"
    assert root.find(NS + "PurgeQueueResult") is None


def test_json_error_headers(app: tuple[Any, Broker]) -> None:
    resp = json_call(app[0], "SendMessage", {"QueueUrl": "nope", "MessageBody": "x"})
    assert resp.status == 400
    assert resp.headers["content-type"] == "application/x-amz-json-1.0"
    assert resp.headers["x-amzn-query-error"] == "AWS.SimpleQueueService.NonExistentQueue;Sender"
    assert resp.headers["x-amzn-requestid"]
    assert resp.json() == {
        "__type": "com.amazonaws.sqs#QueueDoesNotExist",
        "message": "The specified queue does not exist.",
    }


def test_json_missing_queue_url(app: tuple[Any, Broker]) -> None:
    resp = json_call(app[0], "DeleteQueue", {})
    assert resp.status == 400
    assert resp.json()["message"] == "The request must contain the parameter QueueUrl."
    assert resp.headers["x-amzn-query-error"] == "MissingParameter;Sender"


def test_json_serialization_error(app: tuple[Any, Broker]) -> None:
    resp = asyncio.run(
        call_asgi(
            app[0],
            "POST",
            "/",
            {"X-Amz-Target": "AmazonSQS.ListQueues", "Content-Type": "application/x-amz-json-1.0"},
            b"[1,2]",
        )
    )
    assert resp.status == 400
    assert resp.json()["__type"].endswith("#SerializationException")


def test_json_unknown_and_missing_target(app: tuple[Any, Broker]) -> None:
    resp = json_call(app[0], "Bogus", {})
    assert resp.status == 400
    assert resp.json()["__type"].endswith("#InvalidAction")
    resp = asyncio.run(call_asgi(app[0], "POST", "/", {"Content-Type": "application/x-amz-json-1.0"}, b"{}"))
    assert resp.status == 404
    assert resp.json()["__type"].endswith("#UnknownOperationException")


def test_json_on_queue_path_and_trace_header(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    resp = json_call(
        asgi,
        "SendMessage",
        {"QueueUrl": "http://elsewhere:1/000000000000/q", "MessageBody": "x"},
        path="/000000000000/q",
        headers={"X-Amzn-Trace-Id": "Root=1-abc"},
    )
    assert resp.status == 200
    assert set(resp.json()) == {"MD5OfMessageBody", "MessageId"}
    stored = broker.get_queue(DEFAULT, "q").messages[resp.json()["MessageId"]]
    assert stored.trace_header == "Root=1-abc"


def test_fifo_sequence_number(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    queue = broker.create_queue(DEFAULT, "f.fifo", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}, {})
    numbers = []
    for body in ("x", "y"):
        resp = json_call(asgi, "SendMessage", {"QueueUrl": "f.fifo", "MessageBody": body, "MessageGroupId": "g"})
        sent = resp.json()
        assert sent["SequenceNumber"] == queue.messages[sent["MessageId"]].sequence_number
        numbers.append(int(sent["SequenceNumber"]))
    assert numbers[0] < numbers[1]


def test_base_url_config() -> None:
    asgi, broker = make_app(Config(base_url="https://sqs.example:443"))
    resp = json_call(asgi, "CreateQueue", {"QueueName": "z"})
    assert resp.json() == {"QueueUrl": "https://sqs.example:443/000000000000/z"}


def test_body_cap() -> None:
    asgi, broker = make_app()
    asgi.max_body_bytes = 100
    resp = asyncio.run(
        call_asgi(
            asgi,
            "POST",
            "/",
            {"X-Amz-Target": "AmazonSQS.ListQueues", "Content-Type": JSON_CT},
            chunks=[b"{" + b" " * 80, b" " * 80 + b"}"],
        )
    )
    assert resp.status == 400
    assert "larger than 100 bytes" in resp.json()["message"]
    resp = asyncio.run(
        call_asgi(asgi, "POST", "/", {"Content-Length": "1000", "Content-Type": "application/x-www-form-urlencoded"})
    )
    assert resp.status == 400
    assert b"<Code>InvalidParameterValue</Code>" in resp.body


def test_chunked_body() -> None:
    asgi, _ = make_app()
    resp = asyncio.run(
        call_asgi(
            asgi,
            "POST",
            "/",
            {"X-Amz-Target": "AmazonSQS.CreateQueue", "Content-Type": JSON_CT, "Host": "h:1"},
            chunks=[b'{"QueueN', b'ame": "c"}'],
        )
    )
    assert resp.json() == {"QueueUrl": "http://h:1/000000000000/c"}


class _Boom(Broker):
    """The real broker, except that ListQueues fails unexpectedly (to reach the InternalError path)."""

    def list_queues(self, ns: Namespace, prefix: str | None) -> list[Queue]:
        raise RuntimeError("boom")


def test_internal_error_both_formats(caplog: pytest.LogCaptureFixture) -> None:
    asgi, _ = make_app(broker=_Boom(ManualClock(START_MS)))
    resp = json_call(asgi, "ListQueues", {})
    assert resp.status == 500
    assert resp.headers["x-amzn-query-error"] == "InternalError;Receiver"
    assert "boom" not in resp.text and "Traceback" not in resp.text
    resp = query_call(asgi, {"Action": "ListQueues"})
    assert resp.status == 500
    assert xml(resp).findtext(f"{NS}Error/{NS}Type") == "Receiver"
    assert "RuntimeError: boom" in caplog.text


def test_long_poll_disconnect(app: tuple[Any, Broker]) -> None:
    asgi, broker = app

    async def scenario() -> Any:
        gone = asyncio.Event()
        task = asyncio.create_task(
            call_asgi(
                asgi,
                "POST",
                "/",
                {"X-Amz-Target": "AmazonSQS.ReceiveMessage", "Content-Type": JSON_CT},
                json.dumps({"QueueUrl": "q", "WaitTimeSeconds": 20}).encode(),
                disconnect_after_body=gone,
            )
        )
        for _ in range(100):
            if queue.waiters.waiting_count():
                break
            await asyncio.sleep(0)
        assert queue.waiters.waiting_count() == 1  # parked: the manual clock never ends its 20 s wait
        gone.set()
        return await asyncio.wait_for(task, 2)

    queue = broker.get_queue(DEFAULT, "q")
    resp = asyncio.run(scenario())
    assert resp.json() == {}
    assert not queue.waiters  # the disconnect took the waiter out of the line


class _Watched(Broker):
    """The real broker, recording each ReceiveMessage's ``disconnected`` (None: no disconnect watch)."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.watches: list[asyncio.Future[None] | Callable[[], asyncio.Future[None]] | None] = []

    async def receive_message(
        self,
        queue: Queue,
        *,
        max_number_of_messages: int | None = None,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        receive_request_attempt_id: str | None = None,
        disconnected: asyncio.Future[None] | Callable[[], asyncio.Future[None]] | None = None,
    ) -> list[Received]:
        self.watches.append(disconnected)
        return await super().receive_message(
            queue,
            max_number_of_messages=max_number_of_messages,
            visibility_timeout=visibility_timeout,
            wait_time_seconds=wait_time_seconds,
            receive_request_attempt_id=receive_request_attempt_id,
            disconnected=disconnected,
        )


def test_short_poll_has_no_disconnect_watch() -> None:
    broker = _Watched(ManualClock(START_MS))
    asgi, _ = make_app(broker=broker)
    queue = broker.create_queue(DEFAULT, "q", {}, {})
    for body in "abcd":
        broker.send_message(queue, SendEntry(body), "000000000000")
    resp = json_call(asgi, "ReceiveMessage", {"QueueUrl": "q", "WaitTimeSeconds": 0, "MaxNumberOfMessages": 3})
    assert [m["Body"] for m in resp.json()["Messages"]] == ["a", "b", "c"]
    assert broker.watches == [None]
    resp = json_call(asgi, "ReceiveMessage", {"QueueUrl": "q", "WaitTimeSeconds": 1})
    assert [m["Body"] for m in resp.json()["Messages"]] == ["d"]
    assert len(broker.watches) == 2 and broker.watches[1] is not None  # a long poll watches


def test_presigned_credential_sets_namespace() -> None:
    asgi, broker = make_app()
    params = {
        "Action": "CreateQueue",
        "QueueName": "pre",
        "X-Amz-Credential": "123456789012/20240101/eu-west-1/sqs/aws4_request",
    }
    resp = query_call(asgi, params, method="GET", headers={"Authorization": ""})
    assert resp.status == 200
    assert xml(resp).findtext(f"{NS}CreateQueueResult/{NS}QueueUrl") == "http://localhost:9324/123456789012/pre"
    assert broker.get_queue(Namespace("123456789012", "eu-west-1"), "pre").name == "pre"


# --- Query response negotiation (Accept: application/json) ---------------------------------------------------------

ACCEPT_JSON = {"Accept": "application/json"}


def test_query_with_accept_json_is_answered_in_json(app: tuple[Any, Broker]) -> None:
    resp = query_call(app[0], {"Action": "GetQueueUrl", "QueueName": "q"}, headers=ACCEPT_JSON)
    assert resp.status == 200
    assert resp.headers["content-type"] == "application/json"
    assert resp.json() == {
        "GetQueueUrlResponse": {
            "GetQueueUrlResult": {"QueueUrl": "http://localhost:9324/000000000000/q"},
            "ResponseMetadata": {"RequestId": resp.headers["x-amzn-requestid"]},
        }
    }
    resp = query_call(app[0], {"Action": "GetQueueUrl", "QueueName": "q"}, method="GET", headers=ACCEPT_JSON)
    assert resp.json()["GetQueueUrlResponse"]["GetQueueUrlResult"] == {
        "QueueUrl": "http://localhost:9324/000000000000/q"
    }


def _without_request_id(resp: Any) -> Any:
    """The JSON body of ``resp`` with its RequestId (checked against ``x-amzn-RequestId``) replaced by ``"rid"``."""
    body = resp.json()
    [response] = body.values()
    assert response["ResponseMetadata"] == {"RequestId": resp.headers["x-amzn-requestid"]}
    response["ResponseMetadata"]["RequestId"] = "rid"
    return body


def test_query_list_queues_and_receive_in_json(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    resp = query_call(asgi, {"Action": "ListQueues"}, headers=ACCEPT_JSON)
    assert resp.headers["content-type"] == "application/json"
    assert _without_request_id(resp) == {
        "ListQueuesResponse": {
            "ListQueuesResult": {
                "NextExclusiveStartQueueName": None,
                "NextToken": None,
                "queueUrls": ["http://localhost:9324/000000000000/q"],
            },
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    broker.delete_queue(broker.get_queue(DEFAULT, "q"))
    resp = query_call(asgi, {"Action": "ListQueues"}, headers=ACCEPT_JSON)
    assert _without_request_id(resp) == {
        "ListQueuesResponse": {
            "ListQueuesResult": {"NextExclusiveStartQueueName": None, "NextToken": None, "queueUrls": None},
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    broker.create_queue(DEFAULT, "q", {}, {})
    params = {"Action": "ReceiveMessage", "QueueUrl": "http://localhost:9324/000000000000/q"}
    resp = query_call(asgi, params, headers=ACCEPT_JSON)
    assert _without_request_id(resp) == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {"messages": None},
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }


def test_query_error_with_accept_json(app: tuple[Any, Broker]) -> None:
    resp = query_call(app[0], {"Action": "ListQueues"}, path="/000000000000/q", headers=ACCEPT_JSON)
    assert resp.status == 400
    assert resp.headers["content-type"] == "application/json"
    assert resp.headers["x-amzn-query-error"] == "InvalidAction;Sender"
    assert resp.json() == {
        "Error": {
            "Type": "Sender",
            "Code": "InvalidAction",
            "Message": "The action ListQueues is not valid for this endpoint.",
        },
        "RequestId": resp.headers["x-amzn-requestid"],
    }


def test_query_without_json_accept_stays_xml(app: tuple[Any, Broker]) -> None:
    for headers in ({}, {"Accept": "*/*"}, {"Accept": "text/xml"}):
        resp = query_call(app[0], {"Action": "GetQueueUrl", "QueueName": "q"}, headers=headers)
        assert resp.headers["content-type"] == "text/xml"
        assert xml(resp).tag == NS + "GetQueueUrlResponse"


def test_no_action_with_accept_json_is_still_the_xml_404(app: tuple[Any, Broker]) -> None:
    resp = asyncio.run(call_asgi(app[0], "GET", "/000000000000/q", {"Host": "h", **ACCEPT_JSON}))
    assert resp.status == 404
    assert resp.headers["content-type"] == "text/xml"
    assert resp.body == b"<UnknownOperationException/>"


def test_json_protocol_ignores_accept(app: tuple[Any, Broker]) -> None:
    resp = json_call(app[0], "GetQueueUrl", {"QueueName": "q"}, headers=ACCEPT_JSON)
    assert resp.headers["content-type"] == "application/x-amz-json-1.0"
    assert resp.json() == {"QueueUrl": "http://localhost:9324/000000000000/q"}


def test_errors_before_detection_and_internal_errors_follow_accept() -> None:
    asgi, _ = make_app()
    asgi.max_body_bytes = 100
    headers = {"Content-Length": "1000", "Content-Type": "application/x-www-form-urlencoded", **ACCEPT_JSON}
    resp = asyncio.run(call_asgi(asgi, "POST", "/", headers))
    assert resp.status == 400
    assert resp.headers["content-type"] == "application/json"
    assert resp.json()["Error"]["Code"] == "InvalidParameterValue"
    asgi, _ = make_app(broker=_Boom(ManualClock(START_MS)))
    resp = query_call(asgi, {"Action": "ListQueues"}, headers=ACCEPT_JSON)
    assert resp.status == 500
    assert resp.json()["Error"] == {
        "Type": "Receiver",
        "Code": "InternalError",
        "Message": "We encountered an internal error. Please try again.",
    }


# --- detection: X-Amz-Target alone does not make a request JSON ----------------------------------------------------


def test_form_body_with_versioned_target_is_query(app: tuple[Any, Broker]) -> None:
    asgi, broker = app
    resp = query_call(
        asgi,
        {"Action": "CreateQueue", "QueueName": "perl", "Version": "2012-11-05"},
        headers={"X-Amz-Target": "AmazonSQSv20121105.CreateQueue"},
    )
    assert resp.status == 200
    assert xml(resp).tag == NS + "CreateQueueResponse"
    assert broker.get_queue(DEFAULT, "perl").name == "perl"


def test_target_without_content_type_is_not_json(app: tuple[Any, Broker]) -> None:
    headers = {"X-Amz-Target": "AmazonSQS.ListQueues", "Host": "h"}
    resp = asyncio.run(call_asgi(app[0], "POST", "/", headers, b"{}"))
    assert resp.status == 404
    assert resp.body == b"<UnknownOperationException/>"


def test_application_json_with_target_is_json(app: tuple[Any, Broker]) -> None:
    headers = {"X-Amz-Target": "AmazonSQS.GetQueueUrl", "Content-Type": "application/json", "Host": "h:1"}
    resp = asyncio.run(call_asgi(app[0], "POST", "/", headers, b'{"QueueName": "q"}'))
    assert resp.status == 200
    assert resp.headers["content-type"] == "application/x-amz-json-1.0"
    assert resp.json() == {"QueueUrl": "http://h:1/000000000000/q"}


# --- JSON 1.0 batch results leave out empty lists -----------------------------------------------------------------


def test_json_batch_results_leave_out_empty_lists(app: tuple[Any, Broker]) -> None:
    asgi, _ = app
    sent = json_call(asgi, "SendMessageBatch", {"QueueUrl": "q", "Entries": [{"Id": "a", "MessageBody": "x"}]})
    assert set(sent.json()) == {"Successful"}
    failed = json_call(asgi, "SendMessageBatch", {"QueueUrl": "q", "Entries": [{"Id": "b", "MessageBody": ""}]})
    assert set(failed.json()) == {"Failed"}
    handle = json_call(asgi, "ReceiveMessage", {"QueueUrl": "q"}).json()["Messages"][0]["ReceiptHandle"]
    for action, extra in (("ChangeMessageVisibilityBatch", {"VisibilityTimeout": 5}), ("DeleteMessageBatch", {})):
        ok_entry = {"Id": "a", "ReceiptHandle": handle, **extra}
        ok = json_call(asgi, action, {"QueueUrl": "q", "Entries": [ok_entry]})
        assert ok.json() == {"Successful": [{"Id": "a"}]}
        bad_entry = {"Id": "z", "ReceiptHandle": "garbage", **extra}
        bad = json_call(asgi, action, {"QueueUrl": "q", "Entries": [bad_entry]})
        assert set(bad.json()) == {"Failed"}
        assert bad.json()["Failed"][0]["Code"] == "ReceiptHandleIsInvalid"


def test_query_batch_result_with_only_failures(app: tuple[Any, Broker]) -> None:
    params = {
        "Action": "SendMessageBatch",
        "QueueUrl": "q",
        "SendMessageBatchRequestEntry.1.Id": "b",
        "SendMessageBatchRequestEntry.1.MessageBody": "",
    }
    result = xml(query_call(app[0], params)).find(NS + "SendMessageBatchResult")
    assert result is not None
    assert [child.tag for child in result] == [NS + "BatchResultErrorEntry"]


class _LateTimers(ManualClock):
    """A clock whose time moves on before its due timers have run: what the event loop does when a request and a
    timer become ready in one wake-up and the request's callback runs first."""

    def pass_without_timers(self, seconds: float) -> None:
        self._now += int(seconds * 1000)


def test_calls_see_the_queue_as_the_clock_has_it_even_before_due_timers_ran() -> None:
    clock = _LateTimers(START_MS)
    app, broker = make_app(broker=Broker(clock))
    fifo = json.loads(
        json_call(app, "CreateQueue", {"QueueName": "late.fifo", "Attributes": {"FifoQueue": "true"}}).body
    )
    plain = json.loads(json_call(app, "CreateQueue", {"QueueName": "late"}).body)
    for url, extra in (
        (fifo["QueueUrl"], {"MessageGroupId": "g", "MessageDeduplicationId": "d"}),
        (plain["QueueUrl"], {}),
    ):
        assert json_call(app, "SendMessage", {"QueueUrl": url, "MessageBody": "m", **extra}).status == 200
    handles = []
    for url in (fifo["QueueUrl"], plain["QueueUrl"]):
        got = json.loads(json_call(app, "ReceiveMessage", {"QueueUrl": url, "VisibilityTimeout": 1}).body)
        handles.append(got["Messages"][0]["ReceiptHandle"])
    clock.pass_without_timers(2)  # both visibility timeouts ran out; their timers have not run yet
    # The FIFO receipt has expired (docs/behaviour.md 2.10) ...
    deleted = json_call(app, "DeleteMessage", {"QueueUrl": fifo["QueueUrl"], "ReceiptHandle": handles[0]})
    assert deleted.status == 400 and "The receipt handle has expired." in deleted.body.decode()
    # ... and the standard queue's message is visible again.
    again = json.loads(json_call(app, "ReceiveMessage", {"QueueUrl": plain["QueueUrl"]}).body)
    assert [m["Body"] for m in again["Messages"]] == ["m"]
