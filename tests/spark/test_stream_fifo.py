"""FIFO at scale: a FIFO queue read by several concurrent receivers into several partitions keeps every message
group's order, within each micro-batch and across micro-batches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sqsemu.testing import SQSServer
from tests.spark.helpers import sqs_stream, start_available_now

pytestmark = pytest.mark.spark

GROUPS = ("alice", "bob", "carol", "dave", "erin")
PER_GROUP = 24


def test_fifo_group_order_survives_concurrent_receivers_and_partitions(
    spark: Any,
    spark_server: SQSServer,
    sqs: Any,
    sqs_options: dict[str, str],
    make_queue: Callable[..., str],
    tmp_path: Path,
) -> None:
    from pyspark.sql import functions as F

    url = make_queue("ledger.fifo", FifoQueue=True, ContentBasedDeduplication=True)
    # Interleaved across groups, so that every ReceiveMessage call could mix them.
    order = [(group, i) for i in range(PER_GROUP) for group in GROUPS]
    for start in range(0, len(order), 10):
        entries = [
            {"Id": str(n), "MessageBody": f"{group}:{i:03d}", "MessageGroupId": group}
            for n, (group, i) in enumerate(order[start : start + 10])
        ]
        assert not sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed")

    arrived: list[tuple[int, int, str, int, int]] = []  # (batch, partition, group, index, sequence number)

    def sink(batch: Any, batch_id: int) -> None:
        rows = batch.select("message_group_id", "body", "sequence_number", F.spark_partition_id().alias("p")).collect()
        for row in rows:  # collect() keeps each partition's order, partitions in turn
            group, index = row.body.split(":")
            assert group == row.message_group_id
            arrived.append((batch_id, row.p, group, int(index), int(row.sequence_number)))

    stream = sqs_stream(
        spark,
        sqs_options,
        url,
        maxMessagesPerTrigger="35",
        receiveConcurrency="4",
        numPartitions="3",
        waitTimeSeconds="0",
    )
    query = start_available_now(stream.writeStream.foreachBatch(sink), tmp_path / "checkpoint")
    assert query.awaitTermination(120)
    assert query.exception() is None

    assert sorted((group, index) for _, _, group, index, _ in arrived) == sorted(order)  # each exactly once
    batch_ids = {batch_id for batch_id, *_ in arrived}
    assert len(batch_ids) > 1  # the order had to hold across micro-batches
    assert any(len({p for b, p, *_ in arrived if b == batch_id}) > 1 for batch_id in batch_ids)  # and partitions
    for group in GROUPS:
        seen = [(batch_id, p, index, seq) for batch_id, p, g, index, seq in arrived if g == group]
        assert [index for _, _, index, _ in seen] == list(range(PER_GROUP)), group
        sequence_numbers = [seq for *_, seq in seen]
        assert sequence_numbers == sorted(sequence_numbers) and len(set(sequence_numbers)) == PER_GROUP
        # Within a micro-batch, a group is never split over partitions (parallel sink tasks could reorder it).
        for batch_id in {b for b, *_ in seen}:
            assert len({p for b, p, _, _ in seen if b == batch_id}) == 1, (group, batch_id)
    assert spark_server.peek(url) == []
