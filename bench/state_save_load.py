"""What a saved state costs (docs/state.md): a save's work on the event loop and its number of slices, a load's
check (off the event loop) and its swap (on it), for ``--messages`` plain messages of ``--size`` bytes in one queue.

    python bench/state_save_load.py [--messages 100000] [--size 1024]

Prints the seconds of each step (CPU and wall are the same here: one thread, no I/O) and the file's size. Compare
two source trees with ``PYTHONPATH`` (run it from a folder that holds no ``sqsemu`` package).
"""

from __future__ import annotations

import argparse
import time

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.message import SendEntry
from sqsemu.state.export import export_state
from sqsemu.state.load import checked_state, replace_state

ACCOUNT = "000000000000"
START_MS = 1_700_000_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()
    broker = Broker(ManualClock(START_MS))
    queue = broker.create_queue(Namespace(ACCOUNT, "us-east-1"), "big", {}, {})
    body = "x" * args.size
    for _ in range(args.messages):
        broker.send_message(queue, SendEntry(body), ACCOUNT)

    began = time.perf_counter()
    chunks = list(export_state(broker, None, None, "bench"))
    saved = time.perf_counter() - began
    data = b"".join(chunks)
    print(f"save:  {saved:.2f} s of event-loop work in {len(chunks)} slices, {len(data) / 1e6:.0f} MB")

    began = time.perf_counter()
    state = checked_state(data, Config())
    print(f"check: {time.perf_counter() - began:.2f} s (a worker thread)")

    target = Broker(ManualClock(START_MS))
    began = time.perf_counter()
    replace_state(target, None, None, None, state)
    print(f"swap:  {time.perf_counter() - began:.2f} s (the event loop)")


if __name__ == "__main__":
    main()
