"""``GET /health`` without the admin framework, and the admin app made at its first other request.

The server answers its first ``/health`` (a container's health check, a test harness waiting for the port) before
it has imported Starlette, the admin routes or the web console: :class:`AdminApp` answers ``GET`` and ``HEAD
/health`` itself, and makes the Starlette admin app (:func:`sqsemu.admin.app.admin_app`: the ``/_sqsemu/*``
routes, the console, ``/metrics``) when the first request for anything else arrives. That request pays for the
imports once (tens of milliseconds); the SQS path never needs them.

``/health`` answers ``{"status": "ok", "version": "<sqsemu version>", "clock": "system"|"manual", "http_fast_lane":
"on"|"off: <reason>"}`` (HTTP 200,
``Content-Type: application/json``), the same document and headers the admin app's own ``/health`` route answers
(it serves the requests this shortcut leaves to it: other methods (405) and requests with a body, which the
admin body cap checks). The README's "Options" and "Security" sections list what ``/health`` answers and who may
call it (anyone: the admin gate, :mod:`sqsemu.security.admin`, lets it through).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from sqsemu import __version__
from sqsemu.clock import Clock, ManualClock
from sqsemu.observability.fastlane import FastLaneState

if TYPE_CHECKING:
    from sqsemu.config import Config
    from sqsemu.engine.broker import Broker
    from sqsemu.observability.metrics import Metrics

__all__ = ["HEALTH_PATH", "AdminApp", "clock_mode", "health_document", "package_version"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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
    """What ``GET /health`` answers: ``{"status": "ok", "version", "clock", "http_fast_lane"}``; ``http_fast_lane``
    is ``"on"`` or ``"off: <reason>"`` (``sqsemu.observability.fastlane``)."""
    status = lane.status if lane is not None else FastLaneState().status
    return {"status": "ok", "version": package_version(), "clock": clock_mode(clock), "http_fast_lane": status}


def health_body(clock: Clock, lane: FastLaneState | None = None) -> bytes:
    """``health_document(clock, lane)`` as the admin app's JSON responses write it (UTF-8, no blanks)."""
    return json.dumps(health_document(clock, lane), ensure_ascii=False, separators=(",", ":")).encode()


class AdminApp:
    """The ASGI app behind the admin gate: ``GET``/``HEAD /health`` without a body is answered here; every other
    request goes to the Starlette admin app, made by :func:`~sqsemu.admin.app.admin_app` at the first such request
    (with ``GET /metrics`` when ``metrics`` is given)."""

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
        self.lane = lane if lane is not None else FastLaneState()
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

            extra = [self.metrics.route()] if self.metrics is not None else []
            self._app = admin_app(self.config, self.broker, self.clock, extra, self.lane)
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
