"""Tags of event source mappings: the ``Tags`` of CreateEventSourceMapping and TagResource, the ``tagKeys`` of
UntagResource, and the resource ARN of the tagging API (``/2017-03-31/tags/{ARN}``), checked as botocore's Lambda
model shapes them ("Using tags on event source mappings", AWS Lambda Developer Guide; "TagResource", AWS Lambda API
Reference).

A tag key is 1 to 128 characters, a value 0 to 256, both of Unicode letters, separators (spaces) and digits and
``_ . : / = + - @`` (the model's ``TagKey`` and ``TagValue`` patterns, ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*``). A mapping
holds at most 50 tags, and a key may not begin with ``aws:`` in any case (AWS reserves the prefix, "Tagging AWS
resources", tag naming limits and requirements); the messages are sqsemu's (Lambda's are not recorded).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from sqsemu.eventsource.errors import InvalidParameterValue

MAX_TAGS = 50
"""Tags one resource holds at most ("Tagging AWS resources": 50 user tags per resource)."""
MAX_KEY, MAX_VALUE = 128, 256
"""Characters of a tag key (at least 1) and of a tag value (at least 0)."""
_PUNCTUATION = frozenset("_.:/=+-@")

_TAGGABLE = re.compile(
    r"arn:(aws[a-zA-Z-]*):lambda:((?:eusc-)?[a-z]{2}(?:(?:-gov)|(?:-iso[a-z]?))?-[a-z]+-\d):(\d{12}):"
    r"(?:(event-source-mapping):([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"|function:[a-zA-Z0-9_-]+(?::(?:\$LATEST|[a-zA-Z0-9_-]+))?|code-signing-config:csc-[a-z0-9]{17}"
    r"|(?:capacity-provider|network-connector):[a-zA-Z0-9_-]{1,64})"
)
"""The model's ``TaggableResource`` pattern (1 to 10,000 characters); groups: partition, region, account, and for a
mapping ``event-source-mapping`` and its UUID."""


@dataclass(frozen=True, slots=True)
class Taggable:
    """A resource ARN of the tagging API: its ``region``, ``account`` and, for an event source mapping, its
    ``uuid`` (None for the other kinds the model allows: functions, code signing configurations...)."""

    arn: str
    region: str
    account: str
    uuid: str | None


def taggable(value: str) -> Taggable:
    """The resource a tagging call names. Raises ``InvalidParameterValue`` for a value the model's
    ``TaggableResource`` pattern refuses (in the form of the model's validation messages)."""
    match = _TAGGABLE.fullmatch(value) if 1 <= len(value) <= 10_000 else None
    if match is None:
        raise InvalidParameterValue(
            f"1 validation error detected: Value '{value}' at 'resource' failed to satisfy constraint: Member must "
            "satisfy regular expression pattern: arn:(aws[a-zA-Z-]*):lambda:... (a function, event source mapping or "
            "code signing configuration ARN)"
        )
    return Taggable(value, match.group(2), match.group(3), match.group(5).lower() if match.group(4) else None)


def _allowed(text: str) -> bool:
    """Whether every character is a letter, a separator, a digit, or one of ``_ . : / = + - @``."""
    return all(c in _PUNCTUATION or unicodedata.category(c)[0] in "LZN" for c in text)


def check_key(key: Any) -> str:
    """A tag key checked (module docstring). Raises ``InvalidParameterValue``."""
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY or not _allowed(key):
        raise InvalidParameterValue(
            f"Invalid tag key {key!r}: a key is 1 to {MAX_KEY} letters, digits, spaces and _ . : / = + - @."
        )
    if key.lower().startswith("aws:"):
        raise InvalidParameterValue(f"Invalid tag key {key!r}: the aws: prefix is reserved for AWS.")
    return key


def parse_tags(value: Any) -> dict[str, str]:
    """A ``Tags`` map checked (module docstring), in its order. Raises ``InvalidParameterValue`` for a value that is
    not an object of strings, a key or value out of bounds, or more than :data:`MAX_TAGS` tags."""
    if not isinstance(value, dict):
        raise InvalidParameterValue("Tags must be an object of tag keys to tag values.")
    out: dict[str, str] = {}
    for key, tag_value in value.items():
        check_key(key)
        if not isinstance(tag_value, str) or len(tag_value) > MAX_VALUE or not _allowed(tag_value):
            raise InvalidParameterValue(
                f"Invalid value for the tag {key!r}: a value is 0 to {MAX_VALUE} letters, digits, spaces and "
                "_ . : / = + - @."
            )
        out[key] = tag_value
    return limited(out)


def limited(tags: dict[str, str]) -> dict[str, str]:
    """``tags`` when a resource may hold them all. Raises ``InvalidParameterValue`` beyond :data:`MAX_TAGS`."""
    if len(tags) > MAX_TAGS:
        raise InvalidParameterValue(f"A resource holds at most {MAX_TAGS} tags; these would be {len(tags)}.")
    return tags
