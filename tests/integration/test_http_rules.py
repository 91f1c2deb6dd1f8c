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
import socket
import threading
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


# --- answers given before the request was read whole (issue 47: findings 2, 3, 8; suspicion 9b) ------------------

TOKEN = "early-answer-token"
SEVEN_MIB = 7 * 1024 * 1024
HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture(scope="module")
def gated() -> Iterator[ServerThread]:
    """A server with an admin token and the default request timeout (30 s)."""
    with ServerThread(Config(host="127.0.0.1", admin_token=TOKEN)) as server:
        yield server


def _head(method: str, path: str, length: int, extra: str = "") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


def _answer_head(data: bytes) -> tuple[int, dict[str, str]]:
    head = data.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    return int(head[0].split()[1]), {k.lower(): v for k, v in (line.split(": ", 1) for line in head[1:])}


UNDER_THE_ADMIN_CAP = 900 * 1024  # over 64 KiB (what is read ahead for an app), under the admin routes' 1 MiB


def _chunked_body(size: int) -> bytes:
    piece = b"%x\r\n%s\r\n" % (65_536, b" " * 65_536)
    return piece * (size // 65_536) + b"0\r\n\r\n"


@pytest.mark.parametrize(
    ("method", "path", "extra", "length", "status"),
    [
        ("POST", "/_sqsemu/no-such-route", f"X-Sqsemu-Admin-Token: {TOKEN}\r\n", UNDER_THE_ADMIN_CAP, 404),
        ("POST", "/_sqsemu/no-such-route", f"X-Sqsemu-Admin-Token: {TOKEN}\r\n", None, 404),
        ("POST", "/health", "", UNDER_THE_ADMIN_CAP, 405),
        ("POST", "/_sqsemu/faults", "", SEVEN_MIB, 401),
        ("POST", "/_sqsemu/faults", "X-Sqsemu-Admin-Token: not-the-token\r\n", SEVEN_MIB, 403),
        ("POST", "/_sqsemu/no-such-route", f"X-Sqsemu-Admin-Token: {TOKEN}\r\n", SEVEN_MIB, 413),
        ("GET", "/_sqsemu/ui/queues", "", SEVEN_MIB, 303),
    ],
    ids=["404", "404-chunked", "405", "401-admin-gate", "403-admin-gate", "413-admin-cap", "303-console-login"],
)
def test_an_answer_given_before_a_large_body_is_read_drops_the_body_and_serves_the_next_request(
    gated: ServerThread, method: str, path: str, extra: str, length: int | None, status: int
) -> None:
    """RFC 9110 10.1.1: a server that answers before reading the whole content says whether it closes or goes on
    reading it. This one reads and drops the rest of the body (at most 64 MiB, within the read deadline) and serves
    the request sent after it. It stalled for ever: reading stayed paused, the next request was never answered."""
    if length is None:
        head = _head(method, path, 0, extra).replace(b"Content-Length: 0", b"Transfer-Encoding: chunked")
        request = head + _chunked_body(SEVEN_MIB)
    else:
        request = _head(method, path, length, extra) + b" " * length
    with socket.create_connection(("127.0.0.1", gated.port), timeout=20) as sock:
        sender = threading.Thread(target=sock.sendall, args=(request + HEALTH,))
        sender.start()
        buffer = bytearray()
        answered, headers, _ = read_answer(sock, buffer)
        after = read_answer(sock, buffer)
        sender.join(30)
    assert answered == status
    assert headers.get("connection") != "close", headers
    assert after[0] == 200 and json.loads(after[2])["status"] == "ok", after


def test_an_answer_given_before_a_body_too_long_to_drop_says_close_and_reads_what_still_comes(
    gated: ServerThread,
) -> None:
    """A body announced longer than the server drops (64 MiB) is not read: the answer says ``connection: close``;
    what the client sends meanwhile is read and dropped (no reset while it sends) until it closes its side."""
    sent: list[object] = []
    with socket.create_connection(("127.0.0.1", gated.port), timeout=20) as sock:

        def send_some() -> None:
            try:
                sock.sendall(_head("POST", "/_sqsemu/faults", 100 * 1024 * 1024) + b" " * SEVEN_MIB)
                sock.shutdown(socket.SHUT_WR)
                sent.append("all")
            except OSError as exc:
                sent.append(exc)

        sender = threading.Thread(target=send_some)
        sender.start()
        data, _, closed = recv_until_closed(sock, 20)
        sender.join(30)
    answered, headers = _answer_head(data)
    assert answered == 401, data[:300]
    assert headers.get("connection") == "close", headers
    assert closed and data.count(b"HTTP/1.1 ") == 1, data
    assert sent == ["all"]


def test_a_body_left_unread_is_dropped_up_to_64_mib_then_the_connection_closes(gated: ServerThread) -> None:
    """A chunked body (no length announced) answered early is read and dropped at most 64 MiB: past that the
    connection closes (gracefully: the client still sending is read and dropped, not reset); what follows the body
    is not answered."""
    sent: list[object] = []
    head = _head("POST", "/_sqsemu/no-such-route", 0, f"X-Sqsemu-Admin-Token: {TOKEN}\r\n")
    head = head.replace(b"Content-Length: 0", b"Transfer-Encoding: chunked")
    with socket.create_connection(("127.0.0.1", gated.port), timeout=20) as sock:

        def send_all() -> None:
            try:
                sock.sendall(head)
                for _ in range(10):
                    sock.sendall(_chunked_body(SEVEN_MIB)[:-5])  # 70 MiB of chunks in all
                sock.sendall(b"0\r\n\r\n" + HEALTH)
                sock.shutdown(socket.SHUT_WR)
                sent.append("all")
            except OSError as exc:
                sent.append(exc)

        sender = threading.Thread(target=send_all)
        sender.start()
        data, _, closed = recv_until_closed(sock, 30)
        sender.join(30)
    answered, _ = _answer_head(data)
    assert answered == 404, data[:300]
    assert closed and data.count(b"HTTP/1.1 ") == 1, data  # the request after the body: not answered
    assert sent == ["all"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [("", 401), (f"X-Sqsemu-Admin-Token: {TOKEN}\r\n", 413)],
    ids=["401-admin-gate", "413-admin-cap"],
)
def test_expect_100_continue_gets_the_final_answer_when_the_head_decides_it(
    gated: ServerThread, extra: str, status: int
) -> None:
    """RFC 9110 10.1.1: a server may answer the final status instead of 100 Continue; the client then sends no
    body. ``100 Continue`` went out before the app saw the request."""
    head = _head("POST", "/_sqsemu/faults", 2 * 1024 * 1024, extra + "Expect: 100-continue\r\n")
    with socket.create_connection(("127.0.0.1", gated.port), timeout=20) as sock:
        sock.sendall(head)
        data, _, closed = recv_until_closed(sock, 20)
    assert not data.startswith(b"HTTP/1.1 100 "), data[:200]
    answered, headers = _answer_head(data)
    assert answered == status, data[:300]
    assert headers.get("connection") == "close"  # the body announced will not come: nothing more is read
    assert closed


def test_expect_100_continue_is_answered_100_once_the_admin_app_reads_the_body(gated: ServerThread) -> None:
    rule = {"action": "SendMessage", "queue": "no-such-queue-100-continue", "count": 1, "latency_ms": 1}
    body = json.dumps(rule).encode()
    head = _head("POST", "/_sqsemu/faults", len(body), f"X-Sqsemu-Admin-Token: {TOKEN}\r\nExpect: 100-continue\r\n")
    try:
        with socket.create_connection(("127.0.0.1", gated.port), timeout=20) as sock:
            sock.sendall(head)
            interim = b""
            while b"\r\n\r\n" not in interim:
                chunk = sock.recv(1024)
                assert chunk, interim
                interim += chunk
            assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"), interim
            sock.sendall(body)
            buffer = bytearray(interim[len(b"HTTP/1.1 100 Continue\r\n\r\n") :])
            status, headers, body = read_answer(sock, buffer)
        assert status in (200, 201), body
        assert headers.get("connection") != "close"
    finally:
        raw_request(gated.endpoint_url, "DELETE", "/_sqsemu/faults", headers={"X-Sqsemu-Admin-Token": TOKEN})


def test_an_over_cap_body_sent_whole_and_slowly_still_gets_its_whole_answer(gated: ServerThread) -> None:
    """What a proxy does: it sends the whole body before it reads the answer. The 400 is written before the body is
    read; the server then shuts its write side and reads and drops the body while it keeps coming (RFC 9112 9.6),
    and closes once the client has closed its side. It closed 2 s after the answer, whatever was still coming: the
    client's kernel was reset and the answer lost."""
    length = 8_388_672  # the cap (8 MiB) and 64 bytes
    head = re.sub(
        rb"Content-Length: \d+",
        b"Content-Length: %d" % length,
        json_call("SendMessage", {"QueueUrl": "http://127.0.0.1/000000000000/q", "MessageBody": "x"}),
    ).partition(b"\r\n\r\n")[0]
    piece = b"x" * 65_536
    with socket.create_connection(("127.0.0.1", gated.port), timeout=20) as sock:
        sock.sendall(head + b"\r\n\r\n")
        left = length
        while left:  # the client's pace (about 3 s in all, steadily), not a wait for the server
            sock.sendall(piece[:left])
            left -= min(left, len(piece))
            time.sleep(0.025)
        sock.shutdown(socket.SHUT_WR)
        data, _, closed = recv_until_closed(sock, 20)
    status, headers = _answer_head(data)
    body = data.partition(b"\r\n\r\n")[2]
    assert status == 400, data[:300]
    assert headers.get("connection") == "close"
    assert len(body) == int(headers["content-length"]), data
    assert "InvalidParameterValue" in json.loads(body)["__type"], body
    assert closed


def test_many_requests_pipelined_behind_a_long_poll_are_answered_in_order(srv: ServerThread, queue_url: str) -> None:
    """Behind an answer under way the server parses no further than a few KiB (the rest of its read kept as bytes,
    bench/pipelined_rss.py): 400 calls (about 100 KiB, more than one read) sent in one write behind a long poll are
    all answered, in order, once the long poll is."""
    poll = json_call("ReceiveMessage", {"QueueUrl": queue_url, "WaitTimeSeconds": 20})
    sends = [json_call("SendMessage", {"QueueUrl": queue_url, "MessageBody": f"behind-{i}"}) for i in range(400)]
    with connect(srv) as sock:
        sender = threading.Thread(target=sock.sendall, args=(poll + b"".join(sends),))
        sender.start()
        srv.call(lambda: None)
        srv.advance(20)  # the long poll's wait runs out (manual clock)
        buffer = bytearray()
        first = read_answer(sock, buffer)
        answers = [read_answer(sock, buffer) for _ in sends]
        sender.join(20)
    assert first[0] == 200 and json.loads(first[2]) == {}, first
    for i, (status, _, body) in enumerate(answers):
        assert status == 200, body
        assert json.loads(body)["MD5OfMessageBody"] == hashlib.md5(f"behind-{i}".encode()).hexdigest()
    assert visible(srv, queue_url) == 400
