"""Cross-site requests (sqsemu.security.crosssite): the rule on its own, then through the app (no sockets) for the SQS
path in both protocols and for the admin routes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from sqsemu.config import Config
from sqsemu.engine.broker import Namespace
from sqsemu.security.crosssite import CrossSitePolicy
from sqsemu.security.errors import CrossSiteRefused
from tests.unit.app_helpers import call_asgi, json_call, make_app, query_call

EVIL = "https://evil.example"
APP = "http://localhost:3000"
DEFAULT = Namespace("000000000000", "us-east-1")


def decide(config: Config, origin: str | None, site: str | None, host: str | None = "127.0.0.1:9324") -> Any:
    policy = CrossSitePolicy(config)
    return policy.decide(
        origin.encode() if origin is not None else None, site.encode() if site is not None else None, "http", host
    )


# ------------------------------------------------------------------------------------------------ the rule


@pytest.mark.parametrize(
    ("origin", "site"),
    [
        (EVIL, "cross-site"),
        (None, "cross-site"),  # a no-cors GET (image tag): no Origin
        (None, "same-site"),  # another port of localhost
        ("http://localhost:3000", "same-site"),
        (EVIL, None),  # an older browser: Origin only
        ("null", None),  # a sandboxed page
        ("http://127.0.0.1:9325", None),  # another port is another origin
    ],
)
def test_cross_site_and_foreign_origins_are_refused_by_default(origin: str | None, site: str | None) -> None:
    with pytest.raises(CrossSiteRefused) as refused:
        decide(Config(), origin, site)
    assert refused.value.message.startswith("Access to the resource http://127.0.0.1:9324/ is denied.")
    assert "--cors-origins" in refused.value.message


@pytest.mark.parametrize(
    ("origin", "site", "host"),
    [
        (None, None, "127.0.0.1:9324"),  # SDKs, the CLI, curl
        (None, "same-origin", "127.0.0.1:9324"),
        (None, "none", "127.0.0.1:9324"),  # typed into the address bar
        ("http://127.0.0.1:9324", "same-origin", "127.0.0.1:9324"),
        ("http://127.0.0.1:9324", None, "127.0.0.1:9324"),  # own origin, older browser
        ("HTTP://LocalHost:9324", None, "localhost:9324"),  # compared case-insensitively
        ("http://sqs.local", None, "sqs.local:80"),  # default port
    ],
)
def test_same_origin_and_non_browser_requests_pass_without_cors_headers(
    origin: str | None, site: str | None, host: str
) -> None:
    assert decide(Config(), origin, site, host) == []


def test_base_url_is_the_servers_own_origin_too() -> None:
    config = Config(base_url="https://sqs.example.com")
    assert decide(config, "https://sqs.example.com", None, "10.0.0.5:9324") == []
    with pytest.raises(CrossSiteRefused) as refused:
        decide(config, EVIL, None)
    assert "Access to the resource https://sqs.example.com/ is denied." in refused.value.message


def test_an_allowed_origin_gets_cors_headers_even_cross_site() -> None:
    config = Config(cors_origins=f"{APP}, https://app.example.com:443")
    headers = dict(decide(config, APP, "same-site"))
    assert headers[b"access-control-allow-origin"] == APP.encode()
    assert headers[b"vary"] == b"Origin"
    assert b"x-amzn-RequestId" in headers[b"access-control-expose-headers"]
    assert dict(decide(config, "https://app.example.com", "cross-site"))[b"access-control-allow-origin"]
    with pytest.raises(CrossSiteRefused):
        decide(config, EVIL, "cross-site")
    with pytest.raises(CrossSiteRefused):  # without Origin the origin is unknown: only * admits it
        decide(config, None, "cross-site")


def test_star_allows_every_origin() -> None:
    config = Config(cors_origins="*")
    assert dict(decide(config, EVIL, "cross-site"))[b"access-control-allow-origin"] == b"*"
    assert decide(config, None, "cross-site") == []


def test_preflight_answers_the_sdk_headers_only() -> None:
    cors = decide(Config(cors_origins=APP), APP, "cross-site")
    requested = b"Content-Type, X-Amz-Date, X-Amz-Target, Authorization, amz-sdk-invocation-id, x-amzn-trace-id, x-evil"
    answer = CrossSitePolicy.preflight(
        [(b"access-control-request-method", b"POST"), (b"access-control-request-headers", requested)], cors
    )
    assert answer is not None
    headers = dict(answer)
    assert headers[b"access-control-allow-headers"] == (
        b"content-type, x-amz-date, x-amz-target, authorization, amz-sdk-invocation-id, x-amzn-trace-id"
    )
    assert headers[b"access-control-allow-methods"] == b"GET, POST, OPTIONS"
    assert headers[b"access-control-allow-origin"] == APP.encode()
    assert CrossSitePolicy.preflight([(b"origin", APP.encode())], cors) is None  # a plain OPTIONS


def test_cors_origins_are_validated() -> None:
    for bad in ("localhost:3000", "http://app.example.com/path", "ftp//x", "http://a b"):
        with pytest.raises(ValueError, match="cors_origins"):
            Config(cors_origins=bad)
    Config(cors_origins="*, null, http://[::1]:3000, chrome-extension://abcdef")


# ------------------------------------------------------------------------------------------------ through the app


def browser(origin: str | None = EVIL, site: str | None = "cross-site") -> dict[str, str]:
    headers = {}
    if origin is not None:
        headers["Origin"] = origin
    if site is not None:
        headers["Sec-Fetch-Site"] = site
    return headers


def test_a_cross_site_form_post_purge_is_refused_in_query_xml() -> None:
    app, broker = make_app()
    broker.create_queue(DEFAULT, "q", {}, {})
    assert query_call(app, {"Action": "SendMessage", "QueueUrl": "q", "MessageBody": "keep"}).status == 200
    resp = query_call(app, {"Action": "PurgeQueue", "QueueUrl": "q"}, headers=browser())
    assert resp.status == 403
    assert "<Code>AccessDenied</Code>" in resp.text and "is denied." in resp.text
    assert resp.headers["x-amzn-query-error"] == "AccessDenied;Sender"
    assert "access-control-allow-origin" not in resp.headers
    assert broker.get_queue(DEFAULT, "q").message_count() == 1


def test_a_cross_site_get_create_queue_is_refused() -> None:
    app, broker = make_app()
    resp = query_call(app, {"Action": "CreateQueue", "QueueName": "x"}, method="GET", headers=browser(None))
    assert resp.status == 403 and "<Code>AccessDenied</Code>" in resp.text
    assert not broker.all_queues()


def test_a_cross_site_json_request_is_refused_in_json() -> None:
    app, _ = make_app()
    resp = json_call(app, "ListQueues", {}, headers=browser())
    assert resp.status == 403
    assert resp.json()["__type"].endswith("AccessDeniedException")
    assert resp.headers["x-amzn-query-error"] == "AccessDenied;Sender"


def test_an_allowed_origin_is_served_with_cors_headers_and_its_preflight_answered() -> None:
    app, broker = make_app(Config(cors_origins=APP))
    broker.create_queue(DEFAULT, "q", {}, {})
    resp = query_call(app, {"Action": "PurgeQueue", "QueueUrl": "q"}, headers=browser(APP, "same-site"))
    assert resp.status == 200, resp.text
    assert resp.headers["access-control-allow-origin"] == APP
    resp = json_call(app, "GetQueueUrl", {"QueueName": "nope"}, headers=browser(APP, "same-site"))
    assert resp.status == 400 and resp.headers["access-control-allow-origin"] == APP  # errors too
    preflight = asyncio.run(
        call_asgi(
            app,
            "OPTIONS",
            "/",
            {
                "Host": "localhost:9324",
                "Origin": APP,
                "Sec-Fetch-Site": "same-site",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-amz-target,x-amz-date,authorization",
            },
        )
    )
    assert preflight.status == 200 and preflight.body == b""
    assert preflight.headers["access-control-allow-origin"] == APP
    assert preflight.headers["access-control-allow-headers"] == "content-type, x-amz-target, x-amz-date, authorization"
    assert "POST" in preflight.headers["access-control-allow-methods"]


def test_a_preflight_from_another_origin_is_refused() -> None:
    app, _ = make_app(Config(cors_origins=APP))
    resp = asyncio.run(
        call_asgi(
            app,
            "OPTIONS",
            "/",
            {"Host": "localhost:9324", "Origin": EVIL, "Access-Control-Request-Method": "POST"},
        )
    )
    assert resp.status == 403 and "access-control-allow-origin" not in resp.headers


def _admin(app: Any, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> Any:
    return asyncio.run(call_asgi(app, method, path, {"Host": "localhost:9324", **headers}, body))


def test_admin_reset_and_faults_refuse_cross_site_requests_in_json() -> None:
    app, broker = make_app()
    broker.create_queue(DEFAULT, "q", {}, {})
    resp = _admin(app, "POST", "/_sqsemu/reset", {**browser(), "Content-Type": "text/plain"}, b"{}")
    assert resp.status == 403
    assert "is denied" in resp.json()["error"]
    assert broker.all_queues(), "the reset ran"
    resp = _admin(app, "POST", "/_sqsemu/faults", browser(None), json.dumps({"action": "*"}).encode())
    assert resp.status == 403 and "Sec-Fetch-Site: cross-site" in resp.json()["error"]
    assert _admin(app, "GET", "/health", browser()).status == 200  # changes nothing, stays open


def test_admin_routes_serve_an_allowed_origin_with_cors_and_preflight() -> None:
    app, _ = make_app(Config(cors_origins=APP))
    resp = _admin(app, "GET", "/_sqsemu/clock", browser(APP, "same-site"))
    assert resp.status == 200 and resp.headers["access-control-allow-origin"] == APP
    resp = _admin(
        app,
        "OPTIONS",
        "/_sqsemu/reset",
        {
            **browser(APP, "same-site"),
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, x-sqsemu-admin-token",
        },
    )
    assert resp.status == 200
    assert resp.headers["access-control-allow-headers"] == "content-type, x-sqsemu-admin-token"
    assert "DELETE" in resp.headers["access-control-allow-methods"]
