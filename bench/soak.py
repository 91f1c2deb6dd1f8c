#!/usr/bin/env python3
"""Soak benchmark: a mixed SQS workload against one server for a configurable time, checking every message.

Usage::

    python bench/soak.py --minutes 30                 # starts its own server (python -m sqsemu) on a free port
    python bench/soak.py --minutes 5 --data-dir /tmp/soak-data   # the same, durable
    python bench/soak.py --endpoint http://127.0.0.1:9324 --server-pid 1234 --minutes 10

The workload (AWS JSON 1.0 over keep-alive HTTP/1.1, one connection per worker; the same requests an SDK sends):

- ``soak-plain``: a standard queue; producers send single messages and batches of 10; consumers long-poll
  (``WaitTimeSeconds`` 1-3, up to 10 messages), delete in batches, and hand about 5% of what they receive back
  with ``ChangeMessageVisibility(VisibilityTimeout=0)`` (received again later);
- ``soak-dup``: the same with realism's ``duplicates=0.1`` as the queue's own ``sqsemu:realism`` tag: about 10% of
  the deleted messages come back once (docs/realism.md);
- ``soak.fifo``: a FIFO queue, 8 message groups, explicit deduplication IDs, sends of one message; per group the
  messages must arrive in the order sent;
- ``soak-src`` with ``soak-dlq`` as its dead-letter queue (``maxReceiveCount`` 2): every 20th message is poison:
  its consumer never deletes it but makes it visible again at once, so after two receives it must turn up in the
  dead-letter queue, whose consumer deletes it.

Every minute one line: elapsed minutes, the server's resident memory (``/proc/<pid>/status`` VmRSS), its open file
descriptors (``/proc/<pid>/fd``), ``sqsemu_timers_scheduled`` and ``sqsemu_long_polls_waiting`` from ``/metrics``,
the p99 latency of the minute's calls other than long polls (ms, measured by the client) and the calls made.

At the end the producers stop and the consumers drain every queue (up to ``--drain`` seconds). The run fails
(exit status 1) on any lost message (sent, acknowledged, never received and deleted; a poison message not in the
dead-letter queue), any unexpected one (a body never sent, a message received more often than the rules above
allow, a FIFO group out of order, a poison message delivered from the dead-letter queue twice) and any call
answered with an error or not answered.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

AUTH = "AWS4-HMAC-SHA256 Credential=000000000000/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=x"
GROUPS = 8
POISON_EVERY = 20
RELEASE_SHARE = 0.05


class CallFailed(Exception):
    """An SQS call answered with an error, or not answered."""


class Client:
    """One keep-alive HTTP/1.1 connection speaking AWS JSON 1.0; records each call's latency."""

    def __init__(self, host: str, port: int, stats: Stats) -> None:
        self.host, self.port, self.stats = host, port, stats
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self, action: str, payload: dict[str, Any], long_poll: bool = False) -> dict[str, Any]:
        body = json.dumps(payload).encode()
        head = (
            f"POST / HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nX-Amz-Target: AmazonSQS.{action}\r\n"
            f"Content-Type: application/x-amz-json-1.0\r\nAuthorization: {AUTH}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        started = time.perf_counter()
        try:
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            assert self.reader is not None
            self.writer.write(head + body)
            status_line = await self.reader.readline()
            length = 0
            while True:
                line = await self.reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            data = await self.reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError) as exc:
            self.close()
            self.stats.failures.append(f"{action}: connection error {exc!r}")
            raise CallFailed(action) from exc
        if not long_poll:
            self.stats.latencies.append(time.perf_counter() - started)
        self.stats.calls += 1
        if b" 200 " not in status_line:
            self.stats.failures.append(f"{action}: {status_line.decode().strip()} {data[:300]!r}")
            raise CallFailed(action)
        return json.loads(data) if data else {}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Stats:
    """What the run saw: per queue the bodies sent and the deliveries of each body, and the failures."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.calls = 0
        self.failures: list[str] = []
        self.sent: dict[str, set[str]] = defaultdict(set)
        self.deliveries: dict[str, Counter[str]] = defaultdict(Counter)
        self.deleted: dict[str, set[str]] = defaultdict(set)
        self.released: Counter[str] = Counter()  # body -> times handed back with visibility 0
        self.fifo_order: dict[str, list[int]] = defaultdict(list)  # group -> sequence numbers in receive order
        self.unexpected: list[str] = []


async def producer(
    k: int, client: Client, urls: dict[str, str], stats: Stats, stop: asyncio.Event, rate: float
) -> None:
    """Producer ``k``: sends to every queue, about ``rate`` messages per second; its FIFO groups are its own (so
    that the order it sends in is the order the queue receives in)."""
    n = 0
    fifo_next = [0] * GROUPS
    while not stop.is_set():
        started = time.monotonic()
        n += 1
        try:
            for name in ("soak-plain", "soak-dup"):
                if n % 3 == 0:
                    bodies = [f"{name}-p{k}-{n}-{i}" for i in range(10)]
                    entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies)]
                    answer = await client.call("SendMessageBatch", {"QueueUrl": urls[name], "Entries": entries})
                    if answer.get("Failed"):
                        stats.failures.append(f"SendMessageBatch failed entries: {answer['Failed']}")
                    for entry in answer.get("Successful", []):
                        stats.sent[name].add(bodies[int(entry["Id"])])
                else:
                    body = f"{name}-p{k}-{n}"
                    await client.call("SendMessage", {"QueueUrl": urls[name], "MessageBody": body})
                    stats.sent[name].add(body)
            group = n % GROUPS
            seq = fifo_next[group]
            fifo_next[group] += 1
            body = f"p{k}g{group}-{seq}"
            await client.call(
                "SendMessage",
                {"QueueUrl": urls["soak.fifo"], "MessageBody": body, "MessageGroupId": f"p{k}g{group}",
                 "MessageDeduplicationId": f"p{k}d{group}-{seq}"},
            )  # fmt: skip
            stats.sent["soak.fifo"].add(body)
            body = f"src-p{k}-{n}-{'poison' if n % POISON_EVERY == 0 else 'ok'}"
            await client.call("SendMessage", {"QueueUrl": urls["soak-src"], "MessageBody": body})
            stats.sent["soak-src"].add(body)
        except CallFailed:
            await asyncio.sleep(0.5)
        per_round = 2 * (1 + 1 + 10) / 3 + 2  # messages per round, on average (a batch every third round)
        await asyncio.sleep(max(0.0, per_round / rate - (time.monotonic() - started)))


async def consumer(client: Client, name: str, url: str, stats: Stats, stop: asyncio.Event) -> None:
    """Long-polls ``name`` and deletes what it receives, following the queue's rules (see the module docstring)."""
    while not stop.is_set():
        try:
            answer = await client.call(
                "ReceiveMessage",
                {"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": random.randint(1, 3),
                 "VisibilityTimeout": 60},
                long_poll=True,
            )  # fmt: skip
            messages = answer.get("Messages", [])
            to_delete, to_release = [], []
            for message in messages:
                body = message["Body"]
                stats.deliveries[name][body] += 1
                if name == "soak.fifo":
                    group, seq = body.split("-")
                    stats.fifo_order[group].append(int(seq))
                if name == "soak-src" and body.endswith("poison"):
                    to_release.append(message)
                elif name == "soak-plain" and random.random() < RELEASE_SHARE:
                    stats.released[body] += 1
                    to_release.append(message)
                else:
                    to_delete.append(message)
            if to_release:
                entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
                           for i, m in enumerate(to_release)]  # fmt: skip
                answer = await client.call("ChangeMessageVisibilityBatch", {"QueueUrl": url, "Entries": entries})
                if answer.get("Failed"):
                    stats.failures.append(f"ChangeMessageVisibilityBatch failed: {answer['Failed']}")
            if to_delete:
                entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(to_delete)]
                answer = await client.call("DeleteMessageBatch", {"QueueUrl": url, "Entries": entries})
                if answer.get("Failed"):
                    stats.failures.append(f"DeleteMessageBatch failed: {answer['Failed']}")
                for message in to_delete:
                    stats.deleted[name].add(message["Body"])
        except CallFailed:
            await asyncio.sleep(0.5)


def proc_figures(pid: int) -> tuple[float, int]:
    """``(resident MiB, open file descriptors)`` of process ``pid``."""
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


async def metric(client: Client, names: tuple[str, ...]) -> dict[str, float]:
    """Values of ``names`` from ``GET /metrics`` (on a connection of its own)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    writer.write(f"GET /metrics HTTP/1.1\r\nHost: {client.host}:{client.port}\r\nConnection: close\r\n\r\n".encode())
    text = (await reader.read()).decode()
    writer.close()
    found = {}
    for name in names:
        match = re.search(rf"^{name} (\S+)$", text, re.M)
        found[name] = float(match.group(1)) if match else float("nan")
    return found


def p99(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


async def report(client: Client, pid: int, stats: Stats, started: float, stop: asyncio.Event, every: float) -> None:
    print("minutes  rss_mib  open_fds  timers  long_polls  p99_ms  calls", flush=True)
    minute = 0
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=started + (minute + 1) * every - time.monotonic())
        except TimeoutError:
            pass
        if stop.is_set():
            return
        minute += 1
        rss, fds = proc_figures(pid)
        values = await metric(client, ("sqsemu_timers_scheduled", "sqsemu_long_polls_waiting"))
        latencies, stats.latencies = stats.latencies, []
        calls, stats.calls = stats.calls, 0
        print(
            f"{minute * every / 60:7.2f}  {rss:7.1f}  {fds:8d}  {values['sqsemu_timers_scheduled']:6.0f}  "
            f"{values['sqsemu_long_polls_waiting']:10.0f}  {p99(latencies):6.1f}  {calls:5d}",
            flush=True,
        )


def check(stats: Stats) -> list[str]:
    """Every lost and unexpected message, in words."""
    problems = list(stats.unexpected)
    for name, deliveries in stats.deliveries.items():
        sent = stats.sent["soak-src" if name == "soak-dlq" else name]
        never_sent = [body for body in deliveries if body not in sent]
        if never_sent:
            problems.append(f"{name}: {len(never_sent)} bodies never sent, e.g. {never_sent[:3]}")
    for name in ("soak-plain", "soak-dup", "soak.fifo"):
        lost = stats.sent[name] - stats.deleted[name]
        if lost:
            problems.append(f"{name}: {len(lost)} messages lost, e.g. {sorted(lost)[:3]}")
        allowed_extra = 1 if name == "soak-dup" else 0  # realism: a deleted message comes back at most once
        for body, times in stats.deliveries[name].items():
            if times > 1 + allowed_extra + stats.released[body]:
                problems.append(f"{name}: {body} delivered {times} times")
    for group, order in stats.fifo_order.items():
        if order != sorted(order) or len(order) != len(set(order)):
            problems.append(f"soak.fifo: group {group} out of order or repeated: {order[:20]}...")
    poison = {b for b in stats.sent["soak-src"] if b.endswith("poison")}
    healthy = stats.sent["soak-src"] - poison
    if healthy - stats.deleted["soak-src"]:
        problems.append(f"soak-src: {len(healthy - stats.deleted['soak-src'])} messages lost")
    if poison - stats.deleted["soak-dlq"]:
        problems.append(f"soak-dlq: {len(poison - stats.deleted['soak-dlq'])} poison messages not dead-lettered")
    for body, times in stats.deliveries["soak-src"].items():
        if times > (2 if body.endswith("poison") else 1):
            problems.append(f"soak-src: {body} delivered {times} times")
    for body, times in stats.deliveries["soak-dlq"].items():
        if body not in poison or times > 1:
            problems.append(f"soak-dlq: unexpected {body} ({times} deliveries)")
    return problems


async def setup(client: Client) -> dict[str, str]:
    urls = {}
    dup = {"sqsemu:realism": "duplicates=0.1"}
    urls["soak-plain"] = (await client.call("CreateQueue", {"QueueName": "soak-plain"}))["QueueUrl"]
    urls["soak-dup"] = (await client.call("CreateQueue", {"QueueName": "soak-dup", "tags": dup}))["QueueUrl"]
    urls["soak.fifo"] = (
        await client.call("CreateQueue", {"QueueName": "soak.fifo", "Attributes": {"FifoQueue": "true"}})
    )["QueueUrl"]
    urls["soak-dlq"] = (await client.call("CreateQueue", {"QueueName": "soak-dlq"}))["QueueUrl"]
    dlq_arn = (await client.call("GetQueueAttributes", {"QueueUrl": urls["soak-dlq"], "AttributeNames": ["QueueArn"]}))[
        "Attributes"
    ]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2})
    urls["soak-src"] = (
        await client.call("CreateQueue", {"QueueName": "soak-src", "Attributes": {"RedrivePolicy": policy}})
    )["QueueUrl"]
    return urls


async def soak(host: str, port: int, pid: int, args: argparse.Namespace) -> int:
    stats = Stats()
    admin = Client(host, port, stats)
    urls = await setup(admin)
    stop_sending, stop_consuming, stop_reporting = asyncio.Event(), asyncio.Event(), asyncio.Event()
    started = time.monotonic()
    workers = [
        asyncio.create_task(
            producer(k, Client(host, port, stats), urls, stats, stop_sending, args.rate / args.producers)
        )
        for k in range(args.producers)
    ]
    consumers = []
    for name, url in urls.items():
        for _ in range(2 if name != "soak-dlq" else 1):
            consumers.append(asyncio.create_task(consumer(Client(host, port, stats), name, url, stats, stop_consuming)))
    reporter = asyncio.create_task(report(admin, pid, stats, started, stop_reporting, args.report_every))
    await asyncio.sleep(args.minutes * 60)
    stop_sending.set()
    await asyncio.gather(*workers)
    drain_until = time.monotonic() + args.drain
    while time.monotonic() < drain_until and check(stats):
        await asyncio.sleep(1)
    stop_consuming.set()
    stop_reporting.set()
    await asyncio.gather(*consumers, reporter)
    problems = check(stats) + stats.failures
    sent = sum(len(v) for v in stats.sent.values())
    received = sum(sum(c.values()) for c in stats.deliveries.values())
    duplicates = sum(max(0, t - 1 - stats.released[b]) for b, t in stats.deliveries["soak-dup"].items())
    print(f"sent {sent} messages, {received} deliveries, {duplicates} realism duplicates on soak-dup "
          f"({duplicates / max(1, len(stats.sent['soak-dup'])):.1%}), "
          f"{sum(stats.released.values())} handed back", flush=True)  # fmt: skip
    if problems:
        print(f"FAILED: {len(problems)} problems", flush=True)
        for problem in problems[:50]:
            print("  " + problem, flush=True)
        return 1
    print("OK: nothing lost, nothing unexpected, no error", flush=True)
    return 0


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    cmd = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    log = open(args.server_log, "wb")  # noqa: SIM115 - open for the server's lifetime
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if b"200" in conn.recv(100):
                    return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="how long to run the workload")
    parser.add_argument("--rate", type=float, default=100.0, help="messages sent per second, all queues together")
    parser.add_argument("--producers", type=int, default=2)
    parser.add_argument("--drain", type=float, default=120.0, help="seconds to drain the queues at the end")
    parser.add_argument("--report-every", type=float, default=60.0, help="seconds between report lines")
    parser.add_argument("--endpoint", help="an already running server (else one is started)")
    parser.add_argument("--server-pid", type=int, help="its process id (for RSS and file descriptors)")
    parser.add_argument("--data-dir", help="durable mode for the server started here")
    parser.add_argument("--server-log", default="soak-server.log", help="where the started server's output goes")
    args = parser.parse_args()
    proc = None
    if args.endpoint:
        parts = urlsplit(args.endpoint)
        host, port, pid = parts.hostname or "127.0.0.1", parts.port or 80, args.server_pid
        if pid is None:
            parser.error("--endpoint needs --server-pid")
    else:
        proc, port = start_server(args)
        host, pid = "127.0.0.1", proc.pid
    try:
        try:
            import uvloop

            uvloop.install()
        except ImportError:
            pass
        return asyncio.run(soak(host, port, pid, args))
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)


if __name__ == "__main__":
    sys.exit(main())
