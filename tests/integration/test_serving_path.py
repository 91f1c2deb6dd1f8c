"""How sqsemu's own HTTP protocol frames, orders and times the requests of one connection, over real sockets
(``sqsemu.http.sqsprotocol``, the one parser of every byte; docs/architecture.md, "The HTTP protocol"). Each test
is one finding of the serving-path review, stated as what a client must observe:

- **Request smuggling** (RFC 9112 section 11.2; section 7.1, chunked transfer coding): a chunked request that
  sqsemu's protocol does not answer itself (a GET, a proxy header, any request after a non-SQS one: before issue 40,
  handed over to uvicorn's protocol) is one request, whatever its de-chunked body holds: a ``0\\r\\n\\r\\n`` inside a
  chunk does not end it, and a request inside its body never runs; a well-formed chunked SQS call is served on a
  connection that made a non-SQS request before.
- **Read deadline** (``--request-timeout``; RFC 9110 section 15.5.9, 408): it holds for a request that begins
  after a non-SQS request (the hand-over) and an idle pause longer than the deadline (the pause a keep-alive
  client makes between calls); it fires on time when ``--request-timeout`` is under the keep-alive timeout (5 s);
  ten such connections whose chunked requests never end (the head sent, the body never) are closed by it, so
  ``--max-connections`` frees their slots.
- **A connection that is closed runs nothing more** (RFC 9112 section 9.6): requests pipelined behind one whose
  connection a fault rule dropped (docs/testing.md, fault injection) do not run; after ``Connection: close`` or an
  HTTP/1.0 request, the request is answered and what follows in the same read does not run; an HTTP/1.0 request
  with ``Transfer-Encoding`` closes the connection after it (RFC 9112 section 6.1), whatever its
  ``Connection: keep-alive``.
- **Answers in request order** (RFC 9112 section 9.3.2): a 431 (RFC 6585 section 5) or a 503 (RFC 9110 section
  15.6.4) is never read as the answer to an earlier request still owed on the connection.
- **Trailers are not headers** (RFC 9110 section 6.5.1): a chunked body's trailer section changes neither the
  action (``X-Amz-Target``), the queue URL's host (``Host``) nor the protocol (``Content-Type``).
- **Framing of sqsemu's own answers** (RFC 9110 section 8.6): the 400 to a malformed request declares the length
  of its body.
- **The head cap** (64 KiB, 431 then close) applies to every request head of a read, not only the first.
- **An answer reaches a client still sending** (RFC 9112 section 9.6, "tear-down"): the server closes gracefully
  (its write side first, then reads and drops what still comes), so a large answer before a close is read whole,
  not cut short by a reset.

The request context of an SQS call on every path (IAM conditions, access lines, metrics) and the proxy headers are
in test_request_context.py; the connection rules that hold already in test_http_rules.py and
test_connection_limits.py. Deadlines are HTTP read deadlines, so they run on real time: each test here waits a
bounded few seconds at most; the engine runs on a manual clock (a long poll ends when the test advances it).
"""

from __future__ import annotations

import json
import re
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sqsemu.config import Config
from sqsemu.server import ServerThread
from tests.integration.harness.sockets import recv_until_closed

TIMEOUT_S = 1
"""The module server's ``request_timeout`` (seconds)."""
MARGIN_S = 0.75
"""How late a deadline may fire (timer slack, scheduling on a busy machine)."""
KEEP_ALIVE_S = 5
"""uvicorn's ``timeout_keep_alive``, which sqsemu's protocol keeps between requests."""
IDLE_S = TIMEOUT_S + 0.4
"""A pause between two requests of a keep-alive connection: longer than the read deadline, shorter than the
keep-alive timeout."""
LINGER_S = 3
"""Seconds a connection the server has closed (its write side shut) may still hold its slot: a graceful close reads
and drops what a client still sends for a bounded time, so that a reset does not discard the last answer."""
HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
SLOW_QUEUES = "slow-*"
"""CreateQueue of these names waits 100 ms (a fault rule's latency): the call is answered after the read ends."""
DROPPED_QUEUES = "dropped-*"
"""SendMessage to these queues drops the connection unanswered (a fault rule's ``drop``)."""


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    rules = (
        {"id": "slow-create", "action": "CreateQueue", "queue": SLOW_QUEUES, "latency_ms": 100},
        {"id": "drop-send", "action": "SendMessage", "queue": DROPPED_QUEUES, "drop": True},
    )
    config = Config(host="127.0.0.1", clock="manual", request_timeout=TIMEOUT_S, fault_rules=rules)
    with ServerThread(config) as server:
        yield server


@dataclass
class Answer:
    """One HTTP response: ``status``, ``headers`` (lower-case names) and ``body`` (``content-length`` bytes)."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def json_call(action: str, payload: dict[str, Any], *, extra: bytes = b"", version: bytes = b"1.1") -> bytes:
    """An AWS JSON 1.0 request with a Content-Length (``extra``: more header lines)."""
    body = json.dumps(payload).encode()
    return (
        b"POST / HTTP/%s\r\nHost: 127.0.0.1\r\nX-Amz-Target: AmazonSQS.%s\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\n%sContent-Length: %d\r\n\r\n%s"
        % (version, action.encode(), extra, len(body), body)
    )


def chunked(request: bytes, trailer: bytes = b"") -> bytes:
    """``request`` with its body sent as one chunk (``Transfer-Encoding: chunked``), then the last chunk and the
    trailer section ``trailer`` (header lines)."""
    head, _, body = request.partition(b"\r\n\r\n")
    head = re.sub(rb"Content-Length: \d+", b"Transfer-Encoding: chunked", head)
    return head + b"\r\n\r\n" + b"%x\r\n%s\r\n0\r\n%s\r\n" % (len(body), body, trailer)


def connect(server: ServerThread) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def first_answer(data: bytes) -> tuple[Answer, int] | None:
    """The complete response at the start of ``data`` (Content-Length framing) and where it ends, or None."""
    head, found, rest = data.partition(b"\r\n\r\n")
    if not found:
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (x.partition(":") for x in lines[1:])}
    size = int(headers.get("content-length", "0"))
    if len(rest) < size:
        return None
    return Answer(int(lines[0].split()[1]), headers, rest[:size]), len(head) + 4 + size


def parse_answers(data: bytes) -> tuple[list[Answer], bytes]:
    """The complete responses at the start of ``data``, and what is left over."""
    answers: list[Answer] = []
    while (found := first_answer(data)) is not None:
        answers.append(found[0])
        data = data[found[1] :]
    return answers, data


def read_answer(sock: socket.socket, buffer: bytearray, timeout: float = 10) -> Answer:
    """The next response on ``sock`` (``buffer`` keeps the bytes read past it); fails when the connection closes or
    stays silent for ``timeout`` seconds first."""
    sock.settimeout(timeout)
    while (found := first_answer(bytes(buffer))) is None:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            pytest.fail(f"no answer within {timeout} s; read so far: {bytes(buffer)[:300]!r}")
        assert chunk, f"the connection closed before an answer; read so far: {bytes(buffer)[:300]!r}"
        buffer += chunk
    del buffer[: found[1]]
    return found[0]


def ask(server: ServerThread, request: bytes) -> Answer:
    """``request`` on a connection of its own; its answer."""
    with connect(server) as sock:
        sock.sendall(request)
        return read_answer(sock, bytearray())


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_queue(server: ServerThread, name: str) -> str:
    answer = ask(server, json_call("CreateQueue", {"QueueName": name}))
    assert answer.status == 200, answer
    url: str = answer.json()["QueueUrl"]
    return url


def queue_exists(server: ServerThread, name: str) -> bool:
    answer = ask(server, json_call("GetQueueUrl", {"QueueName": name}))
    assert answer.status in (200, 400), answer
    return answer.status == 200


def bodies_in(server: ServerThread, queue_url: str) -> list[str]:
    """The bodies of the messages in the queue (received with a visibility timeout of 0: nothing changes)."""
    payload = {"QueueUrl": queue_url, "MaxNumberOfMessages": 10, "VisibilityTimeout": 0}
    answer = ask(server, json_call("ReceiveMessage", payload))
    assert answer.status == 200, answer
    return sorted(message["Body"] for message in answer.json().get("Messages", []))


def send_quietly(sock: socket.socket, data: bytes) -> None:
    """Send ``data``; the server may close the connection before it has all of it."""
    try:
        sock.sendall(data)
    except OSError:
        pass


def settle(server: ServerThread) -> None:
    """Let the server read what was sent (the bytes cross the loopback, then one more turn of its loop)."""
    time.sleep(0.2)
    server.call(lambda: None)


# ----------------------------------------------------------------------------------------------- 1: smuggling


def _carrier(kind: str, body: bytes) -> bytes:
    chunk = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    if kind == "GET /health":
        return b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk
    if kind == "POST with X-Forwarded-For":
        head = json_call("ListQueues", {}, extra=b"X-Forwarded-For: 10.0.0.1\r\n").partition(b"\r\n\r\n")[0]
    else:  # a plain SQS call, on a connection handed over by the request before it
        head = json_call("ListQueues", {}).partition(b"\r\n\r\n")[0]
    return re.sub(rb"Content-Length: \d+", b"Transfer-Encoding: chunked", head) + b"\r\n\r\n" + chunk


@pytest.mark.parametrize("carrier", ["GET /health", "POST with X-Forwarded-For", "after a hand-over"])
def test_a_request_inside_a_chunked_body_is_never_run_nor_answered(srv: ServerThread, carrier: str) -> None:
    """RFC 9112 section 11.2: the chunk holds ``0\\r\\n\\r\\n`` then a CreateQueue request; it is body, not a
    second request."""
    name = unique("smuggled")
    body = b"0\r\n\r\n" + json_call("CreateQueue", {"QueueName": name})
    with connect(srv) as sock:
        buffer = bytearray()
        if carrier == "after a hand-over":
            sock.sendall(HEALTH)
            assert read_answer(sock, buffer).status == 200
        sock.sendall(_carrier(carrier, body))
        read_answer(sock, buffer)  # the carrier's own answer, whatever it is
        more, _, _ = recv_until_closed(sock, 0.5)
    extra, _ = parse_answers(bytes(buffer) + more)
    assert not extra, f"a second answer to one request: {[(a.status, a.body[:100]) for a in extra]}"
    assert not queue_exists(srv, name), "the CreateQueue inside the chunked body ran"


def test_a_chunked_sqs_call_is_served_after_a_non_sqs_request_on_its_connection(srv: ServerThread) -> None:
    url = create_queue(srv, unique("chunked-after-health"))
    with connect(srv) as sock:
        buffer = bytearray()
        sock.sendall(HEALTH)
        assert read_answer(sock, buffer).status == 200
        sock.sendall(chunked(json_call("SendMessage", {"QueueUrl": url, "MessageBody": "chunked"})))
        answer = read_answer(sock, buffer)
    assert answer.status == 200, answer
    assert bodies_in(srv, url) == ["chunked"]


# ------------------------------------------------------------------------------------------ 4, 11, 12: deadline


def _trickle_until_answered(sock: socket.socket, data: bytes, limit_s: float) -> tuple[bytes, float, bool]:
    """Send ``data`` one byte every 0.1 s until the server answers or closes, or ``limit_s`` passes: (what came
    back, seconds from the first byte, whether the connection closed)."""
    started = time.monotonic()
    received = b""
    for i in range(len(data)):
        if time.monotonic() - started > limit_s:
            return received, time.monotonic() - started, False
        try:
            sock.sendall(data[i : i + 1])
        except OSError:
            break
        sock.settimeout(0.1)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received, time.monotonic() - started, True
        received += chunk
        if not chunk:
            return received, time.monotonic() - started, True
        if received.startswith(b"HTTP/"):
            rest, _, closed = recv_until_closed(sock, TIMEOUT_S + MARGIN_S)
            return received + rest, time.monotonic() - started, closed
    rest, _, closed = recv_until_closed(sock, max(limit_s - (time.monotonic() - started), 0.1))
    return received + rest, time.monotonic() - started, closed


def test_a_body_trickled_after_a_non_sqs_request_and_an_idle_pause_is_answered_408_then_closed_on_time(
    srv: ServerThread,
) -> None:
    url = create_queue(srv, unique("trickled"))
    request = json_call("SendMessage", {"QueueUrl": url, "MessageBody": "t" * 300})
    head, _, body = request.partition(b"\r\n\r\n")
    with connect(srv) as sock:
        sock.sendall(HEALTH)  # a non-SQS request: the hand-over
        assert read_answer(sock, bytearray()).status == 200
        time.sleep(IDLE_S)
        sock.sendall(head + b"\r\n\r\n")
        received, seconds, closed = _trickle_until_answered(sock, body, TIMEOUT_S + 3)
    assert received.startswith(b"HTTP/1.1 408 "), f"no 408 {seconds:.2f} s into the trickle: {received[:200]!r}"
    assert closed and seconds < TIMEOUT_S + MARGIN_S, f"408 then close after {seconds:.2f} s (closed: {closed})"


def test_the_read_deadline_fires_on_time_when_it_is_shorter_than_the_keep_alive_timeout(srv: ServerThread) -> None:
    """A keep-alive connection made one call, waits, then sends half a head: 408 (or a close) within the read
    deadline, not at the keep-alive timer's next run (up to 5 s later)."""
    with connect(srv) as sock:
        sock.sendall(json_call("ListQueues", {}))
        assert read_answer(sock, bytearray()).status == 200
        time.sleep(IDLE_S)
        started = time.monotonic()
        sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        received, _, closed = recv_until_closed(sock, KEEP_ALIVE_S + 1)
        seconds = time.monotonic() - started
    print(f"\nhalf a head after {IDLE_S} s idle: closed after {seconds:.2f} s (request_timeout {TIMEOUT_S} s)")
    assert closed, f"still open {seconds:.2f} s after half a head"
    assert received == b"" or received.startswith(b"HTTP/1.1 408 "), received[:200]
    assert seconds < TIMEOUT_S + MARGIN_S, f"closed {seconds:.2f} s after half a head (deadline {TIMEOUT_S} s)"


def test_stalled_chunked_requests_after_a_non_sqs_request_are_closed_on_time_and_free_their_connection_slots() -> None:
    """Ten connections (``--max-connections 10``) each make a non-SQS request (the hand-over), pause, then send the
    head of a chunked SendMessage whose body never comes: each is answered 408 and closed by the read deadline, and
    then a new connection is served."""
    config = Config(host="127.0.0.1", clock="manual", request_timeout=TIMEOUT_S, max_connections=10)
    with ServerThread(config) as server:
        url = create_queue(server, "never-ends")
        request = json_call("SendMessage", {"QueueUrl": url, "MessageBody": "endless"})
        endless = chunked(request).partition(b"\r\n\r\n")[0] + b"\r\n\r\n"  # the head; its body never comes
        held = [connect(server) for _ in range(10)]
        try:
            for sock in held:
                sock.sendall(HEALTH)
                assert read_answer(sock, bytearray()).status == 200
            time.sleep(IDLE_S)
            started = time.monotonic()
            for sock in held:
                sock.sendall(endless)
            for sock in held:
                left = max(started + TIMEOUT_S + MARGIN_S - time.monotonic(), 0.05)
                received, _, closed = recv_until_closed(sock, left)
                seconds = time.monotonic() - started
                assert closed, f"a stalled connection still open {seconds:.2f} s after its head: {received[:100]!r}"
                assert received.startswith(b"HTTP/1.1 408 "), received[:200]
            # a server that closes gracefully may keep reading (and dropping) for a bounded linger before it lets
            # the socket go: the slot is free within a few seconds, whether or not the client ever closes its side
            status, until = 0, time.monotonic() + LINGER_S
            while time.monotonic() < until:
                status = ask(server, HEALTH).status
                if status == 200:
                    break
                time.sleep(0.1)
            assert status == 200, f"the ten were closed, yet a new connection is still answered {status}"
        finally:
            for sock in held:
                sock.close()


# ------------------------------------------------------------------------------------- 5, 8, 9: closed is closed


def test_calls_pipelined_behind_a_dropped_call_do_not_run(srv: ServerThread) -> None:
    dropped = create_queue(srv, unique("dropped"))
    kept = create_queue(srv, unique("kept"))
    behind = [json_call("SendMessage", {"QueueUrl": kept, "MessageBody": f"behind-{i}"}) for i in range(3)]
    with connect(srv) as sock:
        sock.sendall(json_call("SendMessage", {"QueueUrl": dropped, "MessageBody": "dropped"}) + b"".join(behind))
        received, _, closed = recv_until_closed(sock, 3)
    assert closed and received == b"", received[:200]
    assert bodies_in(srv, kept) == [], "calls behind the dropped one ran, unanswered"


@pytest.mark.parametrize("how", ["connection: close", "http/1.0"])
def test_a_call_that_asks_for_close_is_answered_and_what_follows_in_the_same_read_does_not_run(
    srv: ServerThread, how: str
) -> None:
    """RFC 9112 section 9.6. The first call waits (a fault rule's 100 ms latency) so its answer comes after the
    read that holds both requests."""
    first, second = unique("slow-close"), unique("after-close")
    if how == "http/1.0":
        asking = json_call("CreateQueue", {"QueueName": first}, version=b"1.0")
    else:
        asking = json_call("CreateQueue", {"QueueName": first}, extra=b"Connection: close\r\n")
    with connect(srv) as sock:
        sock.sendall(asking + json_call("CreateQueue", {"QueueName": second}))
        received, _, closed = recv_until_closed(sock, 3)
    answers, _ = parse_answers(received)
    assert [a.status for a in answers] == [200], f"answers: {answers}; read: {received[:300]!r}"
    assert answers[0].json()["QueueUrl"].endswith(f"/{first}")
    assert closed
    assert not queue_exists(srv, second), "the request after the close ran"


def test_an_http_1_0_request_with_transfer_encoding_closes_its_connection_whatever_its_keep_alive(
    srv: ServerThread,
) -> None:
    """RFC 9112 section 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; the connection closes
    after it (answered or refused 400), and the request pipelined behind it does not run."""
    url = create_queue(srv, unique("http10-chunked"))
    first = json_call("SendMessage", {"QueueUrl": url, "MessageBody": "first"}, extra=b"Connection: keep-alive\r\n")
    first = chunked(first.replace(b" HTTP/1.1\r\n", b" HTTP/1.0\r\n", 1))
    behind = json_call("SendMessage", {"QueueUrl": url, "MessageBody": "behind"})
    with connect(srv) as sock:
        sock.sendall(first + behind)
        received, _, closed = recv_until_closed(sock, 2)
    answers, _ = parse_answers(received)
    assert "behind" not in bodies_in(srv, url), f"the request behind it ran; answers: {[a.status for a in answers]}"
    assert closed and len(answers) <= 1, f"still open: {closed=}, answers: {[a.status for a in answers]}"


# --------------------------------------------------------------------------------------------- 6: answer order


def _long_poll_after_a_hand_over(server: ServerThread, sock: socket.socket) -> None:
    """A long poll on ``sock``, after a /health (the hand-over); it waits (manual clock)."""
    url = create_queue(server, unique("order"))
    sock.sendall(HEALTH + json_call("ReceiveMessage", {"QueueUrl": url, "WaitTimeSeconds": 20}))
    assert read_answer(sock, bytearray()).status == 200
    settle(server)


def _assert_the_long_poll_answered_first_or_nothing(received: bytes) -> None:
    answers, _ = parse_answers(received)
    if answers:  # what comes first answers the long poll: 200 and no message
        first = answers[0]
        assert first.status == 200 and first.json() == {}, f"read as the long poll's answer: {first}"


def test_a_431_is_not_read_as_the_answer_to_an_earlier_call_still_owed(srv: ServerThread) -> None:
    with connect(srv) as sock:
        _long_poll_after_a_hand_over(srv, sock)
        send_quietly(sock, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n")
        settle(srv)
        srv.advance(20)  # the long poll's wait runs out
        received, _, _ = recv_until_closed(sock, 3)
    _assert_the_long_poll_answered_first_or_nothing(received)


def test_a_503_is_not_read_as_the_answer_to_an_earlier_call_still_owed() -> None:
    with ServerThread(Config(host="127.0.0.1", clock="manual", max_connections=3)) as server:
        with connect(server) as sock:
            _long_poll_after_a_hand_over(server, sock)
            others = [connect(server) for _ in range(3)]  # silent: 4 connections, over --max-connections 3
            try:
                settle(server)
                sock.sendall(HEALTH)
                settle(server)
                server.advance(20)  # the long poll's wait runs out
                received, _, _ = recv_until_closed(sock, 3)
            finally:
                for other in others:
                    other.close()
    _assert_the_long_poll_answered_first_or_nothing(received)


# ------------------------------------------------------------------------------------------------- 7: trailers


def test_a_trailer_x_amz_target_does_not_change_the_action(srv: ServerThread) -> None:
    name = unique("trailer-target")
    request = chunked(json_call("GetQueueUrl", {"QueueName": name}), b"X-Amz-Target: AmazonSQS.CreateQueue\r\n")
    answer = ask(srv, request)
    assert answer.status == 400 and "QueueDoesNotExist" in answer.json()["__type"], answer
    assert not queue_exists(srv, name), "the trailer's CreateQueue ran"


def test_a_trailer_host_does_not_change_the_queue_url(srv: ServerThread) -> None:
    name = unique("trailer-host")
    url = create_queue(srv, name)
    answer = ask(srv, chunked(json_call("GetQueueUrl", {"QueueName": name}), b"Host: evil.example:1\r\n"))
    assert answer.status == 200, answer
    assert answer.json()["QueueUrl"] == url


def test_a_trailer_content_type_does_not_change_the_protocol(srv: ServerThread) -> None:
    name = unique("trailer-type")
    url = create_queue(srv, name)
    trailer = b"Content-Type: application/x-www-form-urlencoded\r\n"
    answer = ask(srv, chunked(json_call("GetQueueUrl", {"QueueName": name}), trailer))
    assert answer.status == 200, answer
    assert answer.headers["content-type"] == "application/x-amz-json-1.0"
    assert answer.json()["QueueUrl"] == url


# ------------------------------------------------------------------------------------------ 10, 12: own answers


def test_the_400_to_a_malformed_request_declares_the_length_of_its_body(srv: ServerThread) -> None:
    with connect(srv) as sock:
        sock.sendall(b"\x00\x01\x02 nonsense\r\n\r\n")
        received, _, closed = recv_until_closed(sock, 3)
    assert closed and received.startswith(b"HTTP/1.1 400 "), received[:200]
    head, _, body = received.partition(b"\r\n\r\n")
    declared = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
    assert declared is not None, head
    assert len(body) == int(declared.group(1)), f"content-length {declared.group(1).decode()}, body {body!r}"


def test_a_head_over_64_kib_behind_a_small_request_in_the_same_read_is_refused_431(srv: ServerThread) -> None:
    big = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 77_000 + b"\r\n\r\n"
    with connect(srv) as sock:
        send_quietly(sock, json_call("ListQueues", {}) + big)
        received, _, closed = recv_until_closed(sock, 3)
    answers, rest = parse_answers(received)
    assert [a.status for a in answers] == [200, 431], f"answers: {[a.status for a in answers]}, rest {rest[:100]!r}"
    assert closed


def test_a_large_answer_before_a_close_reaches_a_client_that_is_still_sending(srv: ServerThread) -> None:
    """A ReceiveMessage of about 2.5 MB with ``Connection: close``, and more bytes behind it the server will not
    read: closing with those bytes unread would send a reset, and the part of the answer not yet delivered would be
    lost. The client reads only after the server has closed."""
    url = create_queue(srv, unique("linger"))
    text = "y" * 250_000
    with connect(srv) as sock:
        for _ in range(10):
            sock.sendall(json_call("SendMessage", {"QueueUrl": url, "MessageBody": text}))
            assert read_answer(sock, bytearray()).status == 200
    receive = json_call("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 10}, extra=b"Connection: close\r\n")
    with connect(srv) as sock:
        sock.sendall(receive + b"z" * 200_000)
        time.sleep(1.0)  # the server has written its answer and closed before the client reads anything
        data, _, closed = recv_until_closed(sock, 10)
    answers, rest = parse_answers(data)
    assert len(answers) == 1 and rest == b"", (len(data), data[:300])
    assert answers[0].status == 200 and closed
    assert len(json.loads(answers[0].body)["Messages"]) == 10
