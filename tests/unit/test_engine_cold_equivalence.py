"""Whether a queue keeps its waiting messages cold (as bytes) or as objects is not observable: the same calls on two
queues, one keeping every waiting plain message cold and one keeping none, on two clocks moved alike, give the same
answers (bodies received and their order, receive counts, timestamps, errors) and the same counts, step by step."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sqsemu.engine.errors import SQSError
from sqsemu.engine.message import MessageAttributeValue, SendEntry
from tests.unit.engine_helpers import Engine

_SEND = st.tuples(st.just("send"), st.sampled_from([None, 0, 2]), st.booleans())
_RECEIVE = st.tuples(st.just("receive"), st.integers(1, 10), st.sampled_from([0, 5, 30]))
_DELETE = st.tuples(st.just("delete"), st.integers(0, 40))
_VISIBILITY = st.tuples(st.just("visibility"), st.integers(0, 40), st.sampled_from([0, 3]))
_ADVANCE = st.tuples(st.just("advance"), st.sampled_from([0.5, 3, 10, 31]))
_PURGE = st.tuples(st.just("purge"))
# Sends and clock moves weigh more than the rest: a backlog, then timeouts and retention running out.
_OPS = st.lists(
    st.one_of(_SEND, _SEND, _SEND, _RECEIVE, _RECEIVE, _DELETE, _VISIBILITY, _ADVANCE, _ADVANCE, _PURGE),
    min_size=5,
    max_size=60,
)


class _Side:
    """One queue and what its receives handed out."""

    def __init__(self, cold_after: int) -> None:
        self.engine = Engine()
        self.queue = self.engine.queue("q", MessageRetentionPeriod="60", VisibilityTimeout="30")
        self.queue.cold_after = cold_after
        self.handles: list[str] = []
        self.sent = 0

    def apply(self, op: tuple[Any, ...]) -> object:
        broker, queue = self.engine.broker, self.queue
        handle = self.handles[op[1]] if op[0] in ("delete", "visibility") and op[1] < len(self.handles) else ""
        try:
            if op[0] == "send":
                self.sent += 1
                attributes = {"k": MessageAttributeValue("String", "v")} if op[2] else None
                entry = SendEntry(f"m{self.sent}", delay_seconds=op[1], message_attributes=attributes)
                message = broker.send_message(queue, entry, "000000000000")
                return ("sent", message.body, message.md5_of_body(), message.sent_ms)
            if op[0] == "receive":
                got = self.engine.receive(queue, max_number_of_messages=op[1], visibility_timeout=op[2])
                self.handles += [handle for _, handle in got]
                return [(m.body, m.receive_count, m.sent_ms, m.first_receive_ms, m.sender_id) for m, _ in got]
            if op[0] == "delete":
                if handle:
                    broker.delete_message(queue, handle)
                return None
            if op[0] == "visibility":
                if handle:
                    broker.change_message_visibility(queue, handle, op[2])
                return None
            if op[0] == "advance":
                self.engine.clock.advance(op[1])
                return None
            broker.purge_queue(queue)
            return None
        except SQSError as error:  # the same words, but for the receipt handle (each side has its own)
            return ("error", type(error).__name__, str(error).replace(handle, "<handle>") if handle else str(error))

    def state(self) -> object:
        return (
            self.engine.counts(self.queue),
            self.queue.oldest_enqueued_ms(),
            [(m.body, m.state, m.receive_count) for m in self.queue.messages.values()],
        )


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_cold_and_object_queues_answer_alike(ops: list[tuple[Any, ...]]) -> None:
    cold, warm = _Side(0), _Side(10**9)
    try:
        for op in ops:
            assert cold.apply(op) == warm.apply(op), op
            assert cold.state() == warm.state(), op
        assert not warm.queue.cold
    finally:
        cold.engine.close()
        warm.engine.close()
