"""Host headers and credential-scope regions (sqsemu.security.host, sqsemu.security.region), on their own and through
the app (no sockets) in both protocols and on the admin routes."""

from __future__ import annotations

import asyncio

import pytest

from sqsemu.config import Config
from sqsemu.engine.broker import Namespace
from sqsemu.protocol.urls import caller_namespace
from sqsemu.security.host import valid_host
from sqsemu.security.region import valid_region
from tests.unit.app_helpers import call_asgi, json_call, make_app, query_call

DEFAULT = Namespace("000000000000", "us-east-1")


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:9324",
        "127.0.0.1:9324",
        "sqs.us-east-1.amazonaws.com",
        "sqs_local:9324",  # a Docker service name
        "example.com.",
        "[::1]",
        "[::1]:9324",
        "[fe80::1%25eth0]:80",
        "a" * 63 + ".example",
        "host:0",
        "host:65535",
    ],
)
def test_valid_hosts(host: str) -> None:
    assert valid_host(host)


@pytest.mark.parametrize(
    "host",
    [
        "",
        "attacker.example:443/x?",
        "attacker.example/path",
        "a b",
        "evil.example#",
        "user@host",
        "host:",
        "host:99999",
        "host:12a",
        "[::1",
        "[nothex]",
        "[1:2:3:4:5:6:7:8:9]",
        "a" * 64 + ".example",
        ".".join(["abcdefgh"] * 30),  # over 253 characters
        "host:80:81",
        "<script>",
        "x\r\ny",
        "..",
    ],
)
def test_invalid_hosts(host: str) -> None:
    assert not valid_host(host)


@pytest.mark.parametrize("region", ["us-east-1", "eu-central-2", "us-gov-west-1", "local", "cn-north-1"])
def test_valid_regions(region: str) -> None:
    assert valid_region(region)


@pytest.mark.parametrize(
    "region", ["a<b>&c", "us-east-1:999999999999:evil", "US-EAST-1", "us_east_1", "us-east-1\n", "-x", "a" * 65, ""]
)
def test_invalid_regions(region: str) -> None:
    assert not valid_region(region)


def test_caller_namespace_ignores_a_scope_region_that_is_not_a_region() -> None:
    config = Config(region="eu-west-1")
    for bad in ("a<b>&c", "us-east-1:999999999999:evil"):
        ns = caller_namespace(f"123456789012/20240101/{bad}/sqs/aws4_request", config)
        assert ns == Namespace("123456789012", "eu-west-1"), bad
    assert caller_namespace("k/20240101/ap-south-1/sqs/aws4_request", config) == Namespace("000000000000", "ap-south-1")


# ------------------------------------------------------------------------------------------------ through the app

BAD_HOST = "attacker.example:443/x?"


def test_an_invalid_host_is_a_400_in_query_xml_and_creates_nothing() -> None:
    app, broker = make_app()
    resp = query_call(app, {"Action": "CreateQueue", "QueueName": "q"}, headers={"Host": BAD_HOST})
    assert resp.status == 400
    assert "<Code>InvalidParameterValue</Code>" in resp.text and "Host header" in resp.text
    assert "attacker.example:443/x?/" not in resp.text
    assert not broker.all_queues()


def test_an_invalid_host_is_a_400_in_json() -> None:
    app, _ = make_app()
    resp = json_call(app, "CreateQueue", {"QueueName": "q"}, headers={"Host": BAD_HOST})
    assert resp.status == 400
    assert resp.json()["__type"].endswith("InvalidParameterValueException")
    assert "not a valid host[:port]" in resp.json()["message"]


def test_a_valid_host_still_builds_the_queue_url() -> None:
    app, _ = make_app()
    resp = json_call(app, "CreateQueue", {"QueueName": "q"}, headers={"Host": "sqs_local:9324"})
    assert resp.json() == {"QueueUrl": "http://sqs_local:9324/000000000000/q"}


def test_base_url_overrides_and_the_host_header_is_not_checked() -> None:
    app, _ = make_app(Config(base_url="http://sqs.internal:9324"))
    resp = json_call(app, "CreateQueue", {"QueueName": "q"}, headers={"Host": BAD_HOST})
    assert resp.status == 200
    assert resp.json() == {"QueueUrl": "http://sqs.internal:9324/000000000000/q"}


def test_admin_routes_refuse_an_invalid_host_with_json_400() -> None:
    app, _ = make_app()
    resp = asyncio.run(call_asgi(app, "GET", "/_sqsemu/queues", {"Host": BAD_HOST}))
    assert resp.status == 400 and "Host header" in resp.json()["error"]


@pytest.mark.parametrize("bad", ["a<b>&c", "us-east-1:999999999999:evil"])
def test_a_bad_scope_region_lands_in_the_default_region(bad: str) -> None:
    app, broker = make_app()
    auth = f"AWS4-HMAC-SHA256 Credential=123456789012/20240101/{bad}/sqs/aws4_request, SignedHeaders=host, Signature=x"
    resp = json_call(app, "CreateQueue", {"QueueName": "q"}, headers={"Authorization": auth})
    assert resp.status == 200
    assert [(q.namespace, q.name) for q in broker.all_queues()] == [(Namespace("123456789012", "us-east-1"), "q")]
    resp = query_call(app, {"Action": "CreateQueue", "QueueName": "r"}, headers={"Authorization": auth})
    assert resp.status == 200
    assert (Namespace("123456789012", "us-east-1"), "r") in [(q.namespace, q.name) for q in broker.all_queues()]
