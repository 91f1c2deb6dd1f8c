"""boto3 (JSON 1.0) against the ASGI app, in-process: a ``before-send`` hook hands each signed request to the app.

This checks our JSON responses and errors with botocore's real parsers (including the query-compatible error
header). The broker is the real engine on a manual clock (``app_helpers.make_app``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

from sqsemu.engine.broker import Broker, Namespace
from sqsemu.protocol.md5 import md5_of_body
from tests.unit.app_helpers import call_asgi, make_app
from tests.unit.engine_helpers import NS, START_MS


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


def _client(app: Any, access_key: str = "AKIDEXAMPLE") -> Any:
    client = boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url="http://localhost:9324",
        aws_access_key_id=access_key,
        aws_secret_access_key="secret",
    )

    def send(request: Any, **_: Any) -> AWSResponse:
        url = urlsplit(request.url)
        headers = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()}
        headers.setdefault("Host", url.netloc)  # added by the HTTP library on a real connection
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        elif hasattr(body, "read"):
            body = body.read()
        resp = asyncio.run(call_asgi(app, request.method, url.path or "/", headers, body, url.query.encode()))
        return AWSResponse(request.url, resp.status, resp.headers, _Raw(resp.body))

    client.meta.events.register("before-send.sqs", send)
    return client


@pytest.fixture
def env() -> tuple[Any, Broker]:
    app, broker = make_app()
    return _client(app), broker


def test_queue_lifecycle(env: tuple[Any, Broker]) -> None:
    sqs, broker = env
    url = sqs.create_queue(QueueName="q1", Attributes={"VisibilityTimeout": "40"}, tags={"t": "v"})["QueueUrl"]
    assert url == "http://localhost:9324/000000000000/q1"
    created = broker.get_queue(NS, "q1")
    assert created.attributes["VisibilityTimeout"] == "40" and created.tags == {"t": "v"}
    assert sqs.get_queue_url(QueueName="q1")["QueueUrl"] == url
    sqs.create_queue(QueueName="q2")
    assert sqs.list_queues()["QueueUrls"] == [url, "http://localhost:9324/000000000000/q2"]
    assert "QueueUrls" not in sqs.list_queues(QueueNamePrefix="zzz")
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs == broker.get_queue_attributes(created, ["All"])
    assert attrs["VisibilityTimeout"] == "40" and attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:q1"
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "1"})
    assert created.attributes["DelaySeconds"] == "1"
    sqs.send_message(QueueUrl=url, MessageBody="x")
    sqs.purge_queue(QueueUrl=url)
    assert not created.messages
    sqs.delete_queue(QueueUrl=url)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist) as exc:
        sqs.get_queue_url(QueueName="q1")
    err = exc.value.response["Error"]
    assert err["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert err["QueryErrorCode"] == "QueueDoesNotExist"
    assert err["Message"] == "The specified queue does not exist."
    assert exc.value.response["ResponseMetadata"]["RequestId"]


def test_pagination(env: tuple[Any, Broker]) -> None:
    sqs, _ = env
    for i in range(5):
        sqs.create_queue(QueueName=f"p{i}")
    page = sqs.list_queues(MaxResults=2)
    assert [u.rsplit("/", 1)[1] for u in page["QueueUrls"]] == ["p0", "p1"]
    names = []
    for page in sqs.get_paginator("list_queues").paginate(PaginationConfig={"PageSize": 2}):
        names += [u.rsplit("/", 1)[1] for u in page["QueueUrls"]]
    assert names == ["p0", "p1", "p2", "p3", "p4"]
    with pytest.raises(ClientError) as exc:
        sqs.list_queues(MaxResults=2, NextToken="garbage")
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_send_receive_delete(env: tuple[Any, Broker]) -> None:
    sqs, broker = env
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody='he said "hi"\r\n',
        MessageAttributes={
            "Foo": {"DataType": "String", "StringValue": "Bar"},
            "Hello": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        },
    )
    assert sent["MD5OfMessageBody"] == md5_of_body('he said "hi"\r\n')
    assert "MD5OfMessageAttributes" in sent
    assert "MD5OfMessageSystemAttributes" not in sent
    assert "SequenceNumber" not in sent

    stored = broker.get_queue(NS, "q").messages[sent["MessageId"]]
    assert stored.body == 'he said "hi"\r\n' and set(stored.message_attributes) == {"Foo", "Hello"}

    # VisibilityTimeout=0: the message is visible again at once for the next receive.
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0, VisibilityTimeout=0)
    (msg,) = got["Messages"]
    assert msg["Body"] == 'he said "hi"\r\n'
    assert "Attributes" not in msg and "MessageAttributes" not in msg and "MD5OfMessageAttributes" not in msg

    got = sqs.receive_message(
        QueueUrl=url,
        MessageAttributeNames=["Foo"],
        AttributeNames=["SentTimestamp"],
        WaitTimeSeconds=0,
        VisibilityTimeout=0,
    )
    (msg,) = got["Messages"]
    assert msg["MessageAttributes"] == {"Foo": {"StringValue": "Bar", "DataType": "String"}}
    assert msg["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"
    assert msg["Attributes"] == {"SentTimestamp": "1700000000000"}

    got = sqs.receive_message(
        QueueUrl=url, MessageAttributeNames=["All"], MessageSystemAttributeNames=["All"], WaitTimeSeconds=0
    )
    (msg,) = got["Messages"]
    assert msg["MessageAttributes"]["Hello"] == {"BinaryValue": b"\x00\x01", "DataType": "Binary"}
    assert msg["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
    assert set(msg["Attributes"]) == {
        "SenderId",
        "SentTimestamp",
        "ApproximateReceiveCount",
        "ApproximateFirstReceiveTimestamp",
    }
    assert msg["Attributes"]["SenderId"] == "000000000000"
    assert msg["Attributes"]["ApproximateReceiveCount"] == "3"
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=10)
    assert stored.visible_at_ms == START_MS + 10_000
    sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
    assert not broker.get_queue(NS, "q").messages
    assert sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0).get("Messages") is None
    with pytest.raises(sqs.exceptions.ReceiptHandleIsInvalid):
        sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")


def test_system_attributes_and_trace_header(env: tuple[Any, Broker]) -> None:
    sqs, broker = env
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody="x",
        MessageSystemAttributes={
            "AWSTraceHeader": {
                "DataType": "String",
                "StringValue": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
            }
        },
    )
    assert sent["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"
    assert "MD5OfMessageAttributes" not in sent
    msg = sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["AWSTraceHeader"])["Messages"][0]
    assert msg["Attributes"]["AWSTraceHeader"].startswith("Root=1-5759e988")


def test_batches(env: tuple[Any, Broker]) -> None:
    sqs, _ = env
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    res = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "one"},
            {"Id": "b", "MessageBody": ""},
            {"Id": "c", "MessageBody": "nul\x00"},
        ],
    )
    assert [e["Id"] for e in res["Successful"]] == ["a"]
    # The engine's answers. An invalid character fails its entry with InvalidMessageContents (docs/behaviour.md 4.6,
    # recorded on AWS). An empty body fails its entry as it fails SendMessage (2.7, 2.8; recorded on AWS for
    # SendMessage only: whether AWS fails the entry or the whole batch is not recorded).
    assert res["Failed"] == [
        {
            "Id": "b",
            "SenderFault": True,
            "Code": "MissingParameter",
            "Message": "The request must contain the parameter MessageBody.",
        },
        {
            "Id": "c",
            "SenderFault": True,
            "Code": "InvalidMessageContents",
            "Message": "Invalid binary character '#x0' was found in the message body, the set of allowed characters "
            "is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
        },
    ]
    with pytest.raises(sqs.exceptions.EmptyBatchRequest):
        sqs.send_message_batch(QueueUrl=url, Entries=[])
    msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    handle = msgs[0]["ReceiptHandle"]
    res = sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "x", "ReceiptHandle": handle, "VisibilityTimeout": 5},
            {"Id": "y", "ReceiptHandle": "bad", "VisibilityTimeout": 5},
        ],
    )
    assert res["Successful"] == [{"Id": "x"}]
    assert [(f["Id"], f["Code"], f["Message"]) for f in res["Failed"]] == [
        ("y", "ReceiptHandleIsInvalid", 'The input receipt handle "bad" is not a valid receipt handle.'),
    ]
    res = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "x", "ReceiptHandle": handle}])
    assert res == {"Successful": [{"Id": "x"}], "ResponseMetadata": res["ResponseMetadata"]}  # no empty Failed


def test_account_from_access_key() -> None:
    app, broker = make_app()
    sqs = _client(app, access_key="123456789012")
    url = sqs.create_queue(QueueName="mine")["QueueUrl"]
    assert url == "http://localhost:9324/123456789012/mine"
    other = _client(app)
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        other.get_queue_url(QueueName="mine")
    assert other.get_queue_url(QueueName="mine", QueueOwnerAWSAccountId="123456789012")["QueueUrl"] == url
    other.send_message(QueueUrl=url, MessageBody="cross-account")  # the URL's account wins
    [message] = broker.get_queue(Namespace("123456789012", "us-east-1"), "mine").messages.values()
    assert (message.body, message.sender_id) == ("cross-account", "000000000000")


def test_dead_letter_sources(env: tuple[Any, Broker]) -> None:
    sqs, _ = env
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    arn = "arn:aws:sqs:us-east-1:000000000000:dlq"
    policy = f'{{"deadLetterTargetArn":"{arn}","maxReceiveCount":3}}'
    sqs.create_queue(QueueName="src", Attributes={"RedrivePolicy": policy})
    sqs.create_queue(QueueName="other")
    res = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    assert res["queueUrls"] == ["http://localhost:9324/000000000000/src"]
    res = sqs.list_dead_letter_source_queues(QueueUrl=sqs.get_queue_url(QueueName="other")["QueueUrl"])
    assert res["queueUrls"] == []


def test_tag_actions_reach_the_broker(env: tuple[Any, Broker]) -> None:
    sqs, _ = env
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=url)
    sqs.tag_queue(QueueUrl=url, Tags={"a": "b", "c": "d"})
    sqs.untag_queue(QueueUrl=url, TagKeys=["c"])
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"a": "b"}


def test_missing_queue_url_and_bad_int(env: tuple[Any, Broker]) -> None:
    sqs, _ = env
    with pytest.raises(ClientError) as exc:
        sqs.list_queues(MaxResults=0)
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert exc.value.response["Error"]["Message"] == (
        "Value 0 for parameter MaxResults is invalid. Reason: Must be between 1 and 1000, if provided."
    )
