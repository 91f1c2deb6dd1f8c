"""Delay queues, message timers and message retention, on the manual clock (docs/behaviour.md 4.2, 4.3)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def receive(sqs, url: str, **kwargs) -> list[dict]:
    return sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, **kwargs).get("Messages", [])


def counts(sqs, url: str) -> tuple[int, int, int]:
    """(visible, in flight, delayed)"""
    names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
    return tuple(int(got[n]) for n in names)  # type: ignore[return-value]


# --- delay -------------------------------------------------------------------------------------------------------


def test_queue_delay_hides_new_messages_until_it_ends(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(DelaySeconds="10")
    manual_sqs.send_message(QueueUrl=url, MessageBody="later")
    assert counts(manual_sqs, url) == (0, 0, 1)
    assert receive(manual_sqs, url) == []
    manual_server.advance(9.9)
    assert receive(manual_sqs, url) == []
    assert counts(manual_sqs, url) == (0, 0, 1)
    manual_server.advance(0.1)
    assert counts(manual_sqs, url) == (1, 0, 0)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["later"]


def test_message_delay_seconds(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="timer", DelaySeconds=5)
    manual_sqs.send_message(QueueUrl=url, MessageBody="now")
    assert counts(manual_sqs, url) == (1, 0, 1)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["now"]
    manual_server.advance(4.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["timer"]


def test_message_delay_overrides_queue_delay(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(DelaySeconds="100")
    manual_sqs.send_message(QueueUrl=url, MessageBody="zero", DelaySeconds=0)
    manual_sqs.send_message(QueueUrl=url, MessageBody="five", DelaySeconds=5)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["zero"]
    manual_server.advance(5)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["five"]


def test_message_delay_of_900_is_accepted(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="max", DelaySeconds=900)
    manual_server.advance(899.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["max"]


@pytest.mark.parametrize("value", [901, -1])
def test_message_delay_out_of_range_is_invalid_parameter_value(manual_sqs, manual_make_queue, value):
    url = manual_make_queue()
    with pytest.raises(ClientError) as exc:
        manual_sqs.send_message(QueueUrl=url, MessageBody="x", DelaySeconds=value)
    assert error_code(exc) == "InvalidParameterValue"
    assert counts(manual_sqs, url) == (0, 0, 0)


def test_batch_entry_delay_seconds(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    got = manual_sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "now", "MessageBody": "now"},
            {"Id": "later", "MessageBody": "later", "DelaySeconds": 20},
        ],
    )
    assert {e["Id"] for e in got["Successful"]} == {"now", "later"}
    assert counts(manual_sqs, url) == (1, 0, 1)
    manual_server.advance(20)
    assert counts(manual_sqs, url) == (2, 0, 0)


def test_batch_entry_delay_out_of_range_fails_that_entry(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    got = manual_sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok", "MessageBody": "ok"},
            {"Id": "bad", "MessageBody": "bad", "DelaySeconds": 901},
        ],
    )  # the bad entry fails on its own; the rest of the batch is sent
    assert [s["Id"] for s in got["Successful"]] == ["ok"]
    assert [f["Id"] for f in got["Failed"]] == ["bad"]
    assert got["Failed"][0]["Code"] == "InvalidParameterValue"
    assert counts(manual_sqs, url) == (1, 0, 0)


def test_changing_queue_delay_does_not_affect_sent_messages(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(DelaySeconds="60")
    manual_sqs.send_message(QueueUrl=url, MessageBody="sent with 60")
    manual_sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "0"})
    assert receive(manual_sqs, url) == []
    assert counts(manual_sqs, url) == (0, 0, 1)
    manual_sqs.send_message(QueueUrl=url, MessageBody="sent with 0")
    manual_sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "900"})
    [now] = receive(manual_sqs, url)
    assert now["Body"] == "sent with 0"
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=now["ReceiptHandle"])
    manual_server.advance(60)
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["sent with 60"]


def test_delayed_message_can_be_received_after_delay_then_follows_visibility(
    manual_sqs, manual_server, manual_make_queue
):
    url = manual_make_queue(DelaySeconds="10", VisibilityTimeout="5")
    manual_sqs.send_message(QueueUrl=url, MessageBody="d")
    manual_server.advance(10)
    assert len(receive(manual_sqs, url)) == 1
    assert counts(manual_sqs, url) == (0, 1, 0)
    manual_server.advance(5)  # the queue delay does not apply again after a receive
    assert len(receive(manual_sqs, url)) == 1


# --- retention ---------------------------------------------------------------------------------------------------


def test_message_expires_after_retention_period(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(MessageRetentionPeriod="60")
    manual_sqs.send_message(QueueUrl=url, MessageBody="short-lived")
    manual_server.advance(59)
    assert counts(manual_sqs, url) == (1, 0, 0)
    manual_server.advance(1)
    assert counts(manual_sqs, url) == (0, 0, 0)
    assert receive(manual_sqs, url) == []


def test_retention_counts_from_send_even_while_in_flight(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(MessageRetentionPeriod="60")
    manual_sqs.send_message(QueueUrl=url, MessageBody="in flight")
    manual_server.advance(30)
    assert len(receive(manual_sqs, url, VisibilityTimeout=600)) == 1
    assert counts(manual_sqs, url) == (0, 1, 0)
    manual_server.advance(30)
    assert counts(manual_sqs, url) == (0, 0, 0)
    manual_server.advance(600)
    assert receive(manual_sqs, url) == []


def test_retention_of_delayed_message_counts_from_send(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(MessageRetentionPeriod="60")
    manual_sqs.send_message(QueueUrl=url, MessageBody="slow", DelaySeconds=30)
    manual_server.advance(30)
    assert counts(manual_sqs, url) == (1, 0, 0)
    manual_server.advance(30)
    assert counts(manual_sqs, url) == (0, 0, 0)


def test_default_retention_keeps_messages_four_days(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="durable")
    manual_server.advance(345600 - 1)
    assert counts(manual_sqs, url) == (1, 0, 0)
    manual_server.advance(1)
    assert counts(manual_sqs, url) == (0, 0, 0)
