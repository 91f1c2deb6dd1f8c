"""The server's own HTTP/1.1 protocol: an ``asyncio.Protocol`` over ``httptools.HttpRequestParser`` that frames every
byte of every connection and serves every request.

Architecture note (docs/architecture.md, "The HTTP protocol"): uvicorn keeps the listening socket, the lifespan and
the signals; it builds one connection object per accepted socket through its documented ``http`` option, given
:func:`protocol_factory`'s callable. That object is an :class:`SQSProtocol`, which subclasses nothing of uvicorn and
reads none of its internals. One parser (httptools) frames the connection; no request is ever re-serialised for
another parser. Each request, once its head is parsed, goes one of two ways:

- an SQS call (any path that is not ``/health``, ``/metrics``, ``/_sqsemu/...``, another emulator's route or the
  Lambda API: ``sqsemu.http.app.is_admin_path``) is read whole (at most the body cap; a larger body is read and
  dropped, and answered with the cap's error) and answered by :meth:`sqsemu.http.app.SQSApp.answer`, the one
  implementation of an SQS call, written in one ``transport.write``. Its coroutine runs in the parser's callback
  until it completes or first waits; only a call that waits (a long poll, a durable commit, a fault rule's latency)
  goes on from the callbacks of what it awaits (:class:`WaitingCall`, no task made);
- any other request is served by the ASGI app (uvicorn's loaded app: sqsemu's, wrapped by uvicorn's message logger
  under ``--log-level trace``, when every request takes this way) through a :class:`~sqsemu.http.cycle.Cycle`
  (streamed request and response bodies, ``100 Continue``, flow control).

Both ways build one request context (:meth:`SQSProtocol._scope`): method, path, query, headers, the client's address
and the scheme from the socket (or, only from a proxy the operator trusts, from ``X-Forwarded-For`` /
``X-Forwarded-Proto``: ``sqsemu.security.forwarded``), so a signed call gets the same policy decision, access line and
metrics whatever its size or framing.

The HTTP rules, written once here and holding for every request on every connection: requests are answered in the order
they arrived, one at a time (a request pipelined behind one being answered waits, reading paused meanwhile); the
request-read deadline (``sqsemu.http.deadline``; 408 then close) from the first byte of each request until it is read
whole; the keep-alive timeout between requests (uvicorn's ``timeout_keep_alive``, 5 s); a cap on each request head,
trailers included (431 then close); ``--max-connections`` (503 then close beyond it); a malformed request (400 then
close); ``Connection: close``, HTTP/1.0, an upgrade request (answer, then close; nothing after it is read or run);
trailer fields are never merged into the request's headers (RFC 9110 6.5.1); a refusal (400, 408, 431, 503) is written
only after the answers still owed on the connection, and nothing parsed after the fault runs; a dropped or lost
connection runs nothing more. An answer written before its request was read whole never leaves the connection waiting
for a body nobody reads (RFC 9110 10.1.1): an SQS body declared over the cap is answered and the connection closed;
after an ASGI app's answer from the head alone the rest of the body is read and dropped (at most ``DISCARD_MAX_BYTES``,
within the read deadline) and the next request served, or the answer says ``connection: close`` (``sqsemu.http.cycle``).
A connection the server closes after an answer is closed gracefully (RFC 9112 9.6): its write side is shut, and what the
client still sends is read and dropped until the client closes its side, stays quiet for :data:`LINGER_S` seconds, has
sent :data:`LINGER_MAX_BYTES` or the request timeout has passed, so that a client (or a proxy) still sending its body
does not get a reset that discards the answer. Flow control: while the answers a client has not read pass the
transport's high-water mark, no request of its is read or answered, and a client that takes none of them for the request
timeout is cut off (its ``--max-connections`` slot freed); while an ASGI app has not received 64 KiB of body, no more is
read. Behind an answer under way, a read is parsed no further than :data:`READ_SLICE` bytes past the request that has to
wait; the rest of the read is kept as bytes and parsed in its turn, so that pipelined requests cost their bytes, not a
parsed request each. The read deadline starts again while the server itself holds reading, for reasons that each end on
their own (an answer ahead, a write stall cut off, an ASGI cycle's end). Shutdown (``sqsemu.http.serving``): idle
connections and requests still arriving are closed at once; calls being answered finish (long polls are answered empty
by the broker first), and those still running after the grace period are cancelled. A long poll learns that its client
left from ``connection_lost``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import httptools

from sqsemu.http.app import DROP_STATUS, Answer, SQSApp, is_admin_path
from sqsemu.http.cycle import (
    BODY_HIGH_WATER,
    CONTINUE,
    DISCARD_MAX_BYTES,
    DROP_EXTENSION,
    STATUS_LINES,
    ASGIApp,
    Cycle,
    declared_length,
    status_line,
)
from sqsemu.http.deadline import REQUEST_TIMEOUT_ANSWER, ReadDeadline
from sqsemu.observability.fastlane import FastLaneState
from sqsemu.security.forwarded import TrustedProxies

__all__ = [
    "LINGER_MAX_BYTES",
    "LINGER_S",
    "READ_SLICE",
    "Lane",
    "SQSProtocol",
    "WaitingCall",
    "date_line_at",
    "head_end",
    "protocol_factory",
]

logger = logging.getLogger("sqsemu.http")

LINGER_S = 2.0
"""Seconds of quiet after which a connection the server closes stops reading (and dropping) what the client still
sends, and closes. Each read restarts them; the whole linger is bounded by the request timeout and
:data:`LINGER_MAX_BYTES`."""

LINGER_MAX_BYTES = DISCARD_MAX_BYTES
"""Bytes a connection the server closes reads and drops at most before it closes."""

READ_SLICE = 2048
"""Bytes of a larger read parsed at a time (a body with a known length in one piece), so that reading stops, and
the rest of the read is kept unparsed, as soon as a request has to wait its turn: what a connection holds behind an
answer under way is the unparsed bytes of one read and the requests parsed from at most this many bytes."""

_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 31\r\nconnection: close\r\n\r\nRequest Header Fields Too Large"
)
_BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 30\r\n"
    b"connection: close\r\n\r\nInvalid HTTP request received."
)
_UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 19\r\n"
    b"connection: close\r\n\r\nService Unavailable"
)
_CONTINUE = CONTINUE


_ASGI = {"version": "3.0", "spec_version": "2.3"}
"""The scopes' ``asgi`` key (one dict, shared: read-only by the ASGI spec)."""
_METHODS = {m.encode(): m for m in ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH")}


class _Stop(Exception):
    """Raised from a parser callback to stop parsing (the cause is noted on the protocol first)."""


def head_end(data: bytes) -> int:
    """Index just past the empty line that ends a request head in ``data`` (CRLF or bare LF line ends), or -1."""
    crlf = data.find(b"\n\r\n")
    lf = data.find(b"\n\n")
    if crlf < 0:
        return lf + 2 if lf >= 0 else -1
    if 0 <= lf < crlf:
        return lf + 2
    return crlf + 3


class Lane:
    """What every connection of one server shares: the apps, the limits, the open connections and the calls that
    wait.

    ``app``: sqsemu's app (SQS calls); ``request_timeout_s``: seconds to send one whole request;
    ``max_header_bytes``: largest request head (bytes); ``keep_alive_s``: seconds an idle connection is kept;
    ``max_connections``: connections served (beyond it, 503); ``state``: the ``/health`` and ``/metrics`` view (its
    answer count); ``trusted``: the proxies whose ``X-Forwarded-*`` headers are believed (None: none);
    ``asgi``: the ASGI app for the other requests (None: uvicorn's loaded app, or ``app``)."""

    def __init__(
        self,
        app: SQSApp,
        request_timeout_s: float,
        max_header_bytes: int,
        keep_alive_s: float,
        max_connections: int,
        state: FastLaneState,
        trusted: TrustedProxies | None = None,
        asgi: ASGIApp | None = None,
    ) -> None:
        self.app = app
        self.asgi: ASGIApp | None = asgi  # None: uvicorn's loaded app, taken at the first connection
        self.request_timeout_s = request_timeout_s
        self.max_header_bytes = max_header_bytes
        self.keep_alive_s = keep_alive_s
        self.max_connections = max_connections
        self.state = state
        self.trusted = trusted
        self.connections: set[SQSProtocol] = set()
        self.waiting: set[WaitingCall | Cycle] = set()  # calls that wait and ASGI cycles, until they end
        self.closing = False
        self.fast = True  # False: every request through the ASGI app (``--log-level trace``)

    def shutdown(self) -> None:
        """Shutdown begins: no new connection is served; idle ones and requests still arriving are closed; a call
        being answered closes its connection once answered."""
        self.closing = True
        for connection in list(self.connections):
            connection.shutdown()

    def busy(self) -> int:
        """Connections still answering a request."""
        return sum(1 for connection in self.connections if connection.answering())

    def cancel_waiting(self) -> int:
        """Cancel the calls and ASGI cycles still running (after the grace period); how many."""
        return sum(1 for call in list(self.waiting) if call.cancel())


def protocol_factory(lane: Lane) -> Callable[..., SQSProtocol]:
    """The callable to give as ``uvicorn.Config(http=...)``: uvicorn calls it with ``config``, ``server_state``,
    ``app_state`` (and ``_loop``) for each connection; the lifespan state ``app_state`` is copied into each ASGI
    request's scope (``state``), as uvicorn does."""

    def make(config: Any, server_state: Any, app_state: Any, _loop: Any = None) -> SQSProtocol:
        loop = _loop or asyncio.get_event_loop()
        if lane.asgi is None:
            lane.asgi = getattr(config, "loaded_app", None) or lane.app
        return SQSProtocol(lane, loop, app_state)

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
    """An SQS call read (or being read) behind another request still being answered: it waits its turn."""

    __slots__ = ("body", "complete", "continued", "expect", "headers", "keep_alive", "scope", "size", "too_large")

    def __init__(self, scope: dict[str, Any], headers: dict[bytes, bytes], keep_alive: bool, expect: bool) -> None:
        self.scope = scope
        self.headers = headers
        self.keep_alive = keep_alive
        self.expect = expect  # the client waits for 100 Continue before sending the body
        self.continued = False
        self.body: list[bytes] = []
        self.size = 0
        self.too_large = False
        self.complete = False


def _decoded_path(raw_path: bytes) -> str:
    """A request target's path as ASGI gives it: latin-1 decoded, then percent-decoded."""
    path = raw_path.decode("latin-1")
    return unquote(path) if "%" in path else path


def _target(url: bytes) -> tuple[bytes, bytes]:
    """``(raw path, query string)`` of a request target (origin form, or absolute form as RFC 9112 3.2.2 lets a
    server accept); raises ``httptools.HttpParserInvalidURLError`` for a target that is neither."""
    if url.startswith(b"/") and url.find(b"#") < 0:
        raw_path, _, query = url.partition(b"?")
        return raw_path, query
    if url == b"*":
        return b"*", b""
    parsed = httptools.parse_url(url)
    return parsed.path or b"/", parsed.query or b""


def _reraise(exc: BaseException) -> None:
    raise exc


_date_second = 0
_date_line = b""
_WEEKDAYS = (b"Mon, ", b"Tue, ", b"Wed, ", b"Thu, ", b"Fri, ", b"Sat, ", b"Sun, ")
_MONTHS_FROM_MARCH = tuple(f" {name} ".encode() for name in "Mar Apr May Jun Jul Aug Sep Oct Nov Dec Jan Feb".split())
_TWO_DIGITS = tuple(b"%02d" % n for n in range(100))


def date_line_at(seconds: int) -> bytes:
    """The ``date`` header line (name, IMF-fixdate value, CRLF) for ``seconds`` since the epoch (0 to the end of
    year 9999), as ``email.utils.formatdate(seconds, usegmt=True)`` writes it (RFC 9110 5.6.7, "Date/Time Formats";
    RFC 9110 6.6.1, "Date"): ``date: Tue, 08 Dec 2026 02:15:21 GMT`` and CRLF.

    Integer arithmetic (the proleptic Gregorian calendar counted from 1 March, so that the leap day ends a year)
    instead of ``formatdate``, whose interpreted code cost the first answer of every second 50 to 75 us more than
    this on a server idle between requests (docs/performance.md, "Long-poll wake (issue 50)")."""
    days = seconds // 86400
    second = seconds - days * 86400
    shifted = days + 719468  # days from 0000-03-01 to 1970-01-01
    era = shifted // 146097  # 400-year eras of 146,097 days
    day_of_era = shifted - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)  # from 1 March
    month = (5 * day_of_year + 2) // 153  # 0 is March
    day = day_of_year - (153 * month + 2) // 5 + 1
    year = year_of_era + era * 400 + (1 if month >= 10 else 0)  # January and February end the year begun in March
    hour = second // 3600
    minute = second // 60 % 60
    sec = second % 60
    two = _TWO_DIGITS
    return b"".join(
        (
            b"date: ",
            _WEEKDAYS[(days + 3) % 7],  # 1970-01-01 was a Thursday
            two[day],
            _MONTHS_FROM_MARCH[month],
            two[year // 100],
            two[year % 100],
            b" ",
            two[hour],
            b":",
            two[minute],
            b":",
            two[sec],
            b" GMT\r\n",
        )
    )


def _date() -> bytes:
    """The ``date`` header line, made once a second."""
    global _date_second, _date_line
    now = int(time.time())
    if now != _date_second:
        _date_second = now
        _date_line = date_line_at(now)
    return _date_line


class SQSProtocol:
    """One client connection (see the module docstring). Made by :func:`protocol_factory`'s callable."""

    def __init__(self, lane: Lane, loop: asyncio.AbstractEventLoop, app_state: Any = None) -> None:
        self.lane = lane
        self.app = lane.app
        self.loop = loop
        self._app_state: dict[str, Any] = dict(app_state) if isinstance(app_state, dict) else {}
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)  # what follows a close is dropped
        self.deadline = ReadDeadline(loop, lane.request_timeout_s, self._read_paused, self._late, self._idle_out)
        self._server: tuple[str, int] | None = None
        self._peer: tuple[str, int] | None = None
        self._scheme = "http"
        self._closed = False  # closed (or closing): nothing more is written or run
        self._lingering: asyncio.TimerHandle | None = None
        self._cap_digits = len(str(self.app.max_body_bytes))
        self._over = False  # beyond --max-connections: its first request is refused
        self._done_reading = False  # no later request is read (a close asked for, an upgrade, a refusal)
        self._refusal: bytes | None = None  # written once the answers owed are, then the connection closes
        # the request being read
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []  # names in lower case, in order
        self._header_map: dict[bytes, bytes] = {}  # by lower-case name; a repeated header's last value
        self._head_size = 0  # bytes of the head so far (trailers included), for the cap
        self._head_too_large = False
        self._max_head = lane.max_header_bytes
        self._trailers = False  # the request being read had a trailer section
        self._body: list[bytes] = []
        self._body_size = 0
        self._too_large = False  # the SQS call's body passed the cap: the rest is dropped
        self._in_head = False  # a request head has begun and is not complete
        self._reading = False  # a request has begun and is not complete (head or body)
        self._sqs = False  # the request being read is an SQS call
        self._keep_alive_in = True  # the request being read lets the connection go on
        self._scope_in: dict[str, Any] | None = None
        self._incoming: _Request | Cycle | None = None  # the request being read, when it waits or streams
        self._head_bytes = 0  # bytes of the head in progress received in earlier reads
        self._heads_done = 0
        self._tail = b""
        # answering
        self._answering = False  # an answer is under way: a call that waits, or an ASGI cycle
        self._queue: deque[_Request | Cycle] = deque()  # requests waiting their turn, in order
        self._keep_alive = True  # the connection goes on after the answers owed
        self._answer_keep_alive = True  # the request being answered lets the connection go on
        self._answer_head = False  # the request being answered is a HEAD: no body is written
        self._gone: asyncio.Future[None] | None = None  # the last long poll's: completed when the connection goes
        # why reading is paused (the transport is paused while any holds)
        self._paused = False  # a request waits its turn
        self._write_paused = False  # the transport's write buffer is full (pause_writing)
        self._body_paused = False  # an ASGI app has 64 KiB of body not yet received
        self._transport_paused = False
        self._drain: asyncio.Future[None] | None = None
        # bytes read and not yet parsed: reading stopped while a request waits its turn (parsed once it has it)
        self._held = b""
        self._held_at = 0  # where the unparsed bytes begin in ``_held``
        self._held_feed = False  # parsing them is scheduled
        self._body_seen = 0  # body bytes of the request being read, so far
        self._stall: asyncio.TimerHandle | None = None  # the client does not take what is written: closes then
        self._linger_bytes = 0  # bytes read and dropped while closing
        self._linger_last = 0.0  # loop time of the last read while closing
        self._linger_end = 0.0  # loop time by which a closing connection closes, whatever arrives

    # ------------------------------------------------------------------------------------------- connection

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        lane = self.lane
        if lane.closing:
            transport.close()
            self._closed = True
            return
        lane.connections.add(self)
        self._over = len(lane.connections) > lane.max_connections
        sockname = transport.get_extra_info("sockname")
        if isinstance(sockname, tuple) and len(sockname) >= 2:
            self._server = (str(sockname[0]), int(sockname[1]))
        peername = transport.get_extra_info("peername")
        if isinstance(peername, tuple) and len(peername) >= 2:
            self._peer = (str(peername[0]), int(peername[1]))
        if transport.get_extra_info("sslcontext") is not None:
            self._scheme = "https"
        self.deadline.start()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self.lane.connections.discard(self)
        self.deadline.close()
        if self._lingering is not None:
            self._lingering.cancel()
            self._lingering = None
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        self._held = b""
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)
        incoming = self._incoming
        if isinstance(incoming, Cycle):
            incoming.disconnect()
        for item in self._queue:
            if isinstance(item, Cycle):
                item.disconnect()
        self._queue.clear()
        drain = self._drain
        if drain is not None and not drain.done():
            drain.set_result(None)

    def eof_received(self) -> bool | None:
        if self._lingering is not None and self.transport is not None:
            self.transport.close()
        return None

    def pause_writing(self) -> None:
        """The transport's write buffer is over its high-water mark (the client reads its answers slower than they
        come): read no more and answer no more requests until it drains (``resume_writing``). A client that takes
        nothing for the request timeout is cut off (:meth:`_stalled`)."""
        self._write_paused = True
        self._arm_stall()
        self._set_reading()

    def resume_writing(self) -> None:
        """The write buffer has drained: answer the requests read meanwhile, then read again."""
        self._write_paused = False
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        drain = self._drain
        if drain is not None:
            self._drain = None
            if not drain.done():
                drain.set_result(None)
        if self._closed or self.transport is None:
            if self.transport is not None and self.transport.get_write_buffer_size():
                self._arm_stall()  # closing: what is left must still be taken in time
            return
        self._set_reading()
        if not self._answering:
            self._next()

    def _set_reading(self) -> None:
        """Pause or resume the transport's reading to match the reasons held; once none holds, the bytes kept
        unparsed are parsed (on the loop's next turn: this may be called from inside the parser)."""
        transport = self.transport
        if transport is None or self._closed:
            return
        held = self._paused or self._write_paused or self._body_paused or self._done_reading
        if self._held:
            if self._done_reading:
                self._held = b""  # nothing after the last request read is read
            elif not held and not self._held_feed:
                self._held_feed = True
                self.loop.call_soon(self._feed_held)
        pause = held or bool(self._held)
        if pause != self._transport_paused:
            self._transport_paused = pause
            if pause:
                transport.pause_reading()
            else:
                transport.resume_reading()

    def _arm_stall(self) -> None:
        """The client has to take what is written within the request timeout (from now), else :meth:`_stalled`."""
        if self._stall is None and self.transport is not None:
            self._stall = self.loop.call_later(self.lane.request_timeout_s, self._stalled)

    def _stalled(self) -> None:
        """The client took none of what was written for the request timeout (its answers unread while the write
        buffer is full, or a close waiting for them): the connection is cut off, its answers dropped, its slot
        freed."""
        self._stall = None
        transport = self.transport
        if transport is None:
            return
        logger.info(
            "Closed a connection from %s: its client took none of its answers for %d s",
            self._peer[0] if self._peer else "?",
            self.lane.request_timeout_s,
        )
        self._closed = True
        self.deadline.close()
        transport.abort()

    def _close(self) -> None:
        """Close at once (a dropped answer, a failed call, shutdown): what was written is still sent, within the
        request timeout."""
        self._closed = True
        self.deadline.close()
        transport = self.transport
        if transport is not None:
            transport.close()
            if transport.get_write_buffer_size():
                self._arm_stall()

    def _close_gracefully(self) -> None:
        """Close after an answer: shut the write side once what was written is sent, read and drop what the client
        still sends (RFC 9112 9.6) until it closes its side, stays quiet for :data:`LINGER_S` seconds, has sent
        :data:`LINGER_MAX_BYTES` or the request timeout has passed; then close."""
        if self._closed:
            return
        self._closed = True
        self._done_reading = True
        self._held = b""
        self.deadline.close()
        transport = self.transport
        if transport is None:
            return
        try:
            if self.lane.closing or not transport.can_write_eof():
                self._close()
                return
            transport.write_eof()
        except (OSError, RuntimeError, NotImplementedError):
            self._close()
            return
        if transport.get_write_buffer_size():
            self._arm_stall()
        now = self.loop.time()
        self._linger_last = now
        self._linger_end = now + self.lane.request_timeout_s
        self._lingering = self.loop.call_at(now + LINGER_S, self._linger_check)
        if self._transport_paused:
            self._transport_paused = False
            transport.resume_reading()

    def _linger_read(self, size: int) -> None:
        """``size`` bytes arrived while closing: dropped; the quiet time starts again."""
        self._linger_bytes += size
        self._linger_last = self.loop.time()
        if self._linger_bytes > LINGER_MAX_BYTES:
            self._end_linger()

    def _linger_check(self) -> None:
        self._lingering = None
        now = self.loop.time()
        quiet_at = self._linger_last + LINGER_S
        if now >= quiet_at or now >= self._linger_end:
            self._end_linger()
        else:
            self._lingering = self.loop.call_at(min(quiet_at, self._linger_end), self._linger_check)

    def _end_linger(self) -> None:
        if self._lingering is not None:
            self._lingering.cancel()
            self._lingering = None
        self._close()

    def answering(self) -> bool:
        """Whether an answer is under way (or a request waits its turn) on this connection."""
        return self._answering or bool(self._queue)

    def shutdown(self) -> None:
        """Shutdown begins (``Lane.shutdown``): an idle connection, or one whose request is still arriving, is
        closed now; one answering a call closes once answered."""
        if self._closed:
            return
        self._keep_alive = False
        if not self._answering or self._reading:
            self._close()

    # ------------------------------------------------------------------------------------------- reading

    def data_received(self, data: bytes) -> None:
        if self._closed or self._done_reading:
            if self._lingering is not None:
                self._linger_read(len(data))
            return  # closing (the client's last bytes, read and dropped) or nothing more is read
        if self._held:  # read before the pause took effect: after the bytes kept
            self._held = self._held[self._held_at :] + data
            self._held_at = 0
            return
        if len(data) <= READ_SLICE:
            self._parse(data)
        else:
            self._parse_from(data, 0)

    def _parse_from(self, data: bytes, at: int) -> None:
        """Parse ``data`` from ``at`` in slices (:data:`READ_SLICE`; the rest of a body of known length in one);
        once reading is paused (a request waits its turn, the client does not read its answers, an ASGI app has
        body enough), the rest is kept unparsed until it resumes."""
        view = memoryview(data)
        size = len(data)
        while at < size:
            if self._paused or self._write_paused or self._body_paused:
                self._held = data
                self._held_at = at
                self._set_reading()
                return
            end = at + max(READ_SLICE, self._body_left())
            self._parse(view[at:end])
            if self._closed or self._done_reading:
                return
            at = end

    def _feed_held(self) -> None:
        """Parse the bytes kept unparsed, now that nothing holds reading (scheduled by :meth:`_set_reading`)."""
        self._held_feed = False
        data, at = self._held, self._held_at
        self._held, self._held_at = b"", 0
        if self._closed or self._done_reading or not data:
            return
        self._parse_from(data, at)
        self._set_reading()

    def _body_left(self) -> int:
        """Bytes still to come of the body being read, when its length was declared (else 0)."""
        if not self._reading or self._in_head:
            return 0
        declared = self._declared_length()
        return 0 if declared is None else max(0, declared - self._body_seen)

    def _declared_length(self) -> int | None:
        """The request's declared body length (``Content-Length``), or None (chunked, or none)."""
        headers = self._header_map
        return None if b"transfer-encoding" in headers else declared_length(headers.get(b"content-length"))

    def _parse(self, data: bytes | memoryview) -> None:
        """Feed ``data`` to the parser, the head cap checked first."""
        max_head = self.lane.max_header_bytes
        if not self._reading or self._in_head:
            if self._head_bytes + len(data) > max_head:
                end = head_end(self._tail + data)
                size = self._head_bytes + (len(data) if end < 0 else end - len(self._tail))
                if size > max_head:
                    self._fail(_HEAD_TOO_LARGE, "Request head larger than %d bytes refused (431).")
                    return
        was_in_head = self._in_head
        reading_head = not self._reading or was_in_head
        heads_done = self._heads_done
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._stop_reading()  # the rest is not HTTP/1.1 this server speaks: close once answered
            return
        except httptools.HttpParserError:
            if self._closed or self._done_reading:
                return  # a callback stopped the parser: what follows is not read
            if self._head_too_large:
                self._fail(_HEAD_TOO_LARGE, "Request head larger than %d bytes refused (431).")
            else:
                self._fail(_BAD_REQUEST, None)
            return
        if self._in_head:  # the read ended inside a request head: count its bytes for the next read
            if heads_done != self._heads_done or not reading_head:
                self._head_bytes = 0  # it began after an earlier request's bytes in this read: its share unknown
            elif was_in_head:
                self._head_bytes += len(data)
            else:
                self._head_bytes = len(data)
            self._tail = bytes(data[-2:])
        elif self._head_bytes:
            self._head_bytes = 0
            self._tail = b""

    def _stop_reading(self) -> None:
        """No later request is read on this connection: it closes once the answers owed are written."""
        self._done_reading = True
        self._keep_alive = False
        self._set_reading()
        if not self._reading:
            self._next()

    def _fail(self, refusal: bytes, warning: str | None) -> None:
        """The connection cannot be read on (a malformed request, a head too large, a request that did not arrive
        in time, one too many connections): the request being read is dropped unrun, ``refusal`` is written after
        the answers still owed (none when the refused request's ASGI answer has begun), then the connection
        closes."""
        if warning is not None:
            logger.warning(warning, self.lane.max_header_bytes)
        self._done_reading = True
        self._keep_alive = False
        self._refusal = refusal
        incoming = self._incoming
        if self._reading and incoming is not None:
            if isinstance(incoming, Cycle):
                if incoming.started():
                    self._refusal = None  # its answer has begun: the connection just closes after it
                incoming.disconnect()
            if incoming in self._queue:
                self._queue.remove(incoming)
        self._incoming = None
        self._reading = False
        self._set_reading()
        if not self._answering:
            self._next()

    def _read_paused(self) -> bool:
        """Whether the server, not the client, holds the request being read: the deadline starts again meanwhile.
        Each reason ends on its own: a request ahead is answered, a write stall is cut off after the request
        timeout, an ASGI app's body pause ends with its cycle (:meth:`cycle_done`)."""
        return self._paused or self._write_paused or self._body_paused or bool(self._held)

    def _late(self) -> None:
        """The request being read did not arrive whole in time: 408 (written after the answers owed) when
        something of it came, then close; a silent connection is just closed."""
        if self._closed or self.transport is None:
            return
        if self._reading:
            self._fail(REQUEST_TIMEOUT_ANSWER, None)
        elif not self.answering():
            self._close()

    def _idle_out(self) -> None:
        if not self._closed and not self._reading and not self._held and not self.answering():
            self._close()

    # httptools callbacks

    def on_message_begin(self) -> None:
        if self._closed or self._done_reading:
            raise _Stop
        self._url = b""
        self._headers = []
        self._header_map = {}
        self._head_size = 0
        self._body = []
        self._body_size = 0
        self._too_large = False
        self._body_seen = 0
        self._in_head = True
        self._reading = True
        self._incoming = None
        self.deadline.start()

    def on_url(self, url: bytes) -> None:
        self._url += url
        size = self._head_size = self._head_size + len(url)
        if size > self._max_head:
            self._head_too_large = True
            raise _Stop

    def on_header(self, name: bytes, value: bytes) -> None:
        size = self._head_size = self._head_size + len(name) + len(value) + 4  # with ": " and CRLF
        if size > self._max_head:
            self._head_too_large = True
            raise _Stop
        if not self._in_head:
            self._trailers = True  # a trailer field: never merged into the request's headers (RFC 9110 6.5.1)
            return
        name = name.lower()  # as ASGI scopes have them (a SigV4 signature is checked over these)
        self._headers.append((name, value))
        self._header_map[name] = value

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._heads_done += 1
        if self._over:
            self._fail(_UNAVAILABLE, None)
            raise _Stop
        parser = self.parser
        headers = self._header_map
        if b"transfer-encoding" in headers and not self._chunked_only():
            # RFC 9112 6.1: a transfer coding this server does not understand (refused 400, not 501: no 5xx for a
            # client's request)
            self._fail(_BAD_REQUEST, None)
            raise _Stop
        # HTTP/1.0 is closed after its answer whatever its Connection header (as h11 does; RFC 9112 9.3 lets a
        # server close, and 6.1 requires it after an HTTP/1.0 message with Transfer-Encoding). llhttp keeps an
        # HTTP/1.0 connection alive only when a Connection header asks, so without one the version is 1.1.
        keep_alive = parser.should_keep_alive()
        if keep_alive and b"connection" not in headers:
            version = "1.1"
        else:
            version = parser.get_http_version()
            keep_alive = keep_alive and version == "1.1"
        self._keep_alive_in = keep_alive
        method = parser.get_method()
        if method == b"CONNECT":  # a tunnel this server does not make (a 2xx would turn the connection into one)
            self._fail(_BAD_REQUEST, None)
            raise _Stop
        scope = self._scope_in = self._scope(_METHODS.get(method) or method.decode("latin-1"), version)
        expect = b"expect" in headers and version == "1.1" and headers[b"expect"].lower() == b"100-continue"
        path = scope["path"]
        sqs = self._sqs = self.lane.fast and (path == "/" or not is_admin_path(path))
        owed = self._answering or bool(self._queue) or self._write_paused
        length = headers.get(b"content-length")
        if sqs and length is not None and len(length) >= self._cap_digits and self._declared_too_large(length):
            self._refuse_body(scope, owed)
        if sqs:
            if not owed:
                if expect and self._has_body():
                    self.write(_CONTINUE)
                return
            self._incoming = request = _Request(scope, headers, keep_alive, expect and self._has_body())
            self._queue.append(request)
        else:
            scope.update(
                type="http",
                asgi=_ASGI,
                root_path="",
                state=self._app_state.copy(),
                extensions={DROP_EXTENSION: {}},
            )
            cycle = self._incoming = Cycle(self, scope, keep_alive)
            cycle.expect = expect and self._has_body()
            cycle.declared = self._declared_length()
            if not owed:
                self._run_cycle(cycle)
                return
            self._queue.append(cycle)
        if not self._paused:  # a request waits its turn: read no more until it has it
            self._paused = True
            self._set_reading()

    def _chunked_only(self) -> bool:
        """Whether the request's transfer codings (every ``Transfer-Encoding`` line) are exactly ``chunked``, the one
        this server decodes (as h11; llhttp would also take ``gzip, chunked`` and leave the body gzipped)."""
        codings = [
            coding.strip().lower()
            for name, value in self._headers
            if name == b"transfer-encoding"
            for coding in value.split(b",")
        ]
        return codings == [b"chunked"]

    def _declared_too_large(self, length: bytes) -> bool:
        """Whether a ``Content-Length`` value declares more than the body cap."""
        declared = declared_length(length)
        return declared is not None and declared > self.app.max_body_bytes

    def _refuse_body(self, scope: dict[str, Any], owed: bool) -> None:
        """An SQS call whose declared body is over the cap: answered with the cap's error (in its turn) without
        reading the body, and the connection closes after it (the body that may follow is not a request)."""
        self._reading = False
        self._in_head = False
        self.deadline.stop()
        self._done_reading = True
        self._keep_alive = False
        if owed:
            request = _Request(scope, self._header_map, False, False)
            request.too_large = request.complete = True
            self._queue.append(request)
            self._set_reading()
        else:
            self._set_reading()
            self._answer(scope, self._header_map, b"", False, True)
            self._next()
        raise _Stop

    def _has_body(self) -> bool:
        headers = self._header_map
        length = headers.get(b"content-length")
        return b"transfer-encoding" in headers or (length is not None and length.strip(b"0") != b"")

    def _scope(self, method: str, version: str) -> dict[str, Any]:
        """The request's context, the same for an SQS call and an ASGI request (ASGI HTTP scope keys; an ASGI
        request's adds ``type``, ``asgi``, ``root_path`` and ``state``): the client's address and the scheme from
        the socket, or from a trusted proxy's headers."""
        url = self._url
        # find(), not ``in``: a bytes ``in`` tries the operand as an int first and raises and clears a TypeError
        if url.startswith(b"/") and url.find(b"?") < 0 and url.find(b"#") < 0:
            raw_path, query = url, b""
        else:
            raw_path, query = _target(url)
        client, scheme = self._peer, self._scheme
        trusted = self.lane.trusted
        proxied = False
        if trusted is not None:
            client, scheme, proxied = trusted.apply(client, scheme, self._header_map)
        scope: dict[str, Any] = {
            "http_version": version,
            "method": method,
            "scheme": scheme,
            "path": _decoded_path(raw_path),
            "raw_path": raw_path,
            "query_string": query,
            "headers": self._headers,
            "client": client,
            "server": self._server,
        }
        if proxied:
            scope["proxied"] = True
        return scope

    def on_body(self, body: bytes) -> None:
        self._body_seen += len(body)
        incoming = self._incoming
        if incoming is None:
            if self._too_large:
                return
            self._body.append(body)
            self._body_size += len(body)
            if self._body_size > self.app.max_body_bytes:  # the rest is read and dropped
                self._too_large = True
                self._body = []
            return
        if isinstance(incoming, Cycle):
            if incoming.finished():  # answered before its body was read whole: the rest is dropped
                if self._body_seen > DISCARD_MAX_BYTES:
                    self._discard_over()  # more than is worth reading: close
                return
            incoming.feed(body)
            if incoming.buffered() > BODY_HIGH_WATER and not self._body_paused:
                self._body_paused = True
                self._set_reading()
            return
        if incoming.too_large:
            return
        incoming.body.append(body)
        incoming.size += len(body)
        if incoming.size > self.app.max_body_bytes:
            incoming.too_large = True
            incoming.body = []

    def on_message_complete(self) -> None:
        self._reading = False
        self.deadline.stop()
        keep_alive = self._keep_alive_in
        if self._trailers:
            self._trailers = False
            if keep_alive and not self.parser.should_keep_alive():  # a trailer said close: llhttp reads no more
                keep_alive = self._keep_alive_in = False
        incoming = self._incoming
        self._incoming = None
        if not keep_alive:
            self._done_reading = True  # nothing after this request is read (RFC 9112 9.6)
            self._keep_alive = False
        if incoming is not None:
            incoming.complete = True
            if not keep_alive:
                incoming.keep_alive = False
            if isinstance(incoming, Cycle):
                incoming.end()
                if incoming.finished() and not self._answering:  # answered before its end: on with the next
                    self._next()
            elif not self._answering and self._queue and self._queue[0] is incoming:
                self._next()
            if not keep_alive:
                raise _Stop
            return
        if self._sqs and not self._closed:
            scope = self._scope_in
            assert scope is not None
            self._scope_in = None
            parts = self._body
            body = parts[0] if len(parts) == 1 else b"".join(parts)
            self._answer(scope, self._header_map, body, keep_alive, self._too_large)
            self._next()
        if not keep_alive:
            raise _Stop

    # ------------------------------------------------------------------------------------------- answering

    def _answer(
        self, scope: dict[str, Any], headers: dict[bytes, bytes], body: bytes, keep_alive: bool, too_large: bool
    ) -> None:
        """Run the call: answered at once when it does not wait, else driven on as a :class:`WaitingCall`."""
        self._answer_keep_alive = keep_alive
        self._answer_head = scope["method"] == "HEAD"
        app = self.app
        try:
            started = app.begin(scope, headers, body, self._watch, too_large)
            if isinstance(started, tuple):  # answered without waiting: no coroutine made
                self._write(started)
                return
            coro = started
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
        """Write ``answer`` in one piece; drop the connection for ``DROP``; nothing when the client left."""
        transport = self.transport
        if self._closed or answer is None or transport is None:
            return
        if answer[0] == DROP_STATUS:
            self._close()
            return
        status, headers, payload = answer
        parts = [STATUS_LINES.get(status) or status_line(status), _date()]  # a dict lookup in compiled code
        for name, value in headers:  # appends, not a tuple per header added (compiled: one C call each)
            parts.append(name)
            parts.append(b": ")
            parts.append(value)
            parts.append(b"\r\n")
        if not self._answer_keep_alive or (
            not self._keep_alive and not self._queue and not self._reading and self._refusal is None
        ):
            parts.append(b"connection: close\r\n")  # the last answer on this connection (a refusal says it)
        parts.append(b"\r\n")
        if not self._answer_head:  # a HEAD request's answer has the head alone (RFC 9110 9.3.2)
            parts.append(payload)
        transport.write(b"".join(parts))
        self.lane.state.answers += 1

    def _run_cycle(self, cycle: Cycle) -> None:
        """Serve an ASGI request: its cycle runs in a task; the connection goes on when it ends."""
        self._answering = True
        self.lane.waiting.add(cycle)
        if self._paused and not cycle.complete:  # its body is still to be read
            self._paused = False
            self._set_reading()
        cycle.start(self.lane.asgi or self.app, self.loop)

    def _next(self) -> None:
        """After an answer: the requests waiting their turn, in order; then a refusal owed, or the close asked for,
        or reading again and the keep-alive wait."""
        queue = self._queue
        while queue and not self._answering and not self._closed and not self._write_paused:
            item = queue[0]
            if isinstance(item, Cycle):
                queue.popleft()
                if not item.complete and item is not self._incoming:  # pragma: no cover - dropped by _fail
                    continue
                self._keep_alive = self._keep_alive and item.keep_alive
                self._run_cycle(item)
                return
            if not item.complete:  # its body is still to be read
                if item.expect and not item.continued:
                    item.continued = True
                    self.write(_CONTINUE)
                if self._paused:
                    self._paused = False
                    self._set_reading()
                return
            queue.popleft()
            body = item.body[0] if len(item.body) == 1 else b"".join(item.body)
            self._answer(item.scope, item.headers, body, item.keep_alive, item.too_large)
        if self._answering or self._closed or self._write_paused:
            return
        if self._refusal is not None:
            self.write(self._refusal)
            self._refusal = None
            self._close_gracefully()
            return
        if not self._keep_alive and not self._reading:
            self._close_gracefully()
            return
        if self._paused:
            self._paused = False
            self._set_reading()
        if not self._reading:
            self.deadline.idle_until(self.lane.keep_alive_s)

    # ------------------------------------------------------------------------------------------- for cycles

    def write(self, data: bytes) -> None:
        """Write part of an ASGI answer (``sqsemu.http.cycle``)."""
        if not self._closed and self.transport is not None:
            self.transport.write(data)

    def date_line(self) -> bytes:
        """The ``date`` header line."""
        return _date()

    def drained(self) -> asyncio.Future[None] | None:
        """A future done once the write buffer has drained, or None when it is not over its high-water mark."""
        if not self._write_paused or self._closed:
            return None
        if self._drain is None:
            self._drain = self.loop.create_future()
        return self._drain

    def body_taken(self) -> None:
        """The ASGI app received the body buffered so far: read again if that was what held reading."""
        if self._body_paused:
            self._body_paused = False
            self._set_reading()

    def app_failed(self) -> None:
        """An ASGI app raised while serving a request (``sqsemu.http.cycle``): counted for ``/metrics``."""
        self.lane.state.app_errors += 1

    def _discard_over(self) -> None:
        """The body of a request answered early passed :data:`DISCARD_MAX_BYTES`: stop reading it and close
        gracefully (called from the parser: stops it)."""
        self._incoming = None
        self._reading = False
        self._keep_alive = False
        self.deadline.stop()
        self._close_gracefully()
        raise _Stop

    def drop(self) -> None:
        """Close the connection now without an answer (an ASGI app's ``sqsemu.drop``: a fault rule's dropped
        connection, realism's lost answer)."""
        self._close()

    def cycle_done(self, cycle: Cycle, keep_alive: bool) -> None:
        """An ASGI cycle has ended: the connection goes on with the next request, or closes. After an answer given
        before its request was read whole, the rest of the body is read and dropped (:meth:`_discard_over` bounds
        it), or, when that answer said ``connection: close`` (``sqsemu.http.cycle``), the connection closes
        gracefully; either way no pause of reading outlives its cycle."""
        self.lane.waiting.discard(cycle)
        body_paused = self._body_paused
        self._body_paused = False
        if self._closed:
            return
        self._answering = False
        if not keep_alive:
            self._keep_alive = False
            if cycle is self._incoming or not cycle.complete:  # its body is still arriving: nothing more is read
                self._incoming = None
                self._reading = False
                self._done_reading = True
                self._set_reading()
        if body_paused:
            self._set_reading()
        self._next()
