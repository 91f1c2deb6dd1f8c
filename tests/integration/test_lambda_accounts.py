"""The Lambda API as one more AWS API of the server (issue 28): ``--auth sigv4`` verifies its signatures (service
``lambda``) as it does SQS's; a mapping belongs to the account that created it (another account's Get, Update or
Delete is ResourceNotFoundException); another account's queue is refused; ListEventSourceMappings answers at most
100 mappings a page. Real sockets: boto3's lambda client, raw signed and unsigned requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config as BotoConfig
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from harness import client_for, raw_request

from sqsemu.config import Credential
from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration

OWNER, OTHER = "111111111111", "222222222222"
SECRETS = {OWNER: "owner-secret", OTHER: "other-secret"}
NOWHERE = "http://127.0.0.1:9"  # an Invoke endpoint nothing listens on: functions are known, mappings disabled


def _lambda(endpoint_url: str, key: str, secret: str) -> Any:
    return boto3.session.Session().client(
        "lambda",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def _code(call: Any) -> tuple[str, int]:
    with pytest.raises(ClientError) as caught:
        call()
    response = caught.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture(scope="module")
def signed_server() -> Iterator[SQSServer]:
    credentials = tuple(Credential(account, secret) for account, secret in SECRETS.items())
    with SQSServer(auth="sigv4", credentials=credentials, lambda_endpoint=NOWHERE) as srv:
        yield srv


def _queue_arn(server: SQSServer, account: str, protocol: str, name: str) -> str:
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account, secret_access_key=SECRETS[account])
    try:
        url = sqs.create_queue(QueueName=name)["QueueUrl"]
        return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])
    finally:
        sqs.close()


def test_sigv4_verifies_the_lambda_api(signed_server: SQSServer, protocol: str) -> None:
    arn = _queue_arn(signed_server, OWNER, protocol, f"signed-{protocol}")
    url = signed_server.endpoint_url
    body = json.dumps({"EventSourceArn": arn, "FunctionName": "f", "Enabled": False}).encode()
    path = "/2015-03-31/event-source-mappings/"
    # unsigned, claiming another account: refused, nothing created
    answer = raw_request(url, "POST", path, body, {"Content-Type": "application/json"})
    assert (answer.status, answer.headers.get("x-amzn-errortype")) == (403, "MissingAuthenticationTokenException")
    # signed for the wrong service (sqs): refused
    request = AWSRequest(method="POST", url=url + path, data=body, headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(OWNER, SECRETS[OWNER]), "sqs", "us-east-1").add_auth(request)
    answer = raw_request(url, "POST", path, body, dict(request.headers.items()))
    assert (answer.status, answer.headers.get("x-amzn-errortype")) == (403, "InvalidSignatureException")
    # a wrong secret, an unknown key
    assert _code(lambda: _lambda(url, OWNER, "wrong").list_event_source_mappings()) == (
        "InvalidSignatureException",
        403,
    )
    assert _code(lambda: _lambda(url, "999999999999", "x").list_event_source_mappings()) == (
        "UnrecognizedClientException",
        403,
    )
    # signed with the owner's key: served, as the owner
    owner = _lambda(url, OWNER, SECRETS[OWNER])
    created = owner.create_event_source_mapping(EventSourceArn=arn, FunctionName="f", Enabled=False)
    assert created["FunctionArn"] == f"arn:aws:lambda:us-east-1:{OWNER}:function:f"
    assert [m["UUID"] for m in owner.list_event_source_mappings()["EventSourceMappings"]] == [created["UUID"]]
    # the other account, signed correctly, sees nothing of it and cannot map the owner's queue
    other = _lambda(url, OTHER, SECRETS[OTHER])
    assert other.list_event_source_mappings()["EventSourceMappings"] == []
    assert _code(lambda: other.get_event_source_mapping(UUID=created["UUID"])) == ("ResourceNotFoundException", 404)
    assert _code(lambda: other.create_event_source_mapping(EventSourceArn=arn, FunctionName="g")) == (
        "InvalidParameterValueException",
        400,
    )
    owner.delete_event_source_mapping(UUID=created["UUID"])


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer(lambda_endpoint=NOWHERE) as srv:
        yield srv


def test_a_mapping_belongs_to_its_account(server: SQSServer, protocol: str) -> None:
    owner_account, other_account = new_account(), new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=owner_account)
    try:
        url = sqs.create_queue(QueueName="mine")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    finally:
        sqs.close()
    owner, other = server.lambda_client(owner_account), server.lambda_client(other_account)
    other_region = server.lambda_client(owner_account, region_name="eu-west-1")
    uid = owner.create_event_source_mapping(EventSourceArn=arn, FunctionName="f", Enabled=False)["UUID"]
    for caller in (other, other_region):
        assert _code(lambda c=caller: c.get_event_source_mapping(UUID=uid)) == ("ResourceNotFoundException", 404)
        assert _code(lambda c=caller: c.update_event_source_mapping(UUID=uid, BatchSize=3)) == (
            "ResourceNotFoundException",
            404,
        )
        assert _code(lambda c=caller: c.delete_event_source_mapping(UUID=uid)) == ("ResourceNotFoundException", 404)
    # another account cannot map the owner's queue either (its execution role cannot read it)
    assert _code(lambda: other.create_event_source_mapping(EventSourceArn=arn, FunctionName="f")) == (
        "InvalidParameterValueException",
        400,
    )
    mapping = owner.get_event_source_mapping(UUID=uid)
    assert mapping["BatchSize"] == 10 and mapping["State"] == "Disabled"
    owner.delete_event_source_mapping(UUID=uid)


def test_list_answers_at_most_100_a_page(server: SQSServer) -> None:
    account = new_account()
    sqs = client_for(server.endpoint_url, "json", access_key_id=account)
    try:
        url = sqs.create_queue(QueueName="many")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    finally:
        sqs.close()
    lam = server.lambda_client(account)
    made = [
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=f"f{n}", Enabled=False)["UUID"]
        for n in range(101)
    ]
    first = lam.list_event_source_mappings(MaxItems=1000)
    assert len(first["EventSourceMappings"]) == 100
    second = lam.list_event_source_mappings(MaxItems=1000, Marker=first["NextMarker"])
    assert [m["UUID"] for m in first["EventSourceMappings"] + second["EventSourceMappings"]] == made
    assert "NextMarker" not in second
    for uid in made:
        lam.delete_event_source_mapping(UUID=uid)
