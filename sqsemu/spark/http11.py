"""A minimal HTTP/1.1 client connection for the data source's JSON calls: one request, one response, kept alive.

Why not ``http.client``: it parses every response's headers with the ``email`` package's parser and writes a
request in several steps; at thousands of calls a second that was a fifth of the CPU of the process that receives
and deletes a stream's messages. Here a request goes out in one ``sendall`` and the response is read with a
buffered reader's ``readline``/``read`` (C code). What it understands of RFC 9112 ("HTTP/1.1", sections 4-7 and
9.3): a status line, header fields, a body framed by ``Content-Length``, by ``Transfer-Encoding: chunked`` or by the
end of the connection, interim 1xx responses (skipped), and persistence (``Connection: close``, HTTP/1.0). TLS goes
through :mod:`ssl` with the system's default verification.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass

__all__ = ["Connection", "HTTPProtocolError", "Response"]

_MAX_LINE = 65_536  # bytes of a status line, header line or chunk-size line
_MAX_HEADERS = 200


class HTTPProtocolError(OSError):
    """The server's answer is not HTTP/1.x as this client reads it (the connection is unusable afterwards)."""


@dataclass
class Response:
    """A response: ``status``; ``headers`` with lower-case names (a repeated field: the last value); ``body``;
    ``keep_alive``: whether the connection may carry another request."""

    status: int
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


class Connection:
    """One HTTP/1.1 connection to ``host:port`` (TLS when ``tls``), opened at once. ``connect_timeout`` and
    ``read_timeout`` are seconds. Not thread-safe: one request at a time. Raises ``OSError`` (including
    :class:`HTTPProtocolError` and ``ConnectionResetError`` when the server closed the connection before
    answering)."""

    def __init__(self, host: str, port: int, tls: bool, connect_timeout: float, read_timeout: float) -> None:
        sock = socket.create_connection((host, port), timeout=connect_timeout)
        try:
            # A request goes out in one send, but Nagle's algorithm could still hold back its tail.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
            sock.settimeout(read_timeout)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self._reader = sock.makefile("rb")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._reader.close()
        self.sock.close()

    def exchange(self, head: bytes, body: bytes) -> Response:
        """Send a request (``head``: request line and header fields, each ending in CRLF, plus the empty line;
        ``body``) and read its response."""
        self.sock.sendall(head + body)
        while True:
            status, version = self._status_line()
            headers = self._headers()
            if 100 <= status < 200 and status != 101:
                continue  # an interim response: the final one follows
            break
        connection = headers.get("connection", "").lower()
        keep_alive = version == b"HTTP/1.1" and "close" not in connection
        if version == b"HTTP/1.0":
            keep_alive = "keep-alive" in connection
        if status in (204, 304):
            return Response(status, headers, b"", keep_alive)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return Response(status, headers, self._chunked(), keep_alive)
        length = headers.get("content-length")
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                raise HTTPProtocolError(f"bad Content-Length {length!r}") from None
            data = self._reader.read(size)
            if len(data) != size:
                raise ConnectionResetError("the connection closed in the middle of a response body")
            return Response(status, headers, data, keep_alive)
        return Response(status, headers, self._reader.read(), False)  # framed by the end of the connection

    def _line(self) -> bytes:
        line = self._reader.readline(_MAX_LINE + 1)
        if len(line) > _MAX_LINE:
            raise HTTPProtocolError("a response line is too long")
        return line

    def _status_line(self) -> tuple[int, bytes]:
        line = self._line()
        if not line:
            raise ConnectionResetError("the server closed the connection without answering")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise HTTPProtocolError(f"not an HTTP/1.x status line: {line[:100]!r}")
        return int(parts[1]), parts[0]

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            line = self._line()
            if line in (b"\r\n", b"\n"):
                return headers
            if not line:
                raise ConnectionResetError("the connection closed in the middle of the response headers")
            name, colon, value = line.partition(b":")
            if not colon:
                raise HTTPProtocolError(f"not a header field: {line[:100]!r}")
            headers[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        raise HTTPProtocolError("too many header fields")

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            line = self._line()
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise HTTPProtocolError(f"bad chunk size line {line[:100]!r}") from None
            if size == 0:
                break
            data = self._reader.read(size + 2)  # the chunk and its CRLF
            if len(data) != size + 2:
                raise ConnectionResetError("the connection closed in the middle of a chunk")
            parts.append(data[:size])
        while self._line() not in (b"\r\n", b"\n", b""):  # trailer fields, ignored
            pass
        return b"".join(parts)
