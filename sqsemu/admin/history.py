"""``GET /_sqsemu/queues/{account}/{name}/history[?region=...]``: a queue's last 15 minutes, sampled every 10 seconds
on the server's clock (:mod:`sqsemu.observability.history`), as JSON; the web console draws the same series.

The answer is :meth:`~sqsemu.observability.history.QueueHistory.series` plus the queue itself (as the peek route
gives it): ``{"queue": <queue>, "interval_seconds": 10, "window_seconds": 900, "now_ms", "rates": bool,
"samples": [...]}``. Bad account id or region → 400; no such queue → 404 (``{"error": ...}``, as every admin route).
Documented in docs/console.md, "Charts".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqsemu.admin.common import AdminError
from sqsemu.admin.peek import check_account, queue_view
from sqsemu.clock import Clock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.errors import QueueDoesNotExist
from sqsemu.observability.history import QueueHistory
from sqsemu.protocol.urls import url_base

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import BaseRoute

__all__ = ["routes"]


def routes(config: Config, broker: Broker, clock: Clock, history: QueueHistory) -> list[BaseRoute]:
    """The history route of ``history``'s queues."""
    from starlette.responses import JSONResponse  # imported with the admin app, at its first request
    from starlette.routing import Route

    async def queue_history(request: Request) -> JSONResponse:
        account = check_account(request.path_params["account"])
        region = request.query_params.get("region", config.region)
        if not region or "/" in region:
            raise AdminError(f'"region" must be a region name like us-east-1, got {region!r}')
        name = request.path_params["name"]
        ns = Namespace(account, region)
        try:
            queue = broker.get_queue(ns, name)
        except QueueDoesNotExist:
            raise AdminError(f"queue {name!r} does not exist in account {account} region {region}", 404) from None
        base = url_base(config, request.url.scheme, request.headers.get("host"))
        now_ms = clock.now_ms()
        return JSONResponse({"queue": queue_view(queue, base, now_ms), **history.series(queue, now_ms)})

    return [Route("/_sqsemu/queues/{account}/{name}/history", queue_history, methods=["GET"])]
