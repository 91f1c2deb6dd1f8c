"""Per-queue counters from the engine's events: a ``Journal`` subscriber (``sqsemu.engine.events``).

They mirror the CloudWatch metrics AWS publishes for SQS that count things happening (NumberOfMessagesSent,
NumberOfMessagesReceived, NumberOfMessagesDeleted, NumberOfEmptyReceives, SentMessageSize), plus two CloudWatch
lacks: messages dead-lettered (counted on the source queue) and messages expired by retention. Gauges (messages
visible, in flight, delayed, age of the oldest) are not kept here: the scrape reads them from the queues.

What counts:

- sent: messages a client stored (SendMessage, each stored SendMessageBatch entry). A FIFO duplicate inside the
  deduplication interval is not stored and not counted; dead-lettered arrivals and move-task copies are not sends.
- received: messages returned by ReceiveMessage calls; empty receives: calls that returned none.
- deleted: messages a client deleted, each once (AWS's NumberOfMessagesDeleted also counts a second deletion of a
  message with a valid receipt handle; here a receipt of a message already gone deletes nothing and counts
  nothing). Purged messages are not counted.
- sent sizes: the size of each message sent (body plus message attributes, bytes), as a histogram.

Counters live as long as their queue: deleting a queue drops them, and a queue created again under the same name
starts from zero (Prometheus treats that as a counter reset). They start from zero when the server starts, durable
mode included. Every event arrives on the event loop's thread; the scrape reads on it too, so no locks.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from sqsemu.engine.events import AddReason, DeleteReason, JournalSubscriber
from sqsemu.observability.histogram import Histogram

if TYPE_CHECKING:
    from sqsemu.engine.message import Message
    from sqsemu.engine.queue import Queue

__all__ = ["MESSAGE_SIZE_BUCKETS_BYTES", "QueueCounts", "QueueCounters"]

MESSAGE_SIZE_BUCKETS_BYTES = (64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0)
"""Upper bounds (bytes) of the sent message size buckets: up to SQS's 1 MiB maximum message size."""


class QueueCounts:
    """The counters of one queue."""

    __slots__ = ("sent", "received", "deleted", "empty_receives", "dead_lettered", "expired", "sizes")

    def __init__(self) -> None:
        self.sent = 0
        self.received = 0
        self.deleted = 0
        self.empty_receives = 0
        self.dead_lettered = 0
        self.expired = 0
        self.sizes = Histogram(MESSAGE_SIZE_BUCKETS_BYTES)


class QueueCounters(JournalSubscriber["Queue"]):
    """The counters of every live queue, kept up to date from the engine's events (subscribe with
    ``Broker.subscribe``). Purged messages are not counted as deleted (no receipt handle deleted them); receives
    are counted per call, by ``messages_received``."""

    def __init__(self) -> None:
        self._by_queue: dict[Queue, QueueCounts] = {}

    def get(self, queue: Queue) -> QueueCounts | None:
        """The counters of ``queue``, or None while nothing was counted for it."""
        return self._by_queue.get(queue)

    def _counts(self, queue: Queue) -> QueueCounts:
        counts = self._by_queue.get(queue)
        if counts is None:
            counts = self._by_queue[queue] = QueueCounts()
        return counts

    # ----------------------------------------------------------------- Journal

    def message_added(self, queue: Queue, message: Message, reason: AddReason) -> None:
        """A client's message counts as sent, with its size (once per message sent: kept to a few operations)."""
        if reason == "sent":
            counts = self._by_queue.get(queue)
            if counts is None:
                counts = self._by_queue[queue] = QueueCounts()
            counts.sent += 1
            sizes = counts.sizes
            size = message.size
            sizes.counts[bisect_left(sizes.bounds, size)] += 1  # Histogram.observe, inlined
            sizes.sum += size

    def message_deleted(self, queue: Queue, message: Message, reason: DeleteReason) -> None:
        """Deleted by a client, expired, or dead-lettered (``moved`` by a task counts nothing)."""
        if reason == "deleted":
            self._counts(queue).deleted += 1
        elif reason == "dead_lettered":
            self._counts(queue).dead_lettered += 1
        elif reason == "expired":
            self._counts(queue).expired += 1

    def messages_received(self, queue: Queue, count: int) -> None:
        """A ReceiveMessage call returned ``count`` messages (0: an empty receive)."""
        counts = self._counts(queue)
        if count:
            counts.received += count
        else:
            counts.empty_receives += 1

    def queue_deleted(self, queue: Queue) -> None:
        """The queue's counters go with it."""
        self._by_queue.pop(queue, None)
