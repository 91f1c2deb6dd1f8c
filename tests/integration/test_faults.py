"""Fault injection against a real server, with real clients over both protocols.

Every rule here is scoped to this test's own unique queue names (the ``server`` fixture is shared by the whole
session) and is deleted at teardown.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import botocore.exceptions
import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for, http_post_json
from harness.legacy import LegacyWorkerError

AddFault = Callable[..., dict[str, Any]]


def _request(method: str, url: str) -> tuple[int, Any]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture
def add_fault(server: ServerProcess) -> Iterator[AddFault]:
    """``add_fault(**rule) -> the created rule``; every rule added is deleted at teardown."""
    added: list[str] = []

    def add(**rule: Any) -> dict[str, Any]:
        status, body = http_post_json(f"{server.endpoint_url}/_sqsemu/faults", rule)
        assert status == 201, body
        added.append(body["id"])
        return dict(body)

    yield add
    for rule_id in added:
        _request("DELETE", f"{server.endpoint_url}/_sqsemu/faults/{rule_id}")


def _rule(server: ServerProcess, rule_id: str) -> dict[str, Any]:
    status, body = _request("GET", f"{server.endpoint_url}/_sqsemu/faults/{rule_id}")
    assert status == 200, body
    return dict(body)


def _tag() -> str:
    return uuid.uuid4().hex[:8]


def _name(url: str) -> str:
    return url.rsplit("/", 1)[1]


def _dropped(call: Callable[[], Any]) -> bool:
    """True when ``call`` failed because the server closed the connection without a complete answer."""
    try:
        call()
    except botocore.exceptions.ConnectionClosedError:
        return True  # current boto3
    except LegacyWorkerError as exc:
        return exc.class_name == "ConnectionClosedError"  # the Query client, in its own process
    return False


def test_throttling_on_every_second_send_to_matching_queues(sqs: Any, make_queue: Any, add_fault: AddFault) -> None:
    tag = _tag()
    first, second = make_queue(f"orders-{tag}"), make_queue(f"orders-{tag}")
    bystander = make_queue(f"payments-{tag}")
    add_fault(
        action="SendMessage",
        queue=f"orders-{tag}-*",
        every=2,
        error={"code": "ThrottlingException", "message": "Rate exceeded"},
    )
    assert sqs.send_message(QueueUrl=first, MessageBody="1")["MessageId"]
    with pytest.raises(ClientError) as caught:
        sqs.send_message(QueueUrl=second, MessageBody="2")
    error = caught.value.response["Error"]
    assert error["Code"] == "ThrottlingException"
    assert error["Message"] == "Rate exceeded"
    assert error.get("Type") == "Sender"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert caught.value.response["ResponseMetadata"]["RequestId"]
    assert sqs.send_message(QueueUrl=first, MessageBody="3")["MessageId"]
    for n in range(4):
        sqs.send_message(QueueUrl=bystander, MessageBody=str(n))  # another name: never throttled
    assert sqs.receive_message(QueueUrl=second, WaitTimeSeconds=0).get("Messages", []) == []  # the call never ran


def test_rule_counters_follow_the_calls(server: ServerProcess, sqs: Any, make_queue: Any, add_fault: AddFault) -> None:
    url = make_queue(f"counted-{_tag()}")
    rule = add_fault(action="SendMessage", queue=_name(url), every=2, count=1, error={"code": "ThrottlingException"})
    outcomes = []
    for n in range(5):
        try:
            sqs.send_message(QueueUrl=url, MessageBody=str(n))
            outcomes.append("ok")
        except ClientError as exc:
            outcomes.append(exc.response["Error"]["Code"])
    assert outcomes == ["ok", "ThrottlingException", "ok", "ok", "ok"]
    current = _rule(server, rule["id"])
    assert (current["matched"], current["fired"]) == (5, 1)


def test_over_limit_on_receive(sqs: Any, make_queue: Any, add_fault: AddFault) -> None:
    url = make_queue(f"overlimit-{_tag()}")
    sqs.send_message(QueueUrl=url, MessageBody="kept")
    add_fault(action="ReceiveMessage", queue=_name(url), error={"code": "OverLimit", "status": 403})
    with pytest.raises(sqs.exceptions.OverLimit) as caught:
        sqs.receive_message(QueueUrl=url)
    assert caught.value.response["Error"]["Code"] == "OverLimit"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"] == {
        "ApproximateNumberOfMessages": "1"
    }


def test_one_internal_error_from_send_message_batch(sqs: Any, make_queue: Any, add_fault: AddFault) -> None:
    url = make_queue(f"batch-{_tag()}")
    add_fault(action="SendMessageBatch", queue=_name(url), count=1, error={"code": "InternalError", "status": 500})
    entries = [{"Id": str(n), "MessageBody": f"m{n}"} for n in range(3)]
    with pytest.raises(ClientError) as caught:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert caught.value.response["Error"]["Code"] == "InternalError"
    assert caught.value.response["Error"].get("Type") == "Receiver"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    answer = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert sorted(entry["Id"] for entry in answer["Successful"]) == ["0", "1", "2"]
    assert not answer.get("Failed")


def test_slow_receive_is_delayed_and_still_answers(
    server: ServerProcess, sqs: Any, make_queue: Any, add_fault: AddFault
) -> None:
    url = make_queue(f"slow-{_tag()}")
    sqs.send_message(QueueUrl=url, MessageBody="eventually")
    rule = add_fault(action="ReceiveMessage", queue=_name(url), latency_ms=300)
    started = time.monotonic()
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    took = time.monotonic() - started
    # The message is there at once, so without the latency the call answers in a few milliseconds. A lower bound
    # only (never an upper one), with 10 ms of slack for the server's timer granularity.
    assert took >= 0.29, f"ReceiveMessage answered {took:.3f} s after it was sent, before the 300 ms latency"
    assert [m["Body"] for m in messages] == ["eventually"]
    assert _rule(server, rule["id"])["fired"] == 1


def test_dropped_connection_and_the_server_keeps_serving(
    server: ServerProcess, sqs: Any, make_queue: Any, add_fault: AddFault
) -> None:
    url = make_queue(f"dropped-{_tag()}")
    add_fault(action="SendMessage", queue=_name(url), drop=True, count=1)
    assert _dropped(lambda: sqs.send_message(QueueUrl=url, MessageBody="lost"))
    assert sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0).get("Messages", []) == []  # never sent
    sqs.send_message(QueueUrl=url, MessageBody="kept")
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]] == ["kept"]
    log = server.log_tail(20_000)
    assert "without completing response" not in log
    assert "Exception in ASGI application" not in log


def test_seeded_probability_repeats_its_pattern(
    server: ServerProcess, sqs: Any, make_queue: Any, add_fault: AddFault
) -> None:
    url = make_queue(f"chaos-{_tag()}")
    rule = {"action": "SendMessage", "queue": _name(url), "probability": 0.5, "seed": 42}

    def run() -> list[bool]:
        created = add_fault(**rule, error={"code": "ThrottlingException"})
        pattern = []
        for n in range(16):
            try:
                sqs.send_message(QueueUrl=url, MessageBody=str(n))
                pattern.append(False)
            except ClientError as exc:
                assert exc.response["Error"]["Code"] == "ThrottlingException"
                pattern.append(True)
        assert _request("DELETE", f"{server.endpoint_url}/_sqsemu/faults/{created['id']}")[0] == 200
        return pattern

    first, second = run(), run()
    assert first == second
    rng = random.Random(42)
    assert first == [rng.random() < 0.5 for _ in range(16)]
    assert any(first) and not all(first)


def test_faults_file_at_start_up(tmp_path: Path, protocol: str) -> None:
    path = tmp_path / "faults.json"
    path.write_text(
        json.dumps([{"id": "boot", "action": "CreateQueue", "queue": "refused-*", "error": {"code": "OverLimit"}}])
    )
    with ServerProcess(["--faults", str(path)]) as srv:
        client = client_for(srv.endpoint_url, protocol)
        try:
            with pytest.raises(ClientError) as caught:
                client.create_queue(QueueName="refused-1")
            assert caught.value.response["Error"]["Code"] == "OverLimit"
            assert client.create_queue(QueueName="welcome")["QueueUrl"].endswith("/welcome")
        finally:
            client.close()
        status, body = _request("GET", f"{srv.endpoint_url}/_sqsemu/faults")
        assert status == 200
        assert [(rule["id"], rule["matched"], rule["fired"]) for rule in body["faults"]] == [("boot", 1, 1)]


def test_a_bad_faults_file_stops_the_start_up(tmp_path: Path) -> None:
    path = tmp_path / "faults.json"
    path.write_text(json.dumps([{"action": "SendMessage", "error": {"code": "X", "status": 200}}]))
    result = subprocess.run(
        [sys.executable, "-m", "sqsemu", "--port", "0", "--faults", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert str(path) in result.stderr and "rule 1" in result.stderr and "status" in result.stderr


@pytest.mark.parametrize("effect", ["fault-rule", "lost-answer"])
@pytest.mark.parametrize("path", ["fast-lane", "trace", "h11-trace"])
def test_a_dropped_answer_closes_the_connection_on_every_path(
    monkeypatch: pytest.MonkeyPatch, effect: str, path: str
) -> None:
    """docs/testing.md: ``"drop": true`` (and realism's lost answers) close the connection without an answer. Under
    ``--log-level trace`` every request takes the ASGI cycle (through uvicorn's message logger): it was answered
    500 there. Also through uvicorn's own h11 protocol (the fallback), under trace."""
    from sqsemu.config import Config
    from sqsemu.http import lanecheck
    from sqsemu.server import ServerThread
    from tests.integration.harness.sockets import recv_until_closed
    from tests.integration.test_fast_lane import connect, json_call, read_answer
    from tests.integration.test_http_rules import error_records

    if path == "h11-trace":
        monkeypatch.setattr(lanecheck, "_names", lambda *functions: {"http_protocol_class"})
    level = "info" if path == "fast-lane" else "trace"
    with ServerThread(Config(host="127.0.0.1", log_level=level)) as srv:

        def ask(request: bytes) -> tuple[int, dict[str, str], bytes]:
            with connect(srv) as sock:
                sock.sendall(request)
                return read_answer(sock, bytearray())

        name = f"dropped-{path}-{effect}"
        status, _, body = ask(json_call("CreateQueue", {"QueueName": name}))
        assert status == 200, body
        url = json.loads(body)["QueueUrl"]
        if effect == "fault-rule":
            rule = {"action": "SendMessage", "queue": name, "drop": True, "count": 1}
            status, answer = http_post_json(f"{srv.endpoint_url}/_sqsemu/faults", rule)
            assert status == 201, answer
        else:
            spec = json.dumps({"spec": "lost_answers=1"}).encode()
            head = b"PUT /_sqsemu/realism/queues/000000000000/%s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % name.encode()
            status, _, body = ask(head + b"Content-Length: %d\r\n\r\n%s" % (len(spec), spec))
            assert status == 200, body
        with error_records() as errors, connect(srv) as sock:
            sock.sendall(json_call("SendMessage", {"QueueUrl": url, "MessageBody": "its answer is dropped"}))
            data, _, closed = recv_until_closed(sock, 20)
        assert closed
        assert data == b"", data[:300]  # closed before any status line
        assert not errors, [record.getMessage() for record in errors]
        status, peeked = _request("GET", f"{srv.endpoint_url}/_sqsemu/queues/000000000000/{name}/messages")
        assert status == 200, peeked
        ran = len(peeked["messages"]) == 1
        assert ran == (effect == "lost-answer")  # a lost answer's call ran; a dropped one's did not
