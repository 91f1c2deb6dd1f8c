"""The SQS endpoint's own HTTP/1.1 protocol: an ``asyncio.Protocol`` over ``httptools.HttpRequestParser``.

Architecture note (docs/architecture.md, "The HTTP protocol"): uvicorn keeps the listening socket, the lifespan and
the signals; it builds one connection object per accepted socket through its documented ``http`` option, given
:func:`protocol_factory`'s callable. That object is an :class:`SQSProtocol`, which subclasses nothing of uvicorn
and reads none of its internals. It parses with httptools and, for an SQS call that qualifies, calls
:meth:`sqsemu.http.app.SQSApp.answer` (the one implementation of an SQS call, which the ASGI path calls too) and
writes status line, headers and body in one ``transport.write``: the same bytes, errors, metrics and access lines
as over ASGI. The call's coroutine runs in the parser's callback until it completes or first waits; only a call that
waits (a long poll, a durable commit, a fault rule's latency) goes on from the callbacks of what it awaits
(:class:`WaitingCall`, no task made), kept in :class:`Lane` so that shutdown waits for it (and, after its grace
period, cancels it).

Which requests qualify: a ``POST`` to the SQS endpoint (not ``/health``, ``/_sqsemu/...``, ``/metrics`` or the
Lambda API) with no ``Expect: 100-continue``, no ``Origin`` / ``Sec-Fetch-Site`` (browsers: the cross-site rule),
no ``X-Forwarded-Proto`` / ``X-Forwarded-For`` (uvicorn's proxy-headers middleware rewrites the scheme and client
from them) and a body of at most :data:`FAST_BODY_LIMIT`. Requests pipelined behind a call still being answered wait
their turn here (reading paused meanwhile). The first request that does not qualify hands the connection, for the
rest of its life, to uvicorn's own httptools protocol (``sqsemu.http.relay``): this protocol keeps parsing (its read
deadline, head cap and shutdown rules hold on that connection too) and passes each request on re-serialised (the
head as received, the body as received or re-chunked), after the answers still owed.

The rules this protocol keeps itself, on every connection: the request-read deadline (``sqsemu.http.deadline``;
408 then close), the keep-alive timeout between requests (uvicorn's ``timeout_keep_alive``, 5 s), a cap on the
request head (431 then close, before parsing), ``--max-connections`` (503 then close beyond it), HTTP/1.0 and
``Connection: close`` (answer, then close), a malformed request (400 then close), flow control (while the answers a
client has not read pass the transport's high-water mark, no request is read or answered), and a prompt shutdown (idle
connections and requests still arriving are closed at once; calls being answered finish, long polls are answered
empty by the broker first: ``sqsemu.http.serving``). A long poll learns that its client left from
``connection_lost``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from functools import partial
from http import HTTPStatus
from typing import Any, Protocol
from urllib.parse import unquote

import httptools

from sqsemu.http.app import DROP_STATUS, Answer, SQSApp, is_admin_path
from sqsemu.http.deadline import REQUEST_TIMEOUT_ANSWER, ReadDeadline
from sqsemu.observability.fastlane import FastLaneState

__all__ = ["FAST_BODY_LIMIT", "Lane", "Relay", "SQSProtocol", "WaitingCall", "head_end", "protocol_factory"]

logger = logging.getLogger("sqsemu.http")

FAST_BODY_LIMIT = 64 * 1024
"""Largest request body (bytes) answered by this protocol itself; a larger one hands its connection to uvicorn's
protocol (which reads it in parts, under flow control)."""

_NOT_FAST = (b"origin", b"sec-fetch-site", b"x-forwarded-proto", b"x-forwarded-for", b"expect")

_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 31\r\nconnection: close\r\n\r\nRequest Header Fields Too Large"
)
_BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 29\r\n"
    b"connection: close\r\n\r\nInvalid HTTP request received."
)
_UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 19\r\n"
    b"connection: close\r\n\r\nService Unavailable"
)
_STATUS_LINES = {s.value: b"HTTP/1.1 %d %s\r\n" % (s.value, s.phrase.encode()) for s in HTTPStatus}


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    return line if line is not None else b"HTTP/1.1 %d \r\n" % status


def head_end(data: bytes) -> int:
    """Index just past the empty line that ends a request head in ``data`` (CRLF or bare LF line ends), or -1."""
    crlf = data.find(b"\n\r\n")
    lf = data.find(b"\n\n")
    if crlf < 0:
        return lf + 2 if lf >= 0 else -1
    if 0 <= lf < crlf:
        return lf + 2
    return crlf + 3


class Relay(Protocol):
    """The connection's requests passed on to uvicorn's protocol (``sqsemu.http.relay``)."""

    def feed(self, data: bytes) -> None: ...
    def lost(self, exc: Exception | None) -> None: ...
    def pause_writing(self) -> None: ...
    def resume_writing(self) -> None: ...
    def paused(self) -> bool: ...
    def written(self) -> int: ...


RelayMaker = Callable[[asyncio.Transport], Relay]


class Lane:
    """What every connection of one server shares: the app, the limits, the open connections and the calls that
    wait.

    ``request_timeout_s``: seconds to send one whole request; ``max_header_bytes``: largest request head;
    ``keep_alive_s``: seconds an idle connection is kept; ``max_connections``: connections served (beyond it, 503);
    ``state``: the ``/health`` and ``/metrics`` view (its answer count)."""

    def __init__(
        self,
        app: SQSApp,
        request_timeout_s: float,
        max_header_bytes: int,
        keep_alive_s: float,
        max_connections: int,
        state: FastLaneState,
    ) -> None:
        self.app = app
        self.request_timeout_s = request_timeout_s
        self.max_header_bytes = max_header_bytes
        self.keep_alive_s = keep_alive_s
        self.max_connections = max_connections
        self.state = state
        self.connections: set[SQSProtocol] = set()
        self.waiting: set[WaitingCall] = set()  # calls that wait (WaitingCall), until they end
        self.closing = False
        self.fast = True  # False: every request through the ASGI cycle (``--log-level trace``)

    def shutdown(self) -> None:
        """Shutdown begins: no new connection is served; idle ones and requests still arriving are closed; a call
        being answered closes its connection once answered."""
        self.closing = True
        for connection in list(self.connections):
            connection.shutdown()

    def busy(self) -> int:
        """Connections of this protocol's own still answering a call."""
        return sum(1 for connection in self.connections if connection.answering())

    def cancel_waiting(self) -> int:
        """Cancel the calls still waiting (after the grace period); how many."""
        return sum(1 for call in list(self.waiting) if call.cancel())


def protocol_factory(lane: Lane, relay_maker: Callable[..., Relay]) -> Callable[..., SQSProtocol]:
    """The callable to give as ``uvicorn.Config(http=...)``: uvicorn calls it with ``config``, ``server_state``,
    ``app_state`` (and ``_loop``) for each connection; those are passed, unread, to ``relay_maker`` (with the loop
    and the transport) when a connection is handed to uvicorn's protocol."""

    def make(config: Any, server_state: Any, app_state: Any, _loop: Any = None) -> SQSProtocol:
        loop = _loop or asyncio.get_event_loop()
        return SQSProtocol(lane, loop, partial(relay_maker, config, server_state, app_state, loop))

    return make


class WaitingCall:
    """An SQS call whose coroutine waits (a long poll, a durable commit, a fault rule's latency), driven on from the
    done callback of the future it awaits, as a task would drive it, without making a task: a task costs the loop
    its creation and three more scheduled steps per call (docs/performance-compiled.md, "Durable (`--data-dir`)
    against in memory": 1-3 us per message of a durable round trip, each request of which waits for its commit).

    The coroutine may await asyncio futures (resumed from their done callbacks) or yield nothing (a bare yield, as
    ``asyncio.sleep(0)`` does: resumed on the loop's next iteration). Nothing in the SQS call path asks for the
    current task, so none is made. :meth:`cancel` (a shutdown past its grace period) cancels the awaited future:
    the coroutine sees ``CancelledError`` where it awaits, as in a cancelled task, and its ``finally`` clauses run (a
    long poll's waiter goes). Then ``done`` is set and the protocol is told through ``finished(answer)``: the answer,
    or None when the call ended without one (cancelled, failed: the connection is closed)."""

    __slots__ = ("coro", "protocol", "awaited", "done", "_cancel")

    def __init__(self, protocol: SQSProtocol, coro: Any) -> None:
        self.protocol = protocol
        self.coro = coro
        self.awaited: Any = None  # the future the coroutine waits for (None: a bare yield, resumed next iteration)
        self.done = False
        self._cancel = False  # throw CancelledError into the coroutine at its next step

    def wait_on(self, yielded: Any) -> None:
        """Resume the coroutine once ``yielded`` (what it yielded) is done."""
        if yielded is None:
            self.awaited = None
            self.protocol.loop.call_soon(self.step)
        elif getattr(yielded, "_asyncio_future_blocking", None) is not None:
            yielded._asyncio_future_blocking = False
            self.awaited = yielded
            yielded.add_done_callback(self._wake)
        else:  # what a task refuses too; thrown into the coroutine on its next step
            self.awaited = None
            self.protocol.loop.call_soon(self._step, RuntimeError(f"an SQS call awaited {yielded!r}, not a future"))

    def _wake(self, _future: Any) -> None:
        self.step()

    def step(self) -> None:
        """Run the coroutine to its next wait, or to its end."""
        self._step(asyncio.CancelledError() if self._cancel else None)

    def _step(self, thrown: BaseException | None) -> None:
        coro = self.coro
        try:
            yielded = coro.send(None) if thrown is None else coro.throw(thrown)
        except StopIteration as stop:
            self._end(stop.value)
            return
        except asyncio.CancelledError:
            self._end(None)
            return
        except Exception:
            logger.exception("Exception answering an SQS call")
            self._end(None)
            return
        except BaseException:  # KeyboardInterrupt, SystemExit: the connection closes and the loop stops
            self._end(None)
            raise
        self.wait_on(yielded)

    def _end(self, answer: Answer | None) -> None:
        self.done = True
        self.awaited = None
        self.protocol.finished(self, answer)

    def cancel(self) -> bool:
        """Cancel the call where it waits (``CancelledError`` raised there); False when it has ended already."""
        if self.done:
            return False
        awaited = self.awaited
        if awaited is not None and not awaited.done():
            awaited.cancel()  # its done callback resumes the coroutine, where awaiting it raises CancelledError
        else:
            self._cancel = True
        return True


class _Request:
    """A request read whole, waiting for its turn (pipelined behind a call being answered)."""

    __slots__ = ("body", "headers", "keep_alive", "scope")

    def __init__(self, scope: dict[str, Any], headers: dict[bytes, bytes], body: bytes, keep_alive: bool) -> None:
        self.scope = scope
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive


def _decoded_path(raw_path: bytes) -> str:
    """A request target's path as ASGI gives it: latin-1 decoded, then percent-decoded."""
    path = raw_path.decode("latin-1")
    return unquote(path) if "%" in path else path


def _reraise(exc: BaseException) -> None:
    raise exc


_date_second = 0
_date_line = b""


def _date() -> bytes:
    """The ``date`` header line, made once a second."""
    global _date_second, _date_line
    now = int(time.time())
    if now != _date_second:
        _date_second = now
        _date_line = b"date: " + formatdate(now, usegmt=True).encode() + b"\r\n"
    return _date_line


class SQSProtocol:
    """One client connection (see the module docstring). Made by :func:`protocol_factory`'s callable."""

    def __init__(self, lane: Lane, loop: asyncio.AbstractEventLoop, relay_maker: RelayMaker) -> None:
        self.lane = lane
        self.app = lane.app
        self.loop = loop
        self._relay_maker = relay_maker
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.deadline = ReadDeadline(loop, lane.request_timeout_s, self._read_paused, self._late, self._idle_out)
        self._server: tuple[str, int] | None = None
        self._scheme = "http"
        self._closed = False
        # the request being read
        self._url = b""
        self._path = "/"  # the request's path, percent-decoded (set by _qualifies)
        self._headers: list[tuple[bytes, bytes]] = []  # names in lower case, in order (re-serialised when handed over)
        self._header_map: dict[bytes, bytes] = {}  # by lower-case name; a repeated header's last value
        self._body: list[bytes] = []
        self._body_size = 0
        self._in_head = False  # a request head has begun and is not complete
        self._reading = False  # a request has begun and is not complete (head or body)
        self._fast = False  # the request being read is answered here
        self._chunked = False  # the request being read has a chunked body (re-chunked when relayed)
        self._head_bytes = 0  # bytes of the head in progress received in earlier reads
        self._heads_done = 0
        self._tail = b""
        # answering
        self._answering = False  # a call is being answered (its coroutine waits: a WaitingCall)
        self._queue: deque[_Request] = deque()  # requests read whole, waiting for their turn
        self._paused = False  # reading paused by this protocol (requests queued)
        self._write_paused = False  # the transport's write buffer is full (pause_writing): reading paused too
        self._keep_alive = True
        self._gone: asyncio.Future[None] | None = None  # the last long poll's: completed when the connection goes
        # handed to uvicorn's protocol
        self._relaying = False  # from the first request that does not qualify on
        self._relay: Relay | None = None
        self._backlog: list[bytes] = []  # what is to be passed on once the answers still owed are written
        self._relay_written = 0  # bytes uvicorn's protocol had written when the request being read began

    # ------------------------------------------------------------------------------------------- connection

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        lane = self.lane
        if lane.closing:
            transport.close()
            self._closed = True
            return
        lane.connections.add(self)
        sockname = transport.get_extra_info("sockname")
        if isinstance(sockname, tuple) and len(sockname) >= 2:
            self._server = (str(sockname[0]), int(sockname[1]))
        if transport.get_extra_info("sslcontext") is not None:
            self._scheme = "https"
        self.deadline.start()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.lane.connections.discard(self)
        self.deadline.close()
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)
        if self._relay is not None:
            self._relay.lost(exc)

    def eof_received(self) -> bool | None:
        return None

    def pause_writing(self) -> None:
        """The transport's write buffer is over its high-water mark (the client reads its answers slower than they
        come): read no more and answer no more requests until it drains (``resume_writing``). A request already
        read waits its turn, so what a client that stops reading can make the server hold is one read's worth of
        requests and the answers over the mark, not every answer to everything it sends."""
        if self._relay is not None:
            self._relay.pause_writing()
            return
        self._write_paused = True
        if self.transport is not None and not self._closed:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        """The write buffer has drained: answer the requests read meanwhile, then read again."""
        if self._relay is not None:
            self._relay.resume_writing()
            return
        self._write_paused = False
        if self._closed or self.transport is None:
            return
        if not self._paused:
            self.transport.resume_reading()
        if not self._answering:
            self._next()

    def _close(self) -> None:
        self._closed = True
        self.deadline.close()
        if self.transport is not None:
            self.transport.close()

    def answering(self) -> bool:
        """Whether a call is being answered (or waits its turn) on this connection, by this protocol."""
        return self._answering or bool(self._queue)

    def shutdown(self) -> None:
        """Shutdown begins (``Lane.shutdown``): an idle connection, or one whose request is still arriving, is
        closed now; one answering a call closes once answered. A connection handed to uvicorn's protocol with no
        request arriving is left to uvicorn's own shutdown."""
        if self._closed:
            return
        self._keep_alive = False
        if not self.answering() and (self._reading or self._relay is None):
            self._close()

    # ------------------------------------------------------------------------------------------- reading

    def data_received(self, data: bytes) -> None:
        if self._closed:
            return
        max_head = self.lane.max_header_bytes
        if not self._reading or self._in_head:
            if self._head_bytes + len(data) > max_head:
                end = head_end(self._tail + data)
                size = self._head_bytes + (len(data) if end < 0 else end - len(self._tail))
                if size > max_head:
                    self._refuse_head()
                    return
        was_in_head = self._in_head
        reading_head = not self._reading or was_in_head
        heads_done = self._heads_done
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._keep_alive = False  # the rest is not HTTP/1.1 this server speaks: close once answered
            if not self.answering() and self._relay is None:
                self._close()
            return
        except httptools.HttpParserError:
            self._malformed()
            return
        if self._in_head:  # the read ended inside a request head: count its bytes for the next read
            if heads_done != self._heads_done or not reading_head:
                self._head_bytes = 0  # it began after an earlier request's bytes in this read: its share unknown
            elif was_in_head:
                self._head_bytes += len(data)
            else:
                self._head_bytes = len(data)
            self._tail = data[-2:]
        elif self._head_bytes:
            self._head_bytes = 0
            self._tail = b""

    def _refuse_head(self) -> None:
        logger.warning("Request head larger than %d bytes refused (431).", self.lane.max_header_bytes)
        if self.transport is not None and not self.answering():
            self.transport.write(_HEAD_TOO_LARGE)
        self._close()

    def _malformed(self) -> None:
        if self.transport is not None and not self.answering() and self._relay is None:
            self.transport.write(_BAD_REQUEST)
        self._close()

    def _read_paused(self) -> bool:
        return self._paused or self._write_paused or (self._relay is not None and self._relay.paused())

    def _late(self) -> None:
        """The request being read did not arrive whole in time: 408 when something of it came and nothing is being
        answered on the connection, then close."""
        if self._closed or self.transport is None:
            return
        if self._reading and not self.answering():
            relay = self._relay
            if relay is None or relay.written() == self._relay_written:
                self.transport.write(REQUEST_TIMEOUT_ANSWER)
        self._close()

    def _idle_out(self) -> None:
        if not self._closed and not self._reading and not self.answering() and self._relay is None:
            self._close()

    # httptools callbacks

    def on_message_begin(self) -> None:
        self._url = b""
        self._headers = []
        self._header_map = {}
        self._body = []
        self._body_size = 0
        self._in_head = True
        self._reading = True
        self._fast = False
        self._chunked = False
        if self._relay is not None:
            self._relay_written = self._relay.written()
        self.deadline.start()

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()  # as ASGI scopes have them (a SigV4 signature is checked over these)
        self._headers.append((name, value))
        self._header_map[name] = value

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._heads_done += 1
        lane = self.lane
        if len(lane.connections) > lane.max_connections:
            if self.transport is not None and not self.answering():
                self.transport.write(_UNAVAILABLE)
            self._close()
            return
        if self._relaying:
            self._pass_head()
            return
        self._fast = self._qualifies()
        if not self._fast:
            self._relaying = True
            self._pass_head()

    def _qualifies(self) -> bool:
        if not self.lane.fast or self.parser.get_method() != b"POST":
            return False
        headers = self._header_map
        for name in _NOT_FAST:
            if name in headers:
                return False
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > FAST_BODY_LIMIT):
            return False
        coding = headers.get(b"transfer-encoding")
        self._chunked = coding is not None and b"chunked" in coding.lower()
        path = self._path = _decoded_path(self._url.partition(b"?")[0])
        return path == "/" or not is_admin_path(path)  # the one rule of what is not the SQS endpoint: app.py's

    def on_body(self, body: bytes) -> None:
        if self._relaying:
            self._pass_body(body)
            return
        if not self._fast:
            return
        self._body.append(body)
        self._body_size += len(body)
        if self._body_size > FAST_BODY_LIMIT:  # a chunked body grown too large: uvicorn's protocol reads the rest
            self._fast = False
            self._relaying = True
            self._chunked = True
            so_far, self._body = b"".join(self._body), []
            self._pass_head()
            self._pass_body(so_far)

    def on_message_complete(self) -> None:
        self._reading = False
        self.deadline.stop()
        if self._relaying:
            if self._fast:  # pragma: no cover - a fast request never ends relayed
                return
            if self._chunked:
                self._pass(b"0\r\n\r\n")
            return
        if not self._fast:
            return
        self._fast = False
        parts = self._body
        body = parts[0] if len(parts) == 1 else b"".join(parts)
        keep_alive = self.parser.should_keep_alive()
        if self.answering() or self._write_paused:
            self._queue.append(_Request(self._scope(), self._header_map, body, keep_alive))
            if not self._paused and self.transport is not None:
                self._paused = True
                self.transport.pause_reading()
            return
        self._answer(self._scope(), self._header_map, body, keep_alive)
        self._next()

    def _scope(self) -> dict[str, Any]:
        raw_path, _, query = self._url.partition(b"?")
        return {
            "method": "POST",
            "path": self._path,  # decoded by _qualifies, which every request answered here passed
            "raw_path": raw_path,
            "query_string": query,
            "scheme": self._scheme,
            "server": self._server,
            "headers": self._headers,
        }

    # ------------------------------------------------------------------------------------------- relaying

    def _pass_head(self) -> None:
        parser = self.parser
        parts = [parser.get_method(), b" ", self._url, b" HTTP/", parser.get_http_version().encode(), b"\r\n"]
        for name, value in self._headers:
            parts += (name, b": ", value, b"\r\n")
        parts.append(b"\r\n")
        self._pass(b"".join(parts))

    def _pass_body(self, body: bytes) -> None:
        if self._chunked:
            self._pass(b"%x\r\n%s\r\n" % (len(body), body))
        else:
            self._pass(body)

    def _pass(self, data: bytes) -> None:
        """Hand ``data`` to uvicorn's protocol; held back while answers are still owed on this connection."""
        relay = self._relay
        if relay is not None:
            relay.feed(data)
            return
        self._backlog.append(data)
        if self.answering():
            if not self._paused and self.transport is not None:
                self._paused = True
                self.transport.pause_reading()
            return
        self._start_relay()

    def _start_relay(self) -> None:
        transport = self.transport
        if transport is None or self._closed:
            return
        self.deadline.idle_until(1e9)  # uvicorn's protocol keeps the keep-alive timeout from now on
        relay = self._relay = self._relay_maker(transport)
        self._relay_written = relay.written()
        backlog, self._backlog = self._backlog, []
        if self._write_paused:  # uvicorn's protocol keeps the flow control from now on
            self._write_paused = False
            relay.pause_writing()
            transport.resume_reading()
        if self._paused:
            self._paused = False
            transport.resume_reading()
        for data in backlog:
            relay.feed(data)

    # ------------------------------------------------------------------------------------------- answering

    def _answer(self, scope: dict[str, Any], headers: dict[bytes, bytes], body: bytes, keep_alive: bool) -> None:
        """Run the call: answered at once when it does not wait, else driven on as a :class:`WaitingCall`."""
        if not keep_alive:
            self._keep_alive = False
        coro = self.app.answer(scope, headers.get, None, self._watch, body)
        try:
            first = coro.send(None)
        except StopIteration as stop:
            self._write(stop.value)
            return
        except Exception:
            logger.exception("Exception answering an SQS call")
            self._close()
            return
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: the connection closes and the loop stops
            self._close()
            # Raised here it would reach httptools, which turns whatever a callback raises into a parser error:
            # raised from a callback of its own it stops the loop.
            self.loop.call_soon(_reraise, exc)
            return
        self._answering = True
        call = WaitingCall(self, coro)
        self.lane.waiting.add(call)
        call.wait_on(first)

    def finished(self, call: WaitingCall, answer: Answer | None) -> None:
        """A call that waited has ended (:class:`WaitingCall`): write its answer and go on with the connection's
        next request; with no answer (cancelled, failed) the connection closes."""
        self.lane.waiting.discard(call)
        if answer is None:
            self._close()
            return
        self._answering = False
        self._write(answer)
        self._next()

    def _watch(self) -> asyncio.Future[None]:
        """A future completed when this connection is lost: made per call (a long poll calls it once, when it has
        to wait), so that what a finished long poll hung on it does not pile up on a keep-alive connection."""
        gone: asyncio.Future[None] = self.loop.create_future()
        if self._closed:
            gone.set_result(None)
        self._gone = gone
        return gone

    def _write(self, answer: Answer | None) -> None:
        """Write ``answer`` in one piece; drop the connection for ``DROP``; nothing when the client left. Then the
        next request waiting its turn, or the hand-over to uvicorn's protocol, or the keep-alive wait."""
        transport = self.transport
        if self._closed or answer is None or transport is None:
            return
        if answer[0] == DROP_STATUS:
            self._close()
            return
        status, headers, payload = answer
        parts = [_status_line(status), _date()]
        for name, value in headers:
            parts += (name, b": ", value, b"\r\n")
        keep_alive = self._keep_alive
        if not keep_alive:
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", payload)
        transport.write(b"".join(parts))
        self.lane.state.answers += 1
        if not keep_alive:
            self._close()

    def _next(self) -> None:
        """After an answer: the requests waiting their turn, then the hand-over to uvicorn's protocol if one is
        due, else reading again and the keep-alive wait."""
        queue = self._queue
        while queue and not self._answering and not self._closed and not self._write_paused:
            request = queue.popleft()
            self._answer(request.scope, request.headers, request.body, request.keep_alive)
        if self._answering or self._closed or self._write_paused:
            return
        if self._backlog:
            self._start_relay()
            return
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        if not self._reading and self._relay is None:
            self.deadline.idle_until(self.lane.keep_alive_s)
