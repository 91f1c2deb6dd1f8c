"""The engine's events (sqsemu.engine.events): why messages come and go, the receive calls, and how the broker hands
them to none, one or several subscribers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sqsemu.engine.events import JournalFanout
from sqsemu.engine.message import Message, ReceiptEntry
from sqsemu.engine.queue import Queue
from sqsemu.engine.redrive import MoveTask
from tests.unit.engine_helpers import NS, Engine


class Recorder:
    """A journal writing down the events it hears, as ``(event, queue name, detail)``."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    def queue_saved(self, queue: Queue) -> None:
        self.events.append(("queue_saved", queue.name, None))

    def queue_deleted(self, queue: Queue) -> None:
        self.events.append(("queue_deleted", queue.name, None))

    def queue_purged(self, queue: Queue) -> None:
        self.events.append(("queue_purged", queue.name, None))

    def message_added(self, queue: Queue, message: Message, reason: str) -> None:
        self.events.append(("added", queue.name, reason))

    def message_changed(self, queue: Queue, message: Message) -> None:
        self.events.append(("changed", queue.name, None))

    def message_deleted(self, queue: Queue, message: Message, reason: str) -> None:
        self.events.append(("deleted", queue.name, reason))

    def messages_received(self, queue: Queue, count: int) -> None:
        self.events.append(("received", queue.name, count))

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        self.events.append(("dedup", queue.name, key))

    def task_saved(self, task: MoveTask[Queue]) -> None:
        self.events.append(("task", task.source.name, task.status))

    def about_messages(self) -> list[tuple[str, str, Any]]:
        return [e for e in self.events if e[0] in ("added", "deleted", "received")]


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = Engine()
    yield e
    e.close()


def test_the_broker_holds_none_one_subscriber_itself_or_a_fanout(engine: Engine) -> None:
    broker = engine.broker
    queue = engine.queue("q")
    assert broker.journal is None and queue.journal is None
    first, second = Recorder(), Recorder()
    broker.subscribe(first)
    broker.subscribe(first)  # twice: once
    assert broker.journal is first and queue.journal is first
    broker.subscribe(second)
    assert isinstance(broker.journal, JournalFanout) and broker.journal.subscribers == (first, second)
    assert queue.journal is broker.journal and engine.queue("later").journal is broker.journal
    engine.send(queue)
    assert first.about_messages() == second.about_messages() == [("added", "q", "sent")]
    (received,) = engine.receive(queue)
    engine.broker.delete_message(queue, received[1])
    heard = [("added", "q", "sent"), ("changed", "q", None), ("received", "q", 1), ("deleted", "q", "deleted")]
    assert [e for e in first.events if e[0] != "queue_saved"] == heard  # every event reaches every subscriber
    assert [e for e in second.events if e[0] != "queue_saved"] == heard
    broker.unsubscribe(first)
    assert broker.journal is second and queue.journal is second
    broker.set_journal(None)
    assert broker.journal is None and queue.journal is None and broker.move_tasks.on_change is None


def test_why_messages_come_and_go(engine: Engine) -> None:
    recorder = Recorder()
    engine.broker.subscribe(recorder)
    dlq = engine.queue("dlq")
    policy = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1})
    work = engine.queue("work", VisibilityTimeout="30", RedrivePolicy=policy)
    short = engine.queue("short", MessageRetentionPeriod="60")
    for body in ("a", "b", "c"):
        engine.send(work, body)
    assert engine.receive(dlq) == []
    (m1, h1), (m2, _) = engine.receive(work, max_number_of_messages=2)
    engine.broker.delete_message(work, h1)
    engine.broker.delete_message_batch(work, [ReceiptEntry("x", h1)])  # already gone: no event
    engine.clock.advance(31)
    [(m3, _)] = engine.receive(work, max_number_of_messages=10)  # m2 goes to the DLQ on the way
    engine.send(short, "old")
    engine.clock.advance(61)
    assert recorder.about_messages() == [
        ("added", "work", "sent"),
        ("added", "work", "sent"),
        ("added", "work", "sent"),
        ("received", "dlq", 0),
        ("received", "work", 2),
        ("deleted", "work", "deleted"),
        ("deleted", "work", "dead_lettered"),
        ("added", "dlq", "dead_lettered"),
        ("received", "work", 1),
        ("added", "short", "sent"),
        ("deleted", "short", "expired"),
    ]
    del recorder.events[:]
    engine.broker.start_message_move_task(NS, dlq.arn, None, None)
    engine.clock.advance(2)
    assert recorder.about_messages() == [("added", "work", "moved"), ("deleted", "dlq", "moved")]


def test_a_long_poll_tells_its_receive_when_it_ends(engine: Engine) -> None:
    import asyncio

    recorder = Recorder()
    engine.broker.subscribe(recorder)
    queue = engine.queue("q")

    async def poll_then_send() -> tuple[int, int]:
        waiting = asyncio.ensure_future(engine.broker.receive_message(queue, wait_time_seconds=20))
        await asyncio.sleep(0)
        engine.send(queue, "x")
        got = await waiting
        empty = asyncio.ensure_future(engine.broker.receive_message(queue, wait_time_seconds=5))
        await asyncio.sleep(0)
        engine.clock.advance(5)
        return len(got), len(await empty)

    assert engine.run(poll_then_send()) == (1, 0)
    assert [e for e in recorder.about_messages() if e[0] == "received"] == [("received", "q", 1), ("received", "q", 0)]


def test_fifo_deletes_and_sends_carry_their_reasons(engine: Engine) -> None:
    recorder = Recorder()
    engine.broker.subscribe(recorder)
    queue = engine.queue("f.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    engine.send(queue, "one", group_id="g")
    engine.send(queue, "one", group_id="g")  # a duplicate: not stored, not told
    [(_, handle)] = engine.receive(queue)
    engine.broker.delete_message(queue, handle)
    assert recorder.about_messages() == [
        ("added", "f.fifo", "sent"),
        ("received", "f.fifo", 1),
        ("deleted", "f.fifo", "deleted"),
    ]
