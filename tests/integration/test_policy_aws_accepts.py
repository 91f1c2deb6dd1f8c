"""A queue policy AWS stores is stored (issue 47, finding 6), over real HTTP on both wire protocols.

The policy of LocalStack's AWS-validated ``test_set_queue_policy`` and ``test_set_empty_queue_policy`` (run against
SQS, which stored it and gave it back from GetQueueAttributes) has a ``Resource`` that is the literal text
``'$sqs_queue_arn'`` (a shell variable never expanded: not an ARN) and an ``ArnEquals`` ``aws:SourceArn`` value
that is not an ARN either. sqsemu refused it (``InvalidAttributeValue ... is not a resource (an ARN or *)``) in
every auth mode, and would not start with it declared or restored. Now it is stored and returned as sent, and under
``--auth iam`` such a statement allows nothing: fail closed is the decision's (docs/behaviour.md 11.4), not a
refusal to store what SQS stores.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import client_for, error_of

from sqsemu.config import Config, Credential
from sqsemu.declare import config_from_file
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

LOCALSTACK_POLICY = """
{
  "Version":"2012-10-17",
  "Statement":[
    {
      "Effect": "Allow",
      "Principal": { "AWS": "*" },
      "Action": "sqs:SendMessage",
      "Resource": "'$sqs_queue_arn'",
      "Condition":{
        "ArnEquals":{
        "aws:SourceArn":"'$sns_topic_arn'"
        }
      }
    }
  ]
}
"""
"""The document as the validated tests send it (a shell-quoting leftover in Resource and SourceArn), byte for byte
in its JSON structure: SQS stored it."""

A, B = "111111111111", "222222222222"
ROOT = Credential("AKIDSTOREROOT", "secret-root", A)
BOB = Credential(
    "AKIDSTOREBOB", "secret-bob", B, principal=f"arn:aws:iam::{B}:user/bob",
    policies=(json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]}),),
)  # fmt: skip


def _attributes(sqs: Any, url: str, names: list[str]) -> dict[str, str]:
    return dict(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names).get("Attributes", {}))


@pytest.fixture(scope="module")
def open_server() -> Iterator[ServerThread]:
    with ServerThread(Config(host="127.0.0.1")) as srv:
        yield srv


def test_set_queue_attributes_stores_it_and_gives_it_back(open_server: ServerThread, protocol: str) -> None:
    """As ``test_set_queue_policy``: set, then read back both with ``All`` and by name."""
    sqs = client_for(open_server.endpoint_url, protocol)
    url = sqs.create_queue(QueueName=f"set-policy-{protocol}")["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": LOCALSTACK_POLICY})
    assert _attributes(sqs, url, ["All"])["Policy"] == LOCALSTACK_POLICY
    assert _attributes(sqs, url, ["Policy"]) == {"Policy": LOCALSTACK_POLICY}
    assert json.loads(_attributes(sqs, url, ["Policy"])["Policy"])["Statement"][0]["Action"] == "sqs:SendMessage"


def test_an_empty_policy_removes_it(open_server: ServerThread, protocol: str) -> None:
    """As ``test_set_empty_queue_policy``: "" means none, before and after the policy was set."""
    sqs = client_for(open_server.endpoint_url, protocol)
    url = sqs.create_queue(QueueName=f"empty-policy-{protocol}")["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert "Policy" not in _attributes(sqs, url, ["All"])
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": LOCALSTACK_POLICY})
    assert "sqs:SendMessage" in _attributes(sqs, url, ["All"])["Policy"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert "Policy" not in _attributes(sqs, url, ["All"])


def test_create_queue_stores_it(open_server: ServerThread, protocol: str) -> None:
    sqs = client_for(open_server.endpoint_url, protocol)
    url = sqs.create_queue(QueueName=f"create-policy-{protocol}", Attributes={"Policy": LOCALSTACK_POLICY})["QueueUrl"]
    assert _attributes(sqs, url, ["Policy"]) == {"Policy": LOCALSTACK_POLICY}


def test_a_policy_that_is_not_json_is_still_refused(open_server: ServerThread, protocol: str) -> None:
    sqs = client_for(open_server.endpoint_url, protocol)
    url = sqs.create_queue(QueueName=f"not-json-{protocol}")["QueueUrl"]
    code, status, message = error_of(lambda: sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": "{x"}))
    assert (code, status) == ("InvalidAttributeValue", 400)
    assert message.startswith("Invalid value for the parameter Policy.")


def test_under_iam_it_is_stored_and_allows_nothing(protocol: str) -> None:
    """The statement would let anyone send if its Resource named the queue; as stored it allows nobody: bob of
    another account, whose own policy allows sending anywhere, is denied as with no queue policy at all, and the
    same statement naming the queue's ARN lets him in."""
    with ServerThread(Config(host="127.0.0.1", auth="iam", account_id=A, credentials=(ROOT, BOB))) as srv:
        root = client_for(srv.endpoint_url, protocol, access_key_id=ROOT.access_key_id, secret_access_key="secret-root")
        bob = client_for(srv.endpoint_url, protocol, access_key_id=BOB.access_key_id, secret_access_key="secret-bob")
        url = root.create_queue(QueueName="shared")["QueueUrl"]
        arn = f"arn:aws:sqs:us-east-1:{A}:shared"
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": LOCALSTACK_POLICY})
        assert _attributes(root, url, ["Policy"]) == {"Policy": LOCALSTACK_POLICY}
        code, status, message = error_of(lambda: bob.send_message(QueueUrl=url, MessageBody="x"))
        assert (code, status) == ("AccessDenied", 403)
        assert message == (
            f"User: arn:aws:iam::{B}:user/bob is not authorized to perform: sqs:sendmessage on "
            f"resource: {arn} because no resource-based policy allows the sqs:sendmessage action"
        )
        root.send_message(QueueUrl=url, MessageBody="the owner is unaffected")
        # the same statement with the queue's ARN and no condition allows bob: what kept him out was the Resource
        statement = json.loads(LOCALSTACK_POLICY)["Statement"][0]
        fixed = {**statement, "Resource": arn}
        del fixed["Condition"]
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps({"Statement": [fixed]})})
        bob.send_message(QueueUrl=url, MessageBody="allowed by the queue policy")
        bodies = {m["Body"] for m in root.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]}
        assert bodies == {"the owner is unaffected", "allowed by the queue policy"}
        for client in (root, bob):
            client.close()


def test_declared_or_restored_it_does_not_stop_the_start(tmp_path: Path, protocol: str) -> None:
    """A ``[[queues]]`` declaration holding it starts under ``--auth iam``; so does the data folder it was saved in,
    the declaration gone."""
    toml = tmp_path / "sqsemu.toml"
    data_dir = tmp_path / "data"
    server = (
        f'[server]\nauth = "iam"\naccount_id = "{A}"\ndata_dir = "{data_dir}"\n\n'
        f'[[credentials]]\naccess_key_id = "{ROOT.access_key_id}"\nsecret_access_key = "secret-root"\n'
        f'account = "{A}"\n'
    )
    declared = f'\n[[queues]]\nname = "declared"\nattributes = {{ Policy = {json.dumps(LOCALSTACK_POLICY)} }}\n'
    for text in (server + declared, server):  # declared; then restored from the data folder alone
        toml.write_text(text)
        with ServerThread(config_from_file(toml, host="127.0.0.1")) as srv:
            root = client_for(srv.endpoint_url, protocol, access_key_id=ROOT.access_key_id,
                              secret_access_key="secret-root")  # fmt: skip
            url = root.get_queue_url(QueueName="declared")["QueueUrl"]
            assert _attributes(root, url, ["Policy"]) == {"Policy": LOCALSTACK_POLICY}
            root.close()
