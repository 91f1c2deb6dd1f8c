"""Which IAM actions each SQS API call needs, and on which queue: the table of the SQS Developer Guide's "Amazon
SQS API permissions: Actions and resource reference".

- a batch call needs its single action (``SendMessageBatch`` -> ``sqs:SendMessage``, as recorded in AWS's denial
  messages: "... is not authorized to perform: sqs:sendmessage ..." for a SendMessageBatch call);
- ``StartMessageMoveTask`` needs ``sqs:StartMessageMoveTask``, ``sqs:ReceiveMessage``, ``sqs:DeleteMessage`` and
  ``sqs:GetQueueAttributes`` on the source (the dead-letter queue) and ``sqs:SendMessage`` on the destination when
  one is given; ``CancelMessageMoveTask`` its own action plus the same three on the source; ``ListMessageMoveTasks``
  (showing a task's status) only ``sqs:ListMessageMoveTasks`` and ``sqs:GetQueueAttributes`` on the source, as the
  reference's row for it has it (docs/behaviour.md 11.9);
- ``ListQueues`` addresses no queue: its resource is ``arn:aws:sqs:<region>:<account>:*`` of the caller's account.

:func:`request_keys` gives the condition keys a call's own parameters set, as the Service Authorization Reference's
"Actions, resources, and condition keys for Amazon SQS" lists them per action and the SQS Developer Guide's "ABAC
condition keys for Amazon SQS" says (``aws:RequestTag`` and ``aws:TagKeys``: "TagQueue, UntagQueue, CreateQueue"):
the tags of ``CreateQueue`` and ``TagQueue`` as ``aws:RequestTag/<key>`` and their keys as ``aws:TagKeys``; the keys
``UntagQueue`` removes as ``aws:TagKeys`` (it sends no values). A call without tags has neither key.

:data:`REQUIRED` maps an API action to ``(iam action, role)`` pairs; the role names the queue the action is on:
``queue`` (the call's QueueUrl or QueueName), ``source`` (a move task's SourceArn, or the queue of its TaskHandle),
``destination`` (a move task's DestinationArn, when given) or ``account`` (the caller's account, ``ListQueues``).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["REQUIRED", "Role", "request_keys"]

Role = str

_SINGLE = (
    "AddPermission",
    "ChangeMessageVisibility",
    "CreateQueue",
    "DeleteMessage",
    "DeleteQueue",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "ListQueueTags",
    "PurgeQueue",
    "ReceiveMessage",
    "RemovePermission",
    "SendMessage",
    "SetQueueAttributes",
    "TagQueue",
    "UntagQueue",
)
_MOVE_SOURCE = (("sqs:ReceiveMessage", "source"), ("sqs:DeleteMessage", "source"), ("sqs:GetQueueAttributes", "source"))

REQUIRED: dict[str, tuple[tuple[str, Role], ...]] = {name: ((f"sqs:{name}", "queue"),) for name in _SINGLE}
REQUIRED.update(
    {
        "SendMessageBatch": (("sqs:SendMessage", "queue"),),
        "DeleteMessageBatch": (("sqs:DeleteMessage", "queue"),),
        "ChangeMessageVisibilityBatch": (("sqs:ChangeMessageVisibility", "queue"),),
        "ListQueues": (("sqs:ListQueues", "account"),),
        "StartMessageMoveTask": (
            ("sqs:StartMessageMoveTask", "source"), *_MOVE_SOURCE, ("sqs:SendMessage", "destination"),
        ),
        "CancelMessageMoveTask": (("sqs:CancelMessageMoveTask", "source"), *_MOVE_SOURCE),
        "ListMessageMoveTasks": (("sqs:ListMessageMoveTasks", "source"), ("sqs:GetQueueAttributes", "source")),
    }
)  # fmt: skip


def request_keys(action: str, request: object) -> dict[str, tuple[str, ...]] | None:
    """The condition keys (lower case, as the request context holds them) that the parameters of ``request``, a
    call of the SQS API ``action``, set (module docstring), None when it sets none: ``aws:tagkeys`` (the tag keys,
    in the call's order) and ``aws:requesttag/<key in lower case>`` (its value; condition key names are
    case-insensitive, "IAM JSON policy elements: Condition", so the first of two keys differing only in case
    gives it)."""
    if action == "UntagQueue":
        keys = getattr(request, "tag_keys", None)
        return {"aws:tagkeys": tuple(keys)} if isinstance(keys, list) and keys else None
    if action not in ("CreateQueue", "TagQueue"):
        return None
    tags = getattr(request, "tags", None)
    if not isinstance(tags, Mapping) or not tags:
        return None
    found: dict[str, tuple[str, ...]] = {"aws:tagkeys": tuple(tags)}
    for key, value in tags.items():
        found.setdefault(f"aws:requesttag/{key.lower()}", (value,))
    return found
