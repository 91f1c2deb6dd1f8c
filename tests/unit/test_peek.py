"""The queue list, peek and reset admin routes (sqsemu/admin/peek.py) and Broker.all_queues / Broker.reset.

A real broker on a ManualClock behind the admin Starlette app, driven as raw ASGI: no sockets.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from sqsemu.admin.app import admin_app
from sqsemu.config import Config
from sqsemu.engine.broker import Namespace, Queue
from sqsemu.engine.message import Message, MessageAttributeValue, SendEntry
from tests.unit.app_helpers import call_asgi
from tests.unit.engine_helpers import NS, START_MS, Engine

OTHER = Namespace("111111111111", "us-east-1")
WEST = Namespace("000000000000", "eu-west-1")


def get(engine: Engine, path: str, query: bytes = b"", config: Config | None = None) -> Any:
    app = admin_app(config or Config(clock="manual"), engine.broker, engine.clock)
    return engine.run(call_asgi(app, "GET", path, {"Host": "example.test:9324"}, query_string=query))


def post(engine: Engine, path: str, body: bytes) -> Any:
    app = admin_app(Config(clock="manual"), engine.broker, engine.clock)
    return engine.run(call_asgi(app, "POST", path, {"Host": "h", "Content-Type": "application/json"}, body))


def peek(engine: Engine, account: str, name: str, query: bytes = b"") -> Any:
    resp = get(engine, f"/_sqsemu/queues/{account}/{name}/messages", query)
    assert resp.status == 200, resp.body
    return resp.json()


def _fields(message: Message) -> dict[str, str]:
    """Every public data attribute of the message (its slots and properties), as text. Read through dir(): a compiled
    build's Message (mypyc) has no ``__slots__`` to list."""
    names = [n for n in dir(message) if not n.startswith("_") and not callable(getattr(message, n))]
    return {name: repr(getattr(message, name)) for name in names}


def snapshot(queue: Queue) -> Any:
    """Everything a peek could conceivably disturb: every message field, the counts and the ready line."""
    messages = {mid: _fields(m) for mid, m in queue.messages.items()}
    return messages, list(queue.counts), [m.message_id for m in queue.ready], queue.get_attributes(["All"])


# --- GET /_sqsemu/queues ----------------------------------------------------------------------------------------


def test_queue_list_covers_every_account_and_region_sorted(engine: Engine) -> None:
    broker = engine.broker
    b = broker.create_queue(NS, "b", {}, {})
    broker.create_queue(NS, "a", {}, {})
    broker.create_queue(OTHER, "a", {}, {})
    broker.create_queue(WEST, "f.fifo", {"FifoQueue": "true"}, {})
    engine.send(b)
    engine.send(b, delay_seconds=5)
    engine.send(b)
    engine.receive(b)
    resp = get(engine, "/_sqsemu/queues")
    assert resp.status == 200
    queues = resp.json()["queues"]
    assert [(q["account"], q["region"], q["name"]) for q in queues] == [
        ("000000000000", "eu-west-1", "f.fifo"),
        ("000000000000", "us-east-1", "a"),
        ("000000000000", "us-east-1", "b"),
        ("111111111111", "us-east-1", "a"),
    ]
    assert queues[2] == {
        "account": "000000000000",
        "region": "us-east-1",
        "name": "b",
        "arn": "arn:aws:sqs:us-east-1:000000000000:b",
        "fifo": False,
        "url": "http://example.test:9324/000000000000/b",
        "visible": 1,
        "in_flight": 1,
        "delayed": 1,
        "waiting_long_polls": 0,
        "noisy_tenants": [],
    }
    assert queues[0]["fifo"] is True and queues[0]["arn"] == "arn:aws:sqs:eu-west-1:000000000000:f.fifo"


def test_queue_urls_follow_the_configured_base_url(engine: Engine) -> None:
    engine.queue("q")
    config = Config(clock="manual", base_url="https://sqs.example.com")
    [queue] = get(engine, "/_sqsemu/queues", config=config).json()["queues"]
    assert queue["url"] == "https://sqs.example.com/000000000000/q"


def test_queue_list_empty(engine: Engine) -> None:
    assert get(engine, "/_sqsemu/queues").json() == {"queues": []}


def waiting_long_polls(engine: Engine, name: str) -> tuple[int, int]:
    """Queue ``name``'s ``waiting_long_polls`` as (queue list, peek) show it."""
    [listed] = [q["waiting_long_polls"] for q in get(engine, "/_sqsemu/queues").json()["queues"] if q["name"] == name]
    return listed, peek(engine, "000000000000", name)["queue"]["waiting_long_polls"]


def test_waiting_long_polls_counts_parked_receives_until_they_go(engine: Engine) -> None:
    queue, other = engine.queue("q"), engine.queue("other")

    def poll(**kwargs: Any) -> asyncio.Task[Any]:
        kwargs.setdefault("wait_time_seconds", 20)
        task = engine.loop.create_task(engine.broker.receive_message(queue, **kwargs))
        engine.run(asyncio.sleep(0))  # the call runs up to its wait
        return task

    assert waiting_long_polls(engine, "q") == (0, 0)
    answered = poll()
    assert waiting_long_polls(engine, "q") == (1, 1)
    timing_out = poll(wait_time_seconds=5)
    gone: asyncio.Future[None] = engine.loop.create_future()
    disconnecting = poll(disconnected=gone)
    cancelled = poll()
    assert waiting_long_polls(engine, "q") == (4, 4)
    assert waiting_long_polls(engine, "other") == (0, 0)
    assert engine.receive(queue) == []  # a short poll never parks
    assert waiting_long_polls(engine, "q") == (4, 4)

    engine.send(queue, "first in line gets it")
    assert waiting_long_polls(engine, "q") == (3, 3)
    assert [m.body for m, _ in answered.result()] == ["first in line gets it"]
    engine.clock.advance(5)
    assert waiting_long_polls(engine, "q") == (2, 2)
    assert timing_out.result() == []
    gone.set_result(None)
    assert len(queue.waiters) == 2  # its call has not resumed yet, but it no longer counts as waiting
    assert queue.waiters.waiting_count() == 1
    assert waiting_long_polls(engine, "q") == (1, 1)
    assert disconnecting.result() == []
    cancelled.cancel()
    assert waiting_long_polls(engine, "q") == (0, 0)
    assert cancelled.cancelled()
    assert len(queue.waiters) == 0
    engine.send(other, "elsewhere")
    assert waiting_long_polls(engine, "q") == (0, 0)


# --- GET /_sqsemu/queues/{account}/{name}/messages ---------------------------------------------------------------


def test_peek_shows_each_state_with_its_fields(engine: Engine) -> None:
    queue = engine.queue("q", VisibilityTimeout="30")
    attrs = {
        "s": MessageAttributeValue("String", string_value="x"),
        "b": MessageAttributeValue("Binary.raw", binary_value=b"\x00\xff"),
        "n": MessageAttributeValue("Number", string_value="1.5"),
    }
    first = engine.send(queue, "in flight", message_attributes=attrs)
    second = engine.send(queue, "delayed", delay_seconds=10)
    third = engine.send(queue, "visible")
    engine.clock.advance(1)
    [(message, _)] = engine.receive(queue)
    assert message.message_id == first
    engine.clock.advance(2.5)

    data = peek(engine, "000000000000", "q")
    assert data["queue"]["name"] == "q" and data["queue"]["visible"] == 1
    by_id = {m["message_id"]: m for m in data["messages"]}
    assert [m["message_id"] for m in data["messages"]] == [first, second, third]  # send order

    flying = by_id[first]
    assert flying["state"] == "in_flight"
    assert flying["seconds_left"] == pytest.approx(27.5)
    assert flying["receive_count"] == 1
    assert flying["sent_timestamp"] == START_MS
    assert flying["first_receive_timestamp"] == START_MS + 1000
    assert flying["body"] == "in flight"
    assert flying["attributes"] == {
        "SenderId": "000000000000",
        "SentTimestamp": str(START_MS),
        "ApproximateReceiveCount": "1",
        "ApproximateFirstReceiveTimestamp": str(START_MS + 1000),
    }
    assert flying["message_attributes"] == {
        "s": {"DataType": "String", "StringValue": "x"},
        "b": {"DataType": "Binary.raw", "BinaryValue": base64.b64encode(b"\x00\xff").decode()},
        "n": {"DataType": "Number", "StringValue": "1.5"},
    }
    for key in ("message_group_id", "message_deduplication_id", "sequence_number", "dead_letter_source_arn"):
        assert flying[key] is None

    delayed = by_id[second]
    assert delayed["state"] == "delayed" and delayed["seconds_left"] == pytest.approx(6.5)
    assert delayed["receive_count"] == 0 and delayed["first_receive_timestamp"] is None

    visible = by_id[third]
    assert visible["state"] == "visible" and visible["seconds_left"] is None and visible["message_attributes"] == {}


def test_peek_fifo_and_dead_letter_fields(engine: Engine) -> None:
    broker = engine.broker
    dlq = broker.create_queue(NS, "dlq.fifo", {"FifoQueue": "true"}, {})
    redrive = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1})
    source = broker.create_queue(
        NS, "src.fifo", {"FifoQueue": "true", "RedrivePolicy": redrive, "VisibilityTimeout": "5"}, {}
    )
    msg_id = engine.send(source, "one", group_id="g1", deduplication_id="d1")
    engine.send(source, "two", group_id="g1", deduplication_id="d2")
    [(message, _)] = engine.receive(source)
    sequence = message.sequence_number
    data = peek(engine, "000000000000", "src.fifo")
    assert [m["body"] for m in data["messages"]] == ["one", "two"]
    one = data["messages"][0]
    assert one["message_group_id"] == "g1" and one["message_deduplication_id"] == "d1"
    assert one["sequence_number"] == sequence and one["attributes"]["SequenceNumber"] == sequence
    assert one["attributes"]["MessageGroupId"] == "g1" and one["state"] == "in_flight"
    assert data["queue"]["fifo"] is True

    engine.clock.advance(5)
    engine.receive(source)  # this receive dead-letters "one" (over maxReceiveCount)
    dead = peek(engine, "000000000000", "dlq.fifo")["messages"]
    assert [m["message_id"] for m in dead] == [msg_id]
    assert dead[0]["dead_letter_source_arn"] == source.arn
    assert dead[0]["attributes"]["DeadLetterQueueSourceArn"] == source.arn


def test_peek_changes_nothing(engine: Engine) -> None:
    queue = engine.queue("q", VisibilityTimeout="30")
    fifo = engine.broker.create_queue(NS, "f.fifo", {"FifoQueue": "true", "ContentBasedDeduplication": "true"}, {})
    attrs = {"a": MessageAttributeValue("String", string_value="v")}
    for body in ("a", "b", "c"):
        engine.send(queue, body, message_attributes=attrs)
    engine.send(queue, "later", delay_seconds=60)
    engine.send(fifo, "f1", group_id="g")
    engine.send(fifo, "f2", group_id="g")
    engine.receive(queue)
    engine.receive(fifo)
    engine.clock.advance(1)
    before = (snapshot(queue), snapshot(fifo))
    for _ in range(3):
        peek(engine, "000000000000", "q")
        peek(engine, "000000000000", "f.fifo")
        get(engine, "/_sqsemu/queues")
    assert (snapshot(queue), snapshot(fifo)) == before
    # the in-flight message is still in flight, and the FIFO group still locked
    assert [m.body for m, _ in engine.receive(queue, max_number_of_messages=10)] == ["b", "c"]
    assert engine.receive(fifo) == []


def test_peek_region_parameter(engine: Engine) -> None:
    engine.broker.create_queue(WEST, "q", {}, {})
    assert get(engine, "/_sqsemu/queues/000000000000/q/messages").status == 404
    data = peek(engine, "000000000000", "q", b"region=eu-west-1")
    assert data["queue"]["region"] == "eu-west-1" and data["messages"] == []


@pytest.mark.parametrize(
    ("path", "query", "status"),
    [
        ("/_sqsemu/queues/000000000000/missing/messages", b"", 404),
        ("/_sqsemu/queues/123/q/messages", b"", 400),
        ("/_sqsemu/queues/abcdefghijkl/q/messages", b"", 400),
        ("/_sqsemu/queues/000000000000/q/messages", b"region=", 400),
    ],
)
def test_peek_errors(engine: Engine, path: str, query: bytes, status: int) -> None:
    engine.queue("q")
    resp = get(engine, path, query)
    assert resp.status == status
    assert isinstance(resp.json()["error"], str)


# --- POST /_sqsemu/reset and the broker methods --------------------------------------------------------------------


def test_reset_one_account_then_everything(engine: Engine) -> None:
    broker = engine.broker
    broker.create_queue(NS, "a", {}, {})
    broker.create_queue(WEST, "a", {}, {})
    kept = broker.create_queue(OTHER, "a", {}, {})
    engine.send(kept)
    resp = post(engine, "/_sqsemu/reset", b'{"account": "000000000000"}')
    assert resp.status == 200 and resp.json() == {"deleted_queues": 2, "deleted_topics": 0}
    assert broker.all_queues() == [kept]
    assert Namespace("000000000000", "us-east-1") not in broker.namespaces
    everything = {"deleted_queues": 1, "deleted_topics": 0, "deleted_faults": 0}
    assert post(engine, "/_sqsemu/reset", b"{}").json() == everything
    assert broker.all_queues() == [] and kept.deleted
    nothing = {"deleted_queues": 0, "deleted_topics": 0, "deleted_faults": 0}
    assert post(engine, "/_sqsemu/reset", b"").json() == nothing


@pytest.mark.parametrize(
    "body",
    [b'{"account": "123"}', b'{"account": 123456789012}', b'{"acount": "000000000000"}', b"[]", b"nope"],
)
def test_reset_bad_input_deletes_nothing(engine: Engine, body: bytes) -> None:
    engine.queue("q")
    resp = post(engine, "/_sqsemu/reset", body)
    assert resp.status == 400 and "error" in resp.json()
    assert len(engine.broker.all_queues()) == 1


def test_reset_releases_long_polls(engine: Engine) -> None:
    queue = engine.queue("q")

    async def scenario() -> list[Any]:
        poll = asyncio.ensure_future(engine.broker.receive_message(queue, wait_time_seconds=20))
        await asyncio.sleep(0)
        assert len(queue.waiters) == 1
        assert engine.broker.reset() == 1
        return await asyncio.wait_for(poll, 1)

    assert engine.run(scenario()) == []
    assert len(queue.waiters) == 0


def test_reset_leaves_no_recently_deleted_marks() -> None:
    engine = Engine(strict=True)
    try:
        engine.queue("q")
        engine.broker.reset()
        engine.queue("q")  # strict fidelity would refuse this for 60 s after a DeleteQueue
        engine.broker.delete_queue(engine.broker.get_queue(NS, "q"))
        engine.broker.reset("000000000000")
        engine.queue("q")
    finally:
        engine.close()


def test_all_queues_sorted(engine: Engine) -> None:
    broker = engine.broker
    for ns, name in ((OTHER, "z"), (NS, "b"), (WEST, "a"), (NS, "a")):
        broker.create_queue(ns, name, {}, {})
    assert [(q.namespace.account_id, q.namespace.region, q.name) for q in broker.all_queues()] == [
        ("000000000000", "eu-west-1", "a"),
        ("000000000000", "us-east-1", "a"),
        ("000000000000", "us-east-1", "b"),
        ("111111111111", "us-east-1", "z"),
    ]


def test_send_after_reset_goes_to_a_new_queue(engine: Engine) -> None:
    old = engine.queue("q")
    engine.send(old, "before")
    engine.broker.reset()
    new = engine.queue("q")
    assert new is not old and new.message_count() == 0
    engine.broker.send_message(new, SendEntry("after"), "000000000000")
    assert [m["body"] for m in peek(engine, "000000000000", "q")["messages"]] == ["after"]
