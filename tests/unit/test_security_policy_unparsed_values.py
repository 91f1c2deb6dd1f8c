"""Condition values that do not parse for their operator (a ``Numeric*`` value that is not a number, a ``Date*``
one that is not a date, an ``IpAddress``/``NotIpAddress`` one that is not an address or CIDR range): the condition
cannot be decided, and is decided fail closed (a ``Deny`` applies, an ``Allow`` does not), never as "matches
nothing", which made a negated operator hold for every request and a ``Deny`` never apply."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from sqsemu.security.evaluate import Context, evaluate, principal_for
from sqsemu.security.policy import parse_policy

A = "111111111111"
ALICE = f"arn:aws:iam::{A}:user/alice"
QUEUE = f"arn:aws:sqs:us-east-1:{A}:orders"
ALLOW_ALL = {"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}


def doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allowed(*policies: str) -> bool:
    principal = principal_for(ALICE, A)
    identity = tuple((f"identity policy {n}", parse_policy(p, False)) for n, p in enumerate(policies, 1))
    fixed = {"aws:principalarn": (ALICE,), "aws:sourceip": ("10.1.2.3",), "sqs:n": ("5",)}
    context = Context(fixed, lambda: 1_000_000.0)
    return evaluate(principal, "sqs:SendMessage", QUEUE, A, identity, None, context).allowed


@pytest.mark.parametrize(
    "condition",
    [
        {"NumericLessThan": {"sqs:n": "ten"}},
        {"NumericNotEquals": {"sqs:n": ["5", "five"]}},
        {"DateLessThan": {"aws:CurrentTime": "tomorrow"}},
        {"DateNotEquals": {"aws:EpochTime": True}},
        {"IpAddress": {"aws:SourceIp": "10.0.0.0/33"}},
        {"NotIpAddress": {"aws:SourceIp": "not-an-address"}},
        {"ArnLike": {"aws:PrincipalArn": "arn:aws:iam:*"}},
    ],
)
def test_a_deny_with_an_unparsed_value_applies(condition: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "sqsemu.access"):
        assert not allowed(
            doc(ALLOW_ALL, {"Effect": "Deny", "Action": "sqs:*", "Resource": "*", "Condition": condition})
        )
    assert "fail_closed=deny" in caplog.text


@pytest.mark.parametrize(
    "condition",
    [
        {"NumericNotEquals": {"sqs:n": "five"}},
        {"NotIpAddress": {"aws:SourceIp": "10.0.0.0/33"}},
        {"DateNotEquals": {"aws:CurrentTime": "never"}},
        {"ArnNotLike": {"aws:PrincipalArn": "arn:aws:iam:*"}},
    ],
)
def test_an_allow_with_an_unparsed_value_does_not_apply(condition: dict[str, Any]) -> None:
    assert not allowed(doc({**ALLOW_ALL, "Condition": condition}))


def test_an_absent_key_is_still_decided() -> None:
    """``...IfExists`` and negated operators on an absent key do not compare values: nothing to decide."""
    deny = {"Effect": "Deny", "Action": "sqs:*", "Resource": "*",
            "Condition": {"NumericLessThanIfExists": {"sqs:absent": "ten"}}}  # fmt: skip
    assert not allowed(doc(ALLOW_ALL, deny))
    deny["Condition"] = {"NumericLessThan": {"sqs:absent": "ten"}}
    assert allowed(doc(ALLOW_ALL, deny))
