"""SNS under ``--auth iam``, and SNS's delivery into SQS queues, decided by the one evaluator
(:mod:`sqsemu.security.evaluate`; docs/architecture.md, principle 19). Plain data in (parameters, ARNs, policy
texts), decisions out: this layer does not know the SNS service (``sqsemu.sns`` is above it), and the caller raises
SNS's ``AuthorizationError``.

**What an SNS call needs** (:func:`sns_needs`), from the Service Authorization Reference's "Actions, resources, and
condition keys for Amazon SNS" and AWS's denial messages as recorded in public reports (``User: <arn> is not
authorized to perform: SNS:Publish on resource: <topic arn> because no identity-based policy allows the SNS:Publish
action``; ``... SNS:ListTopics on resource: arn:aws:sns:<region>:<account>:*``; ``... SNS:GetSubscriptionAttributes
on resource: <the subscription's topic arn>``; ``... SNS:Publish on resource: <phone number>``):

- each action its own IAM action (``sns:CreateTopic``, ``sns:Subscribe``...), ``PublishBatch`` ``sns:Publish``
  (SNS Developer Guide, "Amazon SNS API permissions: Actions and resources reference": ``sns:Publish`` "grants
  permission to both publish and publish batch");
- on the topic the call names (``TopicArn``, ``TargetArn``, ``ResourceArn``; ``CreateTopic``: the ARN the topic
  gets, ``arn:aws:sns:<region>:<account>:<Name>``); ``Unsubscribe``, ``GetSubscriptionAttributes`` and
  ``SetSubscriptionAttributes`` on the topic of the subscription (its ARN's first six parts); ``ListTopics`` and
  ``ListSubscriptions`` (no resource type) on ``arn:aws:sns:<region>:<caller account>:*``; a ``Publish`` to a
  ``PhoneNumber`` on the number;
- ``CreateTopic`` with ``Tags`` needs ``sns:TagResource`` on the new topic too (the reference's table of API
  operations lists both IAM actions for ``CreateTopic``; sqsemu asks for the second only when tags are given);
- condition keys set by the call's parameters (:func:`sns_request_keys`): ``sns:Endpoint`` and ``sns:Protocol`` for
  ``Subscribe``; ``aws:RequestTag/<key>`` and ``aws:TagKeys`` for ``CreateTopic`` and ``TagResource``,
  ``aws:TagKeys`` for ``UntagResource``; ``aws:ResourceTag/<key>`` is the topic's tags (the reference's ``topic``
  resource type).

Whose resource it is (:func:`resource_account`): the topic's account, as its ARN names it, so a call on another
account's topic needs both the caller's identity-based policies and the topic's ``Policy`` (the IAM User Guide's
"Cross-account policy evaluation logic"). Two cases are decided as the caller's own (sqsemu's reading; AWS records
none): the subscription actions by the account that owns the subscription (the API Reference's "Unsubscribe": the
subscription's owner or the topic's owner may delete it), and ``ConfirmSubscription``, whose token proves the
endpoint's owner (AWS accepts it unsigned, from the SubscribeURL).

**The topic's Policy** is evaluated as a queue's policy is. Its default (the ``__default_statement_ID`` SNS writes,
recorded) allows ``"AWS": "*"`` on condition ``AWS:SourceOwner`` = the owner account. ``aws:SourceOwner`` is set only
when a service acts for a resource (an S3 bucket publishing its events), never on a direct call, so the default
statement allows no caller: the owner's root user is allowed as any root user on its own account's resources, and
the owner's IAM users and roles need identity-based policies. AWS answers a role of the topic's own account whose
topic has the default policy ``... because no identity-based policy allows the SNS:Publish action`` (a public report
of AWS Control Tower Account Factory, whose ``aft-failure-notifications`` topic is created without a policy).

**Delivery into a queue** (:func:`delivery_refusal`): SNS sends ``sqs:SendMessage`` as the service principal
``sns.amazonaws.com`` with ``aws:SourceArn`` (the topic) and ``aws:SourceAccount`` (its owner) in the request
context, over TLS (``aws:SecureTransport`` true). The queue's policy must allow it: a statement naming the service
(``"Service": "sns.amazonaws.com"``) or everyone (``"*"``, ``"AWS": "*"``), usually with an ``aws:SourceArn`` or
``aws:SourceAccount`` condition (SNS Developer Guide, "Subscribing an Amazon SQS queue to an Amazon SNS topic" and
"Fanout to Amazon SQS queues"); the publisher's own policies play no part, a queue without a policy gets nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqsemu.security.evaluate import Context, Decision, Principal, evaluate, explain
from sqsemu.security.policy import PolicyError, parse_policy

__all__ = [
    "SNS_ACTIONS",
    "SNS_SERVICE",
    "SNSNeeds",
    "delivery_refusal",
    "delivery_statement",
    "resource_account",
    "sns_denial_message",
    "sns_needs",
    "sns_request_keys",
    "written",
]

SNS_SERVICE = "sns.amazonaws.com"
"""The service principal SNS acts as when it delivers into a queue."""

_ON_TOPIC = (
    "AddPermission", "ConfirmSubscription", "DeleteTopic", "GetTopicAttributes", "ListSubscriptionsByTopic",
    "RemovePermission", "SetTopicAttributes", "Subscribe",
)  # fmt: skip
_ON_RESOURCE = ("GetDataProtectionPolicy", "ListTagsForResource", "PutDataProtectionPolicy", "TagResource",
                "UntagResource")  # fmt: skip
_ON_SUBSCRIPTION = ("GetSubscriptionAttributes", "SetSubscriptionAttributes", "Unsubscribe")
_ACCOUNT_WIDE = ("ListSubscriptions", "ListTopics")

SNS_ACTIONS: dict[str, tuple[str, str]] = {
    **{name: (f"sns:{name}", "TopicArn") for name in _ON_TOPIC},
    **{name: (f"sns:{name}", "ResourceArn") for name in _ON_RESOURCE},
    **{name: (f"sns:{name}", "SubscriptionArn") for name in _ON_SUBSCRIPTION},
    **{name: (f"sns:{name}", "account") for name in _ACCOUNT_WIDE},
    "CreateTopic": ("sns:CreateTopic", "Name"),
    "Publish": ("sns:Publish", "target"),
    "PublishBatch": ("sns:Publish", "TopicArn"),
}
"""Each SNS API action sqsemu serves → ``(IAM action, where its resource comes from)``: the parameter naming the
topic, ``SubscriptionArn`` (its topic), ``account`` (the caller's account, every topic), ``Name`` (the topic
``CreateTopic`` makes), ``target`` (``Publish``: ``TopicArn``, ``TargetArn`` or ``PhoneNumber``)."""

_TAG_KEY = re.compile(r"Tags\.member\.(\d+)\.(Key|Value)")
_UNTAG_KEY = re.compile(r"TagKeys\.member\.(\d+)")


@dataclass(frozen=True, slots=True)
class SNSNeeds:
    """What one SNS call needs: its IAM ``actions`` (``sns:Publish``...), all on ``resource`` (a topic ARN,
    ``arn:aws:sns:<region>:<account>:*``, or a phone number); ``topic_arn`` the topic whose ``Policy`` and tags count
    (None: no one topic); ``subscription_arn`` the subscription acted on (its owner decides whose call it is:
    :func:`resource_account`); ``own``: decided as the caller's own account's resource (``ConfirmSubscription``)."""

    actions: tuple[str, ...]
    resource: str
    topic_arn: str | None = None
    subscription_arn: str | None = None
    own: bool = False


def _first(params: Sequence[tuple[str, str]], name: str) -> str | None:
    for key, value in params:
        if key == name:
            return value
    return None


def _topic_arn(text: str | None) -> str | None:
    """``text`` when it is a topic ARN (``arn:<partition>:sns:<region>:<12 digits>:<name>``), else None."""
    if not text:
        return None
    parts = text.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sns" or not parts[3] or not parts[5]:
        return None
    if len(parts[4]) != 12 or not parts[4].isdigit():
        return None
    return text


def sns_needs(action: str | None, params: Sequence[tuple[str, str]], region: str, account: str) -> SNSNeeds | None:
    """What the SNS API ``action`` with the Query ``params`` (name, value pairs) needs of a caller of ``account``
    calling in ``region`` (module docstring); None for an action that is not served (its own error answers it) or
    whose resource the parameters do not name (a missing or malformed ARN or name: the call's own validation
    refuses it, ``InvalidParameter``, so nothing is done unchecked)."""
    found = SNS_ACTIONS.get(action or "")
    if found is None:
        return None
    iam_action, source = found
    if source == "account":
        return SNSNeeds((iam_action,), f"arn:aws:sns:{region}:{account}:*")
    if source == "Name":
        name = _first(params, "Name")
        if not name:
            return None
        arn = f"arn:aws:sns:{region}:{account}:{name}"
        tagged = any(_TAG_KEY.fullmatch(key) for key, _ in params)
        actions = (iam_action, "sns:TagResource") if tagged else (iam_action,)
        return SNSNeeds(actions, arn, arn)
    if source == "SubscriptionArn":
        subscription = _first(params, "SubscriptionArn") or ""
        parts = subscription.split(":")
        topic = _topic_arn(":".join(parts[:6])) if len(parts) == 7 and parts[6] else None
        return None if topic is None else SNSNeeds((iam_action,), topic, topic, subscription)
    if source == "target":
        given = _first(params, "TopicArn")
        if given is None:
            given = _first(params, "TargetArn")
        if given is None:
            phone = _first(params, "PhoneNumber")
            return None if not phone else SNSNeeds((iam_action,), phone)
        topic = _topic_arn(given)
        return None if topic is None else SNSNeeds((iam_action,), topic, topic)
    topic = _topic_arn(_first(params, source))
    if topic is None:
        return None
    return SNSNeeds((iam_action,), topic, topic, own=action == "ConfirmSubscription")


def sns_request_keys(action: str | None, params: Sequence[tuple[str, str]]) -> dict[str, tuple[str, ...]] | None:
    """The condition keys (lower case) the SNS call's own parameters set, None when none: ``sns:endpoint`` and
    ``sns:protocol`` (in lower case, as SNS keeps it) for ``Subscribe``; ``aws:tagkeys`` and
    ``aws:requesttag/<key in lower case>`` for ``CreateTopic`` and ``TagResource`` (tags in the order given);
    ``aws:tagkeys`` for ``UntagResource``."""
    if action == "Subscribe":
        found: dict[str, tuple[str, ...]] = {}
        protocol = _first(params, "Protocol")
        endpoint = _first(params, "Endpoint")
        if protocol is not None:
            found["sns:protocol"] = (protocol.lower(),)
        if endpoint is not None:
            found["sns:endpoint"] = (endpoint,)
        return found or None
    if action == "UntagResource":
        keys = sorted(((int(m.group(1)), value) for key, value in params if (m := _UNTAG_KEY.fullmatch(key))))
        return {"aws:tagkeys": tuple(value for _, value in keys)} if keys else None
    if action not in ("CreateTopic", "TagResource"):
        return None
    members: dict[int, dict[str, str]] = {}
    for key, value in params:
        match = _TAG_KEY.fullmatch(key)
        if match is not None:
            members.setdefault(int(match.group(1)), {})[match.group(2)] = value
    tags = [(m["Key"], m.get("Value", "")) for _, m in sorted(members.items()) if "Key" in m]
    if not tags:
        return None
    keys_set: dict[str, tuple[str, ...]] = {"aws:tagkeys": tuple(key for key, _ in tags)}
    for key, value in tags:
        keys_set.setdefault(f"aws:requesttag/{key.lower()}", (value,))
    return keys_set


def resource_account(needs: SNSNeeds, caller_account: str, subscription_owner: str | None) -> str:
    """The account whose resource the call is on (module docstring): the caller's for ``ConfirmSubscription``, for
    a subscription the caller's account owns and for the account-wide actions; else the topic ARN's account."""
    if needs.own or needs.topic_arn is None:
        return caller_account
    if needs.subscription_arn is not None and subscription_owner == caller_account:
        return caller_account
    return needs.topic_arn.split(":")[4]


def written(iam_action: str) -> str:
    """An SNS IAM action as SNS writes it in its messages: ``SNS:Publish``."""
    service, _, name = iam_action.partition(":")
    return f"{service.upper()}:{name}"


def sns_denial_message(decision: Decision) -> str:
    """SNS's ``AuthorizationError`` message for a denial: AWS's form (module docstring), the action as SNS writes
    it (``User: arn:aws:iam::111111111111:user/x is not authorized to perform: SNS:Publish on resource:
    arn:aws:sns:us-east-1:111111111111:orders because no identity-based policy allows the SNS:Publish action``)."""
    return decision.message(written(decision.action))


# ------------------------------------------------------------------------------------------ delivery into a queue

_HTTPS: Mapping[str, object] = {"scheme": "https"}  # SNS calls SQS over TLS: aws:SecureTransport true, no SourceIp
_PRINCIPALS: dict[str, Principal] = {}


def delivery_statement(queue_arn: str, topic_arn: str) -> str:
    """The queue policy statement (compact JSON) that lets the topic ``topic_arn`` send to ``queue_arn``: AWS's
    documented form ("Subscribing an Amazon SQS queue to an Amazon SNS topic"), the service principal with an
    ``aws:SourceArn`` condition."""
    return json.dumps(
        {
            "Sid": "AllowSNSTopic",
            "Effect": "Allow",
            "Principal": {"Service": SNS_SERVICE},
            "Action": "sqs:SendMessage",
            "Resource": queue_arn,
            "Condition": {"ArnEquals": {"aws:SourceArn": topic_arn}},
        },
        separators=(",", ":"),
    )


def delivery_refusal(
    queue_arn: str,
    queue_policy: str | None,
    queue_tags: Mapping[str, str] | None,
    topic_arn: str,
    topic_account: str,
    now: Callable[[], float],
) -> str | None:
    """Why SNS may not send the topic ``topic_arn`` (of ``topic_account``) into the queue ``queue_arn`` whose
    ``Policy`` is ``queue_policy`` (None or empty: none) and tags ``queue_tags`` (module docstring), None when the
    policy allows it. The reason names the statement to add, or the statement that denies it; a policy that does
    not parse refuses (fail closed). ``now``: epoch seconds (the server's clock, for ``aws:CurrentTime``)."""
    fix = f"add this statement to the queue's Policy: {delivery_statement(queue_arn, topic_arn)}"
    if not queue_policy:
        return f"the queue {queue_arn} has no Policy, so it lets no topic send to it; {fix}"
    try:
        policy = parse_policy(queue_policy, True)
    except PolicyError as exc:
        return f"the Policy of the queue {queue_arn} does not parse ({exc}); fix it and {fix}"
    principal = _PRINCIPALS.get(topic_account)
    if principal is None:
        if len(_PRINCIPALS) > 1024:
            _PRINCIPALS.clear()
        principal = _PRINCIPALS[topic_account] = Principal(SNS_SERVICE, topic_account, "service", SNS_SERVICE)
    fixed = {"aws:sourcearn": (topic_arn,), "aws:sourceaccount": (topic_account,)}
    context = Context(fixed, now, _HTTPS, queue_tags)
    decision = evaluate(principal, "sqs:SendMessage", queue_arn, queue_arn.split(":")[4], (), policy, context)
    if decision.allowed:
        return None
    if decision.reason == "explicit deny":
        return (
            f"the statement {decision.statement} of the Policy of the queue {queue_arn} denies sqs:SendMessage to "
            f"{SNS_SERVICE} for this topic; remove or narrow it"
        )
    evaluated = explain(principal, "sqs:SendMessage", queue_arn, (), policy, context).text()
    return (
        f"no statement of the Policy of the queue {queue_arn} allows sqs:SendMessage to {SNS_SERVICE} for this "
        f"topic ({evaluated}); {fix}"
    )
