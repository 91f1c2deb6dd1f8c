"""Fair queues: a standard queue's tenants (MessageGroupId), which of them are noisy, and the order that follows.

AWS (Developer Guide, "Amazon SQS fair queues" and "How Amazon SQS fair queues work"; docs/behaviour.md 4.10):

- A tenant is the MessageGroupId of a message on a standard queue; a message without one is a tenant of its own.
- A tenant is noisy when it holds more than 10% of the queue's in-flight messages and at least 30 of its own, or
  more than 10% of the consumers' recent processing time.
- While a tenant is noisy, a receive returns quiet tenants' visible messages first, and a noisy tenant's only when
  no quiet message waits; between noisy tenants, the one with the fewest messages in flight goes first.
- A tenant is no longer noisy once its backlog is gone or it has sent nothing for 5 minutes.

sqsemu's reading (docs/behaviour.md 4.10, with the reasons):

- Noisiness is a pure function of the queue's state and the clock, evaluated when a receive starts (and when
  metrics, peek or the console ask): nothing about it is remembered, so a durable server restored from its store
  makes the same decisions. It holds while the detection rule holds, the tenant has a backlog (visible or delayed
  messages) and it sent within the last 5 minutes (``QUIET_AFTER_MS``, from the newest ``sent_ms`` seen).
- "Recent processing time" is the processing under way: for each message in flight, the time since the receive
  that put it in flight. A tenant's share is its messages' sum over the queue's sum. Each sum is kept as
  ``count * now - sum(received_ms)``, so it costs two integers per tenant.
- A message of a group-less tenant is never noisy (it has no backlog while in flight) but counts in the totals.
- The order: a receive walks the queue's own order (send order) and sets a noisy tenant's messages aside (parked,
  per tenant); once a tenant is quiet again its parked messages are merged back by their place, so a tenant that
  turns noisy and quiet again does not make receives walk its backlog again.

Cost: a queue that never received a message with a MessageGroupId has no ``FairQueue`` (``Queue.fair`` is None):
one None check per state change. FIFO queues never get one. This module is pure (``now_ms`` injected).

Deciding who is noisy does not walk the tenants in flight (issue 28: 1.8 ms a receive at 20,000 of them). The
in-flight share rule needs at least ``CONCURRENCY_MIN`` messages of a tenant in flight: those tenants are kept in
``crowded`` (there are at most in-flight / 30). For the processing-time share, a tenant's processing time at
``now`` is ``m * now - s`` (``m`` its messages in flight, ``s`` the sum of their receipt times): among tenants with
the same ``m`` the order by processing time is the order by ``s`` whatever ``now`` is. So tenants are kept in one
heap per in-flight count, ordered by ``s`` (``by_count``; stale entries are skipped lazily and the heaps rebuilt when
they hold more than twice the live entries), and a receive looks at the top of each heap, popping only tenants over
the share (at most nine can be: the shares add up to 100%). The distinct in-flight counts are at most about
``sqrt(2 * in-flight)`` and usually a handful, so a receive costs about the same at 10 tenants and at 20,000
(``bench/fair_scale.py`` prints it).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from typing import Protocol

from sqsemu.engine.message import Message, MessageState

__all__ = [
    "CONCURRENCY_MIN",
    "QUIET_AFTER_MS",
    "SHARE_PERCENT",
    "FairHost",
    "FairQueue",
    "FairSnapshot",
    "Tenant",
]

DELAYED, VISIBLE, IN_FLIGHT, DELETED = (
    MessageState.DELAYED,
    MessageState.VISIBLE,
    MessageState.IN_FLIGHT,
    MessageState.DELETED,
)
SHARE_PERCENT = 10
"""A noisy tenant holds more than this percentage of the in-flight messages or of the processing time."""
CONCURRENCY_MIN = 30
"""... and, by in-flight share, at least this many of its own in flight."""
QUIET_AFTER_MS = 5 * 60 * 1000
"""A tenant that has sent nothing for this long (ms) is quiet."""


class FairHost(Protocol):
    """What the fair-queue bookkeeping needs from its queue: its counts by state and its own receive order (send
    order), which it takes candidates from."""

    counts: list[int]

    def take_next(self) -> Message | None:
        """The lowest-order candidate of the queue's receive order, taken off it (it may no longer be visible)."""

    def next_order(self) -> int | None:
        """The place (``Message.order``) of the candidate ``take_next`` would take, or None when there is none."""


class Tenant:
    """One message group of a fair queue: how many of its messages are in each state, the receipt times of those
    in flight (summed, epoch ms), the newest send (epoch ms) and its parked messages (a heap of (order, message)):
    visible messages a receive set aside while the tenant was noisy. They stay parked, still marked queued, until
    received; while the tenant is quiet again they compete with the queue's order by their place."""

    __slots__ = ("group_id", "counts", "received_sum", "last_send_ms", "parked", "stamp")

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.counts = [0, 0, 0, 0]
        self.received_sum = 0
        self.last_send_ms = 0
        self.parked: list[tuple[int, Message]] = []
        self.stamp = 0  # the ``by_count`` entry that is current (older entries of the tenant are stale)

    @property
    def backlog(self) -> int:
        """Messages waiting to be received: visible and delayed."""
        return self.counts[VISIBLE] + self.counts[DELAYED]


class FairSnapshot:
    """What a fair queue looks like at one instant (metrics, peek, the console): the noisy tenants' ids (sorted)
    and the visible, in-flight and delayed counts of quiet tenants."""

    __slots__ = ("noisy", "visible_quiet", "in_flight_quiet", "delayed_quiet")

    def __init__(self, noisy: list[str], visible: int, in_flight: int, delayed: int) -> None:
        self.noisy = noisy
        self.visible_quiet = visible
        self.in_flight_quiet = in_flight
        self.delayed_quiet = delayed


class FairQueue:
    """The fair-queue bookkeeping of one standard queue (see the module docstring)."""

    __slots__ = (
        "host",
        "tenants",
        "flying",
        "received_sum",
        "noisy",
        "released",
        "crowded",
        "by_count",
        "entries",
        "_stamps",
    )

    def __init__(self, host: FairHost) -> None:
        self.host = host
        self.tenants: dict[str, Tenant] = {}
        self.flying: dict[str, Tenant] = {}  # tenants with messages in flight
        self.crowded: dict[str, Tenant] = {}  # tenants with at least CONCURRENCY_MIN messages in flight
        # in-flight count -> heap of (received_sum, stamp, tenant): see the module docstring
        self.by_count: dict[int, list[tuple[int, int, Tenant]]] = {}
        self.entries = 0  # entries in the heaps, stale ones included
        self._stamps = itertools.count(1)
        self.received_sum = 0  # sum of received_ms over every message in flight (group or not)
        self.noisy: dict[str, Tenant] = {}  # as decided by the last ``begin``
        self.released: dict[str, Tenant] = {}  # quiet tenants that still have parked messages

    # ----------------------------------------------------------------- bookkeeping

    def add(self, message: Message) -> None:
        """A message arrived (sent, dead-lettered, moved in, restored) in its current state."""
        state = message.state
        if state is IN_FLIGHT:
            self.received_sum += message.received_ms
        group_id = message.group_id
        if group_id is None:
            return
        tenant = self.tenants.get(group_id)
        if tenant is None:
            tenant = self.tenants[group_id] = Tenant(group_id)
        tenant.counts[state] += 1
        if message.sent_ms > tenant.last_send_ms:
            tenant.last_send_ms = message.sent_ms
        if state is IN_FLIGHT:
            tenant.received_sum += message.received_ms
            self.flying[group_id] = tenant
            self._reindex(tenant)

    def _reindex(self, tenant: Tenant) -> None:
        """``tenant``'s messages in flight or their receipt times changed: a fresh ``by_count`` entry (the old one
        goes stale), and its place in ``crowded``."""
        mine = tenant.counts[IN_FLIGHT]
        if mine >= CONCURRENCY_MIN:
            self.crowded[tenant.group_id] = tenant
        else:
            self.crowded.pop(tenant.group_id, None)
        if not mine:
            tenant.stamp = 0
            return
        stamp = tenant.stamp = next(self._stamps)
        heapq.heappush(self.by_count.setdefault(mine, []), (tenant.received_sum, stamp, tenant))
        self.entries += 1
        if self.entries > 64 and self.entries > 2 * len(self.flying):
            self._rebuild()

    def _rebuild(self) -> None:
        """Drop the stale entries: one fresh entry per tenant in flight."""
        by_count: dict[int, list[tuple[int, int, Tenant]]] = {}
        for tenant in self.flying.values():
            by_count.setdefault(tenant.counts[IN_FLIGHT], []).append((tenant.received_sum, tenant.stamp, tenant))
        for heap in by_count.values():
            heapq.heapify(heap)
        self.by_count = by_count
        self.entries = len(self.flying)

    def moved(self, message: Message, old: MessageState, new: MessageState) -> None:
        """A message went from state ``old`` to ``new`` (``DELETED``: it left the queue)."""
        if old is IN_FLIGHT:
            self.received_sum -= message.received_ms
        elif new is IN_FLIGHT:
            self.received_sum += message.received_ms
        group_id = message.group_id
        if group_id is None:
            return
        tenant = self.tenants.get(group_id)
        if tenant is None:
            return
        counts = tenant.counts
        counts[old] -= 1
        if old is IN_FLIGHT:
            tenant.received_sum -= message.received_ms
            if not counts[IN_FLIGHT]:
                self.flying.pop(group_id, None)
            self._reindex(tenant)
        if new is DELETED:
            if not counts[VISIBLE] and not counts[DELAYED] and not counts[IN_FLIGHT] and not tenant.parked:
                del self.tenants[group_id]
            return
        counts[new] += 1
        if new is IN_FLIGHT:
            tenant.received_sum += message.received_ms
            self.flying[group_id] = tenant
            self._reindex(tenant)

    def clear(self) -> None:
        """PurgeQueue: every message is gone."""
        self.tenants.clear()
        self.flying.clear()
        self.crowded.clear()
        self.by_count.clear()
        self.entries = 0
        self.noisy.clear()
        self.released.clear()
        self.received_sum = 0

    # ----------------------------------------------------------------- decisions

    def _noisy_now(self, now_ms: int) -> Iterable[Tenant]:
        """The noisy tenants at ``now_ms``, without walking the tenants in flight (see the module docstring)."""
        in_flight = self.host.counts[IN_FLIGHT]
        total_time = in_flight * now_ms - self.received_sum
        found: dict[str, Tenant] = {}
        for tenant in self.crowded.values():
            if tenant.counts[IN_FLIGHT] * 100 > in_flight * SHARE_PERCENT:
                found[tenant.group_id] = tenant
        if total_time > 0:
            for mine, heap in list(self.by_count.items()):
                over: list[tuple[int, int, Tenant]] = []
                while heap:
                    entry = heap[0]
                    tenant = entry[2]
                    if entry[1] != tenant.stamp:  # stale: the tenant changed since
                        heapq.heappop(heap)
                        self.entries -= 1
                        continue
                    if (mine * now_ms - entry[0]) * 100 <= total_time * SHARE_PERCENT:
                        break
                    over.append(heapq.heappop(heap))
                    found[tenant.group_id] = tenant
                for entry in over:
                    heapq.heappush(heap, entry)
                if not heap:
                    del self.by_count[mine]
        for tenant in found.values():
            if tenant.backlog and now_ms - tenant.last_send_ms < QUIET_AFTER_MS:
                yield tenant

    def begin(self, now_ms: int) -> None:
        """A receive starts at ``now_ms``: decide which tenants are noisy. A tenant quiet again keeps its parked
        messages, which from now on compete with the queue's order by their place (``released``)."""
        noisy = {tenant.group_id: tenant for tenant in self._noisy_now(now_ms)}
        released = self.released
        for group_id, tenant in self.noisy.items():
            if group_id not in noisy and tenant.parked:
                released[group_id] = tenant
        for group_id in noisy:
            released.pop(group_id, None)
        self.noisy = noisy

    def _pop_parked(self, tenant: Tenant) -> Message:
        """Take ``tenant``'s oldest parked message; forget the tenant when nothing of it is left."""
        message = heapq.heappop(tenant.parked)[1]
        if not tenant.parked:
            self.released.pop(tenant.group_id, None)
            if not any(tenant.counts) and self.tenants.get(tenant.group_id) is tenant:
                del self.tenants[tenant.group_id]
        return message

    def next_visible(self) -> Message | None:
        """The next candidate of a receive in the fair order: the queue's order, merged by place with the parked
        messages of tenants quiet again, with noisy tenants' messages parked aside; once none is left, the parked
        message of the noisy tenant with the fewest messages in flight (then the oldest). May return a message
        that is no longer visible (the caller skips it)."""
        noisy, released, host = self.noisy, self.released, self.host
        while True:
            first: Tenant | None = None
            for quiet in released.values():
                if first is None or quiet.parked[0][0] < first.parked[0][0]:
                    first = quiet
            order = host.next_order()
            if first is not None and (order is None or first.parked[0][0] < order):
                return self._pop_parked(first)
            message = host.take_next()
            if message is None:
                break
            group_id = message.group_id
            owner = noisy.get(group_id) if group_id is not None else None
            if owner is None or message.state is not VISIBLE:
                return message
            heapq.heappush(owner.parked, (message.order, message))
        best: Tenant | None = None
        for tenant in noisy.values():
            if tenant.parked and (
                best is None
                or (tenant.counts[IN_FLIGHT], tenant.parked[0][0]) < (best.counts[IN_FLIGHT], best.parked[0][0])
            ):
                best = tenant
        return self._pop_parked(best) if best is not None else None

    def has_parked(self) -> bool:
        """Whether a tenant has parked messages (they may have left the visible state since)."""
        return bool(self.released) or any(tenant.parked for tenant in self.noisy.values())

    def parked_messages(self) -> list[Message]:
        """Every parked message (for a move task's peek)."""
        tenants = [*self.noisy.values(), *self.released.values()]
        return [message for tenant in tenants for _, message in tenant.parked]

    # ----------------------------------------------------------------- what it looks like

    def snapshot(self, now_ms: int) -> FairSnapshot:
        """The noisy tenants at ``now_ms`` and the quiet tenants' counts (changes nothing)."""
        counts = self.host.counts
        visible, in_flight, delayed = counts[VISIBLE], counts[IN_FLIGHT], counts[DELAYED]
        names = []
        for tenant in self._noisy_now(now_ms):
            names.append(tenant.group_id)
            visible -= tenant.counts[VISIBLE]
            in_flight -= tenant.counts[IN_FLIGHT]
            delayed -= tenant.counts[DELAYED]
        return FairSnapshot(sorted(names), visible, in_flight, delayed)
