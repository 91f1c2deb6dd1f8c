"""SNS to SQS through boto3, as a script: ``python sns_scenario.py <endpoint-url> <name-prefix>``.

Standard library and boto3 only (no imports from the project), so that the same scenario runs under the test
process's current boto3 and under boto3 1.28.64 in its own virtual environment (harness/legacy.py), each over a
real socket. tests/integration/test_sns_clients.py runs it and checks its summary as it checks the AWS CLI's and the
JavaScript SDK's (tests/js/sns_check.mjs does the same steps):

1. a standard topic fanning out to two queues, one subscription with the JSON envelope and one with raw delivery;
   a publish with a String, a Number and a Binary message attribute; both deliveries received;
2. a FIFO topic with content-based deduplication to a FIFO queue (raw delivery): three messages of one group and a
   duplicate of the first, received in order.

Prints one JSON line: what was published and received (binary values in base64), plus the boto3 and botocore
versions and the SNS model's protocol. Any failure raises (the traceback on stderr, exit status 1).
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import boto3
import botocore
from botocore.config import Config

MESSAGE = "hello from boto3"
BLOB = bytes([2, 3, 4])


def _attributes(values: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in (values or {}).items():
        out[name] = {"DataType": value["DataType"]}
        if "StringValue" in value:
            out[name]["StringValue"] = value["StringValue"]
        if "BinaryValue" in value:
            out[name]["BinaryValue"] = base64.b64encode(value["BinaryValue"]).decode("ascii")
    return out


def main(endpoint_url: str, prefix: str) -> dict[str, Any]:
    session = boto3.session.Session()
    settings: dict[str, Any] = {
        "endpoint_url": endpoint_url,
        "region_name": "us-east-1",
        "aws_access_key_id": "test",
        "aws_secret_access_key": "test",
        "config": Config(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=30),
    }
    sns = session.client("sns", **settings)
    sqs = session.client("sqs", **settings)

    def queue(name: str, **attributes: str) -> tuple[str, str]:
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return url, arn

    def receive(url: str, wanted: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for _ in range(5):
            if len(messages) >= wanted:
                break
            answer = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=10,
                WaitTimeSeconds=5,
                MessageAttributeNames=["All"],
                AttributeNames=["All"],
            )
            messages.extend(answer.get("Messages", []))
        return messages

    topic_arn = sns.create_topic(Name=prefix)["TopicArn"]
    envelope_url, envelope_arn = queue(f"{prefix}-envelope")
    raw_url, raw_arn = queue(f"{prefix}-raw")
    envelope_sub = sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=envelope_arn, ReturnSubscriptionArn=True)
    raw_sub = sns.subscribe(
        TopicArn=topic_arn, Protocol="sqs", Endpoint=raw_arn, Attributes={"RawMessageDelivery": "true"}
    )
    raw_attributes = sns.get_subscription_attributes(SubscriptionArn=raw_sub["SubscriptionArn"])["Attributes"]
    assert raw_attributes["RawMessageDelivery"] == "true", raw_attributes
    listed = sns.list_subscriptions_by_topic(TopicArn=topic_arn)["Subscriptions"]
    assert len(listed) == 2, listed
    published = sns.publish(
        TopicArn=topic_arn,
        Message=MESSAGE,
        Subject="greeting",
        MessageAttributes={
            "colour": {"DataType": "String", "StringValue": "blue"},
            "size": {"DataType": "Number", "StringValue": "3"},
            "blob": {"DataType": "Binary", "BinaryValue": BLOB},
        },
    )
    (envelope,) = receive(envelope_url, 1)
    (raw,) = receive(raw_url, 1)

    fifo_topic_arn = sns.create_topic(
        Name=f"{prefix}.fifo", Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"}
    )["TopicArn"]
    fifo_url, fifo_arn = queue(f"{prefix}.fifo", FifoQueue="true")
    sns.subscribe(TopicArn=fifo_topic_arn, Protocol="sqs", Endpoint=fifo_arn, Attributes={"RawMessageDelivery": "true"})
    fifo_published = []
    for body in ("first", "second", "third", "first"):
        answer = sns.publish(TopicArn=fifo_topic_arn, Message=body, MessageGroupId="group-1")
        fifo_published.append({"MessageId": answer["MessageId"], "SequenceNumber": answer.get("SequenceNumber")})
    fifo_received = receive(fifo_url, 3)

    for url in (envelope_url, raw_url, fifo_url):
        sqs.delete_queue(QueueUrl=url)
    for arn in (topic_arn, fifo_topic_arn):
        sns.delete_topic(TopicArn=arn)
    return {
        "ok": True,
        "versions": {"boto3": boto3.__version__, "botocore": botocore.__version__},
        "protocols": {"sns": sns.meta.service_model.protocol, "sqs": sqs.meta.service_model.protocol},
        "message": MESSAGE,
        "blob": base64.b64encode(BLOB).decode("ascii"),
        "topicArn": topic_arn,
        "envelopeQueueArn": envelope_arn,
        "envelopeSubscriptionArn": envelope_sub["SubscriptionArn"],
        "rawSubscriptionArn": raw_sub["SubscriptionArn"],
        "messageId": published["MessageId"],
        "envelopeBody": envelope["Body"],
        "envelopeMessageAttributes": _attributes(envelope.get("MessageAttributes")),
        "raw": {"Body": raw["Body"], "MessageAttributes": _attributes(raw.get("MessageAttributes"))},
        "fifoTopicArn": fifo_topic_arn,
        "fifoPublished": fifo_published,
        "fifoReceived": [{"Body": m["Body"], "Attributes": m["Attributes"]} for m in fifo_received],
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
