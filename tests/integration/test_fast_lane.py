"""sqsemu's own HTTP protocol over real sockets (``sqsemu.http.sqsprotocol``, docs/architecture.md "The HTTP
protocol"): it is on with the pinned uvicorn and httptools and answers SDK calls (``sqsemu_fast_lane_answers_total``
in ``/metrics``, ``http_fast_lane`` in ``/health``); every SQS call is answered by it, whatever its size, framing,
``Expect: 100-continue`` or browser headers (one parser for every byte: no hand-over to another); a forged
``X-Forwarded-Proto`` changes nothing unless the operator trusts the proxy (``--forwarded-allow-ips``); a request
pipelined behind a long poll is answered after it; a body that arrives slowly is answered, one that never completes
gets 408; a uvicorn without what the protocol relies on turns it off, said once.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from sqsemu.config import Config
from sqsemu.server import ServerThread
from tests.integration.harness import client_for
from tests.integration.harness.raw import raw_request

AUTH = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=x"
TIMEOUT_S = 20.0


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(Config(host="127.0.0.1", clock="manual", request_timeout=2)) as server:
        yield server


def fast_answers(srv: ServerThread) -> int:
    """``sqsemu_fast_lane_answers_total`` from ``GET /metrics``."""
    text = raw_request(srv.endpoint_url, "GET", "/metrics").text
    found = re.search(r"^sqsemu_fast_lane_answers_total (\S+)$", text, re.M)
    assert found is not None, text
    return int(float(found.group(1)))


def json_call(action: str, payload: dict[str, Any], extra: bytes = b"") -> bytes:
    body = json.dumps(payload).encode()
    return (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AmazonSQS.%s\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\nAuthorization: %s\r\n%sContent-Length: %d\r\n\r\n%s"
        % (action.encode(), AUTH.encode(), extra, len(body), body)
    )


def query_call(params: dict[str, str], extra: bytes = b"") -> bytes:
    body = urlencode({**params, "Version": "2012-11-05"}).encode()
    return (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Authorization: %s\r\n%sContent-Length: %d\r\n\r\n%s" % (AUTH.encode(), extra, len(body), body)
    )


def connect(srv: ServerThread) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT_S)
    return sock


def read_answer(sock: socket.socket, buffer: bytearray) -> tuple[int, dict[str, str], bytes]:
    """One response (with a Content-Length) from ``sock``; ``buffer`` keeps bytes of the next one."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        buffer += chunk
    head, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    size = int(headers.get("content-length", "0"))
    while len(rest) < size:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        rest += chunk
    buffer[:] = rest[size:]
    return int(lines[0].split()[1]), headers, rest[:size]


def ask(srv: ServerThread, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with connect(srv) as sock:
        sock.sendall(request)
        return read_answer(sock, bytearray())


@pytest.fixture
def queue_url(srv: ServerThread, request: pytest.FixtureRequest) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:70]
    status, _, body = ask(srv, json_call("CreateQueue", {"QueueName": name}))
    assert status == 200, body
    url: str = json.loads(body)["QueueUrl"]
    return url


def test_the_fast_lane_is_on_and_answers_sdk_calls(srv: ServerThread, protocol: str) -> None:
    health = raw_request(srv.endpoint_url, "GET", "/health").json()
    assert health["http_fast_lane"] == "on"
    assert 'http_fast_lane="on"' in raw_request(srv.endpoint_url, "GET", "/metrics").text
    sqs = client_for(srv.endpoint_url, protocol)
    before = fast_answers(srv)
    url = sqs.create_queue(QueueName=f"fast-{protocol}")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="hello")
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    assert got[0]["Body"] == "hello"
    assert fast_answers(srv) - before == 4


@pytest.mark.parametrize("kind", ["json", "query"])
def test_a_body_over_64_kib_is_answered_by_the_protocol_itself(srv: ServerThread, queue_url: str, kind: str) -> None:
    text = "x" * 200_000
    if kind == "json":
        request = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": text})
    else:
        request = query_call({"Action": "SendMessage", "QueueUrl": queue_url, "MessageBody": text})
    before = fast_answers(srv)
    status, _, body = ask(srv, request)
    assert status == 200, body
    assert hashlib.md5(text.encode()).hexdigest().encode() in body
    assert fast_answers(srv) == before + 1  # one parser, one way for every SQS call: no hand-over


def test_expect_100_continue_is_answered_100_before_the_body_is_sent(srv: ServerThread, queue_url: str) -> None:
    request = json_call(
        "SendMessage", {"QueueUrl": queue_url, "MessageBody": "after continue"}, b"Expect: 100-continue\r\n"
    )
    head, _, body = request.partition(b"\r\n\r\n")
    before = fast_answers(srv)
    with connect(srv) as sock:
        sock.sendall(head + b"\r\n\r\n")
        interim = sock.recv(1024)
        assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        buffer = bytearray(interim[len(b"HTTP/1.1 100 Continue\r\n\r\n") :])
        status, _, answer = read_answer(sock, buffer)
    assert status == 200, answer
    assert fast_answers(srv) == before + 1


def test_a_browser_call_goes_through_the_cross_site_rule(srv: ServerThread, queue_url: str) -> None:
    before = fast_answers(srv)
    status, _, body = ask(
        srv,
        json_call(
            "GetQueueAttributes",
            {"QueueUrl": queue_url, "AttributeNames": ["All"]},
            b"Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n",
        ),
    )
    assert status == 403, body
    assert fast_answers(srv) == before + 1


def test_a_forged_proxy_scheme_is_ignored_by_default(srv: ServerThread) -> None:
    status, _, body = ask(
        srv,
        json_call("CreateQueue", {"QueueName": "forged-proxy"}, b"X-Forwarded-Proto: https\r\n"),
    )
    assert status == 200, body
    assert json.loads(body)["QueueUrl"].startswith("http://")  # no proxy is trusted unless the operator says


def test_a_trusted_proxy_s_scheme_reaches_the_queue_urls() -> None:
    with ServerThread(Config(host="127.0.0.1", forwarded_allow_ips="127.0.0.1")) as server:
        status, _, body = ask(
            server,
            json_call("CreateQueue", {"QueueName": "behind-a-proxy"}, b"X-Forwarded-Proto: https\r\n"),
        )
    assert status == 200, body
    assert json.loads(body)["QueueUrl"].startswith("https://")


@pytest.mark.parametrize("kind", ["json", "query"])
def test_a_request_pipelined_behind_a_long_poll_is_answered_after_it(
    srv: ServerThread, queue_url: str, kind: str
) -> None:
    if kind == "json":
        poll = json_call("ReceiveMessage", {"QueueUrl": queue_url, "WaitTimeSeconds": 20})
        send = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "pipelined"})
    else:
        poll = query_call({"Action": "ReceiveMessage", "QueueUrl": queue_url, "WaitTimeSeconds": "20"})
        send = query_call({"Action": "SendMessage", "QueueUrl": queue_url, "MessageBody": "pipelined"})
    with connect(srv) as sock:
        sock.sendall(poll + send)
        srv.call(lambda: None)  # the server has read both (one more loop turn)
        srv.advance(20)  # the long poll's wait runs out (manual clock)
        buffer = bytearray()
        first = read_answer(sock, buffer)
        second = read_answer(sock, buffer)
    # the long poll's answer comes first and is empty: the send behind it ran only after it was answered
    assert first[0] == 200 and hashlib.md5(b"pipelined").hexdigest().encode() not in first[2], first[2]
    assert second[0] == 200, second[2]
    assert hashlib.md5(b"pipelined").hexdigest().encode() in second[2]


@pytest.fixture
def patient() -> Iterator[ServerThread]:
    """A server with the default request timeout (30 s): a client has that long to take some of its answers."""
    with ServerThread(Config(host="127.0.0.1", clock="manual")) as server:
        yield server


def test_a_client_that_stops_reading_its_answers_stops_the_server_reading_its_requests(patient: ServerThread) -> None:
    """Flow control: once a connection's unsent answers pass the transport's high-water mark, the server answers no
    more of its requests and reads no more until the client reads. 100 pipelined receives of a 200 KB message (20
    MB of answers) from a client that reads nothing: only the answers the socket buffers hold are made (not all
    100, held in memory); once the client reads, every answer comes, in order."""
    srv = patient
    status, _, created = ask(srv, json_call("CreateQueue", {"QueueName": "stops-reading"}))
    assert status == 200, created
    queue_url = json.loads(created)["QueueUrl"]
    body = "b" * 200_000
    assert ask(srv, json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": body}))[0] == 200
    receive = json_call("ReceiveMessage", {"QueueUrl": queue_url, "VisibilityTimeout": 0})
    before = fast_answers(srv)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the client's kernel buffer holds little
    sock.settimeout(TIMEOUT_S)
    sock.connect(("127.0.0.1", srv.port))
    with sock:
        sock.sendall(receive * 100)
        answered, deadline = -1, time.monotonic() + 10
        while time.monotonic() < deadline:  # until the server stops answering
            now = fast_answers(srv) - before
            if now == answered:
                break
            answered = now
            time.sleep(0.3)
        assert 0 < answered < 60, answered
        buffer = bytearray()
        for _ in range(100):
            status, _, answer = read_answer(sock, buffer)
            assert status == 200 and json.loads(answer)["Messages"][0]["Body"] == body
    assert fast_answers(srv) - before == 100


def test_a_body_sent_in_pieces_is_answered_once_whole(srv: ServerThread, queue_url: str) -> None:
    request = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "in pieces"})
    before = fast_answers(srv)
    with connect(srv) as sock:
        head, _, body = request.partition(b"\r\n\r\n")
        sock.sendall(head + b"\r\n\r\n")
        for i in range(0, len(body), 10):
            sock.sendall(body[i : i + 10])
            srv.call(lambda: None)  # each piece is read on its own
        status, _, answer = read_answer(sock, bytearray())
    assert status == 200, answer
    assert hashlib.md5(b"in pieces").hexdigest().encode() in answer
    assert fast_answers(srv) == before + 1


def test_a_body_that_never_completes_is_answered_408(srv: ServerThread, queue_url: str) -> None:
    request = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "never whole"})
    with connect(srv) as sock:
        sock.sendall(request[:-5])  # the request_timeout (2 s) runs out
        status, headers, _ = read_answer(sock, bytearray())
        assert sock.recv(1024) == b""
    assert status == 408
    assert headers["connection"] == "close"


def test_a_uvicorn_without_an_internal_the_fast_lane_reads_is_served_through_asgi_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, protocol: str
) -> None:
    from sqsemu.http import lanecheck

    assert lanecheck.protocol_unavailable() is None  # the installed (pinned) uvicorn has all of them
    monkeypatch.setattr(lanecheck, "_names", lambda *functions: {"http_protocol_class"})  # a future rename
    reason = "uvicorn's Config has no loaded_app"
    with caplog.at_level("WARNING", logger="sqsemu.http"), ServerThread(Config(host="127.0.0.1")) as server:
        warnings = [r.getMessage() for r in caplog.records if "fast lane" in r.getMessage()]
        assert warnings == [f"HTTP fast lane off: {reason}; every request takes the ASGI path"]
        assert raw_request(server.endpoint_url, "GET", "/health").json()["http_fast_lane"] == f"off: {reason}"
        sqs = client_for(server.endpoint_url, protocol)
        url = sqs.create_queue(QueueName="slow-path")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="still served")
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "still served"
        assert fast_answers(server) == 0
        assert f'http_fast_lane="off: {reason}"' in raw_request(server.endpoint_url, "GET", "/metrics").text


def test_the_request_id_header_is_spelled_as_aws_spells_it_on_both_paths(srv: ServerThread, queue_url: str) -> None:
    # Developer Guide, "Interpreting Amazon SQS JSON API responses": x-amzn-RequestId. uvicorn's ASGI cycle writes
    # header names in lower case; the fast lane and the ASGI path must answer alike.
    small = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "small"})
    large = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "x" * 100_000})
    for request in (small, large):
        with connect(srv) as sock:
            sock.sendall(request)
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(65536)
        assert b"\r\nx-amzn-RequestId: " in head.partition(b"\r\n\r\n")[0], head
