"""The admin routes' body cap: ``/_sqsemu/*`` reads at most :data:`ADMIN_MAX_BODY_BYTES` (1 MiB), except the paths
given a cap of their own (``POST /_sqsemu/state``: a whole saved state, ``sqsemu.state.routes``).

:class:`BodyLimit` is a pure ASGI middleware of the admin Starlette app. A request whose ``Content-Length`` is over
the cap (however many digits it has) is answered ``413 {"error": ...}`` at once, before any of its body is read (a
client waiting for ``100 Continue`` sends none: the server sends ``100 Continue`` only once the app reads the body,
``sqsemu.http.cycle``). A body without a length (chunked) is counted as it is read, and the read that takes it over
the cap raises ``AdminError(..., 413)``, answered like every other admin error; at most the cap plus one read is held
in memory. The rest of an over-cap body is not stored: after an answer given before its request was read whole, the
server reads and drops the rest of the body (at most 64 MiB, within the read deadline) and serves the next request,
or, for a longer body or a client still waiting for ``100 Continue``, answers ``connection: close`` and closes
(``sqsemu.http.cycle``, RFC 9110 10.1.1). A client that disconnects in the middle of its body is not an error
(nothing is answered, nothing is logged).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from sqsemu.admin.common import AdminError, json_error

__all__ = ["ADMIN_MAX_BODY_BYTES", "BodyLimit", "client_gone", "declared_over"]

ADMIN_MAX_BODY_BYTES = 1024 * 1024
"""Largest request body of an admin route (``/_sqsemu/*``), in bytes."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def declared_over(content_length: bytes, max_bytes: int) -> bool:
    """Whether a ``Content-Length`` value (the header's bytes) declares more than ``max_bytes`` bytes. Only ASCII
    digits (blanks around them allowed) declare a length; any number of digits is read without ``int()`` of more
    than 19 of them (Python refuses to convert over 4,300 digits, and a value that long is over any cap anyway)."""
    digits = content_length.strip()
    if not digits.isdigit():
        return False
    significant = digits.lstrip(b"0")
    return len(significant) > 19 or (bool(significant) and int(significant) > max_bytes)


def _too_large(max_bytes: int) -> str:
    return f"the request body must not be larger than {max_bytes} bytes"


class BodyLimit:
    """ASGI middleware answering 413 to a request body over ``max_bytes`` (bytes) without reading it whole;
    ``larger`` gives the paths that take more their own cap (``POST /_sqsemu/state``: a whole saved state)."""

    def __init__(self, app: ASGIApp, max_bytes: int, larger: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        max_bytes = self.larger.get(scope["path"], self.max_bytes) if self.larger else self.max_bytes
        for name, value in scope["headers"]:
            if name == b"content-length":
                if declared_over(value, max_bytes):
                    await json_error(_too_large(max_bytes), 413)(scope, receive, send)
                    return
                break
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > max_bytes:
                    raise AdminError(_too_large(max_bytes), 413)
            return message

        await self.app(scope, counted, send)


async def client_gone(request: Request, exc: Exception) -> Response:
    """Exception handler for ``ClientDisconnect``: the client left while its body was read; the answer goes
    nowhere (uvicorn drops writes to a closed connection)."""
    assert isinstance(exc, ClientDisconnect)
    return Response(status_code=400)
