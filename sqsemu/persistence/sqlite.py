"""The durable store: SQLite in WAL mode, written by one thread with group commit.

Layout: one file ``sqsemu.db`` in the data folder; messages are rows keyed by their enqueue number, so appends stay
at the end of the table. There is no index by message id (keying or indexing by random ids made inserts 2 to 4
times slower): the store keeps the row number of every stored message in memory, per queue, to change and delete
rows by number. Purging or deleting a queue scans the table once. The file is tagged with
``PRAGMA application_id`` so a foreign or corrupt file is refused at start-up (``StoreError``) instead of being read
as an empty state.

Recording: the store is the engine's ``Journal``. Each event is turned into row data at once, on the event-loop
thread (the engine's objects keep changing), and merged into the pending batch per message: a message added and
deleted within one batch costs nothing; several changes of one message leave only the last. Message state is not
stored: it follows from ``visible_at_ms`` and the receipt serial at restore time (docs/architecture.md, principle 3).

Group commit: the pending batch goes to the writer process (``writer.py``: an interpreter of its own, so SQLite's
work never waits for the event loop's GIL, nor the loop for it), which commits it and answers; everything recorded
while a commit is under way goes into the next one, which is taken once the loop has written the answers the commit
released and read what arrived meanwhile (:data:`GATHER_PASSES`). The cycle runs from loop callbacks, with no task
and no future of its own: the first change recorded schedules ``_next_commit`` (take the batch, send it), the
writer's answer is read by the socket's reader callback, which calls ``_committed`` (answer the waiting requests,
schedule the next batch). The writer process starts with the first group commit; start-up and shutdown commit on the
store's own connection. ``durable()`` returns once the batch holding the caller's changes is committed (the SQS
answer path awaits ``commit_waiter()``'s future directly), so a request is answered only after its change is on
disk, and throughput does not fall to one commit per request.
``fsync="normal"`` (``PRAGMA synchronous=NORMAL`` in WAL mode) survives a crash of the process; ``"full"`` also
survives a power loss or OS crash. A batch also deletes the deduplication keys whose 5-minute window has ended
(by the engine's clock), so that table holds about five minutes of FIFO sends.

Failure: recording an event never raises into the engine (it calls the journal in the middle of its changes). If
recording or a commit fails, the store is failed for good: it logs why once, in one line (SQLite's own reason, e.g.
``database or disk is full``), writes nothing more, and ``durable()`` raises ``StoreError`` for every request waiting
or still to come, so nothing is acknowledged that is not on disk. The file keeps the last batch committed before the
failure. Then it calls ``on_failure``: the server (``sqsemu.server.run``) stops, with exit status 3, so that a
supervisor restarts it from what is on disk, as trusted stores do when a write fails.

One folder, one store: ``open`` takes an exclusive ``flock`` on ``sqsemu.lock`` in the folder (the file holds the
owner's pid, for the message that refuses a second server) and holds it until ``close``; the OS releases it when the
process ends however it ends, so a killed server leaves no stale lock. The writer process holds the lock too, until
it ends: a server started on the folder of a killed one waits (up to 5 s) for that writer to finish its commit. The
lock file itself is never deleted
(deleting it would let two processes lock two different files). A folder or file that cannot be written is refused
at ``open`` with a message that says so, before SQLite would open it read-only and fail later.

SNS topics (``sqsemu.sns``) are rows of the ``topics`` table, one JSON document per topic with its subscriptions,
pending confirmations, tags, attributes and FIFO deduplication history (``Topic.to_doc()``). The store hears each
change of a topic (:meth:`SQLiteStore.topic_saved`, :meth:`SQLiteStore.topic_forgotten`) and keeps only which topics
changed: a topic's document is made when its batch is taken, once per batch however often the topic changed (a FIFO
topic changes with every publication), on the event-loop thread like every other change.

A new file gets its tables and its ``application_id`` stamp in one transaction, so a start-up that stops half way
leaves a file that the next one takes as new, not one it refuses as another application's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from sqsemu.clock import Clock
from sqsemu.engine.broker import Broker
from sqsemu.engine.queue import Queue
from sqsemu.engine.redrive import MoveTask
from sqsemu.persistence import SavedTopic, StoreError
from sqsemu.persistence.rowforms import (
    DEDUPLICATION_COLUMNS,
    QUEUE_COLUMNS,
    SEQUENCE_COLUMNS,
    TASK_COLUMNS,
    Restored,
    queue_row,
    restore_rows,
    task_row,
)
from sqsemu.persistence.rows import MessageRows
from sqsemu.persistence.writer import MESSAGE_COLUMNS, Done, WriterProcess, connect_settings, write_batch

logger = logging.getLogger("sqsemu.persistence")

FILE_NAME = "sqsemu.db"
LOCK_NAME = "sqsemu.lock"
APPLICATION_ID = 0x5351454D  # "SQEM"
SCHEMA_VERSION = 1
_ORPHAN_WAIT_S = 5.0  # how long a new server waits for the writer process of a killed one to end

_SCHEMA = """
CREATE TABLE queues (
    uid TEXT PRIMARY KEY, account TEXT NOT NULL, region TEXT NOT NULL, name TEXT NOT NULL, fifo INTEGER NOT NULL,
    attributes TEXT NOT NULL, tags TEXT NOT NULL, created_s INTEGER NOT NULL, last_modified_s INTEGER NOT NULL,
    last_purge_ms INTEGER, delayed_attributes TEXT);
CREATE TABLE messages (
    seq INTEGER PRIMARY KEY, queue_uid TEXT NOT NULL, message_id TEXT NOT NULL, body TEXT NOT NULL,
    message_attributes TEXT, system_attributes TEXT, trace_header TEXT, sender_id TEXT NOT NULL,
    sent_ms INTEGER NOT NULL, enqueued_ms INTEGER NOT NULL, size INTEGER NOT NULL, group_id TEXT,
    deduplication_id TEXT, sequence_number TEXT, dead_letter_source_arn TEXT, receive_count INTEGER NOT NULL,
    first_receive_ms INTEGER NOT NULL, received_ms INTEGER NOT NULL, visible_at_ms INTEGER NOT NULL,
    receipt_serial INTEGER NOT NULL);
CREATE TABLE deduplication (
    queue_uid TEXT NOT NULL, key TEXT NOT NULL, expires_ms INTEGER NOT NULL, message_id TEXT NOT NULL,
    sequence_number TEXT NOT NULL, PRIMARY KEY (queue_uid, key)) WITHOUT ROWID;
CREATE TABLE fifo_sequences (queue_uid TEXT PRIMARY KEY, last TEXT NOT NULL);
CREATE TABLE move_tasks (
    task_id TEXT PRIMARY KEY, source_uid TEXT NOT NULL, destination_arn TEXT, max_per_second INTEGER,
    started_ms INTEGER NOT NULL, to_move INTEGER NOT NULL, moved INTEGER NOT NULL, status TEXT NOT NULL,
    failure_reason TEXT);
"""
# Expired deduplication keys are deleted as batches commit; this index finds them without scanning the table. A
# file made before it existed gets it when opened (older versions read a file with it unchanged).
_DEDUP_EXPIRY_INDEX = "CREATE INDEX IF NOT EXISTS deduplication_expiry ON deduplication (expires_ms)"
# Event source mappings (sqsemu.eventsource): one JSON document per mapping, its state included. A file made before
# the table existed gets it when opened.
_MAPPINGS_TABLE = "CREATE TABLE IF NOT EXISTS event_source_mappings (uuid TEXT PRIMARY KEY, document TEXT NOT NULL)"
# SNS topics (sqsemu.sns): one JSON document per topic (Topic.to_doc()), its subscriptions included; rows keep their
# rowid when a topic is saved again, so the table's order is the topics' creation order. A file made before the
# table existed gets it when opened.
_TOPICS_TABLE = "CREATE TABLE IF NOT EXISTS topics (arn TEXT PRIMARY KEY, document TEXT NOT NULL)"
# SetQueueAttributes changes answered but not applied yet (realism's attribute_delay): JSON [[due_ms, {name:
# value}], ...] or NULL. A file made before the column existed gets it when opened.
_DELAYED_ATTRIBUTES_COLUMN = "ALTER TABLE queues ADD COLUMN delayed_attributes TEXT"
# SQLite's result codes (sqlite3.Error.sqlite_errorname, extended codes start with these) that mean the file or its
# folder cannot be written, as opposed to a file that is not a (sound) SQLite database.
_NOT_WRITABLE = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")
_NOT_A_DATABASE = ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def _error_text(exc: BaseException) -> str:
    """``Type (SQLITE_CODE): message`` on one line: what a log line or a refusal says of an error."""
    reason = " ".join(str(exc).split()) or "no detail"
    code = getattr(exc, "sqlite_errorname", None)
    return f"{type(exc).__name__}{f' ({code})' if code else ''}: {reason}"


def _open_failure(path: Path, exc: sqlite3.Error) -> str:
    """Why ``path`` cannot be used, from the SQLite error that opening or reading it raised."""
    code = getattr(exc, "sqlite_errorname", "") or ""
    if code.startswith(_NOT_WRITABLE):
        return f"{path} cannot be opened for writing: {exc}"
    if code.startswith(_NOT_A_DATABASE) or not code:
        return f"{path} is corrupt or not an SQLite database: {exc}"
    return f"cannot use {path}: {_error_text(exc)}"


def _lock(folder: Path) -> int:
    """Lock the data folder for this process: an exclusive ``flock`` on ``folder/sqsemu.lock``, which then holds
    our pid. Returns the file descriptor that holds the lock until it is closed (or the process ends).

    Raises ``StoreError`` when another process holds the lock ("in use by another sqsemu (pid N)"), or when the
    lock file cannot be created or opened for writing (a read-only folder is found here)."""
    path = folder / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        target = path if path.exists() else f"the data dir {folder}"
        raise StoreError(f"{target} cannot be opened for writing: {exc.strerror}") from None
    try:
        _take_lock(fd)
    except BlockingIOError:
        owner = _lock_owner(fd)
        os.close(fd)
        raise StoreError(f"data dir {folder} is in use by another sqsemu{f' (pid {owner})' if owner else ''}") from None
    except OSError as exc:
        os.close(fd)
        raise StoreError(f"cannot lock the data dir {folder} ({path}): {exc.strerror}") from None
    with contextlib.suppress(OSError):  # the pid only informs a refused second server: not worth refusing a start
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _try_lock(fd: int) -> None:
    """Take the lock file's exclusive lock without waiting, or raise ``BlockingIOError``: ``flock`` on POSIX, a
    one-byte ``msvcrt.locking`` region on Windows (which has no ``fcntl``)."""
    if sys.platform == "win32":
        import msvcrt

        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            raise BlockingIOError(exc.errno, exc.strerror) from None
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _take_lock(fd: int) -> None:
    """``flock`` the lock file, or raise ``BlockingIOError`` if another process holds it. The writer process of a
    server that was killed holds the lock until it has finished its commit and seen its server gone (a few
    milliseconds): when the pid in the file is no longer running, wait up to ``_ORPHAN_WAIT_S`` for it."""
    try:
        _try_lock(fd)
        return
    except BlockingIOError:
        owner = _lock_owner(fd)
        if owner is None or _running(int(owner)):
            raise
    deadline = time.monotonic() + _ORPHAN_WAIT_S
    while True:
        try:
            _try_lock(fd)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_owner(fd: int) -> str | None:
    """The pid written in a lock file that another process holds (None if unreadable). Waits up to 0.2 s for a
    holder that has just taken the lock to write it."""
    for _ in range(20):
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            return None
        if text.isdigit():
            return text
        time.sleep(0.01)
    return None


def _check_writable(folder: Path, path: Path) -> None:
    """Raise ``StoreError`` unless ``path`` (if it exists) can be opened for writing and ``folder`` can take new
    files (SQLite creates ``-wal`` and ``-shm`` files next to the database). Checked by trying (a temporary file
    that vanishes), which is right for any user, permission model and read-only mount. Called before this process
    opens the database: closing a descriptor of the file would drop SQLite's POSIX locks of an open connection."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StoreError(f"{path} cannot be opened for writing: {exc.strerror}") from None
    else:
        os.close(fd)
    try:
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise StoreError(f"the data dir {folder} cannot be opened for writing: {exc.strerror}") from None


GATHER_PASSES = 2
"""Passes of the event loop (``loop.call_soon`` hops) between a commit's answer and the next batch (when changes
are pending): in the first the answers the commit released are written (and requests pipelined behind them
answered), and the loop reads the requests that arrived meanwhile; the second takes the batch, so that their
changes join it instead of waiting a whole commit more. Measured on the socket round trip, when a task drove the
cycle (docs/performance-compiled.md, "Group commit gathers before it takes a batch"): 0 passes 18,300-18,600 msgs/s,
1 pass 23,600-23,900, 2 passes 25,100-25,700, 3 or more 21,800-22,500; the callbacks keep the same order of answers
written, requests read and batch taken."""


class SQLiteStore:
    """The durable store of one data folder (see the module docstring). Use ``SQLiteStore.open``."""

    def __init__(
        self, connection: sqlite3.Connection, path: Path, lock_fd: int | None = None, fsync: str = "normal"
    ) -> None:
        self.path = path
        self._fsync = fsync
        self._db = connection
        self._lock_fd = lock_fd  # holds the folder's lock (closed by close())
        # Called once, with the failure's one line, when the store fails (on the thread that found it: the event
        # loop's, or the caller of commit_pending()/close()). It must not raise, and it may be called in the middle
        # of an engine change: schedule work rather than touch the engine. The server sets it to stop itself.
        self.on_failure: Callable[[str], None] | None = None
        self._process: WriterProcess | None = None  # the writer process, started by the first group commit
        self._queue_ops: list[tuple[Any, ...]] = []
        # Pending message rows (and the journal the broker calls: rows.py), merged per row number.
        self._messages = MessageRows(
            self,
            1 + (connection.execute("SELECT COALESCE(MAX(seq), 0) FROM messages").fetchone()[0]),
            self._recorded,
            self._fail,
        )
        self._dedup: dict[tuple[str, str], tuple[Any, ...]] = {}
        self._tasks: dict[str, tuple[Any, ...]] = {}
        # SNS topics changed in this batch, by ARN: the topic (its document is made when the batch is taken) and
        # whether the row goes first (deleted in this batch before it was made again); None: deleted.
        self._topics: dict[str, tuple[SavedTopic, bool] | None] = {}
        self._pending = False
        # Group commit, driven by loop callbacks (no task): _recorded() schedules _next_commit, which sends the batch
        # to the writer process; its answer comes to _committed, which schedules the next batch (_gather).
        self._writing = False  # a group commit is under way or scheduled
        self._committing = False  # a group commit is under way in the writer process
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the group commits run on
        self._scheduled: asyncio.Handle | None = None  # the next _next_commit or _gather, scheduled
        self._started = 0.0  # when the commit under way was sent (time.perf_counter(), seconds)
        self._changes = 0  # how many changes it holds (for on_commit)
        self._next_waiters: list[asyncio.Future[None]] = []
        self._current_waiters: list[asyncio.Future[None]] = []
        self._clock: Clock | None = None  # set by attach(): the time that expires deduplication keys
        # The earliest expires_ms among the deduplication rows on disk (None: no row); worker thread only.
        self._dedup_due: int | None = connection.execute("SELECT MIN(expires_ms) FROM deduplication").fetchone()[0]
        self._failure: str | None = None
        self._closed = False
        self.on_commit: Callable[[float, int], None] | None = None
        """Told after each group commit of the writer: its duration (seconds) and its number of changes."""

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, data_dir: str, fsync: str = "normal") -> SQLiteStore:
        """Open (or create) the store in ``data_dir`` and lock the folder for it (until ``close``). Raises
        ``StoreError`` when the folder is in use by another server, cannot be used or written, or ``sqsemu.db``
        cannot be written or is corrupt, of another application or of an unknown schema version."""
        folder = Path(data_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot use {folder} as the data folder: {exc}") from None
        if not folder.is_dir():
            raise StoreError(f"the data folder {folder} is not a folder")
        path = folder / FILE_NAME
        lock_fd = _lock(folder)
        connection: sqlite3.Connection | None = None
        try:
            _check_writable(folder, path)
            try:
                connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open {path}: {exc}") from None
            cls._prepare(connection, path, fsync)
            return cls(connection, path, lock_fd, fsync)
        except BaseException:
            if connection is not None:
                connection.close()
            os.close(lock_fd)
            raise

    @staticmethod
    def _prepare(connection: sqlite3.Connection, path: Path, fsync: str) -> None:
        """Check the file, set the connection up and, for a new file, create the schema and stamp it (one
        transaction: a file is either empty or a complete, stamped sqsemu store)."""
        try:
            application_id = connection.execute("PRAGMA application_id").fetchone()[0]
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            # New: no stamp, no version, no table. That is an empty file, or one left by a start-up that stopped
            # before its schema transaction committed (switching to WAL mode already writes the file header).
            new = (
                application_id == 0
                and version == 0
                and connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
            )
            if not new:
                if application_id != APPLICATION_ID:
                    raise StoreError(
                        f"{path} is an SQLite database of another application, not a sqsemu data file; "
                        "point --data-dir at another folder"
                    )
                if version != SCHEMA_VERSION:
                    raise StoreError(f"{path} has schema version {version}; this sqsemu reads version {SCHEMA_VERSION}")
                check = connection.execute("PRAGMA quick_check").fetchone()[0]
                if check != "ok":
                    raise StoreError(f"{path} is corrupt ({check})")
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: cannot switch the database to WAL mode (got {mode})")
            connect_settings(connection, fsync)
        except sqlite3.DatabaseError as exc:
            raise StoreError(_open_failure(path, exc)) from None
        try:
            if new:
                connection.executescript(
                    f"BEGIN; {_SCHEMA} {_DEDUP_EXPIRY_INDEX}; {_MAPPINGS_TABLE}; {_TOPICS_TABLE}; "
                    f"PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
                )
            else:
                connection.execute(_DEDUP_EXPIRY_INDEX)
                connection.execute(_MAPPINGS_TABLE)
                connection.execute(_TOPICS_TABLE)
                columns = {row[1] for row in connection.execute("PRAGMA table_info(queues)")}
                if "delayed_attributes" not in columns:
                    connection.execute(_DELAYED_ATTRIBUTES_COLUMN)
        except sqlite3.Error as exc:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise StoreError(f"cannot create the tables of {path}: {exc}") from None

    # ----------------------------------------------------------------- restore

    def restore(self, broker: Broker) -> None:
        """Load the saved state into ``broker``: queues with their identity and timestamps, messages in enqueue
        order (in flight until their deadline, delays and retention counting from their original times),
        unexpired deduplication keys and move tasks (a running one carries on). Deletes the rows of deleted
        queues that an earlier version left behind. Raises ``StoreError`` if the file cannot be read or written."""
        try:
            self._restore(broker)
        except sqlite3.Error as exc:
            raise StoreError(_open_failure(self.path, exc)) from None

    def _restore(self, broker: Broker) -> None:
        db = self._db
        now = broker.clock.now_ms()
        index = self._messages.rows

        def placed(uid: str, message_id: str, seq: int) -> None:
            index.setdefault(uid, {})[message_id] = seq

        restore_rows(
            broker,
            db.execute(f"SELECT {', '.join(QUEUE_COLUMNS)} FROM queues ORDER BY rowid").fetchall(),
            db.execute(f"SELECT {MESSAGE_COLUMNS} FROM messages ORDER BY seq"),
            db.execute(
                f"SELECT {', '.join(DEDUPLICATION_COLUMNS)} FROM deduplication WHERE expires_ms > ? "
                "ORDER BY expires_ms",
                (now,),
            ).fetchall(),
            db.execute(f"SELECT {', '.join(SEQUENCE_COLUMNS)} FROM fifo_sequences").fetchall(),
            db.execute(f"SELECT {', '.join(TASK_COLUMNS)} FROM move_tasks ORDER BY started_ms").fetchall(),
            placed,
        )
        # Sequence numbers and move tasks of deleted queues that an earlier version left behind.
        db.execute("DELETE FROM fifo_sequences WHERE queue_uid NOT IN (SELECT uid FROM queues)")
        db.execute("DELETE FROM move_tasks WHERE source_uid NOT IN (SELECT uid FROM queues)")

    def record_loaded(self, restored: Restored) -> None:
        """Record a state loaded into the attached broker (``sqsemu.state``, ``restore_rows(..., keep=True)``) as
        new rows, committed with the next batch: its queues, messages (new row numbers, after every row on disk),
        deduplication keys, sequence numbers and move tasks. The deletion of the state it replaced was recorded
        before, by the journal (the broker's reset), so the batch deletes the old rows first."""
        if self._failure is not None:
            return
        try:
            for queue in restored.queues.values():
                self.queue_saved(queue)
            added = self._messages.message_added
            for queue, message in restored.messages:
                added(queue, message, "sent")
            for queue, key, expires_ms, message_id, sequence_number in restored.deduplication:
                self.deduplication_remembered(queue, key, expires_ms, message_id, sequence_number)
            sequences = self._messages.sequences
            for queue, last in restored.sequences:
                if last > int(sequences.get(queue.uid, "0")):
                    sequences[queue.uid] = str(last)
            for task in restored.tasks:
                self.task_saved(task)
            self._recorded()
        except Exception as exc:
            self._fail("to record a loaded state", exc)

    def attach(self, broker: Broker) -> None:
        """Subscribe to ``broker``'s changes; its clock tells which deduplication keys have expired."""
        self._clock = broker.clock
        broker.set_journal(self._messages)

    # ----------------------------------------------------------------- recording (the engine's Journal)
    #
    # The broker's journal is ``self._messages`` (rows.py, compiled): it records the message events itself and passes
    # the others on to the methods below. A failure while recording (a bug, memory) is never raised into the engine,
    # which calls these methods in the middle of its own changes: it marks the store failed instead (``_fail``).

    def _recorded(self) -> None:
        self._pending = True
        if not self._writing and not self._closed:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # start-up: commit_pending() writes it
            self._writing = True
            self._loop = loop
            self._scheduled = loop.call_soon(self._next_commit)

    def _forget_queue(self, uid: str) -> None:
        self._messages.forget_queue(uid)
        self._dedup = {key: entry for key, entry in self._dedup.items() if key[0] != uid}
        self._tasks = {key: row for key, row in self._tasks.items() if row[1] != uid}

    def queue_saved(self, queue: Queue) -> None:
        """Journal: save the queue row."""
        if self._failure is None:
            try:
                self._queue_ops.append(("save", queue_row(queue)))
                self._recorded()
            except Exception as exc:
                self._fail(f"to record queue {queue.name}", exc)

    def queue_deleted(self, queue: Queue) -> None:
        """Journal: drop the queue with its messages, keys, sequence number and tasks."""
        if self._failure is None:
            try:
                self._forget_queue(queue.uid)
                self._messages.sequences.pop(queue.uid, None)
                self._queue_ops.append(("delete", queue.uid))
                self._recorded()
            except Exception as exc:
                self._fail(f"to record the deletion of queue {queue.name}", exc)

    def queue_purged(self, queue: Queue) -> None:
        """Journal: drop the queue's messages and keys; save its purge time."""
        if self._failure is None:
            try:
                self._forget_queue(queue.uid)
                self._queue_ops.append(("purge", queue_row(queue)))
                self._recorded()
            except Exception as exc:
                self._fail(f"to record the purge of queue {queue.name}", exc)

    def deduplication_remembered(
        self, queue: Queue, key: str, expires_ms: int, message_id: str, sequence_number: str
    ) -> None:
        """Journal: a FIFO deduplication key and its expiry."""
        if self._failure is None:
            try:
                self._dedup[(queue.uid, key)] = (queue.uid, key, expires_ms, message_id, sequence_number)
                self._recorded()
            except Exception as exc:
                self._fail(f"to record a deduplication key of queue {queue.name}", exc)

    def mapping_saved(self, uuid: str, document: str) -> None:
        """Record an event source mapping (``uuid``, its saved form as JSON text), committed with the next batch:
        the Lambda API's answer waits for that commit, as an admin answer does; nothing is written on the event
        loop."""
        if self._failure is None:
            try:
                self._queue_ops.append(("save_mapping", (uuid, document)))
                self._recorded()
            except Exception as exc:
                self._fail(f"to record event source mapping {uuid}", exc)

    def mapping_forgotten(self, uuid: str) -> None:
        """Record that the event source mapping ``uuid`` is gone (its row is deleted with the next batch)."""
        if self._failure is None:
            try:
                self._queue_ops.append(("forget_mapping", uuid))
                self._recorded()
            except Exception as exc:
                self._fail(f"to record the end of event source mapping {uuid}", exc)

    def saved_mappings(self) -> list[str]:
        """The saved event source mappings' documents (JSON text), in the order they were first saved (start-up,
        before the writer runs). Raises ``StoreError`` if the file cannot be read."""
        try:
            rows = self._db.execute("SELECT document FROM event_source_mappings ORDER BY rowid").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(_open_failure(self.path, exc)) from None
        return [str(row[0]) for row in rows]

    def topic_saved(self, topic: SavedTopic) -> None:
        """Record that the SNS topic ``topic`` was created or changed (its attributes, tags, subscriptions or FIFO
        deduplication history): its document is written with the next batch, as it is when that batch is taken.
        The SNS call's answer waits for that commit, as an SQS call's does."""
        if self._failure is None:
            try:
                arn = topic.arn
                if arn in self._topics:
                    earlier = self._topics[arn]
                    replaced = earlier is None or earlier[1] or earlier[0] is not topic
                else:
                    replaced = False
                self._topics[arn] = (topic, replaced)
                self._recorded()
            except Exception as exc:
                self._fail(f"to record topic {getattr(topic, 'arn', '?')}", exc)

    def topic_forgotten(self, arn: str) -> None:
        """Record that the SNS topic ``arn`` is gone, with its subscriptions (its row is deleted with the next
        batch)."""
        if self._failure is None:
            try:
                self._topics[arn] = None
                self._recorded()
            except Exception as exc:
                self._fail(f"to record the deletion of topic {arn}", exc)

    def saved_topics(self) -> list[str]:
        """The saved SNS topics' documents (JSON text), in the order the topics were created (start-up, before the
        writer runs). Raises ``StoreError`` if the file cannot be read."""
        try:
            rows = self._db.execute("SELECT document FROM topics ORDER BY rowid").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(_open_failure(self.path, exc)) from None
        return [str(row[0]) for row in rows]

    def _topic_ops(self) -> list[tuple[Any, ...]]:
        """The pending topic changes as batch operations: ``("forget_topic", arn)`` and ``("save_topic", (arn,
        document))``, each topic's document made now (the latest state of the topic). Raises ``StoreError``
        after failing the store when a document cannot be made."""
        ops: list[tuple[Any, ...]] = []
        for arn, change in self._topics.items():
            if change is None:
                ops.append(("forget_topic", arn))
                continue
            topic, replaced = change
            if replaced:
                ops.append(("forget_topic", arn))
            try:
                document = orjson.dumps(topic.to_doc()).decode()
            except Exception as exc:
                self._fail(f"to record topic {arn}", exc)
                raise StoreError(self._failure or "the durable store failed") from None
            ops.append(("save_topic", (arn, document)))
        return ops

    def task_saved(self, task: MoveTask[Queue]) -> None:
        """Journal: a move task's row (none for a task whose source queue is gone: its rows went with it); a task
        pruned from memory (``task.forgotten``) has its row deleted."""
        if self._failure is None and not task.source.deleted:
            try:
                if task.forgotten:  # pruned from memory: its row goes too
                    self._tasks.pop(task.task_id, None)
                    self._queue_ops.append(("forget_task", task.task_id))
                    self._recorded()
                    return
                self._tasks[task.task_id] = task_row(task)
                self._recorded()
            except Exception as exc:
                self._fail(f"to record move task {task.task_id}", exc)

    # ----------------------------------------------------------------- failing

    @property
    def failure(self) -> str | None:
        """What made the store fail (one line), or None while it works. Once set it stays set."""
        return self._failure

    def _fail(self, what: str, exc: BaseException) -> None:
        """Mark the store failed, for good: log it once in one line, drop what is pending (it will never be
        written), fail every request waiting for a commit and call ``on_failure``. From then on nothing is recorded
        or committed, and ``durable()`` raises ``StoreError`` for every request, so none is acknowledged: the
        engine's state has moved on from what the file can hold. The file keeps the last batch committed before the
        failure."""
        if self._failure is not None:
            return
        self._failure = f"the durable store {self.path} failed {what}: {_error_text(exc)}"
        self._messages.failed = True  # nothing more is recorded
        logger.error("%s; no request is acknowledged from now on", self._failure)
        self._drop_pending()
        waiters = self._current_waiters + self._next_waiters
        self._current_waiters, self._next_waiters = [], []
        self._settle(waiters)
        if self.on_failure is not None:
            try:
                self.on_failure(self._failure)
            except Exception:  # a bug in the owner's callback: the store must not raise into the engine
                logger.exception("the durable store's on_failure callback failed")

    def _drop_pending(self, messages: bool = True) -> None:
        """Start the next batch empty (what was pending was handed over, or will never be written); ``messages``
        False: the message rows were handed over already (``MessageRows.take``)."""
        self._queue_ops, self._dedup, self._tasks, self._topics = [], {}, {}, {}
        if messages:
            self._messages.clear()
        self._pending = False

    def _settle(self, waiters: list[asyncio.Future[None]]) -> None:
        """Answer requests waiting for a commit: done, or ``StoreError`` once the store has failed."""
        failure = self._failure
        for waiter in waiters:
            if not waiter.done():
                if failure is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(StoreError(failure))

    # ----------------------------------------------------------------- committing

    def _take(self) -> tuple[Any, ...]:
        """The pending batch, handed over (the next one starts empty): ``(queue_ops, inserts, updates, deletes,
        dedup, tasks, sequences, now_ms)``: queue and mapping operations in order; new message rows by row number
        (MESSAGE_COLUMNS); changed columns of rows on disk by row number (the number last); row numbers to delete;
        deduplication, move task and FIFO sequence rows by key; the engine's time (epoch ms) that expires
        deduplication keys (None before ``attach``). SNS topic operations come last among the queue operations
        (a topic never refers to a queue row). ``writer.write_batch`` commits it. Raises ``StoreError`` (the store
        failed) when a topic's document cannot be made."""
        if self._topics:
            self._queue_ops.extend(self._topic_ops())
        now_ms = None if self._clock is None else self._clock.now_ms()
        inserts, updates, deletes, sequences = self._messages.take()
        batch = (self._queue_ops, inserts, updates, deletes, self._dedup, self._tasks, sequences, now_ms)
        self._drop_pending(messages=False)
        return batch

    def _write(self, batch: tuple[Any, ...]) -> None:
        """Commit one batch in one transaction on this process's connection (start-up and shutdown, with no
        group commit under way; see ``writer.write_batch``)."""
        self._dedup_due = write_batch(self._db, batch, self._dedup_due)

    def _writer_process(self) -> WriterProcess:
        """The writer process, started on first use."""
        if self._process is None:
            self._process = WriterProcess(self.path, self._fsync, self._lock_fd)
        return self._process

    def _commit(self, batch: tuple[Any, ...], done: Done) -> None:
        """Send one batch to the writer process; ``done`` is told the outcome (None: committed)."""
        self._writer_process().send("write", batch, done, self._loop)

    def _next_commit(self) -> None:
        """Take the pending batch and send it to the writer process (on the event loop); its answer comes to
        ``_committed``. Nothing when the store has failed or closed meanwhile."""
        self._scheduled = None
        if self._closed or self._failure is not None or not self._pending:
            self._writing = False
            return
        try:
            batch = self._take()
        except Exception as exc:  # the store failed (and answered its waiters): nothing more is written
            self._fail("to take a batch", exc)  # (nothing more if _take failed it already)
            self._writing = False
            return
        self._current_waiters = self._next_waiters
        self._next_waiters = []
        if self.on_commit is not None:
            self._changes = sum(len(part) for part in batch[:7])
        self._started = time.perf_counter()
        self._committing = True
        try:
            self._commit(batch, self._committed)
        except Exception as exc:  # the writer process could not be started
            self._committed(exc)

    def _committed(self, failure: BaseException | None) -> None:
        """The writer process answered (from the loop's callback that read it, or from ``close``): answer the
        requests that waited for this commit and, with changes pending, take the next batch after
        :data:`GATHER_PASSES` passes of the loop."""
        if not self._committing:
            return
        self._committing = False
        waiters, self._current_waiters = self._current_waiters, []
        if failure is not None:
            self._fail("to commit", failure)
        elif self.on_commit is not None:
            try:
                self.on_commit(time.perf_counter() - self._started, self._changes)
            except Exception:  # a bug in the owner's callback must not stop the group commits
                logger.exception("the durable store's on_commit callback failed")
        self._settle(waiters)
        if self._pending and self._failure is None and not self._closed and self._loop is not None:
            self._scheduled = self._loop.call_soon(self._gather, GATHER_PASSES - 1)
        else:
            self._writing = False

    def _gather(self, left: int) -> None:
        """One pass of the loop between a commit's answer and the next batch: ``left`` passes more, then take it."""
        if left > 0 and not self._closed:
            self._scheduled = self._loop.call_soon(self._gather, left - 1) if self._loop is not None else None
        else:
            self._next_commit()

    def commit_waiter(self) -> asyncio.Future[None] | None:
        """A future done once every change recorded so far is committed (its exception ``StoreError`` if that
        commit failed), or None when nothing is waiting to be committed. Raises ``StoreError`` at once when the
        store has failed (``failure``) or is closed with changes pending. ``durable()`` without a coroutine of its
        own: the SQS answer path awaits this future directly (one frame less per request that waits)."""
        if self._failure is not None:
            raise StoreError(self._failure)
        if self._pending:
            if self._closed:
                raise StoreError(f"the durable store {self.path} is closed")
            waiters = self._next_waiters
            if not self._writing:
                self._recorded()  # changes recorded before the loop ran: start the writer now
        elif self._writing:
            waiters = self._current_waiters
        else:
            return None
        # The loop of the group commit under way (set by _recorded): asyncio.get_running_loop() would cost each
        # request a getpid() system call (CPython checks the running loop's pid on every call).
        loop = self._loop
        future: asyncio.Future[None] = (loop if loop is not None else asyncio.get_running_loop()).create_future()
        waiters.append(future)
        return future

    async def durable(self) -> None:
        """Return once every change recorded so far is committed. Raises ``StoreError`` if its commit failed, and
        for every call once the store has failed (``failure``)."""
        waiter = self.commit_waiter()
        if waiter is not None:
            await waiter

    def commit_pending(self) -> None:
        """Commit what is pending synchronously (no writer task may be running) and answer the requests waiting
        for it. Raises ``StoreError`` if the commit fails or the store has failed before."""
        if self._failure is None and self._pending:
            waiters, self._next_waiters = self._next_waiters, []
            try:
                self._write(self._take())
            except Exception as exc:
                self._fail("to commit", exc)
            self._settle(waiters)
        if self._failure is not None:
            raise StoreError(self._failure)

    def close(self, commit: bool = True) -> None:
        """Let a commit under way finish, commit what is left (unless ``commit`` is False: a start-up that failed
        drops it), end the writer task, close the database and release the folder's lock.

        Every request still waiting for a commit is answered (``StoreError`` if that commit failed). A failed
        store commits nothing more. Raises ``StoreError`` if the last commit fails. Closing twice does nothing.
        """
        if self._closed:
            return
        self._closed = True
        try:
            process, self._process = self._process, None
            if process is not None:
                process.finish()  # a commit under way completes: its answer answers its waiters (_committed)
                process.close()
            if self._committing:  # a batch no writer process took: never acknowledged
                self._committing = False
                unsent, self._current_waiters = self._current_waiters, []
                closed = StoreError(f"the durable store {self.path} was closed before committing")
                for waiter in unsent:
                    if not waiter.done():
                        waiter.set_exception(closed)
            scheduled, self._scheduled = self._scheduled, None
            if scheduled is not None:
                scheduled.cancel()
            self._writing = False
            if self._failure is None and commit:
                self.commit_pending()
        finally:
            waiters, self._next_waiters = self._next_waiters, []
            if self._pending and self._failure is None:  # dropped (commit=False): never acknowledge it
                dropped = StoreError(f"the durable store {self.path} was closed before committing")
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_exception(dropped)
            else:
                self._settle(waiters)
            try:
                self._db.close()
            finally:
                if self._lock_fd is not None:
                    os.close(self._lock_fd)  # after the database: no other server may open it before that
                    self._lock_fd = None
