"""The engine's async facade: namespaces of queues, long-poll waiters and the one scheduler.

The broker owns the timer wheel and is the clock's ``TimerDriver``: the clock calls ``run_due`` when the next
deadline comes (``SystemClock``: one event-loop timer; ``ManualClock``: on ``advance``). Everything except a
waiting ReceiveMessage is synchronous; the protocol layer calls these methods with decoded, typed values and gets
engine objects or ``SQSError`` back. No HTTP, XML or JSON here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mypy_extensions import mypyc_attr

from sqsemu.clock import Clock
from sqsemu.engine import attributes as queue_attributes
from sqsemu.engine import faultpoints, permissions, tags
from sqsemu.engine.delivery import Received
from sqsemu.engine.errors import (
    InvalidParameterValue,
    MissingParameter,
    PurgeQueueInProgress,
    QueueDeletedRecently,
    QueueDoesNotExist,
    SQSError,
    invalid_value,
)
from sqsemu.engine.events import Journal, JournalFanout
from sqsemu.engine.fifo import FifoQueue
from sqsemu.engine.limits import DEFAULT_LIMITS, Limits
from sqsemu.engine.message import Message, ReceiptEntry, SendEntry
from sqsemu.engine.queue import Namespace, Queue
from sqsemu.engine.realism import REALISM_TAG, Realism, check_tags
from sqsemu.engine.redrive import MoveTasks
from sqsemu.engine.timerwheel import TimerCallback, TimerWheel
from sqsemu.engine.waiters import Waiter

logger = logging.getLogger("sqsemu.engine")

__all__ = ["Broker", "Namespace", "Queue", "Received"]

_QUEUE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
FIFO_NAME_RULE = (
    "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with "
    ".fifo suffix and be 1 to 80 in length."
)


def parse_arn(arn: str) -> tuple[Namespace, str] | None:
    """``arn:<partition>:sqs:<region>:<account>:<name>`` → (namespace, queue name), or None if not an SQS ARN."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs" or not parts[5]:
        return None
    return Namespace(parts[4], parts[3]), parts[5]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled, and still open to a Python subclass (tests override)
class Broker:
    """All queues of all accounts and regions, and the scheduler that drives their timers.

    Call ``start()`` from inside the running event loop before serving and ``close()`` when done. ``strict``
    turns on the two 60-second rules of AWS that test suites usually do not want: a deleted queue's name cannot be
    used again for 60 seconds (QueueDeletedRecently), and a queue can be purged once per 60 seconds
    (PurgeQueueInProgress).
    """

    def __init__(self, clock: Clock, limits: Limits = DEFAULT_LIMITS, strict: bool = False) -> None:
        self.clock = clock
        self.limits = limits
        self.strict = strict
        self.wheel = TimerWheel(on_earlier=clock.reschedule)
        # What a queue calls for every message put in flight or deleted (QueueHost): the wheel's own compiled
        # methods, with no interpreted broker frame around each call.
        self.schedule: Callable[[int, TimerCallback, Any], None] = self.wheel.schedule
        """Run ``callback(arg, due_ms)`` when the clock reaches ``due_ms`` (epoch ms): ``TimerWheel.schedule``."""
        self.unschedule: Callable[[int, Any], bool] = self.wheel.drop
        """Let a pending timer of ``arg`` at ``due_ms`` go before its deadline: ``TimerWheel.drop``."""
        self.layers: dict[str, Any] = {}
        """What a layer around the engine keeps for this broker's server, by the layer's name (the fault injector,
        the init scripts, the event source mappings): it lives as long as the broker; the engine never reads it."""
        self._in_timers = False  # inside run_due: no catch-up from a timer callback
        self.namespaces: dict[Namespace, dict[str, Queue]] = {}
        self._dirty: set[Queue] = set()
        self.handoff_failures = 0
        """Hand-offs to waiting long polls that failed and were contained (``_flush``): each logged once."""
        self._deleted_at: dict[tuple[Namespace, str], int] = {}
        self.move_tasks = MoveTasks(
            clock.now_ms, self.schedule, self.resolve_arn, self.is_dead_letter_queue, limits=limits
        )
        self.journal: Journal[Queue] | None = None  # the one subscriber, a JournalFanout of several, or None
        self._subscribers: list[Journal[Queue]] = []
        self.stopping = False
        self.realism: Realism | None = None  # realism mode (engine/realism.py): None until something switches it on

    def subscribe(self, journal: Journal[Queue]) -> None:
        """Tell ``journal`` every change from now on, after the subscribers already there (ARCHITECTURE
        principle 7). Subscribing twice does nothing."""
        if journal not in self._subscribers:
            self._subscribers.append(journal)
            self._install()

    def unsubscribe(self, journal: Journal[Queue]) -> None:
        """Stop telling ``journal``; unknown subscribers are ignored."""
        if journal in self._subscribers:
            self._subscribers.remove(journal)
            self._install()

    def set_journal(self, journal: Journal[Queue] | None) -> None:
        """``subscribe(journal)``; None unsubscribes everyone."""
        if journal is None:
            self._subscribers.clear()
            self._install()
        else:
            self.subscribe(journal)

    def _install(self) -> None:
        """Hand the queues and the move tasks the one journal they call: the only subscriber itself, a fan-out of
        several, or None (then the engine's cost of events is one None check each)."""
        subscribers = self._subscribers
        journal: Journal[Queue] | None
        if not subscribers:
            journal = None
        elif len(subscribers) == 1:
            journal = subscribers[0]
        else:
            journal = JournalFanout(subscribers)
        self.journal = journal
        for queue in self.all_queues():
            queue.journal = journal
        self.move_tasks.on_change = journal.task_saved if journal is not None else None

    def restore_queue(
        self,
        ns: Namespace,
        name: str,
        fifo: bool,
        uid: str,
        attributes: dict[str, str],
        tags: Mapping[str, str],
        created_s: int,
        last_modified_s: int,
        last_purge_ms: int | None,
        delayed_attributes: Sequence[tuple[int, dict[str, str]]] = (),
    ) -> Queue:
        """Recreate a queue read from the durable store (attributes already validated and canonical), keeping
        its identity (``uid``, so receipt handles issued before a restart stay valid) and timestamps.
        ``delayed_attributes``: SetQueueAttributes changes answered but not yet applied (realism's
        ``attribute_delay``), ``(due epoch ms, values)``: applied when due (at once when that has passed)."""
        cls = FifoQueue if fifo else Queue
        now = self.clock.now_ms()
        queue = cls(name, ns, attributes, tags, now, self.limits, self)
        queue.uid = uid
        queue.created_s = created_s
        queue.last_modified_s = last_modified_s
        queue.last_purge_ms = last_purge_ms
        self.namespaces.setdefault(ns, {})[name] = queue
        self._install_realism(queue)
        for due, values in delayed_attributes:
            queue.delayed_attributes.append((due, dict(values)))
            self.schedule(max(due, now), self._set_late, queue)
        return queue

    # ----------------------------------------------------------------- realism mode

    def realism_controller(self) -> Realism:
        """The server's :class:`~sqsemu.engine.realism.Realism`, created (all off) on first use."""
        if self.realism is None:
            self.realism = Realism(self.clock.now_ms, lambda ns, name: self.namespaces.get(ns, {}).get(name))
        return self.realism

    def set_realism(self, spec_text: str, seed: int) -> None:
        """Make ``spec_text`` (``sqsemu.engine.realism.parse_spec``) the realism of every queue without its own
        ``sqsemu:realism`` tag, with ``seed``; every queue starts a fresh random sequence. Raises
        ``RealismSpecError`` (a ``ValueError``) for a bad spec."""
        from sqsemu.engine.realism import parse_spec

        spec = parse_spec(spec_text)
        self.realism_controller().set_default(spec, seed, self.all_queues())

    def _install_realism(self, queue: Queue) -> None:
        """Give ``queue`` its realism after it was created, restored or had its realism tag changed."""
        if self.realism is not None or REALISM_TAG in queue.tags:
            self.realism_controller().install(queue)

    @staticmethod
    def _check_realism_tag(new_tags: Mapping[str, str]) -> None:
        """A ``sqsemu:realism`` tag must hold a valid spec: else ``InvalidParameterValue`` naming the problem."""
        problem = check_tags(new_tags)
        if problem is not None:
            raise InvalidParameterValue(f"Tag {REALISM_TAG} is invalid: {problem}")

    # ----------------------------------------------------------------- scheduler (TimerDriver)

    def start(self) -> None:
        """Attach to the clock so timers fire (and let long polls wait again after a ``stop_waiting``)."""
        self.stopping = False
        self.clock.attach(self)

    def stop_waiting(self) -> None:
        """Shutdown has begun: answer every waiting long poll with no messages now, and from now on answer a
        ReceiveMessage that finds no message at once instead of waiting. Idempotent; called by the server as soon
        as it is told to stop, before it waits for open requests."""
        self.stopping = True
        for queues in self.namespaces.values():
            for queue in queues.values():
                queue.waiters.release_all()

    def close(self) -> None:
        """Detach from the clock and answer every waiting long poll with no messages."""
        self.clock.detach()
        self.stop_waiting()

    def next_due_ms(self) -> int | None:
        """The next timer deadline, epoch ms (for the clock)."""
        return self.wheel.next_due_ms()

    def run_due(self, now_ms: int) -> None:
        """Fire due timers, then serve long-poll waiters of queues where messages became visible."""
        self._in_timers = True
        try:
            self.wheel.run_due(now_ms)
        finally:
            self._in_timers = False
        self._flush(now_ms)

    # ----------------------------------------------------------------- what queues need (QueueHost)

    # ``schedule`` and ``unschedule``: the wheel's methods, set in ``__init__``.

    def mark_available(self, queue: Queue) -> None:
        """``queue`` has visible messages and waiting long polls; served at the end of the current operation."""
        self._dirty.add(queue)

    def resolve_arn(self, arn: str) -> Queue | None:
        """The queue with this ARN, or None."""
        parsed = parse_arn(arn)
        if parsed is None:
            return None
        return self.namespaces.get(parsed[0], {}).get(parsed[1])

    def _flush(self, now_ms: int) -> None:
        """Serve long polls of every queue where messages became visible during this operation.

        A hand-off that fails (``Queue.dispatch`` raised) is contained here, not passed to the caller: the hand-off
        is the waiting long poll's receive, not part of the operation that made the messages visible (a send, a
        visibility change, a timer), which is whole and journaled by then; undoing a journaled send because
        another caller's receive failed would make that send both answered-failed and durable-then-gone. The
        failed hand-off itself changed nothing (``dispatch`` gives back what it took): the messages stay visible
        for the next receive, the waiter keeps waiting. The failure is logged once with its traceback and counted
        (``handoff_failures``), and the queue is served again at the end of the next operation (not again in
        this flush, though the give-back marks it available: a failure that repeats must not spin)."""
        failed: set[Queue] = set()
        while self._dirty:
            dirty = self._dirty
            self._dirty = set()
            for queue in dirty:
                if not queue.deleted and queue not in failed:
                    try:
                        queue.dispatch(now_ms)
                    except Exception:
                        self.handoff_failures += 1
                        logger.exception("hand-off to a waiting long poll failed on queue %s", queue.arn)
                        failed.add(queue)
        self._dirty = failed  # empty but for these: served again at the end of the next operation

    # ----------------------------------------------------------------- queues

    def create_queue(
        self, ns: Namespace, name: str | None, attributes: Mapping[str, str], tags_: Mapping[str, str]
    ) -> Queue:
        """CreateQueue: a new queue, or the existing one when every supplied attribute equals its current value.

        Raises ``MissingParameter``, ``InvalidParameterValue`` (name rules, tags, dead-letter target),
        ``InvalidAttributeName``, ``InvalidAttributeValue``, ``QueueNameExists`` and (strict fidelity)
        ``QueueDeletedRecently`` (docs/behaviour.md 2.1, 5, 7.4).
        """
        if not name:
            raise MissingParameter.named("QueueName")
        fifo = str(attributes.get("FifoQueue", "")).strip().lower() == "true"
        base = name[:-5] if name.endswith(".fifo") else name
        if not _QUEUE_NAME.match(base) or len(name) > self.limits.queue_name_max_chars:
            # The name rule of the API Reference page "CreateQueue"; AWS answers with this bare text (observed): no
            # "Value ... for parameter QueueName" wrapper and no final period.
            raise InvalidParameterValue(
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
            )
        if name.endswith(".fifo") != fifo:
            reason = FIFO_NAME_RULE
            if not fifo:
                reason += " Set the FifoQueue attribute to true to create a FIFO queue."
            raise invalid_value(name, "QueueName", reason)
        supplied = queue_attributes.normalize(attributes, fifo=fifo, limits=self.limits)
        queues = self.namespaces.setdefault(ns, {})
        existing = queues.get(name)
        if existing is not None:
            existing.check_same(supplied)
            return existing
        now = self.clock.now_ms()
        if self.strict:
            deleted = self._deleted_at.get((ns, name))
            if deleted is not None and now - deleted < self.limits.recently_s * 1000:
                raise QueueDeletedRecently(
                    "You must wait 60 seconds after deleting a queue before you can create another with the same name."
                )
        if tags_:
            tags.validate_tags(tags_, {}, limits=self.limits)
            self._check_realism_tag(tags_)
        arn = f"arn:aws:sqs:{ns.region}:{ns.account_id}:{name}"
        self._check_redrive_policy(arn, fifo, supplied.get("RedrivePolicy"))
        initial = queue_attributes.defaults(self.limits, fifo=fifo)
        if supplied.get("KmsMasterKeyId"):
            initial["SqsManagedSseEnabled"] = "false"  # SSE-KMS replaces the default SSE-SQS
        initial.update(supplied)
        queue_attributes.check_combination(initial)
        cls = FifoQueue if fifo else Queue
        queue = cls(name, ns, initial, tags_, now, self.limits, self)
        queues[name] = queue
        self._install_realism(queue)
        if self.journal is not None:
            self.journal.queue_saved(queue)
        return queue

    def _check_redrive_policy(self, source_arn: str, fifo: bool, policy: str | None) -> None:
        """A RedrivePolicy must name an existing queue of the same type, account and region whose
        RedriveAllowPolicy admits ``source_arn`` (docs/behaviour.md 3.3, 3.4). The messages are this server's
        wording; AWS's exact texts are not documented (docs/behaviour.md 10.11)."""
        if not policy:
            return
        target_arn = json.loads(policy)["deadLetterTargetArn"]
        source = parse_arn(source_arn)
        target_ns = parse_arn(target_arn)
        target = self.resolve_arn(target_arn)
        if target is None or source is None or target_ns is None or target_ns[0] != source[0]:
            raise invalid_value(policy, "RedrivePolicy", "Dead-letter target does not exist.")
        if target.fifo != fifo:
            raise invalid_value(
                policy, "RedrivePolicy", "Dead-letter queue must be the same type of queue as the source queue."
            )
        allow = target.attributes.get("RedriveAllowPolicy")
        if allow:
            rule = json.loads(allow)
            permission = rule.get("redrivePermission")
            if permission == "denyAll" or (
                permission == "byQueue" and source_arn not in (rule.get("sourceQueueArns") or [])
            ):
                raise invalid_value(
                    policy,
                    "RedrivePolicy",
                    f"The RedriveAllowPolicy of {target_arn} does not allow this queue to use it "
                    "as a dead-letter queue.",
                )

    def get_queue(self, ns: Namespace, name: str) -> Queue:
        """The queue ``name`` in ``ns``, with the timers overdue by the clock fired first (:meth:`catch_up`);
        raises ``QueueDoesNotExist``."""
        if not self._in_timers:
            due = self.wheel.next_due_ms()
            if due is not None and due < self.clock.now_ms():
                self.catch_up()
        queue = self.namespaces.get(ns, {}).get(name)
        if queue is None:
            raise QueueDoesNotExist()
        return queue

    def catch_up(self) -> None:
        """Fire the timers overdue by the clock (deadline before now). The event loop may run a request before a
        timer that fell due first (both became ready in one wake-up, or the loop was busy): a call must see the
        queue as the clock has it (a FIFO receipt whose visibility timeout ran out has expired; the message is
        visible again), not as the last timer left it (docs/architecture.md, principle 3). Timers due at this very
        millisecond are left to the clock: a manual clock runs them at its next ``advance``, as before."""
        if not self._in_timers:
            now = self.clock.now_ms()
            self._in_timers = True
            try:
                self.wheel.run_due(now - 1)
            finally:
                self._in_timers = False
            self._flush(now)

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
        self.move_tasks.forget(queue)
        if self.realism is not None:
            self.realism.forget(queue)
        if self.journal is not None:
            self.journal.queue_deleted(queue)
        if self.strict:
            now = self.clock.now_ms()
            self._deleted_at = {k: t for k, t in self._deleted_at.items() if now - t < self.limits.recently_s * 1000}
            self._deleted_at[(queue.namespace, queue.name)] = now

    def all_queues(self) -> list[Queue]:
        """Every live queue of every account and region, sorted by (account id, region, name)."""
        found = [queue for queues in self.namespaces.values() for queue in queues.values()]
        found.sort(key=lambda q: (q.namespace.account_id, q.namespace.region, q.name))
        return found

    def reset(self, account_id: str | None = None) -> int:
        """Delete every queue (of ``account_id`` only, when given, in all its regions) with its messages; waiting
        long polls on them return empty. Returns how many queues were deleted. Unlike DeleteQueue, a reset leaves
        no "deleted recently" marks (strict fidelity), so the names can be used again at once."""
        doomed = [q for q in self.all_queues() if account_id is None or q.namespace.account_id == account_id]
        for queue in doomed:
            self.namespaces.get(queue.namespace, {}).pop(queue.name, None)
            queue.drop()
            self.move_tasks.forget(queue)
            if self.realism is not None:
                self.realism.forget(queue)
            if self.journal is not None:
                self.journal.queue_deleted(queue)
        for ns in [ns for ns, queues in self.namespaces.items() if not queues]:
            del self.namespaces[ns]
        self._deleted_at = {
            key: t for key, t in self._deleted_at.items() if account_id is not None and key[0].account_id != account_id
        }
        self._dirty = {q for q in self._dirty if not q.deleted}
        return len(doomed)

    def purge_queue(self, queue: Queue) -> None:
        """PurgeQueue: delete all messages, including in-flight and delayed ones (and a FIFO queue's
        deduplication history). Strict fidelity: ``PurgeQueueInProgress`` within 60 s of the last purge."""
        now = self.clock.now_ms()
        recent = queue.last_purge_ms is not None and now - queue.last_purge_ms < self.limits.recently_s * 1000
        if self.strict and recent:
            raise PurgeQueueInProgress(f"Only one PurgeQueue operation on {queue.name} is allowed every 60 seconds.")
        queue.purge(now)
        if self.journal is not None:
            self.journal.queue_purged(queue)

    def get_queue_attributes(self, queue: Queue, names: Sequence[str]) -> dict[str, str]:
        """GetQueueAttributes; ``names`` empty gives ``{}``. Raises ``InvalidAttributeName``. With realism's
        ``attribute_delay`` the ApproximateNumberOf* counts come from a snapshot at most that old (docs/realism.md).
        """
        names = list(names)
        queue_attributes.check_names(names)
        values = queue.get_attributes(names)
        realism = queue.realism
        if realism is not None and realism.attribute_delay_ms:
            realism.lag_counts(queue, values, self.clock.now_ms())
        return values

    def set_queue_attributes(self, queue: Queue, attributes: Mapping[str, str]) -> None:
        """SetQueueAttributes. Raises ``InvalidAttributeName`` and ``InvalidAttributeValue``. With realism's
        ``attribute_delay`` the change is validated now and applied that many seconds later (docs/realism.md; API
        Reference, "SetQueueAttributes": changes can take up to 60 seconds to propagate)."""
        values = queue_attributes.normalize(attributes, fifo=queue.fifo, limits=self.limits)
        queue_attributes.check_combination({**queue.attributes, **values})
        self._check_redrive_policy(queue.arn, queue.fifo, values.get("RedrivePolicy"))
        now = self.clock.now_ms()
        realism = queue.realism
        if realism is not None and realism.attribute_delay_ms:
            realism.injected.delayed_changes += 1
            due = now + realism.attribute_delay_ms
            queue.delayed_attributes.append((due, dict(values)))
            self.schedule(due, self._set_late, queue)
            self._saved(queue)  # the answered change is journaled (durable mode: on disk before the answer)
            return
        queue.set_attributes(values, now)
        self._saved(queue)
        self._flush(now)

    def _set_late(self, queue: Queue, due_ms: int) -> None:
        """Timer (realism ``attribute_delay``): apply the SetQueueAttributes changes of ``queue`` that are due by
        ``due_ms`` (validated ``attribute_delay`` earlier), in the order they were made, unless the queue was
        deleted since."""
        pending = queue.delayed_attributes
        if queue.deleted or not pending or pending[0][0] > due_ms:
            return
        while pending and pending[0][0] <= due_ms:
            due, values = pending.pop(0)
            queue.set_attributes(values, due)
        self._saved(queue)

    def _saved(self, queue: Queue) -> None:
        if self.journal is not None:
            self.journal.queue_saved(queue)

    def list_dead_letter_source_queues(self, queue: Queue) -> list[Queue]:
        """Queues of ``queue``'s namespace whose RedrivePolicy targets it, sorted by name."""
        return [q for q in self.list_queues(queue.namespace, None) if q.redrive and q.redrive[0] == queue.arn]

    def is_dead_letter_queue(self, queue: Queue) -> bool:
        """Whether some queue names ``queue`` as its dead-letter queue."""
        return any(q.redrive and q.redrive[0] == queue.arn for q in self.namespaces.get(queue.namespace, {}).values())

    # ----------------------------------------------------------------- tags and permissions

    def tag_queue(self, queue: Queue, new_tags: Mapping[str, str]) -> None:
        """TagQueue: merge ``new_tags`` (same key overwrites). Raises ``MissingParameter``/``InvalidParameterValue``."""
        if not new_tags:
            raise MissingParameter.named("Tags")
        tags.validate_tags(new_tags, queue.tags, limits=self.limits)
        self._check_realism_tag(new_tags)
        queue.tags.update(new_tags)
        if REALISM_TAG in new_tags:
            self._install_realism(queue)
        self._saved(queue)

    def untag_queue(self, queue: Queue, keys: Sequence[str]) -> None:
        """UntagQueue: remove ``keys``; unknown keys are ignored."""
        if not keys:
            raise MissingParameter.named("TagKeys")
        tags.validate_tag_keys(keys, limits=self.limits)
        for key in keys:
            queue.tags.pop(key, None)
        if self.realism is not None and REALISM_TAG in keys:
            self.realism.install(queue)
        self._saved(queue)

    def list_queue_tags(self, queue: Queue) -> dict[str, str]:
        """ListQueueTags."""
        return dict(queue.tags)

    def add_permission(
        self, queue: Queue, label: str | None, account_ids: Sequence[str], actions: Sequence[str]
    ) -> None:
        """AddPermission: add a statement to the queue's Policy (docs/behaviour.md 2.16, 3.5)."""
        policy = permissions.add_statement(
            queue.attributes.get("Policy"), queue.arn, label, account_ids, actions, limits=self.limits
        )
        queue.set_attributes({"Policy": policy}, self.clock.now_ms())
        self._saved(queue)

    def remove_permission(self, queue: Queue, label: str | None) -> None:
        """RemovePermission: drop the statement ``label``; the last one takes the Policy attribute with it."""
        policy = permissions.remove_statement(queue.attributes.get("Policy"), label)
        queue.set_attributes({"Policy": policy or ""}, self.clock.now_ms())
        self._saved(queue)

    # ----------------------------------------------------------------- message move tasks

    def start_message_move_task(
        self, ns: Namespace, source_arn: str | None, destination_arn: str | None, max_per_second: int | None
    ) -> str:
        """StartMessageMoveTask → TaskHandle (docs/behaviour.md 2.21, 6.3)."""
        return self.move_tasks.start(source_arn, destination_arn, max_per_second, ns.account_id)

    def cancel_message_move_task(self, ns: Namespace, task_handle: str | None) -> int:
        """CancelMessageMoveTask → ApproximateNumberOfMessagesMoved (docs/behaviour.md 2.22)."""
        return self.move_tasks.cancel(task_handle, ns.account_id)

    def list_message_move_tasks(
        self, ns: Namespace, source_arn: str | None, max_results: int | None
    ) -> list[dict[str, Any]]:
        """ListMessageMoveTasks → result entries in JSON-model form, newest first (docs/behaviour.md 2.23)."""
        return self.move_tasks.list(source_arn, max_results, ns.account_id)

    # ----------------------------------------------------------------- messages

    def send_message(self, queue: Queue, entry: SendEntry, sender_id: str) -> Message:
        """SendMessage; returns the message to answer with: the stored message (for a plain message kept cold, the
        object it was made as: the queue keeps its bytes, ``Queue.cold``), or for a FIFO duplicate inside the
        deduplication interval an unstored message carrying the original's MessageId and SequenceNumber (API
        Reference, "SendMessage"). Raises what ``Queue.send`` raises."""
        now = self.clock.now_ms()
        message = queue.send(entry, sender_id, now)
        self._flush(now)
        return message

    def send_message_batch(
        self, queue: Queue, entries: Sequence[SendEntry], sender_id: str
    ) -> list[Message | SQSError]:
        """SendMessageBatch; one outcome per entry, in order (docs/behaviour.md 2.8)."""
        now = self.clock.now_ms()
        results = queue.send_batch(entries, sender_id, now)
        self._flush(now)
        return results

    async def receive_message(
        self,
        queue: Queue,
        *,
        max_number_of_messages: int | None = None,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        receive_request_attempt_id: str | None = None,
        disconnected: asyncio.Future[None] | Callable[[], asyncio.Future[None]] | None = None,
    ) -> list[Received]:
        """ReceiveMessage: visible messages now, or (long poll) the first to become visible within the wait.

        The journal hears how many messages the call ended with (``messages_received``; 0 is an empty receive).
        ``wait_time_seconds`` None uses the queue's ReceiveMessageWaitTimeSeconds. Waiters are served in arrival
        order. If ``disconnected`` completes first, the waiter leaves and takes no message; given as a function, it
        is called (to start watching the client) only when the call has to wait, so a receive that finds messages at
        once costs no watch. Once the server is stopping (``stop_waiting``) nothing waits: the call answers with what
        is there now. With realism's ``short_poll_sampling`` a short poll leaves each visible message out with that
        probability. Raises
        ``InvalidParameterValue`` for out-of-range numbers (docs/behaviour.md 2.9, 4.4).
        """
        max_number, visibility, wait = queue.receive_parameters(
            max_number_of_messages, visibility_timeout, wait_time_seconds
        )
        now = self.clock.now_ms()
        replay = queue.replay_attempt(receive_request_attempt_id, now, visibility)
        if replay is not None:
            if self.journal is not None:
                self.journal.messages_received(queue, len(replay))
            return replay
        if wait == 0:
            queue.check_in_flight_quota()
        realism = queue.realism
        moving: list[Message] = []  # set aside for the dead-letter queue: moved last, once nothing else can fail
        if wait == 0 and realism is not None and realism.samples:
            got = realism.receive(queue, now, max_number, visibility, now, moving, short_poll=True)
        else:
            got = queue.receive(now, max_number, visibility, now, moving)
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        try:
            self._flush(now)
            if fault is not None:
                fault("receive.flushed")
            answer = bool(got) or wait == 0 or queue.deleted or self.stopping
            if answer:
                queue.record_attempt(receive_request_attempt_id, got, now)
                if fault is not None:
                    fault("receive.recorded")
            queue.move_dead_lettered(moving, now)
        except BaseException:
            queue.give_back(got, now, moving)  # the answer never leaves: as if not received, nothing moved
            queue.forget_attempt(receive_request_attempt_id)
            raise
        if answer:
            if self.journal is not None:
                self.journal.messages_received(queue, len(got))
            return got
        if callable(disconnected):
            disconnected = disconnected()
        future: asyncio.Future[list[Received]] = asyncio.get_running_loop().create_future()
        waiter = Waiter(future, max_number, visibility, now, disconnected)
        queue.waiters.add(waiter)
        due = now + wait * 1000
        # One tuple object, made once: the wheel finds the entry to drop by identity (compiled, a value typed as a
        # tuple is a native one, boxed anew at each call).
        timer: object = (queue, waiter)
        self.wheel.schedule(due, self._waiter_due, timer)
        # A disconnect answers the waiter with nothing; the call awaits only its own future, so a waiter handed
        # messages resumes on the loop's next iteration (``asyncio.wait`` would take one more).
        if disconnected is not None:

            def gone(_disconnected: asyncio.Future[None]) -> None:
                if not future.done():
                    future.set_result([])

            disconnected.add_done_callback(gone)
        try:
            got = await future
            if receive_request_attempt_id is not None:  # else nothing is recorded: no clock read on the wake path
                queue.record_attempt(receive_request_attempt_id, got, self.clock.now_ms())
            if self.journal is not None:
                self.journal.messages_received(queue, len(got))
            return got
        finally:
            queue.waiters.remove(waiter)
            if not future.done():
                future.cancel()
            # The timer lets the waiter go now: it would otherwise keep the answer's messages (the future's result)
            # alive until the wait's deadline, up to 20 s after they were received and deleted.
            self.wheel.drop(due, timer)

    @staticmethod
    def _waiter_due(arg: tuple[Queue, Waiter], _due: int) -> None:
        queue, waiter = arg
        queue.waiters.remove(waiter)
        if not waiter.future.done():
            waiter.future.set_result([])

    def delete_message(self, queue: Queue, receipt_handle: str | None) -> None:
        """DeleteMessage (docs/behaviour.md 2.10)."""
        queue.delete(receipt_handle)
        self._flush(self.clock.now_ms())

    def delete_message_batch(self, queue: Queue, entries: Sequence[ReceiptEntry]) -> list[SQSError | None]:
        """DeleteMessageBatch; per entry None or its error (docs/behaviour.md 2.11)."""
        results = queue.delete_batch(entries)
        self._flush(self.clock.now_ms())
        return results

    def change_message_visibility(
        self, queue: Queue, receipt_handle: str | None, visibility_timeout: int | None
    ) -> None:
        """ChangeMessageVisibility (docs/behaviour.md 2.12, 4.1)."""
        now = self.clock.now_ms()
        queue.change_visibility(receipt_handle, visibility_timeout, now)
        self._flush(now)

    def change_message_visibility_batch(self, queue: Queue, entries: Sequence[ReceiptEntry]) -> list[SQSError | None]:
        """ChangeMessageVisibilityBatch; per entry None or its error (docs/behaviour.md 2.13)."""
        now = self.clock.now_ms()
        results = queue.change_visibility_batch(entries, now)
        self._flush(now)
        return results
