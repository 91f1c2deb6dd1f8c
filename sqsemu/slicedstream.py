"""A generator of byte chunks as an asynchronous stream that lets the event loop run after each chunk: what the
admin routes that answer with a long document made on the loop (``GET /metrics``, the saved state of
``GET /_sqsemu/state``) hand to Starlette's ``StreamingResponse``, so that no client's answer stalls the others
(docs/architecture.md, principle 21). The ground floor: imports nothing of sqsemu."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator

__all__ = ["sliced"]


async def sliced(chunks: Generator[bytes, None, None]) -> AsyncIterator[bytes]:
    """``chunks`` as an async stream, the event loop let run after each (an empty chunk is not sent); ``chunks`` is
    closed when the answer ends early (the client gone)."""
    try:
        for chunk in chunks:
            if chunk:
                yield chunk
            await asyncio.sleep(0)
    finally:
        chunks.close()
