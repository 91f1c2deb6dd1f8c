"""Long-poll wake latency over real sockets: how long after a SendMessage is answered the ReceiveMessage waiting on
the same queue, on another connection, is answered with that message.

Each try: a ReceiveMessage (``WaitTimeSeconds`` 20, one message) goes out on one keep-alive connection and is left
to park (``--park-ms``); a SendMessage goes out on a second connection; both answers are read with one ``select``
loop, and the time each answer is complete is taken (``time.perf_counter``). The wake is the receive's answer time
minus the send's (negative when the receive's answer came first); the send's own round trip is printed too (a
server idle between tries wakes for it), and the receive's answer time minus the send's start (what
``bench/sqsbench.py --workload longpoll-latency`` reports, without an event loop in the client; with ``--park-ms
50`` at its pace of a send every 50 ms). Then the message is deleted, so the queue is
empty for the next try. Prints p50, p90, p99 and the maximum over ``--tries`` tries, in milliseconds, and the
machine's load average before and after (the figure means something on an idle machine only).

    python bench/wake.py                          # starts `python -m sqsemu` on a free port, in memory
    python bench/wake.py --data-dir tmp           # the same server in durable mode (a fresh temporary folder)
    python bench/wake.py --endpoint http://127.0.0.1:9324    # a server that is running already

The client is the standard library's blocking sockets (no event loop of its own on the measured path); the
requests are JSON 1.0 with a fixed fake signature (sqsemu's default ``--auth`` accepts any).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from urllib.parse import urlsplit

_AUTH = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0"


class Connection:
    """One keep-alive HTTP/1.1 connection: ``send`` writes a JSON call, ``feed`` reads what has arrived and says
    whether the answer is complete (``status`` and ``body`` then hold it)."""

    def __init__(self, host: str, port: int) -> None:
        self.host = f"{host}:{port}"
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.status = 0
        self.body = b""

    def send(self, action: str, doc: dict[str, object]) -> None:
        body = json.dumps(doc).encode()
        head = (
            f"POST / HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/x-amz-json-1.0\r\n"
            f"X-Amz-Target: AmazonSQS.{action}\r\nAuthorization: {_AUTH}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.sock.sendall(head.encode() + body)

    def feed(self) -> bool:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = self.buffer[:end].decode("latin-1").split("\r\n")
        length = next(int(line.split(":", 1)[1]) for line in head[1:] if line.lower().startswith("content-length:"))
        if len(self.buffer) < end + 4 + length:
            return False
        self.status = int(head[0].split()[1])
        self.body = self.buffer[end + 4 : end + 4 + length]
        self.buffer = self.buffer[end + 4 + length :]
        return True

    def call(self, action: str, doc: dict[str, object]) -> dict[str, object]:
        """A call answered before anything else happens (setup, delete)."""
        self.send(action, doc)
        while not self.feed():
            pass
        if self.status != 200:
            raise RuntimeError(f"{action}: HTTP {self.status} {self.body!r}")
        answer: dict[str, object] = json.loads(self.body) if self.body else {}
        return answer


def _try(consumer: Connection, producer: Connection, url: str, park_s: float, n: int) -> tuple[float, float, float]:
    """One wake, in seconds: (receive answered minus send answered, send answered minus send started, receive
    answered minus send started)."""
    consumer.send("ReceiveMessage", {"QueueUrl": url, "WaitTimeSeconds": 20, "MaxNumberOfMessages": 1})
    time.sleep(park_s)
    started = time.perf_counter()
    producer.send("SendMessage", {"QueueUrl": url, "MessageBody": f"wake {n}"})
    done: dict[Connection, float] = {}
    by_socket = {consumer.sock: consumer, producer.sock: producer}
    while len(done) < 2:
        ready, _, _ = select.select([c.sock for c in (consumer, producer) if c not in done], [], [], 30)
        if not ready:
            raise TimeoutError("no answer in 30 s")
        for sock in ready:
            connection = by_socket[sock]
            if connection.feed():
                done[connection] = time.perf_counter()
    for connection, action in ((producer, "SendMessage"), (consumer, "ReceiveMessage")):
        if connection.status != 200:
            raise RuntimeError(f"{action}: HTTP {connection.status} {connection.body!r}")
    messages = json.loads(consumer.body).get("Messages") or []
    if len(messages) != 1 or messages[0]["Body"] != f"wake {n}":
        raise RuntimeError(f"the long poll was answered without the message sent: {consumer.body!r}")
    consumer.call("DeleteMessage", {"QueueUrl": url, "ReceiptHandle": messages[0]["ReceiptHandle"]})
    return done[consumer] - done[producer], done[producer] - started, done[consumer] - started


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(stack: ExitStack, data_dir: str | None) -> str:
    """``python -m sqsemu`` on a free port (durable in ``data_dir``; 'tmp': a fresh temporary folder); its URL once
    ``/health`` answers."""
    port = _free_port()
    cmd = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if data_dir == "tmp":
        data_dir = tempfile.mkdtemp(prefix="sqsemu-wake-")
        stack.callback(shutil.rmtree, data_dir, True)
    if data_dir:
        cmd += ["--data-dir", data_dir]
    server = subprocess.Popen(cmd, cwd=os.path.dirname(os.path.abspath(__file__)))

    def stop() -> None:
        server.terminate()
        server.wait(10)

    stack.callback(stop)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1):
                return url
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start") from None
            time.sleep(0.05)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", help="a running server (default: start one)")
    ap.add_argument("--data-dir", help="start the server in durable mode here ('tmp': a fresh temporary folder)")
    ap.add_argument("--tries", type=int, default=1000)
    ap.add_argument("--park-ms", type=float, default=5.0, help="how long each receive is left to wait first")
    ap.add_argument("--warmup", type=int, default=50)
    a = ap.parse_args()
    with ExitStack() as stack:
        endpoint = a.endpoint or _start(stack, a.data_dir)
        parts = urlsplit(endpoint)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        consumer, producer = Connection(host, port), Connection(host, port)
        url = str(producer.call("CreateQueue", {"QueueName": f"wake-{os.getpid()}"})["QueueUrl"])
        load_before = os.getloadavg()
        wakes, sends, totals = [], [], []
        for n in range(a.warmup + a.tries):
            wake, send, total = _try(consumer, producer, url, a.park_ms / 1000, n)
            if n >= a.warmup:
                wakes.append(wake * 1000)
                sends.append(send * 1000)
                totals.append(total * 1000)
        load_after = os.getloadavg()
        producer.call("DeleteQueue", {"QueueUrl": url})
        print(
            f"long-poll wake over {a.tries} tries (ms, receive answered - send answered): "
            f"p50 {_percentile(wakes, 0.5):.3f}  p90 {_percentile(wakes, 0.9):.3f}  "
            f"p99 {_percentile(wakes, 0.99):.3f}  max {max(wakes):.3f}  min {min(wakes):.3f}"
        )
        print(
            f"the SendMessage itself (sent -> answered, ms): p50 {_percentile(sends, 0.5):.3f}  "
            f"p99 {_percentile(sends, 0.99):.3f}"
        )
        print(
            f"send started -> receive answered (ms): p50 {_percentile(totals, 0.5):.3f}  "
            f"p90 {_percentile(totals, 0.9):.3f}  p99 {_percentile(totals, 0.99):.3f}  max {max(totals):.3f}"
        )
        print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")


if __name__ == "__main__":
    main()
