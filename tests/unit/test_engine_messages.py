"""Delete, delay, retention, purge, size and content rules of the engine, on a ManualClock."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from sqsemu.engine.errors import (
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    EmptyBatchRequest,
    InvalidBatchEntryId,
    InvalidMessageContents,
    InvalidParameterValue,
    MissingParameter,
    ReceiptHandleIsInvalid,
    TooManyEntriesInBatchRequest,
)
from sqsemu.engine.message import MessageAttributeValue as Attr
from sqsemu.engine.message import ReceiptEntry, SendEntry
from sqsemu.engine.queue import Queue
from sqsemu.engine.validation import check_body
from tests.unit.engine_helpers import Engine, bytes_held_after


def test_delete_with_an_older_receipt_handle_deletes_and_repeats_succeed(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, old),) = engine.receive(q, visibility_timeout=1)
    engine.clock.advance(1)
    ((_, new),) = engine.receive(q)
    engine.broker.delete_message(q, old)  # received again since: AWS deletes it all the same
    assert engine.counts(q) == (0, 0, 0)
    engine.clock.advance(60)
    assert engine.receive(q) == []
    engine.broker.delete_message(q, new)  # the message is gone: still a success
    engine.broker.delete_message(q, old)
    assert engine.counts(q) == (0, 0, 0)


def test_a_receipt_handle_never_issued_for_a_message_is_invalid(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((message, handle),) = engine.receive(q)
    for serial in (0, message.receipt_serial + 1):
        forged = handle_with_serial(handle, serial)
        with pytest.raises(ReceiptHandleIsInvalid):
            engine.broker.delete_message(q, forged)
    assert engine.counts(q) == (0, 1, 0)


def handle_with_serial(handle: str, serial: int) -> str:
    """The same queue and message as ``handle`` with another receipt serial (a handle the server never issued)."""
    uid, message_id, _ = base64.urlsafe_b64decode(handle.encode()).decode().split(":")
    return base64.urlsafe_b64encode(f"{uid}:{message_id}:{serial}".encode()).decode()


def test_delete_after_expiry_on_standard_queue_removes_message(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, handle),) = engine.receive(q, visibility_timeout=1)
    engine.clock.advance(5)
    engine.broker.delete_message(q, handle)
    assert engine.counts(q) == (0, 0, 0)
    assert engine.receive(q) == []


def test_per_message_and_queue_delay(engine: Engine) -> None:
    q = engine.queue(DelaySeconds="10")
    engine.send(q, "queue-delay")
    engine.send(q, "own-delay", delay_seconds=3)
    engine.send(q, "no-delay", delay_seconds=0)
    assert engine.counts(q) == (1, 0, 2)
    assert [m.body for m, _ in engine.receive(q, max_number_of_messages=10)] == ["no-delay"]
    engine.clock.advance(3)
    assert [m.body for m, _ in engine.receive(q, max_number_of_messages=10)] == ["own-delay"]
    engine.broker.set_queue_attributes(q, {"DelaySeconds": "0"})  # not retroactive
    assert engine.receive(q) == []
    engine.clock.advance(7)
    assert [m.body for m, _ in engine.receive(q)] == ["queue-delay"]


def test_delay_range(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, delay_seconds=900)
    with pytest.raises(InvalidParameterValue, match="DelaySeconds"):
        engine.send(q, delay_seconds=901)


def test_retention_expires_messages(engine: Engine) -> None:
    q = engine.queue(MessageRetentionPeriod="60")
    engine.send(q, "old")
    engine.clock.advance(30)
    engine.send(q, "young")
    engine.receive(q, visibility_timeout=100)  # in flight messages expire too
    engine.clock.advance(29.999)
    assert engine.counts(q) == (1, 1, 0)
    engine.clock.advance(0.001)
    assert engine.counts(q) == (1, 0, 0)
    engine.clock.advance(30)
    assert engine.counts(q) == (0, 0, 0)


def test_lowering_retention_expires_old_messages(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    engine.clock.advance(120)
    engine.broker.set_queue_attributes(q, {"MessageRetentionPeriod": "60"})
    engine.clock.advance(0)
    assert engine.counts(q) == (0, 0, 0)


def test_purge_removes_visible_in_flight_and_delayed(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    engine.send(q)
    engine.send(q, delay_seconds=60)
    engine.receive(q)
    assert engine.counts(q) == (1, 1, 1)
    engine.broker.purge_queue(q)
    assert engine.counts(q) == (0, 0, 0)
    engine.clock.advance(60)
    assert engine.receive(q) == []


def test_size_counts_body_and_attribute_bytes(engine: Engine) -> None:
    q = engine.queue(MaximumMessageSize="1024")
    attrs = {"ab": Attr("String", "xyz")}  # 2 + 6 + 3 = 11 bytes
    engine.send(q, "é" * 506 + "a", message_attributes=attrs)  # 1013 + 11 = 1024: accepted
    with pytest.raises(InvalidParameterValue, match="Message must be shorter than 1024 bytes"):
        engine.send(q, "é" * 506 + "ab", message_attributes=attrs)


@pytest.mark.parametrize("body", ["\x00", "a\x08", "\uffff", "x\x1fy"])
def test_forbidden_body_characters(engine: Engine, body: str) -> None:
    q = engine.queue()
    with pytest.raises(InvalidMessageContents):
        engine.send(q, body)


def test_the_body_check_refuses_exactly_the_characters_outside_xml_char() -> None:
    """Every code point, against the XML 1.0 Char production as the error message states it."""
    allowed = ((0x9, 0x9), (0xA, 0xA), (0xD, 0xD), (0x20, 0xD7FF), (0xE000, 0xFFFD), (0x10000, 0x10FFFF))
    refused = []
    for code in range(0x110000):
        char = chr(code)
        try:
            check_body("\u00e9" + char)  # not ASCII: the UTF-8 pass, then the regular expression for the rest
        except InvalidMessageContents:
            refused.append(code)
            assert not any(low <= code <= high for low, high in allowed), hex(code)
    assert len(refused) == 0x20 - 3 + (0xE000 - 0xD800) + 2  # C0 controls but TAB LF CR; surrogates; FFFE FFFF


def test_allowed_body_characters_and_empty_body(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "\t\n\r \ud7ff\ue000\ufffd\U0001f600")
    with pytest.raises(MissingParameter, match="MessageBody"):
        engine.send(q, "")


@pytest.mark.parametrize(
    "name",
    ["bad!", "AWS.x", "amazon.y", ".lead", "trail.", "a..b", "x" * 257, "", "ok.name-€"],
)
def test_bad_attribute_names(engine: Engine, name: str) -> None:
    q = engine.queue()
    with pytest.raises(InvalidParameterValue):
        engine.send(q, message_attributes={name: Attr("String", "v")})


def test_attribute_types_and_values(engine: Engine) -> None:
    q = engine.queue()
    engine.send(
        q,
        message_attributes={
            "s": Attr("String.custom", "v"),
            "n": Attr("Number.float", "1.5"),
            "b": Attr("Binary.png", binary_value=b"\x00\x01"),
            "ok.name-9_X": Attr("String", "x"),
        },
    )
    for bad in (Attr("Invalid", "x"), Attr("String", ""), Attr("Number", "abc"), Attr("Binary", "x")):
        with pytest.raises(InvalidParameterValue):
            engine.send(q, message_attributes={"a": bad})
    too_many = {f"a{i}": Attr("String", "v") for i in range(11)}
    with pytest.raises(InvalidParameterValue, match="exceeds the allowed maximum"):
        engine.send(q, message_attributes=too_many)


def test_system_attribute_only_trace_header(engine: Engine) -> None:
    q = engine.queue()
    msg = engine.broker.send_message(
        q, SendEntry("b", system_attributes={"AWSTraceHeader": Attr("String", "Root=1-a")}), "acct"
    )
    assert msg.trace_header == "Root=1-a"
    with pytest.raises(InvalidParameterValue):
        engine.broker.send_message(q, SendEntry("b", system_attributes={"Other": Attr("String", "x")}), "acct")
    header_only = engine.broker.send_message(q, SendEntry("b", trace_header="Root=1-b"), "acct")
    assert header_only.trace_header == "Root=1-b"


def test_batch_rules(engine: Engine) -> None:
    q = engine.queue()
    send = engine.broker.send_message_batch
    with pytest.raises(EmptyBatchRequest):
        send(q, [], "a")
    with pytest.raises(TooManyEntriesInBatchRequest, match="You have sent 11"):
        send(q, [SendEntry("b", id=f"i{i}") for i in range(11)], "a")
    with pytest.raises(BatchEntryIdsNotDistinct):
        send(q, [SendEntry("b", id="x"), SendEntry("b", id="x")], "a")
    for bad_id in ("bad:id", "x" * 81, "", "é1", "x\n"):  # letters and digits of ASCII only; no line end
        with pytest.raises(InvalidBatchEntryId):
            send(q, [SendEntry("b", id=bad_id)], "a")
    with pytest.raises(BatchRequestTooLong, match="You have sent 1048577 bytes"):
        send(q, [SendEntry("x" * 524288, id="a"), SendEntry("x" * 524289, id="b")], "a")
    assert engine.counts(q) == (0, 0, 0)


def test_batch_entries_fail_individually(engine: Engine) -> None:
    q = engine.queue()
    results = engine.broker.send_message_batch(
        q, [SendEntry("ok", id="a"), SendEntry("\x00", id="b"), SendEntry("ok2", id="c")], "acct"
    )
    assert isinstance(results[1], InvalidMessageContents)
    assert engine.counts(q) == (2, 0, 0)
    received = engine.receive(q, max_number_of_messages=10)
    outcomes = engine.broker.delete_message_batch(q, [ReceiptEntry("a", received[0][1]), ReceiptEntry("b", "garbage")])
    assert outcomes[0] is None and isinstance(outcomes[1], ReceiptHandleIsInvalid)
    outcomes = engine.broker.change_message_visibility_batch(
        q, [ReceiptEntry("a", received[1][1], 0), ReceiptEntry("b", received[0][1], 5)]
    )
    assert outcomes[0] is None and isinstance(outcomes[1], InvalidParameterValue)
    assert engine.counts(q) == (1, 0, 0)


def test_receive_parameter_ranges(engine: Engine) -> None:
    q = engine.queue()
    for kwargs in (
        {"max_number_of_messages": 0},
        {"max_number_of_messages": 11},
        {"wait_time_seconds": 21},
        {"wait_time_seconds": -1},
    ):
        with pytest.raises(InvalidParameterValue):
            engine.receive(q, **kwargs)
    with pytest.raises(InvalidParameterValue, match="Must be between 1 and 10, if provided"):
        engine.receive(q, max_number_of_messages=11)


_BIG = "x" * 65536


def _held_by_queue(engine: Engine, kind: str, end: str, before: Callable[[Queue], None] | None = None) -> int:
    """Bytes still allocated (``bytes_held_after``) once 120 messages of 64 KiB went through a queue of
    ``kind`` and left it by ``end``: ``consume`` (each sent, received and deleted in turn; on ``dlq``, moved to the
    dead-letter queue by its second receive and deleted there) or ``expire`` (all sent, some received and visible
    again, then the 60-second retention period ran out). ``before`` runs on the queue first, untraced."""
    import asyncio

    attributes = {"MessageRetentionPeriod": "60"}
    fifo = kind == "fifo"
    if fifo:
        attributes.update(FifoQueue="true", ContentBasedDeduplication="true")
    dlq = engine.queue("dead") if kind == "dlq" else None
    if dlq is not None:
        attributes["RedrivePolicy"] = f'{{"deadLetterTargetArn":"{dlq.arn}","maxReceiveCount":"1"}}'
    q = engine.queue("q.fifo" if fifo else "q", **attributes)
    if before is not None:
        before(q)

    def go_through() -> None:
        for index in range(120):
            group = f"g{index % 7}" if kind in ("fifo", "fair") else None
            attribute = {"a": Attr("String", string_value="v" * 1000)} if kind == "attributes" else None
            engine.send(q, _BIG + str(index), group_id=group, message_attributes=attribute)
            if end != "consume":
                continue
            if dlq is not None:
                engine.receive(q, visibility_timeout=1)
                engine.clock.advance(1)
                engine.receive(q)  # the second receive moves it
                ((_, handle),) = engine.receive(dlq)
                engine.broker.delete_message(dlq, handle)
                continue
            ((_, handle),) = engine.receive(q)
            engine.broker.delete_message(q, handle)
        if end == "expire":
            for _ in range(5):
                engine.receive(q, max_number_of_messages=10, visibility_timeout=1)
            engine.clock.advance(61)
            engine.run(asyncio.sleep(0))

    held = bytes_held_after(go_through)
    assert engine.counts(q)[0] + engine.counts(q)[2] == 0
    return held


@pytest.mark.parametrize("end", ["consume", "expire"])
@pytest.mark.parametrize("kind", ["standard", "fifo", "fair", "attributes", "dlq"])
def test_a_message_gone_from_the_queue_frees_its_body(engine: Engine, kind: str, end: str) -> None:
    """Consumed in the order sent, or expired by the retention period, 120 messages of 64 KiB (7.5 MiB) leave the
    emptied queue holding none of them. Deleted messages stayed in the age order until a compaction (after 4,096)
    and expired ones in the receive order until the next receive."""
    held = _held_by_queue(engine, kind, end)
    assert held < 1 << 20, f"{held} bytes held by an emptied {kind} queue ({end})"


def test_deleted_messages_behind_an_in_flight_one_are_freed_soon(engine: Engine) -> None:
    """A message left in flight at the head of the age order holds back at most a few dozen deleted ones behind it
    (bounded by the live count or 64, whichever is larger; it was 4,096)."""

    def leave_one_in_flight(q: Queue) -> None:
        engine.send(q, "left in flight")
        engine.receive(q, visibility_timeout=43200)

    held = _held_by_queue(engine, "standard", "consume", leave_one_in_flight)
    assert held < 6 << 20, f"{held} bytes held behind one in-flight message"


def test_a_remembered_receipt_handle_is_read_as_its_decoding_reads_it(engine: Engine) -> None:
    """The memo of recently issued receipt handles (``sqsemu.engine.queue._handle_parts``) gives what decoding the
    handle gives: the same message, the same "newest receipt" answer, the same refusals (issue 50)."""
    from sqsemu.engine import queue as queue_module

    q = engine.queue()
    for n in range(3):
        engine.send(q, body=f"m{n}")
    received = engine.receive(q, max_number_of_messages=3, visibility_timeout=1)
    engine.clock.advance(1)
    again = engine.receive(q, max_number_of_messages=3)
    handles = [h for _, h in received + again]
    remembered = [q._message_for(h) for h in handles]
    assert all(h in queue_module._handle_parts for h in handles)
    queue_module._handle_parts.clear()
    assert [q._message_for(h) for h in handles] == remembered
    assert [current for _, current in remembered] == [False, False, False, True, True, True]


def test_a_receipt_handle_whose_message_id_has_a_colon_is_never_remembered(engine: Engine) -> None:
    """Read back, such a handle splits into four parts and is refused; the memo must not accept it either."""
    from sqsemu.engine import queue as queue_module

    q = engine.queue()
    engine.send(q)
    ((message, _),) = engine.receive(q)
    message.message_id = "kept:id"
    handle = q.receipt_handle(message)
    assert handle not in queue_module._handle_parts
    with pytest.raises(ReceiptHandleIsInvalid):
        engine.broker.delete_message(q, handle)
