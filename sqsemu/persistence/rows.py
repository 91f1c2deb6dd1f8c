"""The durable store's message rows waiting for the next group commit, recorded from the engine's message events.

:class:`MessageRows` is the journal the broker calls (``SQLiteStore.attach`` subscribes it): the three message
events (a message added, changed, deleted: each runs once or more per message, on the event loop, inside the
engine's change) are turned into row data here, in a module compiled with mypyc (``sqsemu.compiled.MODULES``);
every other event (queues, deduplication keys, move tasks: once per request at most) is passed on to the store,
which records it itself. Nothing here touches SQLite: ``SQLiteStore._take`` hands what is pending to the writer.

Pending work is merged per row number: a new row in full (``inserts``; column order ``MESSAGE_COLUMNS`` in
``writer.py``); the changed columns of a row on disk, its number last (``updates``); row numbers to delete
(``deletes``). A message added and deleted within one batch costs nothing; several changes of one message leave the
last. docs/performance-compiled.md ("Durable (--data-dir) against in memory") has the measured cost of each step.

A failure while recording (a bug, memory) is never raised into the engine: the store is told (``fail``, which marks
it failed for good) and from then on nothing is recorded (``failed``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, Protocol

from sqsemu.engine.events import AddReason, DeleteReason
from sqsemu.engine.message import NO_EXTRAS, Message, MessageAttributeValue
from sqsemu.engine.queue import Queue
from sqsemu.engine.redrive import MoveTask

__all__ = ["MessageRows", "StoreEvents", "attributes_json", "changed_columns", "message_row"]


class StoreEvents(Protocol):
    """The engine events the store records itself (``SQLiteStore``): passed on by :class:`MessageRows`."""

    def queue_saved(self, queue: Queue) -> None: ...
    def queue_deleted(self, queue: Queue) -> None: ...
    def queue_purged(self, queue: Queue) -> None: ...
    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None: ...
    def task_saved(self, task: MoveTask[Queue]) -> None: ...


def attributes_json(attributes: dict[str, MessageAttributeValue]) -> str | None:
    """A message's attribute map as the store keeps it: JSON text ``{name: [data type, string value, binary value
    in base64]}`` (None for no attributes)."""
    if not attributes:
        return None
    return json.dumps(
        {
            name: [
                value.data_type,
                value.string_value,
                None if value.binary_value is None else base64.b64encode(value.binary_value).decode(),
            ]
            for name, value in attributes.items()
        }
    )


def changed_columns(message: Message) -> tuple[Any, ...]:
    """What receiving changes in a message's row: receive count, first receive and receive times (epoch ms), the
    visibility deadline (epoch ms) and the receipt serial (``writer._MESSAGES``' update columns, in order)."""
    return (
        message.receive_count,
        message.first_receive_ms,
        message.received_ms,
        message.visible_at_ms,
        message.receipt_serial,
    )


def message_row(
    uid: str,
    message_id: str,
    seq: int,
    message: Message,
    encode: Callable[[dict[str, MessageAttributeValue]], str | None] = attributes_json,
) -> tuple[Any, ...]:
    """A message's row: the values of ``writer.MESSAGE_COLUMNS`` in order, for queue ``uid`` at row number ``seq``
    (its place in the enqueue order). The one form of a message that durable mode writes and restores and that a
    saved state holds (``sqsemu.persistence.rowforms``); ``encode`` turns an attribute map into its column text."""
    if message.extras is NO_EXTRAS:  # a plain message: none of the fields below is set
        message_attributes = system_attributes = trace_header = group_id = None
        deduplication_id = sequence_number = dead_letter_source_arn = None
    else:
        attributes = message.message_attributes
        system = message.system_attributes
        message_attributes = encode(attributes) if attributes else None
        system_attributes = encode(system) if system else None
        trace_header = message.trace_header
        group_id = message.group_id
        deduplication_id = message.deduplication_id
        sequence_number = message.sequence_number
        dead_letter_source_arn = message.dead_letter_source_arn
    return (
        uid,
        message_id,
        seq,
        message.body,
        message_attributes,
        system_attributes,
        trace_header,
        message.sender_id,
        message.sent_ms,
        message.enqueued_ms,
        message.size,
        group_id,
        deduplication_id,
        sequence_number,
        dead_letter_source_arn,
    ) + changed_columns(message)


class MessageRows:
    """The pending message rows of one store, and the journal its broker calls (see the module docstring).

    ``store`` receives the events other than the message events (:class:`StoreEvents`: the ``SQLiteStore``);
    ``next_seq`` is the next row number (the highest on disk plus one); ``recorded()`` is called when the first
    change after a commit is recorded (the store starts its writer); ``fail(what, exc)`` when recording fails.
    ``rows`` maps queue uid -> message id -> row number for every message on disk or pending; ``sequences`` the
    highest FIFO sequence number issued per queue uid in this batch. ``attributes_json`` turns an attribute map
    into its column text (an attribute, so that a test can make recording fail).
    """

    def __init__(
        self,
        store: StoreEvents,
        next_seq: int,
        recorded: Callable[[], None],
        fail: Callable[[str, BaseException], None],
    ) -> None:
        self.store = store
        self.next_seq = next_seq
        self.recorded = recorded
        self.fail = fail
        self.attributes_json: Callable[[dict[str, MessageAttributeValue]], str | None] = attributes_json
        self.inserts: dict[int, tuple[Any, ...]] = {}
        self.updates: dict[int, tuple[Any, ...]] = {}
        self.deletes: list[int] = []
        self.rows: dict[str, dict[str, int]] = {}
        self.sequences: dict[str, str] = {}
        self.told = False  # ``recorded()`` was called since the batch was last taken
        self.failed = False

    # ----------------------------------------------------------------- the batch

    def take(self) -> tuple[dict[int, tuple[Any, ...]], dict[int, tuple[Any, ...]], list[int], dict[str, str]]:
        """The pending ``(inserts, updates, deletes, sequences)``, handed over; the next batch starts empty."""
        taken = (self.inserts, self.updates, self.deletes, self.sequences)
        self.clear()
        return taken

    def clear(self) -> None:
        """Start the next batch empty (what was pending was handed over, or will never be written)."""
        self.inserts, self.updates, self.deletes, self.sequences = {}, {}, [], {}
        self.told = False

    def forget_queue(self, uid: str) -> None:
        """Drop the pending rows and the row index of queue ``uid`` (deleted or purged: the store deletes its rows
        on disk itself)."""
        rows = self.rows.pop(uid, None)
        if rows:
            numbers = set(rows.values())
            self.inserts = {seq: row for seq, row in self.inserts.items() if seq not in numbers}
            self.updates = {seq: row for seq, row in self.updates.items() if seq not in numbers}

    def _tell(self) -> None:
        if not self.told:
            self.told = True
            self.recorded()

    # ----------------------------------------------------------------- the message events

    def message_added(self, queue: Queue, message: Message, reason: AddReason) -> None:
        """Journal: a new message row (numbered in enqueue order)."""
        if self.failed:
            return
        try:
            self._added(queue, message)
        except Exception as exc:
            self.fail(f"to record a new message of queue {queue.name}", exc)

    def _added(self, queue: Queue, message: Message) -> None:
        # The persistence code's contact with a message: its fields read in ``message_row``, a Message made in
        # ``rowforms.message_from``. The row's column order is MESSAGE_COLUMNS (writer.py).
        seq = self.next_seq
        self.next_seq = seq + 1
        uid = queue.uid
        message_id = message.keep_id()  # ``rows`` holds the text anyway: kept, the first receive finds it made
        row = self.inserts[seq] = message_row(uid, message_id, seq, message, self.attributes_json)
        sequence_number = row[13]
        rows = self.rows.get(uid)
        if rows is None:
            rows = self.rows[uid] = {}
        rows[message_id] = seq
        if sequence_number is not None:
            self.sequences[uid] = sequence_number
        self._tell()

    def message_changed(self, queue: Queue, message: Message) -> None:
        """Journal: new receive count, receipt and deadline of a message."""
        if self.failed:
            return
        try:
            seq = self.rows[queue.uid][message.message_id]
            new = self.inserts.get(seq)
            if new is not None:  # added in this batch: the new row carries the change
                self.inserts[seq] = new[:15] + changed_columns(message)
            else:
                self.updates[seq] = (*changed_columns(message), seq)
            self._tell()
        except Exception as exc:
            self.fail(f"to record a change of message {message.message_id} of queue {queue.name}", exc)

    def message_deleted(self, queue: Queue, message: Message, reason: DeleteReason) -> None:
        """Journal: the message row goes (nothing at all if it was added in this same batch)."""
        if self.failed:
            return
        try:
            seq = self.rows[queue.uid].pop(message.message_id)
            if self.inserts.pop(seq, None) is None:  # on disk (a row added in this batch is simply not written)
                self.updates.pop(seq, None)
                self.deletes.append(seq)
            self._tell()
        except Exception as exc:
            self.fail(f"to record the deletion of message {message.message_id} of queue {queue.name}", exc)

    # ----------------------------------------------------------------- the other events: the store's

    def messages_received(self, queue: Queue, count: int) -> None:
        """Journal: nothing to keep (the receives changed their messages, told one by one)."""

    def queue_saved(self, queue: Queue) -> None:
        self.store.queue_saved(queue)

    def queue_deleted(self, queue: Queue) -> None:
        self.store.queue_deleted(queue)

    def queue_purged(self, queue: Queue) -> None:
        self.store.queue_purged(queue)

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        self.store.deduplication_remembered(queue, key, expires_ms, message_id, sequence_number)

    def task_saved(self, task: MoveTask[Queue]) -> None:
        self.store.task_saved(task)
