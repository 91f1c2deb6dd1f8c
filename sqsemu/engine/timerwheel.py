"""The engine's timers: pending callbacks bucketed by deadline millisecond, with a min-heap of those deadlines.

Despite the class name this is not a timing wheel (no ring of slots, nothing advances tick by tick): it is a
priority queue of distinct deadlines. Visibility expiry, delays, retention, move tasks and long-poll timeouts are
all entries here. ``_slots`` maps a deadline (epoch ms) to the callbacks due then, kept flat (callback, argument,
callback, argument, ...: two list slots an entry, no tuple of its own, since every in-flight message has one);
``_heap`` holds each occupied deadline once. ``schedule`` is O(1) when that millisecond already has a slot (a dict
lookup and a list append) and O(log S) for a new one, S being the number of distinct pending milliseconds (not the
number of timers); the next deadline is ``_heap[0]``, so the clock sleeps until then without scanning. An entry's
callback checks that the deadline it was scheduled for is still its owner's deadline and does nothing otherwise, so
superseded entries are skipped, never searched for. ``drop`` lets an entry's argument go before its deadline (a
deleted message is not kept alive for the rest of its visibility timeout, up to 12 hours): it looks for the
argument among the first and last :data:`DROP_SCAN` entries of that deadline's slot only, so its cost is bounded
however many timers share the millisecond; an argument not found there stays until its deadline, as before.

A callback that raises is logged (logger ``sqsemu.engine.timerwheel``) and the others run on: one failing timer
never drops the rest of its slot or stops later ones.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

TimerCallback = Callable[[Any, int], None]  # (argument, deadline in epoch ms)

DROP_SCAN = 64
"""Entries ``drop`` looks through at each end of a deadline's slot."""


def _dropped(arg: Any, due_ms: int) -> None:
    """The callback of a dropped entry: nothing to do."""


def _drop_between(slot: list[Any], arg: Any, start: int, stop: int) -> bool:
    """Drop ``arg``'s entry if its argument sits at an odd index in ``[start, stop)`` of ``slot``."""
    for index in range(start, stop, 2):
        if slot[index] is arg:
            slot[index - 1] = _dropped
            slot[index] = None
            return True
    return False


class TimerWheel:
    """Pending timers keyed by their deadline in epoch milliseconds.

    ``on_earlier`` is called when a timer is scheduled before every pending one, so the clock can re-arm.
    """

    __slots__ = ("_slots", "_heap", "_on_earlier")

    def __init__(self, on_earlier: Callable[[], None] | None = None) -> None:
        self._slots: dict[int, list[Any]] = {}  # deadline -> [callback, argument, callback, argument, ...]
        self._heap: list[int] = []
        self._on_earlier = on_earlier

    def __len__(self) -> int:
        return sum(len(slot) for slot in self._slots.values()) // 2

    def schedule(self, due_ms: int, callback: TimerCallback, arg: Any) -> None:
        """Call ``callback(arg, due_ms)`` once the clock reaches ``due_ms`` (epoch milliseconds)."""
        slot = self._slots.get(due_ms)
        if slot is not None:
            slot.append(callback)
            slot.append(arg)
            return
        self._slots[due_ms] = [callback, arg]
        heap = self._heap
        earlier = not heap or due_ms < heap[0]
        heapq.heappush(heap, due_ms)
        if earlier and self._on_earlier is not None:
            self._on_earlier()

    def drop(self, due_ms: int, arg: Any) -> bool:
        """Let the entry of ``arg`` (the very object) at ``due_ms`` (epoch ms) go: its callback will not run and
        the wheel holds ``arg`` no longer. True when found (see the module docstring: only near the slot's ends);
        the entry still counts in ``len`` until its deadline."""
        slot = self._slots.get(due_ms)
        if slot is None:
            return False
        size = len(slot)
        if size <= 4 * DROP_SCAN:
            return _drop_between(slot, arg, 1, size)
        return _drop_between(slot, arg, 1, 2 * DROP_SCAN) or _drop_between(slot, arg, size - 2 * DROP_SCAN + 1, size)

    def next_due_ms(self) -> int | None:
        """The earliest pending deadline (epoch ms), or None."""
        return self._heap[0] if self._heap else None

    def run_due(self, now_ms: int) -> int:
        """Run every entry due at or before ``now_ms`` (epoch ms), earliest slot first; returns how many ran.

        Entries scheduled by a callback for a deadline ``<= now_ms`` run in the same call. A callback that raises
        an ``Exception`` is logged with its traceback and counts as run; the remaining entries still run.
        """
        heap = self._heap
        slots = self._slots
        ran = 0
        while heap and heap[0] <= now_ms:
            due = heapq.heappop(heap)
            slot = slots.pop(due)
            for index in range(0, len(slot), 2):
                callback: TimerCallback = slot[index]
                arg = slot[index + 1]
                ran += 1
                try:
                    callback(arg, due)
                except Exception:
                    logger.exception("timer callback %r for deadline %d (epoch ms) failed", callback, due)
        return ran

    def clear(self) -> None:
        """Drop every pending timer."""
        self._slots.clear()
        self._heap.clear()
