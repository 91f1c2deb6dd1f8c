"""Realism mode over both wire protocols, on the manual-clock server (docs/realism.md).

Each queue gets its effects from its ``sqsemu:realism`` tag and lives in this module's own account under a fixed
name, so its seeded decisions (seed 0, the server's) are the same on every run: the rates below are checked against
binomial bounds (4 standard deviations) but the counts themselves never change from run to run.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import botocore.exceptions
import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for
from harness.legacy import LegacyWorkerError

ACCOUNT = "421000000013"
TAG = "sqsemu:realism"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "realism_consumer.py"


def within(count: int, trials: int, p: float) -> bool:
    sd = math.sqrt(trials * p * (1 - p))
    return abs(count - trials * p) <= 4 * sd + 1


def admin(server: ServerProcess, method: str, path: str, payload: Any = None) -> tuple[int, Any]:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(f"{server.endpoint_url}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def _clients(manual_server: ServerProcess) -> Iterator[dict[str, Any]]:
    clients: dict[str, Any] = {}
    yield clients
    for client in clients.values():
        client.close()


@pytest.fixture
def rsqs(manual_server: ServerProcess, protocol: str, _clients: dict[str, Any]) -> Any:
    """A client of this module's account on the manual-clock server, speaking ``protocol``."""
    if protocol not in _clients:
        _clients[protocol] = client_for(manual_server.endpoint_url, protocol, access_key_id=ACCOUNT)
    return _clients[protocol]


Fresh = Callable[..., str]


@pytest.fixture
def fresh(rsqs: Any, protocol: str) -> Iterator[Fresh]:
    """``fresh(name, spec, **attributes) -> url``: the queue ``<name>-<protocol>`` created anew with its realism
    tag (a leftover of an interrupted run is deleted first); deleted at teardown."""
    made: list[str] = []

    def make(name: str, spec: str, **attributes: str) -> str:
        full = f"{name}-{protocol}" + (".fifo" if attributes.get("FifoQueue") == "true" else "")
        try:
            rsqs.delete_queue(QueueUrl=rsqs.get_queue_url(QueueName=full)["QueueUrl"])
        except ClientError:
            pass
        url = str(rsqs.create_queue(QueueName=full, Attributes=attributes, tags={TAG: spec})["QueueUrl"])
        made.append(url)
        return url

    yield make
    for url in made:
        try:
            rsqs.delete_queue(QueueUrl=url)
        except ClientError:
            pass


def send_all(sqs: Any, url: str, n: int, **extra: str) -> None:
    for start in range(0, n, 10):
        entries = [{"Id": str(i), "MessageBody": str(i), **extra} for i in range(start, min(start + 10, n))]
        if "MessageGroupId" in extra:
            for entry in entries:
                entry["MessageDeduplicationId"] = entry["MessageBody"]
        assert not sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed")


def receive(sqs: Any, url: str, **kwargs: Any) -> list[dict[str, Any]]:
    return list(sqs.receive_message(QueueUrl=url, AttributeNames=["All"], **kwargs).get("Messages", []))


def drain(sqs: Any, url: str, max_number: int = 10) -> list[dict[str, Any]]:
    """Receive and delete until a receive comes back empty; every delivery, in order."""
    out: list[dict[str, Any]] = []
    while True:
        got = receive(sqs, url, MaxNumberOfMessages=max_number)
        if not got:
            return out
        out.extend(got)
        entries = [{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(got)]
        assert not sqs.delete_message_batch(QueueUrl=url, Entries=entries).get("Failed")


def count(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"])


# --- each effect at its rate ----------------------------------------------------------------------------------------


def test_duplicates_come_back_after_their_delete_at_the_configured_rate(rsqs: Any, fresh: Fresh) -> None:
    url = fresh("realism-duplicates", "duplicates=0.2")
    n = 300
    send_all(rsqs, url, n)
    deliveries = drain(rsqs, url)
    by_body: dict[str, list[dict[str, Any]]] = {}
    for message in deliveries:
        by_body.setdefault(message["Body"], []).append(message)
    assert sorted(by_body, key=int) == [str(i) for i in range(n)]
    twice = [copies for copies in by_body.values() if len(copies) > 1]
    assert all(len(copies) == 2 for copies in twice)
    assert within(len(twice), n, 0.2), len(twice)
    for first, second in twice:
        assert first["MessageId"] == second["MessageId"]
        assert first["ReceiptHandle"] != second["ReceiptHandle"]
        assert [first["Attributes"]["ApproximateReceiveCount"], second["Attributes"]["ApproximateReceiveCount"]] == [
            "1",
            "2",
        ]
    assert count(rsqs, url) == 0


def test_reorder_takes_messages_out_of_send_order_within_the_window(rsqs: Any, fresh: Fresh) -> None:
    url = fresh("realism-reorder", "reorder=0.3 reorder_window=5")
    n = 200
    send_all(rsqs, url, n)
    remaining = list(range(n))
    out_of_order = 0
    for message in drain(rsqs, url, max_number=1):
        position = remaining.index(int(message["Body"]))
        assert position < 5
        out_of_order += position > 0
        remaining.pop(position)
    assert remaining == []
    assert within(out_of_order, n, 0.3), out_of_order


def test_short_polls_miss_waiting_messages_and_long_polls_do_not(rsqs: Any, fresh: Fresh) -> None:
    url = fresh("realism-sampling", "short_poll_sampling=0.4")
    rsqs.send_message(QueueUrl=url, MessageBody="waiting")
    n = 200
    empty = sum(1 for _ in range(n) if not receive(rsqs, url, VisibilityTimeout=0, WaitTimeSeconds=0))
    assert within(empty, n, 0.4), empty
    for _ in range(20):
        assert len(receive(rsqs, url, VisibilityTimeout=0, WaitTimeSeconds=1)) == 1


def lost(call: Callable[[], Any]) -> bool:
    """True when the connection closed without an answer (the clients here never retry)."""
    try:
        call()
    except botocore.exceptions.ConnectionClosedError:
        return True
    except LegacyWorkerError as exc:
        if exc.class_name == "ConnectionClosedError":
            return True
        raise
    return False


def test_lost_answers_drop_the_connection_after_the_call_ran(
    rsqs: Any, fresh: Fresh, manual_server: ServerProcess, protocol: str
) -> None:
    url = fresh("realism-lost", "off")
    name = f"realism-lost-{protocol}"
    status, _ = admin(manual_server, "PUT", f"/_sqsemu/realism/queues/{ACCOUNT}/{name}", {"spec": "lost_answers=0.25"})
    assert status == 200
    n = 200
    dropped = sum(lost(functools.partial(rsqs.send_message, QueueUrl=url, MessageBody=str(i))) for i in range(n))
    assert within(dropped, n, 0.25), dropped
    status, peeked = admin(manual_server, "GET", f"/_sqsemu/queues/{ACCOUNT}/{name}/messages")
    assert sorted(int(m["body"]) for m in peeked["messages"]) == list(range(n))  # every send went through


def test_attribute_changes_apply_after_the_delay_and_counts_lag(
    rsqs: Any, fresh: Fresh, manual_server: ServerProcess
) -> None:
    url = fresh("realism-attributes", "attribute_delay=5")
    names = ["VisibilityTimeout", "ApproximateNumberOfMessages"]
    assert count(rsqs, url) == 0  # the counts' snapshot is taken now
    rsqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "90"})
    rsqs.send_message(QueueUrl=url, MessageBody="x")
    attrs = rsqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    assert attrs == {"VisibilityTimeout": "30", "ApproximateNumberOfMessages": "0"}
    manual_server.advance(4.9)
    assert rsqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"] == attrs
    manual_server.advance(0.1)
    attrs = rsqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    assert attrs == {"VisibilityTimeout": "90", "ApproximateNumberOfMessages": "1"}


# --- FIFO, reproducibility, settings ----------------------------------------------------------------------------------


def test_fifo_queues_keep_order_and_exactly_once_delivery(rsqs: Any, fresh: Fresh) -> None:
    url = fresh("realism-fifo", "duplicates=1 reorder=1 short_poll_sampling=0.9", FifoQueue="true")
    send_all(rsqs, url, 50, MessageGroupId="g")
    send_all(rsqs, url, 50, MessageGroupId="g")  # the same deduplication IDs: all dropped
    bodies = [m["Body"] for m in drain(rsqs, url, max_number=3)]
    assert bodies == [str(i) for i in range(50)]


def replay(rsqs: Any, fresh: Fresh) -> list[tuple[str, str]]:
    url = fresh("realism-replay", "duplicates=0.3 reorder=0.3 short_poll_sampling=0.3")
    send_all(rsqs, url, 60)
    out: list[tuple[str, str]] = []
    for _ in range(200):
        got = receive(rsqs, url, MaxNumberOfMessages=4)
        out.extend((m["Body"], m["Attributes"]["ApproximateReceiveCount"]) for m in got)
        for message in got:
            rsqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return out


def test_the_same_seed_gives_the_same_run(rsqs: Any, fresh: Fresh, manual_server: ServerProcess) -> None:
    first = replay(rsqs, fresh)
    assert first == replay(rsqs, fresh)
    assert [body for body, _ in first] != sorted((body for body, _ in first), key=int)  # realism did act
    status, before = admin(manual_server, "GET", "/_sqsemu/realism")
    assert status == 200
    assert admin(manual_server, "PUT", "/_sqsemu/realism", {"spec": before["spec"], "seed": 1})[0] == 200
    try:
        assert replay(rsqs, fresh) != first
    finally:
        admin(manual_server, "PUT", "/_sqsemu/realism", {"spec": before["spec"], "seed": before["seed"]})


def test_admin_routes_show_and_change_a_queues_realism_and_peek_shows_injections(
    rsqs: Any, fresh: Fresh, manual_server: ServerProcess, protocol: str
) -> None:
    url = fresh("realism-admin", "off")
    path = f"/_sqsemu/realism/queues/{ACCOUNT}/realism-admin-{protocol}"
    status, state = admin(manual_server, "GET", path)
    assert (status, state["own"], state["spec"]) == (200, "off", "off")
    status, state = admin(manual_server, "PUT", path, {"spec": "duplicates=1"})
    assert (status, state["own"], state["spec"]) == (200, "duplicates=1", "duplicates=1")
    assert rsqs.list_queue_tags(QueueUrl=url)["Tags"] == {TAG: "duplicates=1"}
    status, error = admin(manual_server, "PUT", path, {"spec": "duplicates=2"})
    assert (status, error) == (400, {"error": "realism: duplicates is a probability from 0 to 1, got 2"})
    rsqs.send_message(QueueUrl=url, MessageBody="x")
    (message,) = receive(rsqs, url)
    peek = f"/_sqsemu/queues/{ACCOUNT}/realism-admin-{protocol}/messages"
    assert admin(manual_server, "GET", peek)[1]["messages"][0]["injected"] == ["duplicate_pending"]
    rsqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert admin(manual_server, "GET", peek)[1]["messages"][0]["injected"] == ["duplicate"]
    assert admin(manual_server, "GET", path)[1]["injected"]["duplicates"] == 1
    status, state = admin(manual_server, "DELETE", path)
    assert (status, state["own"]) == (200, None)


def test_a_bad_realism_tag_is_refused_with_invalid_parameter_value(rsqs: Any, fresh: Fresh) -> None:
    url = fresh("realism-tags", "off")
    with pytest.raises(ClientError) as caught:
        rsqs.tag_queue(QueueUrl=url, Tags={TAG: "dupes=0.5"})
    error = caught.value.response["Error"]
    assert error["Code"] in ("InvalidParameterValue", "InvalidParameterValueException")
    assert error["Message"].startswith("Tag sqsemu:realism is invalid: realism: unknown effect 'dupes'")
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_server_admin_route_refuses_bad_input(manual_server: ServerProcess) -> None:
    assert admin(manual_server, "PUT", "/_sqsemu/realism", {"spec": "reorder=0.1", "seed": -1}) == (
        400,
        {"error": '"seed" must be an integer from 0 to 9007199254740991, got -1'},
    )
    assert admin(manual_server, "PUT", "/_sqsemu/realism", {"spec": "bogus=1"})[0] == 400
    assert admin(manual_server, "GET", "/_sqsemu/realism")[1]["spec"] == "off"


# --- the documented example and the command line ------------------------------------------------------------------


def test_the_example_consumer_fails_until_it_is_idempotent() -> None:
    with ServerProcess(["--realism", "duplicates=0.1", "--realism-seed", "7"]) as srv:
        runs = [
            subprocess.run(
                [sys.executable, str(EXAMPLE), "--endpoint-url", srv.endpoint_url, *extra],
                capture_output=True,
                text=True,
                timeout=120,
            )
            for extra in ([], ["--idempotent"])
        ]
    plain, fixed = runs
    assert plain.returncode == 1, plain.stdout + plain.stderr
    assert "FAIL" in plain.stdout and "charged twice" in plain.stdout
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert fixed.stdout.rstrip().endswith(": OK")
    print(plain.stdout, fixed.stdout, sep="\n")


def test_a_bad_realism_flag_stops_the_server_with_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sqsemu", "--realism", "duplicates=0.1,teleport=1", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Invalid value for '--realism'" in result.stderr and "unknown effect 'teleport'" in result.stderr
