"""Batch reads and writes through sqsemu: round trip, acknowledgement by receipt handle, FIFO, refusals."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from sqsemu.testing import SQSServer

pytestmark = pytest.mark.spark


def test_batch_write_then_read_then_acknowledge(
    spark: Any, spark_server: SQSServer, sqs_options: dict[str, str], make_queue: Callable[..., str]
) -> None:
    from pyspark.sql import functions as F

    url = make_queue("orders")
    before_ms = spark_server.clock.now_ms()
    orders = spark.range(25).select(
        F.format_string("order-%02d", "id").alias("body"),
        F.create_map(F.lit("customer"), F.format_string("c%d", F.col("id") % 3)).alias("message_attributes"),
    )
    orders.repartition(3).write.format("sqs").options(**sqs_options).option("queueUrl", url).mode("append").save()
    assert len(spark_server.peek(url)) == 25

    df = (
        spark.read.format("sqs")
        .options(**sqs_options)
        .option("QUEUEURL", url)  # option names are case-insensitive
        .option("maxMessages", "40")
        .option("numPartitions", "2")
        .option("waitTimeSeconds", "0")
        .option("visibilityTimeout", "120")
        .load()
    ).cache()
    rows = df.collect()
    assert sorted(r.body for r in rows) == [f"order-{i:02d}" for i in range(25)]
    row = next(r for r in rows if r.body == "order-07")
    assert row.message_attributes["customer"].data_type == "String"
    assert row.message_attributes["customer"].string_value == "c1"
    assert isinstance(row.sent_timestamp, datetime)
    assert int(row.sent_timestamp.timestamp() * 1000) >= before_ms - 1000
    assert row.approximate_receive_count == 1 and row.queue_url == url and row.receipt_handle
    assert row.attributes["ApproximateReceiveCount"] == "1"
    assert row.message_group_id is None
    assert [f.dataType.simpleString() for f in df.schema.fields if f.name.endswith("timestamp")] == ["timestamp"] * 2

    # Reading is not destructive: the messages are in flight, not deleted.
    assert [m["state"] for m in spark_server.peek(url)] == ["in_flight"] * 25

    # Acknowledge ten of them by receipt handle.
    done = df.filter(F.col("body") < "order-10")
    done.write.format("sqs").options(**sqs_options).option("queueUrl", url).option("operation", "delete").mode(
        "append"
    ).save()
    assert sorted(m["body"] for m in spark_server.peek(url)) == [f"order-{i:02d}" for i in range(10, 25)]


def test_fifo_write_takes_group_ids_and_deduplicates(
    spark: Any, spark_server: SQSServer, sqs_options: dict[str, str], make_queue: Callable[..., str]
) -> None:
    url = make_queue("ledger.fifo", FifoQueue=True)
    rows = [
        ("credit 10", "acct-1", "tx-1"),
        ("credit 10", "acct-1", "tx-1"),  # the same transaction sent twice: deduplicated
        ("debit 5", "acct-1", "tx-2"),
        ("credit 7", "acct-2", "tx-3"),
        ("credit 7", "acct-2", None),  # no id: one is derived from (write, partition, row)
    ]
    df = spark.createDataFrame(rows, "body string, account string, tx string").coalesce(1)
    options = {**sqs_options, "queueUrl": url, "groupIdColumn": "account", "deduplicationIdColumn": "tx"}
    df.write.format("sqs").options(**options).mode("append").save()

    messages = spark_server.peek(url)
    assert [(m["body"], m["message_group_id"]) for m in messages] == [
        ("credit 10", "acct-1"),
        ("debit 5", "acct-1"),
        ("credit 7", "acct-2"),
        ("credit 7", "acct-2"),
    ]
    assert [m["message_deduplication_id"] for m in messages][:3] == ["tx-1", "tx-2", "tx-3"]
    assert len(messages[3]["message_deduplication_id"]) == 64

    # A group id column is required on a FIFO queue.
    with pytest.raises(Exception, match="message_group_id"):
        spark.createDataFrame([("x",)], "body string").write.format("sqs").options(**sqs_options).option(
            "queueUrl", url
        ).mode("append").save()


def test_derived_deduplication_ids_are_stable_across_retries(
    spark: Any, spark_server: SQSServer, sqs_options: dict[str, str], make_queue: Callable[..., str]
) -> None:
    """A retried task (same write, batch and partition) sends the same derived ids: SQS keeps one copy."""
    from pyspark.sql import Row

    from sqsemu.spark import parse_options
    from sqsemu.spark.writer import plan_write, write_partition

    url = make_queue("retries.fifo", FifoQueue=True)
    options = parse_options({**sqs_options, "queueUrl": url})
    schema = spark.createDataFrame([], "body string, message_group_id string").schema
    plan = plan_write(schema, options, url)
    rows = [Row(body=f"same body {i % 2}", message_group_id="g") for i in range(6)]
    for _attempt in range(2):
        result = write_partition(options, plan, iter(rows), "query-1", 7, 0)
        assert result.written == 6 and result.failed == 0
    assert [m["body"] for m in spark_server.peek(url)] == [r.body for r in rows]  # six, not twelve
    write_partition(options, plan, iter(rows), "query-1", 8, 0)  # the next micro-batch is new data
    assert len(spark_server.peek(url)) == 12


def test_overwrite_and_bad_options_are_refused_clearly(
    spark: Any, sqs_options: dict[str, str], make_queue: Callable[..., str]
) -> None:
    from sqsemu.spark import SQSOptionError, parse_options

    url = make_queue("strict")
    df = spark.createDataFrame([("x",)], "body string")
    with pytest.raises(Exception, match="can only be appended to"):
        df.write.format("sqs").options(**sqs_options).option("queueUrl", url).mode("overwrite").save()
    with pytest.raises(Exception, match="did you mean 'maxMessagesPerTrigger'"):
        spark.read.format("sqs").options(**sqs_options).option("queueUrl", url).option(
            "maxMessagePerTrigger", "5"
        ).load()
    with pytest.raises(Exception, match="'bodyColumn' names column 'text'"):
        df.write.format("sqs").options(**sqs_options).option("queueUrl", url).option("bodyColumn", "text").mode(
            "append"
        ).save()

    cases = {
        "'waitTimeSeconds' must be between 0 and 20": {"queueUrl": url, "waitTimeSeconds": "30"},
        "must be an integer": {"queueUrl": url, "numPartitions": "two"},
        "set option 'queueUrl'": {},
        "needs option 'region'": {"queueName": "orders"},
        "both 'accessKeyId' and 'secretAccessKey'": {"queueUrl": url, "accessKeyId": "AKIA"},
        "must be true or false": {"queueUrl": url, "failOnError": "maybe"},
        "'send' or 'delete'": {"queueUrl": url, "operation": "purge"},
    }
    for message, options in cases.items():
        with pytest.raises(SQSOptionError, match=message.replace("(", r"\(")):
            parse_options(options)
    parsed = parse_options({"QueueName": "orders", "REGION": "eu-west-1", "maxmessagespertrigger": "5"})
    assert parsed.connection.queue_name == "orders" and parsed.read.max_messages_per_trigger == 5
