"""Explanations that teach (issue 41, finding 5), over real sockets with an in-process server (ServerThread) and
clients of both protocols: a denial's log line and ``POST /_sqsemu/authorize`` list every policy evaluated, each
statement matched or not with its first failing element, the queue policy or its absence, and a queue that does
not exist; a signature refusal's line names the key id offered and the action, with or without ``--access-log``."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from harness import SignedClients, error_of, raw_request

from sqsemu.config import Config, Credential
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

A = "111111111111"
READ_ONLY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "read-only", "Effect": "Allow", "Action": ["sqs:Get*", "sqs:ReceiveMessage"], "Resource": "*"},
            {"Sid": "never-purge", "Effect": "Deny", "Action": "sqs:PurgeQueue", "Resource": "*"},
            {
                "Sid": "send-from-vpn",
                "Effect": "Allow",
                "Action": "sqs:SendMessage",
                "Resource": "*",
                "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}},
            },
        ],
    }
)
ELSEWHERE = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "other-queues",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{A}:role/reader"},
                "Action": "sqs:SendMessage",
                "Resource": f"arn:aws:sqs:us-east-1:{A}:somewhere-else",
            }
        ],
    }
)
ROOT = ("AKIDEXPLROOT", "root-secret")
READER = ("AKIDEXPLREADER", "reader-secret")
NOBODY = ("AKIDEXPLNOBODY", "nobody-secret")
CREDENTIALS = (
    Credential(ROOT[0], ROOT[1], A),
    Credential(READER[0], READER[1], A, f"arn:aws:iam::{A}:role/reader", (READ_ONLY,)),
    Credential(NOBODY[0], NOBODY[1], A, f"arn:aws:iam::{A}:user/nobody"),
)
READER_EXPLAINED = (
    "identity policy 1: read-only (Allow) not matched: Action, never-purge (Deny) not matched: Action, "
    "send-from-vpn (Allow) not matched: Condition IpAddress aws:SourceIp"
)


@pytest.fixture(scope="module")
def iam() -> Iterator[ServerThread]:
    with ServerThread(Config(auth="iam", account_id=A, credentials=CREDENTIALS)) as server:
        yield server


@pytest.fixture
def clients(iam: ServerThread, protocol: str) -> Iterator[SignedClients]:
    with SignedClients(iam.endpoint_url, protocol) as made:
        yield made


def _lines(caplog: pytest.LogCaptureFixture, start: str, wanted: str, wait: float = 10) -> list[str]:
    """The ``sqsemu.access`` lines starting with ``start`` and holding ``wanted`` (waited for up to ``wait``
    seconds: the server's thread logs them)."""
    deadline = time.monotonic() + wait
    while True:
        found = [
            r.getMessage()
            for r in caplog.records
            if r.name == "sqsemu.access" and r.getMessage().startswith(start) and wanted in r.getMessage()
        ]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def _authorize(server: ServerThread, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    answer = raw_request(server.endpoint_url, "POST", "/_sqsemu/authorize", json.dumps(body).encode(), headers)
    assert answer.status == 200, answer.body
    result: dict[str, Any] = json.loads(answer.body)
    return result


def test_a_denial_log_line_lists_every_policy_and_statement(
    clients: SignedClients, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sqsemu")
    name = f"explained-{uuid.uuid4().hex[:8]}"
    url = clients.make(*ROOT).create_queue(QueueName=name)["QueueUrl"]
    code, _, _ = error_of(lambda: clients.make(*READER).send_message(QueueUrl=url, MessageBody="x"))
    assert code == "AccessDenied"
    [line] = _lines(caplog, "denied=sqs:SendMessage", f":{name} ")
    assert 'decided_by="no identity-based policy allows"' in line
    assert f'evaluated="{READER_EXPLAINED}; queue policy: none"' in line, line
    assert "notes=" not in line  # the queue exists


def test_a_denial_on_a_queue_that_does_not_exist_says_so(
    clients: SignedClients, caplog: pytest.LogCaptureFixture, iam: ServerThread
) -> None:
    caplog.set_level(logging.INFO, logger="sqsemu")
    name = f"ghost-{uuid.uuid4().hex[:8]}"
    url = f"{iam.endpoint_url}/{A}/{name}"
    code, _, _ = error_of(lambda: clients.make(*NOBODY).send_message(QueueUrl=url, MessageBody="x"))
    assert code == "AccessDenied"
    [line] = _lines(caplog, "denied=sqs:SendMessage", f":{name} ")
    assert 'evaluated="queue policy: none"' in line, line
    assert f"arn:aws:iam::{A}:user/nobody has no identity-based policies" in line
    assert f"the queue {name} does not exist in account {A}, region us-east-1" in line


def test_authorize_lists_the_policies_the_statements_and_the_first_failing_element(
    iam: ServerThread, protocol: str
) -> None:
    with SignedClients(iam.endpoint_url, protocol) as made:
        root = made.make(*ROOT)
        name = f"explained-{uuid.uuid4().hex[:8]}"
        url = root.create_queue(QueueName=name)["QueueUrl"]
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ELSEWHERE})
    answer = _authorize(iam, {"access_key_id": READER[0], "action": "SendMessage", "queue": url})
    assert (answer["decision"], answer["policy"], answer["statement"]) == ("denied", None, None)
    assert answer["evaluated"] == [
        {
            "policy": "identity policy 1",
            "present": True,
            "statements": [
                {"statement": "read-only", "effect": "Allow", "matched": False, "failed": "Action"},
                {"statement": "never-purge", "effect": "Deny", "matched": False, "failed": "Action"},
                {
                    "statement": "send-from-vpn",
                    "effect": "Allow",
                    "matched": False,
                    "failed": "Condition IpAddress aws:SourceIp",
                },
            ],
        },
        {
            "policy": "queue policy",
            "present": True,
            "statements": [{"statement": "other-queues", "effect": "Allow", "matched": False, "failed": "Resource"}],
        },
    ]
    assert answer["explained"] == READER_EXPLAINED + "; queue policy: other-queues (Allow) not matched: Resource"
    assert answer["notes"] == [] and answer["checks"][0]["evaluated"] == answer["evaluated"]
    allowed = _authorize(iam, {"access_key_id": READER[0], "action": "ReceiveMessage", "queue": url})
    assert allowed["decision"] == "allowed"
    assert allowed["evaluated"][0]["statements"][0] == {
        "statement": "read-only", "effect": "Allow", "matched": True, "failed": None
    }  # fmt: skip


def test_authorize_says_when_the_queue_or_its_policy_is_absent(iam: ServerThread) -> None:
    ghost = f"ghost-{uuid.uuid4().hex[:8]}"
    answer = _authorize(iam, {"access_key_id": NOBODY[0], "action": "SendMessage", "queue": ghost})
    assert answer["reason"] == "no identity-based policy allows"
    assert answer["evaluated"] == [{"policy": "queue policy", "present": False, "statements": []}]
    assert answer["explained"] == "queue policy: none"
    assert answer["notes"] == [
        f"arn:aws:iam::{A}:user/nobody has no identity-based policies",
        f"the queue {ghost} does not exist in account {A}, region us-east-1: it has no queue policy",
    ]


@pytest.mark.parametrize("access_log", [False, True], ids=["plain", "access-log"])
def test_signature_refusals_log_the_key_offered_and_the_action(
    protocol: str, access_log: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sqsemu")
    config = Config(auth="sigv4", credentials=(Credential(ROOT[0], ROOT[1], A),), access_log=access_log)
    with ServerThread(config) as server, SignedClients(server.endpoint_url, protocol) as made:
        url = f"{server.endpoint_url}/{A}/anything"
        unknown = made.make("AKIDNOSUCHKEY", "whatever")
        code, _, _ = error_of(lambda: unknown.send_message(QueueUrl=url, MessageBody="x"))
        assert code == "InvalidClientTokenId"
        wrong = made.make(ROOT[0], "not-the-secret")
        code, _, _ = error_of(lambda: wrong.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]))
        assert code == "SignatureDoesNotMatch"
        [refused] = _lines(caplog, "refused=InvalidClientTokenId", "")
        assert refused.startswith(
            f"refused=InvalidClientTokenId access_key_id=AKIDNOSUCHKEY action=SendMessage protocol={protocol} "
        )
        [mismatch] = _lines(caplog, "refused=SignatureDoesNotMatch", "")
        assert mismatch.startswith(
            f"refused=SignatureDoesNotMatch access_key_id={ROOT[0]} action=GetQueueAttributes protocol={protocol} "
        )
        access = _lines(caplog, "action=", "status=403", wait=0)  # logged before the answer was sent
        if access_log:
            assert [line.split(" ", 1)[0] for line in access] == ["action=SendMessage", "action=GetQueueAttributes"]
        else:
            assert access == []


def test_lambda_api_signature_refusals_log_the_key_offered_and_the_operation(caplog: pytest.LogCaptureFixture) -> None:
    """The Lambda API refuses as the SQS endpoint does, and logs it the same way (docs/security.md): the code it
    answers, the key id offered and the operation the request names."""
    import boto3
    from botocore.config import Config as BotoConfig

    caplog.set_level(logging.INFO, logger="sqsemu")
    config = Config(auth="sigv4", credentials=(Credential(ROOT[0], ROOT[1], A),))
    with ServerThread(config) as server:

        def lambda_client(key: str, secret: str) -> Any:
            return boto3.client(
                "lambda",
                endpoint_url=server.endpoint_url,
                region_name="us-east-1",
                aws_access_key_id=key,
                aws_secret_access_key=secret,
                config=BotoConfig(retries={"max_attempts": 1}),
            )

        code, _, _ = error_of(lambda: lambda_client("AKIDNOSUCHKEY", "whatever").list_event_source_mappings())
        assert code == "UnrecognizedClientException"
        code, _, _ = error_of(lambda: lambda_client(ROOT[0], "not-the-secret").get_event_source_mapping(UUID="0" * 36))
        assert code == "InvalidSignatureException"
        [unknown] = _lines(caplog, "refused=UnrecognizedClientException", "")
        assert unknown.startswith(
            "refused=UnrecognizedClientException access_key_id=AKIDNOSUCHKEY action=lambda:ListEventSourceMappings"
        )
        [mismatch] = _lines(caplog, "refused=InvalidSignatureException", "")
        assert mismatch.startswith(
            f"refused=InvalidSignatureException access_key_id={ROOT[0]} action=lambda:GetEventSourceMapping"
        )
