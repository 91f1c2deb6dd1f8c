"""The errors the security layer answers with, each an :class:`~sqsemu.engine.errors.SQSError` so the app renders
it in the request's wire format (JSON 1.0, Query XML, Query as JSON) from the one table in
:mod:`sqsemu.protocol.errors`.

Codes, HTTP statuses and messages follow the AWS pages "Common Errors" (Amazon SQS API Reference) and what SQS
answers in practice:

============================  ======  =====================================================================
code (Query ``<Code>``)       status  message
============================  ======  =====================================================================
AccessDenied                  403     ``Access to the resource <url> is denied.`` (cross-site refusals add why)
MissingAuthenticationToken    403     ``Request is missing Authentication Token``
InvalidClientTokenId          403     ``The security token included in the request is invalid.``
SignatureDoesNotMatch         403     ``The request signature we calculated does not match the signature you
                                      provided. Check your AWS Secret Access Key and signing method. Consult
                                      the service documentation for details.``; also ``Signature expired: ...``
                                      for a header-signed request older than 15 minutes, as SQS answers
RequestExpired                400     ``Request has expired.`` (a presigned URL past ``X-Amz-Expires``)
ExpiredToken                  403     ``The security token included in the request is expired`` (temporary
                                      credentials past their expiry: ``sqsemu.security.sessions``)
IncompleteSignature           400     what is missing from the ``Authorization`` header or presigned query
============================  ======  =====================================================================
"""

from __future__ import annotations

from sqsemu.engine.errors import AccessDenied, SQSError

__all__ = [
    "AccessDenied",
    "CrossSiteRefused",
    "ExpiredToken",
    "IncompleteSignature",
    "InvalidClientTokenId",
    "MissingAuthenticationToken",
    "RequestExpired",
    "SignatureDoesNotMatch",
]

SIGNATURE_MISMATCH_MESSAGE = (
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access "
    "Key and signing method. Consult the service documentation for details."
)


class CrossSiteRefused(AccessDenied):
    """A browser request from an origin ``--cors-origins`` does not allow (HTTP 403, code ``AccessDenied``)."""


class MissingAuthenticationToken(SQSError):
    """``--auth sigv4`` and the request carries no signature at all (HTTP 403)."""

    shape = "MissingAuthenticationToken"

    def __init__(self, message: str = "Request is missing Authentication Token") -> None:
        super().__init__(message)


class InvalidClientTokenId(SQSError):
    """The access key id is not one of the configured ``[[credentials]]`` (HTTP 403)."""

    shape = "InvalidClientTokenId"
    access_key_id: str | None = None
    """The access key id the request offered (set by the verifier; the refusal's log line names it)."""

    def __init__(self, message: str = "The security token included in the request is invalid.") -> None:
        super().__init__(message)


class SignatureDoesNotMatch(SQSError):
    """The signature is not the one the key's secret gives, or the signed time is too far off (HTTP 403)."""

    shape = "SignatureDoesNotMatch"
    access_key_id: str | None = None
    """The access key id the request offered (set by the verifier; the refusal's log line names it)."""

    def __init__(self, message: str = SIGNATURE_MISMATCH_MESSAGE) -> None:
        super().__init__(message)


class RequestExpired(SQSError):
    """A presigned URL used after ``X-Amz-Date`` + ``X-Amz-Expires`` (HTTP 400)."""

    shape = "RequestExpired"
    access_key_id: str | None = None
    """The access key id the request offered (set by the verifier; the refusal's log line names it)."""

    def __init__(self, message: str = "Request has expired.") -> None:
        super().__init__(message)


class ExpiredToken(SQSError):
    """Temporary credentials (AWS STS) used past their expiry, by the server clock (HTTP 403; the code and message
    SQS and STS answer: recorded SQS answers show ``<Code>ExpiredToken</Code>`` and this message, no final stop)."""

    shape = "ExpiredToken"
    access_key_id: str | None = None
    """The access key id the request offered (set by the verifier; the refusal's log line names it)."""

    def __init__(self, message: str = "The security token included in the request is expired") -> None:
        super().__init__(message)


class IncompleteSignature(SQSError):
    """A signature whose parts are missing or malformed (HTTP 400)."""

    shape = "IncompleteSignature"
