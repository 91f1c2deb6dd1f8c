"""SendMessage / SendMessageBatch over both wire protocols: happy paths, batch rules, message size, allowed
characters, message attributes, the MD5 digests (with receive-side attribute filtering) and AWSTraceHeader
(docs/behaviour.md sections 2.7, 2.8, 4.5-4.9, 8).
"""

from __future__ import annotations

import hashlib
import struct
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"


# --- the MD5 algorithm of docs/behaviour.md 8.2, written out independently of the server ----------------------


def _length_prefixed(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def md5_body(body: str) -> str:
    return hashlib.md5(body.encode("utf-8")).hexdigest()


def md5_attributes(attributes: dict) -> str:
    buf = bytearray()
    for name in sorted(attributes):
        value = attributes[name]
        buf += _length_prefixed(name.encode("utf-8"))
        buf += _length_prefixed(value["DataType"].encode("utf-8"))
        if value.get("StringValue") is not None:
            buf += b"\x01" + _length_prefixed(value["StringValue"].encode("utf-8"))
        else:
            buf += b"\x02" + _length_prefixed(bytes(value["BinaryValue"]))
    return hashlib.md5(bytes(buf)).hexdigest()


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"].get("Message", "")


def receive_one(sqs, url: str, **kwargs) -> dict:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, **kwargs).get("Messages", [])
    assert len(messages) == 1, messages
    return messages[0]


def system_names(protocol: str, names: list[str]) -> dict:
    """Request system attributes: the current model has MessageSystemAttributeNames; the 2023 query model
    (boto3 1.28.64) only has the older AttributeNames, so the query client has to use that."""
    return {"MessageSystemAttributeNames": names} if protocol == "json" else {"AttributeNames": names}


def test_md5_helper_reproduces_reference_vectors():
    # docs/behaviour.md 8.3: makes sure the digests the other tests compare against are computed right
    assert md5_attributes({"Foo": {"DataType": "String", "StringValue": "Bar"}}) == "ae7155c6026991b6d54b11589678bf9c"
    assert (
        md5_attributes(
            {
                "color": {"DataType": "String", "StringValue": "red"},
                "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\x02"},
                "price": {"DataType": "Number.float", "StringValue": "1.5"},
            }
        )
        == "4077742f50a153707293e816226f8872"
    )
    assert md5_attributes({"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}}) == (
        "5ae4d5d7636402d80f4eb6d213245a88"
    )
    assert md5_body("test") == "098f6bcd4621d373cade4e832627b4f6"


# --- SendMessage happy path ----------------------------------------------------------------------------------


def test_send_message_returns_message_id_and_body_md5(sqs, make_queue):
    url = make_queue()
    sent = sqs.send_message(QueueUrl=url, MessageBody="hello")
    assert sent["MessageId"]
    assert sent["MD5OfMessageBody"] == "5d41402abc4b2a76b9719d911017c592"
    assert "MD5OfMessageAttributes" not in sent
    assert "MD5OfMessageSystemAttributes" not in sent
    assert "SequenceNumber" not in sent


def test_sent_message_is_received_with_same_id_body_and_md5(sqs, make_queue):
    url = make_queue()
    sent = sqs.send_message(QueueUrl=url, MessageBody="Hello World!")
    msg = receive_one(sqs, url)
    assert msg["MessageId"] == sent["MessageId"]
    assert msg["Body"] == "Hello World!"
    assert msg["MD5OfBody"] == "ed076287532e86365e841e92bfc50d8c"
    assert msg["ReceiptHandle"]
    assert "MessageAttributes" not in msg
    assert "MD5OfMessageAttributes" not in msg


def test_message_ids_are_unique(sqs, make_queue):
    url = make_queue()
    ids = {sqs.send_message(QueueUrl=url, MessageBody="same")["MessageId"] for _ in range(5)}
    assert len(ids) == 5


def test_send_to_unknown_queue_is_non_existent_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=f"{server.endpoint_url}/000000000000/nope-{uuid.uuid4().hex}", MessageBody="x")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


def test_empty_body_is_missing_parameter(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="")
    assert error_code(exc) == "MissingParameter"


# --- allowed characters --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body", ["bad\x00nul", "bad\x08backspace", "bad\uffffnonchar", "\x13"], ids=["nul", "backspace", "uFFFF", "x13"]
)
def test_body_with_forbidden_character_is_invalid_message_contents(sqs, make_queue, body):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    assert error_code(exc) == "InvalidMessageContents"


@pytest.mark.parametrize(
    "body",
    [
        "tab\there\nnewline\rcarriage\r\nend",
        "emoji \U0001f600 and astral \U0010fffd",
        "private use \ue000 and \ufffd",
        '"&quot;&quot;\r',
        "<xml attr=\"1\">&amp; 'quotes' & ampersand</xml>",
        "\r",
        " leading and trailing spaces ",
    ],
    ids=["whitespace", "emoji", "private-use", "quot-cr", "markup", "lone-cr", "spaces"],
)
def test_allowed_characters_round_trip_exactly(sqs, make_queue, body):
    url = make_queue()
    sent = sqs.send_message(QueueUrl=url, MessageBody=body)
    assert sent["MD5OfMessageBody"] == md5_body(body)
    msg = receive_one(sqs, url)
    assert msg["Body"] == body
    assert msg["MD5OfBody"] == md5_body(body)


# --- size ----------------------------------------------------------------------------------------------------


def test_body_of_exactly_1_mib_is_accepted(sqs, make_queue):
    url = make_queue()
    body = "a" * 1048576
    sent = sqs.send_message(QueueUrl=url, MessageBody=body)
    assert sent["MD5OfMessageBody"] == md5_body(body)
    assert receive_one(sqs, url)["Body"] == body


def test_body_of_1_mib_plus_one_is_rejected(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="a" * 1048577)
    assert error_code(exc) == "InvalidParameterValue"
    assert "Message must be shorter than" in error_message(exc)


def test_size_limit_follows_queue_maximum_message_size(sqs, make_queue):
    url = make_queue(MaximumMessageSize="1024")
    sqs.send_message(QueueUrl=url, MessageBody="a" * 1024)
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="a" * 1025)
    assert error_code(exc) == "InvalidParameterValue"
    assert error_message(exc) == "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."


def test_multibyte_characters_count_as_utf8_bytes(sqs, make_queue):
    url = make_queue(MaximumMessageSize="1024")
    sqs.send_message(QueueUrl=url, MessageBody="\u00e9" * 512)  # 1024 bytes, 512 characters
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="\u00e9" * 512 + "a")  # 1025 bytes, 513 characters
    assert error_code(exc) == "InvalidParameterValue"
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="\U0001f600" * 257)  # 1028 bytes, 257 characters
    assert error_code(exc) == "InvalidParameterValue"


def test_attribute_names_types_and_values_count_toward_size(sqs, make_queue):
    url = make_queue(MaximumMessageSize="1024")
    # attribute bytes: name "ab" (2) + type "String" (6) + value "xy" (2) = 10
    attributes = {"ab": {"DataType": "String", "StringValue": "xy"}}
    sqs.send_message(QueueUrl=url, MessageBody="a" * 1014, MessageAttributes=attributes)
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="a" * 1015, MessageAttributes=attributes)
    assert error_code(exc) == "InvalidParameterValue"
    assert "Message must be shorter than" in error_message(exc)


def test_binary_attribute_counts_raw_bytes_toward_size(sqs, make_queue):
    url = make_queue(MaximumMessageSize="1024")
    # name "b" (1) + type "Binary" (6) + 17 raw bytes = 24
    attributes = {"b": {"DataType": "Binary", "BinaryValue": bytes(range(17))}}
    sqs.send_message(QueueUrl=url, MessageBody="a" * 1000, MessageAttributes=attributes)
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="a" * 1001, MessageAttributes=attributes)
    assert error_code(exc) == "InvalidParameterValue"


def test_system_attributes_do_not_count_toward_size(sqs, make_queue):
    url = make_queue(MaximumMessageSize="1024")
    sqs.send_message(
        QueueUrl=url,
        MessageBody="a" * 1024,
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
    )


# --- message attributes --------------------------------------------------------------------------------------


def test_message_attributes_of_every_type_round_trip_with_md5(sqs, make_queue):
    url = make_queue()
    attributes = {
        "s": {"DataType": "String", "StringValue": "caf\u00e9 \U0001f600"},
        "n": {"DataType": "Number", "StringValue": "42"},
        "nf": {"DataType": "Number.float", "StringValue": "1.5"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\x02\xff"},
        "png": {"DataType": "Binary.png", "BinaryValue": b"\x89PNG\r\n"},
        "sc": {"DataType": "String.custom-label", "StringValue": "labelled"},
    }
    sent = sqs.send_message(QueueUrl=url, MessageBody="attrs", MessageAttributes=attributes)
    assert sent["MD5OfMessageAttributes"] == md5_attributes(attributes)
    msg = receive_one(sqs, url, MessageAttributeNames=["All"])
    assert msg["MessageAttributes"] == attributes
    assert msg["MD5OfMessageAttributes"] == md5_attributes(attributes)


def test_md5_of_message_attributes_matches_reference_example_a(sqs, make_queue):
    url = make_queue()
    sent = sqs.send_message(
        QueueUrl=url, MessageBody="x", MessageAttributes={"Foo": {"DataType": "String", "StringValue": "Bar"}}
    )
    assert sent["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"


def test_md5_of_message_attributes_matches_reference_example_b(sqs, make_queue):
    url = make_queue()
    attributes = {
        "color": {"DataType": "String", "StringValue": "red"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\x02"},
        "price": {"DataType": "Number.float", "StringValue": "1.5"},
    }
    sent = sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attributes)
    assert sent["MD5OfMessageAttributes"] == "4077742f50a153707293e816226f8872"
    msg = receive_one(sqs, url, MessageAttributeNames=["All"])
    assert msg["MD5OfMessageAttributes"] == "4077742f50a153707293e816226f8872"


def test_ten_message_attributes_accepted_eleven_rejected(sqs, make_queue):
    url = make_queue()
    ten = {f"a{i}": {"DataType": "String", "StringValue": str(i)} for i in range(10)}
    sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=ten)
    eleven = dict(ten, a10={"DataType": "String", "StringValue": "10"})
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=eleven)
    assert error_code(exc) == "InvalidParameterValue"


@pytest.mark.parametrize(
    "name",
    [
        "bad name",
        "bang!",
        "q?",
        "AWS.thing",
        "aWs.thing",
        "amazon.thing",
        "AMAZON.thing",
        ".lead",
        "trail.",
        "a..b",
        "n" * 257,
    ],
    ids=[
        "space",
        "bang",
        "question",
        "AWS-prefix",
        "aWs-prefix",
        "amazon-prefix",
        "AMAZON-prefix",
        "leading-dot",
        "trailing-dot",
        "double-dot",
        "257-chars",
    ],
)
def test_invalid_message_attribute_name_is_rejected(sqs, make_queue, name):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageAttributes={name: {"DataType": "String", "StringValue": "v"}}
        )
    assert error_code(exc) == "InvalidParameterValue"


@pytest.mark.parametrize(
    "name",
    ["n" * 256, "with.dot", "under_score-dash", "Amazonia", "AWSome"],
    ids=["256-chars", "inner-dot", "punct", "amazon-without-dot", "aws-without-dot"],
)
def test_valid_message_attribute_name_is_accepted(sqs, make_queue, name):
    url = make_queue()
    attributes = {name: {"DataType": "String", "StringValue": "v"}}
    sent = sqs.send_message(QueueUrl=url, MessageBody="x", MessageAttributes=attributes)
    assert sent["MD5OfMessageAttributes"] == md5_attributes(attributes)


@pytest.mark.parametrize("data_type", ["Invalid", "string", "Str", "Binaryx", "NUMBER"])
def test_invalid_data_type_is_rejected(sqs, make_queue, data_type):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageAttributes={"a": {"DataType": data_type, "StringValue": "1"}}
        )
    assert error_code(exc) == "InvalidParameterValue"


def test_empty_string_attribute_value_is_rejected(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageAttributes={"a": {"DataType": "String", "StringValue": ""}}
        )
    assert error_code(exc) == "InvalidParameterValue"


def test_string_attribute_with_forbidden_character_is_rejected(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message(
            QueueUrl=url, MessageBody="x", MessageAttributes={"a": {"DataType": "String", "StringValue": "bad\x00"}}
        )
    assert error_code(exc) == "InvalidParameterValue"


def test_md5_of_message_attributes_absent_without_attributes(sqs, make_queue):
    url = make_queue()
    sent = sqs.send_message(QueueUrl=url, MessageBody="plain")
    assert "MD5OfMessageAttributes" not in sent
    msg = receive_one(sqs, url, MessageAttributeNames=["All"])
    assert "MD5OfMessageAttributes" not in msg
    assert "MessageAttributes" not in msg


FILTER_ATTRIBUTES = {
    "Hello": {"DataType": "String", "StringValue": "world"},
    "Help.Me": {"DataType": "Number", "StringValue": "7"},
    "Other": {"DataType": "Binary", "BinaryValue": b"\x01\x02"},
    "x": {"DataType": "String.tag", "StringValue": "y"},
}


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["All"], set(FILTER_ATTRIBUTES)),
        ([".*"], set(FILTER_ATTRIBUTES)),
        (["Hello"], {"Hello"}),
        (["Hello", "x", "Missing"], {"Hello", "x"}),
        (["Hel.*"], {"Hello", "Help.Me"}),
        (["Help.*"], {"Help.Me"}),
        (["Missing"], set()),
        (None, set()),
    ],
    ids=["All", "dot-star", "exact", "exact-several", "prefix-Hel", "prefix-Help", "unknown", "none"],
)
def test_receive_filters_message_attributes_and_digests_the_subset(sqs, make_queue, names, expected):
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="filter me", MessageAttributes=FILTER_ATTRIBUTES)
    kwargs = {"MessageAttributeNames": names} if names is not None else {}
    msg = receive_one(sqs, url, **kwargs)
    if expected:
        subset = {k: v for k, v in FILTER_ATTRIBUTES.items() if k in expected}
        assert msg["MessageAttributes"] == subset
        assert msg["MD5OfMessageAttributes"] == md5_attributes(subset)
    else:
        assert "MessageAttributes" not in msg
        assert "MD5OfMessageAttributes" not in msg


# --- AWSTraceHeader --------------------------------------------------------------------------------------------


def test_aws_trace_header_round_trips_with_system_attribute_md5(sqs, make_queue, protocol):
    url = make_queue()
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody="traced",
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
    )
    assert sent["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"
    assert "MD5OfMessageAttributes" not in sent  # system attributes never feed the user-attribute digest
    msg = receive_one(sqs, url, **system_names(protocol, ["AWSTraceHeader"]))
    assert msg["Attributes"] == {"AWSTraceHeader": TRACE_HEADER}


def test_aws_trace_header_is_among_all_system_attributes(sqs, make_queue, protocol):
    url = make_queue()
    sqs.send_message(
        QueueUrl=url,
        MessageBody="traced",
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
    )
    msg = receive_one(sqs, url, **system_names(protocol, ["All"]))
    assert msg["Attributes"]["AWSTraceHeader"] == TRACE_HEADER


def test_system_attributes_do_not_change_message_attribute_md5(sqs, make_queue):
    url = make_queue()
    attributes = {"Foo": {"DataType": "String", "StringValue": "Bar"}}
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody="x",
        MessageAttributes=attributes,
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
    )
    assert sent["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"
    assert sent["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"


# --- SendMessageBatch ------------------------------------------------------------------------------------------


def test_send_message_batch_sends_every_entry(sqs, make_queue):
    url = make_queue()
    entries: list[dict[str, Any]] = [{"Id": f"e{i}", "MessageBody": f"body {i}"} for i in range(10)]
    entries[3]["MessageAttributes"] = {"Foo": {"DataType": "String", "StringValue": "Bar"}}
    got = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert got.get("Failed", []) == []
    by_id = {e["Id"]: e for e in got["Successful"]}
    assert set(by_id) == {f"e{i}" for i in range(10)}
    for i in range(10):
        assert by_id[f"e{i}"]["MD5OfMessageBody"] == md5_body(f"body {i}")
        assert by_id[f"e{i}"]["MessageId"]
    assert by_id["e3"]["MD5OfMessageAttributes"] == "ae7155c6026991b6d54b11589678bf9c"
    assert "MD5OfMessageAttributes" not in by_id["e0"]
    assert len({e["MessageId"] for e in got["Successful"]}) == 10
    bodies = set()
    for _ in range(3):
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            bodies.add(m["Body"])
    assert bodies == {f"body {i}" for i in range(10)}


def test_send_message_batch_entry_with_trace_header(sqs, make_queue):
    url = make_queue()
    got = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {
                "Id": "t",
                "MessageBody": "x",
                "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
            }
        ],
    )
    assert got["Successful"][0]["MD5OfMessageSystemAttributes"] == "5ae4d5d7636402d80f4eb6d213245a88"


def test_send_message_batch_with_eleven_entries_is_too_many(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": "x"} for i in range(11)])
    assert error_code(exc) == "AWS.SimpleQueueService.TooManyEntriesInBatchRequest"


def test_send_message_batch_with_no_entries_is_empty_batch(sqs, make_queue):
    # Neither boto3 model declares a minimum length for Entries, so both clients send the empty list
    # (JSON "Entries": [], Query "Entries=") and the server must answer; test_wire.py checks the raw forms too.
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(QueueUrl=url, Entries=[])
    assert error_code(exc) == "AWS.SimpleQueueService.EmptyBatchRequest"


def test_send_message_batch_with_duplicate_ids_is_not_distinct(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": "same", "MessageBody": "1"}, {"Id": "same", "MessageBody": "2"}]
        )
    assert error_code(exc) == "AWS.SimpleQueueService.BatchEntryIdsNotDistinct"
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


@pytest.mark.parametrize(
    "bad_id", ["has space", "colon:id", "dot.id", "x" * 81, ""], ids=["space", "colon", "dot", "81-chars", "empty"]
)
def test_send_message_batch_with_invalid_entry_id(sqs, make_queue, bad_id):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": "ok", "MessageBody": "1"}, {"Id": bad_id, "MessageBody": "2"}]
        )
    assert error_code(exc) == "AWS.SimpleQueueService.InvalidBatchEntryId"


def test_send_message_batch_accepts_80_char_entry_id(sqs, make_queue):
    url = make_queue()
    entry_id = "A-z_9" + "x" * 75
    got = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": entry_id, "MessageBody": "1"}])
    assert [e["Id"] for e in got["Successful"]] == [entry_id]


def test_send_message_batch_total_over_1_mib_is_too_long(sqs, make_queue):
    url = make_queue()
    entries = [{"Id": "a", "MessageBody": "a" * 600000}, {"Id": "b", "MessageBody": "b" * 600000}]
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert error_code(exc) == "AWS.SimpleQueueService.BatchRequestTooLong"
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_send_message_batch_total_of_exactly_1_mib_is_accepted(sqs, make_queue):
    url = make_queue()
    entries = [{"Id": "a", "MessageBody": "a" * 524288}, {"Id": "b", "MessageBody": "b" * 524288}]
    got = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    assert {e["Id"] for e in got["Successful"]} == {"a", "b"}


def test_send_message_batch_invalid_character_fails_only_that_entry(sqs, make_queue):
    url = make_queue()
    got = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "good1", "MessageBody": "fine"},
            {"Id": "bad", "MessageBody": "not\x00fine"},
            {"Id": "good2", "MessageBody": "also fine"},
        ],
    )
    assert {e["Id"] for e in got["Successful"]} == {"good1", "good2"}
    assert len(got["Failed"]) == 1
    failed = got["Failed"][0]
    assert failed["Id"] == "bad"
    assert failed["SenderFault"] is True
    assert failed["Code"] == "InvalidMessageContents"
    bodies = {m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])}
    assert "not\x00fine" not in bodies


def test_send_message_batch_oversize_entry_fails_only_that_entry(sqs, make_queue):
    url = make_queue(MaximumMessageSize="1024")
    got = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "small", "MessageBody": "a" * 1024},
            {"Id": "big", "MessageBody": "a" * 1025},
        ],
    )
    assert [e["Id"] for e in got["Successful"]] == ["small"]
    assert len(got["Failed"]) == 1
    failed = got["Failed"][0]
    assert failed["Id"] == "big"
    assert failed["SenderFault"] is True
    assert failed["Code"] == "InvalidParameterValue"
    assert failed["Message"] == (
        "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes."
    )


def test_send_message_batch_invalid_attribute_fails_only_that_entry(sqs, make_queue):
    url = make_queue()
    got = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok", "MessageBody": "a"},
            {
                "Id": "bad",
                "MessageBody": "b",
                "MessageAttributes": {"AWS.reserved": {"DataType": "String", "StringValue": "v"}},
            },
        ],
    )
    assert [e["Id"] for e in got["Successful"]] == ["ok"]
    assert [(f["Id"], f["Code"], f["SenderFault"]) for f in got["Failed"]] == [("bad", "InvalidParameterValue", True)]


def test_send_message_batch_to_unknown_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.send_message_batch(
            QueueUrl=f"{server.endpoint_url}/000000000000/nope-{uuid.uuid4().hex}",
            Entries=[{"Id": "a", "MessageBody": "x"}],
        )
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
