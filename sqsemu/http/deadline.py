"""The request-read deadline of a connection: the one implementation both HTTP protocols use.

uvicorn gives a connection no deadline for sending its request: a client that sends its head one byte every few
seconds, or a body shorter than its ``Content-Length``, would keep its connection (and a file descriptor) for ever.
A connection's :class:`ReadDeadline` runs from the connection's opening, and from the first byte of each later
request, until that request has been read whole (``Config.request_timeout`` seconds). Handling a request is not
reading it: a long poll waits after its request was read, so no deadline runs while it waits. When the server itself
stopped reading the connection (a request queued behind another one), the client is not late: the deadline starts
again. When it runs out, the owner decides what to say (``408 Request Timeout`` for a request partly received and
not yet answered, nothing for a silent connection) and closes the connection.

Optionally the same timer closes a connection idle between requests after ``keep_alive_s`` (the HTTP keep-alive
timeout, used by ``sqsemu.http.sqsprotocol``; uvicorn's h11 protocol keeps its own).

One ``loop.call_at`` timer per connection, not cancelled and made anew per request: a keep-alive connection pays
for a timer about once per period, not per request. When it fires early it moves on to the current deadline. Used
by ``sqsemu.http.sqsprotocol`` (httptools) and ``sqsemu.http.h11guard`` (the h11 fallback).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["REQUEST_TIMEOUT_ANSWER", "ReadDeadline"]

REQUEST_TIMEOUT_ANSWER = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 15\r\n"
    b"connection: close\r\n\r\nRequest Timeout"
)
"""What a connection whose request did not arrive in time is answered (then it is closed)."""

_SLACK_S = 0.25  # a timer due this much later than wanted is moved earlier; within it, it is left to fire late


class ReadDeadline:
    """One connection's read deadline (and, optionally, idle timeout).

    ``timeout_s``: seconds a client has to send one whole request; ``paused()``: whether the server has stopped
    reading the connection (its deadline then starts again); ``late()``: called once when the deadline runs out
    (the owner answers 408 or not and closes); ``idle()``: called when the connection stayed idle past the time
    given to :meth:`idle_until` (the owner closes it)."""

    __slots__ = ("_idle", "_idle_at", "_late", "_loop", "_paused", "_timer", "_timer_at", "deadline", "timeout_s")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        timeout_s: float,
        paused: Callable[[], bool],
        late: Callable[[], None],
        idle: Callable[[], None] | None = None,
    ) -> None:
        self._loop = loop
        self.timeout_s = timeout_s
        self._paused = paused
        self._late = late
        self._idle = idle
        self.deadline: float | None = None  # loop time by which the request being read must be complete
        self._idle_at: float | None = None  # loop time at which an idle connection is closed
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    def start(self) -> None:
        """A request begins (or the connection opened): its deadline starts, unless one runs already."""
        self._idle_at = None
        if self.deadline is None:
            at = self.deadline = self._loop.time() + self.timeout_s
            if self._timer is None or self._timer_at > at + _SLACK_S:  # an idle timer set further out: move it in
                self._wake_at(at)

    def stop(self) -> None:
        """The request was read whole: no deadline until the next one begins (the timer is left to lapse)."""
        self.deadline = None

    def idle_until(self, seconds: float) -> None:
        """The connection is idle between requests: close it (``idle()``) unless a request begins within
        ``seconds``."""
        at = self._idle_at = self._loop.time() + seconds
        if self._timer is None or self._timer_at > at + _SLACK_S:
            self._wake_at(at)

    def close(self) -> None:
        """The connection is gone: no more timer."""
        self.deadline = self._idle_at = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _wake_at(self, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(at, self._fire)
        self._timer_at = at

    def _fire(self) -> None:
        self._timer = None
        now = self._loop.time()
        deadline = self.deadline
        if deadline is not None:
            if self._paused():  # the server is not reading this connection now: the client is not late
                deadline = self.deadline = now + self.timeout_s
            if now < deadline:
                self._wake_at(deadline)
                return
            self.deadline = None
            self._late()
            return
        idle_at = self._idle_at
        if idle_at is not None and self._idle is not None:
            if now < idle_at:
                self._wake_at(idle_at)
                return
            self._idle_at = None
            self._idle()
