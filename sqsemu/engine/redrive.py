"""Message move tasks: StartMessageMoveTask, CancelMessageMoveTask, ListMessageMoveTasks (docs/behaviour.md 2.21-2.23,
6.2, 6.3; API Reference of the three actions; SQS Developer Guide "Configure a dead-letter queue redrive").

A task moves the messages of a dead-letter queue (the *source*) either to one destination queue or, when none is
given, each back to the queue it was dead-lettered from (its ``DeadLetterQueueSourceArn``). Moved messages are new
messages in the destination (new MessageId, SentTimestamp and retention; see ``add_redriven``); messages are taken
oldest first.

Pacing uses the engine clock only: a task is a chain of timer-wheel entries, one per second, the first at the start
instant (docs/architecture.md, principle 4). Each tick moves up to the task's rate of the source's *visible* messages;
messages in flight or delayed are waited for, so a task keeps ticking while any remain. A task ends COMPLETED once it
moved ``ApproximateNumberOfMessagesToMove`` messages (the source's depth when it started) or the source is empty, FAILED
when a message's destination does not exist, CANCELLED when cancelled.

Choices where AWS is not confirmed:

* Omitted ``MaxNumberOfMessagesPerSecond`` ("system optimised") runs at the maximum, 500 messages per second.
* Cancelling goes straight to CANCELLED: moves happen whole inside a tick, so there is never a half-done batch to
  wait for and CANCELLING is never observed.
* Cancelling a task that is not RUNNING raises ``InvalidParameterValue`` ``Only a task with status RUNNING can be
  cancelled; this task is <STATUS>.``
* A destination that equals the source is rejected (``InvalidParameterValue``): the task could never finish
  meaningfully.
* When a message's destination (explicit, or its original source) no longer exists, or the source queue itself was
  deleted, the task ends FAILED with ``FailureReason`` ``AWS.SimpleQueueService.NonExistentQueue``; that message and
  those after it stay in the dead-letter queue, messages already moved stay moved. A destination that refuses the
  message with another SQS error ends the task FAILED with that error's shape name as the reason.
* ListMessageMoveTasks answers for any existing queue, dead-letter queue or not (an empty list when it never had a
  task). Tasks belong to the queue object, not its ARN: a queue deleted and re-created under the same ARN starts
  with no tasks.
* At most 10 finished tasks are kept per source queue (the newest), besides the running one.
* The 36-hour task duration and the 100-active-tasks-per-account quotas of the 2023 guide are not enforced.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import uuid
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from sqsemu.engine import faultpoints, jsondoc
from sqsemu.engine.errors import InvalidParameterValue, MissingParameter, ResourceNotFound, SQSError, invalid_value
from sqsemu.engine.limits import DEFAULT_LIMITS, Limits
from sqsemu.engine.message import Message

logger = logging.getLogger("sqsemu.engine")

TICK_MS = 1_000
LIST_DEFAULT_RESULTS = 1
KEEP_FINISHED = 10  # finished tasks remembered per source queue
NON_EXISTENT_QUEUE = "AWS.SimpleQueueService.NonExistentQueue"

_SOURCE_NOT_FOUND = "The resource that you specified for the SourceArn parameter doesn't exist."
_DESTINATION_NOT_FOUND = "The resource that you specified for the DestinationArn parameter doesn't exist."


class MoveQueue(Protocol):
    """What a move task needs of a queue (``sqsemu.engine.queue.Queue`` and its FIFO form provide it)."""

    @property
    def arn(self) -> str:
        """The queue ARN."""

    @property
    def fifo(self) -> bool:
        """True for a FIFO queue."""

    @property
    def deleted(self) -> bool:
        """True once DeleteQueue removed the queue."""

    def message_count(self) -> int:
        """Every stored message, visible, in flight or delayed."""

    def peek_visible(self, limit: int) -> list[Message]:
        """Up to ``limit`` visible messages, oldest first, unchanged."""

    def remove_moved(self, message: Message) -> None:
        """Delete ``message`` from this (source) queue after it was moved."""

    def add_redriven(self, message: Message, now_ms: int) -> Message:
        """Store a copy of ``message`` as a new message (new id, sent at ``now_ms``); returns the new message."""


Q = TypeVar("Q", bound=MoveQueue)
Schedule = Callable[[int, Callable[[Any, int], None], Any], None]


class TaskStatus(StrEnum):
    """The status of a move task (API Reference ``ListMessageMoveTasksResultEntry.Status``)."""

    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    CANCELLING = "CANCELLING"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"


class MoveTask(Generic[Q]):
    """One move task.

    ``rate`` is the effective messages per second; ``max_per_second`` is what the request gave (None when
    omitted). ``started_ms`` is epoch milliseconds. ``to_move`` is the source depth at the start; ``moved`` counts
    messages moved so far.
    """

    __slots__ = (
        "task_id",
        "source",
        "source_arn",
        "destination_arn",
        "max_per_second",
        "rate",
        "started_ms",
        "to_move",
        "moved",
        "status",
        "failure_reason",
        "forgotten",
    )

    def __init__(
        self,
        source: Q,
        destination_arn: str | None,
        max_per_second: int | None,
        started_ms: int,
        to_move: int,
        default_rate: int,
    ) -> None:
        self.task_id = str(uuid.uuid4())
        self.source = source
        self.source_arn = source.arn
        self.destination_arn = destination_arn
        self.max_per_second = max_per_second
        self.rate = default_rate if max_per_second is None else max_per_second
        self.started_ms = started_ms
        self.to_move = to_move
        self.moved = 0
        self.status = TaskStatus.RUNNING
        self.failure_reason: str | None = None
        self.forgotten = False  # pruned (KEEP_FINISHED): the journal is told once more, to drop its record

    @property
    def handle(self) -> str:
        """The TaskHandle: base64 of the JSON object ``{"taskId": ..., "sourceArn": ...}`` (docs/behaviour.md 6.3)."""
        raw = json.dumps({"taskId": self.task_id, "sourceArn": self.source_arn}, separators=(",", ":"))
        return base64.b64encode(raw.encode()).decode()

    def to_entry(self) -> dict[str, Any]:
        """The ListMessageMoveTasks result entry, JSON-model member names and types (timestamps epoch ms)."""
        entry: dict[str, Any] = {}
        if self.status is TaskStatus.RUNNING:
            entry["TaskHandle"] = self.handle
        entry["Status"] = self.status.value
        entry["SourceArn"] = self.source_arn
        if self.destination_arn is not None:
            entry["DestinationArn"] = self.destination_arn
        if self.max_per_second is not None:
            entry["MaxNumberOfMessagesPerSecond"] = self.max_per_second
        entry["ApproximateNumberOfMessagesMoved"] = self.moved
        entry["ApproximateNumberOfMessagesToMove"] = self.to_move
        if self.status is TaskStatus.FAILED and self.failure_reason is not None:
            entry["FailureReason"] = self.failure_reason
        entry["StartedTimestamp"] = self.started_ms
        return entry

    def __repr__(self) -> str:
        return f"<MoveTask {self.task_id} {self.status.value} {self.moved}/{self.to_move}>"


def decode_handle(task_handle: str) -> tuple[str, str]:
    """(task id, source ARN) from a TaskHandle; raises ``InvalidParameterValue``
    ``Value for parameter TaskHandle is invalid.`` when it is not base64 of such a JSON object."""
    try:  # jsondoc: a handle of 100,000 '[' is a ValueError, not a RecursionError
        data = jsondoc.loads(base64.b64decode(task_handle.encode(), validate=True).decode())
    except (ValueError, binascii.Error, UnicodeError):
        data = None
    if isinstance(data, dict):
        task_id, source_arn = data.get("taskId"), data.get("sourceArn")
        if isinstance(task_id, str) and isinstance(source_arn, str) and task_id and source_arn:
            return task_id, source_arn
    raise InvalidParameterValue("Value for parameter TaskHandle is invalid.")


class MoveTasks(Generic[Q]):
    """Every move task of one broker, by source queue.

    ``now_ms()`` reads the engine clock (epoch ms); ``schedule(due_ms, callback, arg)`` is the timer wheel's;
    ``resolve_arn(arn)`` returns the live queue with that ARN or None; ``is_dead_letter_queue(queue)`` tells
    whether some queue's RedrivePolicy names ``queue`` as its dead-letter target.
    """

    def __init__(
        self,
        now_ms: Callable[[], int],
        schedule: Schedule,
        resolve_arn: Callable[[str], Q | None],
        is_dead_letter_queue: Callable[[Q], bool],
        *,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.limits = limits
        self._now_ms = now_ms
        self._schedule = schedule
        self._resolve = resolve_arn
        self._is_dlq = is_dead_letter_queue
        self._tasks: dict[str, list[MoveTask[Q]]] = {}  # source ARN -> tasks, oldest first
        # told of every start, step and end, and of a finished task pruned from memory (``task.forgotten``)
        self.on_change: Callable[[MoveTask[Q]], None] | None = None
        self.step_failures = 0
        """Move steps that failed unexpectedly and were undone (``_step_failed``), each logged once."""

    def _changed(self, task: MoveTask[Q]) -> None:
        if self.on_change is not None:
            self.on_change(task)

    def restore(
        self,
        source: Q,
        task_id: str,
        destination_arn: str | None,
        max_per_second: int | None,
        started_ms: int,
        to_move: int,
        moved: int,
        status: str,
        failure_reason: str | None,
    ) -> None:
        """Put back a task read from the durable store; a RUNNING one carries on from the next tick."""
        task: MoveTask[Q] = MoveTask(
            source, destination_arn, max_per_second, started_ms, to_move, self.limits.move_task_rate_max
        )
        task.task_id = task_id
        task.moved = moved
        task.status = TaskStatus(status)
        task.failure_reason = failure_reason
        self._tasks.setdefault(source.arn, []).append(task)
        self._prune(source.arn)  # a file written before pruned tasks were deleted from it may hold more
        if task.status is TaskStatus.RUNNING:
            self._schedule(self._now_ms(), self._tick, task)

    # ----------------------------------------------------------------- lookups

    def _live(self, arn: str) -> Q | None:
        queue = self._resolve(arn)
        return None if queue is None or queue.deleted else queue

    def _tasks_of(self, source: Q) -> list[MoveTask[Q]]:
        """The tasks of ``source`` (oldest first), forgetting those of an earlier queue with the same ARN."""
        tasks = self._tasks.get(source.arn)
        if tasks is None:
            return []
        if any(task.source is not source for task in tasks):
            tasks = [task for task in tasks if task.source is source]
            self._tasks[source.arn] = tasks
        return tasks

    def tasks_of(self, source: Q) -> list[MoveTask[Q]]:
        """The tasks of the live queue ``source``, oldest first (a new list): what a saved state keeps."""
        return list(self._tasks_of(source))

    def forget(self, source: Q) -> None:
        """Drop the tasks of ``source``, a deleted queue: nothing can list or cancel them any more (a running one
        only ends FAILED at its next tick), and they would keep the queue object alive."""
        tasks = self._tasks.get(source.arn)
        if tasks is None:
            return
        kept = [task for task in tasks if task.source is not source]
        if kept:
            self._tasks[source.arn] = kept
        else:
            del self._tasks[source.arn]

    def _prune(self, source_arn: str) -> None:
        tasks = self._tasks.get(source_arn)
        if not tasks:
            return
        finished = [task for task in tasks if task.status is not TaskStatus.RUNNING]
        if len(finished) > KEEP_FINISHED:
            dropped = finished[: len(finished) - KEEP_FINISHED]
            drop = {id(task) for task in dropped}
            self._tasks[source_arn] = [task for task in tasks if id(task) not in drop]
            for task in dropped:  # the durable store deletes its row: a restart must not bring it back
                task.forgotten = True
                self._changed(task)

    # ----------------------------------------------------------------- actions

    def _owned(self, arn: str, account_id: str | None) -> Q | None:
        """The live queue with ``arn`` if it belongs to ``account_id`` (None: any account), else None: a caller sees
        only its own account's queues, so another account's queue answers like one that does not exist."""
        queue = self._live(arn)
        if queue is None or (account_id is not None and arn.split(":")[4:5] != [account_id]):
            return None
        return queue

    def start(
        self,
        source_arn: str | None,
        destination_arn: str | None,
        max_per_second: int | None,
        account_id: str | None = None,
    ) -> str:
        """StartMessageMoveTask; returns the TaskHandle.

        ``destination_arn`` None (or empty) sends each message back to its original source queue;
        ``max_per_second`` None means the default rate (500 messages/second). Raises ``MissingParameter``
        (SourceArn), ``ResourceNotFound`` (source or destination does not exist), ``InvalidParameterValue`` (source
        is not a dead-letter queue; destination of the other queue type or the source itself; rate outside 1-500;
        a task already RUNNING for this source) (docs/behaviour.md 2.21, 6.3). Queues of accounts other than
        ``account_id`` (the caller's) count as not existing.
        """
        if not source_arn:
            raise MissingParameter.named("SourceArn")
        source = self._owned(source_arn, account_id)
        if source is None:
            raise ResourceNotFound(_SOURCE_NOT_FOUND)
        if not self._is_dlq(source):
            raise InvalidParameterValue("Source queue must be configured as a Dead Letter Queue.")
        destination_arn = destination_arn or None
        if destination_arn is not None:
            destination = self._owned(destination_arn, account_id)
            if destination is None:
                raise ResourceNotFound(_DESTINATION_NOT_FOUND)
            if destination is source:
                raise invalid_value(
                    destination_arn, "DestinationArn", "The destination queue must differ from the source queue."
                )
            if destination.fifo != source.fifo:
                raise invalid_value(
                    destination_arn,
                    "DestinationArn",
                    "The destination queue must be the same type (FIFO or standard) as the source queue.",
                )
        most = self.limits.move_task_rate_max
        if max_per_second is not None and not 1 <= max_per_second <= most:
            raise invalid_value(
                max_per_second, "MaxNumberOfMessagesPerSecond", f"Must be between 1 and {most}, if provided."
            )
        tasks = self._tasks_of(source)
        if any(task.status is TaskStatus.RUNNING for task in tasks):
            raise InvalidParameterValue(
                "There is already a task running. Only one active task is allowed for a source queue arn at a "
                "given time."
            )
        now = self._now_ms()
        task: MoveTask[Q] = MoveTask(
            source, destination_arn, max_per_second, now, source.message_count(), self.limits.move_task_rate_max
        )
        self._tasks.setdefault(source.arn, tasks).append(task)
        self._schedule(now, self._tick, task)
        self._changed(task)
        return task.handle

    def cancel(self, task_handle: str | None, account_id: str | None = None) -> int:
        """CancelMessageMoveTask; returns ApproximateNumberOfMessagesMoved (messages moved stay moved).

        Raises ``MissingParameter`` (TaskHandle), ``InvalidParameterValue`` (undecodable handle; task not
        RUNNING) and ``ResourceNotFound`` (the handle's source queue does not exist: the SourceArn message; no such
        task: ``Task does not exist.``) (docs/behaviour.md 2.22).
        """
        if not task_handle:
            raise MissingParameter.named("TaskHandle")
        task_id, source_arn = decode_handle(task_handle)
        source = self._owned(source_arn, account_id)
        if source is None:
            raise ResourceNotFound(_SOURCE_NOT_FOUND)
        task = next((t for t in self._tasks_of(source) if t.task_id == task_id), None)
        if task is None:
            raise ResourceNotFound("Task does not exist.")
        if task.status is not TaskStatus.RUNNING:
            raise InvalidParameterValue(
                f"Only a task with status RUNNING can be cancelled; this task is {task.status.value}."
            )
        task.status = TaskStatus.CANCELLED
        self._prune(source.arn)
        self._changed(task)
        return task.moved

    def list(
        self, source_arn: str | None, max_results: int | None, account_id: str | None = None
    ) -> list[dict[str, Any]]:
        """ListMessageMoveTasks: up to ``max_results`` (default 1, 1-10) tasks of the source, newest first, as
        result entries (see ``MoveTask.to_entry``). Raises ``MissingParameter`` (SourceArn),
        ``InvalidParameterValue`` (MaxResults out of range) and ``ResourceNotFound`` (no such source queue)
        (docs/behaviour.md 2.23)."""
        if not source_arn:
            raise MissingParameter.named("SourceArn")
        most = self.limits.move_task_list_max_results
        if max_results is not None and not 1 <= max_results <= most:
            raise invalid_value(max_results, "MaxResults", f"Must be between 1 and {most}, if provided.")
        source = self._owned(source_arn, account_id)
        if source is None:
            raise ResourceNotFound(_SOURCE_NOT_FOUND)
        limit = LIST_DEFAULT_RESULTS if max_results is None else max_results
        tasks = self._tasks_of(source)
        return [task.to_entry() for task in reversed(tasks[-limit:])]

    # ----------------------------------------------------------------- pacing

    def _finish(self, task: MoveTask[Q], status: TaskStatus, reason: str | None = None) -> None:
        task.status = status
        task.failure_reason = reason
        self._prune(task.source_arn)
        self._changed(task)

    def _step_failed(self, task: MoveTask[Q], source: Q) -> None:
        """A move step failed unexpectedly (not an SQS error): it was undone (the message is in the source only),
        the failure is logged once with its traceback and counted (``step_failures``); the tick ends here and the
        task stays RUNNING, ticking on (no failure stops a task's scheduling)."""
        self.step_failures += 1
        logger.exception("message move task %s: a step failed on %s; retried next tick", task.task_id, source.arn)

    def _tick(self, task: MoveTask[Q], due_ms: int) -> None:
        """Timer: move up to ``task.rate`` visible messages, then finish or schedule the next tick 1 s later."""
        if task.status is not TaskStatus.RUNNING:
            return
        source = task.source
        if source.deleted:
            self._finish(task, TaskStatus.FAILED, NON_EXISTENT_QUEUE)
            return
        now = self._now_ms()
        fixed: Q | None = None
        if task.destination_arn is not None:
            fixed = self._live(task.destination_arn)
            if fixed is None:
                self._finish(task, TaskStatus.FAILED, NON_EXISTENT_QUEUE)
                return
        fault = faultpoints.ARMED  # read once a tick: disarmed, each point below is a local None check
        budget = min(task.rate, task.to_move - task.moved)
        for message in source.peek_visible(budget) if budget > 0 else []:
            destination = fixed
            if destination is None:
                origin = message.dead_letter_source_arn
                destination = self._live(origin) if origin else None
            if destination is None:
                self._finish(task, TaskStatus.FAILED, NON_EXISTENT_QUEUE)
                return
            try:
                copy = destination.add_redriven(message, now)
            except SQSError as error:
                self._finish(task, TaskStatus.FAILED, error.shape)
                return
            except Exception:
                self._step_failed(task, source)
                break
            try:
                if fault is not None:
                    fault("move.added")
                source.remove_moved(message)
            except Exception:
                destination.remove_moved(copy)  # no copy left behind: the message stays in the source only
                self._step_failed(task, source)
                break
            task.moved += 1
        if task.moved >= task.to_move or source.message_count() == 0:
            self._finish(task, TaskStatus.COMPLETED)
            return
        self._schedule(max(due_ms + TICK_MS, now), self._tick, task)
        self._changed(task)
