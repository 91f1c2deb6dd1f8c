"""The engine's timers: pending callbacks bucketed by deadline millisecond, with a min-heap of those deadlines.

Despite the class name this is not a timing wheel (no ring of slots, nothing advances tick by tick): it is a
priority queue of distinct deadlines. Visibility expiry, delays, retention, move tasks and long-poll timeouts are
all entries here. ``_slots`` maps a deadline (epoch ms) to the callbacks due then, kept flat (callback, argument,
callback, argument, ...: two list slots an entry, no tuple of its own, since every in-flight message has one);
``_heap`` holds each occupied deadline once. ``schedule`` is O(1) when that millisecond already has a slot (a dict
lookup and a list append) and O(log S) for a new one, S being the number of distinct pending milliseconds (not the
number of timers); the next deadline is ``_heap[0]``, so the clock sleeps until then without scanning. There is no
cancel: an entry's callback checks that the deadline it was scheduled for is still its owner's deadline and does
nothing otherwise, so superseded entries are skipped, never searched for.

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
