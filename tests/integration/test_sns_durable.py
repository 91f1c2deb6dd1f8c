"""SNS in durable mode (``sqsemu --data-dir DIR``): topics, subscriptions, pending confirmations, tags, attributes
and FIFO deduplication history survive SIGKILL, as queues do. Real server processes, real boto3 clients over real
sockets, the manual clock (a restarted manual clock starts at the wall time, after the first server's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config as BotoConfig
from harness import ServerProcess, client_for, http_get

from sqsemu.testing.boto import new_client

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
OTHER = "111111111111"


def sns_client(endpoint_url: str, account: str = ACCOUNT) -> Any:
    return new_client(
        "sns",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=account,
        aws_secret_access_key="test",
        config=BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return str(url), str(arn)


def bodies(sqs: Any, url: str) -> list[str]:
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
    return [m["Body"] for m in got.get("Messages", [])]


def test_topics_and_subscriptions_survive_sigkill(tmp_path: Path, protocol: str) -> None:
    args = ["--data-dir", str(tmp_path / "data"), "--clock", "manual"]
    server = ServerProcess(args).start()
    try:
        sqs = client_for(server.endpoint_url, protocol)
        theirs = client_for(server.endpoint_url, protocol, access_key_id=OTHER)
        sns = sns_client(server.endpoint_url)
        raw_url, raw_arn = queue(sqs, "raw")
        env_url, env_arn = queue(sqs, "enveloped")
        fifo_url, fifo_arn = queue(sqs, "ordered.fifo", FifoQueue="true")
        their_url, their_arn = queue(theirs, "theirs")
        topic = sns.create_topic(
            Name="orders", Attributes={"DisplayName": "Orders"}, Tags=[{"Key": "team", "Value": "shop"}]
        )["TopicArn"]
        sns.set_topic_attributes(TopicArn=topic, AttributeName="SignatureVersion", AttributeValue="2")
        raw = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=raw_arn, ReturnSubscriptionArn=True)
        sns.set_subscription_attributes(
            SubscriptionArn=raw["SubscriptionArn"], AttributeName="RawMessageDelivery", AttributeValue="true"
        )
        enveloped = sns.subscribe(
            TopicArn=topic,
            Protocol="sqs",
            Endpoint=env_arn,
            Attributes={"FilterPolicy": json.dumps({"kind": ["placed", "shipped"]})},
            ReturnSubscriptionArn=True,
        )["SubscriptionArn"]
        # The topic owner subscribes another account's queue: pending, its SubscriptionConfirmation in that queue.
        pending = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=their_arn, ReturnSubscriptionArn=True)
        fifo_topic = sns.create_topic(
            Name="ledger.fifo", Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"}
        )["TopicArn"]
        sns.subscribe(TopicArn=fifo_topic, Protocol="sqs", Endpoint=fifo_arn)
        first = sns.publish(TopicArn=fifo_topic, Message="credit 5", MessageGroupId="acct-1")
        # Killed right after the answers: everything answered must be on disk.
        topic_attributes = sns.get_topic_attributes(TopicArn=topic)["Attributes"]
        subscription_attributes = {
            arn: sns.get_subscription_attributes(SubscriptionArn=arn)["Attributes"]
            for arn in (raw["SubscriptionArn"], enveloped, pending["SubscriptionArn"])
        }
        listed = sns.list_subscriptions()["Subscriptions"]
        for client in (sqs, theirs):
            client.close()
    finally:
        server.kill()

    server = ServerProcess(args).start()
    try:
        sqs = client_for(server.endpoint_url, protocol)
        theirs = client_for(server.endpoint_url, protocol, access_key_id=OTHER)
        sns = sns_client(server.endpoint_url)
        assert sns.list_topics()["Topics"] == [{"TopicArn": topic}, {"TopicArn": fifo_topic}]
        assert sns.get_topic_attributes(TopicArn=topic)["Attributes"] == topic_attributes
        assert sns.list_tags_for_resource(ResourceArn=topic)["Tags"] == [{"Key": "team", "Value": "shop"}]
        for arn, attributes in subscription_attributes.items():
            assert sns.get_subscription_attributes(SubscriptionArn=arn)["Attributes"] == attributes
        assert sns.list_subscriptions()["Subscriptions"] == listed
        assert subscription_attributes[pending["SubscriptionArn"]]["PendingConfirmation"] == "true"

        # The FIFO deduplication history: the same message within 5 minutes is the first one again.
        again = sns.publish(TopicArn=fifo_topic, Message="credit 5", MessageGroupId="acct-1")
        assert (again["MessageId"], again["SequenceNumber"]) == (first["MessageId"], first["SequenceNumber"])
        later = sns.publish(TopicArn=fifo_topic, Message="credit 7", MessageGroupId="acct-1")
        assert int(later["SequenceNumber"]) == int(first["SequenceNumber"]) + 1
        assert [json.loads(b)["Message"] for b in bodies(sqs, fifo_url)] == ["credit 5", "credit 7"]
        # The pending confirmation's token, from the message it put into the other account's queue, confirms it.
        [confirmation] = [json.loads(b) for b in bodies(theirs, their_url)]
        assert confirmation["Type"] == "SubscriptionConfirmation"
        confirmed = sns_client(server.endpoint_url, OTHER).confirm_subscription(
            TopicArn=topic, Token=confirmation["Token"]
        )
        assert confirmed["SubscriptionArn"] == pending["SubscriptionArn"]

        # Delivery after the restart follows the restored attributes: raw, or an envelope signed with version 2.
        sns.publish(
            TopicArn=topic,
            Message="placed #1",
            MessageAttributes={"kind": {"DataType": "String", "StringValue": "placed"}},
        )
        sns.publish(
            TopicArn=topic,
            Message="shipped #1",
            MessageAttributes={"kind": {"DataType": "String", "StringValue": "shipped"}},
        )
        assert sorted(bodies(sqs, raw_url)) == ["placed #1", "shipped #1"]
        notifications = [json.loads(b) for b in bodies(sqs, env_url)]
        assert sorted((n["Message"], n["SignatureVersion"]) for n in notifications) == [
            ("placed #1", "2"),
            ("shipped #1", "2"),
        ]
        assert sorted(json.loads(b)["Message"] for b in bodies(theirs, their_url)) == ["placed #1", "shipped #1"]
        for client in (sqs, theirs):
            client.close()
    finally:
        server.kill()


def test_a_published_message_is_in_its_queues_after_sigkill(tmp_path: Path, protocol: str) -> None:
    """Publish is answered once its deliveries into the queues are committed: a kill right after the answer
    loses none."""
    args = ["--data-dir", str(tmp_path / "data"), "--clock", "manual"]
    server = ServerProcess(args).start()
    try:
        sqs = client_for(server.endpoint_url, protocol)
        sns = sns_client(server.endpoint_url)
        _, arn = queue(sqs, "q")
        topic = sns.create_topic(Name="t")["TopicArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
        for n in range(20):
            sns.publish(TopicArn=topic, Message=f"m{n}")
        sns.publish_batch(
            TopicArn=topic, PublishBatchRequestEntries=[{"Id": f"b{n}", "Message": f"b{n}"} for n in range(10)]
        )
        sqs.close()
    finally:
        server.kill()
    server = ServerProcess(args).start()
    try:
        status, _, body = http_get(f"{server.endpoint_url}/_sqsemu/queues/{ACCOUNT}/q/messages", timeout=10)
        assert status == 200, body
        kept = sorted(m["body"] for m in json.loads(body)["messages"])
        assert kept == sorted([f"m{n}" for n in range(20)] + [f"b{n}" for n in range(10)])
    finally:
        server.kill()
