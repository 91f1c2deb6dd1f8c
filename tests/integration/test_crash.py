"""Crash test of durable mode: SIGKILL the server under load, restart it, and check against what it acknowledged.

Each round (all rounds share one data folder and one queue, so later rounds also check what earlier rounds left):

1. start ``sqsemu --data-dir DIR`` (system clock) and the load client ``crash_client.py`` (a subprocess with
   threads sending, receiving with a visibility timeout of 2 s and deleting, logging every acknowledgement);
2. after a random 0.5-2 s of load, SIGKILL the server, then stop the client (SIGTERM: it finishes its current
   calls, which fail, and exits);
3. start a new server on the same folder and collect the queue's messages by receiving with a long visibility
   timeout (nothing is deleted meanwhile) until every expected body is seen and the visibility timeouts the
   client had set have surely run out;
4. check: every acknowledged send not acknowledged as deleted is there, no acknowledged delete came back, and
   every body there that was never acknowledged as sent comes from a send under way at a kill (see
   ``_not_in_flight_at_a_kill``);
5. delete everything collected (logging those deletes too), so the next round starts from an empty queue, and
   must not see any of them again.

The seed is printed (``-s`` shows it); ``SQSEMU_CRASH_SEED=<seed>`` repeats a run's choices.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from harness import ServerProcess, json_client

pytestmark = pytest.mark.integration

CLIENT = Path(__file__).with_name("crash_client.py")
ROUNDS = 5
CLIENT_VISIBILITY_S = 2  # crash_client.VISIBILITY_TIMEOUT_S
COLLECT_VISIBILITY_S = 60
COLLECT_DEADLINE_S = 20.0
COLLECT_THREADS = 4
CLIENT_SENDERS = 2  # crash_client.SENDERS
MAX_BATCH = 10  # entries of one SendMessageBatch
BODY = re.compile(r"r([0-9]+)-s([0-9]+)-([0-9]+)")  # crash_client: <tag>-s<sender>-<n>, tag r<round>


class Ledger:
    """What the log says the server acknowledged."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sent: dict[str, str] = {}  # body -> message id
        self.deleted: set[str] = set()
        self.unsure: set[str] = set()
        self.deleting: set[str] = set()

    def read(self) -> None:
        self.sent.clear()
        self.deleted.clear()
        self.unsure.clear()
        self.deleting.clear()
        with self.path.open(encoding="utf-8") as stream:
            for number, line in enumerate(stream, 1):
                if not line.endswith("\n"):
                    raise AssertionError(f"{self.path}:{number}: unfinished line {line!r}")
                entry = json.loads(line)
                if entry["op"] == "sent":
                    assert entry["body"] not in self.sent, f"body {entry['body']} sent twice"
                    self.sent[entry["body"]] = entry["id"]
                elif entry["op"] == "deleted":
                    self.deleted.add(entry["body"])
                elif entry["op"] == "deleting":
                    self.deleting.add(entry["body"])
                else:
                    self.unsure.add(entry["body"])

    def append_deleted(self, bodies: list[str]) -> None:
        with self.path.open("a", encoding="utf-8") as stream:
            for body in bodies:
                stream.write(json.dumps({"op": "deleted", "body": body}) + "\n")

    @property
    def expected(self) -> set[str]:
        """Acknowledged sends that nobody asked to delete: they must be in the queue. (A delete asked for but not
        acknowledged may have been committed just before the kill; an acknowledged one is in ``deleted`` or
        ``unsure``, both of which were asked for.)"""
        return set(self.sent) - self.deleting - self.deleted - self.unsure


def _not_in_flight_at_a_kill(unacknowledged: Iterable[str], acknowledged: Iterable[str], rounds: int) -> list[str]:
    """The bodies among ``unacknowledged`` (found in the queue, never acknowledged as sent) that cannot come from a
    send under way when a round's server was killed. Each of a round's senders (``r<round>-s<i>``) makes one call at
    a time and numbers its bodies 1, 2, ... in order, so such a send is that sender's last call: its bodies are the
    (at most ``MAX_BATCH``) numbers right after the highest one acknowledged. Anything else was committed by a call
    the server answered with an error, or was never sent at all."""
    highest: dict[tuple[int, int], int] = {}
    for body in acknowledged:
        match = BODY.fullmatch(body)
        assert match, f"the load client sent an unexpected body {body!r}"
        sender = (int(match[1]), int(match[2]))
        highest[sender] = max(highest.get(sender, 0), int(match[3]))
    wrong = []
    for body in unacknowledged:
        match = BODY.fullmatch(body)
        if not match or not 1 <= int(match[1]) <= rounds or not 0 <= int(match[2]) < CLIENT_SENDERS:
            wrong.append(body)
            continue
        last = highest.get((int(match[1]), int(match[2])), 0)
        if not last < int(match[3]) <= last + MAX_BATCH:
            wrong.append(body)
    return sorted(wrong)


def _collect(endpoint: str, queue_url: str, expected: set[str], settle_until: float) -> dict[str, dict[str, Any]]:
    """Receive (never delete) with a long visibility timeout until every expected body has been seen and the
    monotonic time ``settle_until`` has passed, or the deadline. Returns body -> message (last receive)."""
    seen: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    deadline = time.monotonic() + COLLECT_DEADLINE_S

    def done() -> bool:
        with lock:
            return (expected <= seen.keys() and time.monotonic() >= settle_until) or time.monotonic() > deadline

    def worker() -> None:
        client = json_client(endpoint)
        try:
            while not done():
                answer = client.receive_message(
                    QueueUrl=queue_url,
                    MaxNumberOfMessages=10,
                    WaitTimeSeconds=1,
                    VisibilityTimeout=COLLECT_VISIBILITY_S,
                )
                with lock:
                    for message in answer.get("Messages", []):
                        seen[message["Body"]] = message
        finally:
            client.close()

    with ThreadPoolExecutor(COLLECT_THREADS) as pool:
        for future in [pool.submit(worker) for _ in range(COLLECT_THREADS)]:
            future.result()
    return seen


def _delete_all(endpoint: str, queue_url: str, messages: list[dict[str, Any]]) -> list[str]:
    """Delete ``messages`` (their handles are current: received once with a long visibility timeout)."""
    client = json_client(endpoint)
    deleted: list[str] = []
    try:
        for start in range(0, len(messages), 10):
            chunk = messages[start : start + 10]
            entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)]
            answer = client.delete_message_batch(QueueUrl=queue_url, Entries=entries)
            assert not answer.get("Failed"), answer["Failed"]
            deleted += [chunk[int(entry["Id"])]["Body"] for entry in answer["Successful"]]
    finally:
        client.close()
    return deleted


def _start_server(data_dir: Path) -> ServerProcess:
    return ServerProcess(["--data-dir", str(data_dir)]).start()


def _wait_for_first_line(log: Path, client: subprocess.Popen[bytes], deadline_s: float = 15.0) -> None:
    """Wait until the client has logged an acknowledgement (it is up and the load is running)."""
    start = time.monotonic()
    size = log.stat().st_size if log.exists() else 0
    while not (log.exists() and log.stat().st_size > size):
        assert client.poll() is None, f"the load client exited with {client.returncode}"
        assert time.monotonic() - start < deadline_s, "the load client logged nothing"
        time.sleep(0.02)


def test_acknowledged_work_survives_sigkill(tmp_path: Path) -> None:
    seed = int(os.environ.get("SQSEMU_CRASH_SEED") or random.SystemRandom().randrange(2**32))
    print(f"crash test seed: {seed} (repeat with SQSEMU_CRASH_SEED={seed})")
    rng = random.Random(seed)
    data_dir = tmp_path / "data"
    log = tmp_path / "acknowledged.jsonl"
    log.touch()
    ledger = Ledger(log)
    started = time.monotonic()

    server = _start_server(data_dir)
    sqs = json_client(server.endpoint_url)
    sqs.create_queue(QueueName="crash", Attributes={"VisibilityTimeout": str(CLIENT_VISIBILITY_S)})
    sqs.close()
    try:
        for round_number in range(1, ROUNDS + 1):
            sqs = json_client(server.endpoint_url)
            queue_url = sqs.get_queue_url(QueueName="crash")["QueueUrl"]
            sqs.close()
            client = subprocess.Popen(
                [
                    sys.executable,
                    str(CLIENT),
                    "--endpoint",
                    server.endpoint_url,
                    "--queue-url",
                    queue_url,
                    "--log",
                    str(log),
                    "--seed",
                    str(rng.randrange(2**32)),
                    "--tag",
                    f"r{round_number}",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            try:
                _wait_for_first_line(log, client)
                time.sleep(rng.uniform(0.5, 2.0))  # real load for a random while: the crash test needs real time
            finally:
                server.stop(signal.SIGKILL)  # first the server, so no acknowledgement is left unlogged
                client.send_signal(signal.SIGTERM)
                out, err = client.communicate(timeout=30)
            killed_at = time.monotonic()
            assert client.returncode == 0, f"load client failed ({client.returncode}):\n{err.decode()}"
            counts = json.loads(out.decode().strip().splitlines()[-1])
            server.log_path.unlink(missing_ok=True)

            server = _start_server(data_dir)
            ledger.read()
            expected = ledger.expected
            queue_url = f"{server.endpoint_url}/000000000000/crash"
            seen = _collect(server.endpoint_url, queue_url, expected, killed_at + CLIENT_VISIBILITY_S + 1.0)
            unanswered = len(ledger.deleting - ledger.deleted - ledger.unsure)
            unknown = seen.keys() - set(ledger.sent)  # sends committed but not acknowledged
            print(
                f"round {round_number}: client {counts}; acknowledged sent {len(ledger.sent)}, deleted "
                f"{len(ledger.deleted)}, unsure {len(ledger.unsure)}, delete unanswered {unanswered}; "
                f"expected {len(expected)}, seen {len(seen)} (never acknowledged as sent: {len(unknown)})"
            )
            assert counts["sent"] > 0, "the load client got no send acknowledged"
            missing = expected - seen.keys()
            assert not missing, f"round {round_number} (seed {seed}): acknowledged sends lost: {sorted(missing)[:20]}"
            back = ledger.deleted & seen.keys()
            assert not back, f"round {round_number} (seed {seed}): acknowledged deletes came back: {sorted(back)[:20]}"
            wrong = _not_in_flight_at_a_kill(unknown, ledger.sent, round_number)
            assert not wrong, (
                f"round {round_number} (seed {seed}): bodies found that no send under way at a kill can have "
                f"committed (client {counts}): {wrong[:20]}"
            )
            for body in seen.keys() & set(ledger.sent):
                assert seen[body]["MessageId"] == ledger.sent[body], body
            ledger.append_deleted(_delete_all(server.endpoint_url, queue_url, list(seen.values())))
    finally:
        server.kill()
    ledger.read()
    print(f"crash test: {ROUNDS} rounds in {time.monotonic() - started:.1f} s; {len(ledger.sent)} sends acknowledged")
