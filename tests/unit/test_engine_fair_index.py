"""The fair queue's noisy-tenant decision without walking the tenants in flight (issue 28): on random workloads the
indexed decision (``FairQueue._noisy_now``) equals the rule computed from scratch over the queue's messages
(docs/behaviour.md 4.10)."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from sqsemu.engine.fair import CONCURRENCY_MIN, QUIET_AFTER_MS, SHARE_PERCENT
from sqsemu.engine.message import MessageState, ReceiptEntry
from sqsemu.engine.queue import Queue
from tests.unit.engine_helpers import Engine

IN_FLIGHT, VISIBLE, DELAYED = MessageState.IN_FLIGHT, MessageState.VISIBLE, MessageState.DELAYED


def _reference(queue: Queue, now_ms: int) -> set[str]:
    """The rule, from scratch: every tenant in flight looked at."""
    fair = queue.fair
    assert fair is not None
    in_flight = sum(1 for m in queue.messages.values() if m.state is IN_FLIGHT)
    total_time = sum(now_ms - m.received_ms for m in queue.messages.values() if m.state is IN_FLIGHT)
    mine: dict[str, int] = defaultdict(int)
    time_of: dict[str, int] = defaultdict(int)
    backlog: dict[str, int] = defaultdict(int)
    for message in queue.messages.values():
        if message.group_id is None:
            continue
        if message.state is IN_FLIGHT:
            mine[message.group_id] += 1
            time_of[message.group_id] += now_ms - message.received_ms
        elif message.state in (VISIBLE, DELAYED):
            backlog[message.group_id] += 1
    noisy = set()
    for group_id, count in mine.items():
        tenant = fair.tenants[group_id]
        if not backlog[group_id] or now_ms - tenant.last_send_ms >= QUIET_AFTER_MS:
            continue
        if count >= CONCURRENCY_MIN and count * 100 > in_flight * SHARE_PERCENT:
            noisy.add(group_id)
        elif total_time > 0 and time_of[group_id] * 100 > total_time * SHARE_PERCENT:
            noisy.add(group_id)
    return noisy


@pytest.mark.parametrize("seed", range(8))
def test_the_indexed_decision_equals_the_rule(seed: int) -> None:
    rng = random.Random(seed)
    engine = Engine()
    try:
        queue = engine.queue(f"fair{seed}", VisibilityTimeout="60")
        handles: list[str] = []
        tenants = [f"t{n}" for n in range(rng.choice([3, 12, 60]))]
        heavy = tenants[0]
        for _ in range(400):
            action = rng.random()
            if action < 0.45:
                group = heavy if rng.random() < 0.4 else rng.choice(tenants)
                engine.send(queue, "x", group_id=group)
            elif action < 0.75:
                got = engine.receive(queue, max_number_of_messages=rng.randint(1, 10))
                handles.extend(h for _, h in got)
            elif action < 0.9 and handles:
                rng.shuffle(handles)
                take, handles[:] = handles[:5], handles[5:]
                engine.broker.delete_message_batch(queue, [ReceiptEntry(str(n), h) for n, h in enumerate(take)])
            else:
                engine.clock.advance(rng.choice([1, 5, 30, 61]))
            fair = queue.fair
            if fair is not None:
                now = engine.clock.now_ms()
                assert {t.group_id for t in fair._noisy_now(now)} == _reference(queue, now)
    finally:
        engine.close()
