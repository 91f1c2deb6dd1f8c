"""The Starlette app behind ``/health`` and ``/_sqsemu/*``: one list of routes, gathered from the admin modules and
the web console (``sqsemu.console``, ``/_sqsemu/ui/``, unless ``--no-console``).

Bad admin input answers 400 ``{"error": "..."}`` (``AdminError``); an unknown admin path answers 404; a body over
1 MiB answers 413 (``sqsemu.admin.limits``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sqsemu.admin import clock as clock_routes
from sqsemu.admin import faults as fault_routes
from sqsemu.admin import peek as peek_routes
from sqsemu.admin import realism as realism_routes
from sqsemu.admin.common import AdminError, json_error
from sqsemu.admin.limits import ADMIN_MAX_BODY_BYTES, BodyLimit, client_gone
from sqsemu.clock import Clock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker


@functools.cache
def package_version() -> str:
    """The installed sqsemu version (``0.0.0`` when running from a source tree without metadata); read once per
    process (reading package metadata costs milliseconds, and every app built reads it)."""
    try:
        return version("sqsemu")
    except PackageNotFoundError:
        return "0.0.0"


def admin_app(config: Config, broker: Broker, clock: Clock, extra: Sequence[BaseRoute] = ()) -> Starlette:
    """``GET /health`` → ``{"status": "ok", "version", "clock"}``, every ``/_sqsemu/*`` route, and ``extra`` routes
    (``GET /metrics``)."""
    current_version = package_version()

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": current_version, "clock": clock_routes.clock_mode(clock)})

    async def admin_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, AdminError)
        return json_error(exc.message, exc.status)

    routes: list[BaseRoute] = [Route("/health", health, methods=["GET"])]
    routes += clock_routes.routes(clock)
    routes += fault_routes.routes(fault_routes.injector_for(broker))
    routes += peek_routes.routes(config, broker, clock)
    routes += realism_routes.routes(config, broker)
    if config.console:
        from sqsemu.console.routes import routes as console_routes

        routes += console_routes(config, broker, clock)
    else:

        async def console_off(request: Request) -> Response:
            return json_error("the web console is switched off (--no-console)", 404)

        methods = ["GET", "POST", "PUT", "DELETE"]
        routes += [Route("/_sqsemu/ui", console_off, methods=methods)]
        routes += [Route("/_sqsemu/ui/{rest:path}", console_off, methods=methods)]
    routes += extra
    return Starlette(
        routes=routes,
        middleware=[Middleware(BodyLimit, max_bytes=ADMIN_MAX_BODY_BYTES)],
        exception_handlers={AdminError: admin_error, ClientDisconnect: client_gone},
    )
