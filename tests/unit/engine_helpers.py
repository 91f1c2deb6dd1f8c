"""Shared set-up for engine unit tests: a broker on a ManualClock, no sockets."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from sqsemu.clock import ManualClock
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.limits import DEFAULT_LIMITS, Limits
from sqsemu.engine.message import SendEntry

T = TypeVar("T")
START_MS = 1_700_000_000_000
NS = Namespace("000000000000", "us-east-1")


def bytes_held_after(run: Callable[[], object]) -> int:
    """Bytes still allocated once ``run()`` has returned and the collector has run (``tracemalloc``, traced from
    just before the call): what the call left alive."""
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run()
        gc.collect()
        return int(tracemalloc.get_traced_memory()[0] - before)
    finally:
        tracemalloc.stop()


class Engine:
    """A started broker on a manual clock with helpers that run coroutines to completion."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, strict: bool = False) -> None:
        self.clock = ManualClock(START_MS)
        self.broker = Broker(self.clock, limits, strict)
        self.broker.start()
        self.loop = asyncio.new_event_loop()

    def queue(self, name: str = "q", **attributes: str) -> Queue:
        return self.broker.create_queue(NS, name, attributes, {})

    def send(self, queue: Queue, body: str = "body", **kwargs: Any) -> str:
        return self.broker.send_message(queue, SendEntry(body, **kwargs), "000000000000").message_id

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def receive(self, queue: Queue, **kwargs: Any) -> list[tuple[Any, str]]:
        kwargs.setdefault("wait_time_seconds", 0)
        return self.run(self.broker.receive_message(queue, **kwargs))

    def counts(self, queue: Queue) -> tuple[int, int, int]:
        a = self.broker.get_queue_attributes(
            queue,
            [
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesNotVisible",
                "ApproximateNumberOfMessagesDelayed",
            ],
        )
        return (
            int(a["ApproximateNumberOfMessages"]),
            int(a["ApproximateNumberOfMessagesNotVisible"]),
            int(a["ApproximateNumberOfMessagesDelayed"]),
        )

    def close(self) -> None:
        self.broker.close()
        self.loop.close()
