"""Queue tag rules for CreateQueue, TagQueue and UntagQueue (docs/behaviour.md sections 2.1, 2.18-2.20 and 3.6).

The SQS Developer Guide ("Amazon SQS queue quotas", tags) gives the rules checked here: a key is 1 to 128
characters, a value 0 to 256; both may use Unicode letters and digits, white space and ``_ . : / = + - @``; keys
are case-sensitive; the ``aws:`` prefix is reserved; a queue has at most 50 tags. Lengths are counted in Unicode
characters (code points), not bytes.

The broker owns the tag map itself: TagQueue merges (a key already present is overwritten, other tags are kept),
UntagQueue drops the keys it names and silently ignores unknown ones, ListQueueTags returns the map (omitted when
empty). These functions only validate and raise ``InvalidParameterValue`` or ``MissingParameter``.

Choices where AWS is not confirmed:

* "White space" is read as the Unicode separator categories (``Zs``, ``Zl``, ``Zp``: space, no-break space...),
  the usual AWS tag pattern ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]``; tabs and line feeds are control characters and are
  rejected.
* The reserved ``aws:`` prefix (any case) is enforced on keys only. The guide also mentions values, but AWS
  tagging services generally enforce the prefix on keys; rejecting values could fail requests AWS accepts.
* More than 50 tags is an error although the guide words 50 as the supported maximum; the count is taken after
  the merge, so re-tagging existing keys never trips it.
* UntagQueue checks only the key length: a key with characters a queue can never hold cannot be present, and
  unknown keys are ignored anyway.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

from sqsemu.engine.errors import InvalidParameterValue, MissingParameter
from sqsemu.engine.limits import DEFAULT_LIMITS, Limits

RESERVED_PREFIX = "aws:"
_EXTRA_CHARS = frozenset("_.:/=+-@")


def _bad_char(text: str) -> str | None:
    """The first character of ``text`` outside letters, digits, separators and ``_ . : / = + - @``, or None."""
    for char in text:
        if char in _EXTRA_CHARS:
            continue
        if unicodedata.category(char)[0] not in "LNZ":
            return char
    return None


def _check_key_length(key: str, limits: Limits) -> None:
    if not 1 <= len(key) <= limits.tag_key_max_chars:
        raise InvalidParameterValue(
            f"Tag key '{key}' is invalid: a tag key must be between 1 and {limits.tag_key_max_chars} characters long."
        )


def _check_key(key: str, limits: Limits) -> None:
    _check_key_length(key, limits)
    bad = _bad_char(key)
    if bad is not None:
        raise InvalidParameterValue(
            f"Tag key '{key}' is invalid: character {bad!r} is not allowed. Tag keys and values may contain only "
            "Unicode letters, digits, white space and the characters _ . : / = + - @."
        )
    if key[: len(RESERVED_PREFIX)].lower() == RESERVED_PREFIX:
        raise InvalidParameterValue(
            f"Tag key '{key}' is invalid: the prefix '{RESERVED_PREFIX}' is reserved for AWS use."
        )


def _check_value(key: str, value: str, limits: Limits) -> None:
    if len(value) > limits.tag_value_max_chars:
        raise InvalidParameterValue(
            f"Tag value for key '{key}' is invalid: a tag value must be at most {limits.tag_value_max_chars} "
            "characters long."
        )
    bad = _bad_char(value)
    if bad is not None:
        raise InvalidParameterValue(
            f"Tag value for key '{key}' is invalid: character {bad!r} is not allowed. Tag keys and values may "
            "contain only Unicode letters, digits, white space and the characters _ . : / = + - @."
        )


def validate_tags(
    tags: Mapping[str, str] | None,
    existing: Mapping[str, str],
    *,
    required: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """Validate tags to be added to a queue that already has ``existing`` tags (key -> value).

    CreateQueue calls it with ``existing={}`` (no tags at all is fine); TagQueue calls it with the queue's current
    tags and ``required=True``, so an empty or absent map raises ``MissingParameter``
    (``The request must contain the parameter Tags.``). Every key must be 1-128 characters, every value 0-256,
    both of allowed characters, keys without the ``aws:`` prefix; the merged map (``existing`` updated with
    ``tags``) may hold at most 50 keys. Raises ``InvalidParameterValue`` for the first rule broken (SQS Developer
    Guide, "Amazon SQS queue quotas"; docs/behaviour.md 3.6). Nothing is changed.
    """
    if not tags:
        if required:
            raise MissingParameter.named("Tags")
        return
    for key, value in tags.items():
        _check_key(key, limits)
        _check_value(key, value, limits)
    total = len(existing) + sum(1 for key in tags if key not in existing)
    if total > limits.tags_max:
        raise InvalidParameterValue(
            f"Too many tags: a queue can have at most {limits.tags_max} tags; this request would leave it with {total}."
        )


def validate_tag_keys(keys: Sequence[str] | None, *, limits: Limits = DEFAULT_LIMITS) -> None:
    """Validate UntagQueue's ``TagKeys``: a non-empty list (else ``MissingParameter``
    ``The request must contain the parameter TagKeys.``) of keys 1-128 characters long (else
    ``InvalidParameterValue``). Keys the queue does not have are not an error (docs/behaviour.md 2.19)."""
    if not keys:
        raise MissingParameter.named("TagKeys")
    for key in keys:
        _check_key_length(key, limits)
