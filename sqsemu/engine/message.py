"""Messages and what a send carries.

A ``Message`` has exactly one ``visible_at_ms``; whether it is visible, in flight or delayed follows from its
``state`` and that deadline (docs/architecture.md, principle 3). The ``md5_*`` slots are caches that the
protocol layer fills the first time it renders a digest; the engine never reads them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum

_RANDOM_IDS_PER_READ = 256


def _random_hex() -> Iterator[str]:
    """32 random hex digits at a time, from ``os.urandom`` read 256 ids' worth at once (one system call, not 256)."""
    while True:
        pool = os.urandom(16 * _RANDOM_IDS_PER_READ).hex()
        for start in range(0, 32 * _RANDOM_IDS_PER_READ, 32):
            yield pool[start : start + 32]


_next_random_hex = _random_hex().__next__


def _fresh_pool_after_fork() -> None:
    global _next_random_hex
    _next_random_hex = _random_hex().__next__  # a forked child must not hand out its parent's unused ids


os.register_at_fork(after_in_child=_fresh_pool_after_fork)


def new_message_id() -> str:
    """A fresh MessageId: a random (version 4) UUID in its 36-character text form, as ``str(uuid.uuid4())`` gives,
    made from 16 bytes of ``os.urandom`` in a fraction of the time (the random bytes are read 4 KiB at a time)."""
    h = _next_random_hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


class MessageState(IntEnum):
    """Where a message is in its life (SQS Developer Guide, "Inflight messages")."""

    DELAYED = 0  # sent with a delay that has not passed yet (message timer or queue DelaySeconds)
    VISIBLE = 1  # stored and receivable
    IN_FLIGHT = 2  # received, its visibility timeout running
    DELETED = 3  # deleted, purged, expired or moved away


@dataclass(slots=True)
class MessageAttributeValue:
    """One message attribute (or system attribute) value.

    ``data_type`` is ``String``, ``Number`` or ``Binary``, optionally with a ``.label`` suffix (up to 256
    characters). ``String``/``Number`` carry ``string_value``; ``Binary`` carries ``binary_value`` as raw bytes
    (base64 only on the wire).
    """

    data_type: str
    string_value: str | None = None
    binary_value: bytes | None = None


NO_ATTRIBUTES: dict[str, MessageAttributeValue] = {}
"""The one empty attribute map that messages and send entries without attributes share; never written to."""


def _no_attributes() -> dict[str, MessageAttributeValue]:
    return NO_ATTRIBUTES


"""The attributes of every message sent without any: one shared empty dict (message attributes are never changed
in place), instead of two empty dicts (128 bytes) kept by each message."""


@dataclass(slots=True)
class SendEntry:
    """One message to send: a SendMessage request, or one SendMessageBatch entry (then ``id`` is its batch Id).

    ``delay_seconds`` None means "the queue's DelaySeconds". ``system_attributes`` holds only what the client sent
    as MessageSystemAttributes (``AWSTraceHeader``); ``trace_header`` is the request's ``X-Amzn-Trace-Id`` HTTP
    header, used as the message's AWSTraceHeader when no system attribute gives one.
    """

    body: str | None
    delay_seconds: int | None = None
    message_attributes: dict[str, MessageAttributeValue] = field(default_factory=_no_attributes)
    system_attributes: dict[str, MessageAttributeValue] = field(default_factory=_no_attributes)
    group_id: str | None = None
    deduplication_id: str | None = None
    trace_header: str | None = None
    id: str = ""


@dataclass(slots=True)
class ReceiptEntry:
    """One DeleteMessageBatch / ChangeMessageVisibilityBatch entry (``visibility_timeout`` only for the latter)."""

    id: str
    receipt_handle: str | None
    visibility_timeout: int | None = None


class Message:
    """A stored message.

    Times are epoch milliseconds. ``receive_count`` is ``ApproximateReceiveCount``; ``first_receive_ms`` is
    ``ApproximateFirstReceiveTimestamp`` (0 until the first receive). ``enqueued_ms`` is where the retention
    period counts from: the send, or the dead-letter move for a FIFO dead-letter queue. ``receipt_serial`` numbers
    the receipts: it is the serial of the newest receipt handle (0 before the first receive). ``received_ms`` is
    when the newest receipt's ReceiveMessage request arrived (the 12-hour visibility maximum counts from it).
    ``order`` is the message's place in its queue's enqueue order (a per-queue counter): a standard queue hands out
    visible messages lowest order first. ``size`` is the bytes counted against MaximumMessageSize (body plus
    attribute names, types and values).
    """

    __slots__ = (
        "message_id",
        "body",
        "message_attributes",
        "system_attributes",
        "trace_header",
        "sender_id",
        "sent_ms",
        "enqueued_ms",
        "receive_count",
        "first_receive_ms",
        "received_ms",
        "visible_at_ms",
        "state",
        "receipt_serial",
        "order",
        "queued",
        "group_id",
        "deduplication_id",
        "sequence_number",
        "dead_letter_source_arn",
        "size",
        "md5_of_body",
        "md5_of_message_attributes",
        "md5_of_system_attributes",
    )

    def __init__(
        self,
        message_id: str,
        body: str,
        message_attributes: dict[str, MessageAttributeValue],
        system_attributes: dict[str, MessageAttributeValue],
        trace_header: str | None,
        sender_id: str,
        sent_ms: int,
        size: int,
        group_id: str | None = None,
        deduplication_id: str | None = None,
    ) -> None:
        self.message_id = message_id
        self.body = body
        self.message_attributes = message_attributes or NO_ATTRIBUTES
        self.system_attributes = system_attributes or NO_ATTRIBUTES
        self.trace_header = trace_header
        self.sender_id = sender_id
        self.sent_ms = sent_ms
        self.enqueued_ms = sent_ms
        self.receive_count = 0
        self.first_receive_ms = 0
        self.received_ms = 0
        self.visible_at_ms = sent_ms
        self.state = MessageState.VISIBLE
        self.receipt_serial = 0
        self.order = 0
        self.queued = False
        self.group_id = group_id
        self.deduplication_id = deduplication_id
        self.sequence_number: str | None = None
        self.dead_letter_source_arn: str | None = None
        self.size = size
        self.md5_of_body: str | None = None
        self.md5_of_message_attributes: str | None = None
        self.md5_of_system_attributes: str | None = None

    def moved_copy(self) -> Message:
        """A copy for a dead-letter move: the same id, body, attributes, timestamps and counts in a new object,
        so references the source queue still holds (timers, ordering structures) keep seeing the deleted original."""
        copy = Message.__new__(Message)
        for name in Message.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.queued = False
        return copy

    def __repr__(self) -> str:
        return f"<Message {self.message_id} {self.state.name} visible_at={self.visible_at_ms}>"
