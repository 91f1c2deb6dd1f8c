"""``GET /metrics``: Prometheus metrics in the text exposition format (or OpenMetrics when the scraper asks for it).

Everything is produced when scraped, on the event loop's thread: gauges read the engine's state there and then
(docs/architecture.md, principle 7: the hot path pays nothing for them); counters and histograms are read from what
the hot path keeps as plain integers (:mod:`~sqsemu.observability.requeststats`,
:mod:`~sqsemu.observability.queuecounters`, the durable store's commit hook). No prometheus-client metric object is
updated per request: their locks cost more than a dict update.

The per-queue families are written by :class:`~sqsemu.observability.queuefamilies.QueueFamilyWriter` in slices of at
most 2 ms, sent as they are written (a chunked answer) with the event loop let run between slices, so that a scrape
of many queues stalls no other client (issue 47, finding 7: 3.5 s for 10,000 queues in one go before); the rest
(per action, the server, event source mappings, ``--auth iam``'s denials, ``process_*``) is a few dozen samples,
written after them by prometheus-client's encoder from :class:`SqsemuCollector` and the other collectors. The answer
is the text prometheus-client writes for the same samples, byte for byte.

Per queue (labels ``account``, ``region``, ``queue``), named after the CloudWatch metrics AWS publishes for SQS
(``sqs_`` + the CloudWatch name in snake case, a unit suffix where there is a unit, ``_total`` for counters):

============================================================  =======================================  =========
metric                                                         CloudWatch metric                        type
============================================================  =======================================  =========
``sqs_approximate_number_of_messages_visible``                 ApproximateNumberOfMessagesVisible       gauge
``sqs_approximate_number_of_messages_not_visible``             ApproximateNumberOfMessagesNotVisible    gauge
``sqs_approximate_number_of_messages_delayed``                 ApproximateNumberOfMessagesDelayed       gauge
``sqs_approximate_age_of_oldest_message_seconds``              ApproximateAgeOfOldestMessage            gauge
``sqs_number_of_messages_sent_total``                          NumberOfMessagesSent                     counter
``sqs_number_of_messages_received_total``                      NumberOfMessagesReceived                 counter
``sqs_number_of_messages_deleted_total``                       NumberOfMessagesDeleted                  counter
``sqs_number_of_empty_receives_total``                         NumberOfEmptyReceives                    counter
``sqs_sent_message_size_bytes``                                SentMessageSize                          histogram
``sqs_number_of_messages_dead_lettered_total``                 (none: moved to the dead-letter queue)   counter
``sqs_number_of_messages_expired_total``                       (none: deleted by retention)             counter
============================================================  =======================================  =========

Fair queues (standard queues only; docs/behaviour.md 4.10; Developer Guide, "Available CloudWatch metrics for
Amazon SQS"): ``sqs_approximate_number_of_noisy_groups`` (ApproximateNumberOfNoisyGroups),
``sqs_approximate_number_of_messages_visible_in_quiet_groups``, ``..._not_visible_in_quiet_groups``,
``..._delayed_in_quiet_groups`` (ApproximateNumberOfMessages{Visible,NotVisible,Delayed}InQuietGroups) and
``sqs_approximate_age_of_oldest_message_in_quiet_groups_seconds`` (ApproximateAgeOfOldestMessageInQuietGroups), all
gauges. A queue whose messages never carried a MessageGroupId has no noisy group: every message is quiet.

Per action: ``sqsemu_requests_total`` (labels ``action``, ``protocol``, ``outcome``: ``ok`` or the SQS error code)
and ``sqsemu_request_duration_seconds`` (histogram; labels ``action``, ``protocol``). SNS calls (docs/sns.md) are
counted in the same two families with one more label, ``service="sns"`` (their ``action`` an SNS action, ``protocol``
``query``, ``outcome`` ``ok`` or the SNS error code); the SQS series keep exactly their labels, without ``service``
(AddPermission and RemovePermission exist in both services: the label tells them apart). The per-topic SNS
families (:mod:`~sqsemu.observability.topicfamilies`) are written after the per-queue ones, in slices too, when the
app has given ``topic_writer``. Server:
``sqsemu_long_polls_waiting``, ``sqsemu_open_connections``, ``sqsemu_timers_scheduled``, ``sqsemu_queues``,
``sqsemu_info`` (labels ``version``, ``clock``, ``fidelity``, ``durable``, ``http_fast_lane``: ``on`` or ``off:
<reason>``; value 1), ``sqsemu_fast_lane_answers_total`` (SQS calls the HTTP fast lane answered) and, in durable mode,
``sqsemu_durable_commit_duration_seconds`` and ``sqsemu_durable_commit_changes`` (histograms per group commit);
plus prometheus-client's ``process_*`` metrics (CPU seconds, resident memory, open files; Linux).

prometheus-client is imported at the first scrape, not at start-up (it is a tenth of the server's imports), and
Starlette with the admin app (:mod:`sqsemu.admin.health`); what the hot path records (``RequestStats``,
``QueueCounters``) needs neither.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, cast

from sqsemu.observability.fastlane import FastLaneState
from sqsemu.observability.histogram import Histogram
from sqsemu.observability.queuecounters import QueueCounters
from sqsemu.observability.queuefamilies import QueueFamilyWriter, Scan
from sqsemu.observability.requeststats import RequestStats
from sqsemu.slicedstream import sliced

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import HistogramMetricFamily, Metric
    from starlette.requests import Request
    from starlette.routing import Route

    from sqsemu.config import Config
    from sqsemu.engine.broker import Broker
    from sqsemu.observability.topicfamilies import TopicFamilyWriter
    from sqsemu.persistence import Store

__all__ = ["METRICS_PATH", "Metrics", "SqsemuCollector"]

METRICS_PATH = "/metrics"

COMMIT_DURATION_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Upper bounds (seconds) of the durable commit duration buckets."""
COMMIT_CHANGES_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 5000.0)
"""Upper bounds of the buckets of changes per durable commit (rows written: messages, queues, keys, tasks)."""


def _le(bound: float) -> str:
    """A bucket bound as Prometheus writes it: 0.005, 1.0, +Inf."""
    from prometheus_client.utils import floatToGoString

    return cast(Callable[[float], str], floatToGoString)(bound)


class Metrics:
    """What ``/metrics`` shows for one server: the hot path's request records, the per-queue counters (subscribed
    to ``broker``'s events), the durable ``store``'s commits, and the collector reading it all when scraped.

    ``connections`` is set by the server once it listens (a function giving the number of open connections).
    """

    def __init__(
        self,
        config: Config,
        broker: Broker,
        store: Store | None = None,
        version: str = "",
        lane: FastLaneState | None = None,
    ) -> None:
        self.broker = broker
        self.lane = lane if lane is not None else FastLaneState()
        self.requests = RequestStats()
        self.sns_requests = RequestStats()  # SNS calls (sqsemu.sns), shown with service="sns"
        self.sts_requests = RequestStats()  # STS calls (sqsemu.sts), shown with service="sts"
        self.queues = QueueCounters()
        broker.subscribe(self.queues)
        self.writer = QueueFamilyWriter(broker, self.queues)
        self.topic_writer: TopicFamilyWriter | None = None  # the SNS families (set by the app: sqsemu.http.app)
        self.collector = SqsemuCollector(self)
        self.info = {
            "version": version,
            "clock": config.clock,
            "fidelity": config.fidelity,
            "durable": "true" if store is not None else "false",
        }
        self.commit_durations: Histogram | None = None
        self.commit_changes: Histogram | None = None
        if store is not None:
            self.commit_durations = Histogram(COMMIT_DURATION_BUCKETS_S)
            self.commit_changes = Histogram(COMMIT_CHANGES_BUCKETS)
            store.on_commit = self.committed
        self.connections: Callable[[], int] | None = None
        self.collectors: list[Any] = []  # further prometheus-client collectors (event source mappings' own)
        self._registry: CollectorRegistry | None = None  # made at the first scrape: prometheus-client is imported then

    @property
    def registry(self) -> CollectorRegistry:
        """The registry a scrape renders: this server's collector and the process collector."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry, ProcessCollector

            registry = CollectorRegistry(auto_describe=False)
            registry.register(self.collector)
            for collector in self.collectors:
                registry.register(collector)
            ProcessCollector(registry=registry)
            self._registry = registry
        return self._registry

    def committed(self, seconds: float, changes: int) -> None:
        """The durable store committed ``changes`` changes in ``seconds``."""
        if self.commit_durations is not None and self.commit_changes is not None:
            self.commit_durations.observe(seconds)
            self.commit_changes.observe(changes)

    def scrape(self, accept: str | None = None) -> tuple[Generator[bytes, None, None], str]:
        """``(chunks, content type)`` of a scrape: the text format 0.0.4, or what ``accept`` asks for among the
        formats prometheus-client writes (OpenMetrics, text 1.0.0). Each chunk is what one slice of at most
        :data:`~sqsemu.observability.queuefamilies.SLICE_SECONDS` wrote (possibly empty): the caller lets the event
        loop run between two chunks. The chunks read the engine as they are made, on the event loop's thread."""
        from prometheus_client.exposition import choose_encoder

        encoder, content_type = choose_encoder(accept or "")
        return self._chunks(encoder, content_type), content_type

    def _chunks(self, encoder: Callable[[Any], bytes], content_type: str) -> Generator[bytes, None, None]:
        scan = yield from self.writer.write(encoder, content_type)
        if self.topic_writer is not None:
            yield from self.topic_writer.write(encoder, content_type)
        registry = self.registry
        self.collector.scan = scan  # read by the collector in this same slice
        try:
            rest = encoder(registry)
        finally:
            self.collector.scan = None
        yield rest

    def render(self, accept: str | None = None) -> tuple[bytes, str]:
        """``(body, content type)`` of a scrape made in one go (tests, tools: :meth:`scrape` is what the route
        serves)."""
        chunks, content_type = self.scrape(accept)
        return b"".join(chunks), content_type

    def route(self) -> Route:
        """The Starlette route of ``GET /metrics`` (an async endpoint: the scrape runs on the event loop's thread,
        where the engine's state belongs, one slice at a time, each sent as it is made: a chunked answer). Made
        with the admin app, at its first request."""
        from starlette.responses import StreamingResponse
        from starlette.routing import Route

        async def scrape(request: Request) -> StreamingResponse:
            chunks, content_type = self.scrape(request.headers.get("accept"))
            return StreamingResponse(sliced(chunks), headers={"content-type": content_type})

        return Route(METRICS_PATH, scrape, methods=["GET"])


def _histogram(family: HistogramMetricFamily, labels: list[str], histogram: Histogram) -> None:
    buckets = [(_le(bound), float(count)) for bound, count in histogram.cumulative()]
    family.add_metric(labels, buckets, histogram.sum)


class SqsemuCollector:
    """The prometheus-client collector of :class:`Metrics`'s families other than the per-queue ones (per action and
    the server's; see the module docstring). ``scan``: what the scrape's per-queue step counted (queues, long polls
    waiting), set by :meth:`Metrics.scrape` while it renders the rest; None: counted here, over every queue."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.scan: Scan | None = None

    def collect(self) -> Iterator[Metric]:
        """Every family but the per-queue ones, read now."""
        yield from self._requests()
        yield from self._server()

    def _requests(self) -> Iterator[Metric]:
        from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily

        stats = self.metrics.requests
        services = (("sns", self.metrics.sns_requests), ("sts", self.metrics.sts_requests))
        requests = CounterMetricFamily(
            "sqsemu_requests",
            "SQS API requests by action, protocol (json or query) and outcome (ok, or the SQS error code); SNS and "
            'STS API requests with service="sns" or "sts" (outcome ok, or that service\'s error code).',
            labels=("action", "protocol", "outcome"),
        )
        for (action, protocol, outcome), count in sorted(stats.counts().items()):
            requests.add_metric([action, protocol, outcome], count)
        for service, service_stats in services:
            for (action, protocol, outcome), count in sorted(service_stats.counts().items()):
                labels = {"action": action, "protocol": protocol, "outcome": outcome, "service": service}
                requests.add_sample("sqsemu_requests_total", labels, count)
        yield requests
        durations = HistogramMetricFamily(
            "sqsemu_request_duration_seconds",
            "Time from the request's headers to the end of its answer, seconds (long polls include their wait).",
            labels=("action", "protocol"),
        )
        for (action, protocol), histogram in sorted(stats.durations().items()):
            _histogram(durations, [action, protocol], histogram)
        service_durations = HistogramMetricFamily(
            durations.name, durations.documentation, labels=("action", "protocol", "service")
        )
        for service, service_stats in services:
            for (action, protocol), histogram in sorted(service_stats.durations().items()):
                _histogram(service_durations, [action, protocol, service], histogram)
        durations.samples.extend(
            service_durations.samples
        )  # one family: the SQS series as they were, then SNS's, STS's
        yield durations

    def _server(self) -> Iterator[Metric]:
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        metrics = self.metrics
        broker = metrics.broker
        scan = self.scan
        if scan is None:
            queues = broker.all_queues()
            scan = Scan(len(queues), sum(queue.waiters.waiting_count() for queue in queues))
        yield GaugeMetricFamily(
            "sqsemu_long_polls_waiting",
            "ReceiveMessage calls waiting for a message (long polls).",
            value=scan.long_polls,
        )
        if metrics.connections is not None:
            yield GaugeMetricFamily("sqsemu_open_connections", "Open HTTP connections.", value=metrics.connections())
        yield GaugeMetricFamily(
            "sqsemu_timers_scheduled",
            "Timers pending in the engine's scheduler (visibility, delays, retention, long-poll timeouts, move "
            "tasks), superseded ones included until their deadline.",
            value=len(broker.wheel),
        )
        yield GaugeMetricFamily("sqsemu_queues", "Queues, of every account and region.", value=scan.queues)
        labels = {**metrics.info, "http_fast_lane": metrics.lane.status}
        info = GaugeMetricFamily(
            "sqsemu_info",
            "The server: version, clock, fidelity, durable mode, HTTP fast lane (always 1).",
            labels=list(labels),
        )
        info.add_metric(list(labels.values()), 1)
        yield info
        yield CounterMetricFamily(
            "sqsemu_fast_lane_answers",
            "SQS calls answered by sqsemu's HTTP protocol itself.",
            value=metrics.lane.answers,
        )
        yield CounterMetricFamily(
            "sqsemu_http_app_errors",
            "Requests to the admin, console, metrics or Lambda routes whose ASGI app raised (logged, answered 500).",
            value=metrics.lane.app_errors,
        )
        if metrics.topic_writer is not None:
            yield CounterMetricFamily(
                "sqsemu_sns_delivery_errors",
                "SNS deliveries whose own code raised (a delivery task or a fan-out step; logged once each, the other "
                "subscriptions' deliveries go on).",
                value=metrics.topic_writer.sns.fanout.errors,
            )
        if metrics.commit_durations is not None and metrics.commit_changes is not None:
            commit_durations = HistogramMetricFamily(
                "sqsemu_durable_commit_duration_seconds",
                "Durable mode: time of each group commit, from its start to its end on disk, seconds.",
                labels=(),
            )
            _histogram(commit_durations, [], metrics.commit_durations)
            yield commit_durations
            commit_changes = HistogramMetricFamily(
                "sqsemu_durable_commit_changes",
                "Durable mode: changes written by each group commit (message, queue, deduplication and task rows).",
                labels=(),
            )
            _histogram(commit_changes, [], metrics.commit_changes)
            yield commit_changes
