"""Messages and what a send carries.

A ``Message`` has exactly one ``visible_at_ms``; whether it is visible, in flight or delayed follows from its
``state`` and that deadline (docs/architecture.md, principle 3). A stored message costs its body plus a few
hundred bytes, a backlog's message about a hundred (docs/performance-compiled.md, "RSS per stored 1 KiB message"):
the body is kept as its UTF-8 bytes with its 16-byte MD5 digest and the MessageId's 16 bytes behind them in one
``bytes`` (``data``; decoded on the way out; the id's text is kept only once the message is received), what most
messages leave empty (the enqueue time included, when it is the send time) lives in one shared ``NO_EXTRAS``, the
size is the body's UTF-8 length unless stored, and the receipt serial is the receive count. The attribute digest
caches (``md5_*``) are filled by the protocol layer the first time it renders a digest; the engine never reads
them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

_RANDOM_IDS_PER_READ = 256
_DIGEST = 16  # bytes of the body's MD5 digest, behind the body in ``Message.data``
_ID = 16  # bytes of the MessageId (a UUID's 128 bits), behind the digest in ``Message.data``
_TAIL = _DIGEST + _ID
TAIL_BYTES = _TAIL
"""Bytes of ``Message.data`` behind the body: the body's MD5 digest and the MessageId."""
_NO_RAW_ID = bytes(_ID)  # the id bytes of a message whose MessageId is not a UUID's canonical text (kept as text)

# Version 4 and the RFC 4122 variant, applied to a whole pool of random ids at once as one integer operation: in
# each 16 bytes, the high nibble of byte 6 becomes 4 and the two high bits of byte 8 become 10.
_ID_MASK = int.from_bytes(bytes.fromhex("ffffffffffff0fff3fffffffffffffff") * _RANDOM_IDS_PER_READ, "big")
_ID_BITS = int.from_bytes(bytes.fromhex("00000000000040008000000000000000") * _RANDOM_IDS_PER_READ, "big")


class RandomIds:
    """Random version 4 UUIDs as 16 bytes each, from ``os.urandom`` read 256 ids' worth at once (one system call,
    not 256). A plain class, not a generator: compiled, :meth:`next` is a direct call (a generator's ``__next__``
    cost about 1,000 instructions an id; issue 50)."""

    def __init__(self) -> None:
        self.pool = b""
        self.at = 0

    def next(self) -> bytes:
        """The next id's 16 bytes."""
        at = self.at
        pool = self.pool
        if at >= len(pool):
            size = _ID * _RANDOM_IDS_PER_READ
            pool = self.pool = ((int.from_bytes(os.urandom(size), "big") & _ID_MASK) | _ID_BITS).to_bytes(size, "big")
            at = 0
        self.at = at + _ID
        return pool[at : at + _ID]

    def drop(self) -> None:
        """Forget the ids not handed out yet (a forked child must not hand out its parent's)."""
        self.pool = b""
        self.at = 0


_RANDOM_IDS: Final = RandomIds()


def _fresh_pool_after_fork() -> None:
    _RANDOM_IDS.drop()


os.register_at_fork(after_in_child=_fresh_pool_after_fork)


def id_text(raw: bytes) -> str:
    """A UUID's 16 bytes in its 36-character canonical text (lowercase hex, dashes after 8, 12, 16 and 20 digits),
    as ``str(uuid.UUID(bytes=raw))`` gives."""
    return f"{raw[:4].hex()}-{raw[4:10].hex('-', 2)}-{raw[10:].hex()}"  # the middle three groups: 2 bytes each


def id_bytes(text: str) -> bytes | None:
    """The 16 bytes of a MessageId in a UUID's canonical text (what :func:`id_text` makes); None for any other
    text (upper case, braces, another length: such an id is kept as text)."""
    if len(text) != 36 or text[8] != "-" or text[13] != "-" or text[18] != "-" or text[23] != "-":
        return None
    digits = text.replace("-", "")
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    return raw if len(raw) == _ID and raw.hex() == digits else None


NEW_ID = ""
"""What ``Message`` takes as its ``message_id`` to give the message a fresh random MessageId (no text is made)."""

ID_IN_DATA = "\x00"
"""What ``Message`` takes as its ``message_id`` when the ``data`` it is given already ends with the id's 16 bytes (a
message stored as bytes and made an object again, ``Queue``'s cold messages)."""


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


class SendEntry:
    """One message to send: a SendMessage request, or one SendMessageBatch entry (then ``id`` is its batch Id).

    ``delay_seconds`` None means "the queue's DelaySeconds". ``system_attributes`` holds only what the client sent
    as MessageSystemAttributes (``AWSTraceHeader``); ``trace_header`` is the request's ``X-Amzn-Trace-Id`` HTTP
    header, used as the message's AWSTraceHeader when no system attribute gives one. Attribute maps left out are
    the shared, never written ``NO_ATTRIBUTES``. ``body_checked`` True says the protocol layer has proved every
    character of ``body`` allowed in a message body (``sqsemu.protocol.json.plain_strings``), so the engine does not
    check it again; it is not part of the entry's value (equality and ``repr`` leave it out).

    A plain class, not a dataclass: compiled, a dataclass keeps the interpreted ``__init__`` the dataclasses module
    writes, about a microsecond per batch entry (docs/performance-compiled.md).
    """

    __slots__ = (
        "body",
        "delay_seconds",
        "message_attributes",
        "system_attributes",
        "group_id",
        "deduplication_id",
        "trace_header",
        "id",
        "body_checked",
    )

    def __init__(
        self,
        body: str | None,
        delay_seconds: int | None = None,
        message_attributes: dict[str, MessageAttributeValue] | None = None,
        system_attributes: dict[str, MessageAttributeValue] | None = None,
        group_id: str | None = None,
        deduplication_id: str | None = None,
        trace_header: str | None = None,
        id: str = "",
        body_checked: bool = False,
    ) -> None:
        self.body = body
        self.delay_seconds = delay_seconds
        self.message_attributes: dict[str, MessageAttributeValue] = (
            NO_ATTRIBUTES if message_attributes is None else message_attributes
        )
        self.system_attributes: dict[str, MessageAttributeValue] = (
            NO_ATTRIBUTES if system_attributes is None else system_attributes
        )
        self.group_id = group_id
        self.deduplication_id = deduplication_id
        self.trace_header = trace_header
        self.id = id
        self.body_checked = body_checked

    def _key(self) -> tuple[object, ...]:
        return (
            self.body,
            self.delay_seconds,
            self.message_attributes,
            self.system_attributes,
            self.group_id,
            self.deduplication_id,
            self.trace_header,
            self.id,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SendEntry) and self._key() == other._key()

    def __repr__(self) -> str:
        names = ("body", "delay_seconds", "message_attributes", "system_attributes", "group_id",
                 "deduplication_id", "trace_header", "id")  # fmt: skip
        return f"SendEntry({', '.join(f'{n}={v!r}' for n, v in zip(names, self._key(), strict=True))})"


class ReceiptEntry:
    """One DeleteMessageBatch / ChangeMessageVisibilityBatch entry (``visibility_timeout`` only for the latter).
    A plain class for the reason :class:`SendEntry` is."""

    __slots__ = ("id", "receipt_handle", "visibility_timeout")

    def __init__(self, id: str, receipt_handle: str | None, visibility_timeout: int | None = None) -> None:
        self.id = id
        self.receipt_handle = receipt_handle
        self.visibility_timeout = visibility_timeout

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ReceiptEntry)
            and self.id == other.id
            and self.receipt_handle == other.receipt_handle
            and self.visibility_timeout == other.visibility_timeout
        )

    def __repr__(self) -> str:
        return (
            f"ReceiptEntry(id={self.id!r}, receipt_handle={self.receipt_handle!r}, "
            f"visibility_timeout={self.visibility_timeout!r})"
        )


def send_entry_from(fields: dict[str, Any]) -> SendEntry:
    """A SendMessageBatch entry from its decoded members: ``fields`` maps :class:`SendEntry`'s parameter names to
    values, an absent member left out (no body: None; no ``Id``: ``""``, which the engine refuses as
    ``InvalidBatchEntryId``). Made positionally: compiled, a call with keyword arguments unpacked from a dict parses
    them by name, about 6,000 instructions an entry (docs/performance.md, issue 50)."""
    return SendEntry(  # fields.get each time, not a bound ``get``: compiled, a dict lookup rather than a call
        fields.get("body"),
        fields.get("delay_seconds"),
        fields.get("message_attributes"),
        fields.get("system_attributes"),
        fields.get("group_id"),
        fields.get("deduplication_id"),
        None,
        fields.get("id", ""),
    )


def receipt_entry_from(fields: dict[str, Any]) -> ReceiptEntry:
    """A DeleteMessageBatch or ChangeMessageVisibilityBatch entry from its decoded members (as
    :func:`send_entry_from`; no ``Id``: ``""``, no ``ReceiptHandle``: None)."""
    return ReceiptEntry(fields.get("id", ""), fields.get("receipt_handle"), fields.get("visibility_timeout"))


class MessageExtras:
    """The fields that most messages leave empty, kept out of ``Message`` so that a plain message (no message or
    system attributes, no trace header, no group, no deduplication ID, an ASCII body) holds one reference to the
    shared ``NO_EXTRAS`` instead of ten slots of its own.

    ``size`` is the message's size in bytes (see ``Message.size``); ``enqueued_ms`` is ``Message.enqueued_ms``
    (the send time unless the message was dead-lettered to a FIFO queue or restored so); the ``md5_*`` fields are
    the protocol layer's caches of the attribute digests (32 hex digits). An instance other than ``NO_EXTRAS``
    belongs to one message.
    """

    __slots__ = (
        "message_attributes",
        "system_attributes",
        "trace_header",
        "group_id",
        "deduplication_id",
        "sequence_number",
        "dead_letter_source_arn",
        "size",
        "enqueued_ms",
        "md5_of_message_attributes",
        "md5_of_system_attributes",
    )

    def __init__(
        self,
        message_attributes: dict[str, MessageAttributeValue],
        system_attributes: dict[str, MessageAttributeValue],
        trace_header: str | None,
        group_id: str | None,
        deduplication_id: str | None,
        size: int,
        enqueued_ms: int,
    ) -> None:
        self.message_attributes = message_attributes
        self.system_attributes = system_attributes
        self.trace_header = trace_header
        self.group_id = group_id
        self.deduplication_id = deduplication_id
        self.sequence_number: str | None = None
        self.dead_letter_source_arn: str | None = None
        self.size = size
        self.enqueued_ms = enqueued_ms
        self.md5_of_message_attributes: str | None = None
        self.md5_of_system_attributes: str | None = None

    def copy(self) -> MessageExtras:
        """A field-by-field copy (the attribute maps are shared: they are never changed in place)."""
        copy = MessageExtras(
            self.message_attributes,
            self.system_attributes,
            self.trace_header,
            self.group_id,
            self.deduplication_id,
            self.size,
            self.enqueued_ms,
        )
        copy.sequence_number = self.sequence_number
        copy.dead_letter_source_arn = self.dead_letter_source_arn
        copy.md5_of_message_attributes = self.md5_of_message_attributes
        copy.md5_of_system_attributes = self.md5_of_system_attributes
        return copy


NO_EXTRAS = MessageExtras(NO_ATTRIBUTES, NO_ATTRIBUTES, None, None, None, 0, 0)
"""The extras of every plain message; never written to (``Message`` copies it before a write)."""


class Message:
    """A stored message.

    Times are epoch milliseconds. ``receive_count`` is ``ApproximateReceiveCount``; it also numbers the receipts:
    the newest receipt handle carries it as its serial (``receipt_serial``, 0 before the first receive).
    ``first_receive_ms`` is ``ApproximateFirstReceiveTimestamp`` (0 until the first receive). ``enqueued_ms`` is
    where the retention period counts from: the send, or the dead-letter move for a FIFO dead-letter queue.
    ``received_ms`` is when the newest receipt's ReceiveMessage request arrived (the 12-hour visibility maximum
    counts from it). ``order`` is the message's place in its queue's enqueue order (a per-queue counter): a
    standard queue hands out visible messages lowest order first. ``size`` is the bytes counted against
    MaximumMessageSize (body plus attribute names, types and values).

    The body is stored once, as ``data``: its UTF-8 bytes followed by the 16 bytes of their MD5 digest and the 16
    bytes of the MessageId (one ``bytes`` object: a 1 KiB ASCII body takes the room its ``str`` took, and neither
    the digest nor the id costs an object of its own). ``body`` decodes it on the way out, ``body_utf8`` gives the
    bytes and ``md5_of_body`` the digest's 32 hex digits (``MD5OfBody``). The body was checked on input (no
    surrogates: the SQS allowed-character rule); it is encoded and decoded with ``surrogatepass`` all the same, so
    any ``str`` round-trips.

    ``message_id`` is the MessageId's text: ``kept_id`` when set (:meth:`keep_id` sets it when the queue indexes a
    received message by it; an id that is not a UUID's canonical text is always kept), else made from the id bytes
    in ``data`` on each read (about 0.2 us compiled). A message waiting in a backlog, never received, so holds no
    ``str`` of its id.

    The fields most messages leave empty (message and system attributes, trace header, group, deduplication ID,
    sequence number, dead-letter source ARN, the size when it is not the body's UTF-8 length and the enqueue time
    when it is not the send time) live in ``extras`` (a ``MessageExtras``, the shared ``NO_EXTRAS`` for a plain
    message) and read and write as attributes of the message. A plain 1 KiB message kept as an object takes about
    1.27 KB of RSS in all, its queue's deque slots included; one its queue keeps cold, as bytes with no object
    (``Queue.cold``), about 1.13 KB (``python bench/inproc.py --n 200000 --workloads backlog``;
    docs/performance-compiled.md says what each part costs).
    """

    __slots__ = (
        "kept_id",
        "data",
        "extras",
        "sender_id",
        "sent_ms",
        "receive_count",
        "first_receive_ms",
        "received_ms",
        "visible_at_ms",
        "state",
        "order",
        "queued",
    )
    extras: MessageExtras
    kept_id: str | None

    @property
    def message_attributes(self) -> dict[str, MessageAttributeValue]:
        return self.extras.message_attributes

    @message_attributes.setter
    def message_attributes(self, value: dict[str, MessageAttributeValue]) -> None:
        self._own_extras().message_attributes = value

    @property
    def system_attributes(self) -> dict[str, MessageAttributeValue]:
        return self.extras.system_attributes

    @system_attributes.setter
    def system_attributes(self, value: dict[str, MessageAttributeValue]) -> None:
        self._own_extras().system_attributes = value

    @property
    def trace_header(self) -> str | None:
        return self.extras.trace_header

    @trace_header.setter
    def trace_header(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().trace_header = value

    @property
    def group_id(self) -> str | None:
        return self.extras.group_id

    @group_id.setter
    def group_id(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().group_id = value

    @property
    def deduplication_id(self) -> str | None:
        return self.extras.deduplication_id

    @deduplication_id.setter
    def deduplication_id(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().deduplication_id = value

    @property
    def sequence_number(self) -> str | None:
        return self.extras.sequence_number

    @sequence_number.setter
    def sequence_number(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().sequence_number = value

    @property
    def dead_letter_source_arn(self) -> str | None:
        return self.extras.dead_letter_source_arn

    @dead_letter_source_arn.setter
    def dead_letter_source_arn(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().dead_letter_source_arn = value

    @property
    def md5_of_message_attributes(self) -> str | None:
        return self.extras.md5_of_message_attributes

    @md5_of_message_attributes.setter
    def md5_of_message_attributes(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().md5_of_message_attributes = value

    @property
    def md5_of_system_attributes(self) -> str | None:
        return self.extras.md5_of_system_attributes

    @md5_of_system_attributes.setter
    def md5_of_system_attributes(self, value: str | None) -> None:
        if value is None and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().md5_of_system_attributes = value

    @property
    def enqueued_ms(self) -> int:
        """Where the retention period counts from (epoch ms): the send time unless stored in the extras."""
        extras = self.extras
        return self.sent_ms if extras is NO_EXTRAS else extras.enqueued_ms

    @enqueued_ms.setter
    def enqueued_ms(self, value: int) -> None:
        if value == self.sent_ms and self.extras is NO_EXTRAS:
            return  # nothing to store: the message stays plain
        self._own_extras().enqueued_ms = value

    @property
    def message_id(self) -> str:
        """The MessageId (36 characters for the ids sqsemu makes): ``kept_id``, or made from ``data``'s id bytes."""
        kept = self.kept_id
        return id_text(self.data[-_ID:]) if kept is None else kept

    @message_id.setter
    def message_id(self, value: str) -> None:
        self.kept_id = value  # kept as given: it may differ from the id bytes (a FIFO duplicate's original id)

    def keep_id(self) -> str:
        """The MessageId, kept as text from now on (what a queue's index of received messages is keyed by)."""
        kept = self.kept_id
        if kept is None:
            kept = self.kept_id = id_text(self.data[-_ID:])
        return kept

    def has_id(self, text: str, raw: bytes | None) -> bool:
        """Whether this message's MessageId is ``text`` (``raw``: its bytes, as :func:`id_bytes` gives them), without
        making the id's text."""
        kept = self.kept_id
        if kept is not None:
            return kept == text
        return raw is not None and self.data.endswith(raw)

    @property
    def body(self) -> str:
        """The message body, decoded from ``data`` (a new ``str`` each time)."""
        return self.data[:-_TAIL].decode("utf-8", "surrogatepass")

    @property
    def body_utf8(self) -> bytes:
        """The body's UTF-8 bytes (a copy out of ``data``), as MD5OfBody and content-based deduplication hash them."""
        return self.data[:-_TAIL]

    def md5_of_body(self) -> str:
        """``MD5OfBody``: the hex MD5 of the UTF-8 body (32 lowercase hex digits), from the digest kept in ``data``."""
        return self.data[-_TAIL:-_ID].hex()

    @property
    def receipt_serial(self) -> int:
        """The serial of the newest receipt handle: the receive count (both count the receives)."""
        return self.receive_count

    @receipt_serial.setter
    def receipt_serial(self, serial: int) -> None:
        self.receive_count = serial

    def _own_extras(self) -> MessageExtras:
        """The message's extras, made its own first when it shares ``NO_EXTRAS`` (a plain message's)."""
        extras = self.extras
        if extras is NO_EXTRAS:
            extras = MessageExtras(NO_ATTRIBUTES, NO_ATTRIBUTES, None, None, None, len(self.data) - _TAIL, self.sent_ms)
            self.extras = extras
        return extras

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
        data: bytes | None = None,
    ) -> None:
        """``message_id`` :data:`NEW_ID` gives the message a fresh random MessageId; :data:`ID_IN_DATA` takes the id
        bytes ``data`` ends with. ``data``, when given, is another message's ``data`` (the same body: a redriven or
        dead-lettered copy): then ``body`` is not read and neither encoded nor hashed again (the object itself is
        shared when the id is the same)."""
        kept: str | None = None
        if message_id == NEW_ID:
            raw = _RANDOM_IDS.next()
        elif message_id == ID_IN_DATA and data is not None:
            raw = b""  # the id bytes are in ``data`` already
        else:
            parsed = id_bytes(message_id)
            if parsed is None:
                raw = _NO_RAW_ID
                kept = message_id
            else:
                raw = parsed
        self.kept_id = kept
        if data is None:
            encoded = body.encode("utf-8", "surrogatepass")
            data = b"".join((encoded, hashlib.md5(encoded).digest(), raw))
        elif raw and not data.endswith(raw):
            data = data[:-_ID] + raw
        self.data = data
        if (
            message_attributes
            or system_attributes
            or trace_header is not None
            or group_id is not None
            or deduplication_id is not None
            or size != len(data) - _TAIL
        ):
            self.extras = MessageExtras(
                message_attributes or NO_ATTRIBUTES,
                system_attributes or NO_ATTRIBUTES,
                trace_header,
                group_id,
                deduplication_id,
                size,
                sent_ms,
            )
        else:
            self.extras = NO_EXTRAS
        self.sender_id = sender_id
        self.sent_ms = sent_ms
        self.receive_count = 0
        self.first_receive_ms = 0
        self.received_ms = 0
        self.visible_at_ms = sent_ms
        self.state = MessageState.VISIBLE
        self.order = 0
        self.queued = False

    @property
    def size(self) -> int:
        """Bytes counted against MaximumMessageSize: the UTF-8 body plus attribute names, types and values (the
        body's UTF-8 length when the message has no attributes: nothing is stored)."""
        extras = self.extras
        return len(self.data) - _TAIL if extras is NO_EXTRAS else extras.size

    def moved_copy(self) -> Message:
        """A copy for a dead-letter move: the same id, body, attributes, timestamps and counts in a new object
        (with extras of its own), so references the source queue still holds (timers, ordering structures) keep
        seeing the deleted original. The body's ``data`` is shared (bytes never change)."""
        copy = Message(
            ID_IN_DATA, "", NO_ATTRIBUTES, NO_ATTRIBUTES, None, self.sender_id, self.sent_ms, 0, data=self.data
        )
        copy.kept_id = self.kept_id  # the id's text, when kept, as given (it may differ from the id bytes)
        copy.extras = self.extras if self.extras is NO_EXTRAS else self.extras.copy()
        copy.receive_count = self.receive_count
        copy.first_receive_ms = self.first_receive_ms
        copy.received_ms = self.received_ms
        copy.visible_at_ms = self.visible_at_ms
        copy.state = self.state
        copy.order = self.order
        copy.queued = False
        return copy

    def __repr__(self) -> str:
        return f"<Message {self.message_id} {self.state.name} visible_at={self.visible_at_ms}>"
