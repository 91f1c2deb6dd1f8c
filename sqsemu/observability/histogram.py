"""A histogram for values observed on the event loop's thread: plain integers, no lock.

prometheus-client's ``Histogram`` takes a lock per observation so that any thread may observe; every observation
here comes from the one event-loop thread, and the scrape that reads them runs on that thread too, so a list of
integers is enough (and is what the hot path can afford: one ``bisect`` and two additions).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

__all__ = ["INF", "Histogram"]

INF = float("inf")


class Histogram:
    """Counts of observed values per bucket, their sum and count.

    ``bounds`` are the buckets' inclusive upper bounds, ascending (a value equal to a bound falls in that bucket, as
    in Prometheus); a last, unbounded bucket catches the rest.
    """

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)
        self.sum: float = 0.0

    def observe(self, value: float) -> None:
        """Count ``value`` (in the unit of the bounds)."""
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value

    @property
    def count(self) -> int:
        """How many values were observed."""
        return sum(self.counts)

    def add(self, other: Histogram) -> None:
        """Add ``other``'s observations (same bounds) to this histogram."""
        for index, count in enumerate(other.counts):
            self.counts[index] += count
        self.sum += other.sum

    def cumulative(self) -> list[tuple[float, int]]:
        """``[(bound, observations <= bound), ..., (INF, count)]``: Prometheus's cumulative bucket form."""
        out: list[tuple[float, int]] = []
        running = 0
        for bound, count in zip(self.bounds, self.counts, strict=False):
            running += count
            out.append((bound, running))
        out.append((INF, running + self.counts[-1]))
        return out
