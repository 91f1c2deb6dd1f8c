"""``[[topics]]`` in ``sqsemu --config FILE`` against a real server process: declared topics deliver into declared
queues as their subscriptions say; a restart on the same data folder with the same file changes nothing; a
declaration that conflicts with the restored state stops the start (exit 1) naming the topic and the attribute; one
that SNS refuses is a usage error (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config as BotoConfig
from harness import ServerProcess, client_for, free_port

from sqsemu.testing.boto import new_client

pytestmark = pytest.mark.integration

FILE = """
[[queues]]
name = "billing"

[[queues]]
name = "billing-dlq"

[[queues]]
name = "audit"

[[topics]]
name = "orders"
attributes = { DisplayName = "Orders" }
tags = { team = "shop" }

[[topics.subscriptions]]
protocol = "sqs"
endpoint = "billing"
attributes = { RawMessageDelivery = true }
dead_letter_queue = "billing-dlq"

[[topics.subscriptions]]
protocol = "sqs"
endpoint = "arn:aws:sqs:us-east-1:000000000000:audit"
attributes = { FilterPolicy = { kind = ["placed"] } }
"""


def sns_client(endpoint_url: str) -> Any:
    return new_client(
        "sns",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def start_fails(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sqsemu args`` on a free port, expecting it to exit on its own (it must not serve)."""
    argv = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(free_port()), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_") or k == "SQSEMU_PURE_PYTHON"}
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)


def state(sns: Any) -> list[Any]:
    """Every topic with its attributes and tags, and its subscriptions with theirs."""
    out: list[Any] = []
    for listed in sns.list_topics()["Topics"]:
        arn = listed["TopicArn"]
        out.append((arn, sns.get_topic_attributes(TopicArn=arn)["Attributes"]))
        out.append(sns.list_tags_for_resource(ResourceArn=arn)["Tags"])
        for sub in sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]:
            out.append(sns.get_subscription_attributes(SubscriptionArn=sub["SubscriptionArn"])["Attributes"])
    return out


def test_declared_topics_deliver_and_a_restart_with_the_same_file_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sqsemu.toml"
    path.write_text(FILE)
    args = ["--config", str(path), "--data-dir", str(tmp_path / "data")]
    with ServerProcess(args) as first:
        sqs = client_for(first.endpoint_url, "json")
        sns = sns_client(first.endpoint_url)
        [topic] = [t["TopicArn"] for t in sns.list_topics()["Topics"]]
        assert topic == "arn:aws:sns:us-east-1:000000000000:orders"
        sns.publish(
            TopicArn=topic,
            Message="order 1",
            MessageAttributes={"kind": {"DataType": "String", "StringValue": "placed"}},
        )
        billing = sqs.get_queue_url(QueueName="billing")["QueueUrl"]
        audit = sqs.get_queue_url(QueueName="audit")["QueueUrl"]
        [raw] = sqs.receive_message(QueueUrl=billing)["Messages"]
        assert raw["Body"] == "order 1"  # RawMessageDelivery
        [enveloped] = sqs.receive_message(QueueUrl=audit)["Messages"]
        assert json.loads(enveloped["Body"])["Message"] == "order 1"
        before = state(sns)
        subscription = before[2]
        assert subscription["PendingConfirmation"] == "false"
        assert json.loads(subscription["RedrivePolicy"]) == {
            "deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:billing-dlq"
        }
    with ServerProcess(args) as second:
        assert state(sns_client(second.endpoint_url)) == before


def test_a_conflict_with_the_restored_topic_stops_the_start_naming_it_and_the_attribute(tmp_path: Path) -> None:
    path = tmp_path / "sqsemu.toml"
    path.write_text(FILE)
    data = str(tmp_path / "data")
    with ServerProcess(["--config", str(path), "--data-dir", data]):
        pass
    changed = tmp_path / "changed.toml"
    changed.write_text(FILE.replace('DisplayName = "Orders"', 'DisplayName = "Shop orders"'))
    result = start_fails(["--config", str(changed), "--data-dir", data])
    assert result.returncode == 1, result.stderr
    assert (
        f"config file {str(changed)!r}: topic 'orders' (account 000000000000, region us-east-1) exists with a "
        "different value for attribute DisplayName: declared 'Shop orders', existing 'Orders'"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    with ServerProcess(["--config", str(path), "--data-dir", data]) as srv:  # nothing was changed
        sns = sns_client(srv.endpoint_url)
        attributes = sns.get_topic_attributes(TopicArn="arn:aws:sns:us-east-1:000000000000:orders")["Attributes"]
        assert attributes["DisplayName"] == "Orders"


def test_a_declaration_sns_refuses_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[[topics]]\nname = "orders.fifo"\n[[topics.subscriptions]]\nprotocol = "https"\nendpoint = "x"\n')
    result = start_fails(["--config", str(path)])
    assert result.returncode == 2, result.stderr
    assert "topic 'orders.fifo' (account 000000000000, region us-east-1): subscription #1 (https x)" in result.stderr
    assert "Traceback" not in result.stderr
