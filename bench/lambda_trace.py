"""A scenario's trace: 20 messages through an event source mapping with ReportBatchItemFailures, two of them
failing every time, a dead-letter queue with maxReceiveCount 3, on the manual clock.

Prints each invocation (server time in seconds from the start, the messages it received with their receive count,
the items it reported as failed), what each step of the clock brought, and where every message ended.

    python bench/lambda_trace.py
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqsemu.testing import SQSServer  # noqa: E402

FAILING = {"m07", "m13"}
VISIBILITY_TIMEOUT = 30
MAX_RECEIVE_COUNT = 3


def main() -> None:
    lines: list[str] = []
    lock = threading.Lock()
    start_ms = 0

    with SQSServer() as server:

        def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
            now = (server.clock.now_ms() - start_ms) / 1000
            records = event["Records"]
            received = " ".join(f"{r['body']}(#{r['attributes']['ApproximateReceiveCount']})" for r in records)
            failed = [r for r in records if r["body"] in FAILING]
            with lock:
                lines.append(
                    f"  t={now:5.0f}s invocation: {len(records)} messages: {received}\n"
                    f"           -> batchItemFailures: {[r['body'] for r in failed]}"
                )
            return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in failed]}

        server.function("orders", handler)
        sqs = server.client()
        dlq = sqs.create_queue(QueueName="orders-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT})
        url = sqs.create_queue(
            QueueName="orders",
            Attributes={"VisibilityTimeout": str(VISIBILITY_TIMEOUT), "RedrivePolicy": policy},
        )["QueueUrl"]
        for first in (0, 10):
            sqs.send_message_batch(
                QueueUrl=url, Entries=[{"Id": str(n), "MessageBody": f"m{first + n:02d}"} for n in range(10)]
            )
        start_ms = server.clock.now_ms()
        print(
            f"20 messages m00..m19 in 'orders' (VisibilityTimeout {VISIBILITY_TIMEOUT} s, RedrivePolicy "
            f"maxReceiveCount {MAX_RECEIVE_COUNT} -> 'orders-dlq'); mapping BatchSize 10, ReportBatchItemFailures; "
            f"the function reports {sorted(FAILING)} as failed every time."
        )
        server.map_queue(url, "orders", BatchSize=10, FunctionResponseTypes=["ReportBatchItemFailures"])
        server.settle()
        for step in range(4):
            state = {m["body"]: m["state"] for m in server.peek(url)}
            print(f"t={step * VISIBILITY_TIMEOUT:3d}s")
            print("\n".join(lines) if lines else "  (no invocation)")
            print(f"  left in 'orders': {state or 'nothing'}")
            lines.clear()
            server.advance(VISIBILITY_TIMEOUT)
            server.settle()
        print(f"t={4 * VISIBILITY_TIMEOUT:3d}s")
        print("\n".join(lines) if lines else "  (no invocation)")
        moved = server.peek(dlq)
        print(f"  left in 'orders': {[m['body'] for m in server.peek(url)] or 'nothing'}")
        print(
            "  in 'orders-dlq': "
            + ", ".join(
                f"{m['body']} (receive count {m['receive_count']}, from {m['dead_letter_source_arn']})" for m in moved
            )
        )


if __name__ == "__main__":
    main()
