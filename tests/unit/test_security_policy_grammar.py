"""The policy grammar (sqsemu.security.policy, conditions): documents AWS's pages show parse; each broken rule is
refused with PolicyError naming it; any document at all either parses or is refused (Hypothesis), and under
``--auth iam`` a ``Policy`` attribute is either accepted or answered ``InvalidAttributeValue``, never anything
else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqsemu.clock import ManualClock
from sqsemu.config import Config, Credential
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.errors import AccessDenied, InvalidAttributeValue
from sqsemu.security.iam import AccessControl
from sqsemu.security.policy import PolicyError, parse_policy
from tests.unit.test_security_policy_table import CASES

GOOD = {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:1:q"}


def with_statement(**changes: Any) -> str:
    statement = {**GOOD, **changes}
    return json.dumps({"Version": "2012-10-17", "Statement": [{k: v for k, v in statement.items() if v is not None}]})


def test_every_table_policy_parses() -> None:
    texts = {(t, False) for case in CASES for t in case.identity} | {(c.queue, True) for c in CASES if c.queue}
    for text, resource_based in texts:
        assert parse_policy(text, resource_based).statements


def test_parsed_policies_are_cached_by_text() -> None:
    text = with_statement(Sid="cached")
    assert parse_policy(text, True) is parse_policy(text, True)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "The policy is not a valid JSON document."),
        ("[]", "The policy must be a JSON object."),
        ('{"Statement": [], "Extra": 1}', "Unknown policy field 'Extra' (allowed: Version, Id, Statement)."),
        ('{"Version": "2020-01-01", "Statement": []}', "Version must be one of 2012-10-17, 2008-10-17."),
        ('{"Version": "2012-10-17"}', "Statement is required: a statement object or a non-empty array of them."),
        ('{"Statement": []}', "Statement is required: a statement object or a non-empty array of them."),
        ('{"Id": 5, "Statement": []}', "Id must be a string."),
        ('{"Statement": [5]}', "Statement #1 must be an object."),
        (with_statement(Condition={"NumericEquals": {"k": 1}}).replace("1}", "NaN}"), "not a valid JSON document"),
        (with_statement(Condition={"NumericLessThan": {"k": 1}}).replace("1}", "Infinity}"), "not a valid JSON"),
        (with_statement(Effect="Maybe"), "Statement #1: Effect must be Allow or Deny."),
        (with_statement(Effect=None), "Statement #1: Effect must be Allow or Deny."),
        (with_statement(Action=None), "Statement #1 must have exactly one of Action and NotAction."),
        (with_statement(NotAction="sqs:*"), "Statement #1 must have exactly one of Action and NotAction."),
        (with_statement(Action="SendMessage"), "Statement #1: Action: 'SendMessage' is not an action"),
        (with_statement(Action=[]), "Statement #1: Action must be a string or a non-empty array of strings."),
        (with_statement(NotResource="*"), "Statement #1 must not have both Resource and NotResource."),
        (with_statement(Principal=None), "Statement #1 must have Principal or NotPrincipal."),
        (with_statement(NotPrincipal="*"), "Statement #1 must not have both Principal and NotPrincipal."),
        (with_statement(Principal={"Nobody": "x"}), "Statement #1: Principal: unknown principal type 'Nobody'."),
        (with_statement(Principal={"AWS": "bob"}), "Statement #1: Principal: invalid principal 'bob'."),
        (with_statement(Principal={"AWS": "arn:aws:iam::1:user/x"}), "invalid principal"),
        (with_statement(Principal=5), 'Statement #1: Principal must be "*" or an object'),
        (with_statement(Sid=5), "Statement #1: Sid must be a string."),
        (with_statement(Sid="s", Extra=1), "Statement 's': unknown field 'Extra'."),
        (with_statement(Condition=[]), "Statement #1: Condition: must be an object of condition operators"),
        (with_statement(Condition={"StringSortOf": {"k": "v"}}), "invalid condition operator 'StringSortOf'"),
        (with_statement(Condition={"StringEquals": {}}), "'StringEquals' must map condition keys to values"),
        (with_statement(Condition={"StringEquals": {"k": []}}), "'StringEquals': 'k' has no values"),
        (with_statement(Condition={"StringEquals": {"k": {"x": 1}}}), "a condition value must be a string"),
        (with_statement(Condition={"Null": {"k": "maybe"}}), "Null takes true or false"),
        (with_statement(Condition={"NullIfExists": {"k": "true"}}), "invalid condition operator 'NullIfExists'"),
        (with_statement(Condition={"IfExists": {"k": "v"}}), "invalid condition operator 'IfExists'"),
    ],
)
def test_grammar_errors(text: str, reason: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, True)
    assert str(caught.value).startswith(reason) or reason in str(caught.value)


@pytest.mark.parametrize(
    ("resource", "reason"),
    [
        ("queue", "Statement #1: Resource: 'queue' is not a resource (an ARN or *)."),
        ("arn:aws:sqs", "Statement #1: Resource: 'arn:aws:sqs' is not a valid ARN"),
    ],
)
def test_an_identity_policy_resource_must_be_an_arn_a_queue_policys_is_kept(resource: str, reason: str) -> None:
    """IAM refuses an identity-based policy's non-ARN resource; SQS stores a queue policy's (docs/behaviour.md
    11.4): it is kept, and matches no queue."""
    with pytest.raises(PolicyError) as caught:
        parse_policy(with_statement(Principal=None, Resource=resource), False)
    assert str(caught.value).startswith(reason)
    resources = parse_policy(with_statement(Resource=resource), True).statements[0].resources
    assert resources is not None and resources.unusable == (resource,)


def test_identity_policies_have_no_principal_and_need_a_resource() -> None:
    with pytest.raises(PolicyError, match="an identity-based policy cannot have Principal"):
        parse_policy(with_statement(), False)
    with pytest.raises(PolicyError, match="must have Resource or NotResource"):
        parse_policy(with_statement(Principal=None, Resource=None), False)
    assert parse_policy(with_statement(Resource=None), True).statements[0].resources is None  # the queue itself


VOCABULARY = st.sampled_from(
    ["Version", "Id", "Statement", "Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource",
     "NotResource", "Condition", "AWS", "Service", "Allow", "Deny", "StringEquals", "ForAnyValue:StringLike",
     "NullIfExists", "Null", "IpAddress", "DateLessThan", "ArnLike", "aws:SourceIp", "x"]
)  # fmt: skip
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
    st.sampled_from(["*", "sqs:*", "2012-10-17", "arn:aws:sqs:us-east-1:111111111111:q", "10.0.0.0/8", "true",
                     "arn:aws:iam::111111111111:root", "111111111111", "2009-06-30T12:00Z"]),
)  # fmt: skip
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(VOCABULARY, inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(DOCUMENTS, st.booleans())
def test_any_document_parses_or_is_refused(document: Any, resource_based: bool) -> None:
    try:
        parse_policy(json.dumps(document), resource_based)
    except PolicyError:
        pass


class _SetAttributes:
    def __init__(self, policy: str) -> None:
        self.queue_url = "http://localhost/111111111111/q"
        self.attributes = {"Policy": policy}


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS)
def test_set_queue_attributes_accepts_or_answers_invalid_attribute_value(document: Any) -> None:
    config = Config(auth="iam", account_id="111111111111", credentials=(Credential("AKIDROOT", "s"),))
    control = AccessControl(config, Broker(ManualClock()), ManualClock())
    caller = Namespace("111111111111", "us-east-1")
    try:
        control.check("AKIDROOT", "SetQueueAttributes", _SetAttributes(json.dumps(document)), ("111111111111", "q"),
                      caller, {"scheme": "http"}, "r")  # fmt: skip
    except InvalidAttributeValue as exc:
        assert str(exc).startswith("Invalid value for the parameter Policy. Reason: ")
    except AccessDenied:
        pytest.fail("the root user on its own queue")
