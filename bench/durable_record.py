"""CPU per message of what durable mode adds on the event loop's side, without SQLite or the writer process: the
store's journal calls (``message_added`` / ``message_changed`` / ``message_deleted`` of the journal the store
gives the broker: ``persistence/rows.py``'s ``MessageRows``) turning engine events into row data, and pickling each
batch as it goes to the writer process (``SQLiteStore._take``).

Plain 1 KiB messages (no attributes), ``--batch`` per batch: each batch is added (then taken and pickled), changed
as a receive changes them (taken, pickled), then deleted (taken, pickled): the round trip's three steps, each its
own group commit. Prints the best of ``--rounds`` rounds, CPU microseconds per message for each step.

    python bench/durable_record.py [--batch 100] [--batches 300] [--rounds 3]

Compare two source trees with ``PYTHONPATH`` (run it from a folder that holds no ``sqsemu`` package).
"""

from __future__ import annotations

import argparse
import pickle
import random
import shutil
import string
import tempfile
import time

from sqsemu.clock import ManualClock
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.message import Message
from sqsemu.persistence.sqlite import SQLiteStore

_FILL = "".join(random.Random(7).choice(string.ascii_letters) for _ in range(1008))
_NOW_MS = 1_795_000_000_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="sqsemu-record-bench-")
    store = SQLiteStore.open(folder)
    try:
        broker = Broker(ManualClock(_NOW_MS))
        store.attach(broker)
        journal = broker.journal
        assert journal is not None
        queue = broker.create_queue(Namespace("123456789012", "us-east-1"), "q", {}, {})
        batches = [
            [
                Message(
                    f"{random.getrandbits(128):032x}", f"{n * a.batch + i:015d}|{_FILL}", {}, {}, None, "AIDA", 1, 1024
                )
                for i in range(a.batch)
            ]
            for n in range(a.batches)
        ]
        best = {"add": float("inf"), "change": float("inf"), "delete": float("inf")}
        for _ in range(a.rounds):
            spent = dict.fromkeys(best, 0.0)
            for batch in batches:
                started = time.process_time()
                for message in batch:
                    journal.message_added(queue, message, "sent")
                pickle.dumps(store._take(), protocol=pickle.HIGHEST_PROTOCOL)
                added = time.process_time()
                for message in batch:
                    message.receive_count += 1
                    message.visible_at_ms += 30_000
                    journal.message_changed(queue, message)
                pickle.dumps(store._take(), protocol=pickle.HIGHEST_PROTOCOL)
                changed = time.process_time()
                for message in batch:
                    journal.message_deleted(queue, message, "deleted")
                pickle.dumps(store._take(), protocol=pickle.HIGHEST_PROTOCOL)
                spent["add"] += added - started
                spent["change"] += changed - added
                spent["delete"] += time.process_time() - changed
            best = {step: min(best[step], spent[step]) for step in best}
        per = {step: 1e6 * value / (a.batch * a.batches) for step, value in best.items()}
        print(
            f"add {per['add']:.2f}  change {per['change']:.2f}  delete {per['delete']:.2f}  "
            f"(sum {sum(per.values()):.2f}) us CPU per message, recording and pickling, best of {a.rounds}"
        )
    finally:
        store.close(commit=False)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
