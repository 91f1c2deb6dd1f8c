"""A Lambda Invoke API endpoint that misbehaves on purpose, on a real socket (127.0.0.1, a free port), for the tests
of how an event source mapping takes a function endpoint's faults.

Each connection reads one HTTP request and answers as :attr:`MisbehavingEndpoint.mode` says at that moment:

- ``ok``: HTTP 200, ``{}`` (a success);
- ``close``: closes the connection after half of a status line and headers (a crash mid-answer);
- ``truncated``: a 200 promising a longer body than it sends, then closes;
- ``garbage``: bytes that are not HTTP at all;
- ``hang``: answers nothing for :attr:`hang_s` real seconds, then closes;
- ``oversized``: a 200 whose body is 7 MB (over Lambda's 6 MB response limit);
- ``not_json``: a 200 whose body is not JSON;
- ``error500``: HTTP 500.

``calls`` counts the requests read, by mode.
"""

from __future__ import annotations

import socket
import threading
from collections import Counter
from types import TracebackType

MODES = ("close", "truncated", "garbage", "hang", "oversized", "not_json", "error500")
"""Every misbehaviour (``ok`` is the one good answer)."""


def _read_request(conn: socket.socket) -> bool:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        body += chunk
    return True


def _response(status: str, body: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    return f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode() + body


class MisbehavingEndpoint:
    """The endpoint; a context manager. Set :attr:`mode` to change how the next requests are answered."""

    def __init__(self, mode: str = "ok", hang_s: float = 3.0) -> None:
        self.mode = mode
        self.hang_s = hang_s
        self.calls: Counter[str] = Counter()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            try:
                while _read_request(conn):
                    mode = self.mode
                    with self._lock:
                        self.calls[mode] += 1
                    if not self._answer(conn, mode):
                        return
            except OSError:
                return

    def _answer(self, conn: socket.socket, mode: str) -> bool:
        """Answer one request; False when the connection is to be closed."""
        if mode == "ok":
            conn.sendall(_response("200 OK", b"{}"))
            return True
        if mode == "not_json":
            conn.sendall(_response("200 OK", b"<html>this is not json"))
            return True
        if mode == "error500":
            conn.sendall(_response("500 Internal Server Error", b'{"message": "boom"}'))
            return True
        if mode == "close":
            conn.sendall(b"HTTP/1.1 200 O")
        elif mode == "truncated":
            conn.sendall(_response("200 OK", b'{"batchItem', length=1000))
        elif mode == "garbage":
            conn.sendall(b"\x00\x01SSH-2.0-OpenSSH_9.6 this is not HTTP\r\n\r\n")
        elif mode == "hang":
            self._stop.wait(self.hang_s)
        elif mode == "oversized":
            body = b'{"pad": "' + b"x" * (7 * 1024 * 1024) + b'"}'
            conn.sendall(_response("200 OK", body))
        return False

    def __enter__(self) -> MisbehavingEndpoint:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._sock.close()
        self._thread.join(5)
