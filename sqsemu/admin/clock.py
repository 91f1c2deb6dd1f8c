"""Clock control: ``GET /_sqsemu/clock`` and ``POST /_sqsemu/clock/advance``.

- ``GET /_sqsemu/clock`` → ``{"now_ms": <epoch ms>, "mode": "system"|"manual"}``
- ``POST /_sqsemu/clock/advance`` with ``{"seconds": <number >= 0>}`` → moves a ManualClock forward, firing every
  timer that falls due in deadline order (visibility expiry, delays, retention, move tasks, long-poll timeouts),
  and answers ``{"now_ms", "mode"}``. With the system clock, or bad input: 400 ``{"error": ...}``; bad input
  includes an advance of more than 10 years (``sqsemu.clock.MAX_ADVANCE_S``) and one that would move the clock past
  9999-12-31T23:59:59.999Z (``sqsemu.clock.MAX_TIME_MS``).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from sqsemu.admin.common import json_error, json_object
from sqsemu.clock import Clock, ManualClock


def clock_mode(clock: Clock) -> str:
    """``manual`` for a ManualClock, else ``system``."""
    return "manual" if isinstance(clock, ManualClock) else "system"


def routes(clock: Clock) -> list[BaseRoute]:
    """The clock routes for ``clock``."""

    async def now(request: Request) -> JSONResponse:
        return JSONResponse({"now_ms": clock.now_ms(), "mode": clock_mode(clock)})

    async def advance(request: Request) -> JSONResponse:
        if not isinstance(clock, ManualClock):
            return json_error("the server clock is not manual (start sqsemu with --clock manual to advance time)")
        data = await json_object(request, '{"seconds": 30}')
        seconds = data.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            return json_error('"seconds" must be a number')
        try:
            now_ms = clock.advance(seconds)  # bounds: sqsemu.clock.MAX_ADVANCE_S per call, MAX_TIME_MS in all
        except ValueError as exc:
            return json_error(str(exc))
        return JSONResponse({"now_ms": now_ms, "mode": "manual"})

    return [
        Route("/_sqsemu/clock", now, methods=["GET"]),
        Route("/_sqsemu/clock/advance", advance, methods=["POST"]),
    ]
