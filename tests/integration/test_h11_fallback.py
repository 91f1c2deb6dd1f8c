"""Without httptools the server falls back to uvicorn's h11 protocol, and says so: one warning line, ``/health``
``http_fast_lane`` ``off: httptools is not installed ...``; requests are served, and the request-read deadline of
``sqsemu.http.h11guard`` holds there too (a head or a body that stops arriving is answered 408 and closed). Over
real sockets; httptools is hidden from the server's choice of protocol (``sqsemu.server._have``)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

import sqsemu.server
from sqsemu.config import Config
from sqsemu.server import ServerThread
from tests.integration.harness import client_for
from tests.integration.harness.raw import raw_request
from tests.integration.harness.sockets import recv_until_closed

REASON = "off: httptools is not installed (uvicorn serves HTTP with h11)"


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with pytest.MonkeyPatch.context() as patch:
        real = sqsemu.server._have
        patch.setattr(sqsemu.server, "_have", lambda module: module != "httptools" and real(module))
        with ServerThread(Config(host="127.0.0.1", request_timeout=1)) as server:
            yield server


def test_the_fallback_says_so_and_serves(srv: ServerThread, protocol: str) -> None:
    assert raw_request(srv.endpoint_url, "GET", "/health").json()["http_fast_lane"] == REASON
    sqs = client_for(srv.endpoint_url, protocol)
    try:
        url = sqs.create_queue(QueueName=f"h11-{protocol}")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="over h11")
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "over h11"
    finally:
        sqs.close()


@pytest.mark.parametrize("cut", ["head", "body"])
def test_a_request_that_stops_arriving_is_answered_408_and_closed(srv: ServerThread, cut: str) -> None:
    body = json.dumps({"QueueName": "never"}).encode()
    request = (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AmazonSQS.CreateQueue\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    partial = request[:40] if cut == "head" else request[:-5]
    with socket.create_connection(("127.0.0.1", srv.port), timeout=20) as sock:
        sock.sendall(partial)
        answer, _, closed = recv_until_closed(sock, 20)
    assert closed  # the server closes the connection after the deadline (1 s)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_a_silent_connection_is_closed_without_a_word(srv: ServerThread) -> None:
    with socket.create_connection(("127.0.0.1", srv.port), timeout=20) as sock:
        assert recv_until_closed(sock, 20)[::2] == (b"", True)
