"""The per-queue families of ``GET /metrics`` (labels ``account``, ``region``, ``queue``), written in slices of at
most :data:`SLICE_SECONDS` of the event loop's time each.

Why (issue 47, finding 7): with prometheus-client's collector a scrape built every sample of every queue as an
object, then wrote them, in one go on the event loop's thread: 3.5 s for 10,000 queues (29 MB of text), during
which no other client was answered. Here a scrape is a generator that the route drives (:mod:`.metrics`): it gives
back a chunk of text (or an empty one) each time it has worked :data:`SLICE_SECONDS`, and the route sends the chunk
and lets the event loop run before asking for the next. Three steps, each in slices:

1. the queues are put in the order the scrape writes them, ``(account, region, name)`` (each namespace's names
   sorted in runs of :data:`_RUN` names, the runs merged lazily: a sort of 10,000 names in one go held the loop
   for several milliseconds);
2. each queue's values are read together (the gauges from the queue, the counters from
   :class:`~sqsemu.observability.queuecounters.QueueCounters`), and the long polls waiting counted; a queue
   deleted before its turn is left out, one created meanwhile waits for the next scrape;
3. each family is written, queue by queue, in chunks of at most :data:`_CHUNK_LINES` lines.

So two queues' values may be read a few milliseconds apart (as the scrape of any live system), never a queue
twice. The text is the one prometheus-client writes for the same samples, byte for byte, in every format
``choose_encoder`` picks (the text format 0.0.4 and 1.0.0, OpenMetrics; every ``escaping``): each family's
``# HELP``/``# TYPE`` lines and the spelling of each sample's name are taken from prometheus-client's own encoder
once per format (:class:`Spelling`); label values are escaped as the exposition format says (``\\``, ``\\n``,
``\\"``) and values written as prometheus-client writes them (``floatToGoString``). What a queue costs per scrape:
its values (21 numbers, 5 more for a standard queue) and its lines (26 for a standard queue, 21 for a FIFO queue;
about 2.9 KB); its label text is made once and kept while the queue lives (:class:`QueueFamilyWriter`).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from sqsemu.engine.message import MessageState
from sqsemu.observability.queuecounters import MESSAGE_SIZE_BUCKETS_BYTES, QueueCounters, QueueCounts

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker
    from sqsemu.engine.queue import Queue

__all__ = [
    "QUEUE_FAMILIES",
    "SLICE_SECONDS",
    "QueueFamily",
    "QueueFamilyWriter",
    "Scan",
    "Spelling",
    "label_value",
    "sample_value",
]

SLICE_SECONDS = 0.001
"""The longest stretch (seconds) a scrape works before it gives back a chunk and lets the event loop run."""

_RUN = 1024
"""Names sorted in one go (a run) before the runs are merged."""
_CHECK_EVERY = 16
"""Rows (or names) between two looks at the clock."""
_CHUNK_LINES = 1024
"""Lines written before a slice ends whatever the clock says (about 110 KB): joining and encoding a chunk costs
time in proportion to its size, after the last look at the clock."""

Encoder = Callable[[Any], bytes]
"""prometheus-client's encoder of a registry (``generate_latest`` or its OpenMetrics form, as ``choose_encoder``
gives it): anything with ``collect()`` in, the exposition's bytes out."""


class QueueFamily(NamedTuple):
    """One family written here or by another sliced writer (:mod:`.topicfamilies`): its ``name`` (without
    ``_total``), ``kind`` (``gauge``, ``counter``, ``histogram``) and ``help`` text."""

    name: str
    kind: str
    help: str


QUEUE_FAMILIES = (
    QueueFamily(
        "sqs_approximate_number_of_messages_visible",
        "gauge",
        "Messages available for retrieval (CloudWatch ApproximateNumberOfMessagesVisible).",
    ),
    QueueFamily(
        "sqs_approximate_number_of_messages_not_visible",
        "gauge",
        "Messages in flight: received, not yet deleted or visible again (CloudWatch "
        "ApproximateNumberOfMessagesNotVisible).",
    ),
    QueueFamily(
        "sqs_approximate_number_of_messages_delayed",
        "gauge",
        "Messages delayed, not yet available (CloudWatch ApproximateNumberOfMessagesDelayed).",
    ),
    QueueFamily(
        "sqs_approximate_age_of_oldest_message_seconds",
        "gauge",
        "Age of the oldest message in the queue, in any state, in seconds; 0 when empty (CloudWatch "
        "ApproximateAgeOfOldestMessage).",
    ),
    QueueFamily(
        "sqs_number_of_messages_sent",
        "counter",
        "Messages clients stored in the queue (CloudWatch NumberOfMessagesSent).",
    ),
    QueueFamily(
        "sqs_number_of_messages_received",
        "counter",
        "Messages returned by ReceiveMessage calls (CloudWatch NumberOfMessagesReceived).",
    ),
    QueueFamily(
        "sqs_number_of_messages_deleted", "counter", "Messages deleted by clients (CloudWatch NumberOfMessagesDeleted)."
    ),
    QueueFamily(
        "sqs_number_of_empty_receives",
        "counter",
        "ReceiveMessage calls that returned no message (CloudWatch NumberOfEmptyReceives).",
    ),
    QueueFamily(
        "sqs_sent_message_size_bytes",
        "histogram",
        "Size of the messages sent: body plus message attributes, bytes (CloudWatch SentMessageSize).",
    ),
    QueueFamily(
        "sqs_number_of_messages_dead_lettered",
        "counter",
        "Messages moved from this queue to its dead-letter queue after maxReceiveCount receives.",
    ),
    QueueFamily(
        "sqs_number_of_messages_expired",
        "counter",
        "Messages deleted at the end of the queue's retention period (MessageRetentionPeriod).",
    ),
    QueueFamily(
        "sqs_approximate_number_of_noisy_groups",
        "gauge",
        "Fair queues: tenants (message groups) now noisy (CloudWatch ApproximateNumberOfNoisyGroups).",
    ),
    QueueFamily(
        "sqs_approximate_number_of_messages_visible_in_quiet_groups",
        "gauge",
        "Fair queues: visible messages of quiet tenants (CloudWatch ApproximateNumberOfMessagesVisibleInQuietGroups).",
    ),
    QueueFamily(
        "sqs_approximate_number_of_messages_not_visible_in_quiet_groups",
        "gauge",
        "Fair queues: in-flight messages of quiet tenants (CloudWatch "
        "ApproximateNumberOfMessagesNotVisibleInQuietGroups).",
    ),
    QueueFamily(
        "sqs_approximate_number_of_messages_delayed_in_quiet_groups",
        "gauge",
        "Fair queues: delayed messages of quiet tenants (CloudWatch ApproximateNumberOfMessagesDelayedInQuietGroups).",
    ),
    QueueFamily(
        "sqs_approximate_age_of_oldest_message_in_quiet_groups_seconds",
        "gauge",
        "Fair queues: age of the oldest message of a quiet tenant, seconds; 0 when none (CloudWatch "
        "ApproximateAgeOfOldestMessageInQuietGroups).",
    ),
)
"""The per-queue families, in the order they are written (the fair-queue ones, the last five, for standard queues
only)."""

# What step 2 reads: each queue's numbers, _STRIDE of them one after the other in one flat list, so that a scrape
# keeps no object per queue that the cyclic garbage collector tracks (a tuple per queue would count towards its
# collections, and a full one walks every queue of the server); the fair-queue families' numbers, of standard
# queues only, in a second one.
_SIZE_SUM = 10
_SIZES = 11
_STRIDE = _SIZES + len(MESSAGE_SIZE_BUCKETS_BYTES) + 1
_FAIR_STRIDE = 5
_COLUMN = {  # family -> its place among a queue's numbers (the fair-queue families': among its fair numbers)
    "sqs_approximate_number_of_messages_visible": 0,
    "sqs_approximate_number_of_messages_not_visible": 1,
    "sqs_approximate_number_of_messages_delayed": 2,
    "sqs_approximate_age_of_oldest_message_seconds": 3,
    "sqs_number_of_messages_sent": 4,
    "sqs_number_of_messages_received": 5,
    "sqs_number_of_messages_deleted": 6,
    "sqs_number_of_empty_receives": 7,
    "sqs_number_of_messages_dead_lettered": 8,
    "sqs_number_of_messages_expired": 9,
    "sqs_approximate_number_of_noisy_groups": 0,
    "sqs_approximate_number_of_messages_visible_in_quiet_groups": 1,
    "sqs_approximate_number_of_messages_not_visible_in_quiet_groups": 2,
    "sqs_approximate_number_of_messages_delayed_in_quiet_groups": 3,
    "sqs_approximate_age_of_oldest_message_in_quiet_groups_seconds": 4,
}
_FAIR_FAMILIES = frozenset(family.name for family in QUEUE_FAMILIES[-5:])
_EMPTY = QueueCounts()

Labels = tuple[str, str, str]
"""A queue's label text: ``account="..",queue="..",region=".."``, and the parts a histogram bucket's ``le`` goes
between: ``account="..",`` and ``queue="..",region=".."``."""


class Scan(NamedTuple):
    """What step 2 counted: ``queues`` (the queues read) and ``long_polls`` (ReceiveMessage calls waiting on them)."""

    queues: int
    long_polls: int


def label_value(value: str) -> str:
    """``value`` escaped for a label's quotes (the exposition formats' rule: ``\\`` → ``\\\\``, newline →
    ``\\n``, ``"`` → ``\\"``)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(queue: Queue) -> Labels:
    namespace = queue.namespace
    account = f'account="{label_value(namespace.account_id)}",'
    rest = f'queue="{label_value(queue.name)}",region="{label_value(namespace.region)}"'
    return account + rest, account, rest


def sample_value(value: float) -> str:
    """``value`` as prometheus-client writes it (``floatToGoString``); an integer below a million directly."""
    if type(value) is int and 0 <= value < 1_000_000:  # repr(float(n)) is "n.0"; from 1e6 Go's exponent form
        return f"{value}.0"
    from prometheus_client.utils import floatToGoString

    return cast(Callable[[float], str], floatToGoString)(value)


class _Families:
    """A stand-in registry for an encoder: ``collect()`` gives ``families``."""

    def __init__(self, families: Sequence[Any]) -> None:
        self.families = families

    def collect(self) -> Iterable[Any]:
        return self.families


class Spelling:
    """How one format writes each family's head (``# HELP``, ``# TYPE``) and each sample's name, learnt from
    prometheus-client's own ``encoder`` (a family without samples gives its head; one with an unlabelled sample its
    sample names), so that every format and escaping it offers is written as it writes it; for ``families`` (the
    per-queue ones unless told)."""

    def __init__(self, encoder: Encoder, families: Sequence[QueueFamily] = QUEUE_FAMILIES) -> None:
        from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        trailer = encoder(_Families(())).decode()  # what ends every answer: OpenMetrics' "# EOF"
        self.trailer = trailer
        self.head: dict[str, str] = {}
        self.samples: dict[str, tuple[str, ...]] = {}  # family -> its sample names (histogram: bucket, count, sum)
        for family in families:
            made: Callable[..., Any]
            if family.kind == "histogram":
                made = HistogramMetricFamily
                sample: dict[str, Any] = {"buckets": [("+Inf", 0.0)], "sum_value": 0.0}
            else:
                made = GaugeMetricFamily if family.kind == "gauge" else CounterMetricFamily
                sample = {"value": 0.0}
            head = self._without_trailer(encoder(_Families([made(family.name, family.help, labels=())])))
            whole = self._without_trailer(encoder(_Families([made(family.name, family.help, **sample)])))
            if not whole.startswith(head):
                raise RuntimeError(f"prometheus-client wrote {family.name}'s head unlike its samples'")
            names = tuple(line.split("{")[0].split(" ")[0] for line in whole[len(head) :].splitlines())
            self.head[family.name] = head
            self.samples[family.name] = names

    def _without_trailer(self, text: bytes) -> str:
        decoded = text.decode()
        return decoded[: len(decoded) - len(self.trailer)] if self.trailer else decoded


class QueueFamilyWriter:
    """Writes the per-queue families of ``broker``'s queues, with the counters of ``counters``, in slices (see the
    module docstring). Keeps each live queue's label text between scrapes (made again only for a new queue) and
    each format's spelling. Every call is on the event loop's thread."""

    def __init__(self, broker: Broker, counters: QueueCounters) -> None:
        self.broker = broker
        self.counters = counters
        self._labels: dict[Queue, Labels] = {}
        self._spellings: dict[str, Spelling] = {}
        self._le: tuple[str, ...] = ()  # the size buckets' le labels, made at the first scrape (prometheus-client's
        # spelling of a number: imported then, never at start-up; tests/unit/test_startup_imports.py)

    def _bucket_labels(self) -> tuple[str, ...]:
        """The message size buckets' ``le`` labels (``le="1024.0",`` ... ``le="+Inf",``), made once."""
        self._le = tuple(f'le="{sample_value(bound)}",' for bound in MESSAGE_SIZE_BUCKETS_BYTES) + ('le="+Inf",',)
        return self._le

    def spelling(self, encoder: Encoder, content_type: str) -> Spelling:
        """The spelling of the format ``choose_encoder`` named ``content_type`` (learnt once per format)."""
        spelling = self._spellings.get(content_type)
        if spelling is None:
            spelling = self._spellings[content_type] = Spelling(encoder)
        return spelling

    def write(self, encoder: Encoder, content_type: str) -> Generator[bytes, None, Scan]:
        """The per-queue families' text, in chunks: each chunk is what one slice wrote (empty while the queues are
        still being read); returns (as the generator's value) what the scrape counted."""
        spelling = self.spelling(encoder, content_type)
        read = _Read()
        scan = yield from self._read(read)
        yield from self._text(read, spelling)
        return scan

    # ---------------------------------------------------------------- steps 1 and 2

    def _ordered(self) -> Iterator[tuple[dict[str, Queue], str] | None]:
        """Each queue's (namespace's queues, name), in ``(account, region, name)`` order, with a None each time a
        slice's worth of sorting was done."""
        spaces = sorted(self.broker.namespaces.items(), key=lambda item: (item[0].account_id, item[0].region))
        for _, queues in spaces:
            names = list(queues)
            runs: list[list[str]] = []
            for start in range(0, len(names), _RUN):
                runs.append(sorted(names[start : start + _RUN]))
                yield None
            for name in runs[0] if len(runs) == 1 else heapq.merge(*runs):
                yield queues, name

    def _read(self, read: _Read) -> Generator[bytes, None, Scan]:
        counters = self.counters
        old = self._labels
        labels: dict[Queue, Labels] = {}
        now_ms = self.broker.clock.now_ms()
        visible_state, in_flight_state = MessageState.VISIBLE, MessageState.IN_FLIGHT
        delayed_state = MessageState.DELAYED
        numbers, fair_numbers = read.numbers, read.fair_numbers
        queue_labels, fair_labels = read.labels, read.fair_labels
        long_polls = 0
        clock = time.perf_counter
        began = clock()
        tick = 0
        for found in self._ordered():
            tick += 1
            if tick % _CHECK_EVERY == 0 or found is None:
                if clock() - began > SLICE_SECONDS:
                    yield b""
                    began = clock()
            if found is None:
                continue
            space, name = found
            queue = space.get(name)
            if queue is None:  # deleted while this scrape ran
                continue
            if queue.waiters:
                long_polls += queue.waiters.waiting_count()
            text = old.get(queue)
            if text is None:
                text = _labels(queue)
            labels[queue] = text
            queue_labels.append(text)
            counts = queue.counts
            visible, in_flight, delayed = counts[visible_state], counts[in_flight_state], counts[delayed_state]
            oldest = queue.oldest_enqueued_ms()
            age = 0.0 if oldest is None else max(0, now_ms - oldest) / 1000
            counted = counters.get(queue) or _EMPTY
            sizes = counted.sizes
            numbers.extend(
                (
                    visible,
                    in_flight,
                    delayed,
                    age,
                    counted.sent,
                    counted.received,
                    counted.deleted,
                    counted.empty_receives,
                    counted.dead_lettered,
                    counted.expired,
                    sizes.sum,
                )
            )
            numbers.extend(sizes.counts)
            if queue.fifo:
                continue
            fair_labels.append(text)
            snapshot = queue.fair_snapshot(now_ms)
            if snapshot is None:  # every message is quiet
                fair_numbers.extend((0, visible, in_flight, delayed, age))
                continue
            oldest_quiet = queue.oldest_quiet_enqueued_ms(snapshot.noisy)
            fair_numbers.extend(
                (
                    len(snapshot.noisy),
                    snapshot.visible_quiet,
                    snapshot.in_flight_quiet,
                    snapshot.delayed_quiet,
                    0.0 if oldest_quiet is None else max(0, now_ms - oldest_quiet) / 1000,
                )
            )
        self._labels = labels
        return Scan(len(queue_labels), long_polls)

    # ---------------------------------------------------------------- step 3

    def _text(self, read: _Read, spelling: Spelling) -> Iterator[bytes]:
        out: list[str] = []
        clock = time.perf_counter
        began = clock()
        numbers = read.numbers
        for family in QUEUE_FAMILIES:
            out.append(spelling.head[family.name])
            names = spelling.samples[family.name]
            if family.kind == "histogram":
                bucket, count, total = names[0] + "{", names[1] + "{", names[2] + "{"
                le = self._le or self._bucket_labels()
                for tick, (whole, account, rest) in enumerate(read.labels):
                    base = tick * _STRIDE
                    observed: float = 0
                    for place in range(len(le)):
                        observed += numbers[base + _SIZES + place]
                        out.append(f"{bucket}{account}{le[place]}{rest}}} {sample_value(observed)}\n")
                    out.append(f"{count}{whole}}} {sample_value(observed)}\n")
                    out.append(f"{total}{whole}}} {sample_value(numbers[base + _SIZE_SUM])}\n")
                    if tick % _CHECK_EVERY == 0 and (len(out) > _CHUNK_LINES or clock() - began > SLICE_SECONDS):
                        yield "".join(out).encode()
                        out = []
                        began = clock()
                continue
            sample = names[0] + "{"
            if family.name in _FAIR_FAMILIES:
                labels, column = read.fair_labels, read.fair_numbers[_COLUMN[family.name] :: _FAIR_STRIDE]
            else:
                labels, column = read.labels, numbers[_COLUMN[family.name] :: _STRIDE]
            for tick, (text, value) in enumerate(zip(labels, column, strict=True)):
                out.append(f"{sample}{text[0]}}} {sample_value(value)}\n")
                if tick % _CHECK_EVERY == 0 and (len(out) > _CHUNK_LINES or clock() - began > SLICE_SECONDS):
                    yield "".join(out).encode()
                    out = []
                    began = clock()
        if out:
            yield "".join(out).encode()


class _Read:
    """What step 2 read: each queue's label text and numbers (:data:`_STRIDE` each, in :data:`_COLUMN`'s places,
    then the sum and the buckets' counts of its message sizes), and the same for the fair-queue families of the
    standard queues (:data:`_FAIR_STRIDE` each)."""

    __slots__ = ("labels", "numbers", "fair_labels", "fair_numbers")

    def __init__(self) -> None:
        self.labels: list[Labels] = []
        self.numbers: list[float] = []
        self.fair_labels: list[Labels] = []
        self.fair_numbers: list[float] = []
