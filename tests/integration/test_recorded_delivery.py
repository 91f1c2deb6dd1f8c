"""Delivery cases whose answers were recorded on AWS, over both wire protocols, on the manual clock.

- Standard queues: a receipt handle from an earlier receive of a message keeps working while the message exists
  (ChangeMessageVisibility and DeleteMessage, single and batch), and a message whose visibility timeout ran out is
  received before messages sent after it.
- FIFO queues: a message group is not locked as a whole; a receive takes a group's visible messages up to its
  first message still in flight, and a group a receive took messages from goes to the back of the rotation.

SQS Developer Guide, "Amazon SQS visibility timeout" and "FIFO delivery logic"; API Reference, DeleteMessage and
ChangeMessageVisibility. Where the guide is vaguer than the recordings, these tests follow the recordings.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def receive(sqs: Any, url: str, **kwargs: Any) -> list[dict[str, Any]]:
    kwargs.setdefault("MaxNumberOfMessages", 10)
    return list(sqs.receive_message(QueueUrl=url, **kwargs).get("Messages", []))


def bodies(messages: list[dict[str, Any]]) -> list[str]:
    return [m["Body"] for m in messages]


def counts(sqs: Any, url: str) -> tuple[int, int]:
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return int(got[names[0]]), int(got[names[1]])


def send_fifo(sqs: Any, url: str, body: str, group: str) -> None:
    sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=uuid.uuid4().hex)


# --- standard queues: older receipt handles ----------------------------------------------------------------------


def test_change_visibility_with_the_handle_of_an_earlier_receive(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="m")
    [first] = receive(manual_sqs, url, VisibilityTimeout=0)
    [second] = receive(manual_sqs, url, VisibilityTimeout=3)
    assert second["ReceiptHandle"] != first["ReceiptHandle"]
    assert counts(manual_sqs, url) == (0, 1)
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first["ReceiptHandle"], VisibilityTimeout=0)
    [again] = receive(manual_sqs, url)
    assert again["MessageId"] == first["MessageId"]


def test_change_visibility_batch_with_the_handle_of_an_earlier_receive(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="m")
    [first] = receive(manual_sqs, url, VisibilityTimeout=0)
    receive(manual_sqs, url, VisibilityTimeout=3)
    answer = manual_sqs.change_message_visibility_batch(
        QueueUrl=url, Entries=[{"Id": "old", "ReceiptHandle": first["ReceiptHandle"], "VisibilityTimeout": 60}]
    )
    assert [e["Id"] for e in answer["Successful"]] == ["old"] and not answer.get("Failed")
    manual_server.advance(3)  # the second receive's 3 s would have run out; the change made it 60 s from the call
    assert receive(manual_sqs, url) == []
    manual_server.advance(57)
    assert bodies(receive(manual_sqs, url)) == ["m"]


def test_delete_with_the_handle_of_an_earlier_receive_deletes(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="gone")
    [old] = receive(manual_sqs, url, VisibilityTimeout=5)
    manual_server.advance(5)
    [new] = receive(manual_sqs, url, VisibilityTimeout=5)
    assert new["MessageId"] == old["MessageId"] and new["ReceiptHandle"] != old["ReceiptHandle"]
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=old["ReceiptHandle"])
    assert counts(manual_sqs, url) == (0, 0)
    manual_server.advance(5)
    assert receive(manual_sqs, url) == []
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=new["ReceiptHandle"])  # already gone: still success


def test_delete_batch_with_the_handle_of_an_earlier_receive_deletes(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="gone")
    [old] = receive(manual_sqs, url, VisibilityTimeout=0)
    receive(manual_sqs, url, VisibilityTimeout=5)
    answer = manual_sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": "old", "ReceiptHandle": old["ReceiptHandle"]}]
    )
    assert [e["Id"] for e in answer["Successful"]] == ["old"] and not answer.get("Failed")
    manual_server.advance(5)
    assert receive(manual_sqs, url) == [] and counts(manual_sqs, url) == (0, 0)


def test_change_visibility_of_a_message_deleted_through_an_older_handle_fails(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="m")
    [old] = receive(manual_sqs, url, VisibilityTimeout=0)
    [new] = receive(manual_sqs, url)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=old["ReceiptHandle"])
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=new["ReceiptHandle"], VisibilityTimeout=5)
    assert exc.value.response["Error"]["Code"] == "InvalidParameterValue"


# --- standard queues: order after a visibility timeout runs out --------------------------------------------------


def test_a_message_whose_timeout_ran_out_comes_before_a_newer_one(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="test1")
    assert bodies(receive(manual_sqs, url, VisibilityTimeout=3)) == ["test1"]
    manual_server.advance(1.5)
    manual_sqs.send_message(QueueUrl=url, MessageBody="test2")
    manual_server.advance(1.5)
    assert bodies(receive(manual_sqs, url, MaxNumberOfMessages=1)) == ["test1"]
    assert bodies(receive(manual_sqs, url, MaxNumberOfMessages=1)) == ["test2"]


def test_messages_visible_again_keep_send_order(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    for body in ("a", "b", "c", "d"):
        manual_sqs.send_message(QueueUrl=url, MessageBody=body)
    taken = receive(manual_sqs, url, MaxNumberOfMessages=3, VisibilityTimeout=10)
    assert bodies(taken) == ["a", "b", "c"]
    for message in reversed(taken):  # visible again newest first: the order of receives must not follow that
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
    assert bodies(receive(manual_sqs, url, VisibilityTimeout=0)) == ["a", "b", "c", "d"]


# --- FIFO queues: group visibility and rotation -----------------------------------------------------------------


@pytest.mark.parametrize("how", ["changed to 0", "changed to 1 s and ran out"])
def test_fifo_group_head_visible_again_while_the_next_is_in_flight(manual_sqs, manual_server, manual_make_queue, how):
    url = manual_make_queue(FifoQueue=True, VisibilityTimeout=30)
    for body, group in (("g1-m1", "g1"), ("g1-m2", "g1"), ("g2-m1", "g2")):
        send_fifo(manual_sqs, url, body, group)
    taken = receive(manual_sqs, url, MaxNumberOfMessages=2)
    assert bodies(taken) == ["g1-m1", "g1-m2"]
    handle = taken[0]["ReceiptHandle"]
    if how == "changed to 0":
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    else:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=1)
        manual_server.advance(1)
    assert bodies(receive(manual_sqs, url, MaxNumberOfMessages=3)) == ["g2-m1", "g1-m1"]


@pytest.mark.parametrize(("extended", "expected"), [("foo", []), ("bar", ["foo"]), ("baz", ["foo", "bar"])])
def test_fifo_receive_stops_at_the_groups_first_message_in_flight(
    manual_sqs, manual_server, manual_make_queue, extended, expected
):
    url = manual_make_queue(FifoQueue=True, VisibilityTimeout=1)
    for body in ("foo", "bar", "baz"):
        send_fifo(manual_sqs, url, body, "g")
    taken = {m["Body"]: m["ReceiptHandle"] for m in receive(manual_sqs, url)}
    assert sorted(taken) == ["bar", "baz", "foo"]
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=taken[extended], VisibilityTimeout=4)
    manual_server.advance(2.5)
    assert bodies(receive(manual_sqs, url)) == expected


def test_fifo_groups_taken_from_go_to_the_back(manual_sqs, manual_make_queue):
    url = manual_make_queue(FifoQueue=True)
    for body, group in (("g1-m1", "g1"), ("g2-m1", "g2"), ("g2-m2", "g2"), ("g3-m1", "g3"), ("g1-m2", "g1")):
        send_fifo(manual_sqs, url, body, group)
    assert bodies(receive(manual_sqs, url, MaxNumberOfMessages=3, VisibilityTimeout=0)) == ["g1-m1", "g1-m2", "g2-m1"]
    assert bodies(receive(manual_sqs, url, MaxNumberOfMessages=10, VisibilityTimeout=0)) == [
        "g3-m1",
        "g1-m1",
        "g1-m2",
        "g2-m1",
        "g2-m2",
    ]


def test_fifo_keeps_expiring_older_receipt_handles(manual_sqs, manual_make_queue):
    url = manual_make_queue(FifoQueue=True)
    send_fifo(manual_sqs, url, "m", "g")
    [old] = receive(manual_sqs, url, VisibilityTimeout=0)
    [new] = receive(manual_sqs, url, VisibilityTimeout=30)
    for call in (
        lambda: manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=old["ReceiptHandle"]),
        lambda: manual_sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=old["ReceiptHandle"], VisibilityTimeout=0
        ),
    ):
        with pytest.raises(ClientError) as exc:
            call()
        error = exc.value.response["Error"]
        assert error["Code"] == "InvalidParameterValue"
        assert error["Message"] == (
            f"Value {old['ReceiptHandle']} for parameter ReceiptHandle is invalid. "
            "Reason: The receipt handle has expired."
        )
    assert counts(manual_sqs, url) == (0, 1)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=new["ReceiptHandle"])
    assert counts(manual_sqs, url) == (0, 0)
