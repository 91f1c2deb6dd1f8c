"""Accounts: a 12-digit access key id selects that account; any other key uses 000000000000
(docs/behaviour.md sections 1.1, 7). Queues, URLs, ARNs and ListQueues are per account.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import client_for

pytestmark = pytest.mark.integration

OTHER_ACCOUNT = "111122223333"


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


@pytest.fixture
def account_client(server: Any, protocol: str) -> Iterator[Any]:
    client = client_for(server.endpoint_url, protocol, access_key_id=OTHER_ACCOUNT)
    created: list[str] = []
    client.created = created
    yield client
    for url in created:
        try:
            client.delete_queue(QueueUrl=url)
        except ClientError:
            pass
    if protocol == "query":
        client.close()


@pytest.fixture
def other_key_client(server: Any, protocol: str) -> Iterator[Any]:
    client = client_for(server.endpoint_url, protocol, access_key_id="AKIAIOSFODNN7EXAMPLE")
    yield client
    if protocol == "query":
        client.close()


def create(client: Any, name: str, **attributes: str) -> str:
    kwargs: dict[str, Any] = {"QueueName": name}
    if attributes:
        kwargs["Attributes"] = attributes
    url = client.create_queue(**kwargs)["QueueUrl"]
    client.created.append(url)
    return url


def test_twelve_digit_access_key_selects_that_account(account_client):
    name = f"acct-{uuid.uuid4().hex[:12]}"
    url = create(account_client, name)
    assert url.endswith(f"/{OTHER_ACCOUNT}/{name}")
    arn = account_client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert arn == f"arn:aws:sqs:us-east-1:{OTHER_ACCOUNT}:{name}"
    assert account_client.get_queue_url(QueueName=name)["QueueUrl"] == url


def test_queue_of_another_account_is_invisible(account_client, sqs):
    name = f"acct-{uuid.uuid4().hex[:12]}"
    url = create(account_client, name)
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_url(QueueName=name)
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    assert "QueueUrls" not in sqs.list_queues(QueueNamePrefix=name)
    assert account_client.list_queues(QueueNamePrefix=name)["QueueUrls"] == [url]


def test_list_queues_is_separate_per_account(account_client, sqs, make_queue):
    prefix = f"split-{uuid.uuid4().hex[:12]}"
    mine = make_queue(name=prefix)
    theirs = create(account_client, prefix + "-theirs")
    assert sqs.list_queues(QueueNamePrefix=prefix)["QueueUrls"] == [mine]
    assert account_client.list_queues(QueueNamePrefix=prefix)["QueueUrls"] == [theirs]


def test_same_name_in_two_accounts_are_two_queues(account_client, sqs):
    name = f"twin-{uuid.uuid4().hex[:12]}"
    default_url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
    try:
        other_url = create(account_client, name, VisibilityTimeout="20")  # no QueueAlreadyExists
        assert other_url != default_url
        assert "/000000000000/" in default_url
        sqs.send_message(QueueUrl=default_url, MessageBody="for default")
        assert "Messages" not in account_client.receive_message(QueueUrl=other_url)
        got = sqs.receive_message(QueueUrl=default_url)["Messages"]
        assert [m["Body"] for m in got] == ["for default"]
        vt = account_client.get_queue_attributes(QueueUrl=other_url, AttributeNames=["VisibilityTimeout"])
        assert vt["Attributes"]["VisibilityTimeout"] == "20"
    finally:
        sqs.delete_queue(QueueUrl=default_url)


def test_non_twelve_digit_access_key_uses_default_account(other_key_client, sqs):
    name = f"dflt-{uuid.uuid4().hex[:12]}"
    url = other_key_client.create_queue(QueueName=name)["QueueUrl"]
    try:
        assert url.endswith(f"/000000000000/{name}")
        assert sqs.get_queue_url(QueueName=name)["QueueUrl"] == url
    finally:
        sqs.delete_queue(QueueUrl=url)
