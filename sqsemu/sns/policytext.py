"""The text AWS's filter-policy compiler reads, token by token, and where its errors point.

Amazon SNS re-serializes a filter policy compactly before compiling it: the validation errors it answers quote the
policy without the caller's spaces (``{"key":[["value"]]}`` for ``{"key": [["value"]]}``), and the column each one
names counts characters in that compact text. Those errors are Jackson's ``JsonParseException`` messages
(``<reason>\\n at [Source: (String)"<text>"; line: 1, column: <n>]``), as the recordings of real AWS answers show
(localstack/localstack ``tests/aws/services/sns/test_sns_filter_policy.snapshot.json``, recorded 2024-05).

:func:`compact` writes a parsed policy as Jackson's writer does (keys in their order, no spaces, Jackson's string
escapes, Java's ``Double.toString`` for decimals) and returns its tokens, each with the two columns Jackson's parser
reports: right after ``nextToken()`` returned it, and after ``getText()`` read it. Jackson reads ahead: a field name
also consumes its colon and the first character of its value (all of a number or a ``true``/``false``/``null``); a
string token ends, for ``nextToken()``, after its opening quote. Columns count UTF-16 code units, as Java does.
:func:`location` renders the suffix (the text cut at 500 characters, as Jackson does). Every column the recordings
show is reproduced by these rules (tests/unit/test_sns_filterpolicy.py).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Final

START_OBJECT: Final = 0
END_OBJECT: Final = 1
START_ARRAY: Final = 2
END_ARRAY: Final = 3
FIELD_NAME: Final = 4
STRING: Final = 5
NUMBER: Final = 6
TRUE: Final = 7
FALSE: Final = 8
NULL: Final = 9

MAX_SNIPPET: Final = 500
"""Characters of the source Jackson quotes in an error location; the rest is counted as ``[truncated N chars]``."""

_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_ISO_CONTROL = re.compile(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_END = object()


class Token:
    """One token of the compact text: ``kind`` (the constants above), ``text`` (what Jackson's ``getText()`` gives:
    a string's or name's characters, a number as written, the punctuation or keyword), ``value`` (the Python value
    of a scalar), the columns after ``nextToken()`` and after ``getText()`` (1-based, UTF-16 units), and ``start``
    and ``stop``: the token's slice of the compact text (Python indexes)."""

    __slots__ = ("kind", "text", "value", "after_next", "after_text", "start", "stop")

    def __init__(self, kind: int, text: str, value: object, after_next: int, start: int, stop: int) -> None:
        self.kind = kind
        self.text = text
        self.value = value
        self.after_next = after_next
        self.after_text = after_next
        self.start = start
        self.stop = stop

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, col {self.after_next}/{self.after_text})"


def _units(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (Java's ``String.length()``)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _escape(text: str) -> str:
    """A string's characters as Jackson writes them inside quotes (``\\"``, ``\\\\``, ``\\b\\t\\n\\f\\r``,
    ``\\u00XX`` for the other control characters; everything else as is)."""
    if _NEEDS_ESCAPE.search(text) is None:
        return text
    return _NEEDS_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), text)


def java_double(number: float) -> str:
    """``Double.toString``: ``1.5``, ``100.0``, ``0.001``; ``1.0E7``, ``1.0E-4`` outside [10^-3, 10^7)."""
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    sign, digit_tuple, exponent = Decimal(repr(number)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    power = len(digit_tuple) + exponent - 1
    minus = "-" if sign else ""
    if 1e-3 <= abs(number) < 1e7:
        if power >= 0:
            whole = digits[: power + 1].ljust(power + 1, "0")
            return f"{minus}{whole}.{digits[power + 1 :] or '0'}"
        return f"{minus}0.{'0' * (-power - 1)}{digits}"
    return f"{minus}{digits[0]}.{digits[1:] or '0'}E{power}"


def compact(value: object) -> tuple[str, list[Token]]:
    """``value`` (a parsed JSON document: dict, list, str, int, float, bool, None) written as Jackson writes it, and
    its tokens in reading order. An infinite float (a number too large for a double) is written as Jackson's writer
    does by default, as the string ``"Infinity"``. No recursion: any nesting depth is written."""
    out: list[str] = []
    tokens: list[Token] = []
    position = 0  # Python characters written
    units = 0  # UTF-16 units written

    def write(text: str) -> None:
        nonlocal position, units
        out.append(text)
        position += len(text)
        units += _units(text)

    def scalar_or_open(item: object) -> Token:
        start = position
        if isinstance(item, dict):
            write("{")
            return Token(START_OBJECT, "{", None, units + 1, start, position)
        if isinstance(item, list):
            write("[")
            return Token(START_ARRAY, "[", None, units + 1, start, position)
        if isinstance(item, float) and math.isinf(item):
            item = "Infinity" if item > 0 else "-Infinity"
        if isinstance(item, str):
            write('"')
            token = Token(STRING, item, item, units + 1, start, 0)
            write(_escape(item))
            write('"')
            token.after_text = units + 1
            token.stop = position
            return token
        if item is True or item is False or item is None:
            text = "true" if item is True else "false" if item is False else "null"
            write(text)
            kind = TRUE if item is True else FALSE if item is False else NULL
            return Token(kind, text, item, units + 1, start, position)
        if isinstance(item, int):
            text = str(item)
        elif isinstance(item, float):
            text = java_double(item)
        else:
            raise TypeError(f"not a JSON value: {type(item).__name__}")
        write(text)
        return Token(NUMBER, text, item, units + 1, start, position)

    first = scalar_or_open(value)
    tokens.append(first)
    stack: list[list[object]] = []  # [iterator, is_object, items written]
    if first.kind == START_OBJECT:
        assert isinstance(value, dict)
        stack.append([iter(value.items()), True, 0])
    elif first.kind == START_ARRAY:
        assert isinstance(value, list)
        stack.append([iter(value), False, 0])
    while stack:
        frame = stack[-1]
        iterator, is_object, count = frame
        item = next(iterator, _END)  # type: ignore[call-overload]
        if item is _END:
            stack.pop()
            start = position
            write("}" if is_object else "]")
            kind = END_OBJECT if is_object else END_ARRAY
            tokens.append(Token(kind, "}" if is_object else "]", None, units + 1, start, position))
            continue
        if count:
            write(",")
        frame[2] = 1
        if is_object:
            name, item = item
            start = position
            write(f'"{_escape(name)}":')
            name_token = Token(FIELD_NAME, name, name, 0, start, position)
            tokens.append(name_token)
            token = scalar_or_open(item)
            name_token.after_next = name_token.after_text = token.after_next
        else:
            token = scalar_or_open(item)
        tokens.append(token)
        if token.kind == START_OBJECT:
            assert isinstance(item, dict)
            stack.append([iter(item.items()), True, 0])
        elif token.kind == START_ARRAY:
            assert isinstance(item, list)
            stack.append([iter(item), False, 0])
    return "".join(out), tokens


def location(source: str, column: int) -> str:
    """Jackson's location suffix for an error at ``column`` of the one-line ``source``:
    ``\\n at [Source: (String)"<source>"; line: 1, column: <column>]``, the source cut after 500 UTF-16 units and
    followed by ``[truncated N chars]``; ISO control characters other than CR and LF quoted as ``\\uXXXX``."""
    total = _units(source)
    snippet = source
    if total > MAX_SNIPPET:
        if source.isascii():
            snippet = source[:MAX_SNIPPET]
        else:
            kept = 0
            for index, char in enumerate(source):
                width = 2 if ord(char) > 0xFFFF else 1
                if kept + width > MAX_SNIPPET:
                    snippet = source[:index]
                    break
                kept += width
    snippet = _ISO_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04X}", snippet)
    truncated = f"[truncated {total - MAX_SNIPPET} chars]" if total > MAX_SNIPPET else ""
    return f'\n at [Source: (String)"{snippet}"{truncated}; line: 1, column: {column}]'
