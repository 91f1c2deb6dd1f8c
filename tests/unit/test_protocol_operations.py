"""Receive-side rendering (docs/behaviour.md 4.7, 4.8) and the operations table."""

from __future__ import annotations

import pytest

from sqsemu.engine.message import Message, MessageAttributeValue
from sqsemu.protocol import shapes
from sqsemu.protocol.md5 import md5_of_attributes
from sqsemu.protocol.operations import OPERATIONS, AttributeFilter, render_message, system_attributes


def _message() -> Message:
    attrs = {
        "Hello": MessageAttributeValue("String", "a"),
        "Help.Me": MessageAttributeValue("String", "b"),
        "Other": MessageAttributeValue("Binary", None, b"\x01"),
    }
    m = Message("mid", "body", attrs, {}, "Root=1-x", "123456789012", 1000, 4, group_id="g")
    m.receive_count = 2
    m.first_receive_ms = 2000
    return m


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["All"], {"Hello", "Help.Me", "Other"}),
        ([".*"], {"Hello", "Help.Me", "Other"}),
        (["*"], {"Hello", "Help.Me", "Other"}),
        (["Hel.*"], {"Hello", "Help.Me"}),
        (["Other", "Missing"], {"Other"}),
        (["AWS."], set()),
        (["..foo"], set()),
        # Not held to the attribute-name rules (AWS answered "AWS." and "..foo" with 200; docs/behaviour.md 4.7):
        # each breaks one rule and is taken as an exact name that matches nothing, alone or beside a valid one.
        (["aws.Hello", "Aws.Hello", "AMAZON.Hello", "amazon.Hello"], set()),
        (["Hello."], set()),
        ([".Hello"], set()),
        (["Help..Me"], set()),
        (["x" * 256], set()),
        (["x" * 257], set()),
        (["AWS.", "x" * 257, "Hello"], {"Hello"}),
        (["aws.*", "Help.*"], {"Help.Me"}),
    ],
)
def test_attribute_filter(names: list[str], expected: set[str]) -> None:
    m = _message()
    flt = AttributeFilter.parse(names)
    out = render_message(m, "rh", None, False, flt)
    assert set(out.get("MessageAttributes", {})) == expected
    if expected:
        subset = {k: m.message_attributes[k] for k in expected}
        assert out["MD5OfMessageAttributes"] == md5_of_attributes(subset)
    else:
        assert "MD5OfMessageAttributes" not in out


def test_no_names_no_attributes() -> None:
    assert AttributeFilter.parse([]) is None
    out = render_message(_message(), "rh", None, False, None)
    assert set(out) == {"MessageId", "ReceiptHandle", "MD5OfBody", "Body"}


def test_binary_attribute_rendered_base64() -> None:
    out = render_message(_message(), "rh", None, False, AttributeFilter.parse(["Other"]))
    assert out["MessageAttributes"]["Other"] == {"BinaryValue": "AQ==", "DataType": "Binary"}


def test_system_attributes() -> None:
    m = _message()
    assert system_attributes(m, None) == {
        "SenderId": "123456789012",
        "SentTimestamp": "1000",
        "ApproximateReceiveCount": "2",
        "ApproximateFirstReceiveTimestamp": "2000",
        "MessageGroupId": "g",
        "AWSTraceHeader": "Root=1-x",
    }
    assert system_attributes(m, frozenset({"SentTimestamp", "SequenceNumber", "VisibilityTimeout"})) == {
        "SentTimestamp": "1000"
    }
    # a new map: the message's empty one is the engine's shared NO_ATTRIBUTES, never written to in place
    m.system_attributes = {"AWSTraceHeader": MessageAttributeValue("String", "Root=from-attr")}
    assert system_attributes(m, frozenset({"AWSTraceHeader"})) == {"AWSTraceHeader": "Root=from-attr"}


def test_table_covers_every_action() -> None:
    assert set(OPERATIONS) == set(shapes.REQUESTS)
    for action, op in OPERATIONS.items():
        assert op.request is shapes.REQUESTS[action]
    assert [a for a, op in OPERATIONS.items() if op.is_async] == ["ReceiveMessage"]
