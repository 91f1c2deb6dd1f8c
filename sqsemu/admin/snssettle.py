"""Wait for SNS deliveries: ``POST /_sqsemu/sns/settle``.

SNS delivers a published message after Publish is answered (the server's next event-loop turn,
:mod:`sqsemu.sns.fanout`), as AWS does. A test that publishes and then reads a queue from the same thread sees the
delivery, since the loop runs it before it reads that next request; a test that looks elsewhere first (a peek from
another thread, a count, a recorded e-mail) can wait for it here instead of sleeping:

- ``POST /_sqsemu/sns/settle`` with ``{}`` or ``{"timeout": <seconds>}`` (a number from 0 to 300, default 10: real
  seconds, whatever the server clock) → ``{"settled": true}`` once every message published so far has been handed
  to its subscriptions (in their SQS queues, or to their HTTP/S and Lambda deliveries, or recorded); HTTP 504
  ``{"error": ...}`` when that takes longer than ``timeout``. Other keys or a bad timeout → 400.

Behind the admin gate like every ``/_sqsemu/*`` route. ``SQSServer.sns_settle()`` (sqsemu.testing) calls it.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from sqsemu.admin.common import AdminError, json_object
from sqsemu.engine.broker import Broker

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_TIMEOUT_S", "SETTLE_PATH", "routes"]

SETTLE_PATH = "/_sqsemu/sns/settle"
DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 300.0


def _timeout(value: object) -> float:
    """The ``timeout`` field: a number of seconds from 0 to :data:`MAX_TIMEOUT_S`; raises ``AdminError``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_TIMEOUT_S:
        raise AdminError(f'"timeout" must be a number of seconds from 0 to {MAX_TIMEOUT_S:g}, got {value!r}')
    return float(value)


def routes(broker: Broker) -> list[BaseRoute]:
    """The settle route of the server whose broker is ``broker`` (its SNS is found through the broker)."""

    async def settle(request: Request) -> JSONResponse:
        data = await json_object(request, '{} or {"timeout": 10}')
        unknown = sorted(set(data) - {"timeout"})
        if unknown:
            raise AdminError(f'unknown field(s) {", ".join(unknown)}: the body is {{}} or {{"timeout": <seconds>}}')
        timeout = _timeout(data.get("timeout", DEFAULT_TIMEOUT_S))
        from sqsemu.sns.layer import sns_for

        sns = sns_for(broker)
        if sns is not None and (timeout > 0 or not sns.push.quiet()):  # 0: quiet now, or not
            try:
                async with asyncio.timeout(timeout):
                    await sns.push.settle(timeout + 1)  # pushes under way included
            except TimeoutError:
                raise AdminError(f"SNS deliveries were still under way after {timeout:g} s", 504) from None
        return JSONResponse({"settled": True})

    return [Route(SETTLE_PATH, settle, methods=["POST"])]
