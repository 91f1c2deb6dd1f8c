"""Message move tasks (sqsemu.engine.redrive) driven by a ManualClock and a real TimerWheel, on fake queues."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest

from sqsemu.clock import ManualClock
from sqsemu.engine.errors import InvalidParameterValue, MissingParameter, ResourceNotFound, SQSError
from sqsemu.engine.message import Message, MessageState
from sqsemu.engine.redrive import MoveTasks
from sqsemu.engine.timerwheel import TimerWheel

START = 1_700_000_000_000
ARN = "arn:aws:sqs:us-east-1:000000000000:"


class FakeQueue:
    """Just what a move task needs of a queue."""

    def __init__(self, name: str, fifo: bool = False) -> None:
        self.arn = ARN + name
        self.fifo = fifo
        self.deleted = False
        self.messages: list[Message] = []
        self.refuse: SQSError | None = None

    def put(self, body: str, origin: FakeQueue | None = None, sent_ms: int = START) -> Message:
        message = Message(str(uuid.uuid4()), body, {}, {}, None, "000000000000", sent_ms, len(body))
        message.dead_letter_source_arn = origin.arn if origin is not None else None
        self.messages.append(message)
        return message

    def bodies(self) -> list[str]:
        return [m.body for m in self.messages]

    def message_count(self) -> int:
        return len(self.messages)

    def peek_visible(self, limit: int) -> list[Message]:
        return [m for m in self.messages if m.state is MessageState.VISIBLE][:limit]

    def remove_moved(self, message: Message) -> None:
        self.messages.remove(message)
        message.state = MessageState.DELETED

    def add_redriven(self, message: Message, now_ms: int) -> Message:
        if self.refuse is not None:
            raise self.refuse
        copy = Message(str(uuid.uuid4()), message.body, {}, {}, None, "000000000000", now_ms, message.size)
        self.messages.append(copy)
        return copy


class World:
    """Queues by ARN, a timer wheel on a manual clock, and the MoveTasks under test."""

    def __init__(self) -> None:
        self.clock = ManualClock(START)
        self.wheel = TimerWheel(on_earlier=self.clock.reschedule)
        self.clock.attach(self)
        self.queues: dict[str, FakeQueue] = {}
        self.dlqs: set[str] = set()
        self.tasks: MoveTasks[FakeQueue] = MoveTasks(
            self.clock.now_ms, self.wheel.schedule, self.queues.get, lambda q: q.arn in self.dlqs
        )

    def next_due_ms(self) -> int | None:
        return self.wheel.next_due_ms()

    def run_due(self, now_ms: int) -> None:
        self.wheel.run_due(now_ms)

    def queue(self, name: str, fifo: bool = False, dlq: bool = False) -> FakeQueue:
        queue = FakeQueue(name, fifo)
        self.queues[queue.arn] = queue
        if dlq:
            self.dlqs.add(queue.arn)
        return queue

    def delete(self, queue: FakeQueue) -> None:
        queue.deleted = True
        del self.queues[queue.arn]

    def latest(self, queue: FakeQueue) -> dict[str, Any]:
        return self.tasks.list(queue.arn, None)[0]


@pytest.fixture
def w() -> World:
    return World()


def fill(dlq: FakeQueue, origin: FakeQueue, n: int, prefix: str = "m") -> None:
    for i in range(n):
        dlq.put(f"{prefix}{i}", origin)


# ------------------------------------------------------------------------- pacing and destinations


def test_paces_by_rate_per_second_oldest_first(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 25)
    w.tasks.start(dlq.arn, None, 10)
    assert src.bodies() == []  # nothing moves before the clock runs the first tick
    entry = w.latest(dlq)
    assert entry["Status"] == "RUNNING"
    assert entry["ApproximateNumberOfMessagesToMove"] == 25
    assert entry["ApproximateNumberOfMessagesMoved"] == 0

    w.clock.advance(0)
    assert src.bodies() == [f"m{i}" for i in range(10)]
    assert w.latest(dlq)["ApproximateNumberOfMessagesMoved"] == 10
    w.clock.advance(0.999)
    assert len(src.messages) == 10
    w.clock.advance(0.001)
    assert len(src.messages) == 20
    w.clock.advance(1)
    assert src.bodies() == [f"m{i}" for i in range(25)]
    assert dlq.messages == []
    entry = w.latest(dlq)
    assert entry["Status"] == "COMPLETED"
    assert entry["ApproximateNumberOfMessagesMoved"] == 25
    assert "TaskHandle" not in entry
    assert w.wheel.next_due_ms() is None  # no ticking once finished


def test_default_rate_is_500_per_second(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 1200)
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    assert len(src.messages) == 500
    w.clock.advance(2)
    assert len(src.messages) == 1200
    entry = w.latest(dlq)
    assert entry["Status"] == "COMPLETED"
    assert "MaxNumberOfMessagesPerSecond" not in entry
    assert "DestinationArn" not in entry


def test_default_destination_is_each_messages_original_source(w: World) -> None:
    a, b, dlq = w.queue("a"), w.queue("b"), w.queue("dlq", dlq=True)
    dlq.put("a1", a)
    dlq.put("b1", b)
    dlq.put("a2", a)
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    assert a.bodies() == ["a1", "a2"]
    assert b.bodies() == ["b1"]
    assert w.latest(dlq)["Status"] == "COMPLETED"


def test_explicit_destination(w: World) -> None:
    src, dlq, other = w.queue("src"), w.queue("dlq", dlq=True), w.queue("other")
    fill(dlq, src, 3)
    w.tasks.start(dlq.arn, other.arn, 2)
    w.clock.advance(1)
    assert other.bodies() == ["m0", "m1", "m2"]
    assert src.bodies() == []
    entry = w.latest(dlq)
    assert entry["DestinationArn"] == other.arn
    assert entry["MaxNumberOfMessagesPerSecond"] == 2
    assert entry["Status"] == "COMPLETED"


def test_redriven_messages_are_new_messages_sent_at_move_time(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    old = dlq.put("x", src, sent_ms=START - 60_000)
    w.clock.advance(5)
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    (moved,) = src.messages
    assert moved.message_id != old.message_id
    assert moved.sent_ms == START + 5_000
    assert old.state is MessageState.DELETED


def test_in_flight_messages_are_waited_for(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 3)
    held = dlq.messages[1]
    held.state = MessageState.IN_FLIGHT
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    assert src.bodies() == ["m0", "m2"]
    assert w.latest(dlq)["Status"] == "RUNNING"
    w.clock.advance(3)
    assert src.bodies() == ["m0", "m2"]
    held.state = MessageState.VISIBLE  # its visibility timeout ran out
    w.clock.advance(1)
    assert src.bodies() == ["m0", "m2", "m1"]
    assert w.latest(dlq)["Status"] == "COMPLETED"


def test_in_flight_message_deleted_by_consumer_completes_the_task(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 2)
    held = dlq.messages[0]
    held.state = MessageState.IN_FLIGHT
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    assert w.latest(dlq)["Status"] == "RUNNING"
    dlq.messages.remove(held)
    w.clock.advance(1)
    entry = w.latest(dlq)
    assert entry["Status"] == "COMPLETED"
    assert entry["ApproximateNumberOfMessagesMoved"] == 1
    assert entry["ApproximateNumberOfMessagesToMove"] == 2


def test_messages_arriving_after_start_are_not_counted(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 2)
    w.tasks.start(dlq.arn, None, None)
    fill(dlq, src, 1, prefix="late")
    w.clock.advance(0)
    assert src.bodies() == ["m0", "m1"]
    assert dlq.bodies() == ["late0"]
    assert w.latest(dlq)["Status"] == "COMPLETED"


def test_empty_source_completes_on_first_tick(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    w.tasks.start(dlq.arn, None, None)
    assert w.latest(dlq)["Status"] == "RUNNING"
    w.clock.advance(0)
    entry = w.latest(dlq)
    assert entry["Status"] == "COMPLETED"
    assert entry["ApproximateNumberOfMessagesToMove"] == 0


# ------------------------------------------------------------------------- failures


def test_deleted_destination_fails_the_task(w: World) -> None:
    src, dlq, other = w.queue("src"), w.queue("dlq", dlq=True), w.queue("other")
    fill(dlq, src, 5)
    w.tasks.start(dlq.arn, other.arn, 2)
    w.clock.advance(0)
    w.delete(other)
    w.clock.advance(1)
    entry = w.latest(dlq)
    assert entry["Status"] == "FAILED"
    assert entry["FailureReason"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert entry["ApproximateNumberOfMessagesMoved"] == 2
    assert "TaskHandle" not in entry
    assert dlq.bodies() == ["m2", "m3", "m4"]
    assert w.wheel.next_due_ms() is None


def test_deleted_original_source_fails_and_keeps_the_message(w: World) -> None:
    a, b, dlq = w.queue("a"), w.queue("b"), w.queue("dlq", dlq=True)
    dlq.put("a1", a)
    dlq.put("b1", b)
    dlq.put("a2", a)
    w.delete(b)
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    assert a.bodies() == ["a1"]
    assert dlq.bodies() == ["b1", "a2"]
    entry = w.latest(dlq)
    assert entry["Status"] == "FAILED"
    assert entry["FailureReason"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert entry["ApproximateNumberOfMessagesMoved"] == 1


def test_message_never_dead_lettered_fails_without_destination(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    dlq.put("orphan", None)
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    entry = w.latest(dlq)
    assert entry["Status"] == "FAILED"
    assert entry["FailureReason"] == "AWS.SimpleQueueService.NonExistentQueue"
    assert dlq.bodies() == ["orphan"]


def test_destination_refusing_a_message_fails_with_its_error(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 1)
    src.refuse = InvalidParameterValue("too big")
    w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    entry = w.latest(dlq)
    assert entry["Status"] == "FAILED"
    assert entry["FailureReason"] == "InvalidParameterValue"
    assert dlq.bodies() == ["m0"]


def test_deleted_source_fails_the_task(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 5)
    w.tasks.start(dlq.arn, None, 1)
    w.clock.advance(0)
    w.delete(dlq)
    w.clock.advance(1)
    assert w.wheel.next_due_ms() is None
    recreated = w.queue("dlq", dlq=True)
    assert w.tasks.list(recreated.arn, 10) == []  # tasks belong to the deleted queue, not the ARN


# ------------------------------------------------------------------------- cancel


def test_cancel_keeps_moved_messages_and_stops(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 25)
    handle = w.tasks.start(dlq.arn, None, 10)
    w.clock.advance(0)
    assert w.tasks.cancel(handle) == 10
    w.clock.advance(5)
    assert len(src.messages) == 10
    assert len(dlq.messages) == 15
    entry = w.latest(dlq)
    assert entry["Status"] == "CANCELLED"
    assert entry["ApproximateNumberOfMessagesMoved"] == 10
    assert "TaskHandle" not in entry
    with pytest.raises(InvalidParameterValue, match="Only a task with status RUNNING can be cancelled"):
        w.tasks.cancel(handle)
    w.tasks.start(dlq.arn, None, None)  # a new task may start once the old one is cancelled
    w.clock.advance(0)
    assert len(src.messages) == 25


def test_cancel_before_first_tick_moves_nothing(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    fill(dlq, src, 3)
    handle = w.tasks.start(dlq.arn, None, None)
    assert w.tasks.cancel(handle) == 0
    w.clock.advance(1)
    assert src.messages == []


def test_cancel_completed_task_is_invalid(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    handle = w.tasks.start(dlq.arn, None, None)
    w.clock.advance(0)
    with pytest.raises(InvalidParameterValue, match="this task is COMPLETED"):
        w.tasks.cancel(handle)


def test_task_handle_is_base64_json(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    handle = w.tasks.start(dlq.arn, None, None)
    decoded = json.loads(base64.b64decode(handle))
    assert set(decoded) == {"taskId", "sourceArn"}
    assert decoded["sourceArn"] == dlq.arn
    uuid.UUID(decoded["taskId"])
    assert w.latest(dlq)["TaskHandle"] == handle


def _handle(task_id: str, source_arn: str) -> str:
    return base64.b64encode(json.dumps({"taskId": task_id, "sourceArn": source_arn}).encode()).decode()


@pytest.mark.parametrize(
    "handle",
    [
        "not a handle",
        "%%%",
        base64.b64encode(b"not json").decode(),
        base64.b64encode(b'["a", "b"]').decode(),
        base64.b64encode(b'{"taskId": "x"}').decode(),
        base64.b64encode(b'{"taskId": 1, "sourceArn": "arn"}').decode(),
    ],
)
def test_cancel_undecodable_handle(w: World, handle: str) -> None:
    with pytest.raises(InvalidParameterValue) as info:
        w.tasks.cancel(handle)
    assert info.value.message == "Value for parameter TaskHandle is invalid."


def test_cancel_missing_handle(w: World) -> None:
    for handle in (None, ""):
        with pytest.raises(MissingParameter) as info:
            w.tasks.cancel(handle)
        assert info.value.message == "The request must contain the parameter TaskHandle."


def test_cancel_unknown_source_and_unknown_task(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    with pytest.raises(ResourceNotFound) as info:
        w.tasks.cancel(_handle(str(uuid.uuid4()), ARN + "nope"))
    assert info.value.message == "The resource that you specified for the SourceArn parameter doesn't exist."
    assert info.value.shape == "ResourceNotFoundException"
    with pytest.raises(ResourceNotFound) as info:
        w.tasks.cancel(_handle(str(uuid.uuid4()), dlq.arn))
    assert info.value.message == "Task does not exist."


# ------------------------------------------------------------------------- start errors


def test_start_errors(w: World) -> None:
    src, dlq, plain = w.queue("src"), w.queue("dlq", dlq=True), w.queue("plain")
    fifo = w.queue("other.fifo", fifo=True)
    for missing in (None, ""):
        with pytest.raises(MissingParameter) as miss:
            w.tasks.start(missing, None, None)
        assert miss.value.message == "The request must contain the parameter SourceArn."
    with pytest.raises(ResourceNotFound) as nf:
        w.tasks.start(ARN + "nope", None, None)
    assert nf.value.message == "The resource that you specified for the SourceArn parameter doesn't exist."
    with pytest.raises(InvalidParameterValue) as bad:
        w.tasks.start(plain.arn, None, None)
    assert bad.value.message == "Source queue must be configured as a Dead Letter Queue."
    with pytest.raises(ResourceNotFound) as nf:
        w.tasks.start(dlq.arn, ARN + "nope", None)
    assert nf.value.message == "The resource that you specified for the DestinationArn parameter doesn't exist."
    with pytest.raises(InvalidParameterValue, match="same type"):
        w.tasks.start(dlq.arn, fifo.arn, None)
    with pytest.raises(InvalidParameterValue, match="must differ"):
        w.tasks.start(dlq.arn, dlq.arn, None)
    for rate in (0, -1, 501):
        with pytest.raises(InvalidParameterValue) as bad:
            w.tasks.start(dlq.arn, src.arn, rate)
        assert bad.value.message == (
            f"Value {rate} for parameter MaxNumberOfMessagesPerSecond is invalid. "
            "Reason: Must be between 1 and 500, if provided."
        )
    assert w.tasks.list(dlq.arn, 10) == []  # failed starts leave no task


def test_start_boundary_rates_are_accepted(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    w.tasks.start(dlq.arn, None, 1)
    w.clock.advance(0)
    w.tasks.start(dlq.arn, None, 500)
    assert [e["MaxNumberOfMessagesPerSecond"] for e in w.tasks.list(dlq.arn, 10)] == [500, 1]


def test_fifo_to_fifo_is_allowed(w: World) -> None:
    dlq = w.queue("dlq.fifo", fifo=True, dlq=True)
    dest = w.queue("dest.fifo", fifo=True)
    w.tasks.start(dlq.arn, dest.arn, None)


def test_only_one_running_task_per_source(w: World) -> None:
    src, dlq, dlq2 = w.queue("src"), w.queue("dlq", dlq=True), w.queue("dlq2", dlq=True)
    fill(dlq, src, 30)
    w.tasks.start(dlq.arn, None, 10)
    with pytest.raises(InvalidParameterValue) as bad:
        w.tasks.start(dlq.arn, None, None)
    assert bad.value.message == (
        "There is already a task running. Only one active task is allowed for a source queue arn at a given time."
    )
    w.tasks.start(dlq2.arn, None, None)  # another source is independent


# ------------------------------------------------------------------------- list


def test_list_newest_first_default_one_and_limits(w: World) -> None:
    src, dlq = w.queue("src"), w.queue("dlq", dlq=True)
    other = w.queue("other")
    w.tasks.start(dlq.arn, None, 1)
    w.clock.advance(0)
    w.clock.advance(1)
    w.tasks.start(dlq.arn, other.arn, 2)
    w.clock.advance(0)
    fill(dlq, src, 3)
    w.clock.advance(1)
    handle = w.tasks.start(dlq.arn, None, None)

    (latest,) = w.tasks.list(dlq.arn, None)
    assert latest == {
        "TaskHandle": handle,
        "Status": "RUNNING",
        "SourceArn": dlq.arn,
        "ApproximateNumberOfMessagesMoved": 0,
        "ApproximateNumberOfMessagesToMove": 3,
        "StartedTimestamp": START + 2_000,
    }
    entries = w.tasks.list(dlq.arn, 10)
    assert [e["StartedTimestamp"] for e in entries] == [START + 2_000, START + 1_000, START]
    assert entries[1] == {
        "Status": "COMPLETED",
        "SourceArn": dlq.arn,
        "DestinationArn": other.arn,
        "MaxNumberOfMessagesPerSecond": 2,
        "ApproximateNumberOfMessagesMoved": 0,
        "ApproximateNumberOfMessagesToMove": 0,
        "StartedTimestamp": START + 1_000,
    }
    assert len(w.tasks.list(dlq.arn, 2)) == 2
    assert all(isinstance(e["StartedTimestamp"], int) for e in entries)


def test_list_errors(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    plain = w.queue("plain")
    with pytest.raises(MissingParameter):
        w.tasks.list(None, None)
    for bad in (0, 11, -1):
        with pytest.raises(InvalidParameterValue) as info:
            w.tasks.list(dlq.arn, bad)
        assert (
            info.value.message
            == f"Value {bad} for parameter MaxResults is invalid. Reason: Must be between 1 and 10, if provided."
        )
    with pytest.raises(ResourceNotFound) as nf:
        w.tasks.list(ARN + "nope", None)
    assert nf.value.message == "The resource that you specified for the SourceArn parameter doesn't exist."
    assert w.tasks.list(plain.arn, None) == []
    assert w.tasks.list(dlq.arn, 10) == []


def test_keeps_ten_finished_tasks_per_source(w: World) -> None:
    dlq = w.queue("dlq", dlq=True)
    for _ in range(13):
        w.tasks.start(dlq.arn, None, None)
        w.clock.advance(1)
    entries = w.tasks.list(dlq.arn, 10)
    assert len(entries) == 10
    assert entries[0]["StartedTimestamp"] == START + 12_000
    assert entries[-1]["StartedTimestamp"] == START + 3_000
    handle = w.tasks.start(dlq.arn, None, None)
    entries = w.tasks.list(dlq.arn, 10)
    assert entries[0]["TaskHandle"] == handle
    assert entries[-1]["StartedTimestamp"] == START + 4_000  # 1 running + the 9 newest shown of 10 kept
