"""One request context for every path an SQS call can take through sqsemu's HTTP protocol, and the proxy headers
it trusts, over real sockets under ``--auth iam`` (docs/security.md, "Policies: --auth iam"; docs/architecture.md,
"The HTTP protocol").

- **The same call, the same context, whatever its path.** A signed SendMessage sent with a small body (answered by
  sqsemu's protocol itself), a body over 64 KiB and ``Expect: 100-continue`` (both handed to uvicorn's protocol),
  and a chunked body (RFC 9112 section 7.1), under a queue policy whose decision depends on ``aws:SourceIp``
  (``IpAddress`` / ``NotIpAddress``, IAM User Guide, "IAM JSON policy elements: Condition operators"): every path
  gets the same decision (status and error code), the same access line (``--access-log``, request id and latency
  masked; docs/observability.md) and the same ``sqsemu_requests_total`` / ``sqsemu_access_denied_total``
  increments in ``GET /metrics``. An ordinary SDK call (boto3, 64 KiB or less) is decided on the client's address
  like a 70 KB one.
- **Headers any local client can forge are not trusted by default.** ``X-Forwarded-Proto`` does not make a plain
  HTTP call "secure" (the "Deny without TLS" worked example of docs/security.md still denies it) nor queue URLs
  https; ``X-Forwarded-For`` does not set ``aws:SourceIp``; ``Forwarded`` (RFC 7239) is never honoured. With
  ``Config(forwarded_allow_ips=...)`` (``--forwarded-allow-ips``, uvicorn's semantics: a comma-separated list of
  proxy addresses or networks, ``*`` for any) a peer in the list is a trusted proxy: its ``X-Forwarded-Proto:
  https`` makes ``aws:SecureTransport`` true and queue URLs https, its ``X-Forwarded-For`` sets ``aws:SourceIp``;
  a peer not in the list is not.

Framing, ordering and deadlines of the same paths are in test_serving_path.py; the worked examples of
docs/security.md through SDK clients in test_security_iam.py.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from prometheus_client.parser import text_string_to_metric_families

from sqsemu.config import Config, Credential
from sqsemu.server import ServerThread
from tests.integration.harness.clients import json_client
from tests.integration.test_serving_path import Answer, read_answer

A = "111111111111"
KEY, SECRET = "AKIDROOTA", "secret-AKIDROOTA"
REGION = "us-east-1"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"
FORGED_IP = "203.0.113.7"
PATHS = ("small body", "body over 64 KiB", "chunked", "Expect: 100-continue")
LARGE_BODY = 70_000
"""A message body over the 64 KiB that sqsemu's protocol answers itself (under SQS's 256 KiB)."""
COUNTED = ("sqsemu_requests_total", "sqsemu_access_denied_total")

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def iam_config(**options: Any) -> Config:
    """A server of account A under ``--auth iam`` with its root user's key and ``--access-log``; ``options``: more
    Config fields."""
    credentials = (Credential(KEY, SECRET, A),)
    return Config(host="127.0.0.1", auth="iam", account_id=A, access_log=True, credentials=credentials, **options)


@pytest.fixture(scope="module")
def iam() -> Iterator[ServerThread]:
    with ServerThread(iam_config()) as server:
        yield server


@pytest.fixture
def access_lines() -> Iterator[list[str]]:
    """The lines the ``sqsemu.access`` logger writes (SQS calls and denials; not the admin calls') from now on."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.name == "sqsemu.access":
                lines.append(record.getMessage())

    logger = logging.getLogger("sqsemu.access")
    handler, level = Collect(logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def doc_policy(name: str) -> str:
    """The JSON block after ``<!-- policy: name -->`` in docs/security.md, as it stands."""
    found = re.search(rf"<!-- policy: {re.escape(name)} -->\n```json\n(.*?)```", DOCS.read_text(), re.DOTALL)
    assert found is not None, name
    return found.group(1)


def ip_policy(name: str, operator: str, network: str) -> str:
    """A queue policy denying everyone every SQS action on queue ``name`` under ``operator`` ``aws:SourceIp``."""
    statement = {
        "Sid": "by-source-ip",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "sqs:*",
        "Resource": f"arn:aws:sqs:{REGION}:{A}:{name}",
        "Condition": {operator: {"aws:SourceIp": network}},
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def root_client(server: ServerThread) -> Any:
    return json_client(server.endpoint_url, access_key_id=KEY, secret_access_key=SECRET)


def queue_with_policy(server: ServerThread, base: str, policy: str | None) -> tuple[str, str]:
    """A fresh queue of account A named ``base-<random>``; ``policy`` (``{name}`` standing for its name, or a
    docs/security.md example naming ``base``) set as its queue policy. ``(name, url)``."""
    name = f"{base}-{uuid.uuid4().hex[:8]}"
    client = root_client(server)
    try:
        url: str = client.create_queue(QueueName=name)["QueueUrl"]
        if policy is not None:
            policy = policy.replace("{name}", name).replace(f':{A}:{base}"', f':{A}:{name}"')
            client.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})
    finally:
        client.close()
    return name, url


def signed(server: ServerThread, action: str, params: dict[str, str], protocol: str = "json") -> tuple[bytes, bytes]:
    """A request of the root user's, signed as botocore signs it: its head without the blank line that ends it
    (nor a framing header), and its body."""
    host = f"127.0.0.1:{server.port}"
    if protocol == "json":
        body = json.dumps(params).encode()
        headers = {"Host": host, "X-Amz-Target": f"AmazonSQS.{action}", "Content-Type": "application/x-amz-json-1.0"}
    else:
        body = urlencode({"Action": action, "Version": "2012-11-05", **params}).encode()
        headers = {"Host": host, "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    request = AWSRequest("POST", f"http://{host}/", data=body, headers=headers)
    SigV4Auth(Credentials(KEY, SECRET), "sqs", REGION).add_auth(request)
    lines = "".join(f"{name}: {value}\r\n" for name, value in request.headers.items())
    return b"POST / HTTP/1.1\r\n" + lines.encode(), body


def send(server: ServerThread, head: bytes, body: bytes, path: str = "small body", extra: bytes = b"") -> Answer:
    """Send the signed request (``extra``: unsigned header lines) on a connection of its own, framed as ``path``
    says; its answer."""
    head += extra
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        buffer = bytearray()
        if path == "chunked":
            half = len(body) // 2
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:half], body[half:]))
            sock.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n")
        elif path == "Expect: 100-continue":
            sock.sendall(head + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
            interim = read_answer(sock, buffer)
            if interim.status != 100:
                return interim  # answered before the body was asked for
            sock.sendall(body)
        else:
            sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return read_answer(sock, buffer)


def error_code(answer: Answer) -> str | None:
    """The SQS error code of an answer in either protocol (None for a success)."""
    query_error = answer.headers.get("x-amzn-query-error")
    if query_error is not None:
        return query_error.split(";")[0]
    found = re.search(rb"<Code>([^<]*)</Code>", answer.body)
    return found.group(1).decode() if found else None


def outcome(answer: Answer) -> tuple[int, str | None]:
    return answer.status, error_code(answer)


def counted(server: ServerThread) -> Samples:
    """The request and denial counters of ``GET /metrics``."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = read_answer(sock, bytearray())
    assert answer.status == 200, answer
    samples: Samples = {}
    for family in text_string_to_metric_families(answer.body.decode()):
        for sample in family.samples:
            if sample.name in COUNTED:
                samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def increments(before: Samples, after: Samples) -> dict[str, float]:
    """What changed between two scrapes, as ``name{label=value,...}: increment``."""
    changed = {}
    for key, value in after.items():
        if value != before.get(key, 0):
            name, labels = key
            changed[name + "{" + ",".join(f"{k}={v}" for k, v in labels) + "}"] = value - before.get(key, 0)
    return changed


def masked(line: str) -> str:
    return re.sub(r"(request_id|latency_ms)=\S+", r"\1=*", line)


# ------------------------------------------------------------------------------ one context for every path


POLICIES = {
    "Deny IpAddress 127.0.0.1/32": ("IpAddress", (403, "AccessDenied")),
    "Deny NotIpAddress 127.0.0.1/32": ("NotIpAddress", (200, None)),
}


@pytest.mark.parametrize("protocol", ["json", "query"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_every_path_of_a_call_gets_the_same_decision_access_line_and_metrics(
    iam: ServerThread, access_lines: list[str], policy: str, protocol: str
) -> None:
    operator, expected = POLICIES[policy]
    _, url = queue_with_policy(iam, "paths", ip_policy("{name}", operator, "127.0.0.1/32"))
    decisions: dict[str, tuple[int, str | None]] = {}
    lines: dict[str, list[str]] = {}
    metrics: dict[str, dict[str, float]] = {}
    for path in PATHS:
        text = "x" * LARGE_BODY if path == "body over 64 KiB" else f"sent with {path}"
        head, body = signed(iam, "SendMessage", {"QueueUrl": url, "MessageBody": text}, protocol)
        before, seen = counted(iam), len(access_lines)
        decisions[path] = outcome(send(iam, head, body, path))
        lines[path] = [masked(line) for line in access_lines[seen:]]
        metrics[path] = increments(before, counted(iam))
    assert decisions == dict.fromkeys(PATHS, expected), f"the decision depends on the path: {decisions}"
    assert all(found == lines[PATHS[0]] for found in lines.values()), lines
    assert all(found == metrics[PATHS[0]] for found in metrics.values()), metrics


def test_an_ip_address_condition_decides_an_sdk_call_of_any_size(iam: ServerThread) -> None:
    """boto3's SendMessage, 100 bytes and 70 KB: a Deny on ``IpAddress 127.0.0.1/32`` applies to both (the root
    user's included); a Deny on ``NotIpAddress 127.0.0.1/32`` to neither."""
    _, denying = queue_with_policy(iam, "ip-deny", ip_policy("{name}", "IpAddress", "127.0.0.1/32"))
    _, allowing = queue_with_policy(iam, "not-ip-deny", ip_policy("{name}", "NotIpAddress", "127.0.0.1/32"))
    client = root_client(iam)
    found: dict[tuple[str, int], str] = {}
    try:
        for url in (denying, allowing):
            for size in (100, LARGE_BODY):
                try:
                    client.send_message(QueueUrl=url, MessageBody="s" * size)
                    found[(url, size)] = "allowed"
                except ClientError as error:
                    found[(url, size)] = error.response["Error"]["Code"]
    finally:
        client.close()
    wanted = {(denying, 100): "AccessDenied", (denying, LARGE_BODY): "AccessDenied"}
    wanted |= {(allowing, 100): "allowed", (allowing, LARGE_BODY): "allowed"}
    assert found == wanted


# -------------------------------------------------------------------------------------------- proxy headers


def _send_with(server: ServerThread, url: str, header: bytes = b"") -> tuple[int, str | None]:
    head, body = signed(server, "SendMessage", {"QueueUrl": url, "MessageBody": "hello"})
    return outcome(send(server, head, body, extra=header))


def _created_url(server: ServerThread, header: bytes = b"") -> str:
    head, body = signed(server, "CreateQueue", {"QueueName": f"proxied-{uuid.uuid4().hex[:8]}"})
    answer = send(server, head, body, extra=header)
    assert answer.status == 200, answer
    created: str = json.loads(answer.body)["QueueUrl"]
    return created


DENIED = (403, "AccessDenied")
ALLOWED = (200, None)


def test_a_forged_x_forwarded_proto_does_not_escape_the_deny_without_tls_policy(iam: ServerThread) -> None:
    _, url = queue_with_policy(iam, "payments", doc_policy("tls-only"))
    forged = {
        "none": _send_with(iam, url),
        "X-Forwarded-Proto": _send_with(iam, url, b"X-Forwarded-Proto: https\r\n"),
        "Forwarded": _send_with(iam, url, b"Forwarded: proto=https\r\n"),
    }
    assert forged == {"none": DENIED, "X-Forwarded-Proto": DENIED, "Forwarded": DENIED}


def test_a_forged_x_forwarded_for_does_not_set_the_source_ip(iam: ServerThread) -> None:
    _, loopback = queue_with_policy(iam, "deny-loopback", ip_policy("{name}", "IpAddress", "127.0.0.1/32"))
    _, elsewhere = queue_with_policy(iam, "deny-elsewhere", ip_policy("{name}", "IpAddress", "203.0.113.0/24"))
    forged = b"X-Forwarded-For: %s\r\n" % FORGED_IP.encode()
    found = {
        "loopback denied, forged": _send_with(iam, loopback, forged),
        "elsewhere denied, forged": _send_with(iam, elsewhere, forged),
        "elsewhere denied, Forwarded": _send_with(iam, elsewhere, b"Forwarded: for=%s\r\n" % FORGED_IP.encode()),
    }
    wanted = {"loopback denied, forged": DENIED, "elsewhere denied, forged": ALLOWED}
    assert found == wanted | {"elsewhere denied, Forwarded": ALLOWED}


def test_a_forged_x_forwarded_proto_does_not_change_the_queue_url_scheme(iam: ServerThread) -> None:
    url = _created_url(iam, b"X-Forwarded-Proto: https\r\n")
    assert url.startswith(f"http://127.0.0.1:{iam.port}/{A}/proxied-"), url


def test_a_trusted_proxy_s_x_forwarded_proto_makes_the_call_secure_and_queue_urls_https() -> None:
    with ServerThread(iam_config(forwarded_allow_ips="127.0.0.1")) as server:
        _, url = queue_with_policy(server, "payments", doc_policy("tls-only"))
        found = {
            "none": _send_with(server, url),
            "X-Forwarded-Proto": _send_with(server, url, b"X-Forwarded-Proto: https\r\n"),
            "Forwarded": _send_with(server, url, b"Forwarded: proto=https\r\n"),
        }
        created = _created_url(server, b"X-Forwarded-Proto: https\r\n")
    assert found == {"none": DENIED, "X-Forwarded-Proto": ALLOWED, "Forwarded": DENIED}
    assert created.startswith("https://"), created


def test_a_trusted_proxy_s_x_forwarded_for_sets_the_source_ip() -> None:
    with ServerThread(iam_config(forwarded_allow_ips="127.0.0.1")) as server:
        _, url = queue_with_policy(server, "deny-elsewhere", ip_policy("{name}", "IpAddress", "203.0.113.0/24"))
        found = {
            "none": _send_with(server, url),
            "X-Forwarded-For": _send_with(server, url, b"X-Forwarded-For: %s\r\n" % FORGED_IP.encode()),
            "Forwarded": _send_with(server, url, b"Forwarded: for=%s\r\n" % FORGED_IP.encode()),
        }
    assert found == {"none": ALLOWED, "X-Forwarded-For": DENIED, "Forwarded": ALLOWED}


def test_a_peer_not_in_forwarded_allow_ips_is_not_a_trusted_proxy() -> None:
    with ServerThread(iam_config(forwarded_allow_ips="10.0.0.0/8, 192.0.2.1")) as server:
        _, tls_only = queue_with_policy(server, "payments", doc_policy("tls-only"))
        _, loopback = queue_with_policy(server, "deny-loopback", ip_policy("{name}", "IpAddress", "127.0.0.1/32"))
        found = {
            "X-Forwarded-Proto": _send_with(server, tls_only, b"X-Forwarded-Proto: https\r\n"),
            "X-Forwarded-For": _send_with(server, loopback, b"X-Forwarded-For: %s\r\n" % FORGED_IP.encode()),
        }
        created = _created_url(server, b"X-Forwarded-Proto: https\r\n")
    assert found == {"X-Forwarded-Proto": DENIED, "X-Forwarded-For": DENIED}
    assert created.startswith("http://"), created
