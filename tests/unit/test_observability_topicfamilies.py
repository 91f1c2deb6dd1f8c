"""The SNS families of ``GET /metrics`` (sqsemu/observability/topicfamilies.py): the same text as prometheus-client
writes for the same samples, in every format it offers, written in slices without writing a topic twice."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from sqsemu.config import Config
from sqsemu.observability import queuefamilies
from sqsemu.observability.metrics import Metrics
from sqsemu.observability.topicfamilies import TOPIC_FAMILIES, TopicFamilyWriter
from sqsemu.sns.api import SNS
from sqsemu.sns.model import Topic
from tests.unit.engine_helpers import Engine
from tests.unit.test_observability_queuefamilies import ACCEPTS

COUNTS = ("published", "delivered", "filtered", "failed", "dead_lettered")


class Reference:
    """The SNS families as prometheus-client's metric families, from the same state: the writer's oracle."""

    def __init__(self, sns: SNS) -> None:
        self.sns = sns

    def collect(self) -> Iterable[Any]:
        topics = list(self.sns.topics.by_arn.values())
        yield GaugeMetricFamily(TOPIC_FAMILIES[0].name, TOPIC_FAMILIES[0].help, value=len(topics))
        family = TOPIC_FAMILIES[1]
        subscriptions = GaugeMetricFamily(family.name, family.help, labels=("account", "region", "topic", "state"))
        for topic in topics:
            pending = sum(1 for sub in topic.subscriptions.values() if sub.pending)
            labels = [topic.account, topic.region, topic.name]
            subscriptions.add_metric([*labels, "confirmed"], len(topic.subscriptions) - pending)
            subscriptions.add_metric([*labels, "pending"], pending)
        yield subscriptions
        for family, count in zip(TOPIC_FAMILIES[2:], COUNTS, strict=True):
            counter = CounterMetricFamily(family.name, family.help, labels=("account", "region", "topic"))
            for topic in topics:
                counts = self.sns.fanout.counters.get(topic.arn)
                counter.add_metric([topic.account, topic.region, topic.name], getattr(counts, count, 0))
            yield counter


class _Nothing:
    def collect(self) -> Iterable[Any]:
        return ()


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = Engine()
    yield e
    e.close()


def topic(sns: SNS, name: str, account: str = "000000000000", region: str = "us-east-1", **attributes: str) -> Topic:
    return sns.topics.create_topic(account, region, name, attributes, None, None)


def busy_sns(engine: Engine) -> SNS:
    """Topics of two accounts and regions (one region needing escaping), standard and FIFO, with confirmed and
    pending subscriptions and counts past a million."""
    sns = SNS(engine.broker, engine.clock)
    queue = engine.queue("q")
    orders = topic(sns, "orders")
    topic(sns, "jobs.fifo", FifoTopic="true")
    elsewhere = topic(sns, "elsewhere", "111111111111", 'eu-"odd\\region\n-1')
    for endpoint in ("a@example.com", "b@example.com"):
        sub, _ = sns.topics.subscribe(orders, "email", endpoint, None, "000000000000", "arn:aws:iam::000000000000:root")
        sns.topics.mark_pending(sub)
    sns.topics.subscribe(orders, "sqs", queue.arn, None, "000000000000", "arn:aws:iam::000000000000:root")
    sns.topics.subscribe(elsewhere, "sms", "+15555550100", None, "111111111111", "arn:aws:iam::111111111111:root")
    counts = sns.fanout.counts(orders)
    counts.published, counts.delivered, counts.filtered, counts.failed, counts.dead_lettered = 12_345_678, 9, 3, 2, 1
    sns.fanout.counts(elsewhere).published = 4
    return sns


@pytest.mark.parametrize("accept", ACCEPTS)
def test_the_sns_families_are_what_prometheus_client_writes_for_the_same_samples(
    engine: Engine, accept: str | None
) -> None:
    sns = busy_sns(engine)
    encoder, content_type = choose_encoder(accept or "")
    trailer = encoder(_Nothing())
    written = b"".join(TopicFamilyWriter(sns).write(encoder, content_type))
    assert written + trailer == encoder(Reference(sns))
    metrics = Metrics(Config(clock="manual"), engine.broker)
    metrics.topic_writer = TopicFamilyWriter(sns)
    whole, _ = metrics.render(accept)
    assert written in whole  # after the per-queue families, before the server's


def test_a_scrape_of_topics_lets_the_loop_run_between_slices_and_writes_each_topic_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no time allowed per slice, every look at the clock ends a slice: a topic deleted before the scrape
    reached it is left out, one created meanwhile waits for the next scrape."""
    sns = SNS(engine.broker, engine.clock)
    for n in range(100):
        topic(sns, f"t{n:03d}")
    monkeypatch.setattr(queuefamilies, "SLICE_SECONDS", 0.0)
    writer = TopicFamilyWriter(sns)
    chunks = writer.write(*choose_encoder(""))
    assert next(chunks) == b""  # the topics are being read: nothing written yet
    sns.topics.delete_topic("arn:aws:sns:us-east-1:000000000000:t099", "us-east-1")
    topic(sns, "t100")
    rest = list(chunks)
    assert len([chunk for chunk in rest if chunk]) > len(TOPIC_FAMILIES)  # several slices per family
    samples = [
        (sample.name, sample.labels.get("topic"), sample.value)
        for family in text_string_to_metric_families(b"".join(rest).decode())
        for sample in family.samples
    ]
    published = [name for sample, name, _ in samples if sample == "sqsemu_sns_messages_published_total"]
    assert published == [f"t{n:03d}" for n in range(99)]
    assert ("sqsemu_sns_topics", None, 99.0) in samples
    assert b'topic="t100"' in b"".join(writer.write(*choose_encoder("")))
