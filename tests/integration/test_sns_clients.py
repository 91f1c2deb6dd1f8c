"""SNS to SQS from real clients over real sockets: the current boto3, boto3 1.28.64 (its own virtual environment),
the AWS CLI and the AWS SDK for JavaScript v3 (``@aws-sdk/client-sns``), each against a server process.

Each client runs the same steps (harness/sns_scenario.py for both boto3s, tests/js/sns_check.mjs for JavaScript, the
``AwsCli`` steps here): create a standard topic and two queues, subscribe both queue ARNs (one with the JSON envelope,
one with ``RawMessageDelivery``), publish with a String, a Number and a Binary message attribute, receive both
deliveries; then a FIFO topic with content-based deduplication to a FIFO queue, three messages of one group and a
duplicate. Every client's summary is checked by :func:`check_summary`: the envelope's keys in AWS's order and values,
its signature verified with the certificate its ``SigningCertURL`` serves (docs/behaviour.md 13.8, 13.15.3), the raw
body and its SQS message attributes (13.9), the FIFO order, group and deduplication ids (13.10). A client that is not
installed (Node.js, the AWS CLI) skips its test, saying which.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from harness.legacy import LEGACY_BOTO3, LEGACY_BOTOCORE, ensure_legacy_venv
from harness.node import run_js_check

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).resolve().parent / "harness" / "sns_scenario.py"
ENVELOPE_KEYS = [
    "Type",
    "MessageId",
    "TopicArn",
    "Subject",
    "Message",
    "Timestamp",
    "SignatureVersion",
    "Signature",
    "SigningCertURL",
    "UnsubscribeURL",
    "MessageAttributes",
]
"""A standard topic's notification with a Subject and message attributes, keys in the order AWS writes them."""
FIFO_BODIES = ["first", "second", "third"]
SIGNED_KEYS = ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type")
"""What a notification's signature covers, in this order, each as ``key\nvalue\n`` (SNS Developer Guide, "Verifying
the signatures of Amazon SNS messages")."""


def verify_signature(envelope: dict[str, Any]) -> None:
    """Verify a notification's signature with the certificate its ``SigningCertURL`` serves (SignatureVersion 1:
    SHA1withRSA, 2: SHA256withRSA), as a subscriber does; raises ``InvalidSignature`` when it does not verify."""
    with urllib.request.urlopen(envelope["SigningCertURL"], timeout=10) as answer:
        certificate = x509.load_pem_x509_certificate(answer.read())
    text = "".join(f"{key}\n{envelope[key]}\n" for key in SIGNED_KEYS if key in envelope)
    digest = hashes.SHA1() if envelope["SignatureVersion"] == "1" else hashes.SHA256()
    key = certificate.public_key()
    assert isinstance(key, rsa.RSAPublicKey)
    key.verify(base64.b64decode(envelope["Signature"]), text.encode(), padding.PKCS1v15(), digest)


def _client_env() -> dict[str, str]:
    """The environment of a client process: no AWS settings of the machine's, dummy credentials, one attempt."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BOTO"))}
    env.update(
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_MAX_ATTEMPTS="1",
    )
    return env


def check_summary(summary: dict[str, Any], endpoint_url: str) -> None:
    """What every client must have seen (see the module's docstring)."""
    assert summary["ok"] is True
    topic_arn = summary["topicArn"]
    assert re.fullmatch(r"arn:aws:sns:us-east-1:000000000000:[\w-]+", topic_arn), topic_arn
    for key in ("envelopeSubscriptionArn", "rawSubscriptionArn"):
        assert re.fullmatch(re.escape(topic_arn) + r":[0-9a-f-]{36}", summary[key]), summary[key]

    envelope = json.loads(summary["envelopeBody"])
    assert list(envelope) == ENVELOPE_KEYS
    assert envelope["Type"] == "Notification"
    assert envelope["MessageId"] == summary["messageId"]
    assert envelope["TopicArn"] == topic_arn
    assert envelope["Subject"] == "greeting"
    assert envelope["Message"] == summary["message"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", envelope["Timestamp"]), envelope["Timestamp"]
    assert envelope["SignatureVersion"] == "1"
    assert re.fullmatch(re.escape(endpoint_url) + r"/_sqsemu/sns/[\w.-]+\.pem", envelope["SigningCertURL"])
    verify_signature(envelope)
    assert envelope["UnsubscribeURL"] == (
        f"{endpoint_url}/?Action=Unsubscribe&SubscriptionArn={summary['envelopeSubscriptionArn']}"
    )
    assert envelope["MessageAttributes"] == {
        "colour": {"Type": "String", "Value": "blue"},
        "size": {"Type": "Number", "Value": "3"},
        "blob": {"Type": "Binary", "Value": summary["blob"]},
    }
    assert summary["envelopeMessageAttributes"] == {}  # the envelope carries them; SQS gets none

    assert summary["raw"] == {
        "Body": summary["message"],
        "MessageAttributes": {
            "colour": {"DataType": "String", "StringValue": "blue"},
            "size": {"DataType": "Number", "StringValue": "3"},
            "blob": {"DataType": "Binary", "BinaryValue": summary["blob"]},
        },
    }

    published = summary["fifoPublished"]
    sequences = [int(p["SequenceNumber"]) for p in published[:3]]
    assert sequences == sorted(sequences) and len(set(sequences)) == 3, published
    received = summary["fifoReceived"]
    assert [m["Body"] for m in received] == FIFO_BODIES  # the duplicate of "first" is not delivered
    for message in received:
        attributes = message["Attributes"]
        assert attributes["MessageGroupId"] == "group-1"
        assert attributes["MessageDeduplicationId"] == hashlib.sha256(message["Body"].encode()).hexdigest()
        assert attributes["SenderId"] == "AIDAIT2UOQQY3AUEKVGXU"


def _run_scenario(python: str, endpoint_url: str) -> dict[str, Any]:
    prefix = f"boto-sns-{uuid.uuid4().hex[:8]}"
    done = subprocess.run(
        [python, "-I", str(SCENARIO), endpoint_url, prefix],
        env=_client_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return summary


def test_current_boto3_publishes_and_receives_through_queues(server: Any) -> None:
    summary = _run_scenario(sys.executable, server.endpoint_url)
    assert summary["protocols"] == {"sns": "query", "sqs": "json"}
    check_summary(summary, server.endpoint_url)


def test_boto3_1_28_64_publishes_and_receives_through_queues(server: Any) -> None:
    summary = _run_scenario(str(ensure_legacy_venv()), server.endpoint_url)
    assert summary["versions"] == {"boto3": LEGACY_BOTO3, "botocore": LEGACY_BOTOCORE}
    assert summary["protocols"] == {"sns": "query", "sqs": "query"}
    check_summary(summary, server.endpoint_url)


def test_javascript_sdk_v3_publishes_and_receives_through_queues(server: Any) -> None:
    summary = run_js_check("sns_check.mjs", server.endpoint_url)
    check_summary(summary, server.endpoint_url)


class AwsCli:
    """``python -m awscli <service> ...`` against one endpoint, JSON output, with a transcript for failures."""

    def __init__(self, endpoint_url: str) -> None:
        self.endpoint_url = endpoint_url
        self.transcript: list[str] = []

    def __call__(self, service: str, *args: str) -> Any:
        argv = ["aws", service, *args, "--endpoint-url", self.endpoint_url, "--output", "json"]
        done = subprocess.run(
            [sys.executable, "-m", "awscli", *argv[1:]], env=_client_env(), capture_output=True, text=True, timeout=120
        )
        self.transcript.append(f"$ {shlex.join(argv)}\n{done.stdout.rstrip()}")
        assert done.returncode == 0, "\n".join(self.transcript) + f"\n[exit {done.returncode}] {done.stderr}"
        return json.loads(done.stdout) if done.stdout.strip() else None

    def queue(self, name: str, *attributes: str) -> tuple[str, str]:
        url = self("sqs", "create-queue", "--queue-name", name, *attributes)["QueueUrl"]
        arn = self("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "QueueArn")
        return url, arn["Attributes"]["QueueArn"]

    def receive(self, url: str, wanted: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for _ in range(5):
            if len(messages) >= wanted:
                break
            answer = self(
                "sqs", "receive-message", "--queue-url", url, "--max-number-of-messages", "10",
                "--wait-time-seconds", "5", "--message-attribute-names", "All", "--attribute-names", "All",
            )  # fmt: skip
            messages.extend((answer or {}).get("Messages", []))
        return messages


def test_aws_cli_publishes_and_receives_through_queues(server: Any) -> None:
    """The AWS CLI (v1, the test extra's; current botocore: SNS over Query, SQS over JSON 1.0). Version 1 sends a
    ``BinaryValue`` given on the command line as the bytes of its text, so the binary attribute is ``bin``."""
    if importlib.util.find_spec("awscli") is None:
        pytest.skip("the AWS CLI (awscli) is not installed in this Python (the test extra installs it)")
    aws = AwsCli(server.endpoint_url)
    prefix = f"cli-sns-{uuid.uuid4().hex[:8]}"
    message = "hello from the AWS CLI"
    topic_arn = aws("sns", "create-topic", "--name", prefix)["TopicArn"]
    envelope_url, envelope_arn = aws.queue(f"{prefix}-envelope")
    raw_url, raw_arn = aws.queue(f"{prefix}-raw")
    envelope_sub = aws(
        "sns", "subscribe", "--topic-arn", topic_arn, "--protocol", "sqs", "--notification-endpoint", envelope_arn,
        "--return-subscription-arn",
    )  # fmt: skip
    raw_sub = aws(
        "sns", "subscribe", "--topic-arn", topic_arn, "--protocol", "sqs", "--notification-endpoint", raw_arn,
        "--attributes", "RawMessageDelivery=true",
    )  # fmt: skip
    attributes = aws("sns", "get-subscription-attributes", "--subscription-arn", raw_sub["SubscriptionArn"])
    assert attributes["Attributes"]["RawMessageDelivery"] == "true"
    assert len(aws("sns", "list-subscriptions-by-topic", "--topic-arn", topic_arn)["Subscriptions"]) == 2
    message_attributes = {
        "colour": {"DataType": "String", "StringValue": "blue"},
        "size": {"DataType": "Number", "StringValue": "3"},
        "blob": {"DataType": "Binary", "BinaryValue": "bin"},
    }
    published = aws(
        "sns", "publish", "--topic-arn", topic_arn, "--message", message, "--subject", "greeting",
        "--message-attributes", json.dumps(message_attributes),
    )  # fmt: skip
    (envelope,) = aws.receive(envelope_url, 1)
    (raw,) = aws.receive(raw_url, 1)

    fifo_topic_arn = aws(
        "sns", "create-topic", "--name", f"{prefix}.fifo", "--attributes",
        "FifoTopic=true,ContentBasedDeduplication=true",
    )["TopicArn"]  # fmt: skip
    fifo_url, fifo_arn = aws.queue(f"{prefix}.fifo", "--attributes", "FifoQueue=true")
    aws(
        "sns", "subscribe", "--topic-arn", fifo_topic_arn, "--protocol", "sqs", "--notification-endpoint", fifo_arn,
        "--attributes", "RawMessageDelivery=true",
    )  # fmt: skip
    fifo_published = [
        aws("sns", "publish", "--topic-arn", fifo_topic_arn, "--message", body, "--message-group-id", "group-1")
        for body in [*FIFO_BODIES, "first"]
    ]
    fifo_received = aws.receive(fifo_url, 3)
    for url in (envelope_url, raw_url, fifo_url):
        aws("sqs", "delete-queue", "--queue-url", url)
    for arn in (topic_arn, fifo_topic_arn):
        aws("sns", "delete-topic", "--topic-arn", arn)

    check_summary(
        {
            "ok": True,
            "message": message,
            "blob": base64.b64encode(b"bin").decode("ascii"),
            "topicArn": topic_arn,
            "envelopeSubscriptionArn": envelope_sub["SubscriptionArn"],
            "rawSubscriptionArn": raw_sub["SubscriptionArn"],
            "messageId": published["MessageId"],
            "envelopeBody": envelope["Body"],
            "envelopeMessageAttributes": envelope.get("MessageAttributes", {}),
            "raw": {"Body": raw["Body"], "MessageAttributes": raw["MessageAttributes"]},
            "fifoPublished": fifo_published,
            "fifoReceived": [{"Body": m["Body"], "Attributes": m["Attributes"]} for m in fifo_received],
        },
        server.endpoint_url,
    )
