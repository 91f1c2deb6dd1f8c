#!/usr/bin/env python3
"""Receive cost on a fair queue against the number of tenants in flight (issue 28): the engine alone, no sockets.

For each tenant count the queue gets that many tenants (MessageGroupId), one message of each received and left in
flight (so every tenant is in flight), plus a backlog of visible messages; then ``--receives`` receives of one
message each (visibility timeout 0, so the backlog stays) are timed, and the mean CPU time of one receive is printed
in microseconds.

    python bench/fair_scale.py [--tenants 10,1000,20000] [--receives 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from sqsemu.clock import ManualClock
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.message import SendEntry

NS = Namespace("000000000000", "us-east-1")


def measure(tenants: int, receives: int) -> float:
    clock = ManualClock(1_700_000_000_000)
    broker = Broker(clock)
    broker.start()
    loop = asyncio.new_event_loop()
    try:
        queue = broker.create_queue(NS, f"fair-{tenants}", {"VisibilityTimeout": "600"}, {})
        for n in range(tenants):
            broker.send_message(queue, SendEntry("in flight", group_id=f"t{n}"), "000000000000")
        taken = 0
        while taken < tenants:
            got = loop.run_until_complete(broker.receive_message(queue, max_number_of_messages=10, wait_time_seconds=0))
            taken += len(got)
            clock.advance(0.001)
        for n in range(receives):
            broker.send_message(queue, SendEntry("backlog", group_id=f"t{n % tenants}"), "000000000000")
        started = time.process_time()
        for _ in range(receives):
            loop.run_until_complete(
                broker.receive_message(queue, max_number_of_messages=1, visibility_timeout=0, wait_time_seconds=0)
            )
        return (time.process_time() - started) / receives * 1e6
    finally:
        broker.close()
        loop.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", default="10,1000,20000")
    parser.add_argument("--receives", type=int, default=2000)
    options = parser.parse_args()
    for tenants in (int(t) for t in options.tenants.split(",")):
        cost = measure(tenants, options.receives)
        print(f"{tenants:>6} tenants in flight: {cost:8.1f} us CPU per receive ({options.receives} receives)")


if __name__ == "__main__":
    main()
