"""Visibility timeout rules (SQS Developer Guide, "Amazon SQS visibility timeout"), on a ManualClock."""

from __future__ import annotations

import pytest

from sqsemu.engine.errors import InvalidParameterValue, MissingParameter, ReceiptHandleIsInvalid
from tests.unit.engine_helpers import Engine


def test_queue_default_visibility_is_30_seconds(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    assert len(engine.receive(q)) == 1
    engine.clock.advance(29.999)
    assert engine.receive(q) == []
    assert engine.counts(q) == (0, 1, 0)
    engine.clock.advance(0.001)
    assert engine.counts(q) == (1, 0, 0)
    assert len(engine.receive(q)) == 1


def test_receive_visibility_timeout_applies_to_that_receive_only(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    engine.receive(q, visibility_timeout=5)
    assert engine.broker.get_queue_attributes(q, ["VisibilityTimeout"]) == {"VisibilityTimeout": "30"}
    engine.clock.advance(5)
    ((msg, _),) = engine.receive(q)
    engine.clock.advance(29)
    assert engine.receive(q) == []  # second receive used the queue's 30 s again
    engine.clock.advance(1)
    assert engine.receive(q)[0][0] is msg


def test_change_visibility_counts_from_the_call_and_is_not_additive(engine: Engine) -> None:
    q = engine.queue(VisibilityTimeout="60")
    engine.send(q)
    ((_, handle),) = engine.receive(q)
    engine.clock.advance(15)
    engine.broker.change_message_visibility(q, handle, 10)
    engine.clock.advance(9.999)
    assert engine.receive(q) == []
    engine.clock.advance(0.001)  # t = 25 s, not 70 s
    assert len(engine.receive(q)) == 1


def test_extension_is_not_remembered_for_the_next_receipt(engine: Engine) -> None:
    q = engine.queue(VisibilityTimeout="30")
    engine.send(q)
    ((_, handle),) = engine.receive(q)
    engine.broker.change_message_visibility(q, handle, 100)
    engine.clock.advance(100)
    assert len(engine.receive(q)) == 1
    engine.clock.advance(30)
    assert len(engine.receive(q)) == 1


def test_visibility_zero_makes_message_visible_at_once(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, handle),) = engine.receive(q)
    engine.broker.change_message_visibility(q, handle, 0)
    assert engine.counts(q) == (1, 0, 0)
    assert len(engine.receive(q)) == 1


def test_receive_with_visibility_zero_leaves_message_visible(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    first = engine.receive(q, visibility_timeout=0)
    second = engine.receive(q, visibility_timeout=0)
    assert first[0][0] is second[0][0]
    assert first[0][1] != second[0][1]
    assert second[0][0].receive_count == 2


def test_twelve_hour_maximum_counts_from_the_receive(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, handle),) = engine.receive(q)
    engine.clock.advance(5)
    with pytest.raises(InvalidParameterValue, match="beyond the limit"):
        engine.broker.change_message_visibility(q, handle, 43200)
    engine.broker.change_message_visibility(q, handle, 43195)
    engine.clock.advance(43000)
    # extending again does not reset the 12 hours: 43005 s have passed, 195 s remain
    with pytest.raises(InvalidParameterValue):
        engine.broker.change_message_visibility(q, handle, 196)
    engine.broker.change_message_visibility(q, handle, 195)


def test_every_receive_gives_a_new_receipt_handle(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    handles = set()
    for _ in range(3):
        ((msg, handle),) = engine.receive(q, visibility_timeout=1)
        handles.add(handle)
        engine.clock.advance(1)
    assert len(handles) == 3
    assert msg.receive_count == 3


def test_queue_timeout_change_does_not_touch_messages_in_flight(engine: Engine) -> None:
    q = engine.queue(VisibilityTimeout="30")
    engine.send(q)
    engine.receive(q)
    engine.broker.set_queue_attributes(q, {"VisibilityTimeout": "300"})
    engine.clock.advance(30)
    assert len(engine.receive(q)) == 1


def test_change_after_expiry_rehides_the_message(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, handle),) = engine.receive(q, visibility_timeout=10)
    engine.clock.advance(11)
    assert engine.counts(q) == (1, 0, 0)
    engine.broker.change_message_visibility(q, handle, 60)
    assert engine.counts(q) == (0, 1, 0)
    assert engine.receive(q) == []
    engine.clock.advance(60)
    assert len(engine.receive(q)) == 1


def test_an_older_receipt_handle_changes_the_message_as_it_is_now(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "m")
    ((_, h1),) = engine.receive(q, visibility_timeout=0)
    ((_, h2),) = engine.receive(q, visibility_timeout=3)
    assert engine.counts(q) == (0, 1, 0)
    engine.broker.change_message_visibility(q, h1, 0)  # the handle of receive #1
    assert [m.body for m, _ in engine.receive(q, visibility_timeout=5)] == ["m"]
    engine.broker.change_message_visibility(q, h2, 30)  # an older handle can also hide it longer
    engine.clock.advance(29)
    assert engine.receive(q) == []
    engine.clock.advance(1)
    assert [m.body for m, _ in engine.receive(q)] == ["m"]


def test_change_of_a_deleted_message_is_refused(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, old),) = engine.receive(q, visibility_timeout=1)
    engine.clock.advance(1)
    ((_, new),) = engine.receive(q)
    engine.broker.delete_message(q, new)
    for handle in (old, new):
        with pytest.raises(InvalidParameterValue, match="Message does not exist or is not available"):
            engine.broker.change_message_visibility(q, handle, 10)


def test_a_message_visible_again_is_received_before_newer_ones(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q, "test1")
    engine.receive(q, visibility_timeout=3)
    engine.clock.advance(1.5)
    engine.send(q, "test2")
    engine.clock.advance(1.5)  # test1's visibility timeout has run out
    assert [m.body for m, _ in engine.receive(q)] == ["test1"]
    assert [m.body for m, _ in engine.receive(q)] == ["test2"]


def test_visible_messages_come_in_send_order_whatever_made_them_visible(engine: Engine) -> None:
    q = engine.queue()
    for body in ("a", "b", "c", "d", "e"):
        engine.send(q, body, delay_seconds=5 if body == "b" else 0)
    taken = engine.receive(q, max_number_of_messages=2, visibility_timeout=2)  # a, c
    assert [m.body for m, _ in taken] == ["a", "c"]
    handle_c = taken[1][1]
    engine.broker.change_message_visibility(q, handle_c, 0)
    engine.clock.advance(5)  # a's timeout runs out, b's delay ends
    got = engine.receive(q, max_number_of_messages=10, visibility_timeout=0)
    assert [m.body for m, _ in got] == ["a", "b", "c", "d", "e"]
    got = engine.receive(q, max_number_of_messages=3, visibility_timeout=0)  # 0 s: visible again, same order
    assert [m.body for m, _ in got] == ["a", "b", "c"]


def test_malformed_and_foreign_receipt_handles_are_invalid(engine: Engine) -> None:
    q1, q2 = engine.queue("a"), engine.queue("b")
    engine.send(q1)
    ((_, handle),) = engine.receive(q1)
    for bad in ("garbage", "Zm9vOmJhcg=="):
        with pytest.raises(ReceiptHandleIsInvalid, match='The input receipt handle ".*" is not a valid'):
            engine.broker.delete_message(q1, bad)
    with pytest.raises(ReceiptHandleIsInvalid):
        engine.broker.delete_message(q2, handle)
    with pytest.raises(MissingParameter):
        engine.broker.delete_message(q1, None)


def test_visibility_timeout_out_of_range(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    ((_, handle),) = engine.receive(q)
    with pytest.raises(InvalidParameterValue):
        engine.broker.change_message_visibility(q, handle, 43201)
    with pytest.raises(InvalidParameterValue):
        engine.broker.change_message_visibility(q, handle, -1)
    with pytest.raises(MissingParameter):
        engine.broker.change_message_visibility(q, handle, None)
    with pytest.raises(InvalidParameterValue):
        engine.receive(q, visibility_timeout=43201)


def test_system_timestamps_and_counts(engine: Engine) -> None:
    q = engine.queue()
    engine.send(q)
    sent = engine.clock.now_ms()
    engine.clock.advance(2)
    ((msg, _),) = engine.receive(q, visibility_timeout=1)
    first = engine.clock.now_ms()
    engine.clock.advance(3)
    engine.receive(q)
    assert msg.sent_ms == sent
    assert msg.first_receive_ms == first
    assert msg.receive_count == 2
