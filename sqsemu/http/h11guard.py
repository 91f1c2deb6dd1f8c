"""uvicorn's h11 protocol with a request-read deadline: the fallback when httptools is missing.

Without httptools uvicorn serves HTTP/1.1 with the pure-Python h11; the server then caps request heads itself
(``h11_max_incomplete_event_size``, ``sqsemu.server``) but, like uvicorn's httptools protocol, gives a client no
deadline for sending its request. :class:`GuardedH11Protocol` adds the deadline of ``sqsemu.http.protocol`` (same
``Config.request_timeout``, same ``408 Request Timeout`` then close): it runs from the connection's opening, and
from the first byte of each later request, until h11 has read the request whole (``their_state`` ``DONE``). One
``loop.call_at`` timer per connection; when it fires early it moves on to the current deadline. A connection that
sent nothing is closed without a word; a request whose answer has begun is not interrupted (handling is not
reading: a long poll waits after its request was read).

It reads h11's public ``Connection.their_state`` and ``our_state`` and uvicorn's ``H11Protocol`` attributes
``conn``, ``loop`` and ``transport`` (checked by ``sqsemu.http.lanecheck.h11_guard_unavailable``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["GuardedH11Protocol", "guarded_h11_protocol"]

_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 15\r\n"
    b"connection: close\r\n\r\nRequest Timeout"
)


class GuardedH11Protocol(H11Protocol):
    """``H11Protocol`` plus a request-read deadline (see the module docstring); configure through
    :func:`guarded_h11_protocol`."""

    request_timeout_s: float = 30.0
    """Seconds a client has to send one whole request (head and body)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: float | None = None  # loop time by which the request being read must be complete
        self._read_timer: asyncio.TimerHandle | None = None
        self._received = False  # bytes of the request being read have arrived

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.time() + self.request_timeout_s
            if self._read_timer is None:
                self._read_timer = self.loop.call_at(self._deadline, self._read_timed_out)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline = None
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        reading = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        if reading and data:
            self._arm()  # the first byte of a request starts its deadline (no-op while one runs)
            self._received = True
        super().data_received(data)
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._deadline = None  # read whole: handling it is not reading it
            self._received = False

    def _read_timed_out(self) -> None:
        self._read_timer = None
        deadline = self._deadline
        transport = self.transport
        if deadline is None or transport.is_closing():
            return
        now = self.loop.time()
        if now < deadline:
            self._read_timer = self.loop.call_at(deadline, self._read_timed_out)
            return
        self._deadline = None
        if self._received and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            transport.write(_REQUEST_TIMEOUT)
        transport.close()


def guarded_h11_protocol(request_timeout_s: float) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` subclass with this deadline (seconds), to pass as ``uvicorn.Config(http=...)``."""
    return type("SqsemuH11Protocol", (GuardedH11Protocol,), {"request_timeout_s": float(request_timeout_s)})
