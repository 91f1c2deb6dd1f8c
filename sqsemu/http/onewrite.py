"""One socket write per response: the response head is held back and written together with the body.

uvicorn's ``RequestResponseCycle.send`` writes the status line and headers when the app sends
``http.response.start`` and the body when it sends ``http.response.body``: two ``send()`` system calls per
response. On loopback each one runs the receiver's TCP path in the sender's context, and the profile of a
SendMessage load showed the two writes as 40% of the server's CPU. :class:`OneWriteTransport` sits between one
request's cycle and the connection's transport: the first write made after the response started (the head) is
kept, and the next write (the body, or the first chunk of a streamed body) goes out joined to it, in one call.

Nothing else changes: a ``100 Continue`` interim answer (written before the response starts) goes out at once; a
head still held when the cycle closes the connection or the connection is asked whether it is closing is written
first, so a client sees exactly the bytes it saw before, in the same order. Everything else is passed through to
the real transport.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

__all__ = ["OneWriteTransport"]


class _Cycle(Protocol):
    response_started: bool


class OneWriteTransport:
    """The transport one uvicorn request cycle writes to: joins the response head to the first body write.

    ``transport`` is the connection's transport; ``cycle`` the request cycle (its ``response_started`` tells a
    head from an interim ``100 Continue``)."""

    __slots__ = ("_transport", "_cycle", "_head", "_headed")

    def __init__(self, transport: asyncio.Transport, cycle: _Cycle) -> None:
        self._transport = transport
        self._cycle = cycle
        self._head: bytes | None = None
        self._headed = False  # the head was seen (held or written)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Hold the response head; write anything else at once, after the held head (one call)."""
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head + data)
        elif not self._headed and self._cycle.response_started:
            self._head = bytes(data)
            self._headed = True
        else:
            self._transport.write(data)

    def flush(self) -> None:
        """Write a held head now (the body is not coming, or not yet)."""
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)

    def close(self) -> None:
        """Write a held head, then close the connection."""
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        """Whether the connection is closing."""
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
