"""Identities as AWS has them (issue 41, finding 3), over real sockets with boto3 clients of both protocols: a key
configured with ``principal`` and no ``account`` acts in its principal's account, an ``account`` that disagrees is
refused at start, messages carry the ``SenderId`` SQS gives a user's or a role's, and the configuration examples of
docs/security.md run as written (read from the page, like the worked examples' policies)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import client_for, error_of

from sqsemu.config import Config, Credential
from sqsemu.declare import config_from_file
from sqsemu.security.evaluate import principal_for
from sqsemu.security.identity import unique_id
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

A = "111111111111"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"
ALLOW_A = (
    '{"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "sqs:*", '
    '"Resource": "arn:aws:sqs:*:111111111111:*"}}'
)


def doc_block(kind: str, name: str) -> str:
    """The code block after ``<!-- kind: name -->`` in docs/security.md, as it stands."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(rf"<!-- {kind}: {re.escape(name)} -->\n```[a-z]+\n(.*?)```", text, re.DOTALL)
    assert found is not None, name
    return found.group(1)


def received_sender(sqs: object, url: str) -> str:
    messages = sqs.receive_message(QueueUrl=url, AttributeNames=["SenderId"])["Messages"]  # type: ignore[attr-defined]
    return str(messages[0]["Attributes"]["SenderId"])


def test_an_identity_acts_in_its_principals_account(protocol: str) -> None:
    credentials = (
        Credential("AKIDROOTA", "secret-root", A),
        Credential(
            "AKIDORDERS", "secret-orders", principal=f"arn:aws:iam::{A}:role/orders-service", policies=(ALLOW_A,)
        ),
        Credential("AKIDALICE", "secret-alice", principal=f"arn:aws:iam::{A}:user/alice", policies=(ALLOW_A,)),
    )
    with ServerThread(Config(host="127.0.0.1", auth="iam", credentials=credentials)) as srv:  # account_id: default
        root, role, user = (
            client_for(srv.endpoint_url, protocol, access_key_id=c.access_key_id, secret_access_key=c.secret_access_key)
            for c in credentials
        )
        url = root.create_queue(QueueName="orders")["QueueUrl"]
        assert f"/{A}/orders" in url
        assert role.get_queue_url(QueueName="orders")["QueueUrl"] == url
        assert role.list_queues()["QueueUrls"] == [url]
        assert f"/{A}/" in role.create_queue(QueueName="orders-dlq")["QueueUrl"]
        role.send_message(QueueUrl=url, MessageBody="from the role")  # <role id>:<session>, the role's name here
        role_id = unique_id(principal_for(f"arn:aws:iam::{A}:role/orders-service", A))
        assert re.fullmatch(r"AROA[A-Z2-7]{17}", role_id)
        assert received_sender(root, url) == f"{role_id}:orders-service"
        user.send_message(QueueUrl=url, MessageBody="from the user")
        sender = received_sender(root, url)
        assert re.fullmatch(r"AIDA[A-Z2-7]{17}", sender), sender
        assert sender == unique_id(principal_for(f"arn:aws:iam::{A}:user/alice", A))
        root.send_message(QueueUrl=url, MessageBody="from the root user")
        assert received_sender(root, url) == A


@pytest.mark.parametrize("auth", ["iam", "sigv4"])
def test_an_account_that_disagrees_with_the_principal_is_refused(auth: str) -> None:
    role = f"arn:aws:iam::{A}:role/orders-service"
    credential = Credential("AKIDORDERS", "secret", "222222222222", role, (ALLOW_A,) if auth == "iam" else ())
    with pytest.raises(ValueError) as caught:
        Config(auth=auth, credentials=(credential,))
    message = str(caught.value)
    assert "'AKIDORDERS'" in message and "222222222222" in message and f"is in account {A}" in message


def test_the_configuration_examples_of_security_md_run_as_written(tmp_path: Path, protocol: str) -> None:
    """The ``--auth sigv4`` and ``--auth iam`` files of docs/security.md, with the policy file the page shows."""
    (tmp_path / "sigv4.toml").write_text(doc_block("config", "sigv4"))
    sigv4 = config_from_file(tmp_path / "sigv4.toml", host="127.0.0.1")
    key = sigv4.credentials[0]
    with ServerThread(sigv4) as srv:
        sqs = client_for(
            srv.endpoint_url, protocol, access_key_id=key.access_key_id, secret_access_key=key.secret_access_key
        )
        assert "/123456789012/doc" in sqs.create_queue(QueueName="doc")["QueueUrl"]

    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "orders-service.json").write_text(doc_block("policy", "orders-service"))
    (tmp_path / "iam.toml").write_text(doc_block("config", "iam"))
    iam = config_from_file(tmp_path / "iam.toml", host="127.0.0.1")
    secrets = {c.access_key_id: c.secret_access_key for c in iam.credentials}
    with ServerThread(iam) as srv:
        root, role = (
            client_for(srv.endpoint_url, protocol, access_key_id=k, secret_access_key=secrets[k])
            for k in ("AKIDROOT1", "AKIDORDERS")
        )
        url = root.create_queue(QueueName="orders")["QueueUrl"]
        other = root.create_queue(QueueName="payments")["QueueUrl"]
        assert role.get_queue_url(QueueName="orders")["QueueUrl"] == url
        assert sorted(role.list_queues(QueueNamePrefix="orders")["QueueUrls"]) == [url]
        role.send_message(QueueUrl=url, MessageBody="x")
        shown = re.search(r"carry `SenderId` `([A-Z0-9]+:orders-service)`", DOCS.read_text(encoding="utf-8"))
        assert shown is not None
        assert received_sender(role, url) == shown.group(1)  # the role id docs/security.md shows
        code, status, _ = error_of(lambda: role.send_message(QueueUrl=other, MessageBody="x"))
        assert (code, status) == ("AccessDenied", 403)
