"""Policy variables (IAM User Guide, "IAM policy elements: Variables and tags") in the policy evaluator: ``${key}``
in ``Resource``/``NotResource`` and in condition values of a ``2012-10-17`` policy stands for the request's value of
``key``; in a ``2008-10-17`` policy it is plain text; one that cannot be substituted is decided fail closed (a
``Deny`` applies, an ``Allow`` does not)."""

from __future__ import annotations

import json
from typing import Any

from sqsemu.security.evaluate import Context, evaluate, principal_for
from sqsemu.security.policy import parse_policy

A = "111111111111"
ALICE = f"arn:aws:iam::{A}:user/alice"
ROLE = f"arn:aws:iam::{A}:role/worker"
OWN = f"arn:aws:sqs:us-east-1:{A}:alice-orders"
OTHER = f"arn:aws:sqs:us-east-1:{A}:bob-orders"


def doc(*statements: dict[str, Any], version: str = "2012-10-17") -> str:
    return json.dumps({"Version": version, "Statement": list(statements)})


ALLOW_ALL = {"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}


def decide(arn: str, resource: str, *policies: str, fixed: dict[str, tuple[str, ...]] | None = None) -> bool:
    principal = principal_for(arn, A)
    if fixed is None:
        fixed = {"aws:username": (principal.name,)} if principal.kind == "user" else {}
    identity = tuple((f"identity policy {n}", parse_policy(p, False)) for n, p in enumerate(policies, 1))
    context = Context({"aws:principalarn": (arn,), **fixed}, lambda: 0.0)
    return evaluate(principal, "sqs:DeleteQueue", resource, A, identity, None, context).allowed


def test_a_deny_on_the_callers_own_resources_applies() -> None:
    deny_own = {"Effect": "Deny", "Action": "sqs:DeleteQueue", "Resource": "arn:aws:sqs:*:*:${aws:username}-*"}
    policy = doc(ALLOW_ALL, deny_own)
    assert not decide(ALICE, OWN, policy)
    assert decide(ALICE, OTHER, policy)


def test_an_allow_on_the_callers_own_resources_applies() -> None:
    policy = doc({"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:sqs:*:*:${aws:username}-*"})
    assert decide(ALICE, OWN, policy)
    assert not decide(ALICE, OTHER, policy)


def test_variables_in_condition_values() -> None:
    named = {"aws:PrincipalArn": "arn:aws:iam::111111111111:user/${aws:username}"}
    deny = {"Effect": "Deny", "Action": "sqs:*", "Resource": "*", "Condition": {"StringEquals": named}}
    assert not decide(ALICE, OWN, doc(ALLOW_ALL, deny))


def test_a_default_value_and_the_special_characters() -> None:
    allow = {"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:sqs:*:*:${aws:username, 'nobody'}-orders"}
    assert decide(ALICE, OWN, doc(allow))
    assert not decide(ROLE, f"arn:aws:sqs:us-east-1:{A}:worker-orders", doc(allow))
    assert decide(ROLE, f"arn:aws:sqs:us-east-1:{A}:nobody-orders", doc(allow))
    literal = {"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:sqs:*:*:a${*}b"}
    assert decide(ALICE, f"arn:aws:sqs:us-east-1:{A}:a*b", doc(literal))
    assert not decide(ALICE, f"arn:aws:sqs:us-east-1:{A}:axxb", doc(literal))


def test_a_variable_without_a_value_fails_closed() -> None:
    """A role has no aws:username: the Deny naming it applies, the Allow naming it does not."""
    deny = {"Effect": "Deny", "Action": "sqs:DeleteQueue", "Resource": "arn:aws:sqs:*:*:${aws:username}-*"}
    assert not decide(ROLE, OTHER, doc(ALLOW_ALL, deny))
    allow = {"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:sqs:*:*:${aws:username}-*"}
    assert not decide(ROLE, OTHER, doc(allow))
    cond = {"Effect": "Deny", "Action": "sqs:*", "Resource": "*",
            "Condition": {"StringNotEquals": {"aws:PrincipalArn": "${aws:username}"}}}  # fmt: skip
    assert not decide(ROLE, OTHER, doc(ALLOW_ALL, cond))


def test_a_2008_policy_takes_them_as_text() -> None:
    deny_own = {"Effect": "Deny", "Action": "sqs:DeleteQueue", "Resource": "arn:aws:sqs:*:*:${aws:username}-*"}
    assert decide(ALICE, OWN, doc(ALLOW_ALL, deny_own, version="2008-10-17"))
