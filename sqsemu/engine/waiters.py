"""Long-poll waiters: a per-queue first-in-first-out line of ReceiveMessage calls waiting for messages.

A waiter is served at most once. One that goes away (client disconnect, wait over, queue deleted) is removed in
O(1) and leaves nothing behind; messages are only ever handed to a waiter that is still waiting (its future pending
and its client still connected), so none is lost to a dead waiter (SQS Developer Guide, "Amazon SQS short and long
polling").
"""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqsemu.engine.message import Message

_ids = itertools.count()


class Waiter:
    """One waiting ReceiveMessage: how many messages it wants, their visibility timeout (seconds), when its
    request arrived (epoch ms; the 12-hour visibility maximum counts from then) and, optionally, a future that
    completes when its client disconnects (``disconnected``)."""

    __slots__ = ("id", "future", "max_messages", "visibility_timeout", "request_ms", "disconnected")

    def __init__(
        self,
        future: asyncio.Future[list[tuple[Message, str]]],
        max_messages: int,
        visibility_timeout: int,
        request_ms: int,
        disconnected: asyncio.Future[None] | None = None,
    ) -> None:
        self.id = next(_ids)
        self.future = future
        self.max_messages = max_messages
        self.visibility_timeout = visibility_timeout
        self.request_ms = request_ms
        self.disconnected = disconnected

    @property
    def waiting(self) -> bool:
        """True while the waiter can still be served: not answered, cancelled or timed out, client connected.

        A client that disconnects completes ``disconnected`` before its ReceiveMessage call resumes and leaves the
        line, so this also turns False in that short gap: nothing is handed to it meanwhile.
        """
        return not self.future.done() and (self.disconnected is None or not self.disconnected.done())


class WaiterLine:
    """Waiters of one queue in arrival order (a dict keeps insertion order and removes in O(1))."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: dict[int, Waiter] = {}

    def __len__(self) -> int:
        """Entries in the line, including any that went away and were not dropped yet (see ``waiting_count``)."""
        return len(self._waiters)

    def waiting_count(self) -> int:
        """How many waiters in the line are still waiting (``Waiter.waiting``); O(n) in the line's length."""
        return sum(1 for waiter in self._waiters.values() if waiter.waiting)

    def __bool__(self) -> bool:
        return bool(self._waiters)

    def add(self, waiter: Waiter) -> None:
        """Put ``waiter`` at the end of the line."""
        self._waiters[waiter.id] = waiter

    def remove(self, waiter: Waiter) -> None:
        """Take ``waiter`` out of the line if it is still in it."""
        self._waiters.pop(waiter.id, None)

    def first(self) -> Waiter | None:
        """The longest-waiting waiter that can still be served (``Waiter.waiting``); ones that went away, met on
        the way, are dropped."""
        waiters = self._waiters
        while waiters:
            waiter = next(iter(waiters.values()))
            if waiter.waiting:
                return waiter
            del waiters[waiter.id]
        return None

    def release_all(self) -> None:
        """Answer every waiter with no messages (used when the queue is deleted or purged of waiters)."""
        for waiter in self._waiters.values():
            if not waiter.future.done():
                waiter.future.set_result([])
        self._waiters.clear()
