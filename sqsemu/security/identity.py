"""The identities of ``auth = "iam"``: each ``[[credentials]]`` access key is one principal (an IAM user, an IAM role
or an account's root user) with its identity-based policies.

A ``policies`` entry is a policy document's JSON text when it starts with ``{`` (after blanks), else the path of a
JSON file holding one (read once, at start-up). A root user has no identity-based policies ("AWS account root
user": policies cannot be attached to it), so ``policies`` without ``principal`` is refused. A principal's ARN names
its account: a key's ``account``, when given, must be the same.

Unique ids ("IAM identifiers", IAM User Guide, "Unique identifiers"): AWS gives each user an id starting ``AIDA`` and
each role one starting ``AROA``, 21 characters of upper-case letters and digits. sqsemu has no IAM API that would
create them, so :func:`unique_id` derives one from the principal's ARN (the same ARN, the same id, across restarts):
what ``GetCallerIdentity`` answers as ``UserId``, ``aws:userid`` holds and messages carry as ``SenderId``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sqsemu.security.evaluate import Principal, principal_for
from sqsemu.security.policy import Policy, PolicyError, parse_policy

__all__ = ["Identity", "identities", "identities_error", "load_policy", "unique_id"]


class CredentialLike(Protocol):
    """A ``[[credentials]]`` entry (:class:`sqsemu.config.Credential`; not imported: the config imports this)."""

    @property
    def access_key_id(self) -> str: ...
    @property
    def account(self) -> str | None: ...
    @property
    def principal(self) -> str | None: ...
    @property
    def policies(self) -> tuple[str, ...]: ...
    def account_for(self, default: str) -> str: ...


_ID_PREFIXES = {"user": "AIDA", "role": "AROA"}


def unique_id(principal: Principal) -> str:
    """The unique id of an IAM user (``AIDA`` and 17 more characters) or role (``AROA``...), derived from its ARN
    (module docstring); a root user's is its account id, a service's its name."""
    prefix = _ID_PREFIXES.get(principal.kind)
    if prefix is None:
        return principal.account if principal.kind == "root" else principal.arn
    digest = hashlib.sha256(principal.arn.encode("utf-8")).digest()
    return prefix + base64.b32encode(digest).decode("ascii")[:17]


@dataclass(frozen=True, slots=True)
class Identity:
    """One access key's principal and its identity-based policies (``(label, policy)``: ``identity policy 1``...,
    or the file's name). Temporary credentials (``sqsemu.security.sessions``: AWS STS) are ``temporary``; a role's
    session has its ``session_name`` (AssumeRole's ``RoleSessionName``). A role's long-term key (sqsemu's shorthand
    for a role's credentials) acts as a session named after the role."""

    access_key_id: str
    principal: Principal
    policies: tuple[tuple[str, Policy], ...]
    session_name: str | None = None
    temporary: bool = False

    @property
    def arn(self) -> str:
        """The caller's ARN as ``GetCallerIdentity`` answers it ("IAM identifiers", "Role session principals"): a
        role's session ``arn:aws:sts::<account>:assumed-role/<role name>/<session name>``, else the principal's
        ARN."""
        principal = self.principal
        if principal.kind == "role":
            return f"arn:aws:sts::{principal.account}:assumed-role/{principal.name}/{self.session}"
        return principal.arn

    @property
    def session(self) -> str:
        """A role's session name: ``session_name``, else (a long-term role key) the role's name."""
        return self.session_name if self.session_name is not None else self.principal.name

    @property
    def user_id(self) -> str:
        """``aws:userid`` ("AWS global condition context keys"; ``GetCallerIdentity``'s ``UserId``): a user's unique
        id, a role's ``<role id>:<session name>``, the account id for a root user."""
        principal = self.principal
        if principal.kind == "role":
            return f"{unique_id(principal)}:{self.session}"
        return unique_id(principal)

    @property
    def denial_arn(self) -> str:
        """The ARN a denial's message names (``User: <arn> is not authorized...``): a temporary credential's
        :attr:`arn` (an assumed role's session ARN, as AWS names it), else the principal's ARN."""
        return self.arn if self.temporary else self.principal.arn


def load_policy(source: str) -> tuple[str, str]:
    """``(text, where)`` of one ``policies`` entry: inline JSON, or a file's content (``where`` names the file).
    Raises ValueError when the file cannot be read."""
    if source.lstrip().startswith("{"):
        return source, ""
    try:
        return Path(source).read_text(encoding="utf-8"), Path(source).name
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the policy file {source!r}: {exc}") from None


def _identity(credential: CredentialLike, default_account: str) -> Identity:
    key = credential.access_key_id
    account = credential.account_for(default_account)
    principal = principal_for(credential.principal, account)
    if credential.principal is not None and credential.account is not None and principal.account != account:
        raise ValueError(
            f"credentials: the principal of {key!r} is in account {principal.account}, not {credential.account}"
        )
    if credential.principal is None and credential.policies:
        raise ValueError(
            f"credentials: {key!r} has policies but no principal; a root user has no identity-based policies "
            "(give the IAM user or role ARN as principal)"
        )
    if principal.kind == "root" and credential.policies:  # never evaluated: refused rather than silently ignored
        raise ValueError(
            f"credentials: {key!r} has policies but its principal is the account's root user; a root user has no "
            "identity-based policies (give the IAM user or role ARN as principal)"
        )
    if isinstance(credential.policies, str):
        raise ValueError(f"credentials: the policies of {key!r} must be a list of JSON texts or file paths")
    policies: list[tuple[str, Policy]] = []
    for n, source in enumerate(credential.policies, 1):
        if not isinstance(source, str):
            raise ValueError(f"credentials: the policies of {key!r} must be a list of JSON texts or file paths")
        text, where = load_policy(source)
        label = f"identity policy {where or n}"
        try:
            policies.append((label, parse_policy(text, False)))
        except PolicyError as exc:
            raise ValueError(f"credentials: {label} of {key!r}: {exc}") from None
    return Identity(key, principal, tuple(policies))


def identities(credentials: Sequence[CredentialLike], account_id: str) -> dict[str, Identity]:
    """The identities of ``credentials`` (a config's) by access key id, ``account_id`` being the server's; raises
    ValueError naming a bad one."""
    return {c.access_key_id: _identity(c, account_id) for c in credentials}


def identities_error(credentials: Sequence[CredentialLike], account_id: str) -> str | None:
    """Why ``credentials`` cannot be ``auth = "iam"`` identities, or None."""
    try:
        identities(credentials, account_id)
    except ValueError as exc:
        return str(exc)
    return None
