"""The queue history behind the console's charts (sqsemu.observability.history), its admin route and the charts
themselves: sampled every 10 s on the server's (manual) clock from the queues' counts and the metrics' counters,
paused while the server is idle, served as JSON and drawn as inline SVG. No sockets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from sqsemu.config import Config
from sqsemu.console.charts import charts
from sqsemu.observability.history import INTERVAL_MS, SAMPLES, QueueHistory
from sqsemu.observability.queuecounters import QueueCounters
from tests.unit.app_helpers import call_asgi, json_call, make_app
from tests.unit.engine_helpers import START_MS, Engine


@pytest.fixture
def engine() -> Iterator[Engine]:
    e = Engine()
    yield e
    e.close()


def _history(engine: Engine, counters: bool = True) -> QueueHistory:
    queue_counters = QueueCounters() if counters else None
    if queue_counters is not None:
        engine.broker.subscribe(queue_counters)
    history = QueueHistory(engine.broker, queue_counters)
    history.start()
    return history


def test_samples_fall_on_10_second_boundaries_of_the_servers_clock(engine: Engine) -> None:
    history = _history(engine)
    queue = engine.queue()
    for _ in range(20):
        engine.send(queue)
    engine.clock.advance(10)
    received = engine.receive(queue, max_number_of_messages=10)
    for _message, receipt in received[:4]:
        engine.broker.delete_message(queue, receipt)
    engine.clock.advance(10)
    series = history.series(queue, engine.clock.now_ms())
    samples = series["samples"]
    assert (series["interval_seconds"], series["window_seconds"], len(samples)) == (10, 900, SAMPLES)
    assert all(s["time_ms"] % INTERVAL_MS == 0 for s in samples)
    assert samples[-1]["time_ms"] == engine.clock.now_ms() // INTERVAL_MS * INTERVAL_MS
    last, before = samples[-1], samples[-2]
    assert (before["visible"], before["in_flight"], before["sent_per_second"]) == (20, 0, 2.0)
    assert (last["visible"], last["in_flight"], last["delayed"]) == (10, 6, 0)
    assert (last["received_per_second"], last["deleted_per_second"], last["sent_per_second"]) == (1.0, 0.4, 0.0)


def test_delayed_messages_are_charted_apart(engine: Engine) -> None:
    history = _history(engine)
    queue = engine.queue()
    engine.send(queue, delay_seconds=60)
    engine.clock.advance(10)
    assert history.series(queue, engine.clock.now_ms())["samples"][-1]["delayed"] == 1


def test_sampling_pauses_while_the_server_is_idle_and_resumes_with_the_next_message(engine: Engine) -> None:
    history = _history(engine)
    queue = engine.queue()
    engine.clock.advance(30)
    assert engine.broker.next_due_ms() is None, "an idle server keeps no sampling timer (principle 5)"
    engine.send(queue)
    due = engine.broker.next_due_ms()
    assert due is not None and due % INTERVAL_MS == 0
    engine.clock.advance(10)
    samples = history.series(queue, engine.clock.now_ms())["samples"]
    assert samples[-1]["visible"] == 1 and samples[-1]["sent_per_second"] == 0.1
    assert [s["visible"] for s in samples[:-1]] == [0] * (SAMPLES - 1)  # the idle past: zero, not missing


def test_the_window_is_15_minutes(engine: Engine) -> None:
    history = _history(engine)
    queue = engine.queue()
    engine.send(queue)
    engine.clock.advance(3600)
    samples = history.series(queue, engine.clock.now_ms())["samples"]
    assert len(samples) == SAMPLES and samples[-1]["time_ms"] - samples[0]["time_ms"] == (SAMPLES - 1) * INTERVAL_MS
    assert all(s["visible"] == 1 for s in samples)


def test_without_the_metrics_counters_only_the_depth_is_charted(engine: Engine) -> None:
    history = _history(engine, counters=False)
    queue = engine.queue()
    engine.send(queue)
    engine.clock.advance(10)
    series = history.series(queue, engine.clock.now_ms())
    assert series["rates"] is False and series["samples"][-1]["sent_per_second"] is None
    assert [chart.name for chart in charts(series)] == ["depth"]


def test_a_deleted_queue_takes_its_history_with_it(engine: Engine) -> None:
    history = _history(engine)
    queue = engine.queue()
    engine.send(queue)
    engine.clock.advance(10)
    engine.broker.delete_queue(queue)
    again = engine.queue()
    assert all(s["visible"] == 0 for s in history.series(again, engine.clock.now_ms())["samples"])


def test_the_charts_are_inline_svg_with_one_line_per_series(engine: Engine) -> None:
    history = _history(engine)
    queue = engine.queue()
    for _ in range(7):
        engine.send(queue)
    engine.clock.advance(10)
    depth, rates = charts(history.series(queue, engine.clock.now_ms()))
    assert (depth.name, rates.name) == ("depth", "rates")
    assert depth.svg.startswith('<svg class="chart" data-chart="depth"') and depth.svg.count("<polyline") == 3
    assert dict((key, latest) for key, _label, latest in depth.legend) == {
        "visible": "7",
        "in_flight": "0",
        "delayed": "0",
    }
    assert dict((key, latest) for key, _label, latest in rates.legend)["sent_per_second"] == "0.7"
    assert "http" not in depth.svg.replace('"http://www.w3.org', "")  # nothing loaded from anywhere


def _get(app: Any, path: str, query: bytes = b"") -> Any:
    return asyncio.run(call_asgi(app, "GET", path, {"Host": "localhost:9324"}, query_string=query))


def test_the_admin_route_and_the_console_page_show_the_history() -> None:
    app, broker = make_app(Config(clock="manual"))
    try:
        url = json.loads(json_call(app, "CreateQueue", {"QueueName": "charted"}).body)["QueueUrl"]
        for n in range(3):
            json_call(app, "SendMessage", {"QueueUrl": url, "MessageBody": f"m{n}"})
        broker.clock.advance(10)  # type: ignore[attr-defined]
        resp = _get(app, "/_sqsemu/queues/000000000000/charted/history")
        assert resp.status == 200
        data = json.loads(resp.body)
        assert data["queue"]["name"] == "charted" and data["rates"] is True
        assert data["samples"][-1]["visible"] == 3 and data["samples"][-1]["sent_per_second"] == 0.3
        assert _get(app, "/_sqsemu/queues/000000000000/nope/history").status == 404
        assert _get(app, "/_sqsemu/queues/123/charted/history").status == 400
        page = _get(app, "/_sqsemu/ui/queues/000000000000/us-east-1/charted")
        text = page.body.decode()
        assert page.status == 200 and 'data-chart="depth"' in text and 'data-chart="rates"' in text
        live = json.loads(_get(app, "/_sqsemu/ui/queues/000000000000/us-east-1/charted", b"live=1").body)
        assert 'data-latest="visible">3<' in live["charts"]
    finally:
        broker.close()


def test_the_first_sample_waits_for_the_first_boundary(engine: Engine) -> None:
    assert START_MS % INTERVAL_MS == 0
    engine.clock.advance(3)
    history = _history(engine)
    assert engine.broker.next_due_ms() == START_MS + INTERVAL_MS
    queue = engine.queue()
    engine.send(queue)
    engine.clock.advance(7)
    assert history.series(queue, engine.clock.now_ms())["samples"][-1]["visible"] == 1


def test_the_history_hears_the_journal_only_while_sampling_is_paused(engine: Engine) -> None:
    """While sampling runs, the engine's events would tell the history nothing: it is not among the journal's
    subscribers then (a message costs it no call), and it is again once sampling pauses (issue 50)."""
    history = _history(engine)
    queue = engine.queue()
    assert history not in engine.broker._subscribers  # armed at start
    engine.clock.advance(30)  # idle: sampling pauses
    assert history in engine.broker._subscribers
    engine.send(queue)  # the event wakes it
    assert history not in engine.broker._subscribers
    engine.broker.delete_queue(queue)  # while sampling runs: its queue_deleted goes unheard
    engine.clock.advance(10)
    assert queue not in history._samples  # dropped at the next sample, unheard
