"""Queue URLs and namespaces (docs/behaviour.md 7.1, 1.1)."""

from __future__ import annotations

import pytest

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.protocol.urls import (
    caller_namespace,
    credential_from_authorization,
    parse_queue_url,
    path_queue,
    queue_url,
    url_base,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://sqs.us-east-1.amazonaws.com/123456789012/my-queue", ("123456789012", "my-queue")),
        ("http://localhost:9324/000000000000/q.fifo/", ("000000000000", "q.fifo")),
        ("http://other-host/queue/us-east-1/111111111111/q", ("111111111111", "q")),
        ("my-queue", (None, "my-queue")),
        ("http://localhost:9324/q", (None, "q")),
        ("000000000000/q", ("000000000000", "q")),
        ("http://localhost:9324/", (None, "")),
    ],
)
def test_parse_queue_url(url: str, expected: tuple[str | None, str]) -> None:
    assert parse_queue_url(url) == expected
    assert parse_queue_url(url) == expected  # cached path


def test_path_queue() -> None:
    assert path_queue("/") is None
    assert path_queue("/q") is None
    assert path_queue("/123456789012/q") == ("123456789012", "q")
    assert path_queue("/123456789012/q/") == ("123456789012", "q")


def test_queue_url_and_base() -> None:
    queue = Broker(ManualClock(0)).create_queue(Namespace("123456789012", "us-east-1"), "q", {}, {})
    assert queue_url("http://h:1", queue) == "http://h:1/123456789012/q"
    assert url_base(Config(), "http", "localhost:4000") == "http://localhost:4000"
    assert url_base(Config(base_url="https://sqs.example"), "http", "localhost:4000") == "https://sqs.example"
    assert url_base(Config(port=9999), "http", None) == "http://127.0.0.1:9999"


def test_credential_parsing() -> None:
    auth = "AWS4-HMAC-SHA256 Credential=AKID/20240101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=x"
    assert credential_from_authorization(auth) == "AKID/20240101/eu-west-1/sqs/aws4_request"
    assert credential_from_authorization("Bearer x") is None


def test_caller_namespace() -> None:
    config = Config(account_id="000000000000", region="us-east-1")
    assert caller_namespace(None, config) == Namespace("000000000000", "us-east-1")
    assert caller_namespace("AKIDEXAMPLE/20240101/eu-west-1/sqs/aws4_request", config) == Namespace(
        "000000000000", "eu-west-1"
    )
    assert caller_namespace("123456789012/20240101/us-west-2/sqs/aws4_request", config) == Namespace(
        "123456789012", "us-west-2"
    )
    assert caller_namespace("123456789012", config) == Namespace("123456789012", "us-east-1")
