"""Durable mode: the engine's state kept in SQLite, restored at start-up (``sqsemu --data-dir DIR``).

The store subscribes to the engine's events (``sqsemu.engine.events.Journal``); the engine knows nothing of it.
The HTTP layer answers a request that changed state only once ``Store.durable()`` says its changes are committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker


class StoreError(Exception):
    """The data folder cannot be used (corrupt, foreign or unreadable file): the server must not start. Also raised
    for changes that could not be committed, and for every request once the store has failed."""


class Store(Protocol):
    """What the server needs from a durable store."""

    on_commit: Callable[[float, int], None] | None
    """Told after each group commit: its duration (seconds) and its number of changes (the metrics listen)."""

    def restore(self, broker: Broker) -> None:
        """Load every saved queue, message, deduplication key and move task into ``broker``."""

    def attach(self, broker: Broker) -> None:
        """Subscribe to ``broker``'s changes from now on."""

    def commit_pending(self) -> None:
        """Commit what was recorded so far, synchronously (start-up and shutdown, outside the event loop)."""

    async def durable(self) -> None:
        """Return once every change recorded so far is committed. Raises ``StoreError`` if they could not be, and
        for every call once the store has failed (a failed store stays failed)."""

    def close(self) -> None:
        """Commit what is pending, answer the requests still waiting for a commit and close the database."""
