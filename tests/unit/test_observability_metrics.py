"""The metrics: the lock-free histogram, the request records, the per-queue counters and the collector that
``GET /metrics`` serves, parsed back with prometheus-client's own parser; and the route behind the admin gate."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sqsemu.config import Config
from sqsemu.engine.message import ReceiptEntry
from sqsemu.observability.fastlane import NOT_SERVED
from sqsemu.observability.histogram import INF, Histogram
from sqsemu.observability.metrics import Metrics
from sqsemu.observability.requeststats import RequestStats
from tests.unit.app_helpers import call_asgi, json_call, make_app
from tests.unit.engine_helpers import START_MS, Engine

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    """``{(sample name, sorted labels): value}`` of an exposition, parsed by prometheus-client."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def queue_labels(name: str) -> dict[str, str]:
    return {"account": "000000000000", "region": "us-east-1", "queue": name}


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = Engine()
    yield e
    e.close()


def test_histogram_buckets_are_inclusive_and_cumulative() -> None:
    histogram = Histogram((1.0, 5.0))
    for observed in (0.5, 1.0, 3.0, 5.0, 7.0):
        histogram.observe(observed)
    assert histogram.cumulative() == [(1.0, 2), (5.0, 4), (INF, 5)]
    assert (histogram.count, histogram.sum) == (5, 16.5)
    other = Histogram((1.0, 5.0))
    other.observe(2.0)
    histogram.add(other)
    assert histogram.cumulative() == [(1.0, 2), (5.0, 5), (INF, 6)]


def test_request_stats_count_by_outcome_and_time_by_action() -> None:
    stats = RequestStats(bounds=(0.01,))
    stats.record("SendMessage", "json", "ok", 0.001)
    stats.record("SendMessage", "json", "ok", 0.002)
    stats.record("SendMessage", "json", "QueueDoesNotExist", 0.02)
    stats.record("SendMessage", "query", "ok", 0.001)
    assert stats.counts() == {
        ("SendMessage", "json", "ok"): 2,
        ("SendMessage", "json", "QueueDoesNotExist"): 1,
        ("SendMessage", "query", "ok"): 1,
    }
    durations = stats.durations()
    assert durations[("SendMessage", "json")].cumulative() == [(0.01, 2), (INF, 3)]
    assert durations[("SendMessage", "query")].count == 1


def test_the_collector_reads_gauges_and_counters(engine: Engine) -> None:
    metrics = Metrics(Config(clock="manual"), engine.broker, version="9.9.9")
    broker = engine.broker
    dlq = engine.queue("dlq")
    policy = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1})
    work = engine.queue("work", VisibilityTimeout="30", RedrivePolicy=policy)
    short = engine.queue("short", MessageRetentionPeriod="60")
    delayed = engine.queue("delayed", DelaySeconds="900")
    for body in ("a" * 10, "b" * 100, "c" * 2000):
        engine.send(work, body)
    assert engine.receive(dlq) == []
    (_, h1), _ = engine.receive(work, max_number_of_messages=2)
    broker.delete_message(work, h1)
    broker.delete_message_batch(work, [ReceiptEntry("again", h1)])  # the message is gone: counts nothing
    engine.clock.advance(31)
    assert len(engine.receive(work, max_number_of_messages=10, visibility_timeout=300)) == 1  # one dead-lettered
    engine.send(short, "old")
    engine.send(delayed, "later")
    engine.clock.advance(61)
    metrics.requests.record("SendMessage", "json", "ok", 0.0004)
    metrics.requests.record("SendMessage", "json", "QueueDoesNotExist", 0.0002)

    samples = parse(metrics.render()[0].decode())

    work_l, dlq_l, short_l, delayed_l = (queue_labels(n) for n in ("work", "dlq", "short", "delayed"))
    assert value(samples, "sqs_approximate_number_of_messages_visible", **work_l) == 0
    assert value(samples, "sqs_approximate_number_of_messages_not_visible", **work_l) == 1
    assert value(samples, "sqs_approximate_number_of_messages_visible", **dlq_l) == 1
    assert value(samples, "sqs_approximate_number_of_messages_delayed", **delayed_l) == 1
    assert value(samples, "sqs_approximate_age_of_oldest_message_seconds", **work_l) == 92.0
    assert value(samples, "sqs_approximate_age_of_oldest_message_seconds", **dlq_l) == 92.0  # keeps its enqueue time
    assert value(samples, "sqs_approximate_age_of_oldest_message_seconds", **short_l) == 0.0
    assert value(samples, "sqs_approximate_age_of_oldest_message_seconds", **delayed_l) == 61.0
    assert value(samples, "sqs_number_of_messages_sent_total", **work_l) == 3
    assert value(samples, "sqs_number_of_messages_sent_total", **dlq_l) == 0  # dead-lettered arrivals are not sends
    assert value(samples, "sqs_number_of_messages_received_total", **work_l) == 3
    assert value(samples, "sqs_number_of_messages_deleted_total", **work_l) == 1
    assert value(samples, "sqs_number_of_empty_receives_total", **work_l) == 0
    assert value(samples, "sqs_number_of_empty_receives_total", **dlq_l) == 1
    assert value(samples, "sqs_number_of_messages_dead_lettered_total", **work_l) == 1
    assert value(samples, "sqs_number_of_messages_dead_lettered_total", **dlq_l) == 0
    assert value(samples, "sqs_number_of_messages_expired_total", **short_l) == 1
    assert value(samples, "sqs_sent_message_size_bytes_count", **work_l) == 3
    assert value(samples, "sqs_sent_message_size_bytes_sum", **work_l) == 2110
    assert value(samples, "sqs_sent_message_size_bytes_bucket", le="64.0", **work_l) == 1
    assert value(samples, "sqs_sent_message_size_bytes_bucket", le="1024.0", **work_l) == 2
    assert value(samples, "sqs_sent_message_size_bytes_bucket", le="+Inf", **work_l) == 3
    assert value(samples, "sqsemu_requests_total", action="SendMessage", protocol="json", outcome="ok") == 1
    assert (
        value(samples, "sqsemu_requests_total", action="SendMessage", protocol="json", outcome="QueueDoesNotExist") == 1
    )
    assert value(samples, "sqsemu_request_duration_seconds_count", action="SendMessage", protocol="json") == 2
    assert (
        value(samples, "sqsemu_request_duration_seconds_bucket", action="SendMessage", protocol="json", le="0.0005")
        == 2
    )
    assert value(samples, "sqsemu_queues") == 4
    assert value(samples, "sqsemu_long_polls_waiting") == 0
    assert value(samples, "sqsemu_timers_scheduled") == len(broker.wheel)
    info = {"version": "9.9.9", "clock": "manual", "fidelity": "relaxed", "durable": "false"}
    assert value(samples, "sqsemu_info", **info, http_fast_lane=NOT_SERVED) == 1
    assert value(samples, "sqsemu_fast_lane_answers_total") == 0
    assert not any(name.startswith("sqsemu_durable_") for name, _ in samples)
    assert not any(name == "sqsemu_open_connections" for name, _ in samples)


def test_counters_go_with_their_queue(engine: Engine) -> None:
    metrics = Metrics(Config(), engine.broker)
    queue = engine.queue("q")
    engine.send(queue)
    assert metrics.queues.get(queue) is not None
    engine.broker.delete_queue(queue)
    assert metrics.queues.get(queue) is None
    again = engine.queue("q")
    samples = parse(metrics.render()[0].decode())
    assert value(samples, "sqs_number_of_messages_sent_total", **queue_labels("q")) == 0
    assert metrics.queues.get(again) is None


def test_server_gauges_long_polls_connections_and_durable_commits(engine: Engine) -> None:
    metrics = Metrics(Config(), engine.broker)
    metrics.connections = lambda: 3
    metrics.commit_durations = Histogram((0.001, 0.01))
    metrics.commit_changes = Histogram((1.0, 10.0))
    metrics.committed(0.004, 7)
    metrics.committed(0.0005, 1)
    queue = engine.queue("q")

    async def scrape_while_polling() -> Samples:
        poll = asyncio.ensure_future(engine.broker.receive_message(queue, wait_time_seconds=20))
        await asyncio.sleep(0)
        samples = parse(metrics.render()[0].decode())
        engine.clock.advance(20)
        await poll
        return samples

    samples = engine.run(scrape_while_polling())
    assert value(samples, "sqsemu_long_polls_waiting") == 1
    assert value(samples, "sqsemu_open_connections") == 3
    assert value(samples, "sqsemu_durable_commit_duration_seconds_count") == 2
    assert value(samples, "sqsemu_durable_commit_duration_seconds_bucket", le="0.001") == 1
    assert value(samples, "sqsemu_durable_commit_changes_sum") == 8
    assert value(samples, "sqsemu_durable_commit_changes_bucket", le="1.0") == 1


def test_openmetrics_when_the_scraper_asks_for_it(engine: Engine) -> None:
    metrics = Metrics(Config(), engine.broker)
    body, content_type = metrics.render("application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert body.endswith(b"# EOF\n")
    body, content_type = metrics.render(None)
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"


# ------------------------------------------------------------------------------------------- the route


def _get(app: object, path: str = "/metrics", **headers: str) -> tuple[int, dict[str, str], bytes]:
    response = asyncio.run(call_asgi(app, "GET", path, {"Host": "localhost:9324", **headers}))
    return response.status, response.headers, response.body


def test_metrics_route_counts_the_apps_requests_and_is_scrapable_without_browser_headers() -> None:
    app, broker = make_app(Config())
    json_call(app, "CreateQueue", {"QueueName": "q"})
    json_call(app, "SendMessage", {"QueueUrl": "http://localhost:9324/000000000000/q", "MessageBody": "x"})
    json_call(app, "SendMessage", {"QueueUrl": "http://localhost:9324/000000000000/none", "MessageBody": "x"})
    json_call(app, "NoSuchAction", {})
    status, headers, body = _get(app)
    assert status == 200 and headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = parse(body.decode())
    assert value(samples, "sqsemu_requests_total", action="SendMessage", protocol="json", outcome="ok") == 1
    assert (
        value(samples, "sqsemu_requests_total", action="SendMessage", protocol="json", outcome="QueueDoesNotExist") == 1
    )
    assert value(samples, "sqsemu_requests_total", action="unknown", protocol="json", outcome="InvalidAction") == 1
    assert value(samples, "sqs_number_of_messages_sent_total", **queue_labels("q")) == 1
    assert broker.clock.now_ms() == START_MS


def test_no_metrics_answers_404_and_counts_nothing() -> None:
    app, broker = make_app(Config(metrics=False))
    status, _, body = _get(app)
    assert status == 404 and json.loads(body) == {"error": "the metrics are switched off (--no-metrics)"}
    assert app.metrics is None and broker.journal is None


def test_metrics_are_guarded_like_the_admin_routes() -> None:
    app, _ = make_app(Config(admin_token="s3cret", admin=False))
    assert _get(app)[0] == 401
    assert _get(app, **{"X-Sqsemu-Admin-Token": "wrong"})[0] == 403
    assert _get(app, **{"X-Sqsemu-Admin-Token": "s3cret"})[0] == 200  # --no-admin leaves /metrics on
    assert _get(app, "/_sqsemu/queues", **{"X-Sqsemu-Admin-Token": "s3cret"})[0] == 404
    open_app, _ = make_app(Config())
    assert _get(open_app, **{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})[0] == 403
    assert _get(open_app, **{"Sec-Fetch-Site": "same-origin"})[0] == 200


def test_metrics_subscribe_next_to_another_journal(engine: Engine) -> None:
    from sqsemu.engine.events import JournalFanout
    from sqsemu.observability.queuecounters import QueueCounters

    other = QueueCounters()  # stands for the durable store: any journal subscribed before the metrics
    engine.broker.subscribe(other)
    metrics = Metrics(Config(), engine.broker)
    assert isinstance(engine.broker.journal, JournalFanout)
    queue = engine.queue("q")
    engine.send(queue)
    counted, also = metrics.queues.get(queue), other.get(queue)
    assert counted is not None and also is not None and counted.sent == also.sent == 1
