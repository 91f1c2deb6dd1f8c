"""The queue page's charts, drawn on the server as inline SVG: no script, no library, no CDN (the page's
Content-Security-Policy allows none). Each is a few polylines over the series of
:meth:`sqsemu.observability.history.QueueHistory.series`: one chart of the queue's depth (visible, in flight,
delayed), one of its sends, receives and deletes per second, over the last 15 minutes. The live update redraws them
every second with the page's other parts.

Colours and line styles come from the console's stylesheet (classes ``chart-line line-<series>``), so the SVG holds
only numbers and fixed words: nothing a client sent reaches it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

__all__ = ["Chart", "charts"]

WIDTH = 360
HEIGHT = 120
LEFT = 40  # room for the y axis' labels
RIGHT = 6
TOP = 8
BOTTOM = 100  # the x axis; its labels below


@dataclass(frozen=True)
class Chart:
    """One chart: ``name`` (``depth`` or ``rates``), its ``title``, its ``svg`` (safe markup), and its ``legend``:
    ``(series key, label, latest value as shown)`` per line."""

    name: str
    title: str
    svg: Markup
    legend: tuple[tuple[str, str, str], ...]


def _number(value: float) -> str:
    """A value as the axis and the legend show it: an integer, or one decimal below 10."""
    if value == int(value):
        return str(int(value))
    return f"{value:.1f}" if value < 10 else str(round(value))


def _scale_top(peak: float) -> float:
    """The y axis' top: the smallest of 1, 2, 5 x 10^n at or above ``peak`` (at least 1)."""
    top = 1.0
    while top < peak:
        for factor in (2, 2.5, 2):
            top *= factor
            if top >= peak:
                break
    return top


def _svg(name: str, title: str, points: Sequence[dict[str, Any]], keys: Sequence[tuple[str, str]]) -> Markup:
    values = [float(point[key] or 0) for point in points for key, _ in keys]
    top = _scale_top(max(values, default=0.0))
    count = max(len(points) - 1, 1)
    span_x = WIDTH - LEFT - RIGHT
    span_y = BOTTOM - TOP

    def x(index: int) -> str:
        return f"{LEFT + span_x * index / count:.1f}"

    def y(value: float) -> str:
        return f"{BOTTOM - span_y * min(value, top) / top:.1f}"

    parts = [
        f'<svg class="chart" data-chart="{name}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{title}">',
        f"<title>{title}</title>",
        f'<line class="chart-grid" x1="{LEFT}" y1="{TOP}" x2="{WIDTH - RIGHT}" y2="{TOP}"/>',
        f'<line class="chart-axis" x1="{LEFT}" y1="{BOTTOM}" x2="{WIDTH - RIGHT}" y2="{BOTTOM}"/>',
        f'<text class="chart-label" x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{_number(top)}</text>',
        f'<text class="chart-label" x="{LEFT - 4}" y="{BOTTOM}" text-anchor="end">0</text>',
        f'<text class="chart-label" x="{LEFT}" y="{HEIGHT - 4}">15 min ago</text>',
        f'<text class="chart-label" x="{WIDTH - RIGHT}" y="{HEIGHT - 4}" text-anchor="end">now</text>',
    ]
    for key, _label in keys:
        line = " ".join(f"{x(i)},{y(float(point[key] or 0))}" for i, point in enumerate(points))
        parts.append(f'<polyline class="chart-line line-{key}" data-series="{key}" points="{line}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - numbers and the fixed words above only


_DEPTH = (("visible", "visible"), ("in_flight", "in flight"), ("delayed", "delayed"))
_RATES = (
    ("sent_per_second", "sent/s"),
    ("received_per_second", "received/s"),
    ("deleted_per_second", "deleted/s"),
)


def charts(series: dict[str, Any]) -> list[Chart]:
    """The queue page's two charts from a history series (the rates chart only when the counters are on)."""
    points: list[dict[str, Any]] = series["samples"]
    out: list[Chart] = []
    for name, title, keys in (
        ("depth", "Messages over the last 15 minutes", _DEPTH),
        ("rates", "Sends, receives and deletes per second over the last 15 minutes", _RATES),
    ):
        if name == "rates" and not series["rates"]:
            continue
        latest = points[-1] if points else {}
        legend = tuple((key, label, _number(float(latest.get(key) or 0))) for key, label in keys)
        out.append(Chart(name, title, _svg(name, title, points, keys), legend))
    return out
