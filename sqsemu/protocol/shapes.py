"""One typed request dataclass per SQS action, and the member specs both decoders are driven by.

docs/architecture.md, principle 1: the JSON 1.0 decoder (``protocol.json``) and the Query decoder (``protocol.query``)
produce the same object. Each request class lists its members in ``MEMBERS``: the dataclass field, the JSON member
name (the current model's name, e.g. lower-case ``tags`` on CreateQueue) and the Query key(s) of docs/behaviour.md
section 1.2. Absent scalars stay ``None``; absent lists and maps are empty. Semantic validation is the engine's.

Adding an action: write its dataclass here with ``MEMBERS``, list it in ``REQUESTS``, add a handler to
``protocol.operations``.

Response bodies are plain dicts in JSON-model form (member names exactly as in the model).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

import orjson

from sqsemu.engine.errors import invalid_value
from sqsemu.engine.message import (
    MessageAttributeValue,
    ReceiptEntry,
    SendEntry,
    receipt_entry_from,
    send_entry_from,
)


class Kind(Enum):
    """The wire type of a member."""

    STR = "string"
    INT = "integer"
    STR_LIST = "list of strings"  # Query: <Key>.N (and legacy <Key> without index)
    STR_MAP = "map of strings"  # Query: <Key>.N.<KeyName> / <Key>.N.<ValueName>
    ATTR_MAP = "map of MessageAttributeValue"  # Query: <Key>.N.Name / <Key>.N.Value.{DataType,StringValue,...}
    STRUCT_LIST = "list of structures"  # Query: <Key>.N.<Member>


@dataclass(frozen=True, slots=True)
class StructSpec:
    """A structure nested in a list (batch entries): how to build it and which members it has.

    ``build`` makes the structure from its decoded members (a dict of its parameter names to values, absent members
    left out), giving the absent ones their defaults (e.g. a batch entry without ``Id`` gets ``id=""``, which the
    engine rejects as InvalidBatchEntryId).
    """

    build: Callable[[dict[str, Any]], Any]
    members: tuple[Member, ...]


@dataclass(frozen=True, slots=True)
class Member:
    """One request member: dataclass ``attr``, JSON ``name``, Query ``query`` keys and wire ``kind``.

    ``map_key``/``map_value`` name the Query map entry fields (``Name``/``Value`` or ``Key``/``Value``);
    ``legacy`` maps a bare Query scalar onto a map key (``DefaultVisibilityTimeout`` → ``VisibilityTimeout``).
    """

    attr: str
    name: str
    kind: Kind = Kind.STR
    query: tuple[str, ...] = ()
    map_key: str = "Name"
    map_value: str = "Value"
    struct: StructSpec | None = None
    legacy: tuple[tuple[str, str], ...] = ()

    @property
    def query_keys(self) -> tuple[str, ...]:
        """The Query keys of this member (its JSON name when none are given)."""
        return self.query or (self.name,)


def _m(attr: str, name: str, kind: Kind = Kind.STR, *query: str, **kw: Any) -> Member:
    return Member(attr, name, kind, tuple(query), **kw)


MAX_INT_DIGITS = 19
"""Most significant digits of a decimal-string integer member: 19 covers every 64-bit integer (the range of a JSON
integer, which the JSON decoder takes up to 64 bits). Longer strings are refused before ``int()`` sees them, so
Python's int-string limit (4,300 digits) is never reached."""


def to_int(value: object, name: str) -> int:
    """An integer member's value: a JSON integer or a decimal string of ASCII digits with an optional sign.

    Raises InvalidParameterValue (``Value <v> for parameter <Name> is invalid. Reason: Must be an integer.``)
    otherwise, also for a decimal string of more than ``MAX_INT_DIGITS`` significant digits (no SQS integer member
    holds it). Range checks are the engine's.
    """
    if type(value) is int:
        return value
    if isinstance(value, str):
        text = value.strip()
        negative = text[:1] == "-"
        digits = text[1:] if text[:1] in ("+", "-") else text
        if digits.isdigit() and digits.isascii():
            significant = digits.lstrip("0") or "0"
            if len(significant) <= MAX_INT_DIGITS:
                number = int(significant)
                return -number if negative else number
    raise invalid_value(shown_value(value), name, "Must be an integer.")


def shown_value(value: object) -> str:
    """``value`` (a decoded JSON value) as an error message shows it: strings as they are, other scalars as
    ``str()`` does, lists and objects as compact JSON; one nested too deeply to render (orjson stops at 255
    levels) is shown as ``[...]`` / ``{...}``, so rendering a message never recurses without bound."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:
            return "[...]" if isinstance(value, list) else "{...}"
    return str(value)


def decode_binary(value: str, name: str = "BinaryValue") -> bytes:
    """Decode a base64 blob (standard alphabet; padding optional). Bad base64 → InvalidParameterValue."""
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise invalid_value(value, name, "Invalid binary value: not valid base64.") from None


QUEUE_URL = _m("queue_url", "QueueUrl")
ATTRIBUTES = _m(
    "attributes", "Attributes", Kind.STR_MAP, "Attribute", legacy=(("DefaultVisibilityTimeout", "VisibilityTimeout"),)
)
MESSAGE_ATTRIBUTES = _m("message_attributes", "MessageAttributes", Kind.ATTR_MAP, "MessageAttribute")

# Members of SendEntry (a SendMessageBatchRequestEntry).
SEND_ENTRY = StructSpec(
    send_entry_from,
    (
        _m("id", "Id"),
        _m("body", "MessageBody"),
        _m("delay_seconds", "DelaySeconds", Kind.INT),
        _m("message_attributes", "MessageAttributes", Kind.ATTR_MAP, "MessageAttribute"),
        _m("system_attributes", "MessageSystemAttributes", Kind.ATTR_MAP, "MessageSystemAttribute"),
        _m("deduplication_id", "MessageDeduplicationId"),
        _m("group_id", "MessageGroupId"),
    ),
)

RECEIPT_ENTRY = StructSpec(receipt_entry_from, (_m("id", "Id"), _m("receipt_handle", "ReceiptHandle")))

VISIBILITY_ENTRY = StructSpec(
    receipt_entry_from,
    (_m("id", "Id"), _m("receipt_handle", "ReceiptHandle"), _m("visibility_timeout", "VisibilityTimeout", Kind.INT)),
)


class Request:
    """Base of all request classes: ``ACTION`` is the SQS action name, ``MEMBERS`` its member specs."""

    __slots__ = ()

    ACTION: ClassVar[str]
    MEMBERS: ClassVar[tuple[Member, ...]]


@dataclass(slots=True)
class CreateQueueRequest(Request):
    """CreateQueue: ``QueueName``, ``Attributes`` (``Attribute.N``), ``tags`` (``Tag.N.Key/Value``)."""

    ACTION: ClassVar[str] = "CreateQueue"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        _m("queue_name", "QueueName"),
        ATTRIBUTES,
        _m("tags", "tags", Kind.STR_MAP, "Tag", map_key="Key"),
    )
    queue_name: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class GetQueueUrlRequest(Request):
    """GetQueueUrl: ``QueueName`` (required), ``QueueOwnerAWSAccountId``."""

    ACTION: ClassVar[str] = "GetQueueUrl"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        _m("queue_name", "QueueName"),
        _m("queue_owner_aws_account_id", "QueueOwnerAWSAccountId"),
    )
    queue_name: str | None = None
    queue_owner_aws_account_id: str | None = None


@dataclass(slots=True)
class ListQueuesRequest(Request):
    """ListQueues: ``QueueNamePrefix``, ``NextToken``, ``MaxResults`` (1..1000)."""

    ACTION: ClassVar[str] = "ListQueues"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        _m("queue_name_prefix", "QueueNamePrefix"),
        _m("next_token", "NextToken"),
        _m("max_results", "MaxResults", Kind.INT),
    )
    queue_name_prefix: str | None = None
    next_token: str | None = None
    max_results: int | None = None


@dataclass(slots=True)
class DeleteQueueRequest(Request):
    """DeleteQueue: ``QueueUrl``."""

    ACTION: ClassVar[str] = "DeleteQueue"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL,)
    queue_url: str | None = None


@dataclass(slots=True)
class GetQueueAttributesRequest(Request):
    """GetQueueAttributes: ``QueueUrl``, ``AttributeNames`` (``AttributeName.N``)."""

    ACTION: ClassVar[str] = "GetQueueAttributes"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("attribute_names", "AttributeNames", Kind.STR_LIST, "AttributeName"),
    )
    queue_url: str | None = None
    attribute_names: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SetQueueAttributesRequest(Request):
    """SetQueueAttributes: ``QueueUrl``, ``Attributes`` (``Attribute.N.Name/Value``)."""

    ACTION: ClassVar[str] = "SetQueueAttributes"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL, ATTRIBUTES)
    queue_url: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class SendMessageRequest(Request):
    """SendMessage: body, delay (seconds), message and system attributes, FIFO group and deduplication ids."""

    ACTION: ClassVar[str] = "SendMessage"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("message_body", "MessageBody"),
        _m("delay_seconds", "DelaySeconds", Kind.INT),
        MESSAGE_ATTRIBUTES,
        _m("message_system_attributes", "MessageSystemAttributes", Kind.ATTR_MAP, "MessageSystemAttribute"),
        _m("message_deduplication_id", "MessageDeduplicationId"),
        _m("message_group_id", "MessageGroupId"),
    )
    queue_url: str | None = None
    message_body: str | None = None
    delay_seconds: int | None = None
    message_attributes: dict[str, MessageAttributeValue] = field(default_factory=dict)
    message_system_attributes: dict[str, MessageAttributeValue] = field(default_factory=dict)
    message_deduplication_id: str | None = None
    message_group_id: str | None = None


@dataclass(slots=True)
class SendMessageBatchRequest(Request):
    """SendMessageBatch: ``QueueUrl``, ``Entries`` (``SendMessageBatchRequestEntry.N.*``) as ``SendEntry``."""

    ACTION: ClassVar[str] = "SendMessageBatch"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("entries", "Entries", Kind.STRUCT_LIST, "SendMessageBatchRequestEntry", struct=SEND_ENTRY),
    )
    queue_url: str | None = None
    entries: list[SendEntry] = field(default_factory=list)


@dataclass(slots=True)
class ReceiveMessageRequest(Request):
    """ReceiveMessage: attribute selectors, ``MaxNumberOfMessages``, ``VisibilityTimeout`` and ``WaitTimeSeconds``
    (seconds), ``ReceiveRequestAttemptId``.

    Query accepts ``MessageSystemAttributeName.N`` and ``MessageSystemAttributeNames.N`` for the system names.
    """

    ACTION: ClassVar[str] = "ReceiveMessage"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("attribute_names", "AttributeNames", Kind.STR_LIST, "AttributeName"),
        _m(
            "message_system_attribute_names",
            "MessageSystemAttributeNames",
            Kind.STR_LIST,
            "MessageSystemAttributeName",
            "MessageSystemAttributeNames",
        ),
        _m("message_attribute_names", "MessageAttributeNames", Kind.STR_LIST, "MessageAttributeName"),
        _m("max_number_of_messages", "MaxNumberOfMessages", Kind.INT),
        _m("visibility_timeout", "VisibilityTimeout", Kind.INT),
        _m("wait_time_seconds", "WaitTimeSeconds", Kind.INT),
        _m("receive_request_attempt_id", "ReceiveRequestAttemptId"),
    )
    queue_url: str | None = None
    attribute_names: list[str] = field(default_factory=list)
    message_system_attribute_names: list[str] = field(default_factory=list)
    message_attribute_names: list[str] = field(default_factory=list)
    max_number_of_messages: int | None = None
    visibility_timeout: int | None = None
    wait_time_seconds: int | None = None
    receive_request_attempt_id: str | None = None


@dataclass(slots=True)
class DeleteMessageRequest(Request):
    """DeleteMessage: ``QueueUrl``, ``ReceiptHandle``."""

    ACTION: ClassVar[str] = "DeleteMessage"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL, _m("receipt_handle", "ReceiptHandle"))
    queue_url: str | None = None
    receipt_handle: str | None = None


@dataclass(slots=True)
class DeleteMessageBatchRequest(Request):
    """DeleteMessageBatch: ``Entries`` (``DeleteMessageBatchRequestEntry.N.{Id,ReceiptHandle}``)."""

    ACTION: ClassVar[str] = "DeleteMessageBatch"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("entries", "Entries", Kind.STRUCT_LIST, "DeleteMessageBatchRequestEntry", struct=RECEIPT_ENTRY),
    )
    queue_url: str | None = None
    entries: list[ReceiptEntry] = field(default_factory=list)


@dataclass(slots=True)
class ChangeMessageVisibilityRequest(Request):
    """ChangeMessageVisibility: ``ReceiptHandle``, ``VisibilityTimeout`` (seconds)."""

    ACTION: ClassVar[str] = "ChangeMessageVisibility"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("receipt_handle", "ReceiptHandle"),
        _m("visibility_timeout", "VisibilityTimeout", Kind.INT),
    )
    queue_url: str | None = None
    receipt_handle: str | None = None
    visibility_timeout: int | None = None


@dataclass(slots=True)
class ChangeMessageVisibilityBatchRequest(Request):
    """ChangeMessageVisibilityBatch: ``Entries`` (``ChangeMessageVisibilityBatchRequestEntry.N.*``)."""

    ACTION: ClassVar[str] = "ChangeMessageVisibilityBatch"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m(
            "entries",
            "Entries",
            Kind.STRUCT_LIST,
            "ChangeMessageVisibilityBatchRequestEntry",
            struct=VISIBILITY_ENTRY,
        ),
    )
    queue_url: str | None = None
    entries: list[ReceiptEntry] = field(default_factory=list)


@dataclass(slots=True)
class PurgeQueueRequest(Request):
    """PurgeQueue: ``QueueUrl``."""

    ACTION: ClassVar[str] = "PurgeQueue"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL,)
    queue_url: str | None = None


@dataclass(slots=True)
class ListDeadLetterSourceQueuesRequest(Request):
    """ListDeadLetterSourceQueues: ``QueueUrl`` of the DLQ, ``NextToken``, ``MaxResults`` (1..1000)."""

    ACTION: ClassVar[str] = "ListDeadLetterSourceQueues"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("next_token", "NextToken"),
        _m("max_results", "MaxResults", Kind.INT),
    )
    queue_url: str | None = None
    next_token: str | None = None
    max_results: int | None = None


@dataclass(slots=True)
class AddPermissionRequest(Request):
    """AddPermission: ``Label``, ``AWSAccountIds`` (``AWSAccountId.N``), ``Actions`` (``ActionName.N``)."""

    ACTION: ClassVar[str] = "AddPermission"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        QUEUE_URL,
        _m("label", "Label"),
        _m("aws_account_ids", "AWSAccountIds", Kind.STR_LIST, "AWSAccountId"),
        _m("actions", "Actions", Kind.STR_LIST, "ActionName"),
    )
    queue_url: str | None = None
    label: str | None = None
    aws_account_ids: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RemovePermissionRequest(Request):
    """RemovePermission: ``QueueUrl``, ``Label``."""

    ACTION: ClassVar[str] = "RemovePermission"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL, _m("label", "Label"))
    queue_url: str | None = None
    label: str | None = None


@dataclass(slots=True)
class TagQueueRequest(Request):
    """TagQueue: ``Tags`` (``Tag.N.Key/Value``)."""

    ACTION: ClassVar[str] = "TagQueue"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL, _m("tags", "Tags", Kind.STR_MAP, "Tag", map_key="Key"))
    queue_url: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class UntagQueueRequest(Request):
    """UntagQueue: ``TagKeys`` (``TagKey.N``)."""

    ACTION: ClassVar[str] = "UntagQueue"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL, _m("tag_keys", "TagKeys", Kind.STR_LIST, "TagKey"))
    queue_url: str | None = None
    tag_keys: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ListQueueTagsRequest(Request):
    """ListQueueTags: ``QueueUrl``."""

    ACTION: ClassVar[str] = "ListQueueTags"
    MEMBERS: ClassVar[tuple[Member, ...]] = (QUEUE_URL,)
    queue_url: str | None = None


@dataclass(slots=True)
class StartMessageMoveTaskRequest(Request):
    """StartMessageMoveTask: ``SourceArn``, ``DestinationArn``, ``MaxNumberOfMessagesPerSecond``."""

    ACTION: ClassVar[str] = "StartMessageMoveTask"
    MEMBERS: ClassVar[tuple[Member, ...]] = (
        _m("source_arn", "SourceArn"),
        _m("destination_arn", "DestinationArn"),
        _m("max_number_of_messages_per_second", "MaxNumberOfMessagesPerSecond", Kind.INT),
    )
    source_arn: str | None = None
    destination_arn: str | None = None
    max_number_of_messages_per_second: int | None = None


@dataclass(slots=True)
class CancelMessageMoveTaskRequest(Request):
    """CancelMessageMoveTask: ``TaskHandle``."""

    ACTION: ClassVar[str] = "CancelMessageMoveTask"
    MEMBERS: ClassVar[tuple[Member, ...]] = (_m("task_handle", "TaskHandle"),)
    task_handle: str | None = None


@dataclass(slots=True)
class ListMessageMoveTasksRequest(Request):
    """ListMessageMoveTasks: ``SourceArn``, ``MaxResults`` (default 1, max 10)."""

    ACTION: ClassVar[str] = "ListMessageMoveTasks"
    MEMBERS: ClassVar[tuple[Member, ...]] = (_m("source_arn", "SourceArn"), _m("max_results", "MaxResults", Kind.INT))
    source_arn: str | None = None
    max_results: int | None = None


REQUESTS: dict[str, type[Request]] = {
    cls.ACTION: cls
    for cls in (
        CreateQueueRequest,
        GetQueueUrlRequest,
        ListQueuesRequest,
        DeleteQueueRequest,
        GetQueueAttributesRequest,
        SetQueueAttributesRequest,
        SendMessageRequest,
        SendMessageBatchRequest,
        ReceiveMessageRequest,
        DeleteMessageRequest,
        DeleteMessageBatchRequest,
        ChangeMessageVisibilityRequest,
        ChangeMessageVisibilityBatchRequest,
        PurgeQueueRequest,
        ListDeadLetterSourceQueuesRequest,
        AddPermissionRequest,
        RemovePermissionRequest,
        TagQueueRequest,
        UntagQueueRequest,
        ListQueueTagsRequest,
        StartMessageMoveTaskRequest,
        CancelMessageMoveTaskRequest,
        ListMessageMoveTasksRequest,
    )
}
"""Every SQS action name → its request class (all 23 of docs/behaviour.md section 2)."""
