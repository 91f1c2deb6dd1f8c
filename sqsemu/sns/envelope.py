"""The documents SNS delivers: the JSON of a notification or a (un)subscribe confirmation, the Lambda event, and the
headers of an HTTP/S delivery.

Keys come in AWS's order and the JSON in AWS's layout, byte for byte as recorded from real deliveries to SQS queues:
one key per line, two spaces before it, `` : `` between key and value, ``,\\n`` between members and ``\\n}`` at the
end (no final newline); ``MessageAttributes`` is an object of one line per attribute, indented four spaces, each
attribute written compactly as ``{"Type":...,"Value":...}``. Strings escape only what JSON requires (``"``, ``\\``
and the control characters); ``/`` and characters beyond ASCII are written as they are.

Timestamps come from the server's clock as epoch milliseconds, never from the wall clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqsemu.sns.signing import SigningKey

import datetime
import re
from collections.abc import Mapping
from typing import Any

NOTIFICATION = "Notification"
SUBSCRIPTION_CONFIRMATION = "SubscriptionConfirmation"
UNSUBSCRIBE_CONFIRMATION = "UnsubscribeConfirmation"
MESSAGE_TYPES = (SUBSCRIPTION_CONFIRMATION, NOTIFICATION, UNSUBSCRIBE_CONFIRMATION)
"""The values of ``Type`` and of the ``x-amz-sns-message-type`` header."""

CONTENT_TYPE = "text/plain; charset=UTF-8"
"""The Content-Type of an HTTP/S delivery when the delivery policy names no other (headerContentType)."""

USER_AGENT = "Amazon Simple Notification Service Agent"
"""The User-Agent of an HTTP/S delivery."""

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES.update({chr(code): f"\\u{code:04X}" for code in range(0x20) if chr(code) not in _ESCAPES})
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f]')


def _quote(text: str) -> str:
    """``text`` as a JSON string: ``"`` and ``\\`` escaped, the control characters as ``\\n``, ``\\t``... or
    ``\\u00XX`` (upper-case hex); everything else, ``/`` and non-ASCII included, as it is."""
    return '"' + _NEEDS_ESCAPE.sub(lambda found: _ESCAPES[found.group()], text) + '"'


def json_string_body(text: str) -> str:
    """``text`` escaped as inside a JSON string (:func:`_quote` without the quotes)."""
    return _quote(text)[1:-1]


def iso_timestamp(timestamp_ms: int) -> str:
    """``timestamp_ms`` (epoch milliseconds) as SNS writes ``Timestamp``: UTC, milliseconds, ``Z``
    (``2024-01-01T00:00:00.000Z``)."""
    seconds, millis = divmod(timestamp_ms, 1000)
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{millis:03d}Z"


def subscribe_message(topic_arn: str) -> str:
    """The ``Message`` of a SubscriptionConfirmation (SNS Developer Guide, "HTTP/HTTPS subscription confirmation
    JSON format")."""
    return (
        f"You have chosen to subscribe to the topic {topic_arn}.\n"
        "To confirm the subscription, visit the SubscribeURL included in this message."
    )


def unsubscribe_message(subscription_arn: str) -> str:
    """The ``Message`` of an UnsubscribeConfirmation (SNS Developer Guide, "HTTP/HTTPS unsubscribe confirmation JSON
    format")."""
    return (
        f"You have chosen to deactivate subscription {subscription_arn}.\n"
        "To cancel this operation and restore the subscription, visit the SubscribeURL included in this message."
    )


def _attributes_json(attributes: Mapping[str, tuple[str, str]]) -> str:
    lines = [
        f'    {_quote(name)} : {{"Type":{_quote(data_type)},"Value":{_quote(value)}}}'
        for name, (data_type, value) in attributes.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n  }"


def _document(members: list[tuple[str, str]]) -> str:
    """The top-level object: ``members`` are (key, value already written as JSON), in order."""
    return "{\n" + ",\n".join(f"  {_quote(key)} : {value}" for key, value in members) + "\n}"


def _strings(fields: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(key, _quote(value)) for key, value in fields.items()]


def notification(
    *,
    message_id: str,
    topic_arn: str,
    subject: str | None,
    message: str,
    timestamp_ms: int,
    signature_version: str,
    signing: SigningKey,
    cert_url: str,
    unsubscribe_url: str,
    message_attributes: Mapping[str, tuple[str, str]],
    sequence_number: str | None,
) -> str:
    """The JSON text of a Notification, as delivered to an SQS queue or in an HTTP/S POST body.

    Keys: Type, MessageId, SequenceNumber (FIFO topics only: ``sequence_number`` given), TopicArn, Subject (only
    when ``subject`` is not None), Message, Timestamp (``iso_timestamp(timestamp_ms)``), SignatureVersion,
    Signature, SigningCertURL, UnsubscribeURL, MessageAttributes (only when there are any: name ->
    ``(DataType, value)``, a Binary value already Base64). A FIFO topic's notification is not signed: it has no
    SignatureVersion, Signature or SigningCertURL, as recorded from FIFO topics (``signature_version``, ``signing``
    and ``cert_url`` are then unused). ``signature_version`` is "1" (SHA1withRSA) or "2" (SHA256withRSA); another
    raises ``ValueError``. Sources: SNS Developer Guide, "HTTP/HTTPS notification JSON format" and "Fanout to
    Amazon SQS queues", and recorded SNS-to-SQS deliveries (tests/unit/test_sns_envelope.py names them).
    """
    timestamp = iso_timestamp(timestamp_ms)
    signed: dict[str, str] = {"Type": NOTIFICATION, "MessageId": message_id, "TopicArn": topic_arn}
    if subject is not None:
        signed["Subject"] = subject
    signed["Message"] = message
    signed["Timestamp"] = timestamp
    members = _strings(signed)
    if sequence_number is not None:
        members.insert(2, ("SequenceNumber", _quote(sequence_number)))
    else:
        signature = signing.sign(signed, signature_version)
        members += _strings({"SignatureVersion": signature_version, "Signature": signature, "SigningCertURL": cert_url})
    members.append(("UnsubscribeURL", _quote(unsubscribe_url)))
    if message_attributes:
        members.append(("MessageAttributes", _attributes_json(message_attributes)))
    return _document(members)


def _confirmation(
    kind: str,
    *,
    message_id: str,
    token: str,
    topic_arn: str,
    message: str,
    subscribe_url: str,
    timestamp_ms: int,
    signature_version: str,
    signing: SigningKey,
    cert_url: str,
) -> str:
    fields = {
        "Type": kind,
        "MessageId": message_id,
        "Token": token,
        "TopicArn": topic_arn,
        "Message": message,
        "SubscribeURL": subscribe_url,
        "Timestamp": iso_timestamp(timestamp_ms),
    }
    fields["SignatureVersion"] = signature_version
    fields["Signature"] = signing.sign(fields, signature_version)
    fields["SigningCertURL"] = cert_url
    return _document(_strings(fields))


def subscription_confirmation(
    *,
    message_id: str,
    token: str,
    topic_arn: str,
    subscribe_url: str,
    timestamp_ms: int,
    signature_version: str,
    signing: SigningKey,
    cert_url: str,
) -> str:
    """The JSON text of a SubscriptionConfirmation: Type, MessageId, Token, TopicArn, Message
    (``subscribe_message(topic_arn)``), SubscribeURL, Timestamp, SignatureVersion, Signature, SigningCertURL (SNS
    Developer Guide, "HTTP/HTTPS subscription confirmation JSON format"). Raises ``ValueError`` for a
    ``signature_version`` other than "1" or "2"."""
    return _confirmation(
        SUBSCRIPTION_CONFIRMATION,
        message_id=message_id,
        token=token,
        topic_arn=topic_arn,
        message=subscribe_message(topic_arn),
        subscribe_url=subscribe_url,
        timestamp_ms=timestamp_ms,
        signature_version=signature_version,
        signing=signing,
        cert_url=cert_url,
    )


def unsubscribe_confirmation(
    *,
    message_id: str,
    token: str,
    topic_arn: str,
    subscription_arn: str,
    subscribe_url: str,
    timestamp_ms: int,
    signature_version: str,
    signing: SigningKey,
    cert_url: str,
) -> str:
    """The JSON text of an UnsubscribeConfirmation: the keys of a SubscriptionConfirmation, with Message
    ``unsubscribe_message(subscription_arn)`` and a SubscribeURL that restores the subscription (SNS Developer
    Guide, "HTTP/HTTPS unsubscribe confirmation JSON format"). Raises ``ValueError`` for a ``signature_version``
    other than "1" or "2"."""
    return _confirmation(
        UNSUBSCRIBE_CONFIRMATION,
        message_id=message_id,
        token=token,
        topic_arn=topic_arn,
        message=unsubscribe_message(subscription_arn),
        subscribe_url=subscribe_url,
        timestamp_ms=timestamp_ms,
        signature_version=signature_version,
        signing=signing,
        cert_url=cert_url,
    )


def lambda_event(
    *,
    subscription_arn: str,
    message_id: str,
    topic_arn: str,
    subject: str | None,
    message: str,
    timestamp_ms: int,
    signature_version: str,
    signing: SigningKey,
    cert_url: str,
    unsubscribe_url: str,
    message_attributes: Mapping[str, tuple[str, str]],
) -> dict[str, Any]:
    """The event SNS invokes a Lambda function with: one record, ``{"Records": [{"EventSource": "aws:sns",
    "EventVersion": "1.0", "EventSubscriptionArn": ..., "Sns": {...}}]}``.

    ``Sns`` holds Type, MessageId, TopicArn, Subject (None when there is none), Message, Timestamp,
    SignatureVersion, Signature, SigningCertUrl, UnsubscribeUrl and MessageAttributes (always there, ``{}`` when
    empty; each ``{"Type": DataType, "Value": value}``), in that order, as recorded from real invocations (Lambda
    Developer Guide, "Using AWS Lambda with Amazon SNS", shows the same keys). The signature is the notification's
    (``SigningCertUrl`` and ``UnsubscribeUrl`` are spelt so only here). Raises ``ValueError`` for a
    ``signature_version`` other than "1" or "2".
    """
    timestamp = iso_timestamp(timestamp_ms)
    signed: dict[str, str | None] = {
        "Type": NOTIFICATION,
        "MessageId": message_id,
        "TopicArn": topic_arn,
        "Subject": subject,
        "Message": message,
        "Timestamp": timestamp,
    }
    sns: dict[str, Any] = dict(signed)
    sns["SignatureVersion"] = signature_version
    sns["Signature"] = signing.sign(signed, signature_version)
    sns["SigningCertUrl"] = cert_url
    sns["UnsubscribeUrl"] = unsubscribe_url
    sns["MessageAttributes"] = {
        name: {"Type": data_type, "Value": value} for name, (data_type, value) in message_attributes.items()
    }
    record = {
        "EventSource": "aws:sns",
        "EventVersion": "1.0",
        "EventSubscriptionArn": subscription_arn,
        "Sns": sns,
    }
    return {"Records": [record]}


def http_headers(
    kind: str,
    message_id: str,
    topic_arn: str,
    subscription_arn: str | None,
    raw: bool,
    content_type: str = CONTENT_TYPE,
) -> list[tuple[str, str]]:
    """The headers SNS sends with an HTTP/S delivery of a message of Type ``kind``, in the documented order:
    x-amz-sns-message-type, x-amz-sns-message-id, x-amz-sns-topic-arn, x-amz-sns-subscription-arn (when
    ``subscription_arn`` is given: the SubscriptionConfirmation example has none), x-amz-sns-rawdelivery "true"
    (only for raw message delivery), Content-Type, User-Agent. Content-Length, Host and Connection are the HTTP
    client's. Sources: SNS Developer Guide, "HTTP/HTTPS headers" and "Amazon SNS raw message delivery". Raises
    ``ValueError`` for a ``kind`` not in ``MESSAGE_TYPES``.
    """
    if kind not in MESSAGE_TYPES:
        raise ValueError(f"an SNS message type is one of {', '.join(MESSAGE_TYPES)}, not {kind!r}")
    headers = [
        ("x-amz-sns-message-type", kind),
        ("x-amz-sns-message-id", message_id),
        ("x-amz-sns-topic-arn", topic_arn),
    ]
    if subscription_arn is not None:
        headers.append(("x-amz-sns-subscription-arn", subscription_arn))
    if raw:
        headers.append(("x-amz-sns-rawdelivery", "true"))
    headers += [("Content-Type", content_type), ("User-Agent", USER_AGENT)]
    return headers
