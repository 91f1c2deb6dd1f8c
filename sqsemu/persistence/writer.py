"""The durable store's writer process: group commits run in a process of their own, off the event loop's GIL.

Why a process: Python's ``sqlite3`` needs the GIL to bind parameters and to go on after each SQLite call. A writer
thread therefore waits for the event loop to let go of the GIL at the start of each commit, after its longer SQLite
calls and to hand the result back; under load those waits, not SQLite, made most of a commit's time, and the
loop idled while its requests waited for their commits. The writer process has an interpreter of its own: the loop
only pickles the batch, sends it and reads the answer when its socket says it is there.

Protocol, over a Unix socket pair, one frame each way per request: an 8-byte little-endian length and a pickle
(the writer reads a frame with one ``recv`` when it has arrived whole: ``FrameReader``).
The store sends ``("write", batch)`` (the batch of ``SQLiteStore._take``) or ``("pragma", statement)``; the writer
answers ``None`` once the transaction has committed, or ``(exception type name, SQLite error name, message)`` if it
failed (then it has rolled back). One request at a time. The writer ends at the end of its input (the store
closed its end, or its process ended: a commit under way finishes or rolls back, as SQLite guarantees).

The writer inherits the data folder's lock (``flock`` on ``sqsemu.lock``) and holds it until it ends: no other
server opens the folder while a commit of this one may still be running.

    python -m sqsemu.persistence.writer SOCKET_FD DATABASE_PATH FSYNC
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import socket
import sqlite3
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqsemu.persistence.statements import MultiRow, bind_none_directly

__all__ = [
    "Done",
    "TUNING",
    "FrameReader",
    "WriterGone",
    "WriterProcess",
    "connect_settings",
    "read_frame",
    "write_batch",
    "write_frame",
]

# Measured on the roundtrip pattern (append new rows, update and delete recent ones, one transaction per batch):
# together +31% rows/s. Some SQLite builds zero-fill deleted rows (secure_delete); a larger page cache keeps the hot
# end of the table in memory; checkpointing every ~40 MB of WAL instead of ~4 MB writes a page rewritten by many
# commits back once.
TUNING = ("PRAGMA secure_delete=OFF", "PRAGMA cache_size=-65536", "PRAGMA wal_autocheckpoint=10000")
MESSAGE_COLUMNS = (
    "queue_uid, message_id, seq, body, message_attributes, system_attributes, trace_header, sender_id, sent_ms, "
    "enqueued_ms, size, group_id, deduplication_id, sequence_number, dead_letter_source_arn, receive_count, "
    "first_receive_ms, received_ms, visible_at_ms, receipt_serial"
)
# The message rows, written many per statement (statements.py); an update sets what receiving changes.
_MESSAGES = MultiRow(
    "messages",
    MESSAGE_COLUMNS.split(", "),
    "seq",
    ("receive_count", "first_receive_ms", "received_ms", "visible_at_ms", "receipt_serial"),
)
_DEDUPLICATION = MultiRow(
    "deduplication", ("queue_uid", "key", "expires_ms", "message_id", "sequence_number"), "queue_uid, key"
)
_LENGTH = struct.Struct("<Q")


def connect_settings(connection: sqlite3.Connection, fsync: str) -> None:
    """Set a connection to the store's file up for writing: ``synchronous`` from ``fsync`` ("normal" or "full")
    and the tuning pragmas. The file must be in WAL mode already (it stays so once set). Also makes this process's
    ``sqlite3`` bind None parameters without failed adapter look-ups (``statements.bind_none_directly``)."""
    bind_none_directly()
    connection.execute(f"PRAGMA synchronous={'FULL' if fsync == 'full' else 'NORMAL'}")
    for pragma in TUNING:
        connection.execute(pragma)


_SAVE_QUEUE = (
    "INSERT OR REPLACE INTO queues (uid, account, region, name, fifo, attributes, tags, created_s, last_modified_s, "
    "last_purge_ms, delayed_attributes) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)

_SAVE_TOPIC = (
    "INSERT INTO topics (arn, document) VALUES (?, ?) ON CONFLICT (arn) DO UPDATE SET document=excluded.document"
)


def write_batch(db: sqlite3.Connection, batch: tuple[Any, ...], dedup_due: int | None) -> int | None:
    """Commit one batch of ``SQLiteStore._take`` in one transaction on ``db`` (autocommit mode); returns the
    earliest ``expires_ms`` among the deduplication rows now on disk (None: none), given it before the batch.

    The batch also deletes the deduplication keys expired by its time (``now_ms``, epoch ms; None: none), when the
    earliest key on disk is due: the table holds about five minutes of FIFO sends, not all of them. Raises what
    SQLite raises, after rolling the transaction back.
    """
    queue_ops, inserts, updates, deletes, dedup, tasks, sequences, now_ms = batch
    if dedup:
        earliest = min(row[2] for row in dedup.values())
        dedup_due = earliest if dedup_due is None else min(dedup_due, earliest)
    db.execute("BEGIN")
    try:
        for op in queue_ops:
            if op[0] == "delete":
                uid = op[1]
                db.execute("DELETE FROM queues WHERE uid=?", (uid,))
                db.execute("DELETE FROM messages WHERE queue_uid=?", (uid,))
                db.execute("DELETE FROM deduplication WHERE queue_uid=?", (uid,))
                db.execute("DELETE FROM move_tasks WHERE source_uid=?", (uid,))
                db.execute("DELETE FROM fifo_sequences WHERE queue_uid=?", (uid,))
            elif op[0] == "forget_task":
                db.execute("DELETE FROM move_tasks WHERE task_id=?", (op[1],))
            elif op[0] == "save_mapping":
                db.execute("INSERT OR REPLACE INTO event_source_mappings (uuid, document) VALUES (?, ?)", op[1])
            elif op[0] == "forget_mapping":
                db.execute("DELETE FROM event_source_mappings WHERE uuid=?", (op[1],))
            elif op[0] == "save_topic":  # an upsert keeps the row's place: the table lists topics in creation order
                db.execute(_SAVE_TOPIC, op[1])
            elif op[0] == "forget_topic":
                db.execute("DELETE FROM topics WHERE arn=?", (op[1],))
            else:
                row = op[1]
                if op[0] == "purge":
                    db.execute("DELETE FROM messages WHERE queue_uid=?", (row[0],))
                    db.execute("DELETE FROM deduplication WHERE queue_uid=?", (row[0],))
                db.execute(_SAVE_QUEUE, row)
        _MESSAGES.delete(db, deletes)
        _MESSAGES.insert(db, list(inserts.values()))
        _MESSAGES.update(db, list(updates.values()))
        _DEDUPLICATION.insert(db, list(dedup.values()))
        if tasks:  # (an executemany of nothing still looks its statement up)
            db.executemany("INSERT OR REPLACE INTO move_tasks VALUES (?,?,?,?,?,?,?,?,?)", tasks.values())
        if sequences:
            db.executemany("INSERT OR REPLACE INTO fifo_sequences VALUES (?,?)", sequences.items())
        if now_ms is not None and dedup_due is not None and dedup_due <= now_ms:
            db.execute("DELETE FROM deduplication WHERE expires_ms <= ?", (now_ms,))
            dedup_due = db.execute("SELECT MIN(expires_ms) FROM deduplication").fetchone()[0]
        db.execute("COMMIT")
    except BaseException:
        # Some errors (a full disk, an I/O error) make SQLite roll the transaction back itself; rolling back
        # again would fail, and that secondary error ("cannot rollback") must not hide the one that matters.
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
    return dedup_due


def _frame(value: Any) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


_COMMITTED = _frame(None)  # the answer of a request done: every commit's, made once


def write_frame(sock: socket.socket, value: Any) -> None:
    """Send ``value`` as one frame on a blocking socket."""
    sock.sendall(_COMMITTED if value is None else _frame(value))


class FrameReader:
    """Reads frames from a blocking socket into one buffer that it reuses (grown to the largest frame seen), usually
    with one ``recv_into`` per frame: no allocation of the frame's size per read (a batch of SendMessageBatch calls
    is 100-200 KB, which ``malloc`` maps and unmaps anew each time). What arrives beyond a frame is kept for the next
    one."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = bytearray(1 << 16)
        self._start = 0  # where the bytes not read yet begin in the buffer
        self._end = 0  # and where they end

    def read(self) -> Any:
        """The next frame's value; raises ``EOFError`` at the end of the input."""
        buffer = self._buffer
        while True:
            start = self._start
            have = self._end - start
            need = _LENGTH.size
            if have >= need:
                need += _LENGTH.unpack_from(buffer, start)[0]
                if have >= need:
                    with memoryview(buffer) as view:
                        value = pickle.loads(view[start + _LENGTH.size : start + need])
                    self._start = start + need
                    if self._start == self._end:
                        self._start = self._end = 0
                    return value
            if start + need > len(buffer):  # no room for the frame after what is unread: move that to the front
                buffer[:have] = buffer[start : self._end]
                self._start, self._end = 0, have
                if need > len(buffer):
                    buffer.extend(bytes(need - len(buffer)))
            with memoryview(buffer) as view:
                got = self._sock.recv_into(view[self._end :])
            if got == 0:
                raise EOFError("the other end closed the connection")
            self._end += got


def read_frame(sock: socket.socket) -> Any:
    """Read one frame from a blocking socket (nothing beyond it); raises ``EOFError`` at the end of the input."""
    (length,) = _LENGTH.unpack(_read_exactly(sock, _LENGTH.size))
    return pickle.loads(_read_exactly(sock, length))


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            raise EOFError("the other end closed the connection")
        got += n
    return bytes(buffer)


def failure_of(exc: BaseException) -> tuple[str, str | None, str]:
    """The answer frame of a failed request: exception type name, SQLite error name (or None), message."""
    return type(exc).__name__, getattr(exc, "sqlite_errorname", None), str(exc)


class WriterGone(OSError):
    """The writer process ended (or its socket broke) before answering: nothing more can be committed."""


def _failure_in(answer: Any) -> Exception | None:
    """The failure a writer answered (an ``sqlite3`` error of the same type, code and message), or None."""
    if answer is None:
        return None
    name, code, message = answer
    kind = getattr(sqlite3, name, None)
    exc = kind(message) if isinstance(kind, type) and issubclass(kind, Exception) else sqlite3.Error(message)
    if code is not None:
        setattr(exc, "sqlite_errorname", code)  # noqa: B010 (not an attribute Exception declares)
    return exc


Done = Callable[[BaseException | None], None]
"""Told the outcome of a request: None once the writer has committed it, else its failure."""


class WriterProcess:
    """The store's side of a writer process (see the module docstring): started at once, used from one event
    loop, one request at a time.

    ``send(kind, payload, done)`` sends a request and calls ``done(None)`` once the writer has answered that it
    committed, ``done(failure)`` if it failed (``sqlite3.Error`` with SQLite's code and message) or ``WriterGone``
    if the writer ended first: from the loop's callback that read the answer, with no task or future in between
    (the group commit's path, once per commit). ``request(kind, payload)`` is the same as a coroutine, raising the
    failure. ``finish()`` completes a request under way without the loop (at shutdown), tells its ``done`` and
    returns the failure; ``close()`` ends the writer and waits for it (up to 10 s, then kills it).
    """

    def __init__(self, path: Path, fsync: str, lock_fd: int | None) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the folder holding the sqsemu package
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        keep = (theirs.fileno(),) if lock_fd is None else (theirs.fileno(), lock_fd)
        try:
            self.process = subprocess.Popen(
                # -P: no current folder on sys.path (-m would put it first), so the writer is the sqsemu of
                # PYTHONPATH's first entry, this one, even when started from a folder holding another sqsemu.
                [sys.executable, "-P", "-m", "sqsemu.persistence.writer", str(theirs.fileno()), str(path), fsync],
                stdin=subprocess.DEVNULL,
                pass_fds=keep,
                env=env,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        self._sock = ours
        self._loop: asyncio.AbstractEventLoop | None = None
        self._out = memoryview(b"")  # what is left to send of the request under way
        self._in = bytearray()  # what has arrived of its answer
        self._done: Done | None = None  # told the outcome of the request under way
        self._watching_out = False  # the loop watches the socket for room to send the rest of a request
        self._ended: WriterGone | None = None  # set once the writer is seen gone

    def send(self, kind: str, payload: Any, done: Done, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Send one request; ``done`` is told its outcome (see the class docstring). Must be called on the
        event loop (``loop``, the running one: given, it spares a ``getpid()`` system call), with no request under
        way. A writer seen gone tells ``done`` at once."""
        if self._ended is not None:
            done(WriterGone(str(self._ended)))
            return
        if loop is None:
            loop = asyncio.get_running_loop()
        if self._loop is not loop:  # the socket stays watched between requests: no epoll change per commit
            self._unwatch()
            loop.add_reader(self._sock.fileno(), self._receive_some)
            self._loop = loop
        data = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
        self._out = memoryview(_LENGTH.pack(len(data)) + data)
        self._in.clear()
        self._done = done
        self._send_some()
        if self._out and self._done is done:
            loop.add_writer(self._sock.fileno(), self._send_some)
            self._watching_out = True

    async def request(self, kind: str, payload: Any) -> None:
        """Send one request and wait for its answer (raising the writer's failure)."""
        answer: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done(failure: BaseException | None) -> None:
            if not answer.done():
                if failure is None:
                    answer.set_result(None)
                else:
                    answer.set_exception(failure)

        self.send(kind, payload, done)
        await answer

    def _tell(self, failure: BaseException | None) -> None:
        """End the request under way with ``failure`` (None: committed)."""
        done, self._done = self._done, None
        if done is not None:
            done(failure)

    def _unwatch(self) -> None:
        self._watching_out = False
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            fd = self._sock.fileno()
            if fd >= 0:
                loop.remove_writer(fd)
                loop.remove_reader(fd)

    def _gone(self, why: BaseException | None = None) -> WriterGone:
        status = self.process.poll()
        ended = "ended" if status is None else f"ended with exit status {status}"
        return WriterGone(f"the writer process {ended}{f' ({why})' if why else ''}")

    def _send_some(self) -> None:
        try:
            while self._out:
                sent = self._sock.send(self._out)
                self._out = self._out[sent:]
        except BlockingIOError:
            return
        except OSError as exc:
            self._out = memoryview(b"")
            self._stop_watching_out()
            self._tell(self._gone(exc))
            return
        self._stop_watching_out()

    def _stop_watching_out(self) -> None:
        if self._watching_out:
            self._watching_out = False
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_writer(self._sock.fileno())

    def _receive_some(self) -> None:
        error: OSError | None = None
        try:
            data = self._sock.recv(1 << 12)  # an answer is a few bytes (a failure's message: a few hundred)
        except BlockingIOError:
            return
        except OSError as exc:
            data, error = b"", exc
        if not data:  # the writer ended: stop watching, fail the request under way and every later one
            self._unwatch()
            self._ended = self._gone(error)
            self._tell(self._ended)
            return
        if self._done is None:
            return
        if data == _COMMITTED and not self._in:  # every commit's answer, whole: nothing to unpickle
            self._tell(None)
            return
        self._in += data
        value = self._complete()
        if value is not _INCOMPLETE:
            self._tell(_failure_in(value))

    def _complete(self) -> Any:
        """The answer if all of it has arrived, else ``_INCOMPLETE``."""
        if len(self._in) < _LENGTH.size:
            return _INCOMPLETE
        (length,) = _LENGTH.unpack_from(self._in)
        if len(self._in) < _LENGTH.size + length:
            return _INCOMPLETE
        return pickle.loads(self._in[_LENGTH.size : _LENGTH.size + length])

    def finish(self) -> BaseException | None:
        """Complete the request under way, if any, blocking: send the rest of it, read its answer and tell its
        ``done``. Returns its failure (None: committed, or no request under way)."""
        if self._done is None:
            return None
        self._unwatch()
        failure: BaseException | None = None
        try:
            self._sock.setblocking(True)
            if self._out:
                self._sock.sendall(self._out)
                self._out = memoryview(b"")
            value = self._complete()
            while value is _INCOMPLETE:
                data = self._sock.recv(1 << 16)
                if not data:
                    raise self._gone()
                self._in += data
                value = self._complete()
            failure = _failure_in(value)
        except Exception as exc:
            failure = exc if isinstance(exc, sqlite3.Error | WriterGone) else self._gone(exc)
        finally:
            with contextlib.suppress(OSError):
                self._sock.setblocking(False)
        self._tell(failure)
        return failure

    def close(self) -> None:
        """End the writer (after ``finish``) and wait for it."""
        self._unwatch()
        self._sock.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_INCOMPLETE = object()


def serve(sock: socket.socket, path: str, fsync: str) -> None:
    """Answer the store's requests on ``sock`` (see the module docstring) until the end of its input. If the
    database cannot be opened, every request is answered with that failure."""
    db: sqlite3.Connection | None = None
    broken: tuple[str, str | None, str] | None = None
    dedup_due: int | None = None
    try:
        db = sqlite3.connect(path, isolation_level=None)
        connect_settings(db, fsync)
        dedup_due = db.execute("SELECT MIN(expires_ms) FROM deduplication").fetchone()[0]
    except sqlite3.Error as exc:
        broken = failure_of(exc)
    frames = FrameReader(sock)
    try:
        while True:
            try:
                kind, payload = frames.read()
            except EOFError:
                return
            if db is None or broken is not None:
                write_frame(sock, broken)
                continue
            try:
                if kind == "write":
                    dedup_due = write_batch(db, payload, dedup_due)
                else:
                    db.execute(payload)
            except Exception as exc:
                write_frame(sock, failure_of(exc))
            else:
                write_frame(sock, None)
    finally:
        if db is not None:
            db.close()


def main(argv: list[str]) -> int:
    """The writer process: ``SOCKET_FD DATABASE_PATH FSYNC``."""
    fd, path, fsync = int(argv[0]), argv[1], argv[2]
    with socket.socket(fileno=fd) as sock:
        try:
            serve(sock, path, fsync)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the store is gone: nobody waits for an answer
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
