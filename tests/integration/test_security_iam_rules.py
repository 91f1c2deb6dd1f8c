"""--auth iam over real HTTP, both wire protocols: AWS's documented rules of docs/behaviour.md 11.7 to 11.9.

- "Limitations of Amazon SQS custom policies": a user of another account allowed ``sqs:*`` by the queue policy and
  by its own identity policy still may not delete the queue, change its attributes, tags or permissions, or
  see its move tasks (it may send);
- "IAM JSON policy elements: NotPrincipal": a ``Deny`` whose ``NotPrincipal`` names a user and the user's account
  leaves out that user only, not every principal of the account;
- "Amazon SQS API permissions: Actions and resource reference": showing a dead-letter queue's move tasks needs
  ``sqs:ListMessageMoveTasks`` and ``sqs:GetQueueAttributes`` on it, nothing else;
- "IAM policy elements: Variables and tags": ``${aws:username}`` in a ``Resource`` is the caller's user name (a
  ``Deny`` naming it applies to that user), and a variable the caller has no value for denies fail closed.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import ServerProcess, SignedClients, error_of

pytestmark = pytest.mark.integration

A, B = "111111111111", "222222222222"
REGION = "us-east-1"


def _policy(*actions: str) -> str:
    return json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": list(actions), "Resource": "*"}]}
    )


KEYS: dict[str, tuple[str, str | None, tuple[str, ...], str]] = {
    "root_a": ("AKIDRULESROOTA", None, (), A),
    "alice": ("AKIDRULESALICE", f"arn:aws:iam::{A}:user/alice", (_policy("sqs:*"),), A),
    "mallory": ("AKIDRULESMALLORY", f"arn:aws:iam::{A}:user/mallory", (_policy("sqs:*"),), A),
    "bob_b": ("AKIDRULESBOBB", f"arn:aws:iam::{B}:user/bob", (_policy("sqs:*"),), B),
    "watcher": (
        "AKIDRULESWATCHER",
        f"arn:aws:iam::{A}:role/redrive-watcher",
        (_policy("sqs:ListMessageMoveTasks", "sqs:GetQueueAttributes"),),
        A,
    ),
    "half_watcher": (
        "AKIDRULESHALF",
        f"arn:aws:iam::{A}:role/half-watcher",
        (_policy("sqs:ListMessageMoveTasks", "sqs:ReceiveMessage", "sqs:DeleteMessage"),),
        A,
    ),
}


@pytest.fixture(scope="module")
def rules_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp: Path = tmp_path_factory.mktemp("iam-rules")
    lines = [f'[server]\nauth = "iam"\naccount_id = "{A}"\n']
    for key, principal, policies, account in KEYS.values():
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "secret-{key}"\n')
        lines.append(f'account = "{account}"\n')
        if principal:
            lines.append(f'principal = "{principal}"\npolicies = {json.dumps(list(policies))}\n')
    (tmp / "sqsemu.toml").write_text("".join(lines))
    with ServerProcess(["--config", str(tmp / "sqsemu.toml")]) as srv:
        yield srv


@pytest.fixture
def as_(rules_server: ServerProcess, protocol: str) -> Iterator[Any]:
    with SignedClients(rules_server.endpoint_url, protocol) as clients:
        yield lambda who: clients.make(KEYS[who][0], f"secret-{KEYS[who][0]}")


def _queue(root: Any, base: str, statements: list[dict[str, Any]] | None = None) -> tuple[str, str]:
    """``(url, arn)`` of a fresh queue of account A whose policy holds ``statements`` (``{arn}`` in a statement's
    ``Resource`` is the queue's ARN)."""
    name = f"{base}-{uuid.uuid4().hex[:8]}"
    url = root.create_queue(QueueName=name)["QueueUrl"]
    arn = f"arn:aws:sqs:{REGION}:{A}:{name}"
    if statements is not None:
        policy = {"Version": "2012-10-17", "Statement": statements}
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy).replace("{arn}", arn)})
    return url, arn


def _denial(action: str, who: str, arn: str, why: str) -> str:
    return f"User: {who} is not authorized to perform: sqs:{action.lower()} on resource: {arn} {why}"


def test_cross_account_permissions_do_not_apply_to_queue_administration(as_: Any) -> None:
    """'Limitations of Amazon SQS custom policies': bob of account B is allowed sqs:* by the queue policy and by his
    own identity policy; he may send, never administer the queue."""
    root = as_("root_a")
    bob_arn = KEYS["bob_b"][1]
    url, arn = _queue(root, "shared", [{"Sid": "bob-all", "Effect": "Allow", "Principal": {"AWS": bob_arn},
                                       "Action": "sqs:*", "Resource": "{arn}"}])  # fmt: skip
    root.tag_queue(QueueUrl=url, Tags={"team": "a"})
    bob = as_("bob_b")
    bob.send_message(QueueUrl=url, MessageBody="cross-account send applies")
    calls = {
        "DeleteQueue": lambda: bob.delete_queue(QueueUrl=url),
        "SetQueueAttributes": lambda: bob.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "7"}),
        "TagQueue": lambda: bob.tag_queue(QueueUrl=url, Tags={"team": "b"}),
        "UntagQueue": lambda: bob.untag_queue(QueueUrl=url, TagKeys=["team"]),
        "ListQueueTags": lambda: bob.list_queue_tags(QueueUrl=url),
        "AddPermission": lambda: bob.add_permission(
            QueueUrl=url, Label="bob", AWSAccountIds=[B], Actions=["SendMessage"]
        ),
        "RemovePermission": lambda: bob.remove_permission(QueueUrl=url, Label="bob-all"),
        "ListMessageMoveTasks": lambda: bob.list_message_move_tasks(SourceArn=arn),
    }
    why = "because no resource-based policy allows the sqs:{} action"
    for action, call in calls.items():
        code, status, message = error_of(call)
        assert (code, status) == ("AccessDenied", 403), action
        assert message == _denial(action, bob_arn or "", arn, why.format(action.lower())), action
    # nothing changed: the queue, its attribute, its tags and its policy are as the owner left them
    attributes = root.get_queue_attributes(QueueUrl=url, AttributeNames=["DelaySeconds", "Policy"])["Attributes"]
    assert attributes["DelaySeconds"] == "0"
    assert [s["Sid"] for s in json.loads(attributes["Policy"])["Statement"]] == ["bob-all"]
    assert root.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "a"}
    assert root.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "cross-account send applies"


def test_not_principal_with_a_user_and_its_account_leaves_out_that_user_only(as_: Any) -> None:
    """'IAM JSON policy elements: NotPrincipal' (example "IAM user in the same or a different account"): alice and
    her account are left out of the deny; mallory, of the same account, is not."""
    root = as_("root_a")
    alice_arn, mallory_arn = KEYS["alice"][1], KEYS["mallory"][1]
    url, arn = _queue(root, "alice-only", [{
        "Sid": "only-alice", "Effect": "Deny",
        "NotPrincipal": {"AWS": [alice_arn, f"arn:aws:iam::{A}:root"]},
        "Action": "sqs:*", "Resource": "{arn}",
    }])  # fmt: skip
    as_("alice").send_message(QueueUrl=url, MessageBody="from alice")
    root.send_message(QueueUrl=url, MessageBody="from the account")
    mallory = as_("mallory")
    code, status, message = error_of(lambda: mallory.send_message(QueueUrl=url, MessageBody="x"))
    assert (code, status) == ("AccessDenied", 403)
    assert message == _denial("SendMessage", mallory_arn or "", arn, "with an explicit deny in a resource-based policy")
    code, _, _ = error_of(lambda: mallory.receive_message(QueueUrl=url))
    assert code == "AccessDenied"
    bodies = sorted(m["Body"] for m in root.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"])
    assert bodies == ["from alice", "from the account"]


def test_showing_move_tasks_needs_list_and_get_attributes_only(as_: Any) -> None:
    """'Amazon SQS API permissions: Actions and resource reference': ListMessageMoveTasks needs
    sqs:ListMessageMoveTasks and sqs:GetQueueAttributes on the dead-letter queue (no ReceiveMessage or
    DeleteMessage); a role without sqs:GetQueueAttributes is denied, naming it."""
    root = as_("root_a")
    _, dlq_arn = _queue(root, "orders-dlq")
    root.create_queue(
        QueueName=f"orders-{uuid.uuid4().hex[:8]}",
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"})},
    )
    watcher = as_("watcher")
    assert watcher.list_message_move_tasks(SourceArn=dlq_arn).get("Results", []) == []
    code, status, message = error_of(lambda: watcher.start_message_move_task(SourceArn=dlq_arn))
    assert (code, status) == ("AccessDenied", 403) and "sqs:startmessagemovetask" in message
    half = as_("half_watcher")
    code, status, message = error_of(lambda: half.list_message_move_tasks(SourceArn=dlq_arn))
    assert (code, status) == ("AccessDenied", 403)
    why = "because no identity-based policy allows the sqs:getqueueattributes action"
    assert message == _denial("GetQueueAttributes", KEYS["half_watcher"][1] or "", dlq_arn, why)


def test_a_policy_variable_in_a_deny_names_the_callers_own_queue(as_: Any) -> None:
    """'IAM policy elements: Variables and tags': a queue policy denies each user receiving from its own outbox
    (``*-${aws:username}-outbox``): mallory may not read ``...-mallory-outbox``, alice may; a role, which has no
    ``aws:username``, is denied by it fail closed (docs/behaviour.md 11.5)."""
    root = as_("root_a")
    tag = uuid.uuid4().hex[:8]
    name = f"q{tag}-mallory-outbox"
    url = root.create_queue(QueueName=name)["QueueUrl"]
    arn = f"arn:aws:sqs:{REGION}:{A}:{name}"
    policy = {"Version": "2012-10-17", "Statement": [{
        "Sid": "not-own-outbox", "Effect": "Deny", "Principal": "*", "Action": "sqs:ReceiveMessage",
        "Resource": f"arn:aws:sqs:*:{A}:*-${{aws:username}}-outbox",
    }]}  # fmt: skip
    root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    root.send_message(QueueUrl=url, MessageBody="for alice")
    mallory = as_("mallory")
    code, status, message = error_of(lambda: mallory.receive_message(QueueUrl=url))
    assert (code, status) == ("AccessDenied", 403)
    why = "with an explicit deny in a resource-based policy"
    assert message == _denial("ReceiveMessage", KEYS["mallory"][1] or "", arn, why)
    assert as_("alice").receive_message(QueueUrl=url)["Messages"][0]["Body"] == "for alice"
    code, _, _ = error_of(lambda: as_("half_watcher").receive_message(QueueUrl=url))
    assert code == "AccessDenied"
