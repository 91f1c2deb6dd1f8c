"""What the engine tells its subscriber (the durable store; later metrics): every change of state that cannot be
derived again from the clock (docs/architecture.md, principle 7).

A visibility timeout or delay running out changes nothing that needs telling: a message's state follows from its
``visible_at_ms`` and the time, so a restored message whose deadline has passed is simply visible. The engine
calls these methods synchronously, on its own thread, right after the change; a subscriber must copy what it
needs before returning, since the objects keep changing. A subscriber must not raise: the engine may call it in
the middle of a change, which an exception would leave half done. It handles its own failures (the durable store
marks itself failed and refuses every request from then on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sqsemu.engine.message import Message
    from sqsemu.engine.queue import Queue
    from sqsemu.engine.redrive import MoveTask


class Journal(Protocol):
    """A subscriber to engine changes."""

    def queue_saved(self, queue: Queue) -> None:
        """A queue was created, or its attributes, tags or purge time changed."""

    def queue_deleted(self, queue: Queue) -> None:
        """A queue and everything in it is gone."""

    def queue_purged(self, queue: Queue) -> None:
        """Every message of the queue (and a FIFO queue's deduplication history) is gone."""

    def message_added(self, queue: Queue, message: Message) -> None:
        """A message was stored: sent, redriven, or dead-lettered into ``queue``."""

    def message_changed(self, queue: Queue, message: Message) -> None:
        """A message was received, or its visibility deadline moved."""

    def message_deleted(self, queue: Queue, message: Message) -> None:
        """A message left ``queue``: deleted, expired, dead-lettered or moved."""

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        """A FIFO queue remembers a deduplication key until ``expires_ms``."""

    def task_saved(self, task: MoveTask[Queue]) -> None:
        """A message move task started, progressed or ended."""
