"""Whether a principal may perform one action on one resource, as AWS decides it, and why.

Rules, from the IAM User Guide pages "Policy evaluation logic", "How AWS enforcement code logic evaluates requests
to allow or deny access", "Policy evaluation for requests within a single account", "Cross-account policy
evaluation logic" and "IAM JSON policy elements: Principal":

1. every applicable statement is found: its ``Action``/``NotAction``, ``Resource``/``NotResource``,
   ``Principal``/``NotPrincipal`` (queue policies) match and all its conditions hold
   (:mod:`sqsemu.security.conditions`);
2. an explicit deny in any policy (the caller's identity-based policies or the queue's) decides: denied;
3. by default everything is implicitly denied, except for the account's **root user**, which has full access to
   its own account's resources (a root user has no identity-based policies: its own account allows it);
4. within one account, an allow in the identity-based policies **or** in the queue policy suffices; a queue
   policy that names the caller only by its account (``"111122223333"`` or ``arn:aws:iam::111122223333:root``, an
   account principal) delegates to the account, whose identity-based policies must then allow ("IAM JSON policy
   elements: Principal", AWS account principals);
5. across accounts, both must allow: the caller's identity-based policies (or the caller being its account's root
   user) and the queue policy (naming the caller, its account, or everyone);
6. a service principal (``sns.amazonaws.com``: SNS delivering into a queue, :mod:`sqsemu.security.topics`, and
   hypothetical calls of ``POST /_sqsemu/authorize``) is allowed only by a resource policy statement naming the
   service (or everyone); it has no identity-based policies;
7. "Limitations of Amazon SQS custom policies" (SQS Developer Guide): cross-account permissions do not apply to
   :data:`NOT_CROSS_ACCOUNT` (AddPermission, CancelMessageMoveTask, CreateQueue, DeleteQueue, ListMessageMoveTasks,
   ListQueues, ListQueueTags, RemovePermission, SetQueueAttributes, StartMessageMoveTask, TagQueue, UntagQueue):
   a queue policy's allow of one of these to a principal of another account is void, so the call is denied
   whatever the policies say (reason :data:`CROSS_ACCOUNT`);
8. "IAM JSON policy elements: NotPrincipal": a ``NotPrincipal`` statement leaves out only a principal it names
   whole: an IAM user or role only when both its own ARN and its account (``arn:aws:iam::<account>:root`` or the
   account id) are named, an account's root user when its account is named, a service when the service is named.
   A ``Deny`` naming a user and its account denies every other user and role of that account; one naming only the
   user denies the user too (AWS "might validate the account first and then the user": sqsemu always does).
9. a role's trust policy (``sts:AssumeRole``, :mod:`sqsemu.security.roles`) must allow, even within one account
   (the IAM User Guide's flow chart of "Policy evaluation for requests within a single account" and "How IAM roles
   differ from resource-based policies": the trust policy is the one resource-based policy that an identity-based
   policy cannot stand in for): the trust policy naming the caller suffices within its account; naming only its
   account delegates to the caller's identity-based policies, which must allow; across accounts both must allow.
   ``evaluate(..., resource_required=True)``.

A denial's message follows AWS's recorded form ("User: <arn> is not authorized to perform: sqs:sendmessage on
resource: <queue arn> because no identity-based policy allows the sqs:sendmessage action"; "... because no
resource-based policy allows ..." across accounts; "... with an explicit deny in a resource-based policy" from the
IAM page "Troubleshoot access denied error messages"), the action in lower case as SQS writes it.

:func:`explain` says why, statement by statement: every policy looked at (the identity-based policies by name, the
queue policy or that there is none), and for each statement whether it applies or the first element that does not
match (in the order ``Action``/``NotAction``, ``Principal``/``NotPrincipal``, ``Resource``/``NotResource``, then each
``Condition`` operator and key as written). It is worked out only for a denial and for ``POST /_sqsemu/authorize``:
an allowed call pays nothing for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.observability.accesslog import logfmt
from sqsemu.security.conditions import Undecidable, unmapped
from sqsemu.security.policy import Policy, PrincipalSet, Statement

__all__ = [
    "CROSS_ACCOUNT",
    "DOES_NOT_PARSE",
    "UNPARSABLE",
    "NOT_CROSS_ACCOUNT",
    "Context",
    "Decision",
    "Explanation",
    "PolicyReport",
    "Principal",
    "StatementReport",
    "evaluate",
    "explain",
    "principal_for",
]

NOT_CROSS_ACCOUNT = frozenset(
    f"sqs:{name}".lower()
    for name in (
        "AddPermission", "CancelMessageMoveTask", "CreateQueue", "DeleteQueue", "ListMessageMoveTasks", "ListQueues",
        "ListQueueTags", "RemovePermission", "SetQueueAttributes", "StartMessageMoveTask", "TagQueue", "UntagQueue",
    )
)  # fmt: skip
"""The IAM actions (lower case) of the calls to which "cross-account permissions don't apply" (SQS Developer Guide,
"Limitations of Amazon SQS custom policies", section "Cross-account access"): each call's own action."""
CROSS_ACCOUNT = "cross-account permissions do not apply"
"""The :attr:`Decision.reason` of a call of :data:`NOT_CROSS_ACCOUNT` that a queue policy allows another account."""
DOES_NOT_PARSE = "policy does not parse"
"""What the reason of every fail-closed denial holds (a queue's or a topic's policy that does not parse)."""
UNPARSABLE = f"the queue {DOES_NOT_PARSE}"
"""The reason (followed by ``: <rule>``) of a fail-closed denial: a queue whose ``Policy`` does not parse denies
every call, the root user's included (``sqsemu.security.iam``); its message is that of an explicit deny in a
resource-based policy (sqsemu's choice: every way a policy enters refuses one, so AWS's answer is not recorded)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who calls: ``arn`` (``arn:aws:iam::<account>:root``, ``...:user/<name>``, ``...:role/<name>``, or a service
    name such as ``sns.amazonaws.com``), its ``account``, ``kind`` (``root``, ``user``, ``role`` or ``service``) and
    ``name`` (the user's or role's name, the service's name, ``root``)."""

    arn: str
    account: str
    kind: str
    name: str

    @property
    def service(self) -> str | None:
        """The service name of a service principal, else None."""
        return self.arn if self.kind == "service" else None


def principal_for(arn: str | None, account: str) -> Principal:
    """The principal of ``arn`` (None: ``account``'s root user). Raises ValueError for an ARN that names no IAM
    user, role or root user, or a service name not ending with ``.amazonaws.com``."""
    if arn is None:
        return Principal(f"arn:aws:iam::{account}:root", account, "root", "root")
    if arn.endswith(".amazonaws.com") and ":" not in arn:
        return Principal(arn, account, "service", arn)
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "iam" or parts[3] or len(parts[4]) != 12:
        raise ValueError(
            f"principal must be an IAM user or role ARN (arn:aws:iam::<12-digit account>:user/<name> or "
            f"...:role/<name>), got {arn!r}"
        )
    resource = parts[5]
    if resource == "root":
        return Principal(arn, parts[4], "root", "root")
    kind, _, path_name = resource.partition("/")
    if kind not in ("user", "role") or not path_name:
        raise ValueError(f"principal must name an IAM user or role (user/<name>, role/<name>), got {arn!r}")
    return Principal(arn, parts[4], kind, path_name.rsplit("/", 1)[-1])


class Context:
    """The request context's condition keys, computed only when a condition reads them: ``fixed`` (lower-case key
    -> values: the caller's), ``asked`` (the same, set by the call's own parameters: ``aws:RequestTag/<key>`` and
    ``aws:TagKeys``, :func:`sqsemu.security.actions.request_keys`), ``aws:CurrentTime`` and ``aws:EpochTime`` from
    ``now`` (epoch seconds of the server's clock), ``aws:SecureTransport`` and ``aws:SourceIp`` from the ASGI
    ``scope`` (when given; an IPv4-mapped IPv6 peer, ``::ffff:a.b.c.d``, as the IPv4 address it is),
    ``aws:ResourceTag/<key>`` from the queue's ``tags``."""

    __slots__ = ("fixed", "now", "scope", "tags", "asked")

    def __init__(
        self,
        fixed: Mapping[str, Sequence[str]],
        now: Callable[[], float],
        scope: Mapping[str, object] | None = None,
        tags: Mapping[str, str] | None = None,
        asked: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.fixed = fixed
        self.now = now
        self.scope = scope
        self.tags = tags
        self.asked = asked

    def values(self, key: str) -> Sequence[str] | None:
        """The values of the lower-case ``key``, None when absent."""
        found = self.fixed.get(key)
        if found is not None:
            return found
        asked = self.asked
        if asked is not None:
            found = asked.get(key)
            if found is not None:
                return found
        if key == "aws:currenttime":
            return (datetime.fromtimestamp(self.now(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),)
        if key == "aws:epochtime":
            return (str(int(self.now())),)
        scope = self.scope
        if scope is not None:
            if key == "aws:securetransport":
                return ("true" if scope.get("scheme") in ("https", "wss") else "false",)
            if key == "aws:sourceip":
                client = scope.get("client")
                return (unmapped(str(client[0])),) if isinstance(client, (tuple, list)) and client else None
        if key.startswith("aws:resourcetag/") and self.tags:
            wanted = key[len("aws:resourcetag/") :]
            for tag, value in self.tags.items():
                if tag.lower() == wanted:
                    return (value,)
        return None


@dataclass(frozen=True, slots=True)
class StatementReport:
    """One statement as :func:`explain` found it: its ``statement`` label (Sid or ``#n``), ``effect`` (``Allow`` or
    ``Deny``) and ``failed``: None when it applies to the call, else the first element that does not match
    (``Action``, ``NotPrincipal``, ``Resource``, ``Condition StringEquals aws:SourceArn``...)."""

    statement: str
    effect: str
    failed: str | None

    @property
    def matched(self) -> bool:
        """Whether the statement applies to the call."""
        return self.failed is None

    def text(self) -> str:
        """In words: ``read-only (Allow) matched`` or ``never-purge (Deny) not matched: Action``."""
        head = f"{self.statement} ({self.effect})"
        return f"{head} matched" if self.failed is None else f"{head} not matched: {self.failed}"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return {"statement": self.statement, "effect": self.effect, "matched": self.matched, "failed": self.failed}


@dataclass(frozen=True, slots=True)
class PolicyReport:
    """One policy :func:`explain` looked at: its ``policy`` name (``identity policy 1``, ``identity policy
    reader.json``, ``queue policy``) and its ``statements``; None when the policy is absent (a queue without a
    ``Policy`` attribute)."""

    policy: str
    statements: tuple[StatementReport, ...] | None

    def text(self) -> str:
        """In words: ``queue policy: none`` or ``identity policy 1: <statement>, <statement>``."""
        if self.statements is None:
            return f"{self.policy}: none"
        return f"{self.policy}: " + ", ".join(statement.text() for statement in self.statements)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready fields (``present`` false and no statements for an absent policy)."""
        statements = self.statements
        return {
            "policy": self.policy,
            "present": statements is not None,
            "statements": [statement.as_dict() for statement in statements or ()],
        }


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a decision went as it did (:func:`explain`): the ``policies`` evaluated, in order, and ``notes`` (the
    caller has no identity-based policies, the queue does not exist...)."""

    policies: tuple[PolicyReport, ...]
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        """The policies in words, ``; `` between them (the denial's log line)."""
        return "; ".join(policy.text() for policy in self.policies) or "none"


@dataclass(slots=True)
class Decision:
    """The outcome of :func:`evaluate`: ``allowed``; ``reason`` (``explicit deny``, ``allowed``, ``root user``,
    ``no identity-based policy allows``, ``no resource-based policy allows``, :data:`CROSS_ACCOUNT`); the deciding
    ``policy`` (``identity policy <n>``, ``queue policy`` or ``topic policy``) and ``statement`` (its Sid or ``#n``)
    when one decided;
    ``explanation`` when one was asked for (:func:`explain`)."""

    allowed: bool
    reason: str
    principal: str
    action: str
    resource: str
    policy: str | None = None
    statement: str | None = None
    explanation: Explanation | None = None

    @property
    def deciding(self) -> str:
        """The deciding statement in words: ``queue policy statement "Sid"``, or the reason when none decided."""
        if self.statement is None:
            return self.reason
        return f"{self.policy} statement {self.statement}"

    def message(self, written: str | None = None) -> str:
        """AWS's denial message (module docstring); a :data:`CROSS_ACCOUNT` denial reads as "no resource-based
        policy allows" (the queue policy's allow does not count; AWS's own wording for it is not recorded).
        ``written``: the action as the service writes it in the message (SNS: ``SNS:Publish``), else the IAM action
        in lower case, as SQS writes it."""
        action = written if written is not None else self.action.lower()
        head = f"User: {self.principal} is not authorized to perform: {action} on resource: {self.resource}"
        if self.reason == "explicit deny" or DOES_NOT_PARSE in self.reason:  # fail closed: as a deny
            identity = (self.policy or "").startswith("identity policy")
            kind = "an identity-based" if identity else "a resource-based"
            return f"{head} with an explicit deny in {kind} policy"
        kind = "identity-based" if self.reason == "no identity-based policy allows" else "resource-based"
        return f"{head} because no {kind} policy allows the {action} action"

    def as_dict(self) -> dict[str, object]:
        """The decision as JSON-ready fields (``POST /_sqsemu/authorize``); with its explanation, ``evaluated`` (the
        policies looked at, :meth:`PolicyReport.as_dict`), ``explained`` (them in words) and ``notes``."""
        fields: dict[str, object] = {
            "decision": "allowed" if self.allowed else "denied",
            "reason": self.reason,
            "principal": self.principal,
            "action": self.action,
            "resource": self.resource,
            "policy": self.policy,
            "statement": self.statement,
            "deciding": self.deciding,
            "message": None if self.allowed else self.message(),
        }
        explanation = self.explanation
        if explanation is not None:
            fields["evaluated"] = [policy.as_dict() for policy in explanation.policies]
            fields["explained"] = explanation.text()
            fields["notes"] = list(explanation.notes)
        return fields


MAX_CANDIDATES = 4096
"""Entries of the candidate cache (policy, principal, action) before it is emptied."""
MAX_ARN_CHARS = 2048
"""The longest principal ARN whose candidates are cached (an ARN is at most 2,048 characters in IAM; ``POST
/_sqsemu/authorize`` takes any text)."""
CANDIDATES_BOUND = CacheBound(MAX_CANDIDATES, 16 * 1024 * 1024, 1024 * 1024 + 8192)
"""The candidate cache's bound: 4,096 entries and 16 MiB, each entry counted with the policy it keeps alive
(:attr:`Policy.size`) and its key; an entry over 1 MiB and 8 KiB (a document too large for the parse cache) is
worked out again at each call, as are the candidates of an ARN over :data:`MAX_ARN_CHARS`."""
_candidates: dict[tuple[Policy, str, str], tuple[tuple[Statement, str], ...]] = {}


def candidates(policy: Policy, principal: Principal, action: str) -> tuple[tuple[Statement, str], ...]:
    """The statements of ``policy`` whose action element matches ``action`` and (a queue policy's) whose principal
    element names ``principal``, each with how it names it (``identity`` for an identity-based policy's): what is
    left to look at per call is the resource and the conditions. Cached by (policy, principal ARN, action)."""
    key = (policy, principal.arn, action)
    found = _candidates.get(key)
    if found is None:
        chosen: list[tuple[Statement, str]] = []
        for statement in policy.statements:
            if statement.actions.matches(action) == statement.not_action:
                continue
            how = _named(statement, principal) if policy.resource_based else "identity"
            if how is not None:
                chosen.append((statement, how))
        found = tuple(chosen)
        arn = principal.arn
        if len(arn) <= MAX_ARN_CHARS and CANDIDATES_BOUND.admit(_candidates, policy.size + size_of(key, arn, found)):
            _candidates[key] = found
    return found


_logger = logging.getLogger("sqsemu.access")


def _applies(statement: Statement, resource: str, context: Context) -> bool:
    """Whether a candidate statement's resource element matches ``resource`` and its conditions hold."""
    try:
        resources = statement.resources
        if resources is not None and resources.matches_in(resource, context) == statement.not_resource:
            return False
        for condition in statement.conditions:
            if not condition.holds(context):
                return False
    except Undecidable:
        return _first_failure(statement, resource, context) is None  # logs and decides it fail closed
    return True


def _undecided(statement: Statement, element: str, error: Undecidable) -> str | None:
    """Fail closed on an element whose policy variable cannot be substituted ("IAM policy elements: Variables and
    tags"; sqsemu's choice, logged at WARNING): a ``Deny`` is taken to apply, an ``Allow`` not to (the element
    reported as failed). The line is logfmt (``sqsemu.observability.accesslog.logfmt``): the statement's ``Sid``,
    the condition key and the reason are the policy writer's text, quoted there so that none can end the line."""
    fields = {"fail_closed": "deny" if not statement.allow else "no-allow", "statement": statement.label,
              "element": element, "reason": str(error)}  # fmt: skip
    _logger.warning(logfmt(fields))
    return None if not statement.allow else f"{element} ({error})"


def _named(statement: Statement, principal: Principal) -> str | None:
    """How a queue policy statement names ``principal`` (``everyone``, ``arn``, ``account``, ``service``, or
    ``"not"`` for one a ``NotPrincipal`` leaves in), None when it does not."""
    principals = statement.principals
    if principals is None:
        return None
    if statement.not_principal:
        return None if _left_out(principals, principal) else "not"
    return principals.match(principal.arn, principal.account, principal.service)


def _left_out(principals: PrincipalSet, principal: Principal) -> bool:
    """Whether a ``NotPrincipal`` element naming ``principals`` leaves ``principal`` out (rule 8 of the module
    docstring, "IAM JSON policy elements: NotPrincipal"): everyone for ``*``; a service by its name; the root user
    by its account; an IAM user or role by its own ARN **and** its account."""
    if principals.everyone:
        return True
    if principal.kind == "service":
        return principal.arn in principals.services
    if principal.account not in principals.accounts:
        return False
    return principal.kind == "root" or principal.arn in principals.arns


def evaluate(
    principal: Principal,
    action: str,
    resource: str,
    resource_account: str,
    identity_policies: Sequence[tuple[str, Policy]],
    queue_policy: Policy | None,
    context: Context,
    resource_policy_label: str = "queue policy",
    resource_required: bool = False,
) -> Decision:
    """Whether ``principal`` may perform ``action`` (``sqs:SendMessage``, ``sns:Publish``, ``sts:AssumeRole``) on
    ``resource`` (a queue, topic or role ARN) of ``resource_account``, given its ``identity_policies`` (``(label,
    policy)``) and the resource's policy ``queue_policy`` (a queue's or a topic's, a role's trust policy; None when it
    has none), named ``resource_policy_label`` in the decision; the rules of the module docstring, in their order
    (``resource_required``: rule 9, a role's trust policy)."""
    identity_allow: tuple[str, Statement] | None = None
    for label, policy in identity_policies if principal.kind in ("user", "role") else ():
        for statement, _ in candidates(policy, principal, action):
            if _applies(statement, resource, context):
                if not statement.allow:
                    return Decision(False, "explicit deny", principal.arn, action, resource, label, statement.label)
                if identity_allow is None:
                    identity_allow = (label, statement)
    direct: Statement | None = None
    by_account: Statement | None = None
    if queue_policy is not None:
        for statement, how in candidates(queue_policy, principal, action):
            if not _applies(statement, resource, context):
                continue
            if not statement.allow:
                return Decision(
                    False, "explicit deny", principal.arn, action, resource, resource_policy_label, statement.label
                )
            if how == "account":
                by_account = by_account or statement
            else:
                direct = direct or statement
    same_account = principal.account == resource_account and principal.kind != "service"
    if not same_account and principal.kind != "service" and action.lower() in NOT_CROSS_ACCOUNT:
        if direct is not None or by_account is not None:
            return Decision(False, CROSS_ACCOUNT, principal.arn, action, resource)
    identity_ok = identity_allow is not None or principal.kind == "root"
    if resource_required:  # rule 9: the resource policy (a role's trust policy) must allow, even in one account
        return _required(principal, action, resource, identity_allow, direct, by_account, same_account,
                         resource_policy_label)  # fmt: skip
    resource_ok = direct is not None or (by_account is not None and not same_account)
    if same_account and principal.kind == "root":
        return Decision(True, "root user", principal.arn, action, resource)
    allowed = (identity_ok or resource_ok) if same_account else (identity_ok and resource_ok)
    if principal.kind == "service":
        allowed = direct is not None
    if allowed:
        if identity_allow is not None:
            label, statement = identity_allow
            return Decision(True, "allowed", principal.arn, action, resource, label, statement.label)
        if direct is not None or by_account is not None:
            chosen = direct if direct is not None else by_account
            assert chosen is not None
            return Decision(True, "allowed", principal.arn, action, resource, resource_policy_label, chosen.label)
        return Decision(True, "root user", principal.arn, action, resource)
    if (same_account or not identity_ok) and principal.kind != "service":
        return Decision(False, "no identity-based policy allows", principal.arn, action, resource)
    return Decision(False, "no resource-based policy allows", principal.arn, action, resource)


def _required(
    principal: Principal,
    action: str,
    resource: str,
    identity_allow: tuple[str, Statement] | None,
    direct: Statement | None,
    by_account: Statement | None,
    same_account: bool,
    label: str,
) -> Decision:
    """Rule 9: the decision when the resource policy must allow (no explicit deny was found)."""
    if direct is None and by_account is None:
        return Decision(False, "no resource-based policy allows", principal.arn, action, resource)
    if direct is not None and same_account:
        return Decision(True, "allowed", principal.arn, action, resource, label, direct.label)
    if identity_allow is None:
        return Decision(False, "no identity-based policy allows", principal.arn, action, resource)
    name, statement = identity_allow
    return Decision(True, "allowed", principal.arn, action, resource, name, statement.label)


def _first_failure(statement: Statement, resource: str, context: Context) -> str | None:
    """The first of a statement's resource element and conditions that does not match the call, None if none."""
    resources = statement.resources
    if resources is not None:
        element = "NotResource" if statement.not_resource else "Resource"
        try:
            if resources.matches_in(resource, context) == statement.not_resource:
                return element
        except Undecidable as exc:
            failed = _undecided(statement, element, exc)
            if failed is not None:
                return failed
    for condition in statement.conditions:
        element = f"Condition {condition.operator} {condition.written_key or condition.key}"
        try:
            if not condition.holds(context):
                return element
        except Undecidable as exc:
            failed = _undecided(statement, element, exc)
            if failed is not None:
                return failed
    return None


def _report(
    label: str, policy: Policy, principal: Principal, action: str, resource: str, context: Context
) -> PolicyReport:
    """Each statement of ``policy`` checked against the call, element by element (:func:`explain`)."""
    found: list[StatementReport] = []
    for statement in policy.statements:
        failed: str | None
        if statement.actions.matches(action) == statement.not_action:
            failed = "NotAction" if statement.not_action else "Action"
        elif policy.resource_based and _named(statement, principal) is None:
            failed = "NotPrincipal" if statement.not_principal else "Principal"
        else:
            failed = _first_failure(statement, resource, context)
        found.append(StatementReport(statement.label, "Allow" if statement.allow else "Deny", failed))
    return PolicyReport(label, tuple(found))


def explain(
    principal: Principal,
    action: str,
    resource: str,
    identity_policies: Sequence[tuple[str, Policy]],
    queue_policy: Policy | None,
    context: Context,
    queue_policy_label: str = "queue policy",
    notes: Sequence[str] = (),
) -> Explanation:
    """What :func:`evaluate` looked at for the same call (its arguments), statement by statement: the identity-based
    policies (a user's or role's; none for a root user or a service), then the queue policy, named
    ``queue_policy_label``, or its absence; ``notes`` are added after those this finds (module docstring)."""
    policies: list[PolicyReport] = []
    found_notes: list[str] = []
    if principal.kind in ("user", "role"):
        for label, policy in identity_policies:
            policies.append(_report(label, policy, principal, action, resource, context))
        if not identity_policies:
            found_notes.append(f"{principal.arn} has no identity-based policies")
    elif principal.kind == "root":
        found_notes.append("a root user has no identity-based policies: its account allows it on its own queues")
    else:
        found_notes.append("a service principal has no identity-based policies: only the queue policy can allow it")
    if queue_policy is None:
        policies.append(PolicyReport(queue_policy_label, None))
    else:
        policies.append(_report(queue_policy_label, queue_policy, principal, action, resource, context))
    return Explanation(tuple(policies), tuple(found_notes) + tuple(notes))
