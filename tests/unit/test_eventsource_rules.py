"""Unit rules of event source mappings, no sockets: Lambda event filtering patterns ("Lambda event filtering"),
the partial batch response conditions ("Implementing partial batch responses") and the parameter rules of
CreateEventSourceMapping for SQS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sqsemu.eventsource.errors import InvalidParameterValue
from sqsemu.eventsource.filters import RecordFilter, parse_filters
from sqsemu.eventsource.mapping import Mapping, apply_parameters, function_name
from sqsemu.eventsource.poller import item_failures


def _record(body: Any, **attributes: str) -> dict[str, Any]:
    return {
        "messageId": "m1",
        "body": body if isinstance(body, str) else json.dumps(body),
        "attributes": {"ApproximateReceiveCount": "1", "SenderId": "AIDA"},
        "messageAttributes": {k: {"stringValue": v, "dataType": "String"} for k, v in attributes.items()},
    }


@pytest.mark.parametrize(
    ("pattern", "record", "expected"),
    [
        ({"body": {"kind": ["order"]}}, _record({"kind": "order"}), True),
        ({"body": {"kind": ["order"]}}, _record({"kind": "refund"}), False),
        ({"body": {"kind": ["order"]}}, _record("kind order"), False),
        ({"body": ["plain"]}, _record("plain"), True),
        ({"body": {"n": [{"numeric": [">", 1, "<=", 5]}]}}, _record({"n": 5}), True),
        ({"body": {"n": [{"numeric": [">", 1, "<=", 5]}]}}, _record({"n": 6}), False),
        ({"body": {"n": [{"numeric": ["=", 3]}]}}, _record({"n": "3"}), False),
        ({"body": {"s": [{"prefix": "ab"}]}}, _record({"s": "abc"}), True),
        ({"body": {"s": [{"suffix": "bc"}]}}, _record({"s": "abc"}), True),
        ({"body": {"s": [{"equals-ignore-case": "ABC"}]}}, _record({"s": "abc"}), True),
        ({"body": {"s": [{"anything-but": ["x", "y"]}]}}, _record({"s": "z"}), True),
        ({"body": {"s": [{"anything-but": "z"}]}}, _record({"s": "z"}), False),
        ({"body": {"s": [{"exists": True}]}}, _record({"s": 1}), True),
        ({"body": {"s": [{"exists": False}]}}, _record({"t": 1}), True),
        ({"body": {"s": [{"exists": False}]}}, _record({"s": 1}), False),
        ({"body": {"tags": ["b"]}}, _record({"tags": ["a", "b"]}), True),
        ({"body": {"ok": [True]}}, _record({"ok": True}), True),
        ({"body": {"ok": [True]}}, _record({"ok": 1}), False),
        ({"body": {"v": [None]}}, _record({"v": None}), True),
        ({"body": {"a": {"b": ["c"]}}}, _record({"a": {"b": "c"}}), True),
        # Lambda's filter rule syntax (issue 28): prefix and suffix ignoring case, $or, numbers as written
        ({"body": {"s": [{"prefix": {"equals-ignore-case": "AB"}}]}}, _record({"s": "abc"}), True),
        ({"body": {"s": [{"prefix": {"equals-ignore-case": "AB"}}]}}, _record({"s": "xabc"}), False),
        ({"body": {"s": [{"suffix": {"equals-ignore-case": ".PNG"}}]}}, _record({"s": "a.png"}), True),
        ({"body": {"s": [{"suffix": {"equals-ignore-case": ".PNG"}}]}}, _record({"s": "png"}), False),
        ({"body": {"$or": [{"a": ["1"]}, {"b": ["2"]}]}}, _record({"b": "2"}), True),
        ({"body": {"$or": [{"a": ["1"]}, {"b": ["2"]}]}}, _record({"b": "3"}), False),
        ({"$or": [{"body": {"a": ["1"]}}, {"body": {"b": ["2"]}}]}, _record({"a": "1"}), True),
        ({"body": {"n": [300]}}, _record('{"n": 300}'), True),
        ({"body": {"n": [300]}}, _record('{"n": 3.0e2}'), False),
        ({"body": {"n": [{"numeric": ["=", 300]}]}}, _record('{"n": 3.0e2}'), True),
        ({"body": {"n": [{"anything-but": [300]}]}}, _record('{"n": 3.0e2}'), True),
    ],
)
def test_pattern_matching(pattern: dict[str, Any], record: dict[str, Any], expected: bool) -> None:
    assert RecordFilter([json.dumps(pattern)]).matches(record) is expected


def test_any_filter_matching_delivers() -> None:
    flt = RecordFilter([json.dumps({"body": {"k": ["a"]}}), json.dumps({"body": {"k": ["b"]}})])
    assert flt.matches(_record({"k": "b"})) and not flt.matches(_record({"k": "c"}))
    assert RecordFilter([]).matches(_record("anything"))


@pytest.mark.parametrize(
    "pattern",
    [
        "{not json",
        "[]",
        "{}",
        '{"body": "x"}',
        '{"body": []}',
        '{"body": {}}',
        '{"body": [{"prefix": 1}]}',
        '{"body": [{"numeric": [">"]}]}',
        '{"body": [{"numeric": ["!", 1]}]}',
        '{"body": [{"wat": 1}]}',
        '{"body": [{"exists": "yes"}]}',
        '{"body": [{"anything-but": []}]}',
        # not in Lambda's filter rule syntax for event source mappings
        '{"body": {"s": [{"anything-but": {"prefix": "a"}}]}}',
        '{"body": {"s": [{"anything-but": {"suffix": "a"}}]}}',
        '{"body": {"s": [{"wildcard": "a*"}]}}',
        '{"body": {"$or": [{"a": ["1"]}]}}',
        # Amazon SQS event source mappings filter on the body key only
        '{"messageAttributes": {"p": {"stringValue": ["high"]}}}',
        '{"attributes": {"SenderId": [{"prefix": "AI"}]}}',
        '{"body": {"kind": ["order"]}, "attributes": {"SenderId": ["nobody"]}}',
    ],
)
def test_invalid_patterns(pattern: str) -> None:
    with pytest.raises(InvalidParameterValue):
        parse_filters([{"Pattern": pattern}])


def test_at_most_five_filters() -> None:
    parse_filters([{"Pattern": '{"body": ["x"]}'}] * 5)
    with pytest.raises(InvalidParameterValue):
        parse_filters([{"Pattern": '{"body": ["x"]}'}] * 6)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (None, set()),
        ({}, set()),
        ({"batchItemFailures": None}, set()),
        ({"batchItemFailures": []}, set()),
        ({"batchItemFailures": [{"itemIdentifier": "b"}]}, {"b"}),
        ({"batchItemFailures": [{"itemIdentifier": ""}]}, None),
        ({"batchItemFailures": [{"itemIdentifier": None}]}, None),
        ({"batchItemFailures": [{"id": "b"}]}, None),
        ({"batchItemFailures": [{"itemIdentifier": "zzz"}]}, None),
        ({"batchItemFailures": "b"}, None),
        ("text", None),
        ([{"itemIdentifier": "b"}], None),
    ],
)
def test_partial_batch_response_conditions(payload: Any, expected: set[str] | None) -> None:
    assert item_failures(payload, ["a", "b"]) == expected


def _mapping() -> Mapping:
    return Mapping("u", "000000000000", "us-east-1", "arn:aws:sqs:us-east-1:000000000000:q", "f")


@pytest.mark.parametrize(
    ("params", "fifo"),
    [
        ({"BatchSize": 0}, False),
        ({"BatchSize": 11}, False),
        ({"BatchSize": 10_001, "MaximumBatchingWindowInSeconds": 1}, False),
        ({"BatchSize": 11, "MaximumBatchingWindowInSeconds": 1}, True),
        ({"MaximumBatchingWindowInSeconds": 1}, True),
        ({"MaximumBatchingWindowInSeconds": 301}, False),
        ({"ScalingConfig": {"MaximumConcurrency": 1}}, False),
        ({"ScalingConfig": {"MaximumConcurrency": 1001}}, False),
        ({"FunctionResponseTypes": ["Other"]}, False),
        ({"Enabled": "yes"}, False),
        ({"BatchSize": True}, False),
        ({"ParallelizationFactor": 2}, False),
    ],
)
def test_parameter_rules(params: dict[str, Any], fifo: bool) -> None:
    mapping = _mapping()
    with pytest.raises(InvalidParameterValue):
        apply_parameters(mapping, params, fifo)
    assert mapping.batch_size == 10  # nothing changed


def test_parameters_accepted() -> None:
    mapping = _mapping()
    apply_parameters(
        mapping,
        {"BatchSize": 10_000, "MaximumBatchingWindowInSeconds": 300, "ScalingConfig": {"MaximumConcurrency": 2}},
        False,
    )
    assert (mapping.batch_size, mapping.batching_window_s, mapping.pollers) == (10_000, 300, 2)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("f", "f"),
        ("f:$LATEST", "f"),
        ("123456789012:function:f", "f"),
        ("arn:aws:lambda:us-east-1:123456789012:function:my-fn:prod", "my-fn"),
    ],
)
def test_function_names(value: str, name: str) -> None:
    assert function_name(value) == name


def test_bad_function_name() -> None:
    with pytest.raises(InvalidParameterValue):
        function_name("not a name!")
