"""The policy evaluator, table-driven: (identity policies, queue policy, principal, action, resource, context) ->
decision and deciding statement.

The policies are AWS's own examples, as they stand but for the marked changes:

- SQS Developer Guide, "Custom Amazon SQS Access Policy Language examples": UseCase1 (one account), UseCase2 (two
  accounts until a date: ``DateLessThan`` ``AWS:CurrentTime``), UseCase3 (and an IP range: ``IpAddress``
  ``aws:SourceIp``), deny one account, deny unless from a VPC endpoint (``StringNotEquals`` ``aws:sourceVpce``);
- SQS Developer Guide, "Basic examples of Amazon SQS policies": one permission to one account
  (``Queue1_SendMessage``), two permissions, all permissions to two accounts, cross-account role and user,
  all users, all users for a time, all users in a CIDR range, allowlist and blocklist;
- SQS Developer Guide, "Using identity-based policies with Amazon SQS": a user creating ``alice_queue_*`` queues,
  developers writing to a shared queue, managers reading queue sizes;
- IAM User Guide, "IAM JSON policy elements: Condition operators" (each operator family, ``...IfExists``,
  ``Null``), "Single-valued vs. multivalued context keys" (``ForAnyValue:``/``ForAllValues:``), "Policy evaluation
  logic" / "Cross-account policy evaluation logic" (same-account union, cross-account intersection, explicit deny,
  the root user), "IAM JSON policy elements: Principal" (account principals delegate), "IAM JSON policy elements:
  NotPrincipal" (its examples: a user or role left out only with its account), "NotAction", "NotResource";
- SQS Developer Guide, "Limitations of Amazon SQS custom policies" (the twelve calls cross-account permissions do not
  apply to) and "Amazon SQS API permissions: Actions and resource reference" (what each move-task call needs:
  :class:`MoveCase`, checked through :data:`sqsemu.security.actions.REQUIRED`).

``RULE_COUNTS`` (printed by ``python -m tests.unit.test_security_policy_table``) counts the cases by rule.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from sqsemu.security.actions import REQUIRED
from sqsemu.security.evaluate import CROSS_ACCOUNT, NOT_CROSS_ACCOUNT, Context, evaluate, principal_for
from sqsemu.security.policy import parse_policy

OWNER, OTHER, THIRD = "444455556666", "111122223333", "777788889999"
QUEUE2 = f"arn:aws:sqs:us-east-2:{OWNER}:queue2"
QUEUE1 = f"arn:aws:sqs:us-east-2:{OWNER}:queue1"
OWNER_ROOT = None  # the owner's root user
OTHER_ROOT = f"arn:aws:iam::{OTHER}:root"
OTHER_USER = f"arn:aws:iam::{OTHER}:user/bob"
OTHER_ROLE = f"arn:aws:iam::{OTHER}:role/role-name"
OWNER_USER = f"arn:aws:iam::{OWNER}:user/alice"
OWNER_ROLE = f"arn:aws:iam::{OWNER}:role/worker"
THIRD_USER = f"arn:aws:iam::{THIRD}:user/carol"
NOON_2009 = 1246363200.0  # 2009-06-30T12:00Z


def doc(*statements: dict[str, Any], version: str = "2012-10-17", policy_id: str | None = None) -> str:
    document: dict[str, Any] = {"Version": version, "Statement": list(statements)}
    if policy_id:
        document["Id"] = policy_id
    return json.dumps(document)


ALLOW_ALL_SQS = doc({"Sid": "all-sqs", "Effect": "Allow", "Action": "sqs:*", "Resource": "*"})
ALLOW_SEND_ANY = doc({"Sid": "send", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"})

# --- SQS Developer Guide, "Custom Amazon SQS Access Policy Language examples"
USECASE1 = json.dumps({
    "Version": "2012-10-17", "Id": "UseCase1",
    "Statement": [{"Sid": "1", "Effect": "Allow", "Principal": {"AWS": [OTHER]},
                   "Action": ["sqs:SendMessage", "sqs:ReceiveMessage"], "Resource": QUEUE2}],
})  # fmt: skip
USECASE2 = json.dumps({
    "Version": "2012-10-17", "Id": "UseCase2",
    "Statement": [{"Sid": "1", "Effect": "Allow", "Principal": {"AWS": [OTHER, OWNER]},
                   "Action": ["sqs:SendMessage", "sqs:ReceiveMessage"], "Resource": QUEUE2,
                   "Condition": {"DateLessThan": {"AWS:CurrentTime": "2009-06-30T12:00Z"}}}],
})  # fmt: skip
USECASE3 = json.dumps({
    "Version": "2012-10-17", "Id": "UseCase3",
    "Statement": [{"Sid": "1", "Effect": "Allow", "Principal": {"AWS": [OTHER]},
                   "Action": ["sqs:SendMessage", "sqs:ReceiveMessage"], "Resource": QUEUE2,
                   "Condition": {"DateLessThan": {"AWS:CurrentTime": "2009-06-30T12:00Z"},
                                 "IpAddress": {"aws:SourceIp": "203.0.113.0/24"}}}],
})  # fmt: skip
DENY_ONE_ACCOUNT = json.dumps({
    "Version": "2012-10-17", "Id": "UseCase4",
    "Statement": [{"Sid": "1", "Effect": "Deny", "Principal": {"AWS": [OTHER]},
                   "Action": ["sqs:SendMessage", "sqs:ReceiveMessage"], "Resource": QUEUE2}],
})  # fmt: skip
DENY_NOT_VPCE = json.dumps({
    "Version": "2012-10-17", "Id": "UseCase5",
    "Statement": [{"Sid": "1", "Effect": "Deny", "Principal": "*", "Action": "SQS:*", "Resource": QUEUE2,
                   "Condition": {"StringNotEquals": {"aws:sourceVpce": "vpce-1a2b3c4d"}}}],
})  # fmt: skip

# --- SQS Developer Guide, "Basic examples of Amazon SQS policies"
ONE_PERMISSION = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_SendMessage", "Effect": "Allow", "Principal": {"AWS": [OTHER]},
                   "Action": "sqs:SendMessage", "Resource": QUEUE1}],
})  # fmt: skip
TWO_PERMISSIONS = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_Send_Receive", "Effect": "Allow", "Principal": {"AWS": [OTHER]},
                   "Action": ["sqs:SendMessage", "sqs:ReceiveMessage"], "Resource": QUEUE1}],
})  # fmt: skip
ALL_TO_TWO = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_AllActions", "Effect": "Allow", "Principal": {"AWS": [OTHER, THIRD]},
                   "Action": "sqs:*", "Resource": QUEUE1}],
})  # fmt: skip
ROLE_AND_USER = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_AllActions", "Effect": "Allow",
                   "Principal": {"AWS": [OTHER_ROLE, OTHER_USER]}, "Action": "sqs:*", "Resource": QUEUE1}],
})  # fmt: skip
ALL_USERS = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_AnonymousAccess_ReceiveMessage", "Effect": "Allow", "Principal": "*",
                   "Action": "sqs:ReceiveMessage", "Resource": QUEUE1}],
})  # fmt: skip
ALL_USERS_FOR_A_TIME = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_AnonymousAccess_ReceiveMessage_TimeLimit", "Effect": "Allow", "Principal": "*",
                   "Action": "sqs:ReceiveMessage", "Resource": QUEUE1,
                   "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2017-01-01T12:00Z"},
                                 "DateLessThan": {"aws:CurrentTime": "2017-01-31T12:00Z"}}}],
})  # fmt: skip
CIDR_ALL = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [{"Sid": "Queue1_AnonymousAccess_AllActions_AllowlistIP", "Effect": "Allow", "Principal": "*",
                   "Action": "sqs:*", "Resource": QUEUE1,
                   "Condition": {"IpAddress": {"aws:SourceIp": "192.0.2.0/24"}}}],
})  # fmt: skip
ALLOW_AND_BLOCK = json.dumps({
    "Version": "2012-10-17", "Id": "Queue1_Policy_UUID",
    "Statement": [
        {"Sid": "Queue1_AnonymousAccess_AllActions_AllowlistIP", "Effect": "Allow", "Principal": "*",
         "Action": "sqs:*", "Resource": QUEUE1, "Condition": {"IpAddress": {"aws:SourceIp": "192.0.2.0/24"}}},
        {"Sid": "Queue1_AnonymousAccess_AllActions_AllowlistIP_Deny", "Effect": "Deny", "Principal": "*",
         "Action": "sqs:*", "Resource": QUEUE1, "Condition": {"IpAddress": {"aws:SourceIp": "192.0.2.0/28"}}},
    ],
})  # fmt: skip

# --- SQS Developer Guide, "Using identity-based policies with Amazon SQS"
ALICE_CREATES = doc({"Sid": "alice", "Effect": "Allow", "Action": "sqs:CreateQueue",
                     "Resource": f"arn:aws:sqs:*:{OWNER}:alice_queue_*"})  # fmt: skip
DEVELOPERS_WRITE = doc({"Sid": "write-shared", "Effect": "Allow", "Action": "sqs:SendMessage",
                        "Resource": f"arn:aws:sqs:*:{OWNER}:CompanyQueue"})  # fmt: skip
MANAGERS_SIZE = doc({"Sid": "sizes", "Effect": "Allow", "Action": "sqs:GetQueueAttributes", "Resource": "*"})
READ_ONLY = doc(
    {"Sid": "read", "Effect": "Allow", "Action": ["sqs:Get*", "sqs:List*", "sqs:ReceiveMessage"], "Resource": "*"},
    {"Sid": "never-purge", "Effect": "Deny", "Action": "sqs:PurgeQueue", "Resource": "*"},
)


@dataclass(frozen=True)
class Case:
    """One row: who (``principal``: an ARN, None for the owner's root user), what, on what, with which policies
    and context -> ``allowed`` and ``deciding`` (the Decision's ``deciding`` text)."""

    rule: str
    source: str
    principal: str | None
    action: str
    resource: str
    allowed: bool
    deciding: str
    identity: tuple[str, ...] = ()
    queue: str | None = None
    context: dict[str, Any] = field(default_factory=dict)
    now: float = NOON_2009 - 3600

    def decide(self) -> Any:
        principal = principal_for(self.principal, OWNER)
        policies = tuple((f"identity policy {n}", parse_policy(t, False)) for n, t in enumerate(self.identity, 1))
        queue = parse_policy(self.queue, True) if self.queue is not None else None
        fixed = {k.lower(): tuple(v) if isinstance(v, list) else (v,) for k, v in self.context.items()}
        account = self.resource.split(":")[4]
        return evaluate(
            principal, self.action, self.resource, account, policies, queue, Context(fixed, lambda: self.now)
        )


NONE_ID = "no identity-based policy allows"
NONE_RES = "no resource-based policy allows"
ROOT = "root user"
CROSS = CROSS_ACCOUNT


def qs(sid: str) -> str:
    return f"queue policy statement {sid}"


def ids(sid: str, n: int = 1) -> str:
    return f"identity policy {n} statement {sid}"


CASES: list[Case] = []


def add(*cases: Case) -> None:
    CASES.extend(cases)


CUSTOM = "SQS 'Custom Amazon SQS Access Policy Language examples'"
BASIC = "SQS 'Basic examples of Amazon SQS policies'"
IDENTITY = "SQS 'Using identity-based policies with Amazon SQS'"
EVAL = "IAM 'Policy evaluation logic'"
COND = "IAM 'IAM JSON policy elements: Condition operators'"
MULTI = "IAM 'Single-valued vs. multivalued context keys'"
ELEMENTS = "IAM 'IAM JSON policy elements' (Action, NotAction, Resource, NotResource, Principal, NotPrincipal)"

# --- cross-account: both must allow (UseCase1 and friends)
for action in ("sqs:SendMessage", "sqs:ReceiveMessage"):
    add(
        Case("cross-account", CUSTOM, OTHER_ROOT, action, QUEUE2, True, qs("1"), queue=USECASE1),
        Case("cross-account", CUSTOM, OTHER_USER, action, QUEUE2, True, ids("all-sqs"), (ALLOW_ALL_SQS,), USECASE1),
        Case("cross-account", CUSTOM, OTHER_USER, action, QUEUE2, False, NONE_ID, (), USECASE1),
        Case("cross-account", CUSTOM, OTHER_ROLE, action, QUEUE2, True, ids("all-sqs"), (ALLOW_ALL_SQS,), USECASE1),
        Case("cross-account", CUSTOM, THIRD_USER, action, QUEUE2, False, NONE_RES, (ALLOW_ALL_SQS,), USECASE1),
        Case("cross-account", CUSTOM, f"arn:aws:iam::{THIRD}:root", action, QUEUE2, False, NONE_RES, (), USECASE1),
        Case("cross-account", CUSTOM, OTHER_USER, action, QUEUE2, False, NONE_RES, (ALLOW_ALL_SQS,), None),
    )
for action in ("sqs:DeleteMessage", "sqs:PurgeQueue", "sqs:GetQueueAttributes", "sqs:SetQueueAttributes"):
    add(
        Case("cross-account", CUSTOM, OTHER_USER, action, QUEUE2, False, NONE_RES, (ALLOW_ALL_SQS,), USECASE1),
        Case("cross-account", CUSTOM, OTHER_ROOT, action, QUEUE2, False, NONE_RES, (), USECASE1),
    )

# --- UseCase2/3: time and IP conditions (the server's clock for aws:CurrentTime)
add(
    Case("condition:Date", CUSTOM, OTHER_ROOT, "sqs:SendMessage", QUEUE2, True, qs("1"), queue=USECASE2),
    Case("condition:Date", CUSTOM, OTHER_ROOT, "sqs:SendMessage", QUEUE2, False, NONE_RES, queue=USECASE2,
         now=NOON_2009 + 1),
    Case("condition:Date", CUSTOM, OTHER_ROOT, "sqs:ReceiveMessage", QUEUE2, False, NONE_RES, queue=USECASE2,
         now=NOON_2009),
    # UseCase2 names the owner's own account: an account principal delegates, the owner's user needs an identity
    # policy ("IAM JSON policy elements: Principal")
    Case("account-principal", CUSTOM, OWNER_USER, "sqs:SendMessage", QUEUE2, False, NONE_ID, queue=USECASE2),
    Case("account-principal", CUSTOM, OWNER_USER, "sqs:SendMessage", QUEUE2, True, ids("send"), (ALLOW_SEND_ANY,),
         USECASE2),
    Case("account-principal", CUSTOM, OWNER_ROOT, "sqs:SendMessage", QUEUE2, True, ROOT, queue=USECASE2,
         now=NOON_2009 + 1),
)  # fmt: skip
for ip, allowed in (("203.0.113.7", True), ("203.0.113.255", True), ("203.0.114.1", False), ("10.0.0.1", False),
                    ("2001:db8::1", False)):  # fmt: skip
    add(Case("condition:IpAddress", CUSTOM, OTHER_ROOT, "sqs:SendMessage", QUEUE2, allowed,
             qs("1") if allowed else NONE_RES, queue=USECASE3, context={"aws:SourceIp": ip}))  # fmt: skip
add(
    Case("condition:IpAddress", CUSTOM, OTHER_ROOT, "sqs:SendMessage", QUEUE2, False, NONE_RES, queue=USECASE3),
    Case("condition:Date", CUSTOM, OTHER_ROOT, "sqs:SendMessage", QUEUE2, False, NONE_RES, queue=USECASE3,
         context={"aws:SourceIp": "203.0.113.7"}, now=NOON_2009 + 60),
)  # fmt: skip

# --- explicit deny wins (deny one account; deny unless from a VPC endpoint)
DENIED_CALLERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (OTHER_ROOT, ()), (OTHER_USER, (ALLOW_ALL_SQS,)), (OTHER_ROLE, (ALLOW_ALL_SQS,)),
)  # fmt: skip
for who, identity in DENIED_CALLERS:
    add(
        Case("explicit-deny", CUSTOM, who, "sqs:SendMessage", QUEUE2, False, qs("1"), identity, DENY_ONE_ACCOUNT),
        Case("explicit-deny", CUSTOM, who, "sqs:ReceiveMessage", QUEUE2, False, qs("1"), identity, DENY_ONE_ACCOUNT),
    )
add(
    Case("explicit-deny", CUSTOM, OWNER_ROOT, "sqs:SendMessage", QUEUE2, True, ROOT, queue=DENY_ONE_ACCOUNT),
    Case("explicit-deny", CUSTOM, OWNER_USER, "sqs:SendMessage", QUEUE2, True, ids("all-sqs"), (ALLOW_ALL_SQS,),
         DENY_ONE_ACCOUNT),
    Case("explicit-deny", CUSTOM, OTHER_USER, "sqs:DeleteMessage", QUEUE2, False, NONE_RES, (ALLOW_ALL_SQS,),
         DENY_ONE_ACCOUNT),
)  # fmt: skip
VPCE_CALLERS: tuple[tuple[str | None, tuple[str, ...]], ...] = (
    (OWNER_ROOT, ()), (OWNER_USER, (ALLOW_ALL_SQS,)), (OTHER_USER, (ALLOW_ALL_SQS,)),
)  # fmt: skip
for caller, identity in VPCE_CALLERS:
    for action in ("sqs:SendMessage", "sqs:PurgeQueue", "sqs:DeleteQueue"):
        add(Case("explicit-deny", CUSTOM, caller, action, QUEUE2, False, qs("1"), identity, DENY_NOT_VPCE))
add(
    Case("explicit-deny", CUSTOM, OWNER_ROOT, "sqs:SendMessage", QUEUE2, True, ROOT, (), DENY_NOT_VPCE,
         {"aws:SourceVpce": "vpce-1a2b3c4d"}),
    Case("explicit-deny", CUSTOM, OWNER_USER, "sqs:SendMessage", QUEUE2, True, ids("all-sqs"), (ALLOW_ALL_SQS,),
         DENY_NOT_VPCE, {"aws:SourceVpce": "vpce-1a2b3c4d"}),
    Case("explicit-deny", CUSTOM, OWNER_USER, "sqs:SendMessage", QUEUE2, False, qs("1"), (ALLOW_ALL_SQS,),
         DENY_NOT_VPCE, {"aws:SourceVpce": "vpce-other"}),
)  # fmt: skip

# --- basic examples
add(
    Case("cross-account", BASIC, OTHER_ROOT, "sqs:SendMessage", QUEUE1, True, qs("Queue1_SendMessage"),
         queue=ONE_PERMISSION),
    Case("cross-account", BASIC, OTHER_ROOT, "sqs:ReceiveMessage", QUEUE1, False, NONE_RES, queue=ONE_PERMISSION),
    Case("resource", BASIC, OTHER_ROOT, "sqs:SendMessage", QUEUE2, False, NONE_RES, queue=ONE_PERMISSION),
    Case("cross-account", BASIC, OTHER_ROOT, "sqs:ReceiveMessage", QUEUE1, True, qs("Queue1_Send_Receive"),
         queue=TWO_PERMISSIONS),
    Case("cross-account", BASIC, OTHER_ROOT, "sqs:DeleteMessage", QUEUE1, False, NONE_RES, queue=TWO_PERMISSIONS),
)  # fmt: skip
for action in ("sqs:SendMessage", "sqs:PurgeQueue", "sqs:TagQueue", "sqs:ListQueueTags", "sqs:DeleteQueue"):
    # "sqs:*" to other accounts grants only what cross-account permissions apply to ("Limitations of Amazon SQS
    # custom policies": not TagQueue, ListQueueTags, DeleteQueue)
    limited = action.lower() in NOT_CROSS_ACCOUNT
    deciding = CROSS if limited else qs("Queue1_AllActions")
    add(
        Case("action-wildcard", BASIC, OTHER_ROOT, action, QUEUE1, not limited, deciding, queue=ALL_TO_TWO),
        Case("action-wildcard", BASIC, f"arn:aws:iam::{THIRD}:root", action, QUEUE1, not limited, deciding,
             queue=ALL_TO_TWO),
        Case("cross-account", BASIC, "arn:aws:iam::999999999999:root", action, QUEUE1, False, NONE_RES,
             queue=ALL_TO_TWO),
    )  # fmt: skip
for who, allowed in ((OTHER_ROLE, True), (OTHER_USER, True), (f"arn:aws:iam::{OTHER}:user/eve", False)):
    add(
        Case("principal", BASIC, who, "sqs:SendMessage", QUEUE1, allowed,
             ids("all-sqs") if allowed else NONE_RES, (ALLOW_ALL_SQS,), ROLE_AND_USER),
        Case("cross-account", BASIC, who, "sqs:SendMessage", QUEUE1, False, NONE_ID, (), ROLE_AND_USER),
    )  # fmt: skip
for who, identity, allowed, deciding in (
    (OTHER_ROOT, (), True, qs("Queue1_AnonymousAccess_ReceiveMessage")),
    (OTHER_USER, (ALLOW_ALL_SQS,), True, ids("all-sqs")),
    (OTHER_USER, (), False, NONE_ID),
    (OWNER_USER, (), True, qs("Queue1_AnonymousAccess_ReceiveMessage")),  # "*" names the user itself
    (OWNER_ROLE, (), True, qs("Queue1_AnonymousAccess_ReceiveMessage")),
):
    add(Case("principal", BASIC, who, "sqs:ReceiveMessage", QUEUE1, allowed, deciding, identity, ALL_USERS))
add(Case("action", BASIC, OWNER_USER, "sqs:SendMessage", QUEUE1, False, NONE_ID, (), ALL_USERS))
JAN_2017 = 1484222400.0  # 2017-01-12T12:00Z
for now, allowed in ((JAN_2017, True), (JAN_2017 - 30 * 86400, False), (JAN_2017 + 30 * 86400, False)):
    add(Case("condition:Date", BASIC, OWNER_USER, "sqs:ReceiveMessage", QUEUE1, allowed,
             qs("Queue1_AnonymousAccess_ReceiveMessage_TimeLimit") if allowed else NONE_ID, (),
             ALL_USERS_FOR_A_TIME, now=now))  # fmt: skip
for ip, allowed in (("192.0.2.1", True), ("192.0.2.200", True), ("192.0.3.1", False), ("198.51.100.1", False)):
    add(Case("condition:IpAddress", BASIC, OWNER_USER, "sqs:PurgeQueue", QUEUE1, allowed,
             qs("Queue1_AnonymousAccess_AllActions_AllowlistIP") if allowed else NONE_ID, (), CIDR_ALL,
             {"aws:SourceIp": ip}))  # fmt: skip
for ip, allowed, deciding in (
    ("192.0.2.100", True, qs("Queue1_AnonymousAccess_AllActions_AllowlistIP")),
    ("192.0.2.5", False, qs("Queue1_AnonymousAccess_AllActions_AllowlistIP_Deny")),
    ("192.0.2.15", False, qs("Queue1_AnonymousAccess_AllActions_AllowlistIP_Deny")),
    ("192.0.2.16", True, qs("Queue1_AnonymousAccess_AllActions_AllowlistIP")),
    ("203.0.113.1", False, NONE_ID),
):
    add(Case("explicit-deny", BASIC, OWNER_USER, "sqs:SendMessage", QUEUE1, allowed, deciding, (), ALLOW_AND_BLOCK,
             {"aws:SourceIp": ip}))  # fmt: skip

# --- identity-based policies (same account: identity or queue policy suffices)
for name, allowed in (("alice_queue_1", True), ("alice_queue_", True), ("bob_queue_1", False), ("alice_q", False)):
    add(Case("resource-wildcard", IDENTITY, OWNER_USER, "sqs:CreateQueue", f"arn:aws:sqs:eu-west-1:{OWNER}:{name}",
             allowed, ids("alice") if allowed else NONE_ID, (ALICE_CREATES,)))  # fmt: skip
add(
    Case("resource-wildcard", IDENTITY, OWNER_USER, "sqs:CreateQueue", f"arn:aws:sqs:eu-west-1:{OTHER}:alice_queue_1",
         False, NONE_ID, (ALICE_CREATES,)),
    Case("action", IDENTITY, OWNER_USER, "sqs:DeleteQueue", f"arn:aws:sqs:eu-west-1:{OWNER}:alice_queue_1", False,
         NONE_ID, (ALICE_CREATES,)),
)  # fmt: skip
for action, allowed in (("sqs:SendMessage", True), ("sqs:ReceiveMessage", False), ("sqs:sendmessage", True)):
    add(Case("same-account", IDENTITY, OWNER_ROLE, action, f"arn:aws:sqs:us-east-1:{OWNER}:CompanyQueue", allowed,
             ids("write-shared") if allowed else NONE_ID, (DEVELOPERS_WRITE,)))  # fmt: skip
add(Case("resource", IDENTITY, OWNER_ROLE, "sqs:SendMessage", f"arn:aws:sqs:us-east-1:{OWNER}:companyqueue", False,
         NONE_ID, (DEVELOPERS_WRITE,)))  # ARNs are case-sensitive  # fmt: skip
for action, allowed in (("sqs:GetQueueAttributes", True), ("sqs:SetQueueAttributes", False)):
    add(Case("same-account", IDENTITY, OWNER_USER, action, QUEUE1, allowed, ids("sizes") if allowed else NONE_ID,
             (MANAGERS_SIZE,)))  # fmt: skip
for action, allowed, deciding in (
    ("sqs:GetQueueAttributes", True, ids("read")),
    ("sqs:GetQueueUrl", True, ids("read")),
    ("sqs:ListQueues", True, ids("read")),
    ("sqs:ListDeadLetterSourceQueues", True, ids("read")),
    ("sqs:ListQueueTags", True, ids("read")),
    ("sqs:ReceiveMessage", True, ids("read")),
    ("sqs:SendMessage", False, NONE_ID),
    ("sqs:DeleteMessage", False, NONE_ID),
    ("sqs:PurgeQueue", False, ids("never-purge")),
    ("sqs:SetQueueAttributes", False, NONE_ID),
):
    add(Case("action-wildcard", IDENTITY, OWNER_ROLE, action, QUEUE1, allowed, deciding, (READ_ONLY,)))

# --- same account: union; root; account principals delegate
ACCOUNT_ONLY = doc({"Sid": "acct", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{OWNER}:root"},
                    "Action": "sqs:*", "Resource": QUEUE1})  # fmt: skip
USER_ONLY = doc({"Sid": "alice-only", "Effect": "Allow", "Principal": {"AWS": OWNER_USER}, "Action": "sqs:*",
                 "Resource": QUEUE1})  # fmt: skip
add(
    Case("same-account", EVAL, OWNER_USER, "sqs:SendMessage", QUEUE1, True, qs("alice-only"), (), USER_ONLY),
    Case("same-account", EVAL, OWNER_ROLE, "sqs:SendMessage", QUEUE1, False, NONE_ID, (), USER_ONLY),
    Case("same-account", EVAL, OWNER_ROLE, "sqs:SendMessage", QUEUE1, True, ids("send"), (ALLOW_SEND_ANY,), USER_ONLY),
    Case("account-principal", ELEMENTS, OWNER_USER, "sqs:SendMessage", QUEUE1, False, NONE_ID, (), ACCOUNT_ONLY),
    Case("account-principal", ELEMENTS, OWNER_USER, "sqs:SendMessage", QUEUE1, True, ids("send"), (ALLOW_SEND_ANY,),
         ACCOUNT_ONLY),
    Case("account-principal", ELEMENTS, OWNER_ROOT, "sqs:SendMessage", QUEUE1, True, ROOT, (), ACCOUNT_ONLY),
    Case("same-account", EVAL, OWNER_USER, "sqs:SendMessage", QUEUE1, False, NONE_ID),
    Case("same-account", EVAL, OWNER_USER, "sqs:SendMessage", QUEUE1, True, ids("send"), (ALLOW_SEND_ANY,)),
)  # fmt: skip
for action in ("sqs:SendMessage", "sqs:DeleteQueue", "sqs:SetQueueAttributes", "sqs:AddPermission", "sqs:ListQueues"):
    add(
        Case("root", EVAL, OWNER_ROOT, action, QUEUE1, True, ROOT),
        Case("root", EVAL, OTHER_ROOT, action, QUEUE1, False, NONE_RES),
    )
ROOT_DENY = doc({"Sid": "no-delete", "Effect": "Deny", "Principal": "*", "Action": "sqs:DeleteQueue",
                 "Resource": QUEUE1})  # fmt: skip
add(
    Case("root", EVAL, OWNER_ROOT, "sqs:DeleteQueue", QUEUE1, False, qs("no-delete"), (), ROOT_DENY),
    Case("root", EVAL, OWNER_ROOT, "sqs:SendMessage", QUEUE1, True, ROOT, (), ROOT_DENY),
)
TWO_IDENTITY = doc({"Sid": "deny-send", "Effect": "Deny", "Action": "sqs:SendMessage", "Resource": "*"})
add(
    Case("explicit-deny", EVAL, OWNER_USER, "sqs:SendMessage", QUEUE1, False, ids("deny-send", 2),
         (ALLOW_ALL_SQS, TWO_IDENTITY)),
    Case("explicit-deny", EVAL, OWNER_USER, "sqs:SendMessage", QUEUE1, False, ids("deny-send", 2),
         (ALLOW_ALL_SQS, TWO_IDENTITY), USER_ONLY),
    Case("explicit-deny", EVAL, OWNER_USER, "sqs:ReceiveMessage", QUEUE1, True, ids("all-sqs"),
         (ALLOW_ALL_SQS, TWO_IDENTITY)),
)  # fmt: skip

# --- NotAction, NotResource, NotPrincipal
NOT_ACTION = doc({"Sid": "all-but-delete", "Effect": "Allow", "NotAction": ["sqs:Delete*", "sqs:Purge*"],
                  "Resource": "*"})  # fmt: skip
NOT_RESOURCE = doc({"Sid": "not-secret", "Effect": "Allow", "Action": "sqs:*",
                    "NotResource": f"arn:aws:sqs:*:{OWNER}:secret-*"})  # fmt: skip
NOT_PRINCIPAL = doc({"Sid": "only-alice", "Effect": "Deny", "NotPrincipal": {"AWS": OWNER_USER}, "Action": "sqs:*",
                     "Resource": QUEUE1})  # fmt: skip
for action, allowed in (("sqs:SendMessage", True), ("sqs:DeleteMessage", False), ("sqs:DeleteQueue", False),
                        ("sqs:PurgeQueue", False), ("sqs:ReceiveMessage", True)):  # fmt: skip
    add(Case("not-action", ELEMENTS, OWNER_USER, action, QUEUE1, allowed,
             ids("all-but-delete") if allowed else NONE_ID, (NOT_ACTION,)))  # fmt: skip
for name, allowed in (("orders", True), ("secret-keys", False), ("secret", True)):
    add(Case("not-resource", ELEMENTS, OWNER_USER, "sqs:SendMessage", f"arn:aws:sqs:us-east-1:{OWNER}:{name}",
             allowed, ids("not-secret") if allowed else NONE_ID, (NOT_RESOURCE,)))  # fmt: skip
add(
    # naming the user without its account does not leave the user out: "you must also specify the account ARN of
    # the not-denied principal. Otherwise, the policy might deny access to the entire account" (sqsemu: it does)
    Case("not-principal", ELEMENTS, OWNER_USER, "sqs:SendMessage", QUEUE1, False, qs("only-alice"), (ALLOW_ALL_SQS,),
         NOT_PRINCIPAL),
    Case("not-principal", ELEMENTS, OWNER_ROLE, "sqs:SendMessage", QUEUE1, False, qs("only-alice"), (ALLOW_ALL_SQS,),
         NOT_PRINCIPAL),
    Case("not-principal", ELEMENTS, OWNER_ROOT, "sqs:SendMessage", QUEUE1, False, qs("only-alice"), (),
         NOT_PRINCIPAL),
)  # fmt: skip

# --- IAM "IAM JSON policy elements: NotPrincipal": a Deny leaves out only the principals it names whole (a user or
# role with its account, a root user by its account); the page's example "IAM user in the same or a different
# account" (Bob and his account 444455556666 there; bob of account 111122223333 here), its role example, and variants
NOTP = "IAM 'IAM JSON policy elements: NotPrincipal'"
ALLOW_OTHER_SEND = {"Sid": "other-may-send", "Effect": "Allow", "Principal": {"AWS": OTHER}, "Action": "sqs:*",
                    "Resource": QUEUE1}  # fmt: skip


def not_principal(*names: str, also: tuple[dict[str, Any], ...] = ()) -> str:
    """A queue policy whose statement ``all-but`` denies ``sqs:*`` on queue1 to all principals but ``names``."""
    deny = {"Sid": "all-but", "Effect": "Deny", "NotPrincipal": {"AWS": list(names)}, "Action": "sqs:*",
            "Resource": QUEUE1}  # fmt: skip
    return doc(deny, *also)


BOB_AND_ACCOUNT = not_principal(OTHER_USER, OTHER_ROOT, also=(ALLOW_OTHER_SEND,))
ALICE_AND_ACCOUNT = not_principal(OWNER_USER, f"arn:aws:iam::{OWNER}:root")
ALICE_AND_ACCOUNT_ID = not_principal(OWNER_USER, OWNER)
ACCOUNT_ONLY_NOT = not_principal(f"arn:aws:iam::{OWNER}:root")
ROLE_AND_ACCOUNT = not_principal(OTHER_ROLE, OTHER_ROOT, also=(ALLOW_OTHER_SEND,))
NOT_EVERYONE = doc({"Sid": "all-but", "Effect": "Deny", "NotPrincipal": "*", "Action": "sqs:*", "Resource": QUEUE1})
NOT_SNS = doc(
    {"Sid": "all-but", "Effect": "Deny", "NotPrincipal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
     "Resource": QUEUE1},
    {"Sid": "sns", "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage",
     "Resource": QUEUE1},
)  # fmt: skip
EVE = f"arn:aws:iam::{OTHER}:user/eve"
ALL = (ALLOW_ALL_SQS,)
NOT_PRINCIPAL_ROWS: tuple[tuple[str | None, tuple[str, ...], str, bool, str], ...] = (
    (OTHER_USER, ALL, BOB_AND_ACCOUNT, True, ids("all-sqs")),  # bob: left out, allowed by both
    (OTHER_ROLE, ALL, BOB_AND_ACCOUNT, False, qs("all-but")),  # another principal of bob's account
    (EVE, ALL, BOB_AND_ACCOUNT, False, qs("all-but")),
    (OTHER_ROOT, (), BOB_AND_ACCOUNT, True, qs("other-may-send")),  # the account itself is named
    (THIRD_USER, ALL, BOB_AND_ACCOUNT, False, qs("all-but")),
    (OWNER_USER, ALL, BOB_AND_ACCOUNT, False, qs("all-but")),  # the queue's own account is not left out
    (OWNER_ROOT, (), BOB_AND_ACCOUNT, False, qs("all-but")),
    (OWNER_USER, ALL, ALICE_AND_ACCOUNT, True, ids("all-sqs")),  # same account
    (OWNER_ROLE, ALL, ALICE_AND_ACCOUNT, False, qs("all-but")),
    (f"arn:aws:iam::{OWNER}:user/mallory", ALL, ALICE_AND_ACCOUNT, False, qs("all-but")),
    (OWNER_ROOT, (), ALICE_AND_ACCOUNT, True, ROOT),
    (OTHER_USER, ALL, ALICE_AND_ACCOUNT, False, qs("all-but")),
    (OWNER_USER, ALL, ALICE_AND_ACCOUNT_ID, True, ids("all-sqs")),  # the account as a bare id
    (OWNER_ROLE, ALL, ALICE_AND_ACCOUNT_ID, False, qs("all-but")),
    (OWNER_ROOT, (), NOT_PRINCIPAL, False, qs("only-alice")),  # the user alone: the account is denied
    (OWNER_ROOT, (), ACCOUNT_ONLY_NOT, True, ROOT),  # the account alone: its root user only
    (OWNER_USER, ALL, ACCOUNT_ONLY_NOT, False, qs("all-but")),
    (OWNER_ROLE, ALL, ACCOUNT_ONLY_NOT, False, qs("all-but")),
    (OTHER_ROLE, ALL, ROLE_AND_ACCOUNT, True, ids("all-sqs")),  # the page's role example
    (OTHER_USER, ALL, ROLE_AND_ACCOUNT, False, qs("all-but")),
    (OWNER_USER, ALL, NOT_EVERYONE, True, ids("all-sqs")),  # "*" leaves everyone out
    (OTHER_USER, ALL, NOT_EVERYONE, False, NONE_RES),
    ("sns.amazonaws.com", (), NOT_SNS, True, qs("sns")),  # a service by its name
    (OWNER_USER, ALL, NOT_SNS, False, qs("all-but")),
)
for caller_arn, identity, policy, allowed, deciding in NOT_PRINCIPAL_ROWS:
    add(Case("not-principal", NOTP, caller_arn, "sqs:SendMessage", QUEUE1, allowed, deciding, identity, policy))
add(
    Case("not-principal", NOTP, OTHER_USER, "sqs:ReceiveMessage", QUEUE1, True, ids("all-sqs"), ALL, BOB_AND_ACCOUNT),
    Case("not-principal", NOTP, OTHER_ROLE, "sqs:ReceiveMessage", QUEUE1, False, qs("all-but"), ALL, BOB_AND_ACCOUNT),
)  # fmt: skip

# --- SQS "Limitations of Amazon SQS custom policies" (Cross-account access): "Cross-account permissions don't apply
# to the following actions", whatever the queue policy and the caller's own policies allow
LIMITS = "SQS 'Limitations of Amazon SQS custom policies'"
SQS_TO_OTHER = doc({"Sid": "other-all", "Effect": "Allow", "Principal": {"AWS": [OTHER_USER, OTHER_ROLE, OTHER]},
                    "Action": "sqs:*", "Resource": "*"})  # fmt: skip
LIMITED_CALLS = ("AddPermission", "CancelMessageMoveTask", "CreateQueue", "DeleteQueue", "ListMessageMoveTasks",
                 "ListQueues", "ListQueueTags", "RemovePermission", "SetQueueAttributes", "StartMessageMoveTask",
                 "TagQueue", "UntagQueue")  # fmt: skip
for call in LIMITED_CALLS:
    action = f"sqs:{call}"
    add(
        Case("cross-account-limits", LIMITS, OTHER_USER, action, QUEUE1, False, CROSS, ALL, SQS_TO_OTHER),
        Case("cross-account-limits", LIMITS, OTHER_ROOT, action, QUEUE1, False, CROSS, (), SQS_TO_OTHER),
        Case("cross-account-limits", LIMITS, OWNER_USER, action, QUEUE1, True, ids("all-sqs"), ALL, SQS_TO_OTHER),
    )
for call in ("SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes",
             "GetQueueUrl", "ListDeadLetterSourceQueues", "PurgeQueue"):  # fmt: skip
    add(Case("cross-account-limits", LIMITS, OTHER_USER, f"sqs:{call}", QUEUE1, True, ids("all-sqs"), ALL,
             SQS_TO_OTHER))  # fmt: skip
add(
    # an explicit deny still decides first; without the queue policy's allow the usual reasons stand
    Case("cross-account-limits", LIMITS, OTHER_USER, "sqs:DeleteQueue", QUEUE1, False, qs("no-delete"), ALL,
         doc(json.loads(SQS_TO_OTHER)["Statement"][0], json.loads(ROOT_DENY)["Statement"][0])),
    Case("cross-account-limits", LIMITS, OTHER_USER, "sqs:DeleteQueue", QUEUE1, False, NONE_RES, ALL),
    Case("cross-account-limits", LIMITS, OTHER_USER, "sqs:deletequeue", QUEUE1, False, CROSS, ALL, SQS_TO_OTHER),
    Case("cross-account-limits", LIMITS, "sns.amazonaws.com", "sqs:SetQueueAttributes", QUEUE1, False, NONE_RES, (),
         SQS_TO_OTHER),
)  # fmt: skip

# --- action and resource wildcards
for pattern, action, allowed in (
    ("sqs:Send*", "sqs:SendMessage", True),
    ("sqs:Send*", "sqs:SetQueueAttributes", False),
    ("sqs:*Message", "sqs:ReceiveMessage", True),
    ("sqs:*Message", "sqs:ListQueues", False),
    ("SQS:SENDMESSAGE", "sqs:SendMessage", True),
    ("sqs:?etQueueAttributes", "sqs:GetQueueAttributes", True),
    ("sqs:?etQueueAttributes", "sqs:SetQueueAttributes", True),
    ("sqs:?etQueueAttributes", "sqs:GetQueueUrl", False),
    ("*", "sqs:PurgeQueue", True),
    ("sns:*", "sqs:SendMessage", False),
):
    add(Case("action-wildcard", ELEMENTS, OWNER_USER, action, QUEUE1, allowed, ids("p") if allowed else NONE_ID,
             (doc({"Sid": "p", "Effect": "Allow", "Action": pattern, "Resource": "*"}),)))  # fmt: skip
for pattern, resource, allowed in (
    (f"arn:aws:sqs:*:{OWNER}:*", QUEUE1, True),
    (f"arn:aws:sqs:us-east-2:{OWNER}:queue?", QUEUE1, True),
    (f"arn:aws:sqs:us-east-2:{OWNER}:queue?", f"arn:aws:sqs:us-east-2:{OWNER}:queue10", False),
    ("arn:aws:sqs:us-west-2:*:*", QUEUE1, False),
    (f"arn:aws:sqs:us-east-2:{OWNER}:*.fifo", f"arn:aws:sqs:us-east-2:{OWNER}:orders.fifo", True),
    (f"arn:aws:sqs:us-east-2:{OWNER}:*.fifo", QUEUE1, False),
):
    add(Case("resource-wildcard", ELEMENTS, OWNER_USER, "sqs:SendMessage", resource, allowed,
             ids("r") if allowed else NONE_ID,
             (doc({"Sid": "r", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": pattern}),)))  # fmt: skip


# --- condition operators, one policy statement each (IAM "Condition operators")
def cond(block: dict[str, Any]) -> tuple[str, ...]:
    return (doc({"Sid": "c", "Effect": "Allow", "Action": "sqs:*", "Resource": "*", "Condition": block}),)


CONDITION_ROWS: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("condition:String", {"StringEquals": {"aws:username": "alice"}}, {}, True),
    ("condition:String", {"StringEquals": {"aws:username": "Alice"}}, {}, False),
    ("condition:String", {"StringEqualsIgnoreCase": {"aws:username": "ALICE"}}, {}, True),
    ("condition:String", {"StringNotEquals": {"aws:username": "bob"}}, {}, True),
    ("condition:String", {"StringNotEquals": {"aws:username": ["bob", "alice"]}}, {}, False),
    ("condition:String", {"StringNotEqualsIgnoreCase": {"aws:username": "ALICE"}}, {}, False),
    ("condition:String", {"StringLike": {"aws:PrincipalArn": "arn:aws:iam::*:user/al*"}}, {}, True),
    ("condition:String", {"StringLike": {"aws:PrincipalArn": "arn:aws:iam::*:role/*"}}, {}, False),
    ("condition:String", {"StringNotLike": {"aws:PrincipalArn": "arn:aws:iam::*:role/*"}}, {}, True),
    ("condition:String", {"StringEquals": {"AWS:PrincipalAccount": OWNER}}, {}, True),
    ("condition:String", {"StringEquals": {"aws:PrincipalTag/team": "x"}}, {}, False),  # absent key
    ("condition:String", {"StringNotEquals": {"aws:PrincipalTag/team": "x"}}, {}, True),  # absent, negated
    ("condition:Numeric", {"NumericLessThan": {"sqs:n": "10"}}, {"sqs:n": "9"}, True),
    ("condition:Numeric", {"NumericLessThan": {"sqs:n": "10"}}, {"sqs:n": "10"}, False),
    ("condition:Numeric", {"NumericLessThanEquals": {"sqs:n": "10"}}, {"sqs:n": "10"}, True),
    ("condition:Numeric", {"NumericGreaterThan": {"sqs:n": 5}}, {"sqs:n": "5.5"}, True),
    ("condition:Numeric", {"NumericGreaterThanEquals": {"sqs:n": "5"}}, {"sqs:n": "4"}, False),
    ("condition:Numeric", {"NumericEquals": {"sqs:n": "5"}}, {"sqs:n": "5.0"}, True),
    ("condition:Numeric", {"NumericNotEquals": {"sqs:n": "5"}}, {"sqs:n": "6"}, True),
    ("condition:Numeric", {"NumericEquals": {"sqs:n": "5"}}, {"sqs:n": "five"}, False),
    ("condition:Date", {"DateGreaterThan": {"aws:CurrentTime": "2009-01-01T00:00:00Z"}}, {}, True),
    ("condition:Date", {"DateLessThanEquals": {"aws:CurrentTime": "2009-01-01"}}, {}, False),
    ("condition:Date", {"DateEquals": {"aws:EpochTime": str(int(NOON_2009 - 3600))}}, {}, True),
    ("condition:Date", {"DateNotEquals": {"aws:CurrentTime": "2009-06-30T11:00:00Z"}}, {}, False),
    ("condition:Date", {"DateGreaterThanEquals": {"aws:CurrentTime": "1246359600"}}, {}, True),
    ("condition:Bool", {"Bool": {"aws:SecureTransport": "true"}}, {"aws:SecureTransport": "true"}, True),
    ("condition:Bool", {"Bool": {"aws:SecureTransport": "true"}}, {"aws:SecureTransport": "false"}, False),
    ("condition:Bool", {"Bool": {"aws:SecureTransport": True}}, {"aws:SecureTransport": "true"}, True),
    ("condition:Bool", {"Bool": {"aws:MultiFactorAuthPresent": "true"}}, {}, False),
    ("condition:Bool", {"BoolIfExists": {"aws:MultiFactorAuthPresent": "true"}}, {}, True),
    ("condition:IpAddress", {"IpAddress": {"aws:SourceIp": ["10.0.0.0/8", "192.0.2.0/24"]}},
     {"aws:SourceIp": "10.1.2.3"}, True),
    ("condition:IpAddress", {"IpAddress": {"aws:SourceIp": "2001:db8::/32"}}, {"aws:SourceIp": "2001:db8::9"}, True),
    ("condition:IpAddress", {"IpAddress": {"aws:SourceIp": "127.0.0.1"}}, {"aws:SourceIp": "127.0.0.1"}, True),
    ("condition:IpAddress", {"NotIpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, {"aws:SourceIp": "10.1.2.3"}, False),
    ("condition:IpAddress", {"NotIpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, {"aws:SourceIp": "127.0.0.1"}, True),
    ("condition:IpAddress", {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, {}, False),
    ("condition:Arn", {"ArnEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:t"}},
     {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:t"}, True),
    ("condition:Arn", {"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:123456789012:*"}},
     {"aws:SourceArn": "arn:aws:sns:eu-west-1:123456789012:orders"}, True),
    ("condition:Arn", {"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:123456789012:*"}},
     {"aws:SourceArn": "arn:aws:s3:::bucket"}, False),
    ("condition:Arn", {"ArnNotEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:t"}},
     {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:u"}, True),
    ("condition:Arn", {"ArnNotLike": {"aws:SourceArn": "arn:aws:sns:*:*:*"}}, {}, True),
    ("condition:Arn", {"ArnEquals": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:t"}}, {}, False),
    ("condition:Arn", {"ArnEqualsIfExists": {"aws:SourceArn": "arn:aws:sns:us-east-1:123456789012:t"}}, {}, True),
    ("condition:Arn", {"ArnLike": {"aws:SourceArn": "arn:aws:sns:*"}}, {"aws:SourceArn": "not-an-arn"}, False),
    ("condition:Null", {"Null": {"aws:SourceArn": "true"}}, {}, True),
    ("condition:Null", {"Null": {"aws:SourceArn": "true"}}, {"aws:SourceArn": "arn:aws:sns:x:1:t"}, False),
    ("condition:Null", {"Null": {"aws:SourceArn": "false"}}, {"aws:SourceArn": "arn:aws:sns:x:1:t"}, True),
    ("condition:Null", {"Null": {"aws:username": "false"}}, {}, True),
    ("condition:IfExists", {"StringEqualsIfExists": {"aws:SourceAccount": OWNER}}, {}, True),
    ("condition:IfExists", {"StringEqualsIfExists": {"aws:SourceAccount": OWNER}}, {"aws:SourceAccount": OTHER}, False),
    ("condition:IfExists", {"NumericLessThanIfExists": {"sqs:n": "3"}}, {"sqs:n": "2"}, True),
    ("condition:multivalued", {"ForAnyValue:StringEquals": {"aws:TagKeys": ["env", "team"]}},
     {"aws:TagKeys": ["team", "cost"]}, True),
    ("condition:multivalued", {"ForAnyValue:StringEquals": {"aws:TagKeys": ["env"]}}, {"aws:TagKeys": ["cost"]}, False),
    ("condition:multivalued", {"ForAnyValue:StringEquals": {"aws:TagKeys": ["env"]}}, {}, False),
    ("condition:multivalued", {"ForAllValues:StringEquals": {"aws:TagKeys": ["env", "team"]}},
     {"aws:TagKeys": ["team", "env"]}, True),
    ("condition:multivalued", {"ForAllValues:StringEquals": {"aws:TagKeys": ["env", "team"]}},
     {"aws:TagKeys": ["team", "cost"]}, False),
    ("condition:multivalued", {"ForAllValues:StringEquals": {"aws:TagKeys": ["env"]}}, {}, True),
    ("condition:multivalued", {"ForAllValues:StringLike": {"aws:TagKeys": ["team-*"]}},
     {"aws:TagKeys": ["team-a", "team-b"]}, True),
    ("condition:multivalued", {"ForAnyValue:StringNotEquals": {"aws:TagKeys": ["env"]}},
     {"aws:TagKeys": ["env", "x"]}, True),
    ("condition:block", {"StringEquals": {"aws:username": "alice"}, "Bool": {"aws:SecureTransport": "true"}},
     {"aws:SecureTransport": "false"}, False),
    ("condition:block", {"StringEquals": {"aws:username": "alice", "aws:PrincipalAccount": OWNER}}, {}, True),
    ("condition:block", {"StringEquals": {"aws:username": "alice", "aws:PrincipalAccount": OTHER}}, {}, False),
]  # fmt: skip
ALICE_CONTEXT = {"aws:username": "alice", "aws:PrincipalArn": OWNER_USER, "aws:PrincipalAccount": OWNER}
for rule, block, context, allowed in CONDITION_ROWS:
    add(Case(rule, MULTI if "multivalued" in rule else COND, OWNER_USER, "sqs:SendMessage", QUEUE1, allowed,
             ids("c") if allowed else NONE_ID, cond(block), context={**ALICE_CONTEXT, **context}))  # fmt: skip

# --- service principals (SNS topic to queue)
SNS_ONLY = doc({"Sid": "topic", "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage", "Resource": QUEUE1,
                "Condition": {"ArnEquals": {"aws:SourceArn": f"arn:aws:sns:us-east-2:{OWNER}:orders"}}})  # fmt: skip
add(
    Case("service", BASIC, "sns.amazonaws.com", "sqs:SendMessage", QUEUE1, True, qs("topic"), (), SNS_ONLY,
         {"aws:SourceArn": f"arn:aws:sns:us-east-2:{OWNER}:orders"}),
    Case("service", BASIC, "sns.amazonaws.com", "sqs:SendMessage", QUEUE1, False, NONE_RES, (), SNS_ONLY,
         {"aws:SourceArn": f"arn:aws:sns:us-east-2:{OWNER}:other"}),
    Case("service", BASIC, "events.amazonaws.com", "sqs:SendMessage", QUEUE1, False, NONE_RES, (), SNS_ONLY,
         {"aws:SourceArn": f"arn:aws:sns:us-east-2:{OWNER}:orders"}),
    Case("service", BASIC, OWNER_USER, "sqs:SendMessage", QUEUE1, False, NONE_ID, (), SNS_ONLY,
         {"aws:SourceArn": f"arn:aws:sns:us-east-2:{OWNER}:orders"}),
)  # fmt: skip


# --- the actions each move-task call needs (SQS "Amazon SQS API permissions: Actions and resource reference" and the
# dead-letter queue redrive troubleshooting page): a role allowed exactly those actions, on the dead-letter queue
# (source) and the destination, with each needed action taken away in turn
REFERENCE = "SQS 'Amazon SQS API permissions: Actions and resource reference'"
DLQ = f"arn:aws:sqs:us-east-2:{OWNER}:queue1-dlq"


@dataclass(frozen=True)
class MoveCase:
    """A move-task ``call`` by the owner's role allowed ``actions`` (an identity policy on ``*``; ``denied``:
    actions an identity policy denies) -> the first IAM action denied among the call's checks, None when all pass."""

    call: str
    actions: tuple[str, ...]
    first_denied: str | None
    denied: tuple[str, ...] = ()
    destination: bool = True
    rule: str = "move-task-permissions"

    def first_denial(self) -> str | None:
        allow = {"Sid": "a", "Effect": "Allow", "Action": list(self.actions), "Resource": "*"}
        statements = [allow] + ([{"Sid": "d", "Effect": "Deny", "Action": list(self.denied), "Resource": "*"}]
                                if self.denied else [])  # fmt: skip
        policies = (("identity policy 1", parse_policy(doc(*statements), False)),)
        principal = principal_for(OWNER_ROLE, OWNER)
        for action, role in REQUIRED[self.call]:
            if role == "destination" and not self.destination:
                continue
            resource = QUEUE1 if role == "destination" else DLQ
            decision = evaluate(principal, action, resource, OWNER, policies, None, Context({}, lambda: NOON_2009))
            if not decision.allowed:
                return action
        return None


LIST_ACTIONS = ("sqs:ListMessageMoveTasks", "sqs:GetQueueAttributes")
SOURCE_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
START_ACTIONS = ("sqs:StartMessageMoveTask", *SOURCE_ACTIONS, "sqs:SendMessage")
CANCEL_ACTIONS = ("sqs:CancelMessageMoveTask", *SOURCE_ACTIONS)
MOVE_CASES: list[MoveCase] = [
    MoveCase("ListMessageMoveTasks", LIST_ACTIONS, None),
    MoveCase("ListMessageMoveTasks", LIST_ACTIONS, None, denied=("sqs:ReceiveMessage", "sqs:DeleteMessage")),
    MoveCase("ListMessageMoveTasks", ("sqs:ListMessageMoveTasks",), "sqs:GetQueueAttributes"),
    MoveCase("ListMessageMoveTasks", ("sqs:GetQueueAttributes",), "sqs:ListMessageMoveTasks"),
    MoveCase("StartMessageMoveTask", START_ACTIONS, None),
    MoveCase("StartMessageMoveTask", START_ACTIONS[:-1], None, destination=False),
    MoveCase("CancelMessageMoveTask", CANCEL_ACTIONS, None),
]
for needed in START_ACTIONS:
    MOVE_CASES.append(MoveCase("StartMessageMoveTask", tuple(a for a in START_ACTIONS if a != needed), needed))
for needed in CANCEL_ACTIONS:
    MOVE_CASES.append(MoveCase("CancelMessageMoveTask", tuple(a for a in CANCEL_ACTIONS if a != needed), needed))

RULE_COUNTS = Counter(case.rule for case in CASES) + Counter(case.rule for case in MOVE_CASES)


def _id(case: Case) -> str:
    return f"{case.rule}-{case.action}-{'allow' if case.allowed else 'deny'}"


def test_the_table_has_150_cases_or_more() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_case(case: Case) -> None:
    decision = case.decide()
    assert (decision.allowed, decision.deciding) == (case.allowed, case.deciding), case


@pytest.mark.parametrize("case", MOVE_CASES, ids=[f"{c.call}-{c.first_denied or 'allowed'}" for c in MOVE_CASES])
def test_move_task_permissions(case: MoveCase) -> None:
    assert case.first_denial() == case.first_denied, case


if __name__ == "__main__":
    for rule, count in sorted(RULE_COUNTS.items()):
        print(f"{rule:24} {count}")
    print(f"{'total':24} {len(CASES) + len(MOVE_CASES)}")
