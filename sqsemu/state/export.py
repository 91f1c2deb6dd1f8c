"""A running server's state written as a saved-state file (:mod:`.form`), in slices of the event loop's time.

:func:`export_state` is a generator that the route drives as ``/metrics`` is driven (docs/observability.md, "A
scrape of many queues"): it gives back a chunk of lines each time it has worked
:data:`~sqsemu.observability.queuefamilies.SLICE_SECONDS` (1 ms), and the route sends the chunk and lets the event
loop run before asking for the next, so other clients are answered between two slices however large the state.

Every record is made by the function durable mode writes with: ``rowforms.queue_row``, ``rows.message_row``,
``rowforms.task_row``, ``Mapping.saved``, ``Topic.to_doc``. Each queue's messages are taken in one step
(``Queue.stored_parts``: two lists of references, no message copied) and written in slices; a message deleted
before its turn is left out. So the file is exact for a server that nobody changes while it is saved (a test
between two steps, a reproduction): a change made during a save may be in the file or not, a queue deleted
meanwhile keeps its row but loses the messages not yet written, one created meanwhile is not in it, and a message
moved to its dead-letter queue during the save may be written in both queues. A load (``POST /_sqsemu/state``)
during a save stops the save without its end line (a file that is refused), since the state it was writing is gone.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

from sqsemu.engine.fifo import FifoQueue
from sqsemu.engine.message import Message, MessageState
from sqsemu.observability.queuefamilies import SLICE_SECONDS
from sqsemu.persistence.rowforms import queue_row, task_row
from sqsemu.persistence.rows import message_row
from sqsemu.state.form import document_line, end_line, header_line, row_line

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker
    from sqsemu.engine.queue import Queue
    from sqsemu.eventsource.registry import EventSources
    from sqsemu.sns.api import SNS

__all__ = ["export_state"]

logger = logging.getLogger("sqsemu.state")

_CHECK_EVERY = 16
"""Records between two looks at the clock."""


def _order(message: Message) -> int:
    return message.order


def _messages(queue: Queue) -> Iterator[Message]:
    """The queue's messages in arrival order, as they are when each one's turn comes (cold ones made objects for
    the reader one at a time); deleted ones left out."""
    objects, cold = queue.stored_parts()
    merged = heapq.merge(objects, (queue.thaw(entry) for entry in cold), key=_order) if cold else iter(objects)
    deleted = MessageState.DELETED
    for message in merged:
        if message.state is not deleted:
            yield message


def _lines(broker: Broker, sns: SNS | None, sources: EventSources | None, version: str) -> Iterator[bytes]:
    """Every line of the file, made as it is asked for (the end line counts the records)."""
    records = 0
    yield header_line(broker.clock.now_ms(), version)
    queues = broker.all_queues()
    for queue in queues:
        if not queue.deleted:
            records += 1
            yield row_line("queues", queue_row(queue))
    for queue in queues:
        uid = queue.uid
        for message in _messages(queue):
            records += 1
            yield row_line("messages", message_row(uid, message.message_id, 0, message))
    fifo = [queue for queue in queues if isinstance(queue, FifoQueue) and not queue.deleted]
    for queue in fifo:
        for key, (expires_ms, message_id, sequence_number) in list(queue.dedup.items()):
            records += 1
            yield row_line("deduplication", (queue.uid, key, expires_ms, message_id, sequence_number))
    for queue in fifo:
        if queue.last_sequence_number:
            records += 1
            yield row_line("fifo_sequences", (queue.uid, str(queue.last_sequence_number)))
    for queue in queues:
        if not queue.deleted:
            for task in broker.move_tasks.tasks_of(queue):
                records += 1
                yield row_line("move_tasks", task_row(task))
    if sources is not None:
        for mapping in list(sources.mappings.values()):
            if mapping.state != "Deleting":
                records += 1
                yield document_line("event_source_mappings", mapping.saved())
    if sns is not None:
        for topic in list(sns.topics.by_arn.values()):
            records += 1
            yield document_line("topics", topic.to_doc())
    yield end_line(records)


def export_state(
    broker: Broker,
    sns: SNS | None,
    sources: EventSources | None,
    version: str,
    generation: Callable[[], int] = lambda: 0,
) -> Generator[bytes, None, None]:
    """The saved state of ``broker`` (its queues, messages, deduplication keys, sequence numbers and move tasks),
    ``sns``'s topics and ``sources``' mappings, as chunks of the file's lines (``version``: the sqsemu version
    written in the header): a chunk each time :data:`SLICE_SECONDS` of work is done, the rest at the end. Run on the
    server's event loop, letting it run between two chunks. ``generation()`` tells whether a load replaced the
    state since the save began (a new number): the save then stops without the end line (logged)."""
    began_generation = generation()
    clock = time.perf_counter
    began = clock()
    out: list[bytes] = []
    tick = 0
    for line in _lines(broker, sns, sources, version):
        out.append(line)
        tick += 1
        if tick % _CHECK_EVERY == 0 and clock() - began > SLICE_SECONDS:
            yield b"".join(out)
            out.clear()
            if generation() != began_generation:
                logger.warning("a state was loaded during a save (GET /_sqsemu/state): the save stops unfinished")
                return
            began = clock()
    yield b"".join(out)
