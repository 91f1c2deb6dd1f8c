"""SNS subscription filter policies (sqsemu/sns/filterpolicy.py): AWS's validation answers and its matching.

"Recorded" cases are answers of real AWS, word for word (localstack/localstack
tests/aws/services/sns/test_sns_filter_policy.snapshot.json, AWS-validated, recorded 2024-05: the policy sent is
``json.dumps`` of the dict, with spaces; AWS quotes it re-serialized). The others follow the SNS Developer Guide pages
named in each test, or the decisions listed in sqsemu/sns/filterpolicy.py's docstrings.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sqsemu.sns.filterpolicy import (
    FilterPolicyError,
    FilterPolicyLimit,
    Refusal,
    check_scope,
    combinations,
    parse_filter_policy,
)

ATTRS = "MessageAttributes"
BODY = "MessageBody"
SUBSCRIBE = "Invalid parameter: Attributes Reason: FilterPolicy: "


def at(source: str, column: int) -> str:
    """The location AWS appends to a compiler error (the source as recorded)."""
    return f'\n at [Source: (String)"{source}"; line: 1, column: {column}]'


def refusal_of(policy: Any, scope: str = ATTRS) -> FilterPolicyError:
    with pytest.raises(FilterPolicyError) as caught:
        parse_filter_policy(policy if isinstance(policy, str) else json.dumps(policy), scope)
    return caught.value


def attrs(policy: Any, **attributes: tuple[str, str]) -> Refusal | None:
    return parse_filter_policy(json.dumps(policy), ATTRS).match_attributes(attributes)


def body(policy: Any, message: Any) -> Refusal | None:
    text = message if isinstance(message, str) else json.dumps(message)
    return parse_filter_policy(json.dumps(policy), BODY).match_body(text)


S = "String"
N = "Number"

# --- validation: recorded answers ------------------------------------------------------------------------------

RECORDED_SUBSCRIBE = [
    ({"key": [["value"]]}, "Match value must be String, number, true, false, or null", '{"key":[["value"]]}', 10),
    (
        {"key": [{"wrong-operator": True}]},
        "Unrecognized match type wrong-operator",
        '{"key":[{"wrong-operator":true}]}',
        31,
    ),
    (
        {"key": [{"suffix": "value", "prefix": "value2"}]},
        "Only one key allowed in match expression",
        '{"key":[{"suffix":"value","prefix":"value2"}]}',
        37,
    ),
    ({"key": [{"suffix": 100}]}, "suffix match pattern must be a string", '{"key":[{"suffix":100}]}', 22),
    ({"key": [{"suffix": None}]}, "suffix match pattern must be a string", '{"key":[{"suffix":null}]}', 23),
    ({"key": {"suffix": "value"}}, '"suffix" must be an object or an array', '{"key":{"suffix":"value"}}', 19),
    ({"key": [{"suffix": []}]}, "suffix match pattern must be a string", '{"key":[{"suffix":[]}]}', 20),
    (
        {"key": [{"suffix": ["test", "test2"]}]},
        "suffix match pattern must be a string",
        '{"key":[{"suffix":["test","test2"]}]}',
        20,
    ),
    (
        {"key": {"suffix": "value", "prefix": "value"}},
        '"suffix" must be an object or an array',
        '{"key":{"suffix":"value","prefix":"value"}}',
        19,
    ),
    (
        {"key": {"not-an-operator": "value"}},
        '"not-an-operator" must be an object or an array',
        '{"key":{"not-an-operator":"value"}}',
        28,
    ),
    ({"key": [{"numeric": []}]}, "Invalid member in numeric match: ]", '{"key":[{"numeric":[]}]}', 22),
    (
        {"key": [{"numeric": ["operator"]}]},
        "Unrecognized numeric range operator: operator",
        '{"key":[{"numeric":["operator"]}]}',
        32,
    ),
    ({"key": [{"numeric": [1, "<="]}]}, "Invalid member in numeric match: 1", '{"key":[{"numeric":[1,"<="]}]}', 22),
    ({"key": [{"numeric": ["=", "000"]}]}, "Value of equals must be numeric", '{"key":[{"numeric":["=","000"]}]}', 26),
    ({"key": [{"numeric": [">="]}]}, "Value of >= must be numeric", '{"key":[{"numeric":[">="]}]}', 26),
    (
        {"key": [{"numeric": ["<", 100, ">", 10]}]},
        "Too many elements in numeric expression",
        '{"key":[{"numeric":["<",100,">",10]}]}',
        30,
    ),
    (
        {"key": [{"numeric": [">=", 1, ">", 2]}]},
        "Bad numeric range operator: >",
        '{"key":[{"numeric":[">=",1,">",2]}]}',
        31,
    ),
    (
        {"key": [{"numeric": [">", 3, "<", 1]}]},
        "Bottom must be less than top",
        '{"key":[{"numeric":[">",3,"<",1]}]}',
        33,
    ),
    ({"key": [{"numeric": [">", 20, "<="]}]}, "Value of <= must be numeric", '{"key":[{"numeric":[">",20,"<="]}]}', 33),
    (
        {"key": [{"numeric": [">", 20, 30]}]},
        "Bad value in numeric range: 30",
        '{"key":[{"numeric":[">",20,30]}]}',
        30,
    ),
    (
        {"key": [{"numeric": [">", 20, "test"]}]},
        "Bad numeric range operator: test",
        '{"key":[{"numeric":[">",20,"test"]}]}',
        34,
    ),
    (
        {"key": [{"numeric": [">", "20", "<", "30"]}]},
        "Value of > must be numeric",
        '{"key":[{"numeric":[">","20","<","30"]}]}',
        26,
    ),
    (
        {"key": [{"numeric": [">", 20, "<", "30"]}]},
        "Value of < must be numeric",
        '{"key":[{"numeric":[">",20,"<","30"]}]}',
        33,
    ),
    (
        {"key": [{"numeric": [">", 20, "<", 30, "<", 50]}]},
        "Too many terms in numeric range expression",
        '{"key":[{"numeric":[">",20,"<",30,"<",50]}]}',
        36,
    ),
    (
        {"key": [{"exists": None}]},
        "exists match pattern must be either true or false.",
        '{"key":[{"exists":null}]}',
        23,
    ),
    (
        {"key": [{"exists": "no"}]},
        "exists match pattern must be either true or false.",
        '{"key":[{"exists":"no"}]}',
        20,
    ),
    (
        {"key": [{"anything-but": {"wrong-operator": None}}]},
        "Unsupported anything-but pattern: wrong-operator",
        '{"key":[{"anything-but":{"wrong-operator":null}}]}',
        47,
    ),
    (
        {"key": [{"anything-but": {"suffix": "test"}}]},
        "Unsupported anything-but pattern: suffix",
        '{"key":[{"anything-but":{"suffix":"test"}}]}',
        36,
    ),
    (
        {"key": [{"anything-but": {"exists": False}}]},
        "Unsupported anything-but pattern: exists",
        '{"key":[{"anything-but":{"exists":false}}]}',
        40,
    ),
    (
        {"key": [{"anything-but": {"prefix": False}}]},
        "prefix match pattern must be a string",
        '{"key":[{"anything-but":{"prefix":false}}]}',
        40,
    ),
]


@pytest.mark.parametrize(("policy", "reason", "source", "column"), RECORDED_SUBSCRIBE)
def test_recorded_grammar_errors_quote_the_compact_policy_and_column(
    policy: Any, reason: str, source: str, column: int
) -> None:
    error = refusal_of(policy)
    assert error.aws_message(subscribe=True) == SUBSCRIBE + reason + at(source, column)
    assert (error.code, error.status) == ("InvalidParameter", 400)


def test_recorded_complexity_and_key_limits_through_subscribe() -> None:
    too_complex = SUBSCRIBE + "Filter policy is too complex"
    assert refusal_of({"key": [f"value{i}" for i in range(151)]}).aws_message(subscribe=True) == too_complex
    two = {"key1": [f"value{i}" for i in range(100)], "key2": [f"value{i}" for i in range(51)]}
    assert refusal_of(two).aws_message(subscribe=True) == too_complex
    six = {f"key{i}": [f"value{i}"] for i in range(1, 7)}
    error = refusal_of(six)
    assert isinstance(error, FilterPolicyLimit)
    assert error.aws_message(subscribe=True) == SUBSCRIBE + "Filter policy can not have more than 5 keys"


OR_FLAT = {  # (4 * 6) + (4 * 4 * 4) + (4 * 4 * 4) = 152
    "source": ["aws.cloudwatch", "aws.events", "aws.test", "aws.test2"],
    "$or": [
        {"metricName": ["CPUUtilization", "ReadLatency", "t1", "t2", "t3", "t4"]},
        {
            "metricType": ["MetricType", "TestType", "TestType2", "TestType3"],
            "$or": [{"metricId": [1234, 4321, 5678, 9012]}, {"spaceId": [1, 2, 3, 4]}],
        },
    ],
}
OR_NESTED = {  # (3 * 4 * 2) + (3 * 4 * 6) + (2 * 4 * 2) + (2 * 4 * 6) = 160
    "$or": [{"metricName": ["CPUUtilization", "ReadLatency", "TestValue"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}],
    "detail": {
        "scope": ["Service", "Test"],
        "$or": [{"source": ["aws.cloudwatch"]}, {"type": ["CloudWatch Alarm State Change", "TestValue", "TestValue2"]}],
    },
}
OR_150 = {  # (3 * 6) + (3 * 4 * 4) + (3 * 4 * 7) = 150: accepted
    "source": ["aws.cloudwatch", "aws.events", "aws.test"],
    "$or": [
        {"metricName": ["CPUUtilization", "ReadLatency", "TestVal", "TestVal2", "TestVal3", "TestVal4"]},
        {
            "metricType": ["MetricType", "TestType", "TestType2", "TestType3"],
            "$or": [{"metricId": [1234, 4321, 5678, 9012]}, {"spaceId": [1, 2, 3, 4, 5, 6, 7]}],
        },
    ],
}


def test_recorded_or_complexity_sums_the_branches() -> None:
    assert combinations(OR_FLAT) == 152
    assert refusal_of(OR_FLAT, ATTRS).aws_message(subscribe=True) == SUBSCRIBE + "Filter policy is too complex"
    assert combinations(OR_NESTED) == 160
    assert refusal_of(OR_NESTED, BODY).aws_message(subscribe=True) == SUBSCRIBE + "Filter policy is too complex"
    policy = parse_filter_policy(json.dumps(OR_150), ATTRS)
    assert policy.combinations == 150
    assert (
        policy.match_attributes({"source": (S, "aws.test"), "metricType": (S, "TestType"), "spaceId": (N, "7")}) is None
    )


def test_recorded_set_attributes_answers() -> None:
    nested = {"object": {"key": [{"prefix": "auto-"}]}}
    assert (
        refusal_of(nested, ATTRS).aws_message()
        == "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"
    )
    assert parse_filter_policy(json.dumps(nested), BODY).match_body('{"object": {"key": "auto-test"}}') is None
    deep = {  # 3 x 4 x 2 x 3 x 1 x 3 = 216
        "key_a": {"key_b": {"key_c": ["value_one", "value_two", "value_three", "value_four"]}},
        "key_d": {"key_e": ["value_one", "value_two", "value_three"]},
        "key_f": ["value_one", "value_two", "value_three"],
    }
    assert refusal_of(deep, BODY).aws_message() == "Invalid parameter: FilterPolicy: Filter policy is too complex"
    six = {f"key_{c}": [f"value_{c}"] for c in "abcdef"}
    assert (
        refusal_of(six, BODY).aws_message()
        == "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"
    )
    assert refusal_of({"key_a": "value_one"}, BODY).aws_message() == (
        'Invalid parameter: FilterPolicy: "key_a" must be an object or an array' + at('{"key_a":"value_one"}', 11)
    )


@pytest.mark.parametrize(
    "policy",
    [
        {"key": [{"anything-but": {"prefix": "test-"}}]},
        {"key": [{"anything-but": ["test", "test2"]}]},
        {"key": [{"anything-but": "test"}]},
        {"attr1": [None, {"anything-but": "whatever"}]},
        {"attr1": [{"numeric": [">", 0, "<=", 100]}]},
        {"store": [{"exists": True}]},
    ],
)
def test_recorded_accepted_policies(policy: Any) -> None:
    assert parse_filter_policy(json.dumps(policy), ATTRS).scope == ATTRS


def test_filter_policy_scope_values() -> None:
    assert check_scope("MessageBody") == "MessageBody"
    with pytest.raises(FilterPolicyError) as caught:
        check_scope("RandomValue")
    assert caught.value.aws_message() == (
        "Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either MessageBody or "
        "MessageAttributes"
    )


# --- validation: Event Ruler's messages and decided answers -----------------------------------------------------


def test_invalid_json_and_non_object_policies() -> None:
    assert refusal_of("{invalidjson}").aws_message() == "Invalid parameter: FilterPolicy: failed to parse JSON."
    assert refusal_of("").message == "failed to parse JSON."
    assert refusal_of('{"a": [NaN]}').message == "failed to parse JSON."
    assert refusal_of("[1]").message == "Filter is not an object" + at("[1]", 2)
    assert refusal_of("null").message == "Filter is not an object" + at("null", 5)


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"a": []}, "Empty arrays are not allowed" + at('{"a":[]}', 8)),
        ({"a": {}}, "Empty objects are not allowed" + at('{"a":{}}', 8)),
        ({"a": [{}]}, "Match expression name not found" + at('{"a":[{}]}', 9)),
        (
            {"$or": [{"a": ["x"]}]},
            "There must have at least 2 Objects in $or relationship." + at('{"$or":[{"a":["x"]}]}', 21),
        ),
        ({"$or": {"a": ["x"]}}, "It must be an Array followed with $or." + at('{"$or":{"a":["x"]}}', 9)),
        (
            {"$or": [{"a": ["x"]}, 1]},
            "Only JSON object is allowed in array of $or relationship." + at('{"$or":[{"a":["x"]},1]}', 22),
        ),
        (
            {"$or": [{"a": ["x"]}, {"prefix": ["y"]}]},
            "prefix is Ruler reserved fieldName which cannot be used inside $or."
            + at('{"$or":[{"a":["x"]},{"prefix":["y"]}]}', 32),
        ),
        ({"a": [{"numeric": "x"}]}, "Value of numeric must be an array." + at('{"a":[{"numeric":"x"}]}', 19)),
        (
            {"a": [{"anything-but": True}]},
            "Value of anything-but must be an array or single string/number value."
            + at('{"a":[{"anything-but":true}]}', 27),
        ),
        (
            {"a": [{"anything-but": {"prefix": ""}}]},
            "Null prefix not allowed" + at('{"a":[{"anything-but":{"prefix":""}}]}', 35),
        ),
        (
            {"a": [{"anything-but": ["x", 1]}]},
            "Inside anything but list, either all values are number or string, mixed type is not supported"
            + at('{"a":[{"anything-but":["x",1]}]}', 30),
        ),
        (
            {"a": [{"exists": True, "prefix": "x"}]},
            "Only one key allowed in match expression" + at('{"a":[{"exists":true,"prefix":"x"}]}', 32),
        ),
        (
            {"a": [{"equals-ignore-case": 1}]},
            "equals-ignore-case match pattern must be a string" + at('{"a":[{"equals-ignore-case":1}]}', 30),
        ),
        ({"a": [{"cidr": 1}]}, "prefix match pattern must be a string" + at('{"a":[{"cidr":1}]}', 16)),
        ({"a": [{"wildcard": "x*"}]}, "Unrecognized match type wildcard" + at('{"a":[{"wildcard":"x*"}]}', 20)),
        (
            {"a": [{"numeric": ["=", 1, 2]}]},
            "Too many elements in numeric expression" + at('{"a":[{"numeric":["=",1,2]}]}', 26),
        ),
        (
            {"a": [{"numeric": ["=", 1], "x": 1}]},
            "Too many elements in numeric expression" + at('{"a":[{"numeric":["=",1],"x":1}]}', 31),
        ),
        (
            {"a": [{"numeric": [">=", 5, "<=", 5]}]},
            "Bottom must be less than top" + at('{"a":[{"numeric":[">=",5,"<=",5]}]}', 33),
        ),
    ],
)
def test_event_ruler_messages_at_jacksons_columns(policy: Any, message: str) -> None:
    assert refusal_of(policy).message == message


def test_numbers_out_of_range_are_refused_where_aws_compares_them() -> None:
    outside = "Value must be between -1.0E9 and 1.0E9, inclusive"
    assert refusal_of({"a": [{"numeric": [">", 1000000001]}]}).message == outside + at(
        '{"a":[{"numeric":[">",1000000001]}]}', 34
    )
    assert refusal_of({"a": [{"numeric": ["<", -1e10]}]}).message == outside + at(
        '{"a":[{"numeric":["<",-1.0E10]}]}', 31
    )
    assert refusal_of({"a": [{"anything-but": [1, 2e9]}]}).message == outside + at(
        '{"a":[{"anything-but":[1,2.0E9]}]}', 31
    )
    assert refusal_of({"a": [{"anything-but": 2e9}]}).message == outside  # Event Ruler raises it without a location
    # a literal number out of range is kept (compared as written), not refused
    assert attrs({"a": [123456789012]}, a=(N, "123456789012")) is None
    assert parse_filter_policy(json.dumps({"a": [{"numeric": [">=", -1e9, "<=", 1e9]}]}))


def test_a_bad_member_of_an_anything_but_list_repeats_the_location() -> None:
    """Event Ruler re-raises this one inside its own handler: Jackson's location appears twice."""
    source = '{"a":[{"anything-but":["x",null]}]}'
    reason = "Inside anything but list, start|null|boolean is not supported."
    assert refusal_of({"a": [{"anything-but": ["x", None]}]}).message == reason + at(source, 32) + at(source, 32)


@pytest.mark.parametrize(
    ("cidr", "message"),
    [
        ("10.0.0.0", "Malformed CIDR, one '/' required"),
        ("10.0.0.0/x", "Malformed CIDR, mask bits must be an integer"),
        ("10.0.0.0/-1", "Malformed CIDR, mask bits must not be negative"),
        ("10.0.0.0/32", "IPv4 mask bits must be < 32"),
        ("::/128", "IPv6 mask bits must be < 128"),
        ("host/8", "Nonstandard IP address: host"),
        ("10.0.0.256/8", "Invalid IP address: 10.0.0.256"),
    ],
)
def test_malformed_cidr_blocks(cidr: str, message: str) -> None:
    assert refusal_of({"ip": [{"cidr": cidr}]}).aws_message() == f"Invalid parameter: FilterPolicy: {message}"


def test_the_quoted_source_is_jacksons_compact_text() -> None:
    """Spaces dropped, keys in order, Jackson's escapes, Java's doubles; cut after 500 characters."""
    error = refusal_of('{ "b" : ["x"], "a\\u0001\\t\\"é" : [1e2, 0.5, 1E-4, 12345678.0, 7], "c": 5 }')
    assert error.message == '"c" must be an object or an array' + at(
        '{"b":["x"],"a\\u0001\\t\\"é":[100.0,0.5,1.0E-4,1.2345678E7,7],"c":5}', 65
    )
    long_value = "v" * 600
    error = refusal_of({"k": [long_value], "z": 1})
    source = '{"k":["' + long_value + '"],"z":1}'
    assert error.message.endswith(
        f'(String)"{source[:500]}"[truncated {len(source) - 500} chars]; line: 1, column: {len(source)}]'
    )
    astral = refusal_of({"\U0001f600": 1})  # columns count UTF-16 units, as Java does
    assert astral.message.endswith("column: 8]")


def test_size_limit_is_256_kib_of_utf8() -> None:
    filler = "x" * (256 * 1024 - len('{"k":[""]}'))
    assert parse_filter_policy('{"k":["' + filler + '"]}')
    error = refusal_of('{"k":["' + filler + 'x"]}')
    assert isinstance(error, FilterPolicyLimit)
    assert error.message == "Filter policy is too long"
    assert refusal_of('{"k":["' + "é" * (128 * 1024) + '"]}').message == "Filter policy is too long"


def test_key_limit_counts_attribute_names_and_top_level_body_keys() -> None:
    """Per "Filter policy constraints": all keys in attribute scope, only top-level keys in body scope."""
    five_branches = {"a": ["1"], "$or": [{"b": ["1"], "c": ["1"]}, {"d": ["1"], "e": ["1"]}]}
    assert parse_filter_policy(json.dumps(five_branches)).keys == 5
    six_names = {"a": ["1"], "$or": [{"b": ["1"], "c": ["1"]}, {"d": ["1"], "f": ["1"], "e": ["1"]}]}
    assert refusal_of(six_names).message == "Filter policy can not have more than 5 keys"
    nested = {
        "state": ["SUCCESS"],
        "severity": [{"exists": True}],
        "message": [{"exists": True}],
        "finding": {
            "standard_control": [{"exists": True}],
            "region": [{"exists": True}],
            "account": [{"exists": True}],
        },
    }
    assert parse_filter_policy(json.dumps(nested), BODY).keys == 4


def test_combinations_follow_the_constraints_page() -> None:
    assert combinations({"key_a": ["1", "2", "3"], "key_b": ["1"], "key_c": ["1", "2"]}) == 6
    assert combinations('{"key_a": {"key_b": {"key_c": [1, 2, 3, 4]}}, "key_d": {"key_e": [1, 2, 3]}}') == 72
    assert combinations({}) == 0
    with pytest.raises(FilterPolicyError):
        combinations({"a": "b"})


def test_limits_are_checked_after_the_grammar() -> None:
    bad_and_big = {f"k{i}": ["x"] for i in range(6)} | {"z": [{"nope": 1}]}
    assert refusal_of(bad_and_big).message.startswith("Unrecognized match type nope")


# --- matching: message attributes --------------------------------------------------------------------------------


def test_empty_policy_accepts_everything() -> None:
    """Per "Removing a subscription filter policy in Amazon SNS": ``{}`` accepts every message, in both scopes."""
    assert attrs({}) is None
    assert parse_filter_policy("{}", BODY).match_body("not json") is None


def test_exact_string_and_and_or_logic() -> None:
    """Source: "AND/OR logic", "String value matching" (exact, case-sensitive)."""
    policy = {"customer_interests": ["rugby", "tennis"], "price_usd": [{"numeric": [">", 100]}]}
    assert attrs(policy, customer_interests=(S, "tennis"), price_usd=(N, "101")) is None
    assert attrs(policy, customer_interests=(S, "Tennis"), price_usd=(N, "101")) == Refusal(
        "customer_interests", 'value "Tennis" matches none of ["rugby","tennis"]'
    )
    assert attrs(policy, customer_interests=(S, "rugby")) == Refusal("price_usd", "attribute missing")
    assert attrs(policy, customer_interests=(S, "rugby"), price_usd=(N, "100")) == Refusal(
        "price_usd", 'value 100 matches none of [{"numeric":[">",100]}]'
    )


def test_or_operator() -> None:
    """Source: "AND/OR logic" ($or)."""
    policy = {"source": ["aws.cloudwatch"], "$or": [{"metricName": ["CPUUtilization"]}, {"namespace": ["AWS/EC2"]}]}
    assert attrs(policy, source=(S, "aws.cloudwatch"), namespace=(S, "AWS/EC2")) is None
    assert attrs(policy, source=(S, "aws.cloudwatch"), metricName=(S, "CPUUtilization")) is None
    assert attrs(policy, source=(S, "aws.cloudwatch"), namespace=(S, "AWS/ES")) == Refusal(
        "metricName", "attribute missing"
    )
    assert attrs(policy, source=(S, "x"), namespace=(S, "AWS/EC2")) is not None


def test_example_policies_page() -> None:
    """Per "Amazon SNS example filter policies": the accepting and the rejecting policy."""
    message = {
        "customer_interests": ("String.Array", '["soccer", "rugby", "hockey"]'),
        "store": (S, "example_corp"),
        "event": (S, "order_placed"),
        "price_usd": (N, "210.75"),
    }
    accepting = {
        "store": ["example_corp"],
        "event": [{"anything-but": "order_cancelled"}],
        "customer_interests": ["rugby", "football", "baseball"],
        "price_usd": [{"numeric": [">=", 100]}],
    }
    assert parse_filter_policy(json.dumps(accepting)).match_attributes(message) is None
    rejecting = {
        "store": ["example_corp"],
        "event": ["order_cancelled"],
        "encrypted": [False],
        "customer_interests": ["basketball", "baseball"],
    }
    assert parse_filter_policy(json.dumps(rejecting)).match_attributes(message) is not None


def test_prefix_suffix_and_equals_ignore_case() -> None:
    """Source: "String value matching"."""
    assert attrs({"c": [{"prefix": "bas"}]}, c=(S, "basketball")) is None
    assert attrs({"c": [{"prefix": "bas"}]}, c=(S, "rugby")) is not None
    assert attrs({"c": [{"suffix": "ball"}]}, c=(S, "baseball")) is None
    assert attrs({"c": [{"suffix": "ball"}]}, c=(S, "rugby")) is not None
    assert attrs({"c": [{"equals-ignore-case": "TeNNis"}]}, c=(S, "tennis")) is None
    assert attrs({"c": [{"equals-ignore-case": "tennis"}]}, c=(S, "tennis2")) is not None
    assert attrs({"c": [{"prefix": "1"}]}, c=(N, "12")) is not None  # string operators compare strings only


def test_anything_but_forms() -> None:
    """Source: "String value matching", "Numeric value matching": single value, list, numbers, prefix."""
    assert attrs({"e": [{"anything-but": "order_cancelled"}]}, e=(S, "order_placed")) is None
    assert attrs({"e": [{"anything-but": "order_cancelled"}]}, e=(S, "order_cancelled")) is not None
    assert attrs({"e": [{"anything-but": ["rugby", "tennis"]}]}, e=(S, "football")) is None
    assert attrs({"e": [{"anything-but": ["rugby", "tennis"]}]}, e=(S, "rugby")) is not None
    assert attrs({"p": [{"anything-but": [100, 500]}]}, p=(N, "101")) is None
    assert attrs({"p": [{"anything-but": [100, 500]}]}, p=(N, "1e2")) is not None
    assert attrs({"p": [{"anything-but": 100}]}, p=(N, "100.000001")) is not None  # five decimal places
    assert attrs({"e": [{"anything-but": {"prefix": "order-"}}]}, e=(S, "order_number")) is None
    assert attrs({"e": [{"anything-but": {"prefix": "order-"}}]}, e=(S, "order-cancelled")) is not None
    assert attrs({"e": [{"anything-but": "x"}]}) == Refusal("e", "attribute missing")
    assert attrs({"e": [{"anything-but": "x"}, {"exists": False}]}) is None  # "can be combined with exists: false"
    assert attrs({"e": [{"anything-but": ["x"]}]}, e=(N, "5")) is None  # excludes only what it names


def test_numeric_operators() -> None:
    """Per "Numeric value matching": =, <, <=, >, >=, ranges; values written any way compare by value."""
    assert attrs({"p": [{"numeric": ["=", 301.5]}]}, p=(N, "3.015e2")) is None
    assert attrs({"p": [{"numeric": ["=", 301.5]}]}, p=(N, "301.6")) is not None
    assert attrs({"p": [{"numeric": ["<", 0]}]}, p=(N, "-0.5")) is None
    assert attrs({"p": [{"numeric": ["<", 0]}]}, p=(N, "0")) is not None
    assert attrs({"p": [{"numeric": ["<=", 0]}]}, p=(N, "0")) is None
    assert attrs({"p": [{"numeric": [">=", 10]}]}, p=(N, "10")) is None
    assert attrs({"p": [{"numeric": [">", 10]}]}, p=(N, "10")) is not None
    rng = {"p": [{"numeric": [">", 0, "<=", 150]}]}
    assert attrs(rng, p=(N, "150")) is None
    assert attrs(rng, p=(N, "0")) is not None
    assert attrs(rng, p=(N, "150.00001")) is not None
    assert attrs({"p": [{"numeric": [">=", 0, "<", 1]}]}, p=(N, "1")) is not None
    assert attrs({"p": [301.5]}, p=(N, "3.015e2")) is None  # a number literal compares by value too
    assert attrs({"p": [{"numeric": [">", 0]}]}, p=(S, "5")) is not None  # a String attribute is not a number
    assert attrs({"p": ["5"]}, p=(N, "5")) is not None


def test_number_precision_and_range() -> None:
    """Per "Filter policy constraints": -10^9..10^9, five digits after the decimal point."""
    assert attrs({"p": [{"numeric": ["=", 1.000001]}]}, p=(N, "1.000009")) is None
    assert attrs({"p": [{"numeric": ["=", 1.00001]}]}, p=(N, "1.00002")) is not None
    assert attrs({"p": [{"numeric": [">", 0]}]}, p=(N, "0.000001")) is not None
    assert attrs({"p": [{"numeric": ["<=", 1e9]}]}, p=(N, "1000000000")) is None
    assert attrs({"p": [{"numeric": [">", 0]}]}, p=(N, "1000000001")) is not None  # outside: not comparable
    assert attrs({"p": [{"numeric": [">", 0]}]}, p=(N, "not-a-number")) is not None


def test_exists() -> None:
    """Per "Key matching": exists true and false, on a present and a missing attribute."""
    assert attrs({"store": [{"exists": True}]}, store=(N, "99"), other=(N, "99")) is None
    assert attrs({"store": [{"exists": True}]}, attr1=(N, "111")) == Refusal("store", "attribute missing")
    assert attrs({"store": [{"exists": False}]}, other=(N, "99")) is None
    assert attrs({"store": [{"exists": False}]}, store=(S, "fans")) == Refusal(
        "store", 'value "fans" matches none of [{"exists":false}]'
    )


def test_null_literal_does_not_match_a_missing_attribute() -> None:
    """Recorded: ``[null, {"anything-but": "whatever"}]`` did not deliver a message without attributes."""
    assert attrs({"attr1": [None, {"anything-but": "whatever"}]}) == Refusal("attr1", "attribute missing")
    assert attrs({"attr1": [None]}, attr1=(S, "null")) is not None


def test_string_array_attributes() -> None:
    """Per "String value matching": each element of a String.Array is matched; anything-but passes only when it
    excludes none of them."""
    interests = ("String.Array", '["rugby", "baseball"]')
    assert attrs({"c": ["rugby"]}, c=interests) is None
    assert attrs({"c": [{"prefix": "base"}]}, c=interests) is None
    assert attrs({"c": ["tennis"]}, c=interests) == Refusal(
        "c", 'values ["rugby","baseball"] matches none of ["tennis"]'
    )
    assert attrs({"c": [{"anything-but": ["tennis"]}]}, c=interests) is None
    assert attrs({"c": [{"anything-but": ["rugby", "tennis"]}]}, c=interests) is not None
    assert attrs({"c": [{"numeric": [">", 5]}, True]}, c=("String.Array", "[1, 10, [true]]")) is None
    assert attrs({"c": [True]}, c=("String.Array", "[true]")) is None
    assert attrs({"c": [{"exists": True}]}, c=("String.Array", "[]")) is not None
    assert attrs({"c": [{"exists": False}]}, c=("String.Array", "not json")) is None


def test_binary_and_custom_data_types() -> None:
    """Per "Filter policy constraints": Binary attributes are ignored; custom types compare as their base type."""
    assert attrs({"b": ["abc"]}, b=("Binary", "abc")) == Refusal("b", "Binary attribute (never compared)")
    assert attrs({"b": [{"exists": True}]}, b=("Binary", "abc")) is not None
    assert attrs({"b": [{"exists": False}]}, b=("Binary.png", "abc")) is None
    assert attrs({"s": ["abc"]}, s=("String.custom", "abc")) is None
    assert attrs({"n": [{"numeric": [">", 1]}]}, n=("Number.float", "1.5")) is None
    assert attrs({"s": ["abc"]}, s=("String.Array.x", "abc")) is None  # only String.Array itself is an array


def test_cidr_and_ip_literals() -> None:
    """Source: "String value matching" (IP address matching): IPv4 and IPv6 blocks; IP literals compare as
    addresses."""
    assert attrs({"ip": [{"cidr": "10.0.0.0/24"}]}, ip=(S, "10.0.0.255")) is None
    assert attrs({"ip": [{"cidr": "10.0.0.0/24"}]}, ip=(S, "10.1.1.0")) is not None
    assert attrs({"ip": [{"cidr": "10.0.0.0/24"}]}, ip=(S, "not-an-ip")) is not None
    assert attrs({"ip": [{"cidr": "2001:db8::/32"}]}, ip=(S, "2001:db8:ffff::1")) is None
    assert attrs({"ip": [{"cidr": "2001:db8::/32"}]}, ip=(S, "2001:db9::1")) is not None
    assert attrs({"ip": [{"cidr": "10.0.0.0/8"}]}, ip=(S, "::ffff:10.0.0.1")) is not None  # v4 block, v6 address
    assert (
        attrs({"ip": [{"cidr": "10.0.0.5/24"}]}, ip=(S, "10.0.0.4")) is not None
    )  # Event Ruler: from the given address
    assert attrs({"ip": ["2001:db8::1"]}, ip=(S, "2001:0db8:0:0:0:0:0:1")) is None


# --- matching: message body --------------------------------------------------------------------------------------


def test_body_nesting_mirrors_the_policy() -> None:
    """Source: "Amazon SNS example filter policies" (message body) and the recorded nested policy."""
    policy = {"object": {"key": [{"prefix": "auto-"}]}}
    assert body(policy, {"object": {"key": "auto-test"}}) is None
    assert body(policy, {"object": {"key": "home-test"}}) == Refusal(
        "object.key", 'value "home-test" matches none of [{"prefix":"auto-"}]'
    )
    assert body(policy, {"object": "auto-test"}) == Refusal("object.key", "key missing")
    assert body({"a": [{"exists": True}]}, {"a": {"b": 1}}) is not None  # an object is not a leaf value


def test_recorded_dotted_keys_are_nested_keys() -> None:
    policy = {"object.nested.test": ["string.value"]}
    for message in (
        {"object": {"nested": {"test": "string.value"}}},
        {"object.nested.test": "string.value"},
        {"object.nested": {"test": "string.value"}},
        {"object": {"nested.test": "string.value"}},
    ):
        assert body(policy, message) is None
    assert body(policy, {"object": {"nested": {"test": "string.notvalue"}}}) is not None
    assert body({"object": {"nested": ["string.value"]}}, {"object.nested": "string.value"}) is None


def test_recorded_arrays_in_the_body() -> None:
    assert body({"headers": {"route-to": ["queue1"]}}, {"headers": {"route-to": ["queue1", "queue2"]}}) is None
    assert body({"headers": {"route-to": ["queue1"]}}, {"headers": {"route-to": ["queue3"]}}) is not None
    policy = {
        "Records": {"s3": {"object": {"key": [{"prefix": "auto-"}]}}, "eventName": [{"prefix": "ObjectCreated:"}]}
    }
    created = {"eventName": "ObjectCreated:Put", "s3": {"object": {"key": "auto-insurance-2314.xml", "size": 17}}}
    assert body(policy, {"Records": [created]}) is None
    assert body(policy, {"Records": [created | {"eventName": "ObjectRemoved:Delete"}]}) is not None
    assert body(policy, {"Records": [created | {"s3": {"object": {"key": "home-insurance-2314.xml"}}}]}) is not None
    nested_arrays = {"eventName": "ObjectCreated:Put", "s3": {"object": [[{"key": "auto-insurance-2314.xml"}]]}}
    assert body(policy, {"Records": [nested_arrays, {"eventName": "ObjectRemoved:Delete"}]}) is None


def test_body_values_and_literals() -> None:
    """Source: "Numeric value matching" (body), literals true/false/null match only themselves."""
    assert body({"price_usd": [{"numeric": ["=", 301.5]}]}, '{"price_usd": 3.015e2}') is None
    assert body({"price": [{"anything-but": [100, 500]}]}, {"price": [100, 50]}) is None
    assert body({"price": [{"anything-but": [100, 500]}]}, {"price": 100}) is not None
    assert body({"flag": [True]}, {"flag": True}) is None
    assert body({"flag": [True]}, {"flag": "true"}) is not None
    assert body({"v": [None]}, {"v": None}) is None
    assert body({"v": [None]}, {}) is not None
    assert body({"v": [{"exists": True}]}, {"v": None}) is None
    assert body({"v": [{"exists": False}]}, {"v": []}) is None  # an empty array holds no value
    assert body({"n": [12345678901234]}, {"n": 12345678901234}) is None


def test_body_or_and_nested_or() -> None:
    """Per "AND/OR logic": ``$or`` at the top and inside a nested object."""
    policy = {
        "$or": [{"metricName": ["CPUUtilization", "ReadLatency"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}],
        "detail": {
            "scope": ["Service"],
            "$or": [{"source": ["aws.cloudwatch"]}, {"type": ["CloudWatch Alarm State Change"]}],
        },
    }
    passing = [
        {"metricName": "CPUUtilization", "detail": {"scope": "Service", "source": "aws.cloudwatch"}},
        {"namespace": "AWS/ES", "detail": {"scope": "Service", "source": "aws.cloudwatch"}},
        {"metricName": "ReadLatency", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}},
    ]
    failing = [
        {
            "metricName": "CPUUtilization",
            "detail": {"scope": "aws.cloudwatch", "type": "CloudWatch Alarm State Change"},
        },
        {"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CPUUtilization"}},
        {"metricName": "CPUUtilization", "detail": {"type": "CloudWatch Alarm State Change"}},
        {"metricName": "AWS/EC2", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}},
    ]
    compiled = parse_filter_policy(json.dumps(policy), BODY)
    assert [compiled.match_body(json.dumps(m)) for m in passing] == [None] * 3
    assert all(compiled.match_body(json.dumps(m)) is not None for m in failing)


def test_a_body_that_is_not_a_json_object_matches_nothing() -> None:
    """Per "Amazon SNS message filtering": body policies assume a well-formed JSON object."""
    policy = {"a": [{"exists": False}]}
    assert body(policy, "plain text") == Refusal("", "the message body is not JSON")
    assert body(policy, "[1, 2]") == Refusal("", "the message body is not a JSON object")
    assert body(policy, "{}") is None
