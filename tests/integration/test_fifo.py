"""FIFO queues over both wire protocols, on the manual clock (docs/behaviour.md sections 2.5-2.10, 3.1, 4.1, 5).

Creation and attribute rules, per-group ordering and group locking, deduplication (explicit ids, content based,
both scopes, the 5-minute window, purge), SequenceNumber and the FIFO system attributes, the FIFO-only send
validation (single and batch), per-message delay, ReceiveRequestAttemptId and the expired-receipt-handle rule.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.integration.attributes import FRESH_STANDARD_KEYS

pytestmark = pytest.mark.integration

DEDUP_NEEDED = (
    "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
)
FIFO_EXTRA = {"ContentBasedDeduplication", "DeduplicationScope", "FifoQueue", "FifoThroughputLimit"}


# --- helpers ---------------------------------------------------------------------------------------------------


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"].get("Message", "")


def system_names(client: Any, names: list[str]) -> dict[str, list[str]]:
    # boto3 1.28.64's query model has only the older AttributeNames member
    if client.meta.protocol == "json":
        return {"MessageSystemAttributeNames": names}
    return {"AttributeNames": names}


def fifo(make_queue: Any, **attributes: Any) -> str:
    return make_queue(FifoQueue=True, **attributes)


def send(client: Any, url: str, body: str, group: str | None = "g1", dedup: str | None = "auto", **kwargs: Any) -> dict:
    """SendMessage to a FIFO queue; ``dedup="auto"`` picks a fresh MessageDeduplicationId, None sends none."""
    if dedup == "auto":
        dedup = uuid.uuid4().hex
    if dedup is not None:
        kwargs["MessageDeduplicationId"] = dedup
    if group is not None:
        kwargs["MessageGroupId"] = group
    return client.send_message(QueueUrl=url, MessageBody=body, **kwargs)


def receive(client: Any, url: str, max_messages: int = 10, **kwargs: Any) -> list[dict]:
    kwargs.setdefault("VisibilityTimeout", 30)
    return client.receive_message(
        QueueUrl=url, MaxNumberOfMessages=max_messages, **system_names(client, ["All"]), **kwargs
    ).get("Messages", [])


def bodies(messages: list[dict]) -> list[str]:
    return [m["Body"] for m in messages]


def delete_all(client: Any, url: str, messages: list[dict]) -> None:
    for message in messages:
        client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def drain_bodies(client: Any, url: str) -> list[str]:
    """Receive and delete until nothing is returned; the bodies in delivery order."""
    seen: list[str] = []
    for _ in range(50):
        messages = receive(client, url)
        if not messages:
            return seen
        seen += bodies(messages)
        delete_all(client, url, messages)
    raise AssertionError(f"queue never drained: {seen}")


def queue_attrs(client: Any, url: str, names: list[str]) -> dict[str, str]:
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=names).get("Attributes", {})


# --- creation and attributes -----------------------------------------------------------------------------------


def test_fifo_queue_get_attributes_all_adds_the_four_fifo_defaults(sqs, make_queue):
    url = fifo(make_queue)
    attrs = queue_attrs(sqs, url, ["All"])
    assert set(attrs) == FRESH_STANDARD_KEYS | FIFO_EXTRA
    assert attrs["FifoQueue"] == "true"
    assert attrs["ContentBasedDeduplication"] == "false"
    assert attrs["DeduplicationScope"] == "queue"
    assert attrs["FifoThroughputLimit"] == "perQueue"
    assert attrs["QueueArn"].endswith(":" + url.rsplit("/", 1)[1])


def test_fifo_queue_url_keeps_the_fifo_suffix(sqs, make_queue):
    url = fifo(make_queue, name="suffix.fifo")
    assert url.endswith(".fifo")
    assert sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])["QueueUrl"] == url


def test_fifo_queue_true_without_fifo_suffix_is_invalid_parameter_value(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=f"no-suffix-{uuid.uuid4().hex[:8]}", Attributes={"FifoQueue": "true"})
    assert error_code(exc) == "InvalidParameterValue"


def test_fifo_suffix_without_fifo_queue_attribute_is_invalid_parameter_value(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=f"plain-{uuid.uuid4().hex[:8]}.fifo")
    assert error_code(exc) == "InvalidParameterValue"


def test_fifo_queue_can_be_created_with_fifo_attributes(sqs, make_queue):
    url = fifo(
        make_queue,
        ContentBasedDeduplication=True,
        DeduplicationScope="messageGroup",
        FifoThroughputLimit="perMessageGroupId",
    )
    attrs = queue_attrs(sqs, url, ["ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit"])
    assert attrs == {
        "ContentBasedDeduplication": "true",
        "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId",
    }


def test_set_fifo_queue_false_on_fifo_queue_is_invalid_attribute_value(sqs, make_queue):
    url = fifo(make_queue)
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"FifoQueue": "false"})
    assert error_code(exc) == "InvalidAttributeValue"
    assert queue_attrs(sqs, url, ["FifoQueue"]) == {"FifoQueue": "true"}


def test_set_fifo_queue_true_on_fifo_queue_is_a_no_op(sqs, make_queue):
    url = fifo(make_queue)
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"FifoQueue": "true"})
    assert queue_attrs(sqs, url, ["FifoQueue"]) == {"FifoQueue": "true"}


def test_fifo_attributes_can_be_changed_after_creation(sqs, make_queue):
    url = fifo(make_queue)
    sqs.set_queue_attributes(
        QueueUrl=url,
        Attributes={
            "ContentBasedDeduplication": "true",
            "DeduplicationScope": "messageGroup",
            "FifoThroughputLimit": "perMessageGroupId",
        },
    )
    attrs = queue_attrs(sqs, url, ["All"])
    assert attrs["ContentBasedDeduplication"] == "true"
    assert attrs["DeduplicationScope"] == "messageGroup"
    assert attrs["FifoThroughputLimit"] == "perMessageGroupId"


def test_per_message_group_throughput_requires_message_group_dedup_scope_on_create(sqs):
    name = f"throughput-{uuid.uuid4().hex[:8]}.fifo"
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name, Attributes={"FifoQueue": "true", "FifoThroughputLimit": "perMessageGroupId"})
    assert error_code(exc) == "InvalidAttributeValue"


def test_per_message_group_throughput_requires_message_group_dedup_scope_on_set(sqs, make_queue):
    url = fifo(make_queue)
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"FifoThroughputLimit": "perMessageGroupId"})
    assert error_code(exc) == "InvalidAttributeValue"
    assert queue_attrs(sqs, url, ["FifoThroughputLimit"]) == {"FifoThroughputLimit": "perQueue"}


@pytest.mark.parametrize(
    "attribute, value",
    [
        ("ContentBasedDeduplication", "maybe"),
        ("DeduplicationScope", "group"),
        ("FifoThroughputLimit", "perGroup"),
    ],
)
def test_fifo_attribute_with_invalid_value_is_invalid_attribute_value(sqs, make_queue, attribute, value):
    url = fifo(make_queue)
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: value})
    assert error_code(exc) == "InvalidAttributeValue"


@pytest.mark.parametrize(
    "attribute, value",
    [
        ("ContentBasedDeduplication", "true"),
        ("DeduplicationScope", "queue"),
        ("FifoThroughputLimit", "perQueue"),
        ("FifoQueue", "true"),
    ],
)
def test_standard_queue_set_rejects_fifo_only_attributes(sqs, make_queue, attribute, value):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: value})
    assert error_code(exc) == "InvalidAttributeName"
    assert attribute not in queue_attrs(sqs, url, ["All"])


@pytest.mark.parametrize(
    "attribute, value",
    [
        ("ContentBasedDeduplication", "true"),
        ("DeduplicationScope", "queue"),
        ("FifoThroughputLimit", "perQueue"),
    ],
)
def test_standard_queue_create_rejects_fifo_only_attributes(sqs, attribute, value):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=f"std-{uuid.uuid4().hex[:8]}", Attributes={attribute: value})
    assert error_code(exc) == "InvalidAttributeName"


# --- ordering and group locking --------------------------------------------------------------------------------


def test_messages_of_one_group_arrive_in_send_order(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    for i in range(7):
        send(manual_sqs, url, f"m{i}")
    assert bodies(receive(manual_sqs, url)) == [f"m{i}" for i in range(7)]


def test_group_is_locked_while_in_flight_and_other_groups_are_served(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    for i in range(1, 5):
        send(manual_sqs, url, f"g1-m{i}", group="g1")
    send(manual_sqs, url, "g2-m1", group="g2")
    send(manual_sqs, url, "g3-m1", group="g3")

    first = receive(manual_sqs, url, 2)
    assert bodies(first) == ["g1-m1", "g1-m2"]
    second = receive(manual_sqs, url, 1)
    assert bodies(second) == ["g2-m1"]  # g1's first message is in flight; g2 is next in the rotation
    third = receive(manual_sqs, url, 10)
    assert bodies(third) == ["g3-m1"]  # nothing of g1 behind its in-flight messages
    assert receive(manual_sqs, url, 10) == []

    delete_all(manual_sqs, url, first)
    assert bodies(receive(manual_sqs, url, 10)) == ["g1-m3", "g1-m4"]


def test_partly_received_group_stays_locked(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    for i in range(1, 4):
        send(manual_sqs, url, f"a{i}", group="A")
    first = receive(manual_sqs, url, 1)
    assert bodies(first) == ["a1"]
    assert receive(manual_sqs, url, 10) == []  # a2, a3 wait for a1
    delete_all(manual_sqs, url, first)
    assert bodies(receive(manual_sqs, url, 10)) == ["a2", "a3"]


def test_receive_takes_one_group_as_far_as_possible_then_fills_from_others(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "a1", group="A")
    send(manual_sqs, url, "b1", group="B")
    send(manual_sqs, url, "a2", group="A")
    send(manual_sqs, url, "b2", group="B")
    send(manual_sqs, url, "a3", group="A")
    got = bodies(receive(manual_sqs, url, 10))
    assert sorted(got) == ["a1", "a2", "a3", "b1", "b2"]
    # each group is contiguous and in order (no a/b interleaving)
    assert got in (["a1", "a2", "a3", "b1", "b2"], ["b1", "b2", "a1", "a2", "a3"])


def test_receive_max_three_takes_two_of_one_group_and_one_of_another(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    for body, group in [("a1", "A"), ("a2", "A"), ("b1", "B"), ("b2", "B")]:
        send(manual_sqs, url, body, group=group)
    got = bodies(receive(manual_sqs, url, 3))
    assert got == ["a1", "a2", "b1"]
    assert receive(manual_sqs, url, 10) == []  # both groups now have a message in flight


def test_expired_message_goes_back_to_the_head_of_its_group(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue)
    for i in range(1, 4):
        send(manual_sqs, url, f"m{i}")
    first = receive(manual_sqs, url, 1, VisibilityTimeout=5)
    assert bodies(first) == ["m1"]
    manual_server.advance(4.9)
    assert receive(manual_sqs, url, 10) == []
    manual_server.advance(0.1)
    again = receive(manual_sqs, url, 10)
    assert bodies(again) == ["m1", "m2", "m3"]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert again[1]["Attributes"]["ApproximateReceiveCount"] == "1"


def test_expired_message_is_received_before_later_ones_after_partial_delete(
    manual_sqs, manual_server, manual_make_queue
):
    url = fifo(manual_make_queue)
    for i in range(1, 4):
        send(manual_sqs, url, f"m{i}")
    first = receive(manual_sqs, url, 2, VisibilityTimeout=10)
    assert bodies(first) == ["m1", "m2"]
    delete_all(manual_sqs, url, first[:1])
    assert receive(manual_sqs, url, 10) == []  # m2 still in flight locks the group
    manual_server.advance(10)
    assert bodies(receive(manual_sqs, url, 10)) == ["m2", "m3"]


def test_visibility_zero_releases_the_group_at_once(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "m1")
    send(manual_sqs, url, "m2")
    first = receive(manual_sqs, url, 1)
    manual_sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"], VisibilityTimeout=0)
    assert bodies(receive(manual_sqs, url, 10)) == ["m1", "m2"]


def test_send_message_batch_enqueues_in_request_order(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    entries = [
        {"Id": f"e{i}", "MessageBody": f"b{i}", "MessageGroupId": "g", "MessageDeduplicationId": f"d{i}"}
        for i in range(6)
    ]
    result = manual_sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert len(result["Successful"]) == 6 and not result.get("Failed")
    assert bodies(receive(manual_sqs, url, 10)) == [f"b{i}" for i in range(6)]


# --- deduplication ---------------------------------------------------------------------------------------------


def test_duplicate_within_five_minutes_is_accepted_but_not_delivered(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    first = send(manual_sqs, url, "original", dedup="d-1")
    duplicate = send(manual_sqs, url, "duplicate", dedup="d-1")
    assert first["MessageId"] and duplicate["MessageId"]
    assert duplicate["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert drain_bodies(manual_sqs, url) == ["original"]
    assert queue_attrs(manual_sqs, url, ["ApproximateNumberOfMessages"]) == {"ApproximateNumberOfMessages": "0"}


def test_duplicate_is_dropped_even_after_the_original_was_deleted(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "original", dedup="d-1")
    assert drain_bodies(manual_sqs, url) == ["original"]
    manual_server.advance(299)
    send(manual_sqs, url, "again", dedup="d-1")
    assert receive(manual_sqs, url) == []


def test_same_dedup_id_is_delivered_again_after_five_minutes(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "original", dedup="d-1")
    assert drain_bodies(manual_sqs, url) == ["original"]
    manual_server.advance(300)
    send(manual_sqs, url, "after-window", dedup="d-1")
    assert drain_bodies(manual_sqs, url) == ["after-window"]


def test_different_dedup_ids_with_the_same_body_are_both_delivered(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "same", dedup="d-1")
    send(manual_sqs, url, "same", dedup="d-2")
    assert drain_bodies(manual_sqs, url) == ["same", "same"]


def test_duplicate_in_send_message_batch_is_reported_successful_but_not_delivered(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "original", dedup="d-1")
    result = manual_sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "dup", "MessageBody": "dup", "MessageGroupId": "g1", "MessageDeduplicationId": "d-1"},
            {"Id": "new", "MessageBody": "new", "MessageGroupId": "g1", "MessageDeduplicationId": "d-2"},
        ],
    )
    assert sorted(entry["Id"] for entry in result["Successful"]) == ["dup", "new"]
    assert not result.get("Failed")
    assert drain_bodies(manual_sqs, url) == ["original", "new"]


def test_content_based_deduplication_uses_the_body(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue, ContentBasedDeduplication=True)
    first = send(manual_sqs, url, "payload", dedup=None)
    again = send(manual_sqs, url, "payload", dedup=None)
    assert first["MessageId"] and again["MessageId"]
    send(manual_sqs, url, "other payload", dedup=None)
    assert drain_bodies(manual_sqs, url) == ["payload", "other payload"]


def test_content_based_deduplication_ignores_message_attributes(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue, ContentBasedDeduplication=True)
    send(manual_sqs, url, "payload", dedup=None, MessageAttributes={"a": {"DataType": "String", "StringValue": "1"}})
    send(manual_sqs, url, "payload", dedup=None, MessageAttributes={"a": {"DataType": "String", "StringValue": "2"}})
    assert drain_bodies(manual_sqs, url) == ["payload"]


def test_explicit_dedup_id_overrides_content_based_deduplication(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue, ContentBasedDeduplication=True)
    send(manual_sqs, url, "payload", dedup=None)
    send(manual_sqs, url, "payload", dedup="explicit")
    assert drain_bodies(manual_sqs, url) == ["payload", "payload"]


def test_content_based_deduplication_window_is_five_minutes(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue, ContentBasedDeduplication=True)
    send(manual_sqs, url, "payload", dedup=None)
    assert drain_bodies(manual_sqs, url) == ["payload"]
    manual_server.advance(299.9)
    send(manual_sqs, url, "payload", dedup=None)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    send(manual_sqs, url, "payload", dedup=None)
    assert drain_bodies(manual_sqs, url) == ["payload"]


def test_content_based_dedup_message_has_a_deduplication_id_attribute(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue, ContentBasedDeduplication=True)
    send(manual_sqs, url, "payload", dedup=None)
    (message,) = receive(manual_sqs, url)
    assert message["Attributes"].get("MessageDeduplicationId")


def test_queue_scope_deduplicates_across_groups(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)  # DeduplicationScope defaults to queue
    send(manual_sqs, url, "in-g1", group="g1", dedup="shared")
    send(manual_sqs, url, "in-g2", group="g2", dedup="shared")
    assert drain_bodies(manual_sqs, url) == ["in-g1"]


def test_message_group_scope_deduplicates_per_group(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue, DeduplicationScope="messageGroup")
    send(manual_sqs, url, "in-g1", group="g1", dedup="shared")
    send(manual_sqs, url, "in-g2", group="g2", dedup="shared")
    send(manual_sqs, url, "in-g1-again", group="g1", dedup="shared")  # duplicate within g1
    assert sorted(drain_bodies(manual_sqs, url)) == ["in-g1", "in-g2"]


def test_deduplication_scope_changed_to_message_group_applies_as_recorded(manual_server, manual_sqs, manual_make_queue):
    # Recorded on AWS (docs/behaviour.md 5): the new scope shows at once, yet right after the change an ID already
    # used in another group is still a duplicate, and so is a new ID sent in two groups.
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "first-g1", group="g1", dedup="before")
    manual_sqs.set_queue_attributes(
        QueueUrl=url, Attributes={"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
    )
    attrs = queue_attrs(manual_sqs, url, ["DeduplicationScope", "FifoThroughputLimit"])
    assert attrs == {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
    send(manual_sqs, url, "old-id-g2", group="g2", dedup="before")
    send(manual_sqs, url, "new-id-g1", group="g1", dedup="after")
    send(manual_sqs, url, "new-id-g2", group="g2", dedup="after")
    assert sorted(drain_bodies(manual_sqs, url)) == ["first-g1", "new-id-g1"]
    manual_server.advance(61)  # the change has propagated (SetQueueAttributes: up to 60 seconds)
    send(manual_sqs, url, "late-g1", group="g1", dedup="late")
    send(manual_sqs, url, "late-g2", group="g2", dedup="late")
    send(manual_sqs, url, "late-g1-again", group="g1", dedup="late")
    send(manual_sqs, url, "before-g1-again", group="g1", dedup="before")  # still inside its 5 minutes
    assert sorted(drain_bodies(manual_sqs, url)) == ["late-g1", "late-g2"]


def test_purge_clears_the_deduplication_history(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "before", dedup="d-1")
    manual_sqs.purge_queue(QueueUrl=url)
    send(manual_sqs, url, "after", dedup="d-1")
    assert drain_bodies(manual_sqs, url) == ["after"]


# --- SequenceNumber and FIFO system attributes -----------------------------------------------------------------


def test_send_returns_strictly_increasing_sequence_numbers(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    numbers = [send(manual_sqs, url, f"m{i}", group=f"g{i % 2}")["SequenceNumber"] for i in range(4)]
    batch = manual_sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": f"e{i}", "MessageBody": f"b{i}", "MessageGroupId": "g0", "MessageDeduplicationId": uuid.uuid4().hex}
            for i in range(3)
        ],
    )
    by_id = {entry["Id"]: entry for entry in batch["Successful"]}
    numbers += [by_id[f"e{i}"]["SequenceNumber"] for i in range(3)]
    numbers.append(send(manual_sqs, url, "last")["SequenceNumber"])
    assert all(n.isdigit() for n in numbers), numbers
    values = [int(n) for n in numbers]
    assert values == sorted(values) and len(set(values)) == len(values), numbers


def test_standard_queue_send_has_no_sequence_number(manual_sqs, manual_make_queue):
    url = manual_make_queue()
    assert "SequenceNumber" not in manual_sqs.send_message(QueueUrl=url, MessageBody="x")
    batch = manual_sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "x"}])
    assert "SequenceNumber" not in batch["Successful"][0]


def test_receive_returns_sequence_number_group_and_dedup_id(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    sent = send(manual_sqs, url, "payload", group="grp-1", dedup="dedup-1")
    (message,) = receive(manual_sqs, url)
    assert message["MessageId"] == sent["MessageId"]
    attrs = message["Attributes"]
    assert attrs["SequenceNumber"] == sent["SequenceNumber"]
    assert attrs["MessageGroupId"] == "grp-1"
    assert attrs["MessageDeduplicationId"] == "dedup-1"
    assert {"SenderId", "SentTimestamp", "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp"} <= set(attrs)


def test_fifo_system_attributes_can_be_selected_by_name(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    sent = send(manual_sqs, url, "payload", group="grp-1", dedup="dedup-1")
    (message,) = manual_sqs.receive_message(
        QueueUrl=url, **system_names(manual_sqs, ["SequenceNumber", "MessageGroupId"])
    )["Messages"]
    assert message["Attributes"] == {"SequenceNumber": sent["SequenceNumber"], "MessageGroupId": "grp-1"}


# --- send validation -------------------------------------------------------------------------------------------


def test_send_without_message_group_id_is_missing_parameter(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    with pytest.raises(ClientError) as exc:
        send(manual_sqs, url, "x", group=None)
    assert error_code(exc) == "MissingParameter"
    assert "MessageGroupId" in error_message(exc)


def test_send_without_dedup_id_and_without_content_based_dedup_is_invalid(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    with pytest.raises(ClientError) as exc:
        send(manual_sqs, url, "x", dedup=None)
    assert error_code(exc) == "InvalidParameterValue"
    assert DEDUP_NEEDED in error_message(exc)


def test_batch_entry_without_message_group_id_fails_the_whole_request(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    with pytest.raises(ClientError) as exc:
        manual_sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "ok", "MessageBody": "ok", "MessageGroupId": "g", "MessageDeduplicationId": "d-1"},
                {"Id": "bad", "MessageBody": "bad", "MessageDeduplicationId": "d-2"},
            ],
        )
    assert error_code(exc) == "InvalidParameterValue"
    assert receive(manual_sqs, url) == []


def test_batch_entry_without_dedup_id_fails_the_whole_request(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    with pytest.raises(ClientError) as exc:
        manual_sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": "ok", "MessageBody": "ok", "MessageGroupId": "g", "MessageDeduplicationId": "d-1"},
                {"Id": "bad", "MessageBody": "bad", "MessageGroupId": "g"},
            ],
        )
    assert error_code(exc) == "InvalidParameterValue"
    assert DEDUP_NEEDED in error_message(exc)
    assert receive(manual_sqs, url) == []


def test_batch_without_dedup_ids_works_with_content_based_deduplication(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue, ContentBasedDeduplication=True)
    result = manual_sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "one", "MessageGroupId": "g"},
            {"Id": "b", "MessageBody": "two", "MessageGroupId": "g"},
        ],
    )
    assert len(result["Successful"]) == 2
    assert drain_bodies(manual_sqs, url) == ["one", "two"]


def test_content_based_deduplication_enabled_later_allows_sends_without_id(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    manual_sqs.set_queue_attributes(QueueUrl=url, Attributes={"ContentBasedDeduplication": "true"})
    send(manual_sqs, url, "x", dedup=None)
    assert drain_bodies(manual_sqs, url) == ["x"]


def test_per_message_delay_is_rejected_on_fifo_queue(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    with pytest.raises(ClientError) as exc:
        send(manual_sqs, url, "x", DelaySeconds=2)
    assert error_code(exc) == "InvalidParameterValue"
    assert "DelaySeconds" in error_message(exc)


def test_per_message_delay_zero_is_accepted_on_fifo_queue(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "x", DelaySeconds=0)
    assert drain_bodies(manual_sqs, url) == ["x"]


def test_queue_delay_applies_to_fifo_messages(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue, DelaySeconds=10)
    send(manual_sqs, url, "m1")
    send(manual_sqs, url, "m2", DelaySeconds=0)  # 0 on the message keeps the queue delay
    assert receive(manual_sqs, url) == []
    manual_server.advance(9.9)
    assert receive(manual_sqs, url) == []
    manual_server.advance(0.1)
    assert drain_bodies(manual_sqs, url) == ["m1", "m2"]


# --- ReceiveRequestAttemptId -----------------------------------------------------------------------------------


def test_retried_receive_with_same_attempt_id_returns_the_same_messages(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    for i in range(3):
        send(manual_sqs, url, f"m{i}")
    first = receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-1")
    assert bodies(first) == ["m0", "m1", "m2"]
    retry = receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-1")
    assert [m["MessageId"] for m in retry] == [m["MessageId"] for m in first]
    assert [m["ReceiptHandle"] for m in retry] == [m["ReceiptHandle"] for m in first]
    delete_all(manual_sqs, url, retry)
    assert receive(manual_sqs, url) == []


def test_attempt_id_is_only_replayed_for_five_minutes(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "m0")
    first = receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-1", VisibilityTimeout=900)
    assert bodies(first) == ["m0"]
    manual_server.advance(299)
    replay = receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-1", VisibilityTimeout=900)
    assert [m["ReceiptHandle"] for m in replay] == [first[0]["ReceiptHandle"]]
    manual_server.advance(2)  # 301 s after the first attempt: a new receive, and m0 is still in flight
    assert receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-1", VisibilityTimeout=900) == []


def test_receive_with_another_attempt_id_does_not_repeat_in_flight_messages(manual_sqs, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "m0")
    first = receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-1")
    assert bodies(first) == ["m0"]
    assert receive(manual_sqs, url, 10, ReceiveRequestAttemptId="attempt-2") == []
    assert receive(manual_sqs, url, 10) == []


# --- receipt handles -------------------------------------------------------------------------------------------


def test_delete_after_visibility_timeout_expired_is_invalid_on_fifo(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "m1")
    (message,) = receive(manual_sqs, url, 1, VisibilityTimeout=5)
    manual_server.advance(5)
    with pytest.raises(ClientError) as exc:
        manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert error_code(exc) == "InvalidParameterValue"
    assert "The receipt handle has expired" in error_message(exc)
    assert bodies(receive(manual_sqs, url)) == ["m1"]  # not deleted


def test_delete_within_visibility_timeout_works_on_fifo(manual_sqs, manual_server, manual_make_queue):
    url = fifo(manual_make_queue)
    send(manual_sqs, url, "m1")
    (message,) = receive(manual_sqs, url, 1, VisibilityTimeout=5)
    manual_server.advance(4.9)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    manual_server.advance(10)
    assert receive(manual_sqs, url) == []
