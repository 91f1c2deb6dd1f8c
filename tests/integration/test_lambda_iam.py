"""--auth iam over the Lambda API and the mappings' pollers (issue 41, finding 1), over real sockets with boto3's
lambda and sqs clients signed with the declared keys, on the manual clock:

- each Lambda API call is authorized as ``lambda:<Operation>`` against the signer's identity-based policies (an
  identity denied everything is refused CreateEventSourceMapping as it is refused ReceiveMessage);
- a mapping acts as its function's execution role (``[functions.NAME] role`` and ``policies``): a role lacking
  ReceiveMessage, DeleteMessage or GetQueueAttributes on the queue is refused at CreateEventSourceMapping with
  Lambda's message, a queue policy can grant another account's role, and revoking the grant stops the mapping's
  deletes and then its polls, said in ``LastProcessingResult``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsemu.declare import config_from_file
from sqsemu.security.evaluate import principal_for
from sqsemu.security.identity import unique_id
from sqsemu.server import ServerThread
from tests.integration.harness.clients import error_of
from tests.integration.harness.functions import Recorder, signed_client

pytestmark = pytest.mark.integration

A, B = "111111111111", "222222222222"
REGION = "us-east-1"


def _allow(actions: list[str], resource: str = "*") -> str:
    return json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": resource}]}
    )


DENY_ALL = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "*", "Resource": "*"}]})
BY_USERID = unique_id(principal_for(f"arn:aws:iam::{A}:user/by-userid", A))  # the user's AIDA... id
DENY_BY_USERID = json.dumps({"Version": "2012-10-17", "Statement": [{
    "Effect": "Deny", "Action": "*", "Resource": "*", "Condition": {"StringEquals": {"aws:userid": BY_USERID}},
}]})  # fmt: skip
KEYS: dict[str, tuple[str, str | None, list[str]]] = {
    "AKIDROOTA": (A, None, []),
    "AKIDDEV": (A, f"arn:aws:iam::{A}:user/dev", [_allow(["lambda:*", "sqs:*"])]),
    "AKIDDENIED": (A, f"arn:aws:iam::{A}:user/denied", [_allow(["lambda:*", "sqs:*"]), DENY_ALL]),
    "AKIDSQSONLY": (A, f"arn:aws:iam::{A}:user/sqs-only", [_allow(["sqs:*"])]),
    "AKIDDEVB": (B, f"arn:aws:iam::{B}:user/dev", [_allow(["lambda:*", "sqs:*"])]),
    "AKIDBYUSERID": (A, f"arn:aws:iam::{A}:user/by-userid", [_allow(["lambda:*", "sqs:*"]), DENY_BY_USERID]),
}
ROLE_ACTIONS = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
FUNCTIONS = {
    "worker": (f"arn:aws:iam::{A}:role/worker", [_allow(ROLE_ACTIONS)]),
    "reader": (f"arn:aws:iam::{A}:role/reader", [_allow(["sqs:ReceiveMessage", "sqs:GetQueueAttributes"])]),
    "cross": (f"arn:aws:iam::{B}:role/cross", [_allow(["sqs:*"])]),
}


def _config(tmp: Path) -> Path:
    lines = [f'[server]\nauth = "iam"\naccount_id = "{A}"\n']
    for key, (account, principal, policies) in KEYS.items():
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "secret-{key}"\n')
        lines.append(f'account = "{account}"\n')
        if principal:
            lines.append(f'principal = "{principal}"\npolicies = {json.dumps(policies)}\n')
    (tmp / "worker.json").write_text(FUNCTIONS["worker"][1][0])  # a policy file, named from the config's folder
    for name, (role, policies) in FUNCTIONS.items():
        texts = ["worker.json"] if name == "worker" else policies
        lines.append(f'[functions.{name}]\nrole = "{role}"\npolicies = {json.dumps(texts)}\n')
    path = tmp / "sqsemu.toml"
    path.write_text("".join(lines))
    return path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    config = config_from_file(_config(tmp_path), clock="manual", log_level="warning")
    with ServerThread(config) as srv:
        yield srv


def _client(srv: ServerThread, service: str, key: str) -> Any:
    return signed_client(srv.endpoint_url, service, key, region=REGION)


def _queue(sqs: Any, name: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    return url, sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def _function(srv: ServerThread, name: str) -> Recorder:
    recorder = Recorder()
    srv.app.event_sources.register_function(name, recorder)  # type: ignore[attr-defined]
    return recorder


def _pass(srv: ServerThread, seconds: float) -> None:
    """``seconds`` pass on the server's clock, and the mappings finish what that caused."""
    srv.advance(seconds)
    srv.app.event_sources.settle_threadsafe()  # type: ignore[attr-defined]


def _settle(srv: ServerThread) -> None:
    srv.app.event_sources.settle_threadsafe()  # type: ignore[attr-defined]


def test_lambda_calls_are_authorized_by_identity_policies(server: ServerThread) -> None:
    root = _client(server, "sqs", "AKIDROOTA")
    url, arn = _queue(root, "orders")
    root.send_message(QueueUrl=url, MessageBody="keep me")
    recorder = _function(server, "worker")
    denied_sqs = _client(server, "sqs", "AKIDDENIED")
    code, status, _ = error_of(lambda: denied_sqs.receive_message(QueueUrl=url))
    assert (code, status) == ("AccessDenied", 403)
    denied = _client(server, "lambda", "AKIDDENIED")
    code, status, message = error_of(
        lambda: denied.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")
    )
    assert (code, status) == ("AccessDeniedException", 403)
    assert message == (
        f"User: arn:aws:iam::{A}:user/denied is not authorized to perform: lambda:CreateEventSourceMapping on "
        "resource: * with an explicit deny in an identity-based policy"
    )
    _pass(server, 1)
    assert recorder.bodies == []  # no mapping took the queue's message
    assert root.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "keep me"

    dev = _client(server, "lambda", "AKIDDEV")
    uid = dev.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker", Enabled=False)["UUID"]
    mapping_arn = f"arn:aws:lambda:{REGION}:{A}:event-source-mapping:{uid}"
    calls: dict[str, Callable[[Any], Any]] = {
        "GetEventSourceMapping": lambda c: c.get_event_source_mapping(UUID=uid),
        "UpdateEventSourceMapping": lambda c: c.update_event_source_mapping(UUID=uid, Enabled=True),
        "DeleteEventSourceMapping": lambda c: c.delete_event_source_mapping(UUID=uid),
    }
    sqs_only = _client(server, "lambda", "AKIDSQSONLY")
    for operation, call in calls.items():
        code, status, message = error_of(lambda: call(denied))  # noqa: B023 - called at once
        assert (code, status) == ("AccessDeniedException", 403)
        assert message.endswith(f"lambda:{operation} on resource: {mapping_arn} with an explicit deny in an "
                                "identity-based policy")  # fmt: skip
        code, status, message = error_of(lambda: call(sqs_only))  # noqa: B023 - called at once
        assert (code, status) == ("AccessDeniedException", 403)
        assert message == (
            f"User: arn:aws:iam::{A}:user/sqs-only is not authorized to perform: lambda:{operation} on resource: "
            f"{mapping_arn} because no identity-based policy allows the lambda:{operation} action"
        )
    code, status, _ = error_of(lambda: denied.list_event_source_mappings())
    assert (code, status) == ("AccessDeniedException", 403)
    assert dev.get_event_source_mapping(UUID=uid)["State"] == "Disabled"  # nothing the denied calls asked was done
    assert [m["UUID"] for m in dev.list_event_source_mappings()["EventSourceMappings"]] == [uid]
    root_lambda = _client(server, "lambda", "AKIDROOTA")  # the account's root user: its own account allows it
    assert root_lambda.get_event_source_mapping(UUID=uid)["UUID"] == uid


def test_lambda_calls_see_the_callers_aws_userid(server: ServerThread) -> None:
    """A Lambda API call's request context has the caller's ``aws:userid`` as its SQS calls do (docs/behaviour.md
    11.5; "AWS global condition context keys": aws:userid is in every request context): a Deny on it applies to
    both APIs, not only to SQS."""
    sqs = _client(server, "sqs", "AKIDBYUSERID")
    code, status, _ = error_of(lambda: sqs.list_queues())
    assert (code, status) == ("AccessDenied", 403)
    lam = _client(server, "lambda", "AKIDBYUSERID")
    code, status, message = error_of(lambda: lam.list_event_source_mappings())
    assert (code, status) == ("AccessDeniedException", 403)
    assert message.endswith("with an explicit deny in an identity-based policy")


def test_the_execution_role_must_read_and_delete(server: ServerThread) -> None:
    root = _client(server, "sqs", "AKIDROOTA")
    url, arn = _queue(root, "jobs")
    dev = _client(server, "lambda", "AKIDDEV")
    _function(server, "reader")
    _function(server, "no-role")  # an in-process function with no declared role: no permissions under --auth iam
    code, status, message = error_of(lambda: dev.create_event_source_mapping(EventSourceArn=arn, FunctionName="reader"))
    assert (code, status, message) == (
        "InvalidParameterValueException",
        400,
        "The provided execution role does not have permissions to call DeleteMessage on SQS",
    )
    code, status, message = error_of(
        lambda: dev.create_event_source_mapping(EventSourceArn=arn, FunctionName="no-role")
    )
    assert (code, status, message) == (
        "InvalidParameterValueException",
        400,
        "The provided execution role does not have permissions to call ReceiveMessage on SQS",
    )
    assert dev.list_event_source_mappings()["EventSourceMappings"] == []
    worker = _function(server, "worker")
    uid = dev.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")["UUID"]
    code, _, message = error_of(lambda: dev.update_event_source_mapping(UUID=uid, FunctionName="reader"))
    assert (code, message) == (
        "InvalidParameterValueException",
        "The provided execution role does not have permissions to call DeleteMessage on SQS",
    )
    root.send_message(QueueUrl=url, MessageBody="job 1")
    _settle(server)
    assert worker.bodies == ["job 1"]
    assert dev.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"


def _grant(actions: list[str], queue_arn: str) -> str:
    statement = {"Effect": "Allow", "Principal": {"AWS": FUNCTIONS["cross"][0]}, "Action": actions}
    return json.dumps({"Version": "2012-10-17", "Statement": [{**statement, "Resource": queue_arn}]})


def test_a_queue_policy_grants_another_accounts_mapping_until_revoked(server: ServerThread) -> None:
    root = _client(server, "sqs", "AKIDROOTA")
    url, arn = _queue(root, "shared")
    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": _grant(ROLE_ACTIONS, arn)})
    cross = _function(server, "cross")
    lam_b = _client(server, "lambda", "AKIDDEVB")
    uid = lam_b.create_event_source_mapping(EventSourceArn=arn, FunctionName="cross")["UUID"]
    root.send_message(QueueUrl=url, MessageBody="first")
    _settle(server)
    assert cross.bodies == ["first"]
    assert lam_b.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"

    # the grant loses DeleteMessage: the function runs, the message stays and comes back
    root.set_queue_attributes(
        QueueUrl=url, Attributes={"Policy": _grant(["sqs:ReceiveMessage", "sqs:GetQueueAttributes"], arn)}
    )
    root.send_message(QueueUrl=url, MessageBody="second")
    _settle(server)
    assert cross.bodies == ["first", "second"]
    assert lam_b.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == (
        "PROBLEM: The provided execution role does not have permissions to call DeleteMessage on SQS"
    )
    counts = root.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])
    assert counts["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1"

    # the grant is gone: the mapping polls no more, the message is the queue's again
    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    _pass(server, 21)  # the long polls begun before the change end
    _pass(server, 10)  # past the visibility timeout: "second" is visible again
    _pass(server, 10)
    assert cross.bodies == ["first", "second"]
    assert lam_b.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == (
        "PROBLEM: The provided execution role does not have permissions to call ReceiveMessage on SQS"
    )
    assert lam_b.get_event_source_mapping(UUID=uid)["State"] == "Enabled"
    assert [m["Body"] for m in root.receive_message(QueueUrl=url)["Messages"]] == ["second"]
