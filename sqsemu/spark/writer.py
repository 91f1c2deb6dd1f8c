"""Writing to SQS from Spark: ``df.write.format("sqs")`` and ``df.writeStream.format("sqs")``.

Each Spark task sends its partition's rows with SendMessageBatch, ten entries (and at most 256 KiB) per call,
up to eight calls at once on a standard queue (one at a time, in row order, on a FIFO queue), retrying entries
that fail on the server's side (bounded by ``maxRetries``); entries that still fail raise
:class:`~sqsemu.spark.client.SQSBatchError` when ``failOnError`` is true (the default), and are counted and
logged otherwise. With ``operation=delete`` the rows are acknowledged instead: DeleteMessageBatch by the receipt
handle column (what a batch read returned).

FIFO queues need a message group id column. Rows without a deduplication id get one derived from where the row
sits in the write: SHA-256 of (query id, micro-batch id, partition, row index) for a stream, (write id, 0,
partition, row index) for a batch write. A retried task or a micro-batch replayed after a restart therefore
sends the same ids again, and SQS drops the copies within its 5-minute deduplication interval.

The sink only appends: overwrite (``mode("overwrite")``, or output mode complete for a stream) is refused.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage
from pyspark.sql.types import (
    DataType,
    IntegerType,
    LongType,
    MapType,
    Row,
    ShortType,
    StringType,
    StructType,
)

from sqsemu.spark.client import SQSBatchError, delete_messages, get_json_client, queue_is_fifo, run_batches
from sqsemu.spark.options import SQSOptions

__all__ = ["SQSCommitMessage", "SQSStreamWriter", "SQSWriter", "WritePlan", "plan_write", "refuse_overwrite"]

log = logging.getLogger("sqsemu.spark")

CHUNK_ROWS = 400  # rows turned into entries and sent before the next are read (bounds a task's memory)
# Batch calls a task makes at once on a standard queue (a FIFO queue's are made one after the other, in row order).
SEND_CONCURRENCY = 8
_RETRYABLE_CODES = {"ThrottlingException", "RequestThrottled", "ServiceUnavailable", "InternalError", "KmsThrottled"}
_QUERY_ID_PROPERTY = "sql.streaming.queryId"  # set by Spark on every task of a streaming query
_BATCH_ID_PROPERTY = "streaming.sql.batchId"


@dataclass(frozen=True)
class WritePlan:
    """Which column (by position in the row) holds what; built on the driver by :func:`plan_write`.

    ``attributes_kind`` is ``"strings"`` for ``map<string,string>`` (each value sent as DataType String) or
    ``"structs"`` for the read schema's ``map<string, struct<data_type, string_value, binary_value>>``.
    """

    queue_url: str
    fifo: bool
    operation: str
    body: int | None = None
    group_id: int | None = None
    group_id_explicit: bool = False
    deduplication_id: int | None = None
    delay_seconds: int | None = None
    attributes: int | None = None
    attributes_kind: str | None = None
    receipt_handle: int | None = None


@dataclass
class SQSCommitMessage(WriterCommitMessage):
    """What one task did: ``written`` rows sent (or deleted), ``failed`` rows given up on (only when
    ``failOnError`` is false), and up to five ``errors`` as text."""

    partition: int
    written: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def _column(schema: StructType, option: str, explicit: str | None, default: str, required: bool) -> int | None:
    names = schema.fieldNames()
    if explicit is not None:
        if explicit not in names:
            raise ValueError(
                f"sqs data source: option '{option}' names column {explicit!r}, which the DataFrame does not have "
                f"(columns: {', '.join(names)})"
            )
        return names.index(explicit)
    if default in names:
        return names.index(default)
    if required:
        raise ValueError(
            f"sqs data source: the DataFrame has no column {default!r}; name the column with option '{option}' "
            f"(columns: {', '.join(names)})"
        )
    return None


def _check_type(
    schema: StructType, index: int | None, option: str, allowed: tuple[type[DataType], ...], hint: str
) -> None:
    if index is None:
        return
    column = schema.fields[index]
    if not isinstance(column.dataType, allowed):
        raise ValueError(
            f"sqs data source: column {column.name!r} ({option}) is {column.dataType.simpleString()}; {hint}"
        )


def plan_write(schema: StructType, options: SQSOptions, queue_url: str) -> WritePlan:
    """Check the DataFrame's schema against the write options and say which column holds what.

    Raises ``ValueError`` for a named column that does not exist, a missing body (or receipt handle, for
    ``operation=delete``) column, a FIFO queue without a group id column, or a column of the wrong type (body,
    ids and receipt handle: string; delay: integer seconds; attributes: map<string,string> or the read schema's
    map<string, struct<data_type, string_value, binary_value>>).
    """
    opts = options.write
    fifo = queue_is_fifo(queue_url)
    if opts.operation == "delete":
        handle = _column(schema, "receiptHandleColumn", opts.receipt_handle_column, "receipt_handle", True)
        _check_type(schema, handle, "receiptHandleColumn", (StringType,), "receipt handles must be strings")
        return WritePlan(queue_url=queue_url, fifo=fifo, operation="delete", receipt_handle=handle)

    body = _column(schema, "bodyColumn", opts.body_column, "body", True)
    _check_type(
        schema,
        body,
        "bodyColumn",
        (StringType,),
        "message bodies must be strings (use to_json(...) or .cast('string'))",
    )
    group = _column(schema, "groupIdColumn", opts.group_id_column, "message_group_id", fifo)
    _check_type(schema, group, "groupIdColumn", (StringType,), "group ids must be strings")
    dedup = _column(schema, "deduplicationIdColumn", opts.deduplication_id_column, "message_deduplication_id", False)
    _check_type(schema, dedup, "deduplicationIdColumn", (StringType,), "deduplication ids must be strings")
    delay = _column(schema, "delaySecondsColumn", opts.delay_seconds_column, "delay_seconds", False)
    _check_type(
        schema,
        delay,
        "delaySecondsColumn",
        (IntegerType, LongType, ShortType),
        "delays must be integer seconds (0-900)",
    )
    attrs = _column(schema, "messageAttributesColumn", opts.message_attributes_column, "message_attributes", False)
    kind: str | None = None
    if attrs is not None:
        data_type = schema.fields[attrs].dataType
        if isinstance(data_type, MapType) and isinstance(data_type.keyType, StringType):
            value_type = data_type.valueType
            if isinstance(value_type, StringType):
                kind = "strings"
            elif isinstance(value_type, StructType) and {"data_type", "string_value"} <= set(value_type.fieldNames()):
                kind = "structs"
        if kind is None:
            raise ValueError(
                f"sqs data source: column {schema.fields[attrs].name!r} (messageAttributesColumn) is "
                f"{data_type.simpleString()}; message attributes must be map<string,string> or "
                "map<string,struct<data_type:string,string_value:string,binary_value:binary>>"
            )
    return WritePlan(
        queue_url=queue_url,
        fifo=fifo,
        operation="send",
        body=body,
        group_id=group,
        group_id_explicit=opts.group_id_column is not None,
        deduplication_id=dedup,
        delay_seconds=delay,
        attributes=attrs,
        attributes_kind=kind,
    )


def derived_deduplication_id(write_id: str, batch_id: int, partition: int, row: int) -> str:
    """The deduplication id of a FIFO row that has none: hex SHA-256 of where it sits in the write (64 chars)."""
    return hashlib.sha256(f"{write_id}/{batch_id}/{partition}/{row}".encode()).hexdigest()


def _attributes(value: Any, kind: str | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if not value:
        return out
    for name, item in dict(value).items():
        if item is None:
            continue
        if kind == "strings":
            out[str(name)] = {"DataType": "String", "StringValue": str(item)}
            continue
        data_type = str(item["data_type"] or "String")
        binary = item["binary_value"] if "binary_value" in item.__fields__ else None
        if binary is not None and data_type.split(".")[0] == "Binary":
            out[str(name)] = {"DataType": data_type, "BinaryValue": bytes(binary)}
        else:
            out[str(name)] = {"DataType": data_type, "StringValue": str(item["string_value"])}
    return out


class _RowError(ValueError):
    """A row that cannot become a message (null body, FIFO row without a group id, delay out of range)."""


def _entry(plan: WritePlan, row: Row, index: int, write_id: str, batch_id: int, partition: int) -> dict[str, Any]:
    assert plan.body is not None
    body = row[plan.body]
    if body is None:
        raise _RowError(f"row {index}: the body is null")
    entry: dict[str, Any] = {"Id": str(index), "MessageBody": body}
    group = row[plan.group_id] if plan.group_id is not None else None
    if plan.fifo:
        if group is None:
            raise _RowError(f"row {index}: a FIFO queue needs a message group id, and it is null")
        entry["MessageGroupId"] = group
        dedup = row[plan.deduplication_id] if plan.deduplication_id is not None else None
        entry["MessageDeduplicationId"] = dedup or derived_deduplication_id(write_id, batch_id, partition, index)
    elif group is not None and plan.group_id_explicit:
        entry["MessageGroupId"] = group
    if plan.delay_seconds is not None and row[plan.delay_seconds] is not None:
        delay = int(row[plan.delay_seconds])
        if not 0 <= delay <= 900:
            raise _RowError(f"row {index}: delay {delay} is outside 0-900 seconds")
        entry["DelaySeconds"] = delay
    if plan.attributes is not None:
        attributes = _attributes(row[plan.attributes], plan.attributes_kind)
        if attributes:
            entry["MessageAttributes"] = attributes
    return entry


def _retryable(failure: dict[str, Any]) -> bool:
    return not failure.get("SenderFault", False) or str(failure.get("Code")) in _RETRYABLE_CODES


def write_partition(
    options: SQSOptions, plan: WritePlan, rows: Iterator[Row], write_id: str, batch_id: int, partition: int
) -> SQSCommitMessage:
    """Send (or delete) one partition's rows; see the module docstring. Raises :class:`SQSBatchError` or
    ``ValueError`` (a row that cannot be a message) when ``failOnError``; otherwise counts them."""
    opts = options.write
    client = get_json_client(options.connection, plan.queue_url)
    result = SQSCommitMessage(partition=partition)

    def give_up(errors: list[str], action: str, failures: list[tuple[str, str, str]]) -> None:
        if not errors and not failures:
            return
        if opts.fail_on_error:
            if failures:
                raise SQSBatchError(action, plan.queue_url, failures)
            raise ValueError(f"sqs data source: {errors[0]}")
        result.failed += len(errors) + len(failures)
        messages = errors + [f"{code}: {message}" for _, code, message in failures]
        result.errors.extend(messages[: max(0, 5 - len(result.errors))])
        log.warning("%s on %s: %d rows failed (%s)", action, plan.queue_url, len(messages), messages[0])

    chunk: list[dict[str, Any]] = []
    errors: list[str] = []

    def flush() -> None:
        nonlocal chunk, errors
        if plan.operation == "delete":
            handles = [e["ReceiptHandle"] for e in chunk]
            failures = delete_messages(client, plan.queue_url, handles, opts.max_retries, SEND_CONCURRENCY)
            action = "DeleteMessageBatch"
        else:
            failures = run_batches(
                "SendMessageBatch",
                plan.queue_url,
                chunk,
                lambda group: client.send_message_batch(QueueUrl=plan.queue_url, Entries=group),
                opts.max_retries,
                _retryable,
                1 if plan.fifo else SEND_CONCURRENCY,
            )
            action = "SendMessageBatch"
        result.written += len(chunk) - len(failures)
        give_up(errors, action, failures)
        chunk, errors = [], []

    for index, row in enumerate(rows):
        try:
            if plan.operation == "delete":
                assert plan.receipt_handle is not None
                handle = row[plan.receipt_handle]
                if handle is None:
                    raise _RowError(f"row {index}: the receipt handle is null")
                chunk.append({"ReceiptHandle": handle})
            else:
                chunk.append(_entry(plan, row, index, write_id, batch_id, partition))
        except _RowError as exc:
            errors.append(str(exc))
            if opts.fail_on_error:
                give_up(errors, "SendMessageBatch", [])
        if len(chunk) >= CHUNK_ROWS:
            flush()
    if chunk or errors:
        flush()
    return result


def _task() -> tuple[int, str | None, int | None]:
    """(partition id, streaming query id, micro-batch id) of the running Spark task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return 0, None, None
    query_id = context.getLocalProperty(_QUERY_ID_PROPERTY)
    batch = context.getLocalProperty(_BATCH_ID_PROPERTY)
    return context.partitionId(), query_id, int(batch) if batch not in (None, "") else None


def _summarise(kind: str, plan: WritePlan, messages: list[WriterCommitMessage | None], label: str) -> None:
    done = [m for m in messages if isinstance(m, SQSCommitMessage)]
    written = sum(m.written for m in done)
    failed = sum(m.failed for m in done)
    verb = "deleted" if plan.operation == "delete" else "sent"
    if failed:
        log.warning("sqs %s %s %s: %d %s, %d failed", kind, label, plan.queue_url, written, verb, failed)
    else:
        log.info("sqs %s %s %s: %d %s", kind, label, plan.queue_url, written, verb)


def refuse_overwrite(overwrite: bool) -> None:
    """Raise ``ValueError`` when Spark asks to overwrite (see the module docstring)."""
    if overwrite:
        raise ValueError(
            "sqs data source: a queue can only be appended to; mode('overwrite') (or outputMode('complete') for a "
            "stream) is not supported: use mode('append') (or outputMode 'append' / 'update')"
        )


class SQSWriter(DataSourceWriter):
    """The batch writer: one ``write`` per Spark task (executor side), ``commit``/``abort`` on the driver.

    ``write_id`` (a fresh UUID per write, made on the driver) seeds the derived FIFO deduplication ids, so a
    retried task repeats them.
    """

    def __init__(self, options: SQSOptions, plan: WritePlan, write_id: str) -> None:
        self.options = options
        self.plan = plan
        self.write_id = write_id

    def write(self, iterator: Iterator[Row]) -> SQSCommitMessage:
        partition, _, _ = _task()
        return write_partition(self.options, self.plan, iterator, self.write_id, 0, partition)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        _summarise("write", self.plan, messages, "to")

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        _summarise("write (aborted)", self.plan, messages, "to")


class SQSStreamWriter(DataSourceStreamWriter):
    """The streaming writer: ``write`` per task of each micro-batch, ``commit``/``abort`` per micro-batch.

    Derived FIFO deduplication ids use the query id and micro-batch id Spark sets on every task, so the replay of
    a micro-batch after a restart sends the same ids (``fallback_id`` stands in if a task has no query id).
    """

    def __init__(self, options: SQSOptions, plan: WritePlan, fallback_id: str) -> None:
        self.options = options
        self.plan = plan
        self.fallback_id = fallback_id

    def write(self, iterator: Iterator[Row]) -> SQSCommitMessage:
        partition, query_id, batch_id = _task()
        return write_partition(
            self.options, self.plan, iterator, query_id or self.fallback_id, batch_id or 0, partition
        )

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 (Spark's name)
        _summarise("stream", self.plan, messages, f"batch {batchId} to")

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        _summarise("stream (aborted)", self.plan, messages, f"batch {batchId} to")
