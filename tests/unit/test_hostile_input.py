"""Hostile input gets the SQS error a client expects, never a 500, and Query answers are always well-formed XML.

Driven in-process (the real Broker on a ManualClock, no sockets: ``tests.fuzz.harness.World``) through the ASGI app,
in both wire protocols (and the Query protocol's JSON rendering, ``Accept: application/json``), plus the admin routes.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from sqsemu.clock import MAX_ADVANCE_S, MAX_TIME_MS, ManualClock
from sqsemu.engine.errors import InvalidParameterValue
from sqsemu.protocol import query
from tests.fuzz.grammar import FuzzRequest
from tests.fuzz.harness import Response, World, problem

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
HOST = "localhost:9324"
STD_URL = f"http://{HOST}/000000000000/fz-std"
FORM = "application/x-www-form-urlencoded"
JSON_CT = "application/x-amz-json-1.0"


@pytest.fixture
def world() -> Iterator[World]:
    w = World()
    yield w
    w.close()


def _checked(world: World, request: FuzzRequest) -> Response:
    response = world.call(request)
    assert not world.crashes, world.crashes[0].text
    assert problem(request, response) is None, (problem(request, response), response.body[:500])
    return response


def query_raw(world: World, body: bytes, accept: str | None = None) -> Response:
    """A Query POST with ``body`` sent as it is (already form-encoded)."""
    headers = [("Host", HOST), ("Content-Type", FORM)]
    if accept is not None:
        headers.append(("Accept", accept))
    return _checked(world, FuzzRequest("query", "POST", "/", headers, body))


def query_call(world: World, params: list[tuple[str, str]] | dict[str, str], accept: str | None = None) -> Response:
    return query_raw(world, urlencode(params, errors="surrogatepass").encode(), accept)


def json_raw(world: World, action: str, body: bytes) -> Response:
    headers = [("Host", HOST), ("Content-Type", JSON_CT), ("X-Amz-Target", f"AmazonSQS.{action}")]
    return _checked(world, FuzzRequest("json", "POST", "/", headers, body))


def json_call(world: World, action: str, payload: dict[str, Any]) -> Response:
    return json_raw(world, action, json.dumps(payload).encode())


def admin(world: World, path: str, body: bytes, method: str = "POST") -> Response:
    headers = [("Host", HOST), ("Content-Type", "application/json")]
    return _checked(world, FuzzRequest("admin", method, path, headers, body))


def xml_error(response: Response) -> tuple[str, str]:
    """(Code, Message) of a Query XML error answer."""
    root = ET.fromstring(response.body)
    return root.findtext(f"{NS}Error/{NS}Code") or "", root.findtext(f"{NS}Error/{NS}Message") or ""


def json_error(response: Response) -> tuple[str, str]:
    """(__type short name, message) of a JSON 1.0 error answer."""
    data = json.loads(response.body)
    return data["__type"].rpartition("#")[2], data["message"]


# ------------------------------------------------------------------------------ item 7: no 500 for odd numbers


BAD_INDEXES = ["\u00b2", "\u0661", "0", "00", "9" * 5000, "2147483648", "9" * 11]


@pytest.mark.parametrize(
    "index",
    BAD_INDEXES,
    ids=["superscript-two", "arabic-indic-one", "zero", "zeros", "5000-digits", "past-int32", "eleven-digits"],
)
@pytest.mark.parametrize(
    "params",
    [
        [
            ("Action", "CreateQueue"),
            ("QueueName", "fz-idx"),
            ("Attribute.{i}.Name", "DelaySeconds"),
            ("Attribute.{i}.Value", "1"),
        ],
        [
            ("Action", "SendMessageBatch"),
            ("QueueUrl", STD_URL),
            ("SendMessageBatchRequestEntry.{i}.Id", "a"),
            ("SendMessageBatchRequestEntry.{i}.MessageBody", "b"),
        ],
        [("Action", "GetQueueAttributes"), ("QueueUrl", STD_URL), ("AttributeName.{i}", "All")],
        [
            ("Action", "SendMessage"),
            ("QueueUrl", STD_URL),
            ("MessageBody", "b"),
            ("MessageAttribute.{i}.Name", "a"),
            ("MessageAttribute.{i}.Value.DataType", "String"),
            ("MessageAttribute.{i}.Value.StringValue", "v"),
        ],
    ],
    ids=["attribute-map", "batch-entries", "string-list", "message-attributes"],
)
def test_query_list_index_that_is_not_a_positive_ascii_number_is_malformed_input(
    world: World, index: str, params: list[tuple[str, str]]
) -> None:
    pairs = [(key.replace("{i}", index), value) for key, value in params]
    response = query_call(world, pairs)
    assert response.status == 400
    assert response.headers["x-amzn-query-error"] == "MalformedInput;Sender"
    assert xml_error(response) == ("MalformedInput", f"{index} is not a valid index")
    as_json = query_call(world, pairs, accept="application/json")
    assert as_json.status == 400
    assert json.loads(as_json.body)["Error"]["Code"] == "MalformedInput"


def test_query_list_index_percent_encoded_superscript_two_is_malformed_input(world: World) -> None:
    """The issue's exact input: ``Attribute.%C2%B2.Name=DelaySeconds`` (``int('²')`` raised ValueError)."""
    response = query_raw(
        world, b"Action=CreateQueue&QueueName=fz-sup&Attribute.%C2%B2.Name=DelaySeconds&Attribute.%C2%B2.Value=1"
    )
    assert response.status == 400
    assert xml_error(response) == ("MalformedInput", "\u00b2 is not a valid index")


def test_query_list_indexes_with_leading_zeros_and_gaps_still_work(world: World) -> None:
    response = query_call(
        world,
        [
            ("Action", "CreateQueue"),
            ("QueueName", "fz-zeros"),
            ("Attribute.007.Name", "DelaySeconds"),
            ("Attribute.007.Value", "7"),
            ("Attribute.2147483647.Name", "VisibilityTimeout"),
            ("Attribute.2147483647.Value", "9"),
        ],
    )
    assert response.status == 200
    attrs = json.loads(
        json_call(
            world, "GetQueueAttributes", {"QueueUrl": f"http://{HOST}/000000000000/fz-zeros", "AttributeNames": ["All"]}
        ).body
    )["Attributes"]
    assert (attrs["DelaySeconds"], attrs["VisibilityTimeout"]) == ("7", "9")


HUGE = "1" * 5000


@pytest.mark.parametrize(
    ("action", "member", "extra"),
    [
        ("SendMessage", "DelaySeconds", {"MessageBody": "b"}),
        ("ReceiveMessage", "MaxNumberOfMessages", {}),
        ("ReceiveMessage", "WaitTimeSeconds", {}),
        ("ChangeMessageVisibility", "VisibilityTimeout", {"ReceiptHandle": "x"}),
        ("ListQueues", "MaxResults", {}),
    ],
)
def test_integer_parameter_of_5000_digits_is_invalid_parameter_value(
    world: World, action: str, member: str, extra: dict[str, str]
) -> None:
    reason = f"for parameter {member} is invalid. Reason: Must be an integer."
    params = {"Action": action, member: HUGE, **extra}
    if action != "ListQueues":
        params["QueueUrl"] = STD_URL
    response = query_call(world, params)
    assert response.status == 400
    code, message = xml_error(response)
    assert code == "InvalidParameterValue" and message == f"Value {HUGE} {reason}"
    payload: dict[str, Any] = {k: v for k, v in params.items() if k != "Action"}
    response = json_call(world, action, payload)  # a decimal string in JSON
    assert response.status == 400
    assert json_error(response) == ("InvalidParameterValueException", f"Value {HUGE} {reason}")


def test_integer_parameter_of_20_digits_is_not_an_integer_but_19_digits_reach_the_range_check(world: World) -> None:
    response = query_call(
        world, {"Action": "SendMessage", "QueueUrl": STD_URL, "MessageBody": "b", "DelaySeconds": "9" * 20}
    )
    assert xml_error(response)[1].endswith("Reason: Must be an integer.")
    response = query_call(
        world, {"Action": "SendMessage", "QueueUrl": STD_URL, "MessageBody": "b", "DelaySeconds": "0" * 5000 + "9" * 19}
    )
    code, message = xml_error(response)
    assert code == "InvalidParameterValue" and message.startswith(f"Value {'9' * 19} for parameter DelaySeconds")
    assert "Must be an integer." not in message
    response = query_call(
        world, {"Action": "SendMessage", "QueueUrl": STD_URL, "MessageBody": "b", "DelaySeconds": "0" * 5000 + "1"}
    )
    assert response.status == 200


def test_json_integer_literal_too_large_for_64_bits_is_a_serialization_exception(world: World) -> None:
    body = f'{{"QueueUrl": "{STD_URL}", "MessageBody": "b", "DelaySeconds": {HUGE}}}'.encode()
    response = json_raw(world, "SendMessage", body)
    assert response.status == 400
    assert json_error(response)[0] == "SerializationException"


def test_json_integer_member_holding_deeply_nested_arrays_is_invalid_parameter_value(world: World) -> None:
    nested = "[" * 1000 + "]" * 1000  # orjson takes up to 1,024 levels; str() of it would recurse too deep
    body = f'{{"QueueUrl": "{STD_URL}", "MessageBody": "b", "DelaySeconds": {nested}}}'.encode()
    response = json_raw(world, "SendMessage", body)
    assert response.status == 400
    assert json_error(response) == (
        "InvalidParameterValueException",
        "Value [...] for parameter DelaySeconds is invalid. Reason: Must be an integer.",
    )


DEEP_ARRAYS = "[" * 1000 + "]" * 1000
JUST_TOO_DEEP = '{"a":' * 100 + "[]" + "}" * 100  # 101 levels: parses, but is refused (jsondoc.MAX_DEPTH = 100)
POLICY_ERRORS = {
    "RedrivePolicy": ("InvalidParameterValue", "Reason: Redrive policy is not a valid JSON object."),
    "Policy": (
        "InvalidAttributeValue",
        "Invalid value for the parameter Policy. Reason: Must be a valid JSON document.",
    ),
    "RedriveAllowPolicy": (
        "InvalidAttributeValue",
        "Invalid value for the parameter RedriveAllowPolicy. Reason: Must be a valid JSON document.",
    ),
}


@pytest.mark.parametrize(
    "document",
    [DEEP_ARRAYS, JUST_TOO_DEEP, '{"a":' * 5000 + "1" + "}" * 5000],
    ids=["1000-arrays", "101-levels", "5000-objects"],
)
@pytest.mark.parametrize("attribute", sorted(POLICY_ERRORS))
@pytest.mark.parametrize("action", ["CreateQueue", "SetQueueAttributes"])
def test_deeply_nested_json_in_a_queue_policy_is_refused_in_both_protocols(
    world: World, action: str, attribute: str, document: str
) -> None:
    code, text = POLICY_ERRORS[attribute]
    target = {"QueueName": "fz-deep"} if action == "CreateQueue" else {"QueueUrl": STD_URL}
    response = query_call(
        world, {"Action": action, **target, "Attribute.1.Name": attribute, "Attribute.1.Value": document}
    )
    assert response.status == 400
    assert xml_error(response)[0] == code and xml_error(response)[1].endswith(text)
    response = json_call(world, action, {**target, "Attributes": {attribute: document}})
    assert response.status == 400
    json_type = "InvalidParameterValueException" if code == "InvalidParameterValue" else code
    assert json_error(response)[0] == json_type and json_error(response)[1].endswith(text)


def test_a_policy_nested_100_levels_deep_is_still_accepted(world: World) -> None:
    policy = '{"a":' * 99 + "[]" + "}" * 99  # 100 levels: past the depth limit, to the policy grammar
    response = json_call(world, "SetQueueAttributes", {"QueueUrl": STD_URL, "Attributes": {"Policy": policy}})
    assert response.status == 400
    assert json_error(response)[1].startswith("Invalid value for the parameter Policy. Reason: Unknown policy field")


@pytest.mark.parametrize("value", ["\u0663", "1_0", " 1_0 ", "\u00b2", "9" * 20, "1" * 5000])
@pytest.mark.parametrize("attribute", ["DelaySeconds", "VisibilityTimeout"])
def test_integer_queue_attributes_take_ascii_decimal_digits_only(world: World, attribute: str, value: str) -> None:
    """``int()`` alone took ``٣`` (Arabic-Indic three) and ``1_0`` (ten) and raised on 5,000 digits."""
    response = json_call(world, "SetQueueAttributes", {"QueueUrl": STD_URL, "Attributes": {attribute: value}})
    assert response.status == 400
    assert json_error(response)[0] == "InvalidAttributeValue"


@pytest.mark.parametrize("count", ['"\u0663"', '"1_0"', "1" + "0" * 4000, '"' + "1" * 5000 + '"', "[[[[1]]]]"])
def test_redrive_policy_max_receive_count_takes_ascii_decimal_digits_only(world: World, count: str) -> None:
    policy = f'{{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:fz-dlq", "maxReceiveCount": {count}}}'
    response = json_call(world, "SetQueueAttributes", {"QueueUrl": STD_URL, "Attributes": {"RedrivePolicy": policy}})
    assert response.status == 400
    code, message = json_error(response)
    assert code == "InvalidParameterValueException" and "Invalid value for maxReceiveCount" in message


ADMIN_POSTS = ["/_sqsemu/clock/advance", "/_sqsemu/faults", "/_sqsemu/reset"]


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000, b'{"a":' * 1000 + b"1" + b"}" * 1000, b'{"seconds":' + b"[" * 101 + b"]" * 101 + b"}"],
    ids=["arrays", "objects", "101-levels-in-a-field"],
)
@pytest.mark.parametrize("path", ADMIN_POSTS)
def test_admin_routes_answer_deeply_nested_bodies_with_a_json_400(world: World, path: str, body: bytes) -> None:
    response = admin(world, path, body)
    assert response.status == 400
    assert "must be a JSON object" in json.loads(response.body)["error"]


@pytest.mark.parametrize(
    "seconds",
    [b"1e308", b"1e22", b"1" * 400, b"1" * 4000, str(MAX_ADVANCE_S + 1).encode(), b"1e400", b"-1", b"NaN"],
)
def test_clock_advance_refuses_steps_over_ten_years_and_non_finite_ones(world: World, seconds: bytes) -> None:
    before = world.clock.now_ms()
    response = admin(world, "/_sqsemu/clock/advance", b'{"seconds": ' + seconds + b"}")
    assert response.status == 400
    assert json.loads(response.body)["error"].startswith('"seconds" must be')
    assert world.clock.now_ms() == before


def test_clock_advance_by_ten_years_works(world: World) -> None:
    before = world.clock.now_ms()
    response = admin(world, "/_sqsemu/clock/advance", json.dumps({"seconds": MAX_ADVANCE_S}).encode())
    assert response.status == 200
    assert json.loads(response.body)["now_ms"] == before + MAX_ADVANCE_S * 1000 == world.clock.now_ms()


def test_manual_clock_stops_at_the_end_of_year_9999() -> None:
    clock = ManualClock(MAX_TIME_MS - 1500)
    with pytest.raises(ValueError, match="9999-12-31T23:59:59.999Z"):
        clock.advance(2)
    assert clock.now_ms() == MAX_TIME_MS - 1500
    assert clock.advance(1.5) == MAX_TIME_MS
    for bad in (float("inf"), float("nan"), -0.001, 10**5000, 1e308):
        with pytest.raises(ValueError):
            clock.advance(bad)


@pytest.mark.parametrize(
    "rule",
    [
        b'{"latency_ms": 1' + b"0" * 400 + b"}",
        b'{"error": "X", "count": 1' + b"0" * 30 + b"}",
        b'{"error": "X", "every": 1' + b"0" * 3000 + b"}",
        b'{"error": "X", "probability": 0.5, "seed": 1' + b"0" * 20 + b"}",
    ],
    ids=["latency-past-float-range", "count-past-2**53", "every-of-3000-digits", "seed-past-2**53"],
)
def test_fault_rules_with_numbers_past_the_safe_range_are_400(world: World, rule: bytes) -> None:
    response = admin(world, "/_sqsemu/faults", rule)
    assert response.status == 400
    assert "must be" in json.loads(response.body)["error"]
    assert world.injector.rules == []


# ------------------------------------------------------------------------------ item 8: well-formed XML


ILLEGAL = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1f", "\ufffe", "\uffff"]


@pytest.mark.parametrize("char", ILLEGAL, ids=[f"U+{ord(c):04X}" for c in ILLEGAL])
def test_error_message_echoing_a_receipt_handle_is_well_formed_xml(world: World, char: str) -> None:
    handle = f"abc{char}def"
    response = query_call(world, {"Action": "DeleteMessage", "QueueUrl": STD_URL, "ReceiptHandle": handle})
    assert response.status == 400
    assert xml_error(response) == (
        "ReceiptHandleIsInvalid",
        'The input receipt handle "abc\ufffddef" is not a valid receipt handle.',
    )
    # JSON (1.0 and the Query protocol's JSON rendering) carries the character itself, escaped
    assert json_error(json_call(world, "DeleteMessage", {"QueueUrl": STD_URL, "ReceiptHandle": handle}))[1] == (
        f'The input receipt handle "{handle}" is not a valid receipt handle.'
    )
    as_json = query_call(
        world, {"Action": "DeleteMessage", "QueueUrl": STD_URL, "ReceiptHandle": handle}, accept="application/json"
    )
    assert json.loads(as_json.body)["Error"]["Message"] == (
        f'The input receipt handle "{handle}" is not a valid receipt handle.'
    )


@pytest.mark.parametrize("action", ["DeleteMessageBatch", "ChangeMessageVisibilityBatch"])
def test_batch_failures_echoing_receipt_handles_are_well_formed_xml(world: World, action: str) -> None:
    entry = f"{action}RequestEntry"
    params = {
        "Action": action,
        "QueueUrl": STD_URL,
        f"{entry}.1.Id": "one",
        f"{entry}.1.ReceiptHandle": "x\x01\uffff",
        f"{entry}.2.Id": "two",
        f"{entry}.2.ReceiptHandle": "y\x1b",
    }
    if action == "ChangeMessageVisibilityBatch":
        params.update({f"{entry}.1.VisibilityTimeout": "5", f"{entry}.2.VisibilityTimeout": "5"})
    response = query_call(world, params)
    assert response.status == 200
    root = ET.fromstring(response.body)
    messages = [e.findtext(f"{NS}Message") for e in root.iter(f"{NS}BatchResultErrorEntry")]
    assert messages == [
        'The input receipt handle "x\ufffd\ufffd" is not a valid receipt handle.',
        'The input receipt handle "y\ufffd" is not a valid receipt handle.',
    ]


def test_invalid_action_echoing_control_characters_is_well_formed_xml(world: World) -> None:
    response = query_call(world, {"Action": "Send\x00Message\x7f\x1e"})
    assert response.status == 400
    assert xml_error(response) == (
        "InvalidAction",
        "The action Send\ufffdMessage\x7f\ufffd is not valid for this endpoint.",
    )


def test_stored_attribute_values_with_illegal_characters_are_written_well_formed(world: World) -> None:
    policy = (
        '{"Version": "2012-10-17", "Id": "\ufffe\uffff", '
        '"Statement": {"Effect": "Deny", "Principal": "*", "Action": "*"}}'
    )
    response = json_call(
        world,
        "SetQueueAttributes",
        {"QueueUrl": STD_URL, "Attributes": {"KmsMasterKeyId": "key\x01\x02", "Policy": policy}},
    )
    assert response.status == 200
    response = query_call(world, {"Action": "GetQueueAttributes", "QueueUrl": STD_URL, "AttributeName.1": "All"})
    root = ET.fromstring(response.body)
    attrs = {a.findtext(f"{NS}Name"): a.findtext(f"{NS}Value") for a in root.iter(f"{NS}Attribute")}
    assert attrs["KmsMasterKeyId"] == "key\ufffd\ufffd"
    assert attrs["Policy"] == policy.replace("\ufffe\uffff", "\ufffd\ufffd")


def test_received_bodies_with_every_edge_of_the_allowed_characters_round_trip(world: World) -> None:
    body = "\t\n\r \ud7ff\ue000\ufffd\U00010000\U0010ffff&<>\"'\x7f\x85]]>"
    assert json_call(world, "PurgeQueue", {"QueueUrl": STD_URL}).status == 200
    assert query_call(world, {"Action": "SendMessage", "QueueUrl": STD_URL, "MessageBody": body}).status == 200
    world.clock.advance(60)  # the seeded in-flight messages' visibility does not matter: the queue was purged
    response = query_call(world, {"Action": "ReceiveMessage", "QueueUrl": STD_URL})
    root = ET.fromstring(response.body)
    assert [m.findtext(f"{NS}Body") for m in root.iter(f"{NS}Message")] == [body]


def test_the_xml_writer_replaces_what_xml_cannot_carry_and_escapes_the_rest() -> None:
    assert query.xml_safe("a\x00b\ud800c\uffffd\U0010ffff") == "a\ufffdb\ufffdc\ufffdd\U0010ffff"
    status, _, body = query.encode_error(InvalidParameterValue('bad \ud83d \x0b & <x> "q" \r'), "rid")
    assert status == 400
    message = ET.fromstring(body).findtext(f"{NS}Error/{NS}Message")
    assert message == 'bad \ufffd \ufffd & <x> "q" \r'
    assert b"&quot;q&quot; &#xD;" in body  # SQS's own escaping is kept


def test_percent_encoded_surrogates_and_junk_in_query_parameters_are_answered(world: World) -> None:
    response = query_raw(
        world,
        b"Action=DeleteMessage&QueueUrl="
        + quote(STD_URL, safe="").encode()
        + b"&ReceiptHandle=%ED%A0%80%00%EF%BF%BE%G1%",
    )
    assert response.status == 400
    assert xml_error(response)[0] == "ReceiptHandleIsInvalid"


@pytest.mark.parametrize("path", ADMIN_POSTS)
def test_admin_bodies_escaping_lone_surrogates_are_a_json_400(world: World, path: str) -> None:
    """``json.loads`` turns ``"\\udc00"`` into a string no UTF-8 answer can echo (it was a 500)."""
    response = admin(world, path, b'{"action": "*", "error": {"\\udc00": 1}, "seconds": "\\ud800", "x\\udfff": 1}')
    assert response.status == 400
    assert "must be a JSON object" in json.loads(response.body)["error"]


@pytest.mark.parametrize("attribute", sorted(POLICY_ERRORS))
def test_queue_policies_escaping_lone_surrogates_are_refused(world: World, attribute: str) -> None:
    document = (
        '{"deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:fz-dlq\\udc00", "maxReceiveCount": 1, '
        '"redrivePermission": "allowAll", "Id": "\\ud800"}'
    )
    response = json_call(world, "SetQueueAttributes", {"QueueUrl": STD_URL, "Attributes": {attribute: document}})
    assert response.status == 400
    assert json_error(response)[1].endswith(POLICY_ERRORS[attribute][1])
    paired = (  # a surrogate pair is an ordinary character
        '{"Version": "2012-10-17", "Id": "\\ud83d\\ude00", "Statement": {"Effect": "Deny", "Principal": "*", '
        '"Action": "*"}}'
    )
    assert json_call(world, "SetQueueAttributes", {"QueueUrl": STD_URL, "Attributes": {"Policy": paired}}).status == 200


def test_every_character_xml_cannot_carry_is_replaced_wherever_it_stands() -> None:
    illegal = [chr(c) for c in [*range(0x20), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF] if chr(c) not in "\t\n\r"]
    for char in illegal:
        for text, expected in (
            (char, "\ufffd"),
            (f"a{char}&", "a\ufffd&amp;"),
            (f"\u00e9{char}", "\u00e9\ufffd"),
            (f"\u00e9{char}<", "\u00e9\ufffd&lt;"),
        ):
            assert query._text(text) == expected, (hex(ord(char)), text)
    legal = "\t\n\r \x7f\x85\u00a0\ud7ff\ue000\ufffd\U00010000\U0010ffff"
    assert query._text(legal) == legal.replace("\r", "&#xD;")


@pytest.mark.parametrize(
    "handle",
    ["[" * 100_000, '{"taskId":' * 2000, '"\\ud800"', "1" * 5000],
    ids=["arrays", "objects", "lone-surrogate", "5000-digits"],
)
def test_cancel_move_task_with_a_hostile_task_handle_is_invalid_parameter_value(world: World, handle: str) -> None:
    import base64

    task_handle = base64.b64encode(handle.encode()).decode()
    response = json_call(world, "CancelMessageMoveTask", {"TaskHandle": task_handle})
    assert response.status == 400
    assert json_error(response) == ("InvalidParameterValueException", "Value for parameter TaskHandle is invalid.")


def test_a_receipt_handle_with_a_serial_in_other_digits_is_invalid(world: World) -> None:
    import base64

    handle = world.state.receipts["fz-std"][0]
    uid, message_id, _ = base64.urlsafe_b64decode(handle.encode()).decode().split(":")
    for serial in ("\u0661", "1" * 5000, "1_0"):  # int() would read ١ as 1 (a valid serial) and 1_0 as 10
        forged = base64.urlsafe_b64encode(f"{uid}:{message_id}:{serial}".encode()).decode()
        response = json_call(world, "DeleteMessage", {"QueueUrl": STD_URL, "ReceiptHandle": forged})
        assert response.status == 400
        assert json_error(response)[0] == "ReceiptHandleIsInvalid"


def test_a_content_length_of_thousands_of_digits_is_refused_without_int(world: World) -> None:
    headers = [("Host", HOST), ("Content-Type", FORM), ("Content-Length", "9" * 5000)]
    response = _checked(world, FuzzRequest("query", "POST", "/", headers, b"Action=ListQueues"))
    assert response.status == 400
    assert xml_error(response)[0] == "InvalidParameterValue"
    headers[-1] = ("Content-Length", "0" * 5000 + "17")
    assert _checked(world, FuzzRequest("query", "POST", "/", headers, b"Action=ListQueues")).status == 200
