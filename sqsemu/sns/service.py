"""The SNS actions: one handler per action, from a request's parameters to its ``<ActionResult>`` elements.

Each handler takes the call's :class:`SNSCall` and its :class:`~sqsemu.sns.wire.Params` and returns the result's
elements (None for the actions whose answer has no result). Sources: the SNS API Reference page of each action;
AWS's recorded answers (docs/behaviour.md, "SNS"). The SMS and mobile push management actions are answered with one
documented error (:data:`NOT_SERVED`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqsemu.sns.errors import (
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    EmptyBatchRequest,
    InvalidAction,
    InvalidBatchEntryId,
    InvalidParameter,
    SNSError,
    TooManyEntriesInBatchRequest,
    length_problem,
    null_problem,
    validation_error,
)
from sqsemu.sns.fanout import Fanout
from sqsemu.sns.model import Subscription, Topic
from sqsemu.sns.publish import Publication, batch_size, prepare, whole_batch
from sqsemu.sns.topics import Topics, check_arn, parse_topic_arn
from sqsemu.sns.wire import Element, Params

__all__ = ["ACTIONS", "NOT_SERVED", "SNSCall", "Service"]

NOT_SERVED = frozenset(
    {
        "CheckIfPhoneNumberIsOptedOut", "CreatePlatformApplication", "CreatePlatformEndpoint",
        "CreateSMSSandboxPhoneNumber", "DeleteEndpoint", "DeletePlatformApplication", "DeleteSMSSandboxPhoneNumber",
        "GetEndpointAttributes", "GetPlatformApplicationAttributes", "GetSMSAttributes",
        "GetSMSSandboxAccountStatus", "ListEndpointsByPlatformApplication", "ListOriginationNumbers",
        "ListPhoneNumbersOptedOut", "ListPlatformApplications", "ListSMSSandboxPhoneNumbers", "OptInPhoneNumber",
        "SetEndpointAttributes", "SetPlatformApplicationAttributes", "SetSMSAttributes",
        "VerifySMSSandboxPhoneNumber",
    }
)  # fmt: skip
"""SNS's SMS and mobile push management actions: out of sqsemu's scope (docs/sns.md, "What is not served")."""

_BATCH_ID = __import__("re").compile(r"[A-Za-z0-9_-]{1,80}")


class SNSCall:
    """What a handler knows of its call: the caller's ``account`` and ``region``, its ``principal`` ARN (the
    SubscriptionPrincipal of what it subscribes), ``url_base`` (``scheme://host`` the call came to), the
    ``trace_header`` (``X-Amzn-Trace-Id``)."""

    __slots__ = ("account", "region", "principal", "url_base", "trace_header")

    def __init__(
        self, account: str, region: str, principal: str, url_base: str, trace_header: str | None = None
    ) -> None:
        self.account = account
        self.region = region
        self.principal = principal
        self.url_base = url_base
        self.trace_header = trace_header


def _map(name: str, values: dict[str, str]) -> Element:
    return (name, [("entry", [("key", key), ("value", value)]) for key, value in values.items()])


def _subscription_member(sub: Subscription) -> Element:
    arn = "PendingConfirmation" if sub.pending else sub.arn
    return ("member", [("Owner", sub.owner), ("Protocol", sub.protocol), ("Endpoint", sub.endpoint),
                       ("SubscriptionArn", arn), ("TopicArn", sub.topic_arn)])  # fmt: skip


TAG_KEY = (1, 128)
TAG_VALUE = (0, 256)
RESOURCE_ARN = (1, 1011)
"""Length bounds of botocore's SNS model: TagKey, TagValue, AmazonResourceName (characters)."""


def _tags(params: Params) -> dict[str, str] | None:
    """A request's Tags: checked against the model (``ValidationError``), then for duplicated keys (recorded)."""
    members = params.members("Tags")
    if members is None:
        return None
    problems: list[str] = []
    for index, member in enumerate(members, 1):
        for field, bounds in (("Key", TAG_KEY), ("Value", TAG_VALUE)):
            path = f"tags.{index}.member.{field.lower()}"
            value = member.get(field)
            problem = null_problem(path) if value is None else length_problem(value, path, *bounds)
            if problem is not None:
                problems.append(problem)
    if problems:
        raise validation_error(problems)
    tags: dict[str, str] = {}
    for member in members:
        key = member.required("Key")
        if key in tags:
            raise InvalidParameter("Invalid parameter: Duplicated keys are not allowed.")
        tags[key] = member.required("Value")
    return tags


def _resource_arn(params: Params) -> str | None:
    """ResourceArn within the model's bounds (``ValidationError``); None when absent."""
    arn = params.get("ResourceArn")
    problem = length_problem(arn, "resourceArn", *RESOURCE_ARN)
    if problem is not None:
        raise validation_error([problem])
    return arn


class Service:
    """The handlers, over one :class:`~sqsemu.sns.topics.Topics` and one :class:`~sqsemu.sns.fanout.Fanout`.
    ``on_subscribed`` starts a new subscription's confirmation (set by :mod:`sqsemu.sns.api`)."""

    def __init__(self, topics: Topics, fanout: Fanout) -> None:
        self.topics = topics
        self.fanout = fanout
        self.on_subscribed: Callable[[SNSCall, Topic, Subscription], None] | None = None
        self.on_unsubscribed: Callable[[SNSCall, Subscription], None] | None = None

    def topic(self, call: SNSCall, params: Params, name: str = "TopicArn") -> Topic:
        """The topic the call names in ``name``."""
        return self.topics.topic(params.get(name), call.region, name)

    # ------------------------------------------------------------------ topics

    def create_topic(self, call: SNSCall, params: Params) -> list[Element]:
        topic = self.topics.create_topic(
            call.account, call.region, params.get("Name"), params.string_map("Attributes"), _tags(params),
            params.get("DataProtectionPolicy"),
        )  # fmt: skip
        return [("TopicArn", topic.arn)]

    def delete_topic(self, call: SNSCall, params: Params) -> None:
        self.topics.delete_topic(params.get("TopicArn"), call.region)

    def list_topics(self, call: SNSCall, params: Params) -> list[Element]:
        page, token = self.topics.list_topics(call.account, call.region, params.get("NextToken"))
        out: list[Element] = [("Topics", [("member", [("TopicArn", t.arn)]) for t in page])]
        if token is not None:
            out.append(("NextToken", token))
        return out

    def get_topic_attributes(self, call: SNSCall, params: Params) -> list[Element]:
        return [_map("Attributes", self.topic(call, params).describe())]

    def set_topic_attributes(self, call: SNSCall, params: Params) -> None:
        topic = self.topic(call, params)
        self.topics.set_topic_attribute(topic, params.get("AttributeName"), params.get("AttributeValue"))

    def add_permission(self, call: SNSCall, params: Params) -> None:
        topic = self.topic(call, params)
        self.topics.add_permission(
            topic, params.get("Label"), params.scalars("AWSAccountId"), params.scalars("ActionName")
        )

    def remove_permission(self, call: SNSCall, params: Params) -> None:
        self.topics.remove_permission(self.topic(call, params), params.get("Label"))

    def tag_resource(self, call: SNSCall, params: Params) -> list[Element]:
        arn = _resource_arn(params)
        self.topics.tag(arn, _tags(params))
        return []

    def untag_resource(self, call: SNSCall, params: Params) -> list[Element]:
        arn = _resource_arn(params)
        keys = params.scalars("TagKeys")
        problems = [length_problem(key, f"tagKeys.{i}.member", *TAG_KEY) for i, key in enumerate(keys or [], 1)]
        if any(problems):
            raise validation_error([p for p in problems if p is not None])
        self.topics.untag(arn, keys)
        return []

    def list_tags_for_resource(self, call: SNSCall, params: Params) -> list[Element]:
        tags = self.topics.tags_of(_resource_arn(params))
        return [("Tags", [("member", [("Key", k), ("Value", v)]) for k, v in tags.items()])]

    def get_data_protection_policy(self, call: SNSCall, params: Params) -> list[Element]:
        topic = self.topic(call, params, "ResourceArn")
        return [("DataProtectionPolicy", topic.data_protection_policy)]  # "" while none is set

    def put_data_protection_policy(self, call: SNSCall, params: Params) -> None:
        self.topics.put_data_protection_policy(
            params.get("ResourceArn"), call.region, params.get("DataProtectionPolicy")
        )

    # ------------------------------------------------------------------ subscriptions

    def subscribe(self, call: SNSCall, params: Params) -> list[Element]:
        topic = self.topic(call, params)
        sub, new = self.topics.subscribe(
            topic, params.get("Protocol"), params.get("Endpoint"), params.string_map("Attributes"), call.account,
            call.principal,
        )  # fmt: skip
        if new and self.on_subscribed is not None:
            self.on_subscribed(call, topic, sub)
        show = not sub.pending or params.flag("ReturnSubscriptionArn")
        return [("SubscriptionArn", sub.arn if show else "pending confirmation")]

    def confirm_subscription(self, call: SNSCall, params: Params) -> list[Element]:
        authenticate = (params.get("AuthenticateOnUnsubscribe") or "").lower() == "true"
        sub = self.topics.confirm(params.get("TopicArn"), call.region, params.get("Token"), authenticate)
        return [("SubscriptionArn", sub.arn)]

    def unsubscribe(self, call: SNSCall, params: Params) -> None:
        sub = self.topics.unsubscribe(params.get("SubscriptionArn"))
        if sub is not None and self.on_unsubscribed is not None:
            self.on_unsubscribed(call, sub)

    def list_subscriptions(self, call: SNSCall, params: Params) -> list[Element]:
        page, token = self.topics.list_subscriptions(call.account, call.region, params.get("NextToken"))
        out: list[Element] = [("Subscriptions", [_subscription_member(s) for s in page])]
        if token is not None:
            out.append(("NextToken", token))
        return out

    def list_subscriptions_by_topic(self, call: SNSCall, params: Params) -> list[Element]:
        page, token = self.topics.list_by_topic(self.topic(call, params), params.get("NextToken"))
        out: list[Element] = [("Subscriptions", [_subscription_member(s) for s in page])]
        if token is not None:
            out.append(("NextToken", token))
        return out

    def get_subscription_attributes(self, call: SNSCall, params: Params) -> list[Element]:
        sub = self.topics.subscription(params.get("SubscriptionArn"))
        return [_map("Attributes", sub.describe(self.topics.by_arn.get(sub.topic_arn)))]

    def set_subscription_attributes(self, call: SNSCall, params: Params) -> None:
        sub = self.topics.subscription(params.get("SubscriptionArn"))
        self.topics.set_subscription_attribute(sub, params.get("AttributeName"), params.get("AttributeValue"))

    # ------------------------------------------------------------------ publishing

    def _publish_topic(self, call: SNSCall, params: Params) -> Topic:
        target = params.get("TargetArn")
        if params.get("PhoneNumber") is not None and params.get("TopicArn") is None and target is None:
            phone = params.get("PhoneNumber") or ""
            raise InvalidParameter(f"Invalid parameter: PhoneNumber Reason: {phone} is not valid to publish to")
        if target is not None and params.get("TopicArn") is None:
            check_arn(target, "TargetArn")
            if parse_topic_arn(target) is None or ":endpoint/" in target:
                raise InvalidParameter(
                    "Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified"
                )
            return self.topics.topic(target, call.region, "TargetArn")
        return self.topic(call, params)

    def publish(self, call: SNSCall, params: Params) -> list[Element]:
        topic = self._publish_topic(call, params)
        publication = prepare(topic, params, self.topics.clock.now_ms(), call.url_base)
        publication.trace_header = call.trace_header
        if topic.fifo:
            earlier = self.fanout.deduplicate(publication)
            if earlier is not None:
                return [("MessageId", earlier[0]), ("SequenceNumber", earlier[1])]
        self.fanout.publish(publication)
        out: list[Element] = [("MessageId", publication.message_id)]
        if publication.sequence_number is not None:
            out.append(("SequenceNumber", publication.sequence_number))
        return out

    def publish_batch(self, call: SNSCall, params: Params) -> list[Element]:
        topic = self.topic(call, params)
        entries = params.members("PublishBatchRequestEntries")
        if not entries:
            raise EmptyBatchRequest("The batch request doesn't contain any entries.")
        if len(entries) > 10:
            raise TooManyEntriesInBatchRequest("The batch request contains more entries than permissible.")
        ids = [entry.get("Id") for entry in entries]
        for entry_id in ids:
            if entry_id is None or not _BATCH_ID.fullmatch(entry_id):
                raise InvalidBatchEntryId(
                    "The Id of a batch entry in a batch request doesn't abide by the specification."
                )
        if len(set(ids)) != len(ids):
            raise BatchEntryIdsNotDistinct("Two or more batch entries in the request have the same Id.")
        now = self.topics.clock.now_ms()
        prepared: list[Publication | SNSError] = []
        for index, entry in enumerate(entries, 1):
            try:
                where = f"publishBatchRequestEntries.{index}.member.messageAttributes"
                prepared.append(prepare(topic, entry, now, call.url_base, where, batch=True))
            except SNSError as exc:
                if whole_batch(exc):
                    raise
                prepared.append(exc)
        if batch_size([p for p in prepared if isinstance(p, Publication)]) > topic.max_message_bytes:
            raise BatchRequestTooLong("The length of all the messages put together is more than the limit.")
        successful: list[Element] = []
        failed: list[Element] = []
        for entry_id, outcome in zip(ids, prepared, strict=True):
            assert entry_id is not None
            if isinstance(outcome, SNSError):
                sender = "true" if outcome.fault == "Sender" else "false"
                fields: list[Element] = [("Id", entry_id), ("Code", outcome.code), ("Message", outcome.message)]
                failed.append(("member", [*fields, ("SenderFault", sender)]))
                continue
            outcome.trace_header = call.trace_header
            message_id, sequence = outcome.message_id, outcome.sequence_number
            if topic.fifo:
                earlier = self.fanout.deduplicate(outcome)
                if earlier is not None:
                    message_id, sequence = earlier
                else:
                    sequence = outcome.sequence_number
                    self.fanout.publish(outcome)
            else:
                self.fanout.publish(outcome)
            member: list[Element] = [("Id", entry_id), ("MessageId", message_id)]
            if sequence is not None:
                member.append(("SequenceNumber", sequence))
            successful.append(("member", member))
        return [("Successful", successful), ("Failed", failed)]


Handler = Callable[[Service, SNSCall, Params], "Sequence[Element] | None"]

ACTIONS: dict[str, Handler] = {
    "CreateTopic": Service.create_topic,
    "DeleteTopic": Service.delete_topic,
    "ListTopics": Service.list_topics,
    "GetTopicAttributes": Service.get_topic_attributes,
    "SetTopicAttributes": Service.set_topic_attributes,
    "Subscribe": Service.subscribe,
    "ConfirmSubscription": Service.confirm_subscription,
    "Unsubscribe": Service.unsubscribe,
    "ListSubscriptions": Service.list_subscriptions,
    "ListSubscriptionsByTopic": Service.list_subscriptions_by_topic,
    "GetSubscriptionAttributes": Service.get_subscription_attributes,
    "SetSubscriptionAttributes": Service.set_subscription_attributes,
    "Publish": Service.publish,
    "PublishBatch": Service.publish_batch,
    "AddPermission": Service.add_permission,
    "RemovePermission": Service.remove_permission,
    "TagResource": Service.tag_resource,
    "UntagResource": Service.untag_resource,
    "ListTagsForResource": Service.list_tags_for_resource,
    "GetDataProtectionPolicy": Service.get_data_protection_policy,
    "PutDataProtectionPolicy": Service.put_data_protection_policy,
}
"""Every SNS action sqsemu serves → its handler."""


def not_served(action: str) -> InvalidAction:
    """The error of an SMS or mobile push management action."""
    return InvalidAction(
        f"sqsemu serves SNS topics, subscriptions and publishing; {action} (SMS and mobile push management) is not "
        "served. See docs/sns.md."
    )
