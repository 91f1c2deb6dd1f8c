"""FIFO queues: message groups and their locks, the deduplication window, sequence numbers, receive attempts.

SQS Developer Guide "Amazon SQS FIFO queues" and "FIFO delivery logic"; API Reference ``SendMessage``,
``ReceiveMessage``; docs/behaviour.md section 5. Same synchronous state-machine style as ``queue.Queue``:

- Each message group keeps its messages in send order, and hands them out strictly in that order: a receive may
  take a group's visible messages up to (not including) its first message that is in flight or delayed. So a group
  is not locked as a whole: when its first message becomes visible again (visibility timeout run out or changed to
  0) while later ones are still in flight, that first message can be received again, and nothing behind the
  first in-flight message can. This is what AWS was recorded to do (SQS Developer Guide, "FIFO delivery logic").
- A group whose first message is visible sits in ``available``, an insertion-ordered dict used as the rotation of
  groups. A receive takes as many messages as it can from the first available group, then fills up from the next
  groups; every group it took messages from goes to the back of the rotation.
- Deduplication: a MessageDeduplicationId (explicit, or the SHA-256 of the body with ContentBasedDeduplication) is
  remembered for 5 minutes from the first send, per queue or per message group (DeduplicationScope). A duplicate is
  accepted and answered with the original MessageId and SequenceNumber but not stored again (AWS documents "accepted
  successfully but not delivered"; echoing the original ids is this server's choice). PurgeQueue forgets them.
  A DeduplicationScope changed by SetQueueAttributes shows at once but applies to sends only after
  ``SCOPE_PROPAGATION_MS`` (as AWS was recorded to do, docs/behaviour.md 5); keys remembered under the queue scope
  keep dropping their deduplication ID in every group until their window ends.
- ReceiveRequestAttemptId: a retry within 5 minutes returns the same messages and receipt handles, and restarts
  their visibility timeout, as long as none of them was deleted or had its visibility changed; otherwise the retry
  is an ordinary receive.
- SequenceNumber: 20 decimal digits, strictly increasing per queue.
- DelaySeconds per message is refused; the queue's DelaySeconds applies, and changing it is retroactive for
  messages still delayed (SQS Developer Guide, "Amazon SQS delay queues").
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Mapping, Sequence

from sqsemu.engine import faultpoints
from sqsemu.engine.delivery import Received
from sqsemu.engine.errors import InvalidParameterValue, MissingParameter, invalid_value
from sqsemu.engine.events import AddReason, DeleteReason
from sqsemu.engine.limits import Limits
from sqsemu.engine.message import Message, MessageState, SendEntry
from sqsemu.engine.queue import Namespace, Queue, QueueHost
from sqsemu.engine.validation import check_token

DELAYED, VISIBLE, IN_FLIGHT, DELETED = (
    MessageState.DELAYED,
    MessageState.VISIBLE,
    MessageState.IN_FLIGHT,
    MessageState.DELETED,
)
SCOPE_PROPAGATION_MS = 60_000
"""How long a changed DeduplicationScope takes to apply to sends: the 60 seconds the API Reference
(``SetQueueAttributes``) gives for attribute changes to propagate."""
_NO_DEDUP = (
    "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
)


class Group:
    """One message group: its messages (visible, in flight or delayed) in send order."""

    __slots__ = ("group_id", "messages")

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.messages: deque[Message] = deque()


class Attempt:
    """What a receive with a ReceiveRequestAttemptId returned: (message, receipt serial, visible_at_ms) each."""

    __slots__ = ("expires_ms", "entries")

    def __init__(self, expires_ms: int, entries: list[tuple[Message, int, int]]) -> None:
        self.expires_ms = expires_ms
        self.entries = entries


class FifoQueue(Queue):
    """A FIFO queue (name ends in ``.fifo``; created with ``FifoQueue=true``)."""

    fifo = True

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
        # The parameters of Queue.__init__, spelled out: mypyc compiles no pass-through of *args to a typed __init__.
        self.groups: dict[str, Group] = {}
        self.available: dict[str, None] = {}
        self.dedup: dict[str, tuple[int, str, str]] = {}  # key -> (expires ms, message id, sequence number)
        self._dedup_order: deque[tuple[int, str]] = deque()
        self.attempts: dict[str, Attempt] = {}
        self._attempt_order: deque[tuple[int, str]] = deque()
        self._sequence = 0
        self._scope_change: tuple[int, str] | None = None  # (from epoch ms, scope): a change not applied yet
        self._queue_keys_until_ms = 0  # queue-scope keys may still be live (after a switch to messageGroup)
        super().__init__(name, namespace, attributes, tags, now_ms, limits, host)
        self.dedup_scope = self.attributes.get("DeduplicationScope", "queue")

    # ----------------------------------------------------------------- attributes

    def set_attributes(self, values: Mapping[str, str], now_ms: int) -> None:
        """SetQueueAttributes; a new DelaySeconds also moves the deadline of messages still delayed."""
        old_delay = self.delay_seconds
        old_scope = self.attributes.get("DeduplicationScope", "queue")
        super().set_attributes(values, now_ms)
        new_scope = self.attributes.get("DeduplicationScope", "queue")
        if new_scope != old_scope:
            self._scope_change = (now_ms + SCOPE_PROPAGATION_MS, new_scope)
        if self.delay_seconds != old_delay:
            for message in self.stored():
                if message.state is DELAYED:
                    message.visible_at_ms = message.sent_ms + self.delay_seconds * 1000
                    if self.journal is not None:
                        self.journal.message_changed(self, message)
                    if message.visible_at_ms <= now_ms:
                        self._make_visible(message)
                    else:
                        self._schedule(message.visible_at_ms, self._due, message)

    # ----------------------------------------------------------------- groups

    def _refresh(self, group: Group) -> None:
        """Put ``group`` in or out of ``available``: in when its first message is visible (a group joining the
        rotation joins at the back), out otherwise."""
        if group.messages and group.messages[0].state is VISIBLE:
            if group.group_id not in self.available:
                self.available[group.group_id] = None
                if self.waiters:
                    self.host.mark_available(self)
        else:
            self.available.pop(group.group_id, None)

    def _make_visible(self, message: Message) -> None:
        self._set_state(message, VISIBLE)
        self._refresh(self.groups[message.group_id or ""])

    def _place(self, message: Message) -> None:
        self._refresh(self.groups[message.group_id or ""])

    def has_visible(self) -> bool:
        return bool(self.available)

    def _remove(self, message: Message, reason: DeleteReason, compact: bool = True) -> None:
        super()._remove(message, reason, compact)
        self._leave_group(message)

    # ----------------------------------------------------------------- send

    def _check_delay(self, delay: int | None) -> int:
        if delay:
            raise invalid_value(
                delay, "DelaySeconds", "The request include parameter that is not valid for this queue type."
            )
        return self.delay_seconds

    def _check_ids(self, entry: SendEntry) -> None:
        if entry.group_id is None:
            raise MissingParameter.named("MessageGroupId")
        check_token(entry.group_id, "MessageGroupId")
        if entry.deduplication_id is None and self.attributes.get("ContentBasedDeduplication") != "true":
            raise InvalidParameterValue(_NO_DEDUP)
        check_token(entry.deduplication_id, "MessageDeduplicationId")

    def _check_batch_entries(self, entries: Sequence[SendEntry]) -> None:
        """A FIFO batch entry without a group, or without a deduplication ID on a queue without content-based
        deduplication, fails the whole request (docs/behaviour.md 2.8)."""
        content_based = self.attributes.get("ContentBasedDeduplication") == "true"
        for entry in entries:
            if entry.group_id is None:
                raise InvalidParameterValue("The request must contain the parameter MessageGroupId.")
            if entry.deduplication_id is None and not content_based:
                raise InvalidParameterValue(_NO_DEDUP)

    def _effective_scope(self, now_ms: int) -> str:
        """The DeduplicationScope sends are deduplicated by at ``now_ms``: a changed one applies
        ``SCOPE_PROPAGATION_MS`` after the SetQueueAttributes call."""
        change = self._scope_change
        if change is not None and now_ms >= change[0]:
            self._scope_change = None
            if self.dedup_scope == "queue" and change[1] == "messageGroup":
                self._queue_keys_until_ms = now_ms + self.limits.deduplication_window_s * 1000
            self.dedup_scope = change[1]
        return self.dedup_scope

    def _dedup_key(self, group_id: str, deduplication_id: str, now_ms: int) -> str:
        if self._effective_scope(now_ms) == "messageGroup":
            return f"{group_id}\x00{deduplication_id}"
        return deduplication_id

    def _forget_expired(self, now_ms: int) -> None:
        """Forget deduplication keys and receive attempts whose window ended by ``now_ms`` (epoch ms), from the
        front of their orders (rising expiry as long as entries arrive in time order). This only frees memory: a
        key or attempt out of order is forgotten late, and ``_accept`` and ``replay_attempt`` check the expiry of
        what they find themselves."""
        order, dedup = self._dedup_order, self.dedup
        while order and order[0][0] <= now_ms:
            expires, key = order.popleft()
            entry = dedup.get(key)
            if entry is not None and entry[0] == expires:
                del dedup[key]
        attempts, attempt_order = self.attempts, self._attempt_order
        while attempt_order and attempt_order[0][0] <= now_ms:
            expires, attempt_id = attempt_order.popleft()
            attempt = attempts.get(attempt_id)
            if attempt is not None and attempt.expires_ms == expires:
                del attempts[attempt_id]

    def _accept(self, entry: SendEntry, sender_id: str, now_ms: int) -> Message:
        message, _ = self._new_message(entry, sender_id, now_ms)
        if message.deduplication_id is None:
            message.deduplication_id = hashlib.sha256(message.body_utf8).hexdigest()
        self._forget_expired(now_ms)
        key = self._dedup_key(message.group_id or "", message.deduplication_id, now_ms)
        seen = self.dedup.get(key)
        if seen is None and self._queue_keys_until_ms > now_ms:
            seen = self.dedup.get(message.deduplication_id)  # remembered under the queue scope: every group
            if seen is not None and seen[0] <= now_ms:
                seen = None
        if seen is not None and seen[0] <= now_ms:
            # Expired, though ``_forget_expired`` did not reach it (it stops at the first live key of the order):
            # never let a key past its window drop a send.
            del self.dedup[key]
            seen = None
        if seen is not None:
            # A duplicate: answered like a send (this request's body digests) with the original ids, not stored.
            message.message_id, message.sequence_number = seen[1], seen[2]
            return message
        message.sequence_number = self._next_sequence_number(now_ms)
        # Stored first, its deduplication ID remembered after: a send that fails stores nothing and remembers
        # nothing, so its retry is stored once (not dropped as a duplicate of a message that was never stored).
        self._enqueue(message, self.delay_seconds, now_ms, "sent")
        expires = now_ms + self.limits.deduplication_window_s * 1000
        self.dedup[key] = (expires, message.message_id, message.sequence_number)
        self._dedup_order.append((expires, key))
        if self.journal is not None:
            self.journal.deduplication_remembered(self, key, expires, message.message_id, message.sequence_number)
        return message

    def _join_group(self, message: Message) -> None:
        """Append ``message`` to its group, creating the group on its first message. The message's group id becomes
        the group's own (equal) string: one copy per group is kept, not one per message."""
        group_id = message.group_id or ""
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id)
        elif message.group_id is not None:
            message.group_id = group.group_id
        group.messages.append(message)

    def _next_sequence_number(self, now_ms: int) -> str:
        """20 decimal digits, strictly increasing within the queue."""
        self._sequence = max(self._sequence + 1, now_ms * 10_000_000)
        return str(self._sequence)

    def _enqueue(self, message: Message, delay_s: int, now_ms: int, reason: AddReason) -> None:
        self._join_group(message)
        try:
            super()._enqueue(message, delay_s, now_ms, reason)
        except BaseException:
            self._leave_group(message)
            raise

    def _leave_group(self, message: Message) -> None:
        """Take ``message`` out of its group (the group goes when it empties)."""
        group = self.groups.get(message.group_id or "")
        if group is None:
            return
        try:
            group.messages.remove(message)
        except ValueError:
            pass
        if group.messages:
            self._refresh(group)
        else:
            del self.groups[group.group_id]
            self.available.pop(group.group_id, None)

    # ----------------------------------------------------------------- receive

    def receive(
        self, now_ms: int, max_number: int, visibility_timeout: int, request_ms: int, moving: list[Message]
    ) -> list[Received]:
        """Take up to ``max_number`` messages: from the first group in the rotation, its visible messages in order
        up to its first one in flight or delayed, then the same from the next groups. Each group taken from goes to
        the back of the rotation (SQS Developer Guide, "FIFO delivery logic")."""
        max_number = min(max_number, self.in_flight_limit - self.counts[IN_FLIGHT])
        out: list[Received] = []
        try:
            self._receive_groups(now_ms, max_number, visibility_timeout, request_ms, out, moving)
        except BaseException:
            self.give_back(out, now_ms, moving)
            raise
        return out

    def _receive_groups(
        self,
        now_ms: int,
        max_number: int,
        visibility_timeout: int,
        request_ms: int,
        out: list[Received],
        moving: list[Message],
    ) -> None:
        fault = faultpoints.ARMED  # read once a call: disarmed, each point below is a local None check
        for group_id in list(self.available):
            if len(out) >= max_number:
                break
            group = self.groups.get(group_id)
            if group is None:
                self.available.pop(group_id, None)
                continue
            taken = len(out)
            index = 0
            while index < len(group.messages) and len(out) < max_number:
                message = group.messages[index]
                if message.state is not VISIBLE:
                    break
                index += 1
                if self._dead_letter(message, now_ms, moving):
                    continue  # set aside, still first in its group until moved: the next one may be received
                out.append((message, self._deliver(message, now_ms, visibility_timeout, request_ms)))
                if fault is not None:
                    fault("receive.delivered")
            if group_id in self.groups:
                if len(out) > taken:
                    self.available.pop(group_id, None)  # to the back of the rotation, if still available
                self._refresh(group)

    def replay_attempt(self, attempt_id: str | None, now_ms: int, visibility_timeout: int) -> list[Received] | None:
        """A retry with a known ReceiveRequestAttemptId: the same messages and receipt handles, visibility timeout
        restarted, if none was deleted or had its visibility changed since; otherwise None."""
        if attempt_id is None:
            return None
        check_token(attempt_id, "ReceiveRequestAttemptId")
        self._forget_expired(now_ms)
        attempt = self.attempts.get(attempt_id)
        if attempt is None:
            return None
        if attempt.expires_ms <= now_ms:  # past its window, whatever the order of ``_attempt_order``
            del self.attempts[attempt_id]
            return None
        for message, serial, visible_at in attempt.entries:
            changed = message.receipt_serial != serial or message.visible_at_ms != visible_at
            if message.state is not IN_FLIGHT or changed:
                del self.attempts[attempt_id]
                return None
        out: list[Received] = []
        entries: list[tuple[Message, int, int]] = []
        for message, serial, _ in attempt.entries:
            message.visible_at_ms = now_ms + visibility_timeout * 1000
            if visibility_timeout:
                self._schedule(message.visible_at_ms, self._due, message)
            else:
                self._make_visible(message)
            entries.append((message, serial, message.visible_at_ms))
            out.append((message, self.receipt_handle(message)))
            if self.journal is not None:
                self.journal.message_changed(self, message)
        attempt.entries = entries
        return out

    def record_attempt(self, attempt_id: str | None, received: list[Received], now_ms: int) -> None:
        """Remember what a receive with ``attempt_id`` returned, for 5 minutes."""
        if attempt_id is None or not received:
            return
        expires = now_ms + self.limits.deduplication_window_s * 1000
        self.attempts[attempt_id] = Attempt(
            expires, [(message, message.receipt_serial, message.visible_at_ms) for message, _ in received]
        )
        self._attempt_order.append((expires, attempt_id))

    def forget_attempt(self, attempt_id: str | None) -> None:
        if attempt_id is not None:
            self.attempts.pop(attempt_id, None)

    # ----------------------------------------------------------------- receipts

    def delete(self, receipt_handle: str | None) -> None:
        """DeleteMessage on a FIFO queue: only while the receipt is in flight; afterwards InvalidParameterValue
        ``The receipt handle has expired.`` (docs/behaviour.md 2.10)."""
        message, current = self._message_for(receipt_handle)
        if message is None:
            return
        if not current or message.state is not IN_FLIGHT:
            raise invalid_value(receipt_handle, "ReceiptHandle", "The receipt handle has expired.")
        self._remove(message, "deleted")

    def _visibility_target(self, receipt_handle: str | None) -> Message:
        """On a FIFO queue only the newest receipt handle, while its message is in flight, can change the
        visibility; otherwise InvalidParameterValue ``The receipt handle has expired.``."""
        message = super()._visibility_target(receipt_handle)
        _, current = self._message_for(receipt_handle)
        if not current or message.state is not IN_FLIGHT:
            raise invalid_value(receipt_handle, "ReceiptHandle", "The receipt handle has expired.")
        return message

    # ----------------------------------------------------------------- dead-letter moves and move tasks

    def add_dead_lettered(self, message: Message, source_arn: str, now_ms: int) -> None:
        """A FIFO dead-letter queue takes the message into its group; the deduplication ID becomes the message ID
        and the retention period restarts (SQS Developer Guide, dead-letter queues)."""
        message.deduplication_id = message.message_id
        message.enqueued_ms = now_ms
        self._join_group(message)
        super().add_dead_lettered(message, source_arn, now_ms)

    def peek_visible(self, limit: int) -> list[Message]:
        """Up to ``limit`` visible messages a receive could take, group by group in rotation order (for move tasks)."""
        out: list[Message] = []
        for group_id in self.available:
            for message in self.groups[group_id].messages:
                if len(out) >= limit or message.state is not VISIBLE:
                    break
                out.append(message)
            if len(out) >= limit:
                break
        return out

    def _prepare_redriven(self, original: Message, copy: Message, now_ms: int) -> None:
        """A redriven copy is deduplicated by the original message id and numbered like any FIFO send."""
        copy.deduplication_id = original.message_id
        copy.sequence_number = self._next_sequence_number(now_ms)

    # ----------------------------------------------------------------- restore (durable mode)

    def restore_message(self, message: Message) -> None:
        """Put a saved message back into its group (messages arrive in enqueue order)."""
        self._join_group(message)
        super().restore_message(message)
        if message.sequence_number is not None:
            self._sequence = max(self._sequence, int(message.sequence_number))

    @property
    def last_sequence_number(self) -> int:
        """The highest sequence number issued so far (0: none): what a saved state keeps (``sqsemu.state``)."""
        return self._sequence

    def restore_sequence_number(self, last: int) -> None:
        """The highest sequence number issued before a restart: later ones stay above it."""
        self._sequence = max(self._sequence, last)

    def restore_deduplication(self, key: str, expires_ms: int, message_id: str, sequence_number: str) -> None:
        """Remember a saved deduplication key until ``expires_ms`` (epoch ms). Keys must come in rising
        ``expires_ms`` order: ``_forget_expired`` forgets keys from the front of that order."""
        self.dedup[key] = (expires_ms, message_id, sequence_number)
        self._dedup_order.append((expires_ms, key))
        self._sequence = max(self._sequence, int(sequence_number))

    # ----------------------------------------------------------------- purge

    def _emptied(self, now_ms: int | None) -> None:
        """PurgeQueue also clears the deduplication history (docs/behaviour.md 2.14)."""
        super()._emptied(now_ms)
        self.groups.clear()
        self.available.clear()
        self.dedup.clear()
        self._dedup_order.clear()
        self.attempts.clear()
        self._attempt_order.clear()
