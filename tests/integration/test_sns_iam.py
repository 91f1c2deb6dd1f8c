"""SNS under --auth iam, over real sockets with signed boto3 clients: identity policies allow or refuse SNS calls
with AWS's AuthorizationError, a topic policy (AddPermission) lets another account publish, unsigned SNS calls are
refused as SQS calls are, and SNS delivers into a queue only where the queue's policy grants the topic (refused
deliveries to the subscription's dead-letter queue or dropped, counted and logged; delivered with one warning per
subscription without --auth iam)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import botocore
import pytest
from botocore.config import Config as BotoConfig
from harness import ServerProcess, error_of, http_get

from sqsemu import ServerThread
from sqsemu.config import Config, Credential
from sqsemu.testing.boto import new_client

pytestmark = pytest.mark.integration

A, B = "111111111111", "222222222222"
REGION = "us-east-1"
PUBLISH_OWN = json.dumps(
    {"Version": "2012-10-17",
     "Statement": [{"Effect": "Allow", "Action": ["sns:Publish"], "Resource": f"arn:aws:sns:*:{A}:*"}]}
)  # fmt: skip
PUBLISH_ANY = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sns:Publish", "Resource": "*"}]}
)
KEYS = {  # name: (access key id, principal, policies, account)
    "root_a": ("AKIDSNSROOTA", None, [], A),
    "root_b": ("AKIDSNSROOTB", None, [], B),
    "publisher": ("AKIDSNSPUB", f"arn:aws:iam::{A}:user/publisher", [PUBLISH_OWN], A),
    "nobody": ("AKIDSNSNOBODY", f"arn:aws:iam::{A}:user/nobody", [], A),
    "sender_b": ("AKIDSNSSENDERB", f"arn:aws:iam::{B}:user/sender", [PUBLISH_ANY], B),
}


def client(endpoint: str, service: str, key: str | None) -> Any:
    """A boto3 client of ``service`` signed with ``key``'s credentials (unsigned when None), no retries."""
    config = BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}, read_timeout=30)
    if key is None:
        config = config.merge(BotoConfig(signature_version=botocore.UNSIGNED))
    key_id = KEYS[key][0] if key is not None else "unsigned"
    return new_client(service, endpoint_url=endpoint, region_name=REGION, aws_access_key_id=key_id,
                      aws_secret_access_key=f"secret-{key_id}", config=config)  # fmt: skip


def credentials() -> tuple[Credential, ...]:
    return tuple(
        Credential(key, f"secret-{key}", account, principal, tuple(policies))
        for key, principal, policies, account in KEYS.values()
    )


@pytest.fixture(scope="module")
def iam_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("sns-iam")
    lines = ['[server]\nauth = "iam"\naccount_id = "111111111111"\n']
    for key, principal, policies, account in KEYS.values():
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "secret-{key}"\n')
        lines.append(f'account = "{account}"\n')
        if principal:
            lines.append(f'principal = "{principal}"\n')
        if policies:
            lines.append(f"policies = {json.dumps(policies)}\n")
    (tmp / "sqsemu.toml").write_text("".join(lines))
    with ServerProcess(["--config", str(tmp / "sqsemu.toml")]) as srv:
        yield srv


@pytest.fixture
def as_(iam_server: ServerProcess) -> Callable[..., Any]:
    def make(who: str, service: str = "sns") -> Any:
        return client(iam_server.endpoint_url, service, who)

    return make


def topic_of(root: Any) -> str:
    arn: str = root.create_topic(Name=f"orders-{uuid.uuid4().hex[:8]}")["TopicArn"]
    return arn


def test_an_identity_policy_allows_publishing_and_its_absence_refuses(
    as_: Callable[..., Any], iam_server: ServerProcess
) -> None:
    arn = topic_of(as_("root_a"))
    assert as_("publisher").publish(TopicArn=arn, Message="hello")["MessageId"]
    batch = as_("publisher").publish_batch(TopicArn=arn, PublishBatchRequestEntries=[{"Id": "1", "Message": "m"}])
    assert [entry["Id"] for entry in batch["Successful"]] == ["1"]
    code, status, message = error_of(lambda: as_("nobody").publish(TopicArn=arn, Message="hello"))
    assert (code, status) == ("AuthorizationError", 403)
    assert message == (
        f"User: arn:aws:iam::{A}:user/nobody is not authorized to perform: SNS:Publish on resource: {arn} "
        "because no identity-based policy allows the SNS:Publish action"
    )
    code, status, message = error_of(lambda: as_("publisher").list_topics())  # its policy allows Publish only
    assert (code, status) == ("AuthorizationError", 403)
    assert f"SNS:ListTopics on resource: arn:aws:sns:{REGION}:{A}:*" in message
    assert "denied=sns:Publish identity=arn:aws:iam::111111111111:user/nobody" in iam_server.log_tail(20_000)
    status_code, _, body = http_get(f"{iam_server.endpoint_url}/metrics", timeout=10)
    assert status_code == 200
    assert 'sqsemu_access_denied_total{action="sns:Publish"}' in body.decode()


def test_another_account_publishes_once_the_topic_policy_lets_it(as_: Callable[..., Any]) -> None:
    root = as_("root_a")
    arn = topic_of(root)
    code, status, message = error_of(lambda: as_("sender_b").publish(TopicArn=arn, Message="x"))
    assert (code, status) == ("AuthorizationError", 403)
    assert message == (
        f"User: arn:aws:iam::{B}:user/sender is not authorized to perform: SNS:Publish on resource: {arn} "
        "because no resource-based policy allows the SNS:Publish action"
    )
    root.add_permission(TopicArn=arn, Label="b-publishes", AWSAccountId=[B], ActionName=["Publish"])
    assert as_("sender_b").publish(TopicArn=arn, Message="x")["MessageId"]
    assert as_("root_b").publish(TopicArn=arn, Message="x")["MessageId"]
    code, _, _ = error_of(lambda: as_("sender_b").get_topic_attributes(TopicArn=arn))  # granted Publish only
    assert code == "AuthorizationError"
    root.remove_permission(TopicArn=arn, Label="b-publishes")
    assert error_of(lambda: as_("sender_b").publish(TopicArn=arn, Message="x"))[:2] == ("AuthorizationError", 403)


def test_unsigned_sns_calls_are_refused_as_sqs_calls_are(as_: Callable[..., Any], iam_server: ServerProcess) -> None:
    unsigned_sns = client(iam_server.endpoint_url, "sns", None)
    unsigned_sqs = client(iam_server.endpoint_url, "sqs", None)
    sns_error = error_of(lambda: unsigned_sns.list_topics())
    assert sns_error == ("MissingAuthenticationToken", 403, "Request is missing Authentication Token")
    assert sns_error == error_of(lambda: unsigned_sqs.list_queues())
    assert error_of(lambda: unsigned_sns.publish(TopicArn=f"arn:aws:sns:{REGION}:{A}:x", Message="m"))[0] == (
        "MissingAuthenticationToken"
    )


# ------------------------------------------------------------------------------------------- delivery into queues


def grant(queue_arn: str, topic_arn: str) -> str:
    """The documented queue policy ("Subscribing an Amazon SQS queue to an Amazon SNS topic")."""
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
        "Resource": queue_arn, "Condition": {"ArnEquals": {"aws:SourceArn": topic_arn}},
    }]})  # fmt: skip


class Fanned:
    """A topic of account A with queues subscribed to it, made through signed clients of ``srv``."""

    def __init__(self, srv: ServerThread, key: str | None) -> None:
        self.srv = srv
        self.sns = client(srv.endpoint_url, "sns", key)
        self.sqs = client(srv.endpoint_url, "sqs", key)
        self.topic = topic_of(self.sns)

    def queue(self, name: str, granted: bool, dlq: str | None = None) -> tuple[str, str]:
        """``(url, arn)`` of a new queue subscribed to the topic (its policy granting the topic when
        ``granted``; ``dlq``: the subscription's dead-letter queue ARN)."""
        url = self.sqs.create_queue(QueueName=f"{name}-{uuid.uuid4().hex[:6]}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        if granted:
            self.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": grant(arn, self.topic)})
        attributes = {"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq})} if dlq else {}
        self.sns.subscribe(TopicArn=self.topic, Protocol="sqs", Endpoint=arn, Attributes=attributes)
        return url, arn

    def bare_queue(self, name: str, granted: bool) -> tuple[str, str]:
        url = self.sqs.create_queue(QueueName=f"{name}-{uuid.uuid4().hex[:6]}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        if granted:
            self.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": grant(arn, self.topic)})
        return url, arn

    def messages(self, url: str, wait: int = 0) -> list[str]:
        found = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait)
        return [json.loads(m["Body"])["Message"] for m in found.get("Messages", [])]

    def all_messages(self, url: str, count: int) -> list[str]:
        """``count`` messages of the queue, long polling (at most 5 polls)."""
        found: list[str] = []
        for _ in range(5):
            found += self.messages(url, wait=10)
            if len(found) >= count:
                break
        return found

    def counts(self) -> dict[str, int]:
        app: Any = self.srv.app
        return self.srv.call(lambda: app.sns.fanout.counters[self.topic].as_dict())


def test_iam_refuses_a_delivery_the_queue_policy_does_not_grant(caplog: pytest.LogCaptureFixture) -> None:
    config = Config(host="127.0.0.1", auth="iam", account_id=A, credentials=credentials())
    with caplog.at_level(logging.INFO, logger="sqsemu.sns"), ServerThread(config) as srv:
        fan = Fanned(srv, "root_a")
        dlq_url, dlq_arn = fan.bare_queue("dlq", granted=True)
        _, closed_dlq = fan.bare_queue("closed-dlq", granted=False)
        refused_url, refused_arn = fan.queue("refused", granted=False, dlq=dlq_arn)
        dropped_url, _ = fan.queue("dropped", granted=False)
        both_url, _ = fan.queue("both-refused", granted=False, dlq=closed_dlq)
        granted_url, _ = fan.queue("granted", granted=True)  # last: its delivery ends the publication's fan-out
        fan.sns.publish(TopicArn=fan.topic, Message="hello")
        assert fan.messages(granted_url, wait=10) == ["hello"]
        assert fan.messages(refused_url) == fan.messages(dropped_url) == fan.messages(both_url) == []
        assert fan.messages(dlq_url) == ["hello"]  # the notification as the queue would have had it
        assert fan.counts() == {"published": 1, "delivered": 1, "filtered": 0, "failed": 3, "dead_lettered": 1}
    logged = caplog.text
    assert f"the queue {refused_arn} has no Policy, so it lets no topic send to it; add this statement" in logged
    assert f'"Principal":{{"Service":"sns.amazonaws.com"}},"Action":"sqs:SendMessage","Resource":"{refused_arn}"' in (
        logged
    )
    assert f'"Condition":{{"ArnEquals":{{"aws:SourceArn":"{fan.topic}"}}}}' in logged
    assert "not delivered and dropped: delivery refused" in logged
    assert f"its dead-letter queue {closed_dlq} refused it" in logged


def test_the_default_mode_delivers_and_warns_once_per_subscription(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sqsemu.sns"), ServerThread(Config(host="127.0.0.1")) as srv:
        fan = Fanned(srv, None)
        url, arn = fan.queue("open", granted=False)
        granted_url, _ = fan.queue("granted", granted=True)
        fan.sns.publish(TopicArn=fan.topic, Message="one")
        fan.sns.publish(TopicArn=fan.topic, Message="two")
        assert sorted(fan.all_messages(granted_url, 2)) == ["one", "two"]
        assert sorted(fan.all_messages(url, 2)) == ["one", "two"]
        assert fan.counts()["delivered"] == 4
    warnings = [r.getMessage() for r in caplog.records if "AWS would not deliver" in r.getMessage()]
    assert len(warnings) == 1
    assert arn in warnings[0] and '"Principal":{"Service":"sns.amazonaws.com"}' in warnings[0]


def test_iam_sends_a_subscription_confirmation_only_where_the_queue_policy_grants_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = Config(host="127.0.0.1", auth="iam", account_id=A, credentials=credentials())
    with caplog.at_level(logging.WARNING, logger="sqsemu.sns"), ServerThread(config) as srv:
        fan = Fanned(srv, "root_a")
        sqs_b = client(srv.endpoint_url, "sqs", "root_b")
        closed_url = sqs_b.create_queue(QueueName="closed-b")["QueueUrl"]
        open_url = sqs_b.create_queue(QueueName="open-b")["QueueUrl"]
        open_arn = f"arn:aws:sqs:{REGION}:{B}:open-b"
        sqs_b.set_queue_attributes(QueueUrl=open_url, Attributes={"Policy": grant(open_arn, fan.topic)})
        for name in ("closed-b", "open-b"):  # the topic owner subscribes account B's queues: pending
            answer = fan.sns.subscribe(TopicArn=fan.topic, Protocol="sqs", Endpoint=f"arn:aws:sqs:{REGION}:{B}:{name}")
            assert answer["SubscriptionArn"] == "pending confirmation"
        received = sqs_b.receive_message(QueueUrl=open_url, WaitTimeSeconds=5)["Messages"]
        assert json.loads(received[0]["Body"])["Type"] == "SubscriptionConfirmation"
        assert "Messages" not in sqs_b.receive_message(QueueUrl=closed_url)
    assert f"its SubscriptionConfirmation was not sent to arn:aws:sqs:{REGION}:{B}:closed-b" in caplog.text


def test_a_subscribe_url_and_an_unsubscribe_url_work_unsigned_under_iam() -> None:
    """SNS answers a ConfirmSubscription (the token proves the endpoint) and an Unsubscribe of a subscription
    confirmed without AuthenticateOnUnsubscribe without a signature (API Reference, "ConfirmSubscription",
    "Unsubscribe"): the SubscribeURL and UnsubscribeURL an email or HTTP subscriber gets are opened as they are. Any
    other unsigned SNS call is still refused."""
    import urllib.error
    import urllib.request

    config = Config(host="127.0.0.1", auth="iam", account_id=A, credentials=credentials())
    with ServerThread(config) as srv:
        sns = client(srv.endpoint_url, "sns", "root_a")
        topic = sns.create_topic(Name="mail")["TopicArn"]
        assert sns.subscribe(TopicArn=topic, Protocol="email", Endpoint="ops@example.com")["SubscriptionArn"] == (
            "pending confirmation"
        )
        sub = next(iter(srv.app.sns.topics.by_arn[topic].subscriptions.values()))  # type: ignore[attr-defined]
        confirm = f"{srv.endpoint_url}/?Action=ConfirmSubscription&TopicArn={topic}&Token={sub.token}"
        with urllib.request.urlopen(confirm, timeout=10) as answer:
            assert sub.arn.encode() in answer.read()
        listed = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
        assert [s["SubscriptionArn"] for s in listed] == [sub.arn]
        with pytest.raises(urllib.error.HTTPError) as refused:  # an unsigned call of any other action
            urllib.request.urlopen(f"{srv.endpoint_url}/?Action=ListTopics", timeout=10)
        assert refused.value.code == 403
        with urllib.request.urlopen(f"{srv.endpoint_url}/?Action=Unsubscribe&SubscriptionArn={sub.arn}", timeout=10):
            pass
        assert sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"] == []
