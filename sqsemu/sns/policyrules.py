"""The grammar of SNS filter policies: AWS's compiler, its refusals, and the compiled form of a policy.

Amazon SNS compiles a policy with the compiler of Amazon's open-source Event Ruler (``JsonRuleCompiler``, the
version without ``anything-but`` suffixes): every refusal AWS answers that was recorded carries one of its messages
word for word, at the column Jackson's parser had reached (:mod:`sqsemu.sns.policytext`). :func:`compile_policy`
walks the compact tokens as that compiler does (iteratively: any depth) and returns the ``$or`` branches, each a map
of dotted key (``a.b.c``: nesting and dots in names are the same) to a :class:`Leaf` holding the key's conditions.
Where that compiler raises a plain ``IllegalArgumentException`` (a malformed ``cidr``, a single ``anything-but``
number out of range), the message has no location, as AWS's would not.

Numbers: AWS compares them within [-10^9, 10^9] to five decimal places ("Filter policy constraints"); a number a
policy compares (``numeric``, ``anything-but``) outside that range is refused with Event Ruler's message, the range
being SNS's; a literal number outside it is kept and compared as written (Event Ruler's rule).
"""

from __future__ import annotations

import ipaddress
import re
from decimal import ROUND_FLOOR, Context, Decimal
from typing import Any, Final

from sqsemu.sns.policytext import (
    END_ARRAY,
    END_OBJECT,
    FALSE,
    FIELD_NAME,
    NULL,
    NUMBER,
    START_ARRAY,
    START_OBJECT,
    STRING,
    TRUE,
    Token,
    compact,
    location,
)

NUMBER_LIMIT: Final = Decimal(10**9)
"""Numbers compare within [-10^9, 10^9], to five decimal places ("Filter policy constraints")."""

_SCALE = Decimal(100_000)
_IPV4 = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")
_IPV6 = re.compile(r"[0-9a-fA-F:]*:[0-9a-fA-F:]*")
_CONTEXT = Context(prec=2000)
_OPERATORS_IN_OR: Final = frozenset(
    (
        "exactly",
        "equals-ignore-case",
        "prefix",
        "suffix",
        "anything-but",
        "exists",
        "wildcard",
        "numeric",
        "cidr",
        "=",
        "<",
        "<=",
        ">",
        ">=",
        "regex",
        "not-wildcard",
        "not-equals-ignore-case",
        "date-after",
        "date-on-or-after",
        "date-before",
        "date-on-or-before",
        "in-date-range",
        "ip-address-in-range",
        "ip-address-not-in-range",
    )
)
"""Field names Event Ruler reserves inside ``$or`` (``Constants.RESERVED_FIELD_NAMES_IN_OR_RELATIONSHIP``)."""
_OUT_OF_RANGE = "Value must be between -1.0E9 and 1.0E9, inclusive"


class FilterPolicyError(Exception):
    """A policy AWS refuses: HTTP 400, code ``InvalidParameter`` (Sender). ``message`` is the text AWS puts after
    ``Invalid parameter: FilterPolicy: `` (``parameter`` is ``FilterPolicy``), or after ``Invalid parameter: ``
    alone when ``parameter`` is ``None`` (the nested-policy refusal of attribute scope, so recorded).
    :meth:`aws_message` gives the whole message for SetSubscriptionAttributes or Subscribe."""

    code: Final = "InvalidParameter"
    status: Final = 400

    def __init__(self, message: str, parameter: str | None = "FilterPolicy") -> None:
        super().__init__(message)
        self.message = message
        self.parameter = parameter

    def aws_message(self, *, subscribe: bool = False) -> str:
        """The message AWS answers: ``Invalid parameter: FilterPolicy: <message>`` from SetSubscriptionAttributes,
        ``Invalid parameter: Attributes Reason: FilterPolicy: <message>`` from Subscribe (both recorded)."""
        head = "Invalid parameter: Attributes Reason: " if subscribe else "Invalid parameter: "
        return head + (f"{self.parameter}: {self.message}" if self.parameter else self.message)


class FilterPolicyLimit(FilterPolicyError):
    """A policy over a limit (keys, combinations, size): the same answer as :class:`FilterPolicyError` (AWS
    answers ``InvalidParameter`` for these too: "Filter policy can not have more than 5 keys", "Filter policy is
    too complex", recorded)."""


def scaled(number: Decimal) -> int | None:
    """The comparable form of a number: hundred-thousandths, rounded down; ``None`` outside [-10^9, 10^9]."""
    if not number.is_finite() or abs(number) > NUMBER_LIMIT:
        return None
    return int(_CONTEXT.multiply(number, _SCALE).to_integral_value(rounding=ROUND_FLOOR))


def ip_of(text: str) -> tuple[int, int] | None:
    """``(version, integer)`` of an IPv4 or IPv6 address literal, as Event Ruler recognizes one (four dotted
    numbers, or hex digits and colons only); else ``None``."""
    if _IPV4.fullmatch(text) is None and _IPV6.fullmatch(text) is None:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return address.version, int(address)


def cidr_block(text: str) -> tuple[int, int, int]:
    """``(version, low, high)`` of a ``cidr`` operand, as Event Ruler reads it (``CIDR.cidr``): the address given is
    the low end, the high end sets every bit past the mask; IPv4 masks 0-31, IPv6 0-127. Raises ``ValueError``
    with Event Ruler's message."""
    parts = text.split("/")
    while len(parts) > 1 and parts[-1] == "":  # Java's String.split drops trailing empty strings
        parts.pop()
    if len(parts) != 2:
        raise ValueError("Malformed CIDR, one '/' required")
    try:
        bits = int(parts[1])
    except ValueError:
        raise ValueError("Malformed CIDR, mask bits must be an integer") from None
    if bits < 0:
        raise ValueError("Malformed CIDR, mask bits must not be negative")
    address = ip_of(parts[0])
    if address is None:
        looks_like_one = _IPV4.fullmatch(parts[0]) or _IPV6.fullmatch(parts[0])
        raise ValueError(f"{'Invalid' if looks_like_one else 'Nonstandard'} IP address: {parts[0]}")
    version, low = address
    width = 32 if version == 4 else 128
    if bits >= width:
        raise ValueError(f"IPv{version} mask bits must be < {width}")
    return version, low, low | ((1 << (width - bits)) - 1)


class Leaf:
    """One policy key after compiling: its nesting (the object keys that lead to it, its own last), its conditions
    (spec tuples) and the JSON text of its array (for refusal messages)."""

    __slots__ = ("nesting", "specs", "text")

    def __init__(self, nesting: tuple[str, ...], specs: list[tuple[Any, ...]], text: str) -> None:
        self.nesting = nesting
        self.specs = specs
        self.text = text


Branch = dict[str, Leaf]


class _Compiler:
    """Event Ruler's ``JsonRuleCompiler`` over the compact tokens (iteratively: any depth), raising its messages at
    Jackson's columns. The result is the list of ``$or`` branches, each a map of dotted key to :class:`Leaf`."""

    def __init__(self, source: str, tokens: list[Token]) -> None:
        self.source = source
        self.tokens = tokens
        self.index = -1
        self.column = 1

    def next(self) -> Token:
        self.index += 1
        token = self.tokens[self.index]
        self.column = token.after_next
        return token

    def text(self, token: Token) -> str:
        self.column = token.after_text
        return token.text

    def barf(self, message: str) -> FilterPolicyError:
        return FilterPolicyError(message + location(self.source, self.column))

    def compile(self) -> list[Branch]:
        if self.next().kind != START_OBJECT:
            raise self.barf("Filter is not an object")
        root: list[Branch] = []
        path: list[str] = []
        # frames: ["object", rules, in_or, fields_present, pushed_a_name] or ["or", target, snapshot, count]
        stack: list[list[Any]] = [["object", root, False, False, False]]
        while stack:
            frame = stack[-1]
            token = self.next()
            if frame[0] == "or":
                if token.kind == END_ARRAY:
                    if frame[3] < 2:
                        raise self.barf("There must have at least 2 Objects in $or relationship.")
                    stack.pop()
                    continue
                frame[3] += 1
                if token.kind != START_OBJECT:
                    raise self.barf("Only JSON object is allowed in array of $or relationship.")
                branch_rules = [dict(rule) for rule in frame[2]] or [{}]
                stack.append(["object", branch_rules, True, False, False])
                continue
            rules, in_or = frame[1], frame[2]
            if token.kind == END_OBJECT:
                if not frame[3]:
                    raise self.barf("Empty objects are not allowed")
                stack.pop()
                if frame[4]:
                    path.pop()
                if stack and stack[-1][0] == "or":
                    stack[-1][1].extend(rules)
                continue
            frame[3] = True
            name = token.text
            if name == "$or":
                snapshot = [dict(rule) for rule in rules]
                rules.clear()
                if self.next().kind != START_ARRAY:
                    raise self.barf("It must be an Array followed with $or.")
                stack.append(["or", rules, snapshot, 0])
                continue
            if in_or and name in _OPERATORS_IN_OR:
                raise self.barf(f"{name} is Ruler reserved fieldName which cannot be used inside $or.")
            value = self.next()
            if value.kind == START_OBJECT:
                path.append(name)
                stack.append(["object", rules, in_or, False, True])
            elif value.kind == START_ARRAY:
                leaf = self.value_list((*path, name), value)
                if not rules:
                    rules.append({})
                dotted = ".".join(leaf.nesting)
                for rule in rules:
                    rule[dotted] = leaf
            else:
                raise self.barf(f'"{name}" must be an object or an array')
        return root

    def value_list(self, nesting: tuple[str, ...], opening: Token) -> Leaf:
        """``writeRules``: the array of one key."""
        specs: list[tuple[Any, ...]] = []
        while True:
            token = self.next()
            kind = token.kind
            if kind == END_ARRAY:
                break
            if kind == START_OBJECT:
                specs.append(self.match_expression())
            elif kind == STRING:
                text = self.text(token)
                specs.append(("string", text, ip_of(text)))
            elif kind == NUMBER:
                number = Decimal(token.text)
                specs.append(("number", scaled(number), number))
            elif kind == TRUE or kind == FALSE or kind == NULL:
                specs.append(("literal", token.text))
            else:
                raise self.barf("Match value must be String, number, true, false, or null")
        if not specs:
            raise self.barf("Empty arrays are not allowed")
        return Leaf(nesting, specs, self.source[opening.start : token.stop])

    def string_operand(self, operator: str) -> str:
        token = self.next()
        if token.kind != STRING:
            raise self.barf(f"{operator} match pattern must be a string")
        return self.text(token)

    def close(self, message: str = "Only one key allowed in match expression") -> None:
        if self.next().kind != END_OBJECT:
            raise self.barf(message)

    def match_expression(self) -> tuple[Any, ...]:
        """``processMatchExpression``: one ``{operator: operand}`` object of a key's array."""
        token = self.next()
        if token.kind != FIELD_NAME:
            raise self.barf("Match expression name not found")
        operator = token.text
        spec: tuple[Any, ...]
        if operator in ("prefix", "suffix", "equals-ignore-case"):
            spec = (operator, self.string_operand(operator))
            self.close()
        elif operator == "numeric":
            if self.next().kind != START_ARRAY:
                raise self.barf("Value of numeric must be an array.")
            spec = self.numeric()
            self.close("Too many elements in numeric expression")
        elif operator == "anything-but":
            spec = self.anything_but()
        elif operator == "exists":
            value = self.next()
            if value.kind != TRUE and value.kind != FALSE:
                raise self.barf("exists match pattern must be either true or false.")
            spec = ("exists", value.kind == TRUE)
            self.close()
        elif operator == "cidr":
            operand = self.string_operand("prefix")  # sic: Event Ruler's message for a cidr operand
            try:
                spec = ("cidr", *cidr_block(operand))
            except ValueError as error:
                raise FilterPolicyError(str(error)) from None
            self.close()
        else:
            raise self.barf(f"Unrecognized match type {operator}")
        return spec

    def anything_but(self) -> tuple[Any, ...]:
        value = self.next()
        if value.kind == START_OBJECT:
            token = self.next()
            if token.kind != FIELD_NAME:
                raise self.barf("Anything-But expression name not found")
            if token.text != "prefix":
                raise self.barf(f"Unsupported anything-but pattern: {token.text}")
            prefix = self.string_operand("prefix")
            if not prefix:
                raise self.barf("Null prefix not allowed")
            self.close()
            self.close()
            return ("not-prefix", prefix)
        if value.kind == START_ARRAY:
            strings: set[str] = set()
            numbers: set[int] = set()
            while True:
                token = self.next()
                if token.kind == END_ARRAY:
                    break
                if token.kind == STRING:
                    strings.add(self.text(token))
                elif token.kind == NUMBER:
                    units = scaled(Decimal(token.text))
                    if units is None:
                        raise self.barf(_OUT_OF_RANGE)
                    numbers.add(units)
                else:
                    # Event Ruler re-raises this inside its own catch: the location appears twice.
                    inner = self.barf("Inside anything but list, start|null|boolean is not supported.")
                    raise self.barf(inner.message)
            if bool(strings) == bool(numbers):
                raise self.barf(
                    "Inside anything but list, either all values are number or string, mixed type is not supported"
                )
            spec: tuple[Any, ...] = (
                ("not-strings", frozenset(strings)) if strings else ("not-numbers", frozenset(numbers))
            )
        elif value.kind == STRING:
            spec = ("not-strings", frozenset((self.text(value),)))
        elif value.kind == NUMBER:
            units = scaled(Decimal(value.text))
            if units is None:
                raise FilterPolicyError(_OUT_OF_RANGE)
            spec = ("not-numbers", frozenset((units,)))
        else:
            raise self.barf("Value of anything-but must be an array or single string/number value.")
        self.close("Too many elements in numeric expression")
        return spec

    def numeric(self) -> tuple[Any, ...]:
        """``processNumericMatchExpression``: ``("range", low, low_open, high, high_open)`` in scaled units
        (``None`` for an open end), or ``("equals", n)``."""
        token = self.next()
        if token.kind != STRING:
            raise self.barf(f"Invalid member in numeric match: {self.text(token)}")
        operator = self.text(token)
        value = self.next()
        if operator not in ("=", ">=", ">", "<=", "<"):
            raise self.barf(f"Unrecognized numeric range operator: {operator}")
        if value.kind != NUMBER:
            raise self.barf(f"Value of {'equals' if operator == '=' else operator} must be numeric")
        first = Decimal(value.text)
        if operator in ("=", "<=", "<"):
            self.close_numeric()
            bound = self.comparable(first)
            if operator == "=":
                return ("equals", bound)
            return ("range", None, False, bound, operator == "<")
        token = self.next()
        if token.kind == END_ARRAY:
            return ("range", self.comparable(first), operator == ">", None, False)
        if token.kind != STRING:
            raise self.barf(f"Bad value in numeric range: {self.text(token)}")
        upper = self.text(token)
        if upper not in ("<", "<="):
            raise self.barf(f"Bad numeric range operator: {upper}")
        value = self.next()
        if value.kind != NUMBER:
            raise self.barf(f"Value of {upper} must be numeric")
        second = Decimal(value.text)
        if self.next().kind != END_ARRAY:
            raise self.barf("Too many terms in numeric range expression")
        low, high = self.comparable(first), self.comparable(second)
        if low >= high:
            raise self.barf("Bottom must be less than top")
        return ("range", low, operator == ">", high, upper == "<")

    def close_numeric(self) -> None:
        if self.next().kind != END_ARRAY:
            raise self.barf("Too many elements in numeric expression")

    def comparable(self, number: Decimal) -> int:
        """A number a ``numeric`` condition compares, or Event Ruler's refusal of one out of range."""
        units = scaled(number)
        if units is None:
            raise self.barf(_OUT_OF_RANGE)
        return units


def count_combinations(branches: list[Branch]) -> int:
    """The sum, over the ``$or`` branches, of the product over each key of its nesting depth times the number of
    values in its array ("Filter policy constraints": ``3 x 1 x 2 = 6``; nested ``3 x 4 x 2 x 3 = 72``)."""
    total = 0
    for branch in branches:
        product = 1
        for leaf in branch.values():
            product *= len(leaf.nesting) * len(leaf.specs)
        total += product if branch else 0
    return total


def compile_policy(document: Any) -> tuple[str, list[Branch]]:
    """A parsed policy (not ``{}``) compiled: the compact text AWS quotes, and its ``$or`` branches. Raises
    :class:`FilterPolicyError` with Event Ruler's message."""
    source, tokens = compact(document)
    return source, _Compiler(source, tokens).compile()
