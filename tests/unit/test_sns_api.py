"""The SNS API (2010-03-31, Query protocol) as a boto3 client sees it, in-process: each signed request is handed to
the ASGI app (``tests.unit.app_helpers``) over the real engine on a manual clock.

Expected answers are AWS's recorded ones (docs/behaviour.md, "SNS": error codes, HTTP statuses, ``Type`` and exact
messages; attribute keys present and absent); where AWS records nothing, sqsemu's documented decision. botocore
parses every answer, so element names and nesting are checked by the SDK's own parser.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode, urlsplit

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError

from sqsemu.clock import ManualClock
from tests.unit.app_helpers import Response, call_asgi, make_app

ACCOUNT = "000000000000"
OTHER = "111111111111"
REGION = "us-east-1"
DEFAULT_EFFECTIVE = {
    "http": {
        "defaultHealthyRetryPolicy": {
            "minDelayTarget": 20, "maxDelayTarget": 20, "numRetries": 3, "numMaxDelayRetries": 0,
            "numNoDelayRetries": 0, "numMinDelayRetries": 0, "backoffFunction": "linear",
        },
        "disableSubscriptionOverrides": False,
        "defaultRequestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
    }
}  # fmt: skip
TOPIC_ACTIONS = [
    "SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission", "SNS:RemovePermission",
    "SNS:DeleteTopic", "SNS:Subscribe", "SNS:ListSubscriptionsByTopic", "SNS:Publish",
]  # fmt: skip
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


class Env:
    """The app and its engine; ``client(...)`` makes boto3 clients whose requests the app answers in-process."""

    def __init__(self) -> None:
        self.app, self.broker = make_app()
        self.raw: list[Response] = []

    def client(self, service: str = "sns", key: str = ACCOUNT, region: str = REGION, validate: bool = True) -> Any:
        config = BotoConfig(parameter_validation=validate, retries={"max_attempts": 0})
        client = boto3.client(
            service, region_name=region, endpoint_url="http://localhost:9324", aws_access_key_id=key,
            aws_secret_access_key="secret", config=config,
        )  # fmt: skip

        def send(request: Any, **_: Any) -> AWSResponse:
            url = urlsplit(request.url)
            headers = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()}
            headers.setdefault("Host", url.netloc)
            body = request.body or b""
            if isinstance(body, str):
                body = body.encode()
            resp = asyncio.run(call_asgi(self.app, request.method, url.path or "/", headers, body, url.query.encode()))
            self.raw.append(resp)
            return AWSResponse(request.url, resp.status, resp.headers, _Raw(resp.body))

        client.meta.events.register(f"before-send.{service}", send)
        return client

    def queue_arn(self, name: str, attributes: dict[str, str] | None = None, key: str = ACCOUNT) -> str:
        sqs = self.client("sqs", key=key)
        url = sqs.create_queue(QueueName=name, Attributes=attributes or {})["QueueUrl"]
        return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])

    def query(self, params: dict[str, str], service: str | None = "sns") -> Response:
        """A raw Query request (signed for ``service``, or unsigned when None)."""
        headers = {"Host": "localhost:9324", "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
        if service is not None:
            headers["Authorization"] = (
                f"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/{REGION}/{service}/aws4_request, "
                "SignedHeaders=host;x-amz-date, Signature=abc"
            )
        return asyncio.run(call_asgi(self.app, "POST", "/", headers, urlencode(params).encode()))


@pytest.fixture
def env() -> Env:
    return Env()


@pytest.fixture
def sns(env: Env) -> Any:
    return env.client()


def error(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str, str, str]:
    """``(HTTP status, Type, Code, Message)`` of the error a call is answered."""
    with pytest.raises(ClientError) as exc:
        call(**kwargs)
    response = exc.value.response
    err = response["Error"]
    return response["ResponseMetadata"]["HTTPStatusCode"], err["Type"], err["Code"], err["Message"]


def invalid(message: str) -> tuple[int, str, str, str]:
    return 400, "Sender", "InvalidParameter", message


def attributes(sns: Any, arn: str) -> dict[str, str]:
    return dict(sns.get_topic_attributes(TopicArn=arn)["Attributes"])


def sub_attributes(sns: Any, arn: str) -> dict[str, str]:
    return dict(sns.get_subscription_attributes(SubscriptionArn=arn)["Attributes"])


# ---------------------------------------------------------------------------------------------------- the wire


def test_answers_are_laid_out_as_aws_writes_them(env: Env, sns: Any) -> None:
    # Recorded: CreateTopic's body is 326 bytes and Subscribe's 369 for a 54-character topic ARN and its
    # subscription: AWS's answers are indented by two spaces per level and end with a newline.
    arn = sns.create_topic(Name="test-topic-aa665f6a")["TopicArn"]
    created = env.raw[-1]
    assert created.status == 200 and created.headers["content-type"] == "text/xml"
    request_id = created.headers["x-amzn-requestid"]
    assert created.text == (
        '<CreateTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">\n'
        "  <CreateTopicResult>\n"
        f"    <TopicArn>{arn}</TopicArn>\n"
        "  </CreateTopicResult>\n"
        "  <ResponseMetadata>\n"
        f"    <RequestId>{request_id}</RequestId>\n"
        "  </ResponseMetadata>\n"
        "</CreateTopicResponse>\n"
    )
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q"))["SubscriptionArn"]
    assert len(created.body) == 326 and len(env.raw[-1].body) == 369  # account ids have 12 digits on both
    assert f"    <SubscriptionArn>{sub}</SubscriptionArn>\n" in env.raw[-1].text
    sns.delete_topic(TopicArn=arn)
    request_id = env.raw[-1].headers["x-amzn-requestid"]
    assert env.raw[-1].text == (
        '<DeleteTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">\n'
        "  <ResponseMetadata>\n"
        f"    <RequestId>{request_id}</RequestId>\n"
        "  </ResponseMetadata>\n"
        "</DeleteTopicResponse>\n"
    )
    error(sns.get_topic_attributes, TopicArn=arn)
    request_id = env.raw[-1].headers["x-amzn-requestid"]
    assert env.raw[-1].text == (
        '<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">\n'
        "  <Error>\n"
        "    <Type>Sender</Type>\n"
        "    <Code>NotFound</Code>\n"
        "    <Message>Topic does not exist</Message>\n"
        "  </Error>\n"
        f"  <RequestId>{request_id}</RequestId>\n"
        "</ErrorResponse>\n"
    )


def test_characters_xml_cannot_carry_are_replaced_in_answers(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="hostile")["TopicArn"]
    answer = env.query({"Action": "Subscribe", "TopicArn": arn, "Protocol": "sms", "Endpoint": "bad\x0b\x00<&>"})
    assert answer.status == 400
    assert "<Message>Invalid SMS endpoint: bad\ufffd\ufffd&lt;&amp;&gt;</Message>" in answer.text


def test_an_empty_list_is_an_empty_element(env: Env, sns: Any) -> None:
    assert sns.list_topics()["Topics"] == []
    assert "    <Topics/>\n" in env.raw[-1].text


# ---------------------------------------------------------------------------------------------------- topics


def test_create_topic_arn_and_idempotency_with_tags(sns: Any) -> None:
    tags = [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    arn = sns.create_topic(Name="orders", Tags=tags)["TopicArn"]
    assert arn == f"arn:aws:sns:{REGION}:{ACCOUNT}:orders"
    for again in (tags, [tags[0]], []):  # recorded: the same, a subset of, or no tags: the same topic
        assert sns.create_topic(Name="orders", Tags=again)["TopicArn"] == arn
    assert sns.create_topic(Name="orders")["TopicArn"] == arn
    assert error(sns.create_topic, Name="orders", Tags=[{"Key": "a", "Value": "2"}]) == invalid(
        "Invalid parameter: Tags Reason: Topic already exists with different tags"
    )
    plain = sns.create_topic(Name="plain")["TopicArn"]
    assert error(sns.create_topic, Name="plain", Tags=[{"Key": "key1", "Value": "value1"}]) == invalid(
        "Invalid parameter: Tags Reason: Topic already exists with different tags"
    )
    sns.delete_topic(TopicArn=plain)  # recorded: after DeleteTopic the name takes new tags, same ARN
    assert sns.create_topic(Name="plain", Tags=[{"Key": "Name", "Value": "abc"}])["TopicArn"] == plain
    assert sns.list_tags_for_resource(ResourceArn=plain)["Tags"] == [{"Key": "Name", "Value": "abc"}]


def test_create_topic_again_keeps_attributes_set_since(sns: Any) -> None:
    arn = sns.create_topic(Name="idem")["TopicArn"]
    sns.set_topic_attributes(TopicArn=arn, AttributeName="DisplayName", AttributeValue="AlreadySet")
    assert sns.create_topic(Name="idem")["TopicArn"] == arn
    assert attributes(sns, arn)["DisplayName"] == "AlreadySet"
    assert sns.create_topic(Name="idem", Attributes={"DisplayName": "AlreadySet"})["TopicArn"] == arn
    # sqsemu's decision (AWS records no such call): other attribute values are refused as other tags are
    assert error(sns.create_topic, Name="idem", Attributes={"DisplayName": "Other"}) == invalid(
        "Invalid parameter: Attributes Reason: Topic already exists with different attributes"
    )


def test_topic_name_constraints(sns: Any) -> None:
    assert sns.create_topic(Name="a" * 256)["TopicArn"].endswith(":" + "a" * 256)
    for name in ("", "a" * 257, *(f"bad{c}name" for c in ":;!@|^% ")):
        assert error(sns.create_topic, Name=name) == invalid("Invalid parameter: Topic Name")
    fifo = sns.create_topic(Name="f" * 251 + ".fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    assert fifo.endswith(".fifo")
    fifo_rule = (
        "Invalid parameter: Fifo Topic names must end with .fifo and must be made up of only uppercase and "
        "lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long."
    )
    assert error(sns.create_topic, Name="f" * 252 + ".fifo", Attributes={"FifoTopic": "true"}) == invalid(fifo_rule)
    assert error(sns.create_topic, Name="nofifo", Attributes={"FifoTopic": "true"}) == invalid(fifo_rule)
    assert error(sns.create_topic, Name="named.fifo") == invalid("Invalid parameter: Topic Name")


def test_standard_topic_attributes_are_aws_defaults(sns: Any) -> None:
    arn = sns.create_topic(Name="std", Attributes={"FifoTopic": "false"})["TopicArn"]
    got = attributes(sns, arn)
    assert sorted(got) == [
        "DisplayName", "EffectiveDeliveryPolicy", "Owner", "Policy", "SubscriptionsConfirmed", "SubscriptionsDeleted",
        "SubscriptionsPending", "TopicArn",
    ]  # fmt: skip
    assert got["DisplayName"] == "" and got["Owner"] == ACCOUNT and got["TopicArn"] == arn
    assert got["SubscriptionsConfirmed"] == got["SubscriptionsDeleted"] == got["SubscriptionsPending"] == "0"
    assert got["EffectiveDeliveryPolicy"] == json.dumps(DEFAULT_EFFECTIVE, separators=(",", ":"))
    assert got["Policy"] == json.dumps(
        {
            "Version": "2008-10-17",
            "Id": "__default_policy_ID",
            "Statement": [
                {
                    "Sid": "__default_statement_ID", "Effect": "Allow", "Principal": {"AWS": "*"},
                    "Action": TOPIC_ACTIONS, "Resource": arn,
                    "Condition": {"StringEquals": {"AWS:SourceOwner": ACCOUNT}},
                }
            ],
        },
        separators=(",", ":"),
    )  # fmt: skip
    assert error(sns.set_topic_attributes, TopicArn=arn, AttributeName="FifoTopic", AttributeValue="false") == invalid(
        "Invalid parameter: AttributeName"
    )
    assert error(sns.set_topic_attributes, TopicArn=arn, AttributeName="Unknown", AttributeValue="x") == invalid(
        "Invalid parameter: AttributeName"
    )


def test_fifo_topic_attributes(sns: Any) -> None:
    arn = sns.create_topic(
        Name="topictest.fifo", Attributes={"DisplayName": "TestTopic", "SignatureVersion": "2", "FifoTopic": "true"}
    )["TopicArn"]
    got = attributes(sns, arn)
    assert sorted(got) == [
        "ContentBasedDeduplication", "DisplayName", "EffectiveDeliveryPolicy", "FifoTopic", "Owner", "Policy",
        "SignatureVersion", "SubscriptionsConfirmed", "SubscriptionsDeleted", "SubscriptionsPending", "TopicArn",
    ]  # fmt: skip
    assert (got["ContentBasedDeduplication"], got["FifoTopic"], got["SignatureVersion"]) == ("false", "true", "2")
    plain = sns.create_topic(Name="plain.fifo", Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"})
    got = attributes(sns, plain["TopicArn"])
    assert "SignatureVersion" not in got and got["ContentBasedDeduplication"] == "true"


def test_topic_delivery_policy_is_normalised_as_recorded(sns: Any) -> None:
    arn = sns.create_topic(
        Name="topictest.fifo",
        Attributes={
            "FifoTopic": "true",
            "DeliveryPolicy": json.dumps({"http": {"defaultRequestPolicy": {"headerContentType": "application/json"}}}),
        },
    )["TopicArn"]
    got = attributes(sns, arn)
    assert json.loads(got["DeliveryPolicy"]) == {
        "http": {
            "disableSubscriptionOverrides": False,
            "defaultRequestPolicy": {"headerContentType": "application/json"},
        }
    }
    assert list(json.loads(got["DeliveryPolicy"])["http"]) == ["disableSubscriptionOverrides", "defaultRequestPolicy"]
    effective = json.loads(got["EffectiveDeliveryPolicy"])
    assert effective == {
        "http": {**DEFAULT_EFFECTIVE["http"], "defaultRequestPolicy": {"headerContentType": "application/json"}}
    }
    retry = {"minDelayTarget": 5, "maxDelayTarget": 6, "numRetries": 1}
    sns.set_topic_attributes(
        TopicArn=arn,
        AttributeName="DeliveryPolicy",
        AttributeValue=json.dumps({"http": {"defaultHealthyRetryPolicy": retry}}),
    )  # replaces the whole policy (recorded)
    got = attributes(sns, arn)
    assert got["DeliveryPolicy"] == json.dumps(
        {"http": {"defaultHealthyRetryPolicy": retry, "disableSubscriptionOverrides": False}}, separators=(",", ":")
    )
    assert got["EffectiveDeliveryPolicy"] == json.dumps(
        {
            "http": {
                "defaultHealthyRetryPolicy": {
                    **retry, "numMaxDelayRetries": 0, "numNoDelayRetries": 0, "numMinDelayRetries": 0,
                    "backoffFunction": "linear",
                },
                "disableSubscriptionOverrides": False,
                "defaultRequestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
            }
        },
        separators=(",", ":"),
    )  # fmt: skip
    sns.set_topic_attributes(
        TopicArn=arn,
        AttributeName="DeliveryPolicy",
        AttributeValue=json.dumps({"http": {"defaultHealthyRetryPolicy": None}}),
    )
    got = attributes(sns, arn)
    assert got["DeliveryPolicy"] == '{"http":{"disableSubscriptionOverrides":false}}'
    assert json.loads(got["EffectiveDeliveryPolicy"]) == DEFAULT_EFFECTIVE
    sns.set_topic_attributes(TopicArn=arn, AttributeName="DeliveryPolicy", AttributeValue="")
    got = attributes(sns, arn)
    assert "DeliveryPolicy" not in got and json.loads(got["EffectiveDeliveryPolicy"]) == DEFAULT_EFFECTIVE


def test_feedback_attributes_are_stored_and_returned(sns: Any) -> None:
    arn = sns.create_topic(Name="fb")["TopicArn"]
    role = f"arn:aws:iam::{ACCOUNT}:role/feedback"
    sns.set_topic_attributes(TopicArn=arn, AttributeName="LambdaSuccessFeedbackRoleArn", AttributeValue=role)
    sns.set_topic_attributes(TopicArn=arn, AttributeName="LambdaSuccessFeedbackSampleRate", AttributeValue="100")
    got = attributes(sns, arn)
    assert got["LambdaSuccessFeedbackRoleArn"] == role and got["LambdaSuccessFeedbackSampleRate"] == "100"
    assert "LambdaFailureFeedbackRoleArn" not in got


def test_maximum_message_size(env: Env, sns: Any) -> None:
    # API Reference, "SetTopicAttributes": 1024 to 1048576 bytes, default 262144, returned only once set; above
    # 256 KiB only SQS, Lambda and Firehose subscriptions (at most 100).
    arn = sns.create_topic(Name="sized")["TopicArn"]
    assert "MaximumMessageSize" not in attributes(sns, arn)
    for bad in ("1023", "1048577", "big", ""):
        assert error(
            sns.set_topic_attributes, TopicArn=arn, AttributeName="MaximumMessageSize", AttributeValue=bad
        ) == (
            invalid(
                "Invalid parameter: MaximumMessageSize: Invalid value [" + bad + "]. Must be between 1024 and 1048576."
            )
        )
    sns.set_topic_attributes(TopicArn=arn, AttributeName="MaximumMessageSize", AttributeValue="1024")
    assert attributes(sns, arn)["MaximumMessageSize"] == "1024"
    sns.publish(TopicArn=arn, Message="x" * 1024)
    assert error(sns.publish, TopicArn=arn, Message="x" * 1025) == invalid("Invalid parameter: Message too long")
    sns.set_topic_attributes(TopicArn=arn, AttributeName="MaximumMessageSize", AttributeValue="1048576")
    sns.publish(TopicArn=arn, Message="x" * 1_048_576)
    assert error(sns.publish, TopicArn=arn, Message="x" * 1_048_577) == invalid("Invalid parameter: Message too long")
    large_needs = invalid(
        "Invalid parameter: MaximumMessageSize: A topic with a MaximumMessageSize above 262144 bytes can only have "
        "Amazon SQS, AWS Lambda and Amazon Data Firehose subscriptions, at most 100."
    )
    assert error(sns.subscribe, TopicArn=arn, Protocol="email", Endpoint="a@example.com") == large_needs
    sns.set_topic_attributes(TopicArn=arn, AttributeName="MaximumMessageSize", AttributeValue="262144")
    sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="a@example.com")
    assert (
        error(sns.set_topic_attributes, TopicArn=arn, AttributeName="MaximumMessageSize", AttributeValue="262145")
        == large_needs
    )
    created = sns.create_topic(Name="big", Attributes={"MaximumMessageSize": "524288"})["TopicArn"]
    assert attributes(sns, created)["MaximumMessageSize"] == "524288"


def test_subscription_counts(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="counted")["TopicArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q1"))["SubscriptionArn"]
    sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="a@example.com")
    got = attributes(sns, arn)
    assert (got["SubscriptionsConfirmed"], got["SubscriptionsPending"], got["SubscriptionsDeleted"]) == ("1", "1", "0")
    sns.unsubscribe(SubscriptionArn=sub)
    got = attributes(sns, arn)
    assert (got["SubscriptionsConfirmed"], got["SubscriptionsPending"], got["SubscriptionsDeleted"]) == ("0", "1", "1")


def test_topic_arn_errors(sns: Any) -> None:
    arn = sns.create_topic(Name="errs")["TopicArn"]
    for call in (sns.get_topic_attributes, sns.list_subscriptions_by_topic):
        assert error(call, TopicArn=arn[:-1] + "x") == (404, "Sender", "NotFound", "Topic does not exist")
        assert error(call, TopicArn="test-topic") == invalid(
            "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
        )
        assert error(call, TopicArn="randomstring:1") == invalid(
            "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 2"
        )
        assert error(call, TopicArn="arn:aws:sns:us-east-1:random") == invalid(
            "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 5"
        )


def test_delete_topic(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="gone")["TopicArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q"))["SubscriptionArn"]
    assert sns.delete_topic(TopicArn=arn)["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert error(sns.get_topic_attributes, TopicArn=arn) == (404, "Sender", "NotFound", "Topic does not exist")
    sns.delete_topic(TopicArn=arn)  # twice: 200 (recorded)
    sns.delete_topic(TopicArn=f"arn:aws:sns:{REGION}:{ACCOUNT}:never-was")  # recorded: 200
    # its subscriptions went with it (sqsemu: NotFound for the well-formed ARN)
    assert error(sns.get_subscription_attributes, SubscriptionArn=sub) == (
        404, "Sender", "NotFound", "Subscription does not exist"
    )  # fmt: skip
    assert sns.list_subscriptions()["Subscriptions"] == []
    assert error(sns.delete_topic, TopicArn="randomstring") == invalid(
        "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
    )


def test_list_topics_pages_and_regions(env: Env, sns: Any) -> None:
    made = {sns.create_topic(Name=f"paging-{i}")["TopicArn"] for i in range(120)}
    first = sns.list_topics()
    assert len(first["Topics"]) == 100 and set(first["Topics"][0]) == {"TopicArn"}
    token = first["NextToken"]
    assert base64.b64decode(token, validate=True)
    second = sns.list_topics(NextToken=token)
    assert len(second["Topics"]) == 20 and "NextToken" not in second
    assert {t["TopicArn"] for t in first["Topics"] + second["Topics"]} == made
    assert error(sns.list_topics, NextToken="garbage") == invalid("Invalid parameter: NextToken")
    west = env.client(region="us-west-1")
    west_arn = west.create_topic(Name="paging-0")["TopicArn"]
    assert west_arn == f"arn:aws:sns:us-west-1:{ACCOUNT}:paging-0"
    assert west.list_topics()["Topics"] == [{"TopicArn": west_arn}]
    assert json.loads(attributes(west, west_arn)["Policy"])["Statement"][0]["Resource"] == west_arn
    other = env.client(key=OTHER)
    assert other.list_topics()["Topics"] == []
    assert other.create_topic(Name="paging-0")["TopicArn"] == f"arn:aws:sns:{REGION}:{OTHER}:paging-0"


def test_another_regions_topic_is_refused(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="east")["TopicArn"]
    west = env.client(region="us-west-1")
    wrong_region = invalid("Invalid parameter: TopicArn")
    assert error(west.get_topic_attributes, TopicArn=arn) == wrong_region
    assert (
        error(west.set_topic_attributes, TopicArn=arn, AttributeName="DisplayName", AttributeValue="x") == wrong_region
    )
    assert error(west.publish, TopicArn=arn, Message="m") == wrong_region
    assert error(west.publish_batch, TopicArn=arn, PublishBatchRequestEntries=[{"Id": "1", "Message": "m"}]) == (
        wrong_region
    )
    assert error(west.subscribe, TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q")) == wrong_region
    assert error(west.list_subscriptions_by_topic, TopicArn=arn) == wrong_region
    assert error(west.delete_topic, TopicArn=arn) == wrong_region
    assert attributes(sns, arn)["TopicArn"] == arn


# ---------------------------------------------------------------------------------------------------- subscriptions


def test_sqs_subscription_and_its_attributes(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="subs")["TopicArn"]
    queue = env.queue_arn("q")
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue)["SubscriptionArn"]
    assert sub.startswith(arn + ":") and UUID.fullmatch(sub[len(arn) + 1 :])
    assert sub_attributes(sns, sub) == {
        "ConfirmationWasAuthenticated": "true", "Endpoint": queue, "Owner": ACCOUNT, "PendingConfirmation": "false",
        "Protocol": "sqs", "RawMessageDelivery": "false", "SubscriptionArn": sub,
        "SubscriptionPrincipal": f"arn:aws:iam::{ACCOUNT}:root", "TopicArn": arn,
    }  # fmt: skip
    dlq = env.queue_arn("dlq")
    sns.set_subscription_attributes(
        SubscriptionArn=sub, AttributeName="RedrivePolicy", AttributeValue=json.dumps({"deadLetterTargetArn": dlq})
    )
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true")
    got = sub_attributes(sns, sub)
    assert got["RedrivePolicy"] == json.dumps({"deadLetterTargetArn": dlq}, separators=(",", ":"))
    assert got["RawMessageDelivery"] == "true"
    assert "DeliveryPolicy" not in got and "EffectiveDeliveryPolicy" not in got


def test_subscribe_idempotency(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="idem")["TopicArn"]
    queue = env.queue_arn("q")

    def subscribe(attrs: dict[str, str] | None = None) -> str:
        kwargs: dict[str, Any] = {} if attrs is None else {"Attributes": attrs}
        return str(
            sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue, ReturnSubscriptionArn=True, **kwargs)[
                "SubscriptionArn"
            ]
        )

    sub = subscribe({"RawMessageDelivery": "True"})
    assert sub_attributes(sns, sub)["RawMessageDelivery"] == "true"
    assert subscribe({"RawMessageDelivery": "true"}) == sub
    assert subscribe({"RawMessageDelivery": "true", "FilterPolicyScope": "MessageAttributes"}) == sub
    assert subscribe() == sub
    assert subscribe({}) == sub
    assert subscribe({"FilterPolicyScope": "MessageAttributes"}) == sub
    different = {"RawMessageDelivery": "false", "FilterPolicyScope": "MessageBody"}
    assert error(sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint=queue, Attributes=different) == invalid(
        "Invalid parameter: Attributes Reason: Subscription already exists with different attributes"
    )
    assert len(sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]) == 1


def test_subscribe_with_attributes(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="attrs")["TopicArn"]
    queue = env.queue_arn("q")
    given = {"RawMessageDelivery": "wrongvalue", "FilterPolicyScope": "MessageBody", "FilterPolicy": ""}
    assert error(sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint=queue, Attributes=given) == invalid(
        "Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value [wrongvalue]. Must be true or false."
    )
    given["RawMessageDelivery"] = "TrUe"
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue, Attributes=given)["SubscriptionArn"]
    got = sub_attributes(sns, sub)
    assert got["RawMessageDelivery"] == "true"
    assert "FilterPolicy" not in got and "FilterPolicyScope" not in got  # the scope shows beside a policy only


def test_subscribe_errors(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="suberrs")["TopicArn"]
    queue = env.queue_arn("q")
    assert error(sns.subscribe, TopicArn=arn, Protocol="test-protocol", Endpoint="x@example.com") == invalid(
        "Invalid parameter: Amazon SNS does not support this protocol string: test-protocol"
    )
    assert error(
        sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint="http://localhost:9324/000000000000/q"
    ) == invalid("Invalid parameter: SQS endpoint ARN")
    assert error(sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint="unknown") == invalid(
        "Invalid parameter: SQS endpoint ARN"
    )
    assert error(sns.subscribe, TopicArn="randomstring", Protocol="email", Endpoint="x@example.com") == invalid(
        "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
    )
    assert error(
        sns.subscribe, TopicArn="arn:aws:sns:us-east-1:random", Protocol="email", Endpoint="x@example.com"
    ) == (invalid("Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 5"))
    assert error(sns.subscribe, TopicArn=arn + "aaa", Protocol="email", Endpoint="x@example.com") == (
        404, "Sender", "NotFound", "Topic does not exist"
    )  # fmt: skip
    for number in ("invalid-number", "NAA+15551234567"):
        assert error(sns.subscribe, TopicArn=arn, Protocol="sms", Endpoint=number) == invalid(
            f"Invalid SMS endpoint: {number}"
        )
    fifo_queue = env.queue_arn("q.fifo", {"FifoQueue": "true"})
    assert error(sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint=fifo_queue) == invalid(
        "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS "
        "topics"
    )
    # a well-formed ARN of a queue that does not exist is accepted (recorded)
    missing = f"arn:aws:sqs:{REGION}:{ACCOUNT}:unknown-queue"
    assert sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=missing)["SubscriptionArn"].startswith(arn + ":")
    assert queue


def test_fifo_topic_subscriptions_and_their_dead_letter_queues(env: Env, sns: Any) -> None:
    topic = sns.create_topic(Name="t.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    standard = env.queue_arn("std")
    fifo = env.queue_arn("q.fifo", {"FifoQueue": "true"})
    standard_dlq = env.queue_arn("dlq")
    # a standard queue may subscribe to a FIFO topic, and keep a standard dead-letter queue (recorded)
    sub_standard = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=standard)["SubscriptionArn"]
    redrive = json.dumps({"deadLetterTargetArn": standard_dlq})
    sns.set_subscription_attributes(SubscriptionArn=sub_standard, AttributeName="RedrivePolicy", AttributeValue=redrive)
    sub_fifo = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=fifo)["SubscriptionArn"]
    assert error(
        sns.set_subscription_attributes, SubscriptionArn=sub_fifo, AttributeName="RedrivePolicy", AttributeValue=redrive
    ) == invalid(
        "Invalid parameter: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."
    )
    assert error(
        sns.subscribe, TopicArn=topic, Protocol="sqs", Endpoint=env.queue_arn("q2.fifo", {"FifoQueue": "true"}),
        Attributes={"RedrivePolicy": redrive},
    ) == invalid(
        "Invalid parameter: Attributes Reason: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to "
        "a FIFO Topic."
    )  # fmt: skip
    # sqsemu's decision: a FIFO topic takes SQS subscriptions only (issue 48)
    assert error(sns.subscribe, TopicArn=topic, Protocol="email", Endpoint="x@example.com") == invalid(
        "Invalid parameter: Invalid protocol type: email"
    )


def test_protocols_that_confirm_and_their_listing(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="confirming")["TopicArn"]
    assert sns.subscribe(TopicArn=arn, Protocol="http", Endpoint="http://example.com/")["SubscriptionArn"] == (
        "pending confirmation"
    )
    with_arn = sns.subscribe(
        TopicArn=arn, Protocol="https", Endpoint="https://example.com/", ReturnSubscriptionArn=True
    )
    https_arn = with_arn["SubscriptionArn"]
    assert https_arn.startswith(arn + ":")
    got = sub_attributes(sns, https_arn)
    assert got["PendingConfirmation"] == "true" and got["ConfirmationWasAuthenticated"] == "false"
    assert "DeliveryPolicy" not in got
    assert json.loads(got["EffectiveDeliveryPolicy"]) == {
        "healthyRetryPolicy": DEFAULT_EFFECTIVE["http"]["defaultHealthyRetryPolicy"], "sicklyRetryPolicy": None,
        "throttlePolicy": None, "requestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
        "guaranteed": False,
    }  # fmt: skip
    email = sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="test@example.com")
    assert email["SubscriptionArn"] == "pending confirmation"
    sms = sns.subscribe(TopicArn=arn, Protocol="sms", Endpoint="+123123123")["SubscriptionArn"]
    assert sub_attributes(sns, sms)["PendingConfirmation"] == "false"
    function = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:handler"
    handler = sns.subscribe(TopicArn=arn, Protocol="lambda", Endpoint=function)["SubscriptionArn"]
    got = sub_attributes(sns, handler)  # the same keys as an SQS subscription's (recorded)
    assert sorted(got) == sorted(sub_attributes(sns, sms)) and got["Protocol"] == "lambda"
    assert got["Endpoint"] == function and got["PendingConfirmation"] == "false"
    listed = sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
    by_endpoint = {entry["Endpoint"]: entry for entry in listed}
    assert by_endpoint["test@example.com"] == {
        "Endpoint": "test@example.com", "Owner": ACCOUNT, "Protocol": "email", "SubscriptionArn": "PendingConfirmation",
        "TopicArn": arn,
    }  # fmt: skip
    assert by_endpoint["+123123123"]["SubscriptionArn"] == sms
    assert sorted(sub["SubscriptionArn"] for sub in sns.list_subscriptions()["Subscriptions"]) == sorted(
        ["PendingConfirmation"] * 3 + [sms, handler]
    )


def test_subscription_delivery_policy_is_normalised(env: Env, sns: Any) -> None:
    topic_policy = {"http": {"defaultRequestPolicy": {"headerContentType": "application/json"}}}
    arn = sns.create_topic(Name="dp", Attributes={"DeliveryPolicy": json.dumps(topic_policy)})["TopicArn"]
    policy = {"healthyRetryPolicy": {"minDelayTarget": 1, "maxDelayTarget": 1, "numRetries": 0},
              "throttlePolicy": {"maxReceivesPerSecond": 1000}}  # fmt: skip
    sub = sns.subscribe(
        TopicArn=arn, Protocol="http", Endpoint="http://example.com/", ReturnSubscriptionArn=True,
        Attributes={"DeliveryPolicy": json.dumps(policy)},
    )["SubscriptionArn"]  # fmt: skip
    got = sub_attributes(sns, sub)
    filled = {**policy["healthyRetryPolicy"], "numMaxDelayRetries": 0, "numNoDelayRetries": 0, "numMinDelayRetries": 0,
              "backoffFunction": "linear"}  # fmt: skip
    assert got["DeliveryPolicy"] == json.dumps(
        {"healthyRetryPolicy": filled, "sicklyRetryPolicy": None, "throttlePolicy": {"maxReceivesPerSecond": 1000},
         "requestPolicy": None, "guaranteed": False}, separators=(",", ":"),
    )  # fmt: skip
    assert got["EffectiveDeliveryPolicy"] == json.dumps(
        {"healthyRetryPolicy": filled, "sicklyRetryPolicy": None, "throttlePolicy": {"maxReceivesPerSecond": 1000},
         "requestPolicy": {"headerContentType": "application/json"}, "guaranteed": False}, separators=(",", ":"),
    )  # fmt: skip
    sns.set_subscription_attributes(
        SubscriptionArn=sub, AttributeName="DeliveryPolicy",
        AttributeValue=json.dumps({"requestPolicy": {"headerContentType": "text/csv"}}),
    )  # fmt: skip
    got = sub_attributes(sns, sub)
    assert json.loads(got["DeliveryPolicy"]) == {
        "healthyRetryPolicy": None, "sicklyRetryPolicy": None, "throttlePolicy": None,
        "requestPolicy": {"headerContentType": "text/csv"}, "guaranteed": False,
    }  # fmt: skip
    assert (
        json.loads(got["EffectiveDeliveryPolicy"])["healthyRetryPolicy"]
        == DEFAULT_EFFECTIVE["http"]["defaultHealthyRetryPolicy"]
    )


def test_confirm_subscription(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="confirm")["TopicArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="a@example.com", ReturnSubscriptionArn=True)[
        "SubscriptionArn"
    ]
    token = next(e["token"] for e in env.app.sns.fanout.recorded if e["subscription_arn"] == sub)
    long_token = "51b2ff3edb475b7d91550e0ab6edf0c1de2a34e6ebaf6c2262a001bcb7e051c43aa00022ceecce70bd2a67b2042da8d8" * 2
    assert error(sns.confirm_subscription, TopicArn=arn[:-1] + "i", Token=long_token) == invalid(
        "Invalid parameter: Token"
    )
    assert error(sns.confirm_subscription, TopicArn=arn, Token="randomtoken") == invalid("Invalid token")
    assert error(sns.confirm_subscription, TopicArn=arn, Token=long_token) == invalid("Invalid parameter: Token")
    assert error(sns.confirm_subscription, TopicArn=arn, Token="abc123") == invalid("Invalid parameter: Token")
    assert error(sns.confirm_subscription, TopicArn="not-an-arn", Token=token) == invalid("Invalid parameter: Topic")
    west = arn.replace(REGION, "eu-central-1")
    assert error(sns.confirm_subscription, TopicArn=west, Token=token) == invalid("Invalid parameter: Topic")
    assert sub_attributes(sns, sub)["PendingConfirmation"] == "true"
    # the token names the subscription: another topic ARN of the region confirms it all the same (recorded)
    assert sns.confirm_subscription(TopicArn=arn[:-1] + "a", Token=token)["SubscriptionArn"] == sub
    assert sns.confirm_subscription(TopicArn=arn, Token=token)["SubscriptionArn"] == sub
    got = sub_attributes(sns, sub)
    assert got["PendingConfirmation"] == "false" and got["ConfirmationWasAuthenticated"] == "false"
    assert (
        sns.confirm_subscription(TopicArn=arn, Token=token, AuthenticateOnUnsubscribe="true")["SubscriptionArn"] == sub
    )
    assert sub_attributes(sns, sub)["ConfirmationWasAuthenticated"] == "true"
    assert attributes(sns, arn)["SubscriptionsConfirmed"] == "1"


def test_unsubscribe(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="unsub")["TopicArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q"))["SubscriptionArn"]
    assert sns.unsubscribe(SubscriptionArn=sub)["ResponseMetadata"]["HTTPStatusCode"] == 200
    sns.unsubscribe(SubscriptionArn=sub)  # twice: 200 (recorded)
    assert sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"] == []
    assert error(
        sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true"
    ) == (404, "Sender", "NotFound", "Subscription does not exist")
    raw = env.client(validate=False)
    assert error(raw.unsubscribe, SubscriptionArn="randomstring") == invalid(
        "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 1"
    )
    assert error(raw.unsubscribe, SubscriptionArn="arn:aws:sns:us-east-1:random") == invalid(
        "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 5"
    )
    assert error(raw.unsubscribe, SubscriptionArn="arn:aws:sns:us-east-1:111111111111:random") == invalid(
        "Invalid parameter: SubscriptionId"
    )
    assert error(raw.unsubscribe) == invalid(
        "Invalid parameter: SubscriptionArn Reason: no value for required parameter"
    )
    assert error(raw.unsubscribe, SubscriptionArn="pending confirmation") == invalid(
        "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 1"
    )


def test_subscription_attribute_errors(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="subattrs")["TopicArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q"))["SubscriptionArn"]

    def set_error(name: str, value: str) -> tuple[int, str, str, str]:
        return error(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName=name, AttributeValue=value)

    assert set_error("FakeAttribute", "test-value") == invalid("Invalid parameter: AttributeName")
    assert set_error("RawMessageDelivery", "test-ValUe") == invalid(
        "Invalid parameter: RawMessageDelivery: Invalid value [test-ValUe]. Must be true or false."
    )
    assert set_error("RawMessageDelivery", "") == invalid(
        "Invalid parameter: RawMessageDelivery: Invalid value []. Must be true or false."
    )
    assert set_error("RedrivePolicy", json.dumps({"deadLetterTargetArn": "fake-arn"})) == invalid(
        "Invalid parameter: RedrivePolicy: deadLetterTargetArn is an invalid arn"
    )
    assert set_error("RedrivePolicy", "{invalidjson}") == invalid(
        "Invalid parameter: RedrivePolicy: failed to parse JSON. Unexpected character ('i' (code 105)): was expecting "
        "double-quote to start field name\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` "
        "disabled); line: 1, column: 2]"
    )
    assert set_error("FilterPolicyScope", "RandomValue") == invalid(
        "Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or "
        "MessageAttributes"
    )
    assert set_error("FilterPolicy", "{invalidjson}") == invalid(
        "Invalid parameter: FilterPolicy: failed to parse JSON. Unexpected character ('i' (code 105)): was expecting "
        "double-quote to start field name\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` "
        "disabled); line: 1, column: 2]"
    )
    given = {"FilterPolicy": "invalid"}
    assert error(sns.subscribe, TopicArn=arn, Protocol="email", Endpoint="a@example.com", Attributes=given) == invalid(
        "Invalid parameter: Attributes Reason: FilterPolicy: failed to parse JSON. Unrecognized token 'invalid': was "
        "expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: REDACTED "
        "(`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 8]"
    )  # fmt: skip
    missing = f"{sub[:-8]}abcdefgh"
    assert error(sns.get_subscription_attributes, SubscriptionArn=missing) == (
        404, "Sender", "NotFound", "Subscription does not exist"
    )  # fmt: skip
    assert error(sns.get_subscription_attributes, SubscriptionArn=f"arn:aws:sns:{REGION}:{ACCOUNT}:nonexistent-1") == (
        invalid("Invalid parameter: SubscriptionId")
    )
    sns.set_subscription_attributes(
        SubscriptionArn=sub, AttributeName="FilterPolicyScope", AttributeValue="MessageBody"
    )
    got = sub_attributes(sns, sub)
    assert "FilterPolicy" not in got and "FilterPolicyScope" not in got
    sns.set_subscription_attributes(
        SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=json.dumps({"attr": ["match-this"]})
    )
    got = sub_attributes(sns, sub)
    assert got["FilterPolicy"] == json.dumps({"attr": ["match-this"]}) and got["FilterPolicyScope"] == "MessageBody"


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("{i", "Unexpected character ('i' (code 105)): was expecting double-quote to start field name", 2),
        ("invalid", "Unrecognized token 'invalid': was expecting (JSON String, Number, Array, Object or token 'null', "
         "'true' or 'false')", 8),
        ('{"a" 1}', "Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value", 6),
        ('{"a":1 "b"}', "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries", 8),
        ("[1 2]", "Unexpected character ('2' (code 50)): was expecting comma to separate Array entries", 4),
        ('{"a":}', "Unexpected character ('}' (code 125)): expected a value", 6),
    ],
)  # fmt: skip
def test_redrive_policy_json_errors_as_jackson_words_them(
    env: Env, sns: Any, text: str, message: str, column: int
) -> None:
    arn = sns.create_topic(Name="json")["TopicArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q"))["SubscriptionArn"]
    location = (
        f"\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: {column}]"
    )
    assert error(
        sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="RedrivePolicy", AttributeValue=text
    ) == invalid(f"Invalid parameter: RedrivePolicy: failed to parse JSON. {message}{location}")
    assert error(
        sns.subscribe, TopicArn=arn, Protocol="sqs", Endpoint=env.queue_arn("q2"), Attributes={"RedrivePolicy": text}
    ) == invalid(f"Invalid parameter: Attributes Reason: RedrivePolicy: failed to parse JSON. {message}{location}")


def test_list_subscriptions_pages(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="paging-sub")["TopicArn"]
    for i in range(120):
        sns.subscribe(TopicArn=arn, Protocol="email", Endpoint=f"user{i}@example.com")
    for call in (lambda **kw: sns.list_subscriptions_by_topic(TopicArn=arn, **kw), sns.list_subscriptions):
        first = call()
        assert len(first["Subscriptions"]) == 100 and base64.b64decode(first["NextToken"], validate=True)
        second = call(NextToken=first["NextToken"])
        assert len(second["Subscriptions"]) == 20 and "NextToken" not in second
        endpoints = {s["Endpoint"] for s in first["Subscriptions"] + second["Subscriptions"]}
        assert endpoints == {f"user{i}@example.com" for i in range(120)}
    assert error(sns.list_subscriptions, NextToken="garbage") == invalid("Invalid parameter: NextToken")
    assert error(sns.list_subscriptions_by_topic, TopicArn=arn, NextToken="garbage") == invalid(
        "Invalid parameter: NextToken"
    )
    assert env.client(key=OTHER).list_subscriptions()["Subscriptions"] == []


# ---------------------------------------------------------------------------------------------------- publish


def test_publish_answers(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="pub")["TopicArn"]
    answer = sns.publish(TopicArn=arn, Message="hello")
    assert UUID.fullmatch(answer["MessageId"]) and "SequenceNumber" not in answer
    assert UUID.fullmatch(sns.publish(TargetArn=arn, Message="by target")["MessageId"])
    assert UUID.fullmatch(sns.publish(TopicArn=arn, Message="grouped", MessageGroupId="my-group-id-1")["MessageId"])
    fifo = sns.create_topic(Name="pub.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    first = sns.publish(TopicArn=fifo, Message="m", MessageGroupId="g", MessageDeduplicationId="d1")
    assert re.fullmatch(r"[0-9]{20}", first["SequenceNumber"])
    second = sns.publish(TopicArn=fifo, Message="m", MessageGroupId="g", MessageDeduplicationId="d2")
    assert int(second["SequenceNumber"]) > int(first["SequenceNumber"])
    # the same deduplication ID within 5 minutes: the first publish's answer again
    again = sns.publish(TopicArn=fifo, Message="m", MessageGroupId="g", MessageDeduplicationId="d1")
    assert (again["MessageId"], again["SequenceNumber"]) == (first["MessageId"], first["SequenceNumber"])
    clock = env.broker.clock
    assert isinstance(clock, ManualClock)
    clock.advance(300)
    assert (
        sns.publish(TopicArn=fifo, Message="m", MessageGroupId="g", MessageDeduplicationId="d1")["MessageId"]
        != (first["MessageId"])
    )


def test_publish_errors(sns: Any) -> None:
    arn = sns.create_topic(Name="puberrs")["TopicArn"]
    assert error(sns.publish, TopicArn=arn + "-fake", Message="m") == (
        404,
        "Sender",
        "NotFound",
        "Topic does not exist",
    )
    for bad, count in (("randomstring", 1), ("", 1), ("randomstring:1", 2)):
        assert error(sns.publish, TopicArn=bad, Message="m") == invalid(
            f"Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not {count}"
        )
    endpoint = f"arn:aws:sns:us-east-1:{ACCOUNT}:endpoint/APNS/abcdef/0f7d5971-aa8b-4bd5-b585-0826e9f93a66"
    assert error(sns.publish, TargetArn=endpoint, Message="push") == invalid(
        "Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified"
    )
    assert error(sns.publish, TopicArn=arn, Subject="", Message="m") == invalid("Invalid parameter: Subject")
    assert error(sns.publish, TopicArn=arn, Message="") == invalid("Invalid parameter: Empty message")
    assert error(sns.publish, TopicArn=arn, Message="This is a test message" * 12000) == invalid(
        "Invalid parameter: Message too long"
    )
    attrs = {"attr1": {"DataType": "Number", "StringValue": "1"}}
    counted = len("attr1") + len("Number") + len("1")
    assert error(sns.publish, TopicArn=arn, Message="a" * (262144 - counted + 1), MessageAttributes=attrs) == invalid(
        "Invalid parameter: Message too long"
    )
    sns.publish(TopicArn=arn, Message="a" * (262144 - counted), MessageAttributes=attrs)
    structure = "Invalid parameter: Message Structure - "
    for message, reason in (
        (json.dumps({"sqs": "Test message"}), "No default entry in JSON message body"),
        ('{"default": "This is a default message"} }', "JSON message body failed to parse"),
        (json.dumps({"default": {"object": "test"}}), "No default entry in JSON message body"),
    ):
        assert error(sns.publish, TopicArn=arn, Message=message, MessageStructure="json") == invalid(structure + reason)
    duplicate = '{"default": "This is a default message", "default": "Duplicate"}'
    assert UUID.fullmatch(sns.publish(TopicArn=arn, Message=duplicate, MessageStructure="json")["MessageId"])
    assert error(sns.publish, TopicArn=arn, Message="m", MessageDeduplicationId="d") == invalid(
        "Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that "
        "is not valid for this topic type"
    )
    fifo = sns.create_topic(Name="puberrs.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    assert error(sns.publish, TopicArn=fifo, Message="m") == invalid(
        "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"
    )
    assert error(sns.publish, TopicArn=fifo, Message="m", MessageGroupId="g") == invalid(
        "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId "
        "provided explicitly"
    )
    for number in ("+1a234", "NAA+15551234567"):
        assert error(sns.publish, PhoneNumber=number, Message="m") == invalid(
            f"Invalid parameter: PhoneNumber Reason: {number} is not valid to publish to"
        )


def test_publish_subject_constraints(sns: Any) -> None:
    # API Reference, "Publish": UTF-8 text, no line breaks or control characters, under 100 characters (sqsemu
    # takes 100, the limit Amazon Managed Service for Prometheus truncates SNS subjects to)
    arn = sns.create_topic(Name="subjects")["TopicArn"]
    for subject in ("x" * 100, "Grüße aus Köln", "[Subject] Test subject"):
        sns.publish(TopicArn=arn, Subject=subject, Message="m")
    for subject in ("x" * 101, "two\nlines", "tab\there", "bell\x07"):
        assert error(sns.publish, TopicArn=arn, Subject=subject, Message="m") == invalid("Invalid parameter: Subject")


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ({"attr1": {"DataType": "String", "StringValue": ""}},
         "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type "
         "'String'."),
        ({"attr1": {"DataType": "String"}},
         "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type "
         "'String'."),
        ({"attr1": {"DataType": "Binary", "BinaryValue": b""}},
         "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type "
         "'Binary'."),
        ({"attr1": {"DataType": "String", "BinaryValue": b"123"}},
         "The message attribute 'attr1' with type 'String' must use field 'String'."),
        ({"attr1": {"DataType": "Number", "BinaryValue": b"123"}},
         "The message attribute 'attr1' with type 'Number' must use field 'String'."),
        ({"attr1": {"DataType": "Binary", "StringValue": "123"}},
         "The message attribute 'attr1' with type 'Binary' must use field 'Binary'."),
        ({"attr1": {"DataType": "InvalidType", "StringValue": "123"}},
         "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is "
         "Binary, Number, and String."),
        ({"attr1": {"DataType": "String.", "StringValue": "123"}},
         "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is "
         "Binary, Number, and String."),
        ({"attr1": {"DataType": "Stringprefixed", "StringValue": "123"}},
         "The message attribute 'attr1' has an invalid message attribute type, the set of supported type prefixes is "
         "Binary, Number, and String."),
        ({"a" * 257: {"DataType": "String", "StringValue": "123"}},
         "Length of message attribute name must be less than 256 bytes."),
        ({"a^*?": {"DataType": "String", "StringValue": "123"}},
         "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include "
         "alphanumeric characters, hyphens, underscores, or dots."),
        ({".abc": {"DataType": "String", "StringValue": "123"}},
         "Invalid message attribute name starting with character '.' was found."),
        ({"abc.": {"DataType": "String", "StringValue": "123"}},
         "Invalid message attribute name ending with character '.' was found."),
        ({"a..bc": {"DataType": "String", "StringValue": "123"}},
         "Message attribute name can not have successive '.' character."),
    ],
)  # fmt: skip
def test_message_attribute_errors_in_publish_and_batch(env: Env, attrs: dict[str, Any], expected: str) -> None:
    sns = env.client(validate=False)
    arn = sns.create_topic(Name="attrerrs")["TopicArn"]
    value_error = (400, "Sender", "ParameterValueInvalid", expected)
    assert error(sns.publish, TopicArn=arn, Message="m", MessageAttributes=attrs) == value_error
    entries = [{"Id": "1", "Message": "test-batch", "MessageAttributes": attrs}, {"Id": "3", "Message": "valid-batch"}]
    assert error(sns.publish_batch, TopicArn=arn, PublishBatchRequestEntries=entries) == value_error  # whole request


def test_message_attribute_without_data_type(env: Env) -> None:
    sns = env.client(validate=False)
    arn = sns.create_topic(Name="nodatatype")["TopicArn"]
    attrs = {"attr1": {"StringValue": "value"}}
    assert error(sns.publish, TopicArn=arn, Message="m", MessageAttributes=attrs) == (
        400, "Sender", "ValidationError", "1 validation error detected: Value null at "
        "'messageAttributes.attr1.member.dataType' failed to satisfy constraint: Member must not be null",
    )  # fmt: skip
    entries = [{"Id": "1", "Message": "m", "MessageAttributes": attrs}]
    assert error(sns.publish_batch, TopicArn=arn, PublishBatchRequestEntries=entries) == (
        400, "Sender", "ValidationError", "1 validation error detected: Value null at "
        "'publishBatchRequestEntries.1.member.messageAttributes.attr1.member.dataType' failed to satisfy constraint: "
        "Member must not be null",
    )  # fmt: skip


def test_message_attribute_types_accepted(sns: Any) -> None:
    arn = sns.create_topic(Name="attrsok")["TopicArn"]
    sns.publish(
        TopicArn=arn, Message="m",
        MessageAttributes={
            "a": {"DataType": "String.prefixed", "StringValue": "p"},
            "b": {"DataType": "String.  prefixed.", "StringValue": "p"},
            "c": {"DataType": "Number", "StringValue": "-1.5e3"},
            "d": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
            "e": {"DataType": "String.Array", "StringValue": '["x", 1, true]'},
            "f.g_h-i": {"DataType": "String", "StringValue": "s"},
        },
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------------- publish batch


def test_publish_batch_answers(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="batch")["TopicArn"]
    answer = sns.publish_batch(
        TopicArn=arn,
        PublishBatchRequestEntries=[
            {"Id": "1", "Message": "one", "Subject": "Subject",
             "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "99.12"}}},
            {"Id": "2", "Message": json.dumps({"default": "d", "sqs": "s"}), "MessageStructure": "json"},
        ],
    )  # fmt: skip
    assert answer["Failed"] == []
    assert [entry["Id"] for entry in answer["Successful"]] == ["1", "2"]
    assert all(set(entry) == {"Id", "MessageId"} for entry in answer["Successful"])
    assert "<Failed/>" in env.raw[-1].text  # the element is there even when empty (recorded: "Failed": [])
    fifo = sns.create_topic(Name="batch.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
    entries = [
        {"Id": str(i), "Message": f"m{i}", "MessageGroupId": "g", "MessageDeduplicationId": f"d{i}"} for i in range(3)
    ]
    first = sns.publish_batch(TopicArn=fifo, PublishBatchRequestEntries=entries)
    assert all(re.fullmatch(r"[0-9]{20}", entry["SequenceNumber"]) for entry in first["Successful"])
    again = sns.publish_batch(TopicArn=fifo, PublishBatchRequestEntries=entries)
    assert again["Successful"] == first["Successful"]  # recorded: the same MessageIds and SequenceNumbers


def test_publish_batch_entry_failures(env: Env, sns: Any) -> None:
    # sqsemu's decision: the checks AWS is not recorded to answer for the whole request fail their entry only
    arn = sns.create_topic(Name="entryfail")["TopicArn"]
    answer = sns.publish_batch(
        TopicArn=arn,
        PublishBatchRequestEntries=[
            {"Id": "ok", "Message": "fine"},
            {"Id": "empty", "Message": ""},
            {"Id": "subject", "Message": "m", "Subject": "a\nb"},
        ],
    )
    assert [entry["Id"] for entry in answer["Successful"]] == ["ok"]
    assert answer["Failed"] == [
        {"Id": "empty", "Code": "InvalidParameter", "Message": "Invalid parameter: Empty message", "SenderFault": True},
        {"Id": "subject", "Code": "InvalidParameter", "Message": "Invalid parameter: Subject", "SenderFault": True},
    ]
    assert env.app.sns.fanout.counts(env.app.sns.topics.by_arn[arn]).published == 1


def test_publish_batch_errors(env: Env, sns: Any) -> None:
    fifo = sns.create_topic(Name="batcherrs.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]

    def batch_error(topic: str, entries: list[dict[str, Any]], client: Any = sns) -> tuple[int, str, str, str]:
        return error(client.publish_batch, TopicArn=topic, PublishBatchRequestEntries=entries)

    assert batch_error(fifo, [{"Id": "1", "Message": "no group"}]) == invalid(
        "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"
    )
    assert batch_error(fifo, [{"Id": f"Id_{i}", "Message": "m"} for i in range(11)]) == (
        400, "Sender", "TooManyEntriesInBatchRequest", "The batch request contains more entries than permissible."
    )  # fmt: skip
    assert batch_error(fifo, [{"Id": "1", "Message": "m"}] * 2) == (
        400, "Sender", "BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id."
    )  # fmt: skip
    assert batch_error(fifo, [{"Id": "1", "Message": "m", "MessageGroupId": "msg1"}]) == invalid(
        "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId "
        "provided explicitly"
    )
    assert batch_error(fifo, [{"Id": "1", "Message": json.dumps({"sqs": "s"}), "MessageStructure": "json"}]) == invalid(
        "Invalid parameter: Message Structure - No default entry in JSON message body"
    )
    arn = sns.create_topic(Name="batcherrs")["TopicArn"]
    assert batch_error(arn + "fake-topic", [{"Id": "1", "Message": "m"}]) == (
        404, "Sender", "NotFound", "Topic does not exist"
    )  # fmt: skip
    too_long = (
        400,
        "Sender",
        "BatchRequestTooLong",
        "The length of all the messages put together is more than the limit.",
    )
    assert batch_error(arn, [{"Id": "1", "Message": "a" * 131072}, {"Id": "2", "Message": "b" * 131073}]) == too_long
    attrs = {"attr1": {"DataType": "Number", "StringValue": "1"}}
    body = "a" * (262144 - len("attr1") - len("Number") - len("1"))
    assert batch_error(
        arn, [{"Id": "1", "Message": body, "MessageAttributes": attrs}, {"Id": "2", "Message": "b"}]
    ) == (too_long)
    sns.publish_batch(
        TopicArn=arn,
        PublishBatchRequestEntries=[
            {"Id": "1", "Message": body[:-1], "MessageAttributes": attrs},
            {"Id": "2", "Message": "b"},
        ],
    )
    raw = env.client(validate=False)
    assert batch_error(arn, [], raw) == (
        400,
        "Sender",
        "EmptyBatchRequest",
        "The batch request doesn't contain any entries.",
    )
    for bad_id in ("message.id", "x" * 81, ""):
        assert batch_error(arn, [{"Id": bad_id, "Message": "m"}], raw) == (
            400, "Sender", "InvalidBatchEntryId", "The Id of a batch entry in a batch request doesn't abide by the "
            "specification.",
        )  # fmt: skip
    sns.publish_batch(
        TopicArn=arn, PublishBatchRequestEntries=[{"Id": "a" * 80, "Message": "m"}, {"Id": "A-_9", "Message": "m"}]
    )


# ---------------------------------------------------------------------------------------------------- tags


def test_tags(sns: Any) -> None:
    arn = sns.create_topic(Name="tagged")["TopicArn"]
    assert error(
        sns.tag_resource, ResourceArn=arn,
        Tags=[{"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}, {"Key": "k2", "Value": "v2"}],
    ) == invalid("Invalid parameter: Duplicated keys are not allowed.")  # fmt: skip
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == []
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}])
    assert sorted(sns.list_tags_for_resource(ResourceArn=arn)["Tags"], key=lambda t: t["Key"]) == [
        {"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}
    ]  # fmt: skip
    sns.untag_resource(ResourceArn=arn, TagKeys=["k1", "never-set"])
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "k2", "Value": "v2"}]
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "k2", "Value": "v2b"}])
    assert sns.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "k2", "Value": "v2b"}]
    assert error(
        sns.create_topic, Name="dup-tags", Tags=[{"Key": "k", "Value": "1"}, {"Key": "k", "Value": "2"}]
    ) == invalid("Invalid parameter: Duplicated keys are not allowed.")


def test_tag_limits(env: Env, sns: Any) -> None:
    # AWS General Reference, "Amazon SNS endpoints and quotas": 50 tags per topic; botocore: keys 1 to 128
    # characters, values up to 256, ResourceArn up to 1011. The TagLimitExceeded and aws: messages are sqsemu's.
    arn = sns.create_topic(Name="limits")["TopicArn"]
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(50)])
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "k0", "Value": "overwritten"}])  # still 50
    assert error(sns.tag_resource, ResourceArn=arn, Tags=[{"Key": "k50", "Value": "v"}]) == (
        400, "Sender", "TagLimitExceeded", "Could not complete request: tag quota of per resource exceeded"
    )  # fmt: skip
    assert len(sns.list_tags_for_resource(ResourceArn=arn)["Tags"]) == 50
    assert error(sns.create_topic, Name="many", Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(51)]) == (
        400, "Sender", "TagLimitExceeded", "Could not complete request: tag quota of per resource exceeded"
    )  # fmt: skip
    other = sns.create_topic(Name="other")["TopicArn"]
    sns.tag_resource(ResourceArn=other, Tags=[{"Key": "k" * 128, "Value": "v" * 256}, {"Key": "empty", "Value": ""}])
    assert error(sns.tag_resource, ResourceArn=other, Tags=[{"Key": "aws:reserved", "Value": "v"}]) == invalid(
        "Invalid parameter: Tags Reason: Tag keys must not start with aws:"
    )
    # the model's bounds are checked as AWS's request validation words them (the recorded ValidationError)
    raw = env.client(validate=False)
    long_key, long_value = "k" * 129, "v" * 257
    assert error(raw.tag_resource, ResourceArn=other, Tags=[{"Key": long_key, "Value": "v"}]) == (
        400, "Sender", "ValidationError", f"1 validation error detected: Value '{long_key}' at 'tags.1.member.key' "
        "failed to satisfy constraint: Member must have length less than or equal to 128",
    )  # fmt: skip
    assert error(
        raw.create_topic, Name="bounds", Tags=[{"Key": "ok", "Value": "v"}, {"Key": "", "Value": long_value}]
    ) == (
        400, "Sender", "ValidationError", "2 validation errors detected: Value '' at 'tags.2.member.key' failed to "
        "satisfy constraint: Member must have length greater than or equal to 1; Value '" + long_value + "' at "
        "'tags.2.member.value' failed to satisfy constraint: Member must have length less than or equal to 256",
    )  # fmt: skip
    assert error(raw.tag_resource, ResourceArn=other, Tags=[{"Key": "k"}]) == (
        400, "Sender", "ValidationError", "1 validation error detected: Value null at 'tags.1.member.value' failed to "
        "satisfy constraint: Member must not be null",
    )  # fmt: skip
    assert error(raw.untag_resource, ResourceArn=other, TagKeys=["fine", long_key]) == (
        400, "Sender", "ValidationError", f"1 validation error detected: Value '{long_key}' at 'tagKeys.2.member' "
        "failed to satisfy constraint: Member must have length less than or equal to 128",
    )  # fmt: skip
    long_arn = other + "x" * 1011
    assert error(raw.list_tags_for_resource, ResourceArn=long_arn) == (
        400, "Sender", "ValidationError", f"1 validation error detected: Value '{long_arn}' at 'resourceArn' failed "
        "to satisfy constraint: Member must have length less than or equal to 1011",
    )  # fmt: skip
    missing = arn + "-missing"
    for call, kwargs in (
        (sns.tag_resource, {"Tags": [{"Key": "k", "Value": "v"}]}),
        (sns.untag_resource, {"TagKeys": ["k"]}),
        (sns.list_tags_for_resource, {}),
    ):
        assert error(call, ResourceArn=missing, **kwargs) == (
            404,
            "Sender",
            "ResourceNotFound",
            "Resource does not exist",
        )


# ---------------------------------------------------------------------------------------------------- permissions


def test_add_and_remove_permission(sns: Any) -> None:
    arn = sns.create_topic(Name="shared")["TopicArn"]
    sns.add_permission(TopicArn=arn, Label="one", AWSAccountId=[OTHER], ActionName=["Publish"])
    sns.add_permission(
        TopicArn=arn, Label="two", AWSAccountId=[OTHER, "222222222222"], ActionName=["Publish", "GetTopicAttributes"]
    )
    policy = json.loads(attributes(sns, arn)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["__default_statement_ID", "one", "two"]
    assert policy["Statement"][1] == {
        "Sid": "one", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{OTHER}:root"}, "Action": ["SNS:Publish"],
        "Resource": arn,
    }  # fmt: skip
    assert policy["Statement"][2] == {
        "Sid": "two", "Effect": "Allow",
        "Principal": {"AWS": [f"arn:aws:iam::{OTHER}:root", "arn:aws:iam::222222222222:root"]},
        "Action": ["SNS:Publish", "SNS:GetTopicAttributes"], "Resource": arn,
    }  # fmt: skip
    assert error(sns.add_permission, TopicArn=arn, Label="one", AWSAccountId=[OTHER], ActionName=["Publish"]) == (
        invalid("Invalid parameter: Statement already exists")
    )
    assert error(
        sns.add_permission, TopicArn=arn, Label="three", AWSAccountId=[OTHER], ActionName=["ReceiveMessage"]
    ) == (invalid("Invalid parameter: Policy statement action out of service scope!"))
    sns.remove_permission(TopicArn=arn, Label="one")
    policy = json.loads(attributes(sns, arn)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["__default_statement_ID", "two"]
    assert error(sns.remove_permission, TopicArn=arn, Label="one") == invalid(
        "Invalid parameter: Statement with the specified label does not exist"
    )
    assert error(sns.add_permission, TopicArn=arn + "x", Label="l", AWSAccountId=[OTHER], ActionName=["Publish"]) == (
        404, "Sender", "NotFound", "Topic does not exist"
    )  # fmt: skip


def test_shared_actions_go_to_the_service_their_parameters_name(env: Env, sns: Any) -> None:
    arn = sns.create_topic(Name="routed")["TopicArn"]
    answer = env.query(
        {"Action": "AddPermission", "TopicArn": arn, "Label": "l", "AWSAccountId.member.1": OTHER,
         "ActionName.member.1": "Publish"}, service=None,
    )  # fmt: skip
    assert answer.status == 200 and answer.text.startswith("<AddPermissionResponse")
    assert [s["Sid"] for s in json.loads(attributes(sns, arn)["Policy"])["Statement"]][-1] == "l"


# ---------------------------------------------------------------------------------------------------- data protection


def test_data_protection_policy(sns: Any) -> None:
    arn = sns.create_topic(Name="protected")["TopicArn"]
    assert sns.get_data_protection_policy(ResourceArn=arn)["DataProtectionPolicy"] == ""
    document = json.dumps({"Name": "p", "Version": "2021-06-01", "Statement": []})
    sns.put_data_protection_policy(ResourceArn=arn, DataProtectionPolicy=document)
    assert sns.get_data_protection_policy(ResourceArn=arn)["DataProtectionPolicy"] == document
    assert error(sns.put_data_protection_policy, ResourceArn=arn, DataProtectionPolicy="{not json") == invalid(
        "Invalid parameter: DataProtectionPolicy"
    )
    assert error(sns.get_data_protection_policy, ResourceArn=arn + "x") == (
        404,
        "Sender",
        "NotFound",
        "Topic does not exist",
    )
    too_long = json.dumps({"Name": "p" * 30_720})
    assert error(sns.put_data_protection_policy, ResourceArn=arn, DataProtectionPolicy=too_long) == invalid(
        "Invalid parameter: DataProtectionPolicy"
    )
    created = sns.create_topic(Name="protected2", DataProtectionPolicy=document)["TopicArn"]
    assert sns.get_data_protection_policy(ResourceArn=created)["DataProtectionPolicy"] == document


# ---------------------------------------------------------------------------------------------------- not served


@pytest.mark.parametrize(
    ("operation", "kwargs"),
    [
        ("create_platform_application", {"Name": "a", "Platform": "GCM", "Attributes": {}}),
        ("list_platform_applications", {}),
        ("get_sms_attributes", {}),
        ("set_sms_attributes", {"attributes": {"DefaultSMSType": "Promotional"}}),
        ("check_if_phone_number_is_opted_out", {"phoneNumber": "+15555550100"}),
        ("list_phone_numbers_opted_out", {}),
        ("get_sms_sandbox_account_status", {}),
        ("list_origination_numbers", {}),
    ],
)
def test_sms_and_mobile_push_actions_are_not_served(sns: Any, operation: str, kwargs: dict[str, Any]) -> None:
    action = sns.meta.method_to_api_mapping[operation]
    assert error(getattr(sns, operation), **kwargs) == (
        400, "Sender", "InvalidAction",
        f"sqsemu serves SNS topics, subscriptions and publishing; {action} (SMS and mobile push management) is not "
        "served. See docs/sns.md.",
    )  # fmt: skip


def test_unknown_action(env: Env) -> None:
    answer = env.query({"Action": "FlyToTheMoon", "Version": "2010-03-31"})
    assert answer.status == 400
    assert "<Code>InvalidAction</Code>" in answer.text
    assert "<Message>Could not find operation FlyToTheMoon for version 2010-03-31</Message>" in answer.text
    assert "<Type>Sender</Type>" in answer.text


def test_every_action_of_the_model_is_served_or_refused(env: Env) -> None:
    from sqsemu.sns.service import ACTIONS, NOT_SERVED

    assert set(ACTIONS) | NOT_SERVED == set(env.client().meta.service_model.operation_names)
    assert not set(ACTIONS) & NOT_SERVED
