"""The event a function receives from an SQS event source mapping ("Using Lambda with Amazon SQS", the example
event): ``{"Records": [record, ...]}``, one record per message, in the order received.

A record: ``messageId``, ``receiptHandle``, ``body``, ``attributes`` (the system attributes, as ReceiveMessage
with ``All`` names them: ``ApproximateReceiveCount``, ``SentTimestamp``, ``SenderId``,
``ApproximateFirstReceiveTimestamp``, and for FIFO queues ``SequenceNumber``, ``MessageGroupId``,
``MessageDeduplicationId``; ``AWSTraceHeader`` when set), ``messageAttributes`` (lower-camel: ``stringValue`` or
``binaryValue`` base64, ``stringListValues``, ``binaryListValues``, ``dataType``), ``md5OfMessageAttributes``
(only when the message has attributes), ``md5OfBody``, ``eventSource`` (``aws:sqs``), ``eventSourceARN`` (the
queue's ARN) and ``awsRegion``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from sqsemu.engine.delivery import Received
from sqsemu.engine.message import MessageAttributeValue
from sqsemu.engine.queue import Queue
from sqsemu.protocol import md5
from sqsemu.protocol.operations import system_attributes

EVENT_SOURCE = "aws:sqs"


def message_attribute(value: MessageAttributeValue) -> dict[str, Any]:
    """A message attribute in the event's lower-camel form."""
    out: dict[str, Any] = {}
    if value.binary_value is not None:
        out["binaryValue"] = base64.b64encode(value.binary_value).decode()
    else:
        out["stringValue"] = value.string_value
    out["stringListValues"] = []
    out["binaryListValues"] = []
    out["dataType"] = value.data_type
    return out


def record(queue: Queue, received: Received) -> dict[str, Any]:
    """One event record for a received message (``(message, receipt handle)``)."""
    message, handle = received
    out: dict[str, Any] = {
        "messageId": message.message_id,
        "receiptHandle": handle,
        "body": message.body,
        "attributes": system_attributes(message, None),
        "messageAttributes": {k: message_attribute(v) for k, v in message.message_attributes.items()},
    }
    if message.message_attributes:
        out["md5OfMessageAttributes"] = md5.attributes_md5_cached(message)
    out["md5OfBody"] = md5.body_md5_cached(message)
    out["eventSource"] = EVENT_SOURCE
    out["eventSourceARN"] = queue.arn
    out["awsRegion"] = queue.namespace.region
    return out


def sqs_event(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The event for a batch of records."""
    return {"Records": list(records)}
