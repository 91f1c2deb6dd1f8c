"""The poller of an event source mapping as "Using Lambda with Amazon SQS", "Handling errors for an SQS event
source in Lambda" and "Implementing partial batch responses" describe it, with in-process Python functions
(``SQSServer(functions=...)``) on the manual clock. Messages are sent over both SQS wire protocols; after each send
or ``advance`` the test waits for the mapping to be idle (``settle``), never for time."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from harness import client_for

from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration

_names = itertools.count(1)


class Recorder:
    """A Lambda function that records each event and answers as ``respond(event)`` says (raise to fail)."""

    def __init__(self, respond: Callable[[dict[str, Any]], Any] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.respond = respond
        self.lock = threading.Lock()

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        with self.lock:
            self.events.append(event)
        return None if self.respond is None else self.respond(event)

    def bodies(self) -> list[list[str]]:
        """The bodies of each invocation's records."""
        return [[r["body"] for r in e["Records"]] for e in self.events]


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer() as srv:
        yield srv


class World:
    """One test's account on the module's server: SQS client over ``protocol``, queues, functions, mappings."""

    def __init__(self, server: SQSServer, protocol: str) -> None:
        self.server = server
        self.account = new_account()
        self.sqs = client_for(server.endpoint_url, protocol, access_key_id=self.account)
        self.lam = server.lambda_client(self.account)
        self.fifo_urls: set[str] = set()

    def queue(self, name: str, kind: str = "standard", **attributes: Any) -> tuple[str, str]:
        """``(url, arn)`` of a new queue; ``kind`` ``fifo`` makes a FIFO queue with content-based deduplication,
        whose messages :meth:`send` puts in one message group unless told otherwise."""
        if kind == "fifo":
            name += ".fifo"
            attributes.update(FifoQueue=True, ContentBasedDeduplication=True)
        attrs = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in attributes.items()}
        url = self.sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
        if kind == "fifo":
            self.fifo_urls.add(url)
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return url, arn

    def function(self, handler: Callable[[dict[str, Any], Any], Any]) -> str:
        name = f"fn-{next(_names)}"
        self.server.function(name, handler)
        return name

    def map(self, arn: str, handler: Callable[[dict[str, Any], Any], Any], **parameters: Any) -> str:
        uid = self.lam.create_event_source_mapping(
            EventSourceArn=arn, FunctionName=self.function(handler), **parameters
        )["UUID"]
        self.server.settle()
        return str(uid)

    def send(self, url: str, *bodies: str, **extra: Any) -> None:
        if url in self.fifo_urls:
            extra.setdefault("MessageGroupId", "g")
        for start in range(0, len(bodies), 10):
            entries = [
                {"Id": str(n), "MessageBody": body, **extra} for n, body in enumerate(bodies[start : start + 10])
            ]
            answer = self.sqs.send_message_batch(QueueUrl=url, Entries=entries)
            assert not answer.get("Failed")
        self.server.settle()

    def advance(self, seconds: float) -> None:
        self.server.advance(seconds)
        self.server.settle()

    def states(self, url: str) -> dict[str, str]:
        return {m["body"]: m["state"] for m in self.server.peek(url, self.account)}

    def close(self) -> None:
        for mapping in self.lam.list_event_source_mappings()["EventSourceMappings"]:
            self.lam.delete_event_source_mapping(UUID=mapping["UUID"])
        self.server.settle()
        self.sqs.close()


@pytest.fixture(params=["standard", "fifo"])
def kind(request: pytest.FixtureRequest) -> str:
    """The kind of the queue a test maps: ``standard`` or ``fifo``."""
    return str(request.param)


@pytest.fixture
def world(server: SQSServer, protocol: str) -> Iterator[World]:
    w = World(server, protocol)
    yield w
    w.close()


def test_event_shape_and_delete_on_success(world: World) -> None:
    url, arn = world.queue("shape")
    fn = Recorder()
    world.map(arn, fn)
    world.sqs.send_message(
        QueueUrl=url,
        MessageBody='{"order": 1}',
        MessageAttributes={
            "kind": {"DataType": "String", "StringValue": "order"},
            "count": {"DataType": "Number", "StringValue": "3"},
            "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        },
    )
    world.server.settle()
    assert len(fn.events) == 1
    (record,) = fn.events[0]["Records"]
    assert set(record) == {
        "messageId", "receiptHandle", "body", "attributes", "messageAttributes", "md5OfMessageAttributes",
        "md5OfBody", "eventSource", "eventSourceARN", "awsRegion",
    }  # fmt: skip
    assert record["body"] == '{"order": 1}'
    assert record["md5OfBody"] == hashlib.md5(b'{"order": 1}').hexdigest()
    assert record["eventSource"] == "aws:sqs" and record["eventSourceARN"] == arn
    assert record["awsRegion"] == "us-east-1"
    assert set(record["attributes"]) == {
        "ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp",
    }  # fmt: skip
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert record["messageAttributes"] == {
        "kind": {"stringValue": "order", "stringListValues": [], "binaryListValues": [], "dataType": "String"},
        "count": {"stringValue": "3", "stringListValues": [], "binaryListValues": [], "dataType": "Number"},
        "blob": {"binaryValue": "AAE=", "stringListValues": [], "binaryListValues": [], "dataType": "Binary"},
    }
    assert world.server.peek(url, world.account) == []  # a successful invocation deletes the batch


def test_function_error_returns_the_whole_batch_after_its_visibility_timeout(world: World, kind: str) -> None:
    url, arn = world.queue("errors", kind, VisibilityTimeout=30)
    calls = 0

    def flaky(event: dict[str, Any]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("first call fails")

    fn = Recorder(flaky)
    world.send(url, "a", "b", "c")
    world.map(arn, fn)
    assert fn.bodies() == [["a", "b", "c"]]
    assert set(world.states(url).values()) == {"in_flight"}
    world.advance(29)
    assert len(fn.events) == 1  # not before the visibility timeout ends (and the back-off is over)
    world.advance(1)
    assert fn.bodies() == [["a", "b", "c"], ["a", "b", "c"]]
    assert [r["attributes"]["ApproximateReceiveCount"] for r in fn.events[1]["Records"]] == ["2", "2", "2"]
    assert world.states(url) == {}
    state = world.lam.get_event_source_mapping(
        UUID=world.lam.list_event_source_mappings()["EventSourceMappings"][0]["UUID"]
    )
    assert state["LastProcessingResult"] == "OK"


def _fail_bodies(*bodies: str) -> Callable[[dict[str, Any]], Any]:
    def respond(event: dict[str, Any]) -> Any:
        return {
            "batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"] if r["body"] in bodies]
        }

    return respond


def test_report_batch_item_failures_returns_only_the_listed_items(world: World, kind: str) -> None:
    url, arn = world.queue("partial", kind, VisibilityTimeout=10)
    fn = Recorder(_fail_bodies("b", "d"))
    world.send(url, "a", "b", "c", "d", "e")
    world.map(arn, fn, FunctionResponseTypes=["ReportBatchItemFailures"])
    assert fn.bodies() == [["a", "b", "c", "d", "e"]]
    assert world.states(url) == {"b": "in_flight", "d": "in_flight"}
    world.advance(10)
    assert fn.bodies()[1:] == [["b", "d"]]  # and they fail again
    assert world.states(url) == {"b": "in_flight", "d": "in_flight"}


@pytest.mark.parametrize(
    ("answer", "left"),
    [
        ({"batchItemFailures": []}, set()),
        ({"batchItemFailures": None}, set()),
        ({}, set()),
        (None, set()),
        ({"batchItemFailures": [{"itemIdentifier": ""}]}, {"a", "b"}),
        ({"batchItemFailures": [{"itemIdentifier": None}]}, {"a", "b"}),
        ({"batchItemFailures": [{"messageId": "x"}]}, {"a", "b"}),
        ({"batchItemFailures": [{"itemIdentifier": "not-in-the-batch"}]}, {"a", "b"}),
        ("not an object", {"a", "b"}),
    ],
    ids=[
        "empty-list",
        "null-list",
        "empty-response",
        "null-response",
        "empty-id",
        "null-id",
        "bad-key",
        "unknown-id",
        "not-an-object",
    ],
)
def test_partial_batch_response_outcomes(world: World, kind: str, answer: Any, left: set[str]) -> None:
    """Complete success for an empty or null list or response; complete failure for an empty, null or unknown
    itemIdentifier or a bad key ("Implementing partial batch responses")."""
    url, arn = world.queue("outcomes", kind)
    fn = Recorder(lambda event: answer)
    world.send(url, "a", "b")
    world.map(arn, fn, FunctionResponseTypes=["ReportBatchItemFailures"])
    assert len(fn.events) == 1
    assert set(world.states(url)) == left


def test_without_report_batch_item_failures_the_response_is_ignored(world: World, kind: str) -> None:
    url, arn = world.queue("ignored", kind)
    fn = Recorder(_fail_bodies("a"))
    world.send(url, "a", "b")
    world.map(arn, fn)
    assert world.states(url) == {}


def test_dead_letter_queue_through_the_redrive_policy(world: World, kind: str) -> None:
    dlq_url, dlq_arn = world.queue("esm-dlq", kind)
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2})
    url, arn = world.queue("esm-src", kind, VisibilityTimeout=30, RedrivePolicy=policy)

    def always(event: dict[str, Any]) -> None:
        raise ValueError("poison")

    fn = Recorder(always)
    world.send(url, "poison")
    world.map(arn, fn)
    world.advance(30)
    assert len(fn.events) == 2
    world.advance(30)  # the third receive moves it to the dead-letter queue instead of invoking
    assert len(fn.events) == 2
    assert world.states(url) == {}
    (moved,) = world.server.peek(dlq_url, world.account)
    assert moved["body"] == "poison" and moved["dead_letter_source_arn"] == arn


def test_fifo_group_order_and_one_batch_per_group_in_flight(world: World) -> None:
    url, arn = world.queue("groups.fifo", FifoQueue=True, ContentBasedDeduplication=True, VisibilityTimeout=5)
    active: set[str] = set()
    overlaps: list[str] = []
    both_started = threading.Barrier(2, timeout=10)
    lock = threading.Lock()
    order: list[str] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        groups = {r["attributes"]["MessageGroupId"] for r in event["Records"]}
        with lock:
            overlaps.extend(groups & active)
            active.update(groups)
            order.extend(r["body"] for r in event["Records"])
            first = len(order) <= 2
        if first:
            both_started.wait()  # A1 and B1 are in flight together: different groups
        with lock:
            active.difference_update(groups)

    world.map(arn, handler, BatchSize=1)
    entries = [("A", "A1"), ("A", "A2"), ("B", "B1"), ("A", "A3"), ("B", "B2")]
    answer = world.sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(n), "MessageBody": b, "MessageGroupId": g} for n, (g, b) in enumerate(entries)],
    )
    assert not answer.get("Failed")
    world.server.settle()
    assert overlaps == []
    assert [b for b in order if b[0] == "A"] == ["A1", "A2", "A3"]
    assert [b for b in order if b[0] == "B"] == ["B1", "B2"]
    assert world.states(url) == {}


def test_fifo_partial_failure_keeps_the_group_order(world: World) -> None:
    url, arn = world.queue("retry.fifo", FifoQueue=True, ContentBasedDeduplication=True, VisibilityTimeout=5)
    calls = 0

    def respond(event: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        records = event["Records"]
        if calls > 1:
            return {"batchItemFailures": []}
        # as Powertools' SqsFifoPartialProcessor does: the failed item and everything after it in the batch
        at = next(i for i, r in enumerate(records) if r["body"] == "A2")
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records[at:]]}

    fn = Recorder(respond)
    world.send(url, "A1", "A2", "A3", MessageGroupId="A")
    world.map(arn, fn, FunctionResponseTypes=["ReportBatchItemFailures"])
    assert fn.bodies() == [["A1", "A2", "A3"]]
    world.advance(5)
    assert fn.bodies() == [["A1", "A2", "A3"], ["A2", "A3"]]
    assert world.states(url) == {}


def test_batching_window_and_batch_size(world: World) -> None:
    url, arn = world.queue("window")
    fn = Recorder()
    world.send(url, *[f"m{n}" for n in range(12)])
    world.map(arn, fn, BatchSize=25, MaximumBatchingWindowInSeconds=10)
    assert fn.events == []  # 12 of 25: the window stays open
    world.advance(9)
    assert fn.events == []
    world.advance(1)
    assert [len(b) for b in fn.bodies()] == [12]

    url2, arn2 = world.queue("full")
    fn2 = Recorder()
    world.send(url2, *[f"m{n}" for n in range(30)])
    world.map(arn2, fn2, BatchSize=25, MaximumBatchingWindowInSeconds=300)
    assert [len(b) for b in fn2.bodies()] == [25]  # a full batch does not wait for the window
    world.advance(300)
    assert [len(b) for b in fn2.bodies()] == [25, 5]
    assert sorted(b for batch in fn2.bodies() for b in batch) == sorted(f"m{n}" for n in range(30))


def test_without_a_window_what_is_there_is_delivered_at_once(world: World) -> None:
    url, arn = world.queue("nowindow")
    fn = Recorder()
    world.map(arn, fn, BatchSize=10)
    world.send(url, "x", "y", "z")
    assert fn.bodies() == [["x", "y", "z"]]


def test_maximum_concurrency(world: World) -> None:
    url, arn = world.queue("concurrency")
    started = threading.Condition()
    running = 0
    peak = 0

    def handler(event: dict[str, Any], context: Any) -> None:
        nonlocal running, peak
        with started:
            running += 1
            peak = max(peak, running)
            started.notify_all()
            # wait (bounded) for a third invocation to run alongside: with MaximumConcurrency 2 none may
            started.wait_for(lambda: running >= 3, timeout=1.0)
            running -= 1
            started.notify_all()

    world.map(arn, handler, BatchSize=1, ScalingConfig={"MaximumConcurrency": 2})
    world.send(url, *[f"m{n}" for n in range(6)])
    assert peak == 2
    assert world.states(url) == {}


def test_back_off_after_function_errors(world: World) -> None:
    url, arn = world.queue("backoff", VisibilityTimeout=1)

    def always(event: dict[str, Any]) -> None:
        raise RuntimeError("down")

    fn = Recorder(always)
    world.send(url, "m")
    world.map(arn, fn)
    counts = [len(fn.events)]
    for _ in range(8):
        world.advance(1)
        counts.append(len(fn.events))
    # invocations at 0 s, then after pauses of 1, 2 and 4 s: at 1, 3 and 7 s (the message is back after 1 s)
    assert counts == [1, 2, 2, 3, 3, 3, 3, 4, 4]


def test_filter_criteria_deletes_what_no_pattern_matches(world: World) -> None:
    url, arn = world.queue("filtered")
    fn = Recorder()
    patterns = [
        '{"body": {"kind": ["order"], "amount": [{"numeric": [">", 100]}]}}',
        '{"body": [{"prefix": {"equals-ignore-case": "URGENT"}}]}',
    ]
    world.map(arn, fn, FilterCriteria={"Filters": [{"Pattern": p} for p in patterns]})
    world.sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"kind": "order", "amount": 150}))
    world.sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"kind": "order", "amount": 50}))
    world.sqs.send_message(QueueUrl=url, MessageBody="plain text")
    world.sqs.send_message(
        QueueUrl=url,
        MessageBody="Urgent: call back",
        MessageAttributes={"priority": {"DataType": "String", "StringValue": "high"}},
    )
    world.server.settle()
    delivered = [b for batch in fn.bodies() for b in batch]
    assert sorted(delivered) == sorted(['{"kind": "order", "amount": 150}', "Urgent: call back"])
    assert world.states(url) == {}  # the others were deleted without an invocation


def test_disabled_mapping_delivers_nothing_until_enabled(world: World) -> None:
    url, arn = world.queue("toggle")
    fn = Recorder()
    uid = world.map(arn, fn, Enabled=False)
    world.send(url, "held")
    assert fn.events == [] and world.states(url) == {"held": "visible"}
    world.lam.update_event_source_mapping(UUID=uid, Enabled=True)
    world.server.settle()
    assert fn.bodies() == [["held"]]


def test_metrics_count_invocations(world: World) -> None:
    import urllib.request

    url, arn = world.queue("metered", VisibilityTimeout=5)
    fn = Recorder(_fail_bodies("bad"))
    name = world.function(fn)
    world.lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName=name, FunctionResponseTypes=["ReportBatchItemFailures"]
    )
    world.send(url, "good", "bad")
    with urllib.request.urlopen(world.server.endpoint_url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    assert f'sqsemu_lambda_invocations_total{{function="{name}",outcome="partial_failure"}} 1.0' in text
    assert "sqsemu_lambda_batch_size_bucket" in text


def _sends_to_waiting_pollers(world: World, url: str, count: int) -> None:
    """``count`` messages sent ten at a time while the mapping's workers wait in their long polls."""
    world.send(url, *[f"m{n}" for n in range(count)])


def test_window_gathers_one_batch_from_sends_that_reach_waiting_pollers(world: World) -> None:
    # issue 42's first example: BatchSize 100, a 3 s window, 30 messages: one invocation of 30 at 3 s
    url, arn = world.queue("gather")
    fn = Recorder()
    world.map(arn, fn, BatchSize=100, MaximumBatchingWindowInSeconds=3)
    _sends_to_waiting_pollers(world, url, 30)
    world.advance(2.99)
    assert fn.events == []  # the window stops the batch, not each receive
    world.advance(0.01)
    assert [len(b) for b in fn.bodies()] == [30]
    assert world.states(url) == {}


def test_batch_size_stops_the_batch_before_the_window(world: World) -> None:
    # issue 42's second example: BatchSize 20, a 10 s window, 30 messages: 20 at once, the other 10 at 10 s
    url, arn = world.queue("full20")
    fn = Recorder()
    world.map(arn, fn, BatchSize=20, MaximumBatchingWindowInSeconds=10)
    _sends_to_waiting_pollers(world, url, 30)
    assert [len(b) for b in fn.bodies()] == [20]
    world.advance(9.99)
    assert [len(b) for b in fn.bodies()] == [20]
    world.advance(0.01)
    assert [len(b) for b in fn.bodies()] == [20, 10]
    assert sorted(b for batch in fn.bodies() for b in batch) == sorted(f"m{n}" for n in range(30))


def test_six_mb_stops_the_batch_and_the_rest_starts_the_next(world: World) -> None:
    url, arn = world.queue("sixmb")
    fn = Recorder()
    big = "x" * 250_000
    world.map(arn, fn, BatchSize=100, MaximumBatchingWindowInSeconds=300)
    for n in range(30):  # one at a time (a batch request holds 1 MiB at most)
        world.sqs.send_message(QueueUrl=url, MessageBody=f"{n:02d}{big}")
    world.server.settle()
    sizes = [len(json.dumps(e).encode()) for e in fn.events]
    assert len(fn.events) == 1  # full at 6 MB: invoked at once, not after the 300 s window
    assert sizes[0] <= 6 * 1024 * 1024 < sizes[0] + 250_500
    first = len(fn.events[0]["Records"])
    assert first == 25
    world.advance(300)
    assert [len(e["Records"]) for e in fn.events] == [first, 30 - first]
    assert sorted(b[:2] for batch in fn.bodies() for b in batch) == [f"{n:02d}" for n in range(30)]
    assert world.states(url) == {}


def test_partial_failures_and_dead_letters_on_a_large_batch(world: World) -> None:
    dlq_url, dlq_arn = world.queue("large-dlq")
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})
    url, arn = world.queue("large", VisibilityTimeout=30, RedrivePolicy=policy)
    failing = {"m3", "m17", "m28"}
    fn = Recorder(
        lambda event: {
            "batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"] if r["body"] in failing]
        }
    )
    world.map(
        arn, fn, BatchSize=50, MaximumBatchingWindowInSeconds=1, FunctionResponseTypes=["ReportBatchItemFailures"]
    )
    _sends_to_waiting_pollers(world, url, 30)
    world.advance(1)
    assert [len(b) for b in fn.bodies()] == [30]
    assert set(world.states(url)) == failing  # the other 27 are deleted
    world.advance(30)  # their second receive passes maxReceiveCount 1: the dead-letter queue, no invocation
    assert len(fn.events) == 1
    assert world.states(url) == {}
    assert set(world.states(dlq_url)) == failing


def test_a_python_function_past_its_timeout_is_abandoned_and_the_workers_go_on(world: World) -> None:
    # the invocation's timeout is the queue's visibility timeout (60 s at least), here 120 s on the manual clock
    url, arn = world.queue("hangs", VisibilityTimeout=120)
    release = threading.Event()
    hung = threading.Semaphore(0)
    calls: list[str] = []

    def handler(event: dict[str, Any], context: Any) -> None:
        calls.append(event["Records"][0]["body"])
        if len(calls) <= 2:  # the first two invocations hang (both workers of the mapping)
            hung.release()
            release.wait(timeout=30)

    try:
        uid = world.map(arn, handler, BatchSize=1, ScalingConfig={"MaximumConcurrency": 2})
        for body in ("a", "b"):
            world.sqs.send_message(QueueUrl=url, MessageBody=body)
        assert hung.acquire(timeout=10) and hung.acquire(timeout=10)  # both running, neither returns
        world.server.advance(120)  # their timeout: both abandoned, each a function error
        world.server.settle()
        problem = world.lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"]
        assert problem == "PROBLEM: Task timed out after 120.00 seconds"
        assert world.states(url) == {"a": "visible", "b": "visible"}  # the whole batches come back
        world.advance(2)  # the back-off (1 s, then 2 s: two failures) ends: the same workers invoke again, and succeed
        assert sorted(calls[2:]) == ["a", "b"]
        assert world.states(url) == {}
        assert world.lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"
    finally:
        release.set()


def test_fair_queue_mapping_favours_the_noisy_tenant_with_fewer_in_flight(world: World) -> None:
    # "How Amazon SQS fair queues work": with several noisy tenants, a consumer gets messages first from the one
    # with the fewest messages in flight; a mapping's ReceiveMessage is such a consumer (docs/behaviour.md 12.11).
    url, arn = world.queue(f"fair-{next(_names)}", VisibilityTimeout=600)
    for tenant in ("A", "B"):
        world.send(url, *(f"{tenant}-{i}" for i in range(100)), MessageGroupId=tenant)
    handles: dict[str, list[str]] = {"A": [], "B": []}
    while len(handles["A"]) + len(handles["B"]) < 100:  # a direct consumer: A 30, B 30, then one each in turn
        got = world.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600)
        for m in got["Messages"]:
            handles[m["Body"][0]].append(m["ReceiptHandle"])
    assert (len(handles["A"]), len(handles["B"])) == (50, 50)
    for handle in handles["B"][:15]:  # B now holds 35 in flight, A 50: both noisy, B has fewer
        world.sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)

    def keep_in_flight(event: dict[str, Any]) -> None:
        raise RuntimeError("keep the batch in flight")

    recorder = Recorder(keep_in_flight)
    world.map(arn, recorder, BatchSize=10, ScalingConfig={"MaximumConcurrency": 2})
    received = [body[0] for batch in recorder.bodies() for body in batch]
    # B is served until it holds as many in flight as A (15), then one each in turn (a tie: A's older message)
    assert (received.count("A"), received.count("B")) == (3, 17)
    in_flight = [body for body, state in world.states(url).items() if state != "visible"]
    assert sum(b.startswith("A") for b in in_flight) == 53
    assert sum(b.startswith("B") for b in in_flight) == 52


def test_a_python_functions_error_is_logged_in_full_below_its_line(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    # Powertools' BatchProcessingError says "N individual errors logged separately below" on its first line and
    # carries them on the next ones: the function_error line has the whole error, and its traceback, below it.
    caplog.set_level(logging.WARNING, logger="sqsemu.eventsource")
    url, arn = world.queue("logged-in-full", VisibilityTimeout=30)

    def respond(event: dict[str, Any]) -> Any:
        raise ValueError("2 individual errors logged separately below.\nfirst: order a\nsecond: order b")

    world.send(url, "a")
    world.map(arn, Recorder(respond))
    (record,) = [r for r in caplog.records if "function_error for 1 message(s)" in r.getMessage()]
    assert "(ValueError: 2 individual errors logged separately below.)" in record.getMessage()
    text = logging.Formatter().format(record)
    assert text.endswith("ValueError: 2 individual errors logged separately below.\nfirst: order a\nsecond: order b")
    assert ", in respond\n" in text  # the function's own frame
    assert "_call_python" not in text and "asyncio" not in text  # not the frames that called it
