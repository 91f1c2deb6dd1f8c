#!/usr/bin/env python3
"""Soak of event source mappings (issue 28): a Lambda mapping on a durable queue, an Invoke endpoint that misbehaves
at random, poison messages, the server killed (SIGKILL) and restarted on its data folder, mappings deleted and made
again. Prints the figures and fails (exit status 1) when something is lost or wrong.

Usage::

    nice -n 10 python bench/soak_lambda.py --minutes 30
    nice -n 10 python bench/soak_lambda.py --minutes 3 --kill-every 40 --rate 20

What runs (system clock, AWS JSON 1.0 through boto3, the Lambda API through boto3's lambda client):

- a server ``python -m sqsemu --data-dir <tmp> --lambda-endpoint <endpoint>`` on a fixed free port;
- the queue ``soak-esm`` (visibility timeout 2 s) with ``soak-esm-dlq`` as its dead-letter queue
  (``maxReceiveCount`` 8), mapped to the function ``fn-<generation>`` with ``ReportBatchItemFailures``, batch size
  10, a batching window of 1 s;
- a producer sending ``--rate`` messages a second, one in 20 of them poison (``poison-<n>``);
- the Invoke endpoint, a raw TCP server: for each call it answers well (a partial batch response listing the
  poison records, so they come back and end in the dead-letter queue) with probability 1 - ``--bad``, or else
  misbehaves, each way equally likely: closes the connection mid-answer, answers with a truncated body, answers
  something that is not HTTP, hangs for 3 s then closes, answers 7 MB, answers a body that is not JSON, answers
  HTTP 500;
- every ``--kill-every`` seconds the server is killed with SIGKILL and started again on the same folder; every
  third time before the kill the mapping is deleted (after its ``Deleting`` answer the function ``fn-<generation>``
  must never be invoked again by a call that starts later) and a new one made with the next generation.

At the end the producer stops, the endpoint answers well, and the queue drains (up to ``--drain`` seconds); then the
dead-letter queue is read. Checks: every acknowledged send was either answered well by the function (delivered) or
is in the dead-letter queue (none lost); no poison message was delivered as a success; no call for a deleted
mapping's function started after its deletion was answered; the mapping's workers are alive (the drain completes
and ``sqsemu_lambda_worker_restarts_total`` is reported).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config as BotoConfig

BAD_MODES = ("close", "truncated", "garbage", "hang", "oversized", "not_json", "error500")
POISON_EVERY = 20


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Endpoint:
    """The misbehaving Invoke endpoint (see the module docstring)."""

    def __init__(self, bad: float, seed: int) -> None:
        self.bad = bad
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.delivered: Counter[str] = Counter()  # bodies answered as successes
        self.calls: list[tuple[float, str]] = []  # (arrival, function)
        self.modes: Counter[str] = Counter()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> tuple[str, bytes] | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
        path = lines[0].split(b" ")[1].decode()
        return path, body

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    request = self._read(conn)
                    if request is None:
                        return
                    path, body = request
                    function = path.split("/")[3] if path.count("/") >= 4 else "?"
                    with self.lock:
                        self.calls.append((time.time(), function))
                        mode = "ok" if self.random.random() >= self.bad else self.random.choice(BAD_MODES)
                        self.modes[mode] += 1
                    if not self._answer(conn, mode, body):
                        return
            except OSError:
                return

    @staticmethod
    def _http(status: str, body: bytes, length: int | None = None) -> bytes:
        size = len(body) if length is None else length
        return f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode() + body

    def _answer(self, conn: socket.socket, mode: str, body: bytes) -> bool:
        if mode == "ok":
            records = json.loads(body)["Records"]
            failures = [{"itemIdentifier": r["messageId"]} for r in records if r["body"].startswith("poison-")]
            conn.sendall(self._http("200 OK", json.dumps({"batchItemFailures": failures}).encode()))
            with self.lock:  # counted once the answer is on its way: the mapping deletes these
                self.delivered.update(r["body"] for r in records if not r["body"].startswith("poison-"))
            return True
        if mode == "not_json":
            conn.sendall(self._http("200 OK", b"<html>not json"))
            return True
        if mode == "error500":
            conn.sendall(self._http("500 Internal Server Error", b"{}"))
            return True
        if mode == "close":
            conn.sendall(b"HTTP/1.1 200 O")
        elif mode == "truncated":
            conn.sendall(self._http("200 OK", b'{"batchItemFail', length=500))
        elif mode == "garbage":
            conn.sendall(b"\x00\x01SSH-2.0 not http\r\n\r\n")
        elif mode == "hang":
            self.stop.wait(3.0)
        elif mode == "oversized":
            conn.sendall(self._http("200 OK", b'{"p": "' + b"x" * (7 * 1024 * 1024) + b'"}'))
        return False


class Server:
    """``python -m sqsemu`` on a fixed port and data folder, killed and restarted at will."""

    def __init__(self, port: int, data_dir: Path, endpoint: str, log: Path) -> None:
        self.port, self.data_dir, self.endpoint = port, data_dir, endpoint
        self.log = open(log, "ab")  # noqa: SIM115 - kept open for the run
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        args = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["--data-dir", str(self.data_dir), "--lambda-endpoint", self.endpoint]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_")}
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(30)

    def metric(self, name: str) -> float | None:
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as answer:
            for line in answer.read().decode().splitlines():
                if line.startswith(name + " "):
                    return float(line.split()[1])
        return None


def clients(url: str) -> tuple[Any, Any]:
    options: dict[str, Any] = {
        "endpoint_url": url,
        "region_name": "us-east-1",
        "aws_access_key_id": "000000000000",
        "aws_secret_access_key": "x",
        "config": BotoConfig(retries={"total_max_attempts": 1}, connect_timeout=3, read_timeout=30),
    }
    session = boto3.session.Session()
    return session.client("sqs", **options), session.client("lambda", **options)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=20.0, help="messages sent a second")
    parser.add_argument("--bad", type=float, default=0.3, help="share of Invoke calls answered badly")
    parser.add_argument("--kill-every", type=float, default=45.0, help="seconds between SIGKILLs")
    parser.add_argument("--drain", type=float, default=240.0, help="seconds the final drain may take")
    parser.add_argument("--seed", type=int, default=None)
    options = parser.parse_args()
    seed = options.seed if options.seed is not None else random.randrange(1 << 30)
    print(f"seed {seed}", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="soak-esm-"))
    endpoint = Endpoint(options.bad, seed)
    server = Server(free_port(), folder / "data", endpoint.url, folder / "server.log")
    server.start()
    sqs, lam = clients(server.url)
    dlq = sqs.create_queue(QueueName="soak-esm-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 8})
    url = sqs.create_queue(QueueName="soak-esm", Attributes={"VisibilityTimeout": "2", "RedrivePolicy": policy})[
        "QueueUrl"
    ]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    generation = 0

    def make_mapping() -> str:
        answer = lam.create_event_source_mapping(
            EventSourceArn=arn,
            FunctionName=f"fn-{generation}",
            BatchSize=10,
            MaximumBatchingWindowInSeconds=1,
            FunctionResponseTypes=["ReportBatchItemFailures"],
        )
        return str(answer["UUID"])

    mapping = make_mapping()
    deleted_at: dict[str, float] = {}  # function -> when its mapping's deletion was answered
    sent: set[str] = set()
    unsure: set[str] = set()
    failures: list[str] = []
    stop = threading.Event()
    paused = threading.Event()
    counter = [0]

    def produce() -> None:
        producer, _ = clients(server.url)
        while not stop.is_set():
            if paused.is_set():
                time.sleep(0.05)
                continue
            counter[0] += 1
            n = counter[0]
            body = f"poison-{n}" if n % POISON_EVERY == 0 else f"m-{n}"
            try:
                producer.send_message(QueueUrl=url, MessageBody=body)
                sent.add(body)
            except Exception:  # noqa: BLE001 - the server is down: the send is not acknowledged
                unsure.add(body)
                producer, _ = clients(server.url)
            time.sleep(1 / options.rate)

    producer_thread = threading.Thread(target=produce, daemon=True)
    producer_thread.start()
    started = time.monotonic()
    end = started + options.minutes * 60
    kills = 0
    next_line = started + 60
    while time.monotonic() < end:
        time.sleep(min(options.kill_every, max(0.0, end - time.monotonic())))
        if time.monotonic() >= end:
            break
        if kills % 3 == 2:
            lam.delete_event_source_mapping(UUID=mapping)
            deleted_at[f"fn-{generation}"] = time.time()
            generation += 1
            mapping = make_mapping()
        paused.set()
        server.kill()
        kills += 1
        server.start()
        paused.clear()
        sqs, lam = clients(server.url)
        if time.monotonic() >= next_line:
            next_line += 60
            print(
                f"{(time.monotonic() - started) / 60:5.1f} min: sent {len(sent)}, delivered {len(endpoint.delivered)}, "
                f"kills {kills}, calls {sum(endpoint.modes.values())}",
                flush=True,
            )
    stop.set()
    producer_thread.join(10)
    endpoint.bad = 0.0
    drain_end = time.monotonic() + options.drain
    while time.monotonic() < drain_end:
        attributes = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        if (
            int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])
            == 0
        ):
            break
        time.sleep(1)
    else:
        failures.append("the queue did not drain: the mapping's workers stopped delivering")
    in_dlq: Counter[str] = Counter()
    while True:
        got = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, WaitTimeSeconds=0, VisibilityTimeout=600)
        if not got.get("Messages"):
            break
        in_dlq.update(m["Body"] for m in got["Messages"])
    restarts = server.metric("sqsemu_lambda_worker_restarts_total")
    result = lam.get_event_source_mapping(UUID=mapping)["LastProcessingResult"]
    status = server.stop()
    endpoint.stop.set()
    lost = sorted(b for b in sent if b not in endpoint.delivered and b not in in_dlq)
    poison_delivered = sorted(b for b in endpoint.delivered if b.startswith("poison-"))
    late = [
        (when, function) for when, function in endpoint.calls if function in deleted_at and when > deleted_at[function]
    ]
    if lost:
        failures.append(f"{len(lost)} acknowledged message(s) lost: {lost[:10]}")
    if poison_delivered:
        failures.append(f"poison delivered as a success: {poison_delivered[:10]}")
    if late:
        failures.append(f"{len(late)} call(s) for a deleted mapping's function started after its deletion")
    if status != 0:
        failures.append(f"the server exited {status} at the end")
    minutes = (time.monotonic() - started) / 60
    poison_sent = sum(1 for b in sent if b.startswith("poison-"))
    print(
        json.dumps(
            {
                "minutes": round(minutes, 2),
                "seed": seed,
                "sent_acknowledged": len(sent),
                "sends_unacknowledged_at_kills": len(unsure),
                "delivered_messages": len(endpoint.delivered),
                "delivered_more_than_once": sum(1 for c in endpoint.delivered.values() if c > 1),
                "poison_sent": poison_sent,
                "in_dead_letter_queue": len(in_dlq),
                "poison_in_dead_letter_queue": sum(1 for b in in_dlq if b.startswith("poison-")),
                "invoke_calls_by_answer": dict(endpoint.modes),
                "kills": kills,
                "mappings_deleted": len(deleted_at),
                "calls_after_deletion": len(late),
                "worker_restarts": restarts,
                "last_processing_result": result,
                "lost": len(lost),
            },
            indent=1,
        ),
        flush=True,
    )
    if failures:
        print("FAILED: " + "; ".join(failures), flush=True)
        print(f"server log: {folder / 'server.log'}", flush=True)
        return 1
    shutil.rmtree(folder, ignore_errors=True)
    print("OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
