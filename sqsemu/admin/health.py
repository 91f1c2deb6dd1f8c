"""``GET /health`` without the admin framework, and the admin app made at its first other request.

The server answers its first ``/health`` (a container's health check, a test harness waiting for the port) before
it has imported Starlette, the admin routes or the web console: :class:`AdminApp` answers ``GET`` and ``HEAD
/health`` itself, and makes the Starlette admin app (:func:`sqsemu.admin.app.admin_app`: the ``/_sqsemu/*``
routes, the console, ``/metrics``) when the first request for anything else arrives. That request pays for the
imports once (tens of milliseconds); the SQS path never needs them.

``/health`` answers ``{"status": "ok", "version": "<sqsemu version>", "clock": "system"|"manual", "build": "compiled
(mypyc)"|"pure Python: <reason>"}`` (HTTP 200, ``build`` from :func:`sqsemu.compiled.status`,
``Content-Type: application/json``), the same document and headers the admin app's own ``/health`` route answers
(it serves the requests this shortcut leaves to it: other methods (405) and requests with a body, which the
admin body cap checks). The README's "Options" and "Security" sections list what ``/health`` answers and who may
call it (anyone: the admin gate, :mod:`sqsemu.security.admin`, lets it through).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from sqsemu import __version__, compiled
from sqsemu.clock import Clock, ManualClock

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


def health_document(clock: Clock) -> dict[str, str]:
    """What ``GET /health`` answers: ``{"status": "ok", "version", "clock", "build"}`` (``build``: the hot path
    compiled or pure, :func:`sqsemu.compiled.status`)."""
    return {"status": "ok", "version": package_version(), "clock": clock_mode(clock), "build": compiled.status()}


def health_body(clock: Clock) -> bytes:
    """``health_document(clock)`` as the admin app's JSON responses write it (UTF-8, no blanks)."""
    return json.dumps(health_document(clock), ensure_ascii=False, separators=(",", ":")).encode()


class AdminApp:
    """The ASGI app behind the admin gate: ``GET``/``HEAD /health`` without a body is answered here; every other
    request goes to the Starlette admin app, made by :func:`~sqsemu.admin.app.admin_app` at the first such request
    (with ``GET /metrics`` when ``metrics`` is given)."""

    def __init__(self, config: Config, broker: Broker, clock: Clock, metrics: Metrics | None = None) -> None:
        self.config = config
        self.broker = broker
        self.clock = clock
        self.metrics = metrics
        self._app: ASGIApp | None = None
        body = health_body(clock)  # the clock's kind, the version and the build never change
        self._health_headers = ((b"content-length", str(len(body)).encode()), (b"content-type", b"application/json"))
        self._health_body = body

    @property
    def app(self) -> ASGIApp:
        """The Starlette admin app (made now if it was not yet)."""
        if self._app is None:
            from sqsemu.admin.app import admin_app

            extra = [self.metrics.route()] if self.metrics is not None else []
            self._app = admin_app(self.config, self.broker, self.clock, extra)
        return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == HEALTH_PATH and scope["method"] in ("GET", "HEAD") and not _has_body(scope):
            await send({"type": "http.response.start", "status": 200, "headers": list(self._health_headers)})
            await send({"type": "http.response.body", "body": self._health_body})
            return
        await self.app(scope, receive, send)


def _has_body(scope: Scope) -> bool:
    """Whether the request announces a body (a non-zero ``Content-Length`` or a ``Transfer-Encoding``)."""
    for name, value in scope["headers"]:
        if (name == b"content-length" and value.strip() != b"0") or name == b"transfer-encoding":
            return True
    return False
