"""The event source mappings' Prometheus families, read at scrape time (registered on ``/metrics`` by the app):

- ``sqsemu_lambda_invocations_total{function, outcome}``: invocations by function and outcome (``success``,
  ``partial_failure``, ``function_error``, ``invalid_response``, ``unreachable``, ``no_function``);
- ``sqsemu_lambda_batch_size``: histogram of the messages per invocation;
- ``sqsemu_lambda_event_source_mappings{state}``: mappings by state;
- ``sqsemu_lambda_worker_restarts_total``: mapping workers restarted after an internal error (each is also logged,
  with its traceback the first time, and said in the mapping's ``LastProcessingResult``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqsemu.eventsource.registry import EventSources


class EventSourceCollector:
    """A prometheus-client collector over one :class:`~sqsemu.eventsource.registry.EventSources`."""

    def __init__(self, sources: EventSources) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Any]:
        """The families, read now."""
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        from sqsemu.eventsource.registry import BATCH_SIZE_BUCKETS

        sources = self.sources
        invocations = CounterMetricFamily(
            "sqsemu_lambda_invocations",
            "Function invocations by event source mappings, by function and outcome.",
            labels=("function", "outcome"),
        )
        for (function, outcome), count in sources.counts():
            invocations.add_metric([function, outcome], count)
        yield invocations
        sizes = HistogramMetricFamily(
            "sqsemu_lambda_batch_size", "Messages per invocation of event source mappings.", labels=()
        )
        buckets: list[tuple[str, float]] = []
        running = 0
        for bound, count in zip(BATCH_SIZE_BUCKETS, sources.batch_sizes, strict=False):
            running += count
            buckets.append((str(float(bound)), float(running)))
        running += sources.batch_sizes[-1]
        buckets.append(("+Inf", float(running)))
        sizes.add_metric([], buckets, float(sources.batch_size_sum))
        yield sizes
        states = GaugeMetricFamily(
            "sqsemu_lambda_event_source_mappings", "Event source mappings by state.", labels=("state",)
        )
        counted: dict[str, int] = {}
        for mapping in sources.mappings.values():
            counted[mapping.state] = counted.get(mapping.state, 0) + 1
        for state, count in sorted(counted.items()):
            states.add_metric([state], count)
        yield states
        restarts = CounterMetricFamily(
            "sqsemu_lambda_worker_restarts",
            "Event source mapping workers restarted after an internal error.",
            labels=(),
        )
        restarts.add_metric([], sources.worker_restarts)
        yield restarts
