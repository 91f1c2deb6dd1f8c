"""uvicorn's h11 protocol with a request-read deadline: the fallback when httptools is missing.

Without httptools uvicorn serves HTTP/1.1 with the pure-Python h11; the server then caps request heads itself
(``h11_max_incomplete_event_size``, ``sqsemu.server``) but, like uvicorn's httptools protocol, gives a client no
deadline for sending its request. :class:`GuardedH11Protocol` adds the read deadline of ``sqsemu.http.deadline``
(the one implementation, which sqsemu's own protocol uses too: same ``Config.request_timeout``, same ``408 Request
Timeout`` then close): it runs from the connection's opening, and from the first byte of each later request, until
h11 has read the request whole (``their_state`` ``DONE``). A connection that sent nothing is closed without a word;
a request whose answer has begun is not interrupted (handling is not reading: a long poll waits after its request
was read).

It reads h11's public ``Connection.their_state`` and ``our_state`` and uvicorn's ``H11Protocol`` attributes
``conn``, ``loop`` and ``transport`` (checked by ``sqsemu.http.lanecheck.h11_guard_unavailable``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from sqsemu.http.deadline import REQUEST_TIMEOUT_ANSWER, ReadDeadline

__all__ = ["GuardedH11Protocol", "guarded_h11_protocol"]


class GuardedH11Protocol(H11Protocol):
    """``H11Protocol`` plus a request-read deadline (see the module docstring); configure through
    :func:`guarded_h11_protocol`."""

    request_timeout_s: float = 30.0
    """Seconds a client has to send one whole request (head and body)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline = ReadDeadline(self.loop, self.request_timeout_s, _never, self._late)
        self._received = False  # bytes of the request being read have arrived

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._read_deadline.start()

    def connection_lost(self, exc: Exception | None) -> None:
        self._read_deadline.close()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        reading = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        if reading and data:
            self._read_deadline.start()  # the first byte of a request starts its deadline (no-op while one runs)
            self._received = True
        super().data_received(data)
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._read_deadline.stop()  # read whole: handling it is not reading it
            self._received = False

    def _late(self) -> None:
        transport = self.transport
        if transport.is_closing():
            return
        if self._received and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            transport.write(REQUEST_TIMEOUT_ANSWER)
        transport.close()


def _never() -> bool:
    return False


def guarded_h11_protocol(request_timeout_s: float) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` subclass with this deadline (seconds), to pass as ``uvicorn.Config(http=...)``."""
    return type("SqsemuH11Protocol", (GuardedH11Protocol,), {"request_timeout_s": float(request_timeout_s)})
