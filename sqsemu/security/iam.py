"""``--auth iam``: each signed SQS call is allowed or denied by the caller's identity-based policies and the queue's
policy, as AWS decides (:mod:`sqsemu.security.evaluate`), and explained.

The app calls :meth:`AccessControl.check` once per call, after the signature was verified (``sqsemu.security.sigv4``
gives the access key) and the request decoded, before the call runs. It finds what the call needs
(:mod:`sqsemu.security.actions`), the queues it is on and their policies (the ``Policy`` attribute, parsed once per
text by :func:`sqsemu.security.policy.parse_policy`), builds the request context and evaluates. A denial raises
``AccessDenied`` (HTTP 403; Query ``<Code>AccessDenied</Code>``, JSON ``__type``
``com.amazon.coral.service#AccessDeniedException`` and ``x-amzn-query-error: AccessDenied;Sender``, the one table of
``sqsemu.protocol.errors``) with AWS's message, logs one line (logger ``sqsemu.access``, INFO) naming the identity,
the action, the resource, the deciding statement and every policy evaluated with each statement's outcome
(:func:`sqsemu.security.evaluate.explain`; ``notes``: no identity-based policies, a queue that does not exist), and
counts ``sqsemu_access_denied_total{action}``.

Fail closed: a queue policy that does not parse never counts as no policy. Every way one enters checks its grammar
(:mod:`sqsemu.security.policy`): ``SetQueueAttributes`` and ``CreateQueue`` for every caller, whatever ``--auth``
says (``sqsemu.engine.attributes``: ``InvalidAttributeValue`` ``Invalid value for the parameter Policy. Reason:
<rule>``; AWS's message for each grammar rule is not recorded: docs/behaviour.md 11.4), so does a ``[[queues]]``
declaration (it is created through the same validation: the start fails naming the queue and the rule). A queue
restored from ``--data-dir`` with one (saved by an older sqsemu, which stored any JSON object without ``--auth
iam``) makes an ``--auth iam`` start fail (:func:`check_restored`, ``StoreError``: exit status 1) naming the queue
and the rule; without ``--auth iam`` nothing is enforced, so the queue is served and a WARNING says the policy must
be fixed. Failing the start, rather than serving that queue with every call denied, because: a start that
succeeds promises that every policy it holds is enforced as written, the same promise a bad ``[[queues]]``
declaration is held to; a queue denying everything would look like a policy bug to a test suite that never reads
the log, and the only way to fix it would be a call the queue itself denies; starting once without ``--auth iam``
and setting the ``Policy`` (or removing it with an empty string) repairs the data folder with an ordinary SQS call.
Should a policy that does not parse be met anyway, every call on that queue is denied (the root user's too) and
logged at WARNING (``fail_closed=<queue arn> ... reason=<rule>``), with the message of an explicit deny in a
resource-based policy.

The request context ("AWS global condition context keys"): ``aws:PrincipalArn``, ``aws:PrincipalAccount``,
``aws:PrincipalType`` (``User``, ``AssumedRole``, ``Account``), ``aws:userid`` (a user's unique id; for a role
``<role id>:<session name>``; the account id for a root user: :class:`~sqsemu.security.identity.Identity`),
``aws:username`` (users only), ``aws:SecureTransport``
(``true`` over HTTPS), ``aws:SourceIp`` (the client's address), ``aws:RequestedRegion``, ``aws:CurrentTime`` and
``aws:EpochTime`` (the server's clock, manual or not), ``aws:ResourceTag/<key>`` (the queue's tags, on every call
on a queue that exists), ``aws:RequestTag/<key>`` and ``aws:TagKeys`` (the tags ``CreateQueue`` and ``TagQueue``
set, the keys ``UntagQueue`` removes: :func:`sqsemu.security.actions.request_keys`).
``aws:SourceArn``/``aws:SourceAccount`` are absent from a direct call (AWS sets them only for a service acting for a
resource); ``POST /_sqsemu/authorize`` lets a hypothetical call give them.

``POST /_sqsemu/authorize`` (an admin route, behind the admin gate) answers for a hypothetical call, like IAM's
policy simulator::

    {"access_key_id": "AKIA..." | "principal": "arn:aws:iam::111111111111:role/x" | "sns.amazonaws.com",
     "policies": [<identity policy JSON text>...],   # with "principal" only
     "action": "SendMessage" | "sqs:SendMessage", "queue": <queue URL, ARN or name>,
     "context": {"aws:SourceArn": "arn:aws:sns:...", ...}, "queue_policy": <JSON text, instead of the queue's>}

and is answered ``{"decision": "allowed"|"denied", "deciding": ..., "message": ..., "evaluated": [...],
"explained": ..., "notes": [...], "checks": [...]}``, one check per IAM action the call needs, each explained alike.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.errors import AccessDenied
from sqsemu.observability.accesslog import ACCESS_LOGGER, logfmt
from sqsemu.protocol.urls import parse_queue_url
from sqsemu.security.actions import REQUIRED, request_keys
from sqsemu.security.evaluate import (
    DOES_NOT_PARSE,
    UNPARSABLE,
    Context,
    Decision,
    Explanation,
    Principal,
    evaluate,
    explain,
    principal_for,
)
from sqsemu.security.identity import Identity, identities
from sqsemu.security.policy import Policy, PolicyError, parse_policy
from sqsemu.security.roles import Role, roles
from sqsemu.security.topics import SNSNeeds, resource_account

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from sqsemu.clock import Clock
    from sqsemu.config import Config
    from sqsemu.security.sessions import Session, Sessions

__all__ = [
    "ASSUME_ROLE",
    "AUTHORIZE_PATH",
    "AccessControl",
    "assume_role_message",
    "check_restored",
    "sender_id",
    "unparsable_policies",
]

AUTHORIZE_PATH = "/_sqsemu/authorize"

Scope = MutableMapping[str, Any]
QueueRef = tuple[str, str, str]
"""``(region, account id, queue name)``; the name ``*`` for an account's queues (ListQueues)."""

_PRINCIPAL_TYPES = {"user": "User", "role": "AssumedRole", "root": "Account", "service": "Service"}
EXPLAINED_CHARS = 4000
"""The longest value of a denial's log line (its ``evaluated`` policies), beyond which it is cut with ``...``."""
FIXED_CONTEXTS = 1024
"""Most ``(access key, region)`` context keys an :class:`AccessControl` remembers (and 1 MiB of them, by
``fixed_bound``): a signed caller picks the region of its credential scope, any name that looks like one."""


def _context_size(key: tuple[str, str], fixed: Mapping[str, Sequence[str]]) -> int:
    """Bytes a remembered context holds (``sqsemu.cachebound.size_of`` of its key, dict, names and values)."""
    total = size_of(key, key[1], fixed)
    for name, values in fixed.items():
        total += size_of(name, values, *values)
    return total


def _arn(ref: QueueRef) -> str:
    return f"arn:aws:sqs:{ref[0]}:{ref[1]}:{ref[2]}"


def _from_arn(arn: str | None) -> QueueRef | None:
    if not arn:
        return None
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs":
        return None
    return parts[3], parts[4], parts[5]


def _task_source(handle: str | None) -> QueueRef | None:
    if not handle:
        return None
    from sqsemu.engine.errors import SQSError
    from sqsemu.engine.redrive import decode_handle

    try:
        return _from_arn(decode_handle(handle)[1])
    except SQSError:
        return None


def _policy_of(text: str | None) -> Policy | None:
    """The parsed queue policy of a ``Policy`` attribute, None when it has none. Raises :class:`PolicyError` for
    one that does not parse (never expected: every way in checks it), which the caller turns into a denial."""
    if not text:
        return None
    return parse_policy(text, True)


def sender_id(identity: Identity) -> str | None:
    """The ``SenderId`` of the messages ``identity`` sends, as SQS gives it ("ReceiveMessage", API Reference: "For a
    user, returns the user ID ... For an IAM role, returns the IAM role ID", ``<role id>:<session name>``): the
    caller's ``aws:userid`` (:attr:`Identity.user_id <sqsemu.security.identity.Identity.user_id>`, docs/behaviour.md
    11.5: the unique ids sqsemu derives from the ARN); None for a root user (the account id, the default)."""
    if identity.principal.kind in ("user", "role"):
        return identity.user_id
    return None


ASSUME_ROLE = "sts:AssumeRole"


def assume_role_message(caller_arn: str, role_arn: str) -> str:
    """AWS's denial of ``AssumeRole`` (recorded answers: ``User: <caller> is not authorized to perform: sts:AssumeRole
    on resource: <role ARN>``, the same for a role that does not exist or a malformed ARN)."""
    return f"User: {caller_arn} is not authorized to perform: {ASSUME_ROLE} on resource: {role_arn}"


def unparsable_policies(broker: Broker) -> list[tuple[str, str]]:
    """``(queue ARN, reason)`` of each queue of ``broker`` whose ``Policy`` does not parse (a restored one: every
    other way in refuses it), in the broker's order."""
    found: list[tuple[str, str]] = []
    for queue in broker.all_queues():
        try:
            _policy_of(queue.attributes.get("Policy"))
        except PolicyError as exc:
            found.append((queue.arn, str(exc)))
    return found


def check_restored(broker: Broker, config: Config) -> None:
    """After a restore from ``--data-dir``: under ``--auth iam`` raise ``StoreError`` naming the first queue whose
    ``Policy`` does not parse and why (module docstring, "Fail closed"); otherwise log each one at WARNING."""
    from sqsemu.persistence import StoreError

    found = unparsable_policies(broker)
    if not found:
        return
    if config.auth == "iam":
        arn, reason = found[0]
        more = f" ({len(found) - 1} more queue(s) too)" if len(found) > 1 else ""
        raise StoreError(
            f"the queue {arn} restored from {config.data_dir} has a Policy that does not parse ({reason}){more}: "
            "--auth iam will not serve it as if it had none. Start once without --auth iam and replace or remove "
            "it (SetQueueAttributes with a valid Policy, or Policy set to an empty string), then restart"
        )
    for arn, reason in found:  # the reason quotes the policy's own text (a Sid): logfmt, so it cannot end the line
        fields = {"restored_policy_does_not_parse": arn, "data_dir": config.data_dir, "reason": reason,
                  "fix": "--auth iam would refuse to start; replace or remove it (SetQueueAttributes)"}  # fmt: skip
        logging.getLogger(ACCESS_LOGGER).warning(logfmt(fields, EXPLAINED_CHARS))


class AccessControl:
    """The enforcement of ``--auth iam`` for one app (module docstring). ``denied``: denials by IAM action."""

    def __init__(self, config: Config, broker: Broker, clock: Clock) -> None:
        self.identities: dict[str, Identity] = identities(config.credentials, config.account_id)
        self.senders: dict[str, str] = {
            key: sender for key, identity in self.identities.items() if (sender := sender_id(identity)) is not None
        }
        """The ``SenderId`` of the messages each IAM user's or role's key sends (:func:`sender_id`)."""
        self.roles: dict[str, Role] = roles(config.credentials, config.account_id)
        """The roles ``sts:AssumeRole`` may assume, by ARN (:mod:`sqsemu.security.roles`)."""
        self.sessions: Sessions | None = None
        """The server's temporary credentials (AWS STS; set by the app): their keys' identities (:meth:`identity`)."""
        self.broker = broker
        self.clock = clock
        self.region = config.region
        self.denied: dict[str, int] = {}
        self.logger = logging.getLogger(ACCESS_LOGGER)
        self._fixed: dict[tuple[str, str], dict[str, Sequence[str]]] = {}  # (key, region) -> the caller's keys
        self.fixed_bound = CacheBound(FIXED_CONTEXTS, 1024 * 1024, 16 * 1024)  # what _fixed holds (FIXED_CONTEXTS)
        self._now = self._seconds

    # ------------------------------------------------------------------------------------------- the request path

    def identity(self, access_key_id: str | None) -> Identity | None:
        """The identity of a verified key: a ``[[credentials]]`` key's, or a temporary key's (AWS STS: the role it
        assumed with the role's policies, or the user it was given to with the user's), None for an unknown key."""
        key = access_key_id or ""
        found = self.identities.get(key)
        if found is not None or self.sessions is None:
            return found
        session = self.sessions.known(key)
        return None if session is None else self.session_identity(session)

    def session_identity(self, session: Session) -> Identity | None:
        """The identity of temporary credentials (:meth:`identity`), None when their principal is not declared."""
        if session.session_name is not None:
            role = self.roles.get(session.principal or "")
            if role is None:
                return None
            return Identity(session.access_key_id, role.principal, role.policies, session.session_name, True)
        source = self.identities.get(session.source_key)
        if source is None:
            return None
        return Identity(session.access_key_id, source.principal, source.policies, None, True)

    def sender_for(self, access_key_id: str | None) -> str | None:
        """The ``SenderId`` of the messages the key ``access_key_id`` sends (:func:`sender_id`; None: the account
        id)."""
        key = access_key_id or ""
        sender = self.senders.get(key)
        if sender is not None or key in self.identities or self.sessions is None:
            return sender
        identity = self.identity(key)
        return None if identity is None else sender_id(identity)

    def check(
        self,
        access_key_id: str | None,
        action: str,
        request: object,
        addressed: tuple[str, str] | None,
        caller: Namespace,
        scope: Scope,
        request_id: str,
    ) -> None:
        """Allow the call ``action`` (an SQS API action) decoded as ``request`` on the queue ``addressed``
        (``(account, name)``, None when none) by the key ``access_key_id`` acting as ``caller``; raise
        ``AccessDenied`` (logged, counted) when denied. (A bad ``Policy`` in the call is the engine's
        ``InvalidAttributeValue``, for every caller: ``sqsemu.engine.attributes``.)"""
        identity = self.identity(access_key_id)
        needs = REQUIRED.get(action)
        if identity is None or needs is None:
            return
        fixed = self._fixed_for(identity, caller.region)
        decision = self._decide(identity.principal, identity.policies, needs, request, addressed, caller, fixed, scope,
                                asked=request_keys(action, request))  # fmt: skip
        if decision is not None and not decision.allowed:
            decision.principal = identity.denial_arn  # an assumed role's session ARN, as AWS names the caller
            self._denied(identity, decision, request_id)
            raise AccessDenied(decision.message())

    def _fixed_for(self, identity: Identity, region: str) -> dict[str, Sequence[str]]:
        """The context keys of ``identity``'s calls in ``region``, remembered (:data:`FIXED_CONTEXTS`)."""
        key = (identity.access_key_id, region)
        fixed = self._fixed.get(key)
        if fixed is None:
            fixed = self._fixed_context(identity, region)
            if self.fixed_bound.admit(self._fixed, _context_size(key, fixed)):
                self._fixed[key] = fixed
        return fixed

    def _fixed_context(self, identity: Identity, region: str) -> dict[str, Sequence[str]]:
        """The context keys of ``identity``'s calls in ``region`` (those of the request itself, TLS and the source
        IP, are read from the scope by :class:`~sqsemu.security.evaluate.Context` when a condition asks)."""
        principal = identity.principal
        fixed: dict[str, Sequence[str]] = {
            "aws:principalarn": (principal.arn,),
            "aws:principalaccount": (principal.account,),
            "aws:principaltype": (_PRINCIPAL_TYPES[principal.kind],),
            "aws:userid": (self.user_id(identity),),  # the SenderId of its messages too
            "aws:requestedregion": (region,),
        }  # fmt: skip
        if principal.kind == "user":
            fixed["aws:username"] = (principal.name,)
        return fixed

    @staticmethod
    def user_id(identity: Identity) -> str:
        """The ``aws:userid`` of ``identity``'s calls, whichever API (docs/behaviour.md 11.5): :func:`sender_id`,
        the account id for a root user."""
        return identity.user_id

    def _seconds(self) -> float:
        return self.clock.now_ms() / 1000

    def _queues(
        self, request: object, addressed: tuple[str, str] | None, caller: Namespace
    ) -> dict[str, QueueRef | None]:
        """The queue of each role (:mod:`sqsemu.security.actions`) for this call."""
        region = caller.region
        source = _from_arn(getattr(request, "source_arn", None)) or _task_source(getattr(request, "task_handle", None))
        return {
            "queue": (region, addressed[0], addressed[1])
            if addressed is not None
            else (region, caller.account_id, "*"),
            "account": (region, caller.account_id, "*"),
            "source": source,
            "destination": _from_arn(getattr(request, "destination_arn", None)),
        }

    def _queue_state(self, ref: QueueRef) -> tuple[Policy | None, Mapping[str, str]]:
        """The policy and tags of the queue ``ref`` (none for one that does not exist)."""
        if ref[2] == "*":
            return None, {}
        queue = self.broker.namespaces.get(Namespace(ref[1], ref[0]), {}).get(ref[2])
        if queue is None:
            return None, {}
        return _policy_of(queue.attributes.get("Policy")), queue.tags  # PolicyError: _decide denies

    def _decide(
        self,
        principal: Principal,
        policies: Sequence[tuple[str, Policy]],
        needs: Sequence[tuple[str, str]],
        request: object,
        addressed: tuple[str, str] | None,
        caller: Namespace,
        fixed: dict[str, Sequence[str]],
        scope: Scope | None = None,
        queue_policy_text: str | None = None,
        checks: list[Decision] | None = None,
        asked: Mapping[str, Sequence[str]] | None = None,
    ) -> Decision | None:
        """The first denial among the call's needed actions, else the last allow (None when it needs none on a
        known queue: a move task whose handle does not decode is left to the call's own error). ``asked``: the
        condition keys the call's parameters set (:func:`~sqsemu.security.actions.request_keys`)."""
        if len(needs) == 1 and needs[0][1] == "queue":  # all but move tasks and ListQueues
            region = caller.region
            one = (region, addressed[0], addressed[1]) if addressed is not None else (region, caller.account_id, "*")
            queues: Mapping[str, QueueRef | None] = {"queue": one}
        else:
            queues = self._queues(request, addressed, caller)
        decision: Decision | None = None
        for iam_action, role in needs:
            ref = queues.get(role)
            if ref is None:
                continue
            try:
                queue_policy, tags = self._queue_state(ref)
                if queue_policy_text is not None and role in ("queue", "source"):
                    queue_policy = _policy_of(queue_policy_text)
            except PolicyError as exc:  # fail closed: never as if the queue had no policy
                decision = self._unparsable(principal, iam_action, ref, exc)
            else:
                context = Context(fixed, self._now, scope, tags, asked)
                decision = evaluate(principal, iam_action, _arn(ref), ref[1], policies, queue_policy, context)
                if checks is not None or not decision.allowed:  # explained: a denial, POST /_sqsemu/authorize
                    notes = self._queue_notes(ref, queue_policy_text is not None and role in ("queue", "source"))
                    decision.explanation = explain(
                        principal, iam_action, decision.resource, policies, queue_policy, context, notes=notes
                    )
            if checks is not None:
                checks.append(decision)
            if not decision.allowed:
                return decision
        return decision

    def _queue_notes(self, ref: QueueRef, given: bool) -> tuple[str, ...]:
        """What an explanation says of the queue ``ref``: that it does not exist, or that its policy was the one
        ``given`` with a hypothetical call."""
        if given:
            return ("the queue policy is the one given in the request",)
        if ref[2] == "*" or ref[2] in self.broker.namespaces.get(Namespace(ref[1], ref[0]), {}):
            return ()
        return (f"the queue {ref[2]} does not exist in account {ref[1]}, region {ref[0]}: it has no queue policy",)

    def _unparsable(self, principal: Principal, iam_action: str, ref: QueueRef, error: PolicyError) -> Decision:
        """The denial of every call on a queue whose ``Policy`` does not parse (fail closed: the root user's calls
        too), logged at WARNING on ``sqsemu.access`` with the queue and the reason each time."""
        self.logger.warning(
            logfmt({"fail_closed": _arn(ref), "action": iam_action, "identity": principal.arn, "reason": str(error)})
        )
        return Decision(False, f"{UNPARSABLE}: {error}", principal.arn, iam_action, _arn(ref), "queue policy")

    def _denied(self, identity: Identity, decision: Decision, request_id: str) -> None:
        """Count the denial and log its line: who, what, on what, what decided, every policy evaluated."""
        self.denied[decision.action] = self.denied.get(decision.action, 0) + 1
        if self.logger.isEnabledFor(logging.INFO):
            explanation = decision.explanation
            fields = {
                "denied": decision.action,
                "identity": decision.principal,
                "access_key_id": identity.access_key_id,
                "resource": decision.resource,
                "decided_by": decision.deciding,
                "evaluated": explanation.text() if explanation is not None else None,
                "notes": "; ".join(explanation.notes) if explanation is not None and explanation.notes else None,
                "request_id": request_id,
            }
            self.logger.info(logfmt(fields, EXPLAINED_CHARS))

    # ------------------------------------------------------------------------------------ explained: the admin API

    def authorize(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The answer of ``POST /_sqsemu/authorize`` for the JSON object ``data`` (module docstring); raises
        ValueError naming what is wrong with it."""
        key = data.get("access_key_id")
        if key is not None:
            identity = self.identities.get(key) if isinstance(key, str) else None
            if identity is None:
                raise ValueError(f"no [[credentials]] entry has the access key id {key!r}")
            principal, policies = identity.principal, identity.policies
            fixed = self._fixed_context(identity, self.region)  # aws:RequestedRegion: set below, as the call's
        else:
            arn = data.get("principal")
            account = data.get("account", "")
            if not isinstance(arn, str):
                raise ValueError('give "access_key_id" or "principal" (an IAM user or role ARN, or a service name)')
            principal = principal_for(arn, account if isinstance(account, str) else "")
            raw = data.get("policies", [])
            if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
                raise ValueError('"policies" must be a list of policy documents (JSON text)')
            try:
                policies = tuple((f"identity policy {n}", parse_policy(p, False)) for n, p in enumerate(raw, 1))
            except PolicyError as exc:
                raise ValueError(f"identity policy: {exc}") from None
            fixed = {
                "aws:principalarn": (principal.arn,),
                "aws:principalaccount": (principal.account,),
                "aws:principaltype": (_PRINCIPAL_TYPES[principal.kind],),
            }
            if principal.kind == "user":
                fixed["aws:username"] = (principal.name,)
        action = data.get("action")
        if not isinstance(action, str) or not action:
            raise ValueError('"action" must be an SQS action (SendMessage) or an IAM action (sqs:SendMessage)')
        if action.lower().startswith("sqs:"):
            needs: Sequence[tuple[str, str]] = ((action, "queue"),)
        else:
            found = REQUIRED.get(action)
            if found is None:
                raise ValueError(f"unknown SQS action {action!r}")
            needs = found
        context = data.get("context", {})
        if not isinstance(context, dict):
            raise ValueError('"context" must be an object of condition keys and values')
        given = {str(name).lower() for name in context}
        for name, value in context.items():
            values = value if isinstance(value, list) else [value]
            fixed[str(name).lower()] = tuple(json.dumps(v) if not isinstance(v, str) else v for v in values)
        region = data.get("region", self.region)
        queue = data.get("queue")
        addressed = self._addressed(queue, principal.account)
        if addressed is not None and addressed[0]:
            region = addressed[0]
        if "aws:requestedregion" not in given:  # the region the call is made in: its queue's (check's caller.region)
            fixed["aws:requestedregion"] = (str(region),)
        queue_policy = data.get("queue_policy")
        if queue_policy is not None:
            if not isinstance(queue_policy, str):
                raise ValueError('"queue_policy" must be a policy document (JSON text)')
            try:
                parse_policy(queue_policy, True)
            except PolicyError as exc:
                raise ValueError(f"queue policy: {exc}") from None
        checks: list[Decision] = []
        request = _Hypothetical(data)
        if request.source_arn is None and addressed is not None:
            request.source_arn = _arn((addressed[0] or str(region), addressed[1], addressed[2]))
        caller = Namespace(principal.account, str(region))
        target = None if addressed is None else (addressed[1], addressed[2])
        plain_http: Scope = {"scheme": "http"}  # a local call, unless the context says otherwise
        decision = self._decide(principal, policies, needs, request, target, caller, fixed, plain_http, queue_policy,
                                checks)  # fmt: skip
        if decision is None:
            raise ValueError("the call names no queue its actions are on")
        answer = decision.as_dict()
        answer["checks"] = [check.as_dict() for check in checks]
        return answer

    @staticmethod
    def _addressed(queue: object, account: str) -> tuple[str, str, str] | None:
        """``(region or "", account, name)`` of a queue given as a URL, an ARN or a name."""
        if queue is None:
            return None
        if not isinstance(queue, str) or not queue:
            raise ValueError('"queue" must be a queue URL, ARN or name')
        ref = _from_arn(queue)
        if ref is not None:
            return ref
        if "/" in queue:
            owner, name = parse_queue_url(queue)
            return "", owner or account, name
        return "", account, queue

    def routes(self) -> list[BaseRoute]:
        """``POST /_sqsemu/authorize``."""
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        from sqsemu.admin.common import AdminError, json_object

        async def authorize(request: Request) -> JSONResponse:
            data = await json_object(request, '{"access_key_id": "AKIA...", "action": "SendMessage", "queue": "q"}')
            try:
                return JSONResponse(self.authorize(data))
            except ValueError as exc:
                raise AdminError(str(exc)) from None

        return [Route(AUTHORIZE_PATH, authorize, methods=["POST"])]

    def collector(self) -> _DeniedCollector:
        """The prometheus-client collector of ``sqsemu_access_denied_total{action}``."""
        return _DeniedCollector(self)

    # ------------------------------------------------------------------- other APIs and service-made calls

    def decide_as(
        self,
        principal: Principal,
        policies: Sequence[tuple[str, Policy]],
        iam_action: str,
        resource: str,
        region: str,
        context: Mapping[str, str | Sequence[str]] | None = None,
        scope: Scope | None = None,
    ) -> Decision:
        """Whether ``principal`` with its identity-based ``policies`` may perform ``iam_action``
        (``lambda:GetEventSourceMapping``, ``sqs:ReceiveMessage``) on ``resource`` in ``region``, by the rules SQS
        calls are decided by (:func:`~sqsemu.security.evaluate.evaluate`): for a queue ARN with its queue's policy
        and tags, for any other ARN (a Lambda event source mapping's or function's) or ``*`` (an action with no
        resource type, "Actions, resources, and condition keys for AWS Lambda") with the identity-based policies
        only, the resource's account being the ARN's (the principal's for ``*``). ``context``: more condition keys
        (``lambda:FunctionArn``; a key with several values, ``aws:TagKeys``, as a sequence; of two names differing only
        in case the first gives it); ``scope``: the request's, for ``aws:SecureTransport`` and ``aws:SourceIp`` (None
        for a call sqsemu makes itself, such as a mapping's poll). Raises nothing; a denial is not logged here (see
        :meth:`denied_call`)."""
        fixed: dict[str, Sequence[str]] = {
            "aws:principalarn": (principal.arn,),
            "aws:principalaccount": (principal.account,),
            "aws:principaltype": (_PRINCIPAL_TYPES[principal.kind],),
            "aws:requestedregion": (region,),
        }
        if principal.kind == "user":
            fixed["aws:username"] = (principal.name,)
        for name, value in (context or {}).items():
            fixed.setdefault(name.lower(), (value,) if isinstance(value, str) else tuple(value))
        ref = _from_arn(resource)
        try:
            queue_policy, tags = self._queue_state(ref) if ref is not None else (None, {})
        except PolicyError as exc:  # fail closed, as a call's: never as if the queue had no policy (nor a 500)
            assert ref is not None
            return self._unparsable(principal, iam_action, ref, exc)
        parts = resource.split(":")
        account = parts[4] if len(parts) > 4 and parts[4] else principal.account
        return evaluate(principal, iam_action, resource, account, policies, queue_policy,
                        Context(fixed, self._now, scope, tags))  # fmt: skip

    def check_sns(
        self,
        access_key_id: str | None,
        needs: SNSNeeds,
        caller: Namespace,
        topic_policy: str | None,
        topic_tags: Mapping[str, str] | None,
        subscription_owner: str | None,
        asked: Mapping[str, Sequence[str]] | None,
        scope: Scope | None,
        request_id: str,
    ) -> Decision | None:
        """Whether the key ``access_key_id``, acting as ``caller``, may make an SNS call that needs ``needs``
        (:func:`~sqsemu.security.topics.sns_needs`), by the rules SQS calls are decided by: its identity-based
        policies and the topic's ``Policy`` text ``topic_policy`` (the topic's, default included; None when the
        topic does not exist), the topic's tags ``topic_tags`` for ``aws:ResourceTag``, the subscription's owner
        ``subscription_owner`` for the subscription actions (:func:`~sqsemu.security.topics.resource_account`),
        ``asked`` the condition keys the call's parameters set. None when allowed (or the key has no identity);
        else the denial, already logged and counted, for the caller to raise SNS's ``AuthorizationError``
        (:func:`~sqsemu.security.topics.sns_denial_message`). A topic policy that does not parse denies every
        call on the topic (fail closed, logged at WARNING), the owner's root user's too."""
        identity = self.identity(access_key_id)
        if identity is None:
            return None
        principal = identity.principal
        account = resource_account(needs, caller.account_id, subscription_owner)
        try:
            policy = parse_policy(topic_policy, True) if topic_policy else None
        except PolicyError as exc:  # fail closed: never as if the topic had no policy
            self.logger.warning(logfmt({"fail_closed": needs.resource, "action": needs.actions[0],
                                        "identity": principal.arn, "reason": str(exc)}))  # fmt: skip
            decision = Decision(False, f"the topic {DOES_NOT_PARSE}: {exc}", principal.arn, needs.actions[0],
                                needs.resource, "topic policy")  # fmt: skip
            self._denied(identity, decision, request_id)
            return decision
        context = Context(self._fixed_for(identity, caller.region), self._now, scope, topic_tags, asked)
        for iam_action in needs.actions:
            decision = evaluate(principal, iam_action, needs.resource, account, identity.policies, policy, context,
                                "topic policy")  # fmt: skip
            if decision.allowed:
                continue
            notes: tuple[str, ...] = ()
            if needs.topic_arn is not None and topic_policy is None:
                notes = (f"the topic {needs.topic_arn} does not exist: it has no topic policy",)
            decision.explanation = explain(principal, iam_action, needs.resource, identity.policies, policy,
                                           context, "topic policy", notes)  # fmt: skip
            decision.principal = identity.denial_arn
            self._denied(identity, decision, request_id)
            return decision
        return None

    def check_assume_role(
        self,
        identity: Identity,
        role_arn: str,
        asked: Mapping[str, Sequence[str]],
        region: str,
        scope: Scope | None,
        request_id: str,
    ) -> Decision:
        """Whether ``identity`` may ``sts:AssumeRole`` the role ``role_arn`` (its identity-based policies and the
        role's trust policy: :mod:`sqsemu.security.roles`, rule 9 of :mod:`sqsemu.security.evaluate`); ``asked``
        holds ``sts:externalid`` and ``sts:rolesessionname`` (lower case) from the call, ``scope`` the request's.
        A role not declared is denied (AWS does not tell). A denial is logged and counted, its ``principal`` the
        caller's ARN as the denial names it; :func:`assume_role_message` is AWS's message. Raises nothing."""
        principal = identity.principal
        role = self.roles.get(role_arn)
        context = Context(self._fixed_for(identity, region), self._now, scope, None, asked)
        if role is None:  # answered as a denial, as AWS does (it does not say whether the role exists)
            decision = Decision(False, "no resource-based policy allows", principal.arn, ASSUME_ROLE, role_arn)
            decision.explanation = Explanation(
                (), (f"no [[credentials]] entry declares the role {role_arn[:300]}: it cannot be assumed",)
            )
        else:
            decision = evaluate(principal, ASSUME_ROLE, role_arn, role.principal.account, identity.policies,
                                role.trust_policy, context, "trust policy", resource_required=True)  # fmt: skip
            if not decision.allowed:
                notes = () if role.trust_declared else ("the role declares no trust_policy: it trusts its own account",)
                decision.explanation = explain(principal, ASSUME_ROLE, role_arn, identity.policies, role.trust_policy,
                                               context, "trust policy", notes)  # fmt: skip
        if not decision.allowed:
            decision.principal = identity.denial_arn
            self._denied(identity, decision, request_id)
        return decision

    def denied_call(self, access_key_id: str, decision: Decision, request_id: str) -> None:
        """Log and count a denial :meth:`decide_as` made for a signed call of another API (the Lambda API), as an
        SQS call's denial is (the access line, ``sqsemu_access_denied_total{action}``)."""
        identity = self.identity(access_key_id)
        if identity is not None:
            decision.principal = identity.denial_arn
            self._denied(identity, decision, request_id)


class _Hypothetical:
    """What ``_queues`` reads from a request, for a hypothetical call (its move task's source and destination)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        source = data.get("source_arn")
        destination = data.get("destination_arn")
        self.source_arn: str | None = source if isinstance(source, str) else None
        self.destination_arn: str | None = destination if isinstance(destination, str) else None
        self.task_handle: str | None = None


class _DeniedCollector:
    def __init__(self, control: AccessControl) -> None:
        self.control = control

    def collect(self) -> Iterator[Any]:
        from prometheus_client.metrics_core import CounterMetricFamily

        family = CounterMetricFamily(
            "sqsemu_access_denied", "Calls denied by --auth iam (SQS, SNS, Lambda), by IAM action.", labels=("action",)
        )
        for action, count in sorted(self.control.denied.items()):
            family.add_metric([action], count)
        yield family
