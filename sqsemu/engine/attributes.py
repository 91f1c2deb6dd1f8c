"""Queue attributes: names, defaults, validation and normalisation (docs/behaviour.md section 3; API Reference
``SetQueueAttributes``/``CreateQueue``).

Values travel as strings in both directions. ``normalize`` validates the attributes a client supplies and returns
them in canonical string form (``"030"`` becomes ``"30"``), which is what CreateQueue compares for idempotency and
what GetQueueAttributes returns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from sqsemu.engine import jsondoc
from sqsemu.engine.errors import InvalidAttributeName, InvalidAttributeValue, invalid_value
from sqsemu.engine.limits import Limits

READ_ONLY = frozenset(
    {
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
        "CreatedTimestamp",
        "LastModifiedTimestamp",
        "QueueArn",
    }
)
FIFO_ONLY = ("FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit")
SETTABLE = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "Policy",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    *FIFO_ONLY,
)
ALL_NAMES = frozenset(SETTABLE) | READ_ONLY
# Attributes whose absence means "not set": GetQueueAttributes(All) omits them until they are set.
OPTIONAL = frozenset(
    {"Policy", "RedrivePolicy", "RedriveAllowPolicy", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"}
)

_STANDARD_FIFO_ERRORS = {
    "FifoQueue": "Unknown Attribute FifoQueue.",
    "ContentBasedDeduplication": "Unknown Attribute ContentBasedDeduplication.",
    "DeduplicationScope": "You can specify the DeduplicationScope only when FifoQueue is set to true.",
    "FifoThroughputLimit": "You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
}


def defaults(limits: Limits, fifo: bool) -> dict[str, str]:
    """The settable attributes of a new queue, as strings."""
    values = {
        "DelaySeconds": "0",
        "MaximumMessageSize": str(limits.max_message_size_max_bytes),
        "MessageRetentionPeriod": str(limits.retention_default_s),
        "ReceiveMessageWaitTimeSeconds": "0",
        "VisibilityTimeout": str(limits.visibility_timeout_default_s),
        "SqsManagedSseEnabled": "true",
    }
    if fifo:
        values.update(
            FifoQueue="true",
            ContentBasedDeduplication="false",
            DeduplicationScope="queue",
            FifoThroughputLimit="perQueue",
        )
    return values


def _bad(name: str, reason: str) -> InvalidAttributeValue:
    return InvalidAttributeValue(f"Invalid value for the parameter {name}. Reason: {reason}")


_DECIMAL = re.compile(r"[+-]?0*([0-9]{1,19})", re.ASCII)
"""A decimal integer of ASCII digits (leading zeros and a sign allowed) with at most 19 significant digits: every
64-bit integer. ``int()`` alone would also take ``1_000``, ``٣`` (other scripts' digits) and up to 4,300 digits."""


def parse_decimal(value: str) -> int | None:
    """``value`` (surrounding whitespace ignored) as an integer when it is a decimal integer of ASCII digits with at
    most 19 significant digits (``_DECIMAL``); None otherwise (not a number, or beyond every attribute's range)."""
    text = value.strip()
    match = _DECIMAL.fullmatch(text)
    if match is None:
        return None
    number = int(match.group(1))
    return -number if text[0] == "-" else number


def _integer(name: str, value: str, low: int, high: int, unit: str) -> str:
    """An integer attribute from ``low`` to ``high`` (``unit`` names them, e.g. `` seconds``), canonical string.
    Raises InvalidAttributeValue ``Invalid value for the parameter <name>. Reason: Must be an integer from ...``."""
    number = parse_decimal(value)
    if number is None or not low <= number <= high:
        raise _bad(name, f"Must be an integer from {low} to {high}{unit}.")
    return str(number)


def _boolean(name: str, value: str) -> str:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise _bad(name, "Must be true or false.")
    return lowered


def _json_object(name: str, value: str) -> dict[str, object]:
    """``value`` parsed as a JSON object (``jsondoc.loads``: at most ``MAX_DEPTH`` levels deep). Raises
    InvalidAttributeValue ``Invalid value for the parameter <name>. Reason: Must be a valid JSON document.`` (also
    for one nested too deeply) or ``... Must be a JSON object.``."""
    try:
        parsed = jsondoc.loads(value)
    except ValueError:
        raise _bad(name, "Must be a valid JSON document.") from None
    if not isinstance(parsed, dict):
        raise _bad(name, "Must be a JSON object.")
    return parsed


def _policy(value: str) -> str:
    """A ``Policy`` value: a JSON object (:func:`_json_object`) that is a queue policy by the IAM policy grammar
    (:func:`sqsemu.security.policy.parse_policy`), checked for every caller whatever ``--auth`` says, as SQS checks
    it (docs/behaviour.md 11.4). Raises InvalidAttributeValue ``Invalid value for the parameter Policy. Reason:
    <rule>``."""
    from sqsemu.security.policy import PolicyError, parse_policy

    _json_object("Policy", value)
    try:
        parse_policy(value, True)
    except PolicyError as exc:
        raise _bad("Policy", str(exc)) from None
    return value


def _redrive_policy(value: str, limits: Limits) -> str:
    """RedrivePolicy content. Its errors are ``InvalidParameterValue`` ``Value <policy> for parameter RedrivePolicy
    is invalid. Reason: ...``, the form AWS uses for RedrivePolicy (docs/behaviour.md 3.3)."""
    try:
        policy = jsondoc.loads(value)
    except ValueError:  # not JSON, or nested more than jsondoc.MAX_DEPTH levels deep
        policy = None
    if not isinstance(policy, dict):
        raise invalid_value(value, "RedrivePolicy", "Redrive policy is not a valid JSON object.")
    for key in ("deadLetterTargetArn", "maxReceiveCount"):
        if key not in policy:
            raise invalid_value(value, "RedrivePolicy", f"Redrive policy does not contain mandatory attribute: {key}.")
    target = policy["deadLetterTargetArn"]
    if not isinstance(target, str) or not target.startswith("arn:") or len(target.split(":")) != 6:
        raise invalid_value(value, "RedrivePolicy", "Invalid value for deadLetterTargetArn.")
    raw_count = policy["maxReceiveCount"]
    if type(raw_count) is int:
        count: int | None = raw_count
    elif isinstance(raw_count, str):
        count = parse_decimal(raw_count)
    else:  # booleans, floats (5.0 too, as before), null, arrays, objects
        count = None
    highest = limits.max_receive_count_max
    if count is None or not 1 <= count <= highest:
        raise invalid_value(
            value,
            "RedrivePolicy",
            f"Invalid value for maxReceiveCount: {raw_count}, valid values are from 1 to {highest} both inclusive.",
        )
    return json.dumps({"deadLetterTargetArn": target, "maxReceiveCount": count}, separators=(",", ":"))


def _redrive_allow_policy(value: str, limits: Limits) -> str:
    policy = _json_object("RedriveAllowPolicy", value)
    permission = policy.get("redrivePermission")
    if permission not in ("allowAll", "denyAll", "byQueue"):
        raise _bad("RedriveAllowPolicy", "redrivePermission must be allowAll, denyAll or byQueue.")
    arns = policy.get("sourceQueueArns")
    if permission == "byQueue":
        most = limits.redrive_allow_source_arns_max
        if not isinstance(arns, list) or not 1 <= len(arns) <= most or not all(isinstance(a, str) for a in arns):
            raise _bad(
                "RedriveAllowPolicy",
                f"sourceQueueArns must list 1 to {most} queue ARNs when redrivePermission is byQueue.",
            )
    elif arns is not None:
        raise _bad("RedriveAllowPolicy", "sourceQueueArns is allowed only when redrivePermission is byQueue.")
    return value


def _validators(limits: Limits) -> dict[str, Callable[[str], str]]:
    return {
        "DelaySeconds": lambda v: _integer("DelaySeconds", v, 0, limits.delay_max_s, " seconds"),
        "MaximumMessageSize": lambda v: _integer(
            "MaximumMessageSize", v, limits.max_message_size_min_bytes, limits.max_message_size_max_bytes, " bytes"
        ),
        "MessageRetentionPeriod": lambda v: _integer(
            "MessageRetentionPeriod", v, limits.retention_min_s, limits.retention_max_s, " seconds"
        ),
        "ReceiveMessageWaitTimeSeconds": lambda v: _integer(
            "ReceiveMessageWaitTimeSeconds", v, 0, limits.wait_time_max_s, " seconds"
        ),
        "VisibilityTimeout": lambda v: _integer("VisibilityTimeout", v, 0, limits.visibility_timeout_max_s, " seconds"),
        "KmsDataKeyReusePeriodSeconds": lambda v: _integer(
            "KmsDataKeyReusePeriodSeconds",
            v,
            limits.kms_data_key_reuse_period_min_s,
            limits.kms_data_key_reuse_period_max_s,
            " seconds",
        ),
        "SqsManagedSseEnabled": lambda v: _boolean("SqsManagedSseEnabled", v),
        "ContentBasedDeduplication": lambda v: _boolean("ContentBasedDeduplication", v),
        "Policy": _policy,
        "RedrivePolicy": lambda v: _redrive_policy(v, limits),
        "RedriveAllowPolicy": lambda v: _redrive_allow_policy(v, limits),
        "KmsMasterKeyId": lambda v: v,
    }


def normalize(attributes: Mapping[str, str], *, fifo: bool, limits: Limits) -> dict[str, str]:
    """Validate client-supplied queue attributes and return them in canonical form.

    An empty string for ``Policy``, ``RedrivePolicy`` or ``RedriveAllowPolicy`` means "remove" and is kept as
    ``""``; so is an empty ``KmsMasterKeyId``, which switches SSE-KMS off (the queue then drops its
    ``KmsDataKeyReusePeriodSeconds`` too, see ``Queue._apply``). Raises ``InvalidAttributeName`` for unknown,
    read-only or (on standard queues) FIFO-only names and for KMS and SQS-managed encryption both on;
    ``InvalidAttributeValue`` for values out of range or malformed.
    """
    validators = _validators(limits)
    result: dict[str, str] = {}
    for name, value in attributes.items():
        if name not in ALL_NAMES or name in READ_ONLY:
            raise InvalidAttributeName(f"Unknown Attribute {name}.")
        if name in FIFO_ONLY and not fifo:
            raise InvalidAttributeName(_STANDARD_FIFO_ERRORS[name])
        value = "" if value is None else str(value)
        if name == "FifoQueue":
            if value.strip().lower() != "true":
                raise InvalidAttributeValue(
                    "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."
                )
            result[name] = "true"
        elif name == "DeduplicationScope":
            if value not in ("messageGroup", "queue"):
                raise _bad(name, "Must be messageGroup or queue.")
            result[name] = value
        elif name == "FifoThroughputLimit":
            if value not in ("perQueue", "perMessageGroupId"):
                raise _bad(name, "Must be perQueue or perMessageGroupId.")
            result[name] = value
        elif name in ("Policy", "RedrivePolicy", "RedriveAllowPolicy") and value == "":
            result[name] = ""
        else:
            result[name] = validators[name](value)
    kms = result.get("KmsMasterKeyId")
    if kms and result.get("SqsManagedSseEnabled") == "true":
        raise InvalidAttributeName(
            "You can use one type of server-side encryption (SSE) at one time. "
            "You can either enable KMS SSE or SQS SSE."
        )
    return result


def check_combination(values: Mapping[str, str]) -> None:
    """Rules across attributes of the resulting queue: ``FifoThroughputLimit=perMessageGroupId`` needs
    ``DeduplicationScope=messageGroup`` (API Reference, ``SetQueueAttributes``). Raises ``InvalidAttributeValue``."""
    if values.get("FifoThroughputLimit") == "perMessageGroupId" and values.get("DeduplicationScope") != "messageGroup":
        raise _bad("FifoThroughputLimit", "perMessageGroupId is allowed only when DeduplicationScope is messageGroup.")


def check_names(names: list[str]) -> None:
    """Validate GetQueueAttributes ``AttributeNames``; raises ``InvalidAttributeName`` (``Unknown Attribute X.``)."""
    for name in names:
        if name != "All" and name not in ALL_NAMES:
            raise InvalidAttributeName(f"Unknown Attribute {name}.")
