"""Test helpers for the protocol/app unit tests: the ASGI application over a real broker on a manual clock, and an
ASGI driver (no sockets).

There is no fake broker: the engine on a ``ManualClock`` is as fast as a fake and cannot drift from the real answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.http.app import create_app
from tests.unit.engine_helpers import START_MS


class Response:
    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self.status = status
        self.headers = {k.decode().lower(): v.decode() for k, v in headers}
        self.body = body

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


async def call_asgi(
    app: Any,
    method: str = "POST",
    path: str = "/",
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    query_string: bytes = b"",
    chunks: Sequence[bytes] | None = None,
    disconnect_after_body: asyncio.Event | None = None,
) -> Response:
    """Drive one HTTP request through an ASGI app; returns the response."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query_string,
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "server": ("testserver", 9324),
        "client": ("127.0.0.1", 5000),
    }
    pieces = list(chunks) if chunks is not None else [body]
    state = {"i": 0}

    async def receive() -> dict[str, Any]:
        i = state["i"]
        if i < len(pieces):
            state["i"] += 1
            return {"type": "http.request", "body": pieces[i], "more_body": i < len(pieces) - 1}
        if disconnect_after_body is not None:
            await disconnect_after_body.wait()
            return {"type": "http.disconnect"}
        await asyncio.Future()  # never
        raise AssertionError

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body_out = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return Response(start["status"], list(start.get("headers", [])), body_out)


AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/sqs/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=abc"
)


def new_broker() -> Broker:
    """A broker on a ``ManualClock`` reading ``START_MS``, not started."""
    return Broker(ManualClock(START_MS))


def make_app(config: Config | None = None, broker: Broker | None = None) -> tuple[Any, Broker]:
    """The SQS app over ``broker`` (default: ``new_broker()``), started, serving with the broker's clock.

    The app is typed ``Any`` so tests can drive it as raw ASGI and adjust ``SQSApp`` fields (``max_body_bytes``).
    """
    broker = broker if broker is not None else new_broker()
    broker.start()
    return create_app(config or Config(), broker, broker.clock), broker


def json_call(app: Any, action: str, payload: dict[str, Any], **kw: Any) -> Response:
    headers = {
        "X-Amz-Target": f"AmazonSQS.{action}",
        "Content-Type": "application/x-amz-json-1.0",
        "Host": "localhost:9324",
        "Authorization": AUTH,
        **kw.pop("headers", {}),
    }
    return asyncio.run(call_asgi(app, "POST", kw.pop("path", "/"), headers, json.dumps(payload).encode(), **kw))


def query_call(app: Any, params: dict[str, str] | list[tuple[str, str]], method: str = "POST", **kw: Any) -> Response:
    encoded = urlencode(params).encode()
    headers = {"Host": "localhost:9324", "Authorization": AUTH, **kw.pop("headers", {})}
    path = kw.pop("path", "/")
    if method == "GET":
        return asyncio.run(call_asgi(app, "GET", path, headers, b"", query_string=encoded, **kw))
    headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
    return asyncio.run(call_asgi(app, "POST", path, headers, encoded, **kw))
