"""sqsemu.security.topics and AccessControl.check_sns: what each SNS call needs (IAM action, resource, condition
keys), SNS calls decided by the evaluator queues use (identity policies, the topic's Policy, cross-account rules,
AWS's AuthorizationError wording), and the queue policy grant SNS needs to deliver into a queue."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sqsemu.clock import ManualClock
from sqsemu.config import Config, Credential
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.security.iam import AccessControl
from sqsemu.security.topics import (
    SNS_ACTIONS,
    SNSNeeds,
    delivery_refusal,
    delivery_statement,
    resource_account,
    sns_denial_message,
    sns_needs,
    sns_request_keys,
)
from sqsemu.sns.model import default_topic_policy
from sqsemu.sns.service import ACTIONS

A, B = "111111111111", "222222222222"
REGION = "us-east-1"
TOPIC = f"arn:aws:sns:{REGION}:{A}:orders"
QUEUE = f"arn:aws:sqs:{REGION}:{B}:inbox"
NS_A, NS_B = Namespace(A, REGION), Namespace(B, REGION)


def policy(*statements: dict[str, Any], version: str = "2012-10-17") -> str:
    return json.dumps({"Version": version, "Statement": list(statements)})


def allow(action: str | list[str], resource: str = "*", **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def user(key: str, *policies: str, account: str = A, name: str = "alice") -> Credential:
    return Credential(key, "secret", account, f"arn:aws:iam::{account}:user/{name}", tuple(policies))


def control(*credentials: Credential) -> AccessControl:
    clock = ManualClock()
    return AccessControl(Config(auth="iam", account_id=A, credentials=credentials), Broker(clock), clock)


def decide(access: AccessControl, key: str, action: str, params: list[tuple[str, str]], caller: Namespace = NS_A,
           topic_policy: str | None = "default", owner: str | None = None) -> str | None:  # fmt: skip
    """None when allowed, else SNS's AuthorizationError message."""
    needs = sns_needs(action, params, caller.region, caller.account_id)
    assert needs is not None
    if topic_policy == "default":
        topic_policy = default_topic_policy(TOPIC, A)
    decision = access.check_sns(key, needs, caller, topic_policy, {"team": "a"}, owner,
                                sns_request_keys(action, params), {"scheme": "http"}, "req-1")  # fmt: skip
    return None if decision is None else sns_denial_message(decision)


def test_every_served_action_has_its_iam_action() -> None:
    assert set(ACTIONS) == set(SNS_ACTIONS)
    assert SNS_ACTIONS["PublishBatch"][0] == "sns:Publish"
    assert all(iam == f"sns:{name}" for name, (iam, _) in SNS_ACTIONS.items() if name != "PublishBatch")


@pytest.mark.parametrize(
    ("action", "params", "expected"),
    [
        ("Publish", [("TopicArn", TOPIC), ("Message", "m")], SNSNeeds(("sns:Publish",), TOPIC, TOPIC)),
        ("Publish", [("TargetArn", TOPIC)], SNSNeeds(("sns:Publish",), TOPIC, TOPIC)),
        ("Publish", [("PhoneNumber", "+15550100")], SNSNeeds(("sns:Publish",), "+15550100")),
        ("PublishBatch", [("TopicArn", TOPIC)], SNSNeeds(("sns:Publish",), TOPIC, TOPIC)),
        ("ListTopics", [], SNSNeeds(("sns:ListTopics",), f"arn:aws:sns:{REGION}:{A}:*")),
        ("ListSubscriptions", [], SNSNeeds(("sns:ListSubscriptions",), f"arn:aws:sns:{REGION}:{A}:*")),
        ("CreateTopic", [("Name", "new")], SNSNeeds(("sns:CreateTopic",), TOPIC[:-6] + "new", TOPIC[:-6] + "new")),
        (
            "CreateTopic", [("Name", "new"), ("Tags.member.1.Key", "k"), ("Tags.member.1.Value", "v")],
            SNSNeeds(("sns:CreateTopic", "sns:TagResource"), TOPIC[:-6] + "new", TOPIC[:-6] + "new"),
        ),
        ("TagResource", [("ResourceArn", TOPIC)], SNSNeeds(("sns:TagResource",), TOPIC, TOPIC)),
        ("Unsubscribe", [("SubscriptionArn", f"{TOPIC}:abc")], SNSNeeds(("sns:Unsubscribe",), TOPIC, TOPIC,
                                                                         f"{TOPIC}:abc")),
        ("ConfirmSubscription", [("TopicArn", TOPIC)], SNSNeeds(("sns:ConfirmSubscription",), TOPIC, TOPIC,
                                                                own=True)),
        ("Subscribe", [("TopicArn", "not-an-arn")], None),
        ("Unsubscribe", [("SubscriptionArn", TOPIC)], None),
        ("CreateTopic", [], None),
        ("Publish", [("TopicArn", f"arn:aws:sns:{REGION}:short:orders")], None),
        ("CreatePlatformApplication", [], None),
        (None, [], None),
    ],
)  # fmt: skip
def test_what_a_call_needs(action: str | None, params: list[tuple[str, str]], expected: SNSNeeds | None) -> None:
    assert sns_needs(action, params, REGION, A) == expected


def test_condition_keys_set_by_the_parameters() -> None:
    assert sns_request_keys("Subscribe", [("Protocol", "HTTPS"), ("Endpoint", "https://x.example.com/")]) == {
        "sns:protocol": ("https",), "sns:endpoint": ("https://x.example.com/",)
    }  # fmt: skip
    tags = [("Tags.member.2.Key", "Env"), ("Tags.member.2.Value", "prod"), ("Tags.member.1.Key", "team"),
            ("Tags.member.1.Value", "a")]  # fmt: skip
    assert sns_request_keys("TagResource", tags) == {
        "aws:tagkeys": ("team", "Env"), "aws:requesttag/team": ("a",), "aws:requesttag/env": ("prod",)
    }  # fmt: skip
    assert sns_request_keys("UntagResource", [("TagKeys.member.1", "a"), ("TagKeys.member.2", "b")]) == {
        "aws:tagkeys": ("a", "b")
    }  # fmt: skip
    assert sns_request_keys("Publish", tags) is None
    assert sns_request_keys("CreateTopic", [("Name", "x")]) is None


def test_whose_resource_a_call_is_on() -> None:
    on_topic = SNSNeeds(("sns:Publish",), TOPIC, TOPIC)
    assert resource_account(on_topic, B, None) == A
    on_sub = SNSNeeds(("sns:Unsubscribe",), TOPIC, TOPIC, f"{TOPIC}:x")
    assert resource_account(on_sub, B, B) == B  # B's own subscription of A's topic
    assert resource_account(on_sub, B, A) == A
    assert resource_account(SNSNeeds(("sns:ConfirmSubscription",), TOPIC, TOPIC, own=True), B, None) == B


def test_identity_policy_allows_and_its_absence_denies_with_aws_words() -> None:
    access = control(user("PUB", policy(allow("sns:Publish", TOPIC))), user("NONE"))
    params = [("TopicArn", TOPIC), ("Message", "m")]
    assert decide(access, "PUB", "Publish", params) is None
    assert decide(access, "PUB", "PublishBatch", [("TopicArn", TOPIC)]) is None
    assert decide(access, "NONE", "Publish", params) == (
        f"User: arn:aws:iam::{A}:user/alice is not authorized to perform: SNS:Publish on resource: {TOPIC} "
        "because no identity-based policy allows the SNS:Publish action"
    )
    assert access.denied == {"sns:Publish": 1}


def test_the_default_topic_policy_allows_no_caller_but_the_owner_root() -> None:
    # aws:SourceOwner is absent from a direct call: the default statement matches nobody
    access = control(Credential("ROOTA", "s", A), Credential("ROOTB", "s", B), user("NONE"))
    assert decide(access, "ROOTA", "Publish", [("TopicArn", TOPIC)]) is None
    assert decide(access, "NONE", "GetTopicAttributes", [("TopicArn", TOPIC)]) is not None
    assert decide(access, "ROOTB", "Publish", [("TopicArn", TOPIC)], caller=NS_B) == (
        f"User: arn:aws:iam::{B}:root is not authorized to perform: SNS:Publish on resource: {TOPIC} "
        "because no resource-based policy allows the SNS:Publish action"
    )


def test_cross_account_needs_both_policies() -> None:
    granted = policy(
        {"Sid": "b", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{B}:root"}, "Action": "SNS:Publish",
         "Resource": TOPIC},
        version="2008-10-17",
    )  # fmt: skip
    access = control(user("PUBB", policy(allow("sns:Publish")), account=B), user("NOPEB", account=B))
    params = [("TopicArn", TOPIC)]
    assert decide(access, "PUBB", "Publish", params, NS_B, granted) is None
    assert decide(access, "PUBB", "Publish", params, NS_B) is not None  # the default policy grants B nothing
    message = decide(access, "NOPEB", "Publish", params, NS_B, granted)
    assert message is not None and message.endswith("because no identity-based policy allows the SNS:Publish action")


def test_explicit_deny_and_condition_keys() -> None:
    deny = {"Effect": "Deny", "Action": "sns:Subscribe", "Resource": "*",
            "Condition": {"StringNotEquals": {"sns:Protocol": "sqs"}}}  # fmt: skip
    tag_rule = allow("sns:TagResource", TOPIC, Condition={"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}})
    by_tag = allow("sns:GetTopicAttributes", "*", Condition={"StringEquals": {"aws:ResourceTag/team": "a"}})
    access = control(user("U", policy(allow("sns:Subscribe", TOPIC), deny, tag_rule, by_tag)))
    sqs = [("TopicArn", TOPIC), ("Protocol", "sqs"), ("Endpoint", QUEUE)]
    assert decide(access, "U", "Subscribe", sqs) is None
    email = [("TopicArn", TOPIC), ("Protocol", "email"), ("Endpoint", "a@example.com")]
    assert decide(access, "U", "Subscribe", email) == (
        f"User: arn:aws:iam::{A}:user/alice is not authorized to perform: SNS:Subscribe on resource: {TOPIC} "
        "with an explicit deny in an identity-based policy"
    )
    assert decide(access, "U", "TagResource", [("ResourceArn", TOPIC), ("Tags.member.1.Key", "team")]) is None
    assert decide(access, "U", "TagResource", [("ResourceArn", TOPIC), ("Tags.member.1.Key", "cost")]) is not None
    assert decide(access, "U", "GetTopicAttributes", [("TopicArn", TOPIC)]) is None  # the topic's tag team=a


def test_topic_policy_deny_and_a_policy_that_does_not_parse() -> None:
    denies = policy({"Sid": "no", "Effect": "Deny", "Principal": "*", "Action": "sns:*", "Resource": TOPIC})
    access = control(Credential("ROOTA", "s", A))
    message = decide(access, "ROOTA", "Publish", [("TopicArn", TOPIC)], topic_policy=denies)
    assert message is not None and message.endswith("with an explicit deny in a resource-based policy")
    broken = json.dumps({"Statement": [{"Effect": "Maybe"}]})
    message = decide(access, "ROOTA", "Publish", [("TopicArn", TOPIC)], topic_policy=broken)
    assert message is not None and message.endswith("with an explicit deny in a resource-based policy")


def test_subscription_actions_of_the_owner_and_confirmation() -> None:
    access = control(user("SUBB", policy(allow(["sns:Unsubscribe", "sns:ConfirmSubscription"])), account=B))
    sub = [("SubscriptionArn", f"{TOPIC}:abc")]
    assert decide(access, "SUBB", "Unsubscribe", sub, NS_B, owner=B) is None
    assert decide(access, "SUBB", "Unsubscribe", sub, NS_B, owner=A) is not None  # A's subscription: A's policy
    assert decide(access, "SUBB", "ConfirmSubscription", [("TopicArn", TOPIC), ("Token", "t")], NS_B) is None


def test_delivery_needs_the_queue_policys_grant() -> None:
    def now() -> float:
        return 1_700_000_000.0

    def refusal(text: str | None) -> str | None:
        return delivery_refusal(QUEUE, text, {}, TOPIC, A, now)

    missing = refusal(None)
    assert missing is not None and delivery_statement(QUEUE, TOPIC) in missing
    assert json.loads(delivery_statement(QUEUE, TOPIC)) == {
        "Sid": "AllowSNSTopic", "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"},
        "Action": "sqs:SendMessage", "Resource": QUEUE, "Condition": {"ArnEquals": {"aws:SourceArn": TOPIC}},
    }  # fmt: skip
    assert refusal(policy(json.loads(delivery_statement(QUEUE, TOPIC)))) is None
    anyone = {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": QUEUE}
    assert refusal(policy({**anyone, "Condition": {"StringEquals": {"aws:SourceAccount": A}}})) is None
    everyone = {**anyone, "Principal": {"AWS": "*"}, "Condition": {"ArnLike": {"aws:SourceArn": TOPIC}}}
    assert refusal(policy(everyone)) is None
    assert refusal(policy({**anyone, "Condition": {"ArnEquals": {"aws:SourceArn": TOPIC + "x"}}})) is not None
    account_only = {**anyone, "Principal": {"AWS": A}}
    assert refusal(policy(account_only)) is not None  # the topic's account is not the SNS service
    tls = {"Sid": "tls", "Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": QUEUE,
           "Condition": {"Bool": {"aws:SecureTransport": "false"}}}  # fmt: skip
    assert refusal(policy(json.loads(delivery_statement(QUEUE, TOPIC)), tls)) is None  # SNS sends over TLS
    always = {key: value for key, value in tls.items() if key != "Condition"}
    denied = refusal(policy(json.loads(delivery_statement(QUEUE, TOPIC)), always))
    assert denied is not None and "statement tls" in denied
    broken = refusal('{"Statement": []}')
    assert broken is not None and "does not parse" in broken
