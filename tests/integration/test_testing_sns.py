"""SNS in the testing aids (sqsemu.testing.SQSServer): an SNS client per account, waiting for deliveries, and the
reset deleting topics too. A real server in a thread, real boto3 clients over real sockets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsemu.config import Credential
from sqsemu.testing import AdminAPIError, SQSServer, new_account

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer() as srv:
        yield srv


def queue_arn(sqs: Any, url: str) -> str:
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def test_an_sns_client_per_account_fans_out_to_that_accounts_queues(server: SQSServer) -> None:
    account = new_account()
    sqs, sns = server.client(account), server.sns_client(account)
    assert sns.meta.region_name == server.region
    url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    topic = sns.create_topic(Name="events")["TopicArn"]
    assert topic == f"arn:aws:sns:us-east-1:{account}:events"
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn(sqs, url))
    sns.publish(TopicArn=topic, Message="hello")
    server.sns_settle()
    [peeked] = server.peek(url)
    assert json.loads(peeked["body"])["Message"] == "hello"
    assert server.sns_client(new_account()).list_topics()["Topics"] == []  # another account sees none
    with pytest.raises(ValueError, match="12-digit"):
        server.sns_client("nope")
    server.reset(account)


def test_sns_settle_takes_a_timeout_and_refuses_a_bad_one(server: SQSServer) -> None:
    server.sns_settle(timeout=0)  # nothing published: settled at once
    with pytest.raises(AdminAPIError) as caught:
        server.sns_settle(timeout=301)
    assert caught.value.status == 400 and '"timeout" must be a number of seconds from 0 to 300' in caught.value.message


def test_reset_deletes_topics_too(server: SQSServer) -> None:
    mine, theirs = new_account(), new_account()
    for account in (mine, theirs):
        server.sns_client(account).create_topic(Name="t")
    assert server.reset(theirs) == 0  # queues deleted: none; its topic went too
    assert server.sns_client(theirs).list_topics()["Topics"] == []
    [topic] = server.sns_client(mine).list_topics()["Topics"]
    server.reset(mine)
    with pytest.raises(ClientError) as caught:
        server.sns_client(mine).get_topic_attributes(TopicArn=topic["TopicArn"])
    assert caught.value.response["Error"]["Code"] == "NotFound"


def test_the_sns_client_signs_with_the_accounts_credential() -> None:
    credential = Credential("AKIDSNSTEST", "secret-sns", "123456789012")
    with SQSServer(auth="sigv4", credentials=(credential,)) as srv:
        sns = srv.sns_client("123456789012")
        assert sns.create_topic(Name="signed")["TopicArn"] == "arn:aws:sns:us-east-1:123456789012:signed"
        forged = srv.sns_client("123456789012", aws_access_key_id="AKIDSNSTEST", aws_secret_access_key="wrong")
        with pytest.raises(ClientError) as caught:
            forged.list_topics()
        assert caught.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
