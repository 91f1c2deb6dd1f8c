"""Message move tasks (DLQ redrive) over both wire protocols, on the manual clock (docs/behaviour.md 2.21-2.23,
6.2, 6.3).

A task moves its first ``rate`` messages at the tick of the instant it starts (``advance(0)``) and then ``rate``
more per second of clock time; the tests advance the manual clock and look at the queues and at
ListMessageMoveTasks after each step.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import client_for

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
REGION = "us-east-1"


# --- helpers ---------------------------------------------------------------------------------------------------


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"].get("Message", "")


def http_status(exc: pytest.ExceptionInfo[ClientError]) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


def system_names(client: Any, names: list[str]) -> dict[str, list[str]]:
    # boto3 1.28.64's query model has only the older AttributeNames member
    if client.meta.protocol == "json":
        return {"MessageSystemAttributeNames": names}
    return {"AttributeNames": names}


def arn_of(client: Any, url: str) -> str:
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def count(client: Any, url: str) -> int:
    attrs = client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


def redrive(target_arn: str, max_receive_count: int = 1) -> str:
    return json.dumps({"deadLetterTargetArn": target_arn, "maxReceiveCount": max_receive_count})


def receive_all(client: Any, url: str) -> list[dict]:
    """Every visible message of ``url`` (received with visibility 0, so nothing changes but the counts)."""
    return client.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0, **system_names(client, ["All"])
    ).get("Messages", [])


def dead_letter(client: Any, source: str, bodies: list[str]) -> list[str]:
    """Send ``bodies`` to ``source`` (maxReceiveCount 1) and push them into its DLQ; returns their MessageIds."""
    ids = [client.send_message(QueueUrl=source, MessageBody=body)["MessageId"] for body in bodies]
    assert len(receive_all(client, source)) == len(bodies)  # receive count 1
    assert receive_all(client, source) == []  # the receive that would exceed maxReceiveCount moves them
    return ids


class Setup:
    """A source queue, its DLQ filled with ``n`` dead-lettered messages, and their ARNs."""

    def __init__(self, client: Any, make_queue: Any, n: int) -> None:
        self.dlq = make_queue("dlq")
        self.dlq_arn = arn_of(client, self.dlq)
        self.source = make_queue("src", RedrivePolicy=redrive(self.dlq_arn))
        self.source_arn = arn_of(client, self.source)
        self.bodies = [f"msg-{i}" for i in range(n)]
        self.ids = dead_letter(client, self.source, self.bodies)
        assert count(client, self.dlq) == n


def tasks(client: Any, source_arn: str, **kwargs: Any) -> list[dict]:
    return client.list_message_move_tasks(SourceArn=source_arn, **kwargs)["Results"]


def latest(client: Any, source_arn: str) -> dict:
    (task,) = tasks(client, source_arn)
    return task


# --- moving ----------------------------------------------------------------------------------------------------


def test_move_without_destination_returns_messages_to_their_source(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 3)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=10)
    manual_server.advance(0)
    assert count(manual_sqs, s.dlq) == 0
    moved = receive_all(manual_sqs, s.source)
    assert sorted(m["Body"] for m in moved) == s.bodies
    assert latest(manual_sqs, s.dlq_arn)["Status"] == "COMPLETED"


def test_redriven_messages_are_new_messages_with_the_same_body(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 2)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=10)
    manual_server.advance(0)
    moved = receive_all(manual_sqs, s.source)
    assert sorted(m["Body"] for m in moved) == s.bodies
    assert not {m["MessageId"] for m in moved} & set(s.ids)
    for message in moved:
        assert message["Attributes"]["ApproximateReceiveCount"] == "1"
        assert "DeadLetterQueueSourceArn" not in message["Attributes"]


def test_move_without_destination_handles_several_original_sources(manual_sqs, manual_server, manual_make_queue):
    dlq = manual_make_queue("dlq")
    dlq_arn = arn_of(manual_sqs, dlq)
    first = manual_make_queue("first", RedrivePolicy=redrive(dlq_arn))
    second = manual_make_queue("second", RedrivePolicy=redrive(dlq_arn))
    dead_letter(manual_sqs, first, ["from-first-1", "from-first-2"])
    dead_letter(manual_sqs, second, ["from-second"])
    manual_sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=10)
    manual_server.advance(0)
    assert sorted(m["Body"] for m in receive_all(manual_sqs, first)) == ["from-first-1", "from-first-2"]
    assert [m["Body"] for m in receive_all(manual_sqs, second)] == ["from-second"]
    assert count(manual_sqs, dlq) == 0


def test_move_with_destination_sends_there(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 3)
    destination = manual_make_queue("dest")
    manual_sqs.start_message_move_task(
        SourceArn=s.dlq_arn, DestinationArn=arn_of(manual_sqs, destination), MaxNumberOfMessagesPerSecond=10
    )
    manual_server.advance(0)
    assert sorted(m["Body"] for m in receive_all(manual_sqs, destination)) == s.bodies
    assert count(manual_sqs, s.source) == 0
    assert count(manual_sqs, s.dlq) == 0


def test_move_is_paced_by_the_rate(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 5)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=2)
    manual_server.advance(0)
    assert (count(manual_sqs, s.source), count(manual_sqs, s.dlq)) == (2, 3)
    task = latest(manual_sqs, s.dlq_arn)
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("RUNNING", 2)
    manual_server.advance(1)
    assert (count(manual_sqs, s.source), count(manual_sqs, s.dlq)) == (4, 1)
    assert latest(manual_sqs, s.dlq_arn)["ApproximateNumberOfMessagesMoved"] == 4
    manual_server.advance(1)
    assert (count(manual_sqs, s.source), count(manual_sqs, s.dlq)) == (5, 0)
    task = latest(manual_sqs, s.dlq_arn)
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 5)


def test_move_does_not_advance_between_ticks(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 4)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=1)
    manual_server.advance(0)
    assert count(manual_sqs, s.source) == 1
    manual_server.advance(0.5)
    assert count(manual_sqs, s.source) == 1
    manual_server.advance(0.5)
    assert count(manual_sqs, s.source) == 2


def test_move_without_rate_eventually_moves_everything(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 6)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn)
    manual_server.advance(0)
    for _ in range(10):
        if latest(manual_sqs, s.dlq_arn)["Status"] == "COMPLETED":
            break
        manual_server.advance(1)
    task = latest(manual_sqs, s.dlq_arn)
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 6)
    assert "MaxNumberOfMessagesPerSecond" not in task
    assert count(manual_sqs, s.source) == 6


def test_empty_dead_letter_queue_task_completes_with_nothing_to_move(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 0)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=5)
    manual_server.advance(1)
    task = latest(manual_sqs, s.dlq_arn)
    assert task["Status"] == "COMPLETED"
    assert task["ApproximateNumberOfMessagesMoved"] == 0


# --- ListMessageMoveTasks --------------------------------------------------------------------------------------


def test_list_shows_running_task_details(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 3)
    destination = manual_make_queue("dest")
    destination_arn = arn_of(manual_sqs, destination)
    started_ms = manual_server.now_ms()
    handle = manual_sqs.start_message_move_task(
        SourceArn=s.dlq_arn, DestinationArn=destination_arn, MaxNumberOfMessagesPerSecond=1
    )["TaskHandle"]
    assert handle
    manual_server.advance(0)
    task = latest(manual_sqs, s.dlq_arn)
    assert task["Status"] == "RUNNING"
    assert task["TaskHandle"] == handle
    assert task["SourceArn"] == s.dlq_arn
    assert task["DestinationArn"] == destination_arn
    assert task["MaxNumberOfMessagesPerSecond"] == 1
    assert task["ApproximateNumberOfMessagesToMove"] == 3
    assert task["ApproximateNumberOfMessagesMoved"] == 1
    assert task["StartedTimestamp"] == started_ms
    assert "FailureReason" not in task


def test_list_of_completed_task_has_no_handle(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 2)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=5)
    manual_server.advance(1)
    task = latest(manual_sqs, s.dlq_arn)
    assert task["Status"] == "COMPLETED"
    assert "TaskHandle" not in task
    assert "DestinationArn" not in task  # not given at start
    assert task["ApproximateNumberOfMessagesMoved"] == 2
    assert task["ApproximateNumberOfMessagesToMove"] == 2
    assert task["SourceArn"] == s.dlq_arn


def test_list_is_newest_first_with_default_one_and_max_ten(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 2)
    parking = arn_of(manual_sqs, manual_make_queue("parking"))  # keeps the source empty for the second round
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, DestinationArn=parking, MaxNumberOfMessagesPerSecond=50)
    manual_server.advance(1)
    dead_letter(manual_sqs, s.source, ["again-1", "again-2", "again-3"])
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=40)
    manual_server.advance(1)

    (newest,) = tasks(manual_sqs, s.dlq_arn)
    assert newest["MaxNumberOfMessagesPerSecond"] == 40
    both = tasks(manual_sqs, s.dlq_arn, MaxResults=10)
    assert [t["MaxNumberOfMessagesPerSecond"] for t in both] == [40, 50]
    assert [t["ApproximateNumberOfMessagesMoved"] for t in both] == [3, 2]
    assert both[0]["StartedTimestamp"] >= both[1]["StartedTimestamp"]


def test_list_max_results_above_ten_is_invalid(manual_sqs, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 0)
    with pytest.raises(ClientError) as exc:
        tasks(manual_sqs, s.dlq_arn, MaxResults=11)
    assert error_code(exc) == "InvalidParameterValue"


def test_list_for_queue_without_tasks_is_empty(manual_sqs, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 0)
    assert manual_sqs.list_message_move_tasks(SourceArn=s.dlq_arn).get("Results", []) == []


def test_list_for_unknown_source_is_resource_not_found(manual_sqs):
    with pytest.raises(ClientError) as exc:
        tasks(manual_sqs, f"arn:aws:sqs:{REGION}:{ACCOUNT}:missing-{uuid.uuid4().hex}")
    assert error_code(exc) == "ResourceNotFoundException"
    assert http_status(exc) == 404


# --- CancelMessageMoveTask -------------------------------------------------------------------------------------


def test_cancel_returns_moved_count_and_stops_moving(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 5)
    handle = manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    manual_server.advance(0)
    manual_server.advance(1)
    assert count(manual_sqs, s.source) == 2
    result = manual_sqs.cancel_message_move_task(TaskHandle=handle)
    assert result["ApproximateNumberOfMessagesMoved"] == 2
    manual_server.advance(5)
    assert (count(manual_sqs, s.source), count(manual_sqs, s.dlq)) == (2, 3)  # moved ones stay moved
    task = latest(manual_sqs, s.dlq_arn)
    assert task["Status"] == "CANCELLED"
    assert task["ApproximateNumberOfMessagesMoved"] == 2
    assert "TaskHandle" not in task


def test_cancel_with_garbage_handle_is_invalid_parameter_value(manual_sqs):
    with pytest.raises(ClientError) as exc:
        manual_sqs.cancel_message_move_task(TaskHandle="not-a-task-handle")
    assert error_code(exc) == "InvalidParameterValue"


def test_cancel_with_handle_of_unknown_source_is_resource_not_found(manual_sqs):
    handle = base64.b64encode(
        json.dumps(
            {
                "taskId": str(uuid.uuid4()),
                "sourceArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:missing-{uuid.uuid4().hex}",
            }
        ).encode()
    ).decode()
    with pytest.raises(ClientError) as exc:
        manual_sqs.cancel_message_move_task(TaskHandle=handle)
    assert error_code(exc) == "ResourceNotFoundException"


# --- StartMessageMoveTask validation ---------------------------------------------------------------------------


def test_second_task_on_the_same_source_is_rejected_while_running(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 3)
    handle = manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    manual_server.advance(0)
    with pytest.raises(ClientError) as exc:
        manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=1)
    assert error_code(exc) == "InvalidParameterValue"
    manual_sqs.cancel_message_move_task(TaskHandle=handle)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=10)  # allowed again
    manual_server.advance(0)
    assert count(manual_sqs, s.dlq) == 0


def test_start_on_a_queue_that_is_not_a_dead_letter_queue_is_invalid(manual_sqs, manual_make_queue):
    plain = manual_make_queue("plain")
    with pytest.raises(ClientError) as exc:
        manual_sqs.start_message_move_task(SourceArn=arn_of(manual_sqs, plain))
    assert error_code(exc) == "InvalidParameterValue"
    assert "Source queue must be configured as a Dead Letter Queue." in error_message(exc)


def test_start_with_unknown_source_is_resource_not_found(manual_sqs):
    with pytest.raises(ClientError) as exc:
        manual_sqs.start_message_move_task(SourceArn=f"arn:aws:sqs:{REGION}:{ACCOUNT}:missing-{uuid.uuid4().hex}")
    assert error_code(exc) == "ResourceNotFoundException"
    assert http_status(exc) == 404


def test_start_with_unknown_destination_is_resource_not_found(manual_sqs, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 1)
    with pytest.raises(ClientError) as exc:
        manual_sqs.start_message_move_task(
            SourceArn=s.dlq_arn, DestinationArn=f"arn:aws:sqs:{REGION}:{ACCOUNT}:missing-{uuid.uuid4().hex}"
        )
    assert error_code(exc) == "ResourceNotFoundException"
    assert http_status(exc) == 404


def test_rate_above_500_is_invalid(manual_sqs, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 1)
    with pytest.raises(ClientError) as exc:
        manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=501)
    assert error_code(exc) == "InvalidParameterValue"
    assert manual_sqs.list_message_move_tasks(SourceArn=s.dlq_arn).get("Results", []) == []


def test_rate_of_500_is_accepted(manual_sqs, manual_server, manual_make_queue):
    s = Setup(manual_sqs, manual_make_queue, 1)
    manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=500)
    manual_server.advance(0)
    assert count(manual_sqs, s.source) == 1


# --- accounts ---------------------------------------------------------------------------------------------------


def test_another_accounts_dead_letter_queue_looks_like_it_does_not_exist(
    manual_sqs, manual_server, manual_make_queue, protocol
):
    s = Setup(manual_sqs, manual_make_queue, 2)
    other = client_for(manual_server.endpoint_url, protocol, access_key_id="123456789012")
    try:
        for call in (
            lambda: other.start_message_move_task(SourceArn=s.dlq_arn),
            lambda: other.list_message_move_tasks(SourceArn=s.dlq_arn),
        ):
            with pytest.raises(ClientError) as exc:
                call()
            assert error_code(exc) == "ResourceNotFoundException"
        handle = manual_sqs.start_message_move_task(SourceArn=s.dlq_arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
        with pytest.raises(ClientError) as exc:
            other.cancel_message_move_task(TaskHandle=handle)
        assert error_code(exc) == "ResourceNotFoundException"
        assert latest(manual_sqs, s.dlq_arn)["Status"] == "RUNNING"  # the owner's task goes on
    finally:
        other.close()
