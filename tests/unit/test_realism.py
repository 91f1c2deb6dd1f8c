"""Realism mode, engine level: the spec parser and each seeded decision, on a manual clock (docs/realism.md).

Rates are checked against binomial bounds (4 standard deviations); the runs are seeded, so they are deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from sqsemu.engine.errors import InvalidParameterValue
from sqsemu.engine.message import Message
from sqsemu.engine.queue import Queue
from sqsemu.engine.realism import (
    REALISM_TAG,
    RealismSpec,
    RealismSpecError,
    parse_spec,
    receipt_serial,
)
from tests.unit.engine_helpers import NS, Engine


def within(count: int, trials: int, p: float) -> bool:
    """``count`` successes of ``trials`` is within 4 standard deviations of ``p``."""
    sd = math.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= 4 * sd + 1


@pytest.fixture
def engine() -> Iterator[Engine]:
    eng = Engine()
    yield eng
    eng.close()


def realistic(engine: Engine, spec: str, name: str = "q", seed: int = 7, **attributes: str) -> Queue:
    engine.broker.set_realism(spec, seed)
    return engine.queue(name, **attributes)


# --- the spec ------------------------------------------------------------------------------------------------------


def test_spec_parses_every_effect_and_prints_canonically() -> None:
    spec = parse_spec(" reorder=0.2, duplicates=0.1,reorder_window=4  attribute_delay=1.5 lost_answers=1 ")
    assert spec == RealismSpec(duplicates=0.1, reorder=0.2, lost_answers=1.0, reorder_window=4, attribute_delay=1.5)
    assert spec.text() == "duplicates=0.1,reorder=0.2,lost_answers=1,reorder_window=4,attribute_delay=1.5"
    assert parse_spec(spec.text()) == parse_spec(spec.text(" ")) == spec
    assert spec.text(" ") == "duplicates=0.1 reorder=0.2 lost_answers=1 reorder_window=4 attribute_delay=1.5"


@pytest.mark.parametrize("text", ["", "off", " OFF ", "duplicates=0"])
def test_spec_off(text: str) -> None:
    assert not parse_spec(text).active
    assert parse_spec(text).text() == "off"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("duplicate=0.1", "unknown effect 'duplicate'"),
        ("duplicates", "is not EFFECT=VALUE"),
        ("duplicates=1.5", "duplicates is a probability from 0 to 1"),
        ("reorder=-0.1", "reorder is a probability from 0 to 1"),
        ("duplicates=nan", "duplicates must be a number"),
        ("duplicates=lots", "duplicates must be a number"),
        ("reorder_window=1", "reorder_window is a number of messages from 2 to 1000"),
        ("reorder_window=2.5", "reorder_window is a number of messages from 2 to 1000"),
        ("attribute_delay=61", "attribute_delay is seconds from 0 to 60"),
        ("duplicates=0.1,,", "is not EFFECT=VALUE"),
        ("duplicates = 0.1", "is not EFFECT=VALUE"),
    ],
)
def test_bad_specs_say_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(RealismSpecError, match=says.replace("(", r"\(")):
        parse_spec(text)


def test_fifo_keeps_only_the_effects_that_do_not_break_it() -> None:
    spec = parse_spec("duplicates=1,reorder=1,short_poll_sampling=1,lost_answers=0.5,attribute_delay=2")
    assert spec.for_fifo() == RealismSpec(lost_answers=0.5, attribute_delay=2)


def test_receipt_serial_reads_the_handles_the_queue_issues(engine: Engine) -> None:
    queue = engine.queue()
    engine.send(queue)
    message, handle = engine.receive(queue)[0]
    assert receipt_serial(handle) == message.receipt_serial == 1
    assert receipt_serial("not base64!") == -1


# --- off costs nothing ---------------------------------------------------------------------------------------------


def test_off_by_default_installs_nothing(engine: Engine) -> None:
    queue = engine.queue()
    assert engine.broker.realism is None
    assert queue.realism is None


# --- duplicates ----------------------------------------------------------------------------------------------------


def test_a_marked_delivery_survives_its_delete_once(engine: Engine) -> None:
    queue = realistic(engine, "duplicates=1")
    engine.send(queue, "order-1")
    ((message, first),) = engine.receive(queue)
    engine.broker.delete_message(queue, first)
    assert engine.counts(queue) == (1, 0, 0)  # the copy is visible, and counted
    engine.broker.delete_message(queue, first)  # a retry with the deleted delivery's handle: the copy stays
    ((again, second),) = engine.receive(queue)
    assert again.body == "order-1" and second != first
    assert again.receive_count == 2  # ApproximateReceiveCount counts both deliveries
    assert "duplicate" in queue.realism.labels(again) if queue.realism else False
    engine.broker.delete_message(queue, second)
    assert engine.counts(queue) == (0, 0, 0)
    assert engine.receive(queue) == []  # one copy, never a second one
    assert queue.realism is not None and queue.realism.injected.duplicates == 1


def test_duplicates_happen_at_their_rate(engine: Engine) -> None:
    queue = realistic(engine, "duplicates=0.2")
    n = 2000
    for i in range(n):
        engine.send(queue, str(i))
    seen: dict[str, int] = {}
    while True:
        got = engine.receive(queue, max_number_of_messages=10)
        if not got:
            break
        for message, handle in got:
            seen[message.body] = seen.get(message.body, 0) + 1
            engine.broker.delete_message(queue, handle)
    assert len(seen) == n
    twice = sum(1 for count in seen.values() if count == 2)
    assert max(seen.values()) == 2
    assert within(twice, n, 0.2), twice


def test_purge_and_delete_queue_leave_no_copy(engine: Engine) -> None:
    queue = realistic(engine, "duplicates=1")
    engine.send(queue)
    ((_, handle),) = engine.receive(queue)
    engine.broker.purge_queue(queue)
    engine.broker.delete_message(queue, handle)  # the message is gone: nothing comes back
    assert engine.counts(queue) == (0, 0, 0) and engine.receive(queue) == []
    engine.send(queue)
    ((_, handle),) = engine.receive(queue)
    engine.broker.delete_message(queue, handle)  # a copy is visible now
    engine.broker.purge_queue(queue)
    assert engine.receive(queue) == []


def test_a_copy_expires_with_the_retention_period(engine: Engine) -> None:
    queue = realistic(engine, "duplicates=1", MessageRetentionPeriod="60")
    engine.send(queue)
    ((_, handle),) = engine.receive(queue)
    engine.clock.advance(30)
    engine.broker.delete_message(queue, handle)
    assert engine.counts(queue) == (1, 0, 0)
    engine.clock.advance(30)
    assert engine.counts(queue) == (0, 0, 0)


def test_a_copy_counts_towards_max_receive_count(engine: Engine) -> None:
    engine.broker.set_realism("duplicates=1", 7)
    dlq = engine.queue("dlq")
    arn = dlq.arn
    queue = engine.queue("src", RedrivePolicy=f'{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"1"}}')
    engine.send(queue, "once")
    ((_, handle),) = engine.receive(queue)
    engine.broker.delete_message(queue, handle)
    assert engine.receive(queue) == []  # the copy's receive would be its second: it is dead-lettered
    ((moved, _),) = engine.receive(dlq)
    assert moved.body == "once" and moved.receive_count == 2


# --- reorder -------------------------------------------------------------------------------------------------------


def test_reorder_takes_picks_out_of_order_at_its_rate_within_the_window(engine: Engine) -> None:
    queue = realistic(engine, "reorder=0.3,reorder_window=4")
    n = 1500
    for i in range(n):
        engine.send(queue, str(i))
    remaining = list(range(n))
    out_of_order = 0
    while remaining:
        ((message, handle),) = engine.receive(queue)
        position = remaining.index(int(message.body))
        assert position < 4  # never further than the window
        out_of_order += position > 0
        remaining.pop(position)
        engine.broker.delete_message(queue, handle)
    assert within(out_of_order, n, 0.3), out_of_order


# --- short-poll sampling -------------------------------------------------------------------------------------------


def test_short_polls_miss_a_waiting_message_at_the_rate_long_polls_never(engine: Engine) -> None:
    queue = realistic(engine, "short_poll_sampling=0.4")
    engine.send(queue)
    n = 1000
    empty = sum(1 for _ in range(n) if not engine.receive(queue, visibility_timeout=0))
    assert within(empty, n, 0.4), empty
    for _ in range(50):
        assert len(engine.receive(queue, visibility_timeout=0, wait_time_seconds=1)) == 1


# --- attribute delay and lagging counts ------------------------------------------------------------------------------


def test_set_queue_attributes_applies_after_the_delay(engine: Engine) -> None:
    queue = realistic(engine, "attribute_delay=5")
    engine.broker.set_queue_attributes(queue, {"VisibilityTimeout": "90"})
    assert engine.broker.get_queue_attributes(queue, ["VisibilityTimeout"]) == {"VisibilityTimeout": "30"}
    engine.clock.advance(4.999)
    assert queue.visibility_timeout == 30
    engine.clock.advance(0.001)
    assert engine.broker.get_queue_attributes(queue, ["VisibilityTimeout"]) == {"VisibilityTimeout": "90"}


def test_approximate_counts_lag_by_at_most_the_delay(engine: Engine) -> None:
    queue = realistic(engine, "attribute_delay=10")
    assert engine.counts(queue) == (0, 0, 0)
    engine.send(queue)
    assert engine.counts(queue) == (0, 0, 0)  # the snapshot of 0 s ago
    engine.clock.advance(10)
    assert engine.counts(queue) == (1, 0, 0)


# --- lost answers --------------------------------------------------------------------------------------------------


def test_lost_answers_at_their_rate_and_only_for_queues_that_have_them(engine: Engine) -> None:
    realistic(engine, "lost_answers=0.25")
    realism = engine.broker.realism
    assert realism is not None and realism.lossy
    n = 1000
    lost = sum(realism.lose_answer(NS, "q") for _ in range(n))
    assert within(lost, n, 0.25), lost
    assert not realism.lose_answer(NS, "missing") and not realism.lose_answer(NS, None)


# --- FIFO, tags, reproducibility -------------------------------------------------------------------------------------


def test_fifo_queues_keep_order_and_exactly_once(engine: Engine) -> None:
    queue = realistic(engine, "duplicates=1,reorder=1,short_poll_sampling=0.9", "q.fifo", FifoQueue="true")
    for i in range(30):
        engine.send(queue, str(i), group_id="g", deduplication_id=str(i))
    got: list[str] = []
    for _ in range(30):
        received = engine.receive(queue)
        assert len(received) == 1  # no short poll comes back empty
        message, handle = received[0]
        got.append(message.body)
        engine.broker.delete_message(queue, handle)
    assert got == [str(i) for i in range(30)]
    assert engine.receive(queue) == []


def test_a_tag_overrides_the_server_spec_and_bad_tags_are_refused(engine: Engine) -> None:
    engine.broker.set_realism("duplicates=1", 0)
    own = engine.broker.create_queue(NS, "own", {}, {REALISM_TAG: "reorder=0.5"})
    off = engine.broker.create_queue(NS, "off", {}, {REALISM_TAG: "off"})
    assert own.realism is not None and own.realism.spec == RealismSpec(reorder=0.5)
    assert off.realism is None
    with pytest.raises(InvalidParameterValue, match="Tag sqsemu:realism is invalid: realism: unknown effect"):
        engine.broker.create_queue(NS, "bad", {}, {REALISM_TAG: "dupes=1"})
    with pytest.raises(InvalidParameterValue, match="duplicates is a probability"):
        engine.broker.tag_queue(own, {REALISM_TAG: "duplicates=2"})
    engine.broker.untag_queue(own, [REALISM_TAG])
    assert own.realism is not None and own.realism.spec == RealismSpec(duplicates=1)


def run_script(seed: int, order: tuple[str, ...]) -> list[tuple[str, int, int, list[str]]]:
    """A fixed call sequence on a fresh engine; returns what each receive of queue ``a`` delivered."""
    eng = Engine()
    try:
        eng.broker.set_realism("duplicates=0.3,reorder=0.3,short_poll_sampling=0.2", seed)
        queues = {name: eng.queue(name) for name in order}
        a = queues["a"]
        for i in range(40):
            eng.send(a, f"m{i}")
            eng.send(queues["b"], f"other{i}")
            eng.receive(queues["b"])
        log: list[tuple[str, int, int, list[str]]] = []
        for _ in range(80):
            for message, handle in eng.receive(a, max_number_of_messages=3):
                assert a.realism is not None
                log.append((message.body, receipt_serial(handle), message.receive_count, a.realism.labels(message)))
                eng.broker.delete_message(a, handle)
            eng.clock.advance(1)
        return log
    finally:
        eng.close()


def test_same_seed_same_run_whatever_the_creation_order() -> None:
    first = run_script(7, ("a", "b"))
    assert first == run_script(7, ("b", "a"))
    assert any("duplicate" in labels for *_, labels in first)
    assert run_script(8, ("a", "b")) != first


def test_peek_labels_show_injected_deliveries(engine: Engine) -> None:
    queue = realistic(engine, "duplicates=1")
    engine.send(queue)
    ((message, handle),) = engine.receive(queue)
    assert queue.realism is not None
    assert queue.realism.labels(message) == ["duplicate_pending"]
    engine.broker.delete_message(queue, handle)
    assert queue.realism.labels(message) == ["duplicate"]
    assert isinstance(message, Message)


# --- settings: Config, the configuration file, declarations, the command line ---------------------------------------


def test_config_checks_the_spec_and_the_seed() -> None:
    from sqsemu.config import Config

    assert Config(realism="duplicates=0.1", realism_seed=7).realism == "duplicates=0.1"
    with pytest.raises(ValueError, match="unknown effect 'teleport'"):
        Config(realism="teleport=1")
    with pytest.raises(ValueError, match="realism_seed must be an integer from 0 to 9007199254740991"):
        Config(realism_seed=-1)


def test_config_file_realism_for_the_server_and_a_queue() -> None:
    from sqsemu.declare import ConfigFileError, parse_document

    loaded = parse_document(
        {
            "server": {"realism": "reorder=0.2", "realism_seed": 3},
            "queues": [{"name": "orders", "realism": "duplicates=0.1,lost_answers=0.01", "tags": {"team": "shop"}}],
        },
        "test.toml",
    )
    assert loaded.server == {"realism": "reorder=0.2", "realism_seed": 3}
    assert loaded.queues[0].tags == (("team", "shop"), (REALISM_TAG, "duplicates=0.1 lost_answers=0.01"))
    with pytest.raises(ConfigFileError, match=r"\[\[queues\]\] #1 \('orders'\): realism: unknown effect 'dupes'"):
        parse_document({"queues": [{"name": "orders", "realism": "dupes=1"}]}, "test.toml")
    with pytest.raises(ConfigFileError, match=r"\[server\] realism: realism: duplicates is a probability"):
        parse_document({"server": {"realism": "duplicates=3"}}, "test.toml")


def test_declared_queue_realism_and_server_setting_apply_at_build() -> None:
    from sqsemu.config import Config, QueueDeclaration
    from sqsemu.server import build

    config = Config(
        clock="manual",
        realism="duplicates=0.5",
        realism_seed=9,
        queues=(
            QueueDeclaration("plain"),
            QueueDeclaration("own", tags=((REALISM_TAG, "reorder=0.5"),)),
            QueueDeclaration("exact", tags=((REALISM_TAG, "off"),)),
        ),
    )
    _, broker, _ = build(config)
    plain, own, exact = (broker.get_queue(NS, name) for name in ("plain", "own", "exact"))
    assert plain.realism is not None and plain.realism.spec == RealismSpec(duplicates=0.5)
    assert own.realism is not None and own.realism.spec == RealismSpec(reorder=0.5) and own.realism.own
    assert exact.realism is None
    assert broker.realism is not None and broker.realism.seed == 9


def test_the_cli_refuses_a_bad_spec_like_any_bad_option_value() -> None:
    from click.testing import CliRunner

    from sqsemu import cli

    result = CliRunner().invoke(cli.main, ["--realism", "duplicates=0.1,teleport=1"], env={"SQSEMU_REALISM": None})
    assert result.exit_code == 2
    assert "Invalid value for '--realism'" in result.output and "unknown effect 'teleport'" in result.output


def test_a_queues_own_spec_survives_a_restart_in_durable_mode(tmp_path: Path) -> None:
    from sqsemu.clock import ManualClock
    from sqsemu.engine.broker import Broker
    from sqsemu.persistence.sqlite import SQLiteStore

    store = SQLiteStore.open(str(tmp_path))
    broker = Broker(ManualClock())
    store.restore(broker)
    store.attach(broker)
    queue = broker.create_queue(NS, "orders", {}, {})
    broker.tag_queue(queue, {REALISM_TAG: "duplicates=0.5"})
    store.close()
    store = SQLiteStore.open(str(tmp_path))
    again = Broker(ManualClock())
    store.restore(again)
    restored = again.get_queue(NS, "orders")
    assert restored.realism is not None and restored.realism.spec == RealismSpec(duplicates=0.5)
    store.close()
