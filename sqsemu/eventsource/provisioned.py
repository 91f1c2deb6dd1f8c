"""Provisioned mode of an SQS event source mapping: ``ProvisionedPollerConfig`` as CreateEventSourceMapping and
UpdateEventSourceMapping take it, and what it changes in delivery.

The shape is botocore's Lambda model (``ProvisionedPollerConfig``: ``MinimumPollers`` 1 to 200, ``MaximumPollers`` 1
to 10,000, ``PollerGroupName``); the ranges for an SQS source are its documentation's and the API reference's
("ProvisionedPollerConfig", AWS Lambda API Reference): ``MinimumPollers`` "For Amazon SQS events source mappings,
default is 2, and minimum 2 required", ``MaximumPollers`` "For Amazon SQS event source mappings, the accepted range is
between 2 and 10,000, with a default of 200"; ``PollerGroupName`` is "(Amazon MSK and self-managed Apache Kafka)" only.
Provisioned mode and ``ScalingConfig.MaximumConcurrency`` "are mutually exclusive options" ("Configuring scaling
behavior for SQS event source mappings", AWS Lambda Developer Guide).

Delivery: an SQS event poller drives up to 10 concurrent invocations (AWS News Blog, "AWS Lambda enhances event
processing with provisioned mode for SQS event-source mapping", and AWS's announcement of SQS provisioned mode), and
provisioned mode keeps ``MinimumPollers`` of them ready. sqsemu does not scale (it does not in standard mode either),
so a mapping in provisioned mode has ``MinimumPollers`` x 10 workers, each with at most one batch in flight: the
concurrency its ready pollers give at once (20 with the default 2). ``MaximumPollers`` is kept and answered, and
bounds nothing further.

What AWS does not document, sqsemu decides (docs/behaviour.md 12.14): an empty ``ProvisionedPollerConfig`` (``{}``)
leaves provisioned mode (as an empty ``ScalingConfig`` removes maximum concurrency, "ScalingConfig", AWS Lambda API
Reference: "To remove the configuration, pass an empty value"); a member left out takes its default (the object is
the whole configuration, as ``ScalingConfig`` is); ``MinimumPollers`` above ``MaximumPollers`` is refused. The
messages are sqsemu's (Lambda's are not recorded).
"""

from __future__ import annotations

import re
from typing import Any

from sqsemu.eventsource.errors import InvalidParameterValue

MIN_POLLERS_FLOOR, MIN_POLLERS_CEILING, DEFAULT_MIN_POLLERS = 2, 200, 2
"""``MinimumPollers`` for an SQS source: 2 to 200, default 2."""
MAX_POLLERS_FLOOR, MAX_POLLERS_CEILING, DEFAULT_MAX_POLLERS = 2, 10_000, 200
"""``MaximumPollers`` for an SQS source: 2 to 10,000, default 200."""
INVOCATIONS_PER_POLLER = 10
"""Concurrent invocations one SQS event poller drives (module docstring)."""
_GROUP_NAME = re.compile(r"[a-zA-Z0-9_-]{0,128}")
"""``PollerGroupName`` as the model's ``ProvisionedPollerGroupName`` shape allows (0 to 128 characters)."""


def _count(config: dict[str, Any], name: str) -> int | None:
    value = config.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameterValue(f"{name} must be an integer.")
    return value


def parse_pollers(value: Any) -> tuple[int, int] | None:
    """``(MinimumPollers, MaximumPollers)`` of a ``ProvisionedPollerConfig`` value for an SQS source, defaults filled
    in; None for an empty object (standard mode). Raises ``InvalidParameterValue`` for a value that is not an
    object, a count that is not an integer or out of the SQS ranges, a minimum above the maximum, or a
    ``PollerGroupName`` (Kafka only)."""
    if not isinstance(value, dict):
        raise InvalidParameterValue("ProvisionedPollerConfig must be an object.")
    group = value.get("PollerGroupName")
    if group is not None:
        if not isinstance(group, str) or not _GROUP_NAME.fullmatch(group):
            raise InvalidParameterValue(
                "PollerGroupName must be 0 to 128 letters, digits, hyphens and underscores ([a-zA-Z0-9-_]*)."
            )
        if group:
            raise InvalidParameterValue("PollerGroupName is not valid for SQS event sources.")
    minimum = _count(value, "MinimumPollers")
    maximum = _count(value, "MaximumPollers")
    if minimum is None and maximum is None:
        return None
    minimum = DEFAULT_MIN_POLLERS if minimum is None else minimum
    maximum = DEFAULT_MAX_POLLERS if maximum is None else maximum
    if not MIN_POLLERS_FLOOR <= minimum <= MIN_POLLERS_CEILING:
        raise InvalidParameterValue(
            f"MinimumPollers must be between {MIN_POLLERS_FLOOR} and {MIN_POLLERS_CEILING} for SQS event sources, "
            f"got {minimum}."
        )
    if not MAX_POLLERS_FLOOR <= maximum <= MAX_POLLERS_CEILING:
        raise InvalidParameterValue(
            f"MaximumPollers must be between {MAX_POLLERS_FLOOR} and {MAX_POLLERS_CEILING} for SQS event sources, "
            f"got {maximum}."
        )
    if minimum > maximum:
        raise InvalidParameterValue(
            f"MinimumPollers ({minimum}) must be less than or equal to MaximumPollers ({maximum})."
        )
    return minimum, maximum


EXCLUSIVE_MODES = (
    "ScalingConfig.MaximumConcurrency and ProvisionedPollerConfig cannot both be set: an SQS event source mapping "
    "scales by maximum concurrency or in provisioned mode, not both."
)
"""The refusal of a mapping with both (sqsemu's wording; the rule is "Configuring scaling behavior for SQS event
source mappings")."""
