"""Fault rules (``/_sqsemu/faults``) apply to SNS actions as they do to SQS's, and an injected error is answered
in SNS's own XML error form (docs/sns.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sqsemu.testing import SQSServer


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer() as srv:
        yield srv


def _sns(server: SQSServer) -> Any:
    return boto3.client(
        "sns", endpoint_url=server.endpoint_url, region_name=server.region, aws_access_key_id=server.account_id,
        aws_secret_access_key="x", config=Config(retries={"total_max_attempts": 1}),
    )  # fmt: skip


def test_an_error_rule_on_publish_answers_the_publish_in_snss_error_form(server: SQSServer) -> None:
    sns = _sns(server)
    topic = sns.create_topic(Name="faulty")["TopicArn"]
    rule = server.inject(action="Publish", error={"code": "Throttled", "status": 429, "message": "slow down"}, count=1)
    try:
        with pytest.raises(ClientError) as caught:
            sns.publish(TopicArn=topic, Message="m")
        error = caught.value.response["Error"]
        assert (error["Code"], error["Message"], error["Type"]) == ("Throttled", "slow down", "Sender")
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
        assert "MessageId" in sns.publish(TopicArn=topic, Message="m")  # the rule fired once (count=1)
        assert sns.get_topic_attributes(TopicArn=topic)["Attributes"]["TopicArn"] == topic  # other actions untouched
    finally:
        server.clear_faults()
    assert rule


def test_a_rule_may_name_an_sns_action_and_an_unknown_action_is_refused(server: SQSServer) -> None:
    from sqsemu.testing.server import AdminAPIError

    with pytest.raises(AdminAPIError):
        server.inject(action="PublishEverything", error="Throttled")
    assert server.inject(action="Subscribe", latency_ms=1)
    server.clear_faults()


def test_a_refused_signature_of_an_sns_call_is_answered_in_snss_error_form() -> None:
    """An SNS call whose signature does not verify (``--auth sigv4``) gets SignatureDoesNotMatch (403) in SNS's
    ``ErrorResponse`` (its namespace), as SNS answers it, not SQS's."""
    import urllib.error
    import urllib.request

    from sqsemu import ServerThread
    from sqsemu.config import Config as ServerConfig
    from sqsemu.config import Credential

    config = ServerConfig(host="127.0.0.1", auth="sigv4", credentials=(Credential("AKIDSNSTEST", "right"),))
    with ServerThread(config) as srv:
        wrong = boto3.client(
            "sns", endpoint_url=srv.endpoint_url, region_name="us-east-1", aws_access_key_id="AKIDSNSTEST",
            aws_secret_access_key="wrong", config=Config(retries={"total_max_attempts": 1}),
        )  # fmt: skip
        with pytest.raises(ClientError) as caught:
            wrong.list_topics()
        assert caught.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        request = urllib.request.Request(
            f"{srv.endpoint_url}/", data=b"Action=ListTopics&Version=2010-03-31", method="POST",
            headers={"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDSNSTEST/20260101/us-east-1/sns/aws4_request, "
                     "SignedHeaders=host, Signature=00", "Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert b'<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">' in refused.value.read()
