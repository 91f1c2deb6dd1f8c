"""Test helpers for the protocol/app unit tests: an in-memory fake broker and an ASGI driver (no sockets).

The fake broker implements just enough of ``Broker``'s contract for the protocol layer; it is not the engine.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Namespace
from sqsemu.engine.errors import (
    EmptyBatchRequest,
    InvalidParameterValue,
    MissingParameter,
    QueueDoesNotExist,
    ReceiptHandleIsInvalid,
    SQSError,
)
from sqsemu.engine.limits import DEFAULT_LIMITS
from sqsemu.engine.message import Message, ReceiptEntry, SendEntry
from sqsemu.http.app import create_app


class FakeQueue:
    def __init__(self, ns: Namespace, name: str, attributes: Mapping[str, str]) -> None:
        self.name = name
        self.namespace = ns
        self.arn = f"arn:aws:sqs:{ns.region}:{ns.account_id}:{name}"
        self.fifo = name.endswith(".fifo")
        self.attributes = dict(attributes)
        self.messages: list[Message] = []
        self.tags: dict[str, str] = {}


class FakeBroker:
    def __init__(self, clock: ManualClock | None = None) -> None:
        self.clock = clock or ManualClock(1_700_000_000_000)
        self.queues: dict[tuple[Namespace, str], FakeQueue] = {}
        self.started = False
        self.closed = False
        self.calls: list[tuple[str, Any]] = []
        self.disconnect_seen = False
        self.limits = DEFAULT_LIMITS

    def start(self) -> None:
        self.started = True

    def close(self) -> None:
        self.closed = True

    def create_queue(
        self, ns: Namespace, name: str | None, attributes: Mapping[str, str], tags: Mapping[str, str]
    ) -> FakeQueue:
        if not name:
            raise MissingParameter.named("QueueName")
        self.calls.append(("create_queue", (ns, name, dict(attributes), dict(tags))))
        q = self.queues.get((ns, name))
        if q is None:
            q = self.queues[(ns, name)] = FakeQueue(ns, name, attributes)
        return q

    def get_queue(self, ns: Namespace, name: str) -> FakeQueue:
        q = self.queues.get((ns, name))
        if q is None:
            raise QueueDoesNotExist()
        return q

    def list_queues(self, ns: Namespace, prefix: str | None) -> list[FakeQueue]:
        return sorted(
            (q for (n, name), q in self.queues.items() if n == ns and name.startswith(prefix or "")),
            key=lambda q: q.name,
        )

    def delete_queue(self, queue: FakeQueue) -> None:
        del self.queues[(queue.namespace, queue.name)]

    def purge_queue(self, queue: FakeQueue) -> None:
        queue.messages.clear()

    def get_queue_attributes(self, queue: FakeQueue, names: Sequence[str]) -> dict[str, str]:
        if "All" in names:
            return dict(queue.attributes)
        return {n: queue.attributes[n] for n in names if n in queue.attributes}

    def set_queue_attributes(self, queue: FakeQueue, attributes: Mapping[str, str]) -> None:
        queue.attributes.update(attributes)

    def send_message(self, queue: FakeQueue, entry: SendEntry, sender_id: str) -> Message:
        if not entry.body:
            raise MissingParameter.named("MessageBody")
        self.calls.append(("send_message", entry))
        m = Message(
            str(uuid.uuid4()),
            entry.body,
            entry.message_attributes,
            entry.system_attributes,
            entry.trace_header,
            sender_id,
            self.clock.now_ms(),
            len(entry.body),
            entry.group_id,
            entry.deduplication_id,
        )
        if queue.fifo:
            m.sequence_number = "18888888888888888888"
        queue.messages.append(m)
        return m

    def send_message_batch(
        self, queue: FakeQueue, entries: Sequence[SendEntry], sender_id: str
    ) -> list[Message | SQSError]:
        if not entries:
            raise EmptyBatchRequest("There should be at least one SendMessageBatchRequestEntry in the request.")
        out: list[Message | SQSError] = []
        for e in entries:
            try:
                out.append(self.send_message(queue, e, sender_id))
            except SQSError:
                out.append(InvalidParameterValue("The request must contain the parameter MessageBody."))
        return out

    async def receive_message(
        self,
        queue: FakeQueue,
        *,
        max_number_of_messages: int | None = None,
        visibility_timeout: int | None = None,
        wait_time_seconds: int | None = None,
        receive_request_attempt_id: str | None = None,
        disconnected: asyncio.Future[None] | None = None,
    ) -> list[tuple[Message, str]]:
        self.calls.append(
            ("receive_message", (max_number_of_messages, visibility_timeout, wait_time_seconds, disconnected))
        )
        if not queue.messages and wait_time_seconds and disconnected is not None:
            try:
                await asyncio.wait_for(asyncio.shield(disconnected), timeout=wait_time_seconds)
                self.disconnect_seen = True
            except TimeoutError:
                pass
        out = []
        for m in queue.messages[: max_number_of_messages or 1]:
            m.receive_count += 1
            if not m.first_receive_ms:
                m.first_receive_ms = self.clock.now_ms()
            out.append((m, f"rh-{m.message_id}-{m.receive_count}"))
        return out

    def _find(self, queue: FakeQueue, handle: str | None) -> Message:
        for m in queue.messages:
            if handle and handle.startswith(f"rh-{m.message_id}-"):
                return m
        raise ReceiptHandleIsInvalid(f'The input receipt handle "{handle}" is not a valid receipt handle.')

    def delete_message(self, queue: FakeQueue, receipt_handle: str | None) -> None:
        queue.messages.remove(self._find(queue, receipt_handle))

    def delete_message_batch(self, queue: FakeQueue, entries: Sequence[ReceiptEntry]) -> list[SQSError | None]:
        out: list[SQSError | None] = []
        for e in entries:
            try:
                self.delete_message(queue, e.receipt_handle)
                out.append(None)
            except SQSError as err:
                out.append(err)
        return out

    def change_message_visibility(
        self, queue: FakeQueue, receipt_handle: str | None, visibility_timeout: int | None
    ) -> None:
        self._find(queue, receipt_handle)
        self.calls.append(("change_message_visibility", (receipt_handle, visibility_timeout)))

    def change_message_visibility_batch(
        self, queue: FakeQueue, entries: Sequence[ReceiptEntry]
    ) -> list[SQSError | None]:
        out: list[SQSError | None] = []
        for e in entries:
            try:
                self.change_message_visibility(queue, e.receipt_handle, e.visibility_timeout)
                out.append(None)
            except SQSError as err:
                out.append(err)
        return out

    def list_dead_letter_source_queues(self, queue: FakeQueue) -> list[FakeQueue]:
        found = []
        for (ns, _), q in sorted(self.queues.items(), key=lambda item: item[0][1]):
            policy = q.attributes.get("RedrivePolicy")
            if ns == queue.namespace and policy and json.loads(policy).get("deadLetterTargetArn") == queue.arn:
                found.append(q)
        return found

    def tag_queue(self, queue: FakeQueue, tags: Mapping[str, str]) -> None:
        queue.tags.update(tags)

    def untag_queue(self, queue: FakeQueue, keys: Sequence[str]) -> None:
        for key in keys:
            queue.tags.pop(key, None)

    def list_queue_tags(self, queue: FakeQueue) -> dict[str, str]:
        return dict(queue.tags)


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


def make_app(config: Config | None = None, broker: FakeBroker | None = None) -> tuple[Any, FakeBroker]:
    broker = broker or FakeBroker()
    return create_app(config or Config(), broker, broker.clock), broker  # type: ignore[arg-type]


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
