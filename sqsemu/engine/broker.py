"""The engine's async facade: namespaces of queues, long-poll waiters and the one scheduler.

The broker owns the timer wheel and is the clock's ``TimerDriver``: the clock calls ``run_due`` when the next
deadline comes (``SystemClock``: one event-loop timer; ``ManualClock``: on ``advance``). Everything except a
waiting ReceiveMessage is synchronous; the protocol layer calls these methods with decoded, typed values and gets
engine objects or ``SQSError`` back. No HTTP, XML or JSON here.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

from sqsemu.clock import Clock
from sqsemu.engine import attributes as queue_attributes
from sqsemu.engine.errors import (
    InvalidParameterValue,
    MissingParameter,
    QueueDoesNotExist,
    SQSError,
    invalid_value,
)
from sqsemu.engine.limits import DEFAULT_LIMITS, Limits
from sqsemu.engine.message import Message, ReceiptEntry, SendEntry
from sqsemu.engine.queue import Namespace, Queue, Received
from sqsemu.engine.timerwheel import TimerWheel
from sqsemu.engine.waiters import Waiter

__all__ = ["Broker", "Namespace", "Queue", "Received"]

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class Broker:
    """All queues of all accounts and regions, and the scheduler that drives their timers.

    Call ``start()`` from inside the running event loop before serving and ``close()`` when done.
    """

    def __init__(self, clock: Clock, limits: Limits = DEFAULT_LIMITS) -> None:
        self.clock = clock
        self.limits = limits
        self.wheel = TimerWheel(on_earlier=clock.reschedule)
        self.namespaces: dict[Namespace, dict[str, Queue]] = {}
        self._dirty: set[Queue] = set()

    # ----------------------------------------------------------------- scheduler (TimerDriver)

    def start(self) -> None:
        """Attach to the clock so timers fire."""
        self.clock.attach(self)

    def close(self) -> None:
        """Detach from the clock and answer every waiting long poll with no messages."""
        self.clock.detach()
        for queues in self.namespaces.values():
            for queue in queues.values():
                queue.waiters.release_all()

    def next_due_ms(self) -> int | None:
        """The next timer deadline, epoch ms (for the clock)."""
        return self.wheel.next_due_ms()

    def run_due(self, now_ms: int) -> None:
        """Fire due timers, then serve long-poll waiters of queues where messages became visible."""
        self.wheel.run_due(now_ms)
        if self._dirty:
            dirty = self._dirty
            self._dirty = set()
            for queue in dirty:
                if not queue.deleted:
                    queue.dispatch(now_ms)

    def _mark_available(self, queue: Queue) -> None:
        self._dirty.add(queue)

    # ----------------------------------------------------------------- queues

    def create_queue(
        self, ns: Namespace, name: str | None, attributes: Mapping[str, str], tags: Mapping[str, str]
    ) -> Queue:
        """CreateQueue: a new queue, or the existing one when every supplied attribute equals its current value.

        Raises ``MissingParameter``, ``InvalidParameterValue`` (name rules), ``InvalidAttributeName``,
        ``InvalidAttributeValue`` and ``QueueNameExists`` (SQS-REFERENCE 2.1).
        """
        if not name:
            raise MissingParameter.named("QueueName")
        fifo_requested = str(attributes.get("FifoQueue", "")).strip().lower() == "true"
        base = name[:-5] if name.endswith(".fifo") else name
        if not _QUEUE_NAME.match(base) or len(name) > self.limits.queue_name_max_chars:
            raise invalid_value(
                name,
                "QueueName",
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            )
        if name.endswith(".fifo") and not fifo_requested:
            raise invalid_value(name, "QueueName", "The name of a FIFO queue can only include alphanumeric "
                                "characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in "
                                "length. Set the FifoQueue attribute to true to create a FIFO queue.")
        if fifo_requested and not name.endswith(".fifo"):
            raise invalid_value(name, "QueueName", "The name of a FIFO queue can only include alphanumeric "
                                "characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in "
                                "length.")
        if fifo_requested:
            raise InvalidParameterValue("FIFO queues are not supported by this version of sqsemu yet.")
        supplied = queue_attributes.normalize(attributes, fifo=False, creating=True, limits=self.limits)
        queues = self.namespaces.setdefault(ns, {})
        existing = queues.get(name)
        if existing is not None:
            existing.check_same(supplied)
            return existing
        initial = queue_attributes.defaults(self.limits, fifo=False)
        initial.update(supplied)
        queue = Queue(
            name, ns, initial, tags, self.clock.now_ms(), self.limits, self.wheel.schedule, self._mark_available
        )
        queues[name] = queue
        return queue

    def get_queue(self, ns: Namespace, name: str) -> Queue:
        """The queue ``name`` in ``ns``; raises ``QueueDoesNotExist``."""
        queue = self.namespaces.get(ns, {}).get(name)
        if queue is None:
            raise QueueDoesNotExist()
        return queue

    def list_queues(self, ns: Namespace, prefix: str | None) -> list[Queue]:
        """Queues of ``ns`` whose name starts with ``prefix`` (case-sensitive), sorted by name."""
        queues = self.namespaces.get(ns, {})
        names = sorted(n for n in queues if not prefix or n.startswith(prefix))
        return [queues[n] for n in names]

    def delete_queue(self, queue: Queue) -> None:
        """DeleteQueue: the queue and its messages go at once; waiting long polls return empty."""
        queues = self.namespaces.get(queue.namespace, {})
        if queues.get(queue.name) is queue:
            del queues[queue.name]
        queue.drop()

    def purge_queue(self, queue: Queue) -> None:
        """PurgeQueue: delete all messages, including in-flight and delayed ones."""
        queue.purge()

    def get_queue_attributes(self, queue: Queue, names: Sequence[str]) -> dict[str, str]:
        """GetQueueAttributes; ``names`` empty gives ``{}``. Raises ``InvalidAttributeName``."""
        names = list(names)
        queue_attributes.check_names(names)
        return queue.get_attributes(names)

    def set_queue_attributes(self, queue: Queue, attributes: Mapping[str, str]) -> None:
        """SetQueueAttributes. Raises ``InvalidAttributeName`` and ``InvalidAttributeValue``."""
        values = queue_attributes.normalize(attributes, fifo=queue.fifo, creating=False, limits=self.limits)
        queue.set_attributes(values, self.clock.now_ms())

    # ----------------------------------------------------------------- messages

    def send_message(self, queue: Queue, entry: SendEntry, sender_id: str) -> Message:
        """SendMessage; returns the stored message (SQS-REFERENCE 2.7)."""
        message = queue.send(entry, sender_id, self.clock.now_ms())
        if queue.waiters:
            queue.dispatch(self.clock.now_ms())
        return message

    def send_message_batch(
        self, queue: Queue, entries: Sequence[SendEntry], sender_id: str
    ) -> list[Message | SQSError]:
        """SendMessageBatch; one outcome per entry, in order (SQS-REFERENCE 2.8)."""
        results = queue.send_batch(entries, sender_id, self.clock.now_ms())
        if queue.waiters:
            queue.dispatch(self.clock.now_ms())
        return results

    async def receive_message(
        self,
        queue: Queue,
        *,
        max_number_of_messages: int | None = None,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        receive_request_attempt_id: str | None = None,
        disconnected: asyncio.Future[None] | None = None,
    ) -> list[Received]:
        """ReceiveMessage: visible messages now, or (long poll) the first to become visible within the wait.

        ``wait_time_seconds`` None uses the queue's ReceiveMessageWaitTimeSeconds. Waiters are served in arrival
        order. If ``disconnected`` completes first, the waiter leaves and takes no message. Raises
        ``InvalidParameterValue`` for out-of-range numbers (SQS-REFERENCE 2.9, 4.4).
        """
        max_number, visibility, wait = queue.receive_parameters(
            max_number_of_messages, visibility_timeout, wait_time_seconds
        )
        now = self.clock.now_ms()
        got = queue.receive(now, max_number, visibility, now)
        if got or wait == 0 or queue.deleted:
            return got
        future: asyncio.Future[list[Received]] = asyncio.get_running_loop().create_future()
        waiter = Waiter(future, max_number, visibility, now)
        queue.waiters.add(waiter)
        self.wheel.schedule(now + wait * 1000, self._waiter_due, (queue, waiter))
        try:
            if disconnected is None:
                return await future
            await asyncio.wait((future, disconnected), return_when=asyncio.FIRST_COMPLETED)
            return future.result() if future.done() else []
        finally:
            queue.waiters.remove(waiter)
            if not future.done():
                future.cancel()

    @staticmethod
    def _waiter_due(arg: tuple[Queue, Waiter], _due: int) -> None:
        queue, waiter = arg
        queue.waiters.remove(waiter)
        if not waiter.future.done():
            waiter.future.set_result([])

    def delete_message(self, queue: Queue, receipt_handle: str | None) -> None:
        """DeleteMessage (SQS-REFERENCE 2.10)."""
        queue.delete(receipt_handle)

    def delete_message_batch(self, queue: Queue, entries: Sequence[ReceiptEntry]) -> list[SQSError | None]:
        """DeleteMessageBatch; per entry None or its error (SQS-REFERENCE 2.11)."""
        return queue.delete_batch(entries)

    def change_message_visibility(
        self, queue: Queue, receipt_handle: str | None, visibility_timeout: int | None
    ) -> None:
        """ChangeMessageVisibility (SQS-REFERENCE 2.12, 4.1)."""
        now = self.clock.now_ms()
        queue.change_visibility(receipt_handle, visibility_timeout, now)
        if queue.waiters:
            queue.dispatch(now)

    def change_message_visibility_batch(
        self, queue: Queue, entries: Sequence[ReceiptEntry]
    ) -> list[SQSError | None]:
        """ChangeMessageVisibilityBatch; per entry None or its error (SQS-REFERENCE 2.13)."""
        now = self.clock.now_ms()
        results = queue.change_visibility_batch(entries, now)
        if queue.waiters:
            queue.dispatch(now)
        return results
