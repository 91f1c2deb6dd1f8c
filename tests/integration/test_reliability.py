"""Reliability findings of issue 22, each over real sockets with real clients on both wire protocols:

- realism's ``lost_answers`` is decided by the queue a call addresses, not by a same-named queue of the caller's
  account (docs/realism.md);
- a ``Host`` header without a port (Perl's Amazon::SQS::Simple sends ``Host: 127.0.0.1``) gives queue URLs with the
  port the server accepted the connection on (docs/behaviour.md 7.1).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from sqsemu.config import Config
from sqsemu.server import ServerThread
from tests.integration.harness import client_for
from tests.integration.harness.raw import raw_request

OWNER = "000000000000"
OTHER = "222222222222"


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(Config(host="127.0.0.1", clock="manual")) as server:
        yield server


def set_realism(srv: ServerThread, account: str, name: str, spec: str) -> None:
    answer = raw_request(
        srv.endpoint_url,
        "PUT",
        f"/_sqsemu/realism/queues/{account}/{name}",
        json.dumps({"spec": spec}).encode(),
        {"Content-Type": "application/json"},
    )
    assert answer.status == 200, answer.text


def send_raw(srv: ServerThread, protocol: str, url: str, body: str, account: str) -> bytes:
    """A SendMessage over its own connection, signed as ``account``: the answer's bytes, or b"" when the connection
    was closed unanswered."""
    auth = f"AWS4-HMAC-SHA256 Credential={account}/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=x"
    if protocol == "json":
        payload = json.dumps({"QueueUrl": url, "MessageBody": body}).encode()
        kind = b"X-Amz-Target: AmazonSQS.SendMessage\r\nContent-Type: application/x-amz-json-1.0\r\n"
    else:
        params = {"Action": "SendMessage", "QueueUrl": url, "MessageBody": body, "Version": "2012-11-05"}
        payload = urlencode(params).encode()
        kind = b"Content-Type: application/x-www-form-urlencoded\r\n"
    request = b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sAuthorization: %s\r\nContent-Length: %d\r\n\r\n%s" % (
        srv.port,
        kind,
        auth.encode(),
        len(payload),
        payload,
    )
    with socket.create_connection(("127.0.0.1", srv.port), timeout=20) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
            if b"\r\n\r\n" in received:
                break
        return received


def test_lost_answers_follow_the_addressed_queue_not_the_caller_s_same_named_queue(
    srv: ServerThread, protocol: str
) -> None:
    name = f"lossy-name-{protocol}"
    owner = client_for(srv.endpoint_url, protocol, access_key_id=OWNER)
    other = client_for(srv.endpoint_url, protocol, access_key_id=OTHER)
    try:
        owner_url = owner.create_queue(QueueName=name)["QueueUrl"]
        other.create_queue(QueueName=name)
        set_realism(srv, OTHER, name, "lost_answers=1")
        # The other account's call on the owner's queue (realism off) is answered, once.
        assert b" 200 OK" in send_raw(srv, protocol, owner_url, "to the owner", OTHER)
        got = owner.receive_message(QueueUrl=owner_url, MaxNumberOfMessages=10)["Messages"]
        assert [m["Body"] for m in got] == ["to the owner"]
        # Once the owner's queue loses answers, the other account's calls on it lose theirs too.
        set_realism(srv, OWNER, name, "lost_answers=1")
        assert send_raw(srv, protocol, owner_url, "lost answer", OTHER) == b""
    finally:
        owner.close()
        other.close()


def raw_call(srv: ServerThread, protocol: str, action: str, params: dict[str, Any], host: str) -> Any:
    headers = {"Host": host}
    if protocol == "json":
        headers |= {"X-Amz-Target": f"AmazonSQS.{action}", "Content-Type": "application/x-amz-json-1.0"}
        answer = raw_request(srv.endpoint_url, "POST", "/", json.dumps(params).encode(), headers)
        assert answer.status == 200, answer.text
        return answer.json()
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    body = urlencode({"Action": action, "Version": "2012-11-05", **params}).encode()
    answer = raw_request(srv.endpoint_url, "POST", "/", body, headers)
    assert answer.status == 200, answer.text
    return {e.tag.split("}")[1]: e.text for e in answer.xml().iter() if e.text and e.text.strip()}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_host_header_without_a_port_gives_queue_urls_with_the_server_s_port(
    srv: ServerThread, protocol: str, host: str
) -> None:
    name = f"portless-{protocol}-{host.replace('.', '-')}"
    created = raw_call(srv, protocol, "CreateQueue", {"QueueName": name}, host)
    assert created["QueueUrl"] == f"http://{host}:{srv.port}/{OWNER}/{name}"
    found = raw_call(srv, protocol, "GetQueueUrl", {"QueueName": name}, host)
    assert found["QueueUrl"] == created["QueueUrl"]
    # The URL works: a send through it reaches the queue.
    sqs = client_for(created["QueueUrl"].rsplit("/", 2)[0], protocol)
    try:
        sqs.send_message(QueueUrl=created["QueueUrl"], MessageBody="reached")
        assert sqs.receive_message(QueueUrl=created["QueueUrl"])["Messages"][0]["Body"] == "reached"
    finally:
        sqs.close()


def test_a_port_less_name_that_is_not_the_server_s_address_keeps_the_default_port(
    srv: ServerThread, protocol: str
) -> None:
    # Such a name may reach the server through a port mapping (a Kubernetes service on port 80, docker -p 80:9324):
    # the port the server accepted on is not the one the client used.
    name = f"mapped-{protocol}"
    created = raw_call(srv, protocol, "CreateQueue", {"QueueName": name}, "sqs-service")
    assert created["QueueUrl"] == f"http://sqs-service/{OWNER}/{name}"
