"""A queue policy that does not parse never fails open (issue 41, finding 2), over real sockets with boto3 clients of
both protocols: SetQueueAttributes and CreateQueue refuse it for every caller (no ``--auth`` at all included), a
``[[queues]]`` declaration holding one stops the start naming the queue and the rule, a data folder holding one
stops an ``--auth iam`` start (and is repaired by starting without it), and a policy that does not parse met
anyway denies every call on its queue, the root user's too, logged at WARNING."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import client_for, error_of

from sqsemu.config import Config, Credential
from sqsemu.declare import DeclarationError, config_from_file
from sqsemu.engine.queue import Namespace
from sqsemu.persistence import StoreError
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

A = "111111111111"
ROOT = Credential("AKIDROOTA", "secret-root", A)
DENY_SEND = {"Sid": "no-sending", "Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage"}
BROKEN = {"Sid": "broken", "Effect": "Maybe", "Principal": "*", "Action": "sqs:*"}
BAD_POLICY = json.dumps({"Version": "2012-10-17", "Statement": [DENY_SEND, BROKEN]})
"""A valid explicit Deny beside a statement that breaks the grammar: dropping the whole policy lets SendMessage in."""
REASON = "Statement 'broken': Effect must be Allow or Deny."
GRAMMAR_ERROR = ("InvalidAttributeValue", 400, f"Invalid value for the parameter Policy. Reason: {REASON}")


def iam_config(**more: Any) -> Config:
    return Config(host="127.0.0.1", auth="iam", account_id=A, credentials=(ROOT,), **more)


def root_client(srv: ServerThread, protocol: str) -> Any:
    return client_for(srv.endpoint_url, protocol, access_key_id=ROOT.access_key_id, secret_access_key="secret-root")


@pytest.fixture(scope="module")
def open_server() -> Iterator[ServerThread]:
    """No ``--auth``: anyone may call, and the Policy grammar is still checked."""
    with ServerThread(Config(host="127.0.0.1")) as srv:
        yield srv


def test_set_queue_attributes_refuses_a_bad_policy_without_auth(open_server: ServerThread, protocol: str) -> None:
    sqs = client_for(open_server.endpoint_url, protocol)
    url = sqs.create_queue(QueueName=f"set-{protocol}")["QueueUrl"]
    assert error_of(lambda: sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": BAD_POLICY})) == GRAMMAR_ERROR
    assert "Policy" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


def test_create_queue_refuses_a_bad_policy_without_auth(open_server: ServerThread, protocol: str) -> None:
    sqs = client_for(open_server.endpoint_url, protocol)
    name = f"create-{protocol}"
    assert error_of(lambda: sqs.create_queue(QueueName=name, Attributes={"Policy": BAD_POLICY})) == GRAMMAR_ERROR
    code, _, _ = error_of(lambda: sqs.get_queue_url(QueueName=name))
    assert code == "AWS.SimpleQueueService.NonExistentQueue"


def test_create_queue_refuses_a_bad_policy_under_iam(protocol: str) -> None:
    """The same answer under ``--auth iam`` (the root user may create the queue; the policy is what is refused)."""
    with ServerThread(iam_config()) as srv:
        sqs = root_client(srv, protocol)
        assert error_of(lambda: sqs.create_queue(QueueName="q", Attributes={"Policy": BAD_POLICY})) == GRAMMAR_ERROR


def test_a_declared_bad_policy_stops_the_start(tmp_path: Path) -> None:
    (tmp_path / "sqsemu.toml").write_text(
        f'[server]\nauth = "iam"\naccount_id = "{A}"\n\n'
        f'[[credentials]]\naccess_key_id = "AKIDROOTA"\nsecret_access_key = "secret-root"\naccount = "{A}"\n\n'
        f"[[queues]]\nname = \"orders\"\nattributes = {{ Policy = '{BAD_POLICY}' }}\n"
    )
    config = config_from_file(tmp_path / "sqsemu.toml", host="127.0.0.1")
    with pytest.raises(DeclarationError) as caught:
        ServerThread(config).start().stop()
    assert "'orders'" in str(caught.value)
    assert REASON in str(caught.value)


def _store_policy(data_dir: Path, name: str, policy: str) -> None:
    """Write ``policy`` into the saved attributes of queue ``name``, as an older sqsemu (which stored any JSON
    object without ``--auth iam``) could have left it."""
    with sqlite3.connect(data_dir / "sqsemu.db") as db:
        (attributes,) = db.execute("SELECT attributes FROM queues WHERE name = ?", (name,)).fetchone()
        saved = json.loads(attributes)
        saved["Policy"] = policy
        db.execute("UPDATE queues SET attributes = ? WHERE name = ?", (json.dumps(saved), name))
    db.close()


def test_a_restored_bad_policy_is_never_served_open(
    tmp_path: Path, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "data"
    with ServerThread(Config(host="127.0.0.1", account_id=A, data_dir=str(data_dir))) as srv:
        client_for(srv.endpoint_url, protocol, access_key_id=A).create_queue(QueueName="orders")
    assert (data_dir / "sqsemu.db").exists()
    _store_policy(data_dir, "orders", BAD_POLICY)
    arn = f"arn:aws:sqs:us-east-1:{A}:orders"

    with pytest.raises(StoreError) as caught:
        ServerThread(iam_config(data_dir=str(data_dir))).start().stop()
    assert arn in str(caught.value) and REASON in str(caught.value)

    # Without --auth iam nothing is enforced: it starts, says so, and the policy can be removed by an SQS call.
    with caplog.at_level(logging.WARNING, logger="sqsemu.access"):
        with ServerThread(Config(host="127.0.0.1", account_id=A, data_dir=str(data_dir))) as srv:
            sqs = client_for(srv.endpoint_url, protocol, access_key_id=A)
            url = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert any(arn in r.getMessage() and REASON in r.getMessage() for r in caplog.records)
    with ServerThread(iam_config(data_dir=str(data_dir))) as srv:
        sqs = root_client(srv, protocol)
        sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName="orders")["QueueUrl"], MessageBody="repaired")


def test_a_bad_policy_met_anyway_denies_every_call(protocol: str, caplog: pytest.LogCaptureFixture) -> None:
    """Should one be met (it cannot enter through the API), every call on the queue is denied, the root user's
    too, and each denial is logged at WARNING with the queue and the rule."""
    with ServerThread(iam_config()) as srv:
        sqs = root_client(srv, protocol)
        url = sqs.create_queue(QueueName="orders")["QueueUrl"]
        queue = srv.call(srv.broker.get_queue, Namespace(A, "us-east-1"), "orders")
        srv.call(queue.attributes.__setitem__, "Policy", BAD_POLICY)
        arn = f"arn:aws:sqs:us-east-1:{A}:orders"
        with caplog.at_level(logging.WARNING, logger="sqsemu.access"):
            for call in (
                lambda: sqs.send_message(QueueUrl=url, MessageBody="x"),
                lambda: sqs.receive_message(QueueUrl=url),
                lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]),
            ):
                code, status, message = error_of(call)
                assert (code, status) == ("AccessDenied", 403)
                assert message.startswith(f"User: arn:aws:iam::{A}:root is not authorized to perform: sqs:")
                assert message.endswith("with an explicit deny in a resource-based policy")
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len([w for w in warnings if f"fail_closed={arn}" in w and "Effect must be Allow or Deny" in w]) == 3
