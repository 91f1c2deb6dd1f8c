"""The gate in front of ``/health``, ``/metrics`` and the ``/_sqsemu/*`` admin routes (clock, peek, reset, faults).

:class:`AdminGate` wraps the admin ASGI app and answers, in this order, before the app sees the request:

1. ``--no-admin`` (``Config.admin`` False): every ``/_sqsemu/*`` path is 404 ``{"error": ...}``; ``/health`` stays,
   and so do LocalStack's read-only ``/_localstack/health`` and ``/_localstack/init`` (``--compat localstack``),
   which are treated like ``/health`` by every rule below, as is the SNS signing certificate
   (``/_sqsemu/sns/SimpleNotificationService-<hash>.pem``, the ``SigningCertURL`` of what SNS sends: public, as
   AWS's is, since subscribers' SDK validators fetch it without a token; :mod:`sqsemu.admin.sns`). moto's
   ``/moto-api/reset`` and LocalStack's ``/_aws/sqs/messages`` are admin routes.
   ``--no-metrics`` (``Config.metrics`` False): ``/metrics`` is 404 likewise. Otherwise ``/metrics`` is guarded
   like an admin route by the rules below (``--no-admin`` leaves it on): a scraper sends no browser headers.
2. A Host header that is not a valid ``host[:port]`` (unless ``--base-url`` is set; :mod:`sqsemu.security.host`):
   400 (the peek routes build queue URLs from it).
3. A cross-site browser request (:mod:`sqsemu.security.crosssite`): 403 on ``/_sqsemu/*`` and ``/metrics``;
   ``/health`` answers anyway (it changes nothing and tells only the version). An allowed origin's preflight is
   answered 200 here, and its other requests get the CORS headers.
4. ``--admin-token`` set: ``/_sqsemu/*`` and ``/metrics`` need the ``X-Sqsemu-Admin-Token`` header: missing is
   401, different is 403 (compared with ``hmac.compare_digest``); ``/health`` needs none. The web console
   (``/_sqsemu/ui``) also takes the cookie of an open session instead of the header (12 hours from its login, ended
   by logout; :mod:`sqsemu.security.console`), and sends a browser without either to its login form; its login
   form, logout and static files need neither.

Every refusal is ``{"error": "<why>"}`` with ``Content-Type: application/json``, like the admin routes' own errors.
The testing API (:class:`sqsemu.testing.SQSServer`) sends the token of its configuration.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from sqsemu.config import Config
from sqsemu.observability import METRICS_PATH
from sqsemu.security.console import ConsoleSession, is_console_path, login_redirect, open_console_path
from sqsemu.security.crosssite import ADMIN_METHODS, CrossSitePolicy, Header
from sqsemu.security.errors import CrossSiteRefused
from sqsemu.security.host import valid_host

__all__ = ["ADMIN_TOKEN_HEADER", "SNS_CERT_PREFIX", "AdminGate"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ADMIN_TOKEN_HEADER = "X-Sqsemu-Admin-Token"
SNS_CERT_PREFIX = "/_sqsemu/sns/SimpleNotificationService-"
"""Where the SNS signing certificate is served (sqsemu.sns.signing names it
``SimpleNotificationService-<hash>.pem``)."""
_OPEN_PREFIXES = ("/_localstack/health", "/_localstack/init", SNS_CERT_PREFIX)
"""LocalStack's read-only status routes (--compat localstack, sqsemu.compat.localstack) and the SNS signing
certificate: open like /health, since the clients that read them (pollers, subscribers' message validators) send no
admin token."""
_TOKEN = ADMIN_TOKEN_HEADER.lower().encode()


async def _json_answer(send: Send, status: int, message: str, extra: list[Header] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


class AdminGate:
    """ASGI wrapper of the admin app ``app`` enforcing the rules of the module docstring for ``config``."""

    def __init__(self, config: Config, app: ASGIApp, cross_site: CrossSitePolicy) -> None:
        self.app = app
        self.enabled = config.admin
        self.metrics = config.metrics
        self.token = config.admin_token.encode() if config.admin_token else None
        self.check_host = not config.base_url
        self.cross_site = cross_site
        # the console's sessions: checked here, opened and ended by the console's login and logout (sqsemu.http.app)
        self.console = ConsoleSession(config.admin_token) if config.admin_token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        is_admin = path != "/health" and not path.startswith(_OPEN_PREFIXES)
        if path == METRICS_PATH:
            if not self.metrics:
                await _json_answer(send, 404, "the metrics are switched off (--no-metrics)")
                return
        elif is_admin and not self.enabled:
            await _json_answer(send, 404, "the admin routes are switched off (--no-admin)")
            return
        origin = fetch_site = token = cookie = None
        host: str | None = None
        for name, value in scope["headers"]:
            if name == b"origin":
                origin = value
            elif name == b"sec-fetch-site":
                fetch_site = value
            elif name == b"host":
                host = value.decode("latin-1")
            elif name == _TOKEN:
                token = value
            elif name == b"cookie":
                cookie = value
        if host is not None and self.check_host and not valid_host(host):
            shown = host if len(host) <= 100 else host[:100] + "..."
            await _json_answer(send, 400, f"the Host header {shown!r} is not a valid host[:port]")
            return
        cors: list[Header] = []
        if origin is not None or fetch_site is not None:
            try:
                cors = self.cross_site.decide(origin, fetch_site, scope.get("scheme", "http"), host)
            except CrossSiteRefused as refused:
                if is_admin:
                    await _json_answer(send, 403, refused.message)
                    return
            if cors and scope["method"] == "OPTIONS":
                preflight = self.cross_site.preflight(scope["headers"], cors, ADMIN_METHODS)
                if preflight is not None:
                    await send({"type": "http.response.start", "status": 200, "headers": preflight})
                    await send({"type": "http.response.body", "body": b""})
                    return
        if is_admin and self.token is not None and self.console is not None and is_console_path(scope["path"]):
            if not await self._console_allowed(scope, send, token, cookie, cors):
                return
        elif is_admin and self.token is not None:
            if token is None:
                await _json_answer(
                    send, 401, f"the admin routes need the admin token in the {ADMIN_TOKEN_HEADER} header", cors
                )
                return
            if not hmac.compare_digest(token, self.token):
                await _json_answer(send, 403, f"the {ADMIN_TOKEN_HEADER} header is not the admin token", cors)
                return
        if cors:
            send = _with_headers(send, cors)
        await self.app(scope, receive, send)

    async def _console_allowed(
        self, scope: Scope, send: Send, token: bytes | None, cookie: bytes | None, cors: list[Header]
    ) -> bool:
        """Whether a console request may go on (token header, session cookie, or an open path); else answers it:
        a page request is sent to the login form (303), anything else is refused (401)."""
        assert self.token is not None and self.console is not None
        path: str = scope["path"]
        if token is not None and hmac.compare_digest(token, self.token):
            return True
        if self.console.cookie_matches(cookie) or open_console_path(path):
            return True
        if scope["method"] in ("GET", "HEAD"):
            location = login_redirect(path, scope.get("query_string", b"").decode("latin-1"))
            headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0"), *cors]
            await send({"type": "http.response.start", "status": 303, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return False
        await _json_answer(send, 401, "the console needs the admin token: log in at /_sqsemu/ui/login", cors)
        return False


def _with_headers(send: Send, extra: list[Header]) -> Send:
    """``send`` adding ``extra`` headers to the response start."""

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return send_with_headers
