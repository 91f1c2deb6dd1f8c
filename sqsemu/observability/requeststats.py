"""Requests of the SQS endpoint by action, protocol and outcome, with their durations: what ``/metrics`` shows as
``sqsemu_requests_total`` and ``sqsemu_request_duration_seconds``.

This is on the hot path (one record per SQS call), so it is a dict of lock-free histograms keyed by
``(action, protocol, outcome)``, updated on the event loop's thread and read by the scrape on the same thread:
one tuple, one dict lookup, one ``bisect`` and two additions per call. A request count is its histogram's count;
the duration families add up the outcomes of an action when scraped.
"""

from __future__ import annotations

from bisect import bisect_left

from sqsemu.observability.histogram import Histogram

__all__ = ["DURATION_BUCKETS_S", "UNKNOWN_ACTION", "RequestStats"]

DURATION_BUCKETS_S = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0)
"""Upper bounds (seconds) of the request duration buckets: sub-millisecond calls up to 20-second long polls."""

UNKNOWN_ACTION = "unknown"
"""The action label of a request naming no action, or one that is not an SQS action (labels stay a bounded set)."""


class RequestStats:
    """Per ``(action, protocol, outcome)`` a histogram of durations in seconds; ``outcome`` is ``ok`` or the SQS
    error code (the error shape: ``QueueDoesNotExist``, ``InvalidParameterValue``...)."""

    __slots__ = ("bounds", "by_key")

    def __init__(self, bounds: tuple[float, ...] = DURATION_BUCKETS_S) -> None:
        self.bounds = bounds
        self.by_key: dict[tuple[str, str, str], Histogram] = {}

    def record(self, action: str, protocol: str, outcome: str, seconds: float) -> None:
        """Count one call of ``action`` over ``protocol`` (``json`` or ``query``) that took ``seconds``."""
        key = (action, protocol, outcome)
        histogram = self.by_key.get(key)
        if histogram is None:
            histogram = self.by_key[key] = Histogram(self.bounds)
        histogram.counts[bisect_left(histogram.bounds, seconds)] += 1  # Histogram.observe, inlined
        histogram.sum += seconds

    def counts(self) -> dict[tuple[str, str, str], int]:
        """``{(action, protocol, outcome): requests}``."""
        return {key: histogram.count for key, histogram in self.by_key.items()}

    def durations(self) -> dict[tuple[str, str], Histogram]:
        """``{(action, protocol): durations of every outcome}``, fresh histograms (the scrape's view)."""
        out: dict[tuple[str, str], Histogram] = {}
        for (action, protocol, _), histogram in self.by_key.items():
            total = out.get((action, protocol))
            if total is None:
                total = out[(action, protocol)] = Histogram(self.bounds)
            total.add(histogram)
        return out
