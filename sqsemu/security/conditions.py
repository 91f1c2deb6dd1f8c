"""A policy statement's ``Condition`` block: its operators, parsed once, and their evaluation against a request
context.

Rules, from the IAM User Guide pages "IAM JSON policy elements: Condition", "IAM JSON policy elements: Condition
operators" and "Single-valued vs. multivalued context keys":

- the block's operators are ANDed, and within one operator its keys are ANDed; a key's values are ORed (the
  request's value matches any of them), and for a negated operator (``StringNotEquals``, ``StringNotLike``,
  ``NumericNotEquals``, ``DateNotEquals``, ``ArnNotEquals``, ``ArnNotLike``, ``NotIpAddress``) the request's value
  must match none of them;
- condition key names are case-insensitive (values are not, but for the ``IgnoreCase`` operators);
- a key absent from the request context makes a positive operator false and a negated one true
  ("... if the key is not present, the condition is true" for the negated operators); ``...IfExists`` makes any
  operator true when its key is absent; ``Null`` with ``true`` holds when the key is absent, with ``false`` when it
  is present;
- ``ForAnyValue:`` holds when at least one of the request's values matches (false when the key is absent or
  empty); ``ForAllValues:`` holds when every one of them matches (true when the key is absent or empty);
- ``String*`` compare strings (``StringLike``/``StringNotLike`` with ``*`` and ``?``); ``Numeric*`` compare numbers
  (a request value that is not a number matches nothing; a policy value that is not one, or a ``Date*`` policy
  value that is not a date, an ``IpAddress``/``NotIpAddress`` one that is not an address, or an ``Arn*`` one that
  is not six ``:`` separated parts, is undecidable:
  :class:`Undecidable`, decided fail closed); ``Date*`` compare instants given as ISO 8601 or epoch seconds;
  ``Bool`` compares ``true``/``false``; ``BinaryEquals`` compares base64 text; ``IpAddress``/``NotIpAddress`` test
  membership of an IPv4 or IPv6 CIDR range (a bare address is a /32 or /128); ``Arn*`` compare the six ``:``
  separated parts of an ARN, each with ``*``/``?`` wildcards (``ArnEquals`` and ``ArnLike`` behave alike).

Policy variables (IAM User Guide, "IAM policy elements: Variables and tags"): in a ``Version`` ``2012-10-17``
policy, ``${key}`` in a ``Resource``/``NotResource`` value or a condition value stands for the request's value of
the condition key ``key`` (``${key, 'default'}`` for a default when the key is absent; ``${*}``, ``${?}`` and
``${$}`` for the literal characters); a ``2008-10-17`` policy's ``${...}`` is plain text. A variable whose key the
request lacks (and has no default) or holds several values of cannot be substituted: :class:`Undecidable` is
raised, and the statement is taken fail closed (``sqsemu.security.evaluate``: a ``Deny`` applies, an ``Allow``
does not).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from sqsemu.security.wildcard import Wildcard

__all__ = [
    "OPERATORS",
    "Condition",
    "ContextLookup",
    "Undecidable",
    "expand",
    "expand_pieces",
    "has_variables",
    "parse_conditions",
]


class ContextLookup(Protocol):
    """The request context: the values of a (lower-case) condition key, or None when absent."""

    def values(self, key: str) -> Sequence[str] | None: ...


class Undecidable(Exception):
    """A policy variable that cannot be substituted in this request (module docstring); ``str()`` says which."""


_VARIABLE_RE = re.compile(r"\$\{([^}]*)\}")
_SPECIAL = {"*": "*", "?": "?", "$": "$"}
_DEFAULT_RE = re.compile(r"\s*([^,\s]+)\s*,\s*'([^']*)'\s*")


def has_variables(text: str) -> bool:
    """Whether ``text`` holds a policy variable (``${...}``)."""
    return _VARIABLE_RE.search(text) is not None


def expand(text: str, context: ContextLookup) -> str:
    """``text`` with its policy variables substituted from ``context``. Raises :class:`Undecidable` for a variable
    whose key is absent without a default, or has several values."""
    return "".join(piece for piece, _ in expand_pieces(text, context))


def expand_pieces(text: str, context: ContextLookup) -> list[tuple[str, bool]]:
    """``text`` with its policy variables substituted from ``context``, as ``(text, literal)`` pieces: a substituted
    value (``${*}`` included) is literal, the policy's own text is not (its ``*`` and ``?`` stay wildcards for a
    :class:`~sqsemu.security.wildcard.Wildcard`). Raises :class:`Undecidable` as :func:`expand` does."""
    out: list[tuple[str, bool]] = []
    last = 0
    for match in _VARIABLE_RE.finditer(text):
        out.append((text[last : match.start()], False))
        last = match.end()
        inner = match.group(1)
        special = _SPECIAL.get(inner)
        if special is not None:
            value = special
        else:
            default: str | None = None
            name = inner.strip()
            with_default = _DEFAULT_RE.fullmatch(inner)
            if with_default is not None:
                name, default = with_default.group(1), with_default.group(2)
            values = context.values(name.lower())
            if values is not None and len(values) > 1:
                raise Undecidable(f"policy variable ${{{inner[:60]}}} names a key with several values")
            if not values:
                if default is None:
                    raise Undecidable(f"policy variable ${{{inner[:60]}}} has no value in this request")
                value = default
            else:
                value = values[0]
        out.append((value, True))
    out.append((text[last:], False))
    return out


Test = Callable[[str, Any], bool]
"""Whether one request value matches one (parsed) policy value."""


def _wild(text: str) -> Wildcard:
    return Wildcard(text)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _instant(text: str) -> float | None:
    """Epoch seconds of an ISO 8601 date/time or of epoch seconds; None when neither."""
    text = text.strip()
    number = _number(text)
    if number is not None:
        return number
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _arn_parts(text: str) -> list[str] | None:
    parts = text.split(":", 5)
    return parts if len(parts) == 6 and parts[0] == "arn" else None


def _arn_pattern(text: str) -> list[Wildcard] | None:
    parts = _arn_parts(text)
    return None if parts is None else [_wild(part) for part in parts]


def _arn_test(value: str, patterns: list[Wildcard] | None) -> bool:
    parts = _arn_parts(value)
    if parts is None or patterns is None:
        return False
    return all(p.matches(v) for p, v in zip(patterns, parts, strict=True))


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None


def _in_network(value: str, network: ipaddress.IPv4Network | ipaddress.IPv6Network | None) -> bool:
    if network is None:
        return False
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return False
    return address.version == network.version and address in network


def _compare(parse: Callable[[str], float | None], check: Callable[[float, float], bool]) -> tuple[Any, Test]:
    def test(value: str, wanted: float | None) -> bool:
        got = parse(value)
        return got is not None and wanted is not None and check(got, wanted)

    return parse, test


def _same(value: str, wanted: str) -> bool:
    return value == wanted


def _same_folded(value: str, wanted: str) -> bool:
    return value.lower() == wanted.lower()


def _like(value: str, wanted: Wildcard) -> bool:
    return wanted.matches(value)


def _bool(value: str, wanted: str) -> bool:
    return value.lower() == wanted.lower()


def _identity(text: str) -> str:
    return text


def _eq(a: float, b: float) -> bool:
    return a == b


def _lt(a: float, b: float) -> bool:
    return a < b


def _le(a: float, b: float) -> bool:
    return a <= b


def _gt(a: float, b: float) -> bool:
    return a > b


def _ge(a: float, b: float) -> bool:
    return a >= b


_NUMERIC = {"Equals": _eq, "LessThan": _lt, "LessThanEquals": _le, "GreaterThan": _gt, "GreaterThanEquals": _ge}

OPERATORS: dict[str, tuple[Callable[[str], Any], Test, bool]] = {
    "StringEquals": (_identity, _same, False),
    "StringNotEquals": (_identity, _same, True),
    "StringEqualsIgnoreCase": (_identity, _same_folded, False),
    "StringNotEqualsIgnoreCase": (_identity, _same_folded, True),
    "StringLike": (_wild, _like, False),
    "StringNotLike": (_wild, _like, True),
    "Bool": (_identity, _bool, False),
    "BinaryEquals": (_identity, _same, False),
    "IpAddress": (_network, _in_network, False),
    "NotIpAddress": (_network, _in_network, True),
    "ArnEquals": (_arn_pattern, _arn_test, False),
    "ArnLike": (_arn_pattern, _arn_test, False),
    "ArnNotEquals": (_arn_pattern, _arn_test, True),
    "ArnNotLike": (_arn_pattern, _arn_test, True),
}
"""Operator name -> (parse a policy value, test a request value against it, negated)."""
for _suffix, _check in _NUMERIC.items():
    OPERATORS["Numeric" + _suffix] = (*_compare(_number, _check), False)
    OPERATORS["Date" + _suffix] = (*_compare(_instant, _check), False)
OPERATORS["NumericNotEquals"] = (*_compare(_number, _eq), True)
OPERATORS["DateNotEquals"] = (*_compare(_instant, _eq), True)


_PARSE_KINDS: dict[Callable[[str], Any], str] = {
    _number: "number", _instant: "date", _network: "ip", _arn_pattern: "arn",
}  # fmt: skip
"""The operators whose policy values must parse, by their parse function: a value that does not (``"ten"`` for a
``NumericLessThan``, ``"yesterday"`` for a ``DateLessThan``, ``"10.0.0.0/33"`` for an ``IpAddress``, ``"arn:aws:sns:*"``
(not six ``:`` separated parts) for an ``Arn*`` operator) makes the
condition undecidable, decided fail closed (``sqsemu.security.evaluate``) rather than matching nothing: a negated
operator matching nothing would make an ``Allow`` apply to every request."""
_KINDS = {
    "number": "a number", "date": "a date (ISO 8601 or epoch seconds)", "ip": "an IP address or CIDR range",
    "arn": "an ARN of six parts (arn:partition:service:region:account:resource)",
}  # fmt: skip


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    raise ValueError("a condition value must be a string, a number, a boolean or an array of them")


@dataclass(frozen=True, slots=True)
class Condition:
    """One (operator, key) pair of a ``Condition`` block: ``operator`` as written, ``key`` in lower case,
    ``written_key`` as written (for explanations)."""

    operator: str
    key: str
    texts: tuple[str, ...]
    wanted: tuple[Any, ...]
    test: Test | None  # None for Null
    negated: bool
    if_exists: bool
    quantifier: str  # "", "any" (ForAnyValue:), "all" (ForAllValues:)
    written_key: str = ""
    parse: Callable[[str], Any] | None = None  # set when a value holds a policy variable: parsed per request
    parse_kind: str = ""  # "number", "date", "ip" (operators whose values must parse), else ""

    @property
    def strict(self) -> bool:
        """Whether a policy value that does not parse makes the condition undecidable (Numeric, Date, IpAddress,
        Arn)."""
        return bool(self.parse_kind)

    def holds(self, context: ContextLookup) -> bool:
        """Whether this condition holds for the request ``context`` (module docstring); raises
        :class:`Undecidable` when one of its policy variables cannot be substituted."""
        if self.parse is not None:
            parse = self.parse
            texts = tuple(expand(text, context) if has_variables(text) else text for text in self.texts)
            if parse is _wild:  # a substituted value is matched literally, its own * and ? included
                wanted: tuple[Any, ...] = tuple(Wildcard.of(expand_pieces(text, context)) for text in self.texts)
            else:
                wanted = tuple(parse(text) for text in texts)
            return Condition(self.operator, self.key, texts, wanted, self.test, self.negated, self.if_exists,
                             self.quantifier, self.written_key, None, self.parse_kind).holds(context)  # fmt: skip
        values = context.values(self.key)
        if self.test is None:  # Null
            absent = not values
            return any((text.lower() == "true") == absent for text in self.texts)
        if self.quantifier == "all":
            return not values or all(self._one(value) for value in values)
        if self.quantifier == "any":
            return values is not None and any(self._one(value) for value in values)
        if not values:
            return self.if_exists or self.negated
        return any(self._one(value) for value in values)

    def _one(self, value: str) -> bool:
        test = self.test
        assert test is not None
        if self.strict and None in self.wanted:  # fail closed: never "matches nothing" (module docstring)
            wrong = next(text for text, wanted in zip(self.texts, self.wanted, strict=True) if wanted is None)
            raise Undecidable(f"{self.operator} value {wrong[:60]!r} is not {_KINDS[self.parse_kind]}")
        matched = any(test(value, wanted) for wanted in self.wanted)
        return not matched if self.negated else matched


def parse_conditions(block: Any, variables: bool = False) -> tuple[Condition, ...]:
    """The conditions of a ``Condition`` element (an object of operators); raises ValueError naming what is wrong
    (an unknown operator, a key whose values are not strings, numbers or booleans). ``variables``: whether policy
    variables are substituted in the values (a ``2012-10-17`` policy, module docstring)."""
    if not isinstance(block, dict):
        raise ValueError("must be an object of condition operators")
    conditions: list[Condition] = []
    for written, keys in block.items():
        name = written
        quantifier = ""
        if name.startswith("ForAnyValue:"):
            quantifier, name = "any", name[len("ForAnyValue:") :]
        elif name.startswith("ForAllValues:"):
            quantifier, name = "all", name[len("ForAllValues:") :]
        if_exists = name.endswith("IfExists") and name != "IfExists"
        if if_exists:
            name = name[: -len("IfExists")]
        if not isinstance(keys, dict) or not keys:
            raise ValueError(f"{written[:60]!r} must map condition keys to values")
        for key, raw in keys.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"{written[:60]!r}: a condition key must be a non-empty string")
            items = raw if isinstance(raw, list) else [raw]
            if not items:
                raise ValueError(f"{written[:60]!r}: {key[:60]!r} has no values")
            texts = tuple(_scalar(item) for item in items)
            if name == "Null":
                if if_exists or quantifier:
                    raise ValueError(f"invalid condition operator {written[:60]!r}")
                if any(text.lower() not in ("true", "false") for text in texts):
                    raise ValueError("Null takes true or false")
                conditions.append(Condition(written, key.lower(), texts, texts, None, False, False, "", key))
                continue
            entry = OPERATORS.get(name)
            if entry is None:
                raise ValueError(f"invalid condition operator {written[:60]!r}")
            parse, test, negated = entry
            templated = variables and any(has_variables(t) for t in texts)
            conditions.append(
                Condition(written, key.lower(), texts, tuple(parse(t) for t in texts), test, negated, if_exists,
                          quantifier, key, parse if templated else None, _PARSE_KINDS.get(parse, ""))
            )  # fmt: skip
    return tuple(conditions)
