"""Amazon SNS subscription filter policies: validated with AWS's messages, compiled once, matched on every publish.

A policy (``FilterPolicy``, a JSON object) is parsed by :func:`parse_filter_policy` for a scope
(``FilterPolicyScope``): ``MessageAttributes`` (the default) compares the message attributes, ``MessageBody`` the
JSON body ("Amazon SNS subscription filter policy scope"). The compiled :class:`FilterPolicy` answers ``None`` for
a message it accepts, or a :class:`Refusal` naming the key that failed and why.

Grammar and evaluation ("Amazon SNS message filtering", "AND/OR logic", "Key matching", "String value matching",
"Numeric value matching", "Amazon SNS example filter policies"): the keys of a policy must all match (AND); each key
holds an array of conditions of which one must match (OR); ``"$or": [object, object, ...]`` (two or more objects)
matches when one of its objects does. A condition is a string, number, ``true``, ``false`` or ``null`` (equality),
or an object with one operator: ``prefix``, ``suffix``, ``equals-ignore-case`` (strings), ``anything-but`` (a
string, a number, a list of strings or of numbers, or ``{"prefix": s}``), ``numeric`` (``["=", n]``, one bound
``["<"|"<="|">"|">=", n]`` or a range ``[">"|">=", low, "<"|"<=", high]``), ``exists`` (``true``/``false``) and
``cidr`` (an IPv4 or IPv6 block). In body scope an object value nests keys; the body is flattened to dotted paths,
so ``{"a": {"b": [...]}}`` and ``{"a.b": [...]}`` are the same key, and a body ``{"a.b": 1}`` is the same as
``{"a": {"b": 1}}`` (as AWS's recordings show); arrays anywhere in the body are searched element by element.

Validation follows the text AWS answers: its compiler is the one of Amazon's open-source Event Ruler
(``JsonRuleCompiler``), whose messages and Jackson locations the recordings carry word for word (see
:mod:`sqsemu.sns.policytext`); the scope, key and complexity limits come from "Filter policy constraints". Behaviour
that no recording or page states is listed in docs/behaviour.md ("decided").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

import orjson

from sqsemu.sns.policyrules import (
    Branch,
    FilterPolicyError,
    FilterPolicyLimit,
    Leaf,
    compile_policy,
    count_combinations,
    ip_of,
    scaled,
)

__all__ = [
    "MAX_COMBINATIONS",
    "MAX_KEYS",
    "MAX_POLICY_BYTES",
    "SCOPES",
    "FilterPolicy",
    "FilterPolicyError",
    "FilterPolicyLimit",
    "Refusal",
    "check_scope",
    "combinations",
    "parse_filter_policy",
]

SCOPES: Final = ("MessageAttributes", "MessageBody")
MAX_POLICY_BYTES: Final = 256 * 1024
"""Largest policy, in bytes of UTF-8 ("Filter policy constraints": 256 KB, both scopes)."""
MAX_KEYS: Final = 5
"""Most keys: every attribute name in attribute scope; the top-level keys in body scope ("Filter policy
constraints")."""
MAX_COMBINATIONS: Final = 150
"""Most value combinations (:func:`combinations`; "Filter policy constraints")."""

_NUMBER_TEXT = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class Refusal:
    """Why a message was not delivered: ``key`` (the attribute name, or the dotted path in the body; ``""`` when
    the body itself is not a JSON object) and ``reason`` (short words)."""

    key: str
    reason: str


class _Number:
    """A ``Number`` message attribute: its text and its value (``None`` when the text is not a number)."""

    __slots__ = ("text", "decimal")

    def __init__(self, text: str) -> None:
        self.text = text
        self.decimal: Decimal | None = Decimal(text) if _NUMBER_TEXT.fullmatch(text) else None


def _decimal(value: object) -> Decimal | None:
    """A number's exact value: an int, a float (its shortest decimal), a ``Number`` attribute; else ``None``."""
    if isinstance(value, _Number):
        return value.decimal
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


# --- matching ------------------------------------------------------------------------------------------------


class _Condition:
    """The array of one key, compiled: a value matches when any of its conditions does."""

    __slots__ = (
        "text",
        "strings",
        "ips",
        "prefixes",
        "suffixes",
        "folded",
        "literals",
        "numbers",
        "decimals",
        "ranges",
        "cidrs",
        "negations",
        "exists",
        "absent",
        "numeric",
    )

    def __init__(self, leaf: Leaf) -> None:
        self.text = leaf.text
        strings: set[str] = set()
        ips: set[tuple[int, int]] = set()
        prefixes: list[str] = []
        suffixes: list[str] = []
        folded: set[str] = set()
        literals: set[str] = set()
        numbers: set[int] = set()
        decimals: set[Decimal] = set()
        ranges: list[tuple[int | None, bool, int | None, bool]] = []
        cidrs: list[tuple[int, int, int]] = []
        negations: list[tuple[str, Any]] = []
        self.exists = self.absent = False
        for spec in leaf.specs:
            kind = spec[0]
            if kind == "string":
                strings.add(spec[1])
                if spec[2] is not None:
                    ips.add(spec[2])
            elif kind == "number":
                if spec[1] is not None:
                    numbers.add(spec[1])
                else:
                    decimals.add(spec[2])
            elif kind == "literal":
                literals.add(spec[1])
            elif kind == "prefix":
                prefixes.append(spec[1])
            elif kind == "suffix":
                suffixes.append(spec[1])
            elif kind == "equals-ignore-case":
                folded.add(spec[1].lower())
            elif kind == "equals":
                numbers.add(spec[1])
            elif kind == "range":
                ranges.append(spec[1:])
            elif kind == "cidr":
                cidrs.append(spec[1:])
            elif kind == "exists":
                if spec[1]:
                    self.exists = True
                else:
                    self.absent = True
            else:
                negations.append((kind, spec[1]))
        self.strings = frozenset(strings)
        self.ips = frozenset(ips)
        self.prefixes = tuple(prefixes)
        self.suffixes = tuple(suffixes)
        self.folded = frozenset(folded)
        self.literals = frozenset(literals)
        self.numbers = frozenset(numbers)
        self.decimals = frozenset(decimals)
        self.ranges = tuple(ranges)
        self.cidrs = tuple(cidrs)
        self.negations = tuple(negations)
        self.numeric = bool(numbers or decimals or ranges)

    def accepts(self, values: list[object], array: bool) -> bool:
        """Whether the key's values (none: the key is absent) satisfy the array. ``array``: the values are the
        elements of a ``String.Array`` attribute, which ``anything-but`` accepts only when it excludes none of them
        ("String value matching"); elsewhere each value is tried on its own."""
        if not values:
            return self.absent
        if self.exists:
            return True
        for value in values:
            if self.hit(value):
                return True
        for negation in self.negations:
            if array:
                if all(_allows(negation, value) for value in values):
                    return True
            elif any(_allows(negation, value) for value in values):
                return True
        return False

    def hit(self, value: object) -> bool:
        if isinstance(value, str):
            text = value
            if text in self.strings:
                return True
            if self.ips or self.cidrs:
                address = ip_of(text)
                if address is not None:
                    if address in self.ips:
                        return True
                    for version, low, high in self.cidrs:
                        if address[0] == version and low <= address[1] <= high:
                            return True
            for prefix in self.prefixes:
                if text.startswith(prefix):
                    return True
            for suffix in self.suffixes:
                if text.endswith(suffix):
                    return True
            return bool(self.folded) and text.lower() in self.folded
        if value is True or value is False or value is None:
            return ("true" if value is True else "false" if value is False else "null") in self.literals
        if not self.numeric:
            return False
        number = _decimal(value)
        if number is None:
            return False
        if self.decimals and number in self.decimals:
            return True
        units = scaled(number)
        if units is None:
            return False
        if units in self.numbers:
            return True
        for bottom, bottom_open, top, top_open in self.ranges:
            if bottom is not None and (units <= bottom if bottom_open else units < bottom):
                continue
            if top is not None and (units >= top if top_open else units > top):
                continue
            return True
        return False


def _allows(negation: tuple[str, Any], value: object) -> bool:
    """Whether an ``anything-but`` lets ``value`` through: it excludes only the values it names (strings it lists,
    numbers equal to one it lists, strings that start with its prefix); every other value passes."""
    kind, operand = negation
    if kind == "not-strings":
        return not (type(value) is str and value in operand)
    if kind == "not-prefix":
        return not (isinstance(value, str) and value.startswith(operand))
    number = _decimal(value)
    if number is None:
        return True
    units = scaled(number)
    return units is None or units not in operand


def _render(values: list[object]) -> str:
    """The values of a key, for a refusal."""

    def one(value: object) -> str:
        if isinstance(value, _Number):
            return value.text
        return orjson.dumps(value).decode()

    if len(values) == 1:
        return f"value {one(values[0])}"
    return f"values [{','.join(one(value) for value in values)}]"


def _array_elements(text: str) -> list[object]:
    """The leaf values of a ``String.Array`` attribute: its elements, nested arrays flattened, objects skipped; a
    value that is not a JSON array has none."""
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        return []
    if type(document) is not list:
        return []
    leaves: list[object] = []
    stack = [document]
    while stack:
        for element in stack.pop():
            if type(element) is list:
                stack.append(element)
            elif type(element) is not dict:
                leaves.append(element)
    return leaves


def _attribute_values(attribute: tuple[str, str] | None) -> tuple[list[object], bool]:
    """A message attribute's values and whether it is a ``String.Array``. The type is what precedes the first
    ``.`` (``String.foo`` is a String, ``Number.float`` a Number), except ``String.Array``; ``Binary`` attributes
    are ignored ("Filter policy constraints"): they have no value, as if absent."""
    if attribute is None:
        return [], False
    data_type, value = attribute
    if data_type == "String.Array":
        return _array_elements(value), True
    base = data_type.partition(".")[0]
    if base == "String":
        return [value], False
    if base == "Number":
        return [_Number(value)], False
    return [], False


class FilterPolicy:
    """A validated, compiled policy. ``scope``: ``MessageAttributes`` or ``MessageBody``; ``text``: the policy as
    given; ``source``: as AWS re-serializes it; ``combinations`` and ``keys``: the counts AWS limits. An empty
    policy (``{}``) accepts every message ("Removing a subscription filter policy in Amazon SNS")."""

    __slots__ = ("scope", "text", "source", "combinations", "keys", "_branches", "_names", "_prefixes")

    def __init__(self, scope: str, text: str, source: str, branches: list[Branch]) -> None:
        self.scope = scope
        self.text = text
        self.source = source
        self.combinations = count_combinations(branches)
        self.keys = len({leaf.nesting[0] for branch in branches for leaf in branch.values()})
        conditions: dict[int, _Condition] = {}  # a key's array is shared by the $or branches it belongs to
        for branch in branches:
            for leaf in branch.values():
                if id(leaf) not in conditions:
                    conditions[id(leaf)] = _Condition(leaf)
        self._branches = tuple(
            tuple((name, conditions[id(leaf)]) for name, leaf in branch.items()) for branch in branches
        )
        self._names = frozenset(name for branch in branches for name in branch)
        self._prefixes = frozenset(name[:cut] for name in self._names for cut, char in enumerate(name) if char == ".")

    def __repr__(self) -> str:
        return f"FilterPolicy({self.scope}, {self.source})"

    def match_attributes(self, attributes: Mapping[str, tuple[str, str]]) -> Refusal | None:
        """``None`` when the message attributes (name -> ``(DataType, StringValue)``) satisfy the policy, else the
        :class:`Refusal` of the first ``$or`` branch. Cost: the keys the policy names, never the whole map."""
        if not self._branches:
            return None
        cache: dict[str, tuple[list[object], bool]] = {}
        first: Refusal | None = None
        for branch in self._branches:
            failed = None
            for name, condition in branch:
                found = cache.get(name)
                if found is None:
                    found = cache[name] = _attribute_values(attributes.get(name))
                if not condition.accepts(*found):
                    failed = name, condition, found[0]
                    break
            if failed is None:
                return None
            if first is None:
                name, condition, values = failed
                if values:
                    reason = f"{_render(values)} matches none of {condition.text}"
                elif name in attributes and attributes[name][0].partition(".")[0] == "Binary":
                    reason = "Binary attribute (never compared)"
                else:
                    reason = "attribute missing"
                first = Refusal(name, reason)
        return first

    def match_body(self, body: str) -> Refusal | None:
        """``None`` when the JSON object ``body`` satisfies the policy, else the :class:`Refusal` of the first
        ``$or`` branch. A body that is not a JSON object matches no policy but ``{}``. Cost: the body is parsed
        once (orjson) and walked only down the paths the policy names."""
        if not self._branches:
            return None
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            return Refusal("", "the message body is not JSON")
        if type(document) is not dict:
            return Refusal("", "the message body is not a JSON object")
        found = self._collect(document)
        first: Refusal | None = None
        for branch in self._branches:
            for name, condition in branch:
                values = found.get(name, [])
                if not condition.accepts(values, False):
                    if first is None:
                        reason = f"{_render(values)} matches none of {condition.text}" if values else "key missing"
                        first = Refusal(name, reason)
                    break
            else:
                return None
        return first

    def _collect(self, document: dict[str, Any]) -> dict[str, list[object]]:
        """The leaf values of the body at each dotted path the policy names (arrays searched element by element;
        objects are not leaves)."""
        names, prefixes = self._names, self._prefixes
        found: dict[str, list[object]] = {}
        stack: list[tuple[Any, str]] = [(document, "")]
        while stack:
            node, path = stack.pop()
            if type(node) is dict:
                items: Any = ((f"{path}.{key}" if path else key, value) for key, value in node.items())
            else:
                items = ((path, value) for value in node)
            for child_path, value in items:
                kind = type(value)
                if kind is dict:
                    if child_path in prefixes:
                        stack.append((value, child_path))
                elif kind is list:
                    if child_path in names or child_path in prefixes:
                        stack.append((value, child_path))
                elif child_path in names:
                    found.setdefault(child_path, []).append(value)
        return found


def _parse_json(text: str) -> Any:
    """The policy's JSON, or :class:`FilterPolicyError` ``failed to parse JSON.`` (recorded prefix of AWS's
    answer; AWS follows it with the Java parser's own words, not reproduced)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise FilterPolicyError("failed to parse JSON.") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_filter_policy(text: str, scope: str = "MessageAttributes") -> FilterPolicy:
    """Validate and compile a ``FilterPolicy`` for a ``FilterPolicyScope``. Checks, in order: size (256 KB of
    UTF-8), JSON, the policy's grammar (Event Ruler's messages with Jackson's location), nesting (refused in
    attribute scope), keys (5), combinations (150). ``{}`` is a policy that accepts everything. Raises
    :class:`FilterPolicyError` (:class:`FilterPolicyLimit` for the limits); ``ValueError`` for a scope other than
    the two (the caller answers that with :func:`check_scope` first)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown FilterPolicyScope {scope!r}")
    if len(text) * 4 > MAX_POLICY_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_POLICY_BYTES:
        raise FilterPolicyLimit("Filter policy is too long")
    document = _parse_json(text)
    if document == {}:
        return FilterPolicy(scope, text, "{}", [])
    source, branches = compile_policy(document)
    if scope == "MessageAttributes" and any(len(leaf.nesting) > 1 for branch in branches for leaf in branch.values()):
        raise FilterPolicyError("Filter policy scope MessageAttributes does not support nested filter policy", None)
    policy = FilterPolicy(scope, text, source, branches)
    if policy.keys > MAX_KEYS:
        raise FilterPolicyLimit(f"Filter policy can not have more than {MAX_KEYS} keys")
    if policy.combinations > MAX_COMBINATIONS:
        raise FilterPolicyLimit("Filter policy is too complex")
    return policy


def combinations(policy: str | Mapping[str, Any]) -> int:
    """The value combinations of a policy (its JSON text, or the parsed object), as AWS counts them against its
    limit of 150 (:func:`sqsemu.sns.policyrules.count_combinations`); 0 for ``{}``. Raises
    :class:`FilterPolicyError` for a policy that does not compile."""
    document = _parse_json(policy) if isinstance(policy, str) else dict(policy)
    if document == {}:
        return 0
    return count_combinations(compile_policy(document)[1])


def check_scope(value: str) -> str:
    """A ``FilterPolicyScope`` value, or :class:`FilterPolicyError` with AWS's recorded message (parameter
    ``FilterPolicyScope``: ``Invalid value [X]. Please use either MessageBody or MessageAttributes``)."""
    if value not in SCOPES:
        raise FilterPolicyError(
            f"Invalid value [{value}]. Please use either MessageBody or MessageAttributes", "FilterPolicyScope"
        )
    return value
