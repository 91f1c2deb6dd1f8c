"""Options of the ``sqs`` data source: parsed once, case-insensitively, into frozen dataclasses.

Spark hands a data source its options as strings. :func:`parse_options` turns them into a :class:`SQSOptions`
(connection, reading and writing settings) and raises :class:`SQSOptionError` (a ``ValueError``) with a message
naming the option, the accepted values and what it got, for an unknown option, a missing queue, a value of the
wrong type or out of range, or credentials given by half. Nothing here talks to the network.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONNECTION_OPTIONS",
    "READ_OPTIONS",
    "WRITE_OPTIONS",
    "SQSOptionError",
    "SQSOptions",
    "parse_options",
]

# The documented spelling of every option; the lower-case form is what parsing matches on.
CONNECTION_OPTIONS = (
    "queueUrl",
    "queueName",
    "endpointUrl",
    "region",
    "accessKeyId",
    "secretAccessKey",
    "sessionToken",
)
READ_OPTIONS = (
    "maxMessagesPerTrigger",
    "waitTimeSeconds",
    "visibilityTimeout",
    "numPartitions",
    "receiveConcurrency",
    "maxMessages",
    "attributeNames",
    "messageAttributeNames",
)
WRITE_OPTIONS = (
    "operation",
    "bodyColumn",
    "groupIdColumn",
    "deduplicationIdColumn",
    "delaySecondsColumn",
    "messageAttributesColumn",
    "receiptHandleColumn",
    "failOnError",
    "maxRetries",
)
# Options Spark itself may pass along with the user's (ignored).
_SPARK_OPTIONS = ("path", "checkpointLocation", "queryName")

_CANONICAL = {name.lower(): name for name in (*CONNECTION_OPTIONS, *READ_OPTIONS, *WRITE_OPTIONS)}
_IGNORED = {name.lower() for name in _SPARK_OPTIONS}

# SQS queue names: 1-80 characters, alphanumerics, hyphens and underscores; ".fifo" ends a FIFO queue's name.
_QUEUE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_REGION_RE = re.compile(r"^[a-z]{2}(-[a-z0-9]+)+-\d+$")
_AWS_HOST_RE = re.compile(r"^(?:sqs\.)?([a-z]{2}(?:-[a-z0-9]+)+-\d+)\.(?:queue\.)?amazonaws\.com(?:\.cn)?$")

MAX_CONCURRENCY = 64  # receiveConcurrency's upper bound: threads (and HTTP connections) of one reader

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class SQSOptionError(ValueError):
    """An option of the ``sqs`` data source is unknown, missing or has an invalid value (the message says which)."""


@dataclass(frozen=True)
class ConnectionOptions:
    """Where the queue is and how to reach it.

    ``queue_url`` or ``queue_name`` is set (the name is resolved with GetQueueUrl on the driver); ``endpoint_url``
    is None for AWS's own endpoint; ``region`` None means boto3's default chain (or the region in an AWS queue
    URL); credentials are either both key parts (and maybe a session token) or all None (boto3's default chain).
    """

    queue_url: str | None = None
    queue_name: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None


@dataclass(frozen=True)
class ReadOptions:
    """Reading settings.

    ``max_messages_per_trigger``: messages per micro-batch (the default ``ReadMaxRows`` limit); ``wait_time_seconds``:
    long-poll seconds of the first ReceiveMessage of a trigger or batch partition (0-20); ``visibility_timeout``:
    seconds a received message stays invisible (0-43200), renewed while a micro-batch is open; ``num_partitions``:
    Spark partitions per micro-batch or batch read; ``receive_concurrency``: at most this many ReceiveMessage calls
    at once (per micro-batch on the driver, per task of a batch read), and as many DeleteMessageBatch and
    ChangeMessageVisibilityBatch calls at once when a stream acknowledges or renews; ``max_messages``: messages a
    batch read receives in all; ``attribute_names`` / ``message_attribute_names``: what ReceiveMessage asks for.
    """

    max_messages_per_trigger: int = 1000
    wait_time_seconds: int = 1
    visibility_timeout: int = 30
    num_partitions: int = 1
    receive_concurrency: int = 32
    max_messages: int = 100
    attribute_names: tuple[str, ...] = ("All",)
    message_attribute_names: tuple[str, ...] = ("All",)


@dataclass(frozen=True)
class WriteOptions:
    """Writing settings.

    ``operation``: ``"send"`` (SendMessageBatch) or ``"delete"`` (DeleteMessageBatch by receipt handle). Column
    options are None when not given: the writer then uses the column of the default name if the DataFrame has one
    (``body``, ``message_group_id``, ``message_deduplication_id``, ``delay_seconds``, ``message_attributes``,
    ``receipt_handle``). ``fail_on_error``: raise when entries still fail after ``max_retries`` retries.
    """

    operation: str = "send"
    body_column: str | None = None
    group_id_column: str | None = None
    deduplication_id_column: str | None = None
    delay_seconds_column: str | None = None
    message_attributes_column: str | None = None
    receipt_handle_column: str | None = None
    fail_on_error: bool = True
    max_retries: int = 3


@dataclass(frozen=True)
class SQSOptions:
    """All options of one use of the data source (picklable; travels to executors)."""

    connection: ConnectionOptions
    read: ReadOptions = field(default_factory=ReadOptions)
    write: WriteOptions = field(default_factory=WriteOptions)


def _fail(name: str, message: str) -> SQSOptionError:
    return SQSOptionError(f"sqs data source: option '{_CANONICAL.get(name, name)}' {message}")


def _int(opts: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = opts.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise _fail(name, f"must be an integer between {low} and {high}, got {raw!r}") from None
    if not low <= value <= high:
        raise _fail(name, f"must be between {low} and {high}, got {value}")
    return value


def _bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise _fail(name, f"must be true or false, got {raw!r}")


def _text(opts: Mapping[str, str], name: str) -> str | None:
    raw = opts.get(name)
    if raw is None:
        return None
    text = str(raw).strip()
    if not text:
        raise _fail(name, "must not be empty")
    return text


def _names(opts: Mapping[str, str], name: str) -> tuple[str, ...]:
    raw = opts.get(name)
    if raw is None:
        return ("All",)
    names = tuple(part.strip() for part in str(raw).split(",") if part.strip())
    if not names:
        raise _fail(name, "must list at least one name (comma-separated), or be 'All'")
    return names


def region_from_queue_url(queue_url: str) -> str | None:
    """The region in an AWS queue URL (``https://sqs.eu-west-1.amazonaws.com/...``), else None."""
    from urllib.parse import urlsplit

    host = (urlsplit(queue_url).hostname or "").lower()
    match = _AWS_HOST_RE.match(host)
    return match.group(1) if match else None


def parse_options(options: Mapping[str, Any]) -> SQSOptions:
    """Parse the data source options (any key case) into :class:`SQSOptions`.

    Raises :class:`SQSOptionError` for an unknown option (with the closest known name), for neither or both of
    ``queueUrl`` and ``queueName``, for ``queueName`` without a region, for half a key pair, and for any value of
    the wrong type or out of range.
    """
    opts: dict[str, str] = {}
    for key, value in options.items():
        lower = str(key).lower()
        if lower in _IGNORED:
            continue
        if lower not in _CANONICAL:
            close = difflib.get_close_matches(lower, list(_CANONICAL), n=1, cutoff=0.7)
            hint = f" (did you mean '{_CANONICAL[close[0]]}'?)" if close else ""
            known = ", ".join(sorted(_CANONICAL.values(), key=str.lower))
            raise SQSOptionError(f"sqs data source: unknown option '{key}'{hint}; known options: {known}")
        if value is not None:
            opts[lower] = str(value)

    connection = _connection(opts)
    read = ReadOptions(
        max_messages_per_trigger=_int(opts, "maxmessagespertrigger", 1000, 1, 1_000_000),
        wait_time_seconds=_int(opts, "waittimeseconds", 1, 0, 20),
        visibility_timeout=_int(opts, "visibilitytimeout", 30, 0, 43_200),
        num_partitions=_int(opts, "numpartitions", 1, 1, 10_000),
        receive_concurrency=_int(opts, "receiveconcurrency", 32, 1, MAX_CONCURRENCY),
        max_messages=_int(opts, "maxmessages", 100, 1, 1_000_000),
        attribute_names=_names(opts, "attributenames"),
        message_attribute_names=_names(opts, "messageattributenames"),
    )
    operation = (_text(opts, "operation") or "send").lower()
    if operation not in ("send", "delete"):
        raise _fail("operation", f"must be 'send' or 'delete', got {opts['operation']!r}")
    write = WriteOptions(
        operation=operation,
        body_column=_text(opts, "bodycolumn"),
        group_id_column=_text(opts, "groupidcolumn"),
        deduplication_id_column=_text(opts, "deduplicationidcolumn"),
        delay_seconds_column=_text(opts, "delaysecondscolumn"),
        message_attributes_column=_text(opts, "messageattributescolumn"),
        receipt_handle_column=_text(opts, "receipthandlecolumn"),
        fail_on_error=_bool(opts, "failonerror", True),
        max_retries=_int(opts, "maxretries", 3, 0, 20),
    )
    return SQSOptions(connection=connection, read=read, write=write)


def _connection(opts: Mapping[str, str]) -> ConnectionOptions:
    queue_url = _text(opts, "queueurl")
    queue_name = _text(opts, "queuename")
    if queue_url is None and queue_name is None:
        raise SQSOptionError("sqs data source: set option 'queueUrl' (or 'queueName' with 'region')")
    if queue_url is not None and queue_name is not None:
        raise SQSOptionError("sqs data source: set only one of 'queueUrl' and 'queueName'")
    if queue_url is not None and not re.match(r"^https?://[^/]+/.+", queue_url):
        raise _fail(
            "queueurl",
            f"must be a queue URL like https://sqs.<region>.amazonaws.com/<account>/<name>, got {queue_url!r}",
        )
    if queue_name is not None and not _QUEUE_NAME_RE.match(queue_name.removesuffix(".fifo")):
        raise _fail("queuename", f"must be 1-80 letters, digits, '-' or '_' (plus '.fifo'), got {queue_name!r}")

    endpoint_url = _text(opts, "endpointurl")
    if endpoint_url is not None and not re.match(r"^https?://[^/]+/?$", endpoint_url):
        raise _fail("endpointurl", f"must be http(s)://host[:port], got {endpoint_url!r}")
    region = _text(opts, "region")
    if region is not None and not _REGION_RE.match(region):
        raise _fail("region", f"must look like 'us-east-1', got {region!r}")
    if queue_name is not None and region is None:
        raise SQSOptionError("sqs data source: option 'queueName' needs option 'region' (or use 'queueUrl')")

    access_key_id = _text(opts, "accesskeyid")
    secret_access_key = _text(opts, "secretaccesskey")
    session_token = _text(opts, "sessiontoken")
    if (access_key_id is None) != (secret_access_key is None):
        raise SQSOptionError(
            "sqs data source: set both 'accessKeyId' and 'secretAccessKey', or neither (boto3's default chain)"
        )
    if session_token is not None and access_key_id is None:
        raise SQSOptionError("sqs data source: option 'sessionToken' needs 'accessKeyId' and 'secretAccessKey'")
    return ConnectionOptions(
        queue_url=queue_url,
        queue_name=queue_name,
        endpoint_url=endpoint_url.rstrip("/") if endpoint_url else None,
        region=region,
        access_key_id=access_key_id,
        secret_access_key=secret_access_key,
        session_token=session_token,
    )
