"""Publish and PublishBatch's checks: a message, its attributes, its structure and a FIFO topic's group and
deduplication, made into one :class:`Publication` for :mod:`sqsemu.sns.fanout`.

Sources: the SNS API Reference pages "Publish" and "PublishBatch"; the SNS Developer Guide pages "Amazon SNS
message attributes", "Amazon SNS message deduplication for FIFO topics" and "Publishing messages with a different
payload for each protocol" (MessageStructure); AWS's recorded answers (docs/behaviour.md, "SNS").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import uuid
from collections.abc import Mapping

import orjson

from sqsemu.sns.errors import InvalidParameter, InvalidParameterValue, SNSError, ValidationError
from sqsemu.sns.model import Topic
from sqsemu.sns.wire import Params

__all__ = [
    "DEDUPLICATION_INTERVAL_MS",
    "Attribute",
    "AttributeValidationError",
    "Publication",
    "batch_size",
    "check_attributes",
    "prepare",
    "whole_batch",
]

DEDUPLICATION_INTERVAL_MS = 5 * 60 * 1000
"""A FIFO topic's deduplication interval: 5 minutes (SNS Developer Guide, "Amazon SNS message deduplication for
FIFO topics")."""

Attribute = tuple[str, str]
"""A message attribute as delivered: ``(DataType, value)``, a Binary value in base64."""

_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
SUBJECT_CHARACTERS = 100
"""The longest Subject, in characters: the API Reference ("Publish") says "less than 100 characters"; Amazon
Managed Service for Prometheus documents truncating subjects to "the 100 character size limit" of SNS."""
_NOT_IN_SUBJECT = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
"""Control characters and line breaks (API Reference, "Publish": "UTF-8 text with no line breaks or control
characters")."""


class Publication:
    """One published message on its way to the subscriptions: ``message`` (the body as published), ``structured``
    (MessageStructure=json: protocol → message, ``default`` included; None otherwise), ``attributes`` (name →
    :data:`Attribute`, in the order given), ``group_id`` and ``deduplication_id`` (a FIFO topic's, the latter the
    SHA-256 of the message under ContentBasedDeduplication), ``sequence_number`` (FIFO), ``timestamp_ms`` (server
    clock), ``url_base`` (``scheme://host`` of the call, for the envelope's URLs), ``trace_header``."""

    __slots__ = (
        "message_id", "topic", "message", "subject", "structured", "attributes", "group_id", "deduplication_id",
        "sequence_number", "timestamp_ms", "url_base", "trace_header",
    )  # fmt: skip

    def __init__(self, topic: Topic, message: str, timestamp_ms: int, url_base: str) -> None:
        self.message_id = str(uuid.uuid4())
        self.topic = topic
        self.message = message
        self.subject: str | None = None
        self.structured: dict[str, str] | None = None
        self.attributes: dict[str, Attribute] = {}
        self.group_id: str | None = None
        self.deduplication_id: str | None = None
        self.sequence_number: str | None = None
        self.timestamp_ms = timestamp_ms
        self.url_base = url_base
        self.trace_header: str | None = None

    def message_for(self, protocol: str) -> str:
        """The message a subscription of ``protocol`` gets: its own key of a structured message, else ``default``."""
        if self.structured is None:
            return self.message
        return self.structured.get(protocol, self.structured["default"])


def _check_name(name: str) -> None:
    if len(name.encode()) >= 256:
        raise InvalidParameterValue("Length of message attribute name must be less than 256 bytes.")
    for char in name:
        if not _NAME_CHARS.fullmatch(char):
            raise InvalidParameterValue(
                f"Invalid non-alphanumeric character '#x{ord(char):X}' was found in the message attribute name. Can "
                "only include alphanumeric characters, hyphens, underscores, or dots."
            )
    if name.startswith("."):
        raise InvalidParameterValue("Invalid message attribute name starting with character '.' was found.")
    if name.endswith("."):
        raise InvalidParameterValue("Invalid message attribute name ending with character '.' was found.")
    if ".." in name:
        raise InvalidParameterValue("Message attribute name can not have successive '.' character.")


def check_attributes(entries: Mapping[str, Params] | None, where: str) -> dict[str, Attribute]:
    """The MessageAttributes of a Publish (``where`` = ``messageAttributes``) or a PublishBatch entry
    (``publishBatchRequestEntries.N.member.messageAttributes``), checked as AWS checks them (recorded messages);
    raises ``InvalidParameterValue`` or ``ValidationError``. Their number is bounded by the topic's message size
    only: SNS takes more than 10, which a raw delivery to an SQS queue cannot carry (SNS Developer Guide, "Amazon SNS
    message attributes")."""
    out: dict[str, Attribute] = {}
    if not entries:
        return out
    for name, value in entries.items():
        _check_name(name)
        data_type = value.get("DataType")
        if data_type is None:
            raise AttributeValidationError(
                f"1 validation error detected: Value null at '{where}.{name}.member.dataType' failed to satisfy "
                "constraint: Member must not be null"
            )
        base = data_type.split(".", 1)[0]
        if base not in ("String", "Number", "Binary") or (base != data_type and len(data_type) <= len(base) + 1):
            raise InvalidParameterValue(
                f"The message attribute '{name}' has an invalid message attribute type, the set of supported type "
                "prefixes is Binary, Number, and String."
            )
        string_value = value.get("StringValue")
        binary_value = value.get("BinaryValue")
        if base == "Binary":
            if string_value is not None and binary_value is None:
                raise InvalidParameterValue(
                    f"The message attribute '{name}' with type 'Binary' must use field 'Binary'."
                )
            if not binary_value:
                raise InvalidParameterValue(
                    f"The message attribute '{name}' must contain non-empty message attribute value for message "
                    "attribute type 'Binary'."
                )
            try:
                base64.b64decode(binary_value, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidParameterValue(f"The message attribute '{name}' has an invalid binary value.") from None
            out[name] = (data_type, binary_value)
            continue
        if binary_value is not None and string_value is None:
            raise InvalidParameterValue(f"The message attribute '{name}' with type '{base}' must use field 'String'.")
        if not string_value:
            raise InvalidParameterValue(
                f"The message attribute '{name}' must contain non-empty message attribute value for message "
                f"attribute type '{base}'."
            )
        if base == "Number" and not _NUMBER.fullmatch(string_value):
            raise InvalidParameterValue(
                f"An invalid or out-of-range value '{string_value}' was supplied for the message attribute "
                f"'{name}' of type 'Number'."
            )
        if data_type == "String.Array":
            try:
                parsed = orjson.loads(string_value)
            except orjson.JSONDecodeError:
                parsed = None
            if not isinstance(parsed, list):
                raise InvalidParameterValue(
                    f"The message attribute '{name}' with type 'String.Array' must be a JSON array."
                )
        out[name] = (data_type, string_value)
    return out


class AttributeValidationError(ValidationError):
    """``ValidationError`` (400, Sender): a missing DataType, as AWS's request validation words it (recorded)."""


def _size(message: str, attributes: Mapping[str, Attribute]) -> int:
    total = len(message.encode())
    for name, (data_type, value) in attributes.items():
        total += len(name.encode()) + len(data_type.encode()) + len(value.encode())
    return total


def prepare(
    topic: Topic,
    params: Params,
    timestamp_ms: int,
    url_base: str,
    where: str = "messageAttributes",
    batch: bool = False,
) -> Publication:
    """A Publish (or one PublishBatch entry's parameters) checked: the :class:`Publication`; raises
    ``InvalidParameter`` / ``InvalidParameterValue`` as AWS words them (recorded). FIFO deduplication is the
    caller's (:meth:`sqsemu.sns.fanout.Fanout.deduplicate`)."""
    message = params.get("Message")
    if message is None:
        raise InvalidParameter("Invalid parameter: Message")
    if message == "":
        raise InvalidParameter("Invalid parameter: Empty message")
    subject = params.get("Subject")
    if subject is not None and (
        not 1 <= len(subject) <= SUBJECT_CHARACTERS or _NOT_IN_SUBJECT.search(subject) is not None
    ):
        raise InvalidParameter("Invalid parameter: Subject")
    attributes = check_attributes(params.entries("MessageAttributes", "Name", "Value"), where)
    publication = Publication(topic, message, timestamp_ms, url_base)
    publication.subject = subject
    publication.attributes = attributes
    structure = params.get("MessageStructure")
    if structure is not None:
        if structure != "json":
            raise InvalidParameter("Invalid parameter: MessageStructure")
        try:
            document = orjson.loads(message)
        except orjson.JSONDecodeError:
            raise InvalidParameter("Invalid parameter: Message Structure - JSON message body failed to parse") from None
        if not isinstance(document, dict) or not isinstance(document.get("default"), str):
            raise InvalidParameter("Invalid parameter: Message Structure - No default entry in JSON message body")
        publication.structured = {key: value for key, value in document.items() if isinstance(value, str)}
    if not batch and _size(message, attributes) > topic.max_message_bytes:
        raise InvalidParameter("Invalid parameter: Message too long")
    group_id = params.get("MessageGroupId")
    dedup_id = params.get("MessageDeduplicationId")
    if topic.fifo:
        if group_id is None:
            raise InvalidParameter("Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
        _check_token(group_id, "MessageGroupId")
        if dedup_id is None:
            if topic.attributes.get("ContentBasedDeduplication") != "true":
                raise InvalidParameter(
                    "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or "
                    "MessageDeduplicationId provided explicitly"
                )
            dedup_id = hashlib.sha256(message.encode()).hexdigest()
        else:
            _check_token(dedup_id, "MessageDeduplicationId")
    else:
        if dedup_id is not None:
            raise InvalidParameter(
                "Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId "
                "parameter that is not valid for this topic type"
            )
        if group_id is not None:
            _check_token(group_id, "MessageGroupId")
    publication.group_id = group_id
    publication.deduplication_id = dedup_id
    return publication


_TOKEN = re.compile(r"[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}")


def _check_token(value: str, name: str) -> None:
    """A MessageGroupId or MessageDeduplicationId: 1 to 128 printable ASCII characters (API Reference, "Publish")."""
    if not _TOKEN.fullmatch(value):
        raise InvalidParameter(f"Invalid parameter: {name} Reason: {name} can only include alphanumeric and "
                               "punctuation characters. 1 to 128 in length.")  # fmt: skip


_WHOLE_BATCH = (
    "Invalid parameter: The MessageGroupId",
    "Invalid parameter: The topic should",
    "Invalid parameter: Message Structure",
    "Invalid parameter: MessageDeduplicationId",
)


def whole_batch(error: SNSError) -> bool:
    """Whether a PublishBatch entry's error is the whole request's answer (recorded for the message attribute
    checks, a FIFO topic's group and deduplication IDs and MessageStructure) rather than its entry's ``Failed``
    member (sqsemu's decision for the other checks: docs/behaviour.md, "SNS")."""
    if isinstance(error, (InvalidParameterValue, AttributeValidationError)):
        return True
    return isinstance(error, InvalidParameter) and error.message.startswith(_WHOLE_BATCH)


def batch_size(publications: list[Publication]) -> int:
    """The bytes of a batch's messages and attributes together (BatchRequestTooLong over the topic's maximum)."""
    return sum(_size(p.message, p.attributes) for p in publications)
