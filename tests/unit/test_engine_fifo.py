"""FIFO queues in the engine (SQS Developer Guide, "Amazon SQS FIFO queues"), on a ManualClock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sqsemu.engine.broker import Queue
from sqsemu.engine.errors import InvalidAttributeValue, InvalidParameterValue, MissingParameter
from sqsemu.engine.message import SendEntry
from tests.unit.engine_helpers import Engine


def fifo(engine: Engine, name: str = "f.fifo", **attrs: str) -> Queue:
    return engine.queue(name, FifoQueue="true", **attrs)


def send(engine: Engine, q: Queue, body: str, group: str = "g", dedup: str | None = None, **kw: Any) -> Any:
    entry = SendEntry(body, group_id=group, deduplication_id=dedup or body, **kw)
    return engine.broker.send_message(q, entry, "acct")


def bodies(received: list[tuple[Any, str]]) -> list[str]:
    return [m.body for m, _ in received]


def test_order_within_group_and_group_lock(engine: Engine) -> None:
    q = fifo(engine)
    for body, group in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("a4", "a"), ("b1", "b"), ("c1", "c")]:
        send(engine, q, body, group)
    assert bodies(engine.receive(q, max_number_of_messages=2)) == ["a1", "a2"]
    assert bodies(engine.receive(q, max_number_of_messages=1)) == ["b1"]  # group a is locked
    assert bodies(engine.receive(q, max_number_of_messages=10)) == ["c1"]
    assert engine.receive(q, max_number_of_messages=10) == []


def test_receive_fills_from_next_groups(engine: Engine) -> None:
    q = fifo(engine)
    for body, group in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")]:
        send(engine, q, body, group)
    assert bodies(engine.receive(q, max_number_of_messages=3)) == ["a1", "a2", "b1"]


def test_expired_message_goes_back_to_the_head_of_its_group(engine: Engine) -> None:
    q = fifo(engine)
    send(engine, q, "m1")
    send(engine, q, "m2")
    ((_, handle),) = engine.receive(q, visibility_timeout=10)
    assert engine.receive(q) == []
    engine.clock.advance(10)
    assert bodies(engine.receive(q)) == ["m1"]


def test_deleting_unlocks_the_group(engine: Engine) -> None:
    q = fifo(engine)
    send(engine, q, "m1")
    send(engine, q, "m2")
    ((_, handle),) = engine.receive(q)
    engine.broker.delete_message(q, handle)
    assert bodies(engine.receive(q)) == ["m2"]


def test_a_group_head_visible_again_is_received_while_later_messages_are_in_flight(engine: Engine) -> None:
    q = fifo(engine, VisibilityTimeout="30")
    for body, group in [("g1-m1", "g1"), ("g1-m2", "g1"), ("g2-m1", "g2")]:
        send(engine, q, body, group)
    taken = engine.receive(q, max_number_of_messages=2)
    assert bodies(taken) == ["g1-m1", "g1-m2"]
    engine.broker.change_message_visibility(q, taken[0][1], 0)
    assert bodies(engine.receive(q, max_number_of_messages=3)) == ["g2-m1", "g1-m1"]  # g1-m2 still in flight


def test_a_group_head_whose_changed_timeout_ran_out_is_received_again(engine: Engine) -> None:
    q = fifo(engine, VisibilityTimeout="30")
    for body, group in [("g1-m1", "g1"), ("g1-m2", "g1"), ("g2-m1", "g2")]:
        send(engine, q, body, group)
    taken = engine.receive(q, max_number_of_messages=2)
    engine.broker.change_message_visibility(q, taken[0][1], 1)
    engine.clock.advance(1)
    assert bodies(engine.receive(q, max_number_of_messages=3)) == ["g2-m1", "g1-m1"]


@pytest.mark.parametrize(("extended", "expected"), [("foo", []), ("bar", ["foo"]), ("baz", ["foo", "bar"])])
def test_a_receive_stops_at_the_first_message_of_the_group_still_in_flight(
    engine: Engine, extended: str, expected: list[str]
) -> None:
    q = fifo(engine, VisibilityTimeout="1")
    for body in ("foo", "bar", "baz"):
        send(engine, q, body)
    taken = {m.body: handle for m, handle in engine.receive(q, max_number_of_messages=10)}
    assert sorted(taken) == ["bar", "baz", "foo"]
    engine.broker.change_message_visibility(q, taken[extended], 4)
    engine.clock.advance(2.5)
    assert bodies(engine.receive(q, max_number_of_messages=10)) == expected


def test_groups_taken_from_go_to_the_back_of_the_rotation(engine: Engine) -> None:
    q = fifo(engine)
    for body, group in [("g1-m1", "g1"), ("g2-m1", "g2"), ("g2-m2", "g2"), ("g3-m1", "g3"), ("g1-m2", "g1")]:
        send(engine, q, body, group)
    first = engine.receive(q, max_number_of_messages=3, visibility_timeout=0)
    assert bodies(first) == ["g1-m1", "g1-m2", "g2-m1"]
    second = engine.receive(q, max_number_of_messages=10, visibility_timeout=0)
    assert bodies(second) == ["g3-m1", "g1-m1", "g1-m2", "g2-m1", "g2-m2"]


def test_an_older_fifo_receipt_handle_has_expired_even_while_the_message_is_in_flight(engine: Engine) -> None:
    q = fifo(engine)
    send(engine, q, "m1")
    ((_, old),) = engine.receive(q, visibility_timeout=0)
    ((_, new),) = engine.receive(q, visibility_timeout=30)
    with pytest.raises(InvalidParameterValue, match="The receipt handle has expired"):
        engine.broker.delete_message(q, old)
    with pytest.raises(InvalidParameterValue, match="The receipt handle has expired"):
        engine.broker.change_message_visibility(q, old, 0)
    assert engine.counts(q) == (0, 1, 0)
    engine.broker.delete_message(q, new)
    assert engine.counts(q) == (0, 0, 0)


def test_deduplication_window_and_scope(engine: Engine) -> None:
    q = fifo(engine)
    first = send(engine, q, "x", "g1", dedup="d")
    again = send(engine, q, "x", "g2", dedup="d")  # scope queue: duplicate across groups
    assert again.message_id == first.message_id and again.sequence_number == first.sequence_number
    ((_, handle),) = engine.receive(q, max_number_of_messages=10)
    engine.broker.delete_message(q, handle)
    send(engine, q, "x", dedup="d")  # still a duplicate after delete
    assert engine.receive(q) == []
    engine.clock.advance(300)
    send(engine, q, "x", dedup="d")
    assert bodies(engine.receive(q)) == ["x"]

    per_group = fifo(engine, "g.fifo", DeduplicationScope="messageGroup")
    send(engine, per_group, "y", "g1", dedup="d")
    send(engine, per_group, "y", "g2", dedup="d")
    assert len(engine.receive(per_group, max_number_of_messages=10)) == 2


def test_content_based_deduplication(engine: Engine) -> None:
    q = fifo(engine, ContentBasedDeduplication="true")
    engine.broker.send_message(q, SendEntry("same", group_id="g"), "a")
    engine.broker.send_message(q, SendEntry("same", group_id="g"), "a")
    ((msg, _),) = engine.receive(q, max_number_of_messages=10)
    sha256_of_body = "0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5"
    assert msg.deduplication_id == sha256_of_body
    assert engine.receive(q) == []


def test_purge_clears_deduplication(engine: Engine) -> None:
    q = fifo(engine)
    send(engine, q, "x", dedup="d")
    engine.broker.purge_queue(q)
    send(engine, q, "x", dedup="d")
    assert bodies(engine.receive(q)) == ["x"]


def test_a_deduplication_key_past_its_window_never_drops_a_send(engine: Engine) -> None:
    """A key is dead once its 5 minutes are over, even when the keys are not held in expiry order (restored out
    of order here): the send is stored, not answered as a duplicate."""
    q = fifo(engine)
    now = engine.clock.now_ms()
    q.restore_deduplication("late", now + 200_000, "id-late", "1")  # type: ignore[attr-defined]
    q.restore_deduplication("early", now + 100_000, "id-early", "2")  # type: ignore[attr-defined]
    engine.clock.advance(150)  # "early" expired, "late" not
    fresh = send(engine, q, "x", dedup="early")
    assert fresh.message_id != "id-early"
    assert bodies(engine.receive(q, max_number_of_messages=10)) == ["x"]
    assert send(engine, q, "y", dedup="late").message_id == "id-late"
    assert engine.counts(q) == (0, 1, 0)


def test_sequence_numbers_increase(engine: Engine) -> None:
    q = fifo(engine)
    numbers = [int(send(engine, q, f"m{i}").sequence_number) for i in range(5)]
    assert numbers == sorted(numbers) and len(set(numbers)) == 5
    assert all(len(str(n)) == 20 for n in numbers)


def test_fifo_send_rules(engine: Engine) -> None:
    q = fifo(engine)
    with pytest.raises(MissingParameter, match="MessageGroupId"):
        engine.broker.send_message(q, SendEntry("b", deduplication_id="d"), "a")
    with pytest.raises(InvalidParameterValue, match="ContentBasedDeduplication enabled"):
        engine.broker.send_message(q, SendEntry("b", group_id="g"), "a")
    with pytest.raises(InvalidParameterValue, match="not valid for this queue type"):
        send(engine, q, "b", delay_seconds=5)
    send(engine, q, "ok", delay_seconds=0)
    with pytest.raises(InvalidParameterValue, match="MessageGroupId"):
        engine.broker.send_message_batch(
            q,
            [SendEntry("a", group_id="g", deduplication_id="1", id="a"), SendEntry("b", deduplication_id="2", id="b")],
            "a",
        )
    assert engine.counts(q) == (1, 0, 0)  # the failed batch stored nothing


def test_batch_keeps_request_order(engine: Engine) -> None:
    q = fifo(engine)
    entries = [SendEntry(str(i), group_id="g", deduplication_id=str(i), id=f"e{i}") for i in range(10)]
    engine.broker.send_message_batch(q, entries, "a")
    assert bodies(engine.receive(q, max_number_of_messages=10)) == [str(i) for i in range(10)]


def test_receive_request_attempt_id_replays(engine: Engine) -> None:
    q = fifo(engine)
    send(engine, q, "m1")
    send(engine, q, "m2", "h")
    first = engine.receive(q, max_number_of_messages=1, receive_request_attempt_id="att")
    engine.clock.advance(20)
    again = engine.receive(q, max_number_of_messages=1, receive_request_attempt_id="att")
    assert [h for _, h in again] == [h for _, h in first]
    engine.clock.advance(29)  # visibility restarted by the retry at +20 s
    assert bodies(engine.receive(q, max_number_of_messages=10)) == ["m2"]
    # a changed message ends the replay: the retry becomes an ordinary receive
    engine.broker.change_message_visibility(q, first[0][1], 0)
    other = engine.receive(q, max_number_of_messages=1, receive_request_attempt_id="att")
    assert other[0][1] != first[0][1]


def test_a_long_poll_woken_by_a_send_is_replayed_by_its_attempt_id(engine: Engine) -> None:
    """A long poll with a ReceiveRequestAttemptId that waited and was handed a message by a send is remembered as
    that attempt: its retry gets the same message and receipt handle (API Reference, "ReceiveMessage",
    ReceiveRequestAttemptId)."""
    q = fifo(engine)
    task = engine.loop.create_task(
        engine.broker.receive_message(q, wait_time_seconds=20, receive_request_attempt_id="lp")
    )
    engine.run(asyncio.sleep(0))
    assert not task.done()
    send(engine, q, "m1")
    engine.run(asyncio.sleep(0))
    first = task.result()
    assert bodies(first) == ["m1"]
    engine.clock.advance(5)
    again = engine.receive(q, max_number_of_messages=1, receive_request_attempt_id="lp")
    assert [h for _, h in again] == [h for _, h in first]


def test_a_receive_attempt_past_its_window_is_not_replayed(engine: Engine) -> None:
    """A ReceiveRequestAttemptId is replayed for 5 minutes only, even when attempts are not held in expiry order
    (simulated by recording one with a later time first): afterwards the retry is an ordinary receive."""
    q = fifo(engine, VisibilityTimeout="900")
    send(engine, q, "a1", "a")
    send(engine, q, "b1", "b")
    other = engine.receive(q, max_number_of_messages=1)
    assert bodies(other) == ["a1"]
    q.record_attempt("late", other, engine.clock.now_ms() + 100_000)
    first = engine.receive(q, max_number_of_messages=1, receive_request_attempt_id="early")
    assert bodies(first) == ["b1"]
    engine.clock.advance(350)  # "early" expired, "late" not; both messages still in flight
    assert engine.receive(q, max_number_of_messages=1, receive_request_attempt_id="early") == []


def test_fifo_handles_expire_with_the_visibility_timeout(engine: Engine) -> None:
    q = fifo(engine)
    send(engine, q, "m1")
    ((_, handle),) = engine.receive(q, visibility_timeout=5)
    engine.clock.advance(5)
    with pytest.raises(InvalidParameterValue, match="The receipt handle has expired"):
        engine.broker.delete_message(q, handle)
    with pytest.raises(InvalidParameterValue, match="The receipt handle has expired"):
        engine.broker.change_message_visibility(q, handle, 10)


def test_fifo_queue_delay_is_retroactive(engine: Engine) -> None:
    q = fifo(engine, DelaySeconds="60")
    send(engine, q, "m1")
    engine.clock.advance(10)
    engine.broker.set_queue_attributes(q, {"DelaySeconds": "20"})
    assert engine.receive(q) == []
    engine.clock.advance(10)
    assert bodies(engine.receive(q)) == ["m1"]


def test_fifo_attributes(engine: Engine) -> None:
    q = fifo(engine)
    attrs = engine.broker.get_queue_attributes(q, ["All"])
    assert attrs["FifoQueue"] == "true" and attrs["ContentBasedDeduplication"] == "false"
    assert attrs["DeduplicationScope"] == "queue" and attrs["FifoThroughputLimit"] == "perQueue"
    with pytest.raises(InvalidAttributeValue, match="Modifying queue type is not supported"):
        engine.broker.set_queue_attributes(q, {"FifoQueue": "false"})
    engine.broker.set_queue_attributes(
        q, {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
    )
    with pytest.raises(InvalidAttributeValue, match="perMessageGroupId"):
        engine.broker.set_queue_attributes(q, {"DeduplicationScope": "queue"})
    with pytest.raises(InvalidParameterValue):
        engine.queue("nofifo", FifoQueue="true")
