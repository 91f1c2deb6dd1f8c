"""ReceiveMessage and long polling over both wire protocols (docs/behaviour.md sections 2.9, 4.4).

Long-poll tests run against the manual-clock server: a waiting receive can only end because a message became
available or because the test advanced the clock past the wait, so the outcome never depends on real timing.
The blocking receive runs in a thread; the test acts only once the server counts it among the queue's waiting long
polls (the admin peek's ``waiting_long_polls``), and checks that count again right after each send or clock
advance: the server answers a long poll within the operation that made a message available, so the count has
already dropped when that call returns.
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import Receiver, start_long_poll, waiting_long_polls

pytestmark = pytest.mark.integration

JOIN_S = 15.0


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"].get("Message", "")


def start_receiver(server: Any, client: Any, **kwargs: Any) -> Receiver:
    """``client.receive_message(**kwargs)`` in a thread, returned once ``server`` has it waiting."""
    return start_long_poll(server.endpoint_url, client, **kwargs)


def waiting(server: Any, url: str) -> int:
    """How many long polls wait on queue ``url`` of ``server`` now."""
    return waiting_long_polls(server.endpoint_url, url)


def bodies(receiver: Receiver) -> list[str]:
    """The bodies a finished receiver got, in the order received; fails if it is still waiting."""
    receiver.join(JOIN_S)
    assert not receiver.is_alive(), "the server answered the long poll but the call did not return"
    return [m["Body"] for m in receiver.messages()]


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
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_sqs.send_message(QueueUrl=url, MessageBody="wake up")
        assert waiting(manual_server, url) == 0, "the send did not answer the waiting long poll"
        assert bodies(receiver) == ["wake up"]
    finally:
        release(manual_server, receiver)


def test_long_poll_returns_as_soon_as_a_delay_ends(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=10)
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_server.advance(9)
        assert waiting(manual_server, url) == 1, "the long poll returned before the delay ended"
        manual_server.advance(1)
        assert waiting(manual_server, url) == 0, "the end of the delay did not answer the long poll"
        assert bodies(receiver) == ["delayed"]
    finally:
        release(manual_server, receiver)


def test_long_poll_returns_as_soon_as_a_visibility_timeout_expires(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="again")
    first = manual_sqs.receive_message(QueueUrl=url, VisibilityTimeout=5)["Messages"][0]
    receiver = start_receiver(
        manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20, AttributeNames=["ApproximateReceiveCount"]
    )
    try:
        manual_server.advance(4)
        assert waiting(manual_server, url) == 1, "the long poll returned before the visibility timeout expired"
        manual_server.advance(1)
        assert waiting(manual_server, url) == 0, "the expiry did not answer the long poll"
        receiver.join(JOIN_S)
        assert not receiver.is_alive()
        [msg] = receiver.messages()
        assert msg["MessageId"] == first["MessageId"]
        assert msg["Attributes"]["ApproximateReceiveCount"] == "2"
    finally:
        release(manual_server, receiver)


def test_empty_long_poll_returns_empty_after_the_wait(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_server.advance(19)
        assert waiting(manual_server, url) == 1, "the long poll ended before its wait time"
        manual_server.advance(1)
        assert waiting(manual_server, url) == 0, "the long poll did not end after its wait time"
        assert bodies(receiver) == []
    finally:
        release(manual_server, receiver)


def test_queue_receive_wait_time_is_used_when_request_omits_it(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(ReceiveMessageWaitTimeSeconds="20")
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url)  # parks: it long-polls
    try:
        manual_server.advance(19)
        assert waiting(manual_server, url) == 1, "the long poll ended before the queue's wait time"
        manual_server.advance(1)
        assert waiting(manual_server, url) == 0, "the long poll did not end after the queue's wait time"
        assert bodies(receiver) == []
    finally:
        release(manual_server, receiver)


def test_queue_wait_time_also_wakes_on_send(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue(ReceiveMessageWaitTimeSeconds="10")
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url)  # parks on the queue's wait time
    try:
        manual_sqs.send_message(QueueUrl=url, MessageBody="hi")
        assert waiting(manual_server, url) == 0, "the send did not answer the long poll"
        assert bodies(receiver) == ["hi"]
    finally:
        release(manual_server, receiver)


def test_request_wait_time_zero_overrides_queue_wait_time(manual_sqs, manual_make_queue):
    url = manual_make_queue(ReceiveMessageWaitTimeSeconds="20")
    # with the manual clock a long poll could never end on its own: returning at all proves it short-polled
    got = manual_sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    assert "Messages" not in got


def test_long_poll_waiters_are_served_in_arrival_order(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    first = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    second = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)  # parked after first
    try:
        manual_sqs.send_message(QueueUrl=url, MessageBody="one")
        assert waiting(manual_server, url) == 1, "one message did not answer exactly one waiter"
        assert bodies(first) == ["one"], "the first waiter was not served first"
        assert second.is_alive()
        manual_sqs.send_message(QueueUrl=url, MessageBody="two")
        assert waiting(manual_server, url) == 0
        assert bodies(second) == ["two"]
    finally:
        release(manual_server, first, second)


def test_long_poll_returns_several_messages_up_to_max(manual_sqs, manual_server, manual_make_queue):
    # One SendMessageBatch makes all six messages visible in one operation, and the waiter is answered at its end:
    # it gets exactly its maximum of four, and the other two stay in the queue.
    url = manual_make_queue()
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20, MaxNumberOfMessages=4)
    try:
        sent = manual_sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": f"m{i}"} for i in range(6)]
        )
        assert len(sent["Successful"]) == 6
        assert waiting(manual_server, url) == 0
        got = bodies(receiver)
        assert len(got) == 4
        rest = [m["Body"] for m in manual_sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]]
        assert len(rest) == 2
        assert sorted(got + rest) == [f"m{i}" for i in range(6)]
    finally:
        release(manual_server, receiver)


def test_long_poll_on_one_queue_is_not_woken_by_another_queue(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    other = manual_make_queue()
    receiver = start_receiver(manual_server, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    try:
        manual_sqs.send_message(QueueUrl=other, MessageBody="elsewhere")
        assert waiting(manual_server, url) == 1, "a send to another queue answered the long poll"
        manual_server.advance(20)
        assert bodies(receiver) == []
        assert manual_sqs.receive_message(QueueUrl=other)["Messages"][0]["Body"] == "elsewhere"
    finally:
        release(manual_server, receiver)


# --- MessageAttributeNames: the filter's names are not held to the attribute-name rules ----------------------------
# The API reference lists the attribute-name rules under ReceiveMessage's MessageAttributeNames, but AWS was recorded
# answering a receive filtered by "AWS." and by "..foo" with the message and no attributes (HTTP 200), on both
# protocols (docs/behaviour.md 4.7). The digests below are the ones AWS returned for these three attributes.

RECORDED_ATTRIBUTES = {
    "Help.Me": {"DataType": "String", "StringValue": "Me"},
    "Hello": {"DataType": "String", "StringValue": "There"},
    "General": {"DataType": "String", "StringValue": "Kenobi"},
}


@pytest.mark.parametrize(
    ("names", "selected", "digest"),
    [
        (["All"], {"Help.Me", "Hello", "General"}, "4c360f3fdafd970e05fae2f149d997f5"),
        ([".*"], {"Help.Me", "Hello", "General"}, "4c360f3fdafd970e05fae2f149d997f5"),
        (["*"], {"Help.Me", "Hello", "General"}, "4c360f3fdafd970e05fae2f149d997f5"),
        (["Hello", "General"], {"Hello", "General"}, "fca026605781cb4126a1e9044df24232"),
        (["Foo", "Hello"], {"Hello"}, "a311262e065454b75da111d535b8dacd"),
        (["Hel.*"], {"Hello", "Help.Me"}, "83fee93c1bcd8b9a5a923ffacdc636c7"),
        (["AWS."], set(), None),
        (["..foo"], set(), None),
        (["aws.Hello"], set(), None),
        (["aMaZoN.x", "AMAZON.Hello"], set(), None),
        (["Hello."], set(), None),
        ([".Hello"], set(), None),
        (["Help..Me"], set(), None),
        (["x" * 257], set(), None),
        (["x" * 256], set(), None),
        (["AWS.", "..foo", "Hello"], {"Hello"}, "a311262e065454b75da111d535b8dacd"),
    ],
)
def test_message_attribute_names_filter_as_recorded_on_aws(sqs, make_queue, names, selected, digest):
    url = make_queue(VisibilityTimeout="0")
    sent = sqs.send_message(QueueUrl=url, MessageBody="msg", MessageAttributes=RECORDED_ATTRIBUTES)
    assert sent["MD5OfMessageAttributes"] == "4c360f3fdafd970e05fae2f149d997f5"
    got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=names)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    (message,) = got["Messages"]
    assert message["Body"] == "msg"
    assert set(message.get("MessageAttributes", {})) == selected
    assert message.get("MD5OfMessageAttributes") == digest
