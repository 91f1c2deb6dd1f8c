"""Cold messages: a plain message waiting since its send in a standard queue, behind a backlog of
``Queue.cold_after`` visible messages, is kept as bytes, not as an object, and made a ``Message`` when a receive
takes it or anything needs it as an object. What a client observes (order, attributes, retention, counts) is the
same either way. These tests keep every such message cold (``cold_after`` 0) but where they say otherwise."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sqsemu.admin.peek import peek_queue
from sqsemu.engine.message import Message, MessageAttributeValue, MessageState, SendEntry
from sqsemu.engine.queue import COLD_AFTER, Queue
from tests.unit.engine_helpers import NS, START_MS, Engine


class _ColdEngine(Engine):
    def queue(self, name: str = "q", **attributes: str) -> Queue:
        queue = super().queue(name, **attributes)
        queue.cold_after = 0
        return queue


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = _ColdEngine()
    yield e
    e.close()


def _live_messages() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if type(obj) is Message)


def test_a_backlog_keeps_no_object_per_message(engine: Engine) -> None:
    q = engine.queue()
    before = _live_messages()
    for n in range(500):
        engine.send(q, f"m{n}")
    assert _live_messages() == before  # every one is bytes in ``cold``
    assert len(q.cold) == 500 and not q.ready and not q.by_age and engine.counts(q) == (500, 0, 0)


def test_a_short_queue_keeps_objects_and_a_backlog_behind_it_cold() -> None:
    engine = Engine()
    try:
        q = engine.queue()
        assert q.cold_after == COLD_AFTER
        for n in range(COLD_AFTER + 3):
            engine.send(q, f"m{n}")
        assert len(q.by_age) == COLD_AFTER and len(q.cold) == 3
        received = engine.receive(q, max_number_of_messages=10)
        assert [m.body for m, _ in received] == [f"m{n}" for n in range(10)]
        engine.send(q, "next")  # 1,016 visible: an object again, behind the cold ones
        assert len(q.cold) == 3 and q.ready[-1].body == "next"
        bodies = []
        while batch := engine.receive(q, max_number_of_messages=10):
            bodies += [m.body for m, _ in batch]
        assert bodies == [f"m{n}" for n in range(10, COLD_AFTER + 3)] + ["next"]
    finally:
        engine.close()


def test_a_cold_message_is_received_with_what_it_was_sent_with(engine: Engine) -> None:
    q = engine.queue()
    sent = engine.broker.send_message(q, SendEntry("h\u00e9llo \U0001f600"), "AIDAEXAMPLE")
    engine.clock.advance(2)
    ((message, handle),) = engine.receive(q, visibility_timeout=30)
    assert (message.message_id, message.body, message.md5_of_body(), message.size) == (
        sent.message_id,
        sent.body,
        sent.md5_of_body(),
        sent.size,
    )
    assert (message.sender_id, message.sent_ms, message.receive_count) == ("AIDAEXAMPLE", START_MS, 1)
    assert message.first_receive_ms == START_MS + 2000 and message.state is MessageState.IN_FLIGHT
    assert not q.cold and list(q.by_age) == [message] and q.received == {sent.message_id: message}
    engine.clock.advance(30)  # its visibility timeout ran out: visible again, as an object
    ((again, _),) = engine.receive(q)
    assert again is message and again.receive_count == 2
    engine.broker.delete_message(q, handle)  # an older receipt handle deletes it too
    assert engine.counts(q) == (0, 0, 0)


def test_receives_take_cold_and_other_messages_in_send_order(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "a")
    engine.send(q, "b", delay_seconds=1)  # an object: delayed
    engine.send(q, "c")
    engine.send(q, "d", message_attributes={"k": MessageAttributeValue("String", "v")})  # an object: not plain
    engine.send(q, "e")
    assert len(q.cold) == 3
    engine.clock.advance(1)
    assert [m.body for m, _ in engine.receive(q, max_number_of_messages=10)] == ["a", "b", "c", "d", "e"]


def test_retention_expires_cold_messages_as_any_other(engine: Engine) -> None:
    q = engine.queue(MessageRetentionPeriod="60")
    engine.send(q, "old")  # cold
    engine.clock.advance(10)
    engine.send(q, "delayed", delay_seconds=5)  # an object, younger
    engine.clock.advance(10)
    engine.send(q, "young")  # cold
    assert q.oldest_enqueued_ms() == START_MS  # the age of the oldest message (metrics) counts from "old"
    engine.clock.advance(40)  # "old" is 60 s old
    assert engine.counts(q) == (2, 0, 0) and len(q.cold) == 1
    engine.clock.advance(10)
    assert [m.body for m in q.messages.values()] == ["young"]
    engine.clock.advance(10)
    assert engine.counts(q) == (0, 0, 0) and not q.cold


def test_a_message_sent_at_an_earlier_time_than_the_newest_cold_one_stays_an_object(engine: Engine) -> None:
    """A clock that went back (a ``Clock`` of the embedder's; sqsemu's own never do): the cold messages must stay in
    send-time order for retention, so the earlier one is kept as an object, and both expire on time."""
    q = engine.queue(MessageRetentionPeriod="60")
    engine.clock.advance(10)
    engine.send(q, "later")
    engine.clock._now -= 10_000  # noqa: SLF001 - the clock moved back by 10 s
    engine.send(q, "earlier")
    assert len(q.cold) == 1 and [m.body for m in q.by_age] == ["earlier"]
    engine.clock.advance(60)  # "earlier" is 60 s old
    assert [m.body for m in q.messages.values()] == ["later"]
    engine.clock.advance(10)
    assert engine.counts(q) == (0, 0, 0)


def test_the_first_message_with_a_group_makes_the_cold_messages_tenants_messages(engine: Engine) -> None:
    q = engine.queue()
    for body in ("a", "b"):
        engine.send(q, body)
    engine.send(q, "g1", group_id="tenant-1")  # the fair-queue bookkeeping starts, counting "a" and "b"
    engine.send(q, "c")  # not cold: the queue keeps per-tenant counts now
    assert not q.cold and q.fair is not None
    assert [m.body for m, _ in engine.receive(q, max_number_of_messages=10)] == ["a", "b", "g1", "c"]


def test_views_see_cold_messages_and_change_nothing_while_moves_take_objects(engine: Engine) -> None:
    q = engine.queue()
    ids = [engine.send(q, body) for body in ("a", "b", "c")]
    engine.receive(q, max_number_of_messages=1)  # "a" in flight: an object
    engine.clock.advance(30)  # visible again
    assert list(q.messages) == ids and q.messages[ids[1]].body == "b" and ids[2] in q.messages
    assert [m.state for m in q.messages.values()] == [MessageState.VISIBLE] * 3
    peeked = peek_queue(engine.broker, engine.clock, NS, q.name, "http://x")
    assert [m["message_id"] for m in peeked["messages"]] == ids
    assert len(q.cold) == 2  # reading changed nothing
    assert [m.body for m in q.peek_visible(2)] == ["a", "b"]  # a move task's peek: objects the queue keeps
    assert not q.cold
    assert [m.body for m, _ in engine.receive(q, max_number_of_messages=10)] == ["a", "b", "c"]


def test_purge_drops_cold_messages(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "a")
    engine.broker.purge_queue(q)
    assert not q.cold and engine.counts(q) == (0, 0, 0) and engine.receive(q) == []
