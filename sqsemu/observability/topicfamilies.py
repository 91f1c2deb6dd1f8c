"""The SNS families of ``GET /metrics`` (docs/sns.md, docs/observability.md), read when scraped from the topics and
the counts delivery keeps (:class:`sqsemu.sns.fanout.Fanout`'s ``counters``): nothing is kept for them on the
publish or delivery path beyond those plain integers (docs/architecture.md, principle 7).

Per topic (labels ``account``, ``region``, ``topic``: the topic's name):

=============================================  =======  ==========================================================
metric                                         type     meaning
=============================================  =======  ==========================================================
``sqsemu_sns_messages_published_total``        counter  messages published (Publish, PublishBatch entries; a FIFO
                                                        duplicate within the deduplication interval not counted)
``sqsemu_sns_deliveries_total``                counter  deliveries made: into a queue, handed to an HTTP/S or
                                                        Lambda pusher, or recorded (email, sms...)
``sqsemu_sns_filtered_total``                  counter  deliveries a subscription's filter policy refused
``sqsemu_sns_delivery_failures_total``         counter  deliveries that failed (dead-lettered or dropped)
``sqsemu_sns_dead_lettered_total``             counter  failed deliveries moved to the subscription's dead-letter
                                                        queue
``sqsemu_sns_subscriptions``                   gauge    subscriptions, label ``state``: ``confirmed`` or ``pending``
=============================================  =======  ==========================================================

and ``sqsemu_sns_topics`` (gauge): topics of every account and region. A deleted topic's series go with it; counts
start at zero when the server starts (durable mode too). The calls of the SNS API are counted with the SQS calls'
(:mod:`~sqsemu.observability.metrics`, ``service="sns"``).

This module reads the SNS objects through the small protocols below: the observability layer does not import
``sqsemu.sns`` (docs/architecture.md, "Layers"); the app registers the collector with the server's SNS.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

__all__ = ["COUNTER_FAMILIES", "TopicCollector"]


class _Counts(Protocol):
    @property
    def published(self) -> int: ...
    @property
    def delivered(self) -> int: ...
    @property
    def filtered(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def dead_lettered(self) -> int: ...


class _Subscription(Protocol):
    @property
    def pending(self) -> bool: ...


class _Topic(Protocol):
    @property
    def arn(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def account(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def subscriptions(self) -> Mapping[str, _Subscription]: ...


class _Topics(Protocol):
    @property
    def by_arn(self) -> Mapping[str, _Topic]: ...


class _Fanout(Protocol):
    @property
    def counters(self) -> Mapping[str, _Counts]: ...


class SNSState(Protocol):
    """What the collector reads: ``topics.by_arn`` (ARN → topic) and ``fanout.counters`` (ARN → counts), as
    :class:`sqsemu.sns.api.SNS` has them."""

    @property
    def topics(self) -> _Topics: ...
    @property
    def fanout(self) -> _Fanout: ...


COUNTER_FAMILIES = (
    ("sqsemu_sns_messages_published", "published", "Messages published to the topic (Publish, PublishBatch entries)."),
    (
        "sqsemu_sns_deliveries",
        "delivered",
        "Deliveries made to the topic's subscriptions (into a queue, to an HTTP/S endpoint or function, or recorded).",
    ),
    ("sqsemu_sns_filtered", "filtered", "Deliveries a subscription's filter policy refused (filtered out)."),
    ("sqsemu_sns_delivery_failures", "failed", "Deliveries that failed (moved to a dead-letter queue, or dropped)."),
    ("sqsemu_sns_dead_lettered", "dead_lettered", "Failed deliveries moved to the subscription's dead-letter queue."),
)
"""The per-topic counters: (family name without ``_total``, the count's attribute, help)."""

_LABELS = ("account", "region", "topic")


class TopicCollector:
    """A prometheus-client collector of the SNS families of one server's ``sns`` (see the module docstring)."""

    def __init__(self, sns: SNSState) -> None:
        self.sns = sns

    def collect(self) -> Iterator[Any]:
        """The families, read now; the topics in (account, region, name) order."""
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily

        topics = sorted(self.sns.topics.by_arn.values(), key=lambda t: (t.account, t.region, t.name))
        counters = self.sns.fanout.counters
        yield GaugeMetricFamily("sqsemu_sns_topics", "SNS topics, of every account and region.", value=len(topics))
        subscriptions = GaugeMetricFamily(
            "sqsemu_sns_subscriptions",
            "Subscriptions of the topic, by state (confirmed, or pending confirmation).",
            labels=(*_LABELS, "state"),
        )
        for topic in topics:
            pending = sum(1 for sub in topic.subscriptions.values() if sub.pending)
            labels = [topic.account, topic.region, topic.name]
            subscriptions.add_metric([*labels, "confirmed"], len(topic.subscriptions) - pending)
            subscriptions.add_metric([*labels, "pending"], pending)
        yield subscriptions
        for name, attribute, documentation in COUNTER_FAMILIES:
            family = CounterMetricFamily(name, documentation, labels=_LABELS)
            for topic in topics:
                counts = counters.get(topic.arn)
                family.add_metric([topic.account, topic.region, topic.name], getattr(counts, attribute, 0))
            yield family
