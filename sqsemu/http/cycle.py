"""One ASGI request-response cycle run by sqsemu's own HTTP protocol, for the requests that are not SQS calls.

Architecture note (docs/architecture.md, "The HTTP protocol"): ``sqsemu.http.sqsprotocol`` frames every byte of a
connection with its one parser and answers SQS calls itself; a request to another route (``/health``, ``/metrics``,
``/_sqsemu/...``, the console, the Lambda API, other emulators' routes) is served by calling the ASGI app with a
:class:`Cycle`'s ``receive`` and ``send``. Nothing is re-serialised and no second parser reads the connection.

What a cycle does, as an ASGI server does (ASGI HTTP spec, version 2.3):

- ``receive()`` gives the request body as it arrives (``http.request`` messages, ``more_body`` until the parser saw
  the end of the message), then waits and gives ``http.disconnect`` once the connection is lost or the response is
  complete. The protocol stops reading the connection while more than :data:`BODY_HIGH_WATER` bytes of body wait
  to be received, and reads again once they are. A client that sent ``Expect: 100-continue`` is sent ``100
  Continue`` at the app's first ``receive()`` (as uvicorn does), not before: an answer the app decides from the
  head alone (a 401, a 413 from the declared length) goes out instead, and the client sends no body
  (RFC 9110 10.1.1).
- ``send()`` takes ``http.response.start`` and ``http.response.body``: the status line and headers are written with
  the first body part (one write for a response in one part); a response without ``content-length`` is sent with
  ``content-length`` when it is in one part, else chunked; a ``HEAD`` request's body is not written. A response
  that writes more than its declared ``content-length`` is an error; one that ends with less closes the
  connection. A response whose head is written before the request was read whole never leaves the connection
  waiting for a body nobody reads (RFC 9110 10.1.1): the rest of the body is read and dropped once the cycle ends,
  at most :data:`DISCARD_MAX_BYTES` of it and within the request's read deadline, and the connection goes on; when
  the body announced is longer than that, or the client still waits for ``100 Continue``, the response says
  ``connection: close`` instead and the connection closes after it (what the client still sends read and dropped
  for a bounded time: RFC 9112 9.6). While the transport's write buffer is over its high-water mark, ``send`` waits
  until it drains.
- The ``sqsemu.drop`` extension (in the scope's ``extensions``): the message ``{"type": "sqsemu.drop"}``, sent
  before any response, closes the connection without an answer (a fault rule's ``"drop": true``, realism's lost
  answers), whatever wraps ``send`` (uvicorn's message logger under ``--log-level trace``).
- What the app raises is logged once (``Exception in ASGI application``), counted (``sqsemu_http_app_errors_total``
  in ``/metrics``) and answered ``500`` when the response has not started; the connection is closed otherwise. A
  cycle is cancelled only by a shutdown past its grace period.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from http import HTTPStatus
from typing import Any, Protocol

__all__ = [
    "BODY_HIGH_WATER",
    "CONTINUE",
    "DISCARD_MAX_BYTES",
    "DROP_EXTENSION",
    "Cycle",
    "Connection",
    "declared_length",
]

logger = logging.getLogger("sqsemu.http")

BODY_HIGH_WATER = 64 * 1024
"""Bytes of request body buffered for a cycle before the connection stops being read (until the app receives
them)."""

DISCARD_MAX_BYTES = 64 * 1024 * 1024
"""Bytes of a request body the server reads and drops at most, once it answered before reading it whole (and of what
a client still sends to a connection the server closes)."""

CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
"""The interim answer to ``Expect: 100-continue``."""

DROP_EXTENSION = "sqsemu.drop"
"""The scope extension (and message type) by which an app closes the connection without an answer."""


def declared_length(value: bytes | None) -> int | None:
    """The body length (bytes) a ``Content-Length`` value declares, or None when there is none or it is not a
    number; a value of more than 18 digits is read as ``1 << 62`` (larger than every cap) without an ``int()`` of
    thousands of digits. The one reading of the header for the body cap, the drop bound and the read slices."""
    if value is None:
        return None
    digits = value.strip().lstrip(b"0")
    if not digits:
        return 0
    if not digits.isdigit():
        return None
    return 1 << 62 if len(digits) > 18 else int(digits)


_SERVER_ERROR = (
    b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 21\r\n"
    b"connection: close\r\n\r\nInternal Server Error"
)
STATUS_LINES = {s.value: b"HTTP/1.1 %d %s\r\n" % (s.value, s.phrase.encode()) for s in HTTPStatus}
"""Every known status's line, ``HTTP/1.1 <status> <reason>\r\n``, by status."""

Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


def status_line(status: int) -> bytes:
    """``HTTP/1.1 <status> <reason>\\r\\n`` (an unknown status with an empty reason)."""
    line = STATUS_LINES.get(status)
    return line if line is not None else b"HTTP/1.1 %d \r\n" % status


class Connection(Protocol):
    """What a cycle needs of the connection that runs it (``sqsemu.http.sqsprotocol.SQSProtocol``)."""

    def write(self, data: bytes) -> None: ...
    def date_line(self) -> bytes: ...
    def drained(self) -> Awaitable[None] | None: ...
    def body_taken(self) -> None: ...
    def cycle_done(self, cycle: Cycle, keep_alive: bool) -> None: ...
    def app_failed(self) -> None: ...
    def drop(self) -> None: ...


class Cycle:
    """One request's ASGI cycle. ``scope``: the ASGI HTTP scope; ``keep_alive``: whether the connection may serve
    another request after this one (the client's ``Connection`` header, the HTTP version, the framing); the body
    comes through :meth:`feed` and :meth:`end` from the protocol's parser."""

    __slots__ = (
        "scope",
        "keep_alive",
        "complete",
        "connection",
        "task",
        "_body",
        "_buffered",
        "_wake",
        "_gone",
        "_started",
        "_status",
        "_headers",
        "_chunked",
        "_left",
        "_head_only",
        "_finished",
        "_disconnected",
        "_given_all",
        "_received",
        "declared",
        "expect",
    )

    def __init__(self, connection: Connection, scope: MutableMapping[str, Any], keep_alive: bool) -> None:
        self.connection = connection
        self.scope = scope
        self.keep_alive = keep_alive
        self.complete = False  # the parser saw the end of the request
        self.task: asyncio.Task[None] | None = None
        self._body: list[bytes] = []
        self._buffered = 0
        self._wake: asyncio.Future[None] | None = None  # receive() waits on it for more body or the end
        self._gone: asyncio.Future[None] | None = None  # receive() waits on it for the disconnect
        self._started = False  # the response's head was written
        self._status = 0
        self._headers: list[tuple[bytes, bytes]] = []
        self._chunked = False
        self._left: int | None = None  # body bytes still owed under a declared content-length
        self._head_only = scope.get("method") == "HEAD"
        self._finished = False  # the response is complete
        self._disconnected = False
        self._given_all = False  # receive() has given the last body part
        self.expect = False  # the client waits for 100 Continue before sending the body
        self.declared: int | None = None  # the body's declared length (None: chunked, or none)
        self._received = 0  # bytes of body received so far

    def started(self) -> bool:
        """Whether the response's head has been written."""
        return self._started

    def finished(self) -> bool:
        """Whether the response is complete (what more of the body arrives is dropped)."""
        return self._finished

    # ------------------------------------------------------------------------------------------- from the parser

    def buffered(self) -> int:
        """Bytes of request body received from the client and not yet given to the app."""
        return self._buffered

    def feed(self, body: bytes) -> None:
        """A part of the request body arrived."""
        self._received += len(body)
        if self._finished or self._disconnected:
            return
        self._body.append(body)
        self._buffered += len(body)
        self._wakeup()

    def end(self) -> None:
        """The request was read whole."""
        self.complete = True
        self._wakeup()

    def disconnect(self) -> None:
        """The connection is lost (or will not be read again for this request): ``receive()`` gives
        ``http.disconnect``; what the app sends from now on is dropped."""
        self._disconnected = True
        self._wakeup()
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)

    def _wakeup(self) -> None:
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    # ------------------------------------------------------------------------------------------- running

    def start(self, app: ASGIApp, loop: asyncio.AbstractEventLoop) -> None:
        """Run the app for this request in a task (supervised by :meth:`run`)."""
        self.task = loop.create_task(self.run(app))  # supervised: run() catches, logs once, counts (app_failed)

    def cancel(self) -> bool:
        """Cancel the cycle (a shutdown past its grace period); False when it has ended already."""
        task = self.task
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def run(self, app: ASGIApp) -> None:
        """Call the app; whatever it raises is logged once and answered 500 (or the connection closed when the
        response had begun). Then the connection goes on (or closes)."""
        try:
            await app(self.scope, self.receive, self.send)
        except asyncio.CancelledError:
            self.keep_alive = False
        except Exception:
            logger.exception("Exception in ASGI application")
            self.connection.app_failed()
            self.keep_alive = False
            if not self._started and not self._disconnected:
                self._started = True
                self.connection.write(_SERVER_ERROR)
                self._finished = True
        except BaseException:  # KeyboardInterrupt, SystemExit: the connection closes and the loop stops
            self.keep_alive = False
            self._end_cycle()
            raise
        if not self._finished:
            if not self._started and not self._disconnected:  # the app returned without answering
                logger.error("ASGI application returned without a response")
                self._started = True
                self.connection.write(_SERVER_ERROR)
            self.keep_alive = False  # a response cut short: the client cannot find the next one's start
        self._end_cycle()

    def _end_cycle(self) -> None:
        self._finished = True
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)
        self.connection.cycle_done(self, self.keep_alive and not self._disconnected)

    async def receive(self) -> Message:
        """The ASGI ``receive`` callable (see the module docstring)."""
        if self.expect:  # the app wants the body: now the client may send it
            self.expect = False
            if not self.complete and not self._started and not self._disconnected:
                self.connection.write(CONTINUE)
        while not self._disconnected and not self._finished:
            if self._body or (self.complete and not self._given_all):
                parts, self._body = self._body, []
                self._buffered = 0
                body = parts[0] if len(parts) == 1 else b"".join(parts)
                more = not self.complete
                self._given_all = not more
                self.connection.body_taken()
                return {"type": "http.request", "body": body, "more_body": more}
            if self._given_all:
                gone = self._gone
                if gone is None:
                    gone = self._gone = asyncio.get_running_loop().create_future()
                await gone
                break
            wake = self._wake = asyncio.get_running_loop().create_future()
            await wake
            self._wake = None
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        """The ASGI ``send`` callable (see the module docstring). Raises ``RuntimeError`` for a message out of
        order or a body longer than the declared ``content-length``."""
        kind = message["type"]
        if kind == DROP_EXTENSION:
            if self._started:
                raise RuntimeError("sqsemu.drop sent after the response started")
            self._started = self._finished = True
            self.keep_alive = False
            if not self._disconnected:
                self._disconnected = True
                self.connection.drop()
            return
        if kind == "http.response.start":
            if self._status:
                raise RuntimeError("http.response.start sent twice")
            self._status = int(message["status"])
            self._headers = list(message.get("headers", ()))
            return
        if kind != "http.response.body":
            raise RuntimeError(f"unexpected ASGI message {kind!r}")
        if not self._status:
            raise RuntimeError("http.response.body sent before http.response.start")
        if self._finished:
            raise RuntimeError("http.response.body sent after the response ended")
        body: bytes = message.get("body", b"")
        more: bool = message.get("more_body", False)
        if self._disconnected:
            if not more:
                self._finished = True
            return
        out: list[bytes] = []
        if not self._started:
            self._started = True
            out.append(self._head(body, more))
        if body and not self._head_only:
            left = self._left
            if left is not None:
                if len(body) > left:
                    raise RuntimeError("response body longer than its content-length")
                self._left = left - len(body)
                out.append(body)
            elif self._chunked:
                out.append(b"%x\r\n%s\r\n" % (len(body), body))
            else:
                out.append(body)
        if not more:
            self._finished = True
            if self._chunked and not self._head_only:
                out.append(b"0\r\n\r\n")
            if self._left and not self._head_only:  # less than declared: the connection cannot go on
                self.keep_alive = False
        if out:
            self.connection.write(b"".join(out))
        if more:
            drained = self.connection.drained()
            if drained is not None:
                await drained

    def _head(self, body: bytes, more: bool) -> bytes:
        parts = [status_line(self._status), self.connection.date_line()]
        length: int | None = None
        for name, value in self._headers:
            lower = name.lower()
            if lower == b"content-length":
                if not value.isdigit() or len(value) > 19:
                    raise RuntimeError(f"invalid content-length {value!r} in the response")
                length = int(value)
                continue  # written once, below
            elif lower == b"transfer-encoding":
                continue  # this protocol decides the framing
            elif lower == b"connection" and value.lower() == b"close":
                self.keep_alive = False
                continue
            parts += (name, b": ", value, b"\r\n")
        status = self._status
        no_body = status < 200 or status in (204, 304)
        if length is not None:
            self._left = length
            parts += (b"content-length: ", str(length).encode(), b"\r\n")
        elif no_body:
            self._left = 0
        elif not more:
            self._left = len(body)
            parts += (b"content-length: ", str(len(body)).encode(), b"\r\n")
        else:
            self._chunked = True
            parts.append(b"transfer-encoding: chunked\r\n")
        if not self.complete and (self.expect or (self.declared or 0) - self._received > DISCARD_MAX_BYTES):
            self.keep_alive = False  # answered before a body that will not come, or is too long to drop: close
        if not self.keep_alive:
            parts.append(b"connection: close\r\n")
        parts.append(b"\r\n")
        return b"".join(parts)
