"""Fault points: named places between the steps of the engine's calls where a test can make the call fail, to prove
that every call is all or nothing (a send, a batch entry, a receive, a delete or a visibility change that fails
leaves no message, no deduplication ID, no count, no journal entry and no live timer behind).

Disarmed (the default, always outside tests) the fault points cost one module attribute read per call and a local
None check per point: the engine reads ``fault = faultpoints.ARMED`` once at the start of a call and writes ``if
fault is not None: fault("send.stored")`` at each point. :func:`arm`
installs a callable that receives each point's name as the engine passes it and raises where the test wants;
:func:`disarm` takes it away. This module is pure Python and imports nothing of sqsemu (the compiled engine reads
it; it is not in ``sqsemu.compiled.MODULES``).

The points, in the order a call passes them (``tests/unit/test_engine_all_or_nothing.py`` walks each):

- a send (SendMessage, each SendMessageBatch entry): ``send.numbered``, ``send.stored``, ``send.aged``,
  ``send.placed``, ``send.tenant``, ``send.woken``; on FIFO queues then ``send.deduplicated``;
- a receive: ``receive.delivered`` after each message put in flight, ``receive.flushed`` after the broker served
  other long polls, ``receive.recorded`` after the receive attempt was recorded (FIFO); with realism on, instead of
  ``receive.delivered``: ``realism.delivered`` after each message put in flight, ``realism.marked`` after its
  realism marks (reordered, duplicate pending) were set; then the dead-letter moves it decided, each a delete
  (``delete.counted``, ``delete.unlisted``), last;
- the hand-off of messages to a waiting long poll (a send, a visibility change or a timer makes them visible):
  the receive's points, then ``handoff.received`` before its dead-letter moves and the answer (a hand-off that
  fails is undone and contained by ``Broker._flush``: the operation that made the messages visible succeeds);
- a delete: ``delete.counted``, ``delete.unlisted``;
- a visibility change: ``visibility.changed``, ``visibility.scheduled``.
- a purge: ``purge.unscheduled`` after each in-flight or delayed message's timer was let go;
- a message move task's tick: ``move.added`` after each redriven copy was stored, before the source lets go;
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ARMED", "FaultInjected", "arm", "disarm"]

ARMED: Callable[[str], None] | None = None
"""The armed callable, or None (disarmed). Read by the engine at each fault point."""


class FaultInjected(RuntimeError):
    """The failure a test's armed callable raises at a fault point (any exception works; this one names itself)."""


def arm(hook: Callable[[str], None]) -> None:
    """Call ``hook(point_name)`` at every fault point from now on (it raises to make the call fail there)."""
    global ARMED
    ARMED = hook


def disarm() -> None:
    """Fault points do nothing again."""
    global ARMED
    ARMED = None
