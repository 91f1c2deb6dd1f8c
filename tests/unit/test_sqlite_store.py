"""The durable store (``sqsemu.persistence.sqlite.SQLiteStore``) without sockets: a broker on a manual clock
records into a store; a second store opened on the same folder restores into a fresh broker, which must hold the
same state. Also: coalescing of changes within one batch, refusal of unusable files, and group commit."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import sqsemu.server
from sqsemu import cli
from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Queue
from sqsemu.engine.message import Message, MessageAttributeValue, MessageState, SendEntry
from sqsemu.engine.queue import COLD_AFTER
from sqsemu.engine.redrive import KEEP_FINISHED
from sqsemu.persistence import StoreError
from sqsemu.persistence.sqlite import FILE_NAME, SQLiteStore
from tests.unit.engine_helpers import NS, START_MS, Engine

TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
MESSAGE_FIELDS = (
    "message_id",
    "body",
    "message_attributes",
    "system_attributes",
    "trace_header",
    "sender_id",
    "sent_ms",
    "size",
    "group_id",
    "deduplication_id",
    "enqueued_ms",
    "sequence_number",
    "dead_letter_source_arn",
    "receive_count",
    "first_receive_ms",
    "received_ms",
    "visible_at_ms",
    "receipt_serial",
)


class Node(Engine):
    """A broker on a manual clock with a store on ``data_dir``, restored (like the server) before it starts."""

    def __init__(self, data_dir: Path, now_ms: int = START_MS) -> None:
        self.clock = ManualClock(now_ms)
        self.broker = Broker(self.clock)
        self.store = SQLiteStore.open(str(data_dir))
        self.store.restore(self.broker)
        self.store.attach(self.broker)
        self.broker.start()
        self.loop = asyncio.new_event_loop()

    def commit(self) -> None:
        """Let a writer task started by an in-loop change finish, then commit what is left synchronously."""
        self.settle()
        self.store.commit_pending()

    def settle(self) -> None:
        """Let the tasks started in the loop (the store's writer) finish."""
        pending = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending))

    def get(self, name: str) -> Queue:
        return self.broker.get_queue(NS, name)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    def close(self) -> None:
        """Commit and close (a failed store commits nothing: just close it)."""
        self.settle()
        try:
            self.store.commit_pending()
        except StoreError:
            pass  # a failed store commits nothing more (the tests that make it fail check that)
        super().close()
        self.store.close()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def node(data_dir: Path) -> Iterator[Node]:
    n = Node(data_dir)
    yield n
    n.close()


def restart(node: Node, data_dir: Path, later_s: float = 0) -> Node:
    """Commit and close ``node``; a new node on the same folder, ``later_s`` after ``node``'s time."""
    now = node.clock.now_ms()
    node.close()
    return Node(data_dir, now + round(later_s * 1000))


def rows(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    """Read the committed file with a connection of its own."""
    connection = sqlite3.connect(data_dir / FILE_NAME)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def fields(message: Message) -> dict[str, Any]:
    return {name: getattr(message, name) for name in MESSAGE_FIELDS}


# --------------------------------------------------------------------------------------------------- restore


def test_bodies_are_read_back_byte_for_byte_with_their_digest(node: Node, data_dir: Path) -> None:
    """A body is kept as UTF-8 bytes with its MD5 behind them (``Message.data``): what a restart reads back is the
    same text, the same bytes and the same digest, whatever the characters."""
    bodies = [
        "plain ascii",
        "two \u00e9 and three \u2713 byte characters",
        "astral \U0001f600 \U00010000 \U0010fffd",
        "line\r\nbreaks\rand\ttabs\n",
        "\ue000\ufffd\ud7ff edges of the allowed ranges",
    ]
    q = node.queue("bodies")
    for body in bodies:
        node.send(q, body)
    before = [(m.body, m.data, m.md5_of_body(), m.size) for m in q.messages.values()]
    node = restart(node, data_dir)
    try:
        q = node.get("bodies")
        after = [(m.body, m.data, m.md5_of_body(), m.size) for m in q.messages.values()]
        assert after == before
        assert [body for body, *_ in after] == bodies
        for body, data, digest, size in after:
            assert data[:-16] == body.encode() + hashlib.md5(body.encode()).digest()
            assert digest == hashlib.md5(body.encode()).hexdigest() and size == len(body.encode())
    finally:
        node.close()


def test_queues_attributes_and_tags_are_restored(node: Node, data_dir: Path) -> None:
    dlq = node.queue("dlq")
    policy = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 4})
    src = node.broker.create_queue(
        NS, "src", {"VisibilityTimeout": "45", "DelaySeconds": "3", "RedrivePolicy": policy}, {"a": "1", "b": "2"}
    )
    node.advance(10)
    node.broker.set_queue_attributes(src, {"MessageRetentionPeriod": "600"})
    node.broker.tag_queue(src, {"c": "3"})
    node.broker.untag_queue(src, ["a"])
    node.broker.add_permission(src, "send", ["111111111111"], ["SendMessage"])
    fifo = node.queue("f.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    before = {
        q.name: (q.uid, q.arn, q.fifo, dict(q.attributes), dict(q.tags), q.created_s, q.last_modified_s)
        for q in (dlq, src, fifo)
    }
    all_before = node.broker.get_queue_attributes(src, ["All"])
    assert src.created_s != src.last_modified_s

    node = restart(node, data_dir, later_s=5)
    try:
        after = {
            q.name: (q.uid, q.arn, q.fifo, dict(q.attributes), dict(q.tags), q.created_s, q.last_modified_s)
            for q in node.broker.list_queues(NS, None)
        }
        assert after == before
        assert node.broker.get_queue_attributes(node.get("src"), ["All"]) == all_before
        assert node.broker.list_dead_letter_source_queues(node.get("dlq")) == [node.get("src")]
        assert node.get("src").tags == {"b": "2", "c": "3"}
        assert json.loads(node.get("src").attributes["Policy"])["Statement"][0]["Sid"] == "send"
    finally:
        node.close()


def test_messages_are_restored_with_every_field_and_derived_state(node: Node, data_dir: Path) -> None:
    q = node.queue("q", VisibilityTimeout="30")
    attributes = {
        "s": MessageAttributeValue("String", "text \u2713"),
        "n": MessageAttributeValue("Number", "12.5"),
        "b": MessageAttributeValue("Binary", None, b"\x00\xffbytes"),
    }
    system = {"AWSTraceHeader": MessageAttributeValue("String", TRACE)}
    ids = [
        node.send(q, "visible", message_attributes=attributes, system_attributes=system),
        node.send(q, "in-flight"),
        node.send(q, "released"),
        node.send(q, "delayed", delay_seconds=60),
        node.send(q, "expires-in-flight"),
    ]
    # receive the first: it comes back (VT 0) but keeps its receive count and first receive time
    node.receive(q, max_number_of_messages=1, visibility_timeout=0)
    node.advance(1)
    got = {m.body: handle for m, handle in node.receive(q, max_number_of_messages=4)}
    assert set(got) == {"visible", "in-flight", "released", "expires-in-flight"}
    node.broker.change_message_visibility(q, got["visible"], 0)
    node.broker.change_message_visibility(q, got["released"], 0)
    node.broker.change_message_visibility(q, got["in-flight"], 100)
    node.broker.change_message_visibility(q, got["expires-in-flight"], 3)
    before = [fields(m) for m in q.messages.values()]
    node.commit()

    node = restart(node, data_dir, later_s=5)  # 5 s later: "expires-in-flight" ran out while down
    try:
        q = node.get("q")
        assert [m.message_id for m in q.messages.values()] == ids
        assert [fields(m) for m in q.messages.values()] == before
        states = {m.body: m.state for m in q.messages.values()}
        assert states == {
            "visible": MessageState.VISIBLE,
            "in-flight": MessageState.IN_FLIGHT,
            "released": MessageState.VISIBLE,
            "delayed": MessageState.DELAYED,
            "expires-in-flight": MessageState.VISIBLE,
        }
        assert node.counts(q) == (3, 1, 1)
        # receipt handles from before stay valid for in-flight messages
        node.broker.change_message_visibility(q, got["in-flight"], 0)
        assert node.counts(q) == (4, 0, 1)
        node.advance(60)
        assert node.counts(q) == (5, 0, 0)
        visible = next(m for m in q.messages.values() if m.body == "visible")
        assert visible.receive_count == 2 and visible.message_attributes == attributes
    finally:
        node.close()


def test_a_receipt_handle_deletes_after_a_restart(node: Node, data_dir: Path) -> None:
    q = node.queue("q")
    node.send(q, "a")
    node.send(q, "b")
    handles = {m.body: handle for m, handle in node.receive(q, max_number_of_messages=2)}
    node = restart(node, data_dir)
    try:
        node.broker.delete_message(node.get("q"), handles["a"])
        assert [m.body for m in node.get("q").messages.values()] == ["b"]
        node.commit()
        assert [r[0] for r in rows(data_dir, "SELECT body FROM messages")] == ["b"]
    finally:
        node.close()


def test_retention_counts_from_the_original_send(node: Node, data_dir: Path) -> None:
    q = node.queue("q", MessageRetentionPeriod="60")
    node.send(q, "old")
    node.advance(30)
    node.send(q, "new")
    node = restart(node, data_dir, later_s=20)  # 50 s after "old" was sent
    try:
        q = node.get("q")
        assert node.counts(q) == (2, 0, 0)
        node.advance(10)
        assert [m.body for m in q.messages.values()] == ["new"]
        node.advance(30)
        assert node.counts(q) == (0, 0, 0)
        node.commit()
        assert rows(data_dir, "SELECT body FROM messages") == []
    finally:
        node.close()


def test_fifo_groups_sequence_numbers_and_deduplication_are_restored(node: Node, data_dir: Path) -> None:
    q = node.queue("q.fifo", FifoQueue="true", VisibilityTimeout="30")
    sent = {
        body: node.broker.send_message(q, SendEntry(body, group_id=body[0], deduplication_id=body), "000000000000")
        for body in ("a1", "a2", "b1")
    }
    numbers = {body: m.sequence_number for body, m in sent.items()}
    ((first, _),) = node.receive(q, max_number_of_messages=1)
    assert first.body == "a1"
    node = restart(node, data_dir, later_s=10)
    try:
        q = node.get("q.fifo")
        assert [m.sequence_number for m in q.messages.values()] == list(numbers.values())
        # group "a" is locked by a1 (in flight): only b1 comes out
        assert [m.body for m, _ in node.receive(q, max_number_of_messages=10)] == ["b1"]
        # a duplicate is recognised; a new message gets a higher sequence number
        again = node.broker.send_message(q, SendEntry("x", group_id="a", deduplication_id="a2"), "000000000000")
        assert again.message_id == sent["a2"].message_id
        new = node.broker.send_message(q, SendEntry("c1", group_id="c", deduplication_id="c1"), "000000000000")
        assert int(new.sequence_number or 0) > max(int(n or 0) for n in numbers.values())
        assert len(q.messages) == 4
        node.advance(20)
        bodies = [m.body for m, _ in node.receive(q, max_number_of_messages=10)]
        assert sorted(bodies) == ["a1", "a2", "c1"]
        assert bodies.index("a1") < bodies.index("a2")  # order within the group
    finally:
        node.close()


def test_expired_deduplication_keys_are_not_restored(node: Node, data_dir: Path) -> None:
    q = node.queue("q.fifo", FifoQueue="true")
    first = node.broker.send_message(q, SendEntry("m", group_id="g", deduplication_id="d"), "000000000000")
    node = restart(node, data_dir, later_s=301)
    try:
        q = node.get("q.fifo")
        again = node.broker.send_message(q, SendEntry("m", group_id="g", deduplication_id="d"), "000000000000")
        assert again.message_id != first.message_id
        assert len(q.messages) == 2
    finally:
        node.close()


def test_a_deduplication_key_expires_on_time_after_a_restart_whatever_its_name(node: Node, data_dir: Path) -> None:
    """Keys come back in expiry order: a key that sorts after a later-expiring one by name ("b-early" sent at t0,
    "a-late" at t0 + 200 s) still expires 5 minutes after its own send, so a send with it past then is stored."""
    q = node.queue("q.fifo", FifoQueue="true")
    early = node.broker.send_message(q, SendEntry("e", group_id="g", deduplication_id="b-early"), "000000000000")
    node.advance(200)
    late = node.broker.send_message(q, SendEntry("l", group_id="g", deduplication_id="a-late"), "000000000000")
    node = restart(node, data_dir)
    try:
        node.advance(101)  # t0 + 301 s
        q = node.get("q.fifo")
        again = node.broker.send_message(q, SendEntry("e2", group_id="g", deduplication_id="b-early"), "000000000000")
        assert again.message_id != early.message_id
        assert [m.body for m in q.messages.values()] == ["e", "l", "e2"]
        duplicate = node.broker.send_message(q, SendEntry("l2", group_id="g", deduplication_id="a-late"), "0")
        assert duplicate.message_id == late.message_id
        assert len(q.messages) == 3
    finally:
        node.close()


def test_dead_lettered_messages_and_move_tasks_are_restored(node: Node, data_dir: Path) -> None:
    dlq = node.queue("dlq")
    src = node.queue("src", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}))
    for i in range(5):
        node.send(src, f"m{i}")
    assert len(node.receive(src, max_number_of_messages=10, visibility_timeout=0)) == 5
    assert node.receive(src, max_number_of_messages=10) == []
    assert node.counts(dlq) == (5, 0, 0)
    assert {m.dead_letter_source_arn for m in dlq.messages.values()} == {src.arn}
    handle = node.broker.start_message_move_task(NS, dlq.arn, None, 1)
    node.advance(1)
    (task,) = node.broker.move_tasks.list(dlq.arn, 10)
    moved = task["ApproximateNumberOfMessagesMoved"]
    assert task["Status"] == "RUNNING" and 0 < moved < 5

    node = restart(node, data_dir)
    try:
        src, dlq = node.get("src"), node.get("dlq")
        (task,) = node.broker.move_tasks.list(dlq.arn, 10)
        assert (task["Status"], task["TaskHandle"]) == ("RUNNING", handle)
        assert (task["ApproximateNumberOfMessagesMoved"], task["ApproximateNumberOfMessagesToMove"]) == (moved, 5)
        assert (node.counts(src)[0], node.counts(dlq)[0]) == (moved, 5 - moved)
        node.advance(10)
        (task,) = node.broker.move_tasks.list(dlq.arn, 10)
        assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 5)
        assert sorted(m.body for m in src.messages.values()) == [f"m{i}" for i in range(5)]
    finally:
        node.close()
    node = Node(data_dir, START_MS + 20_000)
    try:
        (task,) = node.broker.move_tasks.list(node.get("dlq").arn, 10)
        assert task["Status"] == "COMPLETED"
        assert node.counts(node.get("src")) == (5, 0, 0)
    finally:
        node.close()


def test_move_tasks_pruned_from_memory_are_deleted_from_the_file(node: Node, data_dir: Path) -> None:
    dlq = node.queue("dlq")
    node.queue("src", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}))
    started = []
    for _ in range(KEEP_FINISHED + 3):
        started.append(node.clock.now_ms())
        node.broker.start_message_move_task(NS, dlq.arn, None, 1)
        node.advance(1)  # the source is empty: the task completes at its first tick
    node.commit()
    kept = [task["StartedTimestamp"] for task in node.broker.move_tasks.list(dlq.arn, 10)]
    assert sorted(kept) == started[-KEEP_FINISHED:]
    assert len(rows(data_dir, "SELECT task_id FROM move_tasks")) == KEEP_FINISHED
    node = restart(node, data_dir)
    try:
        listed = node.broker.move_tasks.list(node.get("dlq").arn, 10)
        assert [task["StartedTimestamp"] for task in listed] == kept
    finally:
        node.close()


def test_a_delayed_attribute_change_is_journaled_and_applied_after_a_restart(node: Node, data_dir: Path) -> None:
    node.broker.set_realism("attribute_delay=10", 1)
    queue = node.queue("late")
    node.broker.set_queue_attributes(queue, {"VisibilityTimeout": "45"})
    node.commit()  # what the answer waits for in durable mode
    node.store.close(commit=False)  # a kill: nothing more is written
    node = Node(data_dir, START_MS + 5_000)
    try:
        assert node.get("late").attributes["VisibilityTimeout"] == "30"
        node.advance(5)
        assert node.get("late").attributes["VisibilityTimeout"] == "45"
        node.commit()
        assert rows(data_dir, "SELECT delayed_attributes FROM queues") == [(None,)]
    finally:
        node.close()


def test_a_file_without_the_delayed_attributes_column_gets_it(node: Node, data_dir: Path) -> None:
    node.queue("old")
    node.close()
    connection = sqlite3.connect(data_dir / FILE_NAME)
    connection.execute("ALTER TABLE queues DROP COLUMN delayed_attributes")
    connection.commit()
    connection.close()
    node = Node(data_dir)
    try:
        assert node.get("old").name == "old"
        node.broker.set_queue_attributes(node.get("old"), {"DelaySeconds": "3"})
        node.commit()
        assert rows(data_dir, "SELECT name, delayed_attributes FROM queues") == [("old", None)]
    finally:
        node.close()


def test_deleted_purged_and_dropped_state_stays_gone(node: Node, data_dir: Path) -> None:
    kept, purged, dropped = node.queue("kept"), node.queue("purged"), node.queue("dropped")
    fifo = node.queue("f.fifo", FifoQueue="true")
    for q in (kept, purged, dropped):
        node.send(q, "a")
        node.send(q, "b")
    node.broker.send_message(fifo, SendEntry("f", group_id="g", deduplication_id="d"), "000000000000")
    node.commit()  # the rows exist on disk before they are removed
    ((message, handle),) = node.receive(kept, max_number_of_messages=1)
    node.broker.delete_message(kept, handle)
    node.broker.purge_queue(purged)
    node.send(purged, "after")
    node.broker.delete_queue(dropped)
    node.broker.purge_queue(fifo)
    node = restart(node, data_dir)
    try:
        assert sorted(q.name for q in node.broker.list_queues(NS, None)) == ["f.fifo", "kept", "purged"]
        assert [m.body for m in node.get("kept").messages.values()] == ["b"]
        assert [m.body for m in node.get("purged").messages.values()] == ["after"]
        assert node.get("purged").last_purge_ms == START_MS
        assert rows(data_dir, "SELECT COUNT(*) FROM deduplication") == [(0,)]
        fresh = node.broker.send_message(
            node.get("f.fifo"), SendEntry("f", group_id="g", deduplication_id="d"), "000000000000"
        )
        assert len(node.get("f.fifo").messages) == 1 and fresh.body == "f"
    finally:
        node.close()


# ------------------------------------------------------------------------------------------------- coalescing


def test_a_message_added_and_deleted_in_one_batch_writes_no_row(node: Node, data_dir: Path) -> None:
    q = node.queue("q")
    node.commit()
    node.send(q, "kept")
    node.send(q, "gone")
    ((message, handle),) = [(m, h) for m, h in node.receive(q, max_number_of_messages=2) if m.body == "gone"]
    node.broker.delete_message(q, handle)
    node.commit()
    assert rows(data_dir, "SELECT body, receive_count FROM messages") == [("kept", 1)]


def test_several_changes_in_one_batch_leave_the_last(node: Node, data_dir: Path) -> None:
    q = node.queue("q", VisibilityTimeout="10")
    node.send(q, "m")
    node.commit()
    ((_, handle),) = node.receive(q)
    node.broker.change_message_visibility(q, handle, 100)
    node.broker.change_message_visibility(q, handle, 200)
    node.commit()
    (message,) = q.messages.values()
    assert rows(data_dir, "SELECT receive_count, visible_at_ms, receipt_serial FROM messages") == [
        (1, START_MS + 200_000, message.receipt_serial)
    ]


def test_a_queue_created_and_deleted_in_one_batch_leaves_nothing(node: Node, data_dir: Path) -> None:
    q = node.queue("short-lived")
    node.send(q, "m")
    node.broker.delete_queue(q)
    node.commit()
    assert rows(data_dir, "SELECT COUNT(*) FROM queues") == [(0,)]
    assert rows(data_dir, "SELECT COUNT(*) FROM messages") == [(0,)]


# ------------------------------------------------------------------------------------------------ bad files


def test_a_corrupt_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    path.write_bytes(b"definitely not sqlite" * 100)
    with pytest.raises(StoreError, match="corrupt") as exc:
        SQLiteStore.open(str(tmp_path))
    assert str(path) in str(exc.value)
    assert path.read_bytes() == b"definitely not sqlite" * 100


def test_a_foreign_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(StoreError, match="another application") as exc:
        SQLiteStore.open(str(tmp_path))
    assert str(path) in str(exc.value)
    assert rows(tmp_path, "SELECT name FROM sqlite_master") == [("notes",)]


def test_a_file_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    SQLiteStore.open(str(tmp_path)).close()
    connection = sqlite3.connect(tmp_path / FILE_NAME)
    connection.execute("PRAGMA user_version=7")
    connection.close()
    with pytest.raises(StoreError, match="version 7") as exc:
        SQLiteStore.open(str(tmp_path))
    assert str(tmp_path / FILE_NAME) in str(exc.value)


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="file"):
        SQLiteStore.open(str(tmp_path / "file"))


def test_an_empty_file_is_taken_as_a_new_store(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"")
    store = SQLiteStore.open(str(tmp_path))
    store.close()
    assert rows(tmp_path, "SELECT COUNT(*) FROM queues") == [(0,)]


# ------------------------------------------------------------------------------------------------ sync level

# PRAGMA synchronous of the connection the store writes with: NORMAL (1) survives a crash of the process, FULL (2)
# also syncs the WAL at every commit, so a commit survives a power loss too. A SIGKILL cannot tell them apart.
SYNC_MODE = {"normal": 1, "full": 2}


def _record_connections(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """Every connection that ``sqlite3.connect`` opens from now on (the store's own among them)."""
    opened: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(sqlite3, "connect", recording)
    return opened


def _sync_mode(connection: sqlite3.Connection) -> tuple[int, str]:
    """(PRAGMA synchronous, PRAGMA journal_mode) of ``connection``: per connection, not stored in the file."""
    (synchronous,) = connection.execute("PRAGMA synchronous").fetchone()
    (journal_mode,) = connection.execute("PRAGMA journal_mode").fetchone()
    return synchronous, journal_mode


@pytest.mark.parametrize("fsync", ["normal", "full"])
def test_the_fsync_level_is_the_sync_mode_the_store_writes_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync: str
) -> None:
    opened = _record_connections(monkeypatch)
    store = SQLiteStore.open(str(tmp_path), fsync=fsync)
    try:
        (connection,) = opened
        assert _sync_mode(connection) == (SYNC_MODE[fsync], "wal")
    finally:
        store.close()


@pytest.mark.parametrize(
    ("args", "env", "fsync"),
    [
        ([], {}, "normal"),
        (["--fsync", "normal"], {}, "normal"),
        (["--fsync", "full"], {}, "full"),
        ([], {"SQSEMU_FSYNC": "full"}, "full"),
        (["--fsync", "normal"], {"SQSEMU_FSYNC": "full"}, "normal"),
    ],
    ids=["default", "flag-normal", "flag-full", "env-full", "flag-over-env"],
)
def test_the_fsync_option_sets_the_sync_mode_of_the_server_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str], fsync: str
) -> None:
    """``sqsemu --data-dir DIR [--fsync LEVEL]``: the server it would run (``run`` replaced, built as ``run`` builds
    it) writes its data file with the sync mode of LEVEL."""
    configs: list[Config] = []
    monkeypatch.setattr(sqsemu.server, "run", configs.append)
    clean: dict[str, str | None] = {f"SQSEMU_{name.upper()}": None for name in Config.field_names()}
    result = CliRunner().invoke(cli.main, ["--data-dir", str(tmp_path), *args], env={**clean, **env})
    assert result.exit_code == 0, result.output
    (config,) = configs
    opened = _record_connections(monkeypatch)
    sqsemu.server.build(config)
    (connection,) = opened
    try:
        assert connection.execute("PRAGMA database_list").fetchone()[2] == str(tmp_path / FILE_NAME)
        assert _sync_mode(connection) == (SYNC_MODE[fsync], "wal")
    finally:
        connection.close()


# ----------------------------------------------------------------------------------------------- group commit


def test_durable_returns_only_after_the_commit(node: Node, data_dir: Path) -> None:
    q = node.queue("q")
    node.commit()

    async def scenario() -> tuple[list[Any], list[Any]]:
        node.send(q, "m")  # recorded inside the loop: the writer task is started, not run yet
        before = rows(data_dir, "SELECT body FROM messages")
        await node.store.durable()
        return before, rows(data_dir, "SELECT body FROM messages")

    before, after = node.run(scenario())
    assert before == []
    assert after == [("m",)]


def test_a_failing_on_commit_callback_stops_neither_the_answers_nor_the_next_commits(
    node: Node, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Group commits run from the loop's callbacks: a bug in the owner's ``on_commit`` (the metrics) is logged and
    the requests waiting for that commit are answered all the same, and so are later ones."""
    q = node.queue("q")
    node.commit()

    def broken(_seconds: float, _changes: int) -> None:
        raise RuntimeError("a bug in the metrics")

    node.store.on_commit = broken

    async def scenario() -> None:
        for body in ("m1", "m2", "m3"):
            node.send(q, body)
            await asyncio.wait_for(node.store.durable(), 5)

    node.run(scenario())
    assert sorted(rows(data_dir, "SELECT body FROM messages")) == [("m1",), ("m2",), ("m3",)]
    assert node.store.failure is None
    assert "on_commit callback failed" in caplog.text


def test_durable_with_nothing_pending_returns_at_once(node: Node) -> None:
    node.commit()
    node.run(asyncio.wait_for(node.store.durable(), 5))


def test_concurrent_requests_share_commits(node: Node, data_dir: Path) -> None:
    q = node.queue("q")
    node.commit()
    commits: list[int] = []
    node.store.on_commit = lambda _seconds, changes: commits.append(changes)

    async def request(i: int) -> None:
        await asyncio.sleep(0)
        node.send(q, f"m{i}")
        await node.store.durable()

    async def scenario() -> None:
        await asyncio.gather(*(request(i) for i in range(50)))

    node.run(scenario())
    assert rows(data_dir, "SELECT COUNT(*) FROM messages") == [(50,)]
    assert sum(commits) == 50
    assert len(commits) < 50


def test_a_request_read_as_a_commit_s_answers_go_out_joins_the_changes_made_during_that_commit(
    node: Node, data_dir: Path
) -> None:
    """Group commit: after a commit the writer lets the loop write the answers it released and read what arrived
    meanwhile (``GATHER_PASSES``) before it takes the next batch. A client answered by one commit, whose next request
    is read right after the answer went out, shares the next commit with the change made during the first one
    instead of waiting for a commit of its own."""
    q = node.queue("q")
    node.commit()
    commits: list[int] = []
    node.store.on_commit = lambda _seconds, changes: commits.append(changes)
    loop = node.loop

    async def client_a() -> None:
        node.send(q, "a")
        await node.store.durable()  # answered by the first commit
        read: asyncio.Future[None] = loop.create_future()

        def next_request() -> None:  # what the loop's next read of this client's socket does
            node.send(q, "c")
            read.set_result(None)

        loop.call_soon(next_request)
        await read
        await node.store.durable()

    async def client_b() -> None:
        while not node.store._committing:  # the first commit is under way
            await asyncio.sleep(0)
        node.send(q, "b")
        await node.store.durable()

    async def scenario() -> None:
        await asyncio.gather(client_a(), client_b())

    node.run(scenario())
    assert sorted(rows(data_dir, "SELECT body FROM messages")) == [("a",), ("b",), ("c",)]
    assert commits == [1, 2]


def test_a_failed_commit_is_reported_to_the_waiters(node: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    q = node.queue("q")
    node.commit()

    def failing_commit(batch: Any, done: Any) -> None:  # the writer process refuses the batch
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(node.store, "_commit", failing_commit)

    async def scenario() -> None:
        node.send(q, "m")
        await node.store.durable()

    with pytest.raises(StoreError, match="disk I/O error"):
        node.run(scenario())


def test_fifo_sequence_numbers_keep_increasing_when_the_queue_is_empty_and_the_clock_reads_earlier(
    data_dir: Path,
) -> None:
    """The queue's last sequence number is state of its own: after a restart with no message and no live
    deduplication key left, a clock that reads earlier than before (a wall-clock step back, a new manual clock)
    must not make sequence numbers go backwards."""
    node = Node(data_dir, START_MS + 3_600_000)
    q = node.queue("q.fifo", FifoQueue="true")
    old = node.broker.send_message(q, SendEntry("m", group_id="g", deduplication_id="d"), "000000000000")
    node.broker.purge_queue(q)  # no message and no deduplication key left
    node.close()
    node = Node(data_dir, START_MS)  # an hour earlier
    try:
        new = node.broker.send_message(
            node.get("q.fifo"), SendEntry("m", group_id="g", deduplication_id="e"), "000000000000"
        )
        assert int(new.sequence_number or 0) > int(old.sequence_number or 0)
    finally:
        node.close()


def test_a_message_taken_by_a_long_poll_is_saved_in_flight(node: Node, data_dir: Path) -> None:
    q = node.queue("q", VisibilityTimeout="30")

    async def scenario() -> list[Any]:
        poll = asyncio.ensure_future(node.broker.receive_message(q, wait_time_seconds=20))
        await asyncio.sleep(0)
        node.send(q, "late")
        return await poll

    ((message, handle),) = node.run(scenario())
    assert message.body == "late"
    node = restart(node, data_dir, later_s=10)
    try:
        q = node.get("q")
        assert node.counts(q) == (0, 1, 0)
        node.broker.delete_message(q, handle)
        assert node.counts(q) == (0, 0, 0)
    finally:
        node.close()


def test_a_message_kept_cold_that_expires_leaves_the_store_too(node: Node, data_dir: Path) -> None:
    q = node.queue("q", MessageRetentionPeriod="60")
    q.cold_after = 0  # kept cold behind no backlog at all
    node.send(q, "old")  # plain and never received: kept as bytes, its row written
    node.commit()
    assert len(q.cold) == 1 and [r[0] for r in rows(data_dir, "SELECT body FROM messages")] == ["old"]
    node.advance(60)
    node.commit()
    assert node.counts(q) == (0, 0, 0) and rows(data_dir, "SELECT COUNT(*) FROM messages") == [(0,)]


def test_a_backlog_is_kept_cold_again_after_a_restart_and_received_in_order(node: Node, data_dir: Path) -> None:
    q = node.queue("q")
    total = COLD_AFTER + 5
    for n in range(total):
        node.send(q, f"m{n}")
    ((first, handle),) = node.receive(q)  # in flight over the restart: an object
    node.commit()
    node = restart(node, data_dir)
    try:
        q = node.get("q")
        assert node.counts(q) == (total - 1, 1, 0) and len(q.cold) == 4  # as many as sit behind the backlog
        bodies = []
        while batch := node.receive(q, max_number_of_messages=10):
            bodies += [m.body for m, _ in batch]
        assert bodies == [f"m{n}" for n in range(1, total)]
        node.broker.delete_message(q, handle)  # its receipt handle still deletes it
        assert node.counts(q) == (0, total - 1, 0)
    finally:
        node.close()


def test_messages_past_their_retention_while_down_are_gone_after_a_restart(node: Node, data_dir: Path) -> None:
    q = node.queue("q", MessageRetentionPeriod="60")
    node.send(q, "old")
    node.send(q, "delayed", delay_seconds=30)
    ((_, handle),) = node.receive(q, visibility_timeout=300)
    node = restart(node, data_dir, later_s=120)
    try:
        q = node.get("q")
        node.advance(0)
        assert node.counts(q) == (0, 0, 0)
        assert node.receive(q) == []
        node.broker.delete_message(q, handle)  # a handle of a message already gone succeeds
        node.commit()
        assert rows(data_dir, "SELECT COUNT(*) FROM messages") == [(0,)]
    finally:
        node.close()


# --------------------------------------------------------------------------------------------- journal failures


class _BrokenIndex(dict[str, dict[str, int]]):
    """The store's row index (``MessageRows.rows``) failing on every lookup by queue: capturing a change or a
    deletion of a message raises."""

    def __getitem__(self, key: str) -> dict[str, int]:
        raise RuntimeError("row index unavailable")


def test_a_failing_journal_call_leaves_the_engine_consistent_and_the_store_failed(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A deletion whose recording raises inside the store still completes in the engine (the next message of the
    FIFO group is receivable); the store fails for good: nothing more is acknowledged as durable, the failure is
    logged once in one line, and the file keeps the last commit made before it."""
    node = Node(data_dir)
    try:
        q = node.queue("q.fifo", FifoQueue="true", VisibilityTimeout="60")
        other = node.queue("other")
        for body in ("m1", "m2"):
            node.broker.send_message(q, SendEntry(body, group_id="g", deduplication_id=body), "000000000000")
        ((first, handle),) = node.receive(q, max_number_of_messages=1)
        assert first.body == "m1"
        node.commit()
        monkeypatch.setattr(node.store._messages, "rows", _BrokenIndex(node.store._messages.rows))

        async def scenario() -> None:
            node.send(other, "acknowledged?")  # recorded: its request waits for the commit
            waiting = asyncio.ensure_future(node.store.durable())
            await asyncio.sleep(0)
            node.broker.delete_message(q, handle)  # recording the deletion raises inside the store
            with pytest.raises(StoreError, match="deletion of message"):
                await waiting
            # the engine finished the deletion: the group is not stuck behind m1
            got = await node.broker.receive_message(q, max_number_of_messages=10, wait_time_seconds=0)
            assert [m.body for m, _ in got] == ["m2"]
            # and nothing after the failure is acknowledged either
            node.send(other, "later")
            with pytest.raises(StoreError, match="deletion of message"):
                await node.store.durable()
            node.broker.get_queue_attributes(q, ["All"])  # changes nothing
            with pytest.raises(StoreError):
                await node.store.durable()

        with caplog.at_level(logging.ERROR, logger="sqsemu.persistence"):
            node.run(scenario())
        assert node.store.failure is not None and "RuntimeError: row index unavailable" in node.store.failure
        with pytest.raises(StoreError):
            node.store.commit_pending()
        logged = [r for r in caplog.records if r.name == "sqsemu.persistence"]
        assert len(logged) == 1 and "\n" not in logged[0].getMessage() and logged[0].exc_info is None
        assert "deletion of message" in logged[0].getMessage()
    finally:
        node.close()
    node = Node(data_dir)
    try:  # the file holds the state of the last commit before the failure
        assert [m.body for m in node.get("q.fifo").messages.values()] == ["m1", "m2"]
        # "acknowledged?" may have been committed before the failure (its request was refused all the same)
        assert "later" not in [m.body for m in node.get("other").messages.values()]
    finally:
        node.close()


def test_a_failed_commit_fails_the_store_for_good(node: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a commit fails, later changes are not acknowledged either (a later batch could build on the lost
    one), even once the disk works again."""
    q = node.queue("q")
    node.commit()
    commit = node.store._commit

    def failing_commit(batch: Any, done: Any) -> None:  # the writer process refuses the batch
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(node.store, "_commit", failing_commit)

    async def scenario() -> None:
        node.send(q, "m")
        with pytest.raises(StoreError, match="disk I/O error"):
            await node.store.durable()
        monkeypatch.setattr(node.store, "_commit", commit)
        node.send(q, "n")
        with pytest.raises(StoreError, match="disk I/O error"):
            await node.store.durable()

    node.run(scenario())


def test_requests_are_answered_internal_error_once_the_store_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Over HTTP: a request whose change cannot be recorded, and every request after it (even one changing
    nothing), gets an SQS InternalError (HTTP 500) in its own wire format, never a success; admin routes answer
    ``{"error": ...}`` with HTTP 500. Only the store logs, once."""
    from sqsemu.config import Config
    from sqsemu.server import build
    from tests.unit.app_helpers import call_asgi, json_call, query_call

    app, broker, _clock = build(Config(clock="manual", data_dir=str(tmp_path / "data")))
    store = app.store  # type: ignore[attr-defined]
    broker.start()
    try:
        created = json_call(app, "CreateQueue", {"QueueName": "q"})
        assert created.status == 200
        url = json.loads(created.body)["QueueUrl"]

        def broken(attributes: dict[str, MessageAttributeValue]) -> str | None:
            raise MemoryError("no memory for the row")

        monkeypatch.setattr(store._messages, "attributes_json", broken)
        with caplog.at_level(logging.ERROR):
            attributes = {"a": {"DataType": "String", "StringValue": "v"}}  # the row's attributes fail
            sent = json_call(app, "SendMessage", {"QueueUrl": url, "MessageBody": "m", "MessageAttributes": attributes})
            later = json_call(app, "GetQueueUrl", {"QueueName": "q"})
            later_query = query_call(app, {"Action": "GetQueueUrl", "QueueName": "q"})
            health = asyncio.run(call_asgi(app, "GET", "/health", {"Host": "localhost"}))
        for response in (sent, later):
            assert response.status == 500
            assert json.loads(response.body)["__type"] == "com.amazon.coral.service#InternalFailure"
        assert later_query.status == 500
        assert b"<Code>InternalError</Code>" in later_query.body
        assert health.status == 500 and "failed to record a new message" in json.loads(health.body)["error"]
        assert [r.name for r in caplog.records] == ["sqsemu.persistence"]  # logged once, by the store
    finally:
        broker.close()
        store.close()


def test_a_server_thread_stops_itself_once_its_store_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``sqsemu`` stops with exit status 3 (``sqsemu.server.run``), a ServerThread whose store failed stops: its
    state is ahead of the file, and a test harness must not go on talking to it."""
    from sqsemu.config import Config
    from sqsemu.server import STORE_FAILED_EXIT_STATUS, ServerThread
    from tests.integration.harness.raw import raw_request

    with ServerThread(Config(host="127.0.0.1", clock="manual", data_dir=str(tmp_path / "data"))) as server:
        headers = {"X-Amz-Target": "AmazonSQS.CreateQueue", "Content-Type": "application/x-amz-json-1.0"}
        created = raw_request(server.endpoint_url, "POST", "/", b'{"QueueName": "q"}', headers)
        assert created.status == 200 and server.exit_status == 0

        def broken(attributes: dict[str, MessageAttributeValue]) -> str | None:
            raise MemoryError("no memory for the row")

        monkeypatch.setattr(server.app.store._messages, "attributes_json", broken)  # type: ignore[attr-defined]
        headers["X-Amz-Target"] = "AmazonSQS.SendMessage"
        attributes = {"a": {"DataType": "String", "StringValue": "v"}}  # the row's attributes fail
        body = json.dumps(
            {"QueueUrl": created.json()["QueueUrl"], "MessageBody": "m", "MessageAttributes": attributes}
        ).encode()
        assert raw_request(server.endpoint_url, "POST", "/", body, headers).status == 500
        assert server.join(timeout=20)
        assert server.exit_status == STORE_FAILED_EXIT_STATUS


# ------------------------------------------------------------------------------------------------ growth


def test_expired_deduplication_keys_are_deleted_as_writes_go_on(node: Node, data_dir: Path) -> None:
    q = node.queue("q.fifo", FifoQueue="true")
    other = node.queue("other")
    for key in ("d1", "d2"):
        node.broker.send_message(q, SendEntry(key, group_id="g", deduplication_id=key), "000000000000")
    node.advance(200)
    node.broker.send_message(q, SendEntry("d3", group_id="g", deduplication_id="d3"), "000000000000")
    node.commit()
    assert len(rows(data_dir, "SELECT key FROM deduplication")) == 3
    node.advance(101)  # the window of d1 and d2 is over
    node.send(other, "x")
    node.commit()
    now = node.clock.now_ms()
    assert rows(data_dir, f"SELECT COUNT(*) FROM deduplication WHERE expires_ms <= {now}") == [(0,)]
    assert rows(data_dir, "SELECT key FROM deduplication") == [("d3",)]


# ------------------------------------------------------------------------------------------------ leaks


def test_a_deleted_queue_leaves_no_row_behind(node: Node, data_dir: Path) -> None:
    """Deleting a queue drops its sequence number, keys and move tasks too, whether they were committed before
    the deletion or are in the same batch, on disk and in memory."""
    committed = node.queue("committed.fifo", FifoQueue="true")
    node.broker.send_message(committed, SendEntry("a", group_id="g", deduplication_id="a"), "000000000000")
    dlq = node.queue("dlq")
    src = node.queue("src", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}))
    for i in range(3):
        node.send(src, f"m{i}")
    node.receive(src, max_number_of_messages=10, visibility_timeout=0)
    assert node.receive(src, max_number_of_messages=10) == []  # all dead-lettered
    node.broker.start_message_move_task(NS, dlq.arn, None, 1)
    node.advance(1)
    node.commit()
    assert rows(data_dir, "SELECT COUNT(*) FROM move_tasks") == [(1,)]
    same_batch = node.queue("same-batch.fifo", FifoQueue="true")
    node.broker.send_message(same_batch, SendEntry("b", group_id="g", deduplication_id="b"), "000000000000")
    for q in (committed, dlq, same_batch):
        node.broker.delete_queue(q)
    node.advance(2)  # the move task's next tick finds its source gone
    node.commit()
    assert rows(data_dir, "SELECT name FROM queues") == [("src",)]
    for table in ("deduplication", "fifo_sequences", "move_tasks"):
        assert rows(data_dir, f"SELECT COUNT(*) FROM {table}") == [(0,)], table
    assert dlq.arn not in node.broker.move_tasks._tasks  # in memory too: nothing could list them any more


def test_rows_of_deleted_queues_left_by_an_earlier_version_are_dropped_at_start(data_dir: Path) -> None:
    node = Node(data_dir)
    node.queue("kept.fifo", FifoQueue="true")
    node.close()
    connection = sqlite3.connect(data_dir / FILE_NAME)
    connection.execute("INSERT INTO fifo_sequences VALUES ('gone', '17000000000000000000')")
    connection.execute("INSERT INTO move_tasks VALUES ('t', 'gone', NULL, NULL, 0, 1, 0, 'RUNNING', NULL)")
    connection.commit()
    connection.close()
    node = Node(data_dir)
    try:
        assert rows(data_dir, "SELECT COUNT(*) FROM fifo_sequences") == [(0,)]
        assert rows(data_dir, "SELECT COUNT(*) FROM move_tasks") == [(0,)]
    finally:
        node.close()


def test_closing_answers_requests_waiting_for_a_commit(node: Node, data_dir: Path) -> None:
    """Closing while a commit is under way lets it finish, commits what came after, answers every waiting
    request and leaves no writer task running. (The commit under way is held up by another connection's write
    lock, released 0.3 s later: SQLite's busy timeout makes the writer wait for it.)"""
    q = node.queue("q")
    node.commit()
    node.run(node.store._writer_process().request("pragma", "PRAGMA busy_timeout=5000"))
    blocker = sqlite3.connect(data_dir / FILE_NAME, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.3, blocker.execute, ("COMMIT",))
    release.start()

    async def scenario() -> None:
        node.send(q, "first")
        first = asyncio.ensure_future(node.store.durable())
        await asyncio.sleep(0.05)  # the writer process is committing "first", waiting for the lock
        assert not first.done()
        node.send(q, "second")
        second = asyncio.ensure_future(node.store.durable())
        await asyncio.sleep(0)
        node.store.close()  # as the server's shutdown does, on the event loop
        await asyncio.wait_for(asyncio.gather(first, second), 5)
        for _ in range(3):
            await asyncio.sleep(0)
        assert [task for task in asyncio.all_tasks() if task is not asyncio.current_task()] == []

    try:
        node.run(scenario())
    finally:
        release.join()
        blocker.close()
    assert sorted(r[0] for r in rows(data_dir, "SELECT body FROM messages")) == ["first", "second"]
    node.broker.close()
    node.loop.close()


def test_a_failed_schema_creation_leaves_a_folder_that_can_be_used(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating the tables and stamping the file as sqsemu's is one transaction: a start-up that fails in
    between leaves no half-made file that the next start would refuse as another application's database."""
    from sqsemu.persistence import sqlite as sqlite_module

    monkeypatch.setattr(sqlite_module, "_SCHEMA", sqlite_module._SCHEMA + "SELECT no_such_function();\n")
    with pytest.raises(StoreError):
        SQLiteStore.open(str(data_dir))
    monkeypatch.undo()
    store = SQLiteStore.open(str(data_dir))
    store.close()
    assert rows(data_dir, "PRAGMA application_id") != [(0,)]


def _open_files_under(folder: Path) -> list[str]:
    """Paths under ``folder`` this process holds open (Linux: /proc/self/fd; elsewhere: none known)."""
    found = []
    fd_dir = Path("/proc/self/fd")
    for fd in fd_dir.iterdir() if fd_dir.is_dir() else []:
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


def test_a_server_thread_that_never_starts_holds_nothing_open(tmp_path: Path) -> None:
    """A durable ServerThread opens its data file (and the store's worker thread) in start(), not when built."""
    from sqsemu.config import Config
    from sqsemu.server import ServerThread

    threads = set(threading.enumerate())
    server = ServerThread(Config(clock="manual", data_dir=str(tmp_path / "data")))
    assert _open_files_under(tmp_path) == []
    assert set(threading.enumerate()) <= threads
    server.stop()
    assert _open_files_under(tmp_path) == []


# ------------------------------------------------------------------------- a full disk, stopping, one folder one store


def test_a_full_disk_fails_the_store_with_sqlites_own_reason(data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A commit that runs out of room fails the store, and its one log line names SQLite's reason (``database or
    disk is full``), not the secondary error of rolling back a transaction SQLite had already rolled back. After a
    restart every acknowledged message is there and none of the refused ones (``PRAGMA max_page_count`` on the
    store's connection makes the disk "full" exactly where the test wants it, with no real disk involved)."""
    node = Node(data_dir)
    acknowledged: list[str] = []
    refused: list[str] = []
    try:
        q = node.queue("q")
        node.commit()
        pages = node.store._db.execute("PRAGMA page_count").fetchone()[0]
        limit = f"PRAGMA max_page_count={pages + 40}"  # about 160 KB more (4 KiB pages)
        node.store._db.execute(limit)
        node.run(node.store._writer_process().request("pragma", limit))  # the connection of group commits

        async def scenario() -> None:
            for n in range(20):  # 20 KB each: the 9th or so does not fit
                body = f"{n}:" + "x" * 20_000
                node.send(q, body)
                try:
                    await node.store.durable()
                except StoreError:
                    refused.append(body)
                else:
                    acknowledged.append(body)

        with caplog.at_level(logging.ERROR, logger="sqsemu.persistence"):
            node.run(scenario())
        assert acknowledged and refused
        assert acknowledged + refused == [f"{n}:" + "x" * 20_000 for n in range(20)]  # nothing after the first refusal
        logged = [r.getMessage() for r in caplog.records if r.name == "sqsemu.persistence"]
        assert len(logged) == 1 and "\n" not in logged[0], logged
        assert "database or disk is full" in logged[0] and "rollback" not in logged[0], logged[0]
        assert node.store.failure is not None and "database or disk is full" in node.store.failure
    finally:
        node.close()
    node = Node(data_dir)
    try:
        assert [m.body for m in node.get("q").messages.values()] == acknowledged
    finally:
        node.close()


def test_a_failing_store_tells_its_owner_once(node: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    """``on_failure`` (set by the server to stop itself) is called once, with the failure's one line, however many
    requests and journal calls come after."""
    calls: list[str] = []
    node.store.on_failure = calls.append
    q = node.queue("q")
    node.commit()

    def failing_commit(batch: Any, done: Any) -> None:  # the writer process refuses the batch
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(node.store, "_commit", failing_commit)

    async def scenario() -> None:
        node.send(q, "m")
        with pytest.raises(StoreError):
            await node.store.durable()
        node.send(q, "n")
        with pytest.raises(StoreError):
            await node.store.durable()

    node.run(scenario())
    assert calls == [node.store.failure]
    assert "disk I/O error" in calls[0]


def test_a_last_commit_failing_at_shutdown_is_logged_once_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The commit of what is left at shutdown fails: the store's one line is the only log record (no second report
    with a traceback from the app's shutdown), and the shutdown completes."""
    from sqsemu.config import Config
    from sqsemu.engine.broker import Namespace
    from sqsemu.server import build

    app, broker, _clock = build(Config(clock="manual", data_dir=str(tmp_path / "data")))
    store = app.store  # type: ignore[attr-defined]

    def failing_write(batch: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "_write", failing_write)
    broker.create_queue(Namespace("000000000000", "us-east-1"), "q", {}, {})  # pending: committed at shutdown

    async def lifespan() -> list[str]:
        inbox: asyncio.Queue[MutableMapping[str, Any]] = asyncio.Queue()
        sent: list[str] = []
        await inbox.put({"type": "lifespan.startup"})
        await inbox.put({"type": "lifespan.shutdown"})

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message["type"])

        await app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, send)
        return sent

    with caplog.at_level(logging.INFO):
        assert asyncio.run(lifespan()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in errors] == ["sqsemu.persistence"]
    assert errors[0].exc_info is None and "database or disk is full" in errors[0].getMessage()
    assert store.failure is not None


def test_one_data_folder_has_one_store_at_a_time(data_dir: Path) -> None:
    """A second store on a folder in use is refused, naming the holder's pid; closing the first releases the
    folder, and so does a start-up refused for another reason."""
    first = SQLiteStore.open(str(data_dir))
    try:
        with pytest.raises(StoreError) as refused:
            SQLiteStore.open(str(data_dir))
        assert str(refused.value) == f"data dir {data_dir} is in use by another sqsemu (pid {os.getpid()})"
    finally:
        first.close()
    SQLiteStore.open(str(data_dir)).close()
    connection = sqlite3.connect(data_dir / FILE_NAME)
    connection.execute("PRAGMA user_version=99")  # refused at start: the folder must not stay locked
    connection.close()
    with pytest.raises(StoreError, match="schema version"):
        SQLiteStore.open(str(data_dir))
    connection = sqlite3.connect(data_dir / FILE_NAME)
    connection.execute("PRAGMA user_version=1")
    connection.close()
    SQLiteStore.open(str(data_dir)).close()


def test_a_second_server_thread_on_the_same_folder_is_refused(tmp_path: Path) -> None:
    from sqsemu.config import Config
    from sqsemu.server import ServerThread

    config = Config(clock="manual", data_dir=str(tmp_path / "data"))
    with ServerThread(config) as first:
        with pytest.raises(StoreError, match="is in use by another sqsemu"):
            ServerThread(config).start()
        assert first.call(lambda: len(first.broker.namespaces)) == 0  # the first one still serves
    with ServerThread(config):  # the first one stopped: the folder is free
        pass


def test_a_start_up_refused_after_the_store_opened_leaves_the_folder_free_and_unchanged(tmp_path: Path) -> None:
    """A declaration that conflicts with the restored state stops the start-up after the store was opened: the
    store is closed at once, committing nothing of that start-up, so the next server on the folder starts."""
    from sqsemu.config import Config, QueueDeclaration
    from sqsemu.declare import DeclarationError
    from sqsemu.server import ServerThread

    def config(delay: str, *extra: str) -> Config:
        declared = [QueueDeclaration(name) for name in extra]
        declared.append(QueueDeclaration("orders", attributes=(("DelaySeconds", delay),)))
        return Config(clock="manual", data_dir=str(tmp_path / "data"), queues=tuple(declared))

    with ServerThread(config("1")):
        pass
    with pytest.raises(DeclarationError):
        ServerThread(config("2", "new")).start()
    with ServerThread(config("1")) as server:
        assert server.call(lambda: sorted(q.name for qs in server.broker.namespaces.values() for q in qs.values())) == [
            "orders"
        ]


# ------------------------------------------------------------------------------------------------ the writer process


def _start_writer(node: Node) -> Any:
    """Make one group commit (which starts the writer process); return the writer's ``subprocess.Popen``."""
    q = node.queue("q")
    node.commit()

    async def scenario() -> None:
        node.send(q, "started the writer")
        await node.store.durable()

    node.run(scenario())
    process = node.store._process
    assert process is not None
    return process.process


def test_group_commits_run_in_a_writer_process_that_ends_with_the_store(data_dir: Path) -> None:
    node = Node(data_dir)
    writer = _start_writer(node)
    assert writer.pid != os.getpid() and writer.poll() is None
    node.close()
    assert writer.poll() is not None  # waited for: no process left behind
    node = Node(data_dir)
    try:
        assert [m.body for m in node.get("q").messages.values()] == ["started the writer"]
    finally:
        node.close()


def test_a_writer_process_that_dies_fails_the_store(node: Node, caplog: pytest.LogCaptureFixture) -> None:
    """Nothing is acknowledged once the writer is gone: the store fails, with a line that says so."""
    writer = _start_writer(node)
    writer.kill()
    writer.wait()
    q = node.get("q")

    async def scenario() -> None:
        node.send(q, "after the writer died")
        with pytest.raises(StoreError, match="the writer process ended"):
            await node.store.durable()
        node.send(q, "later")
        with pytest.raises(StoreError, match="the writer process ended"):
            await node.store.durable()

    with caplog.at_level(logging.ERROR, logger="sqsemu.persistence"):
        node.run(scenario())
    assert [r.getMessage() for r in caplog.records if r.name == "sqsemu.persistence"] == [
        f"{node.store.failure}; no request is acknowledged from now on"
    ]


def test_a_new_store_waits_for_the_writer_of_a_killed_server_to_end(data_dir: Path) -> None:
    """The folder's lock names a server that is gone, but a process (its writer, finishing a commit) still holds
    it: the new store waits for the lock instead of refusing the folder. A lock held for a running pid is refused
    at once (``test_one_data_folder_has_one_store_at_a_time``)."""
    data_dir.mkdir()
    released = data_dir.parent / "released"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (data_dir / "sqsemu.lock").write_text(f"{gone.pid}\n")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(data_dir / 'sqsemu.lock')!r}, os.O_RDWR)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(0.5)\n"
            f"open({str(released)!r}, 'w').close()\nfcntl.flock(fd, fcntl.LOCK_UN)\ntime.sleep(5)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        SQLiteStore.open(str(data_dir)).close()
        assert released.exists()  # opened once the holder let go, not before
    finally:
        holder.kill()
        holder.wait()


def test_the_writer_process_is_this_sqsemu_even_from_a_folder_holding_another(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer process is started with ``python -m``, which would put the current folder first on its
    ``sys.path``: started from a folder holding another ``sqsemu`` package (a checkout of another version), it must
    still run this one, whose batches it understands."""
    other = tmp_path / "elsewhere"
    (other / "sqsemu" / "persistence").mkdir(parents=True)
    (other / "sqsemu" / "__init__.py").write_text("")
    (other / "sqsemu" / "persistence" / "__init__.py").write_text("")
    (other / "sqsemu" / "persistence" / "writer.py").write_text("raise SystemExit(7)\n")
    monkeypatch.chdir(other)
    node = Node(data_dir)
    try:
        q = node.queue("q")
        node.commit()

        async def scenario() -> None:
            node.send(q, "through the writer process")
            await asyncio.wait_for(node.store.durable(), 10)

        node.run(scenario())
        assert node.store._process is not None and node.store._process.process.poll() is None
    finally:
        node.close()
    node = Node(data_dir)
    try:
        assert [m.body for m in node.get("q").messages.values()] == ["through the writer process"]
    finally:
        node.close()
