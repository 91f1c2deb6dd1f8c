"""STS calls are counted in ``sqsemu_requests_total`` and ``sqsemu_request_duration_seconds`` with
``service="sts"``, beside the SQS series (which keep their labels), as SNS calls are with ``service="sns"``
(docs/observability.md)."""

from __future__ import annotations

import urllib.request

import boto3
from botocore.config import Config as BotoConfig

from sqsemu.config import Config
from sqsemu.server import ServerThread


def test_sts_calls_are_counted_with_their_service_label() -> None:
    with ServerThread(Config(host="127.0.0.1")) as srv:
        settings = {
            "endpoint_url": srv.endpoint_url, "region_name": "us-east-1", "aws_access_key_id": "000000000000",
            "aws_secret_access_key": "x", "config": BotoConfig(retries={"total_max_attempts": 1}),
        }  # fmt: skip
        boto3.client("sts", **settings).get_caller_identity()
        boto3.client("sqs", **settings).list_queues()
        with urllib.request.urlopen(f"{srv.endpoint_url}/metrics", timeout=10) as answer:
            text = answer.read().decode()
    assert 'sqsemu_requests_total{action="GetCallerIdentity",outcome="ok",protocol="query",service="sts"} 1.0' in text
    assert (
        'sqsemu_request_duration_seconds_count{action="GetCallerIdentity",protocol="query",service="sts"} 1.0' in text
    )
    assert 'sqsemu_requests_total{action="ListQueues",outcome="ok",protocol="json"} 1.0' in text
