"""AddPermission / RemovePermission policy building (sqsemu.engine.permissions)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sqsemu.engine.errors import InvalidParameterValue, MissingParameter, OverLimit
from sqsemu.engine.permissions import add_statement, remove_statement

QUEUE = "arn:aws:sqs:us-east-1:111111111111:my-queue"
ACCOUNT = "222222222222"


def add(
    policy: str | None, label: str | None = "L", accounts: Any = (ACCOUNT,), actions: Any = ("SendMessage",)
) -> str:
    return add_statement(
        policy, QUEUE, label, list(accounts) if accounts else accounts, list(actions) if actions else actions
    )


def test_first_statement_builds_the_default_policy() -> None:
    policy = add(None, "AliceSend")
    assert json.loads(policy) == {
        "Version": "2008-10-17",
        "Id": QUEUE + "/SQSDefaultPolicy",
        "Statement": [
            {
                "Sid": "AliceSend",
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                "Action": "SQS:SendMessage",
                "Resource": QUEUE,
            }
        ],
    }
    assert list(json.loads(policy)) == ["Version", "Id", "Statement"]
    assert " " not in policy  # compact JSON


def test_lists_when_more_than_one_account_or_action() -> None:
    policy = add(None, "Many", ["111111111111", ACCOUNT], ["ReceiveMessage", "DeleteMessage", "*"])
    (statement,) = json.loads(policy)["Statement"]
    assert statement["Principal"] == {"AWS": ["arn:aws:iam::111111111111:root", f"arn:aws:iam::{ACCOUNT}:root"]}
    assert statement["Action"] == ["SQS:ReceiveMessage", "SQS:DeleteMessage", "SQS:*"]


def test_repeated_accounts_and_actions_collapse() -> None:
    policy = add(None, "Dup", [ACCOUNT, ACCOUNT], ["SendMessage", "SendMessage"])
    (statement,) = json.loads(policy)["Statement"]
    assert statement["Principal"] == {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}
    assert statement["Action"] == "SQS:SendMessage"


def test_second_statement_appends_and_duplicate_label_fails() -> None:
    policy = add(add(None, "One"), "Two", actions=["GetQueueUrl"])
    assert [s["Sid"] for s in json.loads(policy)["Statement"]] == ["One", "Two"]
    with pytest.raises(InvalidParameterValue) as info:
        add(policy, "One")
    assert info.value.message == "Value One for parameter Label is invalid. Reason: Already exists."


def test_user_policy_keeps_version_id_and_other_keys() -> None:
    user = json.dumps({"Version": "2012-10-17", "Id": "custom", "Statement": {"Sid": "Mine", "Effect": "Deny"}})
    document = json.loads(add(user, "Added"))
    assert document["Version"] == "2012-10-17"
    assert document["Id"] == "custom"
    assert [s["Sid"] for s in document["Statement"]] == ["Mine", "Added"]


def test_user_policy_without_statement_or_version_gets_them() -> None:
    document = json.loads(add(json.dumps({"Extra": 1}), "Added"))
    assert document["Version"] == "2008-10-17"
    assert document["Id"] == QUEUE + "/SQSDefaultPolicy"
    assert document["Extra"] == 1
    assert [s["Sid"] for s in document["Statement"]] == ["Added"]


@pytest.mark.parametrize(
    "action",
    [
        "*",
        "SendMessage",
        "SendMessageBatch",
        "ReceiveMessage",
        "DeleteMessage",
        "DeleteMessageBatch",
        "ChangeMessageVisibility",
        "ChangeMessageVisibilityBatch",
        "GetQueueAttributes",
        "GetQueueUrl",
        "ListDeadLetterSourceQueues",
        "PurgeQueue",
    ],
)
def test_grantable_actions(action: str) -> None:
    assert json.loads(add(None, actions=[action]))["Statement"][0]["Action"] == f"SQS:{action}"


@pytest.mark.parametrize("action", ["CreateQueue", "SetQueueAttributes", "AddPermission", "TagQueue", "ListQueues"])
def test_owner_only_actions_rejected(action: str) -> None:
    with pytest.raises(InvalidParameterValue) as info:
        add(None, actions=[action])
    assert info.value.message == (
        f"Value {action} for parameter Actions is invalid. "
        "Reason: Only the queue owner is allowed to invoke this action."
    )


@pytest.mark.parametrize("action", ["sendmessage", "SQS:SendMessage", "Bogus", ""])
def test_unknown_actions_rejected(action: str) -> None:
    with pytest.raises(InvalidParameterValue, match="for parameter Actions is invalid"):
        add(None, actions=["SendMessage", action])


def test_more_than_seven_actions_is_over_limit() -> None:
    seven = [
        "SendMessage",
        "ReceiveMessage",
        "DeleteMessage",
        "ChangeMessageVisibility",
        "GetQueueAttributes",
        "GetQueueUrl",
        "PurgeQueue",
    ]
    add(None, actions=seven)
    with pytest.raises(OverLimit):
        add(None, actions=[*seven, "ListDeadLetterSourceQueues"])


@pytest.mark.parametrize("account", ["12345678901", "1234567890123", "12345678901a", "", "arn:aws:iam::1:root"])
def test_bad_account_ids(account: str) -> None:
    with pytest.raises(InvalidParameterValue, match="for parameter AWSAccountIds is invalid"):
        add(None, accounts=[ACCOUNT, account])


@pytest.mark.parametrize("label", ["a" * 81, "has space", "dot.ted", "é"])
def test_bad_labels(label: str) -> None:
    with pytest.raises(InvalidParameterValue, match="for parameter Label is invalid"):
        add(None, label)


def test_label_limits_accepted() -> None:
    add(None, "a" * 80)
    add(None, "A-b_9")


def test_missing_parameters() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"label": None}, "Label"),
        ({"label": ""}, "Label"),
        ({"accounts": []}, "AWSAccountIds"),
        ({"accounts": None}, "AWSAccountIds"),
        ({"actions": []}, "Actions"),
        ({"actions": None}, "Actions"),
    ]
    for kwargs, name in cases:
        with pytest.raises(MissingParameter) as info:
            add(None, **kwargs)
        assert info.value.message == f"The request must contain the parameter {name}."


def test_twenty_statements_max() -> None:
    policy: str | None = None
    for i in range(20):
        policy = add(policy, f"S{i}")
    with pytest.raises(OverLimit):
        add(policy, "S20")


def test_fifty_principals_max() -> None:
    accounts = [f"{i:012d}" for i in range(1, 26)]
    policy = add(None, "A", accounts)
    policy = add(policy, "B", accounts)
    with pytest.raises(OverLimit):
        add(policy, "C")


def test_policy_size_max() -> None:
    padding = "x" * 8_000
    user = json.dumps({"Version": "2012-10-17", "Padding": padding, "Statement": []}, separators=(",", ":"))
    with pytest.raises(OverLimit):
        add(user, "Big")
    smaller = json.dumps({"Padding": "x" * 7_500, "Statement": []})
    assert len(add(smaller, "Fits").encode()) <= 8_192


def test_remove_statement() -> None:
    policy = add(add(None, "One"), "Two")
    left = remove_statement(policy, "One")
    assert left is not None
    document = json.loads(left)
    assert [s["Sid"] for s in document["Statement"]] == ["Two"]
    assert document["Version"] == "2008-10-17"
    assert remove_statement(left, "Two") is None


def test_remove_unknown_label() -> None:
    for policy in (None, "", add(None, "One")):
        with pytest.raises(InvalidParameterValue) as info:
            remove_statement(policy, "Other")
        assert info.value.message == "Value Other for parameter Label is invalid. Reason: can't find label."


def test_remove_missing_label() -> None:
    with pytest.raises(MissingParameter) as info:
        remove_statement(add(None), None)
    assert info.value.message == "The request must contain the parameter Label."


def test_remove_from_user_policy_with_single_statement_object() -> None:
    user = json.dumps({"Version": "2012-10-17", "Statement": {"Sid": "Mine", "Effect": "Allow"}})
    assert remove_statement(user, "Mine") is None
