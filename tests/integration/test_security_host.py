"""Host headers and credential-scope regions over real HTTP, both protocols (sqsemu.security.host, .region).

Queue URLs are built from the Host header and ARNs from the scope's region, so a forged ``Host`` is answered 400
(``--base-url`` overrides and ignores it) and a region that is not a region falls back to the server's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from harness import RawResponse, ServerProcess, http_get, raw_request

from sqsemu.testing import new_account

pytestmark = pytest.mark.integration

BAD_HOSTS = ["attacker.example:443/x?", "evil.example/<b>", "a b:9324"]


@pytest.fixture(scope="module")
def base_url_server() -> Iterator[ServerProcess]:
    with ServerProcess(["--base-url", "http://sqs.internal:4566"]) as srv:
        yield srv


def auth(account: str = "000000000000", region: str = "us-east-1") -> str:
    return (
        f"AWS4-HMAC-SHA256 Credential={account}/20240101/{region}/sqs/aws4_request, SignedHeaders=host, "
        "Signature=" + "0" * 64
    )


def call(
    srv: ServerProcess, protocol: str, action: str, params: dict[str, Any], headers: dict[str, str]
) -> RawResponse:
    if protocol == "query":
        body = urlencode({"Action": action, **params}).encode()
        ct = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
        return raw_request(srv.endpoint_url, "POST", "/", body, {**ct, **headers})
    json_headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"AmazonSQS.{action}"}
    return raw_request(srv.endpoint_url, "POST", "/", json.dumps(params).encode(), {**json_headers, **headers})


def queue_url_of(resp: RawResponse, protocol: str) -> str:
    assert resp.status == 200, resp.text
    if protocol == "json":
        return str(resp.json()["QueueUrl"])
    return resp.text.split("<QueueUrl>")[1].split("</QueueUrl>")[0]


def all_queue_names(srv: ServerProcess) -> set[str]:
    status, _, body = http_get(f"{srv.endpoint_url}/_sqsemu/queues", timeout=10)
    assert status == 200
    return {q["name"] for q in json.loads(body)["queues"]}


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_a_forged_host_header_is_a_400_and_builds_no_url(server: ServerProcess, protocol: str, host: str) -> None:
    name = f"host-{uuid.uuid4().hex[:8]}"
    resp = call(server, protocol, "CreateQueue", {"QueueName": name}, {"Host": host})
    assert resp.status == 400, resp.text
    assert resp.headers["x-amzn-query-error"] == "InvalidParameterValue;Sender"
    assert "not a valid host[:port]" in resp.text
    assert f"{host}/" not in resp.text
    assert name not in all_queue_names(server)


@pytest.mark.parametrize("host", ["sqs.local:4566", "[::1]:9324", "sqs_local"])
def test_a_valid_host_header_builds_the_queue_url(server: ServerProcess, protocol: str, host: str) -> None:
    name = f"host-{uuid.uuid4().hex[:8]}"
    resp = call(server, protocol, "CreateQueue", {"QueueName": name}, {"Host": host})
    assert queue_url_of(resp, protocol) == f"http://{host}/000000000000/{name}"


def test_base_url_overrides_a_forged_host(base_url_server: ServerProcess, protocol: str) -> None:
    name = f"host-{uuid.uuid4().hex[:8]}"
    resp = call(base_url_server, protocol, "CreateQueue", {"QueueName": name}, {"Host": BAD_HOSTS[0]})
    assert queue_url_of(resp, protocol) == f"http://sqs.internal:4566/000000000000/{name}"


def test_the_admin_routes_refuse_a_forged_host(server: ServerProcess) -> None:
    resp = raw_request(server.endpoint_url, "GET", "/_sqsemu/queues", b"", {"Host": BAD_HOSTS[0]})
    assert resp.status == 400 and "Host header" in resp.json()["error"]


@pytest.mark.parametrize("region", ["a<b>&c", "us-east-1:999999999999:evil"])
def test_a_scope_region_that_is_not_a_region_uses_the_default_region(
    server: ServerProcess, protocol: str, region: str
) -> None:
    account = new_account()
    name = f"region-{uuid.uuid4().hex[:8]}"
    headers = {"Authorization": auth(account, region)}
    url = queue_url_of(call(server, protocol, "CreateQueue", {"QueueName": name}, headers), protocol)
    params: dict[str, Any] = {"QueueUrl": url}
    if protocol == "json":
        params["AttributeNames"] = ["QueueArn"]
    else:
        params["AttributeName.1"] = "QueueArn"
    resp = call(server, protocol, "GetQueueAttributes", params, headers)
    assert resp.status == 200, resp.text
    assert f"arn:aws:sqs:us-east-1:{account}:{name}" in resp.text
    assert "evil" not in resp.text and "a&lt;b" not in resp.text and "a<b" not in resp.text
    # the same queue, reached from the default region without any region in the scope
    resp = call(server, protocol, "GetQueueUrl", {"QueueName": name}, {"Authorization": auth(account)})
    assert queue_url_of(resp, protocol) == url
