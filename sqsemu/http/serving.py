"""A ``uvicorn.Server`` whose shutdown does not wait for long polls.

uvicorn's graceful shutdown (``uvicorn.Server.shutdown``) stops listening, closes idle connections, lets busy ones
finish their current request and only then sends the ASGI ``lifespan.shutdown`` event, where the app closes the
broker. A long poll is a busy connection: with one 20-second ``ReceiveMessage`` open, Ctrl-C / SIGTERM took up to
20 s (and on a manual clock, where a long poll's wait never runs out, for ever). :class:`PromptServer` calls
``on_shutdown`` (the broker's ``stop_waiting``: every waiting long poll is answered with no messages, and later
ones do not wait) as its shutdown *begins*, before uvicorn waits for open requests, so the wait is the time it takes
to write those answers. Requests still running after :data:`SHUTDOWN_GRACE_S` (e.g. under a fault rule's latency)
are cancelled by uvicorn's ``timeout_graceful_shutdown``, which the server config sets to it.

The connections of sqsemu's own protocol (``sqsemu.http.sqsprotocol``) are shut down here, not by uvicorn (which
does not know them): idle ones and requests still arriving are closed at once, calls and ASGI cycles being
answered finish (for at most :data:`SHUTDOWN_GRACE_S`, then they are cancelled where they wait), no new connection
is served; then uvicorn's own shutdown runs (it stops listening).

Shutdown begins at most 0.1 s after the signal (uvicorn's main loop looks at ``should_exit`` ten times a second);
with 1,000 long polls open the process exits well within a second.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    from sqsemu.http.sqsprotocol import Lane

__all__ = ["SHUTDOWN_GRACE_S", "PromptServer"]

logger = logging.getLogger("sqsemu.http")

SHUTDOWN_GRACE_S = 5
"""Seconds a shutdown waits for requests still being handled (after answering long polls) before cancelling them."""


class PromptServer(uvicorn.Server):
    """``uvicorn.Server`` calling ``on_shutdown()`` (synchronously, on the event loop) when its shutdown begins, then
    shutting down ``lane``'s connections (sqsemu's own protocol), then uvicorn's."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Callable[[], None], lane: Lane | None = None) -> None:
        super().__init__(config)
        self.on_shutdown = on_shutdown
        self.lane = lane

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            self.on_shutdown()
        except Exception:
            logger.exception("releasing long polls at shutdown failed")
        lane = self.lane
        if lane is not None:
            lane.shutdown()
            loop = asyncio.get_running_loop()
            until = loop.time() + SHUTDOWN_GRACE_S
            while lane.busy() and loop.time() < until and not self.force_exit:
                await asyncio.sleep(0.01)
            cancelled = lane.cancel_waiting()
            if cancelled:
                logger.error("Cancelled %d running call(s): the graceful shutdown's grace period ran out", cancelled)
        await super().shutdown(sockets=sockets)
