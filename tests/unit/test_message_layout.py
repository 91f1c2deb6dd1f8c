"""The compact ``Message``: plain messages share one empty ``NO_EXTRAS``, a write gives a message extras of its own
and never reaches another message, the size is the body's length unless stored, the receipt serial is the receive
count, and the body digest renders from its int cache."""

from __future__ import annotations

import hashlib

from sqsemu.engine.message import NO_EXTRAS, Message, MessageAttributeValue, MessageState, SendEntry
from sqsemu.protocol.md5 import body_md5_cached
from tests.unit.engine_helpers import Engine


def _plain(body: str = "hello") -> Message:
    return Message("id", body, {}, {}, None, "000000000000", 1_000, len(body))


def test_plain_messages_share_the_empty_extras_and_read_their_fields_as_empty() -> None:
    a, b = _plain(), _plain("other")
    assert a.extras is NO_EXTRAS and b.extras is NO_EXTRAS
    assert a.message_attributes == {} and a.system_attributes == {}
    assert (a.trace_header, a.group_id, a.deduplication_id, a.sequence_number, a.dead_letter_source_arn) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert a.size == 5 and b.size == 5


def test_writing_a_field_of_a_plain_message_changes_that_message_only() -> None:
    a, b = _plain(), _plain()
    a.sequence_number = None  # nothing to store: stays plain
    assert a.extras is NO_EXTRAS
    a.dead_letter_source_arn = "arn:aws:sqs:us-east-1:000000000000:src"
    assert a.dead_letter_source_arn == "arn:aws:sqs:us-east-1:000000000000:src"
    assert a.size == 5
    assert b.dead_letter_source_arn is None and NO_EXTRAS.dead_letter_source_arn is None


def test_a_size_other_than_the_body_length_is_kept() -> None:
    body = "h\u00e9llo"  # 5 characters, 6 bytes in UTF-8
    m = Message("id", body, {}, {}, None, "000000000000", 1_000, len(body.encode()))
    assert m.size == 6
    attrs = {"k": MessageAttributeValue("String", "v")}
    m = Message("id", "abc", attrs, {}, None, "000000000000", 1_000, 3 + 1 + 6 + 1)
    assert m.size == 11 and m.message_attributes == attrs


def test_a_moved_copy_has_extras_of_its_own() -> None:
    original = Message("id", "b", {}, {}, None, "000000000000", 1_000, 1, group_id="g", deduplication_id="d")
    copy = original.moved_copy()
    copy.deduplication_id = "new"
    copy.dead_letter_source_arn = "arn"
    assert (original.deduplication_id, original.dead_letter_source_arn) == ("d", None)
    assert (copy.group_id, copy.deduplication_id, copy.size) == ("g", "new", 1)


def test_the_receipt_serial_is_the_receive_count(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((message, first),) = engine.receive(q, visibility_timeout=0)
    ((_, second),) = engine.receive(q, visibility_timeout=10)
    assert message.receive_count == message.receipt_serial == 2
    engine.broker.delete_message(q, first)  # an older handle of the message still deletes it
    assert message.state is MessageState.DELETED
    assert first != second


def test_the_body_digest_renders_the_same_from_its_cache() -> None:
    m = _plain("digest with a leading zero? any body")
    expected = hashlib.md5(m.body.encode()).hexdigest()
    assert body_md5_cached(m) == expected
    assert m.body_md5 == int(expected, 16)
    assert body_md5_cached(m) == expected
    zero = _plain()
    zero.body_md5 = 0x0F  # a cached digest with leading zero digits keeps all 32 of them
    assert body_md5_cached(zero) == "0" * 30 + "0f"


def test_sent_messages_without_attributes_are_plain_and_with_them_are_not(engine: Engine) -> None:
    q = engine.queue()
    plain = engine.broker.send_message(q, SendEntry("x" * 1024), "000000000000")
    assert plain.extras is NO_EXTRAS and plain.size == 1024
    attrs = {"a": MessageAttributeValue("Number", "1")}
    rich = engine.broker.send_message(q, SendEntry("x", message_attributes=attrs), "000000000000")
    assert rich.extras is not NO_EXTRAS and rich.size == 1 + 1 + 6 + 1
