"""The grammar of an IAM policy document, parsed once into matchers: identity-based policies (``[[credentials]]``
``policies``) and a queue's ``Policy`` attribute (resource-based).

Rules, from the IAM User Guide pages "Grammar of the IAM JSON policy language" and "IAM JSON policy element
reference" (and the SQS Developer Guide's "Amazon SQS Access Policy Language" pages for queue policies):

- the document is a JSON object whose keys are ``Version`` (``2012-10-17`` or ``2008-10-17``), ``Id`` (a string)
  and ``Statement`` (required: one statement object or a non-empty array of them); any other key is refused;
- a statement's keys are ``Sid`` (a string), ``Effect`` (``Allow`` or ``Deny``, required), exactly one of
  ``Action``/``NotAction``, at most one of ``Resource``/``NotResource``, ``Principal``/``NotPrincipal`` (exactly one
  in a resource-based policy, none in an identity-based one: "IAM JSON policy elements: Principal") and
  ``Condition``; an identity-based statement needs ``Resource`` or ``NotResource``; a queue policy's statement
  without one applies to the queue it is attached to (SQS's own generated policies always name it);
- an action is ``*`` or ``<service>:<action>``, matched case-insensitively with ``*`` and ``?`` wildcards
  ("IAM JSON policy elements: Action"); a resource is ``*`` or an ARN, matched case-sensitively with the same
  wildcards ("IAM JSON policy elements: Resource"). An identity-based policy's other resource values are refused;
  a queue policy's are kept, as SQS keeps them (LocalStack's AWS-validated ``test_set_queue_policy``: SQS stored a
  policy whose ``Resource`` is ``"'$sqs_queue_arn'"`` and gave it back; docs/behaviour.md 11.4), and decided
  fail closed: such a value matches no queue, and a statement it cannot decide without one applies if a ``Deny``
  and never if an ``Allow`` (:class:`~sqsemu.security.conditions.Undecidable`, as an unsubstituted variable);
- a principal is ``"*"`` or an object whose keys are ``AWS``, ``Service``, ``Federated`` or ``CanonicalUser``, each
  a string or an array of strings; an ``AWS`` value is ``*``, a 12-digit account id, or an IAM ARN
  (``arn:aws:iam::<account>:root|user/...|role/...``, ``arn:aws:sts::<account>:assumed-role/...``);
- ``Condition`` maps operators (:mod:`sqsemu.security.conditions`) to objects of condition keys and values
  (a string, number or boolean, or an array of them).

A document that breaks one is refused with :class:`PolicyError` naming the rule. :func:`parse_policy` caches parsed
documents by their text, so a queue's policy is parsed once, whatever the number of calls; the cache is bounded in
bytes (:data:`PARSED_BOUND`), since the texts are the clients'.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.security.conditions import (
    Condition,
    ContextLookup,
    Undecidable,
    expand_pieces,
    has_variables,
    parse_conditions,
)
from sqsemu.security.wildcard import Wildcard

__all__ = [
    "VERSIONS",
    "Pattern",
    "Policy",
    "PARSED_BOUND",
    "PolicyError",
    "PrincipalSet",
    "Statement",
    "parse_policy",
]

VERSIONS = ("2012-10-17", "2008-10-17")
"""The policy language versions AWS accepts ("IAM JSON policy elements: Version")."""
MAX_CACHED = 1024
"""Parsed documents kept (by text): far more than the distinct policies of a test run."""
PARSED_BYTES_PER_TEXT_BYTE = 10
"""What a parsed document holds, per byte of its text, as :attr:`Policy.size` estimates it (measured: 8 to 9 for
documents of 1 to 100 statements, about 1 for one made of a single long string)."""
PARSED_BOUND = CacheBound(MAX_CACHED, 16 * 1024 * 1024, 1024 * 1024)
"""The parse cache: at most 1,024 documents and 16 MiB (by :attr:`Policy.size`, text included), none over 1 MiB (a
text of about 100 KiB); a larger document is parsed again at each use rather than held."""
_parsed: dict[tuple[str, bool], Policy] = {}

_TOP_KEYS = frozenset(("Version", "Id", "Statement"))
_STATEMENT_KEYS = frozenset(
    ("Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource", "Condition")
)
_PRINCIPAL_KEYS = frozenset(("AWS", "Service", "Federated", "CanonicalUser"))
_ACCOUNT_RE = re.compile(r"[0-9]{12}")
_IAM_ARN_RE = re.compile(r"arn:aws[a-z-]*:(iam|sts)::([0-9]{12}|\*):(.+)")
_ACTION_RE = re.compile(r"[A-Za-z0-9*?-]+:[A-Za-z0-9*?]+|\*")


class PolicyError(ValueError):
    """A policy document that breaks the grammar; ``str()`` says which rule (and where)."""


class Pattern:
    """A set of ``*``/``?`` wildcard patterns matched as a whole ("IAM JSON policy elements: Action"/"Resource"):
    exact strings are a set lookup, wildcard ones :class:`~sqsemu.security.wildcard.Wildcard` (no backtracking,
    whatever the pattern). ``ignore_case`` for actions."""

    __slots__ = ("any", "exact", "wild", "ignore_case", "texts", "templates", "unusable")

    def __init__(
        self, texts: tuple[str, ...], ignore_case: bool, variables: bool = False, unusable: tuple[str, ...] = ()
    ) -> None:
        self.texts = texts
        self.ignore_case = ignore_case
        self.any = "*" in texts
        self.unusable = unusable
        """Values kept but matching nothing (a queue policy's ``Resource`` that is not an ARN or ``*``): when no
        other pattern matches, :meth:`matches_in` cannot decide (module docstring)."""
        self.templates = tuple(t for t in texts if has_variables(t) and t not in unusable) if variables else ()
        """The patterns holding policy variables (``Resource`` of a ``2012-10-17`` policy), matched per request by
        :meth:`matches_in` ("IAM policy elements: Variables and tags")."""
        exact: set[str] = set()
        wild: list[Wildcard] = []
        for text in texts:
            if text in self.templates or text in unusable:
                continue
            folded = text.lower() if ignore_case else text
            if "*" in text or "?" in text:
                wild.append(Wildcard(folded))
            else:
                exact.add(folded)
        self.exact = frozenset(exact)
        self.wild = tuple(wild)

    def matches(self, value: str) -> bool:
        """Whether ``value`` matches one of the patterns."""
        if self.any:
            return True
        folded = value.lower() if self.ignore_case else value
        if folded in self.exact:
            return True
        return any(pattern.matches(folded) for pattern in self.wild)

    def matches_in(self, value: str, context: ContextLookup) -> bool:
        """Whether ``value`` matches one of the patterns, those with policy variables substituted from the request
        ``context`` (a substituted value matched literally); raises
        :class:`~sqsemu.security.conditions.Undecidable` when one cannot be, or the element holds a value that is
        not a resource (:attr:`unusable`), and no other pattern matches."""
        if self.matches(value):
            return True
        if not self.templates:
            if self.unusable:
                raise Undecidable(f"{self.unusable[0][:60]!r} is not a resource (an ARN or *): it matches no queue")
            return False
        folded = value.lower() if self.ignore_case else value
        undecidable: Undecidable | None = None
        for template in self.templates:
            try:
                pieces = expand_pieces(template, context)
            except Undecidable as exc:
                undecidable = exc
                continue
            if self.ignore_case:
                pieces = [(text.lower(), literal) for text, literal in pieces]
            if Wildcard.of(pieces).matches(folded):
                return True
        if undecidable is not None:
            raise undecidable
        if self.unusable:
            raise Undecidable(f"{self.unusable[0][:60]!r} is not a resource (an ARN or *): it matches no queue")
        return False


class PrincipalSet:
    """The principals a ``Principal``/``NotPrincipal`` element names ("IAM JSON policy elements: Principal").

    ``everyone``: ``"*"`` or ``{"AWS": "*"}``; ``accounts``: account ids named as ``"111122223333"`` or
    ``arn:aws:iam::111122223333:root`` (an *account principal*: the account's administrator delegates to its users
    and roles by identity policies); ``arns``: user, role and assumed-role ARNs (wildcards allowed only as ``*`` in
    the whole value, as AWS refuses others); ``services``: service principals (``sns.amazonaws.com``)."""

    __slots__ = ("everyone", "accounts", "arns", "services")

    def __init__(self, everyone: bool, accounts: frozenset[str], arns: frozenset[str], services: frozenset[str]):
        self.everyone = everyone
        self.accounts = accounts
        self.arns = arns
        self.services = services

    def match(self, principal_arn: str, account: str, service: str | None) -> str | None:
        """How the caller is named: ``"everyone"``, ``"arn"`` (by its own ARN), ``"account"`` (by its account),
        ``"service"``, or None when not named."""
        if service is not None:
            return "service" if service in self.services or self.everyone else None
        if self.everyone:
            return "everyone"
        if principal_arn in self.arns:
            return "arn"
        if account in self.accounts:
            return "account"
        return None


@dataclass(frozen=True, slots=True)
class Statement:
    """One parsed statement. ``index`` is its position (0-based); ``label`` its ``Sid`` or ``#<index+1>``."""

    index: int
    sid: str | None
    allow: bool
    actions: Pattern
    not_action: bool
    resources: Pattern | None
    not_resource: bool
    principals: PrincipalSet | None
    not_principal: bool
    conditions: tuple[Condition, ...]

    @property
    def label(self) -> str:
        """The statement's ``Sid``, or ``#n`` (1-based) when it has none."""
        return self.sid if self.sid else f"#{self.index + 1}"


@dataclass(frozen=True, slots=True, eq=False)
class Policy:
    """A parsed policy document: its ``Version`` (``2008-10-17`` when absent), ``Id`` and statements. Compared and
    hashed by identity (one object per document text, :func:`parse_policy`), so it keys caches cheaply. ``size``:
    the bytes it holds, estimated from its text (:data:`PARSED_BYTES_PER_TEXT_BYTE`), for the caches that keep it."""

    version: str
    id: str | None
    statements: tuple[Statement, ...]
    resource_based: bool
    size: int = 0


def _strings(value: Any, where: str) -> tuple[str, ...]:
    """A string or a non-empty array of strings, as a tuple."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise PolicyError(f"{where} must be a string or a non-empty array of strings.")


def _actions(value: Any, where: str) -> Pattern:
    texts = _strings(value, where)
    for text in texts:
        if not _ACTION_RE.fullmatch(text):
            raise PolicyError(f"{where}: {text[:100]!r} is not an action (<service>:<action>, wildcards * and ?).")
    return Pattern(texts, ignore_case=True)


def _is_resource(text: str) -> bool:
    """Whether ``text`` is ``*`` or an ARN (``arn:`` and six ``:`` separated parts)."""
    return text == "*" or (text.startswith("arn:") and text.count(":") >= 5)


def _resources(value: Any, where: str, variables: bool = False, resource_based: bool = False) -> Pattern:
    """A ``Resource``/``NotResource`` element. An identity-based policy's value that is not ``*`` or an ARN is
    refused ("IAM JSON policy elements: Resource"); a queue policy's is kept, matching no queue (module docstring:
    SQS stores such a policy)."""
    texts = _strings(value, where)
    unusable = tuple(text for text in texts if not _is_resource(text))
    if unusable and not resource_based:
        text = unusable[0]
        if not text.startswith("arn:"):
            raise PolicyError(f"{where}: {text[:100]!r} is not a resource (an ARN or *).")
        raise PolicyError(f"{where}: {text[:100]!r} is not a valid ARN (arn:partition:service:region:account:...).")
    return Pattern(texts, ignore_case=False, variables=variables, unusable=unusable)


def _principals(value: Any, where: str) -> PrincipalSet:
    if value == "*":
        return PrincipalSet(True, frozenset(), frozenset(), frozenset())
    if not isinstance(value, dict) or not value:
        raise PolicyError(f'{where} must be "*" or an object with AWS, Service, Federated or CanonicalUser.')
    unknown = sorted(set(value) - _PRINCIPAL_KEYS)
    if unknown:
        raise PolicyError(f"{where}: unknown principal type {unknown[0][:50]!r}.")
    everyone = False
    accounts: set[str] = set()
    arns: set[str] = set()
    services: set[str] = set()
    for text in _strings(value.get("AWS", []) or [], f"{where}.AWS") if "AWS" in value else ():
        if text == "*":
            everyone = True
        elif _ACCOUNT_RE.fullmatch(text):
            accounts.add(text)
        else:
            match = _IAM_ARN_RE.fullmatch(text)
            if match is None or match.group(2) == "*" or "*" in match.group(3):
                raise PolicyError(f"{where}: invalid principal {text[:100]!r}.")
            if match.group(1) == "iam" and match.group(3) == "root":
                accounts.add(match.group(2))
            else:
                arns.add(text)
    if "Service" in value:
        services.update(_strings(value["Service"], f"{where}.Service"))
    for other in ("Federated", "CanonicalUser"):
        if other in value:
            _strings(value[other], f"{where}.{other}")  # valid, but no local caller is one
    return PrincipalSet(everyone, frozenset(accounts), frozenset(arns), frozenset(services))


def _statement(index: int, raw: Any, resource_based: bool, variables: bool = False) -> Statement:
    where = f"Statement #{index + 1}"
    if not isinstance(raw, dict):
        raise PolicyError(f"{where} must be an object.")
    sid = raw.get("Sid")
    if sid is not None and not isinstance(sid, str):
        raise PolicyError(f"{where}: Sid must be a string.")
    if sid:
        where = f"Statement {sid[:50]!r}"
    unknown = sorted(set(raw) - _STATEMENT_KEYS)
    if unknown:
        raise PolicyError(f"{where}: unknown field {unknown[0][:50]!r}.")
    effect = raw.get("Effect")
    if effect not in ("Allow", "Deny"):
        raise PolicyError(f"{where}: Effect must be Allow or Deny.")
    if ("Action" in raw) == ("NotAction" in raw):
        raise PolicyError(f"{where} must have exactly one of Action and NotAction.")
    not_action = "NotAction" in raw
    actions = _actions(
        raw["NotAction" if not_action else "Action"], f"{where}: {'NotAction' if not_action else 'Action'}"
    )
    if "Resource" in raw and "NotResource" in raw:
        raise PolicyError(f"{where} must not have both Resource and NotResource.")
    not_resource = "NotResource" in raw
    resources: Pattern | None = None
    if "Resource" in raw or not_resource:
        element = raw["NotResource" if not_resource else "Resource"]
        resources = _resources(element, f"{where}: Resource", variables, resource_based)
    elif not resource_based:
        raise PolicyError(f"{where} must have Resource or NotResource.")
    has_principal = "Principal" in raw or "NotPrincipal" in raw
    if resource_based and not has_principal:
        raise PolicyError(f"{where} must have Principal or NotPrincipal.")
    if not resource_based and has_principal:
        raise PolicyError(f"{where}: an identity-based policy cannot have Principal or NotPrincipal.")
    if "Principal" in raw and "NotPrincipal" in raw:
        raise PolicyError(f"{where} must not have both Principal and NotPrincipal.")
    not_principal = "NotPrincipal" in raw
    principals: PrincipalSet | None = None
    if has_principal:
        principals = _principals(raw["NotPrincipal" if not_principal else "Principal"], f"{where}: Principal")
    conditions: tuple[Condition, ...] = ()
    if "Condition" in raw:
        try:
            conditions = parse_conditions(raw["Condition"], variables)
        except ValueError as exc:
            raise PolicyError(f"{where}: Condition: {exc}") from None
    return Statement(
        index, sid or None, effect == "Allow", actions, not_action, resources, not_resource, principals, not_principal,
        conditions,
    )  # fmt: skip


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _document(text: str) -> Any:
    """The JSON value of ``text``: RFC 8259 JSON, so ``NaN`` and ``Infinity`` (which Python's parser takes) are
    refused as well."""
    try:
        return json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):
        raise PolicyError("The policy is not a valid JSON document.") from None


def parse_policy(text: str, resource_based: bool) -> Policy:
    """The parsed policy of the JSON ``text`` (a queue policy when ``resource_based``, else an identity-based
    one); cached by ``(text, resource_based)`` within :data:`PARSED_BOUND`. Raises :class:`PolicyError` (module
    docstring for the rules)."""
    key = (text, resource_based)
    policy = _parsed.get(key)
    if policy is None:
        policy = _parse(text, resource_based)
        if PARSED_BOUND.admit(_parsed, policy.size + size_of(key)):
            _parsed[key] = policy
    return policy


def _parse(text: str, resource_based: bool) -> Policy:
    document = _document(text)
    if not isinstance(document, dict):
        raise PolicyError("The policy must be a JSON object.")
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise PolicyError(f"Unknown policy field {unknown[0][:50]!r} (allowed: Version, Id, Statement).")
    version = document.get("Version", "2008-10-17")
    if version not in VERSIONS:
        raise PolicyError(f"Version must be one of {', '.join(VERSIONS)}.")
    policy_id = document.get("Id")
    if policy_id is not None and not isinstance(policy_id, str):
        raise PolicyError("Id must be a string.")
    raw = document.get("Statement")
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise PolicyError("Statement is required: a statement object or a non-empty array of them.")
    statements = tuple(_statement(n, item, resource_based, version == "2012-10-17") for n, item in enumerate(raw))
    return Policy(version, policy_id, statements, resource_based, size_of(text) * PARSED_BYTES_PER_TEXT_BYTE)
