"""STS as the tools around SQS use it, over real sockets (docs/security.md, STS; docs/clients/terraform.md): an SDK
profile with ``role_arn`` (a source profile, ``endpoint_url`` in the AWS config file) that boto3 turns into
``AssumeRole`` and then SQS calls as the role, allowed and denied by the role's policies under ``--auth iam``; and the
call sequence of Terraform's AWS provider: ``GetCallerIdentity`` when it starts, then the SQS resource's calls."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import boto3
import pytest
from botocore.config import Config as BotoConfig
from harness import error_of

from sqsemu.config import Credential
from sqsemu.declare import config_from_file
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

A = "111111111111"
ROLE = f"arn:aws:iam::{A}:role/deployer"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"
INTRUDER = Credential("AKIDINTRUDER", "secret-intruder", principal=f"arn:aws:iam::{A}:user/intruder")


def doc_block(name: str) -> str:
    """The code block after ``<!-- config: name -->`` in docs/security.md, as it stands."""
    found = re.search(rf"<!-- config: {re.escape(name)} -->\n```[a-z]+\n(.*?)```", DOCS.read_text(encoding="utf-8"),
                      re.DOTALL)  # fmt: skip
    assert found is not None, name
    return found.group(1)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    """docs/security.md's STS configuration as it stands, with one more user whom the role does not trust."""
    path = tmp_path_factory.mktemp("sts") / "sqsemu.toml"
    path.write_text(doc_block("sts"))
    config = config_from_file(path, host="127.0.0.1")
    with ServerThread(replace(config, credentials=(*config.credentials, INTRUDER))) as srv:
        yield srv


@pytest.fixture
def aws_config(server: ServerThread, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """docs/security.md's AWS config file (its ``endpoint_url`` this server's: botocore's configured endpoint, which
    the assume-role STS client and the SQS client both use), with a profile for the untrusted user; the
    environment cleared of every other AWS setting."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    documented = doc_block("sts-profile")
    assert "endpoint_url = http://127.0.0.1:9324" in documented
    path = tmp_path / "config"
    path.write_text(
        documented.replace("http://127.0.0.1:9324", server.endpoint_url)
        + f"""
[profile intruder]
aws_access_key_id = AKIDINTRUDER
aws_secret_access_key = secret-intruder

[profile stolen]
role_arn = {ROLE}
source_profile = intruder
external_id = ci-external-id
region = us-east-1
endpoint_url = {server.endpoint_url}
"""
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(path))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    return path


NO_RETRIES = BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"})


def test_a_profile_with_role_arn_calls_sqs_as_the_role(aws_config: Path) -> None:
    session = boto3.Session(profile_name="deployer")
    sqs = session.client("sqs", config=NO_RETRIES)  # AssumeRole against sqsemu, then SQS signed as the role
    url = sqs.create_queue(QueueName="app-orders")["QueueUrl"]
    assert f"/{A}/app-orders" in url
    sqs.send_message(QueueUrl=url, MessageBody="as the role")
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "as the role"
    session_arn = f"arn:aws:sts::{A}:assumed-role/deployer/pipeline"
    assert session.client("sts").get_caller_identity()["Arn"] == session_arn
    code, status, message = error_of(lambda: sqs.create_queue(QueueName="orders"))  # outside the role's policy
    assert (code, status, message) == (
        "AccessDenied",
        403,
        f"User: {session_arn} is not authorized to perform: sqs:createqueue on resource: "
        f"arn:aws:sqs:us-east-1:{A}:orders because no identity-based policy allows the sqs:createqueue action",
    )


def test_a_profile_the_trust_policy_refuses_gets_access_denied(aws_config: Path) -> None:
    sqs = boto3.Session(profile_name="stolen").client("sqs", config=NO_RETRIES)
    code, status, message = error_of(sqs.list_queues)  # the AssumeRole the profile makes is refused
    assert (code, status) == ("AccessDenied", 403)
    assert message == (
        f"User: arn:aws:iam::{A}:user/intruder is not authorized to perform: sts:AssumeRole on resource: {ROLE}"
    )


def test_terraforms_call_sequence(aws_config: Path) -> None:
    """What terraform-provider-aws does for an ``aws_sqs_queue`` with ``endpoints { sqs = ..., sts = ... }`` and an
    ``assume_role`` block: AssumeRole and GetCallerIdentity when it configures (the account id of ARNs), then
    CreateQueue, GetQueueAttributes (All) until the attributes read back, ListQueueTags, SetQueueAttributes on an
    update, DeleteQueue and GetQueueAttributes until the queue is gone (the JSON protocol, as aws-sdk-go-v2 sends
    it)."""
    session = boto3.Session(profile_name="deployer")
    caller = session.client("sts", config=NO_RETRIES).get_caller_identity()
    assert caller["Account"] == A
    sqs = session.client("sqs", config=NO_RETRIES)
    assert sqs.meta.service_model.protocol == "json"
    url = sqs.create_queue(
        QueueName="app-jobs", Attributes={"VisibilityTimeout": "60", "MessageRetentionPeriod": "86400"},
        tags={"team": "platform"},
    )["QueueUrl"]  # fmt: skip
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["QueueArn"] == f"arn:aws:sqs:us-east-1:{caller['Account']}:app-jobs"
    assert (attributes["VisibilityTimeout"], attributes["MessageRetentionPeriod"]) == ("60", "86400")
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "platform"}
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "120"})
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]["VisibilityTimeout"] == "120"
    sqs.delete_queue(QueueUrl=url)
    code, status, _ = error_of(lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]))
    assert (code, status) == ("AWS.SimpleQueueService.NonExistentQueue", 400)
