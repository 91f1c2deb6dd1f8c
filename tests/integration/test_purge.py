"""PurgeQueue over both wire protocols (docs/behaviour.md section 2.14), timing on the manual clock."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def counts(sqs, url: str) -> tuple[int, int, int]:
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return tuple(int(got[n]) for n in names)  # type: ignore[return-value]


def test_purge_removes_visible_in_flight_and_delayed_messages(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="in flight")
    in_flight = manual_sqs.receive_message(QueueUrl=url)["Messages"][0]
    manual_sqs.send_message(QueueUrl=url, MessageBody="visible")
    manual_sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=60)
    assert counts(manual_sqs, url) == (1, 1, 1)
    manual_sqs.purge_queue(QueueUrl=url)
    assert counts(manual_sqs, url) == (0, 0, 0)
    manual_server.advance(61)  # past the delay and the visibility timeout
    assert "Messages" not in manual_sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    assert counts(manual_sqs, url) == (0, 0, 0)
    # the old receipt handle is accepted (a handle of a message that is gone deletes nothing and succeeds)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=in_flight["ReceiptHandle"])
    assert counts(manual_sqs, url) == (0, 0, 0)


def test_queue_accepts_messages_after_purge(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="old")
    sqs.purge_queue(QueueUrl=url)
    sqs.send_message(QueueUrl=url, MessageBody="new")
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in got] == ["new"]


def test_purge_empty_queue_succeeds(sqs, make_queue):
    url = make_queue()
    sqs.purge_queue(QueueUrl=url)
    assert counts(sqs, url) == (0, 0, 0)


def test_purge_keeps_queue_attributes(sqs, make_queue):
    url = make_queue(VisibilityTimeout="77")
    sqs.send_message(QueueUrl=url, MessageBody="x")
    sqs.purge_queue(QueueUrl=url)
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    assert got == {"VisibilityTimeout": "77"}


def test_purge_unknown_queue_is_non_existent_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.purge_queue(QueueUrl=f"{server.endpoint_url}/000000000000/no-such-queue-purge")
    assert exc.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
