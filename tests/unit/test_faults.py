"""Fault injection without sockets: rule validation, matching and triggers, the admin routes, the injected answers
in both wire formats, dropped connections, the ``--faults`` file and option."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sqsemu.admin.common import AdminError
from sqsemu.admin.faults import FaultFileError, FaultInjector, injector_for, parse_rule
from sqsemu.cli import main as cli_main
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.http import app as http_app
from sqsemu.protocol.errors import CORAL_NS, SQS_NS, injected_error_info
from tests.unit.app_helpers import AUTH, Response, call_asgi, json_call, make_app, new_broker, query_call

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
DEFAULT = Namespace("000000000000", "us-east-1")
URL = "http://localhost:9324/000000000000/"


# ------------------------------------------------------------------------------------------------ helpers


def _admin(app: Any, method: str, path: str, payload: Any = None) -> Response:
    body = b"" if payload is None else json.dumps(payload).encode()
    headers = {"Host": "h", "Content-Type": "application/json"}
    return asyncio.run(call_asgi(app, method, path, headers, body))


def _app_with_queues(*names: str) -> tuple[Any, Broker]:
    app, broker = make_app()
    for name in names:
        broker.create_queue(DEFAULT, name, {}, {})
    return app, broker


def _send(app: Any, queue: str, protocol: str = "json") -> Response:
    if protocol == "json":
        return json_call(app, "SendMessage", {"QueueUrl": URL + queue, "MessageBody": "hello"})
    return query_call(app, {"Action": "SendMessage", "QueueUrl": URL + queue, "MessageBody": "hello"})


def _sends(broker: Broker) -> int:
    """How many messages the broker holds, over all its queues: the SendMessage calls that ran."""
    return sum(len(queue.messages) for queue in broker.all_queues())


async def _raw_messages(app: Any, action: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ASGI message the app sends for one JSON request (to see a response that is never finished)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"x-amz-target", f"AmazonSQS.{action}".encode()),
            (b"content-type", b"application/x-amz-json-1.0"),
            (b"host", b"localhost:9324"),
            (b"authorization", AUTH.encode()),
        ],
        "server": ("testserver", 9324),
        "client": ("127.0.0.1", 5000),
    }
    body = json.dumps(payload).encode()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Future()
        raise AssertionError

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


# ------------------------------------------------------------------------------------------------ rules


def test_a_minimal_rule_is_normalised_with_every_key() -> None:
    rule = parse_rule({"error": {"code": "ThrottlingException"}}, "f-1")
    assert rule.to_json() == {
        "id": "f-1",
        "action": "*",
        "queue": "*",
        "error": {
            "code": "ThrottlingException",
            "status": 400,
            "message": "sqsemu fault injection: ThrottlingException",
            "fault": "Sender",
        },
        "latency_ms": 0,
        "drop": False,
        "every": 1,
        "probability": None,
        "seed": None,
        "count": None,
        "matched": 0,
        "fired": 0,
    }


def test_the_normalised_form_is_accepted_back() -> None:
    first = parse_rule({"queue": "q-*", "latency_ms": 5, "probability": 0.5, "count": 2}, "f-1").to_json()
    for counter in ("matched", "fired"):
        del first[counter]
    again = parse_rule(first, "f-9").to_json()
    assert again["id"] == "f-1" and again["probability"] == 0.5 and again["seed"] == 0 and again["every"] is None


def test_error_status_and_fault_defaults() -> None:
    short = parse_rule({"error": "ThrottlingException"}, "x").to_json()["error"]
    assert short == parse_rule({"error": {"code": "ThrottlingException"}}, "x").to_json()["error"]
    assert parse_rule({"error": {"code": "Boom", "status": 503}}, "x").to_json()["error"]["fault"] == "Receiver"
    assert parse_rule({"error": {"code": "Boom", "status": 429}}, "x").to_json()["error"]["fault"] == "Sender"
    explicit = parse_rule({"error": {"code": "Boom", "status": 500, "fault": "Sender"}}, "x").to_json()["error"]
    assert explicit["fault"] == "Sender"
    # A code sqsemu knows brings its own status.
    over_limit = parse_rule({"error": {"code": "OverLimit"}}, "x").to_json()["error"]
    assert (over_limit["status"], over_limit["fault"]) == (403, "Sender")
    internal = parse_rule({"error": {"code": "InternalError"}}, "x").to_json()["error"]
    assert (internal["status"], internal["fault"]) == (500, "Receiver")


@pytest.mark.parametrize(
    "bad",
    [
        [],
        "x",
        {},
        {"action": "SendMessage"},
        {"error": {"code": "X"}, "colour": "red"},
        {"error": {"code": "X", "detail": 1}},
        {"error": 5},
        {"error": {}},
        {"error": {"code": ""}},
        {"error": {"code": "Bad;Code"}},
        {"error": {"code": "Bad#Code"}},
        {"error": {"code": "1Bad"}},
        {"error": {"code": "X", "status": 399}},
        {"error": {"code": "X", "status": 600}},
        {"error": {"code": "X", "status": "400"}},
        {"error": {"code": "X", "status": True}},
        {"error": {"code": "X", "fault": "Client"}},
        {"error": {"code": "X", "message": 5}},
        {"error": {"code": "X"}, "action": "Frobnicate"},
        {"error": {"code": "X"}, "action": 3},
        {"error": {"code": "X"}, "queue": ""},
        {"error": {"code": "X"}, "queue": ["q"]},
        {"latency_ms": -1},
        {"latency_ms": 600_001},
        {"latency_ms": "10"},
        {"latency_ms": float("nan")},
        {"latency_ms": 0},
        {"drop": "yes"},
        {"drop": False},
        {"drop": True, "error": {"code": "X"}},
        {"drop": True, "every": 0},
        {"drop": True, "every": 1.5},
        {"drop": True, "every": True},
        {"drop": True, "probability": 0},
        {"drop": True, "probability": 1.01},
        {"drop": True, "probability": "0.5"},
        {"drop": True, "probability": 0.5, "every": 2},
        {"drop": True, "probability": 0.5, "seed": 1.5},
        {"drop": True, "probability": 0.5, "seed": "42"},
        {"drop": True, "seed": 3},
        {"drop": True, "count": 0},
        {"drop": True, "count": 2.0},
        {"drop": True, "id": ""},
        {"drop": True, "id": "has space"},
        {"drop": True, "id": 7},
    ],
)
def test_bad_rules_are_refused_with_a_400_message(bad: Any) -> None:
    with pytest.raises(AdminError) as caught:
        parse_rule(bad, "f-1")
    assert caught.value.status == 400
    assert caught.value.message


def test_every_fires_on_each_nth_matching_call() -> None:
    rule = parse_rule({"drop": True, "every": 3}, "r")
    assert [rule.decide() for _ in range(7)] == [False, False, True, False, False, True, False]
    assert (rule.matched, rule.fired) == (7, 2)


def test_count_spends_a_rule_which_keeps_counting_matches() -> None:
    rule = parse_rule({"drop": True, "count": 2}, "r")
    assert [rule.decide() for _ in range(4)] == [True, True, False, False]
    assert (rule.matched, rule.fired) == (4, 2)
    every_other = parse_rule({"drop": True, "every": 2, "count": 1}, "r")
    assert [every_other.decide() for _ in range(5)] == [False, True, False, False, False]


def test_probability_follows_the_seeded_generator_and_repeats() -> None:
    rng = random.Random(42)
    expected = [rng.random() < 0.3 for _ in range(50)]
    first = parse_rule({"drop": True, "probability": 0.3, "seed": 42}, "r")
    second = parse_rule({"drop": True, "probability": 0.3, "seed": 42}, "r")
    pattern = [first.decide() for _ in range(50)]
    assert pattern == expected == [second.decide() for _ in range(50)]
    assert 0 < sum(pattern) < 50
    assert all(parse_rule({"drop": True, "probability": 1}, "r").decide() for _ in range(20))
    zero = random.Random(0)
    default_seed = parse_rule({"drop": True, "probability": 0.5}, "r")
    assert [default_seed.decide() for _ in range(20)] == [zero.random() < 0.5 for _ in range(20)]


def test_matching_by_action_and_queue_glob() -> None:
    rule = parse_rule({"action": "SendMessage", "queue": "orders-*", "drop": True}, "r")
    assert rule.matches("SendMessage", "orders-1")
    assert not rule.matches("SendMessage", "Orders-1")  # case-sensitive
    assert not rule.matches("SendMessage", "my-orders-1")
    assert not rule.matches("ReceiveMessage", "orders-1")
    assert not rule.matches("SendMessage", None)
    fifo = parse_rule({"queue": "jobs-?.fifo", "drop": True}, "r")
    assert fifo.matches("DeleteMessage", "jobs-7.fifo") and not fifo.matches("DeleteMessage", "jobs-17.fifo")
    anything = parse_rule({"drop": True}, "r")
    assert anything.matches("ListQueues", None) and anything.matches("SendMessage", "q")


def test_several_firing_rules_add_latency_and_the_earliest_error_wins() -> None:
    faults = FaultInjector()
    slow = faults.add({"latency_ms": 100})
    first = faults.add({"action": "SendMessage", "error": {"code": "First"}})
    faults.add({"queue": "q*", "latency_ms": 50, "error": {"code": "Second"}})
    faults.add({"queue": "other", "drop": True})
    outcome = faults.decide("SendMessage", "q1")
    assert outcome is not None
    assert outcome.latency_s == pytest.approx(0.15)
    assert outcome.error is not None and outcome.error.code == "First"
    assert not outcome.drop
    assert outcome.rule_ids == [slow.id, first.id, "f-3"]
    assert [r.matched for r in faults.rules] == [1, 1, 1, 0]
    assert faults.decide("SendMessage", "zzz") is not None  # the latency rule alone
    assert FaultInjector().decide("SendMessage", "q1") is None


def test_ids_are_generated_unique_or_chosen() -> None:
    faults = FaultInjector()
    assert faults.add({"drop": True}).id == "f-1"
    assert faults.add({"drop": True, "id": "f-2"}).id == "f-2"
    assert faults.add({"drop": True}).id == "f-3"
    with pytest.raises(AdminError) as caught:
        faults.add({"drop": True, "id": "f-1"})
    assert caught.value.status == 409
    assert faults.delete("f-1") and not faults.delete("f-1")
    assert faults.clear() == 2 and faults.rules == []


def test_each_broker_has_its_own_injector() -> None:
    one, two = new_broker(), new_broker()
    assert injector_for(one) is injector_for(one)
    assert injector_for(one) is not injector_for(two)


def test_injected_error_rows() -> None:
    throttle = injected_error_info("ThrottlingException")
    assert (throttle.json_type, throttle.query_code, throttle.status, throttle.fault) == (
        SQS_NS + "ThrottlingException",
        "ThrottlingException",
        400,
        "Sender",
    )
    by_query_code = injected_error_info("AWS.SimpleQueueService.NonExistentQueue", 400)
    assert by_query_code.json_type == SQS_NS + "QueueDoesNotExist"
    internal = injected_error_info("InternalError", 503)
    assert (internal.json_type, internal.header) == (CORAL_NS + "InternalFailure", b"InternalError;Receiver")


# ------------------------------------------------------------------------------------------------ admin routes


def test_admin_routes_add_list_get_and_delete() -> None:
    app, _ = make_app()
    resp = _admin(app, "POST", "/_sqsemu/faults", {"action": "SendMessage", "error": {"code": "ThrottlingException"}})
    assert resp.status == 201
    created = resp.json()
    assert created["id"] == "f-1" and created["matched"] == 0 and created["fired"] == 0
    assert _admin(app, "POST", "/_sqsemu/faults", {"drop": True, "id": "mine"}).status == 201
    listed = _admin(app, "GET", "/_sqsemu/faults").json()["faults"]
    assert [rule["id"] for rule in listed] == ["f-1", "mine"]
    assert listed[0] == created
    assert _admin(app, "GET", "/_sqsemu/faults/mine").json()["drop"] is True
    assert _admin(app, "DELETE", "/_sqsemu/faults/mine").json() == {"deleted": "mine"}
    missing = _admin(app, "DELETE", "/_sqsemu/faults/mine")
    assert missing.status == 404 and "mine" in missing.json()["error"]
    assert _admin(app, "GET", "/_sqsemu/faults/nope").status == 404
    assert _admin(app, "POST", "/_sqsemu/faults", {"drop": True}).status == 201
    assert _admin(app, "DELETE", "/_sqsemu/faults").json() == {"deleted": 2}
    assert _admin(app, "GET", "/_sqsemu/faults").json() == {"faults": []}
    assert _admin(app, "DELETE", "/_sqsemu/faults").json() == {"deleted": 0}


def test_admin_routes_refuse_bad_input() -> None:
    app, _ = make_app()
    for bad in ({"every": 2}, {"drop": True, "bogus": 1}, {"error": {"code": "X", "status": 200}}):
        resp = _admin(app, "POST", "/_sqsemu/faults", bad)
        assert resp.status == 400 and resp.json()["error"], bad
    empty = _admin(app, "POST", "/_sqsemu/faults")
    assert empty.status == 400 and "effect" in empty.json()["error"]
    not_json = asyncio.run(call_asgi(app, "POST", "/_sqsemu/faults", {"Host": "h"}, b"{nope"))
    assert not_json.status == 400
    assert _admin(app, "POST", "/_sqsemu/faults", ["drop"]).status == 400
    assert _admin(app, "POST", "/_sqsemu/faults", {"drop": True, "id": "a"}).status == 201
    assert _admin(app, "POST", "/_sqsemu/faults", {"drop": True, "id": "a"}).status == 409
    assert _admin(app, "GET", "/_sqsemu/faults").json()["faults"][0]["id"] == "a"


# ------------------------------------------------------------------------------------------------ the SQS path


def test_injected_error_in_json() -> None:
    app, broker = _app_with_queues("orders-1", "other")
    _admin(app, "POST", "/_sqsemu/faults", {"action": "SendMessage", "queue": "orders-*", "every": 2, "error": {
        "code": "ThrottlingException", "message": "Rate exceeded"}})  # fmt: skip
    assert _send(app, "orders-1").status == 200
    resp = _send(app, "orders-1")
    assert resp.status == 400
    assert resp.json() == {"__type": SQS_NS + "ThrottlingException", "message": "Rate exceeded"}
    assert resp.headers["x-amzn-query-error"] == "ThrottlingException;Sender"
    assert resp.headers["content-type"] == "application/x-amz-json-1.0"
    assert resp.headers["x-amzn-requestid"]
    assert _send(app, "orders-1").status == 200
    assert all(_send(app, "other").status == 200 for _ in range(4))
    assert _sends(broker) == 6  # the failed call never ran
    rule = _admin(app, "GET", "/_sqsemu/faults/f-1").json()
    assert (rule["matched"], rule["fired"]) == (3, 1)


def test_injected_error_in_query_xml() -> None:
    app, broker = _app_with_queues("q")
    _admin(app, "POST", "/_sqsemu/faults", {"action": "SendMessage", "error": {"code": "InternalError"}, "count": 1})
    resp = _send(app, "q", "query")
    assert resp.status == 500
    assert resp.headers["content-type"] == "text/xml"
    assert resp.headers["x-amzn-query-error"] == "InternalError;Receiver"
    root = ET.fromstring(resp.body)
    assert root.tag == NS + "ErrorResponse"
    assert root.findtext(f"{NS}Error/{NS}Type") == "Receiver"
    assert root.findtext(f"{NS}Error/{NS}Code") == "InternalError"
    assert root.findtext(f"{NS}Error/{NS}Message") == "sqsemu fault injection: InternalError"
    assert root.findtext(f"{NS}RequestId") == resp.headers["x-amzn-requestid"]
    assert _send(app, "q", "query").status == 200  # count=1: spent
    assert _sends(broker) == 1


def test_a_message_is_escaped_in_xml() -> None:
    app, _ = _app_with_queues("q")
    _admin(app, "POST", "/_sqsemu/faults", {"error": {"code": "OverLimit", "message": "<too> & many"}})
    resp = _send(app, "q", "query")
    assert resp.status == 403
    root = ET.fromstring(resp.body)
    assert root.findtext(f"{NS}Error/{NS}Message") == "<too> & many"
    assert root.findtext(f"{NS}Error/{NS}Code") == "OverLimit"


def test_queue_of_create_queue_is_its_name_and_list_queues_has_none() -> None:
    app, broker = make_app()
    _admin(app, "POST", "/_sqsemu/faults", {"queue": "doomed-*", "error": {"code": "Nope"}})
    assert json_call(app, "CreateQueue", {"QueueName": "doomed-1"}).status == 400
    assert json_call(app, "CreateQueue", {"QueueName": "fine"}).status == 200
    assert json_call(app, "GetQueueUrl", {"QueueName": "doomed-1"}).json()["__type"] == SQS_NS + "Nope"
    assert json_call(app, "ListQueues", {}).status == 200
    _admin(app, "POST", "/_sqsemu/faults", {"action": "ListQueues", "error": {"code": "Nope"}})
    assert json_call(app, "ListQueues", {}).status == 400
    assert [queue.name for queue in broker.all_queues()] == ["fine"]  # the refused CreateQueue never ran


def test_query_request_sent_to_a_queue_url_path_matches_that_queue() -> None:
    app, _ = _app_with_queues("orders-9")
    _admin(app, "POST", "/_sqsemu/faults", {"queue": "orders-*", "error": {"code": "Nope"}})
    resp = query_call(app, {"Action": "SendMessage", "MessageBody": "x"}, path="/000000000000/orders-9")
    assert resp.status == 400
    assert ET.fromstring(resp.body).findtext(f"{NS}Error/{NS}Code") == "Nope"


def test_a_malformed_request_gets_its_real_error_not_the_fault() -> None:
    app, _ = _app_with_queues("q")
    _admin(app, "POST", "/_sqsemu/faults", {"error": {"code": "Injected"}})
    resp = json_call(app, "NoSuchAction", {})
    assert resp.status == 400 and "InvalidAction" in resp.json()["__type"]


def test_latency_then_the_call_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep
    this_thread = threading.get_ident()

    async def fake_sleep(seconds: float) -> None:
        # The patch is the asyncio module's own attribute: a server another test left running in this process (in
        # a thread of its own) sleeps through it too; only this test's calls are counted and cut short.
        if threading.get_ident() != this_thread:
            await real_sleep(seconds)
            return
        slept.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr("sqsemu.http.app.asyncio.sleep", fake_sleep)
    app, broker = _app_with_queues("q")
    _admin(app, "POST", "/_sqsemu/faults", {"action": "SendMessage", "latency_ms": 250})
    assert _send(app, "q").status == 200
    assert slept == [0.25] and _sends(broker) == 1
    _admin(app, "POST", "/_sqsemu/faults", {"latency_ms": 50, "error": {"code": "Slow"}})
    assert _send(app, "q").status == 400
    assert slept == [0.25, 0.3] and _sends(broker) == 1


def test_drop_starts_a_response_and_never_finishes_it() -> None:
    app, broker = _app_with_queues("q")
    _admin(app, "POST", "/_sqsemu/faults", {"action": "SendMessage", "drop": True, "count": 1})
    sent = asyncio.run(_raw_messages(app, "SendMessage", {"QueueUrl": URL + "q", "MessageBody": "x"}))
    assert [m["type"] for m in sent] == ["http.response.start"]
    declared = dict(sent[0]["headers"])[b"content-length"]
    assert int(declared) > 0  # promised a body that never comes
    assert _sends(broker) == 0
    assert _send(app, "q").status == 200  # count=1: spent, the server answers again


def test_the_unfinished_response_warning_is_silenced_only_for_drops() -> None:
    record = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, http_app._UNFINISHED_RESPONSE, None, None)
    log_filter = http_app._DropLogFilter()
    assert log_filter.filter(record)  # a genuine unfinished response is still reported

    async def dropping() -> bool:
        http_app._dropping.set(True)
        return log_filter.filter(record)

    assert asyncio.run(dropping()) is False
    other = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "something else", None, None)

    async def dropping_other() -> bool:
        http_app._dropping.set(True)
        return log_filter.filter(other)

    assert asyncio.run(dropping_other()) is True


def test_no_rules_no_counting() -> None:
    app, broker = _app_with_queues("q")
    faults = injector_for(broker)
    assert faults.rules == []
    assert _send(app, "q").status == 200
    faults.add({"queue": "elsewhere", "drop": True})
    assert _send(app, "q").status == 200
    assert faults.rules[0].matched == 0


# ------------------------------------------------------------------------------------------------ --faults file


def _write(tmp_path: Path, content: Any) -> str:
    path = tmp_path / "faults.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_faults_file_is_loaded_when_the_app_is_built(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "boot", "action": "SendMessage", "error": {"code": "ThrottlingException"}}])
    app, broker = make_app(Config(faults=path))
    broker.create_queue(DEFAULT, "q", {}, {})
    assert _send(app, "q").status == 400
    listed = _admin(app, "GET", "/_sqsemu/faults").json()["faults"]
    assert [(rule["id"], rule["fired"]) for rule in listed] == [("boot", 1)]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ({"action": "SendMessage"}, "JSON list"),
        ([{"drop": True}, {"drop": True, "every": 0}], "rule 2"),
        ([{"drop": True, "id": "a"}, {"drop": True, "id": "a"}], "rule 2"),
    ],
)
def test_bad_faults_files_name_the_file_and_the_rule(tmp_path: Path, content: Any, expected: str) -> None:
    path = _write(tmp_path, content)
    faults = FaultInjector()
    with pytest.raises(FaultFileError) as caught:
        faults.load_file(path)
    assert path in str(caught.value) and expected in str(caught.value)
    assert faults.rules == []  # all or nothing
    with pytest.raises(ValueError):
        make_app(Config(faults=path))


def test_missing_faults_file(tmp_path: Path) -> None:
    with pytest.raises(FaultFileError, match="cannot read"):
        FaultInjector().load_file(tmp_path / "absent.json")


def test_cli_refuses_a_bad_faults_file_before_starting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Config] = []
    monkeypatch.setattr("sqsemu.server.run", started.append)
    runner = CliRunner()
    bad = _write(tmp_path, [{"every": 2}])
    result = runner.invoke(cli_main, ["--faults", bad])
    assert result.exit_code == 2
    assert "rule 1" in result.output and "effect" in result.output
    result = runner.invoke(cli_main, [], env={"SQSEMU_FAULTS": str(tmp_path / "absent.json")})
    assert result.exit_code == 2 and "cannot read" in result.output
    assert started == []
    good = str(tmp_path / "good.json")
    Path(good).write_text(json.dumps([{"drop": True}]))
    result = runner.invoke(cli_main, [], env={"SQSEMU_FAULTS": good})
    assert result.exit_code == 0, result.output
    assert [config.faults for config in started] == [good]
