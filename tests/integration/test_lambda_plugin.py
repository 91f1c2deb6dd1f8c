"""Lambda consumers as a user of the pytest plugin and of docs/lambda.md meets them: a test file with no imports
from this repository using the ``sqs_lambda`` fixture with ``sqs_server.function`` and ``settle``, run by pytester
in a fresh pytest process; and the Powertools example of docs/lambda.md run as it stands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_pytest_plugin import run  # the plugin tests' runner (entry point or -p)

pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[2] / "docs" / "lambda.md"

USER_TEST = """
import json


def test_orders_are_consumed(sqs_server, sqs, sqs_lambda, sqs_clock):
    seen = []

    def handler(event, context):
        seen.append([r["body"] for r in event["Records"]])
        failed = [r for r in event["Records"] if r["body"] == "bad"]
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in failed]}

    sqs_server.function("consume-orders", handler)
    url = sqs.create_queue(QueueName="orders", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs_lambda.create_event_source_mapping(
        EventSourceArn=arn, FunctionName="consume-orders", FunctionResponseTypes=["ReportBatchItemFailures"]
    )
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "1", "MessageBody": "ok"}, {"Id": "2", "MessageBody": "bad"}])
    sqs_server.settle()
    assert seen == [["ok", "bad"]]
    sqs_clock.advance(30)
    sqs_server.settle()
    assert seen == [["ok", "bad"], ["bad"]]
"""


def test_the_sqs_lambda_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = run(pytester, "-q")
    result.assert_outcomes(passed=1)


def test_the_powertools_example_of_the_docs_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    example = next(b for b in blocks if "process_partial_response" in b)
    script = tmp_path / "example.py"
    script.write_text(example)  # it asserts what happened itself
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert printed[0].startswith("taken: ['o1'] answers: [{'batchItemFailures': [{'itemIdentifier': '")
    assert printed[1].endswith("'in_flight', 1)]") and printed[2].endswith("'in_flight', 2)]")
    # the function error of the second invocation, and below it the record's own error Powertools announces
    announced = "All records failed processing. 1 individual errors logged separately below."
    line = "function_error for 1 message(s) of arn:aws:sqs:us-east-1:000000000000:orders"
    assert f"{line} (BatchProcessingError: {announced})" in done.stderr
    assert done.stderr.rstrip().endswith("ValueError: cannot take order o2"), done.stderr
