"""DeleteMessage and DeleteMessageBatch over both wire protocols, timing on the manual clock
(docs/behaviour.md sections 2.10, 2.11, 4.1, 4.9).
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def receive(sqs, url: str, **kwargs) -> list[dict]:
    return sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, **kwargs).get("Messages", [])


def receive_one(sqs, url: str, **kwargs) -> dict:
    messages = receive(sqs, url, **kwargs)
    assert len(messages) == 1, messages
    return messages[0]


def counts(sqs, url: str) -> tuple[int, int, int]:
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return tuple(int(got[n]) for n in names)  # type: ignore[return-value]


def test_deleted_message_is_gone(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="bye")
    handle = receive_one(manual_sqs, url)["ReceiptHandle"]
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    assert counts(manual_sqs, url) == (0, 0, 0)
    manual_server.advance(30)
    assert receive(manual_sqs, url) == []


def test_delete_only_removes_that_message(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="keep")
    sqs.send_message(QueueUrl=url, MessageBody="drop")
    messages = receive(sqs, url, VisibilityTimeout=0)
    assert len(messages) == 2
    drop = next(m for m in messages if m["Body"] == "drop")
    sqs.delete_message(QueueUrl=url, ReceiptHandle=drop["ReceiptHandle"])
    assert [m["Body"] for m in receive(sqs, url)] == ["keep"]


def test_delete_twice_with_same_handle_succeeds(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="twice")
    handle = receive_one(sqs, url)["ReceiptHandle"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)


def test_delete_after_visibility_timeout_expired_succeeds_and_removes(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="late")
    handle = receive_one(manual_sqs, url, VisibilityTimeout=5)["ReceiptHandle"]
    manual_server.advance(5)
    assert counts(manual_sqs, url) == (1, 0, 0)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    assert counts(manual_sqs, url) == (0, 0, 0)
    assert receive(manual_sqs, url) == []


def test_delete_with_latest_handle_while_in_flight(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="x")
    receive_one(manual_sqs, url, VisibilityTimeout=0)
    latest = receive_one(manual_sqs, url)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=latest["ReceiptHandle"])
    assert counts(manual_sqs, url) == (0, 0, 0)


def test_delete_with_garbage_handle_is_receipt_handle_invalid(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage")
    assert error_code(exc) == "ReceiptHandleIsInvalid"


def test_delete_on_unknown_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.delete_message(QueueUrl=f"{server.endpoint_url}/000000000000/no-such-queue-del", ReceiptHandle="garbage")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


# --- DeleteMessageBatch ----------------------------------------------------------------------------------------


def test_delete_message_batch_deletes_every_entry(sqs, make_queue):
    url = make_queue()
    for i in range(4):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")
    messages = receive(sqs, url)
    assert len(messages) == 4
    got = sqs.delete_message_batch(
        QueueUrl=url, Entries=[{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
    )
    assert {e["Id"] for e in got["Successful"]} == {"d0", "d1", "d2", "d3"}
    assert got.get("Failed", []) == []
    assert counts(sqs, url) == (0, 0, 0)


def test_delete_message_batch_garbage_handle_fails_only_that_entry(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="real")
    message = receive_one(sqs, url)
    got = sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "good", "ReceiptHandle": message["ReceiptHandle"]},
            {"Id": "bad", "ReceiptHandle": "garbage"},
        ],
    )
    assert [e["Id"] for e in got["Successful"]] == ["good"]
    assert len(got["Failed"]) == 1
    failed = got["Failed"][0]
    assert failed["Id"] == "bad"
    assert failed["Code"] == "ReceiptHandleIsInvalid"
    assert failed["SenderFault"] is True
    assert counts(sqs, url) == (0, 0, 0)


def test_delete_message_batch_same_handle_twice_in_sequence_succeeds(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="x")
    handle = receive_one(sqs, url)["ReceiptHandle"]
    for _ in range(2):
        got = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "a", "ReceiptHandle": handle}])
        assert [e["Id"] for e in got["Successful"]] == ["a"]


def test_delete_message_batch_with_eleven_entries_is_too_many(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": f"e{i}", "ReceiptHandle": "h"} for i in range(11)])
    assert error_code(exc) == "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"


def test_delete_message_batch_with_no_entries_is_empty_batch(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.delete_message_batch(QueueUrl=url, Entries=[])
    assert error_code(exc) == "AWS.SimpleQueueService.EmptyBatchRequest"


def test_delete_message_batch_with_duplicate_ids_is_not_distinct(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.delete_message_batch(
            QueueUrl=url, Entries=[{"Id": "x", "ReceiptHandle": "h1"}, {"Id": "x", "ReceiptHandle": "h2"}]
        )
    assert error_code(exc) == "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"


@pytest.mark.parametrize("bad_id", ["invalid:id", "x" * 81, "x" * 100, ""], ids=["colon", "81", "100", "empty"])
def test_delete_message_batch_with_invalid_id(sqs, make_queue, bad_id):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": bad_id, "ReceiptHandle": "h"}])
    assert error_code(exc) == "AWS.SimpleQueueService.InvalidBatchEntryId"
