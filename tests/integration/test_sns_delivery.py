"""SNS delivery into SQS queues over real sockets: boto3 SNS and SQS clients against one server on a manual clock
(``sqsemu.ServerThread``), each message read back with ReceiveMessage.

Expected deliveries are AWS's recorded ones (docs/behaviour.md, "SNS": the envelope's keys and their order, raw
delivery's attributes and MD5, FIFO group and deduplication IDs, the dead-letter queue of a deleted queue,
cross-account confirmation); the signature is checked as a subscriber checks it (``tests.unit.sns_helpers``,
written from the SNS Developer Guide).
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError

from sqsemu import Config, ServerThread
from sqsemu.sns.service import SNSCall
from tests.unit.sns_helpers import verify_as_subscriber

ACCOUNT = "000000000000"
OTHER = "111111111111"
REGION = "us-east-1"
SIGNED_KEYS = ["SignatureVersion", "Signature", "SigningCertURL"]
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(Config(clock="manual")) as server:
        yield server


class Clients:
    """Clients of one account: ``sns``, ``sqs``; ``queue(name, **attributes) -> (url, arn)``."""

    def __init__(self, srv: ServerThread, key: str) -> None:
        config = BotoConfig(retries={"max_attempts": 0})
        common = {"region_name": REGION, "endpoint_url": srv.endpoint_url, "aws_access_key_id": key,
                  "aws_secret_access_key": "secret", "config": config}  # fmt: skip
        self.sns = boto3.client("sns", **common)
        self.sqs = boto3.client("sqs", **common)
        self.made: list[str] = []

    def queue(self, name: str, **attributes: str) -> tuple[str, str]:
        url = str(self.sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"])
        self.made.append(url)
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return url, str(arn)

    def receive(self, url: str, count: int = 10) -> list[dict[str, Any]]:
        """Every message the queue has now (up to ``count``), deleted as read."""
        got: list[dict[str, Any]] = []
        while len(got) < count:
            answer = self.sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=min(10, count - len(got)), WaitTimeSeconds=0,
                AttributeNames=["All"], MessageAttributeNames=["All"],
            )  # fmt: skip
            messages = answer.get("Messages", [])
            if not messages:
                break
            for message in messages:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            got += messages
        return got

    def cleanup(self) -> None:
        for url in self.made:
            try:
                self.sqs.delete_queue(QueueUrl=url)
            except ClientError:
                pass
        for page in self.sns.get_paginator("list_topics").paginate():
            for topic in page["Topics"]:
                self.sns.delete_topic(TopicArn=topic["TopicArn"])


@pytest.fixture
def owner(srv: ServerThread) -> Iterator[Clients]:
    clients = Clients(srv, "test")  # not 12 digits: the server's account, 000000000000
    yield clients
    clients.cleanup()


@pytest.fixture
def other(srv: ServerThread) -> Iterator[Clients]:
    clients = Clients(srv, OTHER)  # a 12-digit access key id is the account (docs/behaviour.md, 7.1 "Caller")
    yield clients
    clients.cleanup()


def cert_pem(srv: ServerThread) -> bytes:
    return srv.call(lambda: srv.app.sns.signing_key().cert_pem())  # type: ignore[attr-defined]


def ordered_keys(body: str) -> list[str]:
    return [key for key, _ in json.loads(body, object_pairs_hook=lambda pairs: pairs)]


def subscribe(clients: Clients, topic: str, queue_arn: str, **attributes: str) -> str:
    return str(clients.sns.subscribe(
        TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes=attributes, ReturnSubscriptionArn=True
    )["SubscriptionArn"])  # fmt: skip


# ---------------------------------------------------------------------------------------------------- envelopes


@pytest.mark.parametrize("version", ["1", "2"])
def test_notification_envelope(srv: ServerThread, owner: Clients, version: str) -> None:
    topic = owner.sns.create_topic(Name=f"envelope-{version}", Attributes={"SignatureVersion": version})["TopicArn"]
    url, arn = owner.queue(f"envelope-{version}")
    sub = subscribe(owner, topic, arn)
    plain = owner.sns.publish(TopicArn=topic, Message="no subject")["MessageId"]
    attributes = {
        "attr1": {"DataType": "Number", "StringValue": "99.12"},
        "bin": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"},
        "list": {"DataType": "String.Array", "StringValue": '["a", 1, true]'},
        "custom": {"DataType": "String.custom", "StringValue": 'ö§a1"_!?,. £$-'},
    }
    with_subject = owner.sns.publish(
        TopicArn=topic, Subject="a subject", Message='{"json": "inside"}', MessageAttributes=attributes
    )["MessageId"]
    messages = {json.loads(m["Body"])["MessageId"]: m for m in owner.receive(url)}
    assert set(messages) == {plain, with_subject}
    cert = cert_pem(srv)
    for message_id, subject in ((plain, None), (with_subject, "a subject")):
        message = messages[message_id]
        assert "MessageAttributes" not in message and "MD5OfMessageAttributes" not in message
        body = json.loads(message["Body"])
        expected = ["Type", "MessageId", "TopicArn", "Message", "Timestamp", *SIGNED_KEYS, "UnsubscribeURL"]
        if subject is not None:
            expected.insert(3, "Subject")
            expected.append("MessageAttributes")
        assert ordered_keys(message["Body"]) == expected
        assert body["Type"] == "Notification" and body["TopicArn"] == topic and body.get("Subject") == subject
        assert body["SignatureVersion"] == version and TIMESTAMP.fullmatch(body["Timestamp"])
        assert body["SigningCertURL"].startswith(srv.endpoint_url) and body["SigningCertURL"].endswith(".pem")
        assert body["UnsubscribeURL"] == f"{srv.endpoint_url}/?Action=Unsubscribe&SubscriptionArn={sub}"
        verify_as_subscriber(body, cert)
        assert message["Attributes"]["SenderId"] == "AIDAIT2UOQQY3AUEKVGXU"
    body = json.loads(messages[with_subject]["Body"])
    assert body["Message"] == '{"json": "inside"}'
    assert body["MessageAttributes"] == {
        "attr1": {"Type": "Number", "Value": "99.12"},
        "bin": {"Type": "Binary", "Value": "AgME"},
        "list": {"Type": "String.Array", "Value": '["a", 1, true]'},
        "custom": {"Type": "String.custom", "Value": 'ö§a1"_!?,. £$-'},
    }


def test_raw_delivery(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="raw")["TopicArn"]
    url, arn = owner.queue("raw")
    subscribe(owner, topic, arn, RawMessageDelivery="true")
    owner.sns.publish(TopicArn=topic, Message="Test msg", MessageAttributes={
        "attr1": {"DataType": "Number", "StringValue": "99.12"},
    })  # fmt: skip
    [message] = owner.receive(url)
    assert message["Body"] == "Test msg"
    assert message["MessageAttributes"] == {"attr1": {"DataType": "Number", "StringValue": "99.12"}}
    assert message["MD5OfMessageAttributes"] == "d302007e9aa062660afc85fd0a482472"  # recorded
    two = {
        "attr1": {"DataType": "Number", "StringValue": "99.12"},
        "attr2": {"DataType": "Number", "StringValue": "109.12"},
    }
    owner.sns.publish(TopicArn=topic, Message="two", MessageAttributes=two)
    [message] = owner.receive(url)
    assert message["MD5OfMessageAttributes"] == "9b720b3af309c1c4b0d395c53b08c502"  # recorded
    owner.sns.publish(TopicArn=topic, Message="kinds", MessageAttributes={
        "s": {"DataType": "String", "StringValue": "an-attribute-value"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"},
        "a": {"DataType": "String.Array", "StringValue": '["x"]'},
        "n": {"DataType": "Number.float", "StringValue": "1.5"},
    })  # fmt: skip
    [message] = owner.receive(url)
    assert message["MessageAttributes"] == {
        "s": {"DataType": "String", "StringValue": "an-attribute-value"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"},
        "a": {"DataType": "String.Array", "StringValue": '["x"]'},
        "n": {"DataType": "Number.float", "StringValue": "1.5"},
    }
    owner.sns.publish(TopicArn=topic, Message="bare")
    [message] = owner.receive(url)
    assert message["Body"] == "bare" and "MessageAttributes" not in message and "MD5OfMessageAttributes" not in message


def test_raw_delivery_of_more_than_ten_attributes_fails_to_the_dead_letter_queue(
    srv: ServerThread, owner: Clients
) -> None:
    # SNS Developer Guide, "Amazon SNS message attributes": more than 10 attributes to a raw SQS subscription is a
    # client-side error; the envelope carries them all.
    topic = owner.sns.create_topic(Name="many-attributes")["TopicArn"]
    raw_url, raw_arn = owner.queue("many-raw")
    envelope_url, envelope_arn = owner.queue("many-envelope")
    dlq_url, dlq_arn = owner.queue("many-dlq")
    subscribe(
        owner, topic, raw_arn, RawMessageDelivery="true", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn})
    )
    subscribe(owner, topic, envelope_arn)
    eleven = {f"a{i}": {"DataType": "String", "StringValue": str(i)} for i in range(11)}
    owner.sns.publish(TopicArn=topic, Message="eleven", MessageAttributes=eleven)
    assert owner.receive(raw_url) == []
    [dead] = owner.receive(dlq_url)
    assert dead["Body"] == "eleven" and "MessageAttributes" not in dead  # sqsemu: the raw body, no attributes
    [delivered] = owner.receive(envelope_url)
    assert len(json.loads(delivered["Body"])["MessageAttributes"]) == 11
    ten = {f"a{i}": {"DataType": "String", "StringValue": str(i)} for i in range(10)}
    owner.sns.publish(TopicArn=topic, Message="ten", MessageAttributes=ten)
    [message] = owner.receive(raw_url)
    assert len(message["MessageAttributes"]) == 10
    counts = srv.call(lambda: srv.app.sns.fanout.counts(srv.app.sns.topics.by_arn[topic]).as_dict())  # type: ignore[attr-defined]
    assert (counts["failed"], counts["dead_lettered"], counts["delivered"]) == (1, 1, 3)


def test_message_structure_json_per_protocol(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="structured")["TopicArn"]
    envelope_url, envelope_arn = owner.queue("structured-envelope")
    raw_url, raw_arn = owner.queue("structured-raw")
    subscribe(owner, topic, envelope_arn)
    subscribe(owner, topic, raw_arn, RawMessageDelivery="true")
    attrs = {"attr1": {"DataType": "String", "StringValue": "v"}}
    owner.sns.publish(
        TopicArn=topic, MessageStructure="json", MessageAttributes=attrs,
        Message=json.dumps({"default": "default field", "sqs": json.dumps({"field": "value"})}),
    )  # fmt: skip
    [envelope] = owner.receive(envelope_url)
    body = json.loads(envelope["Body"])
    assert body["Message"] == '{"field": "value"}'
    assert "MessageAttributes" not in body  # "sent only when the message structure is String, not JSON"
    [raw] = owner.receive(raw_url)
    assert raw["Body"] == '{"field": "value"}' and "MessageAttributes" not in raw
    owner.sns.publish(  # a key whose value is not a string is ignored: the default goes (recorded)
        TopicArn=topic, MessageStructure="json", Message=json.dumps({"default": "default field", "sqs": {"f": "v"}})
    )
    assert json.loads(owner.receive(envelope_url)[0]["Body"])["Message"] == "default field"
    assert owner.receive(raw_url)[0]["Body"] == "default field"


def test_trace_header_is_forwarded(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="traced")["TopicArn"]
    url, arn = owner.queue("traced")
    subscribe(owner, topic, arn)
    header = "Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1"

    def add_header(request: Any, **_: Any) -> None:
        request.headers["X-Amzn-Trace-Id"] = header

    owner.sns.meta.events.register("before-send.sns.Publish", add_header)
    owner.sns.publish(TopicArn=topic, Message="traced")
    [message] = owner.receive(url)
    assert message["Attributes"]["AWSTraceHeader"] == header


# ---------------------------------------------------------------------------------------------------- FIFO


@pytest.mark.parametrize("content_based", [True, False])
def test_fifo_topic_to_fifo_queue(srv: ServerThread, owner: Clients, content_based: bool) -> None:
    name = f"fifo-{content_based}".lower()
    attributes = {"FifoTopic": "true", "ContentBasedDeduplication": str(content_based).lower()}
    topic = owner.sns.create_topic(Name=f"{name}.fifo", Attributes=attributes)["TopicArn"]
    url, arn = owner.queue(f"{name}.fifo", FifoQueue="true")
    subscribe(owner, topic, arn)
    dedup = {} if content_based else {"MessageDeduplicationId": "message-deduplication-id-1"}
    answer = owner.sns.publish(TopicArn=topic, Message="Test", MessageGroupId="message-group-id-1", **dedup)
    [message] = owner.receive(url)
    body = json.loads(message["Body"])
    assert ordered_keys(message["Body"]) == [
        "Type",
        "MessageId",
        "SequenceNumber",
        "TopicArn",
        "Message",
        "Timestamp",
        "UnsubscribeURL",
    ]  # recorded: a FIFO topic's notifications are not signed
    assert (body["MessageId"], body["SequenceNumber"]) == (answer["MessageId"], answer["SequenceNumber"])
    assert message["Attributes"]["MessageGroupId"] == "message-group-id-1"
    expected_dedup = hashlib.sha256(b"Test").hexdigest() if content_based else "message-deduplication-id-1"
    assert message["Attributes"]["MessageDeduplicationId"] == expected_dedup
    # the same message again within 5 minutes: accepted, not delivered, answered with the first MessageId
    again = owner.sns.publish(TopicArn=topic, Message="Test", MessageGroupId="message-group-id-1", **dedup)
    assert again["MessageId"] == answer["MessageId"]
    assert owner.receive(url) == []
    srv.advance(299.999)
    owner.sns.publish(TopicArn=topic, Message="Test", MessageGroupId="message-group-id-1", **dedup)
    assert owner.receive(url) == []
    srv.advance(0.001)  # the interval is over
    later = owner.sns.publish(TopicArn=topic, Message="Test", MessageGroupId="message-group-id-1", **dedup)
    assert later["MessageId"] != answer["MessageId"]
    assert [json.loads(m["Body"])["MessageId"] for m in owner.receive(url)] == [later["MessageId"]]


def test_fifo_order_is_kept_within_each_group(owner: Clients) -> None:
    fifo = {"FifoTopic": "true", "ContentBasedDeduplication": "true"}
    topic = owner.sns.create_topic(Name="ordered.fifo", Attributes=fifo)["TopicArn"]
    url, arn = owner.queue("ordered.fifo", FifoQueue="true")
    subscribe(owner, topic, arn, RawMessageDelivery="true")
    sent: dict[str, list[str]] = {"g1": [], "g2": []}
    for i in range(6):
        group = "g1" if i % 2 == 0 else "g2"
        owner.sns.publish(TopicArn=topic, Message=f"{group}-{i}", MessageGroupId=group)
        sent[group].append(f"{group}-{i}")
    entries = [{"Id": str(i), "Message": f"g1-batch-{i}", "MessageGroupId": "g1"} for i in range(3)]
    answer = owner.sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=entries)
    assert answer["Failed"] == [] and len(answer["Successful"]) == 3
    sent["g1"] += [f"g1-batch-{i}" for i in range(3)]
    received: dict[str, list[str]] = {"g1": [], "g2": []}
    for message in owner.receive(url, 20):
        received[message["Attributes"]["MessageGroupId"]].append(message["Body"])
        assert message["Attributes"]["MessageDeduplicationId"] == hashlib.sha256(message["Body"].encode()).hexdigest()
    assert received == sent


def test_fifo_topic_to_standard_queue(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="tostd.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    url, arn = owner.queue("tostd")
    subscribe(owner, topic, arn)
    owner.sns.publish(TopicArn=topic, Message="Test", MessageGroupId="g", MessageDeduplicationId="d")
    [message] = owner.receive(url)
    assert "MessageGroupId" not in message["Attributes"] and "MessageDeduplicationId" not in message["Attributes"]
    assert ordered_keys(message["Body"]) == [
        "Type",
        "MessageId",
        "SequenceNumber",
        "TopicArn",
        "Message",
        "Timestamp",
        "UnsubscribeURL",
    ]
    owner.sns.publish(TopicArn=topic, Message="Test", MessageGroupId="g", MessageDeduplicationId="d")
    assert owner.receive(url) == []  # deduplicated by the topic


def test_standard_topic_group_id_reaches_standard_queues(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="fair")["TopicArn"]
    url, arn = owner.queue("fair")
    subscribe(owner, topic, arn)
    owner.sns.publish(TopicArn=topic, Message="grouped", MessageGroupId="my-group-id-1")
    [message] = owner.receive(url)
    assert message["Attributes"]["MessageGroupId"] == "my-group-id-1"  # recorded (fair queues)
    _, fifo_arn = owner.queue("fair.fifo", FifoQueue="true")
    with pytest.raises(ClientError) as exc:
        owner.sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=fifo_arn)
    assert exc.value.response["Error"]["Message"] == (
        "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS "
        "topics"
    )


# ---------------------------------------------------------------------------------------------------- failures


@pytest.mark.parametrize("raw", [False, True])
def test_deleted_queue_goes_to_the_subscription_dead_letter_queue(srv: ServerThread, owner: Clients, raw: bool) -> None:
    topic = owner.sns.create_topic(Name=f"redrive-{raw}".lower())["TopicArn"]
    url, arn = owner.queue(f"redrive-{raw}".lower())
    dlq_url, dlq_arn = owner.queue(f"redrive-dlq-{raw}".lower())
    sub = subscribe(owner, topic, arn, RawMessageDelivery=str(raw).lower())
    owner.sns.set_subscription_attributes(
        SubscriptionArn=sub, AttributeName="RedrivePolicy", AttributeValue=json.dumps({"deadLetterTargetArn": dlq_arn})
    )
    owner.sqs.delete_queue(QueueUrl=url)
    attributes = {"attr1": {"DataType": "Number", "StringValue": "111"},
                  "attr2": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"}}  # fmt: skip
    message_id = owner.sns.publish(TopicArn=topic, Message="test_dlq_after_sqs_endpoint_deleted",
                                   MessageAttributes=attributes)["MessageId"]  # fmt: skip
    [dead] = owner.receive(dlq_url)
    if raw:
        assert dead["Body"] == "test_dlq_after_sqs_endpoint_deleted"
        assert dead["MessageAttributes"] == {
            "attr1": {"DataType": "Number", "StringValue": "111"},
            "attr2": {"DataType": "Binary", "BinaryValue": b"\x02\x03\x04"},
        }
    else:
        body = json.loads(dead["Body"])
        assert body["MessageId"] == message_id and body["Message"] == "test_dlq_after_sqs_endpoint_deleted"
        assert body["MessageAttributes"]["attr2"] == {"Type": "Binary", "Value": "AgME"}
        verify_as_subscriber(body, cert_pem(srv))
    # the subscription stays (recorded); without a dead-letter queue a failure is dropped and counted
    assert [s["SubscriptionArn"] for s in owner.sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]] == [
        sub
    ]
    owner.sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RedrivePolicy", AttributeValue="")
    owner.sns.publish(TopicArn=topic, Message="dropped")
    assert owner.receive(dlq_url) == []
    counts = srv.call(lambda: srv.app.sns.fanout.counts(srv.app.sns.topics.by_arn[topic]).as_dict())  # type: ignore[attr-defined]
    assert (counts["failed"], counts["dead_lettered"]) == (2, 1)


# ---------------------------------------------------------------------------------------------------- accounts


def test_topic_owner_subscribing_another_accounts_queue_waits_for_its_confirmation(
    srv: ServerThread, owner: Clients, other: Clients
) -> None:
    topic = owner.sns.create_topic(Name="crossaccount")["TopicArn"]
    url, arn = other.queue("crossaccount-theirs")
    assert arn == f"arn:aws:sqs:{REGION}:{OTHER}:crossaccount-theirs"
    answer = owner.sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    assert answer["SubscriptionArn"] == "pending confirmation"
    [listed] = owner.sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert listed["SubscriptionArn"] == "PendingConfirmation"
    owner.sns.publish(TopicArn=topic, Message="before confirmation")
    [confirmation] = other.receive(url)
    document = json.loads(confirmation["Body"])
    assert ordered_keys(confirmation["Body"]) == [
        "Type",
        "MessageId",
        "Token",
        "TopicArn",
        "Message",
        "SubscribeURL",
        "Timestamp",
        *SIGNED_KEYS,
    ]
    assert document["Type"] == "SubscriptionConfirmation" and document["TopicArn"] == topic
    assert document["Message"] == (
        f"You have chosen to subscribe to the topic {topic}.\nTo confirm the subscription, visit the SubscribeURL "
        "included in this message."
    )
    assert document["SubscribeURL"] == (
        f"{srv.endpoint_url}/?Action=ConfirmSubscription&TopicArn={topic}&Token={document['Token']}"
    )
    verify_as_subscriber(document, cert_pem(srv))
    confirmed = other.sns.confirm_subscription(TopicArn=topic, Token=document["Token"])["SubscriptionArn"]
    assert confirmed.startswith(topic + ":")
    attributes = owner.sns.get_subscription_attributes(SubscriptionArn=confirmed)["Attributes"]
    assert attributes["PendingConfirmation"] == "false" and attributes["Owner"] == ACCOUNT
    owner.sns.publish(TopicArn=topic, Message="after confirmation")
    assert [json.loads(m["Body"])["Message"] for m in other.receive(url)] == ["after confirmation"]


def test_subscribe_url_confirms(srv: ServerThread, owner: Clients, other: Clients) -> None:
    topic = owner.sns.create_topic(Name="subscribeurl")["TopicArn"]
    url, arn = other.queue("subscribeurl-theirs")
    owner.sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    [confirmation] = other.receive(url)
    with urllib.request.urlopen(json.loads(confirmation["Body"])["SubscribeURL"], timeout=10) as answer:
        text = answer.read().decode()
    arns = re.findall(r"<SubscriptionArn>([^<]+)</SubscriptionArn>", text)
    assert text.startswith("<ConfirmSubscriptionResponse") and len(arns) == 1 and arns[0].startswith(topic + ":")
    assert (
        owner.sns.get_subscription_attributes(SubscriptionArn=arns[0])["Attributes"]["PendingConfirmation"] == "false"
    )


def test_queue_owner_subscribing_to_another_accounts_topic_is_confirmed_at_once(owner: Clients, other: Clients) -> None:
    topic = owner.sns.create_topic(Name="shared-topic")["TopicArn"]
    owner.sns.add_permission(TopicArn=topic, Label="subscribe", AWSAccountId=[OTHER], ActionName=["Subscribe"])
    url, arn = other.queue("shared-theirs")
    sub = subscribe(other, topic, arn)
    attributes = other.sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert attributes["PendingConfirmation"] == "false" and attributes["Owner"] == OTHER
    assert attributes["SubscriptionPrincipal"] == f"arn:aws:iam::{OTHER}:root"
    assert other.receive(url) == []  # no confirmation to read
    owner.sns.publish(TopicArn=topic, Message="to the subscriber")
    assert [json.loads(m["Body"])["Message"] for m in other.receive(url)] == ["to the subscriber"]
    assert [s["SubscriptionArn"] for s in other.sns.list_subscriptions()["Subscriptions"]] == [sub]
    assert owner.sns.list_subscriptions()["Subscriptions"] == []  # ListSubscriptions lists the caller's own


# ---------------------------------------------------------------------------------------------------- publishing


def test_publish_batch_delivers_its_successful_entries(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="batched")["TopicArn"]
    url, arn = owner.queue("batched")
    subscribe(owner, topic, arn, RawMessageDelivery="true")
    two = {
        "attr1": {"DataType": "Number", "StringValue": "99.12"},
        "attr2": {"DataType": "Number", "StringValue": "109.12"},
    }
    answer = owner.sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "1", "Message": "Test Message with two attributes", "Subject": "Subject", "MessageAttributes": two},
        {"Id": "2", "Message": "Test Message with one attribute", "MessageAttributes": {
            "attr1": {"DataType": "Number", "StringValue": "19.12"}}},
        {"Id": "3", "Message": ""},
        {"Id": "4", "Message": json.dumps({"default": "test default", "sqs": "test sqs"}), "MessageStructure": "json"},
    ])  # fmt: skip
    assert [entry["Id"] for entry in answer["Successful"]] == ["1", "2", "4"]
    assert answer["Failed"] == [
        {"Id": "3", "Code": "InvalidParameter", "Message": "Invalid parameter: Empty message", "SenderFault": True}
    ]
    by_body = {m["Body"]: m for m in owner.receive(url)}
    assert set(by_body) == {"Test Message with two attributes", "Test Message with one attribute", "test sqs"}
    assert by_body["Test Message with two attributes"]["MD5OfMessageAttributes"] == "9b720b3af309c1c4b0d395c53b08c502"
    assert by_body["Test Message with one attribute"]["MD5OfMessageAttributes"] == "1f07082409022a373fa2a2601f82b3cb"
    with pytest.raises(ClientError) as exc:  # a whole-request error delivers nothing
        owner.sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
            {"Id": "1", "Message": "fine"},
            {"Id": "2", "Message": "bad", "MessageAttributes": {"a": {"DataType": "String", "StringValue": ""}}},
        ])  # fmt: skip
    assert exc.value.response["Error"]["Code"] == "ParameterValueInvalid"
    assert owner.receive(url) == []


def test_message_size_limit_counts_body_and_attributes(owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="sized")["TopicArn"]
    url, arn = owner.queue("sized")
    subscribe(owner, topic, arn, RawMessageDelivery="true")
    attributes = {"attr1": {"DataType": "Number", "StringValue": "1"}}
    body = "a" * (262144 - len("attr1") - len("Number") - len("1"))
    owner.sns.publish(TopicArn=topic, Message=body, MessageAttributes=attributes)
    with pytest.raises(ClientError) as exc:
        owner.sns.publish(TopicArn=topic, Message=body + "a", MessageAttributes=attributes)
    assert exc.value.response["Error"]["Message"] == "Invalid parameter: Message too long"
    [message] = owner.receive(url)
    assert message["Body"] == body
    owner.sns.set_topic_attributes(TopicArn=topic, AttributeName="MaximumMessageSize", AttributeValue="1048576")
    owner.sns.publish(TopicArn=topic, Message="b" * 1_048_576)
    assert len(owner.receive(url)[0]["Body"]) == 1_048_576


def test_delivery_happens_after_the_publish_answer(srv: ServerThread, owner: Clients) -> None:
    topic = owner.sns.create_topic(Name="afterwards")["TopicArn"]
    url, arn = owner.queue("afterwards")
    subscribe(owner, topic, arn, RawMessageDelivery="true")
    app: Any = srv.app

    def publish_and_look() -> int:
        queue = app.broker.resolve_arn(arn)
        call = SNSCall(ACCOUNT, REGION, f"arn:aws:iam::{ACCOUNT}:root", srv.endpoint_url)
        answer = app.sns.answer("Publish", call, [("TopicArn", topic), ("Message", "later")], "request-id")
        assert b"<MessageId>" in answer
        return int(
            app.broker.get_queue_attributes(queue, ["ApproximateNumberOfMessages"])["ApproximateNumberOfMessages"]
        )

    assert srv.call(publish_and_look) == 0  # answered, not yet delivered
    assert [m["Body"] for m in owner.receive(url)] == ["later"]  # the next request finds it
