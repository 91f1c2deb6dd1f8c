"""The ``--fidelity`` switch over both wire protocols (docs/behaviour.md sections 2.4, 2.14, 7.4, 9).

``strict_server`` (``--fidelity strict --clock manual``) enforces the two 60-second AWS rules: no re-creating a
deleted queue's name (QueueDeletedRecently) and one PurgeQueue per queue per minute (PurgeQueueInProgress, 403).
The default (relaxed) ``manual_server`` allows both at once.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"].get("Message", "")


def http_status(exc: pytest.ExceptionInfo[ClientError]) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def names() -> Any:
    return lambda prefix="fid": f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def cleanup_strict(strict_sqs: Any) -> Any:
    urls: list[str] = []
    yield urls
    for url in urls:
        try:
            strict_sqs.delete_queue(QueueUrl=url)
        except ClientError:
            pass


@pytest.fixture
def cleanup_manual(manual_sqs: Any) -> Any:
    urls: list[str] = []
    yield urls
    for url in urls:
        try:
            manual_sqs.delete_queue(QueueUrl=url)
        except ClientError:
            pass


# --- strict: QueueDeletedRecently ------------------------------------------------------------------------------


def test_strict_recreating_a_deleted_queue_within_60_s_is_queue_deleted_recently(
    strict_sqs, strict_server, names, cleanup_strict
):
    name = names()
    url = strict_sqs.create_queue(QueueName=name)["QueueUrl"]
    strict_sqs.delete_queue(QueueUrl=url)
    with pytest.raises(ClientError) as exc:
        strict_sqs.create_queue(QueueName=name)
    assert error_code(exc) == "AWS.SimpleQueueService.QueueDeletedRecently"
    assert http_status(exc) == 400
    strict_server.advance(59.9)
    with pytest.raises(ClientError) as exc:
        strict_sqs.create_queue(QueueName=name)
    assert error_code(exc) == "AWS.SimpleQueueService.QueueDeletedRecently"
    strict_server.advance(0.1)
    again = strict_sqs.create_queue(QueueName=name)["QueueUrl"]
    cleanup_strict.append(again)
    assert again == url


def test_strict_recreated_queue_is_a_new_empty_queue(strict_sqs, strict_server, names, cleanup_strict):
    name = names()
    url = strict_sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "99"})["QueueUrl"]
    strict_sqs.send_message(QueueUrl=url, MessageBody="old")
    strict_sqs.delete_queue(QueueUrl=url)
    strict_server.advance(60)
    cleanup_strict.append(strict_sqs.create_queue(QueueName=name)["QueueUrl"])
    got = strict_sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert got["VisibilityTimeout"] == "30"
    assert got["ApproximateNumberOfMessages"] == "0"


def test_strict_other_names_can_be_created_right_after_a_delete(strict_sqs, names, cleanup_strict):
    url = strict_sqs.create_queue(QueueName=names())["QueueUrl"]
    strict_sqs.delete_queue(QueueUrl=url)
    cleanup_strict.append(strict_sqs.create_queue(QueueName=names())["QueueUrl"])


def test_strict_deleted_queue_does_not_exist_during_the_60_s(strict_sqs, names):
    name = names()
    url = strict_sqs.create_queue(QueueName=name)["QueueUrl"]
    strict_sqs.delete_queue(QueueUrl=url)
    with pytest.raises(ClientError) as exc:
        strict_sqs.get_queue_url(QueueName=name)
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


# --- strict: PurgeQueueInProgress ------------------------------------------------------------------------------


def test_strict_second_purge_within_60_s_is_purge_queue_in_progress(strict_sqs, strict_server, strict_make_queue):
    url = strict_make_queue()
    name = url.rsplit("/", 1)[1]
    strict_sqs.purge_queue(QueueUrl=url)
    with pytest.raises(ClientError) as exc:
        strict_sqs.purge_queue(QueueUrl=url)
    assert error_code(exc) == "AWS.SimpleQueueService.PurgeQueueInProgress"
    assert http_status(exc) == 403
    assert f"Only one PurgeQueue operation on {name} is allowed every 60 seconds." in error_message(exc)
    strict_server.advance(59.9)
    with pytest.raises(ClientError) as exc:
        strict_sqs.purge_queue(QueueUrl=url)
    assert error_code(exc) == "AWS.SimpleQueueService.PurgeQueueInProgress"
    strict_server.advance(0.1)
    strict_sqs.purge_queue(QueueUrl=url)


def test_strict_purge_limit_is_per_queue(strict_sqs, strict_make_queue):
    first, second = strict_make_queue(), strict_make_queue()
    strict_sqs.purge_queue(QueueUrl=first)
    strict_sqs.purge_queue(QueueUrl=second)


def test_strict_rejected_purge_keeps_new_messages(strict_sqs, strict_make_queue):
    url = strict_make_queue()
    strict_sqs.purge_queue(QueueUrl=url)
    strict_sqs.send_message(QueueUrl=url, MessageBody="after the first purge")
    with pytest.raises(ClientError):
        strict_sqs.purge_queue(QueueUrl=url)
    messages = strict_sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    assert [m["Body"] for m in messages] == ["after the first purge"]


# --- relaxed (default) -----------------------------------------------------------------------------------------


def test_relaxed_recreating_a_deleted_queue_is_allowed_at_once(manual_sqs, names, cleanup_manual):
    name = names()
    url = manual_sqs.create_queue(QueueName=name)["QueueUrl"]
    manual_sqs.delete_queue(QueueUrl=url)
    again = manual_sqs.create_queue(QueueName=name)["QueueUrl"]
    cleanup_manual.append(again)
    assert again == url


def test_relaxed_repeated_purge_is_allowed_at_once(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.purge_queue(QueueUrl=url)
    manual_sqs.purge_queue(QueueUrl=url)
    manual_sqs.send_message(QueueUrl=url, MessageBody="x")
    manual_sqs.purge_queue(QueueUrl=url)
    assert manual_sqs.receive_message(QueueUrl=url).get("Messages", []) == []
