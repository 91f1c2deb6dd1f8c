"""The realism spec: its text form (``"duplicates=0.1,reorder=0.2"``), its parser and :class:`RealismSpec`.

A leaf module (standard library only), so that the configuration (``sqsemu.config``, the ground floor) can check a
``--realism`` value without importing the engine (docs/architecture.md, principle 12). What the effects do, and
the AWS documentation each models: ``sqsemu.engine.realism`` and docs/realism.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from typing import Any

__all__ = [
    "DEFAULT_REORDER_WINDOW",
    "EFFECTS",
    "FIFO_EFFECTS",
    "MAX_ATTRIBUTE_DELAY_S",
    "MAX_REORDER_WINDOW",
    "OFF",
    "PROBABILITIES",
    "RealismSpec",
    "RealismSpecError",
    "parse_spec",
]

OFF = "off"
"""The spec text that switches every effect off (for a queue: off even when the server's spec is on)."""
MAX_ATTRIBUTE_DELAY_S = 60
MAX_REORDER_WINDOW = 1000
DEFAULT_REORDER_WINDOW = 10
PROBABILITIES = ("duplicates", "reorder", "short_poll_sampling", "lost_answers")
EFFECTS = (*PROBABILITIES, "reorder_window", "attribute_delay")
"""Every name a spec may hold, in canonical order."""
FIFO_EFFECTS = ("lost_answers", "attribute_delay")
"""The effects that apply to FIFO queues (the others would break FIFO guarantees)."""
_EXAMPLE = "duplicates=0.1,reorder=0.2"
_SEPARATORS = re.compile(r"\s*,\s*|\s+")


class RealismSpecError(ValueError):
    """A realism spec that cannot be read: unknown effect, bad or out-of-range value; the message says which."""


@dataclass(frozen=True)
class RealismSpec:
    """The realism settings of a server or a queue.

    Probabilities are floats in [0, 1]; ``reorder_window`` is a number of messages (2..1000); ``attribute_delay``
    is seconds (0..60). The all-zero spec (``RealismSpec()``) is off.
    """

    duplicates: float = 0.0
    reorder: float = 0.0
    short_poll_sampling: float = 0.0
    lost_answers: float = 0.0
    reorder_window: int = DEFAULT_REORDER_WINDOW
    attribute_delay: float = 0.0

    @property
    def active(self) -> bool:
        """Whether any effect is on."""
        return any(getattr(self, name) for name in PROBABILITIES) or self.attribute_delay > 0

    def for_fifo(self) -> RealismSpec:
        """The effects of this spec that apply to a FIFO queue (``FIFO_EFFECTS``)."""
        return RealismSpec(lost_answers=self.lost_answers, attribute_delay=self.attribute_delay)

    def text(self, sep: str = ",") -> str:
        """The canonical spec text: the effects that are on, in ``EFFECTS`` order (``reorder_window`` only with
        ``reorder`` on and not the default), joined by ``sep`` (``" "`` for a tag value, which cannot hold a comma);
        ``off`` when none is."""
        parts = []
        for name in EFFECTS:
            value = getattr(self, name)
            if name == "reorder_window":
                if self.reorder and value != DEFAULT_REORDER_WINDOW:
                    parts.append(f"{name}={value}")
            elif value:
                parts.append(f"{name}={_number(value)}")
        return sep.join(parts) or OFF

    def as_dict(self) -> dict[str, float | int]:
        """``{effect: value}`` for every effect (JSON for the admin routes)."""
        return {item.name: getattr(self, item.name) for item in fields(self)}


def _number(value: float) -> str:
    """``0.1`` → ``"0.1"``, ``2.0`` → ``"2"``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def parse_spec(text: str) -> RealismSpec:
    """``"duplicates=0.1,reorder=0.2"`` → :class:`RealismSpec`. The ``EFFECT=VALUE`` parts are separated by commas
    or blanks (a queue tag's value cannot hold a comma: ``"duplicates=0.1 reorder=0.2"``); an empty text or ``off``
    is the all-off spec; an effect named twice takes its last value.

    Raises :class:`RealismSpecError` for an unknown effect, a part without ``=``, a value that is not a finite
    number, a probability outside [0, 1], a ``reorder_window`` that is not an integer from 2 to 1000, or an
    ``attribute_delay`` outside 0..60 seconds.
    """
    if not isinstance(text, str):
        raise RealismSpecError(f"a realism spec must be a string like {_EXAMPLE!r}, got {text!r}")
    stripped = text.strip()
    if not stripped or stripped.lower() == OFF:
        return RealismSpec()
    values: dict[str, Any] = {}
    for part in _SEPARATORS.split(stripped):
        name, sep, raw = part.partition("=")
        if not sep or not name:
            raise RealismSpecError(f"realism: {part.strip()!r} is not EFFECT=VALUE (e.g. {_EXAMPLE!r})")
        if name not in EFFECTS:
            raise RealismSpecError(f"realism: unknown effect {name!r} (known: {', '.join(EFFECTS)})")
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise RealismSpecError(f"realism: {name} must be a number, got {raw!r}")
        if name in PROBABILITIES:
            if not 0 <= value <= 1:
                raise RealismSpecError(f"realism: {name} is a probability from 0 to 1, got {raw}")
            values[name] = value
        elif name == "reorder_window":
            if not value.is_integer() or not 2 <= value <= MAX_REORDER_WINDOW:
                raise RealismSpecError(
                    f"realism: reorder_window is a number of messages from 2 to {MAX_REORDER_WINDOW}, got {raw}"
                )
            values[name] = int(value)
        else:
            if not 0 <= value <= MAX_ATTRIBUTE_DELAY_S:
                raise RealismSpecError(
                    f"realism: attribute_delay is seconds from 0 to {MAX_ATTRIBUTE_DELAY_S} (AWS documents up to "
                    f"60 s), got {raw}"
                )
            values[name] = round(value, 3)
    return replace(RealismSpec(), **values)
