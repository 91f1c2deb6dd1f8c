"""Structured Streaming from SQS: ``spark.readStream.format("sqs").load()``, at least once.

How a micro-batch travels (all of it on the driver, in the one long-lived Python process that hosts this reader):

1. **Plan** (``latestOffset(start, limit)``): first acknowledge what Spark has finished with (step 4), then
   receive up to the limit's messages (``ReadMaxRows`` from admission control, by default
   ``maxMessagesPerTrigger``) with the queue's visibility timeout set to ``visibilityTimeout``. They are kept in
   memory under the next sequence number, and the offset ``{"run": <this reader's id>, "seq": n}`` is returned.
   When nothing arrives, ``start`` itself is returned (Spark compares offsets as JSON strings), so no batch runs.
2. **Partition** (``partitions(start, end)``): the rows of the batches in ``(start, end]`` are put *inside* the
   input partitions (``numPartitions`` of them), because ``read()`` runs on executors in a pickled copy of this
   reader that shares no memory with the driver. ``read()`` only yields the rows it is given.
3. **Keep alive**: while received messages are not acknowledged, a daemon thread renews their visibility with
   ChangeMessageVisibilityBatch every third of ``visibilityTimeout``, so a long batch does not see its messages
   reappear (and be read twice) half way.
4. **Acknowledge**: a batch's messages are deleted (DeleteMessageBatch) once Spark has committed the batch. Spark
   calls ``commit(end)`` for batch N only while planning batch N+1, never for the last batch of an
   ``availableNow`` run, and ``stop()`` may never run; but every ``latestOffset(start)`` call comes after the
   batch ending at ``start`` was written to the commit log. So each ``latestOffset`` first deletes everything
   held under a sequence number <= ``start["seq"]``, and ``commit(end)`` does the same for <= ``end["seq"]``
   (whichever comes first). At the end of an ``availableNow`` run Spark plans once more, finds nothing, and
   that last ``latestOffset`` is what deletes the final batch. Uncommitted messages are never deleted.
5. **Failure**: if the query dies, nothing more is deleted or renewed; the messages of the open batch become
   visible after ``visibilityTimeout`` and are received again. A batch that Spark *replays* after a restart
   (planned, not committed) yields no rows, because its messages lived in the dead process's memory (its offset
   names the old run id); they come back by redelivery instead. Hence at-least-once, never at-most-once.

``availableNow``: ``prepareForTriggerAvailableNow`` reads ApproximateNumberOfMessages once; the run receives at
most that many messages in all (in batches of the read limit) and ends at the first planning that receives
nothing, so it stops even while producers keep sending.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from sqsemu.spark.client import change_visibility, delete_messages, get_client, receive_messages, resolve_queue_url
from sqsemu.spark.options import SQSOptionError, SQSOptions
from sqsemu.spark.schema import message_to_row

__all__ = ["ALL_AVAILABLE_CAP", "SQSRowsPartition", "SQSStreamReader"]

log = logging.getLogger("sqsemu.spark")

# With ReadAllAvailable (Trigger.Once, or a caller that lifts admission control) a queue has no "end": cap the
# batch so that a busy queue cannot grow one without bound.
ALL_AVAILABLE_CAP = 100_000
STOP_JOIN_S = 30.0  # seconds stop() waits for the visibility-renewing thread


class SQSRowsPartition(InputPartition):
    """The rows of one Spark task of a micro-batch (tuples in the data source's schema order), carried by value."""

    def __init__(self, index: int, rows: list[tuple[Any, ...]]) -> None:
        super().__init__(index)
        self.index = index
        self.rows = rows

    def __repr__(self) -> str:
        return f"SQSRowsPartition(index={self.index}, rows={len(self.rows)})"


class _DriverState:
    """What the driver-side reader holds between calls; never pickled."""

    def __init__(self, options: SQSOptions, queue_url: str) -> None:
        self.run = uuid.uuid4().hex[:16]
        self.queue_url = queue_url
        self.client = get_client(options.connection, queue_url)
        self.lock = threading.Lock()
        self.pending: dict[int, list[dict[str, Any]]] = {}  # seq -> received, not yet acknowledged messages
        self.budget: int | None = None  # availableNow: messages this run may still receive
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
        self._acknowledge(upto=seq)  # the batch ending at `start` is in Spark's commit log
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
        if state.budget is not None:
            wanted = min(wanted, state.budget)
        if wanted <= 0:
            return start

        read = self.options.read
        messages = receive_messages(
            state.client,
            state.queue_url,
            wanted,
            read.wait_time_seconds,
            read.visibility_timeout,
            read.attribute_names,
            read.message_attribute_names,
            # Stop receiving well before the first messages of this batch could become visible again.
            deadline=time.monotonic() + read.visibility_timeout / 2,
        )
        if not messages:
            return start
        if state.budget is not None:
            state.budget -= len(messages)
        with state.lock:
            state.pending[seq + 1] = messages
        self._ensure_heartbeat(state)
        return {"run": state.run, "seq": seq + 1}

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
        rows = [message_to_row(message, state.queue_url) for message in messages]
        if not rows:
            return []
        count = min(self.options.read.num_partitions, len(rows))
        size, extra = divmod(len(rows), count)
        partitions: list[InputPartition] = []
        begin = 0
        for index in range(count):
            stop = begin + size + (1 if index < extra else 0)
            partitions.append(SQSRowsPartition(index, rows[begin:stop]))
            begin = stop
        return partitions

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, SQSRowsPartition)
        yield from partition.rows

    # ------------------------------------------------------------------ acknowledging

    def commit(self, end: dict[str, Any]) -> None:
        self._acknowledge(upto=_seq(end, "end"))

    def _acknowledge(self, upto: int) -> None:
        """Delete the messages of every held batch numbered <= ``upto`` (Spark has committed them)."""
        state = self._driver()
        with state.lock:
            done = sorted(key for key in state.pending if key <= upto)
            messages = [m for key in done for m in state.pending.pop(key)]
        if not messages:
            return
        failures = delete_messages(state.client, state.queue_url, [m["ReceiptHandle"] for m in messages])
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
        """Every ``period`` seconds, push the held messages' visibility ``visibilityTimeout`` seconds ahead."""
        while not state.stopped.wait(period):
            with state.lock:
                handles = [m["ReceiptHandle"] for batch in state.pending.values() for m in batch]
            if not handles:
                continue
            try:
                change_visibility(state.client, state.queue_url, handles, self.options.read.visibility_timeout)
            except Exception as exc:  # keep renewing; a failed renewal only risks a duplicate
                log.warning("sqs stream reader %s: renewing visibility failed: %s", state.run, exc)

    def stop(self) -> None:
        """Stop renewing visibility and wait for the renewing thread to finish (at most ``STOP_JOIN_S`` seconds: a
        renewal call under way ends within the client's timeouts). Held (uncommitted) messages are left alone: they
        reappear after their visibility timeout."""
        state = self._state
        if state is None:
            return
        state.stopped.set()
        heartbeat = state.heartbeat
        if heartbeat is not None and heartbeat is not threading.current_thread():
            heartbeat.join(STOP_JOIN_S)
        with state.lock:
            held = sum(len(batch) for batch in state.pending.values())
        if held:
            log.info("sqs stream reader %s stopped with %d uncommitted messages in flight", state.run, held)
