"""What ``GET /health`` answers, written without the admin framework (a leaf of the admin layer: it imports no
other admin module, so the admin routes, the console and the HTTP layer all read it).

``/health`` answers ``{"status": "ok", "version": "<sqsemu version>", "clock": "system"|"manual", "http_fast_lane":
"on"|"off: <reason>", "build": "compiled (mypyc)"|"pure Python: <reason>"}`` (HTTP 200, ``build`` from
:func:`sqsemu.compiled.status`,
``Content-Type: application/json``), the same document and headers the admin app's own ``/health`` route answers
(it serves the requests this shortcut leaves to it: other methods (405) and requests with a body, which the
admin body cap checks). docs/configuration.md and docs/security.md list what ``/health`` answers and who may
call it (anyone: the admin gate, :mod:`sqsemu.security.admin`, lets it through).
"""

from __future__ import annotations

import json

from sqsemu import __version__, compiled
from sqsemu.clock import Clock, ManualClock
from sqsemu.observability.fastlane import FastLaneState

__all__ = ["HEALTH_PATH", "clock_mode", "health_body", "health_document", "package_version"]

HEALTH_PATH = "/health"


def package_version() -> str:
    """The sqsemu version (``sqsemu.__version__``, the version of the installed package: a test keeps the two
    equal). Read from the module, not from the package metadata: ``importlib.metadata`` costs a tenth of the
    start-up."""
    return __version__


def clock_mode(clock: Clock) -> str:
    """``manual`` for a ManualClock, else ``system``."""
    return "manual" if isinstance(clock, ManualClock) else "system"


def health_document(clock: Clock, lane: FastLaneState | None = None) -> dict[str, str]:
    """What ``GET /health`` answers: ``{"status": "ok", "version", "clock", "http_fast_lane", "build"}``;
    ``http_fast_lane`` is ``"on"`` or ``"off: <reason>"`` (``sqsemu.observability.fastlane``), ``build`` the hot path
    compiled or pure (:func:`sqsemu.compiled.status`)."""
    status = lane.status if lane is not None else FastLaneState().status
    return {
        "status": "ok",
        "version": package_version(),
        "clock": clock_mode(clock),
        "http_fast_lane": status,
        "build": compiled.status(),
    }


def health_body(clock: Clock, lane: FastLaneState | None = None) -> bytes:
    """``health_document(clock, lane)`` as the admin app's JSON responses write it (UTF-8, no blanks)."""
    return json.dumps(health_document(clock, lane), ensure_ascii=False, separators=(",", ":")).encode()
