"""The schema of the ``sqs`` data source and the conversion of a received SQS message into one row.

One row per message: ids, receipt handle and body as strings; ``sent_timestamp`` and
``approximate_first_receive_timestamp`` as TIMESTAMP (timezone-aware UTC datetimes, from SQS's epoch
milliseconds); ``approximate_receive_count`` as INT; the FIFO fields (null on a standard queue); every system
attribute as ``map<string,string>``; message attributes as ``map<string, struct<data_type, string_value,
binary_value>>``; and the queue URL the message came from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

__all__ = ["MESSAGE_ATTRIBUTE_TYPE", "SCHEMA", "message_to_row", "messages_to_arrow"]

MESSAGE_ATTRIBUTE_TYPE = StructType(
    [
        StructField("data_type", StringType(), False),
        StructField("string_value", StringType(), True),
        StructField("binary_value", BinaryType(), True),
    ]
)

SCHEMA = StructType(
    [
        StructField("message_id", StringType(), False),
        StructField("receipt_handle", StringType(), False),
        StructField("body", StringType(), False),
        StructField("md5_of_body", StringType(), True),
        StructField("sent_timestamp", TimestampType(), True),
        StructField("approximate_first_receive_timestamp", TimestampType(), True),
        StructField("approximate_receive_count", IntegerType(), True),
        StructField("message_group_id", StringType(), True),
        StructField("message_deduplication_id", StringType(), True),
        StructField("sequence_number", StringType(), True),
        StructField("attributes", MapType(StringType(), StringType(), False), True),
        StructField("message_attributes", MapType(StringType(), MESSAGE_ATTRIBUTE_TYPE, False), True),
        StructField("queue_url", StringType(), False),
    ]
)


def _timestamp(epoch_ms: str | None) -> datetime | None:
    if epoch_ms is None:
        return None
    try:
        return datetime.fromtimestamp(int(epoch_ms) / 1000.0, tz=UTC)
    except (TypeError, ValueError):
        return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def message_to_row(message: dict[str, Any], queue_url: str) -> tuple[Any, ...]:
    """One ReceiveMessage entry (boto3's dict: ``MessageId``, ``ReceiptHandle``, ``Body``, ``MD5OfBody``,
    ``Attributes``, ``MessageAttributes``) as a tuple in :data:`SCHEMA` order. Missing attributes become nulls."""
    attributes: dict[str, str] = dict(message.get("Attributes") or {})
    message_attributes = {
        name: (
            str(value.get("DataType", "String")),
            value.get("StringValue"),
            bytes(value["BinaryValue"]) if value.get("BinaryValue") is not None else None,
        )
        for name, value in (message.get("MessageAttributes") or {}).items()
    }
    return (
        str(message["MessageId"]),
        str(message["ReceiptHandle"]),
        str(message.get("Body", "")),
        message.get("MD5OfBody"),
        _timestamp(attributes.get("SentTimestamp")),
        _timestamp(attributes.get("ApproximateFirstReceiveTimestamp")),
        _int(attributes.get("ApproximateReceiveCount")),
        attributes.get("MessageGroupId"),
        attributes.get("MessageDeduplicationId"),
        attributes.get("SequenceNumber"),
        attributes,
        message_attributes,
        queue_url,
    )


def _epoch_us(epoch_ms: str | None) -> int | None:
    try:
        return int(epoch_ms) * 1000 if epoch_ms is not None else None
    except ValueError:
        return None


def messages_to_arrow(messages: list[dict[str, Any]], queue_url: str) -> Any:
    """The rows of ``messages`` (boto3's ReceiveMessage dicts) as one ``pyarrow.RecordBatch`` of :data:`SCHEMA`
    (the same values as :func:`message_to_row`; timestamps in microseconds, UTC).

    A Python data source may yield Arrow record batches from ``read()``; built column by column here, a batch
    costs a small fraction of what Spark's row-by-row conversion of the tuples costs (the map columns most of
    all).
    """
    import pyarrow as pa

    schema = _arrow_schema()
    attributes = [dict(m.get("Attributes") or {}) for m in messages]
    message_attributes = [
        [
            (
                str(name),
                {
                    "data_type": str(value.get("DataType", "String")),
                    "string_value": value.get("StringValue"),
                    "binary_value": bytes(value["BinaryValue"]) if value.get("BinaryValue") is not None else None,
                },
            )
            for name, value in (m.get("MessageAttributes") or {}).items()
        ]
        for m in messages
    ]

    def counts(values: list[dict[str, str]]) -> list[int | None]:
        out: list[int | None] = []
        for a in values:
            try:
                out.append(int(a["ApproximateReceiveCount"]) if "ApproximateReceiveCount" in a else None)
            except ValueError:
                out.append(None)
        return out

    columns = [
        [str(m["MessageId"]) for m in messages],
        [str(m["ReceiptHandle"]) for m in messages],
        [str(m.get("Body", "")) for m in messages],
        [m.get("MD5OfBody") for m in messages],
        [_epoch_us(a.get("SentTimestamp")) for a in attributes],
        [_epoch_us(a.get("ApproximateFirstReceiveTimestamp")) for a in attributes],
        counts(attributes),
        [a.get("MessageGroupId") for a in attributes],
        [a.get("MessageDeduplicationId") for a in attributes],
        [a.get("SequenceNumber") for a in attributes],
        [list(a.items()) for a in attributes],
        message_attributes,
        [queue_url] * len(messages),
    ]
    arrays = [pa.array(values, type=field.type) for values, field in zip(columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


_ARROW_SCHEMA: Any = None


def _arrow_schema() -> Any:
    global _ARROW_SCHEMA
    if _ARROW_SCHEMA is None:
        from pyspark.sql.pandas.types import to_arrow_schema

        _ARROW_SCHEMA = to_arrow_schema(SCHEMA, timezone="UTC")
    return _ARROW_SCHEMA
