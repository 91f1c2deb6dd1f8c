"""Behaviour and error wording as observed on AWS, over both wire protocols: switching SSE-KMS off with an empty
``KmsMasterKeyId``; the messages of empty batches, repeated batch entry Ids, out-of-range message delays and
invalid queue names; the character set of message attribute names.

Each test checks what a client sees: the error code (the Query-compatible code, which both boto3 clients report),
the HTTP status and the message.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

MakeQueue = Callable[..., str]  # the ``make_queue`` fixture (tests/integration/conftest.py)

QUEUE_NAME_RULE = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
DELAY_1000 = "Value 1000 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."
ATTRIBUTE_NAME_RULE = "can only contain alphanumeric characters, hyphens, underscores and periods"


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"].get("Message", ""))


def http_status(exc: pytest.ExceptionInfo[ClientError]) -> int:
    return int(exc.value.response["ResponseMetadata"]["HTTPStatusCode"])


def all_attributes(sqs: Any, url: str) -> dict[str, str]:
    return dict(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"])


# --- (6) switching SSE-KMS off --------------------------------------------------------------------------------


def test_empty_kms_master_key_id_removes_both_kms_attributes(sqs: Any, make_queue: MakeQueue) -> None:
    url = make_queue(KmsMasterKeyId="alias/aws/sqs", KmsDataKeyReusePeriodSeconds=600)
    before = all_attributes(sqs, url)
    assert (before["KmsMasterKeyId"], before["KmsDataKeyReusePeriodSeconds"]) == ("alias/aws/sqs", "600")

    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": ""})

    after = all_attributes(sqs, url)
    assert "KmsMasterKeyId" not in after
    assert "KmsDataKeyReusePeriodSeconds" not in after
    # Switching SSE-KMS off does not switch SSE-SQS (turned off by the key) back on.
    assert after["SqsManagedSseEnabled"] == "false"


def test_empty_kms_master_key_id_removes_the_default_reuse_period(sqs: Any, make_queue: MakeQueue) -> None:
    url = make_queue()
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": "alias/my-key"})
    assert all_attributes(sqs, url)["KmsDataKeyReusePeriodSeconds"] == "300"

    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": ""})

    after = all_attributes(sqs, url)
    assert "KmsMasterKeyId" not in after
    assert "KmsDataKeyReusePeriodSeconds" not in after
    named = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"]
    ).get("Attributes", {})
    assert named == {}


def test_empty_kms_master_key_id_with_a_reuse_period_in_the_same_call(sqs: Any, make_queue: MakeQueue) -> None:
    url = make_queue(KmsMasterKeyId="alias/aws/sqs")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "900"})
    after = all_attributes(sqs, url)
    assert "KmsMasterKeyId" not in after
    assert "KmsDataKeyReusePeriodSeconds" not in after


def test_kms_off_and_sqs_managed_sse_on_in_one_call(sqs: Any, make_queue: MakeQueue) -> None:
    url = make_queue(KmsMasterKeyId="alias/aws/sqs", KmsDataKeyReusePeriodSeconds=120)
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": "", "SqsManagedSseEnabled": "true"})
    after = all_attributes(sqs, url)
    assert after["SqsManagedSseEnabled"] == "true"
    assert "KmsMasterKeyId" not in after
    assert "KmsDataKeyReusePeriodSeconds" not in after


# --- (7) error wording ---------------------------------------------------------------------------------------

BATCH_ACTIONS = [
    ("send_message_batch", "SendMessageBatchRequestEntry"),
    ("delete_message_batch", "DeleteMessageBatchRequestEntry"),
    ("change_message_visibility_batch", "ChangeMessageVisibilityBatchRequestEntry"),
]


def _entry(method: str, entry_id: str) -> dict[str, Any]:
    if method == "send_message_batch":
        return {"Id": entry_id, "MessageBody": "x"}
    if method == "delete_message_batch":
        return {"Id": entry_id, "ReceiptHandle": "handle"}
    return {"Id": entry_id, "ReceiptHandle": "handle", "VisibilityTimeout": 0}


@pytest.mark.parametrize(("method", "entry_type"), BATCH_ACTIONS, ids=[m for m, _ in BATCH_ACTIONS])
def test_empty_batch_names_the_entry_type(sqs: Any, make_queue: MakeQueue, method: str, entry_type: str) -> None:
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        getattr(sqs, method)(QueueUrl=url, Entries=[])
    assert error_code(exc) == "AWS.SimpleQueueService.EmptyBatchRequest"
    assert http_status(exc) == 400
    assert error_message(exc) == f"There should be at least one {entry_type} in the request."


@pytest.mark.parametrize(("method", "entry_type"), BATCH_ACTIONS, ids=[m for m, _ in BATCH_ACTIONS])
def test_repeated_entry_id_names_the_id(sqs: Any, make_queue: MakeQueue, method: str, entry_type: str) -> None:
    url = make_queue()
    entries = [_entry(method, "id_1"), _entry(method, "id_2"), _entry(method, "id_2")]
    with pytest.raises(ClientError) as exc:
        getattr(sqs, method)(QueueUrl=url, Entries=entries)
    assert error_code(exc) == "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
    assert http_status(exc) == 400
    assert error_message(exc) == "Id id_2 repeated."
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


@pytest.mark.parametrize("delay", [1000, -1])
def test_send_message_delay_out_of_range_message(sqs: Any, make_queue: MakeQueue, delay: int) -> None:
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="x", DelaySeconds=delay)
    assert error_code(exc) == "InvalidParameterValue"
    assert http_status(exc) == 400
    assert error_message(exc) == (
        f"Value {delay} for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."
    )


def test_send_message_batch_entry_delay_out_of_range_message(sqs: Any, make_queue: MakeQueue) -> None:
    url = make_queue()
    got = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok", "MessageBody": "ok"},
            {"Id": "late", "MessageBody": "late", "DelaySeconds": 1000},
        ],
    )
    assert [entry["Id"] for entry in got["Successful"]] == ["ok"]
    assert got["Failed"] == [
        {"Id": "late", "SenderFault": True, "Code": "InvalidParameterValue", "Message": DELAY_1000}
    ]


@pytest.mark.parametrize(
    "name",
    ["has space", "bang!", "has.dot", "ümlaut", "a" * 81],
    ids=["space", "bang", "dot", "non-ascii", "81-chars"],
)
def test_create_queue_invalid_name_has_the_bare_message(sqs: Any, name: str) -> None:
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name)
    assert error_code(exc) == "InvalidParameterValue"
    assert http_status(exc) == 400
    assert error_message(exc) == QUEUE_NAME_RULE


# --- (8) message attribute names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["a b", "Invalid-!-attr", 'Invalid-"-attr', "Invalid-§-attr", "Invalid-(-attr", "Invalid-?-attr"],
    ids=["space", "bang", "quote", "section", "paren", "question"],
)
def test_attribute_name_with_a_refused_character_is_refused(sqs: Any, make_queue: MakeQueue, name: str) -> None:
    # the characters AWS was recorded refusing (docs/behaviour.md 4.7)
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageAttributes={name: {"DataType": "String", "StringValue": "v"}}
        )
    assert error_code(exc) == "InvalidParameterValue"
    assert http_status(exc) == 400
    assert error_message(exc) == f"Message (user) attribute name '{name}' is invalid: it {ATTRIBUTE_NAME_RULE}."
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("aWs.-Invalid-attr", "must not start with the reserved prefixes AWS. or Amazon."),
        ("AMAZON.-Invalid-attr", "must not start with the reserved prefixes AWS. or Amazon."),
        (".-Invalid-attr", "must not start or end with a period or contain two successive periods"),
        ("L" * 257, "must be at most 256 characters long"),
    ],
    ids=["aws-prefix", "amazon-prefix", "leading-period", "257-chars"],
)
def test_attribute_name_refused_classes(sqs: Any, make_queue: MakeQueue, name: str, reason: str) -> None:
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageAttributes={name: {"DataType": "String", "StringValue": "v"}}
        )
    assert error_code(exc) == "InvalidParameterValue"
    assert error_message(exc) == f"Message (user) attribute name '{name}' is invalid: it {reason}."


def test_string_value_with_control_characters_is_refused(sqs: Any, make_queue: MakeQueue) -> None:
    # U+0008 and U+000B in a String value, refused on AWS (recorded)
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url,
            MessageBody="x",
            MessageAttributes={"attr1": {"DataType": "String", "StringValue": f"Invalid-{chr(8)},{chr(11)}"}},
        )
    assert error_code(exc) == "InvalidParameterValue"


@pytest.mark.parametrize("name", ["attr.1øßä", "名前", "имя_1"], ids=["latin", "cjk", "cyrillic"])
def test_attribute_name_of_letters_of_any_script_is_accepted(sqs: Any, make_queue: MakeQueue, name: str) -> None:
    # AWS accepted "attr.1øßä" (recorded; docs/behaviour.md 4.7)
    url = make_queue()
    attributes = {name: {"DataType": "String", "StringValue": "Valida"}}
    sent = sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attributes)
    got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    assert got[0]["MessageAttributes"] == attributes
    assert got[0]["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]


def test_attribute_name_of_every_allowed_character_class_is_accepted(sqs: Any, make_queue: MakeQueue) -> None:
    url = make_queue()
    attributes = {"a-b_c.d9": {"DataType": "String", "StringValue": str(uuid.uuid4())}}
    sent = sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attributes)
    got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"])["Messages"]
    assert len(got) == 1
    assert got[0]["MessageAttributes"] == attributes
    assert got[0]["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"]
