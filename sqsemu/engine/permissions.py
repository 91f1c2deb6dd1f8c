"""AddPermission and RemovePermission: statements in the queue's ``Policy`` document (docs/behaviour.md 2.16, 2.17,
3.5; API Reference ``AddPermission``, ``RemovePermission``; SQS Developer Guide "Policy quotas").

Both functions take the queue's current ``Policy`` attribute (a JSON string, or None when unset) and return the
new one; the broker stores it, and removes the attribute when ``remove_statement`` returns None. AddPermission
produces the AWS-observed shape::

    {"Version": "2008-10-17",
     "Id": "<queue arn>/SQSDefaultPolicy",
     "Statement": [{"Sid": "<Label>", "Effect": "Allow",
                    "Principal": {"AWS": "arn:aws:iam::<account>:root"},   # a list when more than one account
                    "Action": "SQS:<Action>",                               # a list when more than one action
                    "Resource": "<queue arn>"}]}

The policy is rendered as compact JSON (no spaces), which is also what the 8,192-byte limit is measured on.

Choices where AWS is not confirmed:

* ``Version`` is ``2008-10-17``, the value AWS was observed to write (docs/behaviour.md 3.5); the ``Id`` suffix
  ``/SQSDefaultPolicy`` is a reconstruction. An existing policy keeps its own ``Version`` and ``Id`` and any other
  top-level keys; a policy without them gets the defaults; a ``Statement`` that is a single object becomes a list.
* Grantable actions are those cross-account permissions apply to (Developer Guide, "Limitations of Amazon SQS
  custom policies"): ChangeMessageVisibility, DeleteMessage, GetQueueAttributes, GetQueueUrl,
  ListDeadLetterSourceQueues, PurgeQueue, ReceiveMessage, SendMessage, and ``*``. The batch forms
  (SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch) are accepted too and written as given
  (``SQS:SendMessageBatch``): the API Reference says the single forms already grant them, so naming them is
  harmless, and rejecting them could fail a request AWS accepts. Owner-only actions (CreateQueue, SetQueueAttributes,
  AddPermission, TagQueue, StartMessageMoveTask...) are rejected as only the queue owner may invoke them; other
  names are rejected as unknown. Names are case-sensitive.
* Repeated account ids or actions in one request are collapsed (first occurrence kept) before counting.
* Invalid-value messages name the JSON members ``AWSAccountIds`` and ``Actions``, matching the MissingParameter
  messages.
* The 50-principal policy quota is checked over every statement of the resulting policy (each principal string
  counts once per statement it appears in), like the 20-statement and 8,192-byte quotas; all raise ``OverLimit``.
* Validation order: Label present and well-formed, AWSAccountIds and Actions present, account ids, actions,
  7-action limit, duplicate label, then the policy-wide quotas.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sqsemu.engine.errors import MissingParameter, OverLimit, invalid_value
from sqsemu.engine.limits import DEFAULT_LIMITS, Limits

POLICY_VERSION = "2008-10-17"
POLICY_ID_SUFFIX = "/SQSDefaultPolicy"

GRANTABLE_ACTIONS = frozenset(
    {
        "ChangeMessageVisibility",
        "ChangeMessageVisibilityBatch",
        "DeleteMessage",
        "DeleteMessageBatch",
        "GetQueueAttributes",
        "GetQueueUrl",
        "ListDeadLetterSourceQueues",
        "PurgeQueue",
        "ReceiveMessage",
        "SendMessage",
        "SendMessageBatch",
    }
)
OWNER_ONLY_ACTIONS = frozenset(
    {
        "AddPermission",
        "CancelMessageMoveTask",
        "CreateQueue",
        "DeleteQueue",
        "ListMessageMoveTasks",
        "ListQueues",
        "ListQueueTags",
        "RemovePermission",
        "SetQueueAttributes",
        "StartMessageMoveTask",
        "TagQueue",
        "UntagQueue",
    }
)

_LABEL = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_ACCOUNT_ID = re.compile(r"^[0-9]{12}$")


def _dump(policy: dict[str, Any]) -> str:
    return json.dumps(policy, separators=(",", ":"), ensure_ascii=False)


def _parse(policy: str | None) -> dict[str, Any] | None:
    """The policy as an object, or None when unset, empty or not a JSON object (SetQueueAttributes already
    rejects the latter, so it only happens for state written around the validators)."""
    if not policy:
        return None
    try:
        parsed = json.loads(policy)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _statements(document: dict[str, Any]) -> list[Any]:
    statement = document.get("Statement")
    if isinstance(statement, list):
        return list(statement)
    if statement is None:
        return []
    return [statement]


def _sid(statement: Any) -> Any:
    return statement.get("Sid") if isinstance(statement, dict) else None


def _principal_count(statement: Any) -> int:
    principal = statement.get("Principal") if isinstance(statement, dict) else None
    if isinstance(principal, str):
        return 1
    if not isinstance(principal, dict):
        return 0
    count = 0
    for value in principal.values():
        if isinstance(value, list):
            count += len(set(map(str, value)))
        elif value is not None:
            count += 1
    return count


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _check_label(label: str | None) -> str:
    if not label:
        raise MissingParameter.named("Label")
    if not _LABEL.match(label):
        raise invalid_value(
            label,
            "Label",
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.",
        )
    return label


def _check_action(action: str) -> None:
    if action == "*" or action in GRANTABLE_ACTIONS:
        return
    if action in OWNER_ONLY_ACTIONS:
        raise invalid_value(action, "Actions", "Only the queue owner is allowed to invoke this action.")
    raise invalid_value(
        action,
        "Actions",
        "Must be * or one of ChangeMessageVisibility, DeleteMessage, GetQueueAttributes, GetQueueUrl, "
        "ListDeadLetterSourceQueues, PurgeQueue, ReceiveMessage, SendMessage (or a batch form of SendMessage, "
        "DeleteMessage or ChangeMessageVisibility).",
    )


def add_statement(
    policy: str | None,
    queue_arn: str,
    label: str | None,
    account_ids: Sequence[str] | None,
    actions: Sequence[str] | None,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> str:
    """AddPermission: the queue's ``Policy`` (JSON string or None) with one more Allow statement; returns the new
    policy JSON string.

    The statement's ``Sid`` is ``label``; its principals are ``arn:aws:iam::<id>:root`` for each 12-digit account
    id; its actions are ``SQS:<name>``; its resource is ``queue_arn``. Raises ``MissingParameter`` (Label,
    AWSAccountIds, Actions absent or empty), ``InvalidParameterValue`` (label not 1-80 ``[A-Za-z0-9_-]``; label
    already used by a statement: ``Value <label> for parameter Label is invalid. Reason: Already exists.``; an
    account id that is not 12 digits; an action that cannot be granted) and ``OverLimit`` (more than 7 actions,
    more than 20 statements, more than 50 principals or more than 8,192 bytes in the resulting policy)
    (docs/behaviour.md 2.16, 3.5, 9; Developer Guide "Policy quotas").
    """
    sid = _check_label(label)
    if not account_ids:
        raise MissingParameter.named("AWSAccountIds")
    if not actions:
        raise MissingParameter.named("Actions")
    accounts = _unique(account_ids)
    for account in accounts:
        if not _ACCOUNT_ID.match(account):
            raise invalid_value(account, "AWSAccountIds", "An AWS account ID must be a 12-digit number.")
    names = _unique(actions)
    for action in names:
        _check_action(action)
    if len(names) > limits.policy_actions_per_statement_max:
        raise OverLimit(
            f"A statement can have at most {limits.policy_actions_per_statement_max} actions; the request names "
            f"{len(names)}."
        )

    current = _parse(policy) or {}
    statements = _statements(current)
    if any(_sid(statement) == sid for statement in statements):
        raise invalid_value(sid, "Label", "Already exists.")

    principals = [f"arn:aws:iam::{account}:root" for account in accounts]
    granted = [f"SQS:{action}" for action in names]
    statements.append(
        {
            "Sid": sid,
            "Effect": "Allow",
            "Principal": {"AWS": principals[0] if len(principals) == 1 else principals},
            "Action": granted[0] if len(granted) == 1 else granted,
            "Resource": queue_arn,
        }
    )
    if len(statements) > limits.policy_statements_max:
        raise OverLimit(f"A queue policy can have at most {limits.policy_statements_max} statements.")
    if sum(_principal_count(statement) for statement in statements) > limits.policy_principals_max:
        raise OverLimit(f"A queue policy can have at most {limits.policy_principals_max} principals.")

    document: dict[str, Any] = {
        "Version": current.get("Version", POLICY_VERSION),
        "Id": current.get("Id", queue_arn + POLICY_ID_SUFFIX),
    }
    for key, value in current.items():
        if key not in ("Version", "Id", "Statement"):
            document[key] = value
    document["Statement"] = statements
    rendered = _dump(document)
    size = len(rendered.encode())
    if size > limits.policy_max_bytes:
        raise OverLimit(
            f"The queue policy would be {size} bytes; a policy can be at most {limits.policy_max_bytes} bytes."
        )
    return rendered


def remove_statement(policy: str | None, label: str | None) -> str | None:
    """RemovePermission: the queue's ``Policy`` without the statement(s) whose ``Sid`` is ``label``.

    Returns the new policy JSON string, or None when no statement is left (the broker then removes the ``Policy``
    attribute, as AWS does). Raises ``MissingParameter`` (no label) and ``InvalidParameterValue``
    ``Value <label> for parameter Label is invalid. Reason: can't find label.`` when no statement has that ``Sid``
    (including when the queue has no policy) (docs/behaviour.md 2.17).
    """
    if not label:
        raise MissingParameter.named("Label")
    current = _parse(policy)
    statements = _statements(current) if current is not None else []
    kept = [statement for statement in statements if _sid(statement) != label]
    if current is None or len(kept) == len(statements):
        raise invalid_value(label, "Label", "can't find label.")
    if not kept:
        return None
    document = dict(current)
    document["Statement"] = kept
    return _dump(document)
