"""The guards of sqsemu's HTTP protocol (``sqsemu.http.sqsprotocol``, ``sqsemu.http.deadline``): the request-read
deadline and the request-head cap, driven byte by byte through a fake transport on a real event loop (no sockets),
including the cases a real client rarely produces: heads split at every byte, pipelined requests, a connection whose
reading the server paused. The requests here go to a plain ASGI app through the protocol's ASGI cycle
(``sqsemu.http.cycle``): the guards hold for those requests too."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from sqsemu.config import Config
from sqsemu.http.deadline import ReadDeadline
from sqsemu.http.sqsprotocol import Lane, SQSProtocol, head_end, protocol_factory
from sqsemu.observability.fastlane import FastLaneState
from tests.unit.app_helpers import make_app
from tests.unit.fake_transport import FakeTransport

CAP = 1024
TIMEOUT_S = 0.05


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _connect(loop: asyncio.AbstractEventLoop, app: Any = _ok_app) -> tuple[SQSProtocol, FakeTransport]:
    config = uvicorn.Config(app, lifespan="off", log_level="critical")
    config.load()

    async def sqs_app() -> Any:
        return make_app(Config())[0]

    lane = Lane(loop.run_until_complete(sqs_app()), TIMEOUT_S, CAP, 5.0, 1000, FastLaneState())
    lane.fast = False  # every request to the ASGI app, through the protocol's ASGI cycle
    protocol = protocol_factory(lane)(config=config, server_state=ServerState(), app_state={}, _loop=loop)
    transport = FakeTransport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    return protocol, transport


def _settle(loop: asyncio.AbstractEventLoop, seconds: float = 0.0) -> None:
    loop.run_until_complete(asyncio.sleep(seconds))


def _request(extra_header_bytes: int = 0, body: bytes = b"") -> bytes:
    head = b"POST / HTTP/1.1\r\nHost: h\r\n"
    if extra_header_bytes:
        head += b"X-Pad: " + b"a" * extra_header_bytes + b"\r\n"
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_head_end_finds_the_empty_line_with_crlf_or_bare_lf() -> None:
    assert head_end(b"GET / HTTP/1.1\r\nA: b\r\n\r\nbody") == len(b"GET / HTTP/1.1\r\nA: b\r\n\r\n")
    assert head_end(b"GET / HTTP/1.1\nA: b\n\nbody") == len(b"GET / HTTP/1.1\nA: b\n\n")
    assert head_end(b"GET / HTTP/1.1\r\nA: b\r\n") == -1


def test_a_head_under_the_cap_with_a_large_body_in_the_same_read_is_served(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    protocol.data_received(_request(body=b"x" * (10 * CAP)))
    _settle(loop)
    assert transport.written.startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize("split", [1, 7, 100, 100_000], ids=["bytewise", "7", "100", "one-read"])
def test_a_head_over_the_cap_is_refused_431_however_it_is_split(loop: asyncio.AbstractEventLoop, split: int) -> None:
    protocol, transport = _connect(loop)
    data = _request(extra_header_bytes=CAP)
    for start in range(0, len(data), split):
        if transport.closed:
            break
        protocol.data_received(data[start : start + split])
    assert transport.closed
    assert transport.written.startswith(b"HTTP/1.1 431 ")


def test_a_head_just_under_the_cap_split_bytewise_is_served(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    data = _request(extra_header_bytes=CAP - 100)
    assert len(data) <= CAP
    for i in range(len(data)):
        protocol.data_received(data[i : i + 1])
    _settle(loop)
    assert transport.written.startswith(b"HTTP/1.1 200 "), transport.written


def test_keep_alive_requests_each_get_their_own_head_budget(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    one = _request(extra_header_bytes=CAP - 100)
    for _ in range(5):
        protocol.data_received(one[: len(one) // 2])
        protocol.data_received(one[len(one) // 2 :])
        _settle(loop)
    assert transport.written.count(b"HTTP/1.1 200 ") == 5
    assert not transport.closed


def test_a_request_pipelined_after_a_large_body_is_not_charged_for_that_body(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    first = _request(body=b"x" * (4 * CAP))
    second = _request(extra_header_bytes=CAP - 200)
    data = first + second
    cut = len(first) + 20  # the second head starts at the end of this read and goes on in the next
    protocol.data_received(data[:cut])
    protocol.data_received(data[cut:])
    for _ in range(3):
        _settle(loop)
    assert transport.written.count(b"HTTP/1.1 200 ") == 2, transport.written


def test_a_partial_head_is_answered_408_and_closed_after_the_timeout(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    began = loop.time()
    protocol.data_received(b"POST / HTTP/1.1\r\nHo")
    _settle(loop, TIMEOUT_S / 2)
    if loop.time() - began < TIMEOUT_S:  # a busy machine may run the loop late: then the deadline has rightly passed
        assert not transport.closed
    _settle(loop, TIMEOUT_S)
    assert transport.closed and transport.written.startswith(b"HTTP/1.1 408 ")


def test_a_short_body_is_answered_408_and_closed_after_the_timeout(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n12345")
    _settle(loop, TIMEOUT_S * 2)
    assert transport.closed and transport.written.startswith(b"HTTP/1.1 408 ")
    protocol.connection_lost(None)
    _settle(loop)  # the app sees the disconnect and ends without answering


def test_a_silent_connection_is_closed_without_an_answer(loop: asyncio.AbstractEventLoop) -> None:
    _, transport = _connect(loop)
    _settle(loop, TIMEOUT_S * 2)
    assert transport.closed and transport.written == b""


def test_no_deadline_runs_between_a_complete_request_and_its_answer(loop: asyncio.AbstractEventLoop) -> None:
    answer: asyncio.Future[None] = loop.create_future()

    async def slow_app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await answer  # a long poll
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    protocol, transport = _connect(loop, slow_app)
    protocol.data_received(_request())
    _settle(loop, TIMEOUT_S * 3)
    assert not transport.closed
    answer.set_result(None)
    _settle(loop)
    assert transport.written.startswith(b"HTTP/1.1 200 ") and not transport.closed


def test_a_connection_the_server_stopped_reading_is_not_timed_out(loop: asyncio.AbstractEventLoop) -> None:
    paused = [True]
    late: list[float] = []
    deadline = ReadDeadline(loop, TIMEOUT_S, lambda: paused[0], lambda: late.append(loop.time()))
    deadline.start()
    _settle(loop, TIMEOUT_S * 3)
    assert late == []
    paused[0] = False
    resumed = loop.time()
    _settle(loop, TIMEOUT_S * 3)
    assert len(late) == 1 and late[0] >= resumed


def test_an_idle_connection_is_closed_after_the_keep_alive_timeout_and_a_busy_one_is_not(
    loop: asyncio.AbstractEventLoop,
) -> None:
    closed: list[str] = []
    deadline = ReadDeadline(loop, 10.0, lambda: False, lambda: closed.append("late"), lambda: closed.append("idle"))
    deadline.start()
    deadline.stop()  # the request was read whole
    deadline.idle_until(TIMEOUT_S)  # answered: idle from now
    _settle(loop, TIMEOUT_S * 3)
    assert closed == ["idle"]
    deadline.start()  # a request began: the idle timeout no longer applies
    deadline.stop()
    _settle(loop, TIMEOUT_S * 3)
    assert closed == ["idle"]
    deadline.close()


def test_shutdown_closes_a_connection_whose_body_is_still_arriving(loop: asyncio.AbstractEventLoop) -> None:
    protocol, transport = _connect(loop)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n12345")
    _settle(loop)
    protocol.shutdown()
    assert transport.closed and transport.written == b""
    protocol.connection_lost(None)
    _settle(loop)


def test_an_asgi_app_that_raises_is_answered_500_logged_once_and_counted(
    loop: asyncio.AbstractEventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("boom")

    protocol, transport = _connect(loop, broken)
    with caplog.at_level("ERROR", logger="sqsemu.http"):
        protocol.data_received(b"GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
        _settle(loop)
    assert transport.written.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
    assert transport.closed
    assert [r.getMessage() for r in caplog.records] == ["Exception in ASGI application"]
    assert protocol.lane.state.app_errors == 1
