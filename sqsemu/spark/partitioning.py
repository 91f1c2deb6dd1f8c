"""How the messages of one micro-batch are split into Spark input partitions.

A standard queue has no order to keep: the messages are cut into ``count`` contiguous slices of nearly equal size.
A FIFO queue's message groups must reach the sink in order, so a group never spans two partitions: each group's
messages are sorted by ``SequenceNumber`` and the whole group goes to one partition (the largest groups first, each
to the partition holding the fewest messages so far). Spark runs a partition's rows in the order given, so the
order of every message group survives any number of partitions; micro-batches run one after the other, so it
survives across batches too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["group_key", "sequence_key", "split_messages"]


def group_key(message: dict[str, Any]) -> str | None:
    """The message group ID of a received message (boto3's dict), or None when ``Attributes`` lack it."""
    value = (message.get("Attributes") or {}).get("MessageGroupId")
    return str(value) if value is not None else None


def sequence_key(message: dict[str, Any]) -> int:
    """The FIFO ``SequenceNumber`` of a received message as an integer (SQS sends it as a decimal string of up to
    128 bits); -1 when it is missing, so such messages keep their received order (the sort is stable)."""
    value = (message.get("Attributes") or {}).get("SequenceNumber")
    try:
        return int(value) if value is not None else -1
    except ValueError:
        return -1


def split_messages(messages: Sequence[dict[str, Any]], count: int, fifo: bool) -> list[list[dict[str, Any]]]:
    """Split ``messages`` (boto3's ReceiveMessage dicts, in the order received) into at most ``count`` non-empty
    lists, one per Spark input partition.

    Standard queue: contiguous slices whose sizes differ by at most one. FIFO queue: every message group whole in
    one list, in ``SequenceNumber`` order; messages without a group ID (``attributeNames`` left it out) count as
    one group. Returns ``[]`` for no messages.
    """
    if not messages:
        return []
    count = max(1, count)
    if not fifo:
        count = min(count, len(messages))
        size, extra = divmod(len(messages), count)
        slices: list[list[dict[str, Any]]] = []
        begin = 0
        for index in range(count):
            stop = begin + size + (1 if index < extra else 0)
            slices.append(list(messages[begin:stop]))
            begin = stop
        return slices

    groups: dict[str | None, list[dict[str, Any]]] = {}
    for message in messages:
        groups.setdefault(group_key(message), []).append(message)
    ordered = [sorted(group, key=sequence_key) for group in groups.values()]
    buckets: list[list[dict[str, Any]]] = [[] for _ in range(min(count, len(ordered)))]
    # Largest group first, each to the lightest bucket (the first of equals): deterministic and well balanced.
    for group in sorted(ordered, key=len, reverse=True):
        lightest = min(range(len(buckets)), key=lambda i: len(buckets[i]))
        buckets[lightest].extend(group)
    return buckets
