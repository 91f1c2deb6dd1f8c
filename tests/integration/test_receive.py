"""ReceiveMessage and long polling over both wire protocols (SQS-REFERENCE sections 2.9, 4.4).

Long-poll tests run against the manual-clock server: a waiting receive can only end because a message became
available or because the test advanced the clock past the wait, so the outcome never depends on real timing.
The blocking receive runs in a thread; the short real pauses only let the request reach the server before the
test acts (if the pause were too short, the assertions still hold or the test fails loudly - never flakes green).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

SETTLE_S = 0.4  # time for a long-poll request to reach the server and start waiting
JOIN_S = 15.0


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"].get("Message", "")


class Receiver(threading.Thread):
    """A ReceiveMessage call running in the background; ``result`` / ``error`` once it ends."""

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.kwargs = kwargs
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.client.receive_message(**self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            self.error = exc

    def messages(self) -> list[dict[str, Any]]:
        assert self.error is None, self.error
        assert self.result is not None
        return self.result.get("Messages", [])


def start_receiver(client: Any, **kwargs: Any) -> Receiver:
    receiver = Receiver(client, **kwargs)
    receiver.start()
    time.sleep(SETTLE_S)
    return receiver


def release(server: Any, *receivers: Receiver) -> None:
    """Unblock any receiver still waiting (advance past every possible wait) so no thread outlives its test."""
    for _ in range(5):
        if not any(r.is_alive() for r in receivers):
            return
        server.advance(20)
        for r in receivers:
            r.join(2)


# --- short polling ---------------------------------------------------------------------------------------------


def test_receive_from_empty_queue_returns_no_messages_key(sqs, make_queue):
    url = make_queue()
    got = sqs.receive_message(QueueUrl=url)
    assert "Messages" not in got


def test_receive_returns_one_message_by_default(sqs, make_queue):
    url = make_queue()
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")
    assert len(sqs.receive_message(QueueUrl=url)["Messages"]) == 1


def test_receive_returns_up_to_max_number_of_messages(sqs, make_queue):
    url = make_queue()
    for i in range(12):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(first) == 10
    rest = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(rest) == 2
    assert len({m["MessageId"] for m in first + rest}) == 12


def test_received_message_is_not_received_again_while_in_flight(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="once")
    assert len(sqs.receive_message(QueueUrl=url)["Messages"]) == 1
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


@pytest.mark.parametrize("value", [0, 11, -1])
def test_max_number_of_messages_out_of_range_is_invalid(sqs, make_queue, value):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=value)
    assert error_code(exc) == "InvalidParameterValue"
    assert error_message(exc) == (
        f"Value {value} for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."
    )


@pytest.mark.parametrize("value", [21, -1])
def test_wait_time_seconds_out_of_range_is_invalid(sqs, make_queue, value):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.receive_message(QueueUrl=url, WaitTimeSeconds=value)
    assert error_code(exc) == "InvalidParameterValue"
    assert error_message(exc) == (
        f"Value {value} for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."
    )


@pytest.mark.parametrize("value", [-1, 43201])
def test_receive_visibility_timeout_out_of_range_is_invalid(sqs, make_queue, value):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.receive_message(QueueUrl=url, VisibilityTimeout=value)
    assert error_code(exc) == "InvalidParameterValue"


def test_receive_from_unknown_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.receive_message(QueueUrl=f"{server.endpoint_url}/000000000000/never-created-queue-xyz")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


def test_wait_time_20_with_message_available_returns_it(sqs, make_queue):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="ready")
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20)
    assert [m["Body"] for m in got["Messages"]] == ["ready"]


# --- long polling (manual clock) -----------------------------------------------------------------------------


def test_long_poll_returns_as_soon_as_a_message_is_sent(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    receiver = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        assert receiver.is_alive(), "the long poll returned before any message existed"
        manual_sqs.send_message(QueueUrl=url, MessageBody="wake up")
        receiver.join(JOIN_S)
        assert not receiver.is_alive(), "the long poll was not woken by the send"
        assert [m["Body"] for m in receiver.messages()] == ["wake up"]
    finally:
        release(manual_server, receiver)


def test_long_poll_returns_as_soon_as_a_delay_ends(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=10)
    receiver = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_server.advance(9)
        receiver.join(SETTLE_S)
        assert receiver.is_alive(), "the long poll returned before the delay ended"
        manual_server.advance(1)
        receiver.join(JOIN_S)
        assert not receiver.is_alive()
        assert [m["Body"] for m in receiver.messages()] == ["delayed"]
    finally:
        release(manual_server, receiver)


def test_long_poll_returns_as_soon_as_a_visibility_timeout_expires(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="again")
    first = manual_sqs.receive_message(QueueUrl=url, VisibilityTimeout=5)["Messages"][0]
    receiver = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20,
                              AttributeNames=["ApproximateReceiveCount"])
    try:
        manual_server.advance(4)
        receiver.join(SETTLE_S)
        assert receiver.is_alive()
        manual_server.advance(1)
        receiver.join(JOIN_S)
        assert not receiver.is_alive()
        [msg] = receiver.messages()
        assert msg["MessageId"] == first["MessageId"]
        assert msg["Attributes"]["ApproximateReceiveCount"] == "2"
    finally:
        release(manual_server, receiver)


def test_empty_long_poll_returns_empty_after_the_wait(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    receiver = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_server.advance(19)
        receiver.join(SETTLE_S)
        assert receiver.is_alive(), "the long poll ended before its wait time"
        manual_server.advance(1)
        receiver.join(JOIN_S)
        assert not receiver.is_alive(), "the long poll did not end after its wait time"
        assert receiver.messages() == []
    finally:
        release(manual_server, receiver)


def test_queue_receive_wait_time_is_used_when_request_omits_it(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(ReceiveMessageWaitTimeSeconds="20")
    receiver = start_receiver(manual_sqs, QueueUrl=url)
    try:
        assert receiver.is_alive(), "the receive did not long-poll with the queue's wait time"
        manual_server.advance(20)
        receiver.join(JOIN_S)
        assert not receiver.is_alive()
        assert receiver.messages() == []
    finally:
        release(manual_server, receiver)


def test_queue_wait_time_also_wakes_on_send(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(ReceiveMessageWaitTimeSeconds="10")
    receiver = start_receiver(manual_sqs, QueueUrl=url)
    try:
        assert receiver.is_alive()
        manual_sqs.send_message(QueueUrl=url, MessageBody="hi")
        receiver.join(JOIN_S)
        assert [m["Body"] for m in receiver.messages()] == ["hi"]
    finally:
        release(manual_server, receiver)


def test_request_wait_time_zero_overrides_queue_wait_time(manual_sqs, manual_make_queue):
    url = manual_make_queue(ReceiveMessageWaitTimeSeconds="20")
    # with the manual clock a long poll could never end on its own: returning at all proves it short-polled
    got = manual_sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    assert "Messages" not in got


def test_long_poll_waiters_are_served_in_arrival_order(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    first = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    second = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        assert first.is_alive() and second.is_alive()
        manual_sqs.send_message(QueueUrl=url, MessageBody="one")
        first.join(JOIN_S)
        assert not first.is_alive(), "the first waiter was not served first"
        assert [m["Body"] for m in first.messages()] == ["one"]
        second.join(SETTLE_S)
        assert second.is_alive(), "one message woke two waiters"
        manual_sqs.send_message(QueueUrl=url, MessageBody="two")
        second.join(JOIN_S)
        assert not second.is_alive()
        assert [m["Body"] for m in second.messages()] == ["two"]
    finally:
        release(manual_server, first, second)


def test_long_poll_returns_several_messages_up_to_max(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    receiver = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20, MaxNumberOfMessages=10)
    try:
        manual_sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": f"m{i}"} for i in range(3)]
        )
        receiver.join(JOIN_S)
        assert not receiver.is_alive()
        got = receiver.messages()
        assert 1 <= len(got) <= 3
        rest = manual_sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        assert sorted(m["Body"] for m in got + rest) == ["m0", "m1", "m2"]
    finally:
        release(manual_server, receiver)


def test_long_poll_on_one_queue_is_not_woken_by_another_queue(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    other = manual_make_queue()
    receiver = start_receiver(manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_sqs.send_message(QueueUrl=other, MessageBody="elsewhere")
        receiver.join(SETTLE_S)
        assert receiver.is_alive()
        manual_server.advance(20)
        receiver.join(JOIN_S)
        assert receiver.messages() == []
        assert manual_sqs.receive_message(QueueUrl=other)["Messages"][0]["Body"] == "elsewhere"
    finally:
        release(manual_server, receiver)
