"""``sqsemu.http.sqsprotocol``: SQS calls answered by sqsemu's own HTTP protocol, driven through a fake transport
on a real event loop over the real app and broker (manual clock): the answers match the ASGI path's, each is written
in one piece, long polls wait and see their client leave, requests pipelined behind a waiting call wait their turn,
and every other kind of SQS call (browsers, large bodies, ``Expect: 100-continue``, forged proxy headers) is answered
by the same protocol, the admin routes through its ASGI cycle (``sqsemu.http.cycle``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.http.cycle import status_line
from sqsemu.http.sqsprotocol import Lane, SQSProtocol, protocol_factory
from tests.unit.app_helpers import AUTH, call_asgi, make_app
from tests.unit.engine_helpers import START_MS
from tests.unit.fake_transport import FakeTransport

DEFAULT = Namespace("000000000000", "us-east-1")


_LANES: dict[int, Lane] = {}  # by id(app): a compiled SQSApp takes no new attributes; cleared per test (served)


def lane_of(app: Any) -> Lane:
    """The app's one lane (what a server's connections share), made at first use."""
    lane = _LANES.get(id(app))
    if lane is None:
        lane = _LANES[id(app)] = Lane(app, 30.0, 64 * 1024, 5.0, 1000, app.lane)
    return lane


class Conn:
    """One client connection to sqsemu's protocol."""

    def __init__(self, loop: asyncio.AbstractEventLoop, app: Any, state: ServerState) -> None:
        config = uvicorn.Config(app, lifespan="off", log_level="critical", access_log=False)
        config.load()
        self.loop = loop
        self.protocol: SQSProtocol = protocol_factory(lane_of(app))(
            config=config, server_state=state, app_state={}, _loop=loop
        )
        self.transport = FakeTransport()
        self.transport.protocol, self.transport.loop = self.protocol, loop
        self.protocol.connection_made(self.transport)  # type: ignore[arg-type]

    def feed(self, data: bytes) -> None:
        self.transport.receive(data)  # the server reads inside the running loop
        self.settle()

    def settle(self) -> None:
        for _ in range(5):
            self.loop.run_until_complete(asyncio.sleep(0))

    def answers(self) -> list[tuple[int, dict[str, str], bytes]]:
        """Every response written so far, parsed (status, headers, body)."""
        data = self.transport.written
        out = []
        while data:
            if data.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"):
                data = data[len(b"HTTP/1.1 100 Continue\r\n\r\n") :]
                continue
            head, _, rest = data.partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
            size = int(headers["content-length"])
            out.append((int(lines[0].split()[1]), headers, rest[:size]))
            data = rest[size:]
        return out


def json_request(action: str, payload: dict[str, Any], *, extra: bytes = b"", version: bytes = b"1.1") -> bytes:
    body = json.dumps(payload).encode()
    return (
        b"POST / HTTP/" + version + b"\r\nHost: localhost:9324\r\nX-Amz-Target: AmazonSQS." + action.encode() + b"\r\n"
        b"Content-Type: application/x-amz-json-1.0\r\nAuthorization: "
        + AUTH.encode()
        + b"\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    asyncio.set_event_loop(None)
    loop.close()


class _Patchable(Broker):
    """The real broker as a Python subclass, whose instances take attributes: a test replaces one of its methods
    on the instance (``monkeypatch.setattr``), and the compiled callers call the replacement."""


@pytest.fixture
def served(loop: asyncio.AbstractEventLoop) -> tuple[Any, Any, ServerState]:
    async def build() -> tuple[Any, Any]:
        return make_app(Config(), _Patchable(ManualClock(START_MS)))

    app, broker = loop.run_until_complete(build())
    _LANES.clear()
    broker.create_queue(DEFAULT, "q", {}, {})
    return app, broker, ServerState()


URL = "http://localhost:9324/000000000000/q"


def counts(loop: asyncio.AbstractEventLoop, app: Any, state: ServerState) -> tuple[int, int]:
    """(visible, in flight) of queue ``q``, asked over a connection of its own."""
    conn = Conn(loop, app, state)
    conn.feed(json_request("GetQueueAttributes", {"QueueUrl": URL, "AttributeNames": ["All"]}))
    attributes = json.loads(conn.answers()[0][2])["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(attributes["ApproximateNumberOfMessagesNotVisible"])


def send(loop: asyncio.AbstractEventLoop, app: Any, state: ServerState, body: str) -> None:
    Conn(loop, app, state).feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": body}))


def test_a_send_is_answered_in_one_write_as_the_asgi_path_answers_it(
    loop: asyncio.AbstractEventLoop, served: Any
) -> None:
    app, _, state = served
    conn = Conn(loop, app, state)
    conn.feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "hello"}))
    assert len(conn.transport.writes) == 1
    assert not lane_of(app).waiting
    [(status, headers, body)] = conn.answers()
    assert status == 200
    assert headers["content-type"] == "application/x-amz-json-1.0"
    assert "x-amzn-requestid" in headers
    assert not conn.transport.closed
    headers_in = {"X-Amz-Target": "AmazonSQS.SendMessage", "Content-Type": "application/x-amz-json-1.0"}
    payload = json.dumps({"QueueUrl": URL, "MessageBody": "hello"}).encode()
    asgi = loop.run_until_complete(call_asgi(app, "POST", "/", {"Host": "localhost:9324", **headers_in}, payload))
    assert asgi.headers["content-type"] == headers["content-type"]
    assert json.loads(body).keys() == asgi.json().keys()
    assert json.loads(body)["MD5OfMessageBody"] == asgi.json()["MD5OfMessageBody"]


def test_errors_come_with_their_sqs_code_and_status(loop: asyncio.AbstractEventLoop, served: Any) -> None:
    app, _, state = served
    conn = Conn(loop, app, state)
    conn.feed(json_request("SendMessage", {"QueueUrl": URL}))
    conn.feed(json_request("NoSuchThing", {}))
    (s1, h1, b1), (s2, _, b2) = conn.answers()
    assert s1 == 400 and "MissingRequiredParameter" in json.loads(b1)["__type"]
    assert h1["x-amzn-query-error"].startswith("MissingParameter;")
    assert s2 == 400 and "InvalidAction" in json.loads(b2)["__type"]


def test_each_answer_starts_with_the_status_line_of_its_status(loop: asyncio.AbstractEventLoop, served: Any) -> None:
    """The status lines the protocol writes (looked up in ``cycle.STATUS_LINES`` in the compiled module) are the
    bytes ``status_line`` writes, for a status met for the first time and again."""
    app, _, state = served
    conn = Conn(loop, app, state)
    for request, status in (
        (json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "m"}), 200),
        (json_request("SendMessage", {"QueueUrl": URL}), 400),
        (json_request("NoSuchThing", {}), 400),
        (json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "m"}), 200),
    ):
        conn.transport.writes.clear()
        conn.feed(request)
        assert conn.transport.written.startswith(status_line(status)), conn.transport.written[:40]


def test_keep_alive_requests_follow_each_other_and_http_1_0_is_closed(
    loop: asyncio.AbstractEventLoop, served: Any
) -> None:
    app, _, state = served
    conn = Conn(loop, app, state)
    for i in range(3):
        conn.feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": f"m{i}"}))
    assert [a[0] for a in conn.answers()] == [200, 200, 200]
    assert app.lane.answers == 3
    old = Conn(loop, app, state)
    old.feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "m3"}, version=b"1.0"))
    [(status, headers, _)] = old.answers()
    assert status == 200 and headers["connection"] == "close" and old.transport.closed
    assert counts(loop, app, state) == (4, 0)


def test_a_long_poll_waits_and_is_answered_when_a_message_arrives(loop: asyncio.AbstractEventLoop, served: Any) -> None:
    app, _, state = served
    conn = Conn(loop, app, state)
    conn.feed(json_request("ReceiveMessage", {"QueueUrl": URL, "WaitTimeSeconds": 20}))
    assert conn.transport.writes == [] and len(lane_of(app).waiting) == 1
    send(loop, app, state, "wake")
    [(status, _, body)] = conn.answers()
    assert status == 200 and [m["Body"] for m in json.loads(body)["Messages"]] == ["wake"]
    assert not lane_of(app).waiting


def test_a_long_poll_whose_client_left_takes_no_message(loop: asyncio.AbstractEventLoop, served: Any) -> None:
    app, _, state = served
    conn = Conn(loop, app, state)
    conn.feed(json_request("ReceiveMessage", {"QueueUrl": URL, "WaitTimeSeconds": 20}))
    conn.protocol.connection_lost(None)
    conn.settle()
    send(loop, app, state, "kept")
    assert conn.transport.writes == []
    assert counts(loop, app, state) == (1, 0)
    assert not lane_of(app).waiting


def test_a_request_pipelined_behind_a_long_poll_is_answered_after_it(
    loop: asyncio.AbstractEventLoop, served: Any
) -> None:
    app, _, state = served
    conn = Conn(loop, app, state)
    conn.feed(
        json_request("ReceiveMessage", {"QueueUrl": URL, "WaitTimeSeconds": 20})
        + json_request("GetQueueAttributes", {"QueueUrl": URL, "AttributeNames": ["All"]})
    )
    assert conn.transport.writes == []
    send(loop, app, state, "late")
    conn.settle()
    (s1, _, b1), (s2, _, b2) = conn.answers()
    assert json.loads(b1)["Messages"][0]["Body"] == "late"
    assert s2 == 200 and json.loads(b2)["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1"


def test_every_kind_of_sqs_call_is_answered_by_the_protocol_itself(
    loop: asyncio.AbstractEventLoop, served: Any
) -> None:
    app, _, state = served
    big = "x" * (64 * 1024 + 10)
    conn = Conn(loop, app, state)
    conn.feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": big}))
    conn.feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "c"}, extra=b"Expect: 100-continue\r\n"))
    conn.feed(
        json_request(
            "PurgeQueue", {"QueueUrl": URL}, extra=b"Origin: https://evil.example\r\nSec-Fetch-Site: cross-site\r\n"
        )
    )
    conn.feed(json_request("CreateQueue", {"QueueName": "proxied"}, extra=b"X-Forwarded-Proto: https\r\n"))
    (s1, _, _), (s2, _, _), (s3, _, b3), (s4, _, b4) = conn.answers()
    assert (s1, s2) == (200, 200)
    assert b"HTTP/1.1 100 Continue" in conn.transport.written
    assert s3 == 403 and "AccessDenied" in b3.decode()
    assert s4 == 200 and json.loads(b4)["QueueUrl"].startswith("http://")  # a forged proxy header is ignored
    assert app.lane.answers == 4  # one protocol answers them all: no hand-over to another parser
    assert counts(loop, app, state) == (2, 0)


def test_an_admin_request_read_while_the_write_buffer_is_full_waits_for_it_to_drain(
    loop: asyncio.AbstractEventLoop, served: Any
) -> None:
    """An admin request read just after an answer filled the write buffer is served once the buffer drains, and
    reading, paused meanwhile, goes on."""
    app, _, state = served
    conn = Conn(loop, app, state)
    write = conn.transport.write

    def write_then_fill(data: bytes) -> None:  # the first answer takes the buffer over its high-water mark
        write(data)
        if len(conn.transport.writes) == 1:
            conn.protocol.pause_writing()

    conn.transport.write = write_then_fill  # type: ignore[method-assign]
    conn.feed(
        json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "x"})
        + b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
    )
    assert len(conn.answers()) == 1  # /health waits for the buffer to drain
    assert not conn.transport.reading
    conn.protocol.resume_writing()
    conn.settle()
    assert conn.transport.reading
    conn.feed(b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert [status for status, _, _ in conn.answers()] == [200, 200, 200]


def test_a_fault_rule_that_drops_closes_the_connection_unanswered(loop: asyncio.AbstractEventLoop, served: Any) -> None:
    app, _, state = served
    app.faults.add({"action": "SendMessage", "drop": True})
    conn = Conn(loop, app, state)
    conn.feed(json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "x"}))
    assert conn.transport.writes == [] and conn.transport.closed
    assert counts(loop, app, state) == (0, 0)


def test_a_waiting_call_cancelled_at_shutdown_closes_its_connection_and_leaves_no_waiter(
    loop: asyncio.AbstractEventLoop, served: Any
) -> None:
    app, broker, state = served
    conn = Conn(loop, app, state)
    conn.feed(json_request("ReceiveMessage", {"QueueUrl": URL, "WaitTimeSeconds": 20}))
    assert broker.get_queue(DEFAULT, "q").waiters.waiting_count() == 1
    assert lane_of(app).cancel_waiting() == 1
    conn.settle()
    assert conn.transport.closed and conn.transport.writes == []
    assert broker.get_queue(DEFAULT, "q").waiters.waiting_count() == 0
    assert not lane_of(app).waiting and lane_of(app).cancel_waiting() == 0
    send(loop, app, state, "after")
    assert counts(loop, app, state) == (1, 0)


def test_a_call_cancelled_while_it_yields_to_the_loop_closes_its_connection(
    loop: asyncio.AbstractEventLoop, served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that yields without a future (``asyncio.sleep(0)``) and is cancelled before it resumes: it sees
    ``CancelledError`` on resuming, the connection closes unanswered."""
    app, broker, state = served
    reached: list[str] = []
    receive_message = broker.receive_message

    async def yielding(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        reached.append("resumed")
        return await receive_message(*args, **kwargs)

    monkeypatch.setattr(broker, "receive_message", yielding)
    conn = Conn(loop, app, state)
    conn.protocol.data_received(json_request("ReceiveMessage", {"QueueUrl": URL}))
    assert lane_of(app).cancel_waiting() == 1
    conn.settle()
    assert reached == [] and conn.transport.closed and conn.transport.writes == []
    assert not lane_of(app).waiting


def test_a_call_that_yields_to_the_loop_is_answered_when_it_resumes(
    loop: asyncio.AbstractEventLoop, served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, broker, state = served
    send(loop, app, state, "x")
    receive_message = broker.receive_message

    async def yielding(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)  # a bare yield
        await asyncio.sleep(0.001)  # a future
        return await receive_message(*args, **kwargs)

    monkeypatch.setattr(broker, "receive_message", yielding)
    conn = Conn(loop, app, state)
    conn.protocol.data_received(json_request("ReceiveMessage", {"QueueUrl": URL}))
    assert conn.transport.writes == [] and len(lane_of(app).waiting) == 1
    loop.run_until_complete(asyncio.sleep(0.01))
    [(status, _, body)] = conn.answers()
    assert status == 200 and [m["Body"] for m in json.loads(body)["Messages"]] == ["x"]
    assert not lane_of(app).waiting


def test_a_call_that_awaits_something_other_than_a_future_is_answered_internal_error(
    loop: asyncio.AbstractEventLoop, served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a task refuses (a yield of something that is not a future) fails the call where it waits: answered
    500 InternalError, as any other unexpected failure of a call, and the connection goes on."""

    class Odd:
        def __await__(self) -> Any:
            yield 42

    async def odd(*args: Any, **kwargs: Any) -> Any:
        await Odd()

    app, broker, state = served
    monkeypatch.setattr(broker, "receive_message", odd)
    conn = Conn(loop, app, state)
    conn.protocol.data_received(json_request("ReceiveMessage", {"QueueUrl": URL}))
    conn.settle()
    [(status, _, body)] = conn.answers()
    assert status == 500 and "InternalFailure" in json.loads(body)["__type"]
    assert not lane_of(app).waiting and not conn.transport.closed


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_a_keyboard_interrupt_or_system_exit_in_a_call_is_not_swallowed(
    loop: asyncio.AbstractEventLoop, served: Any, monkeypatch: pytest.MonkeyPatch, stop: type[BaseException]
) -> None:
    app, broker, state = served

    def stopping(*args: Any, **kwargs: Any) -> Any:
        raise stop

    conn = Conn(loop, app, state)
    monkeypatch.setattr(broker, "send_message", stopping)
    loop.call_soon(conn.protocol.data_received, json_request("SendMessage", {"QueueUrl": URL, "MessageBody": "x"}))
    with pytest.raises(stop):  # out of the event loop, as from uvicorn's own request tasks
        for _ in range(3):
            loop.run_until_complete(asyncio.sleep(0))
    assert conn.transport.closed and conn.transport.writes == []


def test_trace_logging_turns_the_fast_lane_off_with_one_warning_that_says_why(
    loop: asyncio.AbstractEventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    # uvicorn wraps the app in its message logger at --log-level trace: its messages are only seen in the ASGI cycle.
    from sqsemu.server import _http_protocol

    async def build() -> Any:
        return make_app(Config(log_level="trace"))[0]

    app = loop.run_until_complete(build())
    with caplog.at_level("WARNING", logger="sqsemu.http"):
        _, lane = _http_protocol(app.config, app)
    reason = "--log-level trace wraps the app in uvicorn's message logger"
    assert app.lane.status == f"off: {reason}"
    assert [r.getMessage() for r in caplog.records] == [
        f"HTTP fast lane off: {reason}; every request takes the ASGI path"
    ]
    assert lane is not None and not lane.fast  # sqsemu's protocol still guards the connections
