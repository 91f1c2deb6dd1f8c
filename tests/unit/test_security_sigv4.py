"""Signature Version 4 verification (sqsemu.security.sigv4): requests signed by botocore's own signers (header and
presigned forms) checked by the verifier on a fixed wall clock, then through the app (no sockets)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sqsemu.config import Config, Credential
from sqsemu.engine.broker import Namespace
from sqsemu.engine.errors import SQSError
from sqsemu.security.errors import (
    IncompleteSignature,
    InvalidClientTokenId,
    MissingAuthenticationToken,
    RequestExpired,
    SignatureDoesNotMatch,
)
from sqsemu.security.sigv4 import SigV4Verifier
from tests.unit.app_helpers import call_asgi, make_app

KEY, SECRET, ACCOUNT = "AKIDSQSEMU", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "123456789012"
SIGNED_AT = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
NOW = SIGNED_AT.timestamp()
CONFIG = Config(
    auth="sigv4",
    region="eu-west-1",
    credentials=(Credential(KEY, SECRET, ACCOUNT), Credential("111122223333", "other"), Credential("plain", "p")),
)
JSON_HEADERS = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"}
FORM = "application/x-www-form-urlencoded; charset=utf-8"


def signed(
    method: str = "POST",
    url: str = "http://localhost:9324/",
    headers: dict[str, str] | None = None,
    body: bytes = b"{}",
    key: str = KEY,
    secret: str = SECRET,
    region: str = "us-east-1",
    service: str = "sqs",
    at: datetime = SIGNED_AT,
    expires: int | None = None,
) -> AWSRequest:
    """A request signed by botocore at ``at`` (presigned when ``expires`` is given)."""
    request = AWSRequest(method=method, url=url, headers=dict(JSON_HEADERS if headers is None else headers), data=body)
    signer: SigV4Auth
    if expires is None:
        signer = SigV4Auth(Credentials(key, secret), service, region)
    else:
        signer = SigV4QueryAuth(Credentials(key, secret), service, region, expires=expires)
    with mock.patch("botocore.auth.get_current_datetime", return_value=at.replace(tzinfo=None)):
        signer.add_auth(request)
    return request


def scope_of(request: AWSRequest) -> tuple[dict[str, Any], bytes]:
    """The ASGI scope and body an HTTP server would hand over for ``request`` (with the Host header it sends)."""
    parts = urlsplit(request.url)
    headers = [(b"host", parts.netloc.encode())]
    headers += [(k.lower().encode(), (v if isinstance(v, bytes) else v.encode())) for k, v in request.headers.items()]
    body = request.body or b""
    scope = {
        "type": "http",
        "method": request.method,
        "scheme": "http",
        "path": parts.path,
        "raw_path": parts.path.encode(),
        "query_string": parts.query.encode(),
        "headers": headers,
    }
    return scope, body


def verify(request: AWSRequest, now: float = NOW, config: Config = CONFIG) -> Namespace:
    scope, body = scope_of(request)
    return SigV4Verifier(config, now=lambda: now).verify(scope, body)


def refused(request: AWSRequest, error: type[SQSError], now: float = NOW, tamper: Any = None) -> SQSError:
    scope, body = scope_of(request)
    if tamper is not None:
        scope, body = tamper(scope, body)
    with pytest.raises(error) as caught:
        SigV4Verifier(CONFIG, now=lambda: now).verify(scope, body)
    return caught.value


# ------------------------------------------------------------------------------------------------ accepted


def test_a_header_signed_request_acts_as_the_keys_account_in_the_scopes_region() -> None:
    assert verify(signed(region="ap-south-1")) == Namespace(ACCOUNT, "ap-south-1")


def test_a_query_form_post_with_a_path_and_unusual_characters() -> None:
    body = b"Action=SendMessage&MessageBody=h%C3%A9llo+w%C3%B6rld%21%2A%27%28%29&QueueUrl=x"
    request = signed(url="http://localhost:9324/123456789012/q%20x%2A", headers={"Content-Type": FORM}, body=body)
    assert verify(request) == Namespace(ACCOUNT, "us-east-1")


def test_a_presigned_get_url() -> None:
    url = "http://127.0.0.1:9324/?Action=ListQueues&QueueNamePrefix=a%20b&Version=2012-11-05"
    request = signed(method="GET", url=url, headers={}, body=b"", expires=300)
    assert "X-Amz-Signature=" in request.url and "Authorization" not in request.headers
    assert verify(request, now=NOW + 299) == Namespace(ACCOUNT, "us-east-1")


def test_the_account_defaults_to_a_12_digit_key_else_the_servers() -> None:
    assert verify(signed(key="111122223333", secret="other")) == Namespace("111122223333", "us-east-1")
    assert verify(signed(key="plain", secret="p")) == Namespace("000000000000", "us-east-1")


def test_a_scope_region_that_is_not_a_region_gives_the_servers_region() -> None:
    assert verify(signed(region="us-east-1:999999999999:evil")) == Namespace(ACCOUNT, "eu-west-1")


def test_the_wall_clock_allows_15_minutes_either_way() -> None:
    assert verify(signed(), now=NOW + 15 * 60)
    assert verify(signed(), now=NOW - 15 * 60)


# ------------------------------------------------------------------------------------------------ refused


def test_no_signature_is_missing_authentication_token() -> None:
    scope, body = scope_of(AWSRequest(method="POST", url="http://localhost:9324/", headers=JSON_HEADERS, data=b"{}"))
    with pytest.raises(MissingAuthenticationToken) as caught:
        SigV4Verifier(CONFIG, now=lambda: NOW).verify(scope, body)
    assert caught.value.message == "Request is missing Authentication Token"


def test_an_unknown_key_is_invalid_client_token_id() -> None:
    error = refused(signed(key="AKIDUNKNOWN"), InvalidClientTokenId)
    assert error.message == "The security token included in the request is invalid."


def test_a_wrong_secret_is_signature_does_not_match() -> None:
    error = refused(signed(secret="wrong"), SignatureDoesNotMatch)
    assert error.message.startswith("The request signature we calculated does not match the signature you provided.")


@pytest.mark.parametrize(
    "tamper",
    [
        lambda scope, body: (scope, b'{"QueueNamePrefix": "x"}'),  # another body
        lambda scope, body: ({**scope, "method": "PUT"}, body),
        lambda scope, body: ({**scope, "raw_path": b"/000000000000/q"}, body),
        lambda scope, body: ({**scope, "query_string": b"Action=PurgeQueue"}, body),
        lambda scope, body: (  # a signed header changed
            {
                **scope,
                "headers": [(k, b"AmazonSQS.PurgeQueue" if k == b"x-amz-target" else v) for k, v in scope["headers"]],
            },
            body,
        ),
        lambda scope, body: (  # another host
            {**scope, "headers": [(k, b"evil:1" if k == b"host" else v) for k, v in scope["headers"]]},
            body,
        ),
    ],
)
def test_an_altered_request_is_signature_does_not_match(tamper: Any) -> None:
    refused(signed(), SignatureDoesNotMatch, tamper=tamper)


def test_unsigned_headers_may_change() -> None:
    scope, body = scope_of(signed())
    scope["headers"].append((b"user-agent", b"changed by a proxy"))
    assert SigV4Verifier(CONFIG, now=lambda: NOW).verify(scope, body) == Namespace(ACCOUNT, "us-east-1")


@pytest.mark.parametrize(
    ("added", "named"),
    [
        ({"X-Amz-Target": "AmazonSQS.DeleteQueue", "Content-Type": "application/x-amz-json-1.0"}, "x-amz-target"),
        ({"Content-Type": FORM}, "content-type"),
        ({"X-Amz-Security-Token": "token"}, "x-amz-security-token"),
    ],
)
def test_an_x_amz_or_content_type_header_sent_but_not_signed_is_refused(added: dict[str, str], named: str) -> None:
    # Signed with no header but host and x-amz-date: valid as far as it goes, but the action (X-Amz-Target) and the
    # content type are not covered, so a captured request could be replayed as another action.
    request = signed(headers={}, body=b"Action=ListQueues")
    for name, value in added.items():
        request.headers[name] = value
    error = refused(request, SignatureDoesNotMatch)
    assert named in error.message


def test_a_presigned_url_needs_no_signed_content_type() -> None:
    request = signed(method="GET", url="http://localhost:9324/?Action=ListQueues", headers={}, body=b"", expires=60)
    request.headers["Content-Type"] = FORM
    assert verify(request) == Namespace(ACCOUNT, "us-east-1")


def test_a_header_signed_request_older_or_newer_than_15_minutes_is_refused_as_sqs_does() -> None:
    error = refused(signed(), SignatureDoesNotMatch, now=NOW + 15 * 60 + 1)
    assert error.message == (
        "Signature expired: 20240501T120000Z is now earlier than 20240501T120001Z (20240501T121501Z - 15 min.)"
    )
    error = refused(signed(), SignatureDoesNotMatch, now=NOW - 15 * 60 - 1)
    assert error.message.startswith("Signature not yet current: 20240501T120000Z is still later than")


def test_a_presigned_url_past_its_expiry_is_request_expired() -> None:
    request = signed(method="GET", url="http://localhost:9324/?Action=ListQueues", headers={}, body=b"", expires=60)
    error = refused(request, RequestExpired, now=NOW + 61)
    assert error.message == "Request has expired."
    refused(request, SignatureDoesNotMatch, now=NOW - 16 * 60)  # dated ahead of the clock


def test_a_tampered_presigned_url_is_refused() -> None:
    request = signed(method="GET", url="http://localhost:9324/?Action=ListQueues", headers={}, body=b"", expires=60)
    refused(
        request,
        SignatureDoesNotMatch,
        tamper=lambda scope, body: (
            {**scope, "query_string": scope["query_string"].replace(b"ListQueues", b"PurgeQueue")},
            body,
        ),
    )
    refused(
        request,
        SignatureDoesNotMatch,
        tamper=lambda scope, body: (
            {**scope, "query_string": scope["query_string"].replace(b"X-Amz-Expires=60", b"X-Amz-Expires=600")},
            body,
        ),
    )


def test_another_service_is_refused() -> None:
    error = refused(signed(service="sns"), SignatureDoesNotMatch)
    assert error.message == "Credential should be scoped to correct service: 'sqs'."


def test_a_signed_content_hash_must_be_the_bodys() -> None:
    headers = {**JSON_HEADERS, "X-Amz-Content-SHA256": "0" * 64}
    refused(signed(headers=headers), SignatureDoesNotMatch)
    headers["X-Amz-Content-SHA256"] = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"  # of b"{}"
    assert verify(signed(headers=headers))


@pytest.mark.parametrize(
    ("authorization", "expected"),
    [
        ("AWS AKIDSQSEMU:c2lnbmF0dXJl", "Unsupported authorization algorithm 'AWS'"),
        (
            "AWS4-HMAC-SHA256 Credential=AKIDSQSEMU/20240501/us-east-1/sqs/aws4_request",
            "Authorization header requires 'Signature' parameter.",
        ),
        ("AWS4-HMAC-SHA256 Credential=AKIDSQSEMU/us-east-1, SignedHeaders=host, Signature=ab", "Credential must have"),
        (
            "AWS4-HMAC-SHA256 Credential=AKIDSQSEMU/20240501/us-east-1/sqs/aws4_request, SignedHeaders=x-amz-date, "
            "Signature=ab",
            "'Host' must be a 'SignedHeader'",
        ),
    ],
)
def test_a_malformed_authorization_header_is_incomplete_signature(authorization: str, expected: str) -> None:
    def swap(scope: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        headers = [(k, authorization.encode() if k == b"authorization" else v) for k, v in scope["headers"]]
        return {**scope, "headers": headers}, body

    error = refused(signed(), IncompleteSignature, tamper=swap)
    assert expected in error.message


def test_a_missing_or_malformed_x_amz_date_is_incomplete_signature() -> None:
    def drop(scope: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        return {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"x-amz-date"]}, body

    assert "X-Amz-Date" in refused(signed(), IncompleteSignature, tamper=drop).message

    def garble(scope: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        headers = [(k, b"2024-05-01" if k == b"x-amz-date" else v) for k, v in scope["headers"]]
        return {**scope, "headers": headers}, body

    assert "ISO-8601" in refused(signed(), IncompleteSignature, tamper=garble).message


def test_a_presigned_url_missing_parts_is_incomplete_signature() -> None:
    request = signed(method="GET", url="http://localhost:9324/?Action=ListQueues", headers={}, body=b"", expires=60)

    def drop_expires(scope: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        query = b"&".join(p for p in scope["query_string"].split(b"&") if not p.startswith(b"X-Amz-Expires"))
        return {**scope, "query_string": query}, body

    assert "X-Amz-Expires" in refused(request, IncompleteSignature, tamper=drop_expires).message


@pytest.mark.parametrize(
    ("expires", "error"),
    [("9" * 4301, IncompleteSignature), ("0" * 4300 + "1", SignatureDoesNotMatch)],
    ids=["4301-digits", "4301-with-zeros"],
)
def test_an_x_amz_expires_of_thousands_of_digits_is_refused_not_a_crash(expires: str, error: type[SQSError]) -> None:
    """Python's int() refuses strings of over 4,300 digits: 4,301 nines are past the 7-day limit; 4,300 zeros and a 1
    are one second, and the URL no longer matches its signature."""
    request = signed(method="GET", url="http://localhost:9324/?Action=ListQueues", headers={}, body=b"", expires=60)

    def lengthen(scope: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        query = scope["query_string"].replace(b"X-Amz-Expires=60", b"X-Amz-Expires=" + expires.encode())
        return {**scope, "query_string": query}, body

    refused(request, error, tamper=lengthen)


# ------------------------------------------------------------------------------------------------ through the app


def _send(app: Any, request: AWSRequest) -> Any:
    scope, body = scope_of(request)
    headers = {k.decode(): v.decode() for k, v in scope["headers"]}
    return asyncio.run(call_asgi(app, request.method, scope["path"], headers, body, query_string=scope["query_string"]))


def test_the_app_serves_signed_requests_and_refuses_others_in_their_protocol() -> None:
    app, broker = make_app(CONFIG)
    now = datetime.now(UTC)
    create = signed(
        body=json.dumps({"QueueName": "q"}).encode(),
        headers={**JSON_HEADERS, "X-Amz-Target": "AmazonSQS.CreateQueue"},
        at=now,
    )
    resp = _send(app, create)
    assert resp.status == 200, resp.text
    assert [q.name for q in broker.list_queues(Namespace(ACCOUNT, "us-east-1"), None)] == ["q"]

    resp = _send(app, signed(secret="wrong", at=now))
    assert resp.status == 403
    assert resp.headers["x-amzn-query-error"] == "SignatureDoesNotMatch;Sender"

    form = signed(headers={"Content-Type": FORM}, body=b"Action=ListQueues&Version=2012-11-05", key="nobody", at=now)
    resp = _send(app, form)
    assert resp.status == 403 and "<Code>InvalidClientTokenId</Code>" in resp.text

    resp = asyncio.run(call_asgi(app, "GET", "/", {"Host": "localhost:9324"}, query_string=b"Action=ListQueues"))
    assert resp.status == 403 and "<Code>MissingAuthenticationToken</Code>" in resp.text

    an_hour_ago = datetime.fromtimestamp(now.timestamp() - 3600, UTC)
    presigned = signed(
        method="GET", url="http://localhost:9324/?Action=ListQueues", headers={}, body=b"", expires=60, at=an_hour_ago
    )
    resp = _send(app, presigned)
    assert resp.status == 400 and "<Code>RequestExpired</Code>" in resp.text
