"""Temporary security credentials (AWS STS: ``AssumeRole``, ``GetSessionToken``): what a set is made of, and how a
signed request that uses one is checked (:class:`~sqsemu.security.sigv4.SigV4Verifier` asks :meth:`Sessions.resolve`).

A set is an access key id (``ASIA`` and 16 upper-case letters and digits, 20 characters, as AWS's temporary keys
are: "IAM identifiers", "Unique identifiers"), a secret access key (40 characters) and a session token, which the
client sends with every request it signs (``X-Amz-Security-Token``, a signed header, or a presigned URL's query
parameter: AWS General Reference, "Signature Version 4 signing process"), and an expiry.

Like AWS's, the token carries what it stands for: the principal (the role's ARN for ``AssumeRole``, the user's for
``GetSessionToken``, none for an account's root user), its account, the role session's name, the key that asked for
it and the expiry (epoch seconds); an HMAC-SHA256 under the server's session key proves that sqsemu issued it, and
the access key id and the secret are derived from the token under the same key. Nothing is stored per session, so
any number of sessions costs no memory. The session key is derived from the ``[[credentials]]`` secrets: a server
restarted with the same keys (``--data-dir`` or not) accepts the tokens it gave before until they expire; a changed
secret ends them all. With ``--auth none`` (where nothing is verified) it is random.

The checks of a request signed with a key that is not a configured one, in order:

1. no session token: ``InvalidClientTokenId`` (``The security token included in the request is invalid.``);
2. a token that does not decode, is not sqsemu's, or is not this key id's: ``InvalidClientTokenId``;
3. a token whose principal is no longer declared (a role no ``[[credentials]]`` entry names, a ``GetSessionToken``
   user whose key is gone): ``InvalidClientTokenId``;
4. the **server clock** (``sqsemu.clock``: a manual clock moves it) at or past its expiry: ``ExpiredToken`` (HTTP
   403, ``The security token included in the request is expired``, as STS and SQS answer it).

Then the signature is checked with the derived secret, as any other.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.security.errors import ExpiredToken, InvalidClientTokenId

if TYPE_CHECKING:
    from sqsemu.config import Config

__all__ = ["TEMPORARY_PREFIX", "Issued", "Session", "Sessions", "expiration_text"]

TEMPORARY_PREFIX = "ASIA"
"""How a temporary access key id starts (AWS's prefix for STS credentials)."""
_TOKEN_HEAD = b"sqsemu-sts-1"
_MAC_BYTES = 32
KNOWN_SESSIONS = 4096
"""Most sessions :meth:`Sessions.known` remembers (and 8 MiB of them): those seen most recently, so that the access
decision of a request finds the session its signature was just verified with."""


def expiration_text(epoch_s: int) -> str:
    """An expiry as STS writes ``Expiration`` (ISO 8601, UTC, seconds: ``2024-05-01T12:00:00Z``)."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Session:
    """What a set of temporary credentials stands for: ``principal`` (an IAM role's ARN for ``AssumeRole``, an IAM
    user's for ``GetSessionToken``, None for an account's root user), its ``account``, ``session_name`` (a role
    session's ``RoleSessionName``; None for ``GetSessionToken``), ``source_key`` (the access key id that asked for
    it) and ``expires_s`` (epoch seconds, on the server clock)."""

    access_key_id: str
    principal: str | None
    account: str
    session_name: str | None
    source_key: str
    expires_s: int

    @property
    def role(self) -> bool:
        """Whether this is a role's session (``AssumeRole``)."""
        return self.session_name is not None


@dataclass(frozen=True, slots=True)
class Issued:
    """One set of temporary credentials as STS answers it (``Credentials``): key id, secret, token, expiry (epoch
    seconds) and the :class:`Session` it stands for."""

    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_s: int
    session: Session

    @property
    def expiration(self) -> str:
        """``Expiration`` as STS writes it (:func:`expiration_text`)."""
        return expiration_text(self.expires_s)


def _session_key(config: Config) -> bytes:
    """The HMAC key of a server's sessions (module docstring): from its ``[[credentials]]`` with ``--auth sigv4`` or
    ``iam``, random otherwise."""
    if config.auth == "none" or not config.credentials:
        return secrets.token_bytes(32)
    digest = hashlib.sha256(b"sqsemu sts session key\0" + config.account_id.encode())
    for credential in sorted(config.credentials, key=lambda c: c.access_key_id):
        digest.update(b"\0" + credential.access_key_id.encode() + b"\0" + credential.secret_access_key.encode())
    return digest.digest()


class Sessions:
    """The temporary credentials of one server (module docstring), on its clock ``now_ms`` (epoch ms). ``config``
    names the principals a session may stand for: the roles among its ``[[credentials]]`` principals, and its keys
    (a ``GetSessionToken`` session's source)."""

    def __init__(self, config: Config, now_ms: Callable[[], int], key: bytes | None = None) -> None:
        self._key = key if key is not None else _session_key(config)
        self._now_ms = now_ms
        self._keys: dict[str, str | None] = {c.access_key_id: c.principal for c in config.credentials}
        self._roles = frozenset(c.principal for c in config.credentials if c.principal and ":role/" in c.principal)
        self._known: dict[str, tuple[str, Session, str]] = {}
        self._bound = CacheBound(KNOWN_SESSIONS, 8 * 1024 * 1024, 64 * 1024)

    def now_s(self) -> int:
        """The server clock, whole epoch seconds."""
        return self._now_ms() // 1000

    def issue(
        self, principal: str | None, account: str, session_name: str | None, source_key: str, duration_s: int
    ) -> Issued:
        """A new set of temporary credentials for ``principal`` (a role's or user's ARN; None: ``account``'s root
        user), valid ``duration_s`` seconds from now on the server clock. Each call gives a new set."""
        expires_s = self.now_s() + duration_s
        payload = {
            "p": principal, "a": account, "n": session_name, "k": source_key, "e": expires_s,
            "i": secrets.token_hex(8),
        }  # fmt: skip
        body = json.dumps(payload, separators=(",", ":")).encode()
        mac = hmac.new(self._key, _TOKEN_HEAD + body, hashlib.sha256).digest()
        token = base64.b64encode(_TOKEN_HEAD + mac + body).decode("ascii")
        access_key_id, secret = self._derived(token)
        session = Session(access_key_id, principal, account, session_name, source_key, expires_s)
        self._remember(access_key_id, token, session, secret)
        return Issued(access_key_id, secret, token, expires_s, session)

    def _derived(self, token: str) -> tuple[str, str]:
        """The access key id and secret of ``token``."""
        raw = token.encode("ascii")
        key_id = hmac.new(self._key, b"key id\0" + raw, hashlib.sha256).digest()
        secret = hmac.new(self._key, b"secret\0" + raw, hashlib.sha256).digest()
        return (
            TEMPORARY_PREFIX + base64.b32encode(key_id).decode("ascii")[:16],
            base64.b64encode(secret).decode("ascii")[:40],
        )

    def _remember(self, access_key_id: str, token: str, session: Session, secret: str) -> None:
        if self._bound.admit(self._known, size_of(access_key_id, token, session, secret)):
            self._known[access_key_id] = (token, session, secret)

    def resolve(self, access_key_id: str, token: str | None) -> tuple[Session, str]:
        """The session and secret of a request signed with ``access_key_id`` carrying ``token``; raises
        ``InvalidClientTokenId`` or ``ExpiredToken`` (module docstring, checks 1 to 4)."""
        if not token:
            raise InvalidClientTokenId()
        found = self._known.get(access_key_id)
        if found is not None and hmac.compare_digest(found[0], token):
            session, secret = found[1], found[2]
        else:
            session, secret = self._decode(access_key_id, token)
        if not self._declared(session):
            raise InvalidClientTokenId()
        if self.now_s() >= session.expires_s:
            raise ExpiredToken()
        if found is None or found[1] is not session:
            self._remember(access_key_id, token, session, secret)
        return session, secret

    def _decode(self, access_key_id: str, token: str) -> tuple[Session, str]:
        """The session a token stands for, once its MAC and key id are checked (InvalidClientTokenId otherwise)."""
        if len(token) > 16 * 1024 or not token.isascii():
            raise InvalidClientTokenId()
        try:
            raw = base64.b64decode(token, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidClientTokenId() from None
        head, mac, body = (
            raw[: len(_TOKEN_HEAD)],
            raw[len(_TOKEN_HEAD) : len(_TOKEN_HEAD) + _MAC_BYTES],
            raw[len(_TOKEN_HEAD) + _MAC_BYTES :],
        )
        expected = hmac.new(self._key, _TOKEN_HEAD + body, hashlib.sha256).digest()
        if head != _TOKEN_HEAD or not hmac.compare_digest(mac, expected):
            raise InvalidClientTokenId()
        key_id, secret = self._derived(token)
        if not hmac.compare_digest(key_id, access_key_id):
            raise InvalidClientTokenId()
        fields = json.loads(body)
        session = Session(key_id, fields["p"], fields["a"], fields["n"], fields["k"], int(fields["e"]))
        return session, secret

    def _declared(self, session: Session) -> bool:
        """Whether the principal of ``session`` is still declared (module docstring, check 3)."""
        if session.role:
            return session.principal in self._roles
        return session.source_key in self._keys and self._keys[session.source_key] == session.principal

    def known(self, access_key_id: str) -> Session | None:
        """The session of a temporary key this server issued or verified lately (:data:`KNOWN_SESSIONS`), else
        None."""
        found = self._known.get(access_key_id)
        return None if found is None else found[1]

    def forget(self) -> None:
        """Forget the sessions remembered (tests); their tokens are still accepted."""
        self._bound.clear(self._known)


def security_token(headers: Sequence[tuple[bytes, bytes]], query: Sequence[tuple[str, str]]) -> str | None:
    """The session token a request carries: its ``X-Amz-Security-Token`` header, else the query parameter of that
    name (a presigned URL), else None."""
    for name, value in headers:
        if name.lower() == b"x-amz-security-token":
            return value.decode("latin-1").strip()
    for key, text in query:
        if key == "X-Amz-Security-Token":
            return text
    return None
