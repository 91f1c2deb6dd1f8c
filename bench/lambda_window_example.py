"""Issue 42's two batching examples on the manual clock: invocations, their sizes and their times.

``python bench/lambda_window_example.py``: BatchSize 100 with a 3 s window and 30 messages waiting, then BatchSize 20
with a 10 s window and 30 messages waiting; the clock advances in 10 ms steps and each invocation is printed with
the server time (seconds after the mapping was made) it happened at.
"""

from __future__ import annotations

import threading
from typing import Any

from sqsemu.testing import SQSServer, new_account


def run(server: SQSServer, batch_size: int, window: int, first: str, messages: int = 30) -> list[tuple[int, float]]:
    """``(size, seconds)`` of each invocation within ``window`` + 1 seconds of the first send; ``first`` says
    whether the messages are sent before the mapping is made (``send``) or after (``map``: its pollers wait)."""
    account = new_account()
    sqs = server.client(account)
    url = sqs.create_queue(QueueName=f"q{batch_size}-{first}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def send() -> None:
        for start in range(0, messages, 10):
            entries = [{"Id": str(n), "MessageBody": f"m{start + n}"} for n in range(10)]
            sqs.send_message_batch(QueueUrl=url, Entries=entries)

    if first == "send":
        send()
    sizes: list[int] = []
    seen: list[tuple[int, float]] = []
    lock = threading.Lock()

    def handler(event: dict[str, Any], context: Any) -> None:
        with lock:
            sizes.append(len(event["Records"]))

    def note(at: float) -> None:  # the invocations since the last note happened at ``at`` (server time)
        with lock:
            seen.extend((size, at) for size in sizes[len(seen) :])

    name = f"fn{batch_size}-{first}"
    server.function(name, handler)
    server.lambda_client(account).create_event_source_mapping(
        EventSourceArn=arn, FunctionName=name, BatchSize=batch_size, MaximumBatchingWindowInSeconds=window
    )
    server.settle()
    if first == "map":
        send()
        server.settle()
    note(0.0)
    for step in range(1, (window + 1) * 100 + 1):
        server.advance(0.01)
        server.settle()
        note(step / 100)
    return seen


def main() -> None:
    with SQSServer() as server:
        for first in ("send", "map"):
            for batch_size, window in ((100, 3), (20, 10)):
                got = run(server, batch_size, window, first)
                when = "sent before the mapping" if first == "send" else "sent to the mapping's waiting pollers"
                print(f"BatchSize {batch_size}, window {window} s, 30 messages {when}:")
                for size, at in got:
                    print(f"  one invocation of {size} at {at:.2f} s")


if __name__ == "__main__":
    main()
