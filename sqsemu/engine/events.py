"""What the engine tells its subscribers (the durable store, the metrics): every change of state that cannot be
derived again from the clock (docs/architecture.md, principle 7), and why messages come and go.

A visibility timeout or delay running out changes nothing that needs telling: a message's state follows from its
``visible_at_ms`` and the time, so a restored message whose deadline has passed is simply visible. The engine
calls these methods synchronously, on its own thread, right after the change; a subscriber must copy what it
needs before returning, since the objects keep changing. A subscriber must not raise: the engine may call it in
the middle of a change, which an exception would leave half done. It handles its own failures (the durable store
marks itself failed and refuses every request from then on).

The broker holds one ``Journal`` (or None): the only subscriber itself, or a :class:`JournalFanout` when there are
several, so that an engine with one subscriber pays one call per event and an engine with none one None check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from sqsemu.engine.message import Message
    from sqsemu.engine.redrive import MoveQueue, MoveTask

Queue = TypeVar("Queue", bound="MoveQueue")
"""The engine's queue type (``sqsemu.engine.queue.Queue``): a parameter, so this module never imports the queue
module that imports it (docs/architecture.md, principle 12)."""

__all__ = ["AddReason", "DeleteReason", "Journal", "JournalFanout", "JournalSubscriber"]

AddReason = Literal["sent", "dead_lettered", "moved"]
"""Why a message arrived in a queue: ``sent`` by a client (SendMessage, a SendMessageBatch entry),
``dead_lettered`` from its source queue after maxReceiveCount receives, or ``moved`` in by a message move task."""

DeleteReason = Literal["deleted", "expired", "dead_lettered", "moved"]
"""Why a message left a queue: ``deleted`` by a client (DeleteMessage, a DeleteMessageBatch entry), ``expired`` at
the end of the retention period, ``dead_lettered`` to the dead-letter queue, or ``moved`` out by a move task."""


class Journal(Protocol[Queue]):
    """A subscriber to engine changes (``Journal[Queue]`` with the engine's queue type)."""

    def queue_saved(self, queue: Queue) -> None:
        """A queue was created, or its attributes, tags or purge time changed."""

    def queue_deleted(self, queue: Queue) -> None:
        """A queue and everything in it is gone."""

    def queue_purged(self, queue: Queue) -> None:
        """Every message of the queue (and a FIFO queue's deduplication history) is gone."""

    def message_added(self, queue: Queue, message: Message, reason: AddReason) -> None:
        """A message was stored in ``queue``, for ``reason``."""

    def message_changed(self, queue: Queue, message: Message) -> None:
        """A message was received, or its visibility deadline moved."""

    def message_deleted(self, queue: Queue, message: Message, reason: DeleteReason) -> None:
        """A message left ``queue``, for ``reason``."""

    def messages_received(self, queue: Queue, count: int) -> None:
        """A ReceiveMessage call on ``queue`` ended with ``count`` messages (0: an empty receive). Each message
        received was told by ``message_changed`` already; this tells the calls."""

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        """A FIFO queue remembers a deduplication key until ``expires_ms``."""

    def task_saved(self, task: MoveTask[Queue]) -> None:
        """A message move task started, progressed or ended."""


class JournalSubscriber(Generic[Queue]):
    """A ``Journal`` whose every method does nothing: a subscriber that needs a few of the events subclasses it and
    writes only those (the others are written once, here)."""

    def queue_saved(self, queue: Queue) -> None:
        """Nothing to do."""

    def queue_deleted(self, queue: Queue) -> None:
        """Nothing to do."""

    def queue_purged(self, queue: Queue) -> None:
        """Nothing to do."""

    def message_added(self, queue: Queue, message: Message, reason: AddReason) -> None:
        """Nothing to do."""

    def message_changed(self, queue: Queue, message: Message) -> None:
        """Nothing to do."""

    def message_deleted(self, queue: Queue, message: Message, reason: DeleteReason) -> None:
        """Nothing to do."""

    def messages_received(self, queue: Queue, count: int) -> None:
        """Nothing to do."""

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        """Nothing to do."""

    def task_saved(self, task: MoveTask[Queue]) -> None:
        """Nothing to do."""


class JournalFanout(Generic[Queue]):
    """A ``Journal`` passing every event on to several subscribers, in the order they subscribed.

    The per-message events (``message_added``, ``message_changed``, ``message_deleted``, ``messages_received``)
    call the subscribers' bound methods, taken once here: each event pays one call per subscriber, no method
    lookup."""

    __slots__ = ("subscribers", "_added", "_changed", "_deleted", "_received")

    def __init__(self, subscribers: Sequence[Journal[Queue]]) -> None:
        self.subscribers = tuple(subscribers)
        self._added = tuple(subscriber.message_added for subscriber in self.subscribers)
        self._changed = tuple(subscriber.message_changed for subscriber in self.subscribers)
        self._deleted = tuple(subscriber.message_deleted for subscriber in self.subscribers)
        self._received = tuple(subscriber.messages_received for subscriber in self.subscribers)

    def queue_saved(self, queue: Queue) -> None:
        for subscriber in self.subscribers:
            subscriber.queue_saved(queue)

    def queue_deleted(self, queue: Queue) -> None:
        for subscriber in self.subscribers:
            subscriber.queue_deleted(queue)

    def queue_purged(self, queue: Queue) -> None:
        for subscriber in self.subscribers:
            subscriber.queue_purged(queue)

    def message_added(self, queue: Queue, message: Message, reason: AddReason) -> None:
        for added in self._added:
            added(queue, message, reason)

    def message_changed(self, queue: Queue, message: Message) -> None:
        for changed in self._changed:
            changed(queue, message)

    def message_deleted(self, queue: Queue, message: Message, reason: DeleteReason) -> None:
        for deleted in self._deleted:
            deleted(queue, message, reason)

    def messages_received(self, queue: Queue, count: int) -> None:
        for received in self._received:
            received(queue, count)

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        for subscriber in self.subscribers:
            subscriber.deduplication_remembered(queue, key, expires_ms, message_id, sequence_number)

    def task_saved(self, task: MoveTask[Queue]) -> None:
        for subscriber in self.subscribers:
            subscriber.task_saved(task)
