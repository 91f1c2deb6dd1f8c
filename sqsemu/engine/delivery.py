"""The public steps of a standard queue's receive, the interface the queue offers to whatever decides delivery
for it (realism mode, ``engine/realism.py``): take the next candidate, deliver it or dead-letter it, give it back,
make it visible again. The queue owns this interface (``engine/queue.py`` implements it); a delivery policy uses
nothing else of the queue (docs/architecture.md, principle 13).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sqsemu.engine.message import Message

__all__ = ["DeliverySteps", "Received"]

Received = tuple[Message, str]
"""One delivered message and its new receipt handle."""


class DeliverySteps(Protocol):
    """The steps of a receive on one queue. Times are epoch ms, timeouts seconds."""

    counts: list[int]
    """Messages in each ``MessageState`` (indexed by the state)."""
    in_flight_limit: int
    """The queue's in-flight quota (SQS Developer Guide, "Inflight messages")."""

    def stored(self) -> list[Message]:
        """Every message in the queue (visible, in flight, delayed), in arrival order (a new list)."""

    def next_candidate(self) -> Message | None:
        """Take the next candidate off the queue's receive order (send order; on a fair queue quiet tenants
        first), or None when none is left. It may no longer be visible: the caller checks ``message.state``."""

    def dead_letter_if_due(self, message: Message, now_ms: int, moving: list[Message]) -> bool:
        """Whether this receive would exceed ``message``'s maxReceiveCount: True sets it aside in ``moving`` (out of
        the receive order, moved to the dead-letter queue when the receive's call succeeds)."""

    def give_back(self, received: Sequence[Received], now_ms: int, moving: list[Message]) -> None:
        """Undo a receive that failed: ``received`` visible again with the receive counts they had, ``moving`` back
        in the receive order unmoved (see ``Queue.give_back``)."""

    def deliver(self, message: Message, now_ms: int, visibility_timeout: int, request_ms: int) -> str:
        """Put a visible ``message`` in flight for ``visibility_timeout`` seconds; returns its new receipt handle."""

    def requeue(self, message: Message) -> None:
        """Give a visible message taken by ``next_candidate`` and not delivered back to the receive order."""

    def make_visible_now(self, message: Message, now_ms: int) -> None:
        """Make ``message`` visible at ``now_ms`` (whatever its state) and tell the journal."""
