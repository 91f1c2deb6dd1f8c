"""A read-only mapping view of a queue's stored messages by MessageId.

A queue indexes by MessageId only the messages received at least once (``Queue.received``: the ones a receipt handle
can name), so that a backlog never received costs no index entry and no text of its ids (docs/performance-compiled.md,
"RSS per stored 1 KiB message"). :class:`StoredMessages` gives the admin API, the console and tests the mapping they
read all messages through: arrival order (``Queue.snapshot``), lookups through ``Queue.find`` (the index, else a
scan). Reading it changes nothing: a message the queue keeps cold (as bytes) appears as an object made for the
reader. Pure Python: a ``Mapping`` subclass is no native class for mypyc (docs/compiled.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sqsemu.engine.message import Message

__all__ = ["StoredMessages"]


class _Store(Protocol):
    """What the view reads of a queue (``Queue``)."""

    def snapshot(self) -> list[Message]: ...

    def find(self, message_id: str) -> Message | None: ...

    def message_count(self) -> int: ...


class StoredMessages(Mapping[str, "Message"]):
    """Every message stored in ``queue`` (visible, in flight, delayed) by MessageId, in arrival order. A view: it
    reads the queue at each use; iterating it makes each message's id text (about 0.3 us each)."""

    __slots__ = ("_queue",)

    def __init__(self, queue: _Store) -> None:
        self._queue = queue

    def __getitem__(self, message_id: str) -> Message:
        message = self._queue.find(message_id)
        if message is None:
            raise KeyError(message_id)
        return message

    def __contains__(self, message_id: object) -> bool:
        return isinstance(message_id, str) and self._queue.find(message_id) is not None

    def __iter__(self) -> Iterator[str]:
        return (message.message_id for message in self._queue.snapshot())

    def __len__(self) -> int:
        return self._queue.message_count()

    def values(self) -> list[Message]:  # type: ignore[override]
        """The stored messages in arrival order (a new list)."""
        return self._queue.snapshot()

    def __repr__(self) -> str:
        return f"StoredMessages({ {message.message_id: message for message in self._queue.snapshot()}!r})"
