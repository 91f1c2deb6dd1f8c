"""The request context under ``--auth iam``, over real HTTP on both wire protocols (issue 47, suspicions of
finding 9):

- numbers and dates are read by IAM's rules ("IAM JSON policy elements: Condition operators": integers or
  decimals; dates in the W3C profile of ISO 8601 or epoch seconds), not Python's ``float()``: ``"NaN"``,
  ``"Infinity"``, ``"1_000"``, ``" 5 "`` are not numbers, so a condition holding one is decided fail closed (an
  ``Allow`` never applies) instead of ``NumericNotEquals "NaN"`` letting everyone in;
- the ABAC keys ("Actions, resources, and condition keys for Amazon SQS", "ABAC condition keys for Amazon SQS"):
  ``aws:RequestTag/<key>`` and ``aws:TagKeys`` from CreateQueue's and TagQueue's tags, ``aws:TagKeys`` from the
  keys UntagQueue removes, ``aws:ResourceTag/<key>`` on every call on a queue, so a ``Deny`` relying on them
  applies;
- an IPv4 client of a server listening on ``::`` (seen as ``::ffff:a.b.c.d``) is its IPv4 address for an
  ``IpAddress`` condition and for ``--forwarded-allow-ips``.
"""

from __future__ import annotations

import http.client
import json
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, SignedClients, error_of

from sqsemu.config import Config, Credential
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

A = "111111111111"
REGION = "us-east-1"
ROOT = ("AKIDCTXROOT", "secret-ctx-root")
CAROL = ("AKIDCTXCAROL", "secret-ctx-carol")  # no identity-based policies: only the queue policy can allow her
TAGGER = ("AKIDCTXTAGGER", "secret-ctx-tagger")

TAGGER_POLICY = {"Version": "2012-10-17", "Statement": [
    {"Sid": "all", "Effect": "Allow", "Action": "sqs:*", "Resource": "*"},
    {"Sid": "no-prod-tags", "Effect": "Deny", "Action": ["sqs:CreateQueue", "sqs:TagQueue"], "Resource": "*",
     "Condition": {"StringEquals": {"aws:RequestTag/env": "prod"}}},
    {"Sid": "owner-tag-is-the-admins", "Effect": "Deny",
     "Action": ["sqs:CreateQueue", "sqs:TagQueue", "sqs:UntagQueue"], "Resource": "*",
     "Condition": {"ForAnyValue:StringEquals": {"aws:TagKeys": "owner"}}},
    {"Sid": "locked-queues", "Effect": "Deny", "Action": "sqs:*", "Resource": "*",
     "Condition": {"StringEquals": {"aws:ResourceTag/locked": "yes"}}},
]}  # fmt: skip


def _config(path: Path, *server_lines: str) -> Path:
    lines = [f'[server]\nauth = "iam"\naccount_id = "{A}"\n', *server_lines, "\n"]
    lines.append(f'[[credentials]]\naccess_key_id = "{ROOT[0]}"\nsecret_access_key = "{ROOT[1]}"\naccount = "{A}"\n\n')
    for (key, secret), name, policies in ((CAROL, "carol", []), (TAGGER, "tagger", [json.dumps(TAGGER_POLICY)])):
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "{secret}"\n')
        lines.append(f'principal = "arn:aws:iam::{A}:user/{name}"\npolicies = {json.dumps(policies)}\n\n')
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def ctx_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    toml = _config(tmp_path_factory.mktemp("iam-context") / "sqsemu.toml")
    with ServerProcess(["--config", str(toml)]) as srv:
        yield srv


@pytest.fixture
def as_(ctx_server: ServerProcess, protocol: str) -> Iterator[Callable[[tuple[str, str]], Any]]:
    with SignedClients(ctx_server.endpoint_url, protocol) as clients:
        yield lambda key: clients.make(*key)


def _name(base: str) -> str:
    return f"{base}-{uuid.uuid4().hex[:8]}"


def _denied(call: Callable[[], Any]) -> bool:
    code, status, _ = error_of(call)
    assert (code, status) == ("AccessDenied", 403), (code, status)
    return True


# ----------------------------------------------------------------------------------------- numbers and dates


NOT_NUMBERS = [
    {"NumericNotEquals": {"aws:EpochTime": "NaN"}},
    {"NumericLessThan": {"aws:EpochTime": "Infinity"}},
    {"NumericGreaterThan": {"aws:EpochTime": "1_000"}},
    {"NumericGreaterThan": {"aws:EpochTime": " 5 "}},
    {"NumericGreaterThan": {"aws:EpochTime": "+5"}},
    {"NumericGreaterThan": {"aws:EpochTime": "\u0661\u0662"}},  # Arabic-Indic digits: float() reads 12
    {"NumericGreaterThan": {"aws:EpochTime": "1e3"}},
    {"DateLessThan": {"aws:CurrentTime": "Infinity"}},
    {"DateGreaterThan": {"aws:CurrentTime": "1_000"}},
    {"DateGreaterThan": {"aws:CurrentTime": " 2001-01-01T00:00:00Z "}},
    {"DateGreaterThan": {"aws:CurrentTime": "2001-01-01 00:00:00"}},
]
NUMBERS = [
    {"NumericGreaterThan": {"aws:EpochTime": "1000"}},
    {"NumericGreaterThanEquals": {"aws:EpochTime": 5}},
    {"NumericNotEquals": {"aws:EpochTime": "-1.5"}},
    {"DateGreaterThan": {"aws:CurrentTime": "2001-01-01T00:00:00Z"}},
    {"DateGreaterThan": {"aws:CurrentTime": "2001-01-01T01:00:00.25+01:00"}},
    {"DateGreaterThan": {"aws:CurrentTime": "2001-01"}},
    {"DateLessThan": {"aws:EpochTime": "9999-12-31T23:59Z"}},
    {"DateGreaterThan": {"aws:EpochTime": "978307200"}},
]


def _carol_sends(as_: Callable[[tuple[str, str]], Any], condition: dict[str, Any]) -> Callable[[], Any]:
    """A fresh queue whose policy allows carol to send when ``condition`` holds; the call of her sending."""
    root = as_(ROOT)
    url = root.create_queue(QueueName=_name("numbers"))["QueueUrl"]
    statement = {"Sid": "carol-if", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{A}:user/carol"},
                 "Action": "sqs:SendMessage", "Condition": condition}  # fmt: skip
    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps({"Version": "2012-10-17",
                                                                              "Statement": [statement]})})  # fmt: skip
    carol = as_(CAROL)
    return lambda: carol.send_message(QueueUrl=url, MessageBody="x")


@pytest.mark.parametrize("condition", NOT_NUMBERS, ids=lambda c: json.dumps(c))
def test_a_value_that_is_no_number_or_date_by_iams_rules_allows_nothing(as_: Any, condition: dict[str, Any]) -> None:
    assert _denied(_carol_sends(as_, condition))


@pytest.mark.parametrize("condition", NUMBERS, ids=lambda c: json.dumps(c))
def test_numbers_and_dates_iam_reads_still_decide(as_: Any, condition: dict[str, Any]) -> None:
    assert "MessageId" in _carol_sends(as_, condition)()


# ----------------------------------------------------------------------------------------------- ABAC keys


def test_request_tags_and_tag_keys_of_create_queue(as_: Any) -> None:
    tagger = as_(TAGGER)
    assert _denied(lambda: tagger.create_queue(QueueName=_name("c"), tags={"env": "prod"}))
    assert _denied(lambda: tagger.create_queue(QueueName=_name("c"), tags={"team": "a", "owner": "me"}))
    tagger.create_queue(QueueName=_name("c"), tags={"env": "dev"})
    tagger.create_queue(QueueName=_name("c"))


def test_request_tags_and_tag_keys_of_tag_and_untag_queue(as_: Any) -> None:
    root, tagger = as_(ROOT), as_(TAGGER)
    url = root.create_queue(QueueName=_name("t"), tags={"owner": "admins"})["QueueUrl"]
    assert _denied(lambda: tagger.tag_queue(QueueUrl=url, Tags={"env": "prod"}))
    assert _denied(lambda: tagger.tag_queue(QueueUrl=url, Tags={"ENV": "prod"}))  # key names: case-insensitive
    assert _denied(lambda: tagger.tag_queue(QueueUrl=url, Tags={"owner": "me"}))
    assert _denied(lambda: tagger.untag_queue(QueueUrl=url, TagKeys=["team", "owner"]))
    tagger.tag_queue(QueueUrl=url, Tags={"env": "dev", "team": "a"})
    tagger.untag_queue(QueueUrl=url, TagKeys=["team"])
    assert root.list_queue_tags(QueueUrl=url)["Tags"] == {"owner": "admins", "env": "dev"}


def test_resource_tags_on_every_call_on_a_queue(as_: Any) -> None:
    """Every SQS action with the queue resource type ("Actions, resources, and condition keys for Amazon SQS")
    has ``aws:ResourceTag/<key>``: a locked queue denies each of the tagger's calls on it."""
    root, tagger = as_(ROOT), as_(TAGGER)
    name = _name("locked")
    url = root.create_queue(QueueName=name, tags={"locked": "yes"})["QueueUrl"]
    arn = f"arn:aws:sqs:{REGION}:{A}:{name}"
    root.send_message(QueueUrl=url, MessageBody="kept")
    handle = root.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"][0]["ReceiptHandle"]
    calls: dict[str, Callable[[], Any]] = {
        "SendMessage": lambda: tagger.send_message(QueueUrl=url, MessageBody="x"),
        "SendMessageBatch": lambda: tagger.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", "MessageBody": "x"}]),
        "ReceiveMessage": lambda: tagger.receive_message(QueueUrl=url),
        "DeleteMessage": lambda: tagger.delete_message(QueueUrl=url, ReceiptHandle=handle),
        "DeleteMessageBatch": lambda: tagger.delete_message_batch(
            QueueUrl=url, Entries=[{"Id": "1", "ReceiptHandle": handle}]),
        "ChangeMessageVisibility": lambda: tagger.change_message_visibility(
            QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=5),
        "ChangeMessageVisibilityBatch": lambda: tagger.change_message_visibility_batch(
            QueueUrl=url, Entries=[{"Id": "1", "ReceiptHandle": handle, "VisibilityTimeout": 5}]),
        "GetQueueAttributes": lambda: tagger.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]),
        "GetQueueUrl": lambda: tagger.get_queue_url(QueueName=name),
        "SetQueueAttributes": lambda: tagger.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "1"}),
        "ListQueueTags": lambda: tagger.list_queue_tags(QueueUrl=url),
        "TagQueue": lambda: tagger.tag_queue(QueueUrl=url, Tags={"team": "b"}),
        "UntagQueue": lambda: tagger.untag_queue(QueueUrl=url, TagKeys=["locked"]),
        "AddPermission": lambda: tagger.add_permission(QueueUrl=url, Label="l", AWSAccountIds=[A],
                                                       Actions=["SendMessage"]),
        "RemovePermission": lambda: tagger.remove_permission(QueueUrl=url, Label="l"),
        "ListDeadLetterSourceQueues": lambda: tagger.list_dead_letter_source_queues(QueueUrl=url),
        "StartMessageMoveTask": lambda: tagger.start_message_move_task(SourceArn=arn),
        "ListMessageMoveTasks": lambda: tagger.list_message_move_tasks(SourceArn=arn),
        "CreateQueue": lambda: tagger.create_queue(QueueName=name),
        "PurgeQueue": lambda: tagger.purge_queue(QueueUrl=url),
        "DeleteQueue": lambda: tagger.delete_queue(QueueUrl=url),
    }  # fmt: skip
    answers = {action: _code_of(call) for action, call in calls.items()}
    assert {action: code for action, code in answers.items() if code != "AccessDenied"} == {}
    messages = root.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"]
    assert [m["Body"] for m in messages] == ["kept"]


def _code_of(call: Callable[[], Any]) -> str:
    """The error code of ``call()``, or ``allowed`` when it succeeded."""
    try:
        call()
    except ClientError as exc:
        return str(exc.response["Error"]["Code"])
    return "allowed"


# ------------------------------------------------------------------------- IPv4 clients of an IPv6 listener


def _dual_stack() -> bool:
    """Whether this machine has IPv6 and an IPv6 socket listening on ``::`` takes IPv4 clients."""
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as listener:
            listener.bind(("::", 0))
            listener.listen()
            with socket.create_connection(("::ffff:127.0.0.1", listener.getsockname()[1]), timeout=2):
                peer = listener.accept()[0]
                peer.close()
    except OSError:
        return False
    return True


needs_dual_stack = pytest.mark.skipif(
    not _dual_stack(), reason="no IPv6 here, or a socket listening on :: does not take IPv4 clients"
)


def _v6_server(**options: Any) -> ServerThread:
    """A server listening on ``::`` on a socket of its own, which takes IPv4 clients too (``ServerThread`` binds
    it; the command line's uvicorn socket for ``--host ::`` is IPv6 only, asyncio's choice)."""
    return ServerThread(Config(host="::", **options))


def _mapped_url(srv: ServerThread) -> str:
    return f"http://[::ffff:127.0.0.1]:{srv.port}"


@needs_dual_stack
def test_an_ipv4_ip_address_deny_applies_to_a_mapped_peer(protocol: str) -> None:
    """Listening on ``::``, a client of 127.0.0.1 is the peer ``::ffff:127.0.0.1``: a queue policy denying
    127.0.0.0/8 denies it (before, the IPv6 form never matched an IPv4 range and the Deny never applied)."""
    credentials = (
        Credential(ROOT[0], ROOT[1], A),
        Credential(TAGGER[0], TAGGER[1], A, principal=f"arn:aws:iam::{A}:user/tagger",
                   policies=(json.dumps(TAGGER_POLICY),)),
    )  # fmt: skip
    with _v6_server(auth="iam", account_id=A, credentials=credentials) as srv:
        with SignedClients(_mapped_url(srv), protocol) as clients:
            root, tagger = clients.make(*ROOT), clients.make(*TAGGER)
            url = root.create_queue(QueueName="local-only")["QueueUrl"]
            deny = {"Sid": "not-from-loopback", "Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage",
                    "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}}  # fmt: skip
            root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps({"Statement": [deny]})})
            assert _denied(lambda: tagger.send_message(QueueUrl=url, MessageBody="x"))
            assert _denied(lambda: root.send_message(QueueUrl=url, MessageBody="x"))  # a deny binds root too
            tagger.receive_message(QueueUrl=url)  # only SendMessage is denied


def _raw(port: int, protocol: str, name: str, headers: dict[str, str]) -> str:
    """The QueueUrl that an unsigned CreateQueue (``protocol``) sent to ``[::ffff:127.0.0.1]:port`` gets."""
    if protocol == "json":
        body = json.dumps({"QueueName": name}).encode()
        headers = {**headers, "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.CreateQueue"}
    else:
        body = f"Action=CreateQueue&QueueName={name}&Version=2012-11-05".encode()
        headers = {**headers, "Content-Type": "application/x-www-form-urlencoded"}
    connection = http.client.HTTPConnection("::ffff:127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/", body=body, headers=headers)
        response = connection.getresponse()
        text = response.read().decode()
        assert response.status == 200, text
    finally:
        connection.close()
    if protocol == "json":
        return str(json.loads(text)["QueueUrl"])
    return text.split("<QueueUrl>", 1)[1].split("</QueueUrl>", 1)[0]


@needs_dual_stack
def test_an_ipv4_forwarded_allow_ips_entry_trusts_a_mapped_peer(protocol: str) -> None:
    """``--forwarded-allow-ips 127.0.0.1`` on a server listening on ``::``: a proxy connecting from 127.0.0.1 (the
    peer ``::ffff:127.0.0.1``) is believed, so its ``X-Forwarded-Proto: https`` makes the queue URL's scheme."""
    with _v6_server(forwarded_allow_ips="127.0.0.1") as srv:
        queue_url = _raw(srv.port, protocol, f"proxied-{protocol}", {"X-Forwarded-Proto": "https"})
        assert queue_url.startswith("https://"), queue_url
        untrusted = _raw(srv.port, protocol, f"direct-{protocol}", {})
        assert untrusted.startswith("http://"), untrusted
