"""Engine rules whose behaviour or wording follows what AWS was observed to do: SSE-KMS switched off with an empty
``KmsMasterKeyId``, batch-level error messages, the per-message delay message, the bare invalid-queue-name message
and the character set of message attribute names (letters and digits of any script, as AWS was recorded to accept)."""

from __future__ import annotations

import pytest

from sqsemu.engine.errors import (
    BatchEntryIdsNotDistinct,
    EmptyBatchRequest,
    InvalidParameterValue,
)
from sqsemu.engine.limits import DEFAULT_LIMITS
from sqsemu.engine.message import MessageAttributeValue as Attr
from sqsemu.engine.message import ReceiptEntry, SendEntry
from sqsemu.engine.validation import check_batch, check_message_attributes
from tests.unit.engine_helpers import Engine

QUEUE_NAME_RULE = "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"

# --- KMS -----------------------------------------------------------------------------------------------------


def test_empty_kms_key_drops_both_kms_attributes_and_keeps_sse_sqs_off(engine: Engine) -> None:
    q = engine.queue(KmsMasterKeyId="alias/k", KmsDataKeyReusePeriodSeconds="600")
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": ""})
    everything = engine.broker.get_queue_attributes(q, ["All"])
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything
    assert everything["SqsManagedSseEnabled"] == "false"
    assert engine.broker.get_queue_attributes(q, ["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"]) == {}


def test_empty_kms_key_wins_over_a_reuse_period_in_the_same_call(engine: Engine) -> None:
    q = engine.queue(KmsMasterKeyId="alias/k")
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "900"})
    everything = engine.broker.get_queue_attributes(q, ["All"])
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything


def test_empty_kms_key_with_sqs_managed_sse_on(engine: Engine) -> None:
    q = engine.queue()
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "alias/k"})
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "", "SqsManagedSseEnabled": "true"})
    everything = engine.broker.get_queue_attributes(q, ["All"])
    assert everything["SqsManagedSseEnabled"] == "true"
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything


# --- batch-level errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry_type",
    ["SendMessageBatchRequestEntry", "DeleteMessageBatchRequestEntry", "ChangeMessageVisibilityBatchRequestEntry"],
)
def test_empty_batch_message_names_the_entry_type(entry_type: str) -> None:
    with pytest.raises(EmptyBatchRequest) as info:
        check_batch([], entry_type, DEFAULT_LIMITS)
    assert info.value.message == f"There should be at least one {entry_type} in the request."


def test_empty_batch_messages_of_each_batch_action(engine: Engine) -> None:
    q = engine.queue()
    with pytest.raises(EmptyBatchRequest, match=r"^There should be at least one SendMessageBatchRequestEntry in"):
        engine.broker.send_message_batch(q, [], "acct")
    with pytest.raises(EmptyBatchRequest, match=r"^There should be at least one DeleteMessageBatchRequestEntry in"):
        engine.broker.delete_message_batch(q, [])
    with pytest.raises(
        EmptyBatchRequest, match=r"^There should be at least one ChangeMessageVisibilityBatchRequestEntry in"
    ):
        engine.broker.change_message_visibility_batch(q, [])


def test_repeated_entry_id_message(engine: Engine) -> None:
    q = engine.queue()
    with pytest.raises(BatchEntryIdsNotDistinct) as info:
        engine.broker.send_message_batch(
            q, [SendEntry("a", id="id_1"), SendEntry("b", id="id_2"), SendEntry("c", id="id_2")], "acct"
        )
    assert info.value.message == "Id id_2 repeated."
    with pytest.raises(BatchEntryIdsNotDistinct) as info:
        engine.broker.delete_message_batch(q, [ReceiptEntry("x", "h1"), ReceiptEntry("x", "h2")])
    assert info.value.message == "Id x repeated."
    assert engine.counts(q) == (0, 0, 0)


# --- per-message delay ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [1000, 901, -1])
def test_message_delay_out_of_range_message(engine: Engine, delay: int) -> None:
    q = engine.queue()
    with pytest.raises(InvalidParameterValue) as info:
        engine.send(q, delay_seconds=delay)
    assert info.value.message == (
        f"Value {delay} for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."
    )


def test_batch_entry_delay_out_of_range_fails_that_entry(engine: Engine) -> None:
    q = engine.queue()
    results = engine.broker.send_message_batch(
        q, [SendEntry("ok", id="ok"), SendEntry("late", id="late", delay_seconds=1000)], "acct"
    )
    assert not isinstance(results[0], InvalidParameterValue)
    assert isinstance(results[1], InvalidParameterValue)
    assert results[1].message == (
        "Value 1000 for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900."
    )
    assert engine.counts(q) == (1, 0, 0)


# --- queue names ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["x" * 81, "bad name", "a/b", "dot.ted", "ü", "x" * 76 + ".fifo"])
def test_invalid_queue_name_has_the_bare_message(engine: Engine, name: str) -> None:
    attributes = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
    with pytest.raises(InvalidParameterValue) as info:
        engine.queue(name, **attributes)
    assert info.value.message == QUEUE_NAME_RULE


# --- message attribute names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["a b", "x²", "Invalid-!-attr", 'Invalid-"-attr', "Invalid-§-attr", "Invalid-(-attr", "Invalid-?-attr", "a/b", "€"],
)
def test_attribute_name_with_a_character_that_is_no_letter_or_digit_is_refused(name: str) -> None:
    with pytest.raises(InvalidParameterValue) as info:
        check_message_attributes({name: Attr("String", "v")}, DEFAULT_LIMITS)
    assert info.value.message == (
        f"Message (user) attribute name '{name}' is invalid: it can only contain alphanumeric characters, "
        "hyphens, underscores and periods."
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("AWS.x", "must not start with the reserved prefixes AWS. or Amazon."),
        ("amazon.x", "must not start with the reserved prefixes AWS. or Amazon."),
        ("aWs.-Invalid-attr", "must not start with the reserved prefixes AWS. or Amazon."),
        ("AMAZON.-Invalid-attr", "must not start with the reserved prefixes AWS. or Amazon."),
        (".-Invalid-attr", "must not start or end with a period or contain two successive periods"),
        (".a", "must not start or end with a period or contain two successive periods"),
        ("a.", "must not start or end with a period or contain two successive periods"),
        ("a..b", "must not start or end with a period or contain two successive periods"),
        ("n" * 257, "must be at most 256 characters long"),
    ],
)
def test_other_attribute_name_rules_still_apply(name: str, reason: str) -> None:
    # the classes AWS was recorded refusing (docs/behaviour.md 4.7): aWs./AMAZON./. prefixes, over 256 characters
    with pytest.raises(InvalidParameterValue) as info:
        check_message_attributes({name: Attr("String", "v")}, DEFAULT_LIMITS)
    assert info.value.message == f"Message (user) attribute name '{name}' is invalid: it {reason}."


@pytest.mark.parametrize(
    "name", ["a-b_c.d9", "n" * 256, "ABCxyz0189", "AWSome", "Amazonia", "attr.1øßä", "名前", "имя_1", "٣", "ﬁ"]
)
def test_attribute_names_of_letters_and_digits_of_any_script_are_accepted(engine: Engine, name: str) -> None:
    q = engine.queue()
    engine.send(q, message_attributes={name: Attr("String", "v")})
    assert engine.counts(q) == (1, 0, 0)
