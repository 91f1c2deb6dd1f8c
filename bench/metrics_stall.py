"""How long another client waits while ``GET /metrics`` is answered, on a server with many queues (issue 47,
finding 7).

Starts ``python -m sqsemu`` (this checkout's sources, another tree's with ``--src``, or a git revision's with
``--ref``), creates ``--queues`` queues, then:

1. baseline: one keep-alive connection loops a cheap SQS call (``--call``: GetQueueUrl of one queue by default,
   SendMessage to it, or ListQueues with MaxResults 10) for ``--baseline`` seconds, nothing else running;
2. one scrape, not measured (the server's first admin request imports the admin app and prometheus-client);
3. a second process loops ``GET /metrics`` (``--scrapes`` times, reading each answer whole) on its own connection
   while this process goes on looping the call; a call counts as "during a scrape" when its time overlaps a
   scrape's, from the request written to the answer's last byte read.

Prints the size of the answer and how long a scrape took, then the call's p50, p99 and maximum latency in
milliseconds, without scrapes and during them, and the machine's load average (the figures mean something on an
idle machine only: on a busy one the operating system's scheduling adds its own waits to both rows).

    python bench/metrics_stall.py                         # this checkout, 10,000 queues
    python bench/metrics_stall.py --ref main              # the same against main's code (git archive of it)
    python bench/metrics_stall.py --queues 3000 --call sendmessage
    python bench/metrics_stall.py --endpoint http://127.0.0.1:9324   # a server that is running already (empty)

The clients are the standard library's blocking sockets, each in its own process, so neither waits on the
other; the scraper counts the answer's bytes without keeping them (it shares the machine with the server). The
calls are JSON 1.0 with a fixed fake signature (the default ``--auth`` accepts any).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from multiprocessing.connection import Connection as Pipe
from urllib.parse import urlsplit

_AUTH = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0"
_HERE = os.path.dirname(os.path.abspath(__file__))


class Client:
    """One keep-alive HTTP/1.1 connection for JSON 1.0 SQS calls: :meth:`send` writes a call, :meth:`answer`
    reads one answer (``Content-Length`` framed) and returns its status and body."""

    def __init__(self, host: str, port: int) -> None:
        self.host = f"{host}:{port}"
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def request(self, action: str, doc: dict[str, object]) -> bytes:
        """The bytes of one call."""
        body = json.dumps(doc).encode()
        head = (
            f"POST / HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/x-amz-json-1.0\r\n"
            f"X-Amz-Target: AmazonSQS.{action}\r\nAuthorization: {_AUTH}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def answer(self) -> tuple[int, bytes]:
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = self.buffer[:end].decode("latin-1").split("\r\n")
                length = next(
                    int(line.split(":", 1)[1]) for line in head[1:] if line.lower().startswith("content-length:")
                )
                if len(self.buffer) >= end + 4 + length:
                    body = self.buffer[end + 4 : end + 4 + length]
                    self.buffer = self.buffer[end + 4 + length :]
                    return int(head[0].split()[1]), body
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the server closed the connection")
            self.buffer += data

    def call(self, action: str, doc: dict[str, object]) -> dict[str, object]:
        self.send(self.request(action, doc))
        status, body = self.answer()
        if status != 200:
            raise RuntimeError(f"{action}: HTTP {status} {body!r}")
        answer: dict[str, object] = json.loads(body) if body else {}
        return answer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _source(stack: ExitStack, src: str | None, ref: str | None) -> str:
    """The source tree to run: ``src``, a fresh export of git revision ``ref`` of this checkout, or this checkout."""
    if ref:
        tree = tempfile.mkdtemp(prefix="sqsemu-stall-")
        stack.callback(shutil.rmtree, tree, True)
        archive = subprocess.run(["git", "-C", _HERE, "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        return tree
    return os.path.abspath(src) if src else os.path.dirname(_HERE)


def _start(stack: ExitStack, tree: str) -> tuple[str, int]:
    """``python -m sqsemu`` from ``tree`` on a free port; ``(host, port)`` once ``/health`` answers."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": tree}
    cmd = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(cmd, cwd=tree, env=env)

    def stop() -> None:
        server.terminate()
        server.wait(10)

    stack.callback(stop)
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return "127.0.0.1", port
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start") from None
            time.sleep(0.05)


def _create(host: str, port: int, count: int) -> None:
    """``count`` queues, ``stall-00000``..., in pipelined batches of 200."""
    client = Client(host, port)
    for start in range(0, count, 200):
        batch = range(start, min(count, start + 200))
        client.send(b"".join(client.request("CreateQueue", {"QueueName": f"stall-{n:05d}"}) for n in batch))
        for _ in batch:
            status, body = client.answer()
            if status != 200:
                raise RuntimeError(f"CreateQueue: HTTP {status} {body!r}")


class Scraper:
    """One keep-alive connection that asks for ``GET /metrics`` and reads each answer whole (``Content-Length``
    or chunked), into one reused buffer: the body is counted, not kept, so that reading 29 MB costs this process
    little (it shares the machine with the server it measures)."""

    def __init__(self, host: str, port: int) -> None:
        self.request = f"GET /metrics HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
        self.sock = socket.create_connection((host, port), timeout=120)
        self.area = bytearray(1 << 20)
        self.view = memoryview(self.area)
        self.start = self.end = 0  # what is read and not yet used: area[start:end]

    def _fill(self) -> None:
        if self.start == self.end:
            self.start = self.end = 0
        elif self.end == len(self.area):  # keep what is left, at the front
            left = self.end - self.start
            self.area[:left] = self.area[self.start : self.end]
            self.start, self.end = 0, left
        got = self.sock.recv_into(self.view[self.end :])
        if not got:
            raise ConnectionError("the server closed the connection")
        self.end += got

    def _line(self) -> bytes:
        while (found := self.area.find(b"\r\n", self.start, self.end)) < 0:
            self._fill()
        line = bytes(self.area[self.start : found])
        self.start = found + 2
        return line

    def _skip(self, size: int) -> None:
        while size:
            if self.start == self.end:
                self._fill()
            taken = min(size, self.end - self.start)
            self.start += taken
            size -= taken

    def scrape(self) -> int:
        """One scrape; the body's size in bytes."""
        self.sock.sendall(self.request)
        status = self._line()
        headers = {}
        while line := self._line():
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if b" 200 " not in status:
            raise RuntimeError(f"GET /metrics: {status!r}")
        if b"content-length" in headers:
            size = int(headers[b"content-length"])
            self._skip(size)
            return size
        size = 0
        while chunk := int(self._line().split(b";")[0], 16):
            self._skip(chunk + 2)
            size += chunk
        self._line()  # the end of the chunked body (no trailers)
        return size


def _scraper(host: str, port: int, scrapes: int, pipe: Pipe) -> None:
    """The second process: ``scrapes`` scrapes, each one's (start, end, bytes) sent back, then None."""
    scraper = Scraper(host, port)
    for _ in range(scrapes):
        began = time.monotonic()
        size = scraper.scrape()
        pipe.send((began, time.monotonic(), size))
    pipe.send(None)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _row(label: str, values: list[float]) -> str:
    if not values:
        return f"{label}: no calls"
    return (
        f"{label}: {len(values)} calls, p50 {_percentile(values, 0.5):.3f}  p99 {_percentile(values, 0.99):.3f}  "
        f"max {max(values):.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queues", type=int, default=10_000)
    ap.add_argument("--scrapes", type=int, default=5, help="scrapes measured")
    ap.add_argument("--baseline", type=float, default=3.0, help="seconds of calls without scrapes first")
    ap.add_argument("--call", choices=("getqueueurl", "sendmessage", "listqueues"), default="getqueueurl")
    ap.add_argument("--src", help="the sqsemu source tree to run (default: this checkout)")
    ap.add_argument("--ref", help="run this git revision of this checkout instead (git archive), e.g. main")
    ap.add_argument("--endpoint", help="a server that is running already, without queues (default: start one)")
    a = ap.parse_args()
    with ExitStack() as stack:
        if a.endpoint:
            where = urlsplit(a.endpoint)
            host, port, tree = where.hostname or "127.0.0.1", where.port or 80, a.endpoint
        else:
            tree = _source(stack, a.src, a.ref)
            host, port = _start(stack, tree)
        began = time.monotonic()
        _create(host, port, a.queues)
        print(f"{a.queues} queues created in {time.monotonic() - began:.1f} s ({tree})")
        client = Client(host, port)
        url = str(client.call("GetQueueUrl", {"QueueName": "stall-00000"})["QueueUrl"])
        docs: dict[str, dict[str, object]] = {
            "getqueueurl": {"QueueName": "stall-00000"},
            "sendmessage": {"QueueUrl": url, "MessageBody": "x"},
            "listqueues": {"MaxResults": 10},
        }
        doc = docs[a.call]
        action = {"getqueueurl": "GetQueueUrl", "sendmessage": "SendMessage", "listqueues": "ListQueues"}[a.call]
        request = client.request(action, doc)

        def one() -> tuple[float, float]:
            start = time.monotonic()
            client.send(request)
            status, body = client.answer()
            if status != 200:
                raise RuntimeError(f"{action}: HTTP {status} {body!r}")
            return start, time.monotonic()

        load_before = os.getloadavg()
        baseline: list[float] = []
        stop = time.monotonic() + a.baseline
        while time.monotonic() < stop:
            start, end = one()
            baseline.append((end - start) * 1000)
        began = time.monotonic()
        first = Scraper(host, port).scrape()
        print(f"first scrape (imports the admin app and prometheus-client): {time.monotonic() - began:.2f} s")

        ours, theirs = multiprocessing.Pipe()
        scraper = multiprocessing.get_context("fork").Process(target=_scraper, args=(host, port, a.scrapes, theirs))
        scraper.start()
        calls: list[tuple[float, float]] = []
        windows: list[tuple[float, float, int]] = []
        done = False
        while not done:
            calls.append(one())
            while ours.poll():
                window = ours.recv()
                if window is None:
                    done = True
                    break
                windows.append(window)
        scraper.join()
        load_after = os.getloadavg()
        during = [
            (end - start) * 1000
            for start, end in calls
            if any(start < w_end and end > w_start for w_start, w_end, _ in windows)
        ]
        seconds = sorted(w_end - w_start for w_start, w_end, _ in windows)
        print(
            f"GET /metrics: {windows[0][2] if windows else first:,} bytes, scrape median "
            f"{seconds[len(seconds) // 2]:.2f} s, max {seconds[-1]:.2f} s ({len(windows)} scrapes)"
        )
        print(f"{action} latency (ms)")
        print(_row("  without scrapes", baseline))
        print(_row("  during scrapes ", during))
        print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")


if __name__ == "__main__":
    main()
