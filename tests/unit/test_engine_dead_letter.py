"""Dead-letter queues, quotas, strict fidelity and the broker's tag/permission/move-task wiring."""

from __future__ import annotations

import json

import pytest

from sqsemu.engine.errors import (
    InvalidParameterValue,
    OverLimit,
    PurgeQueueInProgress,
    QueueDeletedRecently,
)
from sqsemu.engine.limits import Limits
from sqsemu.engine.message import SendEntry
from tests.unit.engine_helpers import NS, Engine


def redrive(arn: str, count: int = 2) -> str:
    return json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": count})


def test_message_moves_on_the_receive_that_exceeds_max_receive_count(engine: Engine) -> None:
    dlq = engine.queue("dlq")
    src = engine.queue("src", RedrivePolicy=redrive(dlq.arn, 2))
    engine.send(src, "poison")
    original = src.messages[next(iter(src.messages))]
    for expected in (1, 2):
        ((msg, _),) = engine.receive(src, visibility_timeout=0)
        assert msg.receive_count == expected
    assert engine.receive(src) == []  # the third receive moves it instead
    assert engine.counts(src) == (0, 0, 0)
    ((moved, _),) = engine.receive(dlq)
    assert moved.message_id == original.message_id
    assert moved.body == "poison" and moved.sent_ms == original.sent_ms
    assert moved.receive_count == 3
    assert moved.dead_letter_source_arn == src.arn


def test_redrive_policy_rules(engine: Engine) -> None:
    dlq = engine.queue("dlq")
    missing = "arn:aws:sqs:us-east-1:000000000000:nope"
    with pytest.raises(InvalidParameterValue, match="does not exist"):
        engine.queue("a", RedrivePolicy=redrive(missing))
    fifo_dlq = engine.queue("d.fifo", FifoQueue="true")
    with pytest.raises(InvalidParameterValue, match="same type"):
        engine.queue("b", RedrivePolicy=redrive(fifo_dlq.arn))
    engine.broker.set_queue_attributes(dlq, {"RedriveAllowPolicy": json.dumps({"redrivePermission": "denyAll"})})
    with pytest.raises(InvalidParameterValue, match="RedriveAllowPolicy"):
        engine.queue("c", RedrivePolicy=redrive(dlq.arn))
    allowed = "arn:aws:sqs:us-east-1:000000000000:d"
    engine.broker.set_queue_attributes(
        dlq, {"RedriveAllowPolicy": json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": [allowed]})}
    )
    with pytest.raises(InvalidParameterValue):
        engine.queue("c", RedrivePolicy=redrive(dlq.arn))
    src = engine.queue("d", RedrivePolicy=redrive(dlq.arn))
    assert engine.broker.list_dead_letter_source_queues(dlq) == [src]
    engine.broker.set_queue_attributes(src, {"RedrivePolicy": ""})
    assert engine.broker.list_dead_letter_source_queues(dlq) == []


def test_fifo_dead_letter_keeps_group_order(engine: Engine) -> None:
    dlq = engine.queue("dlq.fifo", FifoQueue="true")
    src = engine.queue("src.fifo", FifoQueue="true", RedrivePolicy=redrive(dlq.arn, 1))
    for body in ("m1", "m2"):
        engine.broker.send_message(src, SendEntry(body, group_id="g", deduplication_id=body), "a")
    ((_, handle),) = engine.receive(src)
    engine.broker.change_message_visibility(src, handle, 0)
    assert [m.body for m, _ in engine.receive(src)] == ["m2"]  # m1 moved; m2 is now first in the group
    ((moved, _),) = engine.receive(dlq)
    assert moved.body == "m1" and moved.deduplication_id == moved.message_id


def test_dead_lettered_standard_message_keeps_its_retention_clock(engine: Engine) -> None:
    dlq = engine.queue("dlq", MessageRetentionPeriod="120")
    src = engine.queue("src", RedrivePolicy=redrive(dlq.arn, 1))
    engine.send(src, "old")
    engine.receive(src, visibility_timeout=0)
    engine.clock.advance(100)
    engine.send(dlq, "young")
    engine.receive(src)  # moves "old" (sent 100 s ago) behind "young"
    assert engine.counts(dlq) == (2, 0, 0)
    engine.clock.advance(20)  # "old" is 120 s old
    assert [m.body for m, _ in engine.receive(dlq, max_number_of_messages=10)] == ["young"]


def test_in_flight_quota() -> None:
    engine = Engine(Limits(in_flight_max_standard=3, in_flight_max_fifo=2))
    broker = engine.broker
    q = engine.queue("q")
    for i in range(5):
        engine.send(q, str(i))
    assert len(engine.receive(q, max_number_of_messages=10)) == 3
    with pytest.raises(OverLimit):
        engine.receive(q)
    f = engine.queue("f.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    for i in range(4):
        broker.send_message(f, SendEntry(str(i), group_id=str(i)), "a")
    assert len(engine.receive(f, max_number_of_messages=10)) == 2
    assert engine.receive(f) == []  # FIFO: no error, just nothing more
    engine.close()


def test_strict_sixty_second_rules() -> None:
    engine = Engine(strict=True)
    clock, broker = engine.clock, engine.broker
    q = broker.create_queue(NS, "q", {}, {})
    broker.purge_queue(q)
    with pytest.raises(PurgeQueueInProgress, match="Only one PurgeQueue operation on q is allowed every 60 seconds."):
        broker.purge_queue(q)
    clock.advance(60)
    broker.purge_queue(q)
    broker.delete_queue(q)
    with pytest.raises(QueueDeletedRecently):
        broker.create_queue(NS, "q", {}, {})
    clock.advance(60)
    broker.create_queue(NS, "q", {}, {})
    engine.close()


def test_relaxed_by_default(engine: Engine) -> None:
    q = engine.queue("q")
    engine.broker.purge_queue(q)
    engine.broker.purge_queue(q)
    engine.broker.delete_queue(q)
    engine.queue("q")


def test_tags_and_permissions_through_the_broker(engine: Engine) -> None:
    q = engine.queue("q")
    engine.broker.tag_queue(q, {"a": "1", "B": "2"})
    engine.broker.tag_queue(q, {"a": "3"})
    engine.broker.untag_queue(q, ["B", "missing"])
    assert engine.broker.list_queue_tags(q) == {"a": "3"}
    engine.broker.add_permission(q, "l1", ["111111111111"], ["SendMessage"])
    policy = json.loads(engine.broker.get_queue_attributes(q, ["Policy"])["Policy"])
    assert policy["Statement"][0]["Sid"] == "l1"
    engine.broker.remove_permission(q, "l1")
    assert "Policy" not in engine.broker.get_queue_attributes(q, ["All"])


def test_move_task_returns_messages_to_their_source(engine: Engine) -> None:
    dlq = engine.queue("dlq")
    src = engine.queue("src", RedrivePolicy=redrive(dlq.arn, 1))
    for i in range(3):
        engine.send(src, f"m{i}")
    engine.receive(src, max_number_of_messages=10, visibility_timeout=0)
    engine.receive(src, max_number_of_messages=10)
    assert engine.counts(dlq) == (3, 0, 0)
    engine.broker.start_message_move_task(NS, dlq.arn, None, 2)
    engine.clock.advance(0)
    assert engine.counts(src) == (2, 0, 0)
    engine.clock.advance(1)
    assert engine.counts(src) == (3, 0, 0) and engine.counts(dlq) == (0, 0, 0)
    (task,) = engine.broker.list_message_move_tasks(NS, dlq.arn, None)
    assert task["Status"] == "COMPLETED" and task["ApproximateNumberOfMessagesMoved"] == 3
