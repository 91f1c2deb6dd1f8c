"""Structured Streaming through sqsemu: admission control, queue to queue, renewals, FIFO writes (the failure
cases are in test_stream_failures.py, FIFO order with concurrent receivers in test_stream_fifo.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqsemu.testing import SQSServer
from tests.spark.helpers import send_bodies, sqs_stream, start_available_now

pytestmark = pytest.mark.spark


def test_available_now_with_admission_control_deletes_each_batch_after_its_commit(
    spark: Any,
    spark_server: SQSServer,
    sqs: Any,
    sqs_options: dict[str, str],
    make_queue: Callable[..., str],
    tmp_path: Path,
) -> None:
    url = make_queue("orders")
    bodies = [f"order-{i:03d}" for i in range(35)]
    send_bodies(sqs, url, bodies)
    seen: list[dict[str, Any]] = []

    def check(batch: Any, batch_id: int) -> None:
        rows = batch.select("message_id", "body").collect()
        states = {m["message_id"]: m["state"] for m in spark_server.peek(url)}
        seen.append(
            {
                "batch_id": batch_id,
                "ids": [r.message_id for r in rows],
                "bodies": [r.body for r in rows],
                "states": states,
            }
        )

    stream = sqs_stream(spark, sqs_options, url, maxMessagesPerTrigger="10", waitTimeSeconds="0", numPartitions="2")
    query = start_available_now(stream.writeStream.foreachBatch(check), tmp_path / "checkpoint")
    assert query.awaitTermination(90)
    assert query.exception() is None

    batches = [b for b in seen if b["ids"]]
    assert [len(b["ids"]) for b in batches] == [10, 10, 10, 5]
    remaining = 35
    for batch in batches:
        # While its batch runs, every message of it is on the server, in flight; the batches before it are gone.
        assert all(batch["states"].get(i) == "in_flight" for i in batch["ids"])
        assert len(batch["states"]) == remaining
        remaining -= len(batch["ids"])
    assert sorted(b for batch in batches for b in batch["bodies"]) == bodies
    assert spark_server.peek(url) == []  # the last batch was deleted when Spark planned once more and found nothing


def test_stream_to_stream_through_two_queues(
    spark: Any,
    spark_server: SQSServer,
    sqs: Any,
    sqs_options: dict[str, str],
    make_queue: Callable[..., str],
    tmp_path: Path,
) -> None:
    from pyspark.sql import functions as F

    source = make_queue("raw")
    target = make_queue("clean")
    bodies = [f"event-{i:03d}" for i in range(40)]
    send_bodies(sqs, source, bodies)

    forward = start_available_now(
        sqs_stream(spark, sqs_options, source, maxMessagesPerTrigger="15", waitTimeSeconds="0")
        .select(F.upper("body").alias("body"), F.create_map(F.lit("source"), F.col("message_id")).alias("tags"))
        .writeStream.format("sqs")
        .options(**sqs_options)
        .option("queueUrl", target)
        .option("messageAttributesColumn", "tags"),
        tmp_path / "forward",
    )
    assert forward.awaitTermination(90)
    assert forward.exception() is None
    assert spark_server.peek(source) == []

    collected = start_available_now(
        sqs_stream(spark, sqs_options, target, waitTimeSeconds="0")
        .select("body", "message_attributes")
        .writeStream.format("memory")
        .queryName("clean_events"),
        tmp_path / "collect",
    )
    assert collected.awaitTermination(90)
    rows = spark.sql("SELECT * FROM clean_events").collect()
    assert sorted(r.body for r in rows) == [b.upper() for b in bodies]
    assert all(r.message_attributes["source"].data_type == "String" for r in rows)
    assert spark_server.peek(target) == []


def test_a_long_batch_keeps_its_messages_in_flight(
    spark: Any,
    spark_server: SQSServer,
    sqs: Any,
    sqs_options: dict[str, str],
    make_queue: Callable[..., str],
    tmp_path: Path,
) -> None:
    """A batch that runs longer than visibilityTimeout: its messages are renewed, not redelivered."""
    url = make_queue("slow")
    send_bodies(sqs, url, [f"job-{i}" for i in range(5)])
    observed: list[list[dict[str, Any]]] = []

    def slow(batch: Any, batch_id: int) -> None:
        batch.collect()
        time.sleep(4.5)  # more than twice the 2-second visibility timeout
        observed.append(spark_server.peek(url))

    stream = sqs_stream(spark, sqs_options, url, visibilityTimeout="2", waitTimeSeconds="0")
    query = start_available_now(stream.writeStream.foreachBatch(slow), tmp_path / "checkpoint")
    assert query.awaitTermination(90)
    assert query.exception() is None
    [messages] = [batch for batch in observed if batch]
    assert [(m["state"], m["receive_count"]) for m in messages] == [("in_flight", 1)] * 5
    assert spark_server.peek(url) == []


def test_stream_write_to_fifo_derives_ids_from_query_and_batch(
    spark: Any,
    spark_server: SQSServer,
    sqs: Any,
    sqs_options: dict[str, str],
    make_queue: Callable[..., str],
    tmp_path: Path,
) -> None:
    from pyspark.sql import functions as F

    from sqsemu.spark.writer import derived_deduplication_id

    source = make_queue("clicks")
    target = make_queue("clicks-ordered.fifo", FifoQueue=True)
    send_bodies(sqs, source, [f"click-{i}" for i in range(12)])
    query = start_available_now(
        sqs_stream(spark, sqs_options, source, waitTimeSeconds="0")
        .select("body", F.lit("user-1").alias("user"))
        .coalesce(1)
        .writeStream.format("sqs")
        .options(**sqs_options)
        .option("queueUrl", target)
        .option("groupIdColumn", "user"),
        tmp_path / "checkpoint",
    )
    assert query.awaitTermination(90)
    assert query.exception() is None
    messages = spark_server.peek(target)
    assert sorted(m["body"] for m in messages) == sorted(f"click-{i}" for i in range(12))
    assert {m["message_group_id"] for m in messages} == {"user-1"}
    expected = {derived_deduplication_id(query.id, 0, 0, row) for row in range(12)}
    assert {m["message_deduplication_id"] for m in messages} == expected
