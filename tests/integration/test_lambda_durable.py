"""Event source mappings are state like queues (issue 28): in durable mode they are rows of the SQLite store with
their state; a mapping survives SIGKILL; a mapping deleted while its batch was still being invoked stays deleted
after SIGKILL and a restart (it answered ``Deleting``); an earlier version's ``event-source-mappings.json`` is
migrated into the store. Real server processes, real sockets, the manual clock."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from harness import ServerProcess, client_for
from harness.invoke import InvokeEndpoint

from sqsemu.testing import SQSServer

pytestmark = pytest.mark.integration


def _args(tmp_path: Path, endpoint: InvokeEndpoint) -> list[str]:
    return ["--data-dir", str(tmp_path / "data"), "--clock", "manual", "--lambda-endpoint", endpoint.url]


def _queue(sqs: Any, name: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def _wait_until(condition: Any, timeout_s: float = 15.0) -> None:
    """Wait (real time, bounded) for what another process does: an Invoke call arriving."""
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        threading.Event().wait(0.05)
    raise AssertionError("the condition did not come true in time")


def test_a_mapping_survives_sigkill_and_a_deleted_one_stays_deleted(tmp_path: Path, protocol: str) -> None:
    release = threading.Event()
    seen: list[str] = []

    def blocking(event: dict[str, Any], context: Any) -> None:
        seen.extend(r["body"] for r in event["Records"])
        release.wait(30)  # the batch is still being invoked when the mapping is deleted and the server killed

    def quick(event: dict[str, Any], context: Any) -> None:
        seen.extend(r["body"] for r in event["Records"])

    with InvokeEndpoint({"blocking": blocking, "quick": quick}) as endpoint:
        args = _args(tmp_path, endpoint)
        server = ServerProcess(args).start()
        try:
            sqs = client_for(server.endpoint_url, protocol)
            lam = SQSServer.lambda_client_for(server.endpoint_url)
            doomed_url, doomed_arn = _queue(sqs, "doomed")
            kept_url, kept_arn = _queue(sqs, "kept")
            doomed = lam.create_event_source_mapping(EventSourceArn=doomed_arn, FunctionName="blocking")["UUID"]
            kept = lam.create_event_source_mapping(EventSourceArn=kept_arn, FunctionName="quick", BatchSize=3)
            sqs.send_message(QueueUrl=doomed_url, MessageBody="in-flight")
            _wait_until(lambda: "in-flight" in seen)  # the invocation has started
            answer = lam.delete_event_source_mapping(UUID=doomed)
            assert answer["State"] == "Deleting"  # answered once committed
            sqs.close()
        finally:
            server.kill()
            release.set()
        server = ServerProcess(args).start()
        try:
            lam = SQSServer.lambda_client_for(server.endpoint_url)
            listed = lam.list_event_source_mappings()["EventSourceMappings"]
            assert [m["UUID"] for m in listed] == [kept["UUID"]]
            assert listed[0]["BatchSize"] == 3 and listed[0]["State"] == "Enabled"
            sqs = client_for(server.endpoint_url, protocol)
            server.advance(31)  # the killed batch's visibility timeout ends: nothing reads that queue any more
            sqs.send_message(QueueUrl=kept_url, MessageBody="after-restart")
            _wait_until(lambda: "after-restart" in seen)
            peeked = sqs.receive_message(QueueUrl=doomed_url, VisibilityTimeout=0, WaitTimeSeconds=0)
            assert [m["Body"] for m in peeked.get("Messages", [])] == ["in-flight"]  # still there, never deleted
            assert seen.count("in-flight") == 1  # delivered once, before the kill; never after the restart
            sqs.close()
        finally:
            assert server.stop() == 0
        rows = sqlite3.connect(tmp_path / "data" / "sqsemu.db").execute("SELECT uuid FROM event_source_mappings")
        assert [r[0] for r in rows] == [kept["UUID"]]


def test_an_earlier_versions_file_is_migrated(tmp_path: Path) -> None:
    with InvokeEndpoint({"f": lambda event, context: None}) as endpoint:
        args = _args(tmp_path, endpoint)
        server = ServerProcess(args).start()
        try:
            sqs = client_for(server.endpoint_url, "json")
            _, arn = _queue(sqs, "old")
            sqs.close()
        finally:
            assert server.stop() == 0
        legacy: dict[str, Any] = {
            "version": 1,
            "mappings": [
                {
                    "uuid": "6f0e7a8c-0000-4000-8000-000000000001",
                    "account": "000000000000",
                    "region": "us-east-1",
                    "event_source_arn": arn,
                    "function": "f",
                    "batch_size": 7,
                    "batching_window_s": 0,
                    "response_types": [],
                    "maximum_concurrency": None,
                    "filters": [],
                    "enabled": False,
                    "last_modified": 1.0,
                }
            ],
        }
        old_file = tmp_path / "data" / "event-source-mappings.json"
        old_file.write_text(json.dumps(legacy))
        server = ServerProcess(args).start()
        try:
            lam = SQSServer.lambda_client_for(server.endpoint_url)
            (mapping,) = lam.list_event_source_mappings()["EventSourceMappings"]
            assert mapping["UUID"] == legacy["mappings"][0]["uuid"] and mapping["BatchSize"] == 7
            assert mapping["State"] == "Disabled"
            assert "migrated 1 mapping(s)" in server.log_tail()
        finally:
            assert server.stop() == 0
        assert not old_file.exists() and old_file.with_name(old_file.name + ".migrated").exists()
        server = ServerProcess(args).start()  # once: the store holds it now
        try:
            lam = SQSServer.lambda_client_for(server.endpoint_url)
            assert [m["BatchSize"] for m in lam.list_event_source_mappings()["EventSourceMappings"]] == [7]
        finally:
            assert server.stop() == 0
