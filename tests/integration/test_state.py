"""Saved states against real server processes (docs/state.md): ``sqsemu state save`` and ``sqsemu state load``
between two servers, ``--load-state`` at start-up, and a state loaded into a durable server surviving SIGKILL.
Real processes, real boto3 clients over real sockets, the manual clock (each server's starts at its own wall time:
the loaded times move by the difference)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from harness import ServerProcess, client_for, free_port, http_get

from sqsemu.testing.boto import new_client

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """``sqsemu <args>`` in a subprocess (the installed package's entry point: ``python -m sqsemu``)."""
    return subprocess.run(
        [sys.executable, "-m", "sqsemu", *args], input=stdin, capture_output=True, timeout=120, check=False
    )


def sns_client(endpoint_url: str) -> Any:
    return new_client(
        "sns",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=ACCOUNT,
        aws_secret_access_key="test",
    )


def peek(endpoint_url: str, name: str, token: str = "") -> list[dict[str, Any]]:
    status, _, body = http_get(f"{endpoint_url}/_sqsemu/queues/{ACCOUNT}/{name}/messages")
    assert status == 200, body
    messages: list[dict[str, Any]] = json.loads(body)["messages"]
    return messages


def comparable(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must be equal after a load whatever the clocks: identity, content, state, time left, receive count."""
    return [
        (m["message_id"], m["body"], m["state"], m["seconds_left"], m["receive_count"], m["message_group_id"],
         m["sequence_number"], json.dumps(m["message_attributes"], sort_keys=True))
        for m in messages
    ]  # fmt: skip


def make_state(endpoint_url: str) -> dict[str, Any]:
    """Queues with messages visible, in flight and delayed, a FIFO queue, an SNS topic with a subscription."""
    sqs = client_for(endpoint_url, "json", access_key_id=ACCOUNT)
    orders = sqs.create_queue(QueueName="orders", Attributes={"VisibilityTimeout": "60"}, tags={"team": "shop"})
    url = orders["QueueUrl"]
    sqs.send_message(
        QueueUrl=url, MessageBody="first", MessageAttributes={"kind": {"DataType": "String", "StringValue": "a"}}
    )
    sqs.send_message(QueueUrl=url, MessageBody="second")
    sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=120)
    jobs = sqs.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    sent = sqs.send_message(QueueUrl=jobs, MessageBody="job", MessageGroupId="g", MessageDeduplicationId="d")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns = sns_client(endpoint_url)
    topic = sns.create_topic(Name="events", Attributes={"DisplayName": "Events"})["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
    return {"orders": url, "jobs": jobs, "job": sent, "topic": topic, "sqs": sqs, "sns": sns}


def test_the_cli_saves_one_server_and_loads_it_into_another(tmp_path: Path) -> None:
    token = "s3cret-token"
    with (
        ServerProcess(["--clock", "manual", "--admin-token", token]) as a,
        ServerProcess(["--clock", "manual"]) as b,
    ):
        made = make_state(a.endpoint_url)
        path = tmp_path / "state.jsonl"
        refused = cli("state", "save", str(path), "--endpoint", a.endpoint_url)
        assert refused.returncode == 1
        assert b"the server refused the save (HTTP 401)" in refused.stderr and not path.exists()
        saved = cli("state", "save", str(path), "--endpoint", a.endpoint_url, "--admin-token", token)
        assert saved.returncode == 0, saved.stderr
        assert b"saved 9 records" in saved.stderr
        to_stdout = cli("state", "save", "-", "--endpoint", a.endpoint_url, "--admin-token", token)
        assert to_stdout.stdout.splitlines()[1:] == path.read_bytes().splitlines()[1:]  # the header's time moved
        before = {
            name: comparable(json.loads(http_get_token(a.endpoint_url, name, token))["messages"])
            for name in ("orders", "jobs.fifo")
        }

        loaded = cli("state", "load", str(path), "--endpoint", b.endpoint_url)
        assert loaded.returncode == 0, loaded.stderr
        assert b"2 queues, 4 messages, 1 deduplication, 1 fifo_sequences" in loaded.stderr
        assert {name: comparable(peek(b.endpoint_url, name)) for name in before} == before

        sqs = client_for(b.endpoint_url, "json", access_key_id=ACCOUNT)
        assert sqs.list_queue_tags(QueueUrl=made["orders"].replace(a.endpoint_url, b.endpoint_url))["Tags"] == {
            "team": "shop"
        }
        again = sqs.send_message(
            QueueUrl=made["jobs"].replace(a.endpoint_url, b.endpoint_url),
            MessageBody="job",
            MessageGroupId="g",
            MessageDeduplicationId="d",
        )
        assert again["MessageId"] == made["job"]["MessageId"]
        sns = sns_client(b.endpoint_url)
        assert sns.get_topic_attributes(TopicArn=made["topic"])["Attributes"]["DisplayName"] == "Events"
        sns.publish(TopicArn=made["topic"], Message="after the load")
        assert "after the load" in [m["body"] for m in peek(b.endpoint_url, "orders")]

        # Errors: a file that cannot be loaded (the server's reason), a server that is not there.
        broken = tmp_path / "broken.jsonl"
        broken.write_bytes(path.read_bytes().rsplit(b"\n", 2)[0] + b"\n")
        refused = cli("state", "load", str(broken), "--endpoint", b.endpoint_url)
        assert refused.returncode == 1
        assert b"the server refused the load (HTTP 400)" in refused.stderr and b"cut short" in refused.stderr
        nobody = f"http://127.0.0.1:{free_port()}"
        gone = cli("state", "save", str(tmp_path / "x.jsonl"), "--endpoint", nobody)
        assert gone.returncode == 1 and f"cannot reach a sqsemu server at {nobody}".encode() in gone.stderr
        for client in (made["sqs"], sqs):
            client.close()


def http_get_token(endpoint_url: str, name: str, token: str) -> bytes:
    import urllib.request

    request = urllib.request.Request(
        f"{endpoint_url}/_sqsemu/queues/{ACCOUNT}/{name}/messages", headers={"X-Sqsemu-Admin-Token": token}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body: bytes = response.read()
        return body


def test_a_state_loaded_into_a_durable_server_survives_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "state.jsonl"
    with ServerProcess(["--clock", "manual"]) as a:
        made = make_state(a.endpoint_url)
        made["sqs"].close()
        assert cli("state", "save", str(path), "--endpoint", a.endpoint_url).returncode == 0
        before = {name: comparable(peek(a.endpoint_url, name)) for name in ("orders", "jobs.fifo")}
        topic_attributes = made["sns"].get_topic_attributes(TopicArn=made["topic"])["Attributes"]

    args = ["--data-dir", str(tmp_path / "data"), "--clock", "manual"]
    durable = ServerProcess(args).start()
    try:
        sqs = client_for(durable.endpoint_url, "json", access_key_id=ACCOUNT)
        sqs.create_queue(QueueName="replaced-by-the-load")
        sqs.close()
        loaded = cli("state", "load", str(path), "--endpoint", durable.endpoint_url)
        assert loaded.returncode == 0, loaded.stderr
    finally:
        durable.kill()  # right after the answer: the load was committed before it

    restarted = ServerProcess(args).start()
    try:
        status, _, body = http_get(f"{restarted.endpoint_url}/_sqsemu/queues")
        assert sorted(q["name"] for q in json.loads(body)["queues"]) == ["jobs.fifo", "orders"]
        after = {name: comparable(peek(restarted.endpoint_url, name)) for name in before}
        # The restarted manual clock starts at the wall time, later: the times left are the same or shorter.
        for name, messages in before.items():
            assert [m[:3] + m[4:] for m in after[name]] == [m[:3] + m[4:] for m in messages]
        sns = sns_client(restarted.endpoint_url)
        assert sns.get_topic_attributes(TopicArn=made["topic"])["Attributes"] == topic_attributes
        sqs = client_for(restarted.endpoint_url, "json", access_key_id=ACCOUNT)
        jobs = made["jobs"].replace(made["jobs"].split("/")[2], f"127.0.0.1:{restarted.port}")
        again = sqs.send_message(QueueUrl=jobs, MessageBody="job", MessageGroupId="g", MessageDeduplicationId="d")
        assert again["MessageId"] == made["job"]["MessageId"]
        sqs.close()
    finally:
        restarted.kill()


def test_load_state_at_start_up(tmp_path: Path) -> None:
    path = tmp_path / "state.jsonl"
    with ServerProcess(["--clock", "manual"]) as a:
        make_state(a.endpoint_url)["sqs"].close()
        assert cli("state", "save", str(path), "--endpoint", a.endpoint_url).returncode == 0
        before = comparable(peek(a.endpoint_url, "orders"))
    with ServerProcess(["--clock", "manual", "--load-state", str(path)]) as b:
        assert [m[:3] + m[4:] for m in comparable(peek(b.endpoint_url, "orders"))] == [m[:3] + m[4:] for m in before]
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(path.read_bytes().replace(b'"version":1', b'"version":7', 1))
    refused = cli("--port", str(free_port()), "--load-state", str(broken))
    assert refused.returncode == 1
    expected = f"Error: cannot start: the state file {broken} cannot be loaded: the state file has format version 7"
    assert expected.encode() in refused.stderr
