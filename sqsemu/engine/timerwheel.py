"""The engine's timers: a hashed timing wheel with one slot per millisecond.

Visibility expiry, delays, retention and long-poll timeouts are all entries here. ``schedule`` is O(1) when the
millisecond slot already exists (a dict lookup and a list append) and O(log S) for a new slot, S being the number of
distinct pending milliseconds (not the number of timers): occupied slots sit in a min-heap, so the scheduler knows
the next due instant without scanning and sleeps until then (ARCHITECTURE principles 3 and 5). There is no cancel:
an entry's callback checks that the deadline it was scheduled for is still the owner's deadline and does nothing
otherwise, so superseded entries are skipped, never searched for.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

TimerCallback = Callable[[Any, int], None]  # (argument, deadline in epoch ms)


class TimerWheel:
    """Pending timers keyed by their deadline in epoch milliseconds.

    ``on_earlier`` is called when a timer is scheduled before every pending one, so the clock can re-arm.
    """

    __slots__ = ("_slots", "_heap", "_on_earlier")

    def __init__(self, on_earlier: Callable[[], None] | None = None) -> None:
        self._slots: dict[int, list[tuple[TimerCallback, Any]]] = {}
        self._heap: list[int] = []
        self._on_earlier = on_earlier

    def __len__(self) -> int:
        return sum(len(slot) for slot in self._slots.values())

    def schedule(self, due_ms: int, callback: TimerCallback, arg: Any) -> None:
        """Call ``callback(arg, due_ms)`` once the clock reaches ``due_ms`` (epoch milliseconds)."""
        slot = self._slots.get(due_ms)
        if slot is not None:
            slot.append((callback, arg))
            return
        self._slots[due_ms] = [(callback, arg)]
        heap = self._heap
        earlier = not heap or due_ms < heap[0]
        heapq.heappush(heap, due_ms)
        if earlier and self._on_earlier is not None:
            self._on_earlier()

    def next_due_ms(self) -> int | None:
        """The earliest pending deadline (epoch ms), or None."""
        return self._heap[0] if self._heap else None

    def run_due(self, now_ms: int) -> int:
        """Run every entry due at or before ``now_ms``, earliest slot first; returns how many ran.

        Entries scheduled by a callback for a deadline ``<= now_ms`` run in the same call.
        """
        heap = self._heap
        slots = self._slots
        ran = 0
        while heap and heap[0] <= now_ms:
            due = heapq.heappop(heap)
            for callback, arg in slots.pop(due):
                callback(arg, due)
                ran += 1
        return ran

    def clear(self) -> None:
        """Drop every pending timer."""
        self._slots.clear()
        self._heap.clear()
