"""What several Spark test modules share: filling a queue through the test's boto3 client, reading a queue as a
stream, starting a stream that processes what is there and stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def send_bodies(sqs: Any, queue_url: str, bodies: list[str]) -> None:
    """Send ``bodies`` to ``queue_url`` in order, ten per SendMessageBatch; every entry must succeed."""
    for start in range(0, len(bodies), 10):
        entries = [{"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])]
        answer = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        assert not answer.get("Failed")


def sqs_stream(spark: Any, sqs_options: dict[str, str], queue_url: str, **options: str) -> Any:
    """The ``sqs`` source's streaming DataFrame on ``queue_url``: the test server's connection options
    (``sqs_options``), then ``options`` (the data source's option names, string values)."""
    return spark.readStream.format("sqs").options(**sqs_options).option("queueUrl", queue_url).options(**options).load()


def start_available_now(writer: Any, checkpoint: str | Path) -> Any:
    """Start ``writer`` (a ``DataStreamWriter``) checkpointing in ``checkpoint``, to process what is there now and
    stop (``trigger(availableNow=True)``); returns the ``StreamingQuery``."""
    return writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
