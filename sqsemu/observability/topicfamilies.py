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

and ``sqsemu_sns_topics`` (gauge): topics of every account and region. The topics are written in the order they
were created. A deleted topic's series go with it; counts start at zero when the server starts (durable mode too).
The calls of the SNS API are counted with the SQS calls' (:mod:`~sqsemu.observability.metrics`,
``service="sns"``).

Written like the per-queue families (:mod:`~sqsemu.observability.queuefamilies`): in slices of at most
:data:`~sqsemu.observability.queuefamilies.SLICE_SECONDS` of the event loop's time, each topic's numbers read once
then each family written, as prometheus-client writes the same samples, byte for byte, in every format (a scrape of
10,000 topics built as prometheus-client objects held the loop half a second). A topic costs its 7 numbers and
lines per scrape; its label text is kept while it lives.

This module reads the SNS objects through the small protocols below: the observability layer does not import
``sqsemu.sns`` (docs/architecture.md, "Layers"); the app gives :class:`~sqsemu.observability.metrics.Metrics` the
writer of the server's SNS.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping
from typing import Protocol

from sqsemu.observability import queuefamilies
from sqsemu.observability.queuefamilies import Encoder, QueueFamily, Spelling, label_value, sample_value

__all__ = ["TOPIC_FAMILIES", "TopicFamilyWriter"]


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
    @property
    def errors(self) -> int: ...


class SNSState(Protocol):
    """What the collector reads: ``topics.by_arn`` (ARN → topic) and ``fanout.counters`` (ARN → counts), as
    :class:`sqsemu.sns.api.SNS` has them."""

    @property
    def topics(self) -> _Topics: ...
    @property
    def fanout(self) -> _Fanout: ...


TOPIC_FAMILIES = (
    QueueFamily("sqsemu_sns_topics", "gauge", "SNS topics, of every account and region."),
    QueueFamily(
        "sqsemu_sns_subscriptions",
        "gauge",
        "Subscriptions of the topic, by state (confirmed, or pending confirmation).",
    ),
    QueueFamily(
        "sqsemu_sns_messages_published", "counter", "Messages published to the topic (Publish, PublishBatch entries)."
    ),
    QueueFamily(
        "sqsemu_sns_deliveries",
        "counter",
        "Deliveries made to the topic's subscriptions (into a queue, to an HTTP/S endpoint or function, or recorded).",
    ),
    QueueFamily("sqsemu_sns_filtered", "counter", "Deliveries a subscription's filter policy refused (filtered out)."),
    QueueFamily(
        "sqsemu_sns_delivery_failures", "counter", "Deliveries that failed (moved to a dead-letter queue, or dropped)."
    ),
    QueueFamily(
        "sqsemu_sns_dead_lettered", "counter", "Failed deliveries moved to the subscription's dead-letter queue."
    ),
)
"""The SNS families, in the order they are written."""

_STRIDE = 7
"""A topic's numbers: confirmed and pending subscriptions, then its five counts in :data:`TOPIC_FAMILIES`' order."""
_CHECK_EVERY = 16
"""Topics (or lines) between two looks at the clock (as the per-queue writer's)."""
_CHUNK_LINES = 1024
"""Lines written before a slice ends whatever the clock says (as the per-queue writer's)."""
Labels = tuple[str, str, str]
"""A topic's label text: ``account="..",region="..",topic=".."``, and its two parts around the subscriptions'
``state`` label: ``account="..",region="..",`` and ``topic=".."``."""


def _labels(topic: _Topic) -> Labels:
    head = f'account="{label_value(topic.account)}",region="{label_value(topic.region)}",'
    rest = f'topic="{label_value(topic.name)}"'
    return head + rest, head, rest


class TopicFamilyWriter:
    """Writes the SNS families of ``sns`` in slices (the module docstring). Keeps each live topic's label text
    between scrapes and each format's spelling. Every call is on the event loop's thread."""

    def __init__(self, sns: SNSState) -> None:
        self.sns = sns
        self._labels: dict[str, Labels] = {}
        self._spellings: dict[str, Spelling] = {}

    def write(self, encoder: Encoder, content_type: str) -> Generator[bytes, None, None]:
        """The families' text in chunks, each what one slice wrote (empty while the topics are still being read)."""
        spelling = self._spellings.get(content_type)
        if spelling is None:
            spelling = self._spellings[content_type] = Spelling(encoder, TOPIC_FAMILIES)
        labels: list[Labels] = []
        numbers: list[int] = []
        old = self._labels
        kept: dict[str, Labels] = {}
        counters = self.sns.fanout.counters
        clock = time.perf_counter
        budget = queuefamilies.SLICE_SECONDS
        began = clock()
        for tick, topic in enumerate(list(self.sns.topics.by_arn.values())):
            if tick % _CHECK_EVERY == 0 and clock() - began > budget:
                yield b""
                began = clock()
            if self.sns.topics.by_arn.get(topic.arn) is not topic:  # deleted while this scrape ran
                continue
            text = old.get(topic.arn) or _labels(topic)
            kept[topic.arn] = text
            labels.append(text)
            pending = sum(1 for sub in topic.subscriptions.values() if sub.pending)
            counts = counters.get(topic.arn)
            numbers.append(len(topic.subscriptions) - pending)
            numbers.append(pending)
            if counts is None:
                numbers.extend((0, 0, 0, 0, 0))
            else:
                numbers.extend((counts.published, counts.delivered, counts.filtered, counts.failed,
                                counts.dead_lettered))  # fmt: skip
        self._labels = kept
        out: list[str] = []
        topics_family, subscriptions_family, *counter_families = TOPIC_FAMILIES
        out.append(spelling.head[topics_family.name])
        out.append(f"{spelling.samples[topics_family.name][0]} {sample_value(len(labels))}\n")
        out.append(spelling.head[subscriptions_family.name])
        sample = spelling.samples[subscriptions_family.name][0] + "{"
        for tick, (_, head, rest) in enumerate(labels):
            base = tick * _STRIDE
            out.append(f'{sample}{head}state="confirmed",{rest}}} {sample_value(numbers[base])}\n')
            out.append(f'{sample}{head}state="pending",{rest}}} {sample_value(numbers[base + 1])}\n')
            if tick % _CHECK_EVERY == 0 and (len(out) > _CHUNK_LINES or clock() - began > budget):
                yield "".join(out).encode()
                out = []
                began = clock()
        for column, family in enumerate(counter_families, 2):
            out.append(spelling.head[family.name])
            sample = spelling.samples[family.name][0] + "{"
            for tick, (whole, _, _) in enumerate(labels):
                out.append(f"{sample}{whole}}} {sample_value(numbers[tick * _STRIDE + column])}\n")
                if tick % _CHECK_EVERY == 0 and (len(out) > _CHUNK_LINES or clock() - began > budget):
                    yield "".join(out).encode()
                    out = []
                    began = clock()
        if out:
            yield "".join(out).encode()
