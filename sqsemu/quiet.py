"""Waiting until background work is quiet: what a test's ``settle`` does for the event source mappings
(``sqsemu.eventsource.registry``) and SNS deliveries (``sqsemu.sns.push``). The ground floor: imports nothing of
sqsemu."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["wait_until_quiet"]


async def wait_until_quiet(quiet: Callable[[], bool], rounds: int, timeout_s: float, busy: str) -> None:
    """Return once ``quiet()`` has held for ``rounds`` turns of the event loop in a row (work that a turn starts is
    seen by the next check); between checks while busy, sleep 1 ms. Raises ``TimeoutError(busy)`` after
    ``timeout_s`` real seconds (the loop's time, not the server's clock)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    held = 0
    while held < rounds:
        if quiet():
            held += 1
            await asyncio.sleep(0)
            continue
        held = 0
        if loop.time() > end:
            raise TimeoutError(busy)
        await asyncio.sleep(0.001)
