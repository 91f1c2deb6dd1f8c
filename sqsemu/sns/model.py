"""Topics and subscriptions: their state, their attributes as SNS names and checks them, their JSON documents.

Sources: the SNS API Reference pages "CreateTopic", "SetTopicAttributes", "GetTopicAttributes", "Subscribe",
"SetSubscriptionAttributes" and "GetSubscriptionAttributes"; the SNS Developer Guide pages "Amazon SNS FIFO topics",
"Amazon SNS dead-letter queues (DLQs)" and "Amazon SNS message delivery retries"; AWS's recorded answers
(docs/behaviour.md, "SNS").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from sqsemu.sns.errors import InvalidParameter

__all__ = [
    "DEFAULT_EFFECTIVE_DELIVERY_POLICY",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_REQUEST_POLICY",
    "DEFAULT_RETRY_POLICY",
    "FIFO_SUFFIX",
    "LARGE_MESSAGE_PROTOCOLS",
    "LARGE_MESSAGE_RULE",
    "LARGE_MESSAGE_SUBSCRIPTIONS",
    "MAX_MESSAGE_BYTES",
    "PROTOCOLS",
    "Subscription",
    "Topic",
    "check_topic_attribute",
    "default_topic_policy",
    "effective_subscription_policy",
    "effective_topic_policy",
    "subscription_delivery_policy",
    "topic_arn",
    "topic_delivery_policy",
]

FIFO_SUFFIX = ".fifo"
PROTOCOLS = ("http", "https", "email", "email-json", "sms", "sqs", "application", "lambda", "firehose")
"""Every protocol Subscribe accepts (API Reference, "Subscribe")."""
DELIVERED = ("sqs", "http", "https", "lambda")
"""The protocols sqsemu delivers to; the others' deliveries are recorded (docs/sns.md, "Recorded deliveries")."""

_NAME = re.compile(r"[A-Za-z0-9_-]{1,256}")
DEFAULT_MAX_MESSAGE_BYTES = 262_144
"""A topic's MaximumMessageSize while none is set, in bytes (API Reference, "SetTopicAttributes")."""
MAX_MESSAGE_BYTES = (1024, 1_048_576)
"""The MaximumMessageSize a topic may be given, in bytes."""
LARGE_MESSAGE_PROTOCOLS = ("sqs", "lambda", "firehose")
LARGE_MESSAGE_SUBSCRIPTIONS = 100
"""Above 256 KiB a topic may have at most 100 subscriptions, each SQS, Lambda or Firehose (API Reference,
"SetTopicAttributes", MaximumMessageSize)."""
LARGE_MESSAGE_RULE = (
    "Invalid parameter: MaximumMessageSize: A topic with a MaximumMessageSize above 262144 bytes can only have "
    "Amazon SQS, AWS Lambda and Amazon Data Firehose subscriptions, at most 100."
)
"""sqsemu's wording of that refusal (AWS documents the rule, not its message)."""

DEFAULT_EFFECTIVE_DELIVERY_POLICY = (
    '{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,'
    '"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},'
    '"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}'
)
"""A topic's EffectiveDeliveryPolicy while no DeliveryPolicy is set (GetTopicAttributes, recorded)."""

_TOPIC_ACTIONS = (
    "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission", "SNS:RemovePermission",
    "SNS:DeleteTopic", "SNS:Subscribe", "SNS:ListSubscriptionsByTopic", "SNS:Publish",
)  # fmt: skip

_FEEDBACK = tuple(
    f"{kind}{what}"
    for kind in ("Application", "HTTP", "Lambda", "SQS", "Firehose")
    for what in ("SuccessFeedbackRoleArn", "SuccessFeedbackSampleRate", "FailureFeedbackRoleArn")
)
TOPIC_SETTABLE = (
    "DeliveryPolicy", "DisplayName", "Policy", "TracingConfig", "KmsMasterKeyId", "SignatureVersion",
    "ContentBasedDeduplication", "FifoThroughputScope", "ArchivePolicy", "MaximumMessageSize", *_FEEDBACK,
)  # fmt: skip
"""The attributes SetTopicAttributes takes (API Reference, "SetTopicAttributes"); CreateTopic takes FifoTopic too."""
SUBSCRIPTION_SETTABLE = (
    "DeliveryPolicy", "FilterPolicy", "FilterPolicyScope", "RawMessageDelivery", "RedrivePolicy",
    "SubscriptionRoleArn", "ReplayPolicy",
)  # fmt: skip
"""The attributes Subscribe and SetSubscriptionAttributes take (API Reference, "SetSubscriptionAttributes")."""


def topic_arn(region: str, account: str, name: str) -> str:
    """``arn:aws:sns:<region>:<account>:<name>``."""
    return f"arn:aws:sns:{region}:{account}:{name}"


def default_topic_policy(arn: str, account: str) -> str:
    """The Policy a topic gets when none is given (GetTopicAttributes, recorded): every principal of the owner's
    account may run the topic's actions."""
    return orjson.dumps(
        {
            "Version": "2008-10-17",
            "Id": "__default_policy_ID",
            "Statement": [
                {
                    "Sid": "__default_statement_ID",
                    "Effect": "Allow",
                    "Principal": {"AWS": "*"},
                    "Action": list(_TOPIC_ACTIONS),
                    "Resource": arn,
                    "Condition": {"StringEquals": {"AWS:SourceOwner": account}},
                }
            ],
        }
    ).decode()


def check_name(name: str, fifo: bool) -> None:
    """A topic name: 1 to 256 letters, digits, hyphens and underscores, a FIFO topic's ending in ``.fifo`` (which
    counts); raises ``InvalidParameter`` (API Reference, "CreateTopic")."""
    if fifo:
        if not name.endswith(FIFO_SUFFIX) or len(name) > 256 or not _NAME.fullmatch(name[: -len(FIFO_SUFFIX)]):
            raise InvalidParameter(
                "Invalid parameter: Fifo Topic names must end with .fifo and must be made up of only uppercase and "
                "lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 "
                "characters long."
            )
        return
    if not _NAME.fullmatch(name):
        raise InvalidParameter("Invalid parameter: Topic Name")


def _json_object(name: str, value: str, where: str = "Attributes") -> dict[str, Any]:
    try:
        document = orjson.loads(value)
    except orjson.JSONDecodeError:
        raise InvalidParameter(f"Invalid parameter: {where} Reason: {name}: Invalid JSON") from None
    if not isinstance(document, dict):
        raise InvalidParameter(f"Invalid parameter: {where} Reason: {name}: Invalid JSON")
    return document


def _boolean(name: str, value: str) -> str:
    if value.lower() not in ("true", "false"):
        raise InvalidParameter(
            f"Invalid parameter: Attributes Reason: {name}: Invalid value [{value}]. Must be true or false."
        )
    return value.lower()


def check_delivery_policy(value: str, where: str = "Attributes") -> None:
    """A DeliveryPolicy document: a JSON object (``http``/``https`` keys with retry policies, SNS Developer Guide
    "Creating an HTTP/S delivery policy"); the retry policy's numbers within the documented bounds."""
    document = _json_object("DeliveryPolicy", value, where)
    for key, section in document.items():
        if not isinstance(section, dict):
            raise InvalidParameter(f"Invalid parameter: {where} Reason: DeliveryPolicy: {key} must be an object")
    retry = document.get("healthyRetryPolicy") or (document.get("http") or {}).get("defaultHealthyRetryPolicy")
    if isinstance(retry, dict):
        for field, (low, high) in _RETRY_BOUNDS.items():
            number = retry.get(field)
            if number is not None and (not isinstance(number, int) or not low <= number <= high):
                raise InvalidParameter(
                    f"Invalid parameter: {where} Reason: DeliveryPolicy: {field} must be between {low} and {high}"
                )


DEFAULT_RETRY_POLICY: dict[str, Any] = {
    "minDelayTarget": 20, "maxDelayTarget": 20, "numRetries": 3, "numMaxDelayRetries": 0, "numNoDelayRetries": 0,
    "numMinDelayRetries": 0, "backoffFunction": "linear",
}  # fmt: skip
"""The HTTP/S retry policy while none is set (recorded EffectiveDeliveryPolicy), in its recorded key order."""
DEFAULT_REQUEST_POLICY: dict[str, Any] = {"headerContentType": "text/plain; charset=UTF-8"}


def _filled_retry(given: dict[str, Any]) -> dict[str, Any]:
    """A retry policy with the defaults of the keys it leaves out, in the recorded key order."""
    return {**{key: given.get(key, value) for key, value in DEFAULT_RETRY_POLICY.items()}, **given}


def _document(value: str | None) -> dict[str, Any]:
    if not value:
        return {}
    try:
        document = orjson.loads(value)
    except orjson.JSONDecodeError:
        return {}
    return document if isinstance(document, dict) else {}


_TOPIC_HTTP_ORDER = ("defaultHealthyRetryPolicy", "defaultSicklyRetryPolicy", "defaultThrottlePolicy")


def topic_delivery_policy(value: str) -> str:
    """A topic's DeliveryPolicy as GetTopicAttributes shows it: the ``http`` section's null keys dropped and
    ``disableSubscriptionOverrides`` (false unless given) written before ``defaultRequestPolicy``; retry policies as
    given (recorded: ``{"http":{"defaultHealthyRetryPolicy":null}}`` reads back ``{"http":
    {"disableSubscriptionOverrides":false}}``)."""
    document = _document(value)
    found = document.get("http")
    http: dict[str, Any] = found if isinstance(found, dict) else {}
    section: dict[str, Any] = {key: http[key] for key in _TOPIC_HTTP_ORDER if http.get(key) is not None}
    section["disableSubscriptionOverrides"] = bool(http.get("disableSubscriptionOverrides", False))
    if http.get("defaultRequestPolicy") is not None:
        section["defaultRequestPolicy"] = http["defaultRequestPolicy"]
    for key, item in http.items():
        if key not in section and item is not None and key not in _TOPIC_HTTP_ORDER:
            section[key] = item
    out = {key: item for key, item in document.items() if key != "http"}
    return orjson.dumps({"http": section, **out}).decode()


def effective_topic_policy(value: str | None) -> dict[str, Any]:
    """A topic's EffectiveDeliveryPolicy: its DeliveryPolicy over the system defaults (recorded: a retry policy's
    missing keys take the defaults; ``defaultRequestPolicy`` is the default one unless given)."""
    http = _document(value).get("http")
    http = http if isinstance(http, dict) else {}
    retry = http.get("defaultHealthyRetryPolicy")
    section: dict[str, Any] = {"defaultHealthyRetryPolicy": _filled_retry(retry if isinstance(retry, dict) else {})}
    for key in ("defaultSicklyRetryPolicy", "defaultThrottlePolicy"):
        if http.get(key) is not None:
            section[key] = http[key]
    section["disableSubscriptionOverrides"] = bool(http.get("disableSubscriptionOverrides", False))
    section["defaultRequestPolicy"] = http.get("defaultRequestPolicy") or dict(DEFAULT_REQUEST_POLICY)
    return {"http": section}


def subscription_delivery_policy(value: str) -> dict[str, Any]:
    """A subscription's DeliveryPolicy as GetSubscriptionAttributes shows it: its five keys, null when not given,
    a retry policy filled with the defaults (recorded)."""
    document = _document(value)
    retry = document.get("healthyRetryPolicy")
    return {
        "healthyRetryPolicy": _filled_retry(retry) if isinstance(retry, dict) else None,
        "sicklyRetryPolicy": document.get("sicklyRetryPolicy"),
        "throttlePolicy": document.get("throttlePolicy"),
        "requestPolicy": document.get("requestPolicy"),
        "guaranteed": bool(document.get("guaranteed", False)),
    }


def effective_subscription_policy(value: str | None, topic_value: str | None) -> dict[str, Any]:
    """An HTTP/S subscription's EffectiveDeliveryPolicy: its own policy, each part it leaves null taken from its
    topic's effective policy (recorded: the topic's ``defaultRequestPolicy`` shows as ``requestPolicy``); the
    topic's alone when the topic sets ``disableSubscriptionOverrides``."""
    topic = effective_topic_policy(topic_value)["http"]
    own = subscription_delivery_policy(value or "")
    if topic["disableSubscriptionOverrides"]:
        own = subscription_delivery_policy("")
    return {
        "healthyRetryPolicy": own["healthyRetryPolicy"] or topic["defaultHealthyRetryPolicy"],
        "sicklyRetryPolicy": own["sicklyRetryPolicy"] or topic.get("defaultSicklyRetryPolicy"),
        "throttlePolicy": own["throttlePolicy"] or topic.get("defaultThrottlePolicy"),
        "requestPolicy": own["requestPolicy"] or topic["defaultRequestPolicy"],
        "guaranteed": own["guaranteed"],
    }


_RETRY_BOUNDS = {
    "minDelayTarget": (1, 3600),
    "maxDelayTarget": (1, 3600),
    "numRetries": (0, 100),
    "numNoDelayRetries": (0, 100),
    "numMinDelayRetries": (0, 100),
    "numMaxDelayRetries": (0, 100),
}
"""HTTP/S retry policy bounds (SNS Developer Guide, "Amazon SNS message delivery retries")."""


def check_topic_attribute(name: str, value: str, fifo: bool, creating: bool) -> str:
    """One topic attribute as CreateTopic (``creating``) or SetTopicAttributes takes it: its stored value; raises
    ``InvalidParameter`` for an unknown name or a bad value (API Reference, "SetTopicAttributes")."""
    if name == "FifoTopic" and creating:
        return _boolean(name, value)
    if name not in TOPIC_SETTABLE:
        raise InvalidParameter(
            "Invalid parameter: AttributeName"
            if not creating
            else f"Invalid parameter: Attributes Reason: Unknown attribute {name}"
        )
    if name == "Policy":
        _json_object("Policy", value)
    elif name == "DeliveryPolicy":
        check_delivery_policy(value)
    elif name == "SignatureVersion":
        if value not in ("1", "2"):
            raise InvalidParameter("Invalid parameter: SignatureVersion")
    elif name == "TracingConfig":
        if value not in ("PassThrough", "Active"):
            raise InvalidParameter("Invalid parameter: Attributes Reason: TracingConfig: Invalid value " + value)
    elif name == "ContentBasedDeduplication":
        if not fifo:
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: Content based deduplication can only be set for FIFO topics"
            )
        return _boolean(name, value)
    elif name == "FifoThroughputScope":
        if not fifo:
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: FifoThroughputScope can only be set for FIFO topics"
            )
        if value not in ("Topic", "MessageGroup"):
            raise InvalidParameter(
                f"Invalid parameter: Attributes Reason: FifoThroughputScope: Invalid value [{value}]. "
                "Please use either Topic or MessageGroup"
            )
    elif name == "ArchivePolicy":
        if not fifo:
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: ArchivePolicy can only be set for FIFO topics"
            )
        document = _json_object("ArchivePolicy", value)
        days = document.get("MessageRetentionPeriod")
        if days is not None and (not str(days).isdigit() or not 1 <= int(str(days)) <= 365):
            raise InvalidParameter(
                "Invalid parameter: Attributes Reason: ArchivePolicy: MessageRetentionPeriod must be between 1 and 365"
            )
    elif name == "MaximumMessageSize":
        low, high = MAX_MESSAGE_BYTES
        if not (value.isascii() and value.isdigit() and low <= int(value) <= high):
            raise InvalidParameter(
                f"Invalid parameter: MaximumMessageSize: Invalid value [{value}]. Must be between {low} and {high}."
            )
        return str(int(value))
    elif name == "DisplayName":
        if len(value) > 100:
            raise InvalidParameter("Invalid parameter: DisplayName")
    elif name.endswith("SampleRate"):
        if not value.isdigit() or not 0 <= int(value) <= 100:
            raise InvalidParameter(f"Invalid parameter: Attributes Reason: {name}: must be an integer from 0 to 100")
    return value


class Subscription:
    """One subscription of a topic. ``arn`` is ``<topic arn>:<uuid>``; ``owner`` the account that subscribed;
    ``pending`` while the endpoint has not confirmed (``token`` the confirmation token, None once confirmed);
    ``attributes`` the settable attributes as set (strings); ``filter`` the parsed FilterPolicy (None without
    one)."""

    __slots__ = (
        "arn", "topic_arn", "protocol", "endpoint", "owner", "principal", "pending", "token", "authenticated",
        "attributes", "filter", "created_ms",
    )  # fmt: skip

    def __init__(
        self, arn: str, topic_arn: str, protocol: str, endpoint: str, owner: str, principal: str, created_ms: int
    ) -> None:
        self.arn = arn
        self.topic_arn = topic_arn
        self.protocol = protocol
        self.endpoint = endpoint
        self.owner = owner
        self.principal = principal
        self.pending = False
        self.token: str | None = None
        self.authenticated = True
        self.attributes: dict[str, str] = {}
        self.filter: Any = None
        self.created_ms = created_ms

    @property
    def raw(self) -> bool:
        """Whether RawMessageDelivery is on."""
        return self.attributes.get("RawMessageDelivery") == "true"

    def effective_delivery_policy(self, topic: Topic | None) -> dict[str, Any]:
        """The subscription's EffectiveDeliveryPolicy over its topic's (:func:`effective_subscription_policy`), for
        HTTP/S delivery."""
        return effective_subscription_policy(
            self.attributes.get("DeliveryPolicy"), None if topic is None else topic.attributes.get("DeliveryPolicy")
        )

    def describe(self, topic: Topic | None = None) -> dict[str, str]:
        """GetSubscriptionAttributes' map (API Reference, "GetSubscriptionAttributes"); ``topic`` (its topic) gives
        an HTTP/S subscription's EffectiveDeliveryPolicy what it inherits."""
        out = {
            "ConfirmationWasAuthenticated": "true" if self.authenticated else "false",
            "PendingConfirmation": "true" if self.pending else "false",
            "Owner": self.owner,
            "RawMessageDelivery": self.attributes.get("RawMessageDelivery", "false"),
            "SubscriptionArn": self.arn,
            "TopicArn": self.topic_arn,
            "Endpoint": self.endpoint,
            "Protocol": self.protocol,
            "SubscriptionPrincipal": self.principal,
        }
        for name, value in self.attributes.items():
            if name == "DeliveryPolicy":
                out[name] = orjson.dumps(subscription_delivery_policy(value)).decode()
            elif name not in ("RawMessageDelivery", "FilterPolicyScope"):
                out[name] = value
        if "FilterPolicy" in self.attributes:  # the scope is shown only beside a policy (recorded)
            out["FilterPolicyScope"] = self.attributes.get("FilterPolicyScope", "MessageAttributes")
        if self.protocol in ("http", "https"):
            out["EffectiveDeliveryPolicy"] = orjson.dumps(self.effective_delivery_policy(topic)).decode()
        return out

    def to_doc(self) -> dict[str, Any]:
        """The subscription as a JSON document (durable mode, saved state)."""
        return {
            "arn": self.arn, "topic_arn": self.topic_arn, "protocol": self.protocol, "endpoint": self.endpoint,
            "owner": self.owner, "principal": self.principal, "pending": self.pending, "token": self.token,
            "authenticated": self.authenticated, "attributes": self.attributes, "created_ms": self.created_ms,
        }  # fmt: skip

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Subscription:
        """The subscription of :meth:`to_doc`'s document (its filter policy parsed by the caller)."""
        sub = cls(doc["arn"], doc["topic_arn"], doc["protocol"], doc["endpoint"], doc["owner"], doc["principal"],
                  doc["created_ms"])  # fmt: skip
        sub.pending = bool(doc["pending"])
        sub.token = doc["token"]
        sub.authenticated = bool(doc["authenticated"])
        sub.attributes = dict(doc["attributes"])
        return sub


class Topic:
    """One topic: ``arn``, ``name``, ``account`` and ``region``; ``fifo``; ``attributes`` as set (strings, the
    Policy included); ``tags``; ``subscriptions`` by ARN in subscription order; ``deleted`` (SubscriptionsDeleted);
    FIFO state: ``dedup`` (deduplication ID → (expiry ms, MessageId, SequenceNumber)) and ``sequence``."""

    __slots__ = (
        "arn", "name", "account", "region", "fifo", "attributes", "tags", "subscriptions", "deleted", "dedup",
        "sequence", "data_protection_policy", "created_ms",
    )  # fmt: skip

    def __init__(self, name: str, account: str, region: str, fifo: bool, created_ms: int) -> None:
        self.name = name
        self.account = account
        self.region = region
        self.arn = topic_arn(region, account, name)
        self.fifo = fifo
        self.attributes: dict[str, str] = {}
        self.tags: dict[str, str] = {}
        self.subscriptions: dict[str, Subscription] = {}
        self.deleted = 0
        self.dedup: dict[str, tuple[int, str, str]] = {}
        self.sequence = 0
        self.data_protection_policy = ""
        self.created_ms = created_ms

    @property
    def signature_version(self) -> str:
        """The SignatureVersion of its deliveries (``1`` unless set)."""
        return self.attributes.get("SignatureVersion", "1")

    @property
    def max_message_bytes(self) -> int:
        """The largest message Publish takes, in bytes (body plus attributes): MaximumMessageSize, 262,144 unless
        set."""
        size = self.attributes.get("MaximumMessageSize")
        return int(size) if size else DEFAULT_MAX_MESSAGE_BYTES

    def describe(self) -> dict[str, str]:
        """GetTopicAttributes' map (API Reference, "GetTopicAttributes")."""
        confirmed = sum(1 for sub in self.subscriptions.values() if not sub.pending)
        out = {
            "Policy": self.attributes.get("Policy") or default_topic_policy(self.arn, self.account),
            "Owner": self.account,
            "SubscriptionsPending": str(len(self.subscriptions) - confirmed),
            "TopicArn": self.arn,
            "EffectiveDeliveryPolicy": self.effective_delivery_policy_text(),
            "SubscriptionsConfirmed": str(confirmed),
            "DisplayName": self.attributes.get("DisplayName", ""),
            "SubscriptionsDeleted": str(self.deleted),
        }
        if self.fifo:
            out["FifoTopic"] = "true"
            out["ContentBasedDeduplication"] = self.attributes.get("ContentBasedDeduplication", "false")
        for name, value in self.attributes.items():
            if name not in out:
                out[name] = topic_delivery_policy(value) if name == "DeliveryPolicy" else value
        return out

    def effective_delivery_policy(self) -> dict[str, Any]:
        """The topic's EffectiveDeliveryPolicy (:func:`effective_topic_policy`), for HTTP/S delivery."""
        return effective_topic_policy(self.attributes.get("DeliveryPolicy"))

    def effective_delivery_policy_text(self) -> str:
        """The EffectiveDeliveryPolicy as GetTopicAttributes writes it (compact JSON)."""
        if "DeliveryPolicy" not in self.attributes:
            return DEFAULT_EFFECTIVE_DELIVERY_POLICY
        return orjson.dumps(self.effective_delivery_policy()).decode()

    def to_doc(self) -> dict[str, Any]:
        """The topic and its subscriptions as a JSON document (durable mode, saved state)."""
        return {
            "name": self.name, "account": self.account, "region": self.region, "fifo": self.fifo,
            "attributes": self.attributes, "tags": self.tags, "deleted": self.deleted,
            "dedup": {key: list(value) for key, value in self.dedup.items()}, "sequence": self.sequence,
            "data_protection_policy": self.data_protection_policy, "created_ms": self.created_ms,
            "subscriptions": [sub.to_doc() for sub in self.subscriptions.values()],
        }  # fmt: skip

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Topic:
        """The topic of :meth:`to_doc`'s document (its subscriptions' filter policies parsed by the caller)."""
        topic = cls(doc["name"], doc["account"], doc["region"], bool(doc["fifo"]), doc["created_ms"])
        topic.attributes = dict(doc["attributes"])
        topic.tags = dict(doc["tags"])
        topic.deleted = int(doc["deleted"])
        topic.dedup = {key: (int(v[0]), str(v[1]), str(v[2])) for key, v in doc["dedup"].items()}
        topic.sequence = int(doc["sequence"])
        topic.data_protection_policy = doc.get("data_protection_policy", "")
        for sub_doc in doc["subscriptions"]:
            sub = Subscription.from_doc(sub_doc)
            topic.subscriptions[sub.arn] = sub
        return topic
