"""The data source's HTTP/1.1 client connection (sqsemu.spark.http11) reads the response framings a server may use
(Content-Length, chunked, end of connection), skips interim 1xx responses, knows when a connection may be reused,
and reports a server that closed the connection before answering as ConnectionResetError. Against a socket server
in a thread that answers with canned bytes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from sqsemu.spark.http11 import Connection, HTTPProtocolError

HEAD = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n"


@pytest.fixture
def answers() -> Iterator[tuple[list[bytes], list[bytes], int]]:
    """(answers to send, one per request received; requests received, head and body; port)."""
    queue: list[bytes] = []
    received: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                while queue:
                    data = conn.recv(65536)
                    if not data:
                        break
                    received.append(data)
                    answer = queue.pop(0)
                    if answer == b"CLOSE":
                        break
                    conn.sendall(answer)
                    if answer.endswith(b"<eof>"):
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield queue, received, port
    listener.close()


def test_content_length_chunked_and_keep_alive(answers: tuple[list[bytes], list[bytes], int]) -> None:
    queue, received, port = answers
    queue += [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Amzn-Query-Error: A;Sender\r\n\r\nhello",
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    ]
    connection = Connection("127.0.0.1", port, False, 5, 5)
    first = connection.exchange(HEAD, b"{}")
    assert (first.status, first.body, first.keep_alive) == (200, b"hello", True)
    assert first.headers["x-amzn-query-error"] == "A;Sender"
    assert received[0] == HEAD + b"{}"
    second = connection.exchange(HEAD, b"{}")
    assert (second.status, second.body, second.keep_alive) == (400, b"abcde", True)
    third = connection.exchange(HEAD, b"{}")
    assert (third.status, third.body, third.keep_alive) == (200, b"", False)
    connection.close()


def test_body_to_the_end_of_the_connection_and_http10(answers: tuple[list[bytes], list[bytes], int]) -> None:
    queue, _, port = answers
    queue.append(b"HTTP/1.0 200 OK\r\nContent-Type: x\r\n\r\nall of it<eof>")
    connection = Connection("127.0.0.1", port, False, 5, 5)
    answer = connection.exchange(HEAD, b"{}")
    assert (answer.status, answer.body, answer.keep_alive) == (200, b"all of it<eof>", False)
    connection.close()


def test_a_closed_connection_and_a_non_http_answer_raise(answers: tuple[list[bytes], list[bytes], int]) -> None:
    queue, _, port = answers
    queue.append(b"CLOSE")
    connection = Connection("127.0.0.1", port, False, 5, 5)
    with pytest.raises(ConnectionResetError):
        connection.exchange(HEAD, b"{}")
    connection.close()
    queue.append(b"SMTP ready\r\n\r\n")
    connection = Connection("127.0.0.1", port, False, 5, 5)
    with pytest.raises(HTTPProtocolError):
        connection.exchange(HEAD, b"{}")
    connection.close()
