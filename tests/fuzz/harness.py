"""The in-process server the fuzz tests drive: the real ASGI app on the real Broker and a ManualClock, no sockets.

:class:`World` builds the app, seeds a few queues (standard, FIFO, a dead-letter pair, messages in flight so real
receipt handles exist), runs requests on its own event loop and checks each answer with :func:`problem`: status below
500 and a body that parses in the request's format (XML for Query, JSON for JSON 1.0, Query with ``Accept:
application/json`` and the admin routes). Exceptions the app logs or lets escape are collected as
:class:`Crash` es (exception type and innermost frame), so a run can report distinct tracebacks.

Long polls: a ReceiveMessage that waits parks on the manual clock; when a request is still pending after the loop
has gone idle, the world advances the clock by 21 seconds (the longest wait is 20) so it returns. Fault rules that a
fuzzed ``POST /_sqsemu/faults`` adds are removed at once: they would make later calls answer injected 5xx errors,
sleep or drop their connection by design.
"""

from __future__ import annotations

import asyncio
import logging
import re
import traceback
import xml.etree.ElementTree as ET
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import unquote

import orjson

from sqsemu.admin.faults import injector_for
from sqsemu.clock import MAX_TIME_MS, ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.http.app import create_app
from sqsemu.protocol.detect import looks_like_json
from sqsemu.protocol.query import wants_json
from tests.fuzz.grammar import ACCOUNT, BASE, HOST, FuzzRequest, State, queue_of

START_MS = 1_700_000_000_000
SEEDED = ("fz-dlq", "fz-dlq.fifo", "fz-std", "fz-fifo.fifo")
_JSON_CT = "application/x-amz-json-1.0"
_NAME_RE = re.compile(rb"/" + ACCOUNT.encode() + rb"/([A-Za-z0-9_-]{1,80}(?:\.fifo)?)(?![A-Za-z0-9_.-])")
_RECEIPT_RE = re.compile(rb'<ReceiptHandle>([^<]+)</ReceiptHandle>|"ReceiptHandle":"([^"]+)"')
_TASK_RE = re.compile(rb'<TaskHandle>([^<]+)</TaskHandle>|"TaskHandle":"([^"]+)"')


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Crash:
    """An exception raised while serving a request, by type and innermost frame (``file:line function``)."""

    kind: str
    where: str
    text: str = field(compare=False)

    @classmethod
    def from_exc_info(cls, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> Crash:
        frames = traceback.extract_tb(tb)
        where = f"{frames[-1].filename}:{frames[-1].lineno} {frames[-1].name}" if frames else "?"
        return cls(exc_type.__name__, where, "".join(traceback.format_exception(exc_type, exc, tb)))


class _CrashCollector(logging.Handler):
    """Collects the exceptions the app logs (``logger.exception`` of the SQS path)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.crashes: list[Crash] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[0] is not None:
            exc_type, exc, tb = record.exc_info
            assert exc is not None
            self.crashes.append(Crash.from_exc_info(exc_type, exc, tb))
        else:
            self.crashes.append(Crash("logged error", record.name, record.getMessage()))


_collector = _CrashCollector()


def _install_collector() -> None:
    for name in ("sqsemu", "uvicorn.error"):
        log = logging.getLogger(name)
        if _collector not in log.handlers:
            log.addHandler(_collector)
        log.propagate = False  # a fuzz run would otherwise print every traceback it provokes


def problem(request: FuzzRequest, response: Response) -> str | None:
    """What is wrong with ``response`` to ``request``, or None: status < 500 and a body that parses in the format
    the request asked for (see the module docstring)."""
    if response.status >= 500:
        return f"HTTP {response.status}"
    ct = response.headers.get("content-type", "")
    body = response.body
    if request.kind == "admin":
        if ct.startswith("application/json"):
            try:
                orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                return f"admin body is not JSON: {exc}"
            return None
        if response.status in (404, 405) and body in (b"Not Found", b"Method Not Allowed"):
            return None  # Starlette's answer for a path or method no admin route has
        if response.status == 307 and "location" in response.headers and not body:
            return None  # Starlette's redirect of a path with a trailing slash to the route without it
        return f"admin answer {response.status} {ct!r} is not JSON"
    if response.status == 200 and ct == "text/plain; charset=utf-8" and body.startswith(b"sqsemu "):
        return None  # a plain GET / (no action): what the server is, in a few lines (sqsemu.http.home)
    if looks_like_json(request.header("x-amz-target"), request.header("content-type")):
        expected = _JSON_CT
    elif response.status == 404 and body == b"<UnknownOperationException/>":
        expected = "text/xml"
    else:
        accept = request.header("accept")
        expected = "application/json" if accept is not None and wants_json(accept.encode("latin-1")) else "text/xml"
    if ct != expected:
        return f"content type {ct!r}, expected {expected!r}"
    if expected == "text/xml":
        try:
            ET.fromstring(body)
        except ET.ParseError as exc:
            return f"XML does not parse: {exc}"
    else:
        try:
            orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return f"JSON does not parse: {exc}"
    return None


class World:
    """One app on a fresh Broker and ManualClock, with its own event loop (close it with :meth:`close`)."""

    def __init__(self, seed: bool = True) -> None:
        _install_collector()
        self.clock = ManualClock(START_MS)
        self.broker = Broker(self.clock)
        self.broker.start()
        self.app = create_app(Config(clock="manual"), self.broker, self.clock)
        self.injector = injector_for(self.broker)
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(self._loop_exception)
        self.state = State()
        self.crashes: list[Crash] = []
        if seed:
            self.seed()

    def close(self) -> None:
        self.broker.close()
        self.loop.close()

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if exc is not None:
            self.crashes.append(Crash.from_exc_info(type(exc), exc, exc.__traceback__))
        else:
            self.crashes.append(Crash("loop error", "asyncio", str(context.get("message"))))

    # -------------------------------------------------------------------------------------------- requests

    def _json(self, action: str, payload: dict[str, Any]) -> Response:
        headers = [("Content-Type", _JSON_CT), ("X-Amz-Target", f"AmazonSQS.{action}"), ("Host", HOST)]
        queue = queue_of(payload.get("QueueUrl"))
        return self.call(FuzzRequest("json", "POST", "/", headers, orjson.dumps(payload), b"", "", action, queue))

    def seed(self) -> None:
        """Queues and in-flight messages to aim at: ``fz-std`` (dead-letters to ``fz-dlq`` after 2 receives),
        ``fz-fifo.fifo`` (dead-letters to ``fz-dlq.fifo``), two messages received from each. Run again when a
        seeded queue was deleted; what already exists stays (a CreateQueue that clashes just fails)."""
        for name in ("fz-dlq", "fz-dlq.fifo"):
            attrs = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
            self._json("CreateQueue", {"QueueName": name, "Attributes": attrs})
        arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:"
        self._json(
            "CreateQueue",
            {
                "QueueName": "fz-std",
                "Attributes": {"RedrivePolicy": f'{{"deadLetterTargetArn":"{arn}fz-dlq","maxReceiveCount":2}}'},
            },
        )
        self._json(
            "CreateQueue",
            {
                "QueueName": "fz-fifo.fifo",
                "Attributes": {
                    "FifoQueue": "true",
                    "ContentBasedDeduplication": "true",
                    "RedrivePolicy": f'{{"deadLetterTargetArn":"{arn}fz-dlq.fifo","maxReceiveCount":2}}',
                },
            },
        )
        for name in ("fz-std", "fz-fifo.fifo"):
            url = f"{BASE}/{ACCOUNT}/{name}"
            for n in range(3):
                extra = {"MessageGroupId": "g1"} if name.endswith(".fifo") else {}
                self._json("SendMessage", {"QueueUrl": url, "MessageBody": f"seed {n}", **extra})
            self._json("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 2, "AttributeNames": ["All"]})

    def call(self, request: FuzzRequest) -> Response:
        """Run ``request`` through the app and return the answer; exceptions go to ``crashes`` (the answer is then
        whatever was sent, HTTP 500 if nothing)."""
        if self.clock.now_ms() > MAX_TIME_MS - 86_400_000:
            raise ClockExhausted
        path = request.path
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": "http",
            "path": unquote(path),
            "raw_path": path.encode("latin-1", "replace"),
            "query_string": request.query_string,
            "root_path": "",
            "headers": [(k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in request.headers],
            "server": ("testserver", 9324),
            "client": ("127.0.0.1", 5000),
        }
        pending = [{"type": "http.request", "body": request.body, "more_body": False}]
        sent: list[MutableMapping[str, Any]] = []

        async def receive() -> MutableMapping[str, Any]:
            if pending:
                return pending.pop()
            await asyncio.Future()  # the client never goes away
            raise AssertionError

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        before = len(_collector.crashes)
        try:
            self.loop.run_until_complete(self._drive(self.app(scope, receive, send)))
        except ClockExhausted:
            raise
        except Exception as exc:  # Starlette re-raises after answering 500
            self.crashes.append(Crash.from_exc_info(type(exc), exc, exc.__traceback__))
        if len(_collector.crashes) > before:
            self.crashes.extend(_collector.crashes[before:])
            del _collector.crashes[before:]
        start = next((m for m in sent if m["type"] == "http.response.start"), None)
        if start is None:
            return Response(599, {}, b"no response started")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in start.get("headers", [])}
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        response = Response(start["status"], headers, body)
        self._learn(request, response)
        return response

    async def _drive(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        idle = 0
        while not task.done():
            await asyncio.sleep(0)
            idle += 1
            if idle >= 20 and not task.done():  # parked: a long poll waiting on the manual clock
                idle = 0
                try:
                    self.clock.advance(21)
                except ValueError:
                    task.cancel()
                    raise ClockExhausted from None
        task.result()

    def _learn(self, request: FuzzRequest, response: Response) -> None:
        """Remember queue names, receipt and task handles the answer reveals; drop fault rules at once."""
        if request.kind == "admin":
            if self.injector.rules:
                self.injector.clear()
            if request.path == "/_sqsemu/reset" and b'"deleted_faults"' in response.body:  # everything went
                self.state = State()
                self.seed()
            return
        if response.status != 200:
            return
        body = response.body
        state = self.state
        if request.action == "DeleteQueue" and request.queue is not None:
            state.drop_queue(request.queue)
            if request.queue in SEEDED:
                self.seed()
            return
        for match in _NAME_RE.finditer(body):
            state.add_queue(match.group(1).decode())
        if b"ReceiptHandle" in body and request.queue is not None:
            for match in _RECEIPT_RE.finditer(body):
                state.add_receipt(request.queue, (match.group(1) or match.group(2)).decode())
        if b"TaskHandle" in body:
            for match in _TASK_RE.finditer(body):
                state.add_task((match.group(1) or match.group(2)).decode())


class ClockExhausted(Exception):
    """The manual clock is within a day of ``MAX_TIME_MS`` (fuzzed clock advances got it there): start a new
    World."""
