"""Injected time: the ``Clock`` protocol, ``SystemClock`` for servers and ``ManualClock`` for tests.

The engine reads time only through a clock, in integer **milliseconds since the Unix epoch** (SQS timestamps are
epoch milliseconds too). A clock drives one ``TimerDriver`` (the broker's scheduler): ``SystemClock`` arms a single
event-loop timer for the driver's next due instant; ``ManualClock`` moves only when ``advance()`` is called and then
runs every due timer, in deadline order, each at its own instant, so ``advance(30)`` fires exactly what 30 real
seconds would (docs/architecture.md, principle 4).
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from mypy_extensions import mypyc_attr


class TimerDriver(Protocol):
    """What a clock drives: something that knows its next deadline and can run what is due."""

    def next_due_ms(self) -> int | None:
        """The earliest pending deadline in epoch milliseconds, or None when nothing is scheduled."""

    def run_due(self, now_ms: int) -> None:
        """Run every timer whose deadline is ``<= now_ms``."""


class Clock(Protocol):
    """The time source of an engine."""

    def now_ms(self) -> int:
        """Current time, epoch milliseconds."""

    def attach(self, driver: TimerDriver) -> None:
        """Drive ``driver``: run its due timers as time passes."""

    def reschedule(self) -> None:
        """Tell the clock that the driver's next deadline may have moved earlier."""

    def detach(self) -> None:
        """Stop driving the attached driver (cancels any armed event-loop timer)."""


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled (sqsemu.compiled), still open to a Python subclass
class SystemClock:
    """Wall-clock time that never jumps backwards, driving timers from the running asyncio loop.

    Time is the wall clock at construction plus the monotonic time elapsed since, so a wall-clock step does not
    fire or stall timers. One ``loop.call_at`` handle is armed for the next due deadline; nothing ticks while idle.
    """

    def __init__(self) -> None:
        self._wall0_ms = time.time_ns() // 1_000_000
        self._mono0_ns = time.monotonic_ns()
        self._driver: TimerDriver | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._armed_ms: int | None = None

    def now_ms(self) -> int:
        """Current time, epoch milliseconds."""
        return self._wall0_ms + (time.monotonic_ns() - self._mono0_ns) // 1_000_000

    def attach(self, driver: TimerDriver) -> None:
        """Drive ``driver`` from the running event loop."""
        self._driver = driver
        self.reschedule()

    def detach(self) -> None:
        """Stop driving; cancels the armed timer."""
        if self._handle is not None:
            self._handle.cancel()
        self._handle = None
        self._armed_ms = None
        self._driver = None

    def reschedule(self) -> None:
        """Arm the loop timer for the driver's next deadline if it is earlier than the one armed."""
        driver = self._driver
        if driver is None:
            return
        due = driver.next_due_ms()
        if due is None or (self._armed_ms is not None and self._armed_ms <= due):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._armed_ms = due
        delay = max(0.0, (due - self.now_ms()) / 1000.0)
        self._handle = loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        """Run the driver's due timers, then arm for its next deadline even if running them raised (the error
        still reaches the event loop's exception handler)."""
        self._handle = None
        self._armed_ms = None
        driver = self._driver
        if driver is None:
            return
        try:
            driver.run_due(self.now_ms())
        finally:
            self.reschedule()


MAX_ADVANCE_S = 10 * 365 * 86_400
"""Largest single ``ManualClock.advance`` (seconds): 10 years of 365 days. Tests move time by seconds to days; a
larger step is a mistake (or a fuzzer) rather than a test."""
MAX_TIME_MS = 253_402_300_799_999
"""The latest time a ManualClock reaches (epoch ms): 9999-12-31T23:59:59.999Z, the end of four-digit years. SQS
timestamps (``SentTimestamp``, ``CreatedTimestamp``, move-task times) stay ISO-8601-representable, fit a Python
``datetime``, a SQLite / Java 64-bit integer and a JavaScript number (2**53) exactly."""
MAX_TIME_ISO = "9999-12-31T23:59:59.999Z"


def advance_ms(seconds: int | float) -> int:
    """``seconds`` (an int or float) as a whole number of milliseconds to advance by, rounded.

    Raises ``ValueError`` for a negative, NaN or infinite amount or one over ``MAX_ADVANCE_S``; compares before
    converting, so huge integers and ``1e308`` never overflow.
    """
    if not seconds >= 0:  # also NaN
        raise ValueError('"seconds" must be a finite number >= 0')
    if not seconds <= MAX_ADVANCE_S:  # also infinity and integers too large for a float
        raise ValueError(f'"seconds" must be at most {MAX_ADVANCE_S} (10 years) per advance')
    return round(seconds * 1000)


@mypyc_attr(allow_interpreted_subclasses=True)  # tests subclass it
class ManualClock:
    """A clock that moves only when told to: for unit tests and ``sqsemu --clock manual``.

    ``advance(seconds)`` moves time forward and fires every timer that falls due, in deadline order, with the clock
    reading each timer's own deadline while it runs (so timestamps taken by what fires are exact).
    """

    def __init__(self, start_ms: int | None = None) -> None:
        self._now = start_ms if start_ms is not None else time.time_ns() // 1_000_000
        self._driver: TimerDriver | None = None

    def now_ms(self) -> int:
        """Current (manual) time, epoch milliseconds."""
        return self._now

    def attach(self, driver: TimerDriver) -> None:
        """Drive ``driver`` on ``advance()``."""
        self._driver = driver

    def detach(self) -> None:
        """Stop driving the attached driver."""
        self._driver = None

    def reschedule(self) -> None:
        """Nothing to arm: timers run only from ``advance()``."""

    def advance(self, seconds: int | float) -> int:
        """Move time forward by ``seconds`` (>= 0, at most ``MAX_ADVANCE_S``) and fire everything due; returns the new
        time in epoch ms.

        Raises ``ValueError`` (with a message fit for a client) for a negative or non-finite amount, one over
        ``MAX_ADVANCE_S``, or one that would move the clock past ``MAX_TIME_MS``; the clock does not move then.
        """
        target = self._now + advance_ms(seconds)
        if target > MAX_TIME_MS:
            raise ValueError(
                f"advancing by {seconds} seconds would move the clock past {MAX_TIME_ISO} ({MAX_TIME_MS} epoch ms), "
                "the latest time sqsemu keeps"
            )
        driver = self._driver
        while driver is not None:
            due = driver.next_due_ms()
            if due is None or due > target:
                break
            self._now = max(self._now, due)
            driver.run_due(self._now)
        self._now = target
        return target
