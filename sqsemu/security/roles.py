"""The IAM roles that ``sts:AssumeRole`` can assume: the ``[[credentials]]`` principals that are roles, each with its
identity-based policies, its trust policy and its longest session.

A role's trust policy is the resource-based policy of the role ("IAM JSON policy elements: Principal", "Roles terms
and concepts": *trust policy*), decided by the one evaluator (:mod:`sqsemu.security.evaluate`) as a queue's policy
is: within the role's account an ``Allow`` naming the caller, or the account's delegation to identity-based policies
that allow ``sts:AssumeRole``, suffices; across accounts both must allow; a ``Deny`` anywhere wins. Its conditions
see the request's keys and ``sts:ExternalId`` and ``sts:RoleSessionName`` ("Available keys for AWS STS").

Declared in a role's ``[[credentials]]`` entry (``trust_policy``: inline JSON or a file's path, as ``policies``;
``max_session_duration``: seconds, 3,600 to 43,200). A role without ``trust_policy`` trusts its own account (the
IAM console's "AWS account: This account": ``{"AWS": "arn:aws:iam::<account>:root"}``), so its account's users and
roles whose identity-based policies allow ``sts:AssumeRole`` on it may assume it. Several keys naming one role must
agree on its policies, trust policy and longest session (a role has one of each).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from sqsemu.security.evaluate import Principal
from sqsemu.security.identity import CredentialLike, identities, load_policy
from sqsemu.security.policy import Policy, PolicyError, parse_policy

__all__ = ["DEFAULT_MAX_SESSION_S", "Role", "default_trust_policy", "roles", "roles_error"]

DEFAULT_MAX_SESSION_S = 3600
"""A role's ``MaxSessionDuration`` when none is declared (IAM API Reference, "CreateRole": one hour)."""


@dataclass(frozen=True, slots=True)
class Role:
    """One assumable role: its ``principal``, identity-based ``policies`` (as :class:`~sqsemu.security.identity.
    Identity` holds them), ``trust_policy`` (parsed, resource-based), whether it was ``declared`` (False: the
    default one) and ``max_session_s`` (seconds)."""

    principal: Principal
    policies: tuple[tuple[str, Policy], ...]
    trust_policy: Policy
    trust_declared: bool
    max_session_s: int


def default_trust_policy(account: str) -> str:
    """The trust policy of a role declared without one: its own account's (module docstring)."""
    statement = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def roles(credentials: Sequence[CredentialLike], account_id: str) -> dict[str, Role]:
    """The roles of ``credentials`` (a config's, ``auth = "iam"``) by ARN; raises ValueError naming a trust policy
    that does not parse, or a role declared twice with other settings."""
    found: dict[str, tuple[Role, str, tuple[str, ...]]] = {}
    by_key = identities(credentials, account_id)
    for credential in credentials:
        identity = by_key[credential.access_key_id]
        principal = identity.principal
        if principal.kind != "role":
            continue
        key = credential.access_key_id
        text: str | None = getattr(credential, "trust_policy", None)
        declared = text is not None
        where = ""
        if text is None:
            text = default_trust_policy(principal.account)
        else:
            text, where = load_policy(text)
        try:
            trust = parse_policy(text, True)
        except PolicyError as exc:
            named = f" ({where})" if where else ""
            raise ValueError(f"credentials: the trust_policy{named} of {key!r}: {exc}") from None
        longest = getattr(credential, "max_session_duration", None) or DEFAULT_MAX_SESSION_S
        role = Role(principal, identity.policies, trust, declared, longest)
        sources = tuple(credential.policies)
        earlier = found.get(principal.arn)
        if earlier is not None:
            before, before_trust, before_sources = earlier
            if (before_trust, before.max_session_s, before_sources) != (text, longest, sources):
                raise ValueError(
                    f"credentials: the role {principal.arn} is declared again by {key!r} with other policies, "
                    "trust_policy or max_session_duration: a role has one of each (give them the same values)"
                )
            continue
        found[principal.arn] = (role, text, sources)
    return {arn: entry[0] for arn, entry in found.items()}


def roles_error(credentials: Sequence[CredentialLike], account_id: str) -> str | None:
    """Why the roles of ``credentials`` cannot be assumed under ``auth = "iam"`` (:func:`roles`), or None."""
    try:
        roles(credentials, account_id)
    except ValueError as exc:
        return str(exc)
    return None
