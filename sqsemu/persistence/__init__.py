"""Durable mode: the engine's state kept in SQLite, restored at start-up (``sqsemu --data-dir DIR``).

The store subscribes to the engine's events (``sqsemu.engine.events.Journal``); the engine knows nothing of it.
The HTTP layer answers a request that changed state only once ``Store.durable()`` says its changes are committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from sqsemu.engine.broker import Broker
    from sqsemu.persistence.rowforms import Restored


class StoreError(Exception):
    """The data folder cannot be used (in use by another server, not writable, corrupt, foreign or unreadable file):
    the server must not start. Also raised for changes that could not be committed, and for every request once the
    store has failed."""


class SavedTopic(Protocol):
    """What the store reads of an SNS topic (``sqsemu.sns.model.Topic``): its ARN and its document."""

    arn: str

    def to_doc(self) -> dict[str, Any]:
        """The topic as a JSON-able document (``Topic.from_doc`` reads it back)."""
        ...


class Store(Protocol):
    """What the server needs from a durable store."""

    on_failure: Callable[[str], None] | None
    """Called once, with the failure's one line, when the store fails for good (a commit or a journal call failed).
    The server sets it to stop itself; it must not raise, and it may run in the middle of an engine change."""
    on_commit: Callable[[float, int], None] | None
    """Told after each group commit: its duration (seconds) and its number of changes (the metrics listen)."""

    def restore(self, broker: Broker) -> None:
        """Load every saved queue, message, deduplication key and move task into ``broker``."""

    def attach(self, broker: Broker) -> None:
        """Subscribe to ``broker``'s changes from now on."""

    def record_loaded(self, restored: Restored) -> None:
        """Record a state loaded into the attached broker (``sqsemu.state``) as new rows, committed with the next
        batch (the old state's deletion was recorded before it, by the journal)."""

    def commit_pending(self) -> None:
        """Commit what was recorded so far, synchronously (start-up and shutdown, outside the event loop)."""

    async def durable(self) -> None:
        """Return once every change recorded so far is committed. Raises ``StoreError`` if they could not be, and
        for every call once the store has failed (a failed store stays failed)."""

    def commit_waiter(self) -> asyncio.Future[None] | None:
        """What ``durable()`` awaits: a future done once every change recorded so far is committed (its exception
        ``StoreError`` if they could not be), or None when nothing is to be committed. Raises ``StoreError`` at once
        when the store has failed."""

    def mapping_saved(self, uuid: str, document: str) -> None:
        """Record an event source mapping's saved form (JSON text), committed with the next batch."""

    def mapping_forgotten(self, uuid: str) -> None:
        """Record that the event source mapping ``uuid`` is gone."""

    def saved_mappings(self) -> list[str]:
        """The saved event source mappings (JSON texts), read at start-up."""

    def topic_saved(self, topic: SavedTopic) -> None:
        """Record that an SNS topic was created or changed; its document is written with the next batch."""

    def topic_forgotten(self, arn: str) -> None:
        """Record that the SNS topic ``arn`` is gone."""

    def saved_topics(self) -> list[str]:
        """The saved SNS topics (JSON texts, ``Topic.to_doc()``), in creation order, read at start-up."""

    def close(self, commit: bool = True) -> None:
        """Commit what is pending (unless ``commit`` is False), answer the requests still waiting for a commit,
        close the database and release the data folder."""
