"""The STS actions sqsemu serves: ``GetCallerIdentity``, ``AssumeRole`` and ``GetSessionToken`` (STS API
Reference), in each ``--auth`` mode.

- **GetCallerIdentity** answers ``Account``, ``Arn`` and ``UserId`` of the caller as the identity model has them
  (:class:`~sqsemu.security.identity.Identity`): an account's root user ``arn:aws:iam::<account>:root`` and the
  account id; an IAM user its ARN and its ``AIDA...`` id; a role's session
  ``arn:aws:sts::<account>:assumed-role/<role>/<session>`` and ``<role id>:<session>``. It needs no permission and
  no policy can deny it (API Reference, "GetCallerIdentity": "No permissions are required to perform this
  operation"). With ``--auth none`` any key is answered as the root user of the account sqsemu derives from the
  access key id (docs/behaviour.md 7.1).
- **AssumeRole** gives temporary credentials (:mod:`sqsemu.security.sessions`) for a declared role
  (:mod:`sqsemu.security.roles`): under ``--auth iam`` when the caller's identity-based policies and the role's trust
  policy allow ``sts:AssumeRole`` (``sts:ExternalId`` and ``sts:RoleSessionName`` among the condition keys), under
  ``--auth sigv4`` for any role a ``[[credentials]]`` entry declares (no policies are enforced in that mode), under
  ``--auth none`` for any role ARN (nothing is enforced; the credentials, like any key, act as docs/behaviour.md 7.1
  says). A root user may not assume a role (AWS: ``Roles may not be assumed by root accounts.``).
  ``DurationSeconds`` 900 to 43,200 (default 3,600), at most the role's ``max_session_duration``, at most 3,600
  when a role's credentials assume a role (role chaining).
- **GetSessionToken** gives temporary credentials of the same user for an IAM user's (or a root user's) long-term
  key: ``DurationSeconds`` 900 to 129,600, default 43,200; a root user's at most 3,600 (longer is cut to 3,600, as
  AWS does). Never with temporary credentials or a role's (``Cannot call GetSessionToken with session
  credentials``); no permission is needed ("Permissions for GetSessionToken": policies cannot control it).

Session policies, session tags, source identities and MFA (``Policy``, ``PolicyArns``, ``Tags``,
``TransitiveTagKeys``, ``SourceIdentity``, ``ProvidedContexts``, ``SerialNumber``, ``TokenCode``) are not modelled:
a call giving one is refused with ``ValidationError`` naming it, rather than served with less than it asked for.
Web identity, SAML and the other STS actions are answered ``InvalidAction`` naming what sqsemu serves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqsemu.config import Config
from sqsemu.security.evaluate import Principal, principal_for
from sqsemu.security.iam import assume_role_message
from sqsemu.security.identity import Identity, unique_id
from sqsemu.security.roles import DEFAULT_MAX_SESSION_S
from sqsemu.security.sessions import Issued, Sessions
from sqsemu.sts.errors import AccessDenied, InvalidAction, ValidationError, length_problem, validation_error
from sqsemu.sts.wire import Element

if TYPE_CHECKING:
    from sqsemu.security.iam import AccessControl

__all__ = ["SERVED", "NOT_SERVED", "STSCall", "Service"]

SERVED = ("GetCallerIdentity", "AssumeRole", "GetSessionToken")
NOT_SERVED = frozenset(
    {
        "AssumeRoleWithSAML", "AssumeRoleWithWebIdentity", "AssumeRoot", "DecodeAuthorizationMessage",
        "GetAccessKeyInfo", "GetCertificate", "GetDelegatedAccessToken", "GetFederationToken",
        "GetScopedCredentials", "GetTrustBundles", "GetWebIdentityToken", "IssueWorkloadIdentityContext",
    }
)  # fmt: skip
"""The other actions of botocore's STS model, answered ``InvalidAction`` (module docstring)."""

ROLE_DURATION = (900, 43200)
"""``AssumeRole``'s ``DurationSeconds`` bounds (botocore's model, ``roleDurationSecondsType``)."""
SESSION_DURATION = (900, 129600)
"""``GetSessionToken``'s ``DurationSeconds`` bounds (``durationSecondsType``)."""
DEFAULT_SESSION_TOKEN_S = 43200
ROOT_SESSION_MAX_S = 3600
"""A root user's ``GetSessionToken`` session: at most one hour (API Reference, "GetSessionToken")."""
CHAINED_MAX_S = 3600
"""A role session assuming a role (role chaining): at most one hour (API Reference, "AssumeRole")."""

_SESSION_NAME = re.compile(r"[\w+=,.@-]*", re.ASCII)
_EXTERNAL_ID = re.compile(r"[\w+=,.@:/-]*", re.ASCII)
_NOT_MODELLED = {
    "Policy": "session policies",
    "PolicyArns": "session policies",
    "Tags": "session tags",
    "TransitiveTagKeys": "session tags",
    "SourceIdentity": "source identities",
    "ProvidedContexts": "trusted context assertions",
    "SerialNumber": "MFA",
    "TokenCode": "MFA",
}
_SESSION_EXPIRED = "The requested DurationSeconds exceeds the MaxSessionDuration set for this role."
_CHAINED = "The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining."
_ROOT = "Roles may not be assumed by root accounts."
_SESSION_CREDENTIALS = "Cannot call GetSessionToken with session credentials"


@dataclass(frozen=True, slots=True)
class STSCall:
    """One STS call: its parameters, the caller's ``account`` and ``region`` (its namespace), the ``access_key_id``
    it was signed with (verified under ``--auth sigv4``/``iam``; the credential scope's under ``none``, or ``""``),
    the request's ASGI ``scope`` (for ``aws:SourceIp``/``aws:SecureTransport``) and its ``request_id``."""

    params: Mapping[str, str]
    account: str
    region: str
    access_key_id: str
    scope: MutableMapping[str, Any] | None
    request_id: str


class Service:
    """The STS actions of one server (module docstring): its ``config``, temporary credentials ``sessions`` and,
    under ``--auth iam``, its access control."""

    def __init__(self, config: Config, sessions: Sessions, access: AccessControl | None) -> None:
        self.config = config
        self.sessions = sessions
        self.access = access
        self._credentials = {c.access_key_id: c for c in config.credentials}
        self._longest = {
            c.principal: c.max_session_duration or DEFAULT_MAX_SESSION_S
            for c in config.credentials
            if c.principal and ":role/" in c.principal
        }

    # ---------------------------------------------------------------------------------------------- who calls

    def identity(self, access_key_id: str) -> Identity | None:
        """The caller's identity under ``--auth sigv4`` or ``iam`` (a verified key), None under ``none``."""
        if self.config.auth == "none":
            return None
        if self.access is not None:
            return self.access.identity(access_key_id)
        credential = self._credentials.get(access_key_id)
        if credential is not None:
            account = credential.account_for(self.config.account_id)
            return Identity(access_key_id, _principal(credential.principal, account), ())
        session = self.sessions.known(access_key_id)
        if session is None:
            return None
        principal = _principal(session.principal, session.account)
        return Identity(access_key_id, principal, (), session.session_name, True)

    # ------------------------------------------------------------------------------------------------ actions

    def get_caller_identity(self, call: STSCall) -> list[Element]:
        """``GetCallerIdentity`` (module docstring)."""
        identity = self.identity(call.access_key_id)
        if identity is None:
            return [("Arn", f"arn:aws:iam::{call.account}:root"), ("UserId", call.account), ("Account", call.account)]
        return [("Arn", identity.arn), ("UserId", identity.user_id), ("Account", identity.principal.account)]

    def assume_role(self, call: STSCall) -> list[Element]:
        """``AssumeRole`` (module docstring)."""
        params = call.params
        role_arn, session_name = params.get("RoleArn"), params.get("RoleSessionName")
        external_id = params.get("ExternalId")
        problems: list[str] = []
        if role_arn is None:
            problems.append("Value null at 'roleArn' failed to satisfy constraint: Member must not be null")
        else:
            _add(problems, length_problem(role_arn, "roleArn", 20, 2048))
        if session_name is None:
            problems.append("Value null at 'roleSessionName' failed to satisfy constraint: Member must not be null")
        else:
            _add(problems, _pattern_problem(session_name, "roleSessionName", _SESSION_NAME, r"[\w+=,.@-]*"))
            _add(problems, length_problem(session_name, "roleSessionName", 2, 64))
        duration = _duration(params, problems, ROLE_DURATION)
        if external_id is not None:
            _add(problems, _pattern_problem(external_id, "externalId", _EXTERNAL_ID, r"[\w+=,.@:\/-]*"))
            _add(problems, length_problem(external_id, "externalId", 2, 1224))
        if problems:
            raise validation_error(problems)
        _refuse_not_modelled("AssumeRole", params)
        assert role_arn is not None and session_name is not None
        role = _role(role_arn)
        identity = self.identity(call.access_key_id)
        if identity is None:  # --auth none: any role ARN; the caller is the account's root user (7.1)
            if role is None:
                raise AccessDenied(assume_role_message(f"arn:aws:iam::{call.account}:root", role_arn))
            source = call.access_key_id
        else:
            self._authorize(identity, role_arn, session_name, external_id, call)
            assert role is not None  # a declared role's ARN (sqsemu.security.identity checked it)
            source = identity.access_key_id
            if identity.principal.kind == "role" and duration is not None and duration > CHAINED_MAX_S:
                raise ValidationError(_CHAINED)
        longest = self._longest.get(role_arn, DEFAULT_MAX_SESSION_S)
        if duration is not None and duration > longest:
            raise ValidationError(_SESSION_EXPIRED)
        account = role.account
        issued = self.sessions.issue(role_arn, account, session_name, source, duration or DEFAULT_MAX_SESSION_S)
        session_arn = f"arn:aws:sts::{account}:assumed-role/{role.name}/{session_name}"
        return [
            ("Credentials", _credentials(issued)),
            ("AssumedRoleUser", [("AssumedRoleId", f"{unique_id(role)}:{session_name}"), ("Arn", session_arn)]),
        ]

    def _authorize(
        self, identity: Identity, role_arn: str, session_name: str, external_id: str | None, call: STSCall
    ) -> None:
        """Whether ``identity`` may assume ``role_arn`` (``--auth sigv4``: a declared role; ``iam``: the policies);
        raises ``AccessDenied`` with AWS's message."""
        if identity.principal.kind == "root":
            raise AccessDenied(_ROOT)
        if self.access is None:
            if role_arn not in self._longest:
                raise AccessDenied(assume_role_message(identity.denial_arn, role_arn))
            return
        asked: dict[str, Sequence[str]] = {"sts:rolesessionname": (session_name,)}
        if external_id is not None:
            asked["sts:externalid"] = (external_id,)
        decision = self.access.check_assume_role(identity, role_arn, asked, call.region, call.scope, call.request_id)
        if not decision.allowed:
            raise AccessDenied(assume_role_message(decision.principal, role_arn))

    def get_session_token(self, call: STSCall) -> list[Element]:
        """``GetSessionToken`` (module docstring)."""
        problems: list[str] = []
        duration = _duration(call.params, problems, SESSION_DURATION)
        if problems:
            raise validation_error(problems)
        _refuse_not_modelled("GetSessionToken", call.params)
        identity = self.identity(call.access_key_id)
        if identity is None:  # --auth none: the account's root user (docs/behaviour.md 7.1)
            principal, account, source = None, call.account, call.access_key_id
            seconds = duration or DEFAULT_SESSION_TOKEN_S
        else:
            kind = identity.principal.kind
            if identity.temporary or kind == "role":  # a role's credentials are session credentials on AWS
                raise AccessDenied(_SESSION_CREDENTIALS)
            principal = None if kind == "root" else identity.principal.arn
            account, source = identity.principal.account, identity.access_key_id
            seconds = duration or DEFAULT_SESSION_TOKEN_S
            if kind == "root":
                seconds = min(duration or ROOT_SESSION_MAX_S, ROOT_SESSION_MAX_S)
        issued = self.sessions.issue(principal, account, None, source, seconds)
        return [("Credentials", _credentials(issued))]


ACTIONS = {
    "GetCallerIdentity": Service.get_caller_identity,
    "AssumeRole": Service.assume_role,
    "GetSessionToken": Service.get_session_token,
}


def not_served(action: str) -> InvalidAction:
    """The error of an STS action sqsemu does not serve (module docstring)."""
    return InvalidAction(
        f"sqsemu serves STS's GetCallerIdentity, AssumeRole and GetSessionToken; {action} is not served (no web "
        "identity, SAML or federation). See docs/security.md, STS."
    )


def _principal(arn: str | None, account: str) -> Principal:
    """The principal of an ARN as a configuration gives it (``--auth sigv4`` does not check it: one that does not
    parse is the account's root user)."""
    try:
        return principal_for(arn, account)
    except ValueError:
        return principal_for(None, account)


def _role(arn: str) -> Principal | None:
    """The role an ARN names (``arn:aws:iam::<account>:role/<path/name>``), None for any other text."""
    try:
        principal = principal_for(arn, "")
    except ValueError:
        return None
    return principal if principal.kind == "role" and principal.account.isdigit() else None


def _credentials(issued: Issued) -> list[Element]:
    return [
        ("AccessKeyId", issued.access_key_id),
        ("SecretAccessKey", issued.secret_access_key),
        ("SessionToken", issued.session_token),
        ("Expiration", issued.expiration),
    ]


def _add(problems: list[str], problem: str | None) -> None:
    if problem is not None:
        problems.append(problem)


def _pattern_problem(value: str, member: str, pattern: re.Pattern[str], written: str) -> str | None:
    """The problem of a string member that does not match its model's pattern (recorded: ``Value 'a:b' at
    'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern:
    [\\w+=,.@-]*``), or None."""
    if pattern.fullmatch(value):
        return None
    return f"Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression " \
        f"pattern: {written}"  # fmt: skip


def _duration(params: Mapping[str, str], problems: list[str], bounds: tuple[int, int]) -> int | None:
    """``DurationSeconds`` when given, its problem added to ``problems`` when outside ``bounds`` (AWS's wording;
    one that is not an integer: sqsemu's, in the same form)."""
    text = params.get("DurationSeconds")
    if text is None:
        return None
    low, high = bounds
    if not (text.isascii() and text.lstrip("-").isdigit()) or len(text) > 12:
        problems.append(f"Value '{text[:40]}' at 'durationSeconds' failed to satisfy constraint: Member must be an "
                        "integer")  # fmt: skip
        return None
    value = int(text)
    if value < low:
        problems.append(f"Value '{value}' at 'durationSeconds' failed to satisfy constraint: Member must have value "
                        f"greater than or equal to {low}")  # fmt: skip
    elif value > high:
        problems.append(f"Value '{value}' at 'durationSeconds' failed to satisfy constraint: Member must have value "
                        f"less than or equal to {high}")  # fmt: skip
    return value


def _refuse_not_modelled(action: str, params: Mapping[str, str]) -> None:
    """A ``ValidationError`` naming the first parameter sqsemu does not model (module docstring)."""
    for name in params:
        head = name.split(".", 1)[0]
        what = _NOT_MODELLED.get(head)
        if what is not None:
            raise ValidationError(
                f"sqsemu does not model {what}: {action} with {head} is not served (docs/security.md, STS)."
            )
