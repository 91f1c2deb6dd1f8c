"""Event source mappings seen from outside: an access line per invocation (``--access-log``), the metrics, and the
web console's queue page listing the queue's mappings with their last results. SQS calls over both protocols."""

from __future__ import annotations

import logging
import urllib.request
from typing import Any

import pytest
from harness import client_for

from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration


def _fail_second(event: dict[str, Any], context: Any) -> dict[str, Any]:
    records = event["Records"]
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records if r["body"] == "bad"]}


def test_access_line_metrics_and_console(protocol: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sqsemu.access.lambda")
    with SQSServer(functions={"checker": _fail_second}, access_log=True) as server:
        account = new_account()
        sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
        try:
            url = sqs.create_queue(QueueName="watched")["QueueUrl"]
            arn = f"arn:aws:sqs:us-east-1:{account}:watched"
            uid = server.map_queue(url, "checker", account=account, FunctionResponseTypes=["ReportBatchItemFailures"])
            sqs.send_message_batch(
                QueueUrl=url,
                Entries=[{"Id": "1", "MessageBody": "good"}, {"Id": "2", "MessageBody": "bad"}],
            )
            server.settle()
        finally:
            sqs.close()
        lines = [r.getMessage() for r in caplog.records if r.name == "sqsemu.access.lambda"]
        assert len(lines) == 1
        line = lines[0]
        for part in (
            "action=Invoke",
            "function=checker",
            f"mapping={uid}",
            f"queue={arn}",
            "messages=2",
            "failed=1",
            "outcome=partial_failure",
            "latency_ms=",
        ):
            assert part in line, line

        with urllib.request.urlopen(server.endpoint_url + "/metrics", timeout=30) as response:
            metrics = response.read().decode()
        assert 'sqsemu_lambda_invocations_total{function="checker",outcome="partial_failure"} 1.0' in metrics
        assert 'sqsemu_lambda_batch_size_bucket{le="2.0"} 1.0' in metrics
        assert 'sqsemu_lambda_event_source_mappings{state="Enabled"} 1.0' in metrics

        page_url = f"{server.endpoint_url}/_sqsemu/ui/queues/{account}/us-east-1/watched"
        with urllib.request.urlopen(page_url, timeout=30) as response:
            page = response.read().decode()
        assert 'id="event-source-mappings"' in page
        assert f'data-uuid="{uid}"' in page
        assert "checker" in page and "python:_fail_second" in page
        assert "partial_failure" in page and "Last result: OK" in page
