"""Queue lifecycle and attributes in the engine (docs/behaviour.md sections 2.1-2.6 and 3)."""

from __future__ import annotations

import pytest

from sqsemu.engine.broker import Namespace
from sqsemu.engine.errors import (
    InvalidAttributeName,
    InvalidAttributeValue,
    InvalidParameterValue,
    MissingParameter,
    QueueDoesNotExist,
    QueueNameExists,
    SQSError,
)
from tests.unit.engine_helpers import NS, START_MS, Engine


def test_create_is_idempotent_for_equal_attributes(engine: Engine) -> None:
    q = engine.queue("a", VisibilityTimeout="40")
    assert engine.queue("a") is q
    assert engine.queue("a", VisibilityTimeout="040") is q
    with pytest.raises(QueueNameExists, match="different value for attribute VisibilityTimeout"):
        engine.queue("a", VisibilityTimeout="41")
    engine.broker.set_queue_attributes(q, {"DelaySeconds": "5"})
    assert engine.queue("a", DelaySeconds="5") is q


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("", MissingParameter),  # no name at all: as if QueueName were left out
        ("x" * 81, InvalidParameterValue),
        ("bad name", InvalidParameterValue),
        ("a/b", InvalidParameterValue),
        ("q.fifo", InvalidParameterValue),
        ("ü", InvalidParameterValue),
    ],
)
def test_queue_name_rules(engine: Engine, name: str, error: type[SQSError]) -> None:
    with pytest.raises(error) as info:
        engine.queue(name)
    assert info.value.shape == error.shape


def test_eighty_character_name_is_fine(engine: Engine) -> None:
    assert engine.queue("x" * 80).name == "x" * 80


def test_get_list_delete(engine: Engine) -> None:
    a, b = engine.queue("alpha"), engine.queue("beta")
    other = Namespace("111111111111", "us-east-1")
    assert engine.broker.get_queue(NS, "alpha") is a
    assert engine.broker.list_queues(NS, None) == [a, b]
    assert engine.broker.list_queues(NS, "be") == [b]
    assert engine.broker.list_queues(other, None) == []
    engine.broker.delete_queue(a)
    with pytest.raises(QueueDoesNotExist):
        engine.broker.get_queue(NS, "alpha")


def test_all_attributes_of_a_fresh_queue(engine: Engine) -> None:
    q = engine.queue("fresh")
    attrs = engine.broker.get_queue_attributes(q, ["All"])
    assert attrs == {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesDelayed": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
        "CreatedTimestamp": str(START_MS // 1000),
        "DelaySeconds": "0",
        "LastModifiedTimestamp": str(START_MS // 1000),
        "MaximumMessageSize": "1048576",
        "MessageRetentionPeriod": "345600",
        "QueueArn": "arn:aws:sqs:us-east-1:000000000000:fresh",
        "ReceiveMessageWaitTimeSeconds": "0",
        "SqsManagedSseEnabled": "true",
        "VisibilityTimeout": "30",
    }
    assert engine.broker.get_queue_attributes(q, []) == {}
    with pytest.raises(InvalidAttributeName, match="Unknown Attribute Bogus."):
        engine.broker.get_queue_attributes(q, ["Bogus"])


def test_last_modified_moves_on_set(engine: Engine) -> None:
    q = engine.queue()
    engine.clock.advance(10)
    engine.broker.set_queue_attributes(q, {"VisibilityTimeout": "5"})
    attrs = engine.broker.get_queue_attributes(q, ["CreatedTimestamp", "LastModifiedTimestamp"])
    assert int(attrs["LastModifiedTimestamp"]) == int(attrs["CreatedTimestamp"]) + 10


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("DelaySeconds", 0, 900),
        ("MaximumMessageSize", 1024, 1048576),
        ("MessageRetentionPeriod", 60, 1209600),
        ("ReceiveMessageWaitTimeSeconds", 0, 20),
        ("VisibilityTimeout", 0, 43200),
        ("KmsDataKeyReusePeriodSeconds", 60, 86400),
    ],
)
def test_integer_attribute_ranges(engine: Engine, name: str, low: int, high: int) -> None:
    q = engine.queue()
    engine.broker.set_queue_attributes(q, {name: str(low)})
    engine.broker.set_queue_attributes(q, {name: str(high)})
    for bad in (str(low - 1), str(high + 1), "abc"):
        with pytest.raises(InvalidAttributeValue, match=f"Invalid value for the parameter {name}"):
            engine.broker.set_queue_attributes(q, {name: bad})


def test_read_only_unknown_and_fifo_attributes_on_standard(engine: Engine) -> None:
    q = engine.queue()
    for name in ("QueueArn", "ApproximateNumberOfMessages", "CreatedTimestamp", "Nope"):
        with pytest.raises(InvalidAttributeName, match=f"Unknown Attribute {name}."):
            engine.broker.set_queue_attributes(q, {name: "1"})
    with pytest.raises(InvalidAttributeName, match="Unknown Attribute FifoQueue."):
        engine.queue("s", FifoQueue="false")
    with pytest.raises(InvalidAttributeName, match="DeduplicationScope only when FifoQueue"):
        engine.queue("s", DeduplicationScope="queue")


def test_policies_are_validated_stored_and_removed(engine: Engine) -> None:
    q = engine.queue()
    allow = '{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Principal": "*", "Action": "sqs:*"}}'
    engine.broker.set_queue_attributes(q, {"Policy": allow})
    assert "Policy" in engine.broker.get_queue_attributes(q, ["All"])
    with pytest.raises(InvalidAttributeValue, match="Statement is required"):  # the grammar, whatever --auth says
        engine.broker.set_queue_attributes(q, {"Policy": '{"Version": "2012-10-17", "Statement": []}'})
    engine.broker.set_queue_attributes(q, {"Policy": ""})
    assert "Policy" not in engine.broker.get_queue_attributes(q, ["All"])
    with pytest.raises(InvalidAttributeValue):
        engine.broker.set_queue_attributes(q, {"Policy": "{not json"})
    with pytest.raises(InvalidParameterValue, match="maxReceiveCount"):
        engine.broker.set_queue_attributes(
            q,
            {"RedrivePolicy": '{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:d", "maxReceiveCount": 0}'},
        )


def test_kms_and_sqs_managed_encryption(engine: Engine) -> None:
    q = engine.queue()
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "alias/aws/sqs"})
    attrs = engine.broker.get_queue_attributes(q, ["All"])
    assert attrs["SqsManagedSseEnabled"] == "false"
    assert attrs["KmsDataKeyReusePeriodSeconds"] == "300"
    with pytest.raises(InvalidAttributeName, match="one type of server-side encryption"):
        engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "k", "SqsManagedSseEnabled": "true"})


def test_a_deleted_queue_is_not_kept_alive_by_its_retention_timer(engine: Engine) -> None:
    import gc
    import types

    queue = engine.queue("short-lived")
    engine.send(queue, "m")  # arms the retention timer, four days ahead
    before = len(engine.broker.wheel)
    engine.broker.delete_queue(queue)
    gc.collect()
    # Nothing but this test's frame holds the queue (compiled queues take no weak references: ask the collector).
    holders = [r for r in gc.get_referrers(queue) if not isinstance(r, types.FrameType)]
    assert holders == []
    del queue
    assert len(engine.broker.wheel) == before  # the entry itself lapses at its deadline
    engine.clock.advance(4 * 86400 + 1)  # and then does nothing
    assert len(engine.broker.wheel) == 0
