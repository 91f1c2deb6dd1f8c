"""The admin side of the server, made at its first request: ``GET /health`` answered without the admin framework,
everything else by the Starlette admin app with the web console and ``/metrics`` mounted in it.

The server answers its first ``/health`` (a container's health check, a test harness waiting for the port) before
it has imported Starlette, the admin routes or the web console: :class:`AdminApp` answers ``GET`` and ``HEAD
/health`` itself, and makes the Starlette admin app (:func:`sqsemu.admin.app.admin_app`: the ``/_sqsemu/*``
routes) with the console's routes (:mod:`sqsemu.console.routes`, unless ``--no-console``), ``GET /metrics`` and
the other emulators' routes (:mod:`sqsemu.compat`: moto's reset always, LocalStack's with ``--compat localstack``)
when the first request for anything else arrives. That request pays for the imports once (tens of
milliseconds); the SQS path never needs them. The console's templates and static files are read earlier, when
the :class:`AdminApp` is made (:mod:`sqsemu.console.assets`, the standard library only): a running server never
reads them from disk, so an install that moves the package folder under it leaves its console working.

This module sits above both the admin layer and the console (docs/architecture.md, "Layers"): the console calls the
admin functions, the admin app knows nothing of the console, and this module puts the two together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from sqsemu.admin.health import HEALTH_PATH, health_body
from sqsemu.clock import Clock
from sqsemu.observability.fastlane import FastLaneState
from sqsemu.observability.history import QueueHistory

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from sqsemu.config import Config
    from sqsemu.console.assets import Assets
    from sqsemu.engine.broker import Broker
    from sqsemu.observability.metrics import Metrics
    from sqsemu.persistence import Store
    from sqsemu.security.console import ConsoleSession
    from sqsemu.sns.api import SNS

__all__ = ["AdminApp"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class AdminApp:
    """The ASGI app behind the admin gate: ``GET``/``HEAD /health`` without a body is answered here; every other
    request goes to the Starlette admin app, made by :func:`~sqsemu.admin.app.admin_app` at the first such request
    (with the console's routes unless ``--no-console``, and ``GET /metrics`` when ``metrics`` is given)."""

    def __init__(
        self,
        config: Config,
        broker: Broker,
        clock: Clock,
        metrics: Metrics | None = None,
        lane: FastLaneState | None = None,
    ) -> None:
        self.config = config
        self.broker = broker
        self.clock = clock
        self.metrics = metrics
        # The console's charts and GET /_sqsemu/queues/{account}/{name}/history: sampled from the start, on the
        # server's clock, from what the metrics count (sqsemu.observability.history). With --no-metrics nothing is
        # counted and nothing subscribes to the engine's events: no history either.
        self.history: QueueHistory | None = None
        if config.admin and metrics is not None:
            self.history = QueueHistory(broker, metrics.queues)
            self.history.start()
        self.lane = lane if lane is not None else FastLaneState()
        self.more_routes: list[BaseRoute] = []  # routes of other parts (--auth iam's POST /_sqsemu/authorize)
        self.authorize: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None  # --auth iam: the console's try
        self.console_session: ConsoleSession | None = None  # --admin-token: the gate's sessions (sqsemu.http.app)
        self.sns: SNS | None = None  # the server's SNS (sqsemu.http.app): /_sqsemu/sns/* and the console's topics
        self.store: Store | None = None  # durable mode's store (sqsemu.http.app): a loaded state is recorded in it
        self.console_assets: Assets | None = None
        if config.console:  # its templates and static files, read now: an install may move the package folder later
            from sqsemu.console.assets import load_assets

            self.console_assets = load_assets()
        self._app: ASGIApp | None = None
        self._health_lane = ""  # the fast lane's status the body below was made for (it is set once, at start)
        self._health_headers: tuple[tuple[bytes, bytes], ...] = ()
        self._health_body = b""

    def _health(self) -> tuple[tuple[tuple[bytes, bytes], ...], bytes]:
        """The headers and body of ``GET /health`` (made again only when the fast lane's status changed)."""
        if self._health_lane != self.lane.status:
            self._health_lane = self.lane.status
            body = health_body(self.clock, self.lane)  # the clock's kind and the version never change
            self._health_body = body
            self._health_headers = (
                (b"content-length", str(len(body)).encode()),
                (b"content-type", b"application/json"),
            )
        return self._health_headers, self._health_body

    @property
    def app(self) -> ASGIApp:
        """The Starlette admin app (made now if it was not yet)."""
        if self._app is None:
            from sqsemu.admin.app import admin_app
            from sqsemu.compat import localstack, moto

            extra: list[BaseRoute] = moto.routes(self.broker)  # POST /moto-api/reset, in every mode
            if self.config.compat == "localstack":
                extra += localstack.routes(self.config, self.broker)
            else:
                extra += localstack.off_routes()
            if self.sns is not None:
                from sqsemu.admin.sns import routes as sns_routes

                extra += sns_routes(self.sns)
            if self.history is not None:
                from sqsemu.admin.history import routes as history_routes

                extra += history_routes(self.config, self.broker, self.clock, self.history)
            if self.console_assets is not None:
                from sqsemu.console.routes import routes as console_routes

                extra += console_routes(
                    self.config,
                    self.broker,
                    self.clock,
                    self.history,
                    self.authorize,
                    assets=self.console_assets,
                    session=self.console_session,
                    sns=self.sns,
                )
            if self.metrics is not None:
                extra.append(self.metrics.route())
            from sqsemu.state.routes import STATE_MAX_BODY_BYTES, STATE_PATH, StateRoutes

            extra += StateRoutes(self.config, self.broker, self.store).routes()  # GET/POST /_sqsemu/state
            extra += self.more_routes
            limits = {STATE_PATH: STATE_MAX_BODY_BYTES}
            self._app = admin_app(self.config, self.broker, self.clock, extra, self.lane, limits)
        return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == HEALTH_PATH and scope["method"] in ("GET", "HEAD") and not _has_body(scope):
            headers, body = self._health()
            await send({"type": "http.response.start", "status": 200, "headers": list(headers)})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def _has_body(scope: Scope) -> bool:
    """Whether the request announces a body (a non-zero ``Content-Length`` or a ``Transfer-Encoding``)."""
    for name, value in scope["headers"]:
        if (name == b"content-length" and value.strip() != b"0") or name == b"transfer-encoding":
            return True
    return False
