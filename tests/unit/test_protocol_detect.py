"""Protocol detection (SQS-REFERENCE 1.1)."""

from __future__ import annotations

from sqsemu.protocol.detect import Protocol, detect, looks_like_json

JSON_CT = "application/x-amz-json-1.0"
FORM_CT = "application/x-www-form-urlencoded; charset=utf-8"


def test_json_by_target() -> None:
    d = detect("POST", "AmazonSQS.SendMessage", JSON_CT, b"", b"{}")
    assert d.protocol is Protocol.JSON
    assert d.action == "SendMessage"
    assert d.params == []


def test_json_target_without_content_type() -> None:
    d = detect("POST", "AmazonSQS.ListQueues", None, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, "ListQueues")


def test_json_foreign_target_has_no_action() -> None:
    d = detect("POST", "AmazonSNS.Publish", JSON_CT, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, None)


def test_json_content_type_without_target() -> None:
    d = detect("POST", None, JSON_CT, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, None)


def test_query_form_body() -> None:
    d = detect("POST", None, FORM_CT, b"", b"Action=ListQueues&Version=2012-11-05")
    assert (d.protocol, d.action) == (Protocol.QUERY, "ListQueues")
    assert ("Version", "2012-11-05") in d.params


def test_query_string_get() -> None:
    d = detect("GET", None, None, b"Action=GetQueueUrl&QueueName=q", b"")
    assert (d.protocol, d.action) == (Protocol.QUERY, "GetQueueUrl")


def test_query_string_on_post() -> None:
    d = detect("POST", None, FORM_CT, b"Action=PurgeQueue", b"QueueUrl=x")
    assert d.action == "PurgeQueue"
    assert ("QueueUrl", "x") in d.params


def test_query_body_values_are_url_decoded() -> None:
    d = detect("POST", None, FORM_CT, b"", b"Action=SendMessage&MessageBody=a%20b+c%0D%22")
    assert ("MessageBody", 'a b c\r"') in d.params


def test_neither() -> None:
    d = detect("GET", None, None, b"", b"")
    assert (d.protocol, d.action) == (Protocol.QUERY, None)


def test_looks_like_json() -> None:
    assert looks_like_json("AmazonSQS.X", None)
    assert looks_like_json(None, "application/x-amz-json-1.0")
    assert not looks_like_json(None, FORM_CT)
    assert not looks_like_json(None, None)
