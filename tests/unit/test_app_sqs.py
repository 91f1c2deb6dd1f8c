"""The SQS endpoint driven as raw ASGI: both protocols, queue-URL paths, errors, limits, long-poll disconnects."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from sqsemu.config import Config
from sqsemu.engine.broker import Namespace
from tests.unit.test_app_fakes import FakeBroker, call_asgi, json_call, make_app, query_call

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
JSON_CT = "application/x-amz-json-1.0"
DEFAULT = Namespace("000000000000", "us-east-1")


def xml(resp: Any) -> ET.Element:
    return ET.fromstring(resp.body)


@pytest.fixture
def app() -> tuple[Any, FakeBroker]:
    app, broker = make_app()
    broker.create_queue(DEFAULT, "q", {}, {})
    return app, broker


def test_query_send_and_receive_round_trip(app: tuple[Any, FakeBroker]) -> None:
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


def test_query_empty_receive(app: tuple[Any, FakeBroker]) -> None:
    resp = query_call(app[0], {"Action": "ReceiveMessage", "QueueUrl": "q", "WaitTimeSeconds": "0"})
    assert b"<ReceiveMessageResult/>" in resp.body


def test_query_to_queue_url_path(app: tuple[Any, FakeBroker]) -> None:
    asgi, broker = app
    broker.create_queue(DEFAULT, "other", {}, {})
    resp = query_call(asgi, {"Action": "SendMessage", "MessageBody": "x"}, path="/000000000000/q/")
    assert resp.status == 200
    assert len(broker.queues[(DEFAULT, "q")].messages) == 1
    # the QueueUrl parameter wins over the path
    resp = query_call(asgi, {"Action": "SendMessage", "MessageBody": "x", "QueueUrl": "other"}, path="/000000000000/q")
    assert resp.status == 200
    assert len(broker.queues[(DEFAULT, "other")].messages) == 1
    # GetQueueUrl works on another queue's URL
    resp = query_call(asgi, {"Action": "GetQueueUrl", "QueueName": "other"}, path="/000000000000/q")
    assert xml(resp).findtext(f"{NS}GetQueueUrlResult/{NS}QueueUrl") == "http://localhost:9324/000000000000/other"


@pytest.mark.parametrize("action", ["CreateQueue", "ListQueues", "Bogus"])
def test_invalid_action_on_queue_url(app: tuple[Any, FakeBroker], action: str) -> None:
    resp = query_call(app[0], {"Action": action, "QueueName": "x"}, method="GET", path="/000000000000/q")
    assert resp.status == 400
    root = xml(resp)
    assert root.findtext(f"{NS}Error/{NS}Code") == "InvalidAction"
    assert root.findtext(f"{NS}Error/{NS}Message") == f"The action {action} is not valid for this endpoint."
    assert resp.headers["x-amzn-query-error"] == "InvalidAction;Sender"


def test_unknown_query_action_on_root(app: tuple[Any, FakeBroker]) -> None:
    resp = query_call(app[0], {"Action": "Bogus"})
    assert resp.status == 400
    assert xml(resp).findtext(f"{NS}Error/{NS}Code") == "InvalidAction"


def test_no_action_is_404(app: tuple[Any, FakeBroker]) -> None:
    resp = asyncio.run(call_asgi(app[0], "GET", "/000000000000/q", {"Host": "h"}))
    assert resp.status == 404
    assert resp.body == b"<UnknownOperationException/>"
    assert resp.headers["x-amzn-requestid"]


def test_query_errors(app: tuple[Any, FakeBroker]) -> None:
    resp = query_call(app[0], {"Action": "SendMessage", "QueueUrl": "nope", "MessageBody": "x"})
    assert resp.status == 400
    root = xml(resp)
    assert root.findtext(f"{NS}Error/{NS}Code") == "AWS.SimpleQueueService.NonExistentQueue"
    assert root.findtext(f"{NS}Error/{NS}Message") == "The specified queue does not exist for this wsdl version."
    assert root.findtext(NS + "RequestId") == resp.headers["x-amzn-requestid"]
    resp = query_call(app[0], {"Action": "SendMessage", "MessageBody": "x"})
    assert xml(resp).findtext(f"{NS}Error/{NS}Message") == "The request must contain the parameter QueueUrl."


def test_query_create_queue_legacy(app: tuple[Any, FakeBroker]) -> None:
    asgi, broker = app
    resp = query_call(asgi, {"Action": "CreateQueue", "QueueName": "new", "DefaultVisibilityTimeout": "45"})
    assert resp.status == 200
    assert broker.queues[(DEFAULT, "new")].attributes == {"VisibilityTimeout": "45"}


def test_query_no_output_response(app: tuple[Any, FakeBroker]) -> None:
    resp = query_call(app[0], {"Action": "PurgeQueue", "QueueUrl": "q"})
    root = xml(resp)
    assert root.tag == NS + "PurgeQueueResponse"
    assert root.find(NS + "PurgeQueueResult") is None


def test_json_error_headers(app: tuple[Any, FakeBroker]) -> None:
    resp = json_call(app[0], "SendMessage", {"QueueUrl": "nope", "MessageBody": "x"})
    assert resp.status == 400
    assert resp.headers["content-type"] == "application/x-amz-json-1.0"
    assert resp.headers["x-amzn-query-error"] == "AWS.SimpleQueueService.NonExistentQueue;Sender"
    assert resp.headers["x-amzn-requestid"]
    assert resp.json() == {
        "__type": "com.amazonaws.sqs#QueueDoesNotExist",
        "message": "The specified queue does not exist.",
    }


def test_json_missing_queue_url(app: tuple[Any, FakeBroker]) -> None:
    resp = json_call(app[0], "DeleteQueue", {})
    assert resp.status == 400
    assert resp.json()["message"] == "The request must contain the parameter QueueUrl."
    assert resp.headers["x-amzn-query-error"] == "MissingParameter;Sender"


def test_json_serialization_error(app: tuple[Any, FakeBroker]) -> None:
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


def test_json_unknown_and_missing_target(app: tuple[Any, FakeBroker]) -> None:
    resp = json_call(app[0], "Bogus", {})
    assert resp.status == 400
    assert resp.json()["__type"].endswith("#InvalidAction")
    resp = asyncio.run(call_asgi(app[0], "POST", "/", {"Content-Type": "application/x-amz-json-1.0"}, b"{}"))
    assert resp.status == 404
    assert resp.json()["__type"].endswith("#UnknownOperationException")


def test_json_on_queue_path_and_trace_header(app: tuple[Any, FakeBroker]) -> None:
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
    entry = next(c[1] for c in broker.calls if c[0] == "send_message")
    assert entry.trace_header == "Root=1-abc"


def test_fifo_sequence_number(app: tuple[Any, FakeBroker]) -> None:
    asgi, broker = app
    broker.create_queue(DEFAULT, "f.fifo", {}, {})
    resp = json_call(asgi, "SendMessage", {"QueueUrl": "f.fifo", "MessageBody": "x", "MessageGroupId": "g"})
    assert resp.json()["SequenceNumber"] == "18888888888888888888"


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


class _Boom(FakeBroker):
    def list_queues(self, ns: Namespace, prefix: str | None) -> list[Any]:
        raise RuntimeError("boom")


def test_internal_error_both_formats(caplog: pytest.LogCaptureFixture) -> None:
    asgi, _ = make_app(broker=_Boom())
    resp = json_call(asgi, "ListQueues", {})
    assert resp.status == 500
    assert resp.headers["x-amzn-query-error"] == "InternalError;Receiver"
    assert "boom" not in resp.text and "Traceback" not in resp.text
    resp = query_call(asgi, {"Action": "ListQueues"})
    assert resp.status == 500
    assert xml(resp).findtext(f"{NS}Error/{NS}Type") == "Receiver"
    assert "RuntimeError: boom" in caplog.text


def test_long_poll_disconnect(app: tuple[Any, FakeBroker]) -> None:
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
        await asyncio.sleep(0.05)
        gone.set()
        return await asyncio.wait_for(task, 2)

    resp = asyncio.run(scenario())
    assert broker.disconnect_seen
    assert resp.json() == {}


def test_short_poll_has_no_disconnect_watch(app: tuple[Any, FakeBroker]) -> None:
    asgi, broker = app
    json_call(asgi, "ReceiveMessage", {"QueueUrl": "q", "WaitTimeSeconds": 0, "MaxNumberOfMessages": 3})
    call = next(c[1] for c in broker.calls if c[0] == "receive_message")
    assert call == (3, None, 0, None)


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
    assert (Namespace("123456789012", "eu-west-1"), "pre") in broker.queues


# --- Query response negotiation (Accept: application/json) ---------------------------------------------------------

ACCEPT_JSON = {"Accept": "application/json"}


def test_query_with_accept_json_is_answered_in_json(app: tuple[Any, FakeBroker]) -> None:
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


def test_query_list_queues_and_receive_in_json(app: tuple[Any, FakeBroker]) -> None:
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


def test_query_error_with_accept_json(app: tuple[Any, FakeBroker]) -> None:
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


def test_query_without_json_accept_stays_xml(app: tuple[Any, FakeBroker]) -> None:
    for headers in ({}, {"Accept": "*/*"}, {"Accept": "text/xml"}):
        resp = query_call(app[0], {"Action": "GetQueueUrl", "QueueName": "q"}, headers=headers)
        assert resp.headers["content-type"] == "text/xml"
        assert xml(resp).tag == NS + "GetQueueUrlResponse"


def test_no_action_with_accept_json_is_still_the_xml_404(app: tuple[Any, FakeBroker]) -> None:
    resp = asyncio.run(call_asgi(app[0], "GET", "/000000000000/q", {"Host": "h", **ACCEPT_JSON}))
    assert resp.status == 404
    assert resp.headers["content-type"] == "text/xml"
    assert resp.body == b"<UnknownOperationException/>"


def test_json_protocol_ignores_accept(app: tuple[Any, FakeBroker]) -> None:
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
    asgi, _ = make_app(broker=_Boom())
    resp = query_call(asgi, {"Action": "ListQueues"}, headers=ACCEPT_JSON)
    assert resp.status == 500
    assert resp.json()["Error"] == {
        "Type": "Receiver",
        "Code": "InternalError",
        "Message": "We encountered an internal error. Please try again.",
    }


# --- detection: X-Amz-Target alone does not make a request JSON ----------------------------------------------------


def test_form_body_with_versioned_target_is_query(app: tuple[Any, FakeBroker]) -> None:
    asgi, broker = app
    resp = query_call(
        asgi,
        {"Action": "CreateQueue", "QueueName": "perl", "Version": "2012-11-05"},
        headers={"X-Amz-Target": "AmazonSQSv20121105.CreateQueue"},
    )
    assert resp.status == 200
    assert xml(resp).tag == NS + "CreateQueueResponse"
    assert (DEFAULT, "perl") in broker.queues


def test_target_without_content_type_is_not_json(app: tuple[Any, FakeBroker]) -> None:
    headers = {"X-Amz-Target": "AmazonSQS.ListQueues", "Host": "h"}
    resp = asyncio.run(call_asgi(app[0], "POST", "/", headers, b"{}"))
    assert resp.status == 404
    assert resp.body == b"<UnknownOperationException/>"


def test_application_json_with_target_is_json(app: tuple[Any, FakeBroker]) -> None:
    headers = {"X-Amz-Target": "AmazonSQS.GetQueueUrl", "Content-Type": "application/json", "Host": "h:1"}
    resp = asyncio.run(call_asgi(app[0], "POST", "/", headers, b'{"QueueName": "q"}'))
    assert resp.status == 200
    assert resp.headers["content-type"] == "application/x-amz-json-1.0"
    assert resp.json() == {"QueueUrl": "http://h:1/000000000000/q"}


# --- JSON 1.0 batch results leave out empty lists -----------------------------------------------------------------


def test_json_batch_results_leave_out_empty_lists(app: tuple[Any, FakeBroker]) -> None:
    asgi, _ = app
    sent = json_call(asgi, "SendMessageBatch", {"QueueUrl": "q", "Entries": [{"Id": "a", "MessageBody": "x"}]})
    assert set(sent.json()) == {"Successful"}
    failed = json_call(asgi, "SendMessageBatch", {"QueueUrl": "q", "Entries": [{"Id": "b", "MessageBody": ""}]})
    assert set(failed.json()) == {"Failed"}
    handle = json_call(asgi, "ReceiveMessage", {"QueueUrl": "q"}).json()["Messages"][0]["ReceiptHandle"]
    for action in ("ChangeMessageVisibilityBatch", "DeleteMessageBatch"):
        ok = json_call(asgi, action, {"QueueUrl": "q", "Entries": [{"Id": "a", "ReceiptHandle": handle}]})
        assert ok.json() == {"Successful": [{"Id": "a"}]}
        bad = json_call(asgi, action, {"QueueUrl": "q", "Entries": [{"Id": "z", "ReceiptHandle": "garbage"}]})
        assert set(bad.json()) == {"Failed"}


def test_query_batch_result_with_only_failures(app: tuple[Any, FakeBroker]) -> None:
    params = {
        "Action": "SendMessageBatch",
        "QueueUrl": "q",
        "SendMessageBatchRequestEntry.1.Id": "b",
        "SendMessageBatchRequestEntry.1.MessageBody": "",
    }
    result = xml(query_call(app[0], params)).find(NS + "SendMessageBatchResult")
    assert result is not None
    assert [child.tag for child in result] == [NS + "BatchResultErrorEntry"]
