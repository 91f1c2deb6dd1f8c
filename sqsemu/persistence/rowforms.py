"""The state as rows: one definition of a queue, a message, a FIFO deduplication key, a FIFO queue's last sequence
number and a message move task, shared by durable mode and saved states.

Durable mode (:mod:`sqsemu.persistence.sqlite`) writes these rows to SQLite as the engine changes and reads them back
at start-up; a saved state (:mod:`sqsemu.state`, ``GET /_sqsemu/state``) holds the same rows, read from the engine by
the same functions, and is loaded by the same :func:`restore_rows`. Nothing else turns a queue or a message into
data or back.

The rows, in column order (the SQLite tables' columns):

- ``queues`` (:data:`QUEUE_COLUMNS`, :func:`queue_row`): the queue's ``uid`` (receipt handles name it), account,
  region, name, ``fifo`` (0 or 1), ``attributes`` and ``tags`` (JSON text of ``{name: value}``), ``created_s`` and
  ``last_modified_s`` (epoch seconds), ``last_purge_ms`` (epoch ms or None) and ``delayed_attributes`` (JSON text
  of ``[[due epoch ms, {name: value}], ...]``: SetQueueAttributes changes answered but not yet applied, or None);
- ``messages`` (``writer.MESSAGE_COLUMNS``, ``rows.message_row``): the queue's uid, MessageId, the row number
  ``seq`` (the enqueue order), body, message and system attributes (JSON text of ``{name: [data type, string
  value, binary value in base64]}`` or None), trace header, SenderId, ``sent_ms``, ``enqueued_ms`` (where
  retention counts from), size (bytes), MessageGroupId, MessageDeduplicationId, SequenceNumber, the dead-letter
  source ARN, then what receiving changes: receive count, ``first_receive_ms`` and ``received_ms`` (0: never),
  ``visible_at_ms`` (the end of a delay or of the visibility timeout) and the receipt serial. A message's state
  follows from these and the clock (:func:`message_from`);
- ``deduplication`` (:data:`DEDUPLICATION_COLUMNS`): queue uid, key, ``expires_ms``, MessageId, SequenceNumber;
- ``fifo_sequences`` (:data:`SEQUENCE_COLUMNS`): queue uid and the last sequence number issued (text);
- ``move_tasks`` (:data:`TASK_COLUMNS`, :func:`task_row`): task id, source queue uid, destination ARN (None: back
  to the sources), MaxNumberOfMessagesPerSecond (None: not given), ``started_ms``, messages to move, moved,
  status, failure reason.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.fifo import FifoQueue
from sqsemu.engine.message import Message, MessageAttributeValue, MessageState
from sqsemu.engine.queue import Queue
from sqsemu.engine.redrive import MoveTask
from sqsemu.persistence.writer import MESSAGE_COLUMNS as _MESSAGE_COLUMN_TEXT

__all__ = [
    "DEDUPLICATION_COLUMNS",
    "MESSAGE_COLUMNS",
    "QUEUE_COLUMNS",
    "SEQUENCE_COLUMNS",
    "TASK_COLUMNS",
    "Restored",
    "attributes_from",
    "message_from",
    "queue_row",
    "restore_rows",
    "task_row",
]

QUEUE_COLUMNS = (
    "uid", "account", "region", "name", "fifo", "attributes", "tags", "created_s", "last_modified_s",
    "last_purge_ms", "delayed_attributes",
)  # fmt: skip
MESSAGE_COLUMNS = tuple(_MESSAGE_COLUMN_TEXT.split(", "))
DEDUPLICATION_COLUMNS = ("queue_uid", "key", "expires_ms", "message_id", "sequence_number")
SEQUENCE_COLUMNS = ("queue_uid", "last")
TASK_COLUMNS = (
    "task_id", "source_uid", "destination_arn", "max_per_second", "started_ms", "to_move", "moved", "status",
    "failure_reason",
)  # fmt: skip


def queue_row(queue: Queue) -> tuple[Any, ...]:
    """The row of ``queue`` (:data:`QUEUE_COLUMNS`)."""
    ns = queue.namespace
    return (
        queue.uid,
        ns.account_id,
        ns.region,
        queue.name,
        int(queue.fifo),
        json.dumps(queue.attributes),
        json.dumps(queue.tags),
        queue.created_s,
        queue.last_modified_s,
        queue.last_purge_ms,
        json.dumps(queue.delayed_attributes) if queue.delayed_attributes else None,
    )


def task_row(task: MoveTask[Queue]) -> tuple[Any, ...]:
    """The row of a move task (:data:`TASK_COLUMNS`)."""
    return (
        task.task_id,
        task.source.uid,
        task.destination_arn,
        task.max_per_second,
        task.started_ms,
        task.to_move,
        task.moved,
        task.status.value,
        task.failure_reason,
    )


def attributes_from(text: str | None) -> dict[str, MessageAttributeValue]:
    """A message's attribute map from its column text (``rows.attributes_json``); ``{}`` for None. Raises
    ``ValueError`` (a ``json.JSONDecodeError`` or a bad base64 value), ``TypeError`` or ``KeyError`` for text that
    is not of that form."""
    if not text:
        return {}
    return {
        name: MessageAttributeValue(data_type, string_value, None if binary is None else base64.b64decode(binary))
        for name, (data_type, string_value, binary) in json.loads(text).items()
    }


def message_from(row: Sequence[Any], now_ms: int) -> Message:
    """The message of a row (``writer.MESSAGE_COLUMNS``), in the state its times give at ``now_ms`` (epoch ms):
    visible once ``visible_at_ms`` has passed, else in flight if it was ever received, else delayed."""
    (
        _uid, message_id, _seq, body, message_attributes, system_attributes, trace_header, sender_id, sent_ms,
        enqueued_ms, size, group_id, deduplication_id, sequence_number, dead_letter_source_arn, receive_count,
        first_receive_ms, received_ms, visible_at_ms, receipt_serial,
    ) = row  # fmt: skip
    message = Message(
        message_id,
        body,
        attributes_from(message_attributes),
        attributes_from(system_attributes),
        trace_header,
        sender_id,
        sent_ms,
        size,
        group_id=group_id,
        deduplication_id=deduplication_id,
    )
    message.enqueued_ms = enqueued_ms
    message.sequence_number = sequence_number
    message.dead_letter_source_arn = dead_letter_source_arn
    message.receive_count = receive_count
    message.first_receive_ms = first_receive_ms
    message.received_ms = received_ms
    message.visible_at_ms = visible_at_ms
    message.receipt_serial = receipt_serial
    if visible_at_ms <= now_ms:
        message.state = MessageState.VISIBLE
    elif receipt_serial:
        message.state = MessageState.IN_FLIGHT
    else:
        message.state = MessageState.DELAYED
    return message


@dataclass
class Restored:
    """What :func:`restore_rows` put into a broker: the queues by uid and, when asked to keep them (a loaded state,
    which the durable store then records as new rows), the messages, deduplication keys, sequence numbers and move
    tasks with their queues."""

    queues: dict[str, Queue] = field(default_factory=dict)
    messages: list[tuple[Queue, Message]] = field(default_factory=list)
    deduplication: list[tuple[Queue, str, int, str, str]] = field(default_factory=list)
    sequences: list[tuple[Queue, int]] = field(default_factory=list)
    tasks: list[MoveTask[Queue]] = field(default_factory=list)


def restore_rows(
    broker: Broker,
    queues: Iterable[Sequence[Any]],
    messages: Iterable[Sequence[Any]],
    deduplication: Iterable[Sequence[Any]],
    sequences: Iterable[Sequence[Any]],
    tasks: Iterable[Sequence[Any]],
    placed: Callable[[str, str, int], None] | None = None,
    keep: bool = False,
) -> Restored:
    """Put the state of these rows into ``broker``, which holds none of their queues: queues with their identity
    and timestamps, messages in row order (``seq``; in flight until their deadline, delays and retention counting
    from their times, by the broker's clock), the deduplication keys not yet expired, FIFO sequence numbers and move
    tasks (a running one carries on). Rows of a queue that is not among ``queues`` are skipped.

    ``placed(queue uid, message id, seq)`` is told of each message restored (the durable store's index of its
    rows); ``keep`` fills :class:`Restored`'s lists. The rows are trusted (durable mode wrote them; a saved state
    checks its own first, ``sqsemu.state.form``): a bad row raises what the engine raises (``ValueError``,
    ``TypeError``, ``KeyError``...), with the rows before it restored."""
    now = broker.clock.now_ms()
    restored = Restored()
    by_uid = restored.queues
    for uid, account, region, name, fifo, attributes, tags, created, modified, purged, delayed in queues:
        by_uid[uid] = broker.restore_queue(
            Namespace(account, region),
            name,
            bool(fifo),
            uid,
            json.loads(attributes),
            json.loads(tags),
            created,
            modified,
            purged,
            [(int(due), dict(values)) for due, values in json.loads(delayed)] if delayed else (),
        )
    for row in messages:
        queue = by_uid.get(row[0])
        if queue is not None:
            message = message_from(row, now)
            queue.restore_message(message)
            if placed is not None:
                placed(row[0], row[1], row[2])
            if keep:
                restored.messages.append((queue, message))
    for uid, key, expires, message_id, sequence_number in sorted(
        (row for row in deduplication if row[2] > now), key=lambda row: int(row[2])
    ):
        queue = by_uid.get(uid)
        if isinstance(queue, FifoQueue):
            queue.restore_deduplication(key, expires, message_id, sequence_number)
            if keep:
                restored.deduplication.append((queue, key, expires, message_id, sequence_number))
    for uid, last in sequences:
        queue = by_uid.get(uid)
        if isinstance(queue, FifoQueue):
            queue.restore_sequence_number(int(last))
            if keep:
                restored.sequences.append((queue, int(last)))
    sources: dict[str, Queue] = {}
    for task_id, source_uid, destination, rate, started, to_move, moved, status, reason in sorted(
        tasks, key=lambda row: int(row[4])
    ):
        source = by_uid.get(source_uid)
        if source is not None:
            broker.move_tasks.restore(source, task_id, destination, rate, started, to_move, moved, status, reason)
            sources[source.uid] = source
    if keep:
        for source in sources.values():
            restored.tasks += broker.move_tasks.tasks_of(source)
    return restored
