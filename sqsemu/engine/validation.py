"""Request rules checked by the engine: message bodies, message attributes, sizes, batch entries, receive
parameters (docs/behaviour.md sections 2.7-2.13, 4.5-4.9; API Reference ``SendMessage``, ``ReceiveMessage``).

Each rule is checked here once and raises the exact SQS error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from sqsemu.engine.errors import (
    BatchEntryIdsNotDistinct,
    EmptyBatchRequest,
    InvalidBatchEntryId,
    InvalidMessageContents,
    InvalidParameterValue,
    MissingParameter,
    TooManyEntriesInBatchRequest,
    invalid_value,
)
from sqsemu.engine.limits import Limits
from sqsemu.engine.message import MessageAttributeValue

# Characters outside the XML 1.0 Char production: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
# Written as the class of the excluded characters, which matches the same characters as the negated class of the
# allowed ones and compiles in a tenth of its time (the negated class costs about 5 ms at every start-up).
# The escapes are the regular expression's own (a raw string): mypyc cannot compile lone surrogates in a literal.
_FORBIDDEN_CHAR = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# The UTF-8 bytes that prove a body allowed: TAB, LF, CR, 0x20-0x7F and every byte of a multi-byte sequence but
# 0xEF. A body is checked by deleting them from its UTF-8 (a C loop, about 12 instructions a byte, against about 60 a
# character for the regex above): nothing left means every character is allowed. The forbidden C0 controls are their
# own bytes in UTF-8 (every byte of a multi-byte sequence is 0x80 or above); U+FFFE and U+FFFF are EF BF BE and
# EF BF BF, and 0xEF leads only the 3-byte sequences of U+F000-U+FFFF, so a body with any of them (rare) goes to the
# regex, as does one with a lone surrogate (which strict UTF-8 cannot encode). docs/performance.md, issue 50.
_PLAIN_UTF8 = bytes(byte for byte in b"\t\n\r" + bytes(range(0x20, 0x100)) if byte != 0xEF)
# The same for an ASCII body, whose bytes are all below 0x80: a shorter table to build (about 600 instructions less).
_ASCII_ALLOWED = b"\t\n\r" + bytes(range(0x20, 0x80))
_BATCH_ID_CHARS = re.compile(r"[A-Za-z0-9_-]+")  # fullmatch: "$" would let a trailing line end through
# Message attribute names: letters and decimal digits of any script, underscore, hyphen and period (AWS accepted
# "attr.1øßä", recorded; docs/behaviour.md 4.7). An ASCII name is checked by this pattern; any other, by character.
_ATTRIBUTE_NAME_CHARS = re.compile(r"^[A-Za-z0-9_.\-]+$")
_DATA_TYPE = re.compile(r"^(String|Number|Binary)(\..+)?$", re.S)
# MessageGroupId, MessageDeduplicationId, ReceiveRequestAttemptId: 1-128 ASCII alphanumerics and punctuation.
_TOKEN = re.compile(r"^[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}$")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class _HasId(Protocol):
    id: str


def check_body(body: str | None) -> str:
    """A message body: present, non-empty, only characters of XML 1.0's ``Char`` (``#x9 | #xA | #xD | #x20 to
    #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF``); returns it. Raises ``MissingParameter`` (empty or absent)
    or ``InvalidMessageContents`` naming the first refused character (API Reference, ``SendMessage``:
    "MessageBody"). Most bodies are decided by one pass over their UTF-8 (:data:`_PLAIN_UTF8`); the rest, and
    every refused one, by the regular expression of the refused characters."""
    if not body:
        raise MissingParameter.named("MessageBody")
    try:
        if not body.encode().translate(None, _ASCII_ALLOWED if body.isascii() else _PLAIN_UTF8):
            return body
    except UnicodeEncodeError:
        pass  # a lone surrogate: the regex finds the first refused character
    bad = _FORBIDDEN_CHAR.search(body)
    if bad is not None:
        raise InvalidMessageContents(
            f"Invalid binary character '#x{ord(bad.group()):X}' was found in the message body, the set of allowed "
            "characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
        )
    return body


def _name_chars_allowed(name: str) -> bool:
    """Whether every character of ``name`` is a letter (Unicode category L*) or decimal digit (Nd) of any script,
    ``_``, ``-`` or ``.``."""
    if name.isascii():
        return _ATTRIBUTE_NAME_CHARS.match(name) is not None
    return all(char in "_-." or char.isalpha() or char.isdecimal() for char in name)


def _check_attribute_name(name: str, limits: Limits) -> None:
    """A message attribute name: 1 to 256 characters, only letters and decimal digits of any script, ``_``, ``-``
    and ``.``, no ``AWS.``/``Amazon.`` prefix (any case), no leading, trailing or two successive periods. Raises
    ``InvalidParameterValue`` (``Message (user) attribute name '<name>' is invalid: ...``). Sources: Developer
    Guide, "Amazon SQS message attributes" (which lists only A-Z, a-z, 0-9: AWS was recorded accepting
    ``attr.1øßä``, docs/behaviour.md 4.7)."""
    reason = None
    if not name:
        reason = "must not be empty"
    elif len(name) > limits.attribute_name_max_chars:
        reason = f"must be at most {limits.attribute_name_max_chars} characters long"
    elif not _name_chars_allowed(name):
        reason = "can only contain alphanumeric characters, hyphens, underscores and periods"
    elif name.lower().startswith(("aws.", "amazon.")):
        reason = "must not start with the reserved prefixes AWS. or Amazon."
    elif name.startswith(".") or name.endswith(".") or ".." in name:
        reason = "must not start or end with a period or contain two successive periods"
    if reason is not None:
        raise InvalidParameterValue(f"Message (user) attribute name '{name}' is invalid: it {reason}.")


def attribute_bytes(name: str, value: MessageAttributeValue) -> int:
    """Bytes an attribute adds to the message size: UTF-8 name + DataType + value (raw bytes for Binary)."""
    size = len(name.encode()) + len(value.data_type.encode())
    if value.string_value is not None:
        size += len(value.string_value.encode())
    elif value.binary_value is not None:
        size += len(value.binary_value)
    return size


def check_message_attributes(attributes: dict[str, MessageAttributeValue], limits: Limits) -> int:
    """Validate user message attributes (count, names, data types, values); returns their size in bytes.

    Raises ``InvalidParameterValue`` for every violation (docs/behaviour.md 4.7).
    """
    if len(attributes) > limits.message_attributes_max:
        raise InvalidParameterValue(
            f"Number of message attributes [{len(attributes)}] exceeds the allowed maximum "
            f"[{limits.message_attributes_max}]."
        )
    size = 0
    for name, value in attributes.items():
        _check_attribute_name(name, limits)
        data_type = value.data_type or ""
        if not data_type:
            raise InvalidParameterValue(
                f"The message attribute '{name}' must contain a non-empty message attribute type."
            )
        if (
            len(data_type) > limits.attribute_type_max_chars
            or not _DATA_TYPE.match(data_type)
            or _FORBIDDEN_CHAR.search(data_type)
        ):
            raise InvalidParameterValue(
                f"The type of message (user) attribute '{name}' is invalid. "
                "You must use only the following supported type prefixes: Binary, Number, String."
            )
        base = data_type.split(".", 1)[0]
        if base == "Binary":
            if not value.binary_value or value.string_value is not None:
                raise InvalidParameterValue(
                    f"Message (user) attribute '{name}' must contain a non-empty value of type 'Binary'."
                )
        else:
            text = value.string_value
            if not text or value.binary_value is not None:
                raise InvalidParameterValue(
                    f"Message (user) attribute '{name}' must contain a non-empty value of type '{base}'."
                )
            if _FORBIDDEN_CHAR.search(text):
                raise InvalidParameterValue(f"Message (user) attribute '{name}' value contains invalid characters.")
            if base == "Number" and not _NUMBER.match(text.strip()):
                raise InvalidParameterValue(f"Can't cast the value of message (user) attribute '{name}' to a number.")
        size += attribute_bytes(name, value)
    return size


def check_system_attributes(attributes: dict[str, MessageAttributeValue]) -> str | None:
    """Validate MessageSystemAttributes (only ``AWSTraceHeader``, a non-empty String); returns the trace header."""
    for name, value in attributes.items():
        if name != "AWSTraceHeader":
            raise InvalidParameterValue(f"Message system attribute name '{name}' is invalid.")
        if value.data_type != "String" or not value.string_value or value.binary_value is not None:
            raise InvalidParameterValue(
                "Message system attribute 'AWSTraceHeader' must contain a non-empty value of type 'String'."
            )
    header = attributes.get("AWSTraceHeader")
    return header.string_value if header is not None else None


def check_token(value: str | None, parameter: str) -> str | None:
    """MessageGroupId / MessageDeduplicationId / ReceiveRequestAttemptId syntax (1-128 alphanumerics and
    punctuation); None passes through."""
    if value is not None and not _TOKEN.match(value):
        raise invalid_value(
            value,
            parameter,
            f"{parameter} can only include alphanumeric and punctuation characters. 1 to 128 in length.",
        )
    return value


def check_range(value: int | None, parameter: str, low: int, high: int, reason: str) -> int | None:
    """An optional integer parameter within ``[low, high]``; raises ``InvalidParameterValue``."""
    if value is not None and not low <= value <= high:
        raise invalid_value(value, parameter, reason)
    return value


def check_batch(entries: Sequence[_HasId], entry_name: str, limits: Limits) -> None:
    """Batch-level rules: 1..10 entries, Ids of 1-80 ``[A-Za-z0-9_-]``, distinct. Raises ``EmptyBatchRequest``
    (``There should be at least one <entry_name> in the request.``), ``TooManyEntriesInBatchRequest``,
    ``InvalidBatchEntryId`` or ``BatchEntryIdsNotDistinct`` (``Id <id> repeated.``), as AWS words them (API
    Reference, ``SendMessageBatch``, ``DeleteMessageBatch``, ``ChangeMessageVisibilityBatch``; messages as
    observed on AWS). ``entry_name`` is the action's entry type, e.g. ``SendMessageBatchRequestEntry``."""
    if not entries:
        raise EmptyBatchRequest(f"There should be at least one {entry_name} in the request.")
    if len(entries) > limits.batch_max_entries:
        raise TooManyEntriesInBatchRequest(
            f"Maximum number of entries per request are {limits.batch_max_entries}. You have sent {len(entries)}."
        )
    seen: set[str] = set()
    most = limits.batch_id_max_chars
    for entry in entries:
        entry_id = entry.id
        if not entry_id or len(entry_id) > most:
            raise InvalidBatchEntryId()
        if not (entry_id.isalnum() and entry_id.isascii()) and not _BATCH_ID_CHARS.fullmatch(entry_id):
            raise InvalidBatchEntryId()  # (letters and digits alone, the common ids, need no pattern match)
        if entry_id in seen:
            raise BatchEntryIdsNotDistinct(f"Id {entry_id} repeated.")
        seen.add(entry_id)
