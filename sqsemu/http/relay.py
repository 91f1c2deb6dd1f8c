"""A connection handed to uvicorn's own httptools protocol: what ``sqsemu.http.sqsprotocol`` does with requests that
are not SQS calls it answers itself (admin, console, ``/metrics``, ``/health``, the Lambda API, browsers, proxies,
``Expect: 100-continue``, large bodies).

From the first such request on, the connection's requests go to a stock ``HttpToolsProtocol`` (the class uvicorn
serves ``http="httptools"`` with), made with the ``config``, ``server_state`` and ``app_state`` uvicorn gave the
connection, passed on unread. It runs the ASGI app (``create_app()``'s, as uvicorn loaded it: behind its
proxy-headers middleware) exactly as it would under plain uvicorn: keep-alive, flow control, ``100 Continue``,
graceful shutdown. sqsemu's protocol stays the transport's protocol: it keeps parsing (its read deadline, head cap
and shutdown rules hold here too) and feeds uvicorn's protocol each request re-serialised.

uvicorn's protocol writes to :class:`_Transport`, the real transport seen through three changes: its writes are
counted (a request that stalls is answered 408 only when no answer has begun), ``pause_reading`` /
``resume_reading`` are noted (a connection the server stopped reading is not timed out), and the response head of an
SQS call names its request id ``x-amzn-RequestId``, as AWS spells it (Developer Guide, "Interpreting Amazon SQS JSON
API responses") and as sqsemu's own protocol writes it; uvicorn writes header names in lower case.

What this reads of uvicorn: the class ``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol``, its constructor's
keywords and the ``asyncio.Protocol`` methods; checked at start-up by ``sqsemu.http.lanecheck``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["UvicornRelay", "make_relay"]


class _Transport:
    """The connection's transport as uvicorn's protocol sees it (see the module docstring)."""

    __slots__ = ("_transport", "paused", "written")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self.paused = False
        self.written = 0

    def write(self, data: bytes) -> None:
        if data.startswith(b"HTTP/1.1 "):
            data = data.replace(b"\r\nx-amzn-requestid: ", b"\r\nx-amzn-RequestId: ", 1)
        self.written += 1
        self._transport.write(data)

    def pause_reading(self) -> None:
        self.paused = True
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self.paused = False
        self._transport.resume_reading()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class UvicornRelay:
    """uvicorn's httptools protocol serving the rest of one connection (``sqsemu.http.sqsprotocol.Relay``)."""

    __slots__ = ("_protocol", "_transport")

    def __init__(self, protocol: asyncio.Protocol, transport: _Transport) -> None:
        self._protocol = protocol
        self._transport = transport

    def feed(self, data: bytes) -> None:
        self._protocol.data_received(data)

    def lost(self, exc: Exception | None) -> None:
        self._protocol.connection_lost(exc)

    def pause_writing(self) -> None:
        self._protocol.pause_writing()

    def resume_writing(self) -> None:
        self._protocol.resume_writing()

    def paused(self) -> bool:
        return self._transport.paused

    def written(self) -> int:
        return self._transport.written


def make_relay(
    config: Any, server_state: Any, app_state: Any, loop: asyncio.AbstractEventLoop, transport: asyncio.Transport
) -> UvicornRelay:
    """uvicorn's httptools protocol for the rest of the connection on ``transport`` (uvicorn's per-connection
    arguments passed through unread)."""
    seen = _Transport(transport)
    protocol = HttpToolsProtocol(config=config, server_state=server_state, app_state=app_state, _loop=loop)
    protocol.connection_made(seen)  # type: ignore[arg-type]
    return UvicornRelay(protocol, seen)
