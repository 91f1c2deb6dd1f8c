"""The Starlette app behind ``/health`` and ``/_sqsemu/*``: one list of routes, gathered from the admin modules, plus
the routes it is given (the web console's ``/_sqsemu/ui/`` and ``GET /metrics``, which the caller mounts: the admin
layer does not import the console, which calls it). The server makes it at its first admin request
(:class:`sqsemu.http.adminapp.AdminApp`, which answers ``GET /health`` until then and after).

Bad admin input answers 400 ``{"error": "..."}`` (``AdminError``); an unknown admin path answers 404; a body over
1 MiB answers 413 (``sqsemu.admin.limits``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sqsemu.admin import clock as clock_routes
from sqsemu.admin import faults as fault_routes
from sqsemu.admin import peek as peek_routes
from sqsemu.admin import realism as realism_routes
from sqsemu.admin import snssettle as sns_settle_routes
from sqsemu.admin.common import AdminError, json_error
from sqsemu.admin.health import health_document
from sqsemu.admin.limits import ADMIN_MAX_BODY_BYTES, BodyLimit, client_gone
from sqsemu.clock import Clock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.observability.fastlane import FastLaneState

__all__ = ["admin_app"]


def admin_app(
    config: Config,
    broker: Broker,
    clock: Clock,
    extra: Sequence[BaseRoute] = (),
    lane: FastLaneState | None = None,
    body_limits: Mapping[str, int] | None = None,
) -> Starlette:
    """``GET /health`` → ``{"status": "ok", "version", "clock", "http_fast_lane"}`` (``lane``: the server's fast
    lane), every ``/_sqsemu/*`` route, and ``extra`` routes (the console's, ``GET /metrics``). With ``--no-console``
    the console's paths answer 404 ``{"error": ...}``. Request bodies are capped at ``ADMIN_MAX_BODY_BYTES``,
    except on the paths of ``body_limits`` (path: bytes)."""

    async def health(request: Request) -> JSONResponse:
        return JSONResponse(health_document(clock, lane))

    async def admin_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, AdminError)
        return json_error(exc.message, exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        """Starlette's own refusals (no such route: 404; a method the route does not take: 405, with its
        ``Allow`` header) as ``{"error": ...}`` like every other admin answer, not plain text."""
        assert isinstance(exc, HTTPException)
        response = json_error(exc.detail, exc.status_code)
        response.headers.update(exc.headers or {})
        return response

    routes: list[BaseRoute] = [Route("/health", health, methods=["GET"])]
    routes += clock_routes.routes(clock)
    routes += fault_routes.routes(fault_routes.injector_for(broker))
    routes += peek_routes.routes(config, broker, clock)
    routes += realism_routes.routes(config, broker)
    routes += sns_settle_routes.routes(broker)
    if not config.console:

        async def console_off(request: Request) -> Response:
            return json_error("the web console is switched off (--no-console)", 404)

        methods = ["GET", "POST", "PUT", "DELETE"]
        routes += [Route("/_sqsemu/ui", console_off, methods=methods)]
        routes += [Route("/_sqsemu/ui/{rest:path}", console_off, methods=methods)]
    routes += extra
    return Starlette(
        routes=routes,
        middleware=[Middleware(BodyLimit, max_bytes=ADMIN_MAX_BODY_BYTES, larger=body_limits)],
        exception_handlers={AdminError: admin_error, ClientDisconnect: client_gone, HTTPException: http_error},
    )
