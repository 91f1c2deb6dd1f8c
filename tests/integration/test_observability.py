"""Observability against real server processes: ``GET /metrics`` after a scripted scenario (parsed with
prometheus-client's parser, exact values, both protocols), ``--no-metrics``, the access line of a failed call in
both log formats, and the start-up banner."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for, http_get
from prometheus_client.parser import text_string_to_metric_families

from sqsemu import compiled

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
ACCOUNT = "000000000000"


def scrape(server: ServerProcess) -> Samples:
    status, headers, body = http_get(f"{server.endpoint_url}/metrics", timeout=10)
    assert status == 200, body
    assert {k.lower(): v for k, v in headers.items()}["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    out: Samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def per_queue(samples: Samples, name: str, queue: str) -> float:
    return value(samples, name, account=ACCOUNT, region="us-east-1", queue=queue)


def test_metrics_after_a_scripted_scenario(protocol: str) -> None:
    """Create queues, send 3, receive 2 (and one empty receive), delete 1, a dead-letter move, an expiry and a failed
    call; then every counter and gauge of /metrics has the value the scenario implies."""
    with ServerProcess(["--clock", "manual"]) as server:
        sqs = client_for(server.endpoint_url, protocol)
        try:
            dlq_url = sqs.create_queue(QueueName="dlq")["QueueUrl"]
            dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"})
            work_url = sqs.create_queue(QueueName="work", Attributes={"RedrivePolicy": policy})["QueueUrl"]
            short_url = sqs.create_queue(QueueName="short", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
            for body in ("a" * 10, "b" * 100, "c" * 2000):
                sqs.send_message(QueueUrl=work_url, MessageBody=body)
            assert "Messages" not in sqs.receive_message(QueueUrl=dlq_url)  # the empty receive
            got = sqs.receive_message(QueueUrl=work_url, MaxNumberOfMessages=2, VisibilityTimeout=30)["Messages"]
            assert len(got) == 2
            sqs.delete_message(QueueUrl=work_url, ReceiptHandle=got[0]["ReceiptHandle"])
            server.advance(31)  # the second message is visible again, received once already: dead-lettered next
            again = sqs.receive_message(QueueUrl=work_url, MaxNumberOfMessages=10, VisibilityTimeout=300)
            assert [m["Body"] for m in again["Messages"]] == ["c" * 2000]
            sqs.send_message(QueueUrl=short_url, MessageBody="old")
            server.advance(61)  # "old" expires (retention 60 s)
            with pytest.raises(ClientError):
                sqs.send_message(QueueUrl=work_url + "-missing", MessageBody="x")
            samples = scrape(server)
        finally:
            sqs.close()

    assert per_queue(samples, "sqs_number_of_messages_sent_total", "work") == 3
    assert per_queue(samples, "sqs_number_of_messages_received_total", "work") == 3
    assert per_queue(samples, "sqs_number_of_messages_deleted_total", "work") == 1
    assert per_queue(samples, "sqs_number_of_empty_receives_total", "work") == 0
    assert per_queue(samples, "sqs_number_of_messages_dead_lettered_total", "work") == 1
    assert per_queue(samples, "sqs_number_of_messages_expired_total", "work") == 0
    assert per_queue(samples, "sqs_approximate_number_of_messages_visible", "work") == 0
    assert per_queue(samples, "sqs_approximate_number_of_messages_not_visible", "work") == 1
    assert per_queue(samples, "sqs_approximate_number_of_messages_delayed", "work") == 0
    assert per_queue(samples, "sqs_approximate_age_of_oldest_message_seconds", "work") == 92.0
    assert per_queue(samples, "sqs_sent_message_size_bytes_count", "work") == 3
    assert per_queue(samples, "sqs_sent_message_size_bytes_sum", "work") == 2110

    assert per_queue(samples, "sqs_number_of_messages_sent_total", "dlq") == 0
    assert per_queue(samples, "sqs_number_of_messages_received_total", "dlq") == 0
    assert per_queue(samples, "sqs_number_of_empty_receives_total", "dlq") == 1
    assert per_queue(samples, "sqs_approximate_number_of_messages_visible", "dlq") == 1
    assert per_queue(samples, "sqs_approximate_age_of_oldest_message_seconds", "dlq") == 92.0

    assert per_queue(samples, "sqs_number_of_messages_sent_total", "short") == 1
    assert per_queue(samples, "sqs_number_of_messages_expired_total", "short") == 1
    assert per_queue(samples, "sqs_approximate_number_of_messages_visible", "short") == 0

    def requests(action: str, outcome: str = "ok") -> float:
        return value(samples, "sqsemu_requests_total", action=action, protocol=protocol, outcome=outcome)

    assert requests("CreateQueue") == 3
    assert requests("GetQueueAttributes") == 1
    assert requests("SendMessage") == 4
    assert requests("SendMessage", "QueueDoesNotExist") == 1
    assert requests("ReceiveMessage") == 3
    assert requests("DeleteMessage") == 1
    assert value(samples, "sqsemu_request_duration_seconds_count", action="SendMessage", protocol=protocol) == 5
    assert value(samples, "sqsemu_queues") == 3
    assert value(samples, "sqsemu_long_polls_waiting") == 0
    assert value(samples, "sqsemu_open_connections") >= 1
    assert value(samples, "sqsemu_timers_scheduled") >= 1
    assert ("process_resident_memory_bytes", ()) in samples


def test_no_metrics_answers_404() -> None:
    with ServerProcess(["--no-metrics"]) as server:
        status, _, body = http_get(f"{server.endpoint_url}/metrics")
        assert status == 404
        assert json.loads(body) == {"error": "the metrics are switched off (--no-metrics)"}
        assert "metrics off (--no-metrics)" in server.log_tail()


def test_metrics_need_the_admin_token_when_one_is_set() -> None:
    with ServerProcess(["--admin-token", "s3cret"]) as server:
        assert http_get(f"{server.endpoint_url}/metrics")[0] == 401
        import urllib.request

        request = urllib.request.Request(f"{server.endpoint_url}/metrics", headers={"X-Sqsemu-Admin-Token": "s3cret"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
            assert b"sqsemu_requests_total" in response.read()


def _failed_send(server: ServerProcess, protocol: str) -> str:
    """SendMessage to a queue that does not exist; returns the request id of the answer."""
    sqs = client_for(server.endpoint_url, protocol)
    try:
        with pytest.raises(ClientError) as failure:
            sqs.send_message(QueueUrl=f"{server.endpoint_url}/{ACCOUNT}/missing", MessageBody="x")
        return str(failure.value.response["ResponseMetadata"]["RequestId"])
    finally:
        sqs.close()


def _log_lines(server: ServerProcess, until: Callable[[list[str]], bool] = lambda lines: True) -> list[str]:
    """The server's output lines (read while it runs: the file goes when it stops cleanly), once ``until`` holds
    for them (a line is written just after its answer is sent, so it may come a moment later)."""
    deadline = time.monotonic() + 10
    while True:
        lines = Path(server.log_path).read_text().splitlines()
        if until(lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)


@pytest.mark.parametrize("protocol", ["json", "query"])
def test_access_line_of_a_failed_call_in_text(protocol: str) -> None:
    with ServerProcess(["--access-log"]) as server:
        request_id = _failed_send(server, protocol)
        lines = _log_lines(server, lambda lines: any(request_id in line for line in lines))
    [line] = [line for line in lines if " sqsemu.access action=SendMessage " in line]
    status = 400
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO sqsemu\.access action=SendMessage "
        rf"queue={ACCOUNT}/missing protocol={protocol} status={status} error=QueueDoesNotExist "
        rf"latency_ms=\d+(\.\d+)? request_id={re.escape(request_id)}",
        line,
    ), line


def test_access_line_of_a_failed_call_in_json() -> None:
    with ServerProcess(["--access-log", "--log-format", "json"]) as server:
        request_id = _failed_send(server, "json")
        last = _failed_send(server, "query")
        lines = _log_lines(server, lambda lines: any(last in line for line in lines))
    assert all(line.startswith("{") for line in lines if line.strip())  # uvicorn's own lines are JSON too
    entries = [json.loads(line) for line in lines]
    access = [e for e in entries if e["logger"] == "sqsemu.access"]
    assert [(e["action"], e["protocol"]) for e in access] == [("SendMessage", "json"), ("SendMessage", "query")]
    entry: dict[str, Any] = access[0]
    assert entry["queue"] == f"{ACCOUNT}/missing"
    assert (entry["status"], entry["error"], entry["request_id"]) == (400, "QueueDoesNotExist", request_id)
    assert entry["level"] == "INFO" and entry["messages"] is None and entry["latency_ms"] >= 0
    assert entry["message"].startswith("action=SendMessage queue=")
    admin = [e for e in entries if e["logger"] == "sqsemu.access.admin"]  # the harness's start-up health checks
    assert (admin[0]["method"], admin[0]["path"], admin[0]["status"]) == ("GET", "/health", 200)


def test_banner_lines_at_start(tmp_path: Path) -> None:
    config = tmp_path / "sqsemu.toml"
    config.write_text('[server]\nregion = "eu-west-1"\n\n[[queues]]\nname = "orders"\n\n[[queues]]\nname = "jobs"\n')
    with ServerProcess(["--config", str(config), "--clock", "manual"]) as server:
        lines = [line.split(" sqsemu.banner ", 1)[1] for line in _log_lines(server) if " sqsemu.banner " in line]
        endpoint = server.endpoint_url
    assert lines[0].startswith("sqsemu ")
    assert lines[0].endswith(f" serving SQS at {endpoint} (region eu-west-1, default account {ACCOUNT})")
    assert lines[1:] == [
        "clock manual, fidelity relaxed, data in memory, auth none (any credentials)",
        "queues: 0 restored, 2 declared",
        f"metrics at {endpoint}/metrics; console at {endpoint}/_sqsemu/ui/",
        f"build: {compiled.status()}",  # the server's environment is this one's: the same build
    ]


def test_banner_of_a_durable_server_in_json(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ServerProcess(["--data-dir", str(data), "--log-format", "json"]) as server:
        client = client_for(server.endpoint_url, "json")
        client.create_queue(QueueName="kept")
        client.close()
    with ServerProcess(["--data-dir", str(data), "--log-format", "json", "--no-metrics"]) as server:
        entries = [json.loads(line) for line in _log_lines(server)]
    banner = [e for e in entries if e["logger"] == "sqsemu.banner"]
    assert [e["message"] for e in banner][1:] == [
        f"clock system, fidelity relaxed, data durable in {data.resolve()} (fsync normal), auth none (any credentials)",
        "queues: 1 restored, 0 declared",
        f"metrics off (--no-metrics); console at {server.endpoint_url}/_sqsemu/ui/",
        f"build: {compiled.status()}",
    ]
    facts = banner[0]
    assert (facts["queues_restored"], facts["queues_declared"], facts["data_dir"]) == (1, 0, str(data.resolve()))
    assert facts["metrics_url"] is None and facts["endpoint"] == server.endpoint_url
