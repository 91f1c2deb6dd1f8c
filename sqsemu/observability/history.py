"""The last 15 minutes of every queue, for the web console's charts: its depth (visible, in flight, delayed) and
its sends, receives and deletes per second, sampled every 10 seconds on the server's clock.

A layer around the engine, not inside it: the depth is read from the queues' counts (what ``/metrics`` reports as
``sqs_approximate_number_of_messages_*``), the sends, receives and deletes from the per-queue counters the metrics
keep (:mod:`sqsemu.observability.queuecounters`: ``sqs_number_of_messages_{sent,received,deleted}_total``). Nothing
new is counted. Samples are taken by a timer on the broker's timer wheel (``Broker.schedule``), so a manual clock
samples when it is advanced, exactly as 10 real seconds would.

The scheduler never ticks while idle (docs/architecture.md, principle 5): sampling stops once every queue is
empty and no counter moved since the previous sample, and the next message added, received or deleted (the engine's
journal, to which :class:`QueueHistory` subscribes with three one-line methods) starts it again at the next 10-second
boundary. It listens only while paused: once sampling runs, the journal's events would tell it nothing, and hearing
them cost every message a call (about 1,500 instructions with the journal's fan-out to two subscribers; issue 50),
so it unsubscribes when it arms the sampler and subscribes again when the sampler pauses; a queue deleted meanwhile
loses its samples at the next sample. The samples it did not take are those of an empty, quiet server:
:meth:`QueueHistory.series` fills them in as zero depth and zero rates.

Memory: 90 samples of 7 integers per queue. Held in memory only; a restart starts with no history.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from sqsemu.engine.events import JournalSubscriber
from sqsemu.engine.message import MessageState

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker
    from sqsemu.engine.events import AddReason, DeleteReason
    from sqsemu.engine.message import Message
    from sqsemu.engine.queue import Queue
    from sqsemu.observability.queuecounters import QueueCounters

__all__ = ["INTERVAL_MS", "SAMPLES", "WINDOW_MS", "QueueHistory"]

INTERVAL_MS = 10_000
"""Milliseconds between two samples (on the server's clock; samples fall on multiples of it)."""
WINDOW_MS = 15 * 60_000
"""How far back the history reaches."""
SAMPLES = WINDOW_MS // INTERVAL_MS
"""Samples kept per queue: 90."""

_Sample = tuple[int, int, int, int, int, int, int]
"""(time ms, visible, in flight, delayed, sent, received, deleted): the counters as running totals."""


class QueueHistory(JournalSubscriber["Queue"]):
    """Samples of every queue's depth and counters; ``counters`` are the metrics' per-queue counters (None with
    ``--no-metrics``: then only the depth is sampled and the rates are reported as ``None``).

    Construct it, then :meth:`start` (subscribes to ``broker``'s journal and takes the first sample at the next
    boundary). Everything runs on the event loop's thread, as the engine does.
    """

    def __init__(self, broker: Broker, counters: QueueCounters | None) -> None:
        self.broker = broker
        self.counters = counters
        self._samples: dict[Queue, deque[_Sample]] = {}
        self._armed = False

    def start(self) -> None:
        """Arm the first sample (the engine's events are heard from when sampling first pauses)."""
        self._arm()

    # ----------------------------------------------------------------- sampling

    def _arm(self) -> None:
        """Sample at the next boundary, and stop hearing the journal's events until sampling pauses again."""
        self._armed = True
        broker = self.broker
        now = broker.clock.now_ms()
        broker.schedule((now // INTERVAL_MS + 1) * INTERVAL_MS, _tick, self)
        broker.unsubscribe(self)

    def _pause(self) -> None:
        """Nothing was there or moved: no more samples until the journal's next event (principle 5)."""
        self._armed = False
        self.broker.subscribe(self)

    def sample(self, now_ms: int) -> bool:
        """Take one sample of every queue at ``now_ms``; whether anything was there or moved (if not, sampling
        pauses until the next event)."""
        busy = False
        counters = self.counters
        queues = list(self.broker.all_queues())
        live = set(queues)  # a queue deleted while sampling ran (its queue_deleted unheard): its samples go
        for gone in [queue for queue in self._samples if queue not in live]:
            del self._samples[gone]
        for queue in queues:
            counts = queue.counts
            counted = counters.get(queue) if counters is not None else None
            sample = (
                now_ms,
                counts[MessageState.VISIBLE],
                counts[MessageState.IN_FLIGHT],
                counts[MessageState.DELAYED],
                counted.sent if counted is not None else 0,
                counted.received if counted is not None else 0,
                counted.deleted if counted is not None else 0,
            )
            samples = self._samples.get(queue)
            if samples is None:
                samples = self._samples[queue] = deque(maxlen=SAMPLES)
            if any(sample[1:4]) or (samples and samples[-1][4:] != sample[4:]) or (not samples and any(sample[4:])):
                busy = True
            samples.append(sample)
        return busy

    def series(self, queue: Queue, now_ms: int) -> dict[str, Any]:
        """The queue's last 15 minutes as the admin route and the console show them.

        ``{"interval_seconds": 10, "window_seconds": 900, "now_ms", "rates": bool, "samples": [{"time_ms",
        "visible", "in_flight", "delayed", "sent_per_second", "received_per_second", "deleted_per_second"}, ...]}``:
        one sample per 10-second boundary of the window, oldest first, ending with the last boundary at or before
        ``now_ms``. Rates are per second over the interval before the sample (``None`` when the counters are off,
        and for a sample with nothing before it); boundaries with no sample (an idle server, a queue not yet
        created) have zero depth and zero rates.
        """
        last = now_ms // INTERVAL_MS * INTERVAL_MS
        first = last - (SAMPLES - 1) * INTERVAL_MS
        taken = {sample[0]: sample for sample in self._samples.get(queue, ())}
        rates = self.counters is not None
        out: list[dict[str, Any]] = []
        previous: _Sample | None = None
        for time_ms in range(first, last + 1, INTERVAL_MS):
            sample = taken.get(time_ms)
            if sample is None:
                # not sampled: an idle server (every queue empty, nothing moving) or a queue not there yet
                sample = (time_ms, 0, 0, 0, *(previous[4:] if previous is not None else (0, 0, 0)))
            point: dict[str, Any] = {
                "time_ms": time_ms,
                "visible": sample[1],
                "in_flight": sample[2],
                "delayed": sample[3],
            }
            for key, index in (("sent_per_second", 4), ("received_per_second", 5), ("deleted_per_second", 6)):
                if not rates:
                    point[key] = None
                elif previous is None:
                    point[key] = 0.0
                else:
                    point[key] = max(0, sample[index] - previous[index]) / (INTERVAL_MS / 1000)
            out.append(point)
            previous = sample
        return {
            "interval_seconds": INTERVAL_MS // 1000,
            "window_seconds": WINDOW_MS // 1000,
            "now_ms": now_ms,
            "rates": rates,
            "samples": out,
        }

    # ----------------------------------------------------------------- Journal: wake the sampler

    def message_added(self, queue: Queue, message: Message, reason: AddReason) -> None:
        """Something happens: sample again if sampling paused."""
        if not self._armed:
            self._arm()

    def messages_received(self, queue: Queue, count: int) -> None:
        """Something happens: sample again if sampling paused."""
        if not self._armed:
            self._arm()

    def message_deleted(self, queue: Queue, message: Message, reason: DeleteReason) -> None:
        """Something happens: sample again if sampling paused."""
        if not self._armed:
            self._arm()

    def queue_deleted(self, queue: Queue) -> None:
        """The queue's history goes with it."""
        self._samples.pop(queue, None)


def _tick(history: QueueHistory, due_ms: int) -> None:
    """The timer: sample at ``due_ms``, and arm the next sample unless the server was idle."""
    if history.sample(due_ms):
        history.broker.schedule(due_ms + INTERVAL_MS, _tick, history)
    else:
        history._pause()
