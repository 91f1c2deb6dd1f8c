"""Log lines: the access lines of SQS and admin calls (text and JSON), the two formatters, the logging set-up of
the command-line server, and the app writing one access line per call."""

from __future__ import annotations

import json
import logging

import pytest

from sqsemu.config import Config
from sqsemu.observability.accesslog import ACCESS_LOGGER, ADMIN_ACCESS_LOGGER, AdminCall, SqsCall, logfmt
from sqsemu.observability.logformat import JsonFormatter, TextFormatter, logging_config, utc_time
from tests.unit.app_helpers import call_asgi, json_call, make_app, query_call

CREATED = 1_700_000_000.25  # 2023-11-14T22:13:20.250Z


def _record(msg: object, name: str = ACCESS_LOGGER, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord(name, logging.INFO, __file__, 1, msg, None, None)
    record.created = CREATED
    record.__dict__.update(extra)
    return record


def _failed_send() -> SqsCall:
    return SqsCall(
        "SendMessage", "000000000000/orders", "json", 400, "QueueDoesNotExist", None, None, 0.000412, "req-1"
    )


def test_utc_time_is_iso_8601_with_milliseconds() -> None:
    assert utc_time(CREATED) == "2023-11-14T22:13:20.250Z"


def test_access_line_of_a_failed_call_in_text() -> None:
    assert str(_failed_send()) == (
        "action=SendMessage queue=000000000000/orders protocol=json status=400 error=QueueDoesNotExist "
        "latency_ms=0.412 request_id=req-1"
    )


def test_access_line_of_a_receive_and_of_a_batch() -> None:
    receive = SqsCall("ReceiveMessage", "000000000000/q", "query", 200, None, 3, None, 0.0015, "r")
    assert (
        str(receive) == "action=ReceiveMessage queue=000000000000/q protocol=query status=200 messages=3 "
        "latency_ms=1.5 request_id=r"
    )
    batch = SqsCall("SendMessageBatch", "000000000000/q", "json", 200, None, 8, 2, 0.002, "r")
    assert "messages=8 failed=2 latency_ms=2.0" in str(batch)


def test_access_line_without_action_or_queue() -> None:
    line = str(SqsCall(None, None, "query", 404, "UnknownOperationException", None, None, 0.0001, "r"))
    assert line == "action=- protocol=query status=404 error=UnknownOperationException latency_ms=0.1 request_id=r"


def test_logfmt_quotes_what_would_break_the_line() -> None:
    assert logfmt({"a": "plain-value_1.2/x", "b": "two words", "c": 'say "hi"', "d": "line\nbreak", "e": ""}) == (
        'a=plain-value_1.2/x b="two words" c="say \\"hi\\"" d="line\\nbreak" e=""'
    )
    assert logfmt({"k": "x=y", "n": None, "i": 7}) == 'k="x=y" i=7'
    long = logfmt({"v": "a" * 500})
    assert long == "v=" + "a" * 200 + "..."


def test_admin_access_line() -> None:
    call = AdminCall("POST", "/_sqsemu/reset", 200, 0.0012044)
    assert str(call) == "method=POST path=/_sqsemu/reset status=200 latency_ms=1.204"
    assert call.fields() == {"method": "POST", "path": "/_sqsemu/reset", "status": 200, "latency_ms": 1.204}


def test_text_formatter() -> None:
    line = TextFormatter().format(_record(_failed_send()))
    assert line == (
        "2023-11-14T22:13:20.250Z INFO sqsemu.access action=SendMessage queue=000000000000/orders protocol=json "
        "status=400 error=QueueDoesNotExist latency_ms=0.412 request_id=req-1"
    )


def test_json_formatter_of_an_access_line() -> None:
    entry = json.loads(JsonFormatter().format(_record(_failed_send())))
    assert entry == {
        "time": "2023-11-14T22:13:20.250Z",
        "level": "INFO",
        "logger": "sqsemu.access",
        "message": str(_failed_send()),
        "action": "SendMessage",
        "queue": "000000000000/orders",
        "protocol": "json",
        "status": 400,
        "error": "QueueDoesNotExist",
        "messages": None,
        "failed": None,
        "latency_ms": 0.412,
        "request_id": "req-1",
    }


def test_json_formatter_of_a_plain_record_with_fields_and_of_an_exception() -> None:
    plain = json.loads(JsonFormatter().format(_record("hello %s", name="sqsemu.banner", fields={"port": 9324})))
    assert plain == {
        "time": "2023-11-14T22:13:20.250Z",
        "level": "INFO",
        "logger": "sqsemu.banner",
        "message": "hello %s",
        "port": 9324,
    }
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        record = logging.LogRecord("sqsemu.http", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    entry = json.loads(JsonFormatter().format(record))
    assert entry["level"] == "ERROR" and entry["message"] == "failed"
    assert "RuntimeError: boom" in entry["exception"]
    assert "\n" not in JsonFormatter().format(record)


@pytest.mark.parametrize(("log_format", "formatter"), [("text", TextFormatter), ("json", JsonFormatter)])
def test_logging_config_of_the_command_line_server(log_format: str, formatter: type) -> None:
    config = logging_config(Config(log_format=log_format, log_level="warning"))
    assert config["formatters"]["sqsemu"]["()"] == f"sqsemu.observability.logformat.{formatter.__name__}"
    assert config["disable_existing_loggers"] is False
    assert config["loggers"]["sqsemu"] == {"handlers": ["sqsemu"], "level": 30, "propagate": False}
    assert config["loggers"]["uvicorn"]["handlers"] == ["sqsemu"]
    assert config["handlers"]["sqsemu"]["stream"] == "ext://sys.stderr"


def test_log_format_is_checked() -> None:
    with pytest.raises(ValueError, match="log_format must be one of text, json"):
        Config(log_format="xml")


# ------------------------------------------------------------------------------------------- the app's lines


def _access(caplog: pytest.LogCaptureFixture, logger: str = ACCESS_LOGGER) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for record in caplog.records:
        if record.name == logger:
            fields = getattr(record.msg, "fields", None)
            assert callable(fields)
            out.append(fields())
    return out


def test_the_app_logs_a_failed_call_with_its_action_queue_and_error_code(caplog: pytest.LogCaptureFixture) -> None:
    app, _ = make_app(Config(access_log=True))
    with caplog.at_level(logging.INFO, logger="sqsemu.access"):
        response = json_call(
            app, "SendMessage", {"QueueUrl": "http://localhost:9324/000000000000/nope", "MessageBody": "x"}
        )
    assert response.status == 400
    [line] = _access(caplog)
    assert line["action"] == "SendMessage"
    assert line["queue"] == "000000000000/nope"
    assert (line["protocol"], line["status"], line["error"]) == ("json", 400, "QueueDoesNotExist")
    assert line["request_id"] == response.headers["x-amzn-requestid"]
    assert isinstance(line["latency_ms"], float) and line["latency_ms"] >= 0


def test_the_app_logs_receives_and_batches_with_their_counts(caplog: pytest.LogCaptureFixture) -> None:
    app, _ = make_app(Config(access_log=True))
    with caplog.at_level(logging.INFO, logger="sqsemu.access"):
        query_call(app, {"Action": "CreateQueue", "QueueName": "q"})
        url = "http://localhost:9324/000000000000/q"
        json_call(
            app,
            "SendMessageBatch",
            {
                "QueueUrl": url,
                "Entries": [
                    {"Id": "a", "MessageBody": "1"},
                    {"Id": "b", "MessageBody": "2"},
                    {"Id": "c", "MessageBody": "3", "DelaySeconds": 5000},
                ],
            },
        )
        query_call(app, {"Action": "ReceiveMessage", "MaxNumberOfMessages": "10"}, path="/000000000000/q")
        json_call(app, "ListQueues", {})
    create, batch, receive, listing = _access(caplog)
    assert (create["action"], create["queue"], create["protocol"]) == ("CreateQueue", "000000000000/q", "query")
    assert (batch["messages"], batch["failed"], batch["error"]) == (2, 1, None)
    assert (receive["action"], receive["queue"], receive["messages"], receive["failed"]) == (
        "ReceiveMessage",
        "000000000000/q",
        2,
        None,
    )
    assert listing["queue"] is None and listing["messages"] is None


def test_the_app_logs_admin_calls_on_their_own_logger(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio

    app, _ = make_app(Config(access_log=True))
    with caplog.at_level(logging.INFO, logger="sqsemu.access"):
        asyncio.run(call_asgi(app, "GET", "/_sqsemu/queues", {"Host": "localhost:9324"}))
        asyncio.run(call_asgi(app, "GET", "/metrics", {"Host": "localhost:9324"}))
    assert _access(caplog) == []
    queues, metrics = _access(caplog, ADMIN_ACCESS_LOGGER)
    assert (queues["method"], queues["path"], queues["status"]) == ("GET", "/_sqsemu/queues", 200)
    assert (metrics["path"], metrics["status"]) == ("/metrics", 200)


def test_no_access_lines_without_access_log(caplog: pytest.LogCaptureFixture) -> None:
    app, _ = make_app(Config())
    with caplog.at_level(logging.INFO, logger="sqsemu.access"):
        json_call(app, "ListQueues", {})
    assert _access(caplog) == [] and _access(caplog, ADMIN_ACCESS_LOGGER) == []
