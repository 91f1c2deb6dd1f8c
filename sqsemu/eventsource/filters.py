"""Lambda's event filtering (FilterCriteria) for SQS records ("Lambda event filtering", AWS Lambda Developer Guide).

A mapping holds up to five filters; each ``Pattern`` is a JSON object over the SQS record. Amazon SQS event source
mappings filter on the ``body`` key only ("Using event filtering with an Amazon SQS event source"): a pattern with
any other top-level key is refused. A record is delivered when any filter matches (OR between filters, AND between
the keys of one pattern; ``"$or": [pattern, pattern, ...]`` at any level matches when one of its patterns does). A
body that is a JSON object is matched field by field; any other body only by patterns that compare ``body`` itself.
Records no filter matches are deleted from the queue without an invocation, as Lambda does for SQS.

Comparison operators in a value array (Lambda's filter rule syntax, "Control which events Lambda sends to your
function"): literal strings, numbers, booleans and ``null``; ``{"prefix": s}`` and ``{"prefix":
{"equals-ignore-case": s}}``, ``{"suffix": s}`` and ``{"suffix": {"equals-ignore-case": s}}``,
``{"equals-ignore-case": s}``, ``{"anything-but": value or [values]}``, ``{"numeric": [op, n, (op, n)]}`` with
``=``, ``<``, ``<=``, ``>``, ``>=``, and ``{"exists": true|false}``; anything else (``anything-but`` with
``prefix``, ``suffix`` or ``equals-ignore-case``, ``wildcard``, ``cidr``) is refused. A literal number matches a
number written the same way ("300" does not match "3.0e2"); ``numeric`` compares values.

Hostile input is bounded: a body nested deeper than :data:`MAX_BODY_DEPTH` levels, or one whose evaluation fails in
any way (a number too large for a float, say), cannot be evaluated and matches no pattern (it is deleted without an
invocation, as a record no filter matches); a pattern nested deeper than :data:`MAX_PATTERN_DEPTH` levels is
refused. Parsing and matching are linear in the body's length and the pattern's size: no recursion limit is
reached, nothing overflows, nothing grows quadratically.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqsemu.eventsource.errors import InvalidParameterValue

MAX_FILTERS = 5
"""Filters per mapping (Lambda's default quota, "Lambda event filtering")."""
MAX_PATTERN_CHARS = 4096
"""Longest pattern (the ``Pattern`` shape of the Lambda service model)."""

MAX_BODY_DEPTH = 64
"""Deepest nesting of a JSON body that filters evaluate (sqsemu's bound: Lambda documents none); a deeper body
matches no pattern."""
MAX_PATTERN_DEPTH = 32
"""Deepest nesting of a filter pattern (sqsemu's bound, far beyond any field path of an SQS record)."""

logger = logging.getLogger("sqsemu.eventsource")

_MISSING = object()


class Number:
    """A JSON number as written (``text``): literal matches compare the text, ``numeric`` the value."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text

    @property
    def value(self) -> float:
        """The number as a float; one too large for a float is infinite (of its sign), never ``OverflowError``."""
        try:
            return float(self.text)
        except OverflowError:
            return float("-inf") if self.text.startswith("-") else float("inf")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    """JSON with numbers kept as written (:class:`Number`); NaN and Infinity are not JSON. Raises ``ValueError``."""
    return json.loads(text, parse_int=Number, parse_float=Number, parse_constant=_no_constant)


_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_NUMERIC_OPS = {"=", "<", "<=", ">", ">="}


def _invalid(detail: str) -> InvalidParameterValue:
    return InvalidParameterValue(f"Invalid filter pattern definition. {detail}")


def parse_filters(filters: Any) -> list[str]:
    """``FilterCriteria.Filters`` (a list of ``{"Pattern": str}``) checked: each pattern is a JSON object of valid
    rules. Returns the pattern strings. Raises ``InvalidParameterValue`` (HTTP 400)."""
    if filters is None:
        return []
    if not isinstance(filters, list):
        raise InvalidParameterValue("FilterCriteria.Filters must be a list.")
    if len(filters) > MAX_FILTERS:
        raise InvalidParameterValue(f"The number of filters cannot exceed {MAX_FILTERS}.")
    patterns: list[str] = []
    for item in filters:
        pattern = item.get("Pattern") if isinstance(item, dict) else None
        if not isinstance(pattern, str):
            raise _invalid("A filter needs a Pattern string.")
        if len(pattern) > MAX_PATTERN_CHARS:
            raise _invalid(f"A pattern must not be longer than {MAX_PATTERN_CHARS} characters.")
        compile_pattern(pattern)
        patterns.append(pattern)
    return patterns


def compile_pattern(pattern: str) -> dict[str, Any]:
    """The pattern as a dict, its rules checked. Raises ``InvalidParameterValue``."""
    if too_deep(pattern, MAX_PATTERN_DEPTH):
        raise _invalid(f"The pattern is nested deeper than {MAX_PATTERN_DEPTH} levels.")
    try:
        document = _loads(pattern)
    except ValueError:
        raise _invalid("The pattern is not valid JSON.") from None
    if not isinstance(document, dict) or not document:
        raise _invalid("The pattern must be a non-empty JSON object.")
    _check_top(document)
    _check_node(document)
    return document


def _check_top(document: Mapping[str, Any]) -> None:
    """Amazon SQS event source mappings filter on the ``body`` key only (``$or`` branches too)."""
    for key, value in document.items():
        if key == "$or" and isinstance(value, list):
            for branch in value:
                if isinstance(branch, dict):
                    _check_top(branch)
        elif key != "body":
            raise _invalid(f"Amazon SQS event source mappings only support filtering on the body key, not {key!r}.")


def too_deep(text: str, limit: int) -> bool:
    """Whether the JSON text ``text`` nests arrays and objects more than ``limit`` levels deep (brackets inside
    strings do not count). Linear in ``len(text)``; a text with at most ``limit`` brackets is never scanned."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for token in _BRACKETS.finditer(text):
        char = token.group()
        if char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return True
        elif char == "]" or char == "}":
            depth -= 1
    return False


def _check_node(node: Mapping[str, Any]) -> None:
    for key, value in node.items():
        if key == "$or":
            if not isinstance(value, list) or len(value) < 2 or not all(isinstance(b, dict) and b for b in value):
                raise _invalid("$or takes a list of at least two non-empty objects.")
            for branch in value:
                _check_node(branch)
        elif isinstance(value, dict):
            if not value:
                raise _invalid(f"The object at {key!r} is empty.")
            _check_node(value)
        elif isinstance(value, list):
            if not value:
                raise _invalid(f"The value array at {key!r} is empty.")
            for rule in value:
                _check_rule(rule, key)
        else:
            raise _invalid(f"The value of {key!r} must be an array or an object.")


def _check_rule(rule: Any, key: str) -> None:
    if rule is None or isinstance(rule, str | Number | bool):
        return
    if not isinstance(rule, dict) or len(rule) != 1:
        raise _invalid(f"Unrecognized match at {key!r}.")
    ((op, arg),) = rule.items()
    if op in ("prefix", "suffix"):
        if isinstance(arg, dict):
            if set(arg) != {"equals-ignore-case"} or not isinstance(arg["equals-ignore-case"], str):
                raise _invalid(f"{op} at {key!r} takes a string or an equals-ignore-case string.")
        elif not isinstance(arg, str):
            raise _invalid(f"{op} at {key!r} takes a string.")
    elif op == "equals-ignore-case":
        if not isinstance(arg, str):
            raise _invalid(f"{op} at {key!r} takes a string.")
    elif op == "exists":
        if not isinstance(arg, bool):
            raise _invalid(f"exists at {key!r} takes true or false.")
    elif op == "anything-but":
        if isinstance(arg, dict):
            raise _invalid(f"anything-but at {key!r} takes a value or a list of values (event source mappings)")
        if isinstance(arg, list) and (not arg or any(isinstance(v, dict | list) for v in arg)):
            raise _invalid(f"anything-but at {key!r} takes a non-empty list of values.")
    elif op == "numeric":
        _check_numeric(arg, key)
    else:
        raise _invalid(f"Unrecognized match type {op!r} at {key!r}.")


def _check_numeric(arg: Any, key: str) -> None:
    if not isinstance(arg, list) or len(arg) not in (2, 4):
        raise _invalid(f"numeric at {key!r} takes one or two comparisons.")
    for i in range(0, len(arg), 2):
        op, number = arg[i], arg[i + 1]
        if op not in _NUMERIC_OPS or not isinstance(number, Number):
            raise _invalid(f"Bad numeric comparison at {key!r}.")


class RecordFilter:
    """Compiled patterns of one mapping; :meth:`matches` tells whether a record is delivered."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = [compile_pattern(p) for p in patterns]

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matches(self, record: Mapping[str, Any]) -> bool:
        """Whether any pattern matches ``record`` (an event record, ``body`` as sent: a JSON object body is parsed
        for the match). A record that cannot be evaluated (see the module's docstring) matches nothing; never
        raises."""
        if not self.patterns:
            return True
        try:
            view = dict(record)
            body = record.get("body")
            if isinstance(body, str) and body.lstrip(" \t\n\r")[:1] in ("{", "["):
                if too_deep(body, MAX_BODY_DEPTH):
                    return False
                try:
                    parsed = _loads(body)
                except ValueError:
                    parsed = _MISSING
                if isinstance(parsed, dict):
                    view["body"] = parsed
            return any(_match_node(pattern, view) for pattern in self.patterns)
        except Exception as exc:  # noqa: BLE001 - a record the filter cannot evaluate does not match
            logger.debug("filter: record %s not evaluated: %r", record.get("messageId"), exc)
            return False


def _match_node(pattern: Mapping[str, Any], data: Any) -> bool:
    for key, rule in pattern.items():
        if key == "$or":
            if not any(_match_node(branch, data) for branch in rule):
                return False
            continue
        value = data.get(key, _MISSING) if isinstance(data, dict) else _MISSING
        if isinstance(rule, dict):
            if not isinstance(value, dict) or not _match_node(rule, value):
                return False
        elif not _match_values(rule, value):
            return False
    return True


def _match_values(rules: list[Any], value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(_match_rule(rule, v) for rule in rules for v in values) or (
        value is _MISSING and any(isinstance(r, dict) and r.get("exists") is False for r in rules)
    )


def _match_rule(rule: Any, value: Any) -> bool:
    if not isinstance(rule, dict):
        if value is _MISSING:
            return False
        if isinstance(rule, bool) or isinstance(value, bool):
            return rule is value
        if isinstance(rule, Number) or isinstance(value, Number):
            return isinstance(rule, Number) and isinstance(value, Number) and rule.text == value.text
        return bool(rule == value)
    ((op, arg),) = rule.items()
    if op == "exists":
        return (value is not _MISSING) is arg
    if value is _MISSING or not isinstance(value, str) and op != "anything-but" and op != "numeric":
        return False
    if op == "prefix":
        if isinstance(arg, dict):
            wanted = str(arg["equals-ignore-case"])
            return bool(value[: len(wanted)].casefold() == wanted.casefold())
        return bool(value.startswith(arg))
    if op == "suffix":
        if isinstance(arg, dict):
            wanted = str(arg["equals-ignore-case"])
            return len(value) >= len(wanted) and value[len(value) - len(wanted) :].casefold() == wanted.casefold()
        return bool(value.endswith(arg))
    if op == "equals-ignore-case":
        return bool(value.casefold() == arg.casefold())
    if op == "anything-but":
        excluded = arg if isinstance(arg, list) else [arg]
        return not any(_match_rule(e, value) for e in excluded)
    if op == "numeric":
        if not isinstance(value, Number):
            return False
        number = value.value
        return all(_compare(arg[i], number, arg[i + 1].value) for i in range(0, len(arg), 2))
    return False


def _compare(op: str, value: float, bound: float) -> bool:
    if op == "=":
        return value == bound
    if op == "<":
        return value < bound
    if op == "<=":
        return value <= bound
    if op == ">":
        return value > bound
    return value >= bound
