"""A small Lambda Invoke API endpoint for the tests, served by uvicorn on a real socket (127.0.0.1, a free port).

It answers ``POST /2015-03-31/functions/{name}/invocations`` as Lambda's Invoke API (and the runtime interface
emulator) does: the function's result as the JSON body with HTTP 200, or, when the handler raises, HTTP 200 with
``X-Amz-Function-Error: Unhandled`` and ``{"errorMessage", "errorType"}``; an unknown function is 404
``ResourceNotFoundException``. Every call is recorded once its handler ran (``calls``: ``(name, event)``), and
:meth:`wait_for` waits (real time, bounded) until a number of calls arrived.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

import uvicorn

Handler = Callable[[dict[str, Any], Any], Any]


class InvokeEndpoint:
    """The endpoint with ``functions`` (name -> ``handler(event, context)``); a context manager."""

    def __init__(self, functions: dict[str, Handler]) -> None:
        self.functions = functions
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._changed = threading.Condition()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        parts = scope["path"].strip("/").split("/")
        status, headers, answer = 404, [], {"Type": "User", "Message": "Function not found"}
        if scope["method"] == "POST" and len(parts) == 4 and parts[:2] == ["2015-03-31", "functions"]:
            name = parts[2]
            handler = self.functions.get(name)
            if handler is not None:
                event = json.loads(body)
                status = 200
                try:
                    answer = await asyncio.to_thread(handler, event, None)
                except Exception as exc:  # noqa: BLE001 - the function's error is its answer
                    headers = [(b"x-amz-function-error", b"Unhandled")]
                    answer = {"errorMessage": str(exc), "errorType": type(exc).__name__}
                with self._changed:  # recorded once the handler ran: wait_for then sees what it did
                    self.calls.append((name, event))
                    self._changed.notify_all()
            else:
                headers = [(b"x-amzn-errortype", b"ResourceNotFoundException")]
        payload = json.dumps(answer).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), *headers],
            }
        )
        await send({"type": "http.response.body", "body": payload})

    def wait_for(self, count: int, timeout: float = 30.0) -> list[tuple[str, dict[str, Any]]]:
        """The calls once at least ``count`` arrived; ``AssertionError`` after ``timeout`` real seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.calls) >= count, timeout):
                raise AssertionError(f"{len(self.calls)} Invoke calls arrived, expected {count}")
            return list(self.calls)

    def start(self) -> InvokeEndpoint:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app, log_level="warning", lifespan="on", interface="asgi3")
        self._server = uvicorn.Server(config)
        server = self._server
        self._thread = threading.Thread(target=lambda: server.run(sockets=[sock]), daemon=True)
        self._thread.start()
        for _ in range(3000):
            if server.started:
                return self
            threading.Event().wait(0.01)
        raise RuntimeError("the Invoke endpoint did not start")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> InvokeEndpoint:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
