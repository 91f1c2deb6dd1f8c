"""The workers of one event source mapping: Lambda's SQS poller ("Using Lambda with Amazon SQS", "Handling errors
for an SQS event source in Lambda", "Implementing partial batch responses"), on the broker's public calls.

Each worker, while the mapping is enabled:

1. long-polls the queue (ReceiveMessage, 20 s, at most 10 messages a call, the queue's visibility timeout);
2. with ``MaximumBatchingWindowInSeconds`` above 0 keeps receiving until the batch holds ``BatchSize`` messages or
   the window, counted from the first message, has passed (on the server's clock);
3. deletes the messages no filter matches, without an invocation (``FilterCriteria``);
4. invokes the function with the rest (``sqsemu.eventsource.event``), and then
   - a result: deletes the batch; with ``ReportBatchItemFailures`` deletes all but the items listed in
     ``batchItemFailures`` (an empty or null list, or an empty or null response, is a complete success; an
     ``itemIdentifier`` that is empty, null, missing or not a message of the batch, or a response that is not a
     JSON object, is a complete failure);
   - a function error, an unreachable endpoint or an unknown function: deletes nothing, so the whole batch comes
     back once its visibility timeout ends (and goes to the dead-letter queue through the queue's redrive
     policy), and the mapping backs off: none of its workers polls for 1 s after a failure, doubling with each
     consecutive failure up to 30 s, and a success ends the series (sqsemu's reading of "Lambda gradually backs
     off, reducing the amount of concurrency").

The number of workers is ``MaximumConcurrency`` (else 5): that many batches in flight at most. On a FIFO queue the
queue itself keeps one batch per message group in flight: a group's messages are not received again while any of
them is in flight. Every wait (long poll, batching window, back-off) is on the injected clock, so ``--clock
manual`` tests see retries without waiting.

Workers are supervised: a function's or an endpoint's misbehaviour is an invocation outcome (``functions``), a record
the filter cannot evaluate does not match (``filters``), and anything else a worker's step raises (a bug) does not
end the worker: the step is counted as a restart (``sqsemu_lambda_worker_restarts_total``), logged with its
traceback the first time it happens to the mapping, said in ``LastProcessingResult``, and the worker starts over
after a back-off; its batch comes back after its visibility timeout. A batch holds each message once (``_distinct``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from sqsemu.clock import Clock
from sqsemu.engine.broker import Broker
from sqsemu.engine.delivery import Received
from sqsemu.engine.errors import SQSError
from sqsemu.engine.message import ReceiptEntry
from sqsemu.engine.queue import Queue
from sqsemu.eventsource.errors import role_refusal
from sqsemu.eventsource.event import record, sqs_event
from sqsemu.eventsource.filters import RecordFilter
from sqsemu.eventsource.functions import INVALID, Functions, Outcome
from sqsemu.eventsource.mapping import Mapping

logger = logging.getLogger("sqsemu.eventsource")

LONG_POLL_S = 20
RECEIVE_MAX = 10
BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
MISSING_QUEUE_RETRY_S = 10.0
MIN_INVOKE_TIMEOUT_S = 60.0
MAX_EVENT_BYTES = 6 * 1024 * 1024
"""Largest event a batch makes (bytes of its JSON): Lambda's synchronous invocation payload limit ("Lambda quotas",
6 MB; "CreateEventSourceMapping", ``BatchSize``: "up to the payload limit for synchronous invocation (6 MB)")."""
_EVENT_OVERHEAD = len(json.dumps({"Records": []}).encode())
_SEPARATOR = ", "  # between two records, as json.dumps writes them

# Outcome labels (the metric's ``outcome`` label and the access line's).
SUCCESS = "success"
PARTIAL = "partial_failure"
FUNCTION_ERROR = "function_error"
INVALID_RESPONSE = "invalid_response"
UNREACHABLE = "unreachable"
NO_FUNCTION = "no_function"


class Invocation:
    """What one invocation was: the mapping, ``outcome`` (a label above), the message ids it received, those that
    were left to come back (``failed``), its duration (seconds) and an error line."""

    __slots__ = ("mapping", "outcome", "message_ids", "failed", "duration_s", "error", "at_ms")

    def __init__(
        self,
        mapping: Mapping,
        outcome: str,
        message_ids: list[str],
        failed: list[str],
        duration_s: float,
        error: str,
        at_ms: int,
    ) -> None:
        self.mapping = mapping
        self.outcome = outcome
        self.message_ids = message_ids
        self.failed = failed
        self.duration_s = duration_s
        self.error = error
        self.at_ms = at_ms


Observer = Callable[[Invocation], None]
RoleCheck = Callable[[Mapping, str, Queue], bool]
"""``(mapping, SQS action, queue) -> denied``: whether ``--auth iam`` refuses the execution role of the mapping's
function (in the mapping's account) the action on the queue (``EventSources.role_denies``)."""


def item_failures(payload: Any, ids: Sequence[str]) -> set[str] | None:
    """The message ids a ``ReportBatchItemFailures`` response lists; an empty set for a complete success, None for
    a complete failure ("Implementing partial batch responses", success and failure conditions)."""
    if payload is None:
        return set()
    if not isinstance(payload, dict):
        return None  # not a JSON object: an invalid response (INVALID included)
    listed = payload.get("batchItemFailures")
    if listed is None:
        return set()
    if not isinstance(listed, list):
        return None
    known = set(ids)
    failed: set[str] = set()
    for item in listed:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not isinstance(identifier, str) or not identifier or identifier not in known:
            return None
        failed.add(identifier)
    return failed


def _distinct(batch: list[Received]) -> list[Received]:
    """``batch`` with each message once: a message received again within the batching window (its visibility
    timeout ended meanwhile) keeps its place and takes its latest receipt handle, the one that deletes it."""
    latest: dict[str, Received] = {}
    for received in batch:
        latest[received[0].message_id] = received
    if len(latest) == len(batch):
        return batch
    return list(latest.values())


def _record_bytes(queue: Queue, received: Received) -> int:
    """The bytes ``received``'s record adds to an event's JSON (as :func:`sqs_event` writes it)."""
    return len(json.dumps(record(queue, received)).encode())


def _resolve(future: asyncio.Future[None], _due: int) -> None:
    if not future.done():
        future.set_result(None)


class Runner:
    """The workers of one mapping; :meth:`sync` after every change of the mapping, :meth:`close` to stop."""

    def __init__(
        self,
        mapping: Mapping,
        broker: Broker,
        clock: Clock,
        functions: Functions,
        observer: Observer,
        role_denies: RoleCheck | None = None,
    ) -> None:
        self.mapping = mapping
        self.role_denies = role_denies
        self.broker = broker
        self.clock = clock
        self.functions = functions
        self.observer = observer
        self.workers: dict[int, asyncio.Task[None]] = {}
        self.parked = 0
        self.waits: set[asyncio.Future[None]] = set()
        self.failures = 0
        self.paused_until_ms = 0  # back-off: no worker polls before this instant (epoch ms)
        self.closed = False
        self.filter = RecordFilter(mapping.filters)
        self.on_idle: Callable[[], None] | None = None
        self.on_restart: Callable[[], None] | None = None
        self.restarts = 0
        self.logged: set[str] = set()  # the kinds of worker failure logged with a traceback already
        self.turn = asyncio.Lock()  # held by the worker gathering a batch with a window
        self.carried: list[Received] = []  # received, but past the last batch's 6 MB: the next batch's first

    # ------------------------------------------------------------------ life cycle

    def sync(self) -> None:
        """Match the workers to the mapping: as many as its concurrency while enabled, none otherwise (workers
        beyond the count finish their batch first). Wakes parked workers so they see the change."""
        self.filter = RecordFilter(self.mapping.filters)
        target = self._target()
        loop = asyncio.get_running_loop()
        for index in range(target):
            if index not in self.workers:
                task = loop.create_task(self._work(index), name=f"esm-{self.mapping.uuid}-{index}")  # supervised
                task.add_done_callback(self._ended)
                self.workers[index] = task
        self.interrupt()
        if not self.workers and self.on_idle is not None:
            self.on_idle()

    def _target(self) -> int:
        mapping = self.mapping
        if self.closed or self.broker.stopping or not mapping.enabled or mapping.state == "Deleting":
            return 0
        return mapping.pollers

    def interrupt(self) -> None:
        """End every wait of the workers now (they then look at the mapping again)."""
        for future in list(self.waits):
            if not future.done():
                future.set_result(None)

    def close(self) -> None:
        """Stop the workers (server shutdown): waits end, tasks are cancelled."""
        self.closed = True
        self.interrupt()
        for task in list(self.workers.values()):
            task.cancel()

    def quiet(self) -> bool:
        """Whether every worker is waiting (a long poll, a batching window, a back-off): nothing happens until a
        message arrives or the clock moves."""
        return self.parked == len(self.workers)

    # ------------------------------------------------------------------ one worker

    async def _work(self, index: int) -> None:
        """One worker: steps until the mapping wants fewer workers. An exception a step did not expect (whatever it
        is) does not end the worker: :meth:`_restarted` counts and logs it, and the worker starts over after a
        back-off (the messages of the step come back after their visibility timeout)."""
        try:
            while index < self._target():
                try:
                    await self._step()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - supervised: counted, logged once, the worker goes on
                    self._restarted(exc)
        finally:
            self.workers.pop(index, None)
            if not self.workers and self.on_idle is not None:
                self.on_idle()

    async def _step(self) -> None:
        """One round of a worker: wait out a back-off, or gather a batch and deliver it."""
        pause = self.paused_until_ms - self.clock.now_ms()
        if pause > 0:
            await self._sleep(pause / 1000)
            return
        queue = self.broker.resolve_arn(self.mapping.event_source_arn)
        if queue is None or queue.deleted:
            self.mapping.last_processing_result = "PROBLEM: Source queue does not exist"
            await self._sleep(MISSING_QUEUE_RETRY_S)
            return
        if self._refused("ReceiveMessage", queue):
            await self._sleep(MISSING_QUEUE_RETRY_S)
            return
        try:
            batch = await self._gather(queue)
        except SQSError as exc:
            self.mapping.last_processing_result = f"PROBLEM: {exc.message}"
            await self._sleep(MISSING_QUEUE_RETRY_S)
            return
        if batch:
            await self._deliver(queue, batch)

    def _refused(self, action: str, queue: Queue) -> bool:
        """Whether the function's execution role may not call ``action`` on ``queue`` now (``--auth iam``); if so
        ``LastProcessingResult`` says so (and the log, when it did not say so already)."""
        if self.role_denies is None or not self.role_denies(self.mapping, action, queue):
            return False
        problem = f"PROBLEM: {role_refusal(action)}"
        if self.mapping.last_processing_result != problem:
            logger.warning(
                "event source mapping %s: the execution role of %s may not call %s on %s; messages stay in the queue",
                self.mapping.uuid,
                self.mapping.function,
                action,
                queue.arn,
            )
            self.mapping.last_processing_result = problem
        return True

    def _restarted(self, exc: BaseException) -> None:
        """A worker's step raised ``exc`` (not a function's failure: those are outcomes): count the restart, log
        it (with the traceback the first time this kind of failure happens to the mapping, a line after that),
        say so in ``LastProcessingResult``, and back off as after a failed invocation."""
        self.restarts += 1
        if self.on_restart is not None:
            self.on_restart()
        kind = type(exc).__name__
        line = str(exc).strip().split("\n", 1)[0][:300]
        self.mapping.last_processing_result = f"PROBLEM: Worker restarted after an internal error: {kind}: {line}"
        if kind not in self.logged:
            self.logged.add(kind)
            logger.error(
                "event source mapping %s: a worker failed (%s) and was restarted; its messages return after their "
                "visibility timeout",
                self.mapping.uuid,
                kind,
                exc_info=exc,
            )
        else:
            logger.warning(
                "event source mapping %s: a worker failed again (%s: %s) and was restarted (%d restarts)",
                self.mapping.uuid,
                kind,
                line,
                self.restarts,
            )
        self._back_off()

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A worker task ended: one that ended with an exception (which :meth:`_work` should never let out) is
        counted and replaced like a restarted one."""
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        self._restarted(exc)
        if not self.closed:
            self.sync()

    async def _wait_future(self, future: asyncio.Future[None]) -> None:
        self.waits.add(future)
        self.parked += 1
        try:
            await future
        finally:
            self.parked -= 1
            self.waits.discard(future)

    async def _sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on the server's clock (or until interrupted)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.broker.schedule(self.clock.now_ms() + int(seconds * 1000), _resolve, future)
        await self._wait_future(future)

    async def _receive(self, queue: Queue, count: int, deadline_ms: int | None) -> list[Received]:
        stop: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        wait = LONG_POLL_S
        if deadline_ms is not None:
            left = deadline_ms - self.clock.now_ms()
            if left <= 0:
                return []
            wait = min(LONG_POLL_S, math.ceil(left / 1000))
            self.broker.schedule(deadline_ms, _resolve, stop)
        self.waits.add(stop)
        self.parked += 1
        try:
            return await self.broker.receive_message(
                queue, max_number_of_messages=count, wait_time_seconds=wait, disconnected=stop
            )
        finally:
            self.parked -= 1
            self.waits.discard(stop)
            if not stop.done():
                stop.set_result(None)

    async def _gather(self, queue: Queue) -> list[Received]:
        """A batch ("Using Lambda with Amazon SQS", batching; "CreateEventSourceMapping", ``BatchSize``): the first
        receive waits for messages; with a batching window, more receives (10 messages at most each) until the batch
        holds ``BatchSize`` messages, its event would pass Lambda's 6 MB synchronous payload limit
        (:data:`MAX_EVENT_BYTES`), or the window, counted from the batch's first message, has passed. With a window
        one worker of the mapping gathers at a time (the others wait their turn), so messages arriving one send at a
        time fill one batch instead of one per waiting worker; a message that would pass 6 MB starts the next
        batch."""
        if self.mapping.batching_window_s == 0 and not self.carried:
            return await self._receive(queue, min(RECEIVE_MAX, self.mapping.batch_size), None)
        await self._take_turn()
        try:
            if not self._target():
                return []
            return await self._gather_window(queue)
        finally:
            self.turn.release()

    async def _take_turn(self) -> None:
        """Wait until no other worker of the mapping is gathering a batch (a wait, as far as :meth:`quiet` is
        concerned)."""
        self.parked += 1  # no suspension (nothing seen) when the turn is free
        try:
            await self.turn.acquire()
        finally:
            self.parked -= 1

    async def _gather_window(self, queue: Queue) -> list[Received]:
        mapping = self.mapping
        wanted = mapping.batch_size
        got: list[Received] = []
        size = _EVENT_OVERHEAD
        carried, self.carried = self.carried, []
        deadline: int | None = None
        if carried:
            deadline = self.clock.now_ms() + mapping.batching_window_s * 1000
        pending = carried
        while True:
            for received in pending:
                room = _record_bytes(queue, received) + (len(_SEPARATOR) if got else 0)
                if len(got) >= wanted or (got and size + room > MAX_EVENT_BYTES):
                    self.carried.append(received)  # the next batch starts with it
                    continue
                got.append(received)
                size += room
            if self.carried or len(got) >= wanted or self.broker.stopping or self.closed:
                break
            if got and deadline is None:
                deadline = self.clock.now_ms() + mapping.batching_window_s * 1000
            pending = await self._receive(queue, min(RECEIVE_MAX, wanted - len(got)), deadline)
            if not pending:
                if not got or self.clock.now_ms() >= (deadline or 0) or not self._target():
                    break
        return _distinct(got)

    async def _deliver(self, queue: Queue, batch: list[Received]) -> None:
        mapping = self.mapping
        records = [record(queue, received) for received in batch]
        if self.filter:
            keep = [self.filter.matches(r) for r in records]
            self._delete(queue, [b for b, k in zip(batch, keep, strict=True) if not k])
            batch = [b for b, k in zip(batch, keep, strict=True) if k]
            records = [r for r, k in zip(records, keep, strict=True) if k]
            if not batch:
                return
        ids = [r["messageId"] for r in records]
        started = perf_counter()
        at_ms = self.clock.now_ms()
        timeout = max(float(queue.visibility_timeout), MIN_INVOKE_TIMEOUT_S)
        event = sqs_event(records)
        expired: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.broker.schedule(at_ms + int(timeout * 1000), _resolve, expired)  # the timeout on the server's clock
        try:
            outcome: Outcome = await self.functions.invoke(
                mapping.function, mapping.function_arn, event, timeout, expired, mapping.account
            )
        except Exception as exc:  # noqa: BLE001 - whatever invoking raised is a function error for the batch
            outcome = Outcome("function_error", error=f"{type(exc).__name__}: {exc}".split("\n", 1)[0][:300])
        finally:
            if not expired.done():
                expired.set_result(None)
        duration = perf_counter() - started
        label, failed = self._judge(outcome, ids)
        deleted = self._delete(queue, [b for b, i in zip(batch, ids, strict=True) if i not in failed])
        error = outcome.error
        if label == INVALID_RESPONSE and not error:
            error = "Invalid partial batch response"
        if deleted:
            mapping.last_processing_result = "OK" if label in (SUCCESS, PARTIAL) else f"PROBLEM: {error}"
        self.observer(Invocation(mapping, label, ids, [i for i in ids if i in failed], duration, error, at_ms))
        if label in (SUCCESS, PARTIAL):
            self.failures = 0
            return
        logger.warning(
            "event source mapping %s: %s for %d message(s) of %s (%s); they return after their visibility timeout",
            mapping.uuid,
            label,
            len(ids),
            queue.arn,
            error,
            exc_info=outcome.exception,  # an in-process handler's error in full, traceback included, below the line
        )
        self._back_off()

    def _back_off(self) -> None:
        """One more consecutive failure: no worker polls for 1 s doubled per failure before it, at most 30 s."""
        self.failures += 1
        backoff_ms = int(min(BACKOFF_FIRST_S * 2 ** (self.failures - 1), BACKOFF_MAX_S) * 1000)
        self.paused_until_ms = max(self.paused_until_ms, self.clock.now_ms() + backoff_ms)
        self.interrupt()  # the other workers' long polls end: none of them polls until the pause is over

    def _judge(self, outcome: Outcome, ids: list[str]) -> tuple[str, set[str]]:
        """The outcome's label and the ids left to come back."""
        everything = set(ids)
        if outcome.kind == "function_error":
            return FUNCTION_ERROR, everything
        if outcome.kind == "unreachable":
            return UNREACHABLE, everything
        if outcome.kind == "no_function":
            return NO_FUNCTION, everything
        if not self.mapping.reports_item_failures:
            return SUCCESS, set()
        if outcome.payload is INVALID:
            return INVALID_RESPONSE, everything
        failed = item_failures(outcome.payload, ids)
        if failed is None:
            return INVALID_RESPONSE, everything
        return (PARTIAL if failed else SUCCESS), failed

    def _delete(self, queue: Queue, batch: Sequence[Received]) -> bool:
        """Delete ``batch`` from ``queue`` as the function's execution role; False (nothing deleted: the messages
        come back after their visibility timeout) when the role may not (``LastProcessingResult`` says so)."""
        if batch and self._refused("DeleteMessage", queue):
            return False
        for start in range(0, len(batch), RECEIVE_MAX):
            chunk = batch[start : start + RECEIVE_MAX]
            entries = [ReceiptEntry(str(n), handle) for n, (_message, handle) in enumerate(chunk)]
            try:
                self.broker.delete_message_batch(queue, entries)
            except SQSError as exc:  # the queue went away meanwhile
                logger.warning("event source mapping %s: delete failed: %s", self.mapping.uuid, exc.message)
                return True
        return True
