"""Fair queues over both wire protocols, on the manual clock (docs/behaviour.md 4.10): a standard queue's tenants
(MessageGroupId), which are noisy, the order receives take while one is, recovery, long polls, a durable restart,
and the five fair-queue metrics."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from harness import ServerProcess, client_for, http_get, start_long_poll
from prometheus_client.parser import text_string_to_metric_families

MakeQueue = Callable[..., str]  # the ``manual_make_queue`` fixture (tests/integration/conftest.py)

ACCOUNT = "000000000000"


def send_many(client: Any, url: str, group: str | None, count: int, prefix: str | None = None, **extra: Any) -> None:
    """Send ``count`` messages ``<prefix>-<i>`` (prefix defaults to the group) in batches of 10."""
    name = prefix or group or "none"
    for start in range(0, count, 10):
        entries = []
        for i in range(start, min(count, start + 10)):
            entry: dict[str, Any] = {"Id": f"e{i}", "MessageBody": f"{name}-{i}", **extra}
            if group is not None:
                entry["MessageGroupId"] = group
            entries.append(entry)
        answer = client.send_message_batch(QueueUrl=url, Entries=entries)
        assert not answer.get("Failed"), answer


def receive(client: Any, url: str, n: int = 10, vt: int = 600, wait: int = 0) -> list[str]:
    got = client.receive_message(QueueUrl=url, MaxNumberOfMessages=n, VisibilityTimeout=vt, WaitTimeSeconds=wait)
    return [m["Body"] for m in got.get("Messages", [])]


def receive_handles(client: Any, url: str, n: int = 10, vt: int = 600) -> list[tuple[str, str]]:
    got = client.receive_message(QueueUrl=url, MaxNumberOfMessages=n, VisibilityTimeout=vt, WaitTimeSeconds=0)
    return [(m["Body"], m["ReceiptHandle"]) for m in got.get("Messages", [])]


def peek(server: ServerProcess, url: str) -> dict[str, Any]:
    parts = [p for p in urlsplit(url).path.split("/") if p]
    status, _, body = http_get(
        f"{server.endpoint_url}/_sqsemu/queues/{quote(parts[-2])}/{quote(parts[-1])}/messages", timeout=10
    )
    assert status == 200, body
    return dict(json.loads(body))


def noisy_tenants(server: ServerProcess, url: str) -> list[str]:
    return list(peek(server, url)["queue"]["noisy_tenants"])


# --- the rules ---------------------------------------------------------------------------------------------------


def test_noisy_tenant_by_in_flight_share_and_count(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "noisy", 100)
    send_many(manual_sqs, url, "quiet", 5)
    # nobody noisy yet: send order
    first = receive(manual_sqs, url) + receive(manual_sqs, url) + receive(manual_sqs, url)
    assert first == [f"noisy-{i}" for i in range(30)]
    assert noisy_tenants(manual_server, url) == ["noisy"]  # 30 in flight, 100% of them, a backlog of 70
    # quiet messages first, the noisy tenant's only to fill up
    assert receive(manual_sqs, url) == [f"quiet-{i}" for i in range(5)] + [f"noisy-{i}" for i in range(30, 35)]
    messages = {m["body"]: m for m in peek(manual_server, url)["messages"]}
    assert (messages["noisy-50"]["tenant"], messages["noisy-50"]["noisy"]) == ("noisy", True)
    assert (messages["quiet-0"]["tenant"], messages["quiet-0"]["noisy"]) == ("quiet", False)


def test_29_messages_in_flight_are_not_noisy(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "big", 50)
    send_many(manual_sqs, url, "small", 2)
    receive(manual_sqs, url)
    receive(manual_sqs, url)
    receive(manual_sqs, url, 9)
    assert noisy_tenants(manual_server, url) == []
    assert receive(manual_sqs, url, 1) == ["big-29"]


def test_noisy_tenant_by_processing_time(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "slow", 3)
    send_many(manual_sqs, url, "fast", 3)
    assert receive(manual_sqs, url, 1) == ["slow-0"]
    manual_server.advance(60)  # a consumer has spent 60 s on slow-0: all of the processing time
    assert noisy_tenants(manual_server, url) == ["slow"]
    assert receive(manual_sqs, url) == ["fast-0", "fast-1", "fast-2", "slow-1", "slow-2"]


def test_several_noisy_tenants_fewest_in_flight_first(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "a", 45)
    send_many(manual_sqs, url, "b", 35)
    for _ in range(3):
        receive(manual_sqs, url)  # a-0..a-29: a is noisy from here
    assert receive(manual_sqs, url) + receive(manual_sqs, url) + receive(manual_sqs, url) == [
        f"b-{i}" for i in range(30)
    ]
    assert noisy_tenants(manual_server, url) == ["a", "b"]
    # no quiet message waits: the noisy tenant with fewer in flight goes first (on a tie, the older message)
    assert receive(manual_sqs, url, 6) == ["a-30", "b-30", "a-31", "b-31", "a-32", "b-32"]


def test_messages_without_a_group_are_tenants_of_their_own(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "noisy", 40)
    for _ in range(3):
        receive(manual_sqs, url)
    manual_sqs.send_message(QueueUrl=url, MessageBody="alone-1")
    manual_sqs.send_message(QueueUrl=url, MessageBody="alone-2")
    assert receive(manual_sqs, url, 3) == ["alone-1", "alone-2", "noisy-30"]
    view = {m["body"]: m for m in peek(manual_server, url)["messages"]}
    assert (view["alone-1"]["tenant"], view["alone-1"]["noisy"]) == (None, False)


def test_a_tenant_whose_backlog_is_gone_is_quiet(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "n", 32)
    for _ in range(3):
        receive(manual_sqs, url)
    assert noisy_tenants(manual_server, url) == ["n"]
    assert receive(manual_sqs, url) == ["n-30", "n-31"]
    assert noisy_tenants(manual_server, url) == []  # 32 in flight, nothing waiting
    send_many(manual_sqs, url, "n", 1, prefix="more")
    assert noisy_tenants(manual_server, url) == ["n"]  # a backlog again


def test_a_tenant_that_sent_nothing_for_five_minutes_is_quiet(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "n", 40)
    send_many(manual_sqs, url, "q", 1)
    for _ in range(3):
        receive(manual_sqs, url, vt=3600)
    manual_server.advance(299)
    assert noisy_tenants(manual_server, url) == ["n"]
    manual_server.advance(1)
    assert noisy_tenants(manual_server, url) == []
    assert receive(manual_sqs, url, 2) == ["n-30", "n-31"]  # send order again


def test_long_poll_woken_by_a_quiet_tenants_send(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue, protocol: str
) -> None:
    url = manual_make_queue()
    send_many(manual_sqs, url, "noisy", 30)
    send_many(manual_sqs, url, "noisy", 10, prefix="later", DelaySeconds=60)
    for _ in range(3):
        receive(manual_sqs, url)
    assert noisy_tenants(manual_server, url) == ["noisy"]  # its backlog is delayed: nothing visible
    other = client_for(manual_server.endpoint_url, protocol)
    try:
        poll = start_long_poll(
            manual_server.endpoint_url,
            other,
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=20,
            VisibilityTimeout=600,
        )
        manual_sqs.send_message(QueueUrl=url, MessageBody="quiet-0", MessageGroupId="quiet")
        poll.join(30)
        assert [m["Body"] for m in poll.messages()] == ["quiet-0"]
        manual_server.advance(59)
        poll = start_long_poll(
            manual_server.endpoint_url,
            other,
            QueueUrl=url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=20,
            VisibilityTimeout=600,
        )
        manual_server.advance(1)  # the noisy tenant's delayed messages: no quiet one waits, so they come
        poll.join(30)
        assert [m["Body"] for m in poll.messages()] == [f"later-{i}" for i in range(10)]
    finally:
        other.close()


def test_redrive_and_purge_leave_no_tenant_behind(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    dlq = manual_make_queue("dlq")
    arn = manual_sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    url = manual_make_queue(RedrivePolicy=json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1}))
    send_many(manual_sqs, url, "n", 40)
    for _ in range(4):
        receive(manual_sqs, url, vt=1)  # 40 in flight
    send_many(manual_sqs, url, "n", 1, prefix="late")
    assert noisy_tenants(manual_server, url) == ["n"]
    manual_server.advance(1)  # visible again; the next receive dead-letters all 40
    assert receive(manual_sqs, url) == ["late-0"]
    assert noisy_tenants(manual_server, url) == []
    manual_sqs.purge_queue(QueueUrl=url)
    assert peek(manual_server, url)["queue"]["noisy_tenants"] == []


def test_noisy_decisions_survive_a_durable_restart(tmp_path: Path, protocol: str) -> None:
    data = tmp_path / "data"
    server = ServerProcess(["--data-dir", str(data), "--clock", "manual"]).start()
    client = client_for(server.endpoint_url, protocol)
    try:
        url = client.create_queue(QueueName="tenants")["QueueUrl"]
        send_many(client, url, "noisy", 40)
        send_many(client, url, "quiet", 3)
        for _ in range(3):
            receive(client, url, vt=3600)
        assert noisy_tenants(server, url) == ["noisy"]
        last_ms = server.now_ms()
        client.close()
        assert server.stop(signal.SIGINT) == 0
        server = ServerProcess(["--data-dir", str(data), "--clock", "manual"]).start()
        if server.now_ms() < last_ms:
            server.advance((last_ms - server.now_ms()) / 1000)
        client = client_for(server.endpoint_url, protocol)
        url = client.get_queue_url(QueueName="tenants")["QueueUrl"]
        assert noisy_tenants(server, url) == ["noisy"]
        assert receive(client, url, 5) == ["quiet-0", "quiet-1", "quiet-2", "noisy-30", "noisy-31"]
    finally:
        client.close()
        server.stop(signal.SIGINT)


# --- metrics -----------------------------------------------------------------------------------------------------


def test_fair_queue_metrics_after_a_scripted_scenario(
    manual_server: ServerProcess, manual_sqs: Any, manual_make_queue: MakeQueue
) -> None:
    url = manual_make_queue()
    name = url.rsplit("/", 1)[1]
    send_many(manual_sqs, url, "noisy", 40)
    manual_server.advance(5)
    send_many(manual_sqs, url, "quiet", 5)
    send_many(manual_sqs, url, "quiet", 2, prefix="later", DelaySeconds=30)
    for _ in range(3):
        receive(manual_sqs, url)  # noisy-0..29
    assert receive(manual_sqs, url, 2) == ["quiet-0", "quiet-1"]
    manual_server.advance(10)
    status, _, body = http_get(f"{manual_server.endpoint_url}/metrics", timeout=10)
    assert status == 200
    samples = {
        (sample.name, sample.labels.get("queue")): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }

    def metric(metric_name: str) -> float:
        return samples[(metric_name, name)]

    assert metric("sqs_approximate_number_of_noisy_groups") == 1
    assert metric("sqs_approximate_number_of_messages_visible_in_quiet_groups") == 3
    assert metric("sqs_approximate_number_of_messages_not_visible_in_quiet_groups") == 2
    assert metric("sqs_approximate_number_of_messages_delayed_in_quiet_groups") == 2
    assert metric("sqs_approximate_age_of_oldest_message_in_quiet_groups_seconds") == 10.0
    assert metric("sqs_approximate_age_of_oldest_message_seconds") == 15.0
    assert metric("sqs_approximate_number_of_messages_visible") == 13
