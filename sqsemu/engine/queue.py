"""A standard queue as a synchronous state machine: every method takes ``now`` (epoch ms) and never awaits.

Every message stored as an object is in ``by_age`` (or, dead-lettered behind newer ones, ``late``); ``received``
indexes by MessageId those received at least once, which are all that a receipt handle can name (a backlog never
received costs no index entry and no text of its id; ``messages`` is a read-only view of all messages, by id, in
arrival order, for the admin API, the console and tests). A plain message waiting since its send in a standard
queue, behind a backlog of ``cold_after`` visible messages, is kept without an object at all: as bytes in ``cold``
(its body, digest and id with its send time, place and sender behind them), made a ``Message`` when a receive takes
it or a move task or the fair-queue bookkeeping needs the queue's objects (``_thaw_all``); views read it as an
object made for them (``snapshot``, ``find``). Each message has one ``visible_at_ms``; its ``state`` says whether it
is delayed, visible or in flight. Visible messages are handed out oldest first, by their place in the queue's
enqueue order (``Message.order``), whenever they became visible: a message whose visibility timeout runs out is
received before messages sent after it, as AWS was recorded to do. Two structures keep that order without searching:
``ready``, a deque of messages in rising order (a fresh send is always the newest), and ``returned``, a heap of
messages that became visible again behind newer ones (visibility expiry, the end of a delay); ``cold`` is in rising
order too. A receive takes the lowest head of the three. A message leaving the visible state stays where it is and
is skipped when reached. Timers (delay end, visibility expiry, retention) go to the broker's timer wheel through
``schedule``; a timer whose deadline no longer matches is ignored.

Behaviour follows the SQS Developer Guide ("Amazon SQS visibility timeout", "Amazon SQS delay queues", "Amazon SQS
message timers", "Amazon SQS short and long polling") and the API Reference as summarised in docs/behaviour.md
sections 2 to 4.
"""

from __future__ import annotations

import binascii
import heapq
import itertools
import json
import logging
import secrets
import struct
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from sqsemu.engine import attributes as queue_attributes
from sqsemu.engine import faultpoints
from sqsemu.engine.delivery import Received
from sqsemu.engine.errors import (
    BatchRequestTooLong,
    InternalError,
    InvalidParameterValue,
    MissingParameter,
    OverLimit,
    QueueNameExists,
    ReceiptHandleIsInvalid,
    SQSError,
    invalid_value,
)
from sqsemu.engine.events import AddReason, DeleteReason, Journal
from sqsemu.engine.fair import FairQueue, FairSnapshot
from sqsemu.engine.limits import Limits
from sqsemu.engine.message import (
    ID_IN_DATA,
    NEW_ID,
    NO_ATTRIBUTES,
    NO_EXTRAS,
    TAIL_BYTES,
    Message,
    MessageState,
    ReceiptEntry,
    SendEntry,
    id_bytes,
)
from sqsemu.engine.stored import StoredMessages
from sqsemu.engine.validation import (
    attribute_bytes,
    check_batch,
    check_body,
    check_message_attributes,
    check_range,
    check_system_attributes,
    check_token,
)
from sqsemu.engine.waiters import WaiterLine

if TYPE_CHECKING:
    from sqsemu.engine.realism import QueueRealism

DELAYED, VISIBLE, IN_FLIGHT, DELETED = (
    MessageState.DELAYED,
    MessageState.VISIBLE,
    MessageState.IN_FLIGHT,
    MessageState.DELETED,
)
Schedule = Callable[[int, Callable[[Any, int], None], Any], None]
_COMPACT_MIN = 64  # deleted messages (bodies included) the age order may hold beyond as many as it holds live
logger = logging.getLogger("sqsemu.engine")
# Receipt handles are URL-safe base64 (as base64.urlsafe_b64encode / urlsafe_b64decode write and read them), done
# with binascii directly: the base64 module's wrappers cost a few microseconds per message of a round trip.
_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
_HANDLE_MEMO_LIMIT = 4096
_handle_parts: dict[str, tuple[str, str, int]] = {}
"""The receipt handles this process issued most recently, with what :meth:`Queue._message_for` reads out of each
(its queue's uid, the MessageId, the serial): the DeleteMessage or ChangeMessageVisibility of a message received a
moment ago skips decoding its handle (base64, UTF-8, a split, an int: about 5,000 instructions). A memo of that pure
reading, nothing more: every check after it is made as for a decoded handle. At most 4,096 handles (about 1 MB; the
memo is emptied when full)."""
_late_order = itertools.count()
# A cold message (``Queue.cold``) is its ``Message.data`` followed by this many bytes: the send time (epoch ms) and
# the place in the queue's order, 8 bytes each, big-endian, and the sender's index in ``Queue.senders`` (one byte).
_COLD_FIELDS = struct.Struct(">qqB")
_COLD = _COLD_FIELDS.size  # 17
_COLD_INT = struct.Struct(">q")
_SENDERS_MAX = 256
COLD_AFTER = 1024
"""Visible messages a standard queue keeps as objects before it keeps new plain ones cold (``Queue.cold_after``):
a short queue is served without making each message twice, a backlog costs about 100 bytes a message above its
body (docs/performance-compiled.md, "RSS per stored 1 KiB message")."""


def _cold_sent_ms(entry: bytes) -> int:
    sent_ms: int = _COLD_INT.unpack_from(entry, len(entry) - _COLD)[0]
    return sent_ms


def _cold_order(entry: bytes) -> int:
    order: int = _COLD_INT.unpack_from(entry, len(entry) - 9)[0]
    return order


class QueueHost(Protocol):
    """What a queue needs from its broker: timers, waking long polls, finding a queue by ARN."""

    def schedule(self, due_ms: int, callback: Callable[[Any, int], None], arg: Any) -> None:
        """Run ``callback(arg, due_ms)`` at ``due_ms`` (epoch ms)."""

    def unschedule(self, due_ms: int, arg: Any) -> bool:
        """Let a timer scheduled for ``arg`` at ``due_ms`` go (best effort: one not let go does nothing when due,
        its callback checks); whether one was let go."""

    def mark_available(self, queue: Queue) -> None:
        """``queue`` has visible messages and waiting long polls: serve them soon."""

    def resolve_arn(self, arn: str) -> Queue | None:
        """The live queue with this ARN, or None."""

    @property
    def journal(self) -> Journal[Queue] | None:
        """The subscriber to changes, or None (in memory)."""


class Namespace:
    """An account in a region; queue names are unique within one. Hashable, immutable."""

    __slots__ = ("account_id", "region", "_hash")

    def __init__(self, account_id: str, region: str) -> None:
        self.account_id = account_id
        self.region = region
        self._hash = hash((account_id, region))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Namespace) and other.account_id == self.account_id and other.region == self.region

    def __repr__(self) -> str:
        return f"Namespace({self.account_id!r}, {self.region!r})"


class QueueHandle:
    """What a long-lived timer holds instead of its queue: ``queue`` until the queue is deleted, then None, so a
    deleted queue is not kept alive until the timer's deadline (days ahead for retention). A plain reference cleared
    by ``Queue.drop``, not a weak reference: compiled (mypyc) classes take no weak references."""

    __slots__ = ("queue",)

    def __init__(self, queue: Queue) -> None:
        self.queue: Queue | None = queue

    def message_due(self, message: Message, due_ms: int) -> None:
        """Timer: a message's delay or visibility timeout ended (``Queue._on_due``), while the queue is alive. The
        queue keeps one bound method of this for all its messages' timers (``Queue._due``), not one per timer."""
        queue = self.queue
        if queue is not None:
            queue._on_due(message, due_ms)


def _arrival(message: Message) -> int:
    return message.order


def _entry_fault(action: str, queue: Queue, exc: Exception) -> SQSError:
    """A batch entry that failed unexpectedly (it left no trace): logged with its traceback, answered as AWS answers
    a server-side failure of one entry (``InternalError``, ``SenderFault`` false), which SDKs retry."""
    logger.error("%s: an entry failed on queue %s and was answered InternalError", action, queue.arn, exc_info=exc)
    return InternalError("We encountered an internal error. Please try again.")


def _retention_timer(arg: tuple[QueueHandle, int], fired_ms: int) -> None:
    """Timer: the retention check of a queue still alive (``Queue._on_retention``)."""
    queue = arg[0].queue
    if queue is not None:
        queue._on_retention(arg[1], fired_ms)


class Queue:
    """One standard queue.

    ``attributes`` holds the settable attributes in canonical string form; the hot ones are mirrored as integers
    (``visibility_timeout`` seconds, ``delay_seconds`` seconds, ``retention_s`` seconds, ``max_message_size``
    bytes, ``wait_time_s`` seconds). ``counts`` is indexed by ``MessageState``.
    """

    fifo = False

    def __init__(
        self,
        name: str,
        namespace: Namespace,
        attributes: dict[str, str],
        tags: Mapping[str, str],
        now_ms: int,
        limits: Limits,
        host: QueueHost,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.arn = f"arn:aws:sqs:{namespace.region}:{namespace.account_id}:{name}"
        self.uid = secrets.token_hex(4)
        self.limits = limits
        self.tags = dict(tags)
        self.created_s = now_ms // 1000
        self.last_modified_s = self.created_s
        self.deleted = False
        self.received: dict[str, Message] = {}  # by MessageId: the stored messages received at least once
        # Visible messages never received, kept as bytes (``_freeze``), in rising ``order`` and send time; counted
        # as visible; in neither ``by_age`` nor ``ready``. Empty on FIFO and fair queues and in realism mode.
        self.cold: deque[bytes] = deque()
        self.senders: list[str] = []  # the SenderIds of cold messages, by the index their last byte holds
        self._sender_index: dict[str, int] = {}
        self._cold_newest_ms = 0  # the send time of the newest cold message
        self.cold_after = COLD_AFTER
        self.ready: deque[Message] = deque()  # visible messages in rising ``order``
        self.returned: list[tuple[int, Message]] = []  # (order, message): visible again behind newer ones; a heap
        self._next_order = 0
        self.by_age: deque[Message] = deque()  # in enqueue order
        self.late: list[tuple[int, int, Message]] = []  # arrivals older than the newest (dead-lettered): a heap
        self.counts = [0, 0, 0, 0]
        self.waiters = WaiterLine()
        self.host = host
        self.journal = host.journal
        self._schedule = host.schedule
        self._unschedule = host.unschedule
        self._dead_in_age = 0
        self._retention_due = 0
        self.last_purge_ms: int | None = None
        self.in_flight_limit = limits.in_flight_max_fifo if self.fifo else limits.in_flight_max_standard
        self.redrive: tuple[str, int] | None = None  # (deadLetterTargetArn, maxReceiveCount)
        self.handle = QueueHandle(self)  # what long-lived timers hold (cleared when the queue is deleted)
        # The callback of every delay and visibility timer of this queue's messages: one bound method made here (a
        # timer holds it and its message, nothing made per timer), through the handle (a deleted queue is let go).
        self._due: Callable[[Message, int], None] = self.handle.message_due
        self.realism: QueueRealism | None = None  # realism mode (engine/realism.py); None: off
        self.fair: FairQueue | None = None  # fair-queue tenants (engine/fair.py); None until a message has a group
        # SetQueueAttributes answered but not applied yet (realism's attribute_delay): (due epoch ms, values), in
        # the order they were made; saved with the queue (durable mode) so that a restart applies them too.
        self.delayed_attributes: list[tuple[int, dict[str, str]]] = []
        self.attributes: dict[str, str] = {}
        self._apply(attributes, now_ms)

    # ----------------------------------------------------------------- attributes

    def _apply(self, values: Mapping[str, str], now_ms: int) -> None:
        """Store normalised attribute values and refresh what they drive. An empty optional value removes the
        attribute. Server-side encryption (Developer Guide, "Encryption at rest in Amazon SQS"; API Reference,
        ``SetQueueAttributes``): a KMS key switches SSE-SQS off; ``KmsMasterKeyId=""`` switches SSE-KMS off and drops
        ``KmsDataKeyReusePeriodSeconds`` with the key (as observed on AWS) but does not turn SSE-SQS back on (nothing
        documents that it would), so ``SqsManagedSseEnabled`` keeps its value unless the same call sets it;
        ``SqsManagedSseEnabled=true`` alone drops both KMS attributes."""
        attrs = self.attributes
        for name, value in values.items():
            if value == "" and name in queue_attributes.OPTIONAL:
                attrs.pop(name, None)
            else:
                attrs[name] = value
        if values.get("KmsMasterKeyId") and "SqsManagedSseEnabled" not in values:
            attrs["SqsManagedSseEnabled"] = "false"
        if values.get("KmsMasterKeyId") == "":
            attrs.pop("KmsDataKeyReusePeriodSeconds", None)
        if values.get("SqsManagedSseEnabled") == "true" and not values.get("KmsMasterKeyId"):
            attrs.pop("KmsMasterKeyId", None)
            attrs.pop("KmsDataKeyReusePeriodSeconds", None)
        self.visibility_timeout = int(attrs["VisibilityTimeout"])
        self.delay_seconds = int(attrs["DelaySeconds"])
        self.max_message_size = int(attrs["MaximumMessageSize"])
        self.wait_time_s = int(attrs["ReceiveMessageWaitTimeSeconds"])
        policy = attrs.get("RedrivePolicy")
        if policy:
            parsed = json.loads(policy)
            self.redrive = (parsed["deadLetterTargetArn"], int(parsed["maxReceiveCount"]))
        else:
            self.redrive = None
        retention = int(attrs["MessageRetentionPeriod"])
        changed = getattr(self, "retention_s", retention) != retention
        self.retention_s = retention
        if changed:
            self._arm_retention(now_ms, force=True)

    def check_same(self, supplied: Mapping[str, str]) -> None:
        """CreateQueue on an existing name: every supplied attribute must equal the current value.

        Raises ``QueueNameExists`` (Query code ``QueueAlreadyExists``) naming the first differing attribute.
        """
        for name, value in supplied.items():
            if self.attributes.get(name, "") != value:
                raise QueueNameExists(
                    f"A queue already exists with the same name and a different value for attribute {name}"
                )

    def set_attributes(self, values: Mapping[str, str], now_ms: int) -> None:
        """SetQueueAttributes with already-normalised values; updates ``LastModifiedTimestamp``.

        Messages already in flight keep their deadlines; a lower retention period expires old messages at once.
        """
        self._apply(values, now_ms)
        self.last_modified_s = now_ms // 1000

    def get_attributes(self, names: Sequence[str]) -> dict[str, str]:
        """GetQueueAttributes for validated ``names`` (``All`` expands to every attribute that is set; API Reference,
        ``GetQueueAttributes``). ``KmsDataKeyReusePeriodSeconds`` shows its default, 300, while a ``KmsMasterKeyId``
        is set; once the key is switched off (``KmsMasterKeyId=""``) neither KMS attribute is listed."""
        if not names:
            return {}
        values = dict(self.attributes)
        if "KmsMasterKeyId" in values:
            values.setdefault("KmsDataKeyReusePeriodSeconds", "300")
        values["ApproximateNumberOfMessages"] = str(self.counts[VISIBLE])
        values["ApproximateNumberOfMessagesNotVisible"] = str(self.counts[IN_FLIGHT])
        values["ApproximateNumberOfMessagesDelayed"] = str(self.counts[DELAYED])
        values["CreatedTimestamp"] = str(self.created_s)
        values["LastModifiedTimestamp"] = str(self.last_modified_s)
        values["QueueArn"] = self.arn
        if "All" in names:
            return dict(sorted(values.items()))
        return {name: values[name] for name in names if name in values}

    # ----------------------------------------------------------------- state changes

    def _set_state(self, message: Message, state: MessageState) -> None:
        counts = self.counts
        counts[message.state] -= 1
        counts[state] += 1
        if self.fair is not None:
            self.fair.moved(message, message.state, state)
        message.state = state

    def _make_visible(self, message: Message) -> None:
        """A delay ended or a visibility timeout expired (or was set to 0): the message can be received."""
        self._set_state(message, VISIBLE)
        if not message.queued:
            self._place(message)
        if self.waiters:
            self.host.mark_available(self)

    def _on_due(self, message: Message, due_ms: int) -> None:
        """Timer: a delay ended or a visibility timeout expired (if ``due_ms`` is still the message's deadline)."""
        if message.visible_at_ms == due_ms and (message.state is IN_FLIGHT or message.state is DELAYED):
            self._make_visible(message)

    def _remove(self, message: Message, reason: DeleteReason, compact: bool = True) -> None:
        """Take ``message`` out of the queue: all or nothing (a step that raises puts it back as it was); the
        journal hears of it last."""
        old = message.state
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        self.counts[old] -= 1
        try:
            if self.fair is not None:
                self.fair.moved(message, old, DELETED)
            message.state = DELETED
            if fault is not None:
                fault("delete.counted")
            kept = message.kept_id  # a message in ``received`` keeps its id's text
            indexed = False
            if kept is not None and self.received.get(kept) is message:
                del self.received[kept]
                indexed = True
            try:
                if fault is not None:
                    fault("delete.unlisted")
            except BaseException:
                if indexed and kept is not None:
                    self.received[kept] = message
                raise
        except BaseException:
            message.state = old
            self.counts[old] += 1
            if self.fair is not None:
                self.fair.add(message)
            raise
        if old is IN_FLIGHT or old is DELAYED:  # its timer would keep the deleted message (and body) until due
            self._unschedule(message.visible_at_ms, message)
        if self.journal is not None:
            self.journal.message_deleted(self, message, reason)
        self._dead_in_age += 1
        by_age = self.by_age
        if by_age and by_age[0].state is DELETED:  # consumed in the order sent: the head goes now, not at compaction
            self._drop_deleted_heads()
        if old is VISIBLE and message.queued:  # expired or deleted while visible: free it if it heads the receive order
            ready, returned = self.ready, self.returned
            while ready and ready[0].state is DELETED:
                ready.popleft().queued = False
            while returned and returned[0][1].state is DELETED:
                heapq.heappop(returned)[1].queued = False
        if compact and self._dead_in_age > _COMPACT_MIN and self._dead_in_age * 2 > len(self.by_age) + len(self.late):
            self.by_age = deque(m for m in self.by_age if m.state is not DELETED)
            self.late = [entry for entry in self.late if entry[2].state is not DELETED]
            heapq.heapify(self.late)
            self._dead_in_age = 0

    def has_visible(self) -> bool:
        """Whether a receive could find a message now (cheap; may be optimistic)."""
        return (
            bool(self.ready)
            or bool(self.returned)
            or bool(self.cold)
            or (self.fair is not None and self.fair.has_parked())
        )

    def message_count(self) -> int:
        """Messages in the queue in every state (visible, in flight, delayed)."""
        counts = self.counts
        return counts[DELAYED] + counts[VISIBLE] + counts[IN_FLIGHT]

    def stored(self) -> list[Message]:
        """Every message in the queue (visible, in flight, delayed), in arrival order (``order``); a new list. Cold
        messages are made objects first (``_thaw_all``): whoever asks for every message gets the objects the queue
        goes on with."""
        if self.cold:
            self._thaw_all()
        return self._objects()

    def _objects(self) -> list[Message]:
        """The messages stored as objects, in arrival order (a new list)."""
        out = [message for message in self.by_age if message.state is not DELETED]
        out.extend(entry[2] for entry in self.late if entry[2].state is not DELETED)
        out.sort(key=_arrival)  # the age order is not the arrival order (a message made an object joins it late)
        return out

    def snapshot(self) -> list[Message]:
        """Every message in the queue, in arrival order, changing nothing (the admin API, the console, tests): a
        cold message appears as an object made for the reader, not kept by the queue (a view reads it, nothing
        writes it)."""
        out = self._objects()
        if self.cold:
            out.extend(self._thawed(entry) for entry in self.cold)
            out.sort(key=_arrival)
        return out

    def stored_parts(self) -> tuple[list[Message], list[bytes]]:
        """Every message in the queue, changing nothing, in two lists taken in one step (a saved state writes them
        in slices, ``sqsemu.state.export``): the messages stored as objects and the cold entries, each in arrival
        order. :meth:`thaw` makes a cold entry a ``Message`` for the reader; ``Message.order`` merges the two."""
        return self._objects(), list(self.cold)

    def thaw(self, entry: bytes) -> Message:
        """The ``Message`` of a cold entry of :meth:`stored_parts`, made for a reader (not stored anywhere)."""
        return self._thawed(entry)

    def find(self, message_id: str) -> Message | None:
        """The message with MessageId ``message_id``, or None, changing nothing: the index for a received one, else
        a scan of the queue comparing bytes (the admin API and the console; not a hot path). A cold message comes
        back as an object made for the reader (see ``snapshot``)."""
        message = self.received.get(message_id)
        if message is not None:
            return message
        raw = id_bytes(message_id)
        for message in self._objects():
            if message.has_id(message_id, raw):
                return message
        if raw is not None:
            for entry in self.cold:  # its id's 16 bytes end its ``data``, before the cold fields
                if entry.endswith(raw, 0, len(entry) - _COLD):
                    return self._thawed(entry)
        return None

    @property
    def messages(self) -> StoredMessages:
        """A read-only mapping of every stored message by MessageId, in arrival order (see ``snapshot``, ``find``);
        reading it changes nothing."""
        return StoredMessages(self)

    def oldest_enqueued_ms(self) -> int | None:
        """When the oldest message still in the queue (any state) was enqueued, epoch ms; None when empty. (The
        retention clock's start: a dead-lettered message keeps its source queue's time on a standard queue.)"""
        return self._oldest_ms()

    # ----------------------------------------------------------------- cold messages

    def _keeps_cold(self, message: Message) -> bool:
        """Whether a visible message arriving now may be kept cold: a plain one (no attributes, group, trace header
        or other extras), behind a backlog of ``cold_after`` visible messages, in a standard queue that keeps no
        per-message bookkeeping besides its orders (no fair-queue tenants, no realism mode)."""
        return (
            self.counts[VISIBLE] >= self.cold_after
            and message.extras is NO_EXTRAS
            and self.fair is None
            and self.realism is None
            and not self.fifo
        )

    def _freeze(self, message: Message) -> bytes | None:
        """The cold form of a plain message just sent, visible and numbered, to be kept instead of the object; None
        when it must stay an object (the clock went back behind the newest cold message, or 256 senders are known
        already)."""
        sent_ms = message.sent_ms
        if self.cold and self._cold_newest_ms > sent_ms:
            return None
        sender = message.sender_id
        index = self._sender_index.get(sender)
        if index is None:
            if len(self.senders) >= _SENDERS_MAX:
                return None
            index = self._sender_index[sender] = len(self.senders)
            self.senders.append(sender)
        self._cold_newest_ms = sent_ms
        return message.data + _COLD_FIELDS.pack(sent_ms, message.order, index)

    def _store_cold(self, message: Message, now_ms: int) -> bool:
        """Keep ``message`` (visible, numbered, counted) cold, the retention timer armed for it if none is; False
        when it must stay an object (``_freeze``)."""
        entry = self._freeze(message)
        if entry is None:
            return False
        self.cold.append(entry)
        if not self._retention_due:  # else the timer is set for an older message
            self._arm_retention(now_ms)
        return True

    def _thawed(self, entry: bytes) -> Message:
        """The ``Message`` of a cold entry: visible since its send, never received, marked queued (as a message
        taken off ``ready`` is until its taker says otherwise). Not stored anywhere yet."""
        end = len(entry) - _COLD
        data = entry[:end]
        sent_ms, order, sender = _COLD_FIELDS.unpack_from(entry, end)
        message = Message(
            ID_IN_DATA,
            "",
            NO_ATTRIBUTES,
            NO_ATTRIBUTES,
            None,
            self.senders[sender],
            sent_ms,
            len(data) - TAIL_BYTES,
            data=data,
        )
        message.order = order
        message.queued = True
        return message

    def _take_cold(self) -> Message:
        """The oldest cold message as an object, off ``cold`` and into the age order (it is stored as an object from
        now on; the retention timer already covers it)."""
        message = self._thawed(self.cold.popleft())
        self._age(message)
        return message

    def _thaw_all(self) -> None:
        """Make every cold message an object, stored as one in its place (before anything that needs them as
        objects: a view of every message, the fair-queue bookkeeping starting, a move task's peek)."""
        while self.cold:
            message = self._take_cold()
            message.queued = False
            self._place(message)

    def _cold_first(self) -> bool:
        """Whether the oldest cold message comes before the heads of ``ready`` and ``returned`` in receive order."""
        cold = self.cold
        if not cold:
            return False
        order = _cold_order(cold[0])
        ready, returned = self.ready, self.returned
        return (not ready or order < ready[0].order) and (not returned or order < returned[0][0])

    def _expire_cold(self) -> None:
        """Retention: delete the oldest cold message (the journal hears of it as of any other)."""
        message = self._thawed(self.cold.popleft())
        self.counts[VISIBLE] -= 1
        message.state = DELETED
        if self.journal is not None:
            self.journal.message_deleted(self, message, "expired")

    # ----------------------------------------------------------------- retention

    def _drop_deleted_heads(self) -> None:
        """Let the deleted messages at the head of the age order go (with their bodies)."""
        by_age, late = self.by_age, self.late
        while by_age and by_age[0].state is DELETED:
            by_age.popleft()
            self._dead_in_age -= 1
        while late and late[0][2].state is DELETED:
            heapq.heappop(late)
            self._dead_in_age -= 1

    def _oldest(self) -> Message | None:
        self._drop_deleted_heads()
        by_age, late = self.by_age, self.late
        if late and (not by_age or late[0][0] < by_age[0].enqueued_ms):
            return late[0][2]
        return by_age[0] if by_age else None

    def _oldest_ms(self) -> int | None:
        """When the oldest message in the queue (any state, cold ones included) was enqueued, epoch ms; None when
        the queue is empty."""
        oldest = self._oldest()
        at = None if oldest is None else oldest.enqueued_ms
        if self.cold:
            cold_ms = _cold_sent_ms(self.cold[0])
            if at is None or cold_ms < at:
                return cold_ms
        return at

    def _arm_retention(self, now_ms: int, force: bool = False) -> None:
        oldest_ms = self._oldest_ms()
        if oldest_ms is None:
            self._retention_due = 0
            return
        due = oldest_ms + self.retention_s * 1000
        if force or self._retention_due == 0 or due < self._retention_due:
            self._retention_due = due
            # Through the handle: the timer may be days ahead, and a deleted queue must not live until then.
            self._schedule(max(due, now_ms), _retention_timer, (self.handle, due))

    def _on_retention(self, due: int, fired_ms: int) -> None:
        """Timer: delete every message older than the retention period (MessageRetentionPeriod), counted from its
        enqueue time."""
        if due != self._retention_due or self.deleted:
            return
        self._retention_due = 0
        limit = fired_ms - self.retention_s * 1000
        while True:
            oldest = self._oldest()
            cold_ms = _cold_sent_ms(self.cold[0]) if self.cold else None
            if cold_ms is not None and (oldest is None or cold_ms < oldest.enqueued_ms):
                if cold_ms > limit:
                    break
                self._expire_cold()
                continue
            if oldest is None or oldest.enqueued_ms > limit:
                break
            self._remove(oldest, "expired", compact=False)
        self._arm_retention(fired_ms)

    def _track_age(self, message: Message, now_ms: int) -> None:
        if self._age(message) and self._retention_due:
            return  # behind an older message, with the retention timer armed: the oldest message is unchanged
        self._arm_retention(now_ms)

    def _age(self, message: Message) -> bool:
        """Put ``message`` in the age order (``by_age``, or ``late`` when it is older than the newest); True when it
        went behind an older message."""
        by_age = self.by_age
        if not by_age or by_age[-1].enqueued_ms <= message.enqueued_ms:
            behind = bool(by_age)
            by_age.append(message)
            return behind
        heapq.heappush(self.late, (message.enqueued_ms, next(_late_order), message))
        return False

    # ----------------------------------------------------------------- send

    def _check_delay(self, delay: int | None) -> int:
        """A message's own DelaySeconds (SendMessage, a SendMessageBatch entry), 0 to 900; None means the queue's.
        Raises ``InvalidParameterValue`` ``Value 1000 for parameter DelaySeconds is invalid. Reason: DelaySeconds
        must be >= 0 and <= 900.`` (the wording observed on AWS; range from the API Reference, ``SendMessage``)."""
        if delay is None:
            return self.delay_seconds
        check_range(
            delay,
            "DelaySeconds",
            0,
            self.limits.delay_max_s,
            f"DelaySeconds must be >= 0 and <= {self.limits.delay_max_s}.",
        )
        return delay

    def _check_ids(self, entry: SendEntry) -> None:
        """Standard queues: a MessageGroupId is allowed (fair queues), a deduplication ID is not."""
        check_token(entry.group_id, "MessageGroupId")
        if entry.deduplication_id is not None:
            raise invalid_value(
                entry.deduplication_id,
                "MessageDeduplicationId",
                "The request include parameter that is not valid for this queue type.",
            )

    def _new_message(self, entry: SendEntry, sender_id: str, now_ms: int) -> tuple[Message, int]:
        """Validate one message to send; returns it (not stored) and its delay in seconds. A message over
        MaximumMessageSize (body plus message attributes, bytes) raises ``InvalidParameterValue``, worded as AWS was
        recorded to: "One or more parameters are invalid. Reason: ..." for SendMessage and "One or more parameters
        cannot be validated. Reason: ..." for a SendMessageBatch entry (an entry is one that has a batch Id)."""
        body = entry.body if entry.body_checked and entry.body else check_body(entry.body)
        size = (len(body) if body.isascii() else len(body.encode())) + check_message_attributes(
            entry.message_attributes, self.limits
        )
        if size > self.max_message_size:
            lead = "One or more parameters cannot be validated." if entry.id else "One or more parameters are invalid."
            raise InvalidParameterValue(f"{lead} Reason: Message must be shorter than {self.max_message_size} bytes.")
        trace_header = check_system_attributes(entry.system_attributes) or entry.trace_header
        delay = self._check_delay(entry.delay_seconds)
        self._check_ids(entry)
        message = Message(
            NEW_ID,
            body,
            entry.message_attributes,
            entry.system_attributes,
            trace_header,
            sender_id,
            now_ms,
            size,
            group_id=entry.group_id,
            deduplication_id=entry.deduplication_id,
        )
        return message, delay

    def _place(self, message: Message) -> None:
        """Put a message that just became visible where receives find it, in enqueue order."""
        message.queued = True
        ready = self.ready
        if not ready or ready[-1].order < message.order:
            ready.append(message)
        else:
            heapq.heappush(self.returned, (message.order, message))

    def _number(self, message: Message) -> None:
        """Give a message arriving in this queue the next place in its enqueue order."""
        message.order = self._next_order
        self._next_order += 1

    def _enqueue(self, message: Message, delay_s: int, now_ms: int, reason: AddReason) -> None:
        """Store a validated message: all or nothing. A step that raises leaves no trace (``_withdraw``); the
        journal hears of the message last, once nothing else can fail."""
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        self._number(message)
        if fault is not None:
            fault("send.numbered")
        aged = counted = tenant = frozen = False
        cold = not delay_s and self._keeps_cold(message)
        try:
            if fault is not None:
                fault("send.stored")
            if not cold:
                self._track_age(message, now_ms)
                aged = True
            if fault is not None:
                fault("send.aged")
            if delay_s:
                message.state = DELAYED
                self.counts[DELAYED] += 1
                counted = True
                message.visible_at_ms = now_ms + delay_s * 1000
                self._schedule(message.visible_at_ms, self._due, message)
            else:
                message.state = VISIBLE
                message.visible_at_ms = now_ms
                self.counts[VISIBLE] += 1
                counted = True
                frozen = cold and self._store_cold(message, now_ms)
                if not frozen:
                    if cold:  # it could not be kept cold: stored as an object, in the age order too
                        self._track_age(message, now_ms)
                        aged = True
                    self._place(message)
            if fault is not None:
                fault("send.placed")
            if self.fair is not None or message.extras is not NO_EXTRAS:
                self._fair_add(message)
                tenant = self.fair is not None
            if fault is not None:
                fault("send.tenant")
            if not delay_s and self.waiters:
                self.host.mark_available(self)
            if fault is not None:
                fault("send.woken")
        except BaseException:
            if frozen:
                self.cold.pop()
            self._withdraw(message, aged, counted, tenant)
            raise
        if self.journal is not None:
            self.journal.message_added(self, message, reason)

    def _withdraw(self, message: Message, aged: bool, counted: bool, tenant: bool) -> None:
        """Undo a send that failed part way: the message leaves the queue as if never sent (its places in the
        receive and age orders, and any timer, see it deleted and skip it; nothing was journaled)."""
        if counted:
            self.counts[message.state] -= 1
            if tenant and self.fair is not None:
                self.fair.moved(message, message.state, DELETED)
        message.state = DELETED
        if aged:
            self._dead_in_age += 1

    def _accept(self, entry: SendEntry, sender_id: str, now_ms: int) -> Message:
        """Validate and store one message (FIFO queues also deduplicate here)."""
        message, delay = self._new_message(entry, sender_id, now_ms)
        self._enqueue(message, delay, now_ms, "sent")
        return message

    def send(self, entry: SendEntry, sender_id: str, now_ms: int) -> Message:
        """SendMessage: validate and store one message. Raises ``MissingParameter``, ``InvalidMessageContents``
        or ``InvalidParameterValue`` (docs/behaviour.md 2.7)."""
        return self._accept(entry, sender_id, now_ms)

    def _check_batch_entries(self, entries: Sequence[SendEntry]) -> None:
        """Rules that fail a whole SendMessageBatch (none on standard queues)."""

    def send_batch(self, entries: Sequence[SendEntry], sender_id: str, now_ms: int) -> list[Message | SQSError]:
        """SendMessageBatch: batch-level rules raise; each entry then succeeds or fails on its own, in order."""
        check_batch(entries, "SendMessageBatchRequestEntry", self.limits)
        total = 0
        for entry in entries:
            body = entry.body
            if body:
                total += len(body) if body.isascii() else len(body.encode())
            if entry.message_attributes:
                for name, value in entry.message_attributes.items():
                    total += attribute_bytes(name, value)
        if total > self.limits.batch_max_bytes:
            raise BatchRequestTooLong(
                f"Batch requests cannot be longer than {self.limits.batch_max_bytes} bytes. "
                f"You have sent {total} bytes."
            )
        self._check_batch_entries(entries)
        results: list[Message | SQSError] = []
        for entry in entries:
            try:
                results.append(self._accept(entry, sender_id, now_ms))
            except SQSError as error:
                results.append(error)
            except Exception as exc:  # noqa: BLE001 - the entry failed, stored nothing, and is answered so
                results.append(_entry_fault("SendMessageBatch", self, exc))
        return results

    # ----------------------------------------------------------------- receive

    def receive_parameters(
        self, max_number: int | None, visibility_timeout: int | None, wait_time: int | None
    ) -> tuple[int, int, int]:
        """Validate ReceiveMessage's numbers and fill the queue defaults: (max messages, visibility s, wait s)."""
        limits = self.limits
        check_range(
            max_number,
            "MaxNumberOfMessages",
            1,
            limits.receive_max_messages,
            f"Must be between 1 and {limits.receive_max_messages}, if provided.",
        )
        check_range(
            visibility_timeout,
            "VisibilityTimeout",
            0,
            limits.visibility_timeout_max_s,
            f"Must be >= 0 and <= {limits.visibility_timeout_max_s}, if provided.",
        )
        check_range(
            wait_time,
            "WaitTimeSeconds",
            0,
            limits.wait_time_max_s,
            f"Must be >= 0 and <= {limits.wait_time_max_s}, if provided.",
        )
        return (
            1 if max_number is None else max_number,
            self.visibility_timeout if visibility_timeout is None else visibility_timeout,
            self.wait_time_s if wait_time is None else wait_time,
        )

    def check_in_flight_quota(self) -> None:
        """A short-poll receive on a standard queue at its in-flight quota gets ``OverLimit`` (SQS Developer
        Guide, "Inflight messages"); FIFO queues and long polls just receive nothing more."""
        if not self.fifo and self.counts[IN_FLIGHT] >= self.in_flight_limit:
            raise OverLimit(
                f"The queue has reached its quota of {self.in_flight_limit} in-flight messages. "
                "Delete messages or let their visibility timeout expire."
            )

    def receipt_handle(self, message: Message) -> str:
        """The current receipt handle of ``message`` (opaque base64 text)."""
        message_id = message.message_id
        serial = message.receive_count
        handle = binascii.b2a_base64(f"{self.uid}:{message_id}:{serial}".encode(), newline=False)
        text = handle.translate(_TO_URLSAFE).decode()
        if ":" not in message_id:  # read back, the handle gives these three parts (a ':' in a kept id would not)
            memo = _handle_parts
            if len(memo) >= _HANDLE_MEMO_LIMIT:
                memo.clear()
            memo[text] = (self.uid, message_id, serial)
        return text

    def _dead_letter_target(self, message: Message) -> Queue | None:
        """The dead-letter queue ``message`` goes to if this receive would exceed maxReceiveCount, else None. If
        the dead-letter queue no longer exists the message is delivered normally (AWS does not document this
        case)."""
        redrive = self.redrive
        if redrive is None or message.receive_count < redrive[1]:
            return None
        target = self.host.resolve_arn(redrive[0])
        if target is None or target is self:
            return None
        return target

    def _dead_letter(self, message: Message, now_ms: int, moving: list[Message]) -> bool:
        """Whether this receive dead-letters ``message`` (True: it is set aside in ``moving``, still visible, out of
        the receive order; ``move_dead_lettered`` moves it once the receive can no longer fail, ``give_back`` puts
        it back in its place if the receive fails)."""
        if self._dead_letter_target(message) is None:
            return False
        moving.append(message)
        return True

    def move_dead_lettered(self, moving: Sequence[Message], now_ms: int) -> None:
        """Move the messages a receive set aside (``moving``) to the dead-letter queue: the last step of a receive.
        The move keeps the message id, body, attributes, SentTimestamp and receive count and sets
        DeadLetterQueueSourceArn (docs/behaviour.md 6.1). A move that fails puts that message and the ones not
        moved yet back in their places, and raises (the moves done stay done: each is whole)."""
        for index, message in enumerate(moving):
            try:
                target = self._dead_letter_target(message) if message.state is VISIBLE else None
                if target is None:  # the dead-letter queue went meanwhile: the message waits for the next receive
                    self.requeue(message)
                    continue
                self._remove(message, "dead_lettered")
            except BaseException:
                for rest in moving[index:]:
                    self.requeue(rest)
                raise
            target.add_dead_lettered(message.moved_copy(), self.arn, now_ms)

    def _deliver(self, message: Message, now_ms: int, visibility_timeout: int, request_ms: int) -> str:
        """Mark one visible message received; returns its new receipt handle."""
        message.receive_count += 1
        self.received[message.keep_id()] = message  # its receipt handles find it from now on
        if not message.first_receive_ms:
            message.first_receive_ms = now_ms
        message.received_ms = request_ms  # the receive count is the new receipt's serial too
        message.visible_at_ms = now_ms + visibility_timeout * 1000
        if visibility_timeout:
            self._set_state(message, IN_FLIGHT)
            self._schedule(message.visible_at_ms, self._due, message)
        if self.journal is not None:
            self.journal.message_changed(self, message)
        return self.receipt_handle(message)

    def _next_visible(self) -> Message | None:
        """Take the next candidate of a receive off the queue's order (it may have left the visible state): the
        lowest order, or on a fair queue with a noisy tenant the fair order (``FairQueue.next_visible``)."""
        fair = self.fair
        if fair is not None and (fair.noisy or fair.released):
            return fair.next_visible()
        return self.take_next()

    def take_next(self) -> Message | None:
        """Take the lowest-order candidate off ``cold``/``ready``/``returned`` (it may have left the visible
        state)."""
        if self.cold and self._cold_first():
            return self._take_cold()
        ready, returned = self.ready, self.returned
        if returned and (not ready or returned[0][0] < ready[0].order):
            return heapq.heappop(returned)[1]
        return ready.popleft() if ready else None

    def receive(
        self, now_ms: int, max_number: int, visibility_timeout: int, request_ms: int, moving: list[Message]
    ) -> list[Received]:
        """Take up to ``max_number`` visible messages, oldest (in send order) first, and put them in flight for
        ``visibility_timeout`` seconds; each gets a new receipt handle. ``request_ms`` is when the ReceiveMessage
        request arrived (the 12-hour maximum counts from it). Never more than the in-flight quota allows. On a fair
        queue (messages with a MessageGroupId), quiet tenants' messages come before noisy tenants' (engine/fair.py).
        Messages due for the dead-letter queue are set aside in ``moving``: the caller moves them
        (``move_dead_lettered``) when the whole call succeeded, or hands them to ``give_back`` when it failed. A
        receive that raises has given back what it took."""
        if self.fair is not None:
            self.fair.begin(now_ms)
        if self.realism is not None:
            return self.realism.receive(self, now_ms, max_number, visibility_timeout, request_ms, moving)
        max_number = min(max_number, self.in_flight_limit - self.counts[IN_FLIGHT])
        out: list[Received] = []
        again: list[Message] = []
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        try:
            while len(out) < max_number:
                message = self._next_visible()
                if message is None:
                    break
                message.queued = False
                if message.state is not VISIBLE or self._dead_letter(message, now_ms, moving):
                    continue
                out.append((message, self._deliver(message, now_ms, visibility_timeout, request_ms)))
                if not visibility_timeout:
                    again.append(message)
                if fault is not None:
                    fault("receive.delivered")
            for message in again:
                self._place(message)
        except BaseException:
            self.give_back(out, now_ms, moving)
            raise
        return out

    def give_back(self, received: Sequence[Received], now_ms: int, moving: list[Message]) -> None:
        """Undo a receive that failed after putting ``received`` in flight (its answer never left): each message is
        visible again now, in its place, with the receive count it had (its new receipt handle is void); the
        journal hears the restored state. The messages it set aside for the dead-letter queue (``moving``, emptied)
        go back to their places unmoved."""
        for message in moving:
            self.requeue(message)
        moving.clear()
        journal = self.journal
        for message, _handle in reversed(received):
            if message.state is DELETED:
                continue
            message.receive_count -= 1
            if not message.receive_count:
                message.first_receive_ms = 0
            message.visible_at_ms = now_ms
            if message.state is not VISIBLE:
                self._make_visible(message)
            elif not message.queued:
                self._place(message)
            if journal is not None:
                journal.message_changed(self, message)

    # ----------------------------------------------------------------- delivery steps (engine/delivery.py)

    def next_candidate(self) -> Message | None:
        """``DeliverySteps.next_candidate``: the next candidate of a receive, taken off the order."""
        message = self._next_visible()
        if message is not None:
            message.queued = False
        return message

    def dead_letter_if_due(self, message: Message, now_ms: int, moving: list[Message]) -> bool:
        """``DeliverySteps.dead_letter_if_due``."""
        return self._dead_letter(message, now_ms, moving)

    def deliver(self, message: Message, now_ms: int, visibility_timeout: int, request_ms: int) -> str:
        """``DeliverySteps.deliver``: the message is in flight (or, with a timeout of 0, back in the order)."""
        return self._deliver(message, now_ms, visibility_timeout, request_ms)

    def requeue(self, message: Message) -> None:
        """``DeliverySteps.requeue``: a visible message not in the order goes back to its place."""
        if message.state is VISIBLE and not message.queued:
            self._place(message)

    def make_visible_now(self, message: Message, now_ms: int) -> None:
        """``DeliverySteps.make_visible_now``."""
        message.visible_at_ms = now_ms
        if message.state is not VISIBLE:
            self._make_visible(message)
        if self.journal is not None:
            self.journal.message_changed(self, message)

    def next_order(self) -> int | None:
        """The place of the candidate ``take_next`` would take, or None (fair queues, ``FairHost``)."""
        if self.cold and self._cold_first():
            return _cold_order(self.cold[0])
        ready, returned = self.ready, self.returned
        if returned and (not ready or returned[0][0] < ready[0].order):
            return returned[0][0]
        return ready[0].order if ready else None

    # ----------------------------------------------------------------- fair queues

    def _fair_add(self, message: Message) -> None:
        """Tell the fair-queue bookkeeping of a message that arrived; a standard queue's first message with a
        MessageGroupId starts it, counting the messages already there (FIFO queues never start it)."""
        fair = self.fair
        if fair is None:
            if self.fifo or message.group_id is None:
                return
            fair = self.fair = FairQueue(self)
            for other in self.stored():
                if other is not message:
                    fair.add(other)
        fair.add(message)

    def fair_snapshot(self, now_ms: int) -> FairSnapshot | None:
        """Noisy tenants and quiet counts at ``now_ms`` (metrics, peek, console); None when the queue never had a
        message with a MessageGroupId (then every message is quiet). Changes nothing."""
        return None if self.fair is None else self.fair.snapshot(now_ms)

    def oldest_quiet_enqueued_ms(self, noisy: Sequence[str]) -> int | None:
        """When the oldest message of a quiet tenant was enqueued (epoch ms; the retention clock's start, as
        ``oldest_enqueued_ms``), given the ``noisy`` tenant ids; None when there is none. Reads every message
        when some tenant is noisy (a scrape, not the hot path)."""
        if not noisy:
            return self.oldest_enqueued_ms()
        shut = set(noisy)
        best: int | None = None
        for message in self.stored():
            if message.group_id not in shut and (best is None or message.enqueued_ms < best):
                best = message.enqueued_ms
        return best

    def dispatch(self, now_ms: int) -> None:
        """Hand visible messages to waiting long polls, longest waiter first, one receive per waiter."""
        waiters = self.waiters
        while self.has_visible():
            waiter = waiters.first()
            if waiter is None:
                return
            moving: list[Message] = []
            got = self.receive(now_ms, waiter.max_messages, waiter.visibility_timeout, waiter.request_ms, moving)
            fault = faultpoints.ARMED  # read once a hand-off: disarmed, each point below is a local None check
            try:
                if fault is not None:
                    fault("handoff.received")
                self.move_dead_lettered(moving, now_ms)  # the last step that can fail
            except BaseException:
                self.give_back(got, now_ms, moving)  # the waiter keeps waiting; the messages are where they were
                raise
            if not got:
                return
            waiters.remove(waiter)
            waiter.future.set_result(got)

    def replay_attempt(self, attempt_id: str | None, now_ms: int, visibility_timeout: int) -> list[Received] | None:
        """ReceiveRequestAttemptId applies to FIFO queues only; standard queues ignore it."""
        return None

    def record_attempt(self, attempt_id: str | None, received: list[Received], now_ms: int) -> None:
        """See ``replay_attempt``."""

    def forget_attempt(self, attempt_id: str | None) -> None:
        """Forget what ``record_attempt`` remembered for ``attempt_id`` (a receive that failed after it)."""

    # ----------------------------------------------------------------- receipts

    def _message_for(self, receipt_handle: str | None) -> tuple[Message | None, bool]:
        """(message, current) for a receipt handle: the message it was issued for (None once that message is gone)
        and whether it is the newest receipt of that message. Raises ``MissingParameter`` (no handle) and
        ``ReceiptHandleIsInvalid`` (not a handle this queue issued)."""
        if not receipt_handle:
            raise MissingParameter.named("ReceiptHandle")
        known = _handle_parts.get(receipt_handle)
        if known is not None:  # issued a moment ago: its parts as the decoding below reads them
            uid, message_id, number = known
        else:
            try:
                raw = binascii.a2b_base64(receipt_handle.encode().translate(_FROM_URLSAFE))
                uid, message_id, serial = raw.decode().split(":")
                number = int(serial) if serial.isascii() and serial.isdigit() and len(serial) <= 19 else -1
            except (ValueError, binascii.Error, UnicodeError):
                number = -1
                uid = message_id = ""
        if number < 0 or uid != self.uid:
            raise ReceiptHandleIsInvalid(f'The input receipt handle "{receipt_handle}" is not a valid receipt handle.')
        message = self.received.get(message_id)
        if message is None:
            return None, False
        if number == 0 or number > message.receive_count:
            raise ReceiptHandleIsInvalid(f'The input receipt handle "{receipt_handle}" is not a valid receipt handle.')
        return message, message.receive_count == number

    def delete(self, receipt_handle: str | None) -> None:
        """DeleteMessage. Any receipt handle the message was given deletes it, an older one too (the message was
        received again since), as AWS was recorded to do; a handle of a message already gone succeeds again
        (API Reference, DeleteMessage). Raises ``MissingParameter`` and ``ReceiptHandleIsInvalid``. In realism mode
        a delivery marked for a duplicate leaves a copy behind (``QueueRealism.keep_on_delete``)."""
        message, _ = self._message_for(receipt_handle)
        if message is not None and (
            self.realism is None or not self.realism.keep_on_delete(self, message, receipt_handle)
        ):
            self._remove(message, "deleted")

    def _visibility_target(self, receipt_handle: str | None) -> Message:
        """The message a ChangeMessageVisibility applies to: on a standard queue any of its receipt handles, an
        older one too, changes the message as it is now (as AWS was recorded to do)."""
        message, _ = self._message_for(receipt_handle)
        if message is None:
            raise invalid_value(
                receipt_handle,
                "ReceiptHandle",
                "Message does not exist or is not available for visibility timeout change.",
            )
        return message

    def change_visibility(self, receipt_handle: str | None, visibility_timeout: int | None, now_ms: int) -> None:
        """ChangeMessageVisibility: the new timeout counts from now and is not added to what is left (SQS Developer
        Guide, "Amazon SQS visibility timeout"). 0 makes the message visible at once; a message whose timeout
        already expired (and was not received again) is hidden again. Raises ``ReceiptHandleIsInvalid``,
        ``MissingParameter`` and ``InvalidParameterValue`` (message deleted; beyond 12 hours from the newest
        receive; on FIFO queues, a receipt no longer in flight)."""
        limits = self.limits
        if visibility_timeout is None:
            raise MissingParameter.named("VisibilityTimeout")
        check_range(
            visibility_timeout,
            "VisibilityTimeout",
            0,
            limits.visibility_timeout_max_s,
            f"Must be between 0 and {limits.visibility_timeout_max_s}, if provided.",
        )
        message = self._visibility_target(receipt_handle)
        deadline = now_ms + visibility_timeout * 1000
        if deadline > message.received_ms + limits.visibility_timeout_max_s * 1000:
            raise invalid_value(
                visibility_timeout,
                "VisibilityTimeout",
                "Total VisibilityTimeout for the message is beyond the limit "
                f"[{limits.visibility_timeout_max_s} seconds].",
            )
        old_deadline, old_state = message.visible_at_ms, message.state
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        message.visible_at_ms = deadline
        try:
            if fault is not None:
                fault("visibility.changed")
            if visibility_timeout == 0:
                if message.state is IN_FLIGHT:
                    self._make_visible(message)
            else:
                if message.state is VISIBLE:
                    self._set_state(message, IN_FLIGHT)
                self._schedule(deadline, self._due, message)
            if fault is not None:
                fault("visibility.scheduled")
        except BaseException:
            # As it was: the old deadline's timer is still armed, the new one finds another deadline and passes.
            message.visible_at_ms = old_deadline
            if message.state is not old_state:
                if old_state is VISIBLE:
                    self._make_visible(message)
                else:
                    self._set_state(message, old_state)
            raise
        if old_state is IN_FLIGHT and old_deadline != deadline:  # the old deadline's entry would hold it until then
            self._unschedule(old_deadline, message)
        if self.journal is not None:
            self.journal.message_changed(self, message)

    def delete_batch(self, entries: Sequence[ReceiptEntry]) -> list[SQSError | None]:
        """DeleteMessageBatch: batch rules raise; per entry None (deleted) or its error."""
        check_batch(entries, "DeleteMessageBatchRequestEntry", self.limits)
        results: list[SQSError | None] = []
        for entry in entries:
            try:
                self.delete(entry.receipt_handle)
                results.append(None)
            except SQSError as error:
                results.append(error)
            except Exception as exc:  # noqa: BLE001 - the entry failed, changed nothing, and is answered so
                results.append(_entry_fault("DeleteMessageBatch", self, exc))
        return results

    def change_visibility_batch(self, entries: Sequence[ReceiptEntry], now_ms: int) -> list[SQSError | None]:
        """ChangeMessageVisibilityBatch: batch rules raise; per entry None (changed) or its error."""
        check_batch(entries, "ChangeMessageVisibilityBatchRequestEntry", self.limits)
        results: list[SQSError | None] = []
        for entry in entries:
            try:
                self.change_visibility(entry.receipt_handle, entry.visibility_timeout, now_ms)
                results.append(None)
            except SQSError as error:
                results.append(error)
            except Exception as exc:  # noqa: BLE001 - the entry failed, changed nothing, and is answered so
                results.append(_entry_fault("ChangeMessageVisibilityBatch", self, exc))
        return results

    # ----------------------------------------------------------------- dead-letter moves and move tasks

    def add_dead_lettered(self, message: Message, source_arn: str, now_ms: int) -> None:
        """Take in a message dead-lettered from ``source_arn``: same message id, body, attributes, SentTimestamp
        and receive count, with DeadLetterQueueSourceArn set. A standard queue keeps the original enqueue time for
        retention (SQS Developer Guide, "dead-letter queue retention")."""
        message.dead_letter_source_arn = source_arn
        self._number(message)
        message.state = VISIBLE
        message.queued = False
        self.counts[VISIBLE] += 1
        self._track_age(message, now_ms)
        self._place(message)
        if self.fair is not None or message.group_id is not None:
            self._fair_add(message)
        if self.waiters:
            self.host.mark_available(self)
        if self.journal is not None:
            self.journal.message_added(self, message, "dead_lettered")

    def peek_visible(self, limit: int) -> list[Message]:
        """Up to ``limit`` visible messages in the order a receive would take them, unchanged (for move tasks)."""
        if self.cold:
            self._thaw_all()
        out: list[Message] = []
        for message in self.ready:
            if len(out) >= limit:
                break
            if message.state is VISIBLE:
                out.append(message)
        out.extend(message for _, message in self.returned if message.state is VISIBLE)
        if self.fair is not None:
            out.extend(message for message in self.fair.parked_messages() if message.state is VISIBLE)
        out.sort(key=lambda message: message.order)
        return out[:limit]

    def remove_moved(self, message: Message) -> None:
        """Delete a message a move task has copied elsewhere."""
        if message.state is not DELETED:
            self._remove(message, "moved")

    def add_redriven(self, message: Message, now_ms: int) -> Message:
        """Store a redriven copy of ``message``: a new message (new MessageId and SentTimestamp) with the same body,
        attributes, trace header and group (SQS Developer Guide, "Configure a dead-letter queue redrive")."""
        copy = Message(
            NEW_ID,
            "",  # the body is ``data``
            message.message_attributes,
            message.system_attributes,
            message.trace_header,
            message.sender_id,
            now_ms,
            message.size,
            group_id=message.group_id,
            data=message.data,
        )
        self._prepare_redriven(message, copy, now_ms)
        self._enqueue(copy, 0, now_ms, "moved")
        return copy

    def _prepare_redriven(self, original: Message, copy: Message, now_ms: int) -> None:
        """Queue-type specifics of a redriven copy, set before it is stored (none for standard queues)."""

    # ----------------------------------------------------------------- restore (durable mode)

    def restore_message(self, message: Message) -> None:
        """Put back a message read from the durable store, in enqueue order, with its saved state. A delay or
        visibility timeout that ran out while the server was down makes it visible on the next timer run."""
        self._number(message)
        state = message.state
        if (
            state is VISIBLE
            and not message.receive_count
            and message.visible_at_ms == message.sent_ms
            and self._keeps_cold(message)
        ):
            if self._store_cold(message, message.enqueued_ms):  # waiting since its send, behind a backlog: kept
                self.counts[VISIBLE] += 1  # cold, as when it came
                return
        if message.receive_count:  # receipt handles issued before the restart must still find it
            self.received[message.keep_id()] = message
        self._track_age(message, message.enqueued_ms)
        self.counts[state] += 1
        if self.fair is not None or message.group_id is not None:
            self._fair_add(message)
        if state is VISIBLE:
            self._place(message)
        else:
            self._schedule(message.visible_at_ms, self._due, message)

    # ----------------------------------------------------------------- purge / delete

    def purge(self, now_ms: int | None = None) -> None:
        """PurgeQueue: delete every message, visible, in flight or delayed (and let their timers go). All or
        nothing: the one step that can fail, letting the timers go (fault point ``purge.unscheduled`` after each),
        comes first and is undone if it fails (the timers let go are scheduled again); then the queue is emptied
        by assignments and clears only (``_emptied``), which cannot fail halfway."""
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        stored = self.stored()
        let_go: list[Message] = []
        try:
            for message in stored:
                if message.state is IN_FLIGHT or message.state is DELAYED:
                    self._unschedule(message.visible_at_ms, message)
                    let_go.append(message)
                    if fault is not None:
                        fault("purge.unscheduled")
        except BaseException:
            for message in let_go:
                self._schedule(message.visible_at_ms, self._due, message)
            raise
        for message in stored:
            message.state = DELETED
        self._emptied(now_ms)

    def _emptied(self, now_ms: int | None) -> None:
        """The last step of a purge: every index of the queue forgets its messages (no step here can fail)."""
        self.cold.clear()
        self.received.clear()
        self.ready.clear()
        self.returned.clear()
        self.by_age.clear()
        self.late.clear()
        self.counts = [0, 0, 0, 0]
        if self.fair is not None:
            self.fair.clear()
        self._dead_in_age = 0
        self._retention_due = 0
        if now_ms is not None:
            self.last_purge_ms = now_ms

    def drop(self) -> None:
        """DeleteQueue: forget every message and answer waiting long polls with no messages."""
        self.deleted = True
        self.handle.queue = None
        self.purge()
        self.waiters.release_all()
