"""SNS's admin routes and metrics over real sockets, on a server with an admin token: what boto3's publishes leave
to read (recorded SMS and email, a topic's peek by its %-encoded ARN, the per-topic metrics), and the signing
certificate fetched at the SigningCertURL a message names, without the token, as a subscriber's validator does."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import boto3
import pytest
from harness import ServerProcess

from tests.unit.sns_helpers import verify_as_subscriber

pytestmark = pytest.mark.integration

TOKEN = "sns-admin-t0ken"


@pytest.fixture(scope="module")
def token_server() -> Iterator[ServerProcess]:
    with ServerProcess(["--admin-token", TOKEN]) as srv:
        yield srv


def get(url: str, token: bool = True) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"X-Sqsemu-Admin-Token": TOKEN} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sns_client(srv: ServerProcess) -> Any:
    return boto3.client(
        "sns", endpoint_url=srv.endpoint_url, region_name="us-east-1", aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
    )  # fmt: skip


def test_recorded_deliveries_topic_peek_metrics_and_the_public_certificate(token_server: ServerProcess) -> None:
    base = token_server.endpoint_url
    sns = sns_client(token_server)
    arn = sns.create_topic(Name="sns-admin-orders")["TopicArn"]
    sns.subscribe(TopicArn=arn, Protocol="sms", Endpoint="+15555550100")
    sns.subscribe(TopicArn=arn, Protocol="email-json", Endpoint="ops@example.com")
    message_id = sns.publish(TopicArn=arn, Message="Your code is 1234")["MessageId"]
    status, _, body = get(f"{base}/_sqsemu/sns/deliveries?protocol=sms&topic_arn={quote(arn)}")
    assert status == 200
    [sms] = json.loads(body)["deliveries"]
    assert (sms["endpoint"], sms["message"], sms["message_id"]) == ("+15555550100", "Your code is 1234", message_id)
    assert get(f"{base}/_sqsemu/sns/deliveries", token=False)[0] == 401

    status, _, body = get(f"{base}/_sqsemu/sns/topics/{quote(arn, safe='')}")  # colons %-encoded
    assert status == 200
    peek = json.loads(body)
    assert peek["arn"] == arn and peek["counts"]["published"] == 1
    assert [s["protocol"] for s in peek["subscriptions"]] == ["sms", "email-json"]

    [confirmation] = json.loads(get(f"{base}/_sqsemu/sns/deliveries?endpoint=ops@example.com")[2])["deliveries"]
    document = json.loads(confirmation["message"])
    status, headers, pem = get(document["SigningCertURL"], token=False)
    assert status == 200 and headers["content-type"] == "application/x-x509-ca-cert"
    verify_as_subscriber(document, pem)

    status, _, metrics = get(f"{base}/metrics")
    labels = 'account="000000000000",region="us-east-1",topic="sns-admin-orders"'
    text = metrics.decode()
    assert f"sqsemu_sns_messages_published_total{{{labels}}} 1.0" in text
    assert f"sqsemu_sns_deliveries_total{{{labels}}} 1.0" in text  # the SMS; the email waits for confirmation
    assert 'sqsemu_requests_total{action="Publish",outcome="ok",protocol="query",service="sns"} 1.0' in text
    assert "sqsemu_sns_delivery_errors_total 0.0" in text  # supervised delivery failures, counted (none here)
