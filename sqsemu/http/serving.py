"""A ``uvicorn.Server`` whose shutdown does not wait for long polls.

uvicorn's graceful shutdown (``uvicorn.Server.shutdown``) stops listening, closes idle connections, lets busy ones
finish their current request and only then sends the ASGI ``lifespan.shutdown`` event, where the app closes the
broker. A long poll is a busy connection: with one 20-second ``ReceiveMessage`` open, Ctrl-C / SIGTERM took up to
20 s (and on a manual clock, where a long poll's wait never runs out, for ever). :class:`PromptServer` calls
``on_shutdown`` (the broker's ``stop_waiting``: every waiting long poll is answered with no messages, and later
ones do not wait) as its shutdown *begins*, before uvicorn waits for open requests, so the wait is the time it takes
to write those answers. Requests still running after :data:`SHUTDOWN_GRACE_S` (e.g. under a fault rule's latency)
are cancelled by uvicorn's ``timeout_graceful_shutdown``, which the server config sets to it.

Shutdown begins at most 0.1 s after the signal (uvicorn's main loop looks at ``should_exit`` ten times a second);
with 1,000 long polls open the process exits well within a second.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import uvicorn

__all__ = ["SHUTDOWN_GRACE_S", "PromptServer"]

logger = logging.getLogger("sqsemu.http")

SHUTDOWN_GRACE_S = 5
"""Seconds a shutdown waits for requests still being handled (after answering long polls) before cancelling them."""


class PromptServer(uvicorn.Server):
    """``uvicorn.Server`` calling ``on_shutdown()`` (synchronously, on the event loop) when its shutdown begins."""

    def __init__(self, config: uvicorn.Config, on_shutdown: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_shutdown = on_shutdown

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            self.on_shutdown()
        except Exception:
            logger.exception("releasing long polls at shutdown failed")
        await super().shutdown(sockets=sockets)
