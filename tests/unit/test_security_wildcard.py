"""IAM's ``*`` and ``?`` wildcards (sqsemu.security.wildcard): the same answers as a regular expression would give,
and none that takes time exponential in the pattern, as a backtracking regular expression does on a value that does
not match ("IAM JSON policy elements: Resource"; "Condition operators", StringLike and Arn*)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqsemu.security.conditions import parse_conditions
from sqsemu.security.policy import Pattern
from sqsemu.security.wildcard import Wildcard


def _reference(pattern: str, value: str) -> bool:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(body, value, re.DOTALL) is not None


@pytest.mark.parametrize(
    ("pattern", "value", "matched"),
    [
        ("*", "", True),
        ("", "", True),
        ("", "a", False),
        ("a*", "a", True),
        ("*a", "ba", True),
        ("a*b", "ab", True),
        ("a*b", "a", False),
        ("a*a", "a", False),  # the first and the last segment do not share a character
        ("a?c", "abc", True),
        ("a?c", "ac", False),
        ("*?", "", False),
        ("arn:aws:sqs:*:111122223333:orders-*", "arn:aws:sqs:us-east-1:111122223333:orders-eu", True),
        ("arn:aws:sqs:*:111122223333:orders-*", "arn:aws:sqs:us-east-1:111122223333:payments", False),
        ("*x*y", "xxy", True),
        ("*ab*ab", "aabab", True),
        ("a\nb*", "a\nbc", True),
    ],
)
def test_a_pattern_matches_the_whole_value(pattern: str, value: str, matched: bool) -> None:
    assert Wildcard(pattern).matches(value) is matched
    assert _reference(pattern, value) is matched


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.text(alphabet="ab*?", max_size=10), st.text(alphabet="ab", max_size=12))
def test_the_answers_are_those_of_the_regular_expression(pattern: str, value: str) -> None:
    assert Wildcard(pattern).matches(value) is _reference(pattern, value)


def test_a_substituted_value_is_literal_its_own_wildcards_included() -> None:
    pattern = Wildcard.of([("arn:aws:sqs:*:*:", False), ("a*", True), ("-*", False)])
    assert pattern.matches("arn:aws:sqs:us-east-1:111122223333:a*-queue")
    assert not pattern.matches("arn:aws:sqs:us-east-1:111122223333:abc-queue")


# Before: 13 stars against a 75-character ARN held the event loop (the whole server) for more than 20 s; a few
# stars against a long request value did the same. Linear now: each finishes at once (no timing is asserted; a
# backtracking matcher would not finish within the suite's timeout).
MANY_STARS = "arn:aws:sqs:*:*:" + "*x" * 12 + "*y"
LONG_ARN = "arn:aws:sqs:us-east-1:000000000000:" + "x" * 40


def test_a_resource_pattern_of_many_stars_is_decided_without_backtracking() -> None:
    assert not Pattern((MANY_STARS,), ignore_case=False).matches(LONG_ARN)
    assert Pattern((MANY_STARS,), ignore_case=False).matches(LONG_ARN + "y")


def test_a_string_like_condition_on_a_long_value_is_decided_without_backtracking() -> None:
    (condition,) = parse_conditions({"StringLike": {"aws:UserAgent": "*a*a*a*a*a*a*b"}})

    class Context:
        def values(self, key: str) -> tuple[str, ...] | None:
            return ("a" * 5000,) if key == "aws:useragent" else None

    assert condition.holds(Context()) is False


def test_an_arn_condition_of_many_stars_is_decided_without_backtracking() -> None:
    (condition,) = parse_conditions({"ArnLike": {"aws:SourceArn": MANY_STARS}})

    class Context:
        def values(self, key: str) -> tuple[str, ...] | None:
            return (LONG_ARN,) if key == "aws:sourcearn" else None

    assert condition.holds(Context()) is False


def test_actions_ignore_case_resources_do_not() -> None:
    assert Pattern(("sqs:Send*",), ignore_case=True).matches("SQS:sendmessage")
    assert not Pattern(("arn:aws:sqs:*:*:Orders*",), ignore_case=False).matches("arn:aws:sqs:r:1:orders")
