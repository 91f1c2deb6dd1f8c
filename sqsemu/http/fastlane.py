"""The fast lane: SQS calls answered by the HTTP protocol itself, without an ASGI request cycle.

Architecture note (docs/architecture.md, "The HTTP fast lane"): the app is served by uvicorn, and every request could go
through uvicorn's ASGI cycle. For the SQS endpoint that cycle cost more than the call itself: per request an
``asyncio.Event``, a task, two ``send`` messages (each header checked by two regular expressions), a ``receive``
message, and two socket writes (the head, then the body). :class:`FastLaneProtocol` subclasses the guarded
httptools protocol (``sqsemu.http.protocol``; uvicorn still owns the sockets, keep-alive, flow control, limits
and shutdown) and, for the requests that qualify, waits until the body has arrived whole, then calls
:meth:`sqsemu.http.app.SQSApp.answer` directly and writes the answer (status line, uvicorn's default headers such
as ``date``, the app's headers, the body) in one ``transport.write``. The answer is the app's own: same bytes,
same errors, same metrics and access lines as over ASGI.

No task when none is needed: the call's coroutine is started in the protocol's callback and runs until it
completes or first waits. Most calls (a send, a delete, a receive that finds messages) complete without waiting,
and are answered at once. A call that waits (a long poll, a durable commit, a fault rule's latency) continues in a
task made then, registered with the server like uvicorn's own request tasks (so shutdown waits for, and after its
grace period cancels, it). Code that runs before the first wait sees no current task (``asyncio.current_task()`` is
None); the engine and the app never ask for it.

Which requests qualify: a ``POST`` to the SQS endpoint (not ``/health``, ``/_sqsemu/...`` or ``/metrics``) with
no ``Expect: 100-continue``, no ``Origin`` / ``Sec-Fetch-Site`` (browsers: the cross-site rule), no
``X-Forwarded-Proto`` / ``X-Forwarded-For`` (uvicorn's proxy-headers middleware rewrites the scheme from them), a
body of at most 64 KiB (uvicorn's read buffer high-water mark: beyond it the request goes the ASGI way, which reads
it in parts), not queued behind a request still being answered on the same connection (pipelining), and not when
the server refuses it for ``--max-connections``. Everything else takes uvicorn's ASGI cycle, unchanged: a request
that stops qualifying once its body or headers are known is handed to that cycle with what was read so far.

A long poll in the fast lane learns that its client left from the connection's ``connection_lost``.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Generator
from functools import partial
from typing import Any

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, RequestResponseCycle

from sqsemu.http.app import DROP_STATUS, Answer, SQSApp, is_admin_path
from sqsemu.http.protocol import GuardedHttpToolsProtocol

__all__ = ["FAST_BODY_LIMIT", "FastLaneProtocol", "sqs_app_of"]

FAST_BODY_LIMIT = HIGH_WATER_LIMIT
"""Largest request body (bytes) answered in the fast lane; larger bodies take the ASGI cycle."""

_NOT_FAST = frozenset((b"origin", b"sec-fetch-site", b"x-forwarded-proto", b"x-forwarded-for"))


def sqs_app_of(app: Any) -> SQSApp | None:
    """The :class:`SQSApp` that uvicorn's loaded ``app`` serves, or None (another app, or wrapped in something
    other than uvicorn's proxy-headers middleware, such as its trace-level message logger)."""
    if isinstance(app, ProxyHeadersMiddleware):
        app = app.app
    return app if isinstance(app, SQSApp) else None


class _Continue:
    """Awaitable that goes on with a coroutine started outside any task: it hands the task what the coroutine
    yielded (the future it waits for) and passes the task's ``send``/``throw`` back to the coroutine."""

    __slots__ = ("coro", "first", "started")

    def __init__(self, coro: Any, first: Any) -> None:
        self.coro = coro
        self.first = first
        self.started = False  # whether a task has begun to await this (a task cancelled before never does)

    def __await__(self) -> Generator[Any, Any, Answer | None]:
        self.started = True
        coro, value = self.coro, self.first
        while True:
            try:
                sent = yield value
            except BaseException as exc:  # cancellation (shutdown), or GeneratorExit
                try:
                    value = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]


class _AwsSpelling:
    """The connection's transport as the ASGI cycle of an SQS call sees it: the response head it writes names the
    request id ``x-amzn-RequestId``, as AWS spells it (Developer Guide, "Interpreting Amazon SQS JSON API
    responses") and as the fast lane writes it; uvicorn writes every header name in lower case."""

    __slots__ = ("_transport",)

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport

    def write(self, data: bytes) -> None:
        if data.startswith(b"HTTP/1.1 "):
            data = data.replace(b"\r\nx-amzn-requestid: ", b"\r\nx-amzn-RequestId: ", 1)
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _reraise(exc: BaseException) -> None:
    raise exc


class FastLaneProtocol(GuardedHttpToolsProtocol):
    """The guarded httptools protocol with the fast lane for SQS calls (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.config.access_log:
            # uvicorn's access lines are off (sqsemu writes its own): uvicorn would still write them, and the fast
            # lane step aside for them, whenever the host program's logging gives "uvicorn.access" a handler
            # (propagation switched back on, as under pytest): the fast lane was then silently off.
            self.access_log = False
        self._sqs = sqs_app_of(self.app)
        self._lane = self._sqs.lane if self._sqs is not None else None
        self._fresh_context = bool(getattr(self.config, "reset_contextvars", False))  # uvicorn >= 0.53's option
        self._opening = False  # inside on_headers_complete: a task start there may be deferred
        self._deferred: RequestResponseCycle | None = None  # cycle waiting for its whole body (fast lane)
        self._gone: asyncio.Future[None] | None = None  # the last long poll's: completed when the connection is lost

    # ------------------------------------------------------------------------------------------- deciding

    def on_headers_complete(self) -> None:
        self._opening = self._sqs is not None
        try:
            super().on_headers_complete()
        finally:
            self._opening = False

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        if self._opening and app is self.app and self._qualifies(cycle):
            self._deferred = cycle  # its app is self.app
            return
        self._spell_as_aws(cycle, app)
        super()._start_asgi_task(cycle, app)

    def _spell_as_aws(self, cycle: RequestResponseCycle, app: Any) -> None:
        """An SQS call taking the ASGI cycle writes its request-id header as the fast lane does."""
        if self._sqs is not None and app is self.app and not is_admin_path(cycle.scope["path"]):
            cycle.transport = _AwsSpelling(cycle.transport)  # type: ignore[assignment]

    def _qualifies(self, cycle: RequestResponseCycle) -> bool:
        scope = cycle.scope
        if scope["method"] != "POST" or cycle.waiting_for_100_continue or self.access_log:
            return False
        return not is_admin_path(scope["path"])

    def _take_asgi_way(self) -> None:
        """Hand the deferred request to uvicorn's ASGI cycle, with what was read of it so far."""
        cycle, self._deferred = self._deferred, None
        if cycle is not None:
            self._spell_as_aws(cycle, self.app)
            super()._start_asgi_task(cycle, self.app)

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        cycle = self._deferred
        if cycle is not None and len(cycle.body) > FAST_BODY_LIMIT:
            self._take_asgi_way()  # its receive() resumes reading, which uvicorn paused at this size

    def on_message_complete(self) -> None:
        super().on_message_complete()
        cycle = self._deferred
        if cycle is None:
            return
        headers = dict(cycle.scope["headers"])
        if not _NOT_FAST.isdisjoint(headers):
            self._take_asgi_way()
            return
        self._deferred = None
        self._answer(cycle, headers)

    # ------------------------------------------------------------------------------------------- answering

    def _answer(self, cycle: RequestResponseCycle, headers: dict[bytes, bytes]) -> None:
        app = self._sqs
        assert app is not None
        body = bytes(cycle.body)
        cycle.body = bytearray()
        scope: Any = cycle.scope
        coro = app.answer(scope, headers.get, partial(app.given_body, body), self._watch_disconnect)
        # As uvicorn's own request tasks: a fresh context with its reset_contextvars option, else a copy.
        context = contextvars.Context() if self._fresh_context else contextvars.copy_context()
        try:
            first = context.run(coro.send, None)
        except StopIteration as stop:
            self._write(cycle, stop.value)
            return
        except Exception:
            self.logger.exception("Exception in the SQS fast lane")
            cycle.response_started = True  # nothing more is written on this connection
            self.transport.close()
            return
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: the connection closes and the loop stops
            cycle.response_started = True
            self.transport.close()
            # Raised here it would reach httptools, which turns whatever a callback raises into a parser error
            # (answered 400 by uvicorn): raised from a callback of its own it stops the loop, as it does when it
            # comes from uvicorn's own request tasks.
            self.loop.call_soon(_reraise, exc)
            return
        rest = _Continue(coro, first)
        task = self.loop.create_task(self._finish(cycle, rest), context=context)  # supervised
        task.add_done_callback(partial(self._finished, rest))
        self.tasks.add(task)

    async def _finish(self, cycle: RequestResponseCycle, rest: _Continue) -> None:
        try:
            answer = await rest
        except asyncio.CancelledError:
            self.transport.close()
            raise
        except Exception:
            self.logger.exception("Exception in the SQS fast lane")
            self.transport.close()
            return
        except BaseException:  # KeyboardInterrupt, SystemExit: re-raised by the event loop
            self.transport.close()
            raise
        self._write(cycle, answer)

    def _finished(self, rest: _Continue, task: asyncio.Task[None]) -> None:
        """Done callback of a call that went on in a task. A task cancelled before its first step never resumed
        the call: close the call's coroutine now (its ``finally`` clauses run: a long poll's waiter goes) and the
        connection, which will get no answer. (Known by ``rest.started``, not by the coroutine's frame: a compiled
        coroutine, ``sqsemu.compiled``, has none.)"""
        self.tasks.discard(task)
        if not rest.started:
            rest.coro.close()
            self.transport.close()

    def _watch_disconnect(self) -> asyncio.Future[None]:
        """A future completed when this connection is lost: made per call (a long poll calls it once, when it has
        to wait), so that what a finished long poll hung on it does not pile up on a keep-alive connection."""
        gone: asyncio.Future[None] = self.loop.create_future()
        if self.transport.is_closing():
            gone.set_result(None)
        self._gone = gone
        return gone

    def _write(self, cycle: RequestResponseCycle, answer: Answer | None) -> None:
        """Write ``answer`` in one piece and finish the cycle as uvicorn's ``send`` would; drop the connection for
        :data:`DROP`; nothing when the client left (None, or the connection is lost)."""
        if cycle.disconnected or answer is None:
            return
        transport = self.transport
        if answer[0] == DROP_STATUS:  # DROP
            cycle.response_started = True
            transport.close()
            return
        status, headers, payload = answer
        parts = [STATUS_LINE[status]]
        for name, value in cycle.default_headers:
            parts += (name, b": ", value, b"\r\n")
        for name, value in headers:
            parts += (name, b": ", value, b"\r\n")
        if not cycle.keep_alive:
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", payload)
        cycle.response_started = True
        transport.write(b"".join(parts))
        cycle.response_complete = True
        lane = self._lane
        if lane is not None:
            lane.answers += 1
        if not cycle.keep_alive:
            transport.close()
        cycle.on_response()

    def connection_lost(self, exc: Exception | None) -> None:
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)
        super().connection_lost(exc)


def fast_lane_protocol(request_timeout_s: float, max_header_bytes: int) -> type[FastLaneProtocol]:
    """A :class:`FastLaneProtocol` subclass with these limits (see ``sqsemu.http.protocol.guarded_protocol``), to
    pass as ``uvicorn.Config(http=...)``."""
    return type(
        "SqsemuHttpProtocol",
        (FastLaneProtocol,),
        {"request_timeout_s": float(request_timeout_s), "max_header_bytes": int(max_header_bytes)},
    )
