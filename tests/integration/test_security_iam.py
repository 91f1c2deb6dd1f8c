"""--auth iam over real HTTP with real clients of both protocols: the worked examples of docs/security.md (their
policies read from the page as they stand), AccessDenied as SQS answers it, the denial's access line, the
``sqsemu_access_denied_total`` counter, ``POST /_sqsemu/authorize`` and policy grammar errors."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, SignedClients, error_of, raw_request

pytestmark = pytest.mark.integration

A, B = "111111111111", "222222222222"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def doc_policy(name: str) -> str:
    """The JSON block after ``<!-- policy: name -->`` in docs/security.md, as it stands."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(rf"<!-- policy: {re.escape(name)} -->\n```json\n(.*?)```", text, re.DOTALL)
    assert found is not None, name
    return found.group(1)


KEYS = {
    "root_a": ("AKIDROOTA", None, [], A),
    "root_b": ("AKIDROOTB", None, [], B),
    "reader": ("AKIDREADER", f"arn:aws:iam::{A}:role/reader", ["read-only"], A),
    "nobody": ("AKIDNOBODY", f"arn:aws:iam::{A}:user/nobody", [], A),
    "consumer": ("AKIDCONSUMER", f"arn:aws:iam::{B}:role/consumer", ["cross-account-identity"], B),
    "sender_b": ("AKIDSENDERB", f"arn:aws:iam::{B}:user/sender", ["send-anything"], B),
}
SEND_ANYTHING = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]}
)


def _config(tmp: Path) -> str:
    (tmp / "send-anything.json").write_text(SEND_ANYTHING)
    lines = ['[server]\nauth = "iam"\naccount_id = "111111111111"\n']
    for key, principal, policies, account in KEYS.values():
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "secret-{key}"\n')
        lines.append(f'account = "{account}"\n')
        if principal:
            lines.append(f'principal = "{principal}"\n')
        texts = [doc_policy(p) if p != "send-anything" else "send-anything.json" for p in policies]
        if texts:
            lines.append(f"policies = {json.dumps(texts)}\n")
    return "".join(lines)


@pytest.fixture(scope="module")
def iam_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("iam")
    (tmp / "sqsemu.toml").write_text(_config(tmp))
    with ServerProcess(["--config", str(tmp / "sqsemu.toml"), "--access-log"]) as srv:
        yield srv


@pytest.fixture
def as_(iam_server: ServerProcess, protocol: str) -> Iterator[Any]:
    with SignedClients(iam_server.endpoint_url, protocol) as clients:
        yield lambda who: clients.make(KEYS[who][0], f"secret-{KEYS[who][0]}")


denied = error_of


def queue(root: Any, base: str, policy: str | None) -> tuple[str, str]:
    """A fresh queue of account A named ``base-<random>`` whose policy is ``policy`` with ``base`` renamed."""
    name = f"{base}-{uuid.uuid4().hex[:8]}"
    url = root.create_queue(QueueName=name)["QueueUrl"]
    if policy is not None:
        policy = policy.replace(f':{A}:{base}"', f':{A}:{name}"')
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})
    return name, url


def authorize(srv: ServerProcess, body: dict[str, Any]) -> dict[str, Any]:
    answer = raw_request(
        srv.endpoint_url, "POST", "/_sqsemu/authorize", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    assert answer.status == 200, answer.body
    result: dict[str, Any] = json.loads(answer.body)
    return result


def test_sns_only_queue(as_: Any, iam_server: ServerProcess) -> None:
    name, url = queue(as_("root_a"), "orders", doc_policy("sns-only"))
    arn = f"arn:aws:sqs:us-east-1:{A}:{name}"
    code, status, message = denied(lambda: as_("sender_b").send_message(QueueUrl=url, MessageBody="x"))
    assert (code, status) == ("AccessDenied", 403)
    assert message == (
        f"User: arn:aws:iam::{B}:user/sender is not authorized to perform: sqs:sendmessage on resource: {arn} "
        "because no resource-based policy allows the sqs:sendmessage action"
    )
    topic = {"aws:SourceArn": f"arn:aws:sns:us-east-1:{A}:orders-topic"}
    call = {"principal": "sns.amazonaws.com", "action": "SendMessage", "queue": arn}
    allowed = authorize(iam_server, {**call, "context": topic})
    assert (allowed["decision"], allowed["deciding"]) == ("allowed", "queue policy statement orders-topic-only")
    other = authorize(iam_server, {**call, "context": {"aws:SourceArn": f"arn:aws:sns:us-east-1:{A}:other"}})
    assert other["decision"] == "denied"


def test_deny_without_tls(as_: Any, iam_server: ServerProcess) -> None:
    root = as_("root_a")
    name, url = queue(root, "payments", None)
    root.send_message(QueueUrl=url, MessageBody="before")  # no policy yet: the root user may
    policy = doc_policy("tls-only").replace(f':{A}:payments"', f':{A}:{name}"')
    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})
    code, status, message = denied(lambda: root.send_message(QueueUrl=url, MessageBody="x"))
    assert (code, status) == ("AccessDenied", 403)
    assert message.endswith("with an explicit deny in a resource-based policy")
    over_tls = authorize(
        iam_server,
        {
            "access_key_id": "AKIDROOTA",
            "action": "SendMessage",
            "queue": url,
            "context": {"aws:SecureTransport": "true"},
        },
    )
    assert over_tls["decision"] == "allowed"
    plain = authorize(iam_server, {"access_key_id": "AKIDROOTA", "action": "SendMessage", "queue": url})
    assert (plain["decision"], plain["deciding"]) == ("denied", "queue policy statement deny-plain-http")


def test_cross_account_consumer(as_: Any) -> None:
    root = as_("root_a")
    _, url = queue(root, "shared", doc_policy("cross-account-queue"))
    root.send_message(QueueUrl=url, MessageBody="hello")
    consumer = as_("consumer")
    messages = consumer.receive_message(QueueUrl=url, WaitTimeSeconds=0).get("Messages", [])
    assert [m["Body"] for m in messages] == ["hello"]
    consumer.delete_message(QueueUrl=url, ReceiptHandle=messages[0]["ReceiptHandle"])
    code, status, message = denied(lambda: consumer.send_message(QueueUrl=url, MessageBody="x"))
    assert (code, status) == ("AccessDenied", 403)
    assert "because no resource-based policy allows the sqs:sendmessage action" in message
    # account B's root user: the queue policy names only the consumer role
    code, _, message = denied(lambda: as_("root_b").receive_message(QueueUrl=url))
    assert code == "AccessDenied" and "no resource-based policy allows" in message


def test_read_only_role(as_: Any) -> None:
    _, url = queue(as_("root_a"), "reports", None)
    reader = as_("reader")
    assert "QueueArn" in reader.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    reader.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    reader.list_queues()
    code, status, message = denied(lambda: reader.send_message(QueueUrl=url, MessageBody="x"))
    assert (code, status) == ("AccessDenied", 403)
    assert "because no identity-based policy allows the sqs:sendmessage action" in message
    code, _, message = denied(lambda: reader.purge_queue(QueueUrl=url))
    assert code == "AccessDenied" and message.endswith("with an explicit deny in an identity-based policy")
    code, _, _ = denied(
        lambda: reader.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", "MessageBody": "x"}])
    )  # a batch needs sqs:SendMessage
    assert code == "AccessDenied"


def test_no_policies_denied_and_explained(as_: Any, iam_server: ServerProcess) -> None:
    _, url = queue(as_("root_a"), "plain", None)
    code, status, _ = denied(lambda: as_("nobody").send_message(QueueUrl=url, MessageBody="x"))
    assert (code, status) == ("AccessDenied", 403)
    wanted = "denied=sqs:SendMessage identity=arn:aws:iam::111111111111:user/nobody access_key_id=AKIDNOBODY"
    deadline = time.monotonic() + 10
    while wanted not in iam_server.log_tail(100_000) and time.monotonic() < deadline:
        time.sleep(0.05)
    line = next(line for line in iam_server.log_tail(100_000).splitlines() if wanted in line)
    assert 'decided_by="no identity-based policy allows"' in line
    metrics = raw_request(iam_server.endpoint_url, "GET", "/metrics").body.decode()
    assert re.search(r'sqsemu_access_denied_total\{action="sqs:SendMessage"\} [1-9]', metrics)


def test_denial_on_the_wire(iam_server: ServerProcess, as_: Any, protocol: str) -> None:
    """The JSON protocol's __type and x-amzn-query-error; Query's <Code>: as botocore parses them both."""
    _, url = queue(as_("root_a"), "wire", None)
    with pytest.raises(ClientError) as caught:
        as_("nobody").send_message(QueueUrl=url, MessageBody="x")
    response = caught.value.response
    assert response["Error"]["Code"] == "AccessDenied"
    if protocol == "json":
        headers = response["ResponseMetadata"]["HTTPHeaders"]
        assert headers["x-amzn-query-error"] == "AccessDenied;Sender"


def test_policy_grammar_error(as_: Any) -> None:
    root = as_("root_a")
    _, url = queue(root, "grammar", None)
    bad = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Maybe", "Action": "sqs:*", "Principal": "*"}]})
    code, status, message = denied(lambda: root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": bad}))
    assert (code, status) == ("InvalidAttributeValue", 400)
    assert message == "Invalid value for the parameter Policy. Reason: Statement #1: Effect must be Allow or Deny."


def test_unsigned_calls_keep_sigv4_answers(iam_server: ServerProcess) -> None:
    answer = raw_request(
        iam_server.endpoint_url,
        "POST",
        "/",
        b"Action=ListQueues",
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status == 403 and b"MissingAuthenticationToken" in answer.body


def test_sqs_server_takes_principals_and_policies() -> None:
    """The testing API: SQSServer(auth="iam", credentials=...) with a principal and an identity policy."""
    from sqsemu.config import Credential
    from sqsemu.testing import SQSServer

    role = f"arn:aws:iam::{A}:role/reader"
    credentials = (
        Credential("AKIDROOT", "root-secret", A),
        Credential("AKIDREAD", "read-secret", A, role, (doc_policy("read-only"),)),
    )
    with SQSServer(auth="iam", account_id=A, credentials=credentials) as server:
        root = server.client()
        url = root.create_queue(QueueName="reports")["QueueUrl"]
        root.send_message(QueueUrl=url, MessageBody="x")
        reader = server.client(principal=role)
        assert reader.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "x"
        code, status, message = denied(lambda: reader.send_message(QueueUrl=url, MessageBody="y"))
        assert (code, status) == ("AccessDenied", 403)
        assert message.startswith(f"User: {role} is not authorized to perform: sqs:sendmessage")
