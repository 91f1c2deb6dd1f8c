"""JSON documents SNS reads from attribute values (RedrivePolicy, FilterPolicy...), refused in the words AWS's parser
uses: SNS parses them with Jackson and quotes its message and location (recorded, e.g. ``failed to parse JSON.
Unexpected character ('i' (code 105)): was expecting double-quote to start field name\\n at [Source: REDACTED
(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 2]``).

:func:`parse` finds the first error as Jackson's streaming parser reports it (the same kinds of errors, the same
wording, the same line and column: an unexpected character is located at itself, an unrecognised word just past
it); a document without one is decoded. Like Jackson's ``ObjectMapper`` (``FAIL_ON_TRAILING_TOKENS`` off
by default) it reads the first value and ignores what follows it. Written from Jackson's documented messages, not
its code; the scan is iterative, so any nesting depth is answered; the value is decoded by orjson, or the standard
library for what orjson refuses (integers beyond 64 bits, escaped lone surrogates).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["JSONSyntaxError", "parse"]

SOURCE = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled)"
VALUES = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
_SPACE = " \t\n\r"
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_NUMBER_START = frozenset("-0123456789")
_ESCAPES = frozenset('"\\/bfnrtu')
MAX_DEPTH = 1000
"""Jackson's default nesting limit (``StreamReadConstraints.getMaxNestingDepth()``)."""


class JSONSyntaxError(ValueError):
    """A document that is not JSON: ``message`` is Jackson's text with its location
    (``...\\n at [Source: REDACTED (...); line: L, column: C]``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _location(text: str, index: int) -> str:
    line_start = text.rfind("\n", 0, index) + 1
    return f"line: {text.count(chr(10), 0, index) + 1}, column: {index - line_start + 1}"


def _fail(text: str, index: int, reason: str) -> JSONSyntaxError:
    return JSONSyntaxError(f"{reason}\n at {SOURCE}; {_location(text, index)}]")


def _char(c: str) -> str:
    code = ord(c)
    if code < 32:
        return f"(CTRL-CHAR, code {code})"
    if code > 255:
        return f"'{c}' (code {code} / 0x{code:x})"
    return f"'{c}' (code {code})"


def _unexpected(text: str, index: int, comment: str) -> JSONSyntaxError:
    return _fail(text, index, f"Unexpected character ({_char(text[index])}): {comment}")


def _skip(text: str, index: int) -> int:
    """The index of the next token (past white space); raises for a control character between tokens."""
    end = len(text)
    while index < end:
        c = text[index]
        if c in _SPACE:
            index += 1
            continue
        if ord(c) < 32:
            raise _fail(
                text, index, f"Illegal character ({_char(c)}): only regular white space (\\r, \\n, \\t) is allowed "
                "between tokens",
            )  # fmt: skip
        return index
    return index


def _string(text: str, index: int, what: str) -> int:
    """The index just past the string starting at ``index`` (its opening quote)."""
    end = len(text)
    i = index + 1
    while i < end:
        c = text[i]
        if c == '"':
            return i + 1
        if c == "\\":
            if i + 1 >= end:
                break
            escaped = text[i + 1]
            if escaped not in _ESCAPES:
                raise _fail(text, i + 1, f"Unrecognized character escape {_char(escaped)}")
            if escaped == "u":
                digits = text[i + 2 : i + 6]
                if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                    raise _fail(text, i + 2, "Unexpected character in unicode escape: expected a hex-digit")
                i += 6
                continue
            i += 2
            continue
        if ord(c) < 32:
            raise _fail(
                text, i, f"Illegal unquoted character ({_char(c)}): has to be escaped using backslash to be included "
                f"in {what}",
            )  # fmt: skip
        i += 1
    raise _fail(text, end, f"Unexpected end-of-input: was expecting closing quote for a {what}")


def _number(text: str, index: int) -> int:
    end = len(text)
    i = index
    if text[i] == "-":
        i += 1
        if i >= end or not text[i].isdigit():
            raise _fail(
                text, i, "Invalid numeric value: expected digit (0-9) to follow minus sign, for valid numeric value"
            )
    if text[i] == "0" and i + 1 < end and text[i + 1].isdigit():
        raise _fail(text, i + 1, "Invalid numeric value: Leading zeroes not allowed")
    while i < end and text[i].isdigit():
        i += 1
    if i < end and text[i] == ".":
        i += 1
        if i >= end or not text[i].isdigit():
            found = _char(text[i]) if i < end else "EOF"
            raise _fail(
                text, i, f"Unexpected character ({found}) in numeric value: Decimal point not followed by a digit"
            )
        while i < end and text[i].isdigit():
            i += 1
    if i < end and text[i] in "eE":
        i += 1
        if i < end and text[i] in "+-":
            i += 1
        if i >= end or not text[i].isdigit():
            found = _char(text[i]) if i < end else "EOF"
            raise _fail(
                text, i, f"Unexpected character ({found}) in numeric value: Exponent indicator not followed by a digit"
            )
        while i < end and text[i].isdigit():
            i += 1
    return i


def _scalar(text: str, index: int) -> int:
    """The index just past the scalar value at ``index``; raises for anything that is not a value."""
    c = text[index]
    if c == '"':
        return _string(text, index, "String value")
    if c in _NUMBER_START:
        return _number(text, index)
    if c in _WORD or c.isalpha():
        i = index
        while i < len(text) and (text[i] in _WORD or text[i].isalpha()):
            i += 1
        word = text[index:i]
        if word in ("true", "false", "null"):
            return i
        raise _fail(text, i, f"Unrecognized token '{word}': was expecting {VALUES}")
    if c in "]}":
        raise _unexpected(text, index, "expected a value")
    raise _unexpected(text, index, f"expected a valid value {VALUES}")


def _first_value_end(text: str) -> int:
    """The index just past the document's first value; raises :class:`JSONSyntaxError` at the first error."""
    stack: list[tuple[str, int]] = []  # (container, index of its opening bracket)
    i = _skip(text, 0)
    if i >= len(text):
        raise _fail(text, i, "No content to map due to end-of-input")
    expecting = "value"
    while True:
        i = _skip(text, i)
        if i >= len(text):
            kind, start = stack[-1]
            name = "Object" if kind == "{" else "Array"
            raise _fail(
                text, i,
                f"Unexpected end-of-input: expected close marker for {name} (start marker at {SOURCE}; "
                f"{_location(text, start)}])",
            )  # fmt: skip
        c = text[i]
        if expecting in ("value", "first item"):
            if expecting == "first item" and c == "]":
                stack.pop()
                i += 1
            elif c in "{[":
                if len(stack) >= MAX_DEPTH:
                    raise _fail(
                        text, i, f"Document nesting depth ({MAX_DEPTH + 1}) exceeds the maximum allowed ({MAX_DEPTH}, "
                        "from `StreamReadConstraints.getMaxNestingDepth()`)",
                    )  # fmt: skip
                stack.append((c, i))
                i += 1
                expecting = "first key" if c == "{" else "first item"
                continue
            else:
                i = _scalar(text, i)
        elif expecting in ("key", "first key"):
            if expecting == "first key" and c == "}":
                stack.pop()
                i += 1
            elif c == '"':
                i = _string(text, i, "name")
                expecting = "colon"
                continue
            else:
                raise _unexpected(text, i, "was expecting double-quote to start field name")
        elif expecting == "colon":
            if c != ":":
                raise _unexpected(text, i, "was expecting a colon to separate field name and value")
            i += 1
            expecting = "value"
            continue
        else:  # after a value inside a container
            kind, _ = stack[-1]
            close, name = ("}", "Object") if kind == "{" else ("]", "Array")
            if c == ",":
                i += 1
                expecting = "key" if kind == "{" else "value"
                continue
            if c != close:
                raise _unexpected(text, i, f"was expecting comma to separate {name} entries")
            stack.pop()
            i += 1
        if not stack:
            return i
        expecting = "after"


def parse(text: str) -> Any:
    """The value of the JSON document ``text`` (its first value, as Jackson's ``ObjectMapper`` reads it); raises
    :class:`JSONSyntaxError` with Jackson's message and location."""
    end = _first_value_end(text)
    document = text[:end]
    try:
        return orjson.loads(document)
    except orjson.JSONDecodeError:  # a number beyond 64 bits or an escaped lone surrogate: JSON all the same
        try:
            return json.loads(document)
        except RecursionError:  # both, that deep: too rare to be worth a parser of its own
            raise _fail(text, end, "Document nesting depth exceeds what sqsemu reads with such values") from None
