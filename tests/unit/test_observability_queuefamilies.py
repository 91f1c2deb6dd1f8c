"""The per-queue families of ``GET /metrics`` written in slices (sqsemu/observability/queuefamilies.py; issue 47,
finding 7): the same text as prometheus-client writes for the same samples, in every format it offers, and a
scrape that gives the event loop back between slices without writing a queue twice."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

import pytest
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.utils import floatToGoString

from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.message import MessageState, SendEntry
from sqsemu.observability import queuefamilies
from sqsemu.observability.metrics import Metrics
from sqsemu.observability.queuecounters import QueueCounts
from sqsemu.observability.queuefamilies import QUEUE_FAMILIES
from tests.unit.engine_helpers import NS, Engine

go_float = cast(Callable[[float], str], floatToGoString)

ACCEPTS = (
    None,
    "text/plain; version=1.0.0; escaping=allow-utf-8",
    "text/plain; version=1.0.0; escaping=values",
    "application/openmetrics-text; version=1.0.0",
    "application/openmetrics-text; version=1.0.0; escaping=dots",
    "application/openmetrics-text; version=1.0.0; escaping=values",
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=0.0.4;q=0.3",
)


class Reference:
    """The per-queue families as prometheus-client's metric families, from the same reads of the engine (what the
    server wrote before issue 47): the oracle the sliced writer is held to."""

    def __init__(self, broker: Broker, metrics: Metrics) -> None:
        self.broker = broker
        self.metrics = metrics

    def collect(self) -> Iterable[Any]:
        labels = ("account", "region", "queue")
        made = {
            family.name: {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily}.get(
                family.kind, HistogramMetricFamily
            )(family.name, family.help, labels=labels)
            for family in QUEUE_FAMILIES
        }
        now_ms = self.broker.clock.now_ms()
        for queue in self.broker.all_queues():
            values = [queue.namespace.account_id, queue.namespace.region, queue.name]
            counts = queue.counts
            oldest = queue.oldest_enqueued_ms()
            age = 0.0 if oldest is None else max(0, now_ms - oldest) / 1000
            counted = self.metrics.queues.get(queue) or QueueCounts()
            per = {
                "sqs_approximate_number_of_messages_visible": counts[MessageState.VISIBLE],
                "sqs_approximate_number_of_messages_not_visible": counts[MessageState.IN_FLIGHT],
                "sqs_approximate_number_of_messages_delayed": counts[MessageState.DELAYED],
                "sqs_approximate_age_of_oldest_message_seconds": age,
                "sqs_number_of_messages_sent": counted.sent,
                "sqs_number_of_messages_received": counted.received,
                "sqs_number_of_messages_deleted": counted.deleted,
                "sqs_number_of_empty_receives": counted.empty_receives,
                "sqs_number_of_messages_dead_lettered": counted.dead_lettered,
                "sqs_number_of_messages_expired": counted.expired,
            }
            for name, number in per.items():
                made[name].add_metric(values, number)
            buckets = [(go_float(bound), float(count)) for bound, count in counted.sizes.cumulative()]
            made["sqs_sent_message_size_bytes"].add_metric(values, buckets, counted.sizes.sum)
            if queue.fifo:
                continue
            snap = queue.fair_snapshot(now_ms)
            if snap is None:
                fair = (0, counts[MessageState.VISIBLE], counts[MessageState.IN_FLIGHT], counts[MessageState.DELAYED])
                oldest_quiet = oldest
            else:
                fair = (len(snap.noisy), snap.visible_quiet, snap.in_flight_quiet, snap.delayed_quiet)
                oldest_quiet = queue.oldest_quiet_enqueued_ms(snap.noisy)
            for family, number in zip(QUEUE_FAMILIES[-5:-1], fair, strict=True):
                made[family.name].add_metric(values, number)
            made[QUEUE_FAMILIES[-1].name].add_metric(
                values, 0.0 if oldest_quiet is None else max(0, now_ms - oldest_quiet) / 1000
            )
        return [made[family.name] for family in QUEUE_FAMILIES]


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = Engine()
    yield e
    e.close()


def busy_server(engine: Engine) -> Metrics:
    """Queues of two accounts and three regions (one whose name needs escaping), standard, FIFO and fair, with
    messages in every state, counters past a million, fractional ages."""
    metrics = Metrics(Config(clock="manual"), engine.broker)
    broker = engine.broker
    dlq = engine.queue("dlq")
    work = engine.queue("work", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}))
    for body in ("a" * 10, "b" * 100, "c" * 2000, "d" * 70_000):
        engine.send(work, body)
    engine.receive(work, max_number_of_messages=2, visibility_timeout=30)
    engine.receive(dlq)
    engine.clock.advance(0.25)
    engine.send(engine.queue("later", DelaySeconds="900"), "x")
    fair = engine.queue("fair")
    for group, count in (("noisy", 100), ("quiet", 5)):
        for n in range(count):
            engine.send(fair, f"{group}-{n}", group_id=group)
    for _ in range(4):
        engine.receive(fair, max_number_of_messages=10, visibility_timeout=300)
    fifo = engine.queue("jobs.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    engine.send(fifo, "f", group_id="g")
    other = Namespace("111111111111", 'eu-"odd\\region\n-1')
    broker.create_queue(other, "elsewhere", {}, {})
    broker.send_message(broker.create_queue(Namespace("111111111111", "ap-south-1"), "b", {}, {}), SendEntry("y"), "1")
    metrics.queues._counts(work).sent = 12_345_678
    metrics.queues._counts(work).sizes.sum = 1.5e17
    engine.clock.advance(1.337)
    assert fair.fair_snapshot(engine.clock.now_ms()).noisy == ["noisy"]  # type: ignore[union-attr]
    return metrics


@pytest.mark.parametrize("accept", ACCEPTS)
def test_per_queue_families_are_what_prometheus_client_writes_for_the_same_samples(
    engine: Engine, accept: str | None
) -> None:
    metrics = busy_server(engine)
    encoder, content_type = choose_encoder(accept or "")
    expected = encoder(Reference(engine.broker, metrics))
    trailer = encoder(_Nothing())  # OpenMetrics' "# EOF"
    written = b"".join(metrics.writer.write(encoder, content_type))
    assert written + trailer == expected
    whole, served_type = metrics.render(accept)
    assert served_type == content_type
    assert whole.startswith(written)
    assert whole.endswith(trailer or b"\n")


class _Nothing:
    def collect(self) -> Iterable[Any]:
        return ()


def test_a_scrape_lets_the_loop_run_between_slices_and_writes_each_queue_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no time allowed per slice, every look at the clock ends a slice: a queue deleted and created again
    meanwhile, and one created meanwhile, change what has not been read yet, never what has been."""
    metrics = Metrics(Config(), engine.broker)
    for n in range(100):
        engine.queue(f"q{n:03d}")
    monkeypatch.setattr(queuefamilies, "SLICE_SECONDS", 0.0)
    chunks, _ = metrics.scrape(None)
    assert next(chunks) == b""  # the queues are being put in order: nothing written yet
    last = engine.broker.get_queue(NS, "q099")
    engine.broker.delete_queue(last)
    again = engine.queue("q099")
    engine.send(again, "new")
    engine.queue("q100")  # after the scrape began: in the next one
    rest = list(chunks)
    assert len([chunk for chunk in rest if chunk]) > len(QUEUE_FAMILIES)  # several slices per family
    samples = [
        (sample.name, sample.labels.get("queue"), sample.value)
        for family in text_string_to_metric_families(b"".join(rest).decode())
        for sample in family.samples
    ]
    visible = [(queue, number) for name, queue, number in samples if name == QUEUE_FAMILIES[0].name]
    assert [queue for queue, _ in visible] == [f"q{n:03d}" for n in range(100)]
    assert visible[-1] == ("q099", 1.0)  # the queue of that name when the scrape reached it
    assert ("sqsemu_queues", None, 100.0) in samples
    assert "q100" in metrics.render()[0].decode()
