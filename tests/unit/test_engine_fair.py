"""Fair queues in the engine, on a manual clock (docs/behaviour.md 4.10; engine/fair.py): who is noisy, and the
order a receive takes messages in while someone is."""

from __future__ import annotations

from typing import Any

from sqsemu.engine.broker import Queue
from tests.unit.engine_helpers import Engine


def send_many(engine: Engine, q: Queue, group: str | None, count: int, prefix: str = "", **kwargs: Any) -> None:
    for i in range(count):
        engine.send(q, f"{prefix or group}-{i}", group_id=group, **kwargs)


def receive(engine: Engine, q: Queue, n: int = 10, vt: int = 300) -> list[Any]:
    return [m for m, _ in engine.receive(q, max_number_of_messages=n, visibility_timeout=vt)]


def bodies(messages: list[Any]) -> list[str]:
    return [m.body for m in messages]


def test_without_groups_a_standard_queue_has_no_fair_bookkeeping(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, None, 40, prefix="plain")
    receive(engine, q, 10)
    assert q.fair is None


def test_noisy_by_in_flight_share_and_count_lets_quiet_tenant_first(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "noisy", 100)
    send_many(engine, q, "quiet", 5)
    got = []
    for _ in range(3):
        got += receive(engine, q, 10)
    assert bodies(got) == [f"noisy-{i}" for i in range(30)]  # nobody noisy yet: send order
    after = receive(engine, q, 10)
    assert bodies(after) == [f"quiet-{i}" for i in range(5)] + [f"noisy-{i}" for i in range(30, 35)]
    snap = q.fair_snapshot(engine.clock.now_ms())
    assert snap is not None and snap.noisy == ["noisy"]


def test_29_in_flight_is_not_noisy(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "big", 50)
    send_many(engine, q, "small", 2)
    receive(engine, q, 10)
    receive(engine, q, 10)
    receive(engine, q, 9)
    assert bodies(receive(engine, q, 1)) == ["big-29"]  # 29 in flight: still quiet, send order holds


def test_noisy_by_processing_time(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "slow", 3)
    send_many(engine, q, "fast", 20)
    (slow0,) = receive(engine, q, 1)
    engine.clock.advance(100)  # the consumer spends 100 s on slow-0; fast messages are handled in no time
    for _ in range(5):
        (m,) = receive(engine, q, 1)
        assert m.body.startswith("slow") or m.body.startswith("fast")
        engine.broker.delete_message(q, q.receipt_handle(m))
    snap = q.fair_snapshot(engine.clock.now_ms())
    assert snap is not None and snap.noisy == ["slow"]
    assert slow0.body == "slow-0"


def test_processing_time_rule_orders_quiet_first(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "slow", 3)
    send_many(engine, q, "fast", 3)
    receive(engine, q, 1)  # slow-0 in flight
    engine.clock.advance(60)
    # slow holds all the processing time: slow-1 waits behind every fast message
    assert bodies(receive(engine, q, 10)) == ["fast-0", "fast-1", "fast-2", "slow-1", "slow-2"]


def test_several_noisy_tenants_fewest_in_flight_first(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "a", 45)
    send_many(engine, q, "b", 35)
    for _ in range(3):
        receive(engine, q, 10)  # a-0..a-29
    # a is noisy (30 in flight): b's messages come first
    assert bodies(receive(engine, q, 10) + receive(engine, q, 10) + receive(engine, q, 10)) == [
        f"b-{i}" for i in range(30)
    ]
    snap = q.fair_snapshot(engine.clock.now_ms())
    assert snap is not None and snap.noisy == ["a", "b"]
    # both noisy, no quiet message: the one with fewer in flight goes first (a tie: the older message)
    assert bodies(receive(engine, q, 6)) == ["a-30", "b-30", "a-31", "b-31", "a-32", "b-32"]


def test_messages_without_a_group_are_quiet_tenants(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "noisy", 40)
    receive(engine, q, 10)
    receive(engine, q, 10)
    receive(engine, q, 10)
    engine.send(q, "lonely")
    assert bodies(receive(engine, q, 2)) == ["lonely", "noisy-30"]


def test_recovery_when_backlog_is_gone(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "n", 31)
    for _ in range(3):
        receive(engine, q, 10)
    receive(engine, q, 1)  # all 31 in flight, no backlog
    snap = q.fair_snapshot(engine.clock.now_ms())
    assert snap is not None and snap.noisy == []


def test_recovery_after_five_quiet_minutes(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "n", 40)
    send_many(engine, q, "q", 1)
    for _ in range(3):
        receive(engine, q, 10, vt=43200)
    snap = q.fair_snapshot(engine.clock.now_ms())
    assert snap is not None and snap.noisy == ["n"]
    engine.clock.advance(299)
    assert q.fair_snapshot(engine.clock.now_ms()).noisy == ["n"]  # type: ignore[union-attr]
    engine.clock.advance(1)
    assert q.fair_snapshot(engine.clock.now_ms()).noisy == []  # type: ignore[union-attr]
    assert bodies(receive(engine, q, 2)) == ["n-30", "n-31"]  # back to send order


def test_dead_lettered_message_leaves_its_tenant(engine: Engine) -> None:
    dlq = engine.queue("dlq")
    q = engine.queue("src", RedrivePolicy='{"deadLetterTargetArn": "' + dlq.arn + '", "maxReceiveCount": 1}')
    send_many(engine, q, "t", 2)
    receive(engine, q, 2, vt=0)
    assert q.fair is not None and q.fair.tenants["t"].counts[1] == 2
    assert receive(engine, q, 2) == []  # both dead-lettered
    assert "t" not in q.fair.tenants
    assert dlq.fair is not None and dlq.fair.tenants["t"].counts[1] == 2


def test_purge_forgets_tenants(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "n", 40)
    for _ in range(3):
        receive(engine, q, 10)
    engine.broker.purge_queue(q)
    assert q.fair is not None and q.fair.tenants == {}
    assert q.fair_snapshot(engine.clock.now_ms()).noisy == []  # type: ignore[union-attr]


def test_fifo_queues_have_no_fair_bookkeeping(engine: Engine) -> None:
    q = engine.queue("f.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    send_many(engine, q, "g", 3)
    assert q.fair is None


def test_thirty_in_flight_but_at_most_ten_percent_is_not_noisy(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "a", 30)
    send_many(engine, q, None, 280, prefix="plain")
    send_many(engine, q, "a", 1, prefix="a-late")
    send_many(engine, q, "b", 1)
    for _ in range(31):
        receive(engine, q, 10)  # a-0..a-29 and 280 plain: a holds 30 of 310 in flight (9.7%)
    assert q.fair_snapshot(engine.clock.now_ms()).noisy == []  # type: ignore[union-attr]
    assert bodies(receive(engine, q, 1)) == ["a-late-0"]  # send order: a is not noisy


def test_realism_mode_keeps_the_fair_order(engine: Engine) -> None:
    engine.broker.set_realism("duplicates=0.5", 7)
    q = engine.queue()
    send_many(engine, q, "noisy", 40)
    send_many(engine, q, "quiet", 2)
    for _ in range(3):
        receive(engine, q, 10)
    assert q.realism is not None
    assert bodies(receive(engine, q, 4)) == ["quiet-0", "quiet-1", "noisy-30", "noisy-31"]


def test_messages_set_aside_while_noisy_take_their_place_again_once_quiet(engine: Engine) -> None:
    q = engine.queue()
    send_many(engine, q, "n", 40)
    send_many(engine, q, "q", 2)
    for _ in range(3):
        receive(engine, q, 10, vt=3600)
    assert bodies(receive(engine, q, 3, vt=3600)) == ["q-0", "q-1", "n-30"]  # n-31..n-39 set aside
    engine.clock.advance(300)  # n has sent nothing for 5 minutes: quiet
    engine.send(q, "q-2", group_id="q")
    assert bodies(receive(engine, q, 3)) == ["n-31", "n-32", "n-33"]  # send order again, q-2 is newer


def test_a_lone_tenant_is_served_in_send_order_noisy_or_not(engine: Engine) -> None:
    # noisy (processing time) and quiet in turn: its messages still come in send order
    q = engine.queue()
    send_many(engine, q, "big", 2000)
    got: list[str] = []
    for _ in range(60):
        messages = receive(engine, q, 10, vt=3600)
        got += bodies(messages)
        engine.clock.advance(1)
        if len(got) % 40 == 0:
            for m in messages:
                engine.broker.delete_message(q, q.receipt_handle(m))
    assert got == [f"big-{i}" for i in range(600)]
