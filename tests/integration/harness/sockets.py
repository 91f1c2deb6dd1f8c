"""Raw HTTP/1.1 over sockets, for tests that need many connections at once or requests no client library sends
(half a head, a body shorter than its Content-Length, huge headers).

- :func:`receive_request` - the bytes of a ReceiveMessage long poll in either wire protocol.
- :func:`read_response` - read one response from an asyncio stream: ``(status, headers, body)``.
- :func:`long_polls` - open ``n`` long polls on their own connections (asyncio), for shutdown tests.
- :func:`recv_until_closed` - a blocking socket's bytes until the server closes it (or resets it).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from urllib.parse import urlencode

CONNECT_HOST = "127.0.0.1"


def receive_request(queue_url: str, protocol: str, wait_seconds: int = 20) -> bytes:
    """An HTTP request for ``ReceiveMessage(QueueUrl=queue_url, WaitTimeSeconds=wait_seconds)`` in ``protocol``
    (``"json"`` or ``"query"``)."""
    if protocol == "json":
        body = json.dumps({"QueueUrl": queue_url, "WaitTimeSeconds": wait_seconds}).encode()
        head = b"Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ReceiveMessage\r\n"
    else:
        params = {"Action": "ReceiveMessage", "Version": "2012-11-05", "QueueUrl": queue_url}
        body = urlencode({**params, "WaitTimeSeconds": str(wait_seconds)}).encode()
        head = b"Content-Type: application/x-www-form-urlencoded\r\n"
    return b"POST / HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n%s" % (
        CONNECT_HOST.encode(),
        head,
        len(body),
        body,
    )


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a Content-Length: ``(status, lower-case headers, body)``."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body


async def long_polls(port: int, requests: list[bytes]) -> list[asyncio.Task[tuple[int, dict[str, str], bytes]]]:
    """Send each request on a new connection; return tasks that finish with its response (connection closed)."""

    async def one(request: bytes) -> tuple[int, dict[str, str], bytes]:
        reader, writer = await asyncio.open_connection(CONNECT_HOST, port)
        try:
            writer.write(request)
            await writer.drain()
            return await read_response(reader)
        finally:
            writer.close()

    return [asyncio.create_task(one(request)) for request in requests]


def recv_until_closed(sock: socket.socket, deadline_s: float) -> tuple[bytes, float, bool]:
    """Read ``sock`` until the server closes it: ``(bytes read, seconds it took, closed)``; ``closed`` is False
    when it was still open after ``deadline_s`` seconds. A reset counts as closed."""
    started = time.monotonic()
    data = b""
    while True:
        left = deadline_s - (time.monotonic() - started)
        if left <= 0:
            return data, time.monotonic() - started, False
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return data, time.monotonic() - started, False
        except ConnectionResetError:
            return data, time.monotonic() - started, True
        if not chunk:
            return data, time.monotonic() - started, True
        data += chunk
