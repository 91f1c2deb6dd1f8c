"""Realism mode: make SQS's documented weak guarantees happen on purpose, reproducibly (docs/realism.md).

Off by default. When it is off, the engine pays one ``None`` check per hook (``Queue.realism``,
``Broker.realism``). When on, every queue it applies to gets a :class:`QueueRealism`: its effective
:class:`RealismSpec` and its own ``random.Random``, seeded from ``(seed, region, queue name)`` so neither the order
queues are created in nor the traffic of other queues changes a queue's decisions. The same seed and the same
sequence of calls (with the manual clock) give the same deliveries, bit for bit.

The effects (each a probability in [0, 1] unless said otherwise), and the AWS documentation they model:

- ``duplicates``: a receive marks its delivery with probability p; when that message is deleted, a copy stays and is
  visible at once, so it is delivered once more (new receipt handle, ApproximateReceiveCount counting every
  delivery); deleting that delivery removes it. Developer Guide, "Amazon SQS standard queues" (at-least-once
  delivery: a copy on a server that was unavailable is not deleted, and you get it again).
- ``reorder`` with ``reorder_window`` = N (2..1000, default 10): each pick of a receive is, with probability p, taken
  from the next N visible messages other than the oldest. Developer Guide, "Amazon SQS standard queues"
  (best-effort ordering).
- ``short_poll_sampling``: a short poll (WaitTimeSeconds=0) leaves each visible message out with probability p, so
  it can answer empty while messages wait; long polls see every message. Developer Guide, "Amazon SQS short and long
  polling".
- ``lost_answers``: a call on the queue runs, then its connection is dropped without an answer (the HTTP layer
  asks :meth:`Realism.lose_answer`). API Reference, "SendMessage" / "DeleteMessage" retry guidance; Developer Guide,
  "Amazon SQS standard queues" (design applications to be idempotent).
- ``attribute_delay`` = seconds (0..60, millisecond resolution): SetQueueAttributes takes effect that long after
  the call, and GetQueueAttributes' approximate counts come from a snapshot refreshed at most that often. API
  Reference, "SetQueueAttributes" (changes can take up to 60 seconds to propagate) and "GetQueueAttributes"
  (the ApproximateNumberOf* values are approximate).

FIFO queues keep every guarantee AWS makes for them: only ``lost_answers`` and ``attribute_delay`` apply to them
(a retried send is deduplicated, a retried delete is harmless); ``duplicates``, ``reorder`` and
``short_poll_sampling`` are left out of a FIFO queue's effective spec.

This module is pure: no clock calls (``now_ms`` is injected), no I/O. It plugs into a queue through the public
receive steps the queue owns (``engine/delivery.py``: ``next_candidate``, ``deliver``, ``dead_letter_if_due``,
``requeue``, ``make_visible_now``), so a fair queue's order applies in realism mode too, and it never imports the
queue module (docs/architecture.md, principles 12 and 13).
"""

from __future__ import annotations

import base64
import binascii
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sqsemu.engine import faultpoints
from sqsemu.engine.delivery import DeliverySteps, Received
from sqsemu.engine.message import Message, MessageState
from sqsemu.realismspec import (
    EFFECTS,
    OFF,
    RealismSpec,
    RealismSpecError,
    parse_spec,
)

__all__ = [
    "EFFECTS",
    "OFF",
    "REALISM_TAG",
    "QueueRealism",
    "Realism",
    "RealismSpec",
    "RealismSpecError",
    "parse_spec",
]

REALISM_TAG = "sqsemu:realism"
"""The queue tag whose value is a queue's own realism spec (replacing the server's for that queue)."""
VISIBLE, IN_FLIGHT = MessageState.VISIBLE, MessageState.IN_FLIGHT


class _HasRegion(Protocol):
    @property
    def region(self) -> str: ...


class RealismQueue(DeliverySteps, Protocol):
    """What realism needs of a queue: its receive steps (``DeliverySteps``) and what picks its spec and seed."""

    realism: QueueRealism | None

    @property
    def name(self) -> str: ...

    @property
    def fifo(self) -> bool: ...

    @property
    def deleted(self) -> bool: ...

    @property
    def tags(self) -> Mapping[str, str]: ...

    @property
    def namespace(self) -> _HasRegion: ...


def receipt_serial(receipt_handle: str | None) -> int:
    """The receipt serial number inside a receipt handle this server issued (``Queue.receipt_handle``), or -1."""
    try:
        serial = base64.urlsafe_b64decode((receipt_handle or "").encode()).decode().rsplit(":", 1)[1]
    except (ValueError, IndexError, binascii.Error, UnicodeError):
        return -1
    return int(serial) if serial.isascii() and serial.isdigit() and len(serial) <= 19 else -1


class Mark:
    """What realism did to one message: ``pending`` (its current delivery will leave a copy when deleted),
    ``copy`` (it is that copy; ``floor`` is the newest receipt serial of the deleted delivery, whose handles the
    copy ignores), ``reordered`` (its latest delivery was taken out of send order)."""

    __slots__ = ("pending", "copy", "floor", "reordered")

    def __init__(self) -> None:
        self.pending = False
        self.copy = False
        self.floor = 0
        self.reordered = False

    def labels(self) -> list[str]:
        """``["duplicate_pending" | "duplicate", "reordered"]`` as they apply (peek, the console)."""
        out = []
        if self.pending:
            out.append("duplicate_pending")
        if self.copy:
            out.append("duplicate")
        if self.reordered:
            out.append("reordered")
        return out


@dataclass
class Injected:
    """How many times each effect fired on a queue since its realism was (re)installed."""

    duplicates: int = 0
    reordered: int = 0
    sampled_out: int = 0
    lost_answers: int = 0
    delayed_changes: int = 0


def queue_seed(seed: int, region: str, name: str) -> str:
    """The seed of one queue's ``random.Random``: the server seed with the queue's region and name (a string seed
    is hashed with SHA-512 by ``random.Random``, the same on every run and platform)."""
    return f"sqsemu-realism:{seed}:{region}:{name}"


class QueueRealism:
    """The realism of one queue: its effective ``spec``, its seeded ``rng``, the marks it left and counters.

    ``now_ms`` is the injected clock (epoch ms). Every decision draws from ``rng`` in call order.
    """

    def __init__(self, spec: RealismSpec, rng: random.Random, now_ms: Callable[[], int], own: bool) -> None:
        self.spec = spec
        self.rng = rng
        self.now_ms = now_ms
        self.own = own  # the queue's own spec (its tag) rather than the server's
        self.marks: dict[str, Mark] = {}
        self.injected = Injected()
        self.attribute_delay_ms = int(round(spec.attribute_delay * 1000))
        self.samples = spec.short_poll_sampling > 0
        self._prune_at = 1024
        self._snapshot: tuple[int, int, int] | None = None
        self._snapshot_ms = 0

    def _mark(self, message_id: str) -> Mark:
        mark = self.marks.get(message_id)
        if mark is None:
            mark = self.marks[message_id] = Mark()
        return mark

    def _prune(self, queue: RealismQueue) -> None:
        """Forget marks of messages no longer in ``queue`` (expired, purged, dead-lettered)."""
        if len(self.marks) < self._prune_at:
            return
        stored = {message.message_id for message in queue.stored()}
        self.marks = {key: mark for key, mark in self.marks.items() if key in stored}
        self._prune_at = max(1024, 2 * len(self.marks))

    def labels(self, message: Message) -> list[str]:
        """The realism labels of ``message`` (see :meth:`Mark.labels`); ``[]`` when realism did nothing to it."""
        mark = self.marks.get(message.message_id)
        return mark.labels() if mark is not None else []

    # ----------------------------------------------------------------- receive

    def receive(
        self,
        queue: RealismQueue,
        now_ms: int,
        max_number: int,
        visibility_timeout: int,
        request_ms: int,
        moving: list[Message],
        short_poll: bool = False,
    ) -> list[Received]:
        """``Queue.receive`` of a standard queue with ``reorder``, ``short_poll_sampling`` (only when
        ``short_poll``) and ``duplicates`` applied; same arguments and result (see ``Queue.receive``). All or
        nothing: a receive that raises leaves the queue's order, the messages and their realism marks as they were
        (the counts of effects injected excepted: they count attempts)."""
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        spec = self.spec
        rng = self.rng
        sampling = spec.short_poll_sampling if short_poll else 0.0
        reorder, window = spec.reorder, spec.reorder_window
        max_number = min(max_number, queue.in_flight_limit - queue.counts[IN_FLIGHT])
        out: list[Received] = []
        pending: list[Message] = []  # visible candidates taken off the queue's order, oldest first
        put_back: list[Message] = []
        exhausted = False

        def pull() -> bool:
            nonlocal exhausted
            while not exhausted:
                candidate = queue.next_candidate()
                if candidate is None:
                    exhausted = True
                    return False
                if candidate.state is VISIBLE:
                    pending.append(candidate)
                    return True
            return False

        marked: list[tuple[Message, Mark | None, bool, bool]] = []  # each mark touched, as it was before
        try:
            while len(out) < max_number:
                if not pending and not pull():
                    break
                index = 0
                if reorder and rng.random() < reorder:
                    while len(pending) < window and pull():
                        pass
                    if len(pending) > 1:
                        index = rng.randrange(1, len(pending))
                message = pending.pop(index)
                if sampling and rng.random() < sampling:
                    put_back.append(message)  # on a server this short poll did not sample
                    self.injected.sampled_out += 1
                    continue
                if queue.dead_letter_if_due(message, now_ms, moving):
                    continue
                out.append((message, queue.deliver(message, now_ms, visibility_timeout, request_ms)))
                if not visibility_timeout:
                    put_back.append(message)
                if fault is not None:
                    fault("realism.delivered")
                mark = self.marks.get(message.message_id)
                marked.append(
                    (message, mark, False, False) if mark is None else (message, mark, mark.reordered, mark.pending)
                )
                if index:
                    mark = mark or self._mark(message.message_id)
                    mark.reordered = True
                    self.injected.reordered += 1
                elif mark is not None:
                    mark.reordered = False
                if spec.duplicates and (mark is None or not (mark.pending or mark.copy)):
                    if rng.random() < spec.duplicates:
                        (mark or self._mark(message.message_id)).pending = True
                if fault is not None:
                    fault("realism.marked")
        except BaseException:
            for message, before, reordered, duplicate in reversed(marked):
                if before is None:
                    self.marks.pop(message.message_id, None)
                else:
                    before.reordered, before.pending = reordered, duplicate
            queue.give_back(out, now_ms, moving)
            for message in pending + put_back:
                queue.requeue(message)
            raise
        for message in pending:
            queue.requeue(message)
        for message in put_back:
            queue.requeue(message)
        self._prune(queue)
        return out

    # ----------------------------------------------------------------- delete

    def keep_on_delete(self, queue: RealismQueue, message: Message, receipt_handle: str | None) -> bool:
        """DeleteMessage of ``message`` (a standard queue): True when a copy stays. A delivery marked for a
        duplicate leaves the message visible at once as its copy; a receipt handle of that deleted delivery
        (serial up to the copy's ``floor``) then deletes nothing (the copy lives on another server). Otherwise
        False: the caller deletes the message."""
        mark = self.marks.get(message.message_id)
        if mark is None:
            return False
        if mark.pending:
            mark.pending = False
            mark.copy = True
            mark.floor = message.receipt_serial
            queue.make_visible_now(message, self.now_ms())
            self.injected.duplicates += 1
            return True
        if mark.copy and receipt_serial(receipt_handle) <= mark.floor:
            return True
        del self.marks[message.message_id]
        return False

    # ----------------------------------------------------------------- lost answers, attributes, counts

    def lose_answer(self) -> bool:
        """Whether the answer of a call on this queue is lost (probability ``lost_answers``)."""
        p = self.spec.lost_answers
        if p and self.rng.random() < p:
            self.injected.lost_answers += 1
            return True
        return False

    def lag_counts(self, queue: RealismQueue, values: dict[str, str], now_ms: int) -> None:
        """Replace the ApproximateNumberOf* values in ``values`` (a GetQueueAttributes answer) with a snapshot of
        the counts taken at most ``attribute_delay`` seconds ago."""
        if self._snapshot is None or now_ms - self._snapshot_ms >= self.attribute_delay_ms:
            counts = queue.counts
            self._snapshot = (counts[VISIBLE], counts[IN_FLIGHT], counts[MessageState.DELAYED])
            self._snapshot_ms = now_ms
        visible, in_flight, delayed = self._snapshot
        for name, value in (
            ("ApproximateNumberOfMessages", visible),
            ("ApproximateNumberOfMessagesNotVisible", in_flight),
            ("ApproximateNumberOfMessagesDelayed", delayed),
        ):
            if name in values:
                values[name] = str(value)


class Realism:
    """The server's realism: its default spec and seed, and the :class:`QueueRealism` of each queue.

    ``now_ms`` is the injected clock; ``find`` looks a queue up by (namespace, name) (``None`` if there is none).
    ``lossy`` is True while some queue has ``lost_answers`` on (the HTTP layer checks it before asking).
    """

    def __init__(self, now_ms: Callable[[], int], find: Callable[[Any, str], RealismQueue | None]) -> None:
        self.now_ms = now_ms
        self.find = find
        self.default = RealismSpec()
        self.default_text = OFF
        self.seed = 0
        self.lossy = False
        self._lossy_queues: set[RealismQueue] = set()

    def set_default(self, spec: RealismSpec, seed: int, queues: Iterable[RealismQueue]) -> None:
        """Make ``spec`` the server's default with ``seed``, and reinstall every queue of ``queues`` (each starts
        a fresh random sequence)."""
        self.default = spec
        self.default_text = spec.text()
        self.seed = seed
        for queue in queues:
            self.install(queue)

    def spec_for(self, queue: RealismQueue) -> tuple[RealismSpec, bool]:
        """``(effective spec, own)`` of ``queue``: its tag's spec when it has one (own), else the default; FIFO
        queues keep only ``FIFO_EFFECTS``. A tag that does not parse (restored from an older server) is off."""
        text = queue.tags.get(REALISM_TAG)
        own = text is not None
        try:
            spec = parse_spec(text) if text is not None else self.default
        except RealismSpecError:
            spec = RealismSpec()
        return (spec.for_fifo() if queue.fifo else spec), own

    def install(self, queue: RealismQueue) -> None:
        """Give ``queue`` its :class:`QueueRealism` (a fresh one, new random sequence), or None when nothing
        applies; keep ``lossy`` up to date."""
        spec, own = self.spec_for(queue)
        if spec.active and not queue.deleted:
            ns = queue.namespace
            rng = random.Random(queue_seed(self.seed, ns.region, queue.name))
            queue.realism = QueueRealism(spec, rng, self.now_ms, own)
        else:
            queue.realism = None
        if queue.realism is not None and spec.lost_answers:
            self._lossy_queues.add(queue)
        else:
            self._lossy_queues.discard(queue)
        self.lossy = bool(self._lossy_queues)

    def forget(self, queue: RealismQueue) -> None:
        """``queue`` was deleted."""
        queue.realism = None
        self._lossy_queues.discard(queue)
        self.lossy = bool(self._lossy_queues)

    def lose_answer(self, ns: object, name: str | None) -> bool:
        """Whether the answer of a call that addressed queue ``name`` of ``ns`` (and ran) is lost."""
        if name is None:
            return False
        queue = self.find(ns, name)
        realism = queue.realism if queue is not None else None
        return realism is not None and realism.lose_answer()

    def state(self) -> dict[str, Any]:
        """``{"spec": text, "effects": {...}, "seed": int}`` of the server default (admin routes)."""
        return {"spec": self.default_text, "effects": self.default.as_dict(), "seed": self.seed}


def check_tags(tags: Mapping[str, str]) -> str | None:
    """Why the ``sqsemu:realism`` tag among ``tags`` is not a valid spec (the message), or None."""
    text = tags.get(REALISM_TAG)
    if text is None:
        return None
    try:
        parse_spec(text)
    except RealismSpecError as exc:
        return str(exc)
    return None
