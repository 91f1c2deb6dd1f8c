"""Signature Version 4 verification for ``--auth sigv4``: every SQS request must be signed with one of the access
keys of the configuration file's ``[[credentials]]``.

Both forms of the AWS General Reference pages "Signature Version 4 signing process" / "Authenticating Requests:
Using Query Parameters (AWS Signature Version 4)" are accepted:

- **header**: ``Authorization: AWS4-HMAC-SHA256 Credential=<key>/<yyyymmdd>/<region>/sqs/aws4_request,
  SignedHeaders=<h1;h2...>, Signature=<hex>`` with the time in ``X-Amz-Date`` (what every SDK sends);
- **presigned URL**: ``X-Amz-Algorithm=AWS4-HMAC-SHA256``, ``X-Amz-Credential``, ``X-Amz-Date``, ``X-Amz-Expires``
  (1 to 604800 s), ``X-Amz-SignedHeaders`` and ``X-Amz-Signature`` in the query string (botocore's
  ``generate_presigned_url``, ``SigV4QueryAuth``).

The expected signature is computed by botocore's own signer (``botocore.auth.SigV4Auth`` / ``SigV4QueryAuth``) on
a ``botocore.awsrequest.AWSRequest`` rebuilt from what arrived: the method, the path as sent (botocore encodes it
once more, as SigV4 does for every service but S3), the query parameters without ``X-Amz-Signature`` (decoded and
re-encoded canonically by botocore), exactly the headers the client listed as signed, the body's SHA-256 and the
client's ``X-Amz-Date``, with the key's secret and the scope's region and service. It is compared with
``hmac.compare_digest``. botocore is imported only when a verifier is built (``pip install '.[auth]'`` from a checkout;
:func:`botocore_missing` says when it is not installed).

Checks, in order, and what each failure answers (:mod:`sqsemu.security.errors` has the statuses):

1. no ``Authorization`` header and no ``X-Amz-Credential``/``X-Amz-Signature`` parameter: MissingAuthenticationToken;
2. a part missing or malformed (algorithm, ``Credential`` of five parts, ``SignedHeaders`` without ``host``,
   ``Signature``, ``X-Amz-Date`` in ISO 8601 basic format, ``X-Amz-Expires``): IncompleteSignature;
3. an access key id that is not configured: InvalidClientTokenId;
4. time, by the **wall clock** (``time.time``), not the server clock: SigV4 expiry is about real time, the client
   signs with its real clock, and a manual server clock moved hours ahead by a test must not expire every request.
   A header-signed request more than 15 minutes old or ahead: SignatureDoesNotMatch ``Signature expired: <date> is
   now earlier than <now - 15 min> (<now> - 15 min.)`` / ``Signature not yet current: ...``, as SQS answers; a
   presigned URL after ``X-Amz-Date + X-Amz-Expires``: RequestExpired (``Request has expired.``, HTTP 400), and one
   dated more than 15 minutes ahead: ``Signature not yet current``;
5. an ``x-amz-*`` header sent but not signed (``X-Amz-Target`` above all: unsigned, it would let a captured request
   be replayed as another action), or an unsigned ``Content-Type`` of a header-signed request (AWS General
   Reference, "Create a canonical request for Signature Version 4"; botocore and the other SDKs sign both):
   SignatureDoesNotMatch naming the header (the message is sqsemu's);
6. a scope whose service is not ``sqs`` or whose date is not that of ``X-Amz-Date``, a signed
   ``X-Amz-Content-SHA256`` that is not the body's hash, or a signature that differs: SignatureDoesNotMatch.

A verified request acts as the key's account (``Credential.account``) in the scope's region when that looks like a
region (:func:`sqsemu.security.region.valid_region`), else the server's region.

Temporary credentials (AWS STS, :mod:`sqsemu.security.sessions`): a key id that is not configured is looked up as
one when the verifier has ``sessions``, with the request's ``X-Amz-Security-Token`` (check 3 becomes
:meth:`~sqsemu.security.sessions.Sessions.resolve`'s checks: ``InvalidClientTokenId`` or ``ExpiredToken``, the expiry
on the server clock); the request acts as the session's account and the signature is checked with its secret.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import time
from collections.abc import Callable, MutableMapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from sqsemu.config import Config, Credential
from sqsemu.engine.broker import Namespace
from sqsemu.security.errors import (
    ExpiredToken,
    IncompleteSignature,
    InvalidClientTokenId,
    MissingAuthenticationToken,
    RequestExpired,
    SignatureDoesNotMatch,
)
from sqsemu.security.region import valid_region
from sqsemu.security.sessions import Sessions, security_token

__all__ = ["ALGORITHM", "MAX_EXPIRES_S", "SKEW_S", "SigV4Verifier", "botocore_missing"]

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "sqs"
SKEW_S = 15 * 60
"""How far (seconds) a header-signed request's ``X-Amz-Date`` may be from the wall clock, either way."""
MAX_EXPIRES_S = 7 * 24 * 3600
"""The longest ``X-Amz-Expires`` of a presigned URL (seven days, as AWS allows)."""
TIMESTAMP_FORMAT = "%Y%m%dT%H%M%SZ"

Scope = MutableMapping[str, Any]


def botocore_missing(mode: str = "sigv4") -> str | None:
    """None when botocore can be imported, else the message telling how to install it: ``auth "<mode>"`` (the mode
    asked for, ``sigv4`` or ``iam``) needs sqsemu's ``auth`` extra."""
    if importlib.util.find_spec("botocore") is not None:
        return None
    return (
        f'auth "{mode}" verifies signatures with botocore, which is not installed: install sqsemu\'s auth extra, '
        "pip install 'sqsemu[auth]' (from a checkout: pip install '.[auth]')"
    )


def _parse_timestamp(value: str, what: str) -> float:
    """Epoch seconds of an ISO 8601 basic timestamp (``20240131T235959Z``); IncompleteSignature when malformed."""
    if len(value) != 16:
        raise IncompleteSignature(f"{what} must be in ISO-8601 'basic format' (yyyyMMdd'T'HHmmss'Z'). Got {value!r}.")
    try:
        return datetime.strptime(value, TIMESTAMP_FORMAT).replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise IncompleteSignature(
            f"{what} must be in ISO-8601 'basic format' (yyyyMMdd'T'HHmmss'Z'). Got {value!r}."
        ) from None


def _stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime(TIMESTAMP_FORMAT)


def _check_not_ahead(signed_at: float, now: float, stamp: str) -> None:
    if signed_at > now + SKEW_S:
        raise SignatureDoesNotMatch(
            f"Signature not yet current: {stamp} is still later than {_stamp(now + SKEW_S)} ({_stamp(now)} + 15 min.)"
        )


class _Parts:
    """The signature parts of one request, whichever form carried them."""

    __slots__ = ("access_key_id", "scope_date", "region", "service", "signed_headers", "signature", "amz_date")

    def __init__(self, credential: str, signed_headers: str, signature: str, amz_date: str) -> None:
        pieces = credential.split("/")
        if len(pieces) != 5 or not all(pieces) or pieces[4] != "aws4_request":
            raise IncompleteSignature(
                f"Credential must have the form <access key id>/<yyyymmdd>/<region>/{SERVICE}/aws4_request; "
                f"got {credential[:200]!r}."
            )
        self.access_key_id, self.scope_date, self.region, self.service = pieces[:4]
        names = [name.strip().lower() for name in signed_headers.split(";")]
        if not signed_headers or not all(names):
            raise IncompleteSignature(f"SignedHeaders must be header names joined by ';', got {signed_headers!r}.")
        if "host" not in names:
            raise IncompleteSignature("'Host' must be a 'SignedHeader' in the AWS Authorization.")
        self.signed_headers = names
        self.signature = signature
        self.amz_date = amz_date


def _header_parts(authorization: str, amz_date: str | None) -> _Parts:
    """The parts of ``Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...``."""
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm != ALGORITHM:
        raise IncompleteSignature(
            f"Unsupported authorization algorithm {algorithm[:40]!r}: sqsemu --auth sigv4 accepts {ALGORITHM} only."
        )
    fields: dict[str, str] = {}
    for item in rest.split(","):
        key, sep, value = item.strip().partition("=")
        if sep:
            fields[key.strip()] = value.strip()
    missing = [
        f"Authorization header requires '{name}' parameter."
        for name in ("Credential", "Signature", "SignedHeaders")
        if not fields.get(name)
    ]
    if amz_date is None:
        missing.append("Authorization header requires existence of an 'X-Amz-Date' header.")
    if missing:
        raise IncompleteSignature(" ".join(missing))
    assert amz_date is not None
    return _Parts(fields["Credential"], fields["SignedHeaders"], fields["Signature"], amz_date)


_QUERY_PARTS = (
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
)


def _query_parts(params: dict[str, str]) -> tuple[_Parts, int]:
    """The parts of a presigned URL and its ``X-Amz-Expires`` (seconds)."""
    missing = [f"AWS query-string parameters must include '{name}'." for name in _QUERY_PARTS if not params.get(name)]
    if missing:
        raise IncompleteSignature(" ".join(missing))
    if params["X-Amz-Algorithm"] != ALGORITHM:
        raise IncompleteSignature(
            f"X-Amz-Algorithm only supports '{ALGORITHM}', got {params['X-Amz-Algorithm'][:40]!r}."
        )
    expires = params["X-Amz-Expires"]
    significant = expires.lstrip("0")  # int() of thousands of digits raises (Python refuses over 4,300)
    if (
        not (expires.isascii() and expires.isdigit())
        or len(significant) > 19
        or not 1 <= int(significant or "0") <= MAX_EXPIRES_S
    ):
        raise IncompleteSignature(f"X-Amz-Expires must be a number of seconds from 1 to {MAX_EXPIRES_S}.")
    parts = _Parts(
        params["X-Amz-Credential"], params["X-Amz-SignedHeaders"], params["X-Amz-Signature"], params["X-Amz-Date"]
    )
    return parts, int(significant)


_NOT_SIGNED_IN_QUERY = frozenset(("x-amz-date", "x-amz-security-token", "x-amz-content-sha256"))


def _check_signed_headers(scope: Scope, parts: _Parts, presigned: bool) -> None:
    """Every ``x-amz-*`` header the request carries, and (header-signed) its ``Content-Type``, must be among the
    signed headers (AWS General Reference, "Create a canonical request for Signature Version 4": the canonical
    headers must include ``host``, ``Content-Type`` when present and any ``x-amz-*`` header the request includes).
    Otherwise a captured request could be replayed, within its 15 minutes, with another ``X-Amz-Target`` (another
    action on the same body). Raises SignatureDoesNotMatch naming the header."""
    signed = set(parts.signed_headers)
    unsigned = {raw.decode("latin-1").lower() for raw, _ in scope["headers"]} - signed
    for name in sorted(unsigned):
        if name.startswith("x-amz-") and not (presigned and name in _NOT_SIGNED_IN_QUERY):
            raise SignatureDoesNotMatch(f"The header {name} is not among the SignedHeaders; every x-amz-* header "
                                        "sent must be signed.")  # fmt: skip
    if "content-type" in unsigned and not presigned:
        raise SignatureDoesNotMatch("The header content-type is not among the SignedHeaders; it must be signed "
                                    "when sent.")  # fmt: skip


class SigV4Verifier:
    """Verifies requests against ``config.credentials`` (module docstring); ``now`` is the wall clock (epoch s)."""

    def __init__(self, config: Config, now: Callable[[], float] = time.time) -> None:
        missing = botocore_missing(config.auth)
        if missing:
            raise RuntimeError(missing)
        from botocore.auth import SigV4Auth, SigV4QueryAuth
        from botocore.awsrequest import AWSRequest, HTTPHeaders
        from botocore.credentials import Credentials

        self._credentials: dict[str, Credential] = {c.access_key_id: c for c in config.credentials}
        self._account_id = config.account_id
        self._region = config.region
        self._now = now
        self._request_class = AWSRequest
        self._headers_class = HTTPHeaders
        self._botocore_credentials = Credentials

        class Given:
            """What a signer is told instead of working it out: the client's signed headers and its body hash."""

            signed: Any
            body_hash: str

            def headers_to_sign(self, request: Any) -> Any:
                return self.signed

            def payload(self, request: Any) -> str:
                return self.body_hash

        class HeaderSigner(Given, SigV4Auth):  # type: ignore[misc]
            """botocore's signer, with the signed headers and the body hash given."""

        class QuerySigner(Given, SigV4QueryAuth):  # type: ignore[misc]
            """botocore's presigned-URL signer, likewise."""

        self._signers = (HeaderSigner, QuerySigner)
        self.sessions: Sessions | None = None
        """The server's temporary credentials (AWS STS), set by the app: None accepts configured keys only."""

    def verify(self, scope: Scope, body: bytes, service: str = SERVICE) -> Namespace:
        """Check the signature of the request ``scope`` (ASGI HTTP scope) with ``body``, scoped to ``service``
        (``sqs``; the Lambda API passes ``lambda``); the caller's namespace, or raise one of the errors of
        :mod:`sqsemu.security.errors`."""
        return self.verify_key(scope, body, service)[0]

    def verify_key(self, scope: Scope, body: bytes, service: str = SERVICE) -> tuple[Namespace, str]:
        """:meth:`verify`, with the access key id that signed (``--auth iam`` finds its identity by it)."""
        authorization: str | None = None
        amz_date: str | None = None
        for name, value in scope["headers"]:
            if name == b"authorization" and authorization is None:
                authorization = value.decode("latin-1")
            elif name == b"x-amz-date" and amz_date is None:
                amz_date = value.decode("latin-1").strip()
        query: list[tuple[str, str]] = []
        if scope["query_string"]:
            query = parse_qsl(scope["query_string"].decode("utf-8", "replace"), keep_blank_values=True)
        presigned = False
        expires = 0
        if authorization is not None:
            parts = _header_parts(authorization, amz_date)
        else:
            params = dict(query)
            if "X-Amz-Signature" not in params and "X-Amz-Credential" not in params:
                raise MissingAuthenticationToken()
            parts, expires = _query_parts(params)
            presigned = True
        try:
            return self._verified(scope, body, query, parts, presigned, expires, service)
        except (InvalidClientTokenId, SignatureDoesNotMatch, RequestExpired, ExpiredToken) as exc:
            exc.access_key_id = parts.access_key_id  # the refusal's log line names it (sqsemu.http.app)
            raise

    def _verified(
        self,
        scope: Scope,
        body: bytes,
        query: list[tuple[str, str]],
        parts: _Parts,
        presigned: bool,
        expires: int,
        service: str,
    ) -> tuple[Namespace, str]:
        """Checks 3 to 6 of the module docstring, once the signature's parts are read."""
        credential = self._credentials.get(parts.access_key_id)
        if credential is not None:
            account, secret = credential.account_for(self._account_id), credential.secret_access_key
        elif self.sessions is not None:  # temporary credentials (AWS STS): InvalidClientTokenId, ExpiredToken
            session, secret = self.sessions.resolve(parts.access_key_id, security_token(scope["headers"], query))
            account = session.account
        else:
            raise InvalidClientTokenId()
        signed_at = _parse_timestamp(parts.amz_date, "X-Amz-Date")
        now = self._now()
        _check_not_ahead(signed_at, now, parts.amz_date)
        if presigned:
            if now > signed_at + expires:
                raise RequestExpired()
        elif signed_at < now - SKEW_S:
            raise SignatureDoesNotMatch(
                f"Signature expired: {parts.amz_date} is now earlier than {_stamp(now - SKEW_S)} "
                f"({_stamp(now)} - 15 min.)"
            )
        _check_signed_headers(scope, parts, presigned)
        if parts.service != service:
            raise SignatureDoesNotMatch(f"Credential should be scoped to correct service: '{service}'.")
        if parts.scope_date != parts.amz_date[:8]:
            raise SignatureDoesNotMatch(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                f"'{parts.scope_date[:20]}' != '{parts.amz_date[:8]}', from '{parts.amz_date}'."
            )
        expected = self._expected_signature(scope, body, query, parts, secret, presigned)
        if not hmac.compare_digest(expected.encode("ascii"), parts.signature.encode("utf-8", "replace")):
            raise SignatureDoesNotMatch()
        region = parts.region if valid_region(parts.region) else self._region
        return Namespace(account, region), parts.access_key_id

    def _expected_signature(
        self,
        scope: Scope,
        body: bytes,
        query: list[tuple[str, str]],
        parts: _Parts,
        secret: str,
        presigned: bool,
    ) -> str:
        """What botocore's signer makes of the received request with the key's ``secret``."""
        wanted = set(parts.signed_headers)
        signed = self._headers_class()
        for name, value in scope["headers"]:
            lname = name.decode("latin-1").lower()
            if lname in wanted:
                signed[lname] = value.decode("utf-8", "replace")
        body_hash = hashlib.sha256(body).hexdigest()
        claimed = signed.get("x-amz-content-sha256")
        if claimed is not None and claimed.strip() != body_hash:
            raise SignatureDoesNotMatch("The provided 'x-amz-content-sha256' header does not match what was computed.")
        params = [(k, v) for k, v in query if k != "X-Amz-Signature"] if presigned else query
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        request = self._request_class(
            method=scope["method"],
            url="http://sqsemu" + raw_path.decode("latin-1"),
            params=params,
        )
        request.context["timestamp"] = parts.amz_date
        signer_class = self._signers[1] if presigned else self._signers[0]
        keys = self._botocore_credentials(parts.access_key_id, secret)
        signer = signer_class(keys, parts.service, parts.region)
        signer.signed = signed
        signer.body_hash = body_hash
        canonical = signer.canonical_request(request)
        return str(signer.signature(signer.string_to_sign(request, canonical), request))
