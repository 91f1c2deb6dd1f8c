"""Every limit is read from the broker's ``Limits``: a broker built with other numbers enforces those."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sqsemu.engine.errors import (
    InvalidBatchEntryId,
    InvalidParameterValue,
    OverLimit,
    PurgeQueueInProgress,
    TooManyEntriesInBatchRequest,
)
from sqsemu.engine.limits import Limits
from sqsemu.engine.message import ReceiptEntry, SendEntry
from tests.unit.engine_helpers import Engine


@pytest.fixture
def small() -> Iterator[Engine]:
    engine = Engine(
        Limits(
            tags_max=2,
            tag_key_max_chars=3,
            policy_statements_max=1,
            deduplication_window_s=10,
            recently_s=5,
            batch_max_entries=2,
            batch_id_max_chars=4,
        ),
        strict=True,
    )
    yield engine
    engine.close()


def test_tag_limits_come_from_the_limits(small: Engine) -> None:
    q = small.queue()
    small.broker.tag_queue(q, {"a": "1", "b": "2"})
    with pytest.raises(InvalidParameterValue, match="at most 2 tags"):
        small.broker.tag_queue(q, {"c": "3"})
    with pytest.raises(InvalidParameterValue, match="between 1 and 3 characters"):
        small.broker.untag_queue(q, ["long"])


def test_policy_limits_come_from_the_limits(small: Engine) -> None:
    q = small.queue()
    small.broker.add_permission(q, "one", ["111122223333"], ["SendMessage"])
    with pytest.raises(OverLimit, match="at most 1 statements"):
        small.broker.add_permission(q, "two", ["111122223333"], ["SendMessage"])


def test_the_deduplication_window_comes_from_the_limits(small: Engine) -> None:
    q = small.queue("f.fifo", FifoQueue="true")
    entry = SendEntry("x", group_id="g", deduplication_id="d")
    first = small.broker.send_message(q, entry, "acct")
    small.clock.advance(9)
    assert small.broker.send_message(q, entry, "acct").message_id == first.message_id
    small.clock.advance(1)
    assert small.broker.send_message(q, entry, "acct").message_id != first.message_id


def test_strict_rules_and_batch_limits_come_from_the_limits(small: Engine) -> None:
    q = small.queue()
    small.broker.purge_queue(q)
    small.clock.advance(4)
    with pytest.raises(PurgeQueueInProgress):
        small.broker.purge_queue(q)
    small.clock.advance(1)
    small.broker.purge_queue(q)
    with pytest.raises(TooManyEntriesInBatchRequest):
        small.broker.delete_message_batch(q, [ReceiptEntry(str(i), "h") for i in range(3)])
    results = small.broker.send_message_batch(q, [SendEntry("a", id="abcd")], "acct")
    assert len(results) == 1
    with pytest.raises(InvalidBatchEntryId):
        small.broker.send_message_batch(q, [SendEntry("a", id="abcde")], "acct")
