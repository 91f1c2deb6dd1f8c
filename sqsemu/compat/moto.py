"""moto's server mode reset: ``POST /moto-api/reset`` (docs/coming-from-moto.md).

moto's server (``moto_server``) answers ``POST /moto-api/reset`` with 200 and ``{"status": "ok"}`` after clearing
every backend's state, and any other method with 400 ``{"Error": "Need to POST to reset Moto"}``; test suites call
it between tests. sqsemu answers the same, with its own full reset underneath
(:func:`sqsemu.admin.peek.reset_server`: every queue of every account and region, with its messages, every SNS
topic with its subscriptions, and every fault rule). Served in every mode, behind the admin gate like ``POST
/_sqsemu/reset`` (``--no-admin`` turns it off, ``--admin-token`` guards it).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from sqsemu.admin.peek import reset_server
from sqsemu.engine.broker import Broker

__all__ = ["RESET_PATH", "routes"]

RESET_PATH = "/moto-api/reset"


def routes(broker: Broker) -> list[BaseRoute]:
    """``POST /moto-api/reset`` → 200 ``{"status": "ok"}`` (everything reset); ``GET``/``PUT``/``DELETE`` → 400
    ``{"Error": "Need to POST to reset Moto"}``, as moto's server answers them."""

    async def reset(request: Request) -> JSONResponse:
        if request.method != "POST":
            return JSONResponse({"Error": "Need to POST to reset Moto"}, status_code=400)
        reset_server(broker, None)
        return JSONResponse({"status": "ok"})

    return [Route(RESET_PATH, reset, methods=["GET", "POST", "PUT", "DELETE"])]
