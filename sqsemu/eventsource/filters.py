"""Lambda's event filtering (FilterCriteria) for SQS records ("Lambda event filtering", AWS Lambda Developer Guide).

A mapping holds up to five filters; each ``Pattern`` is a JSON object whose keys name fields of the SQS record
(``body``, ``attributes``, ``messageAttributes``, ``messageId``...) and whose leaves are arrays of allowed values.
A record is delivered when any filter matches (OR between filters, AND between the keys of one pattern). A body
that is a JSON object is matched field by field; any other body only by patterns that compare ``body`` itself.
Records no filter matches are deleted from the queue without an invocation, as Lambda does for SQS.

Comparison operators in a value array: literal strings, numbers, booleans and ``null``; ``{"prefix": s}``,
``{"suffix": s}``, ``{"equals-ignore-case": s}``, ``{"anything-but": value or [values]}`` (also
``{"anything-but": {"prefix": s}}``), ``{"numeric": [op, n, (op, n)]}`` with ``=``, ``<``, ``<=``, ``>``, ``>=``,
and ``{"exists": true|false}``.

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
        document = json.loads(pattern)
    except ValueError:
        raise _invalid("The pattern is not valid JSON.") from None
    if not isinstance(document, dict) or not document:
        raise _invalid("The pattern must be a non-empty JSON object.")
    _check_node(document)
    return document


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
        if isinstance(value, dict):
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
    if rule is None or isinstance(rule, str | int | float | bool):
        return
    if not isinstance(rule, dict) or len(rule) != 1:
        raise _invalid(f"Unrecognized match at {key!r}.")
    ((op, arg),) = rule.items()
    if op in ("prefix", "suffix", "equals-ignore-case"):
        if not isinstance(arg, str):
            raise _invalid(f"{op} at {key!r} takes a string.")
    elif op == "exists":
        if not isinstance(arg, bool):
            raise _invalid(f"exists at {key!r} takes true or false.")
    elif op == "anything-but":
        if isinstance(arg, dict):
            if set(arg) != {"prefix"} or not isinstance(arg["prefix"], str):
                raise _invalid(f"anything-but at {key!r} takes a value, a list or a prefix.")
        elif isinstance(arg, list):
            if not arg or any(isinstance(v, dict | list) for v in arg):
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
        if op not in _NUMERIC_OPS or isinstance(number, bool) or not isinstance(number, int | float):
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
                    parsed = json.loads(body)
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
        if isinstance(rule, int | float) and isinstance(value, int | float):
            return _number(rule) == _number(value)
        return bool(rule == value)
    ((op, arg),) = rule.items()
    if op == "exists":
        return (value is not _MISSING) is arg
    if value is _MISSING:
        return False
    if op == "prefix":
        return isinstance(value, str) and value.startswith(arg)
    if op == "suffix":
        return isinstance(value, str) and value.endswith(arg)
    if op == "equals-ignore-case":
        return isinstance(value, str) and value.lower() == arg.lower()
    if op == "anything-but":
        if isinstance(arg, dict):
            return isinstance(value, str) and not value.startswith(arg["prefix"])
        excluded = arg if isinstance(arg, list) else [arg]
        return not any(_match_rule(e, value) for e in excluded)
    if op == "numeric":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        number = _number(value)
        return all(_compare(arg[i], number, _number(arg[i + 1])) for i in range(0, len(arg), 2))
    return False


def _number(value: float) -> float:
    """``value`` as a float; an integer too large for one is infinite (of its sign), never ``OverflowError``."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


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
