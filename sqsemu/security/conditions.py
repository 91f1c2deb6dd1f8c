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
  numbers and dates are read by IAM's rules, not Python's ("Condition operators": "an integer or decimal value";
  date/time values in "one of the W3C implementations of the ISO 8601 date formats or in epoch (UNIX) time";
  "Supported data types": a date is a "String adhering to the W3C Profile of ISO 8601"): a number is an optional
  ``-``, ASCII digits and optionally ``.`` and digits (so ``NaN``, ``Infinity``, ``1_000``, `` 5 ``, ``+5``,
  ``1e3`` and non-ASCII digits are not numbers), compared exactly (decimal, not binary floating point); a date is
  ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm[:ss[.s...]]`` with a zone designator (``Z`` or
  ``+hh:mm``/``-hh:mm``), or epoch seconds written as a number (so ``2009`` is 2009 seconds after the epoch, not
  the year: sqsemu's choice where the two forms overlap); a JSON number in the policy is read as its decimal
  text;
  ``Bool`` compares ``true``/``false``; ``BinaryEquals`` compares base64 text; ``IpAddress``/``NotIpAddress`` test
  membership of an IPv4 or IPv6 CIDR range (a bare address is a /32 or /128; an IPv4-mapped IPv6 address,
  ``::ffff:a.b.c.d``, is the IPv4 address it maps, RFC 4291 section 2.5.5.2: what a server listening on ``::`` sees
  of an IPv4 client); ``Arn*`` compare the six ``:``
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
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
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
    "unmapped",
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


_NUMBER_RE = re.compile(r"-?[0-9]+(?:\.[0-9]+)?", re.ASCII)
_DATE_RE = re.compile(
    r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2})"
    r"(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?(Z|[+-][0-9]{2}:[0-9]{2}))?)?)?",
    re.ASCII,
)
MAX_NUMBER_CHARS = 100
"""The longest text read as a number or a date (longer: not one, so undecidable): no policy needs more digits."""


def _number(text: str) -> Decimal | None:
    """The number ``text`` writes (an optional ``-``, ASCII digits, optionally ``.`` and digits: module
    docstring), None when it writes none."""
    if len(text) > MAX_NUMBER_CHARS or _NUMBER_RE.fullmatch(text) is None:
        return None
    return Decimal(text)


def _instant(text: str) -> Decimal | None:
    """Epoch seconds of a W3C ISO 8601 date/time (a time needs its zone designator) or of epoch seconds written as
    a number; None when neither (module docstring)."""
    number = _number(text)
    if number is not None:
        return number
    match = _DATE_RE.fullmatch(text) if len(text) <= MAX_NUMBER_CHARS else None
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        moment = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                          int(second or 0), tzinfo=UTC)  # fmt: skip
    except ValueError:  # month 13, February 30, hour 24, second 60...
        return None
    seconds = Decimal(int(moment.timestamp()))
    if fraction:
        seconds += Decimal(f"0.{fraction}")
    if zone and zone != "Z":
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        offset = hours * 3600 + minutes * 60
        seconds -= offset if zone[0] == "+" else -offset
    return seconds


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


def unmapped(address: str) -> str:
    """``address`` (text), or the IPv4 address an IPv4-mapped IPv6 address (``::ffff:a.b.c.d``, RFC 4291 section
    2.5.5.2) maps, as text: the address ``aws:SourceIp`` and ``--forwarded-allow-ips`` compare (a client reaching
    a server listening on ``::`` over IPv4 is seen as such an address)."""
    if ":" not in address:
        return address
    try:
        mapped = ipaddress.IPv6Address(address).ipv4_mapped
    except ValueError:
        return address
    return address if mapped is None else str(mapped)


def _in_network(value: str, network: ipaddress.IPv4Network | ipaddress.IPv6Network | None) -> bool:
    if network is None:
        return False
    try:
        address = ipaddress.ip_address(unmapped(value))
    except ValueError:
        return False
    return address.version == network.version and address in network


def _compare(parse: Callable[[str], Decimal | None], check: Callable[[Decimal, Decimal], bool]) -> tuple[Any, Test]:
    def test(value: str, wanted: Decimal | None) -> bool:
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


def _eq(a: Decimal, b: Decimal) -> bool:
    return a == b


def _lt(a: Decimal, b: Decimal) -> bool:
    return a < b


def _le(a: Decimal, b: Decimal) -> bool:
    return a <= b


def _gt(a: Decimal, b: Decimal) -> bool:
    return a > b


def _ge(a: Decimal, b: Decimal) -> bool:
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
    """A condition value as text: JSON ``true``/``false``; a JSON number as its decimal text (``1e20`` as
    ``100000000000000000000``, a number ``Numeric*`` reads; ``NaN`` and ``Infinity`` never get here:
    :mod:`sqsemu.security.policy` refuses them as not JSON); a string as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and "e" in repr(value):
        return format(Decimal(repr(value)), "f")
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
