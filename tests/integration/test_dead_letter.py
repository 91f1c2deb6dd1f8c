"""Dead-letter queues over both wire protocols (docs/behaviour.md sections 2.15, 3.3, 3.4, 6.1).

RedrivePolicy validation and removal, the move on the receive that would exceed maxReceiveCount (what the
dead-lettered message keeps and gains), RedriveAllowPolicy on the dead-letter queue, and
ListDeadLetterSourceQueues with pagination.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
REGION = "us-east-1"


# --- helpers ---------------------------------------------------------------------------------------------------


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def system_names(client: Any, names: list[str]) -> dict[str, list[str]]:
    # boto3 1.28.64's query model has only the older AttributeNames member
    if client.meta.protocol == "json":
        return {"MessageSystemAttributeNames": names}
    return {"AttributeNames": names}


def arn_of(client: Any, url: str) -> str:
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def queue_attrs(client: Any, url: str, names: list[str]) -> dict[str, str]:
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=names).get("Attributes", {})


def redrive(target_arn: str, max_receive_count: Any = 1) -> str:
    return json.dumps({"deadLetterTargetArn": target_arn, "maxReceiveCount": max_receive_count})


def receive(client: Any, url: str, **kwargs: Any) -> list[dict]:
    kwargs.setdefault("VisibilityTimeout", 0)
    return client.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=10,
        MessageAttributeNames=["All"],
        **system_names(client, ["All"]),
        **kwargs,
    ).get("Messages", [])


def count(client: Any, url: str) -> int:
    return int(queue_attrs(client, url, ["ApproximateNumberOfMessages"])["ApproximateNumberOfMessages"])


def with_dlq(make_queue: Any, client: Any, max_receive_count: Any = 1, fifo: bool = False) -> tuple[str, str, str]:
    """(source_url, dlq_url, dlq_arn): a source queue whose RedrivePolicy names a fresh dead-letter queue."""
    extra = {"FifoQueue": True} if fifo else {}
    dlq = make_queue("dlq", **extra)
    dlq_arn = arn_of(client, dlq)
    source = make_queue("src", RedrivePolicy=redrive(dlq_arn, max_receive_count), **extra)
    return source, dlq, dlq_arn


def fake_arn(name: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"


# --- RedrivePolicy ---------------------------------------------------------------------------------------------


def test_redrive_policy_is_stored_and_returned(sqs, make_queue):
    source, _, dlq_arn = with_dlq(make_queue, sqs, 5)
    policy = json.loads(queue_attrs(sqs, source, ["RedrivePolicy"])["RedrivePolicy"])
    assert policy["deadLetterTargetArn"] == dlq_arn
    assert int(policy["maxReceiveCount"]) == 5
    assert "RedrivePolicy" in queue_attrs(sqs, source, ["All"])


def test_redrive_policy_set_after_creation(sqs, make_queue):
    dlq_arn = arn_of(sqs, make_queue("dlq"))
    source = make_queue("src")
    assert "RedrivePolicy" not in queue_attrs(sqs, source, ["All"])
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": redrive(dlq_arn, 3)})
    policy = json.loads(queue_attrs(sqs, source, ["RedrivePolicy"])["RedrivePolicy"])
    assert (policy["deadLetterTargetArn"], int(policy["maxReceiveCount"])) == (dlq_arn, 3)


def test_max_receive_count_may_be_a_numeric_string(sqs, make_queue):
    source, _, dlq_arn = with_dlq(make_queue, sqs, "5")
    policy = json.loads(queue_attrs(sqs, source, ["RedrivePolicy"])["RedrivePolicy"])
    assert int(policy["maxReceiveCount"]) == 5


@pytest.mark.parametrize("value", [1, 1000])
def test_max_receive_count_limits_are_accepted(sqs, make_queue, value):
    source, _, _ = with_dlq(make_queue, sqs, value)
    assert int(json.loads(queue_attrs(sqs, source, ["RedrivePolicy"])["RedrivePolicy"])["maxReceiveCount"]) == value


@pytest.mark.parametrize("value", [0, 1001, -1, "abc"])
def test_max_receive_count_out_of_range_is_invalid(sqs, make_queue, value):
    dlq_arn = arn_of(sqs, make_queue("dlq"))
    source = make_queue("src")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": redrive(dlq_arn, value)})
    assert error_code(exc) == "InvalidParameterValue"
    assert "RedrivePolicy" not in queue_attrs(sqs, source, ["All"])


def test_redrive_policy_without_max_receive_count_is_invalid(sqs, make_queue):
    dlq_arn = arn_of(sqs, make_queue("dlq"))
    source = make_queue("src")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(
            QueueUrl=source, Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn})}
        )
    assert error_code(exc) == "InvalidParameterValue"


def test_redrive_policy_to_a_queue_that_does_not_exist_is_invalid(sqs, make_queue):
    source = make_queue("src")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(
            QueueUrl=source, Attributes={"RedrivePolicy": redrive(fake_arn(f"missing-{uuid.uuid4().hex}"), 3)}
        )
    assert error_code(exc) == "InvalidParameterValue"


def test_create_queue_with_redrive_policy_to_a_missing_queue_is_invalid(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(
            QueueName=f"src-{uuid.uuid4().hex[:10]}",
            Attributes={"RedrivePolicy": redrive(fake_arn(f"missing-{uuid.uuid4().hex}"), 3)},
        )
    assert error_code(exc) == "InvalidParameterValue"


def test_standard_queue_cannot_use_a_fifo_dead_letter_queue(sqs, make_queue):
    dlq_arn = arn_of(sqs, make_queue("dlq", FifoQueue=True))
    source = make_queue("src")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": redrive(dlq_arn, 3)})
    assert error_code(exc) == "InvalidParameterValue"


def test_fifo_queue_cannot_use_a_standard_dead_letter_queue(sqs, make_queue):
    dlq_arn = arn_of(sqs, make_queue("dlq"))
    source = make_queue("src", FifoQueue=True)
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": redrive(dlq_arn, 3)})
    assert error_code(exc) == "InvalidParameterValue"


def test_fifo_queue_can_use_a_fifo_dead_letter_queue(sqs, make_queue):
    source, _, dlq_arn = with_dlq(make_queue, sqs, 2, fifo=True)
    assert json.loads(queue_attrs(sqs, source, ["RedrivePolicy"])["RedrivePolicy"])["deadLetterTargetArn"] == dlq_arn


def test_empty_redrive_policy_removes_it(sqs, make_queue):
    source, _, _ = with_dlq(make_queue, sqs, 3)
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": ""})
    assert "RedrivePolicy" not in queue_attrs(sqs, source, ["All"])
    assert queue_attrs(sqs, source, ["RedrivePolicy"]) == {}


# --- moving messages -------------------------------------------------------------------------------------------


def test_message_moves_on_the_receive_that_would_exceed_max_receive_count(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 1)
    mid = sqs.send_message(QueueUrl=source, MessageBody="poison")["MessageId"]
    (first,) = receive(sqs, source)
    assert first["MessageId"] == mid
    assert first["Attributes"]["ApproximateReceiveCount"] == "1"
    assert receive(sqs, source) == []
    assert count(sqs, source) == 0
    assert count(sqs, dlq) == 1
    (moved,) = receive(sqs, dlq)
    assert moved["MessageId"] == mid


def test_message_is_received_max_receive_count_times_before_moving(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 3)
    sqs.send_message(QueueUrl=source, MessageBody="poison")
    counts = [receive(sqs, source)[0]["Attributes"]["ApproximateReceiveCount"] for _ in range(3)]
    assert counts == ["1", "2", "3"]
    assert receive(sqs, source) == []
    (moved,) = receive(sqs, dlq)
    assert moved["Attributes"]["ApproximateReceiveCount"] == "4"


def test_dead_lettered_message_keeps_identity_and_gains_source_arn(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 1)
    source_arn = arn_of(sqs, source)
    attributes = {
        "color": {"DataType": "String", "StringValue": "red"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe"},
        "n": {"DataType": "Number", "StringValue": "42"},
    }
    sent = sqs.send_message(QueueUrl=source, MessageBody="body ✓", MessageAttributes=attributes)
    (original,) = receive(sqs, source)
    assert "DeadLetterQueueSourceArn" not in original["Attributes"]
    assert receive(sqs, source) == []
    (moved,) = receive(sqs, dlq)
    assert moved["MessageId"] == sent["MessageId"]
    assert moved["Body"] == "body ✓"
    assert moved["MD5OfBody"] == sent["MD5OfMessageBody"]
    assert moved["MessageAttributes"] == attributes
    assert moved["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
    assert moved["Attributes"]["SentTimestamp"] == original["Attributes"]["SentTimestamp"]
    assert moved["Attributes"]["ApproximateReceiveCount"] == "2"
    assert moved["Attributes"]["DeadLetterQueueSourceArn"] == source_arn


def test_dead_letter_source_arn_can_be_requested_by_name(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 1)
    sqs.send_message(QueueUrl=source, MessageBody="x")
    receive(sqs, source)
    receive(sqs, source)
    (moved,) = sqs.receive_message(QueueUrl=dlq, **system_names(sqs, ["DeadLetterQueueSourceArn"]))["Messages"]
    assert moved["Attributes"] == {"DeadLetterQueueSourceArn": arn_of(sqs, source)}


def test_only_messages_over_the_limit_move(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 1)
    sqs.send_message(QueueUrl=source, MessageBody="old")
    assert len(receive(sqs, source)) == 1
    sqs.send_message(QueueUrl=source, MessageBody="new")
    assert [m["Body"] for m in receive(sqs, source)] == ["new"]  # "old" moved on this receive
    assert [m["Body"] for m in receive(sqs, dlq)] == ["old"]


def test_fifo_message_moves_to_fifo_dead_letter_queue(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 1, fifo=True)
    sent = sqs.send_message(QueueUrl=source, MessageBody="poison", MessageGroupId="g", MessageDeduplicationId="d")
    (first,) = receive(sqs, source)
    assert first["MessageId"] == sent["MessageId"]
    assert receive(sqs, source) == []
    (moved,) = receive(sqs, dlq)
    assert moved["MessageId"] == sent["MessageId"]
    assert moved["Body"] == "poison"
    assert moved["Attributes"]["MessageGroupId"] == "g"
    assert moved["Attributes"]["DeadLetterQueueSourceArn"] == arn_of(sqs, source)


def test_removed_redrive_policy_stops_moving(sqs, make_queue):
    source, dlq, _ = with_dlq(make_queue, sqs, 1)
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": ""})
    sqs.send_message(QueueUrl=source, MessageBody="x")
    for expected in ("1", "2", "3"):
        (message,) = receive(sqs, source)
        assert message["Attributes"]["ApproximateReceiveCount"] == expected
    assert count(sqs, dlq) == 0


# --- RedriveAllowPolicy ----------------------------------------------------------------------------------------


def allow_policy(permission: str, sources: list[str] | None = None) -> str:
    policy: dict[str, Any] = {"redrivePermission": permission}
    if sources is not None:
        policy["sourceQueueArns"] = sources
    return json.dumps(policy)


def test_redrive_allow_policy_is_stored_and_returned(sqs, make_queue):
    sources = [fake_arn("source-a"), fake_arn("source-b")]
    dlq = make_queue("dlq", RedriveAllowPolicy=allow_policy("byQueue", sources))
    policy = json.loads(queue_attrs(sqs, dlq, ["RedriveAllowPolicy"])["RedriveAllowPolicy"])
    assert policy == {"redrivePermission": "byQueue", "sourceQueueArns": sources}
    assert "RedriveAllowPolicy" in queue_attrs(sqs, dlq, ["All"])


def test_deny_all_rejects_any_source(sqs, make_queue):
    dlq = make_queue("dlq", RedriveAllowPolicy=allow_policy("denyAll"))
    dlq_arn = arn_of(sqs, dlq)
    source = make_queue("src")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": redrive(dlq_arn, 3)})
    assert error_code(exc) == "InvalidParameterValue"
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=f"src2-{uuid.uuid4().hex[:10]}", Attributes={"RedrivePolicy": redrive(dlq_arn)})
    assert error_code(exc) == "InvalidParameterValue"


def test_by_queue_allows_only_listed_sources(sqs, make_queue):
    allowed = make_queue("allowed")
    denied = make_queue("denied")
    dlq = make_queue("dlq", RedriveAllowPolicy=allow_policy("byQueue", [arn_of(sqs, allowed)]))
    dlq_arn = arn_of(sqs, dlq)
    sqs.set_queue_attributes(QueueUrl=allowed, Attributes={"RedrivePolicy": redrive(dlq_arn, 3)})
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=denied, Attributes={"RedrivePolicy": redrive(dlq_arn, 3)})
    assert error_code(exc) == "InvalidParameterValue"
    assert "RedrivePolicy" not in queue_attrs(sqs, denied, ["All"])


def test_allow_all_accepts_any_source(sqs, make_queue):
    dlq = make_queue("dlq", RedriveAllowPolicy=allow_policy("allowAll"))
    source = make_queue("src")
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"RedrivePolicy": redrive(arn_of(sqs, dlq), 3)})
    assert "RedrivePolicy" in queue_attrs(sqs, source, ["All"])


def test_by_queue_accepts_ten_source_arns(sqs, make_queue):
    sources = [fake_arn(f"source-{i}") for i in range(10)]
    dlq = make_queue("dlq")
    sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedriveAllowPolicy": allow_policy("byQueue", sources)})
    assert json.loads(queue_attrs(sqs, dlq, ["RedriveAllowPolicy"])["RedriveAllowPolicy"])["sourceQueueArns"] == sources


def test_by_queue_rejects_eleven_source_arns(sqs, make_queue):
    dlq = make_queue("dlq")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(
            QueueUrl=dlq,
            Attributes={"RedriveAllowPolicy": allow_policy("byQueue", [fake_arn(f"source-{i}") for i in range(11)])},
        )
    assert error_code(exc) == "InvalidAttributeValue"
    assert "RedriveAllowPolicy" not in queue_attrs(sqs, dlq, ["All"])


def test_redrive_allow_policy_with_unknown_permission_is_invalid(sqs, make_queue):
    dlq = make_queue("dlq")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=dlq, Attributes={"RedriveAllowPolicy": allow_policy("sometimes")})
    assert error_code(exc) == "InvalidAttributeValue"


# --- ListDeadLetterSourceQueues --------------------------------------------------------------------------------


def source_urls(response: dict) -> list[str]:
    return list(response.get("queueUrls", []))


def test_list_dead_letter_source_queues_lists_every_source(sqs, make_queue):
    dlq = make_queue("dlq")
    dlq_arn = arn_of(sqs, dlq)
    sources = {make_queue(f"src{i}", RedrivePolicy=redrive(dlq_arn, 2)) for i in range(3)}
    make_queue("unrelated")
    response = sqs.list_dead_letter_source_queues(QueueUrl=dlq)
    assert "queueUrls" in response  # lower-case member name on both protocols
    assert set(source_urls(response)) == sources
    assert "NextToken" not in response


def test_list_dead_letter_source_queues_of_queue_without_sources_is_empty(sqs, make_queue):
    response = sqs.list_dead_letter_source_queues(QueueUrl=make_queue("lonely"))
    assert source_urls(response) == []
    if sqs.meta.protocol == "json":
        assert response["queueUrls"] == []  # required member: sent as [] in JSON
    assert "NextToken" not in response


def test_list_dead_letter_source_queues_paginates(sqs, make_queue):
    dlq = make_queue("dlq")
    dlq_arn = arn_of(sqs, dlq)
    sources = {make_queue(f"src{i}", RedrivePolicy=redrive(dlq_arn, 2)) for i in range(5)}
    seen: list[str] = []
    page = sqs.list_dead_letter_source_queues(QueueUrl=dlq, MaxResults=2)
    pages = 1
    while True:
        assert len(source_urls(page)) <= 2
        seen += source_urls(page)
        if "NextToken" not in page:
            break
        page = sqs.list_dead_letter_source_queues(QueueUrl=dlq, MaxResults=2, NextToken=page["NextToken"])
        pages += 1
        assert pages <= 5
    assert pages == 3
    assert sorted(seen) == sorted(sources)


def test_list_dead_letter_source_queues_max_results_covering_all_has_no_token(sqs, make_queue):
    dlq = make_queue("dlq")
    dlq_arn = arn_of(sqs, dlq)
    sources = {make_queue(f"src{i}", RedrivePolicy=redrive(dlq_arn, 2)) for i in range(2)}
    response = sqs.list_dead_letter_source_queues(QueueUrl=dlq, MaxResults=2)
    assert set(source_urls(response)) == sources
    assert "NextToken" not in response


def test_source_with_removed_redrive_policy_is_no_longer_listed(sqs, make_queue):
    dlq = make_queue("dlq")
    dlq_arn = arn_of(sqs, dlq)
    keep = make_queue("keep", RedrivePolicy=redrive(dlq_arn, 2))
    drop = make_queue("drop", RedrivePolicy=redrive(dlq_arn, 2))
    sqs.set_queue_attributes(QueueUrl=drop, Attributes={"RedrivePolicy": ""})
    assert source_urls(sqs.list_dead_letter_source_queues(QueueUrl=dlq)) == [keep]


def test_list_dead_letter_source_queues_of_unknown_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.list_dead_letter_source_queues(QueueUrl=f"{server.endpoint_url}/{ACCOUNT}/missing-{uuid.uuid4().hex}")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
