"""JSON 1.0 decoding and encoding (docs/behaviour.md 1.4)."""

from __future__ import annotations

import json

import pytest

from sqsemu.engine.errors import InvalidParameterValue, MissingParameter, QueueDoesNotExist, SerializationError
from sqsemu.engine.message import MessageAttributeValue, ReceiptEntry, SendEntry
from sqsemu.protocol import json as jp
from sqsemu.protocol import shapes as s


def dec(cls: type[s.Request], obj: object) -> object:
    return jp.decode(cls, json.dumps(obj).encode())


def test_send_message() -> None:
    r = dec(
        s.SendMessageRequest,
        {
            "QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/my-queue",
            "MessageBody": "hello",
            "DelaySeconds": 5,
            "MessageAttributes": {
                "color": {"DataType": "String", "StringValue": "red"},
                "blob": {"DataType": "Binary", "BinaryValue": "AAEC"},
            },
            "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}},
        },
    )
    assert isinstance(r, s.SendMessageRequest)
    assert r.message_body == "hello"
    assert r.delay_seconds == 5
    assert r.message_attributes["blob"] == MessageAttributeValue("Binary", None, b"\x00\x01\x02")
    assert r.message_system_attributes == {"AWSTraceHeader": MessageAttributeValue("String", "Root=1")}
    assert r.message_group_id is None


def test_absent_members_are_none_or_empty() -> None:
    r = dec(s.ReceiveMessageRequest, {"QueueUrl": "q"})
    assert isinstance(r, s.ReceiveMessageRequest)
    assert r.max_number_of_messages is None
    assert r.wait_time_seconds is None
    assert r.attribute_names == []
    assert r.message_attribute_names == []


def test_empty_body_is_empty_object() -> None:
    assert jp.decode(s.ListQueuesRequest, b"") == s.ListQueuesRequest()


def test_lowercase_tags_on_create_queue() -> None:
    r = dec(s.CreateQueueRequest, {"QueueName": "q", "Attributes": {"DelaySeconds": "1"}, "tags": {"a": "b"}})
    assert r == s.CreateQueueRequest("q", {"DelaySeconds": "1"}, {"a": "b"})


def test_batch_entries() -> None:
    r = dec(
        s.SendMessageBatchRequest,
        {"QueueUrl": "q", "Entries": [{"Id": "a", "MessageBody": "x", "MessageGroupId": "g"}, {"MessageBody": "y"}]},
    )
    assert isinstance(r, s.SendMessageBatchRequest)
    assert r.entries == [SendEntry("x", group_id="g", id="a"), SendEntry("y", id="")]
    r = dec(
        s.ChangeMessageVisibilityBatchRequest,
        {"Entries": [{"Id": "a", "ReceiptHandle": "rh", "VisibilityTimeout": 5}]},
    )
    assert isinstance(r, s.ChangeMessageVisibilityBatchRequest)
    assert r.entries == [ReceiptEntry("a", "rh", 5)]


def test_eleven_entries_pass_through() -> None:
    r = dec(s.DeleteMessageBatchRequest, {"Entries": [{"Id": str(i), "ReceiptHandle": "r"} for i in range(11)]})
    assert isinstance(r, s.DeleteMessageBatchRequest)
    assert len(r.entries) == 11


@pytest.mark.parametrize("body", [b"[]", b"1", b'"x"', b"{not json", b"null"])
def test_not_an_object(body: bytes) -> None:
    with pytest.raises(SerializationError):
        jp.decode(s.ListQueuesRequest, body)


@pytest.mark.parametrize("value", ["abc", 1.5, True, [1], "1.0"])
def test_bad_integer(value: object) -> None:
    with pytest.raises(InvalidParameterValue) as exc:
        dec(s.ReceiveMessageRequest, {"MaxNumberOfMessages": value})
    assert "for parameter MaxNumberOfMessages is invalid. Reason:" in exc.value.message


def test_integer_as_decimal_string() -> None:
    r = dec(s.ReceiveMessageRequest, {"MaxNumberOfMessages": "7"})
    assert isinstance(r, s.ReceiveMessageRequest)
    assert r.max_number_of_messages == 7


@pytest.mark.parametrize(
    "obj",
    [
        {"QueueUrl": 5},
        {"AttributeNames": "All"},
        {"MessageAttributeNames": [1]},
    ],
)
def test_wrong_member_types(obj: object) -> None:
    with pytest.raises(SerializationError):
        dec(s.ReceiveMessageRequest, obj)


def test_bad_base64() -> None:
    with pytest.raises(InvalidParameterValue):
        dec(s.SendMessageRequest, {"MessageAttributes": {"b": {"DataType": "Binary", "BinaryValue": "%%%"}}})


def test_encode() -> None:
    assert jp.encode({"QueueUrl": "u"}) == b'{"QueueUrl":"u"}'


def test_encode_errors() -> None:
    status, header, body = jp.encode_error(QueueDoesNotExist())
    assert status == 400
    assert header == b"AWS.SimpleQueueService.NonExistentQueue;Sender"
    assert json.loads(body) == {
        "__type": "com.amazonaws.sqs#QueueDoesNotExist",
        "message": "The specified queue does not exist.",
    }
    status, header, body = jp.encode_error(MissingParameter.named("QueueUrl"))
    assert (status, header) == (400, b"MissingParameter;Sender")
    assert json.loads(body)["__type"] == "com.amazon.coral.service#MissingRequiredParameterException"


@pytest.mark.parametrize(
    ("literal", "error", "shown"),
    [
        (b"9223372036854775808", None, None),  # 2**63: still an integer, the engine's range rule answers
        (b"18446744073709551616", InvalidParameterValue, "Value 1.8446744073709552e+19 "),
        (b"1" + b"0" * 400, SerializationError, "The request body is not valid JSON."),
    ],
)
def test_integers_beyond_64_bits_as_behaviour_10_18_says(literal: bytes, error: type | None, shown: str | None) -> None:
    body = b'{"QueueUrl": "q", "MessageBody": "m", "DelaySeconds": ' + literal + b"}"
    if error is None:
        assert jp.decode(s.SendMessageRequest, body).delay_seconds == int(literal)  # type: ignore[attr-defined]
        return
    with pytest.raises(error) as caught:
        jp.decode(s.SendMessageRequest, body)
    assert shown is not None and shown in caught.value.message  # type: ignore[attr-defined]


def test_a_batch_entry_without_its_members_gets_the_defaults_the_engine_judges() -> None:
    """``Id`` and ``ReceiptHandle`` left out of a DeleteMessageBatch entry: ``id=""`` (the engine answers
    InvalidBatchEntryId) and no receipt handle, not a failed construction."""
    r = dec(s.DeleteMessageBatchRequest, {"QueueUrl": "q", "Entries": [{}, {"Id": "b"}]})
    assert isinstance(r, s.DeleteMessageBatchRequest)
    assert r.entries == [ReceiptEntry("", None), ReceiptEntry("b", None)]
