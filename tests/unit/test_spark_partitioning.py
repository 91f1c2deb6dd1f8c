"""How a micro-batch's messages become Spark input partitions (sqsemu.spark.partitioning): slices for a standard
queue; whole message groups in SequenceNumber order for a FIFO queue. Pure functions: no Spark, no server."""

from __future__ import annotations

from typing import Any

from sqsemu.spark.partitioning import split_messages


def _fifo(group: str, seq: int) -> dict[str, Any]:
    return {"MessageId": f"{group}-{seq}", "Attributes": {"MessageGroupId": group, "SequenceNumber": str(seq)}}


def test_standard_messages_are_cut_into_nearly_equal_slices_in_order() -> None:
    messages = [{"MessageId": str(i)} for i in range(11)]
    parts = split_messages(messages, 3, fifo=False)
    assert [len(part) for part in parts] == [4, 4, 3]
    assert [m for part in parts for m in part] == messages
    assert split_messages(messages[:2], 5, fifo=False) == [[messages[0]], [messages[1]]]
    assert split_messages([], 3, fifo=False) == []


def test_a_fifo_group_stays_whole_in_one_partition_in_sequence_order() -> None:
    # Received out of order and interleaved (as concurrent ReceiveMessage calls may hand them over).
    numbers = {"a": [5, 1, 9, 3], "b": [2, 8], "c": [4, 6, 7], "d": [10]}
    messages = [_fifo(group, n) for i in range(4) for group, ns in numbers.items() if i < len(ns) for n in [ns[i]]]
    parts = split_messages(messages, 2, fifo=True)
    assert len(parts) == 2
    assert sorted(m["MessageId"] for part in parts for m in part) == sorted(m["MessageId"] for m in messages)
    for group, ns in numbers.items():
        holding = [part for part in parts if any(m["Attributes"]["MessageGroupId"] == group for m in part)]
        assert len(holding) == 1, group
        in_part = [int(m["Attributes"]["SequenceNumber"]) for m in holding[0] if m["MessageId"].startswith(group)]
        assert in_part == sorted(ns)
    assert sorted(len(part) for part in parts) == [5, 5]  # largest group first, each to the lighter partition


def test_fifo_never_makes_more_partitions_than_groups_and_compares_sequence_numbers_as_integers() -> None:
    big, small = 10**20, 9  # SequenceNumber is a decimal string of up to 128 bits: "9" < "100..." as numbers only
    parts = split_messages([_fifo("g", big), _fifo("g", small)], 4, fifo=True)
    assert parts == [[_fifo("g", small), _fifo("g", big)]]
