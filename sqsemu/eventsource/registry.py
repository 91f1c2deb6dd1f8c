"""Every event source mapping of one server: the operations of the REST API, the runners, durable mode, the
config file's declarations, and what observability reads (invocation counts, batch sizes, recent results).

Durable mode (``--data-dir``): each mapping is a row of the durable store (``sqsemu.persistence``), its state
included, recorded with every change and committed by the store's writer (never on the event loop); the Lambda
API's answer waits for that commit, as every answer in durable mode does. A mapping being deleted is saved as such:
after a crash it is not restored (its row goes), so a deleted mapping never comes back. At start-up the saved
mappings are restored; a ``event-source-mappings.json`` file of an earlier version found in the data folder is
migrated into the store (and renamed ``event-source-mappings.json.migrated``), which the log says. The config
file's ``[[event_source_mappings]]`` are applied after that: a declared mapping (its UUID derived from its queue
and function) is created, or set to the declared settings when it exists.

Accounts: a mapping belongs to the account and region that created it, and uses only that account's functions
(``sqsemu.eventsource.functions``: a declared function is its role's account's, else its ``account``'s, else the
server's; Lambda grants other accounts actions on an existing function only, never a mapping of it: "Viewing
resource-based IAM policies in Lambda"). A ``FunctionName`` naming another account's (or region's) function, or a
function the caller's account does not have, is ``ResourceNotFoundException`` ``Function not found: <function
ARN>``, Lambda's answer for a function that does not exist.

``--auth iam`` (:attr:`EventSources.access` set): a mapping acts as its function's execution role (the config
file's ``[functions.NAME] role`` and ``policies``), as Lambda does ("Using Lambda with Amazon SQS", execution role
permissions): CreateEventSourceMapping (and an UpdateEventSourceMapping that changes the function) is refused with
``InvalidParameterValueException`` "The provided execution role does not have permissions to call <Action> on SQS"
unless the role may ``sqs:ReceiveMessage``, ``sqs:DeleteMessage`` and ``sqs:GetQueueAttributes`` on the queue, by
its policies and the queue's policy (so another account's queue can be mapped when its policy grants the role); a
function with no declared role has no permissions. Each poll and each delete of the workers is decided as the role
again (``sqsemu.eventsource.poller``), with ``aws:SecureTransport`` ``true`` (:data:`POLLER_CONTEXT`: Lambda's
pollers call SQS over HTTPS). Without ``--auth iam`` roles are not looked at, and a mapping reads only its
own account's queues.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import uuid as uuidlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqsemu.clock import Clock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace, parse_arn
from sqsemu.eventsource.errors import (
    NOT_FOUND_MESSAGE,
    InvalidParameterValue,
    LambdaError,
    ResourceConflict,
    ResourceInUse,
    ResourceNotFound,
    role_refusal,
)
from sqsemu.eventsource.functions import ExecutionRole, Functions, Handler
from sqsemu.eventsource.mapping import Mapping, apply_parameters, function_ref
from sqsemu.eventsource.poller import Invocation, Runner
from sqsemu.eventsource.tags import check_key, limited, parse_tags, taggable
from sqsemu.observability.accesslog import logfmt
from sqsemu.quiet import wait_until_quiet

if TYPE_CHECKING:
    from sqsemu.engine.queue import Queue
    from sqsemu.eventsource.declare import DeclaredRole
    from sqsemu.security.iam import AccessControl

logger = logging.getLogger("sqsemu.eventsource")
access_logger = logging.getLogger("sqsemu.access.lambda")

SAVE_FILE = "event-source-mappings.json"
DEFAULT_MAX_ITEMS = 100
MAX_ITEMS = 10_000
"""MaxItems' range (1 to 10,000: the ``MaxListItems`` shape of botocore's Lambda model)."""
PAGE_MAX = 100
"""Most mappings in one ListEventSourceMappings answer, whatever MaxItems says (the model's MaxItems doc)."""
RECENT = 10
"""Invocations remembered per mapping (the console shows them)."""
BATCH_SIZE_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)

MIGRATED_SUFFIX = ".migrated"

ROLE_ACTIONS = ("ReceiveMessage", "DeleteMessage", "GetQueueAttributes")
"""What a function's execution role must be allowed on an SQS event source ("Using Lambda with Amazon SQS",
execution role permissions; the AWSLambdaSQSQueueExecutionRole managed policy), checked in this order."""

POLLER_CONTEXT = {"aws:SecureTransport": "true"}
"""The request context keys of a mapping's own SQS calls beyond the role's. Lambda's pollers call SQS's API, which
is reached over TLS only ("Infrastructure security in Amazon SQS", SQS Developer Guide), so a policy's
``aws:SecureTransport`` condition reads ``true`` for them: the enforce-HTTPS statement of "Amazon SQS security best
practices" (a Deny on ``false``) never stops a mapping, a Deny on ``true`` does (docs/behaviour.md 12.13)."""


def execution_role(declared: DeclaredRole) -> ExecutionRole:
    """The :class:`ExecutionRole` of a ``[functions.NAME]`` ``role`` and ``policies`` (checked when the file was
    read; raises ``ValueError`` if one no longer parses)."""
    from sqsemu.security.evaluate import principal_for
    from sqsemu.security.policy import parse_policy

    principal = principal_for(declared.arn, "")
    return ExecutionRole(principal, tuple((label, parse_policy(text, False)) for label, text in declared.policies))


class MappingStore(Protocol):
    """What the registry needs of the durable store (``sqsemu.persistence.Store``)."""

    def mapping_saved(self, uuid: str, document: str) -> None:
        """Record a mapping's saved form (JSON text)."""

    def mapping_forgotten(self, uuid: str) -> None:
        """Record that a mapping is gone."""

    def saved_mappings(self) -> list[str]:
        """The saved mappings (JSON texts), at start-up."""


def event_sources_for(broker: Broker) -> EventSources | None:
    """The event source mappings of the server whose broker is ``broker`` (the web console shows them), or None."""
    sources = broker.layers.get("event sources")
    assert sources is None or isinstance(sources, EventSources)
    return sources


class EventSources:
    """The mappings, their runners and their functions. Methods run on the server's event loop thread, except
    :meth:`settle_threadsafe` and :meth:`register_function`, which any thread may call."""

    def __init__(self, config: Config, broker: Broker, clock: Clock, store: MappingStore | None = None) -> None:
        self.config = config
        self.store = store
        self.broker = broker
        self.clock = clock
        declared = None
        if config.config:
            from sqsemu.eventsource.declare import load_declarations

            declared = load_declarations(config.config)
        self.declared = declared.mappings if declared is not None else ()
        self.functions = Functions(
            config.lambda_endpoint,
            declared.endpoints if declared is not None else None,
            declared.function_accounts(config.account_id) if declared is not None else None,
        )
        for name, role in (declared.roles if declared is not None else {}).items():
            self.functions.roles[name] = execution_role(role)
        self.access: AccessControl | None = None
        """``--auth iam``'s enforcement (the app sets it): mappings act as their functions' execution roles."""
        self.mappings: dict[str, Mapping] = {}
        self.runners: dict[str, Runner] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.invocations: collections.Counter[tuple[str, str]] = collections.Counter()
        self.batch_sizes = [0] * (len(BATCH_SIZE_BUCKETS) + 1)
        self.batch_size_sum = 0
        self.worker_restarts = 0
        self._closing: asyncio.Task[None] | None = None
        self.recent: dict[str, collections.deque[Invocation]] = {}
        self.access_log = config.access_log
        self.legacy_path = Path(config.data_dir) / SAVE_FILE if config.data_dir else None
        broker.layers["event sources"] = self

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Restore the saved mappings, apply the declared ones and start their workers (inside the running loop,
        after the broker started). Raises ``ValueError`` for a declared mapping that cannot be applied."""
        self.loop = asyncio.get_running_loop()
        store = self.store
        if store is not None:
            for document in store.saved_mappings():
                mapping = Mapping.from_saved(json.loads(document))
                self.mappings[mapping.uuid] = mapping
            self._migrate(store)
            for uuid, mapping in list(self.mappings.items()):
                if mapping.state == "Deleting":  # deleted before a crash: its deletion completes now
                    del self.mappings[uuid]
                    store.mapping_forgotten(uuid)
                    logger.info("event source mapping %s: deleted before the restart, not restored", uuid)
        for declared in self.declared:
            self._save(self._apply_declared(declared))
        for mapping in self.mappings.values():
            self._run(mapping)

    def _migrate(self, store: MappingStore) -> None:
        """Move the mappings of an earlier version's ``event-source-mappings.json`` into the store, once."""
        path = self.legacy_path
        if path is None or not path.exists():
            return
        migrated = 0
        for saved in json.loads(path.read_text())["mappings"]:
            mapping = Mapping.from_saved(saved)
            if mapping.uuid not in self.mappings:
                self.mappings[mapping.uuid] = mapping
                store.mapping_saved(mapping.uuid, json.dumps(mapping.saved()))
                migrated += 1
        done = path.with_name(path.name + MIGRATED_SUFFIX)
        os.replace(path, done)
        logger.warning(
            "event source mappings: migrated %d mapping(s) from %s into the durable store; the old file is now %s",
            migrated,
            path,
            done,
        )

    def replace_all(self, mappings: list[Mapping]) -> None:
        """Replace every mapping by ``mappings`` (a loaded state, ``sqsemu.state``; made by ``Mapping.from_saved``,
        as durable mode restores them): the old ones' workers stop and their rows go; each new one is saved (durable
        mode) and, once the mappings have started, its workers start. A mapping being deleted is not taken. Before
        :meth:`start` (``--load-state``) the saved mappings are still in the store only: their rows go too."""
        gone = dict.fromkeys(self.mappings)
        if self.loop is None and self.store is not None:
            gone.update(dict.fromkeys(json.loads(document)["uuid"] for document in self.store.saved_mappings()))
        for uuid in gone:
            runner = self.runners.pop(uuid, None)
            if runner is not None:
                runner.close()
            self.mappings.pop(uuid, None)
            self.recent.pop(uuid, None)
            if self.store is not None:
                self.store.mapping_forgotten(uuid)
        for mapping in mappings:
            if mapping.state == "Deleting":
                continue
            self.mappings[mapping.uuid] = mapping
            self._save(mapping)
            if self.loop is not None:
                self._run(mapping)

    def close(self) -> None:
        """Stop every worker (server shutdown) and close the connections to Invoke endpoints (a task on the
        running loop, which the server awaits with its other pending tasks before the loop closes)."""
        for runner in self.runners.values():
            runner.close()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._closing = loop.create_task(self._close_functions(), name="esm-close-invoke-client")  # supervised

    async def _close_functions(self) -> None:
        """Close the Invoke endpoints' connections at shutdown; a failure is logged once and shutdown goes on."""
        try:
            await self.functions.aclose()
        except Exception:
            logger.exception("closing the connections to the Invoke endpoints failed; shutdown goes on")

    def register_function(self, name: str, handler: Handler) -> None:
        """Make the function ``name`` a Python callable ``handler(event, context)`` run in this process."""
        self.functions.register(name, handler)

    # ------------------------------------------------------------------ the API's operations

    def create(self, params: dict[str, Any], caller: Namespace, mapping_id: str | None = None) -> dict[str, Any]:
        """CreateEventSourceMapping → the configuration (``State`` ``Creating``); ``mapping_id``: the new mapping's
        UUID when the caller chose it (the API authorizes tagging on its ARN first), else a new one. ``Tags`` are
        the mapping's first tags (``sqsemu.eventsource.tags``)."""
        name = self._own_function(params.get("FunctionName"), caller)
        arn = params.get("EventSourceArn")
        queue = self._source_queue(arn)
        if queue.namespace.region != caller.region or (
            self.access is None and queue.namespace.account_id != caller.account_id
        ):
            # Lambda reads the queue with the function's execution role, of the caller's account: without --auth iam
            # there are no grants to another account, so another account's (or region's) queue is refused as a
            # queue the role cannot read.
            raise InvalidParameterValue(role_refusal("ReceiveMessage"))
        mapping = Mapping(mapping_id or str(uuidlib.uuid4()), caller.account_id, caller.region, queue.arn, name)
        self._check_function(mapping)
        self._check_role(mapping, queue)
        apply_parameters(mapping, params, queue.fifo)
        if params.get("Tags") is not None:
            mapping.tags = parse_tags(params["Tags"])
        self._check_unique(mapping)
        mapping.last_modified = self.clock.now_ms() / 1000
        self.mappings[mapping.uuid] = mapping
        self._save(mapping)
        answer = mapping.configuration("Creating")
        mapping.state = mapping.steady_state()
        self._run(mapping)
        return answer

    def get(self, uuid: str, caller: Namespace | None = None) -> dict[str, Any]:
        """GetEventSourceMapping (``caller``: the account and region asking; None: any, for in-process use)."""
        return self._mapping(uuid, caller).configuration()

    def list_mappings(
        self, caller: Namespace, source_arn: str | None, function: str | None, marker: str | None, max_items: Any
    ) -> dict[str, Any]:
        """ListEventSourceMappings: the caller's mappings in creation order, filtered by ``EventSourceArn`` and
        ``FunctionName``; ``Marker`` is the ``NextMarker`` of the page before."""
        size = DEFAULT_MAX_ITEMS if max_items is None else max_items
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_ITEMS:
            raise InvalidParameterValue(f"MaxItems must be between 1 and {MAX_ITEMS}.")
        size = min(size, PAGE_MAX)  # "a maximum of 100 items in each response, even if you set the number higher"
        wanted_function = function_ref(function).name if function else None
        chosen = [
            m
            for m in self.mappings.values()
            if m.account == caller.account_id
            and m.region == caller.region
            and (source_arn is None or m.event_source_arn == source_arn)
            and (wanted_function is None or m.function == wanted_function)
        ]
        start = 0
        if marker:
            ids = [m.uuid for m in chosen]
            if marker not in ids:
                raise InvalidParameterValue("Invalid Marker.")
            start = ids.index(marker)
        page = chosen[start : start + size]
        out: dict[str, Any] = {"EventSourceMappings": [m.configuration() for m in page]}
        if start + size < len(chosen):
            out["NextMarker"] = chosen[start + size].uuid
        return out

    def update(self, uuid: str, params: dict[str, Any], caller: Namespace | None = None) -> dict[str, Any]:
        """UpdateEventSourceMapping → the configuration (``State`` ``Updating``, ``Enabling`` or ``Disabling``)."""
        mapping = self._mapping(uuid, caller)
        if mapping.state == "Deleting":
            raise ResourceInUse(f"Cannot update the event source mapping {uuid} because it is in use.")
        queue = self._source_queue(mapping.event_source_arn)
        changed = Mapping(**{k: getattr(mapping, k) for k in mapping.__dataclass_fields__})
        if params.get("FunctionName") is not None:
            changed.function = self._own_function(params["FunctionName"], Namespace(mapping.account, mapping.region))
            self._check_function(changed)
            if changed.function != mapping.function:
                self._check_role(changed, queue)
        apply_parameters(changed, params, queue.fifo)
        self._check_unique(changed)
        state = "Updating"
        if changed.enabled != mapping.enabled:
            state = "Enabling" if changed.enabled else "Disabling"
        for key in mapping.__dataclass_fields__:
            setattr(mapping, key, getattr(changed, key))
        mapping.last_modified = self.clock.now_ms() / 1000
        self._save(mapping)
        answer = mapping.configuration(state)
        mapping.state = mapping.steady_state()
        self.runners[uuid].sync()
        return answer

    def delete(self, uuid: str, caller: Namespace | None = None) -> dict[str, Any]:
        """DeleteEventSourceMapping → the configuration (``State`` ``Deleting``); the mapping is gone once its
        workers have finished their batches."""
        mapping = self._mapping(uuid, caller)
        if mapping.state == "Deleting":
            raise ResourceInUse(f"Cannot delete the event source mapping {uuid} because it is in use.")
        mapping.state = "Deleting"
        self._save(mapping)
        answer = mapping.configuration()
        runner = self.runners.get(uuid)
        if runner is None:
            self._forget(uuid)
        else:
            runner.on_idle = lambda: self._forget(uuid)
            runner.sync()
        return answer

    # ------------------------------------------------------------------ the tagging API (event source mappings)

    def tagged(self, resource: str, caller: Namespace) -> Mapping:
        """The mapping the tagging API's resource ARN names, when ``caller`` owns it. Raises
        ``InvalidParameterValue`` for a value that is no taggable ARN, or the ARN of a function or another kind
        sqsemu does not tag; ``ResourceNotFound`` for a mapping that does not exist, or is another account's or
        region's (as :meth:`get` answers)."""
        target = taggable(resource)
        if target.uuid is None:
            raise InvalidParameterValue(
                f"sqsemu tags event source mappings only (arn:aws:lambda:<region>:<account>:event-source-mapping:"
                f"<UUID>), not {resource}."
            )
        if (target.account, target.region) != (caller.account_id, caller.region):
            raise ResourceNotFound(NOT_FOUND_MESSAGE)
        return self._mapping(target.uuid, caller)

    def tag(self, resource: str, tags: Any, caller: Namespace) -> None:
        """TagResource: add ``tags`` to the mapping (a key it has takes the new value). Raises as :meth:`tagged`
        and ``sqsemu.eventsource.tags.parse_tags``; beyond 50 tags in all, nothing changes."""
        mapping = self.tagged(resource, caller)
        if tags is None:
            raise InvalidParameterValue("Tags is required.")
        mapping.tags = limited({**mapping.tags, **parse_tags(tags)})
        self._save(mapping)

    def untag(self, resource: str, keys: list[str], caller: Namespace) -> None:
        """UntagResource: remove the tags ``keys`` names (a key the mapping does not have is no error). Raises as
        :meth:`tagged`, and ``InvalidParameterValue`` without keys or for a key that is no tag key."""
        mapping = self.tagged(resource, caller)
        if not keys:
            raise InvalidParameterValue("TagKeys is required.")
        for key in keys:
            check_key(key)
        mapping.tags = {k: v for k, v in mapping.tags.items() if k not in keys}
        self._save(mapping)

    def list_tags(self, resource: str, caller: Namespace) -> dict[str, Any]:
        """ListTags → ``{"Tags": {...}}``. Raises as :meth:`tagged`."""
        return {"Tags": dict(self.tagged(resource, caller).tags)}

    # ------------------------------------------------------------------ helpers

    def _mapping(self, uuid: str, caller: Namespace | None) -> Mapping:
        """The mapping ``uuid`` if ``caller`` owns it: another account's or region's mapping is not found, as Lambda
        answers for a resource the caller cannot see."""
        mapping = self.mappings.get(uuid)
        if mapping is None or (
            caller is not None and (mapping.account != caller.account_id or mapping.region != caller.region)
        ):
            raise ResourceNotFound(NOT_FOUND_MESSAGE)
        return mapping

    def _source_queue(self, arn: Any) -> Any:
        if not isinstance(arn, str) or not arn:
            raise InvalidParameterValue("EventSourceArn is required: sqsemu maps SQS queues (arn:aws:sqs:...).")
        if parse_arn(arn) is None:
            raise InvalidParameterValue(f"Unrecognized event source {arn!r}: sqsemu maps SQS queues only.")
        queue = self.broker.resolve_arn(arn)
        if queue is None:
            raise InvalidParameterValue(
                "Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService.NonExistentQueue. "
                "SQS Error Message: The specified queue does not exist."
            )
        return queue

    def _own_function(self, value: Any, caller: Namespace) -> str:
        """The bare name of the function a ``FunctionName`` value names, when it names one of ``caller``'s account
        and region (a bare name always does). Raises ``InvalidParameterValue`` for a value that is no function
        name, ``ResourceNotFound`` for another account's or region's function (as one that does not exist)."""
        ref = function_ref(value)
        if (ref.account or caller.account_id) != caller.account_id or (ref.region or caller.region) != caller.region:
            raise ResourceNotFound(f"Function not found: {ref.arn(caller.region, caller.account_id)}")
        return ref.name

    def _check_function(self, mapping: Mapping) -> None:
        """Refuse a mapping whose function its account does not have (``ResourceNotFound``, Lambda's message)."""
        if not self.functions.known(mapping.function, mapping.account):
            raise ResourceNotFound(f"Function not found: {mapping.function_arn}")

    def role_denies(self, mapping: Mapping, action: str, queue: Queue) -> bool:
        """Whether ``--auth iam`` refuses the execution role of ``mapping``'s function (in the mapping's account)
        the SQS ``action`` (``ReceiveMessage``) on ``queue``: by the role's policies and the queue's policy, in the
        request context of a poller (:data:`POLLER_CONTEXT`), across accounts only where both allow. A function
        with no role, or not of the mapping's account, is refused everything. Always False without ``--auth
        iam``."""
        access = self.access
        if access is None:
            return False
        role = self.functions.role_of(mapping.function, mapping.account)
        if role is None:
            return True
        decision = access.decide_as(
            role.principal, role.policies, f"sqs:{action}", queue.arn, queue.namespace.region, POLLER_CONTEXT
        )
        return not decision.allowed

    def _check_role(self, mapping: Mapping, queue: Queue) -> None:
        """Refuse a mapping of ``queue`` whose function's role lacks what Lambda needs (:data:`ROLE_ACTIONS`):
        ``InvalidParameterValue`` naming the first action missing."""
        for action in ROLE_ACTIONS:
            if self.role_denies(mapping, action, queue):
                raise InvalidParameterValue(role_refusal(action))

    def _check_unique(self, mapping: Mapping) -> None:
        for other in self.mappings.values():
            if (
                other.uuid != mapping.uuid
                and other.event_source_arn == mapping.event_source_arn
                and other.function_arn == mapping.function_arn
                and other.state != "Deleting"
            ):
                raise ResourceConflict(
                    f'An event source mapping with SQS arn (" {mapping.event_source_arn} ") and function '
                    f'(" {mapping.function} ") already exists. Please update or delete the existing mapping with '
                    f"UUID {other.uuid}"
                )

    def _run(self, mapping: Mapping) -> None:
        runner = Runner(mapping, self.broker, self.clock, self.functions, self._observed, self.role_denies)
        runner.on_restart = self._worker_restarted
        self.runners[mapping.uuid] = runner
        runner.sync()

    def _forget(self, uuid: str) -> None:
        if self.mappings.pop(uuid, None) is not None:
            self.runners.pop(uuid, None)
            self.recent.pop(uuid, None)
            if self.store is not None:
                self.store.mapping_forgotten(uuid)

    def _save(self, mapping: Mapping) -> None:
        """Record ``mapping`` in the durable store (durable mode): committed by the store's writer, before the
        change is answered."""
        if self.store is not None:
            self.store.mapping_saved(mapping.uuid, json.dumps(mapping.saved()))

    def _apply_declared(self, declared: Any) -> Mapping:
        from sqsemu.eventsource.declare import declared_arn

        arn = declared_arn(declared, self.config)
        queue = self.broker.resolve_arn(arn)
        if queue is None:
            raise ValueError(f"event_source_mappings: the queue {arn} does not exist (declare it in [[queues]])")
        # the function's account when the function is declared (a mapping uses only its own account's functions),
        # else the queue's; another account's queue needs --auth iam and a queue policy granting the role
        owner = self.functions.accounts.get(declared.function, queue.namespace.account_id)
        if owner != queue.namespace.account_id and self.access is None:
            raise ValueError(
                f"event_source_mappings ({arn} -> {declared.function}): the function is account {owner}'s and the "
                f"queue account {queue.namespace.account_id}'s; without --auth iam a mapping reads only its own "
                "account's queues (give the function that account, or use --auth iam with a queue policy granting "
                "its role)"
            )
        ns = Namespace(owner, queue.namespace.region)
        key = uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"sqsemu:{arn}:{declared.function}")
        mapping = self.mappings.get(str(key)) or Mapping(str(key), ns.account_id, ns.region, arn, declared.function)
        params = declared.parameters()
        try:
            apply_parameters(mapping, params, queue.fifo)
            if params.get("Tags") is not None:  # the declared tags replace the mapping's
                mapping.tags = parse_tags(params["Tags"])
        except LambdaError as exc:
            raise ValueError(f"event_source_mappings ({arn} -> {declared.function}): {exc.message}") from None
        mapping.state = mapping.steady_state()
        mapping.last_modified = mapping.last_modified or self.clock.now_ms() / 1000
        self.mappings[mapping.uuid] = mapping
        return mapping

    # ------------------------------------------------------------------ observability and tests

    def _worker_restarted(self) -> None:
        self.worker_restarts += 1

    def _observed(self, invocation: Invocation) -> None:
        mapping = invocation.mapping
        self.invocations[(mapping.function, invocation.outcome)] += 1
        size = len(invocation.message_ids)
        self.batch_size_sum += size
        index = next((i for i, bound in enumerate(BATCH_SIZE_BUCKETS) if size <= bound), len(BATCH_SIZE_BUCKETS))
        self.batch_sizes[index] += 1
        self.recent.setdefault(mapping.uuid, collections.deque(maxlen=RECENT)).append(invocation)
        if self.access_log:
            access_logger.info(
                logfmt(
                    {
                        "action": "Invoke",
                        "function": mapping.function,
                        "mapping": mapping.uuid,
                        "queue": mapping.event_source_arn,
                        "messages": size,
                        "failed": len(invocation.failed),
                        "outcome": invocation.outcome,
                        "error": invocation.error or None,
                        "latency_ms": round(invocation.duration_s * 1000, 3),
                    }
                )
            )

    def of_queue(self, arn: str) -> list[Mapping]:
        """The mappings reading the queue ``arn`` (the console shows them)."""
        return [m for m in self.mappings.values() if m.event_source_arn == arn]

    def queue_view(self, arn: str) -> list[dict[str, Any]]:
        """What the console shows of the mappings reading ``arn``: each mapping's ``uuid``, ``function``, ``target``
        (where the function runs), ``state``, ``batch_size``, ``window_s``, ``concurrency``, ``reports_failures``,
        ``filters``, ``last_result`` and ``recent`` (its last invocations, newest first: ``at_ms``, ``messages``,
        ``failed``, ``outcome``, ``error``)."""
        out = []
        for mapping in self.of_queue(arn):
            recent = [
                {
                    "at_ms": i.at_ms,
                    "messages": len(i.message_ids),
                    "failed": len(i.failed),
                    "outcome": i.outcome,
                    "error": i.error,
                }
                for i in reversed(self.recent.get(mapping.uuid, ()))
            ]
            out.append(
                {
                    "uuid": mapping.uuid,
                    "function": mapping.function,
                    "target": self.functions.describe(mapping.function),
                    "state": mapping.state,
                    "batch_size": mapping.batch_size,
                    "window_s": mapping.batching_window_s,
                    "concurrency": mapping.pollers,
                    "reports_failures": mapping.reports_item_failures,
                    "filters": len(mapping.filters),
                    "last_result": mapping.last_processing_result,
                    "recent": recent,
                }
            )
        return out

    def quiet(self) -> bool:
        """Whether every worker of every mapping waits for a message or for the clock."""
        return all(runner.quiet() for runner in self.runners.values())

    async def settle(self, timeout_s: float = 10.0) -> None:
        """Return once every worker waits (for a message or the clock) and nothing is being invoked: after a send
        or ``advance``, the invocations those caused are over. Raises ``TimeoutError`` after ``timeout_s`` real
        seconds."""
        await wait_until_quiet(self.quiet, 5, timeout_s, "event source mappings still busy")

    def settle_threadsafe(self, timeout_s: float = 10.0) -> None:
        """:meth:`settle` from another thread (a test's)."""
        loop = self.loop
        if loop is None:
            raise RuntimeError("the event source mappings have not started")
        asyncio.run_coroutine_threadsafe(self.settle(timeout_s), loop).result(timeout_s + 5)

    def counts(self) -> list[tuple[tuple[str, str], int]]:
        """``((function, outcome), invocations)`` pairs, sorted."""
        return sorted(self.invocations.items())
