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

from sqsemu.admin.common import AdminError, json_object
from sqsemu.admin.health import clock_mode
from sqsemu.clock import Clock, ManualClock

__all__ = ["NOT_MANUAL", "advance_clock", "clock_mode", "routes"]

NOT_MANUAL = "the server clock is not manual (start sqsemu with --clock manual to advance time)"


def advance_clock(clock: Clock, seconds: object) -> int:
    """Move the manual ``clock`` forward by ``seconds`` (a number >= 0), firing every timer that falls due; returns
    the new time in epoch ms. Raises ``AdminError`` (400) for the system clock or a bad amount.

    The one implementation of "advance the clock": the admin route and the web console both call it.
    """
    if not isinstance(clock, ManualClock):
        raise AdminError(NOT_MANUAL)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise AdminError('"seconds" must be a number')
    try:
        return clock.advance(seconds)  # bounds: sqsemu.clock.MAX_ADVANCE_S per call, MAX_TIME_MS in all
    except ValueError as exc:
        raise AdminError(str(exc)) from None


def routes(clock: Clock) -> list[BaseRoute]:
    """The clock routes for ``clock``."""

    async def now(request: Request) -> JSONResponse:
        return JSONResponse({"now_ms": clock.now_ms(), "mode": clock_mode(clock)})

    async def advance(request: Request) -> JSONResponse:
        if not isinstance(clock, ManualClock):
            raise AdminError(NOT_MANUAL)  # before reading the body, whatever it holds
        data = await json_object(request, '{"seconds": 30}')
        return JSONResponse({"now_ms": advance_clock(clock, data.get("seconds")), "mode": "manual"})

    return [
        Route("/_sqsemu/clock", now, methods=["GET"]),
        Route("/_sqsemu/clock/advance", advance, methods=["POST"]),
    ]
