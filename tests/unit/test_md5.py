"""MD5 digests against every vector of docs/behaviour.md section 8.3."""

from __future__ import annotations

import pytest

from sqsemu.engine.message import Message, MessageAttributeValue
from sqsemu.protocol.md5 import (
    attributes_md5_cached,
    body_md5_cached,
    md5_of_attributes,
    md5_of_body,
    system_attributes_md5_cached,
)

S = "String"


def sv(value: str, data_type: str = S) -> MessageAttributeValue:
    return MessageAttributeValue(data_type, string_value=value)


def bv(value: bytes, data_type: str = "Binary") -> MessageAttributeValue:
    return MessageAttributeValue(data_type, binary_value=value)


@pytest.mark.parametrize(
    ("body", "digest"),
    [
        ("test", "098f6bcd4621d373cade4e832627b4f6"),
        ("hello", "5d41402abc4b2a76b9719d911017c592"),
        ("Hello World!", "ed076287532e86365e841e92bfc50d8c"),
    ],
)
def test_body(body: str, digest: str) -> None:
    assert md5_of_body(body) == digest


TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
NPM = {
    "attribName1": sv("attribValue 1"),
    "customNumberTypeAttrib": sv("4563442423554324324264524243.32543234", "Number.float"),
    "binaryAttribute": bv(b"Hello binary world!"),
}


@pytest.mark.parametrize(
    ("attrs", "digest"),
    [
        ({"Foo": sv("Bar")}, "ae7155c6026991b6d54b11589678bf9c"),
        (
            {"color": sv("red"), "blob": bv(b"\x00\x01\x02"), "price": sv("1.5", "Number.float")},
            "4077742f50a153707293e816226f8872",
        ),
        ({"AWSTraceHeader": sv(TRACE)}, "5ae4d5d7636402d80f4eb6d213245a88"),
        ({"timestamp": sv("1493147359900", "Number")}, "235c5c510d26fb653d073faed50ae77c"),
        ({"MyAttribute": sv("foobar")}, "adb59cd4678ea5a855436b949cd07ab6"),
        (
            {"attr1": bv(b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01")},
            "8cbe4db156db8a94db8b801b7addb984",
        ),
        ({"attribName1": NPM["attribName1"]}, "19e27d4e946b072f3f58da80d94fd778"),
        ({"customNumberTypeAttrib": NPM["customNumberTypeAttrib"]}, "9fe1b90bbd9965bdf77bac517c7d2495"),
        ({"binaryAttribute": NPM["binaryAttribute"]}, "31a92b15d92f8db860eda32aceb656c3"),
        (NPM, "c932db14a896c663f83c260297d594ff"),
    ],
)
def test_attributes(attrs: dict[str, MessageAttributeValue], digest: str) -> None:
    assert md5_of_attributes(attrs) == digest


def test_cached_digests_fill_message_slots() -> None:
    m = Message("id", "test", {"Foo": sv("Bar")}, {}, None, "000000000000", 0, 4)
    assert body_md5_cached(m) == "098f6bcd4621d373cade4e832627b4f6"  # leading zero kept
    assert m.data[:-16] == b"test" + bytes.fromhex("098f6bcd4621d373cade4e832627b4f6")  # stored behind the body
    assert attributes_md5_cached(m) == "ae7155c6026991b6d54b11589678bf9c"
    assert m.md5_of_message_attributes == "ae7155c6026991b6d54b11589678bf9c"
    assert system_attributes_md5_cached(m) is None


def test_no_attributes_no_digest() -> None:
    m = Message("id", "x", {}, {"AWSTraceHeader": sv(TRACE)}, None, "000000000000", 0, 1)
    assert attributes_md5_cached(m) is None
    assert system_attributes_md5_cached(m) == "5ae4d5d7636402d80f4eb6d213245a88"
