"""Visibility timeout, ChangeMessageVisibility(Batch) and receive-side system attributes, on the manual clock
(docs/behaviour.md section 4.1, 2.12, 2.13, 4.8; the AWS "Amazon SQS visibility timeout" page).
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

PLAIN_SYSTEM_ATTRIBUTES = {"ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"}


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def receive(sqs, url: str, **kwargs) -> list[dict]:
    return sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, **kwargs).get("Messages", [])


def receive_one(sqs, url: str, **kwargs) -> dict:
    messages = receive(sqs, url, **kwargs)
    assert len(messages) == 1, messages
    return messages[0]


def sent_one(sqs, url: str, body: str = "payload") -> str:
    return sqs.send_message(QueueUrl=url, MessageBody=body)["MessageId"]


def system_names(protocol: str, names: list[str]) -> dict:
    # boto3 1.28.64's query model has only the older AttributeNames member
    return {"MessageSystemAttributeNames": names} if protocol == "json" else {"AttributeNames": names}


def queue_attr(sqs, url: str, name: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[name])["Attributes"][name]


# --- the timeout itself ------------------------------------------------------------------------------------------


def test_queue_default_visibility_timeout_is_30_seconds(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    mid = sent_one(manual_sqs, url)
    assert receive_one(manual_sqs, url)["MessageId"] == mid
    manual_server.advance(29.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    assert receive_one(manual_sqs, url)["MessageId"] == mid


def test_queue_visibility_timeout_attribute_is_used(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(VisibilityTimeout="7")
    sent_one(manual_sqs, url)
    receive_one(manual_sqs, url)
    manual_server.advance(6.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)


def test_receive_visibility_timeout_applies_to_that_receive_only(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    receive_one(manual_sqs, url, VisibilityTimeout=5)
    assert queue_attr(manual_sqs, url, "VisibilityTimeout") == "30"
    manual_server.advance(4.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)  # this receive uses the queue's 30 s again
    manual_server.advance(29.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)


def test_receive_visibility_timeout_zero_leaves_message_visible(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    mid = sent_one(manual_sqs, url)
    receive_one(manual_sqs, url, VisibilityTimeout=0)
    assert receive_one(manual_sqs, url, VisibilityTimeout=0)["MessageId"] == mid


def test_every_receive_returns_a_new_receipt_handle(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handles = {receive_one(manual_sqs, url, VisibilityTimeout=0)["ReceiptHandle"] for _ in range(3)}
    assert len(handles) == 3


def test_changing_queue_visibility_timeout_does_not_touch_in_flight_messages(
    manual_sqs, manual_server, manual_make_queue
):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    receive_one(manual_sqs, url)
    manual_sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "300"})
    manual_server.advance(30)
    receive_one(manual_sqs, url)  # still the 30 s it was received with
    manual_server.advance(299.9)
    assert receive(manual_sqs, url) == []  # the new receive uses the new 300 s
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)


# --- ChangeMessageVisibility ---------------------------------------------------------------------------------


def test_change_visibility_counts_from_the_call_not_added(manual_sqs, manual_server, manual_make_queue):
    # the AWS example: queue timeout 60 s, after 15 s change to 10 s -> visible again at 25 s (not at 70 s)
    url = manual_make_queue(VisibilityTimeout="60")
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_server.advance(15)
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=10)
    manual_server.advance(9.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)


def test_change_visibility_can_extend(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_server.advance(20)
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=100)
    manual_server.advance(99.9)  # well past the original 30 s
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)


def test_change_visibility_is_not_remembered_for_the_next_receipt(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=100)
    manual_server.advance(100)
    receive_one(manual_sqs, url)  # second receipt: queue default 30 s again
    manual_server.advance(30)
    receive_one(manual_sqs, url)


def test_change_visibility_to_zero_makes_message_visible_at_once(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    mid = sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    assert receive(manual_sqs, url) == []
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    assert receive_one(manual_sqs, url)["MessageId"] == mid


def test_twelve_hour_maximum_counts_from_the_receive(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_server.advance(5)
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=43195)
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=43200)
    assert error_code(exc) == "InvalidParameterValue"


def test_extending_does_not_reset_the_twelve_hour_maximum(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=36000)
    manual_server.advance(36000 - 10)  # 10 h later, 2 h of the cap left
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=7200)
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=7300)
    assert error_code(exc) == "InvalidParameterValue"


def test_change_visibility_after_expiry_succeeds_and_hides_again(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url, VisibilityTimeout=10)["ReceiptHandle"]
    manual_server.advance(10)  # visible again, but not re-received
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=20)
    assert receive(manual_sqs, url) == []
    manual_server.advance(19.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    receive_one(manual_sqs, url)


def test_change_visibility_of_deleted_message_is_invalid_parameter_value(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=10)
    assert error_code(exc) == "InvalidParameterValue"


def test_change_visibility_with_garbage_handle_is_receipt_handle_invalid(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle="garbage", VisibilityTimeout=10)
    assert error_code(exc) == "ReceiptHandleIsInvalid"


@pytest.mark.parametrize("value", [-1, 43201])
def test_change_visibility_out_of_range_is_invalid_parameter_value(manual_sqs, manual_make_queue, value):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=value)
    assert error_code(exc) == "InvalidParameterValue"


def test_change_visibility_on_unknown_queue(manual_sqs, manual_server):
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility(
            QueueUrl=f"{manual_server.endpoint_url}/000000000000/no-such-queue-cmv",
            ReceiptHandle="garbage",
            VisibilityTimeout=1,
        )
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


# --- ChangeMessageVisibilityBatch ------------------------------------------------------------------------------


def test_change_visibility_batch_changes_every_entry(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    for i in range(3):
        sent_one(manual_sqs, url, f"m{i}")
    messages = receive(manual_sqs, url)
    assert len(messages) == 3
    got = manual_sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "zero", "ReceiptHandle": messages[0]["ReceiptHandle"], "VisibilityTimeout": 0},
            {"Id": "long", "ReceiptHandle": messages[1]["ReceiptHandle"], "VisibilityTimeout": 100},
            {"Id": "short", "ReceiptHandle": messages[2]["ReceiptHandle"], "VisibilityTimeout": 5},
        ],
    )
    assert {e["Id"] for e in got["Successful"]} == {"zero", "long", "short"}
    assert got.get("Failed", []) == []
    assert [m["MessageId"] for m in receive(manual_sqs, url)] == [messages[0]["MessageId"]]
    manual_server.advance(5)
    assert [m["MessageId"] for m in receive(manual_sqs, url)] == [messages[2]["MessageId"]]
    manual_server.advance(95)
    assert messages[1]["MessageId"] in [m["MessageId"] for m in receive(manual_sqs, url)]


def test_change_visibility_batch_garbage_handle_fails_only_that_entry(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    message = receive_one(manual_sqs, url)
    got = manual_sqs.change_message_visibility_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "good", "ReceiptHandle": message["ReceiptHandle"], "VisibilityTimeout": 0},
            {"Id": "bad", "ReceiptHandle": "garbage", "VisibilityTimeout": 0},
        ],
    )
    assert [e["Id"] for e in got["Successful"]] == ["good"]
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in got["Failed"]] == [("bad", "ReceiptHandleIsInvalid", True)]
    receive_one(manual_sqs, url)


def test_change_visibility_batch_with_eleven_entries_is_too_many(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[{"Id": f"e{i}", "ReceiptHandle": "h", "VisibilityTimeout": 0} for i in range(11)],
        )
    assert error_code(exc) == "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"


def test_change_visibility_batch_with_no_entries_is_empty_batch(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility_batch(QueueUrl=url, Entries=[])
    assert error_code(exc) == "AWS.SimpleQueueService.EmptyBatchRequest"


def test_change_visibility_batch_with_duplicate_ids_is_not_distinct(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "x", "ReceiptHandle": "h1", "VisibilityTimeout": 0},
                {"Id": "x", "ReceiptHandle": "h2", "VisibilityTimeout": 0},
            ],
        )
    assert error_code(exc) == "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"


def test_change_visibility_batch_with_invalid_id(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    with pytest.raises(ClientError) as exc:
        manual_sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "not valid!", "ReceiptHandle": "h1", "VisibilityTimeout": 0},
            ],
        )
    assert error_code(exc) == "AWS.SimpleQueueService.InvalidBatchEntryId"


# --- system attributes on receive ------------------------------------------------------------------------------


def test_all_system_attributes_of_a_plain_message(manual_sqs, manual_make_queue, protocol):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    msg = receive_one(manual_sqs, url, **system_names(protocol, ["All"]))
    assert set(msg["Attributes"]) == PLAIN_SYSTEM_ATTRIBUTES
    assert msg["Attributes"]["SenderId"]


def test_all_via_deprecated_attribute_names(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    msg = receive_one(manual_sqs, url, AttributeNames=["All"])
    assert set(msg["Attributes"]) == PLAIN_SYSTEM_ATTRIBUTES


def test_no_system_attributes_unless_asked(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    assert "Attributes" not in receive_one(manual_sqs, url)


def test_single_system_attribute_is_returned_alone(manual_sqs, manual_make_queue, protocol):
    url = manual_make_queue()
    sent_one(manual_sqs, url)
    msg = receive_one(manual_sqs, url, **system_names(protocol, ["SentTimestamp"]))
    assert set(msg["Attributes"]) == {"SentTimestamp"}


def test_system_attribute_timestamps_and_receive_count(manual_sqs, manual_server, manual_make_queue, protocol):
    url = manual_make_queue()
    sent_at = manual_server.now_ms()
    sent_one(manual_sqs, url)
    manual_server.advance(3)
    first_receive_at = manual_server.now_ms()
    first = receive_one(manual_sqs, url, VisibilityTimeout=1, **system_names(protocol, ["All"]))["Attributes"]
    assert first["ApproximateReceiveCount"] == "1"
    assert int(first["SentTimestamp"]) == sent_at
    assert int(first["ApproximateFirstReceiveTimestamp"]) == first_receive_at
    manual_server.advance(5)
    second = receive_one(manual_sqs, url, VisibilityTimeout=1, **system_names(protocol, ["All"]))["Attributes"]
    assert second["ApproximateReceiveCount"] == "2"
    assert second["SentTimestamp"] == first["SentTimestamp"]
    assert second["ApproximateFirstReceiveTimestamp"] == first["ApproximateFirstReceiveTimestamp"]
    assert second["SenderId"] == first["SenderId"]
    manual_server.advance(1)
    third = receive_one(manual_sqs, url, **system_names(protocol, ["ApproximateReceiveCount"]))["Attributes"]
    assert third == {"ApproximateReceiveCount": "3"}
