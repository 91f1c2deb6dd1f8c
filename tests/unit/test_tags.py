"""Tag validation (sqsemu.engine.tags): CreateQueue, TagQueue and UntagQueue rules."""

from __future__ import annotations

import pytest

from sqsemu.engine.errors import InvalidParameterValue, MissingParameter
from sqsemu.engine.tags import validate_tag_keys, validate_tags


@pytest.mark.parametrize(
    "tags",
    [
        {"k": ""},  # empty value allowed
        {"a" * 128: "v" * 256},
        {"MyTag": "1", "mytag": "2"},  # case-sensitive keys
        {"team name": "data platform"},
        {"a_b.c:d/e=f+g-h@i": "x_y.z:/=+-@"},
        {"Größe": "日本語", "٣": "١٢"},  # Unicode letters and digits
        {"awsome": "aws:value"},  # only the aws: key prefix is reserved
    ],
)
def test_valid_tags(tags: dict[str, str]) -> None:
    validate_tags(tags, {})


@pytest.mark.parametrize(
    ("tags", "fragment"),
    [
        ({"": "v"}, "between 1 and 128"),
        ({"a" * 129: "v"}, "between 1 and 128"),
        ({"k": "v" * 257}, "at most 256"),
        ({"k!": "v"}, "not allowed"),
        ({"k": "v#"}, "not allowed"),
        ({"tab\tkey": "v"}, "not allowed"),
        ({"k": "line\nbreak"}, "not allowed"),
        ({"aws:name": "v"}, "reserved"),
        ({"AWS:name": "v"}, "reserved"),
        ({"Aws:": "v"}, "reserved"),
    ],
)
def test_invalid_tags(tags: dict[str, str], fragment: str) -> None:
    with pytest.raises(InvalidParameterValue, match=fragment):
        validate_tags(tags, {})


def test_fifty_tags_after_merge() -> None:
    existing = {f"k{i}": "v" for i in range(40)}
    validate_tags({f"n{i}": "v" for i in range(10)}, existing)
    validate_tags({f"k{i}": "new" for i in range(40)}, existing)  # overwrites do not add
    with pytest.raises(InvalidParameterValue, match="at most 50 tags"):
        validate_tags({f"n{i}": "v" for i in range(11)}, existing)
    with pytest.raises(InvalidParameterValue, match="at most 50 tags"):
        validate_tags({f"n{i}": "v" for i in range(51)}, {})


def test_empty_tags() -> None:
    validate_tags({}, {})  # CreateQueue without tags
    validate_tags(None, {})
    empties: list[dict[str, str] | None] = [{}, None]
    for empty in empties:
        with pytest.raises(MissingParameter) as info:
            validate_tags(empty, {"a": "b"}, required=True)
        assert info.value.message == "The request must contain the parameter Tags."


def test_validation_does_not_modify() -> None:
    existing = {"a": "1"}
    validate_tags({"a": "2", "b": "3"}, existing)
    assert existing == {"a": "1"}


def test_tag_keys() -> None:
    validate_tag_keys(["a", "unknown-keys-are-fine", "aws:anything", "x" * 128])
    no_keys: list[list[str] | None] = [[], None]
    for empty_keys in no_keys:
        with pytest.raises(MissingParameter) as info:
            validate_tag_keys(empty_keys)
        assert info.value.message == "The request must contain the parameter TagKeys."
    for bad in ("", "x" * 129):
        with pytest.raises(InvalidParameterValue, match="between 1 and 128"):
            validate_tag_keys(["ok", bad])
