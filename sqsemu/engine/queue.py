"""A standard queue as a synchronous state machine: every method takes ``now`` (epoch ms) and never awaits.

Messages live in ``messages`` (by id). Each has one ``visible_at_ms``; its ``state`` says whether it is delayed,
visible or in flight (ARCHITECTURE principle 3). Visible messages wait in ``ready`` in the order they became
visible; a message leaving the visible state stays in ``ready`` and is skipped when reached, so no search is ever
needed. Timers (delay end, visibility expiry, retention) go to the broker's timer wheel through ``schedule``; a
timer whose deadline no longer matches is ignored.

Behaviour follows the SQS Developer Guide ("Amazon SQS visibility timeout", "Amazon SQS delay queues", "Amazon SQS
message timers", "Amazon SQS short and long polling") and the API Reference as summarised in SQS-REFERENCE
sections 2 to 4.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqsemu.engine import attributes as queue_attributes
from sqsemu.engine.errors import (
    BatchRequestTooLong,
    InvalidParameterValue,
    MissingParameter,
    QueueNameExists,
    ReceiptHandleIsInvalid,
    SQSError,
    invalid_value,
)
from sqsemu.engine.limits import Limits
from sqsemu.engine.message import Message, MessageState, ReceiptEntry, SendEntry
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

DELAYED, VISIBLE, IN_FLIGHT, DELETED = (
    MessageState.DELAYED,
    MessageState.VISIBLE,
    MessageState.IN_FLIGHT,
    MessageState.DELETED,
)
Schedule = Callable[[int, Callable[[Any, int], None], Any], None]
Received = tuple[Message, str]
_COMPACT_MIN = 4096


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
        return (
            isinstance(other, Namespace) and other.account_id == self.account_id and other.region == self.region
        )

    def __repr__(self) -> str:
        return f"Namespace({self.account_id!r}, {self.region!r})"


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
        schedule: Schedule,
        on_available: Callable[[Queue], None],
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
        self.messages: dict[str, Message] = {}
        self.ready: deque[Message] = deque()
        self.by_age: deque[Message] = deque()
        self.counts = [0, 0, 0, 0]
        self.waiters = WaiterLine()
        self._schedule = schedule
        self._on_available = on_available
        self._dead_in_age = 0
        self._retention_due = 0
        self.attributes: dict[str, str] = {}
        self._apply(attributes, now_ms)

    # ----------------------------------------------------------------- attributes

    def _apply(self, values: Mapping[str, str], now_ms: int) -> None:
        attrs = self.attributes
        for name, value in values.items():
            if value == "" and name in queue_attributes.OPTIONAL:
                attrs.pop(name, None)
            else:
                attrs[name] = value
        if values.get("KmsMasterKeyId") and "SqsManagedSseEnabled" not in values:
            attrs["SqsManagedSseEnabled"] = "false"
        if values.get("SqsManagedSseEnabled") == "true":
            attrs.pop("KmsMasterKeyId", None)
            attrs.pop("KmsDataKeyReusePeriodSeconds", None)
        self.visibility_timeout = int(attrs["VisibilityTimeout"])
        self.delay_seconds = int(attrs["DelaySeconds"])
        self.max_message_size = int(attrs["MaximumMessageSize"])
        self.wait_time_s = int(attrs["ReceiveMessageWaitTimeSeconds"])
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
        """GetQueueAttributes for validated ``names`` (``All`` expands to every attribute that is set)."""
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
        message.state = state

    def _make_visible(self, message: Message) -> None:
        self._set_state(message, VISIBLE)
        if not message.queued:
            message.queued = True
            self.ready.append(message)
        if self.waiters:
            self._on_available(self)

    def _on_due(self, message: Message, due_ms: int) -> None:
        """Timer: a delay ended or a visibility timeout expired (if ``due_ms`` is still the message's deadline)."""
        if message.visible_at_ms == due_ms and (message.state is IN_FLIGHT or message.state is DELAYED):
            self._make_visible(message)

    def _remove(self, message: Message, compact: bool = True) -> None:
        self.counts[message.state] -= 1
        message.state = DELETED
        del self.messages[message.message_id]
        self._dead_in_age += 1
        if compact and self._dead_in_age > _COMPACT_MIN and self._dead_in_age * 2 > len(self.by_age):
            self.by_age = deque(m for m in self.by_age if m.state is not DELETED)
            self._dead_in_age = 0

    # ----------------------------------------------------------------- retention

    def _arm_retention(self, now_ms: int, force: bool = False) -> None:
        by_age = self.by_age
        while by_age and by_age[0].state is DELETED:
            by_age.popleft()
            self._dead_in_age -= 1
        if not by_age:
            self._retention_due = 0
            return
        due = by_age[0].sent_ms + self.retention_s * 1000
        if force or self._retention_due == 0 or due < self._retention_due:
            self._retention_due = due
            self._schedule(max(due, now_ms), self._on_retention, due)

    def _on_retention(self, due: int, fired_ms: int) -> None:
        """Timer: delete every message older than the retention period (MessageRetentionPeriod)."""
        if due != self._retention_due or self.deleted:
            return
        self._retention_due = 0
        limit = fired_ms - self.retention_s * 1000
        by_age = self.by_age
        while by_age and (by_age[0].state is DELETED or by_age[0].sent_ms <= limit):
            message = by_age.popleft()
            if message.state is not DELETED:
                self._remove(message, compact=False)
            self._dead_in_age -= 1
        self._arm_retention(fired_ms)

    # ----------------------------------------------------------------- send

    def _new_message(self, entry: SendEntry, sender_id: str, now_ms: int) -> tuple[Message, int]:
        body = check_body(entry.body)
        size = len(body.encode()) + check_message_attributes(entry.message_attributes, self.limits)
        if size > self.max_message_size:
            raise InvalidParameterValue(
                "One or more parameters are invalid. "
                f"Reason: Message must be shorter than {self.max_message_size} bytes."
            )
        trace_header = check_system_attributes(entry.system_attributes) or entry.trace_header
        delay = entry.delay_seconds
        if delay is None:
            delay = self.delay_seconds
        else:
            check_range(
                delay, "DelaySeconds", 0, self.limits.delay_max_s,
                f"DelaySeconds must be >= 0 and <= {self.limits.delay_max_s}",
            )
        check_token(entry.group_id, "MessageGroupId")
        if entry.deduplication_id is not None:
            raise invalid_value(
                entry.deduplication_id,
                "MessageDeduplicationId",
                "The request include parameter that is not valid for this queue type.",
            )
        message = Message(
            str(uuid.uuid4()),
            body,
            entry.message_attributes,
            entry.system_attributes,
            trace_header,
            sender_id,
            now_ms,
            size,
            group_id=entry.group_id,
        )
        return message, delay

    def _enqueue(self, message: Message, delay_s: int, now_ms: int) -> None:
        self.messages[message.message_id] = message
        self.by_age.append(message)
        if self._retention_due == 0:
            self._arm_retention(now_ms)
        if delay_s:
            message.state = DELAYED
            self.counts[DELAYED] += 1
            message.visible_at_ms = now_ms + delay_s * 1000
            self._schedule(message.visible_at_ms, self._on_due, message)
        else:
            message.state = VISIBLE
            self.counts[VISIBLE] += 1
            message.queued = True
            self.ready.append(message)

    def send(self, entry: SendEntry, sender_id: str, now_ms: int) -> Message:
        """SendMessage: validate and store one message. Raises ``MissingParameter``, ``InvalidMessageContents``
        or ``InvalidParameterValue`` (SQS-REFERENCE 2.7)."""
        message, delay = self._new_message(entry, sender_id, now_ms)
        self._enqueue(message, delay, now_ms)
        return message

    def send_batch(self, entries: Sequence[SendEntry], sender_id: str, now_ms: int) -> list[Message | SQSError]:
        """SendMessageBatch: batch-level rules raise; each entry then succeeds or fails on its own, in order."""
        check_batch(entries, "SendMessageBatchRequestEntry", self.limits)
        total = 0
        for entry in entries:
            total += len(entry.body.encode()) if entry.body else 0
            for name, value in entry.message_attributes.items():
                total += attribute_bytes(name, value)
        if total > self.limits.batch_max_bytes:
            raise BatchRequestTooLong(
                f"Batch requests cannot be longer than {self.limits.batch_max_bytes} bytes. "
                f"You have sent {total} bytes."
            )
        results: list[Message | SQSError] = []
        for entry in entries:
            try:
                message, delay = self._new_message(entry, sender_id, now_ms)
            except SQSError as error:
                results.append(error)
                continue
            self._enqueue(message, delay, now_ms)
            results.append(message)
        return results

    # ----------------------------------------------------------------- receive

    def receive_parameters(
        self, max_number: int | None, visibility_timeout: int | None, wait_time: int | None
    ) -> tuple[int, int, int]:
        """Validate ReceiveMessage's numbers and fill the queue defaults: (max messages, visibility s, wait s)."""
        limits = self.limits
        check_range(
            max_number, "MaxNumberOfMessages", 1, limits.receive_max_messages,
            f"Must be between 1 and {limits.receive_max_messages}, if provided.",
        )
        check_range(
            visibility_timeout, "VisibilityTimeout", 0, limits.visibility_timeout_max_s,
            f"Must be >= 0 and <= {limits.visibility_timeout_max_s}, if provided.",
        )
        check_range(
            wait_time, "WaitTimeSeconds", 0, limits.wait_time_max_s,
            f"Must be >= 0 and <= {limits.wait_time_max_s}, if provided.",
        )
        return (
            1 if max_number is None else max_number,
            self.visibility_timeout if visibility_timeout is None else visibility_timeout,
            self.wait_time_s if wait_time is None else wait_time,
        )

    def receipt_handle(self, message: Message) -> str:
        """The current receipt handle of ``message`` (opaque base64 text)."""
        raw = f"{self.uid}:{message.message_id}:{message.receipt_serial}".encode()
        return base64.urlsafe_b64encode(raw).decode()

    def receive(self, now_ms: int, max_number: int, visibility_timeout: int, request_ms: int) -> list[Received]:
        """Take up to ``max_number`` visible messages, oldest-visible first, and put them in flight for
        ``visibility_timeout`` seconds; each gets a new receipt handle. ``request_ms`` is when the ReceiveMessage
        request arrived (the 12-hour maximum counts from it)."""
        ready = self.ready
        out: list[Received] = []
        again: list[Message] = []
        deadline = now_ms + visibility_timeout * 1000
        while ready and len(out) < max_number:
            message = ready.popleft()
            message.queued = False
            if message.state is not VISIBLE:
                continue
            message.receive_count += 1
            if not message.first_receive_ms:
                message.first_receive_ms = now_ms
            message.received_ms = request_ms
            message.receipt_serial += 1
            message.visible_at_ms = deadline
            if visibility_timeout:
                self._set_state(message, IN_FLIGHT)
                self._schedule(deadline, self._on_due, message)
            else:
                again.append(message)
            out.append((message, self.receipt_handle(message)))
        for message in again:
            message.queued = True
            ready.append(message)
        return out

    def dispatch(self, now_ms: int) -> None:
        """Hand visible messages to waiting long polls, longest waiter first, one receive per waiter."""
        waiters = self.waiters
        while self.ready:
            waiter = waiters.first()
            if waiter is None:
                return
            got = self.receive(now_ms, waiter.max_messages, waiter.visibility_timeout, waiter.request_ms)
            if not got:
                return
            waiters.remove(waiter)
            waiter.future.set_result(got)

    # ----------------------------------------------------------------- receipts

    def _message_for(self, receipt_handle: str | None) -> tuple[Message | None, bool]:
        """(message, current) for a receipt handle; raises ``MissingParameter``/``ReceiptHandleIsInvalid``."""
        if not receipt_handle:
            raise MissingParameter.named("ReceiptHandle")
        try:
            uid, message_id, serial = base64.urlsafe_b64decode(receipt_handle.encode()).decode().split(":")
            number = int(serial)
        except (ValueError, binascii.Error, UnicodeError):
            number = -1
            uid = message_id = ""
        if number < 0 or uid != self.uid:
            raise ReceiptHandleIsInvalid(f'The input receipt handle "{receipt_handle}" is not a valid receipt handle.')
        message = self.messages.get(message_id)
        if message is None:
            return None, False
        return message, message.receipt_serial == number

    def delete(self, receipt_handle: str | None) -> None:
        """DeleteMessage. A handle of a message already gone succeeds again; a superseded handle (the message was
        received again since) succeeds without deleting, as the API Reference warns ("the message might not be
        deleted")."""
        message, current = self._message_for(receipt_handle)
        if message is not None and current:
            self._remove(message)

    def change_visibility(self, receipt_handle: str | None, visibility_timeout: int | None, now_ms: int) -> None:
        """ChangeMessageVisibility: the new timeout counts from now, is not added to what is left, and applies to
        this receipt only. 0 makes the message visible at once; a message whose timeout already expired (and was
        not received again) is hidden again. Raises ``ReceiptHandleIsInvalid``, ``MissingParameter`` and
        ``InvalidParameterValue`` (deleted or superseded receipt; beyond 12 hours from the receive)."""
        limits = self.limits
        if visibility_timeout is None:
            raise MissingParameter.named("VisibilityTimeout")
        check_range(
            visibility_timeout, "VisibilityTimeout", 0, limits.visibility_timeout_max_s,
            f"Must be between 0 and {limits.visibility_timeout_max_s}, if provided.",
        )
        message, current = self._message_for(receipt_handle)
        if message is None or not current:
            raise invalid_value(
                receipt_handle,
                "ReceiptHandle",
                "Message does not exist or is not available for visibility timeout change.",
            )
        deadline = now_ms + visibility_timeout * 1000
        if deadline > message.received_ms + limits.visibility_timeout_max_s * 1000:
            raise invalid_value(
                visibility_timeout,
                "VisibilityTimeout",
                "Total VisibilityTimeout for the message is beyond the limit "
                f"[{limits.visibility_timeout_max_s} seconds].",
            )
        message.visible_at_ms = deadline
        if visibility_timeout == 0:
            if message.state is IN_FLIGHT:
                self._make_visible(message)
            return
        if message.state is VISIBLE:
            self._set_state(message, IN_FLIGHT)
        self._schedule(deadline, self._on_due, message)

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
        return results

    # ----------------------------------------------------------------- purge / delete

    def purge(self) -> None:
        """PurgeQueue: delete every message, visible, in flight or delayed."""
        for message in self.messages.values():
            message.state = DELETED
        self.messages.clear()
        self.ready.clear()
        self.by_age.clear()
        self.counts = [0, 0, 0, 0]
        self._dead_in_age = 0
        self._retention_due = 0

    def drop(self) -> None:
        """DeleteQueue: forget every message and answer waiting long polls with no messages."""
        self.deleted = True
        self.purge()
        self.waiters.release_all()
