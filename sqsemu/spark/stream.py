"""Structured Streaming from SQS: ``spark.readStream.format("sqs").load()``, at least once.

How a micro-batch travels (receiving, renewing and deleting happen on the driver, in the one long-lived Python
process that hosts this reader; Spark's executors get the messages by value):

1. **Plan** (``latestOffset(start, limit)``): acknowledge what Spark has finished with (step 4) and, at the same
   time, receive up to the limit's messages (``ReadMaxRows`` from admission control, by default
   ``maxMessagesPerTrigger``) with the queue's visibility timeout set to ``visibilityTimeout``: a first
   ReceiveMessage long-polls ``waitTimeSeconds``, and if it comes back full, up to ``receiveConcurrency``
   ReceiveMessage calls run at once until the limit is reached or one answers empty. The messages are kept in
   memory under the next sequence number, and the offset ``{"run": <this reader's id>, "seq": n}`` is returned
   once both the receiving and the acknowledging are done. When nothing arrives, ``start`` itself is returned
   (Spark compares offsets as JSON strings), so no batch runs. On a FIFO queue the acknowledging finishes before
   the receiving starts: a message group stays locked while its messages are in flight, so receiving during the
   deletes would find the groups of the batch just committed still locked.
2. **Partition** (``partitions(start, end)``): the messages of the batches in ``(start, end]`` are put *inside*
   the input partitions (``numPartitions`` of them, see :mod:`sqsemu.spark.partitioning`: a FIFO message group
   stays whole in one partition, in ``SequenceNumber`` order), because ``read()`` runs on executors in a pickled
   copy of this reader that shares no memory with the driver. ``read()`` turns them into rows (Arrow record
   batches, built column by column: much cheaper than Spark's conversion of tuples). A partition's
   content is fixed when it is planned, so a retried task, or a stage Spark recomputes, reads the same rows.
3. **Keep alive**: while received messages are not acknowledged, a daemon thread wakes every third of
   ``visibilityTimeout`` and renews, with ChangeMessageVisibilityBatch (``receiveConcurrency`` calls at once), the
   visibility of the held messages that would otherwise turn visible before its wake-up after next (plus a
   second), so a long batch does not see its messages reappear (and be read twice) half way. Messages whose
   timeout has that long still to run are left alone: most batches are deleted before their first renewal is
   due, and renewing them anyway cost as many calls as receiving them.
4. **Acknowledge**: a batch's messages are deleted (DeleteMessageBatch, ``receiveConcurrency`` calls at once)
   once Spark has committed the batch. Spark calls ``commit(end)`` for batch N only while planning batch N+1,
   never for the last batch of an ``availableNow`` run, and ``stop()`` may never run; but every
   ``latestOffset(start)`` call comes after the batch ending at ``start`` was written to the commit log. So each
   ``latestOffset`` first deletes everything held under a sequence number <= ``start["seq"]``, and
   ``commit(end)`` does the same for <= ``end["seq"]`` (whichever comes first). At the end of an ``availableNow``
   run Spark plans once more, finds nothing, and that last ``latestOffset`` is what deletes the final batch.
   Uncommitted messages are never deleted. A DeleteMessageBatch call that fails as a whole (after botocore's
   retries) fails the planning, and so the query: its messages come back after their visibility timeout.
5. **Failure**: if the query dies, nothing more is deleted or renewed; the messages of the open batch become
   visible after ``visibilityTimeout`` and are received again. A batch that Spark *replays* after a restart
   (planned, not committed) yields no rows, because its messages lived in the dead process's memory (its offset
   names the old run id); they come back by redelivery instead. Hence at-least-once, never at-most-once.

``availableNow``: ``prepareForTriggerAvailableNow`` reads ApproximateNumberOfMessages once; the run receives at
most that many messages in all (in batches of the read limit) and ends at the first planning that receives
nothing, so it stops even while producers keep sending.

Why on the driver and not in the executors' tasks: a Python data source's reader is given only its options (not
the query's checkpoint location) and its tasks have no channel back to the driver, so the receipt handles that
tasks received could not be recorded where the driver finds them and deletes them after the commit; and a task
that receives is not repeatable (a retried task would receive other messages). ReceiveMessage is waiting on the
network, not computing, so a pool of concurrent calls in one process goes as fast as SQS answers.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from sqsemu.spark.client import (
    change_visibility,
    delete_messages,
    get_json_client,
    queue_is_fifo,
    receive_messages,
    resolve_queue_url,
)
from sqsemu.spark.options import SQSOptionError, SQSOptions
from sqsemu.spark.partitioning import split_messages
from sqsemu.spark.schema import messages_to_arrow

__all__ = ["ALL_AVAILABLE_CAP", "SQSMessagesPartition", "SQSStreamReader"]

log = logging.getLogger("sqsemu.spark")

# With ReadAllAvailable (Trigger.Once, or a caller that lifts admission control) a queue has no "end": cap the
# batch so that a busy queue cannot grow one without bound.
ALL_AVAILABLE_CAP = 100_000
ARROW_ROWS = 4096  # rows per Arrow record batch that read() yields
STOP_JOIN_S = 30.0  # seconds stop() waits for the visibility-renewing thread


# System attributes a FIFO stream needs to keep message groups in order (asked for even when attributeNames
# leaves them out).
FIFO_ATTRIBUTES = ("MessageGroupId", "SequenceNumber")


class SQSMessagesPartition(InputPartition):
    """The messages of one Spark task of a micro-batch (boto3's ReceiveMessage dicts, in the order to yield them)
    and the queue URL, carried by value; the task turns them into rows."""

    def __init__(self, index: int, messages: list[dict[str, Any]], queue_url: str) -> None:
        super().__init__(index)
        self.index = index
        self.messages = messages
        self.queue_url = queue_url

    def __repr__(self) -> str:
        return f"SQSMessagesPartition(index={self.index}, messages={len(self.messages)})"


class _DriverState:
    """What the driver-side reader holds between calls; never pickled."""

    def __init__(self, options: SQSOptions, queue_url: str) -> None:
        self.run = uuid.uuid4().hex[:16]
        self.queue_url = queue_url
        self.fifo = queue_is_fifo(queue_url)
        self.concurrency = options.read.receive_concurrency
        self.client = get_json_client(options.connection, queue_url)
        self.acknowledger = ThreadPoolExecutor(1, thread_name_prefix="sqs-acknowledge")
        names = options.read.attribute_names
        if self.fifo and "All" not in names:
            names = (*names, *(name for name in FIFO_ATTRIBUTES if name not in names))
        self.attribute_names = names
        self.lock = threading.Lock()
        # Held by a renewal from choosing its receipt handles until its call is answered, and taken by whatever
        # deletes (acknowledge) or releases messages: a renewal never lands after the delete or the release of a
        # message it chose (a late renewal would hide a released message for a whole visibility timeout again).
        # Taken before ``lock`` when both are.
        self.renewing = threading.Lock()
        self.pending: dict[int, list[dict[str, Any]]] = {}  # seq -> received, not yet acknowledged messages
        # seq -> time.monotonic() by which the batch's messages turn visible unless renewed (a lower bound: taken
        # from before the receiving started, or before the last renewal)
        self.expires: dict[int, float] = {}
        self.budget: int | None = None  # availableNow: messages this run may still receive
        # Standard queues: the next batch's messages, received while Spark runs the current one (held, renewed,
        # never deleted before their own batch commits).
        self.prefetcher = ThreadPoolExecutor(1, thread_name_prefix="sqs-prefetch")
        self.prefetch: Future[list[dict[str, Any]]] | None = None
        self.prefetched: list[dict[str, Any]] = []  # what the prefetch received, for the renewals
        self.prefetch_expires = 0.0  # as ``expires``, for the prefetched messages
        self.stopped = threading.Event()
        self.heartbeat: threading.Thread | None = None


def _seq(offset: dict[str, Any], name: str) -> int:
    try:
        return int(offset["seq"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"sqs data source: the {name} offset {json.dumps(offset)} is not an sqs offset ({{'run', 'seq'}}); was "
            "the checkpoint written by another source?"
        ) from None


class SQSStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The streaming reader; see the module docstring for the offset, commit and deletion protocol.

    Offsets are ``{"run": str, "seq": int}``: ``seq`` counts micro-batches that received something (it goes on
    from the checkpoint after a restart), ``run`` identifies the reader process that holds their messages.
    """

    def __init__(self, options: SQSOptions) -> None:
        if options.read.visibility_timeout < 1:
            raise SQSOptionError(
                "sqs data source: option 'visibilityTimeout' must be at least 1 second for a stream (messages stay "
                "in flight while their micro-batch runs)"
            )
        self.options = options
        self._state: _DriverState | None = None

    # Spark pickles this reader to run read() on executors: only the options travel.
    def __getstate__(self) -> dict[str, Any]:
        return {"options": self.options, "_state": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _driver(self) -> _DriverState:
        if self._state is None:
            self._state = _DriverState(self.options, resolve_queue_url(self.options.connection))
            log.info("sqs stream reader %s on %s", self._state.run, self._state.queue_url)
        return self._state

    # ------------------------------------------------------------------ offsets

    def initialOffset(self) -> dict[str, Any]:
        return {"run": self._driver().run, "seq": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.options.read.max_messages_per_trigger)

    def prepareForTriggerAvailableNow(self) -> None:
        state = self._driver()
        answer = state.client.get_queue_attributes(
            QueueUrl=state.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )
        state.budget = int(answer.get("Attributes", {}).get("ApproximateNumberOfMessages", "0"))
        log.info("sqs stream reader %s: availableNow reads at most %d messages", state.run, state.budget)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        state = self._driver()
        seq = _seq(start, "start")
        # The batch ending at `start` is in Spark's commit log: delete it while receiving the next one (on a FIFO
        # queue, before: its message groups stay locked until their messages are deleted).
        acknowledging = state.acknowledger.submit(self._acknowledge, seq)
        if state.fifo:
            acknowledging.result()
        try:
            return self._plan(state, start, seq, limit)
        finally:
            acknowledging.result()  # raises when a delete call failed: the query fails, the messages come back

    def _plan(self, state: _DriverState, start: dict[str, Any], seq: int, limit: ReadLimit) -> dict[str, Any]:
        """Receive the next batch (see step 1 of the module docstring) and return its end offset, or ``start``."""
        with state.lock:
            planned = [key for key in state.pending if key > seq]
        if planned:  # asked again before the planned batch ran: the same answer
            return {"run": state.run, "seq": max(planned)}

        if isinstance(limit, ReadMaxRows):
            wanted = int(limit.max_rows)
        elif isinstance(limit, ReadAllAvailable):
            wanted = ALL_AVAILABLE_CAP
        else:
            wanted = self.options.read.max_messages_per_trigger

        expires = time.monotonic() + self.options.read.visibility_timeout
        messages, prefetch_expires = self._take_prefetch(state)
        if messages:
            expires = prefetch_expires
        if len(messages) > wanted:  # the read limit shrank since the prefetch: give the rest back at once
            messages, extra = messages[:wanted], messages[wanted:]
            self._release(state, extra)
        if not messages:  # nothing prefetched (or nothing came): receive now, long-polling first
            expires = time.monotonic() + self.options.read.visibility_timeout
            messages = self._receive(state, wanted)
        else:
            log.debug("sqs stream reader %s: batch %d from the prefetch (%d)", state.run, seq + 1, len(messages))
        if not messages:
            return start
        with state.lock:
            state.pending[seq + 1] = messages
            state.expires[seq + 1] = expires
        self._ensure_heartbeat(state)
        if not state.fifo and len(messages) >= wanted:
            # The queue had a full batch: receive the next one while Spark runs this one. (FIFO queues do not:
            # the groups of this batch stay locked until it is deleted, so a prefetch would find little.)
            self._start_prefetch(state, wanted)
        return {"run": state.run, "seq": seq + 1}

    def _receive(self, state: _DriverState, wanted: int) -> list[dict[str, Any]]:
        """Receive up to ``wanted`` messages (within the availableNow budget) and count them against it."""
        if state.budget is not None:
            wanted = min(wanted, state.budget)
        if wanted <= 0:
            return []
        read = self.options.read
        messages = receive_messages(
            state.client,
            state.queue_url,
            wanted,
            read.wait_time_seconds,
            read.visibility_timeout,
            state.attribute_names,
            read.message_attribute_names,
            # Stop receiving well before the first messages of this batch could become visible again.
            deadline=time.monotonic() + read.visibility_timeout / 2,
            concurrency=state.concurrency,
        )
        if state.budget is not None:
            state.budget -= len(messages)
        return messages

    def _start_prefetch(self, state: _DriverState, wanted: int) -> None:
        def prefetch() -> list[dict[str, Any]]:
            expires = time.monotonic() + self.options.read.visibility_timeout
            messages = self._receive(state, wanted)
            with state.lock:
                state.prefetched = messages
                state.prefetch_expires = expires
            return messages

        state.prefetch = state.prefetcher.submit(prefetch)

    def _take_prefetch(self, state: _DriverState) -> tuple[list[dict[str, Any]], float]:
        """The prefetched messages (waiting for the prefetch to finish), or [] when none is under way, and when
        they turn visible unless renewed (``time.monotonic()``). A failed prefetch raises here: the planning
        fails, and whatever it received comes back after the timeout."""
        future, state.prefetch = state.prefetch, None
        if future is None:
            return [], 0.0
        try:
            messages = future.result()
        finally:
            with state.lock:
                state.prefetched = []
                expires = state.prefetch_expires
        return messages, expires

    def reportLatestOffset(self) -> dict[str, Any] | None:
        return None

    # ------------------------------------------------------------------ planning and reading

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if start == end:
            return []
        state = self._driver()
        if end.get("run") != state.run:
            log.warning(
                "sqs stream reader %s: batch %s was planned by reader %s before a restart; it yields no rows and "
                "its messages come back after their visibility timeout",
                state.run,
                end.get("seq"),
                end.get("run"),
            )
            return []
        low, high = _seq(start, "start"), _seq(end, "end")
        with state.lock:
            messages = [m for key in sorted(state.pending) if low < key <= high for m in state.pending[key]]
        parts = split_messages(messages, self.options.read.num_partitions, state.fifo)
        return [SQSMessagesPartition(index, part, state.queue_url) for index, part in enumerate(parts)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """The partition's messages as Arrow record batches of the schema (at most ``ARROW_ROWS`` rows each)."""
        assert isinstance(partition, SQSMessagesPartition)
        for begin in range(0, len(partition.messages), ARROW_ROWS):
            yield messages_to_arrow(partition.messages[begin : begin + ARROW_ROWS], partition.queue_url)

    # ------------------------------------------------------------------ acknowledging

    def commit(self, end: dict[str, Any]) -> None:
        self._acknowledge(upto=_seq(end, "end"))

    def _acknowledge(self, upto: int) -> None:
        """Delete the messages of every held batch numbered <= ``upto`` (Spark has committed them)."""
        state = self._driver()
        with state.renewing, state.lock:  # a renewal under way ends first; later ones no longer see these
            done = sorted(key for key in state.pending if key <= upto)
            messages = [m for key in done for m in state.pending.pop(key)]
            for key in done:
                state.expires.pop(key, None)
        if not messages:
            return
        failures = delete_messages(
            state.client, state.queue_url, [m["ReceiptHandle"] for m in messages], concurrency=state.concurrency
        )
        if failures:
            log.warning(
                "sqs stream reader %s: %d of %d committed messages could not be deleted (%s: %s); they will be "
                "delivered again",
                state.run,
                len(failures),
                len(messages),
                failures[0][1],
                failures[0][2],
            )

    def _ensure_heartbeat(self, state: _DriverState) -> None:
        if state.heartbeat is not None and state.heartbeat.is_alive():
            return
        period = max(0.5, self.options.read.visibility_timeout / 3)
        thread = threading.Thread(
            target=self._renew, args=(state, period), name=f"sqs-visibility-{state.run}", daemon=True
        )
        state.heartbeat = thread
        thread.start()

    def _renew(self, state: _DriverState, period: float) -> None:
        """Every ``period`` seconds, :meth:`_renew_due` until the reader stops."""
        while not state.stopped.wait(period):
            self._renew_due(state, period)

    def _renew_due(self, state: _DriverState, period: float) -> None:
        """Push ``visibilityTimeout`` seconds ahead the visibility of the held messages that would turn visible
        within two periods and a second (before the wake-up after next could renew them); leave the others. Holds
        ``state.renewing`` throughout (see there)."""
        with state.renewing:
            self._renew_held(state, period)

    def _renew_held(self, state: _DriverState, period: float) -> None:
        timeout = self.options.read.visibility_timeout
        now = time.monotonic()
        horizon = now + 2 * period + 1.0
        with state.lock:
            due = [seq for seq in state.pending if state.expires.get(seq, 0.0) <= horizon]
            held = [m for seq in due for m in state.pending[seq]]
            prefetched = state.prefetched if state.prefetch_expires <= horizon else []
            handles = [m["ReceiptHandle"] for m in (*held, *prefetched)]
        if not handles:
            return
        try:
            change_visibility(state.client, state.queue_url, handles, timeout, concurrency=state.concurrency)
        except Exception as exc:  # keep renewing; a failed renewal only risks a duplicate
            log.warning("sqs stream reader %s: renewing visibility failed: %s", state.run, exc)
            return
        with state.lock:
            for seq in due:
                if seq in state.expires:
                    state.expires[seq] = now + timeout
            if prefetched and state.prefetched is prefetched:
                state.prefetch_expires = now + timeout

    def _release(self, state: _DriverState, messages: list[dict[str, Any]]) -> None:
        """Make received messages that no batch holds visible again at once (ChangeMessageVisibilityBatch to 0)."""
        if not messages:
            return
        try:
            with state.renewing:  # after any renewal that chose them: released last, they are visible
                change_visibility(
                    state.client, state.queue_url, [m["ReceiptHandle"] for m in messages], 0, state.concurrency
                )
        except Exception as exc:  # they come back after their visibility timeout anyway
            log.warning("sqs stream reader %s: releasing %d messages failed: %s", state.run, len(messages), exc)

    def stop(self) -> None:
        """Stop renewing visibility and wait for the renewing thread to finish (at most ``STOP_JOIN_S`` seconds: a
        renewal call under way ends within the client's timeouts). Prefetched messages, which no batch holds, are
        made visible again at once; held (planned, uncommitted) messages are left alone: they reappear after their
        visibility timeout."""
        state = self._state
        if state is None:
            return
        state.stopped.set()
        try:
            self._release(state, self._take_prefetch(state)[0])
        except Exception as exc:  # a failed prefetch: whatever it received comes back after the timeout
            log.info("sqs stream reader %s: the prefetch failed: %s", state.run, exc)
        state.prefetcher.shutdown(wait=True)
        state.acknowledger.shutdown(wait=True)  # a delete under way finishes (within the client's timeouts)
        heartbeat = state.heartbeat
        if heartbeat is not None and heartbeat is not threading.current_thread():
            heartbeat.join(STOP_JOIN_S)
        with state.lock:
            held = sum(len(batch) for batch in state.pending.values())
        if held:
            log.info("sqs stream reader %s stopped with %d uncommitted messages in flight", state.run, held)
