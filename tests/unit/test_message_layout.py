"""The compact ``Message``: plain messages share one empty ``NO_EXTRAS``, a write gives a message extras of its own
and never reaches another message, the size is the body's UTF-8 length unless stored, the enqueue time is the send
time unless stored, the receipt serial is the receive count, and the body is kept as UTF-8 bytes with its MD5
digest behind them."""

from __future__ import annotations

import hashlib
import uuid

import pytest

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


@pytest.mark.parametrize(
    "body",
    [
        "digest with a leading zero? any body",
        "h\u00e9llo \u4e16\u754c",  # two- and three-byte characters
        "astral \U0001f600\U00010000 and \U0010ffff",  # four-byte characters (a surrogate pair in UTF-16)
        "line\r\nbreaks\rand\ttabs\n",
        "\ue000\ufffd edges of the allowed ranges \ud7ff",
    ],
)
def test_the_body_is_kept_as_utf8_bytes_with_its_digest_and_reads_back_the_same(body: str) -> None:
    encoded = body.encode()
    m = Message("id", body, {}, {}, None, "000000000000", 1_000, len(encoded))
    assert m.data == encoded + hashlib.md5(encoded).digest() + bytes(16)  # "id" is kept as text: no id bytes
    assert m.body == body and m.body_utf8 == encoded
    assert body_md5_cached(m) == m.md5_of_body() == hashlib.md5(encoded).hexdigest()
    assert m.extras is NO_EXTRAS and m.size == len(encoded)  # a non-ASCII body needs no extras for its size


def test_a_lone_surrogate_round_trips_as_before() -> None:
    body = "lone \ud800 surrogate"  # refused on input (check_body); a Message keeps any str all the same
    m = Message("id", body, {}, {}, None, "000000000000", 1_000, 1)
    assert m.body == body
    assert body_md5_cached(m) == hashlib.md5(body.encode("utf-8", "surrogatepass")).hexdigest()


def test_a_digest_with_leading_zero_digits_keeps_all_32() -> None:
    zero = _plain()
    zero.data = b"x" + bytes(15) + b"\x0f" + bytes(16)
    assert body_md5_cached(zero) == "0" * 30 + "0f"


def test_the_enqueue_time_is_the_send_time_unless_stored() -> None:
    a = _plain()
    a.enqueued_ms = 1_000  # the send time: nothing to store
    assert a.extras is NO_EXTRAS and a.enqueued_ms == 1_000
    a.enqueued_ms = 5_000
    assert a.extras is not NO_EXTRAS and a.enqueued_ms == 5_000 and a.sent_ms == 1_000 and a.size == 5
    copy = a.moved_copy()
    assert copy.enqueued_ms == 5_000 and copy.data is a.data
    rich = Message("id", "b", {}, {}, None, "000000000000", 2_000, 1, group_id="g")
    assert rich.enqueued_ms == 2_000


def test_sent_messages_without_attributes_are_plain_and_with_them_are_not(engine: Engine) -> None:
    q = engine.queue()
    plain = engine.broker.send_message(q, SendEntry("x" * 1024), "000000000000")
    assert plain.extras is NO_EXTRAS and plain.size == 1024
    attrs = {"a": MessageAttributeValue("Number", "1")}
    rich = engine.broker.send_message(q, SendEntry("x", message_attributes=attrs), "000000000000")
    assert rich.extras is not NO_EXTRAS and rich.size == 1 + 1 + 6 + 1


def test_in_flight_and_delayed_messages_timers_share_one_callback_and_make_no_tuple(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "a")
    engine.send(q, "b")
    received = engine.receive(q, max_number_of_messages=2, visibility_timeout=30)
    assert len(received) == 2
    slot = engine.broker.wheel._slots[received[0][0].visible_at_ms]
    # Two list slots per timer (callback, message): the same bound method for both, no (callback, message) tuple.
    assert slot == [slot[0], received[0][0], slot[0], received[1][0]]
    assert slot[0] is slot[2] and not any(isinstance(item, tuple) for item in slot)
    assert len(engine.broker.wheel) == 3  # the two visibility timers and the retention timer
    engine.clock.advance(31)
    assert engine.counts(q) == (2, 0, 0)  # the shared callback made both visible again


def test_a_deleted_queue_is_not_kept_alive_by_its_messages_timers(engine: Engine) -> None:
    import gc
    import types

    q = engine.queue("short-lived-in-flight")
    engine.send(q, "in flight")
    engine.send(q, "delayed", delay_seconds=600)
    assert len(engine.receive(q, visibility_timeout=3600)) == 1
    engine.broker.delete_queue(q)
    gc.collect()
    # Nothing but this test's frame holds the queue: the timers hold its handle, cleared at deletion.
    assert [r for r in gc.get_referrers(q) if not isinstance(r, types.FrameType)] == []
    del q
    engine.clock.advance(3601)  # the lapsed timers do nothing
    assert len(engine.broker.wheel) == 1  # the retention timer, days ahead


def test_fifo_messages_of_one_group_share_its_group_id_string(engine: Engine) -> None:
    q = engine.queue("layout.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    first = engine.broker.send_message(q, SendEntry("a", group_id="".join(["g", "1"])), "000000000000")
    second = engine.broker.send_message(q, SendEntry("b", group_id="".join(["g", "1"])), "000000000000")
    assert first.group_id == second.group_id == "g1"
    assert second.group_id is first.group_id  # one copy per group, not one per message


def test_a_sent_message_keeps_its_id_as_16_bytes_behind_the_digest_and_no_text_until_received(engine: Engine) -> None:
    q = engine.queue()
    message = engine.broker.send_message(q, SendEntry("hello"), "000000000000")
    text = message.message_id
    parsed = uuid.UUID(text)
    assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert message.data == b"hello" + hashlib.md5(b"hello").digest() + parsed.bytes
    assert message.kept_id is None and q.received == {}  # a backlog message: no index entry, no text of its id
    ((received, handle),) = engine.receive(q)
    assert received.data == message.data and received.kept_id == text and q.received == {text: received}
    engine.broker.delete_message(q, handle)
    assert q.received == {} and q.messages == {}


def test_fresh_ids_are_distinct_version_4_uuids(engine: Engine) -> None:
    q = engine.queue()
    ids = [engine.send(q, "x") for _ in range(3000)]  # more than one read of random bytes (256 ids each)
    assert len(set(ids)) == len(ids)
    assert all(uuid.UUID(i).version == 4 and uuid.UUID(i).variant == uuid.RFC_4122 for i in ids)
    assert list(q.messages) == ids  # the view lists them in arrival order


def test_an_id_that_is_not_a_canonical_uuid_is_kept_as_text() -> None:
    upper = str(uuid.uuid4()).upper()
    for text in ("id", upper, "{" + str(uuid.uuid4()) + "}"):
        m = Message(text, "b", {}, {}, None, "000000000000", 1_000, 1)
        assert m.message_id == text and m.kept_id == text and m.data.endswith(bytes(16))
    canonical = str(uuid.uuid4())
    m = Message(canonical, "b", {}, {}, None, "000000000000", 1_000, 1)
    assert m.message_id == canonical and m.kept_id is None and m.data.endswith(uuid.UUID(canonical).bytes)


def test_a_stored_message_is_found_by_id_whether_received_or_not(engine: Engine) -> None:
    q = engine.queue()
    first, second = engine.send(q, "a"), engine.send(q, "b")
    engine.receive(q)  # "a" is in flight and indexed; "b" is not
    assert q.find(first) is q.received[first] and q.find(second) is q.messages[second]
    assert q.messages[second].body == "b" and second in q.messages and len(q.messages) == 2
    assert q.find(str(uuid.uuid4())) is None and "nonsense" not in q.messages
    with pytest.raises(KeyError):
        q.messages["nonsense"]
