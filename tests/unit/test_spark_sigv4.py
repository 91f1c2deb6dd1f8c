"""The data source's own SigV4 signer (sqsemu.spark.sigv4) gives botocore's signature for the same request and
instant, and a server verifying signatures (``auth="sigv4"``) accepts the lean client's calls and refuses a wrong
secret with SignatureDoesNotMatch."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

pytest.importorskip("botocore")

from botocore.auth import SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

from sqsemu.config import Credential  # noqa: E402
from sqsemu.spark.jsonclient import SQSJsonClient  # noqa: E402
from sqsemu.spark.sigv4 import SigV4Signer  # noqa: E402
from sqsemu.testing import SQSServer  # noqa: E402

INSTANT = datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC)


def _botocore_headers(
    monkeypatch: pytest.MonkeyPatch, host: str, body: bytes, token: str | None, region: str
) -> dict[str, str]:
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: INSTANT.replace(tzinfo=None))
    request = AWSRequest(
        method="POST",
        url=f"http://{host}/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ReceiveMessage"},
    )
    SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token), "sqs", region).add_auth(
        request
    )
    return dict(request.headers.items())


@pytest.mark.parametrize("token", [None, "session-token/with+chars="])
def test_signature_matches_botocore(monkeypatch: pytest.MonkeyPatch, token: str | None) -> None:
    body = b'{"QueueUrl":"http://127.0.0.1:9324/000000000000/q","MaxNumberOfMessages":10}'
    signer = SigV4Signer("127.0.0.1:9324", "eu-west-1")
    ours = signer.headers(
        "AmazonSQS.ReceiveMessage",
        body,
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        token,
        now=INSTANT.timestamp(),
    )
    theirs = _botocore_headers(monkeypatch, "127.0.0.1:9324", body, token, "eu-west-1")
    assert ours["Authorization"] == theirs["Authorization"]
    assert ours["X-Amz-Date"] == theirs["X-Amz-Date"] == "20260304T050607Z"
    assert ours.get("X-Amz-Security-Token") == theirs.get("X-Amz-Security-Token") == token
    # The cached signing key serves a second request of the same day; another body signs differently.
    again = signer.headers(
        "AmazonSQS.ReceiveMessage",
        b"{}",
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        token,
        now=INSTANT.timestamp(),
    )
    assert again["Authorization"] != ours["Authorization"]
    assert (
        again["Authorization"]
        == _botocore_headers(monkeypatch, "127.0.0.1:9324", b"{}", token, "eu-west-1")["Authorization"]
    )


class _Static:
    def __init__(self, key: str, secret: str) -> None:
        self.credentials = Credentials(key, secret)

    def __call__(self) -> Any:
        return self.credentials


def test_a_verifying_server_accepts_the_signature_and_refuses_a_wrong_secret() -> None:
    with SQSServer(clock="system", auth="sigv4", credentials=(Credential("AKIDLEAN", "lean-secret"),)) as server:
        url = server.client(account="000000000000").create_queue(QueueName="signed")["QueueUrl"]
        lean = SQSJsonClient(server.endpoint_url, server.region, _Static("AKIDLEAN", "lean-secret"), max_attempts=1)
        lean.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", "MessageBody": "hello"}])
        received = lean.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        assert [m["Body"] for m in received["Messages"]] == ["hello"]
        wrong = SQSJsonClient(server.endpoint_url, server.region, _Static("AKIDLEAN", "not-it"), max_attempts=1)
        with pytest.raises(ClientError) as refused:
            wrong.receive_message(QueueUrl=url)
        assert refused.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
        lean.close()
