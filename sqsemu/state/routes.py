"""``GET /_sqsemu/state`` (save) and ``POST /_sqsemu/state`` (load), behind the admin gate like every admin route.

- ``GET /_sqsemu/state`` → the saved-state file (:mod:`.form`; ``application/x-ndjson``, with ``Content-Disposition:
  attachment; filename="sqsemu-state.jsonl"``), written in slices of the event loop (:mod:`.export`), chunked.
- ``POST /_sqsemu/state`` with such a file as the body (at most :data:`STATE_MAX_BODY_BYTES`) → ``{"loaded":
  {"queues": n, "messages": n, "deduplication": n, "fifo_sequences": n, "move_tasks": n, "event_source_mappings":
  n, "topics": n}, "format_version": 1, "exported_ms": <the file's>, "shifted_ms": <how far its times moved>}``
  once the whole state is replaced (:mod:`.load`; in durable mode, once the new state is committed). A file that
  cannot be loaded answers 400 ``{"error": "..."}`` naming the line or record at fault (a newer format version
  names both versions) and changes nothing. Reading and checking the file run off the event loop (a worker
  thread: the server goes on answering meanwhile); the swap runs on it, in one step. One load at a time: a second
  one waits for the first.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import BaseRoute, Route

from sqsemu.admin.common import AdminError
from sqsemu.admin.health import package_version
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.eventsource.registry import event_sources_for
from sqsemu.slicedstream import sliced
from sqsemu.sns.layer import sns_for
from sqsemu.state.export import export_state
from sqsemu.state.form import MEDIA_TYPE, StateError
from sqsemu.state.load import checked_state, replace_state

if TYPE_CHECKING:
    from sqsemu.persistence import Store

__all__ = ["STATE_MAX_BODY_BYTES", "STATE_PATH", "StateRoutes"]

STATE_PATH = "/_sqsemu/state"
STATE_MAX_BODY_BYTES = 1024 * 1024 * 1024
"""Largest file ``POST /_sqsemu/state`` takes, in bytes (1 GiB; the other admin routes take 1 MiB). A load holds the
file and the state made from it in memory at once, a few times the file's size."""


class StateRoutes:
    """The two routes of one server (``store``: its durable store, None in memory). ``generation`` counts the
    loads: a save under way stops when it changes (:func:`~sqsemu.state.export.export_state`)."""

    def __init__(self, config: Config, broker: Broker, store: Store | None) -> None:
        self.config = config
        self.broker = broker
        self.store = store
        self.generation = 0
        self._loading = asyncio.Lock()

    def routes(self) -> list[BaseRoute]:
        """``GET`` and ``POST`` :data:`STATE_PATH`."""
        return [
            Route(STATE_PATH, self.save, methods=["GET"]),
            Route(STATE_PATH, self.load, methods=["POST"]),
        ]

    async def save(self, request: Request) -> StreamingResponse:
        """The saved state, chunk by chunk as it is made."""
        broker = self.broker
        chunks = export_state(
            broker, sns_for(broker), event_sources_for(broker), package_version(), lambda: self.generation
        )
        headers = {"content-disposition": 'attachment; filename="sqsemu-state.jsonl"'}
        return StreamingResponse(sliced(chunks), media_type=MEDIA_TYPE, headers=headers)

    async def load(self, request: Request) -> JSONResponse:
        """Replace the whole state by the body's."""
        async with self._loading:
            body = await request.body()
            try:
                state = await asyncio.to_thread(checked_state, body, self.config)
            except StateError as exc:
                raise AdminError(exc.message) from None
            broker = self.broker
            self.generation += 1
            answer = replace_state(broker, sns_for(broker), event_sources_for(broker), self.store, state)
        return JSONResponse(
            {
                "loaded": answer["loaded"],
                "format_version": state.version,
                "exported_ms": state.exported_ms,
                "shifted_ms": answer["shifted_ms"],
            }
        )
