"""Access lines (``--access-log``): one per SQS call, logged at INFO by ``sqsemu.access``; one per admin call
(``/health``, ``/metrics``, ``/_sqsemu/*``) by ``sqsemu.access.admin``.

An SQS call's line, in the text format (logfmt: ``key=value``, values quoted JSON-style when they hold blanks,
quotes, ``=`` or anything but printable ASCII; absent values left out), on one line::

    action=SendMessage queue=000000000000/orders protocol=json status=400 error=QueueDoesNotExist
        latency_ms=0.412 request_id=8a4e0f6c-...

- ``action``: the action the request names (``-`` when it names none);
- ``queue``: ``<account>/<name>`` of the queue it addresses (its QueueUrl, the request path, or the QueueName of
  CreateQueue and GetQueueUrl), absent when it addresses none (ListQueues) or was refused before that was known;
- ``protocol``: ``json`` or ``query``; ``status``: the HTTP status (0 when a fault rule dropped the connection);
- ``error``: the SQS error code (the error shape: ``QueueDoesNotExist``, ``InvalidParameterValue``...), absent on
  success;
- ``messages``: messages returned (ReceiveMessage) or batch entries that succeeded (``*Batch`` actions);
  ``failed``: batch entries that failed;
- ``latency_ms``: from the request's headers to the end of its answer, milliseconds (a long poll's wait included);
- ``request_id``: the ``x-amzn-RequestId`` of the answer.

In the JSON format these are fields of the line's object (``messages``, ``failed``, ``queue`` and ``error`` are
``null`` when absent), next to ``time``, ``level``, ``logger`` and ``message`` (the text form above).

An SNS call's line (docs/sns.md) names its service and, in place of a queue, the topic::

    action=Publish service=sns topic=arn:aws:sns:us-east-1:000000000000:orders protocol=query status=200
        latency_ms=0.388 request_id=...

- ``topic``: the ARN of the topic the call addresses: its ``TopicArn``, ``TargetArn`` or ``ResourceArn``, the topic
  part of its ``SubscriptionArn`` (Unsubscribe, Get/SetSubscriptionAttributes), or the ARN CreateTopic's ``Name``
  makes in the caller's account and region; absent when it addresses none (ListTopics, ListSubscriptions). It is
  the ARN as the request wrote it (a call that named no existing topic logs the name it gave), cut to
  :data:`MAX_TOPIC_CHARS` characters;
- ``service``: ``sns``; ``error``: the SNS error code (``NotFound``, ``InvalidParameter``...); the other fields as
  an SQS call's (``protocol`` is always ``query``: SNS has no JSON protocol).

An admin call's line: ``method=POST path=/_sqsemu/reset status=200 latency_ms=1.204``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

__all__ = [
    "ACCESS_LOGGER",
    "ADMIN_ACCESS_LOGGER",
    "AccessLog",
    "AdminCall",
    "SnsCall",
    "SqsCall",
    "logfmt",
    "sns_topic",
]

ACCESS_LOGGER = "sqsemu.access"
ADMIN_ACCESS_LOGGER = "sqsemu.access.admin"
MAX_VALUE_CHARS = 200
"""Longer values (a client's made-up action or queue URL) are cut to this many characters, with ``...``."""
MAX_TOPIC_CHARS = 400
"""Longer topic ARNs are cut to this many characters, with ``...`` (a topic's ARN is at most about 310: its name
has up to 256)."""
_TOPIC_PARAMETERS = ("TopicArn", "TargetArn", "ResourceArn")

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./:+@,;!?*#%&()[]{}<>|^~$'")


def _value(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    if text and all(char in _PLAIN for char in text):
        return text
    return json.dumps(text)


def logfmt(fields: dict[str, Any], limit: int = MAX_VALUE_CHARS) -> str:
    """``key=value`` pairs separated by blanks; None values are left out, others quoted when needed and cut to
    ``limit`` characters."""
    return " ".join(f"{key}={_value(value, limit)}" for key, value in fields.items() if value is not None)


class SqsCall:
    """The access line of one SQS call: ``str()`` is its text, ``fields()`` its JSON fields."""

    __slots__ = ("action", "queue", "protocol", "status", "error", "messages", "failed", "latency_ms", "request_id")

    def __init__(
        self,
        action: str | None,
        queue: str | None,
        protocol: str,
        status: int,
        error: str | None,
        messages: int | None,
        failed: int | None,
        seconds: float,
        request_id: str,
    ) -> None:
        self.action = action or "-"
        self.queue = queue
        self.protocol = protocol
        self.status = status
        self.error = error
        self.messages = messages
        self.failed = failed
        self.latency_ms = round(seconds * 1000, 3)
        self.request_id = request_id

    def fields(self) -> dict[str, Any]:
        """The line's fields, in their order (None: absent)."""
        return {
            "action": self.action if len(self.action) <= MAX_VALUE_CHARS else self.action[:MAX_VALUE_CHARS] + "...",
            "queue": self.queue,
            "protocol": self.protocol,
            "status": self.status,
            "error": self.error,
            "messages": self.messages,
            "failed": self.failed,
            "latency_ms": self.latency_ms,
            "request_id": self.request_id,
        }

    def __str__(self) -> str:
        return logfmt(self.fields())


def sns_topic(action: str | None, params: Sequence[tuple[str, str]], account: str, region: str) -> str | None:
    """The topic ARN an SNS call addresses (see the module docstring), from its form ``params``; ``account`` and
    ``region`` are the caller's (CreateTopic's ARN). None when it names none."""
    found: dict[str, str] = {}
    for name, value in params:
        if name in _TOPIC_PARAMETERS or name == "SubscriptionArn" or name == "Name":
            found.setdefault(name, value)
    for name in _TOPIC_PARAMETERS:
        if name in found:
            return found[name]
    subscription = found.get("SubscriptionArn")
    if subscription is not None:
        return subscription.rsplit(":", 1)[0] if subscription.count(":") == 6 else subscription
    if action == "CreateTopic" and "Name" in found:
        return f"arn:aws:sns:{region}:{account}:{found['Name']}"
    return None


class SnsCall:
    """The access line of one SNS call: ``str()`` is its text, ``fields()`` its JSON fields."""

    __slots__ = ("action", "topic", "status", "error", "latency_ms", "request_id")

    def __init__(
        self, action: str | None, topic: str | None, status: int, error: str | None, seconds: float, request_id: str
    ) -> None:
        self.action = action or "-"
        self.topic = topic
        self.status = status
        self.error = error
        self.latency_ms = round(seconds * 1000, 3)
        self.request_id = request_id

    def fields(self) -> dict[str, Any]:
        """The line's fields, in their order (None: absent)."""
        topic = self.topic
        if topic is not None and len(topic) > MAX_TOPIC_CHARS:
            topic = topic[:MAX_TOPIC_CHARS] + "..."
        return {
            "action": self.action if len(self.action) <= MAX_VALUE_CHARS else self.action[:MAX_VALUE_CHARS] + "...",
            "service": "sns",
            "topic": topic,
            "protocol": "query",
            "status": self.status,
            "error": self.error,
            "latency_ms": self.latency_ms,
            "request_id": self.request_id,
        }

    def __str__(self) -> str:
        return logfmt(self.fields(), MAX_TOPIC_CHARS + 3)


class StsCall:
    """The access line of one STS call (``service=sts``): ``str()`` is its text, ``fields()`` its JSON fields."""

    __slots__ = ("action", "status", "error", "latency_ms", "request_id")

    def __init__(self, action: str | None, status: int, error: str | None, seconds: float, request_id: str) -> None:
        self.action = action or "-"
        self.status = status
        self.error = error
        self.latency_ms = round(seconds * 1000, 3)
        self.request_id = request_id

    def fields(self) -> dict[str, Any]:
        """The line's fields, in their order (None: absent)."""
        action = self.action if len(self.action) <= MAX_VALUE_CHARS else self.action[:MAX_VALUE_CHARS] + "..."
        return {"action": action, "service": "sts", "protocol": "query", "status": self.status, "error": self.error,
                "latency_ms": self.latency_ms, "request_id": self.request_id}  # fmt: skip

    def __str__(self) -> str:
        return logfmt(self.fields())


class AdminCall:
    """The access line of one call of ``/health``, ``/metrics`` or an admin route."""

    __slots__ = ("method", "path", "status", "latency_ms")

    def __init__(self, method: str, path: str, status: int, seconds: float) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.latency_ms = round(seconds * 1000, 3)

    def fields(self) -> dict[str, Any]:
        """The line's fields, in their order."""
        return {"method": self.method, "path": self.path, "status": self.status, "latency_ms": self.latency_ms}

    def __str__(self) -> str:
        return logfmt(self.fields())


class AccessLog:
    """Writes access lines at INFO (nothing when the loggers' level is above INFO)."""

    def __init__(self) -> None:
        self.logger = logging.getLogger(ACCESS_LOGGER)
        self.admin_logger = logging.getLogger(ADMIN_ACCESS_LOGGER)

    def sqs(
        self,
        action: str | None,
        queue: str | None,
        protocol: str,
        status: int,
        error: str | None,
        messages: int | None,
        failed: int | None,
        seconds: float,
        request_id: str,
    ) -> None:
        """Log one SQS call (see the module docstring for the fields; ``seconds`` is its latency)."""
        if self.logger.isEnabledFor(logging.INFO):
            call = SqsCall(action, queue, protocol, status, error, messages, failed, seconds, request_id)
            self.logger.info(call)

    def sns(
        self, action: str | None, topic: str | None, status: int, error: str | None, seconds: float, request_id: str
    ) -> None:
        """Log one SNS call (see the module docstring; ``topic`` from :func:`sns_topic`)."""
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info(SnsCall(action, topic, status, error, seconds, request_id))

    def sts(self, action: str | None, status: int, error: str | None, seconds: float, request_id: str) -> None:
        """Log one STS call."""
        if self.logger.isEnabledFor(logging.INFO):
            self.logger.info(StsCall(action, status, error, seconds, request_id))

    def admin(self, method: str, path: str, status: int, seconds: float) -> None:
        """Log one admin call."""
        if self.admin_logger.isEnabledFor(logging.INFO):
            self.admin_logger.info(AdminCall(method, path, status, seconds))
