"""What several Spark test modules share: filling a queue through the test's boto3 client."""

from __future__ import annotations

from typing import Any


def send_bodies(sqs: Any, queue_url: str, bodies: list[str]) -> None:
    """Send ``bodies`` to ``queue_url`` in order, ten per SendMessageBatch; every entry must succeed."""
    for start in range(0, len(bodies), 10):
        entries = [{"Id": str(i), "MessageBody": body} for i, body in enumerate(bodies[start : start + 10])]
        answer = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        assert not answer.get("Failed")
