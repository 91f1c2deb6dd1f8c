"""The timer wheel and the clocks."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sqsemu.clock import ManualClock, SystemClock
from sqsemu.engine.timerwheel import TimerWheel
from tests.unit.engine_helpers import Engine

WHEEL_LOGGER = "sqsemu.engine.timerwheel"
DEADLINE_S = 10.0  # how long a system-clock test waits for a timer due in milliseconds before failing


class Driver:
    def __init__(self, clock: ManualClock | SystemClock) -> None:
        self.clock = clock
        self.fired: list[tuple[str, int, int]] = []
        self.wheel = TimerWheel(on_earlier=clock.reschedule)

    def next_due_ms(self) -> int | None:
        return self.wheel.next_due_ms()

    def run_due(self, now_ms: int) -> None:
        self.wheel.run_due(now_ms)

    def at(self, due: int, label: str) -> None:
        self.wheel.schedule(due, lambda arg, d: self.fired.append((arg, d, self.clock.now_ms())), label)


def test_manual_clock_fires_in_deadline_order_at_each_deadline() -> None:
    clock = ManualClock(1000)
    d = Driver(clock)
    clock.attach(d)
    d.at(1500, "b")
    d.at(1200, "a")
    d.at(1500, "c")
    d.at(9000, "late")
    clock.advance(1)
    assert d.fired == [("a", 1200, 1200), ("b", 1500, 1500), ("c", 1500, 1500)]
    assert clock.now_ms() == 2000
    assert d.wheel.next_due_ms() == 9000


def test_timer_scheduled_by_a_timer_within_the_advance_fires() -> None:
    clock = ManualClock(0)
    d = Driver(clock)
    clock.attach(d)
    d.wheel.schedule(100, lambda arg, due: d.at(due + 50, "chained"), None)
    clock.advance(0.2)
    assert d.fired == [("chained", 150, 150)]


def test_manual_clock_rejects_negative() -> None:
    with pytest.raises(ValueError):
        ManualClock(0).advance(-1)


def test_system_clock_fires_due_timer_without_polling() -> None:
    async def main() -> list[tuple[str, int, int]]:
        clock = SystemClock()
        d = Driver(clock)
        clock.attach(d)
        d.at(clock.now_ms() + 30, "x")
        d.at(clock.now_ms() + 10, "first")  # earlier: re-arms the loop timer
        await asyncio.sleep(0.1)
        clock.detach()
        return d.fired

    fired = asyncio.run(main())
    assert [label for label, _, _ in fired] == ["first", "x"]
    assert all(now >= due for _, due, now in fired)


# --- a timer callback that raises stops nothing else ------------------------------------------------------------


def _boom(arg: Any, _due: int) -> None:
    raise RuntimeError(f"timer {arg} failed")


def _wheel_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The messages of the exceptions the wheel logged (one ERROR record with exc_info per failed callback)."""
    return [
        str(record.exc_info[1])
        for record in caplog.records
        if record.name == WHEEL_LOGGER and record.levelno == logging.ERROR and record.exc_info
    ]


def test_a_raising_timer_stops_nothing_manual_clock(caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(1000)
    d = Driver(clock)
    clock.attach(d)
    d.at(1100, "before")
    d.wheel.schedule(1100, _boom, "boom")
    d.at(1100, "after")  # same slot as the failing callback
    d.at(1500, "later")  # a later slot of the same advance
    with caplog.at_level(logging.ERROR, logger=WHEEL_LOGGER):
        assert clock.advance(1) == 2000
    assert d.fired == [("before", 1100, 1100), ("after", 1100, 1100), ("later", 1500, 1500)]
    assert _wheel_errors(caplog) == ["timer boom failed"]
    d.at(2500, "next advance")
    clock.advance(1)
    assert d.fired[-1] == ("next advance", 2500, 2500)
    assert d.wheel.next_due_ms() is None


def test_a_raising_timer_stops_nothing_system_clock(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> list[str]:
        clock = SystemClock()
        d = Driver(clock)
        clock.attach(d)
        later_fired = asyncio.Event()
        now = clock.now_ms()
        d.at(now + 5, "before")
        d.wheel.schedule(now + 5, _boom, "boom")
        d.at(now + 5, "after")
        d.wheel.schedule(now + 20, lambda arg, due: later_fired.set(), "later")
        try:
            await asyncio.wait_for(later_fired.wait(), DEADLINE_S)  # never set when the clock stopped re-arming
        finally:
            clock.detach()
        return [label for label, _, _ in d.fired]

    with caplog.at_level(logging.ERROR, logger=WHEEL_LOGGER):
        assert asyncio.run(main()) == ["before", "after"]
    assert _wheel_errors(caplog) == ["timer boom failed"]


def test_system_clock_re_arms_when_the_driver_raises() -> None:
    class FailsOnce(Driver):
        failed = False

        def run_due(self, now_ms: int) -> None:
            super().run_due(now_ms)
            if not self.failed:
                self.failed = True
                raise RuntimeError("driver failed")

    async def main() -> tuple[list[str], list[BaseException | None]]:
        loop = asyncio.get_running_loop()
        errors: list[BaseException | None] = []
        loop.set_exception_handler(lambda _loop, context: errors.append(context.get("exception")))
        clock = SystemClock()
        d = FailsOnce(clock)
        clock.attach(d)
        later_fired = asyncio.Event()
        now = clock.now_ms()
        d.at(now + 5, "first")
        d.wheel.schedule(now + 20, lambda arg, due: later_fired.set(), "later")
        try:
            await asyncio.wait_for(later_fired.wait(), DEADLINE_S)
        finally:
            clock.detach()
        return [label for label, _, _ in d.fired], errors

    fired, errors = asyncio.run(main())
    assert fired == ["first"]
    assert [str(e) for e in errors] == ["driver failed"]  # reported to the loop's exception handler


def test_broker_timers_survive_a_raising_callback(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    q = engine.queue()
    engine.send(q, "again")
    start = engine.clock.now_ms()
    engine.broker.schedule(start + 5000, _boom, "boom")  # first in the slot of the visibility expiry below
    engine.receive(q, visibility_timeout=5)
    poll = engine.loop.create_task(engine.broker.receive_message(q, wait_time_seconds=20))
    engine.run(asyncio.sleep(0))
    with caplog.at_level(logging.ERROR, logger=WHEEL_LOGGER):
        engine.clock.advance(5)  # the visibility expiry in the failing slot still runs and serves the long poll
    engine.run(asyncio.sleep(0))
    [(message, _)] = poll.result()
    assert (message.body, message.receive_count) == ("again", 2)
    assert _wheel_errors(caplog) == ["timer boom failed"]
    empty = engine.loop.create_task(engine.broker.receive_message(q, wait_time_seconds=20))
    engine.run(asyncio.sleep(0))
    engine.clock.advance(20)  # a later long-poll timeout still fires
    engine.run(asyncio.sleep(0))
    assert empty.result() == []


class _Arg:
    """A timer argument with an identity of its own."""


def test_a_dropped_entry_does_not_run_and_lets_its_argument_go() -> None:
    import gc

    wheel = TimerWheel()
    ran: list[Any] = []
    kept, dropped = _Arg(), _Arg()
    wheel.schedule(100, lambda arg, due: ran.append(arg), kept)
    wheel.schedule(100, lambda arg, due: ran.append(arg), dropped)
    assert wheel.drop(100, dropped)
    assert not wheel.drop(100, dropped)  # once
    assert not wheel.drop(200, kept)  # no such deadline
    gc.collect()
    assert not any(holder is wheel._slots[100] for holder in gc.get_referrers(dropped))
    assert any(holder is wheel._slots[100] for holder in gc.get_referrers(kept))
    assert wheel.run_due(100) == 2  # the dropped entry lapses at its deadline, doing nothing
    assert ran == [kept]


def test_drop_looks_only_near_the_ends_of_a_crowded_deadline() -> None:
    from sqsemu.engine.timerwheel import DROP_SCAN

    wheel = TimerWheel()
    args = [_Arg() for _ in range(4 * DROP_SCAN)]
    for arg in args:
        wheel.schedule(100, lambda arg, due: None, arg)
    assert wheel.drop(100, args[0]) and wheel.drop(100, args[-1])
    assert not wheel.drop(100, args[2 * DROP_SCAN])  # the middle of a crowded slot: left to lapse at its deadline
    assert wheel.run_due(100) == len(args)


def test_a_deleted_in_flight_message_is_let_go_before_its_visibility_deadline(engine: Engine) -> None:
    import gc

    q = engine.queue("let-go")
    engine.send(q, "in flight" * 100)
    ((message, receipt),) = engine.receive(q, visibility_timeout=43200)
    engine.broker.delete_message(q, receipt)
    gc.collect()
    holders = [r for r in gc.get_referrers(message) if isinstance(r, list)]
    assert holders == []  # the 12-hour visibility timer holds it no longer
    engine.clock.advance(43201)  # and lapses doing nothing
    assert engine.counts(q) == (0, 0, 0)


def test_a_changed_visibility_timeout_lets_the_old_deadline_go_and_keeps_the_new_one(engine: Engine) -> None:
    q = engine.queue("heartbeat")
    engine.send(q, "long job")
    ((message, receipt),) = engine.receive(q, visibility_timeout=60)
    first_deadline = message.visible_at_ms
    for _ in range(3):  # a consumer's heartbeat: extend, extend, extend
        engine.broker.change_message_visibility(q, receipt, 600)
    slots = engine.broker.wheel._slots
    assert message not in slots.get(first_deadline, [])  # the superseded deadlines hold it no longer
    assert message in slots[message.visible_at_ms]  # the last one does
    engine.clock.advance(599)
    assert engine.counts(q) == (0, 1, 0)
    engine.clock.advance(2)
    assert engine.counts(q) == (1, 0, 0)  # visible again at the last deadline


def test_a_purge_and_a_queue_deletion_let_in_flight_and_delayed_messages_go(engine: Engine) -> None:
    for name, end in (("purged", "purge"), ("deleted", "delete_queue")):
        q = engine.queue(name)
        engine.send(q, "in flight")
        engine.send(q, "delayed", delay_seconds=900)
        ((in_flight, _),) = engine.receive(q, visibility_timeout=43200)
        delayed = next(m for m in q.messages.values() if m is not in_flight)
        getattr(engine.broker, end if end == "delete_queue" else "purge_queue")(q)
        held = [m for slot in engine.broker.wheel._slots.values() for m in slot[1::2]]
        assert in_flight not in held and delayed not in held
