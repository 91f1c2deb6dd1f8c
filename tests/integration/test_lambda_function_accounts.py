"""A function belongs to one account, and a mapping only ever uses its own account's functions (issue 47, finding
1); a mapping's poller is decided with ``aws:SecureTransport`` ``true`` (issue 47, finding 9's suspicion). Over real
sockets under ``--auth iam``, with boto3's ``lambda`` and ``sqs`` clients signed by the declared keys of two
accounts, on the manual clock.

Before the fix account B's CreateEventSourceMapping found account A's function by name and its mapping polled and
deleted A's queue as A's execution role (a filter matching nothing deleted every message without an invocation),
while B's own ReceiveMessage on that queue was refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsemu.declare import config_from_file
from sqsemu.server import ServerThread
from tests.integration.harness.clients import error_of
from tests.integration.harness.functions import Recorder, signed_client

pytestmark = pytest.mark.integration

A, B = "111111111111", "222222222222"
REGION = "us-east-1"
ROLE_ACTIONS = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
WORKER_ROLE = f"arn:aws:iam::{A}:role/worker"
TLS_ROLE = f"arn:aws:iam::{A}:role/tls-worker"
NOTHING_MATCHES = {"Filters": [{"Pattern": json.dumps({"body": {"kind": ["never-sent"]}})}]}


def _policy(statement: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


ALLOW_ALL = _policy({"Effect": "Allow", "Action": ["lambda:*", "sqs:*"], "Resource": "*"})
KEYS = {
    "AKIDROOTA": (A, None),
    "AKIDDEVA": (A, f"arn:aws:iam::{A}:user/dev"),
    "AKIDDEVB": (B, f"arn:aws:iam::{B}:user/dev"),
}
FUNCTIONS: dict[str, dict[str, Any]] = {
    # account A's, by its role's ARN
    "worker": {"role": WORKER_ROLE, "policies": [_policy({"Effect": "Allow", "Action": ROLE_ACTIONS,
                                                          "Resource": "*"})]},
    # account A's too: its role may read and delete only over HTTPS, as Lambda's pollers call SQS
    "tls-worker": {"role": TLS_ROLE, "policies": [_policy({
        "Effect": "Allow", "Action": ROLE_ACTIONS, "Resource": "*",
        "Condition": {"Bool": {"aws:SecureTransport": "true"}},
    })]},
    # account B's, by its explicit account (no role: no permissions under --auth iam)
    "b-only": {"account": B},
}  # fmt: skip


def _config(tmp: Path) -> Path:
    lines = [f'[server]\nauth = "iam"\naccount_id = "{A}"\n']
    for key, (account, principal) in KEYS.items():
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "secret-{key}"\n')
        lines.append(f'account = "{account}"\n')
        if principal:
            lines.append(f'principal = "{principal}"\npolicies = {json.dumps([ALLOW_ALL])}\n')
    for name, table in FUNCTIONS.items():
        lines.append(f"[functions.{name}]\n")
        lines.extend(f"{key} = {json.dumps(value)}\n" for key, value in table.items())
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


def _function(srv: ServerThread, name: str) -> Recorder:
    recorder = Recorder()
    srv.app.event_sources.register_function(name, recorder)  # type: ignore[attr-defined]
    return recorder


def _pass(srv: ServerThread, seconds: float) -> None:
    """``seconds`` pass on the server's clock, and the mappings finish what that caused."""
    srv.advance(seconds)
    srv.app.event_sources.settle_threadsafe()  # type: ignore[attr-defined]


def _counts(sqs: Any, url: str) -> tuple[str, str]:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return found[names[0]], found[names[1]]


def test_another_account_cannot_put_a_queue_behind_the_accounts_function(server: ServerThread) -> None:
    root = _client(server, "sqs", "AKIDROOTA")
    url = root.create_queue(QueueName="orders", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    arn = root.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    for n in range(3):
        root.send_message(QueueUrl=url, MessageBody=f"order {n}")
    worker = _function(server, "worker")
    lam_b = _client(server, "lambda", "AKIDDEVB")

    # B names A's function by name: in B's account there is no such function, as Lambda answers for one that does
    # not exist ("Function not found: <the function's ARN>"), and nothing is created
    for name, missing in (
        ("worker", f"arn:aws:lambda:{REGION}:{B}:function:worker"),
        (f"arn:aws:lambda:{REGION}:{A}:function:worker", f"arn:aws:lambda:{REGION}:{A}:function:worker"),
        (f"{A}:function:worker", f"arn:aws:lambda:{REGION}:{A}:function:worker"),
    ):
        assert error_of(
            lambda n=name: lam_b.create_event_source_mapping(  # type: ignore[misc]
                EventSourceArn=arn, FunctionName=n, FilterCriteria=NOTHING_MATCHES
            )
        ) == ("ResourceNotFoundException", 404, f"Function not found: {missing}")
    assert lam_b.list_event_source_mappings()["EventSourceMappings"] == []
    _pass(server, 1)
    assert _counts(root, url) == ("3", "0")  # A's messages stay: nothing polled or deleted them
    assert worker.bodies == []

    # B's own function is B's: mapping it to A's queue is refused as a role that cannot read the queue (it has no
    # role at all), never as A's role
    _function(server, "b-only")
    assert error_of(lambda: lam_b.create_event_source_mapping(EventSourceArn=arn, FunctionName="b-only")) == (
        "InvalidParameterValueException",
        400,
        "The provided execution role does not have permissions to call ReceiveMessage on SQS",
    )
    # and A cannot use B's function
    lam_a = _client(server, "lambda", "AKIDDEVA")
    assert error_of(lambda: lam_a.create_event_source_mapping(EventSourceArn=arn, FunctionName="b-only")) == (
        "ResourceNotFoundException",
        404,
        f"Function not found: arn:aws:lambda:{REGION}:{A}:function:b-only",
    )

    # A's own mapping of A's function works
    uid = lam_a.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")["UUID"]
    server.app.event_sources.settle_threadsafe()  # type: ignore[attr-defined]
    assert sorted(worker.bodies) == ["order 0", "order 1", "order 2"]
    assert _counts(root, url) == ("0", "0")
    mapping = lam_a.get_event_source_mapping(UUID=uid)
    assert mapping["FunctionArn"] == f"arn:aws:lambda:{REGION}:{A}:function:worker"
    assert mapping["LastProcessingResult"] == "OK"
    # nor can A's mapping be moved onto B's function
    assert error_of(lambda: lam_a.update_event_source_mapping(UUID=uid, FunctionName="b-only")) == (
        "ResourceNotFoundException",
        404,
        f"Function not found: arn:aws:lambda:{REGION}:{A}:function:b-only",
    )
    assert lam_a.get_event_source_mapping(UUID=uid)["FunctionArn"] == mapping["FunctionArn"]


def test_get_function_and_list_functions_show_each_functions_account(server: ServerThread) -> None:
    for name in ("worker", "b-only"):
        _function(server, name)
    _function(server, "anywhere")  # registered in-process, declared nowhere: a function of every account
    lam_a = _client(server, "lambda", "AKIDDEVA")
    lam_b = _client(server, "lambda", "AKIDDEVB")

    found = lam_a.get_function(FunctionName="worker")["Configuration"]
    assert found["FunctionName"] == "worker"
    assert found["FunctionArn"] == f"arn:aws:lambda:{REGION}:{A}:function:worker"
    assert found["Role"] == WORKER_ROLE
    by_arn = lam_a.get_function(FunctionName=f"arn:aws:lambda:{REGION}:{A}:function:worker")["Configuration"]
    assert by_arn["FunctionArn"] == found["FunctionArn"]
    assert lam_b.get_function(FunctionName="b-only")["Configuration"]["FunctionArn"] == (
        f"arn:aws:lambda:{REGION}:{B}:function:b-only"
    )
    # another account's function is not found by name; named by its ARN, no resource-based policy grants it
    assert error_of(lambda: lam_b.get_function(FunctionName="worker")) == (
        "ResourceNotFoundException",
        404,
        f"Function not found: arn:aws:lambda:{REGION}:{B}:function:worker",
    )
    code, status, message = error_of(lambda: lam_b.get_function(FunctionName=found["FunctionArn"]))
    assert (code, status) == ("AccessDeniedException", 403)
    assert message == (
        f"User: arn:aws:iam::{B}:user/dev is not authorized to perform: lambda:GetFunction on resource: "
        f"{found['FunctionArn']} because no resource-based policy allows the lambda:GetFunction action"
    )

    def listed(client: Any) -> dict[str, str]:
        return {f["FunctionName"]: f["FunctionArn"] for f in client.list_functions()["Functions"]}

    assert listed(lam_a) == {
        name: f"arn:aws:lambda:{REGION}:{A}:function:{name}" for name in ("anywhere", "worker")
    }  # tls-worker is declared, but nothing runs it in this test (no handler, no endpoint): no such function
    assert listed(lam_b) == {name: f"arn:aws:lambda:{REGION}:{B}:function:{name}" for name in ("anywhere", "b-only")}


def test_the_poller_calls_sqs_over_https(server: ServerThread) -> None:
    """The poller's ReceiveMessage and DeleteMessage are decided with ``aws:SecureTransport`` ``true``: an allow on
    it grants them and a deny on ``false`` (the usual enforce-TLS statement) does not stop them, while a deny on
    ``true`` does."""
    root = _client(server, "sqs", "AKIDROOTA")
    url = root.create_queue(QueueName="tls", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    arn = root.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def deny_role_when(secure: str) -> str:
        return _policy({
            "Effect": "Deny", "Principal": {"AWS": TLS_ROLE}, "Action": "sqs:*", "Resource": arn,
            "Condition": {"Bool": {"aws:SecureTransport": secure}},
        })  # fmt: skip

    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": deny_role_when("false")})
    tls = _function(server, "tls-worker")
    lam_a = _client(server, "lambda", "AKIDDEVA")
    uid = lam_a.create_event_source_mapping(EventSourceArn=arn, FunctionName="tls-worker")["UUID"]
    root.send_message(QueueUrl=url, MessageBody="over https")
    server.app.event_sources.settle_threadsafe()  # type: ignore[attr-defined]
    assert tls.bodies == ["over https"]
    assert lam_a.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"
    assert _counts(root, url) == ("0", "0")

    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": deny_role_when("true")})
    _pass(server, 21)  # the long polls begun before the change end; the next poll is refused
    root.send_message(QueueUrl=url, MessageBody="stays")
    _pass(server, 10)
    assert tls.bodies == ["over https"]
    assert lam_a.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == (
        "PROBLEM: The provided execution role does not have permissions to call ReceiveMessage on SQS"
    )
    assert [m["Body"] for m in root.receive_message(QueueUrl=url)["Messages"]] == ["stays"]


def _declared_server(tmp: Path, auth: str) -> ServerThread:
    """A server whose config file declares A's queue ``shared`` (its policy granting B's role), B's function
    ``consumer`` (by its role) and a mapping of the two."""
    role = f"arn:aws:iam::{B}:role/consumer"
    grant = _policy({"Effect": "Allow", "Principal": {"AWS": role}, "Action": ROLE_ACTIONS,
                     "Resource": f"arn:aws:sqs:{REGION}:{A}:shared"})  # fmt: skip
    lines = [
        f'[server]\nauth = "{auth}"\naccount_id = "{A}"\n',
        f'[[credentials]]\naccess_key_id = "AKIDROOTA"\nsecret_access_key = "secret-AKIDROOTA"\naccount = "{A}"\n',
        f'[[credentials]]\naccess_key_id = "AKIDDEVB"\nsecret_access_key = "secret-AKIDDEVB"\naccount = "{B}"\n',
        f'principal = "arn:aws:iam::{B}:user/dev"\npolicies = {json.dumps([ALLOW_ALL])}\n',
        f'[[queues]]\nname = "shared"\nattributes = {{ Policy = {json.dumps(grant)} }}\n',
        '[[event_source_mappings]]\nqueue = "shared"\nfunction = "consumer"\n',
        f'[functions.consumer]\nrole = "{role}"\npolicies = {json.dumps([ALLOW_ALL])}\n',
    ]
    path = tmp / "declared.toml"
    path.write_text("".join(lines))
    return ServerThread(config_from_file(path, clock="manual", log_level="warning"))


def test_a_declared_mapping_belongs_to_its_functions_account(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A ``[[event_source_mappings]]`` entry of B's function on A's queue is B's mapping, run as B's role where A's
    queue policy grants it; without ``--auth iam`` (no grants) such an entry stops the start, saying why."""
    with _declared_server(tmp_path, "iam") as srv:
        consumer = _function(srv, "consumer")
        lam_b = _client(srv, "lambda", "AKIDDEVB")
        (mapping,) = lam_b.list_event_source_mappings()["EventSourceMappings"]
        assert mapping["FunctionArn"] == f"arn:aws:lambda:{REGION}:{B}:function:consumer"
        assert mapping["EventSourceArn"] == f"arn:aws:sqs:{REGION}:{A}:shared"
        assert _client(srv, "lambda", "AKIDROOTA").list_event_source_mappings()["EventSourceMappings"] == []
        root = _client(srv, "sqs", "AKIDROOTA")
        root.send_message(QueueUrl=root.get_queue_url(QueueName="shared")["QueueUrl"], MessageBody="for B")
        srv.app.event_sources.settle_threadsafe()  # type: ignore[attr-defined]
        assert consumer.bodies == ["for B"]
    with pytest.raises(RuntimeError, match="failed to start"):
        with _declared_server(tmp_path, "sigv4"):
            pass
    assert (
        "the function is account 222222222222's and the queue account 111111111111's; without --auth iam a "
        "mapping reads only its own account's queues" in caplog.text
    )


def test_a_functions_account_is_checked_when_the_file_is_read(tmp_path: Path) -> None:
    from sqsemu.declare import ConfigFileError

    path = tmp_path / "bad.toml"
    for table, wrong in (
        (f'role = "arn:aws:iam::{A}:role/r"\naccount = "{B}"\n', f"account {B} is not the account of its role"),
        ('account = "12345"\n', "account must be a 12-digit account id"),
    ):
        path.write_text(f"[functions.f]\n{table}")
        with pytest.raises(ConfigFileError, match=wrong):
            config_from_file(path)
