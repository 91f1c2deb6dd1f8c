"""Long polling and the scheduler (SQS Developer Guide, "Amazon SQS short and long polling"), ManualClock."""

from __future__ import annotations

import asyncio

from sqsemu.engine.broker import Queue
from sqsemu.engine.message import Message
from tests.unit.engine_helpers import Engine, bytes_held_after


def _poll(engine: Engine, q: Queue, **kwargs: object) -> asyncio.Task[list[tuple[Message, str]]]:
    kwargs.setdefault("wait_time_seconds", 20)
    task = engine.loop.create_task(engine.broker.receive_message(q, **kwargs))  # type: ignore[arg-type]
    engine.run(asyncio.sleep(0))
    return task


def _settle(engine: Engine) -> None:
    engine.run(asyncio.sleep(0))


def test_waiting_receive_returns_when_a_message_is_sent(engine: Engine) -> None:
    q = engine.queue()
    task = _poll(engine, q)
    assert not task.done()
    engine.send(q, "hi")
    _settle(engine)
    assert [m.body for m, _ in task.result()] == ["hi"]


def test_waiting_receive_returns_when_delay_ends(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "later", delay_seconds=5)
    task = _poll(engine, q)
    engine.clock.advance(4.999)
    _settle(engine)
    assert not task.done()
    engine.clock.advance(0.001)
    _settle(engine)
    assert [m.body for m, _ in task.result()] == ["later"]


def test_waiting_receive_returns_when_visibility_expires(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    engine.receive(q, visibility_timeout=7)
    task = _poll(engine, q)
    engine.clock.advance(7)
    _settle(engine)
    ((msg, _),) = task.result()
    assert msg.receive_count == 2


def test_empty_long_poll_returns_after_the_wait(engine: Engine) -> None:
    q = engine.queue()
    task = _poll(engine, q, wait_time_seconds=3)
    engine.clock.advance(2.999)
    _settle(engine)
    assert not task.done()
    engine.clock.advance(0.001)
    _settle(engine)
    assert task.result() == []
    assert len(q.waiters) == 0


def test_queue_wait_time_is_the_default(engine: Engine) -> None:
    q = engine.queue(ReceiveMessageWaitTimeSeconds="4")
    task = engine.loop.create_task(engine.broker.receive_message(q))
    _settle(engine)
    assert not task.done()
    engine.clock.advance(4)
    _settle(engine)
    assert task.result() == []


def test_waiters_are_served_in_arrival_order(engine: Engine) -> None:
    q = engine.queue()
    first, second = _poll(engine, q), _poll(engine, q)
    engine.send(q, "one")
    _settle(engine)
    assert [m.body for m, _ in first.result()] == ["one"]
    assert not second.done()
    engine.send(q, "two")
    _settle(engine)
    assert [m.body for m, _ in second.result()] == ["two"]


def test_batch_send_fills_a_waiter_up_to_its_maximum(engine: Engine) -> None:
    from sqsemu.engine.message import SendEntry

    q = engine.queue()
    task = _poll(engine, q, max_number_of_messages=3)
    engine.broker.send_message_batch(q, [SendEntry(str(i), id=f"e{i}") for i in range(5)], "a")
    _settle(engine)
    assert [m.body for m, _ in task.result()] == ["0", "1", "2"]
    assert engine.counts(q) == (2, 3, 0)


def test_disconnected_waiter_takes_no_message(engine: Engine) -> None:
    q = engine.queue()
    gone: asyncio.Future[None] = engine.loop.create_future()
    task = _poll(engine, q, disconnected=gone)
    gone.set_result(None)
    _settle(engine)
    _settle(engine)
    assert task.result() == []
    assert len(q.waiters) == 0
    engine.send(q, "kept")
    assert engine.counts(q) == (1, 0, 0)
    assert [m.body for m, _ in engine.receive(q)] == ["kept"]


def test_disconnected_waiter_takes_no_message_even_before_its_call_resumes(engine: Engine) -> None:
    q = engine.queue()
    gone: asyncio.Future[None] = engine.loop.create_future()
    task = _poll(engine, q, disconnected=gone)
    gone.set_result(None)
    engine.send(q, "kept")  # no loop turn in between: the waiting call has not seen the disconnect yet
    assert engine.counts(q) == (1, 0, 0)
    _settle(engine)
    _settle(engine)
    assert task.result() == []
    assert len(q.waiters) == 0
    [(message, _)] = engine.receive(q)
    assert (message.body, message.receive_count) == ("kept", 1)


def test_cancelled_waiter_leaves_nothing_behind(engine: Engine) -> None:
    q = engine.queue()
    task = _poll(engine, q)
    task.cancel()
    _settle(engine)
    assert len(q.waiters) == 0
    engine.send(q)
    assert engine.counts(q) == (1, 0, 0)


def test_deleting_queue_releases_waiters(engine: Engine) -> None:
    q = engine.queue()
    task = _poll(engine, q)
    engine.broker.delete_queue(q)
    _settle(engine)
    assert task.result() == []


def test_stop_waiting_answers_waiting_long_polls_empty_and_later_ones_at_once(engine: Engine) -> None:
    q = engine.queue()
    tasks = [_poll(engine, q) for _ in range(3)]
    engine.broker.stop_waiting()
    _settle(engine)
    assert [task.result() for task in tasks] == [[], [], []]
    later = _poll(engine, q)
    assert later.done() and later.result() == []
    engine.send(q, "still served")
    assert [m.body for m, _ in engine.run(engine.broker.receive_message(q, wait_time_seconds=20))] == ["still served"]


def test_an_answered_long_poll_keeps_no_message_alive_until_its_deadline(engine: Engine) -> None:
    """Received and deleted, a long poll's messages are freed at once, not when its 20-second wait would have ended
    (the wait's timer held the answer: about 3 MiB here, a server's whole receive rate times 20 s under load)."""
    q = engine.queue()

    def answered_long_polls() -> None:
        for _ in range(48):
            task = _poll(engine, q)
            engine.send(q, "x" * 65536)
            _settle(engine)
            for _message, receipt_handle in task.result():
                engine.broker.delete_message(q, receipt_handle)

    held = bytes_held_after(answered_long_polls)
    assert engine.counts(q) == (0, 0, 0)
    assert held < 1 << 20, f"{held} bytes still held by 48 answered long polls"
