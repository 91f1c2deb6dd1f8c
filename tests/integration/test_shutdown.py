"""Shutdown with long polls open: Ctrl-C / SIGTERM (and ``SQSServer.stop()`` in-process) answer every waiting
ReceiveMessage at once with no messages and exit promptly, cleanly and with status 0; durable state is kept.

Each test opens ``LONG_POLLS`` 20-second long polls, half over AWS JSON 1.0 and half over AWS Query, on their own
connections, waits until the server has them all parked (admin peek's ``waiting_long_polls``) and stops the
server. Before the fix the server waited for the polls' 20 s (for ever on a manual clock).
"""

from __future__ import annotations

import asyncio
import gc
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from harness import ServerProcess, json_client, wait_for_long_polls
from harness.sockets import long_polls, receive_request

from sqsemu.testing import SQSServer

pytestmark = pytest.mark.integration

LONG_POLLS = 100
EXIT_BOUND_S = 5.0  # generous: measured ~0.3 s with 200 polls, ~0.7 s with 1,000
SCARY = ("Traceback", "Task was destroyed", "Event loop is closed", "Exception in ASGI application")


def _requests(queue_url: str, n: int) -> list[bytes]:
    return [receive_request(queue_url, "json" if i % 2 == 0 else "query") for i in range(n)]


def _assert_empty_receive(response: tuple[int, dict[str, str], bytes]) -> None:
    """A valid ReceiveMessage answer with no messages, in either wire protocol."""
    status, headers, body = response
    assert status == 200, (status, body)
    assert headers.get("connection") == "close", headers  # the server is going: the connection is not kept
    if headers["content-type"].startswith("application/x-amz-json"):
        assert json.loads(body).get("Messages", []) == [], body
    else:
        text = body.decode()
        assert "<ReceiveMessageResponse" in text and "<ReceiveMessageResult" in text, text
        assert "<Message>" not in text, text


async def _stop_with_long_polls(
    port: int, endpoint_url: str, queue_url: str, stop: Callable[[], object]
) -> tuple[float, list[tuple[int, dict[str, str], bytes]]]:
    """Open the long polls, wait until all are parked, call ``stop()`` (in a thread); return the seconds until
    every poll was answered and the answers."""
    tasks = await long_polls(port, _requests(queue_url, LONG_POLLS))
    await asyncio.to_thread(wait_for_long_polls, endpoint_url, queue_url, LONG_POLLS)
    started = time.monotonic()
    stopper = asyncio.create_task(asyncio.to_thread(stop))
    answers = await asyncio.wait_for(asyncio.gather(*tasks), EXIT_BOUND_S + 25)
    answered_s = time.monotonic() - started
    await stopper
    return answered_s, answers


@pytest.mark.parametrize(
    ("clock", "sig"), [("system", signal.SIGTERM), ("manual", signal.SIGINT)], ids=["system-SIGTERM", "manual-SIGINT"]
)
def test_signal_answers_open_long_polls_empty_and_exits_0_promptly(clock: str, sig: int) -> None:
    srv = ServerProcess(["--clock", clock]).start()
    try:
        queue_url = json_client(srv.endpoint_url).create_queue(QueueName="shutdown")["QueueUrl"]
        assert srv.proc is not None
        proc = srv.proc
        exit_s: list[float] = []

        def stop() -> None:
            started = time.monotonic()
            proc.send_signal(sig)
            proc.wait(timeout=EXIT_BOUND_S + 25)
            exit_s.append(time.monotonic() - started)

        answered_s, answers = asyncio.run(_stop_with_long_polls(srv.port, srv.endpoint_url, queue_url, stop))
        log = srv.log_tail(100_000)
        print(f"\n{LONG_POLLS} long polls ({clock} clock): answered {answered_s:.3f} s, exit {exit_s[0]:.3f} s")
        for answer in answers:
            _assert_empty_receive(answer)
        assert proc.returncode == 0, log
        assert exit_s[0] < EXIT_BOUND_S, log
        assert answered_s < EXIT_BOUND_S, log
        assert not [word for word in SCARY if word in log], log
    finally:
        srv.kill()
        srv.stop()


def test_durable_shutdown_keeps_what_was_acknowledged(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    srv = ServerProcess(["--data-dir", data_dir]).start()
    try:
        sqs = json_client(srv.endpoint_url)
        kept_url = sqs.create_queue(QueueName="kept")["QueueUrl"]
        sent = sqs.send_message(QueueUrl=kept_url, MessageBody="acknowledged")["MessageId"]
        waiting_url = sqs.create_queue(QueueName="waiting")["QueueUrl"]
        assert srv.proc is not None
        proc = srv.proc

        def stop() -> None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=EXIT_BOUND_S + 25)

        answered_s, answers = asyncio.run(_stop_with_long_polls(srv.port, srv.endpoint_url, waiting_url, stop))
        for answer in answers:
            _assert_empty_receive(answer)
        log = srv.log_tail(100_000)
        assert proc.returncode == 0 and answered_s < EXIT_BOUND_S, log
        assert not [word for word in SCARY if word in log], log
    finally:
        srv.kill()
        srv.stop()
    again = ServerProcess(["--data-dir", data_dir]).start()
    try:
        sqs = json_client(again.endpoint_url)
        got = sqs.receive_message(QueueUrl=sqs.get_queue_url(QueueName="kept")["QueueUrl"], WaitTimeSeconds=0)
        assert [m["MessageId"] for m in got.get("Messages", [])] == [sent]
    finally:
        assert again.stop() == 0, again.log_tail()


def test_sqsserver_stop_on_manual_clock_answers_long_polls_and_returns_promptly(
    capfd: pytest.CaptureFixture[str],
) -> None:
    srv = SQSServer(clock="manual").start()
    port = int(srv.endpoint_url.rsplit(":", 1)[1])
    queue_url = srv.client().create_queue(QueueName="stopping")["QueueUrl"]
    stop_s: list[float] = []

    def stop() -> None:
        started = time.monotonic()
        srv.stop()
        stop_s.append(time.monotonic() - started)

    try:
        answered_s, answers = asyncio.run(_stop_with_long_polls(port, srv.endpoint_url, queue_url, stop))
    finally:
        srv.stop()
    gc.collect()  # "Task was destroyed but it is pending!" is printed when a leftover task is collected
    out, err = capfd.readouterr()
    print(f"\nSQSServer.stop() with {LONG_POLLS} long polls: answered {answered_s:.3f} s, stop {stop_s[0]:.3f} s")
    for answer in answers:
        _assert_empty_receive(answer)
    assert stop_s[0] < EXIT_BOUND_S
    assert not [word for word in SCARY if word in out + err], out + err
