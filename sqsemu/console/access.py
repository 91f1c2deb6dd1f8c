"""The queue page's Access policy card under ``--auth iam`` (docs/console.md): the queue policy, and "Try the call",
a hypothetical call decided by ``POST /_sqsemu/authorize``'s function and explained in words.

The form posts to ``.../try-call``, which answers 303 to the queue page with the call in its query
(``?try_as=<access key id>&try_call=<action>&try_context=<JSON>#try-result``): the page decides it again when it is
shown (deciding changes nothing), so a reload shows the same result without resending a form, and the browser
scrolls to the result (the fragment). :func:`tried_call` turns the answer into what the card shows: a headline
(allowed or denied, as whom, by which statement or why none), every statement looked at with the element that did
not match (``Condition ArnEquals aws:SourceArn``), the notes, and the AccessDenied message an SDK would get.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqsemu.admin.common import AdminError

__all__ = [
    "TRY_ACTIONS",
    "TRY_CONTEXT_MAX_CHARS",
    "TRY_FIELDS",
    "explain_answer",
    "refused_form",
    "tried_call",
]

TRY_ACTIONS = (
    "SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes",
    "SetQueueAttributes", "GetQueueUrl", "PurgeQueue", "DeleteQueue", "ListQueueTags", "TagQueue",
    "ListDeadLetterSourceQueues", "StartMessageMoveTask",
)  # fmt: skip
"""The calls the form offers."""
TRY_FIELDS = (("access_key_id", "try_as"), ("action", "try_call"), ("context", "try_context"))
"""Each form field and the query parameter that carries it to the page the post redirects to."""
TRY_CONTEXT_MAX_CHARS = 8192
"""The longest context the form takes (it travels in the redirect's URL)."""

Answer = Mapping[str, Any]


def tried_call(
    authorize: Callable[[Mapping[str, Any]], dict[str, Any]],
    fields: Mapping[str, str],
    queue_arn: str,
) -> dict[str, Any]:
    """Decide the call of the form ``fields`` (``access_key_id``, ``action``, ``context``: a JSON object of
    condition keys) on the queue ``queue_arn`` with ``authorize`` (``sqsemu.security.iam.AccessControl.authorize``)
    and explain it (:func:`explain_answer`). A bad form (a context that is not a JSON object or is longer than
    :data:`TRY_CONTEXT_MAX_CHARS`, an unknown key or action) raises ``AdminError`` (400) saying what is wrong."""
    raw = fields.get("context", "").strip() or "{}"
    if len(raw) > TRY_CONTEXT_MAX_CHARS:
        raise AdminError(f"The context keys are longer than {TRY_CONTEXT_MAX_CHARS} characters.")
    try:
        context = json.loads(raw)
    except ValueError:
        context = None
    if not isinstance(context, dict):
        raise AdminError("The context must be a JSON object of condition keys and values.")
    call = {"access_key_id": fields.get("access_key_id", ""), "action": fields.get("action", ""), "queue": queue_arn}
    try:
        answer = authorize({**call, "context": context})
    except ValueError as exc:
        raise AdminError(str(exc)) from None
    return explain_answer(answer, call["action"])


def _account(arn: str) -> str:
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 else ""


def _headline(answer: Answer, call: str) -> str:
    """The decision in one sentence: allowed or denied, the call, as whom, and by which statement or why none."""
    principal = answer["principal"]
    head = f"{'Allowed' if answer['decision'] == 'allowed' else 'Denied'}: {call} as {principal}"
    if answer["action"].lower() != f"sqs:{call}".lower():
        head += f" (IAM action {answer['action']})"
    reason: str = answer["reason"]
    deciding = f"{answer['policy']} statement {answer['statement']}"
    if reason == "allowed":
        return f"{head}, by {deciding}."
    if reason == "explicit deny":
        return f"{head}, by {deciding}: an explicit Deny."
    if reason == "root user":
        return f"{head}: a root user may make any call on its own account's queues."
    if reason == "no identity-based policy allows":
        if _account(principal) == _account(answer["resource"]):
            return f"{head}: no statement of its identity-based policies or of the queue policy allows it."
        return f"{head}: no identity-based policy allows it (a call on another account's queue needs one)."
    if reason == "no resource-based policy allows":
        return f"{head}: no statement of the queue policy allows it."
    if reason.startswith("cross-account permissions do not apply"):
        return f"{head}: the queue policy allows it, but cross-account permissions do not apply to this action."
    return f"{head}: {reason}."


def _statement_line(policy: str, statement: Mapping[str, Any], deciding: bool) -> str:
    head = f"{policy}, statement {statement['statement']} ({statement['effect']})"
    if statement["failed"] is not None:
        return f"{head}: does not apply, its {statement['failed']} does not match."
    return f"{head}: applies; it decided." if deciding else f"{head}: applies."


def explain_answer(answer: Answer, call: str) -> dict[str, Any]:
    """What the card shows for ``POST /_sqsemu/authorize``'s ``answer`` to ``call`` (``SendMessage``):
    ``{"outcome": "allowed" | "denied", "headline": str, "statements": [{"text", "deciding"}...], "absent":
    [policy name...], "notes": [str...], "message": AWS's AccessDenied message or None}``."""
    statements: list[dict[str, Any]] = []
    absent: list[str] = []
    evaluated: Sequence[Mapping[str, Any]] = answer.get("evaluated") or ()
    for policy in evaluated:
        if not policy["present"]:
            absent.append(policy["policy"])
            continue
        for statement in policy["statements"]:
            deciding = policy["policy"] == answer["policy"] and statement["statement"] == answer["statement"]
            statements.append({"text": _statement_line(policy["policy"], statement, deciding), "deciding": deciding})
    return {
        "outcome": "allowed" if answer["decision"] == "allowed" else "denied",
        "headline": _headline(answer, call),
        "statements": statements,
        "absent": absent,
        "notes": list(answer.get("notes") or ()),
        "message": answer.get("message"),
    }


def refused_form(text: str) -> dict[str, Any]:
    """What the card shows for a form it could not decide (:func:`tried_call`'s ``AdminError``): ``text``."""
    return {"outcome": "error", "headline": text, "statements": [], "absent": [], "notes": [], "message": None}
