"""The connection rules of sqsemu's own HTTP protocol (``sqsemu.http.sqsprotocol``) over real sockets: HTTP/1.0 and
``Connection: close`` answered then closed, chunked bodies (small ones answered directly, large ones through the ASGI
cycle), requests pipelined in one write answered in order (an admin request among them hands the connection over
after the answers owed), a malformed request answered 400 (never a crash), a client gone during a long poll takes no
message, the body cap, and the keep-alive timeout. The read deadline, head cap and ``--max-connections`` are in
test_connection_limits.py; the requests that must take the ASGI cycle in test_fast_lane.py."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import time
from collections.abc import Iterator

import pytest

from sqsemu.config import Config
from sqsemu.server import ServerThread
from tests.integration.harness.raw import raw_request
from tests.integration.harness.sockets import recv_until_closed
from tests.integration.test_fast_lane import connect, fast_answers, json_call, read_answer


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(Config(host="127.0.0.1", clock="manual", request_timeout=2)) as server:
        yield server


@pytest.fixture
def queue_url(srv: ServerThread, request: pytest.FixtureRequest) -> str:
    name = "rules-" + re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)[:60]
    with connect(srv) as sock:
        sock.sendall(json_call("CreateQueue", {"QueueName": name}))
        status, _, body = read_answer(sock, bytearray())
    assert status == 200, body
    url: str = json.loads(body)["QueueUrl"]
    return url


def visible(srv: ServerThread, queue_url: str) -> int:
    with connect(srv) as sock:
        sock.sendall(json_call("GetQueueAttributes", {"QueueUrl": queue_url, "AttributeNames": ["All"]}))
        _, _, body = read_answer(sock, bytearray())
    return int(json.loads(body)["Attributes"]["ApproximateNumberOfMessages"])


@pytest.mark.parametrize("how", ["http/1.0", "connection: close"])
def test_a_call_that_asks_for_close_is_answered_then_closed(srv: ServerThread, queue_url: str, how: str) -> None:
    request = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": how})
    if how == "http/1.0":
        request = request.replace(b" HTTP/1.1\r\n", b" HTTP/1.0\r\n", 1)
    else:
        request = request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
    before = fast_answers(srv)
    with connect(srv) as sock:
        sock.sendall(request)
        data, _, closed = recv_until_closed(sock, 4)
    assert closed  # the server closes the connection after the answer, not at the keep-alive timeout (5 s)
    assert data.startswith(b"HTTP/1.1 200 ") and b"\r\nconnection: close\r\n" in data.lower()
    assert hashlib.md5(how.encode()).hexdigest().encode() in data
    assert fast_answers(srv) == before + 1


def chunked(request: bytes, size: int) -> bytes:
    head, _, body = request.partition(b"\r\n\r\n")
    head = re.sub(rb"Content-Length: \d+", b"Transfer-Encoding: chunked", head)
    parts = [b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)]
    return head + b"\r\n\r\n" + b"".join(parts) + b"0\r\n\r\n"


@pytest.mark.parametrize("length", [100, 150_000], ids=["small", "over-64-KiB"])
def test_a_chunked_body_is_read_whole(srv: ServerThread, queue_url: str, length: int) -> None:
    text = "c" * length
    before = fast_answers(srv)
    with connect(srv) as sock:
        sock.sendall(chunked(json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": text}), 7_000))
        status, _, body = read_answer(sock, bytearray())
    assert status == 200, body
    assert json.loads(body)["MD5OfMessageBody"] == hashlib.md5(text.encode()).hexdigest()
    assert fast_answers(srv) == before + 1  # small or large, answered by the one protocol


def test_requests_pipelined_in_one_write_are_answered_in_order_and_an_admin_one_after_them(
    srv: ServerThread, queue_url: str
) -> None:
    sends = [json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": f"p{i}"}) for i in range(5)]
    health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    last = json_call("GetQueueAttributes", {"QueueUrl": queue_url, "AttributeNames": ["All"]})
    with connect(srv) as sock:
        sock.sendall(b"".join(sends) + health + last)
        buffer = bytearray()
        answers = [read_answer(sock, buffer) for _ in range(7)]
    for i, (status, _, body) in enumerate(answers[:5]):
        assert status == 200 and json.loads(body)["MD5OfMessageBody"] == hashlib.md5(f"p{i}".encode()).hexdigest()
    assert answers[5][0] == 200 and json.loads(answers[5][2])["status"] == "ok"
    assert answers[6][0] == 200 and json.loads(answers[6][2])["Attributes"]["ApproximateNumberOfMessages"] == "5"


@pytest.mark.parametrize(
    "garbage",
    [b"\x00\x01\x02 nonsense\r\n\r\n", b"POST / HTTP/1.1\r\nContent-Length: banana\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n"],
    ids=["binary", "bad-length", "bad-version"],
)
def test_a_malformed_request_is_answered_400_and_the_server_goes_on(
    srv: ServerThread, queue_url: str, garbage: bytes
) -> None:
    with connect(srv) as sock:
        sock.sendall(json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "before"}) + garbage)
        buffer = bytearray()
        assert read_answer(sock, buffer)[0] == 200
        rest, _, closed = recv_until_closed(sock, 20)
        rest = bytes(buffer) + rest
    assert closed
    assert rest.startswith(b"HTTP/1.1 400 "), rest
    assert raw_request(srv.endpoint_url, "GET", "/health").json()["status"] == "ok"


def test_a_client_gone_during_a_long_poll_takes_no_message(srv: ServerThread, queue_url: str) -> None:
    with connect(srv) as sock:
        sock.sendall(json_call("ReceiveMessage", {"QueueUrl": queue_url, "WaitTimeSeconds": 20}))
        srv.call(lambda: None)  # the long poll waits (manual clock: it never runs out on its own)
    time.sleep(0.2)  # the server sees the connection close
    srv.call(lambda: None)
    with connect(srv) as sock:
        sock.sendall(json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "kept"}))
        assert read_answer(sock, bytearray())[0] == 200
    assert visible(srv, queue_url) == 1


def test_a_body_over_the_cap_is_refused_with_the_sqs_error(srv: ServerThread, queue_url: str) -> None:
    request = json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "x"})
    request = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % (9 * 1024 * 1024), request)
    with connect(srv) as sock:
        sock.sendall(request)
        status, _, body = read_answer(sock, bytearray())
    assert status == 400 and "InvalidParameterValue" in json.loads(body)["__type"], body


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout(srv: ServerThread, queue_url: str) -> None:
    with connect(srv) as sock:
        sock.sendall(json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": "then idle"}))
        assert read_answer(sock, bytearray())[0] == 200
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, without a word
        assert 4.0 <= time.monotonic() - started < 9.0  # uvicorn's timeout_keep_alive: 5 s


def test_an_admin_request_pipelined_behind_a_long_poll_is_answered_after_it(srv: ServerThread, queue_url: str) -> None:
    poll = json_call("ReceiveMessage", {"QueueUrl": queue_url, "WaitTimeSeconds": 20})
    health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with connect(srv) as sock:
        sock.sendall(poll + health)
        srv.call(lambda: None)  # the server has read both
        srv.advance(20)  # the long poll's wait runs out (manual clock)
        buffer = bytearray()
        first = read_answer(sock, buffer)
        second = read_answer(sock, buffer)
    assert first[0] == 200 and json.loads(first[2]) == {}, first  # the long poll's empty answer, first
    assert second[0] == 200 and json.loads(second[2])["status"] == "ok", second


@contextlib.contextmanager
def error_records() -> Iterator[list[logging.LogRecord]]:
    """The ERROR records the server logs meanwhile (its own loggers and uvicorn's, where an exception in the ASGI
    app is logged with its traceback)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.ERROR)
    loggers = [logging.getLogger(name) for name in ("sqsemu", "uvicorn.error")]
    for log in loggers:
        log.addHandler(handler)
    try:
        yield records
    finally:
        for log in loggers:
            log.removeHandler(handler)


ONE_IN_4301_DIGITS = b"0" * 4300 + b"1"
OVER_THE_ADMIN_CAP_IN_4301_DIGITS = b"0" * 4294 + b"2000000"  # 2,000,000 bytes; the admin cap is 1 MiB


@pytest.mark.parametrize(
    ("before", "head", "length", "body", "status"),
    [
        (b"", b"PUT /_sqsemu/realism", ONE_IN_4301_DIGITS, b"{", 400),
        (b"", b"PUT /_sqsemu/realism", OVER_THE_ADMIN_CAP_IN_4301_DIGITS, b"", 413),
        (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"POST /_sqsemu/reset", ONE_IN_4301_DIGITS, b"{", 400),
        (
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            b"POST /_sqsemu/reset",
            OVER_THE_ADMIN_CAP_IN_4301_DIGITS,
            b"",
            413,
        ),
    ],
    ids=["put-one", "put-over-cap", "relayed-post-one", "relayed-post-over-cap"],
)
def test_a_content_length_of_4301_digits_on_an_admin_route_is_a_4xx_not_a_crash(
    srv: ServerThread, before: bytes, head: bytes, length: bytes, body: bytes, status: int
) -> None:
    """Python's int() refuses strings of over 4,300 digits; httptools takes leading zeros, so such a length reaches
    the admin routes' body cap: read as the number it is (a 400 for the body that is not JSON, a 413 over the cap)."""
    request = (
        head + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: " + length + b"\r\n\r\n" + body
    )
    with error_records() as errors, connect(srv) as sock:
        sock.sendall(before + request)
        buffer = bytearray()
        if before:
            assert read_answer(sock, buffer)[0] == 200
        answer = read_answer(sock, buffer)
    assert answer[0] == status, answer
    assert "error" in json.loads(answer[2])
    assert not errors, [record.getMessage() for record in errors]
