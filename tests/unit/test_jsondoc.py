"""sqsemu.engine.jsondoc: client JSON documents parse without RecursionError, bounded in depth, no lone surrogates."""

from __future__ import annotations

import pytest

from sqsemu.engine import jsondoc


def test_ordinary_documents_parse() -> None:
    assert jsondoc.loads('{"a": [1, {"b": "\\ud83d\\ude00"}]}') == {"a": [1, {"b": "\U0001f600"}]}
    assert jsondoc.loads(b"[1, 2]") == [1, 2]
    assert jsondoc.loads("3") == 3


@pytest.mark.parametrize(
    ("value", "depth"),
    [(1, 0), ([], 1), ({"a": []}, 2), ([[1], [[2]]], 3), ({"a": {"b": {"c": [{}]}}}, 5)],
)
def test_depth_counts_arrays_and_objects(value: object, depth: int) -> None:
    assert jsondoc.depth(value) == depth


def test_depth_of_a_very_deep_value_does_not_recurse() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    assert jsondoc.depth(value) == 100_001


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # json.loads: RecursionError
        "[" * (jsondoc.MAX_DEPTH + 1) + "]" * (jsondoc.MAX_DEPTH + 1),  # parses, but too deep
        "1" * 5000,  # Python's int-string limit
        '"\\ud800"',
        '{"\\udfff": 1}',
        '["a\\udc00b"]',
        "{nope",
        b"\xff\xfe",
    ],
    ids=[
        "recursion",
        "max-depth-plus-one",
        "5000-digits",
        "lone-high",
        "lone-low-key",
        "lone-low-inside",
        "bad",
        "bad-utf8",
    ],
)
def test_hostile_documents_raise_value_error(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        jsondoc.loads(text)


def test_max_depth_itself_is_accepted() -> None:
    n = jsondoc.MAX_DEPTH
    assert jsondoc.depth(jsondoc.loads("[" * n + "]" * n)) == n
