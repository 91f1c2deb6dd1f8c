"""The AWS CLI (v1, from PyPI; current botocore, so AWS JSON 1.0) walks one message through its life:
create-queue, send-message, receive-message, change-message-visibility, receive again, delete-message,
get-queue-attributes, delete-queue. The transcript is printed (``pytest -s``) and saved as cli-walk.txt in the
test's tmp dir."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration


class AwsCli:
    """Runs ``python -m awscli sqs ...`` against one endpoint and keeps a transcript."""

    def __init__(self, endpoint_url: str) -> None:
        self.endpoint_url = endpoint_url
        self.transcript: list[str] = []
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.env.update(
            AWS_ACCESS_KEY_ID="test",
            AWS_SECRET_ACCESS_KEY="test",
            AWS_DEFAULT_REGION="us-east-1",
            AWS_CONFIG_FILE=os.devnull,
            AWS_SHARED_CREDENTIALS_FILE=os.devnull,
            AWS_MAX_ATTEMPTS="1",
        )

    def __call__(self, *args: str) -> Any:
        argv = ["aws", "sqs", *args, "--endpoint-url", self.endpoint_url, "--output", "json"]
        result = subprocess.run(
            [sys.executable, "-m", "awscli", *argv[1:]], env=self.env, capture_output=True, text=True, timeout=120
        )
        self.transcript.append(f"$ {shlex.join(argv)}")
        if result.stdout.strip():
            self.transcript.append(result.stdout.rstrip())
        if result.returncode != 0:
            self.transcript.append(f"[exit {result.returncode}] {result.stderr.rstrip()}")
        assert result.returncode == 0, "\n".join(self.transcript)
        return json.loads(result.stdout) if result.stdout.strip() else None


def test_aws_cli_walk(server: Any, tmp_path: Path) -> None:
    aws = AwsCli(server.endpoint_url)
    name = f"cli-walk-{uuid.uuid4().hex[:8]}"
    body = "hello from the AWS CLI"
    try:
        url = aws("create-queue", "--queue-name", name)["QueueUrl"]
        assert url.endswith(f"/000000000000/{name}")

        attributes = json.dumps({"kind": {"DataType": "String", "StringValue": "walk"}})
        sent = aws("send-message", "--queue-url", url, "--message-body", body, "--message-attributes", attributes)
        assert sent["MD5OfMessageBody"] == hashlib.md5(body.encode()).hexdigest()
        assert sent["MessageId"]
        assert len(sent["MD5OfMessageAttributes"]) == 32

        first = aws(
            "receive-message", "--queue-url", url, "--visibility-timeout", "30",
            "--message-attribute-names", "All", "--message-system-attribute-names", "All",
        )["Messages"]  # fmt: skip
        assert len(first) == 1
        assert first[0]["MessageId"] == sent["MessageId"]
        assert first[0]["Body"] == body
        assert first[0]["MD5OfBody"] == sent["MD5OfMessageBody"]
        assert first[0]["MessageAttributes"] == {"kind": {"DataType": "String", "StringValue": "walk"}}
        assert first[0]["Attributes"]["ApproximateReceiveCount"] == "1"

        # In flight: nothing to receive until the visibility timeout is changed to 0.
        in_flight = aws("receive-message", "--queue-url", url)
        assert not (in_flight or {}).get("Messages")
        assert aws(
            "change-message-visibility", "--queue-url", url,
            "--receipt-handle", first[0]["ReceiptHandle"], "--visibility-timeout", "0",
        ) is None  # fmt: skip

        second = aws(
            "receive-message", "--queue-url", url, "--wait-time-seconds", "5",
            "--message-system-attribute-names", "ApproximateReceiveCount",
        )["Messages"]  # fmt: skip
        assert [m["MessageId"] for m in second] == [sent["MessageId"]]
        assert second[0]["Attributes"]["ApproximateReceiveCount"] == "2"
        assert second[0]["ReceiptHandle"] != first[0]["ReceiptHandle"]

        assert aws("delete-message", "--queue-url", url, "--receipt-handle", second[0]["ReceiptHandle"]) is None

        counts = aws("get-queue-attributes", "--queue-url", url, "--attribute-names", "All")["Attributes"]
        assert counts["ApproximateNumberOfMessages"] == "0"
        assert counts["ApproximateNumberOfMessagesNotVisible"] == "0"
        assert counts["QueueArn"] == f"arn:aws:sqs:us-east-1:000000000000:{name}"
    finally:
        text = "\n".join(aws.transcript)
        (tmp_path / "cli-walk.txt").write_text(text + "\n")
        print(f"\n--- AWS CLI walk (saved to {tmp_path / 'cli-walk.txt'}) ---\n{text}")
    aws("delete-queue", "--queue-url", url)
