"""The load client of the crash test (``test_crash.py``): sends, receives and deletes under load, and logs what
the server acknowledged.

Run as ``python crash_client.py --endpoint URL --queue-url URL --log FILE --seed N [--tag T]``. Threads send
(SendMessage and SendMessageBatch) and receive-and-delete (DeleteMessage and DeleteMessageBatch) until SIGTERM;
then each thread finishes its current call and the process exits 0. Bodies are unique (``<tag>-<thread>-<n>``).

The log is JSON lines, appended, each line written and flushed only after the server answered success:

- ``{"op": "sent", "id": <message id>, "body": <body>}``: the send was acknowledged.
- ``{"op": "deleted", "body": <body>}``: the delete was acknowledged *and* answered within the visibility timeout
  of the receive that gave the handle (measured from before the receive was sent), so no other receive can have
  taken the message in between (an older handle deletes too, but then the message may also have been delivered
  again, which the test does not try to account for).
- ``{"op": "unsure", "body": <body>}``: the delete was acknowledged too late to be sure of that; the test makes no
  claim about such a message.
- ``{"op": "deleting", "body": <body>}``: written *before* a delete is asked for. The server may commit a delete
  and be killed before it answers, so a message whose delete was asked for but never acknowledged may or may not
  be there after the restart; the test makes no claim about it either.

The test kills the server with SIGKILL first and stops this client only then, so no acknowledgement is lost
between an answer and its log line.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import threading
import time
from typing import Any, TextIO

import boto3
from botocore.config import Config

VISIBILITY_TIMEOUT_S = 2
SAFE_DELETE_S = VISIBILITY_TIMEOUT_S - 0.5  # answered sooner than this after the receive was sent: handle current
SENDERS = 2
RECEIVERS = 3


class Log:
    """Thread-safe JSON-lines appender; every line is flushed at once."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.counts = {"sent": 0, "deleting": 0, "deleted": 0, "unsure": 0, "errors": 0}

    def write(self, op: str, **fields: Any) -> None:
        line = json.dumps({"op": op, **fields})
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()
            self.counts[op] += 1

    def error(self) -> None:
        with self._lock:
            self.counts["errors"] += 1


def make_client(endpoint: str) -> Any:
    return boto3.session.Session().client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=2, read_timeout=10),
    )


def sender(endpoint: str, url: str, log: Log, stop: threading.Event, rng: random.Random, name: str) -> None:
    client = make_client(endpoint)
    counter = 0
    while not stop.is_set():
        try:
            if rng.random() < 0.5:
                counter += 1
                body = f"{name}-{counter}"
                answer = client.send_message(QueueUrl=url, MessageBody=body)
                log.write("sent", id=answer["MessageId"], body=body)
            else:
                bodies = {}
                for i in range(rng.randint(2, 10)):
                    counter += 1
                    bodies[str(i)] = f"{name}-{counter}"
                entries = [{"Id": key, "MessageBody": body} for key, body in bodies.items()]
                answer = client.send_message_batch(QueueUrl=url, Entries=entries)
                for entry in answer.get("Successful", []):
                    log.write("sent", id=entry["MessageId"], body=bodies[entry["Id"]])
        except Exception:  # noqa: BLE001 - the server may be gone: an unacknowledged call
            log.error()
            stop.wait(0.05)


def _deleted(log: Log, body: str, asked_at: float) -> None:
    log.write("deleted" if time.monotonic() - asked_at < SAFE_DELETE_S else "unsure", body=body)


def receiver(endpoint: str, url: str, log: Log, stop: threading.Event, rng: random.Random) -> None:
    client = make_client(endpoint)
    while not stop.is_set():
        try:
            asked_at = time.monotonic()
            messages = client.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=rng.randint(1, 10),
                VisibilityTimeout=VISIBILITY_TIMEOUT_S,
                WaitTimeSeconds=1,
            ).get("Messages", [])
            # leave some messages undeleted: they come back after the visibility timeout
            messages = [m for m in messages if rng.random() < 0.85]
            if not messages:
                continue
            for message in messages:
                log.write("deleting", body=message["Body"])
            if len(messages) > 1 and rng.random() < 0.5:
                entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
                answer = client.delete_message_batch(QueueUrl=url, Entries=entries)
                for entry in answer.get("Successful", []):
                    _deleted(log, messages[int(entry["Id"])]["Body"], asked_at)
            else:
                for message in messages:
                    client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                    _deleted(log, message["Body"], asked_at)
        except Exception:  # noqa: BLE001 - the server may be gone: an unacknowledged call
            log.error()
            stop.wait(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--queue-url", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--tag", default="m")
    args = parser.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    rng = random.Random(args.seed)
    with open(args.log, "a", encoding="utf-8") as stream:
        log = Log(stream)
        threads = [
            threading.Thread(
                target=sender,
                args=(args.endpoint, args.queue_url, log, stop, random.Random(rng.random()), f"{args.tag}-s{i}"),
            )
            for i in range(SENDERS)
        ]
        threads += [
            threading.Thread(
                target=receiver, args=(args.endpoint, args.queue_url, log, stop, random.Random(rng.random()))
            )
            for _ in range(RECEIVERS)
        ]
        for thread in threads:
            thread.start()
        while not stop.is_set():
            stop.wait(0.1)
        for thread in threads:
            thread.join()
        print(json.dumps(log.counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
