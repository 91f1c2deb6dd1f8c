"""The fair-queue worked example of docs/behaviour.md 4.10, run against a real server (manual clock, boto3).

A noisy tenant sends 100 messages, then a quiet one 5. Prints what each ReceiveMessage of 10 returns, the noisy
tenants peek reports, and the five fair-queue lines of ``/metrics`` for the queue::

    python bench/fair_example.py

The same receives against a queue whose messages carry no MessageGroupId (what every emulator did before: send
order) are printed first, for comparison.
"""

from __future__ import annotations

import urllib.request
from typing import Any

from sqsemu.testing import SQSServer

FAIR_METRICS = (
    "sqs_approximate_number_of_noisy_groups",
    "sqs_approximate_number_of_messages_visible_in_quiet_groups",
    "sqs_approximate_number_of_messages_not_visible_in_quiet_groups",
    "sqs_approximate_number_of_messages_delayed_in_quiet_groups",
    "sqs_approximate_age_of_oldest_message_in_quiet_groups_seconds",
)


def send(sqs: Any, url: str, tenant: str, count: int, grouped: bool) -> None:
    for start in range(0, count, 10):
        entries = []
        for i in range(start, min(count, start + 10)):
            entry = {"Id": str(i), "MessageBody": f"{tenant}-{i}"}
            if grouped:
                entry["MessageGroupId"] = tenant
            entries.append(entry)
        sqs.send_message_batch(QueueUrl=url, Entries=entries)


def compact(bodies: list[str]) -> str:
    """``noisy-0 .. noisy-9`` style runs."""
    out: list[str] = []
    run: list[str] = []
    for body in [*bodies, ""]:
        if run and (not body or body.rsplit("-", 1)[0] != run[0].rsplit("-", 1)[0]):
            out.append(run[0] if len(run) == 1 else f"{run[0]} .. {run[-1]}")
            run = []
        if body:
            run.append(body)
    return ", ".join(out) or "(nothing)"


def scenario(server: SQSServer, name: str, grouped: bool) -> None:
    sqs = server.client()
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    send(sqs, url, "noisy", 100, grouped)
    send(sqs, url, "quiet", 5, grouped)
    print(f"queue {name} ({'MessageGroupId = tenant' if grouped else 'no MessageGroupId'}):")
    for n in range(1, 6):
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600)
        bodies = [m["Body"] for m in got.get("Messages", [])]
        noisy = server.peek_queue(name)["queue"]["noisy_tenants"]
        print(f"  receive {n}: {compact(bodies):45} noisy tenants after it: {noisy}")
    server.advance(10)


def main() -> None:
    with SQSServer(clock="manual") as server:
        scenario(server, "plain", grouped=False)
        scenario(server, "tenants", grouped=True)
        with urllib.request.urlopen(f"{server.endpoint_url}/metrics") as response:
            text = response.read().decode()
        print("metrics:")
        for line in text.splitlines():
            if line.startswith(FAIR_METRICS) and 'queue="tenants"' in line:
                print(f"  {line}")


if __name__ == "__main__":
    main()
