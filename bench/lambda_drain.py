"""Throughput of an event source mapping: a queue of N messages drained into a Lambda function that does nothing.

A real sqsemu server in a thread (``SQSServer``, the system clock), a standard queue filled with N messages of
100 bytes over the SQS API (SendMessageBatch, before the mapping exists), then CreateEventSourceMapping to an
in-process Python function ``handler(event, context)`` returning None (run in a worker thread, as SQSServer runs
sync handlers). The figure is N divided by the wall time from the mapping's creation until the queue is empty and
every poller is idle (``SQSServer.settle``), in messages per second; invocations and the mean batch are read from
``/metrics``.

    python bench/lambda_drain.py [--messages 100000] [--batch-size 10] [--window 0] [--concurrency 0]

``--concurrency 0`` leaves ``MaximumConcurrency`` unset (5 pollers).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqsemu.testing import SQSServer  # noqa: E402


def noop(event: dict[str, Any], context: Any) -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--window", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=0)
    args = parser.parse_args()
    with SQSServer(clock="system", functions={"noop": noop}) as server:
        sqs = server.client()
        url = sqs.create_queue(QueueName="drain")["QueueUrl"]
        body = "x" * 100
        filled = time.perf_counter()
        for start in range(0, args.messages, 10):
            count = min(10, args.messages - start)
            entries = [{"Id": str(n), "MessageBody": body} for n in range(count)]
            sqs.send_message_batch(QueueUrl=url, Entries=entries)
        filled = time.perf_counter() - filled
        parameters: dict[str, Any] = {"BatchSize": args.batch_size, "MaximumBatchingWindowInSeconds": args.window}
        if args.concurrency:
            parameters["ScalingConfig"] = {"MaximumConcurrency": args.concurrency}
        started = time.perf_counter()
        server.map_queue(url, "noop", **parameters)
        while True:
            server.settle(timeout=600)
            counts = sqs.get_queue_attributes(
                QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
            )["Attributes"]
            if counts == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}:
                break
        elapsed = time.perf_counter() - started
        with urllib.request.urlopen(server.endpoint_url + "/metrics", timeout=30) as response:
            metrics = response.read().decode()
    invocations = sum(
        float(m) for m in re.findall(r'^sqsemu_lambda_invocations_total\{function="noop",[^}]*\} (\S+)$', metrics, re.M)
    )
    print(f"filled {args.messages} messages in {filled:.1f} s")
    print(
        f"drained {args.messages} messages in {elapsed:.2f} s: {args.messages / elapsed:,.0f} msgs/s "
        f"({invocations:.0f} invocations, {args.messages / max(invocations, 1):.1f} messages each; batch size "
        f"{args.batch_size}, window {args.window} s, concurrency {args.concurrency or 'default (5)'})"
    )


if __name__ == "__main__":
    main()
