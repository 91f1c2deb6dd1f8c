"""Example: a consumer that is not idempotent, caught by sqsemu's realism mode (docs/realism.md).

SQS standard queues deliver every message *at least* once. This consumer books charges into a ledger; booked once
per delivery, a duplicate delivery charges the customer twice. Against an exact emulator it always passes; under
``--realism duplicates=0.1`` it fails, and passes again once it remembers which charges it booked::

    sqsemu --realism duplicates=0.1 --realism-seed 7 &
    python examples/realism_consumer.py                  # not idempotent: FAIL, exit status 1
    python examples/realism_consumer.py --idempotent     # idempotent: OK, exit status 0

What it does: creates the queue ``--queue`` (deleted at the end), sends ``--charges`` charges (``{"charge_id",
"customer", "amount_cents"}``) with SendMessageBatch, then receives (long polls of 1 s, so short-poll sampling
cannot end it early) and deletes until a long poll comes back empty, booking each charge. It prints the ledger's
total against what was sent and exits 1 when they differ. Idempotent mode keys on ``charge_id`` from the body, not
on the MessageId: a producer that retries a send whose answer was lost (``lost_answers``) creates a second message
with a new MessageId for the same charge.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint-url", default="http://127.0.0.1:9324", help="the SQS endpoint (sqsemu)")
    parser.add_argument("--queue", default="realism-ledger", help="queue name (created, then deleted)")
    parser.add_argument("--charges", type=int, default=100, help="how many charges to send")
    parser.add_argument("--idempotent", action="store_true", help="book each charge_id once, whatever the deliveries")
    return parser.parse_args(argv)


def client(endpoint_url: str) -> Any:
    import boto3

    return boto3.client(
        "sqs",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def send_charges(sqs: Any, url: str, count: int) -> int:
    """Send ``count`` charges; returns their total in cents."""
    total = 0
    for start in range(0, count, 10):
        entries = []
        for n in range(start, min(start + 10, count)):
            charge = {"charge_id": f"charge-{n:04d}", "customer": f"customer-{n % 7}", "amount_cents": 100 + n}
            total += charge["amount_cents"]
            entries.append({"Id": str(n), "MessageBody": json.dumps(charge)})
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    return total


def consume(sqs: Any, url: str, idempotent: bool) -> tuple[int, int, list[str]]:
    """Receive and delete until the queue is empty: ``(ledger total in cents, deliveries, charges booked twice)``."""
    ledger: dict[str, int] = {}
    booked: set[str] = set()
    total = deliveries = 0
    twice: list[str] = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        if not messages:
            return total, deliveries, twice
        for message in messages:
            deliveries += 1
            charge = json.loads(message["Body"])
            charge_id = charge["charge_id"]
            if idempotent and charge_id in booked:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                continue
            if charge_id in booked:
                twice.append(charge_id)
            booked.add(charge_id)
            ledger[charge["customer"]] = ledger.get(charge["customer"], 0) + charge["amount_cents"]
            total += charge["amount_cents"]
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sqs = client(args.endpoint_url)
    url = sqs.create_queue(QueueName=args.queue)["QueueUrl"]
    try:
        expected = send_charges(sqs, url, args.charges)
        mode = "idempotent" if args.idempotent else "not idempotent"
        print(f"sent {args.charges} charges, {expected} cents in all, to {args.queue}")
        total, deliveries, twice = consume(sqs, url, args.idempotent)
        print(f"consumer ({mode}): {deliveries} deliveries of {args.charges} charges")
        if total == expected:
            print(f"ledger total {total} cents, expected {expected}: OK")
            return 0
        shown = ", ".join(twice[:5]) + (", ..." if len(twice) > 5 else "")
        print(f"ledger total {total} cents, expected {expected}: FAIL ({len(twice)} charged twice: {shown})")
        return 1
    finally:
        sqs.delete_queue(QueueUrl=url)


if __name__ == "__main__":
    sys.exit(main())
