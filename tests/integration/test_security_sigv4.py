"""--auth sigv4, --admin-token and --no-admin over real HTTP: boto3 clients of both protocols sign and are served
with the right key, refused with AWS's errors otherwise; presigned Query URLs work until they expire; the admin
routes need the token; SQSServer (the testing API) passes credentials and token itself."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock
from urllib.parse import urlencode, urlsplit

import pytest
from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from harness import ServerProcess, SignedClients, client_for, error_of, raw_request

from sqsemu.config import Credential
from sqsemu.testing import AdminAPIError, SQSServer

pytestmark = pytest.mark.integration

KEY, SECRET, ACCOUNT = "AKIDSQSEMUTEST", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "123456789012"
TOKEN = "admin-t0ken"
CONFIG = f"""
[server]
auth = "sigv4"

[[credentials]]
access_key_id = "{KEY}"
secret_access_key = "{SECRET}"
account = "{ACCOUNT}"

[[credentials]]
access_key_id = "210987654321"
secret_access_key = "second-secret"
"""


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("sigv4") / "sqsemu.toml"
    path.write_text(CONFIG)
    with ServerProcess(["--config", str(path), "--admin-token", TOKEN]) as srv:
        yield srv


@pytest.fixture
def make_client(auth_server: ServerProcess, protocol: str) -> Iterator[Any]:
    with SignedClients(auth_server.endpoint_url, protocol) as clients:
        yield lambda key=KEY, secret=SECRET: clients.make(key, secret)


def admin(srv: ServerProcess, method: str, path: str, headers: dict[str, str] | None = None) -> Any:
    body = b"{}" if method == "POST" else b""
    return raw_request(srv.endpoint_url, method, path, body, {"Content-Type": "application/json", **(headers or {})})


def sign(request: AWSRequest, at: datetime | None = None, expires: int | None = None, secret: str = SECRET) -> None:
    """Sign ``request`` with botocore as a client would (at ``at``, presigned when ``expires`` is given)."""
    keys = Credentials(KEY, secret)
    signer: SigV4Auth
    if expires is None:
        signer = SigV4Auth(keys, "sqs", "us-east-1")
    else:
        signer = SigV4QueryAuth(keys, "sqs", "us-east-1", expires=expires)
    when = (at or datetime.now(UTC)).replace(tzinfo=None)
    with mock.patch("botocore.auth.get_current_datetime", return_value=when):
        signer.add_auth(request)


def send(srv: ServerProcess, request: AWSRequest) -> Any:
    parts = urlsplit(request.url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    headers = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()}
    headers["Host"] = parts.netloc
    return raw_request(srv.endpoint_url, request.method, path, request.body or b"", headers)


# ------------------------------------------------------------------------------------------------ SDK clients


def test_signed_clients_work_end_to_end_as_their_keys_account(make_client: Any) -> None:
    sqs = make_client()
    url = sqs.create_queue(QueueName=f"signed-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    assert f"/{ACCOUNT}/" in url
    sqs.send_message(
        QueueUrl=url, MessageBody="signed é body", MessageAttributes={"k": {"DataType": "String", "StringValue": "v ü"}}
    )
    [message] = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    assert message["Body"] == "signed é body"
    sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert arn.startswith(f"arn:aws:sqs:us-east-1:{ACCOUNT}:")
    second = make_client("210987654321", "second-secret")  # account = its 12-digit key id
    assert url not in second.list_queues().get("QueueUrls", [])
    sqs.delete_queue(QueueUrl=url)


def test_a_wrong_secret_is_signature_does_not_match(make_client: Any) -> None:
    code, status, message = error_of(make_client(secret="not-the-secret").list_queues)
    assert (code, status) == ("SignatureDoesNotMatch", 403)
    assert message.startswith("The request signature we calculated does not match the signature you provided.")


def test_an_unknown_key_is_invalid_client_token_id(make_client: Any) -> None:
    code, status, message = error_of(make_client("AKIDNOBODY", "x").list_queues)
    assert (code, status, message) == (
        "InvalidClientTokenId",
        403,
        "The security token included in the request is invalid.",
    )


@pytest.mark.parametrize("protocol_of_request", ["query", "json"])
def test_an_unsigned_request_is_missing_authentication_token(
    auth_server: ServerProcess, protocol_of_request: str
) -> None:
    if protocol_of_request == "query":
        resp = raw_request(auth_server.endpoint_url, "GET", "/?Action=ListQueues", b"", {})
        assert "<Code>MissingAuthenticationToken</Code>" in resp.text
    else:
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"}
        resp = raw_request(auth_server.endpoint_url, "POST", "/", b"{}", headers)
        assert resp.json()["message"] == "Request is missing Authentication Token"
    assert resp.status == 403
    assert resp.headers["x-amzn-query-error"] == "MissingAuthenticationToken;Sender"


def test_a_header_signature_older_than_15_minutes_is_refused(auth_server: ServerProcess) -> None:
    request = AWSRequest(
        method="POST",
        url=f"{auth_server.endpoint_url}/",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        data=b"Action=ListQueues&Version=2012-11-05",
    )
    sign(request, at=datetime.now(UTC) - timedelta(minutes=20))
    resp = send(auth_server, request)
    assert resp.status == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in resp.text and "Signature expired:" in resp.text


def test_a_captured_request_cannot_be_replayed_as_another_action(make_client: Any, auth_server: ServerProcess) -> None:
    # A request whose signature leaves X-Amz-Target (and Content-Type) out: its body is signed, its action is
    # not. Replayed with another target it would run that action; every x-amz-* header sent must be signed.
    sqs = make_client()
    url = sqs.create_queue(QueueName=f"replayed-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    request = AWSRequest(method="POST", url=f"{auth_server.endpoint_url}/", data=json.dumps({"QueueUrl": url}))
    sign(request)  # host and x-amz-date only
    request.headers["Content-Type"] = "application/x-amz-json-1.0"
    request.headers["X-Amz-Target"] = "AmazonSQS.DeleteQueue"
    resp = send(auth_server, request)
    assert resp.status == 403, resp.text
    assert resp.headers["x-amzn-query-error"] == "SignatureDoesNotMatch;Sender"
    assert "x-amz-target" in resp.json()["message"]
    assert sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])["QueueUrl"] == url
    sqs.delete_queue(QueueUrl=url)


# ------------------------------------------------------------------------------------------------ presigned URLs


def test_a_presigned_query_url_from_the_query_client_works(auth_server: ServerProcess) -> None:
    client = client_for(auth_server.endpoint_url, "query", access_key_id=KEY, secret_access_key=SECRET)
    try:
        url = client.generate_presigned_url(
            ClientMethod="list_queues", Params={"QueueNamePrefix": "signed"}, ExpiresIn=300
        )
    finally:
        client.close()
    assert "X-Amz-Signature=" in url and "Action=ListQueues" in url
    parts = urlsplit(url)
    # botocore signs the Query operation's POST and moves its form into the URL: POST it with an empty body.
    resp = raw_request(auth_server.endpoint_url, "POST", f"{parts.path}?{parts.query}", b"", {"Host": parts.netloc})
    assert resp.status == 200, resp.text
    assert "<ListQueuesResponse" in resp.text


def test_a_hand_built_presigned_get_works_until_it_expires(auth_server: ServerProcess) -> None:
    sqs = client_for(auth_server.endpoint_url, "json", access_key_id=KEY, secret_access_key=SECRET)
    queue = sqs.create_queue(QueueName=f"presigned-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    params = urlencode({"Action": "SendMessage", "MessageBody": "via a presigned URL!", "Version": "2012-11-05"})
    request = AWSRequest(method="GET", url=f"{queue}?{params}")
    sign(request, expires=60)
    resp = send(auth_server, request)
    assert resp.status == 200, resp.text
    [message] = sqs.receive_message(QueueUrl=queue)["Messages"]
    assert message["Body"] == "via a presigned URL!"

    expired = AWSRequest(method="GET", url=f"{queue}?{params}")
    sign(expired, at=datetime.now(UTC) - timedelta(minutes=2), expires=60)
    resp = send(auth_server, expired)
    assert resp.status == 400
    assert "<Code>RequestExpired</Code>" in resp.text and "<Message>Request has expired.</Message>" in resp.text
    tampered = AWSRequest(method="GET", url=f"{queue}?{params}")
    sign(tampered, expires=60)
    assert "presigned%20URL" in tampered.url
    tampered.url = tampered.url.replace("presigned%20URL", "forged%20URL")
    assert send(auth_server, tampered).status == 403
    sqs.delete_queue(QueueUrl=queue)


# ------------------------------------------------------------------------------------------------ admin routes


def test_the_admin_routes_need_the_token(auth_server: ServerProcess) -> None:
    resp = admin(auth_server, "GET", "/_sqsemu/queues")
    assert resp.status == 401 and "X-Sqsemu-Admin-Token" in resp.json()["error"]
    resp = admin(auth_server, "POST", "/_sqsemu/reset", {"X-Sqsemu-Admin-Token": "guess"})
    assert resp.status == 403
    assert admin(auth_server, "GET", "/_sqsemu/queues", {"X-Sqsemu-Admin-Token": TOKEN}).status == 200
    assert admin(auth_server, "GET", "/health").status == 200  # no token, no signature


def test_no_admin_switches_the_admin_routes_off_but_not_health() -> None:
    with ServerProcess(["--no-admin"]) as srv:
        for method, path in (("GET", "/_sqsemu/queues"), ("POST", "/_sqsemu/reset"), ("GET", "/_sqsemu/clock")):
            resp = admin(srv, method, path)
            assert resp.status == 404, path
        assert json.loads(admin(srv, "GET", "/health").body)["status"] == "ok"


# ------------------------------------------------------------------------------------------------ testing API


def test_sqs_server_passes_credentials_and_the_admin_token() -> None:
    credentials = (Credential(KEY, SECRET, ACCOUNT), Credential("other-key", "other-secret", "210987654321"))
    with SQSServer(auth="sigv4", credentials=credentials, admin_token=TOKEN) as server:
        sqs = server.client(ACCOUNT)
        url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hi")
        [peeked] = server.peek(url)
        assert peeked["body"] == "hi"
        assert {q["account"] for q in server.queues()} == {ACCOUNT}
        server.advance(30)
        rule = server.inject(action="ListQueues", error="ServiceUnavailable", count=1)
        assert rule
        server.clear_faults()
        assert server.client("210987654321").list_queues().get("QueueUrls") is None
        with pytest.raises(ValueError, match="no configured credential"):
            server.client("999999999999")
        with pytest.raises(ClientError):
            server.client(ACCOUNT, aws_access_key_id=KEY, aws_secret_access_key="wrong").list_queues()
        assert server.reset() == 1
    with SQSServer(admin=False) as server:
        with pytest.raises(AdminAPIError) as caught:
            server.queues()
        assert caught.value.status == 404
