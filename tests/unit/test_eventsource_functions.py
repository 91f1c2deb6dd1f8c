"""An in-process function's call is supervised (sqsemu.eventsource.functions): abandoned with the invocation that
waits for it, never left running unowned."""

from __future__ import annotations

import asyncio
from typing import Any

from sqsemu.eventsource.functions import Functions


def test_a_cancelled_invocation_cancels_the_coroutine_function_it_waits_for() -> None:
    events: list[str] = []

    async def handler(event: dict[str, Any], context: Any) -> None:
        events.append("started")
        try:
            await asyncio.Event().wait()  # runs until cancelled
        finally:
            events.append("stopped")

    async def main() -> None:
        functions = Functions()
        functions.register("slow", handler)
        invocation = asyncio.ensure_future(
            functions.invoke("slow", "arn:aws:lambda:us-east-1:000000000000:function:slow", {"Records": []}, 60.0)
        )
        while not events:
            await asyncio.sleep(0)
        invocation.cancel()
        try:
            await invocation
        except asyncio.CancelledError:
            pass
        for _ in range(5):  # the function's cancellation runs on the next turns of the loop
            await asyncio.sleep(0)
        assert events == ["started", "stopped"]  # before the loop ends (asyncio.run would cancel an orphan too)

    asyncio.run(main())
