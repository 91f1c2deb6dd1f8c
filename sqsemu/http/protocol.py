"""uvicorn's httptools HTTP/1.1 protocol with a request-read deadline, a cap on request heads and a prompt shutdown.

uvicorn (0.29 - 0.54 at least) gives a connection no deadline for sending its request: a client that sends its
head one byte every few seconds, or a body shorter than its ``Content-Length``, keeps its connection (and a file
descriptor) for ever; and it buffers a request head of any size, re-joining the bytes received so far on every
read, so a huge head costs CPU roughly quadratic in its size while every other client waits. uvicorn builds one
protocol object per connection from the class given as ``uvicorn.Config(http=...)``; :class:`GuardedHttpToolsProtocol`
subclasses the stock ``HttpToolsProtocol`` and adds, per connection:

- **A read deadline** (``request_timeout_s``, seconds; ``Config.request_timeout``), set when the connection opens
  and when a later request's first byte arrives, cleared when the request has been read whole
  (``on_message_complete``). One ``loop.call_at`` timer per connection watches it; it is not cancelled and made
  anew per request (a keep-alive connection pays for a timer about once per deadline period, not per request):
  when it fires early it moves on to the current deadline. A request's head and body must therefore arrive within
  the deadline
  (the first one counted from the connection's opening, later ones from their first byte; between requests
  uvicorn's own keep-alive timeout of 5 s closes an idle connection). When the timer fires, a partly received
  request is answered ``408 Request Timeout`` (``Connection: close``) and the connection is closed; a connection
  that sent nothing is closed without a word. Handling a request is not reading it: a long poll waits after its
  request was read, so no deadline runs while it waits. When the server itself stopped reading (uvicorn's flow
  control pauses a connection whose request is queued behind another one), the timer is re-armed instead: the
  client is not late.
- **A cap on the request head** (``max_header_bytes``; request line plus headers, 64 KiB by default), checked
  before the bytes are handed to the parser. Bytes of a head still in progress are counted across reads; a read
  that would take the head past the cap is looked into for the head's end (the first empty line), so a body that
  arrives in the same read as its head is not counted. An over-cap head is answered ``431 Request Header Fields
  Too Large`` (``Connection: close``) and the connection is closed, without parsing it. A second request
  pipelined into the same read as the end of the first one has its bytes in that read not counted: it may get
  one read (at most a few hundred KiB) past the cap before it is refused.
- **Prompt shutdown**: uvicorn's graceful shutdown closes idle connections and lets busy ones finish; a connection
  whose request body is still arriving is closed at once here instead of being waited for.

The cost on the hot path is a few attribute tests and a ``loop.time()`` per request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["GuardedHttpToolsProtocol", "guarded_protocol"]

_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 15\r\n"
    b"connection: close\r\n\r\nRequest Timeout"
)
_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 31\r\nconnection: close\r\n\r\nRequest Header Fields Too Large"
)


def _head_end(data: bytes) -> int:
    """Index just past the empty line that ends a request head in ``data`` (CRLF or bare LF line ends), or -1."""
    crlf = data.find(b"\n\r\n")
    lf = data.find(b"\n\n")
    if crlf < 0:
        return lf + 2 if lf >= 0 else -1
    if 0 <= lf < crlf:
        return lf + 2
    return crlf + 3


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` plus a request-read deadline, a request-head cap and a prompt shutdown (see the module
    docstring). Configure through :func:`guarded_protocol`, which sets the two class attributes."""

    request_timeout_s: float = 30.0
    """Seconds a client has to send one whole request (head and body)."""
    max_header_bytes: int = 64 * 1024
    """Largest request head (request line and headers, bytes)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None  # loop time by which the request being read must be complete
        self._reading_head = True  # waiting for, or reading, a request head (not inside a body)
        self._in_head = False  # a request head has begun and is not complete
        self._head_bytes = 0  # bytes of the head in progress received in earlier reads
        self._heads_done = 0  # request heads completed on this connection
        self._tail = b""  # the last bytes of the previous read while in a head (an empty line may straddle reads)

    # ------------------------------------------------------------------------------------------- read deadline

    def _arm(self) -> None:
        """Start the deadline of the request being read now (no-op when one is running)."""
        if self._deadline is None:
            self._deadline = self.loop.time() + self.request_timeout_s
            if self._read_timer is None:
                self._read_timer = self.loop.call_at(self._deadline, self._read_timed_out)

    def _disarm(self) -> None:
        """The request was read whole: no deadline until the next one begins. The timer itself is left to lapse
        (or to serve the next request's deadline) rather than cancelled and made anew for every request."""
        self._deadline = None

    def _read_timed_out(self) -> None:
        self._read_timer = None
        deadline = self._deadline
        transport = self.transport
        if deadline is None or transport.is_closing():
            return
        now = self.loop.time()
        if self.flow.read_paused:  # the server is not reading this connection now: the client is not late
            deadline = self._deadline = now + self.request_timeout_s
        if now < deadline:
            self._read_timer = self.loop.call_at(deadline, self._read_timed_out)
            return
        self._deadline = None
        cycle = self.cycle
        idle = cycle is None or cycle.response_complete
        if (self._in_head and idle) or (not self._reading_head and cycle is not None and not cycle.response_started):
            transport.write(_REQUEST_TIMEOUT)
        transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline = None
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._arm()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._reading_head = False
        self._heads_done += 1
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._reading_head = True
        self._disarm()
        super().on_message_complete()

    # ------------------------------------------------------------------------------------------- head cap

    def data_received(self, data: bytes) -> None:
        reading_head = self._reading_head
        if reading_head and self._head_bytes + len(data) > self.max_header_bytes:
            end = _head_end(self._tail + data)
            size = self._head_bytes + (len(data) if end < 0 else end - len(self._tail))
            if size > self.max_header_bytes:
                self._refuse_head()
                return
        was_in_head = self._in_head
        heads_done = self._heads_done
        super().data_received(data)
        if self._in_head:  # the read ended inside a request head: count its bytes for the next read
            if heads_done != self._heads_done or not reading_head:
                self._head_bytes = 0  # it began after an earlier request's bytes in this read: its share is unknown
            elif was_in_head:
                self._head_bytes += len(data)
            else:
                self._head_bytes = len(data)  # it began in this read, on an idle connection
            self._tail = data[-2:]
        elif self._head_bytes:
            self._head_bytes = 0
            self._tail = b""

    def _refuse_head(self) -> None:
        self.logger.warning("Request head larger than %d bytes refused (431).", self.max_header_bytes)
        self._disarm()
        self.transport.write(_HEAD_TOO_LARGE)
        self.transport.close()

    # ------------------------------------------------------------------------------------------- shutdown

    def shutdown(self) -> None:
        """Graceful shutdown: as uvicorn's, and a request whose body is still arriving is not waited for."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and not self._reading_head and not cycle.response_started:
            self.transport.close()
            return
        super().shutdown()


def guarded_protocol(request_timeout_s: float, max_header_bytes: int) -> type[GuardedHttpToolsProtocol]:
    """A :class:`GuardedHttpToolsProtocol` subclass with these limits, to pass as ``uvicorn.Config(http=...)``.

    ``request_timeout_s``: seconds a client has to send a whole request; ``max_header_bytes``: largest request
    head in bytes."""
    return type(
        "SqsemuHttpProtocol",
        (GuardedHttpToolsProtocol,),
        {"request_timeout_s": float(request_timeout_s), "max_header_bytes": int(max_header_bytes)},
    )
