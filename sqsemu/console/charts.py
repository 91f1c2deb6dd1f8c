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
HEIGHT = 100
"""The plot's own units: the SVG is stretched to its card's width and the stylesheet's height
(``preserveAspectRatio="none"``, lines of constant width), so the two charts fill their card at any screen width;
the axis labels are HTML beside it, at the page's text size."""
PAD = 2  # room for the lines' width at the plot's top and bottom edges


@dataclass(frozen=True, slots=True)
class Chart:
    """One chart: ``name`` (``depth`` or ``rates``), its ``title``, its ``svg`` (safe markup: the plot, lines and
    grid only), ``top`` (the y axis' top value as shown; its bottom is 0), and its ``legend``: ``(series key,
    label, latest value as shown)`` per line."""

    name: str
    title: str
    svg: Markup
    top: str
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


def _svg(
    name: str, title: str, points: Sequence[dict[str, Any]], keys: Sequence[tuple[str, str]], top: float
) -> Markup:
    count = max(len(points) - 1, 1)

    def x(index: int) -> str:
        return f"{WIDTH * index / count:.1f}"

    def y(value: float) -> str:
        return f"{HEIGHT - HEIGHT * min(value, top) / top:.1f}"

    fixed = 'vector-effect="non-scaling-stroke"'
    parts = [
        f'<svg class="chart" data-chart="{name}" viewBox="0 {-PAD} {WIDTH} {HEIGHT + 2 * PAD}" '
        f'preserveAspectRatio="none" role="img" aria-label="{title}">',
        f"<title>{title}</title>",
        f'<line class="chart-grid" x1="0" y1="0" x2="{WIDTH}" y2="0" {fixed}/>',
        f'<line class="chart-axis" x1="0" y1="{HEIGHT}" x2="{WIDTH}" y2="{HEIGHT}" {fixed}/>',
    ]
    for key, _label in keys:
        line = " ".join(f"{x(i)},{y(float(point[key] or 0))}" for i, point in enumerate(points))
        parts.append(f'<polyline class="chart-line line-{key}" data-series="{key}" points="{line}" {fixed}/>')
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
        top = _scale_top(max((float(point[key] or 0) for point in points for key, _ in keys), default=0.0))
        out.append(Chart(name, title, _svg(name, title, points, keys, top), _number(top), legend))
    return out
