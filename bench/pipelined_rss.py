#!/usr/bin/env python3
"""The server's resident memory with requests pipelined behind long polls (issue 47, suspicion 9b).

Starts ``python -m sqsemu --clock manual`` (a long poll never runs out on its own), creates a queue, then opens
``--connections`` connections; each sends, in one write, a ``ReceiveMessage`` long poll followed by small
``SendMessage`` calls up to ``--bytes`` bytes, and reads nothing. Every call behind the long poll waits its turn;
what the server holds for them is what it read ahead. Once the server's RSS (``/proc/<pid>/status`` VmRSS) stops
growing, prints one JSON line: the RSS before and after, and the growth per connection and per byte sent.

    python bench/pipelined_rss.py [--connections 40] [--bytes 262144]

Linux only (reads /proc). Runs the sources this file sits beside (``PYTHONPATH``), in the build the environment
asks for (``SQSEMU_PURE_PYTHON=1``: pure Python).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(action: str, payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AmazonSQS.%s\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: %d\r\n\r\n%s" % (action.encode(), len(body), body)
    )


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _settled_rss(pid: int, timeout_s: float = 20.0) -> int:
    """The RSS once two samples half a second apart differ by under 1%."""
    last = _rss_kib(pid)
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        time.sleep(0.5)
        now = _rss_kib(pid)
        if abs(now - last) <= last / 100:
            return now
        last = now
    return last


async def _hold(port: int, payload: bytes, n: int) -> list[asyncio.StreamWriter]:
    writers = []
    for _ in range(n):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(payload)  # not drained: what the server does not read stays in this process
        writers.append(writer)
    return writers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=40)
    parser.add_argument("--bytes", type=int, default=256 * 1024, help="bytes each connection sends (default 256 KiB)")
    options = parser.parse_args()
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "sqsemu", "--port", str(port), "--clock", "manual", "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        until = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=1):
                    break
            except OSError:
                if time.monotonic() > until:
                    raise
                time.sleep(0.1)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(_call("CreateQueue", {"QueueName": "pipelined-rss"}))
            answer = sock.recv(65536)
        url = json.loads(answer.partition(b"\r\n\r\n")[2])["QueueUrl"]
        poll = _call("ReceiveMessage", {"QueueUrl": url, "WaitTimeSeconds": 20})
        send = _call("SendMessage", {"QueueUrl": url, "MessageBody": "pipelined behind a long poll"})
        payload = poll + send * max(1, (options.bytes - len(poll)) // len(send))
        before = _settled_rss(server.pid)
        loop = asyncio.new_event_loop()
        writers = loop.run_until_complete(_hold(port, payload, options.connections))
        after = _settled_rss(server.pid)
        for writer in writers:
            writer.transport.abort()
        loop.run_until_complete(asyncio.sleep(0.1))
        loop.close()
        grown = (after - before) * 1024
        print(
            json.dumps(
                {
                    "connections": options.connections,
                    "bytes_per_connection": len(payload),
                    "requests_per_connection": 1 + (len(payload) - len(poll)) // len(send),
                    "rss_before_mib": round(before / 1024, 1),
                    "rss_after_mib": round(after / 1024, 1),
                    "growth_per_connection_kib": round(grown / options.connections / 1024, 1),
                    "growth_per_byte_sent": round(grown / (options.connections * len(payload)), 2),
                }
            )
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
