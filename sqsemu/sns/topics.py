"""All topics of all accounts and regions, and the operations on them and their subscriptions (everything but
Publish's delivery, which is :mod:`sqsemu.sns.fanout`).

Accounts and regions are namespaces exactly as for queues: a topic's ARN names both, and a call sees the topics of
its caller's account in its caller's region (docs/behaviour.md 7.1). Every method checks first and changes after, so
a refusal leaves nothing behind (docs/architecture.md, principle 17); each change is told to the listeners (the
durable store) with the topic it changed.

Sources: the SNS API Reference page of each action; "Amazon SNS FIFO topics", "Fanout to Amazon SQS queues" and
"Sending Amazon SNS messages to an Amazon SQS queue or AWS Lambda function in a different account" (SNS Developer
Guide) for what may subscribe to what and when a subscription is confirmed.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from sqsemu.clock import Clock
from sqsemu.sns import jsonerrors
from sqsemu.sns.errors import (
    AuthorizationError,
    FilterPolicyLimitExceeded,
    InvalidParameter,
    NotFound,
    ResourceNotFound,
    TagLimitExceeded,
)
from sqsemu.sns.filterpolicy import FilterPolicyError, parse_filter_policy
from sqsemu.sns.model import (
    DEFAULT_MAX_MESSAGE_BYTES,
    FIFO_SUFFIX,
    LARGE_MESSAGE_PROTOCOLS,
    LARGE_MESSAGE_RULE,
    LARGE_MESSAGE_SUBSCRIPTIONS,
    PROTOCOLS,
    SUBSCRIPTION_SETTABLE,
    Subscription,
    Topic,
    check_delivery_policy,
    check_name,
    check_topic_attribute,
)

__all__ = ["Listener", "Topics", "parse_topic_arn"]

PAGE = 100
"""Items per page of ListTopics, ListSubscriptions and ListSubscriptionsByTopic (API Reference)."""
MAX_TAGS = 50
FILTER_POLICIES_PER_TOPIC = 200
FILTER_POLICIES_PER_ACCOUNT = 10_000
"""SNS quotas (AWS General Reference, "Amazon SNS endpoints and quotas")."""

_TOKEN = re.compile(r"[0-9a-fA-F]{1,2048}")
"""What a confirmation token may look like: AWS answers ``Invalid token`` to anything else (recorded: ``randomtoken``;
``abc123`` is answered as a token that names nothing)."""
_LABEL = re.compile(r"[A-Za-z0-9_-]{1,80}")
_ACCOUNT = re.compile(r"[0-9]{12}")
_SQS_ARN = re.compile(r"arn:aws[a-z-]*:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?")
_LAMBDA_ARN = re.compile(r"arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]+)?")
_FIREHOSE_ARN = re.compile(r"arn:aws[a-z-]*:firehose:[a-z0-9-]+:[0-9]{12}:deliverystream/[A-Za-z0-9_.-]{1,64}")
_APP_ARN = re.compile(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:endpoint/.+")
_PHONE = re.compile(r"\+?[0-9]{5,15}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_GRANTABLE = frozenset(
    {"AddPermission", "DeleteTopic", "GetTopicAttributes", "ListSubscriptionsByTopic", "Publish", "RemovePermission",
     "SetTopicAttributes", "Subscribe", "GetDataProtectionPolicy", "PutDataProtectionPolicy"}
)  # fmt: skip


class Listener:
    """What the durable store (and the metrics) hear: a topic changed (created, its attributes, tags or
    subscriptions) or was deleted."""

    def topic_changed(self, topic: Topic) -> None:
        """``topic`` was created or changed."""

    def topic_deleted(self, topic: Topic) -> None:
        """``topic`` was deleted, with its subscriptions."""


def parse_topic_arn(arn: str) -> tuple[str, str, str] | None:
    """``arn:aws:sns:<region>:<account>:<name>`` → ``(region, account, name)``; None for anything else."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sns" or not parts[5]:
        return None
    return parts[3], parts[4], parts[5]


def check_arn(arn: str | None, parameter: str) -> None:
    """An ARN parameter has at least 6 colon-separated elements (``InvalidParameter`` as AWS words it,
    recorded)."""
    if not arn:
        raise InvalidParameter(f"Invalid parameter: {parameter} Reason: An ARN must have at least 6 elements, not 1")
    count = len(arn.split(":"))
    if count < 6:
        raise InvalidParameter(
            f"Invalid parameter: {parameter} Reason: An ARN must have at least 6 elements, not {count}"
        )


def check_subscription_arn(arn: str | None) -> None:
    """A SubscriptionArn parameter: ``<topic arn>:<id>`` (recorded errors for empty, short and id-less ARNs)."""
    if not arn:  # absent (recorded) or empty
        raise InvalidParameter("Invalid parameter: SubscriptionArn Reason: no value for required parameter")
    check_arn(arn, "SubscriptionArn")
    assert arn is not None
    parts = arn.split(":")
    if len(parts) != 7 or parts[2] != "sns" or not parts[6]:
        raise InvalidParameter("Invalid parameter: SubscriptionId")


def _page(items: Sequence[Any], token: str | None) -> tuple[list[Any], str | None]:
    """One page of ``items`` from ``token``: the page and the next token. A token is opaque base64 as AWS's are
    (recorded); sqsemu's holds the offset it goes on from. Raises ``InvalidParameter`` for one it did not
    write."""
    start = 0
    if token:
        start = _offset(token)
        if start > len(items):
            raise InvalidParameter("Invalid parameter: NextToken")
    end = start + PAGE
    return list(items[start:end]), _token(end) if end < len(items) else None


_TOKEN_PREFIX = b"sqsemu-page:"


def _token(offset: int) -> str:
    return base64.b64encode(_TOKEN_PREFIX + str(offset).encode()).decode()


def _offset(token: str) -> int:
    try:
        raw = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    digits = raw[len(_TOKEN_PREFIX) :]
    if not raw.startswith(_TOKEN_PREFIX) or not digits.isdigit() or len(digits) > 9:
        raise InvalidParameter("Invalid parameter: NextToken")
    return int(digits)


class Topics:
    """The topics of every namespace. ``listeners`` hear each change; ``clock`` gives creation times."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.by_arn: dict[str, Topic] = {}
        self.subscriptions: dict[str, Subscription] = {}
        self.listeners: list[Listener] = []

    # ------------------------------------------------------------------ helpers

    def _changed(self, topic: Topic) -> None:
        for listener in self.listeners:
            listener.topic_changed(topic)

    def topic(self, arn: str | None, region: str, parameter: str = "TopicArn") -> Topic:
        """The topic of ``arn`` for a caller in ``region``; raises ``InvalidParameter`` for a malformed ARN or one of
        another region, ``NotFound`` for none (recorded answers: docs/behaviour.md, "SNS")."""
        check_arn(arn, parameter)
        assert arn is not None
        parsed = parse_topic_arn(arn)
        if parsed is None or parsed[0] != region:
            raise InvalidParameter(f"Invalid parameter: {parameter}")
        topic = self.by_arn.get(arn)
        if topic is None:
            raise NotFound("Topic does not exist")
        return topic

    def subscription(self, arn: str | None) -> Subscription:
        """The subscription of ``arn``; raises ``InvalidParameter`` (malformed) or ``NotFound``."""
        check_subscription_arn(arn)
        sub = self.subscriptions.get(arn or "")
        if sub is None:
            raise NotFound("Subscription does not exist")
        return sub

    def topics_of(self, account: str, region: str) -> list[Topic]:
        """The namespace's topics, in creation order."""
        return [t for t in self.by_arn.values() if t.account == account and t.region == region]

    def restore(self, topic: Topic) -> None:
        """Put back a topic read from the durable store or a saved state (its filter policies parsed here)."""
        for sub in topic.subscriptions.values():
            policy = sub.attributes.get("FilterPolicy")
            if policy:
                sub.filter = parse_filter_policy(policy, sub.attributes.get("FilterPolicyScope", "MessageAttributes"))
            self.subscriptions[sub.arn] = sub
        self.by_arn[topic.arn] = topic

    def reset(self, account: str | None = None) -> int:
        """Delete every topic (of ``account`` when given); the count deleted."""
        gone = [t for t in self.by_arn.values() if account is None or t.account == account]
        for topic in gone:
            self._drop(topic)
        return len(gone)

    def _drop(self, topic: Topic) -> None:
        del self.by_arn[topic.arn]
        for arn in topic.subscriptions:
            self.subscriptions.pop(arn, None)
        for listener in self.listeners:
            listener.topic_deleted(topic)

    # ------------------------------------------------------------------ topics

    def create_topic(
        self,
        account: str,
        region: str,
        name: str | None,
        attributes: Mapping[str, str] | None,
        tags: Mapping[str, str] | None,
        data_protection_policy: str | None,
    ) -> Topic:
        """CreateTopic: a new topic, or the existing one of that name when the attributes given match its own
        (idempotent); raises ``InvalidParameter`` (a bad name or attribute, or the same name with other attributes
        or tags) or ``TagLimitExceeded``."""
        if name is None:
            raise InvalidParameter("Invalid parameter: Name")  # botocore requires it; a raw client may not
        attributes = dict(attributes or {})
        fifo_text = attributes.get("FifoTopic", "false").lower()
        fifo = fifo_text == "true"
        if fifo_text not in ("true", "false"):
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: FifoTopic: Invalid value ["
                + fifo_text
                + "]. Must be true or false."
            )
        if not fifo and name.endswith(FIFO_SUFFIX):
            raise InvalidParameter("Invalid parameter: Topic Name")
        check_name(name, fifo)
        stored = {key: check_topic_attribute(key, value, fifo, creating=True) for key, value in attributes.items()}
        stored.pop("FifoTopic", None)
        _check_tags(tags or {})
        if data_protection_policy:
            _check_json("DataProtectionPolicy", data_protection_policy)
        arn = f"arn:aws:sns:{region}:{account}:{name}"
        existing = self.by_arn.get(arn)
        if existing is not None:
            for key, value in stored.items():
                if existing.attributes.get(key, _DEFAULTS.get(key)) != value:
                    raise InvalidParameter(
                        "Invalid parameter: Attributes Reason: Topic already exists with different attributes"
                    )
            if tags:
                for key, value in tags.items():
                    if existing.tags.get(key) != value:
                        raise InvalidParameter(
                            "Invalid parameter: Tags Reason: Topic already exists with different tags"
                        )
            return existing
        topic = Topic(name, account, region, fifo, self.clock.now_ms())
        topic.attributes = stored
        topic.tags = dict(tags or {})
        topic.data_protection_policy = data_protection_policy or ""
        self.by_arn[arn] = topic
        self._changed(topic)
        return topic

    def delete_topic(self, arn: str | None, region: str) -> None:
        """DeleteTopic: the topic and its subscriptions; deleting a topic that does not exist succeeds (API
        Reference, "DeleteTopic": the action is idempotent)."""
        check_arn(arn, "TopicArn")
        assert arn is not None
        parsed = parse_topic_arn(arn)
        if parsed is None or parsed[0] != region:
            raise InvalidParameter("Invalid parameter: TopicArn")
        topic = self.by_arn.get(arn)
        if topic is not None:
            self._drop(topic)

    def list_topics(self, account: str, region: str, token: str | None) -> tuple[list[Topic], str | None]:
        """ListTopics: one page of the namespace's topics and the next token."""
        return _page(self.topics_of(account, region), token)

    def set_topic_attribute(self, topic: Topic, name: str | None, value: str | None) -> None:
        """SetTopicAttributes; an empty value unsets an attribute (the Policy back to its default)."""
        if not name:
            raise InvalidParameter("Invalid parameter: AttributeName")
        if name == "FifoTopic":
            raise InvalidParameter("Invalid parameter: AttributeName")
        if value is None or value == "":
            if (
                name not in ("Policy", "DeliveryPolicy", "DisplayName", "KmsMasterKeyId", "ArchivePolicy")
                and name not in _FEEDBACK_NAMES
            ):
                check_topic_attribute(name, value or "", topic.fifo, creating=False)
            topic.attributes.pop(name, None)
        else:
            checked = check_topic_attribute(name, value, topic.fifo, creating=False)
            if name == "MaximumMessageSize" and int(checked) > DEFAULT_MAX_MESSAGE_BYTES:
                _check_large_messages(topic.subscriptions.values())
            topic.attributes[name] = checked
        self._changed(topic)

    def tag(self, arn: str | None, tags: Mapping[str, str] | None) -> None:
        """TagResource on a topic: at most 50 tags in all; raises ``ResourceNotFound``, ``InvalidParameter``,
        ``TagLimitExceeded``."""
        topic = self._tagged(arn)
        if not tags:
            raise InvalidParameter("Invalid parameter: Tags")
        _check_tags(tags)
        merged = {**topic.tags, **tags}
        if len(merged) > MAX_TAGS:
            raise TagLimitExceeded("Could not complete request: tag quota of per resource exceeded")
        topic.tags = merged
        self._changed(topic)

    def untag(self, arn: str | None, keys: Sequence[str] | None) -> None:
        """UntagResource."""
        topic = self._tagged(arn)
        if not keys:
            raise InvalidParameter("Invalid parameter: TagKeys")
        for key in keys:
            topic.tags.pop(key, None)
        self._changed(topic)

    def tags_of(self, arn: str | None) -> dict[str, str]:
        """ListTagsForResource."""
        return dict(self._tagged(arn).tags)

    def _tagged(self, arn: str | None) -> Topic:
        if not arn:
            raise InvalidParameter("Invalid parameter: ResourceArn")
        topic = self.by_arn.get(arn)
        if topic is None:
            raise ResourceNotFound("Resource does not exist")
        return topic

    def add_permission(self, topic: Topic, label: str | None, accounts: Sequence[str] | None,
                       actions: Sequence[str] | None) -> None:  # fmt: skip
        """AddPermission: a statement granting ``actions`` on the topic to ``accounts`` in its Policy (API
        Reference, "AddPermission")."""
        if not label or not _LABEL.fullmatch(label):
            raise InvalidParameter("Invalid parameter: Label")
        if not accounts:
            raise InvalidParameter("Invalid parameter: AWSAccountId")
        if not actions:
            raise InvalidParameter("Invalid parameter: ActionName")
        for action in actions:
            if action not in _GRANTABLE and action != "*":
                raise InvalidParameter("Invalid parameter: Policy statement action out of service scope!")
        document = orjson.loads(topic.describe()["Policy"])
        statements = document.setdefault("Statement", [])
        if any(isinstance(s, dict) and s.get("Sid") == label for s in statements):
            raise InvalidParameter("Invalid parameter: Statement already exists")
        principals = [f"arn:aws:iam::{a}:root" if _ACCOUNT.fullmatch(a) else a for a in accounts]
        named = [f"SNS:{a}" for a in actions]
        statements.append({
            "Sid": label, "Effect": "Allow",
            "Principal": {"AWS": principals[0] if len(principals) == 1 else principals},
            "Action": named, "Resource": topic.arn,
        })  # fmt: skip
        topic.attributes["Policy"] = orjson.dumps(document).decode()
        self._changed(topic)

    def remove_permission(self, topic: Topic, label: str | None) -> None:
        """RemovePermission: the statement of ``label`` taken out of the topic's Policy."""
        if not label:
            raise InvalidParameter("Invalid parameter: Label")
        document = orjson.loads(topic.describe()["Policy"])
        statements = [s for s in document.get("Statement", []) if not (isinstance(s, dict) and s.get("Sid") == label)]
        if len(statements) == len(document.get("Statement", [])):
            raise InvalidParameter("Invalid parameter: Statement with the specified label does not exist")
        document["Statement"] = statements
        topic.attributes["Policy"] = orjson.dumps(document).decode()
        self._changed(topic)

    def put_data_protection_policy(self, arn: str | None, region: str, policy: str | None) -> None:
        """PutDataProtectionPolicy: stored and returned, not applied (docs/sns.md)."""
        topic = self.topic(arn, region, "ResourceArn")
        if policy is None:
            raise InvalidParameter("Invalid parameter: DataProtectionPolicy")
        if policy:
            _check_json("DataProtectionPolicy", policy)
        topic.data_protection_policy = policy
        self._changed(topic)

    # ------------------------------------------------------------------ subscriptions

    def subscribe(
        self,
        topic: Topic,
        protocol: str | None,
        endpoint: str | None,
        attributes: Mapping[str, str] | None,
        caller_account: str,
        principal: str,
    ) -> tuple[Subscription, bool]:
        """Subscribe: the subscription and whether it is new. The same protocol and endpoint again returns the
        existing subscription when the attributes given match; raises ``InvalidParameter`` (bad protocol, endpoint
        or attribute; a FIFO queue on a standard topic; a FIFO topic with a protocol other than ``sqs``; the same
        endpoint with other attributes) or ``FilterPolicyLimitExceeded``. Whether it starts pending is decided by
        the caller (:mod:`sqsemu.sns.service`)."""
        if not protocol:
            raise InvalidParameter("Invalid parameter: Protocol")
        protocol = protocol.lower()
        if protocol not in PROTOCOLS:
            raise InvalidParameter(f"Invalid parameter: Amazon SNS does not support this protocol string: {protocol}")
        if not endpoint:
            raise InvalidParameter("Invalid parameter: Endpoint")
        _check_endpoint(topic, protocol, endpoint)
        given = dict(attributes or {})
        checked = {
            name: check_subscription_attribute(name, value, protocol, topic, endpoint) for name, value in given.items()
        }
        for sub in topic.subscriptions.values():
            if sub.protocol == protocol and sub.endpoint == endpoint:
                for name, value in checked.items():  # a value given as its default matches (recorded)
                    if sub.attributes.get(name, _SUBSCRIPTION_DEFAULTS.get(name, "")) != value:
                        raise InvalidParameter(
                            "Invalid parameter: Attributes Reason: Subscription already exists with different "
                            "attributes"
                        )
                return sub, False
        if topic.max_message_bytes > DEFAULT_MAX_MESSAGE_BYTES:
            _check_large_messages(topic.subscriptions.values(), protocol)
        parsed = None
        if checked.get("FilterPolicy"):
            parsed = _filter(checked["FilterPolicy"], checked.get("FilterPolicyScope", "MessageAttributes"))
            self._check_filter_quota(topic, adding=True)
        arn = f"{topic.arn}:{uuid.uuid4()}"
        sub = Subscription(arn, topic.arn, protocol, endpoint, caller_account, principal, self.clock.now_ms())
        sub.attributes = {k: v for k, v in checked.items() if v != ""}
        sub.filter = parsed
        topic.subscriptions[arn] = sub
        self.subscriptions[arn] = sub
        self._changed(topic)
        return sub, True

    def mark_pending(self, sub: Subscription, authenticated: bool = False) -> str:
        """Make ``sub`` wait for confirmation: its new token (hex, as AWS's are)."""
        sub.pending = True
        sub.authenticated = authenticated
        sub.token = secrets.token_hex(64)
        self._changed(self.by_arn[sub.topic_arn])
        return sub.token

    def confirm(self, topic_arn: str | None, region: str, token: str | None, authenticate: bool) -> Subscription:
        """ConfirmSubscription: the subscription of ``token`` (of any topic of ``region``: the token names it, and
        AWS confirms it whatever topic of the region the call names, recorded) confirmed; a confirmed one's ARN
        again. Raises ``InvalidParameter``: ``Invalid parameter: Topic`` for a TopicArn that is no topic ARN of the
        caller's region, ``Invalid token`` for one that is not hexadecimal, ``Invalid parameter: Token`` for one
        that names no subscription (recorded answers; API Reference, "ConfirmSubscription")."""
        parsed = parse_topic_arn(topic_arn or "")
        if parsed is None or parsed[0] != region:
            raise InvalidParameter("Invalid parameter: Topic")
        if not token:
            raise InvalidParameter("Invalid parameter: Token")
        if not _TOKEN.fullmatch(token):
            raise InvalidParameter("Invalid token")
        for sub in self.subscriptions.values():
            if sub.token == token and sub.topic_arn.split(":")[3] == region:
                sub.pending = False
                sub.authenticated = authenticate
                self._changed(self.by_arn[sub.topic_arn])
                return sub
        raise InvalidParameter("Invalid parameter: Token")

    def unsubscribe(self, arn: str | None) -> Subscription | None:
        """Unsubscribe: the subscription removed and returned (SubscriptionsDeleted counts it); None for one that
        does not exist, which AWS answers with success (recorded)."""
        check_subscription_arn(arn)
        sub = self.subscriptions.get(arn or "")
        if sub is None:
            return None
        topic = self.by_arn[sub.topic_arn]
        del topic.subscriptions[sub.arn]
        del self.subscriptions[sub.arn]
        topic.deleted += 1
        self._changed(topic)
        return sub

    def list_subscriptions(self, account: str, region: str, token: str | None) -> tuple[list[Subscription], str | None]:
        """ListSubscriptions: the namespace's subscriptions (those its account made), a page at a time."""
        subs = [s for s in self.subscriptions.values() if s.owner == account and s.topic_arn.split(":")[3] == region]
        return _page(subs, token)

    def list_by_topic(self, topic: Topic, token: str | None) -> tuple[list[Subscription], str | None]:
        """ListSubscriptionsByTopic."""
        return _page(list(topic.subscriptions.values()), token)

    def set_subscription_attribute(self, sub: Subscription, name: str | None, value: str | None) -> None:
        """SetSubscriptionAttributes; a changed FilterPolicy applies at once (AWS: up to 15 minutes later,
        docs/sns.md)."""
        if not name:
            raise InvalidParameter("Invalid parameter: AttributeName")
        topic = self.by_arn[sub.topic_arn]
        value = value or ""
        try:
            if name == "RawMessageDelivery" and value == "":
                raise InvalidParameter(
                    "Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value []. Must be true or false."
                )
            checked = check_subscription_attribute(name, value, sub.protocol, topic, sub.endpoint)
            self._set_checked(sub, topic, name, checked)
        except InvalidParameter as exc:  # SetSubscriptionAttributes words it without "Attributes Reason: "
            raise InvalidParameter(
                exc.message.replace("Invalid parameter: Attributes Reason: ", "Invalid parameter: ", 1)
            ) from None

    def _set_checked(self, sub: Subscription, topic: Topic, name: str, checked: str) -> None:
        parsed = sub.filter
        if name == "FilterPolicy":
            if checked:
                parsed = _filter(checked, sub.attributes.get("FilterPolicyScope", "MessageAttributes"))
                if sub.filter is None:
                    self._check_filter_quota(topic, adding=True)
            else:
                parsed = None
        elif name == "FilterPolicyScope" and sub.attributes.get("FilterPolicy"):
            parsed = _filter(sub.attributes["FilterPolicy"], checked)
        if checked == "":
            sub.attributes.pop(name, None)
        else:
            sub.attributes[name] = checked
        sub.filter = parsed
        self._changed(topic)

    def _check_filter_quota(self, topic: Topic, adding: bool) -> None:
        on_topic = sum(1 for s in topic.subscriptions.values() if s.filter is not None)
        if on_topic + int(adding) > FILTER_POLICIES_PER_TOPIC:
            raise FilterPolicyLimitExceeded("Filter policy limit exceeded")
        in_account = sum(
            1
            for s in self.subscriptions.values()
            if s.filter is not None and s.topic_arn.split(":")[4] == topic.account
        )
        if in_account + int(adding) > FILTER_POLICIES_PER_ACCOUNT:
            raise FilterPolicyLimitExceeded("Filter policy limit exceeded")

    def owner_check(self, sub: Subscription, account: str) -> None:
        """Only the subscription's owner or the topic's owner may change it (``AuthorizationError``)."""
        topic = self.by_arn[sub.topic_arn]
        if account not in (sub.owner, topic.account):
            raise AuthorizationError("User is not authorized to perform this action")


_DEFAULTS = {
    "ContentBasedDeduplication": "false", "SignatureVersion": "1", "MaximumMessageSize": str(DEFAULT_MAX_MESSAGE_BYTES),
}  # fmt: skip
"""The values of the attributes a topic has without their being set (what CreateTopic of an existing name compares
a given value with)."""


def _check_large_messages(subscriptions: Iterable[Subscription], adding: str | None = None) -> None:
    """A topic above 256 KiB: at most 100 subscriptions, each SQS, Lambda or Firehose (``adding``: the protocol of
    one being added); raises ``InvalidParameter``."""
    protocols = [sub.protocol for sub in subscriptions] + ([adding] if adding is not None else [])
    if len(protocols) > LARGE_MESSAGE_SUBSCRIPTIONS or any(p not in LARGE_MESSAGE_PROTOCOLS for p in protocols):
        raise InvalidParameter(LARGE_MESSAGE_RULE)


_FEEDBACK_NAMES = frozenset(
    f"{kind}{what}"
    for kind in ("Application", "HTTP", "Lambda", "SQS", "Firehose")
    for what in ("SuccessFeedbackRoleArn", "SuccessFeedbackSampleRate", "FailureFeedbackRoleArn")
)


DATA_PROTECTION_POLICY_CHARACTERS = 30_720
"""The longest DataProtectionPolicy (API Reference, "PutDataProtectionPolicy": "Maximum length of 30,720")."""


def _check_json(name: str, value: str) -> None:
    if name == "DataProtectionPolicy" and len(value) > DATA_PROTECTION_POLICY_CHARACTERS:
        raise InvalidParameter(f"Invalid parameter: {name}")
    try:
        document = orjson.loads(value)
    except orjson.JSONDecodeError:
        raise InvalidParameter(f"Invalid parameter: {name}") from None
    if not isinstance(document, dict):
        raise InvalidParameter(f"Invalid parameter: {name}")


def _check_tags(tags: Mapping[str, str]) -> None:
    """At most 50 tags (``TagLimitExceeded``), none with the reserved ``aws:`` prefix (``InvalidParameter``); their
    lengths are the model's, checked with the request (:mod:`sqsemu.sns.service`)."""
    if len(tags) > MAX_TAGS:
        raise TagLimitExceeded("Could not complete request: tag quota of per resource exceeded")
    for key in tags:
        if key.startswith("aws:"):
            raise InvalidParameter("Invalid parameter: Tags Reason: Tag keys must not start with aws:")


def _filter(text: str, scope: str) -> Any:
    """The parsed filter policy of ``text``: its JSON syntax checked here as AWS's parser words it (recorded:
    ``FilterPolicy: failed to parse JSON. Unrecognized token 'invalid': ...``), its grammar by
    :mod:`sqsemu.sns.filterpolicy`; raises ``InvalidParameter``."""
    try:
        jsonerrors.parse(text)
    except jsonerrors.JSONSyntaxError as exc:
        raise InvalidParameter(
            f"Invalid parameter: Attributes Reason: FilterPolicy: failed to parse JSON. {exc.message}"
        ) from None
    try:
        return parse_filter_policy(text, scope)
    except FilterPolicyError as exc:
        raise InvalidParameter(exc.aws_message(subscribe=True)) from None


def _check_endpoint(topic: Topic, protocol: str, endpoint: str) -> None:
    """The endpoint's form for its protocol; what a FIFO or standard topic may have (SNS Developer Guide,
    "Amazon SNS FIFO topics": FIFO topics deliver to SQS queues only, standard topics to standard queues only)."""
    if protocol == "sqs":
        if not _SQS_ARN.fullmatch(endpoint):
            raise InvalidParameter("Invalid parameter: SQS endpoint ARN")
        if endpoint.endswith(FIFO_SUFFIX) and not topic.fifo:
            raise InvalidParameter(
                "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to "
                "standard SNS topics"
            )
        return
    if topic.fifo:
        raise InvalidParameter(f"Invalid parameter: Invalid protocol type: {protocol}")
    if protocol in ("http", "https"):
        if not endpoint.lower().startswith(f"{protocol}://") or len(endpoint) <= len(protocol) + 3:
            raise InvalidParameter("Invalid parameter: Endpoint must match the specified protocol")
    elif protocol == "lambda":
        if not _LAMBDA_ARN.fullmatch(endpoint):
            raise InvalidParameter("Invalid parameter: Lambda endpoint ARN")
    elif protocol in ("email", "email-json"):
        if not _EMAIL.fullmatch(endpoint):
            raise InvalidParameter("Invalid parameter: Email address")
    elif protocol == "sms":
        if not _PHONE.fullmatch(endpoint.replace("-", "").replace(" ", "")):
            raise InvalidParameter(f"Invalid SMS endpoint: {endpoint}")
    elif protocol == "application":
        if not _APP_ARN.fullmatch(endpoint):
            raise InvalidParameter("Invalid parameter: Application endpoint arn invalid:" + endpoint)
    elif protocol == "firehose" and not _FIREHOSE_ARN.fullmatch(endpoint):
        raise InvalidParameter("Invalid parameter: Firehose endpoint ARN")


_SUBSCRIPTION_DEFAULTS = {"RawMessageDelivery": "false", "FilterPolicyScope": "MessageAttributes"}
"""The values a subscription's attributes have unset (what Subscribe of an existing endpoint compares with)."""


def check_subscription_attribute(name: str, value: str, protocol: str, topic: Topic, endpoint: str) -> str:
    """One subscription attribute as Subscribe or SetSubscriptionAttributes takes it: its stored value (``""``
    unsets); raises ``InvalidParameter`` (API Reference, "SetSubscriptionAttributes"; recorded messages, worded
    ``Invalid parameter: Attributes Reason: <name>: ...``, which SetSubscriptionAttributes shortens)."""
    if name not in SUBSCRIPTION_SETTABLE:
        raise InvalidParameter("Invalid parameter: AttributeName")
    if value == "":
        return ""
    if name == "RawMessageDelivery":
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value ["
                + value
                + "]. Must be true or false."
            )
        if protocol not in ("sqs", "http", "https", "firehose") and lowered == "true":
            raise InvalidParameter(
                f"Invalid parameter: Attributes Reason: Delivery protocol [{protocol}] does not support raw message "
                "delivery."
            )
        return lowered
    if name == "FilterPolicyScope":
        if value not in ("MessageAttributes", "MessageBody"):
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: FilterPolicyScope: Invalid value [" + value + "]. Please use "
                "either MessageBody or MessageAttributes"
            )
        return value
    if name == "FilterPolicy":
        _filter(value, "MessageBody")  # checked for its grammar here; against its scope by the caller
        return value
    if name == "RedrivePolicy":
        try:
            document = jsonerrors.parse(value)
        except jsonerrors.JSONSyntaxError as exc:
            raise InvalidParameter(
                f"Invalid parameter: Attributes Reason: RedrivePolicy: failed to parse JSON. {exc.message}"
            ) from None
        target = document.get("deadLetterTargetArn") if isinstance(document, dict) else None
        if not isinstance(target, str) or not _SQS_ARN.fullmatch(target):
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: RedrivePolicy: deadLetterTargetArn is an invalid arn"
            )
        if topic.fifo and protocol == "sqs" and endpoint.endswith(FIFO_SUFFIX) and not target.endswith(FIFO_SUFFIX):
            raise InvalidParameter(  # recorded; a FIFO topic's standard queue may keep a standard one
                "Invalid parameter: Attributes Reason: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO "
                "Subscription to a FIFO Topic."
            )
        return orjson.dumps({"deadLetterTargetArn": target}).decode()
    if name == "DeliveryPolicy":
        check_delivery_policy(value)
        return value
    if name == "SubscriptionRoleArn":
        if protocol != "firehose":
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: SubscriptionRoleArn is only valid for firehose subscriptions"
            )
        return value
    return value
