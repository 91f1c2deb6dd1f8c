"""Batch reading: ``spark.read.format("sqs").load()``.

Not destructive: each of ``numPartitions`` Spark tasks receives its share of ``maxMessages`` (first call
long-polls ``waitTimeSeconds``, then up to ``receiveConcurrency`` calls at once short-poll until the queue answers
empty) and nothing is deleted. The messages stay in flight for ``visibilityTimeout`` seconds and then become
visible again, unless the job acknowledges them, typically by writing the rows back with ``operation=delete`` (by
``receipt_handle``).

Every evaluation of the DataFrame receives again (and gets other messages, or none while the first ones are in
flight): ``cache()`` it, or collect it once, when several actions need the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSourceReader, InputPartition

from sqsemu.spark.client import get_json_client, receive_messages
from sqsemu.spark.options import SQSOptions
from sqsemu.spark.schema import messages_to_arrow

__all__ = ["SQSBatchReader", "SQSReceivePartition"]

ARROW_ROWS = 4096  # rows per Arrow record batch that read() yields


class SQSReceivePartition(InputPartition):
    """One Spark task of a batch read: receive up to ``max_messages`` messages (``index`` numbers the task)."""

    def __init__(self, index: int, max_messages: int) -> None:
        super().__init__(index)
        self.index = index
        self.max_messages = max_messages


class SQSBatchReader(DataSourceReader):
    """Splits ``maxMessages`` over ``numPartitions`` tasks; each task receives on its executor (see module doc)."""

    def __init__(self, options: SQSOptions, queue_url: str) -> None:
        self.options = options
        self.queue_url = queue_url

    def partitions(self) -> Sequence[InputPartition]:
        total = self.options.read.max_messages
        count = min(self.options.read.num_partitions, total)
        share, extra = divmod(total, count)
        return [SQSReceivePartition(i, share + (1 if i < extra else 0)) for i in range(count)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """Receive the partition's share; the rows as Arrow record batches of the schema."""
        assert isinstance(partition, SQSReceivePartition)
        read = self.options.read
        client = get_json_client(self.options.connection, self.queue_url)
        messages = receive_messages(
            client,
            self.queue_url,
            partition.max_messages,
            read.wait_time_seconds,
            read.visibility_timeout,
            read.attribute_names,
            read.message_attribute_names,
            concurrency=read.receive_concurrency,
        )
        for begin in range(0, len(messages), ARROW_ROWS):
            yield messages_to_arrow(messages[begin : begin + ARROW_ROWS], self.queue_url)
