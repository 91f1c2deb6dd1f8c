"""The timer wheel and the clocks."""

from __future__ import annotations

import asyncio

import pytest

from sqsemu.clock import ManualClock, SystemClock
from sqsemu.engine.timerwheel import TimerWheel


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
