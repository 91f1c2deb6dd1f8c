"""CPU per message of the durable store's commits alone: ``sqsemu.persistence.writer.write_batch`` on batches shaped
as ``SQLiteStore._take`` makes them, without the server, the event loop or the writer process's socket.

Two patterns of 1 KiB messages, ``--batch`` messages per commit (as measured on a server under 16 connections:
about 85 for SendMessageBatch, 25 for the round trip): ``insert`` (SendMessageBatch: new rows only) and
``roundtrip`` (each commit adds a batch and deletes the one added two commits before; the receive's change is in
the new rows, since a message is received before its send's commit and the two merge). Each page size given is a
fresh file made as the store makes one (WAL, ``connect_settings``; the store keeps SQLite's default, 4 KiB).

    python bench/durable_writer.py [--batch 85] [--roundtrip-batch 25] [--batches 400]
                                   [--page-sizes 4096,16384] [--rounds 2]

Prints, per page size and pattern, CPU microseconds per message (``time.process_time``: SQLite's work and the
kernel's page-cache writes) and wall microseconds per message (with the WAL checkpoints' syncs). Alternate rounds
on a shared machine and compare CPU. The patterns are regular (each commit touches whole runs of rows); a server's
commits are not: 16 KiB pages cut appends here by a third (8.0-8.8 to 5.9 us at 80 messages a commit) but made the
writer process of a real server under the round trip ~40% dearer (every scattered row changed rewrites a 16 KiB
page), so check a page-size idea against the server too (docs/performance-compiled.md, the durable section).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import string
import tempfile
import time
from typing import Any

from sqsemu.persistence import sqlite as store_module
from sqsemu.persistence.writer import connect_settings, write_batch

_FILL = "".join(random.Random(7).choice(string.ascii_letters) for _ in range(1008))


def _row(seq: int) -> tuple[Any, ...]:
    """A message row (MESSAGE_COLUMNS) as the store records a plain 1 KiB message."""
    message_id = f"{random.getrandbits(128):032x}"
    body = f"{seq:015d}|{_FILL}"
    return ("uid", message_id, seq, body, None, None, None, "AIDAEXAMPLE", 1, 1, 1024, None, None, None, None)


def _batches(pattern: str, size: int, count: int) -> list[tuple[Any, ...]]:
    seq = 1
    live: list[int] = []
    out: list[tuple[Any, ...]] = []
    for _ in range(count):
        deletes: list[int] = []
        updates: dict[int, tuple[Any, ...]] = {}
        if pattern == "roundtrip" and len(live) >= 2 * size:  # deleted two commits after their send
            deletes, live = live[:size], live[size:]
        inserts = {}
        for _ in range(size):
            inserts[seq] = (*_row(seq), 0, 0, 0, 1, 0)
            live.append(seq)
            seq += 1
        out.append(([], inserts, updates, deletes, {}, {}, {}, None))
    return out


def _run(page_size: int, pattern: str, size: int, count: int) -> tuple[float, float]:
    folder = tempfile.mkdtemp(prefix="sqsemu-writer-bench-")
    try:
        db = sqlite3.connect(os.path.join(folder, "bench.db"), isolation_level=None)
        db.execute(f"PRAGMA page_size={page_size}")
        db.execute("PRAGMA journal_mode=WAL")
        connect_settings(db, "normal")
        db.executescript(f"BEGIN; {store_module._SCHEMA} COMMIT;")
        batches = _batches(pattern, size, count)
        cpu, wall = time.process_time(), time.perf_counter()
        due = None
        for batch in batches:
            due = write_batch(db, batch, due)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        db.close()
        return 1e6 * cpu / (size * count), 1e6 * wall / (size * count)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=85, help="messages per commit (insert)")
    ap.add_argument("--roundtrip-batch", type=int, default=25, help="messages per commit (roundtrip)")
    ap.add_argument("--batches", type=int, default=400)
    ap.add_argument("--page-sizes", default="4096,16384")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    for round_ in range(a.rounds):
        for page_size in (int(p) for p in a.page_sizes.split(",")):
            for pattern in ("insert", "roundtrip"):
                size = a.batch if pattern == "insert" else a.roundtrip_batch
                cpu, wall = _run(page_size, pattern, size, a.batches * a.batch // size)
                print(
                    f"round {round_ + 1} page {page_size:6d} {pattern:9s} {cpu:6.2f} us CPU/msg {wall:7.2f} us wall/msg"
                )


if __name__ == "__main__":
    main()
