"""Cross-site browser requests over real HTTP (sqsemu.security.crosssite): the requests any web page can make
without a CORS preflight are refused by default, and served (with CORS headers) for an origin --cors-origins allows.

Each request is sent as a browser sends it: with ``Sec-Fetch-Site`` and, except for a no-cors GET (an image tag),
``Origin``. SDK clients, which send neither, keep working (the rest of the suite).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from harness import ServerProcess, client_for, http_get, raw_request

pytestmark = pytest.mark.integration

EVIL = "https://evil.example"
APP = "http://app.example:3000"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def default_server() -> Iterator[ServerProcess]:
    with ServerProcess() as srv:
        yield srv


@pytest.fixture(scope="module")
def cors_server() -> Iterator[ServerProcess]:
    with ServerProcess(["--cors-origins", f"{APP},https://other.example"]) as srv:
        yield srv


def cross_site(origin: str | None = EVIL) -> dict[str, str]:
    """The headers a browser adds to a request a page of ``origin`` sends here (no Origin: a no-cors GET)."""
    headers = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors" if origin is None else "cors"}
    if origin is not None:
        headers["Origin"] = origin
    return headers


def queue_with_a_message(srv: ServerProcess) -> str:
    sqs = client_for(srv.endpoint_url, "json")
    url = str(sqs.create_queue(QueueName=f"victim-{uuid.uuid4().hex[:8]}")["QueueUrl"])
    sqs.send_message(QueueUrl=url, MessageBody="precious")
    return url


def message_count(srv: ServerProcess, url: str) -> int:
    name = url.rsplit("/", 1)[-1]
    status, _, body = http_get(f"{srv.endpoint_url}/_sqsemu/queues/000000000000/{name}/messages", timeout=10)
    assert status == 200, body
    return len(json.loads(body)["messages"])


def queue_names(srv: ServerProcess) -> set[str]:
    status, _, body = http_get(f"{srv.endpoint_url}/_sqsemu/queues", timeout=10)
    assert status == 200
    return {q["name"] for q in json.loads(body)["queues"]}


def fault_count(srv: ServerProcess) -> int:
    status, _, body = http_get(f"{srv.endpoint_url}/_sqsemu/faults", timeout=10)
    assert status == 200, body
    return len(json.loads(body)["faults"])


def purge(srv: ServerProcess, url: str, protocol: str, headers: dict[str, str]) -> Any:
    if protocol == "query":
        body = urlencode({"Action": "PurgeQueue", "QueueUrl": url}).encode()
        return raw_request(srv.endpoint_url, "POST", "/", body, {"Content-Type": FORM, **headers})
    body = json.dumps({"QueueUrl": url}).encode()
    json_headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.PurgeQueue"}
    return raw_request(srv.endpoint_url, "POST", "/", body, {**json_headers, **headers})


# ------------------------------------------------------------------------------------------------ refused by default


@pytest.mark.parametrize("protocol", ["query", "json"])
def test_a_cross_site_purge_queue_is_refused(default_server: ServerProcess, protocol: str) -> None:
    url = queue_with_a_message(default_server)
    resp = purge(default_server, url, protocol, cross_site())
    assert resp.status == 403, resp.text
    assert resp.headers["x-amzn-query-error"] == "AccessDenied;Sender"
    if protocol == "query":
        assert "<Code>AccessDenied</Code>" in resp.text and "is denied." in resp.text
    else:
        assert resp.json()["__type"].endswith("AccessDeniedException")
    assert "access-control-allow-origin" not in resp.headers
    assert message_count(default_server, url) == 1


def test_a_cross_site_text_plain_reset_is_refused(default_server: ServerProcess) -> None:
    url = queue_with_a_message(default_server)
    resp = raw_request(
        default_server.endpoint_url, "POST", "/_sqsemu/reset", b"{}", {"Content-Type": "text/plain", **cross_site()}
    )
    assert resp.status == 403
    assert "is denied" in resp.json()["error"]
    assert message_count(default_server, url) == 1


def test_a_cross_site_fault_rule_is_refused(default_server: ServerProcess) -> None:
    before = fault_count(default_server)
    rule = json.dumps({"action": "*", "error": "InternalError"}).encode()
    resp = raw_request(
        default_server.endpoint_url, "POST", "/_sqsemu/faults", rule, {"Content-Type": "text/plain", **cross_site()}
    )
    assert resp.status == 403
    assert fault_count(default_server) == before


def test_a_cross_site_get_create_queue_is_refused(default_server: ServerProcess) -> None:
    name = f"planted-{uuid.uuid4().hex[:8]}"
    resp = raw_request(
        default_server.endpoint_url, "GET", f"/?Action=CreateQueue&QueueName={name}", b"", cross_site(None)
    )  # an <img src=...>: no Origin
    assert resp.status == 403 and "<Code>AccessDenied</Code>" in resp.text
    assert name not in queue_names(default_server)


def test_same_origin_and_sdk_requests_pass(default_server: ServerProcess) -> None:
    own = default_server.endpoint_url
    resp = raw_request(own, "GET", "/?Action=ListQueues", b"", {"Origin": own, "Sec-Fetch-Site": "same-origin"})
    assert resp.status == 200
    resp = raw_request(own, "GET", "/?Action=ListQueues", b"", {"Sec-Fetch-Site": "none"})
    assert resp.status == 200
    assert raw_request(own, "GET", "/?Action=ListQueues", b"", {}).status == 200


# ------------------------------------------------------------------------------------------------ allowed origins


@pytest.mark.parametrize("protocol", ["query", "json"])
def test_an_allowed_origin_may_purge_and_reads_the_answer(cors_server: ServerProcess, protocol: str) -> None:
    url = queue_with_a_message(cors_server)
    resp = purge(cors_server, url, protocol, cross_site(APP))
    assert resp.status == 200, resp.text
    assert resp.headers["access-control-allow-origin"] == APP
    assert "x-amzn-RequestId" in resp.headers["access-control-expose-headers"]
    assert message_count(cors_server, url) == 0
    assert purge(cors_server, url, protocol, cross_site(EVIL)).status == 403  # others still refused


def test_an_allowed_origin_may_reset_and_inject_faults(cors_server: ServerProcess) -> None:
    rule = json.dumps({"action": "GetQueueUrl", "queue": "never-*", "error": "InternalError"}).encode()
    resp = raw_request(
        cors_server.endpoint_url, "POST", "/_sqsemu/faults", rule, {"Content-Type": "text/plain", **cross_site(APP)}
    )
    assert resp.status == 201, resp.text
    assert resp.headers["access-control-allow-origin"] == APP
    assert fault_count(cors_server) >= 1
    url = queue_with_a_message(cors_server)
    resp = raw_request(
        cors_server.endpoint_url, "POST", "/_sqsemu/reset", b"{}", {"Content-Type": "text/plain", **cross_site(APP)}
    )
    assert resp.status == 200 and resp.headers["access-control-allow-origin"] == APP
    assert url.rsplit("/", 1)[-1] not in queue_names(cors_server)
    assert fault_count(cors_server) == 0


def test_an_allowed_origin_may_create_a_queue_with_get(cors_server: ServerProcess) -> None:
    name = f"from-app-{uuid.uuid4().hex[:8]}"
    resp = raw_request(
        cors_server.endpoint_url, "GET", f"/?Action=CreateQueue&QueueName={name}", b"", cross_site(APP)
    )  # fetch() from the app: with Origin
    assert resp.status == 200 and resp.headers["access-control-allow-origin"] == APP
    assert name in queue_names(cors_server)
    # An image tag sends no Origin: with a list of origins (not *) its origin is unknown, so it stays refused.
    resp = raw_request(cors_server.endpoint_url, "GET", "/?Action=CreateQueue&QueueName=img", b"", cross_site(None))
    assert resp.status == 403


def test_a_preflight_is_answered_for_an_allowed_origin_only(cors_server: ServerProcess) -> None:
    preflight = {
        "Origin": APP,
        "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "cors",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,x-amz-date,x-amz-target,x-amz-user-agent,"
        "amz-sdk-invocation-id,amz-sdk-request",
    }
    resp = raw_request(cors_server.endpoint_url, "OPTIONS", "/", b"", preflight)
    assert resp.status == 200, resp.text
    assert resp.headers["access-control-allow-origin"] == APP
    assert "POST" in resp.headers["access-control-allow-methods"]
    allowed = {h.strip() for h in resp.headers["access-control-allow-headers"].split(",")}
    assert allowed == {
        "authorization",
        "content-type",
        "x-amz-date",
        "x-amz-target",
        "x-amz-user-agent",
        "amz-sdk-invocation-id",
        "amz-sdk-request",
    }
    assert int(resp.headers["access-control-max-age"]) > 0
    resp = raw_request(cors_server.endpoint_url, "OPTIONS", "/", b"", {**preflight, "Origin": EVIL})
    assert resp.status == 403 and "access-control-allow-origin" not in resp.headers
    resp = raw_request(cors_server.endpoint_url, "OPTIONS", "/_sqsemu/reset", b"", preflight)
    assert resp.status == 200 and resp.headers["access-control-allow-origin"] == APP
