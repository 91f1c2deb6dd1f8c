"""Fault injection: rules that make chosen SQS calls fail, answer late, or lose their connection.

A rule picks calls by ``action`` (an SQS action name, or ``"*"``) and ``queue`` (an ``fnmatch`` glob, case-sensitive,
on the queue *name*; ``"*"`` by default). The queue of a call is the queue its ``QueueUrl`` (or, for Query, its
request path) names; for ``CreateQueue`` and ``GetQueueUrl`` it is the ``QueueName`` asked for; calls with no queue
(``ListQueues``) are matched only by ``"*"``. Rules are checked after the request is decoded (a malformed request
still gets its real error) and before the call runs: a rule that fires with an error or a drop means the call does
*not* happen.

Rule (JSON, as posted and as read from a ``--faults`` file; every key optional except one effect)::

    {"id": "throttle-orders",            # default: generated ("f-1", "f-2", ...); [A-Za-z0-9_.-], 1..64 chars
     "action": "SendMessage",            # default "*"
     "queue": "orders-*",                # default "*"
     "error": {"code": "ThrottlingException",   # [A-Za-z][A-Za-z0-9_.-]*, up to 128 chars
               "status": 400,            # 400..599; default: the code's own status if sqsemu knows it, else 400
               "message": "Rate exceeded",      # default "sqsemu fault injection: <code>"
               "fault": "Sender"},       # "Sender" | "Receiver"; default Sender below 500, Receiver from 500
                                         # a bare string is short for {"code": <string>}
     "latency_ms": 250,                  # added (real time) before answering; 0..600000; default 0
     "drop": false,                      # close the connection without a complete HTTP response
     "every": 2,                         # fire on every Nth matching call (N >= 1); default 1
     "probability": 0.3, "seed": 42,     # or: fire with this probability in (0, 1], from random.Random(seed)
     "count": 5}                         # fire at most this many times (>= 1); default unlimited

At least one effect (``error``, ``latency_ms`` > 0, ``drop``) is required; ``error`` and ``drop`` exclude each other;
``every`` and ``probability`` exclude each other; ``seed`` (an int, default 0) only goes with ``probability``. Integers
(``every``, ``count``, ``seed``) are at most 2**53 - 1 in magnitude. The normalised form (the answer to a POST, and each
entry of GET) has every key, with ``null`` for ``error``/``every``/``probability``/``seed``/``count`` when they do not
apply, plus ``matched`` (calls that matched action and queue) and ``fired`` (calls the rule acted on). A spent rule
(``fired == count``) stays listed and keeps counting ``matched``.

When several rules match one call, each counts it and decides on its own; the latencies of all that fire add up,
and the error or drop of the earliest-added firing rule is the outcome.

Routes (``sqsemu.admin.app``):

- ``POST /_sqsemu/faults`` with a rule → 201 the normalised rule; bad rule → 400 ``{"error"}``; id taken → 409.
- ``GET /_sqsemu/faults`` → ``{"faults": [rule, ...]}`` in the order they were added.
- ``GET /_sqsemu/faults/{id}`` → the rule; unknown id → 404.
- ``DELETE /_sqsemu/faults/{id}`` → ``{"deleted": id}``; unknown id → 404.
- ``DELETE /_sqsemu/faults`` → ``{"deleted": <number of rules removed>}``.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import translate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqsemu.admin.common import AdminError, json_object
from sqsemu.engine import jsondoc
from sqsemu.protocol.errors import ErrorInfo, InjectedError, injected_error_info
from sqsemu.protocol.operations import OPERATIONS
from sqsemu.sns.service import ACTIONS as SNS_ACTIONS
from sqsemu.sts.service import ACTIONS as STS_ACTIONS

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import BaseRoute

    from sqsemu.engine.broker import Broker

RULE_KEYS = ("id", "action", "queue", "error", "latency_ms", "drop", "every", "probability", "seed", "count")
ERROR_KEYS = ("code", "status", "message", "fault")
FAULTS = ("Sender", "Receiver")
MAX_LATENCY_MS = 600_000
_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_CODE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$")
_EXAMPLE = '{"action": "SendMessage", "queue": "orders-*", "error": {"code": "ThrottlingException"}, "every": 2}'


class FaultFileError(ValueError):
    """A ``--faults`` file that cannot be read or holds an invalid rule; the message names the file and rule."""


@dataclass(frozen=True, slots=True)
class ErrorEffect:
    """The error a rule answers with: ``code``, HTTP ``status``, ``message``, ``fault`` and the rendering row."""

    code: str
    status: int
    message: str
    fault: str
    info: ErrorInfo

    def exception(self) -> InjectedError:
        """A fresh exception to raise for one call."""
        return InjectedError(self.info, self.message)

    def to_json(self) -> dict[str, Any]:
        """``{"code", "status", "message", "fault"}``."""
        return {"code": self.code, "status": self.status, "message": self.message, "fault": self.fault}


@dataclass(slots=True)
class FaultRule:
    """One validated rule and its counters. Build it with :func:`parse_rule`."""

    id: str
    action: str
    queue: str
    error: ErrorEffect | None
    latency_ms: float
    drop: bool
    every: int | None
    probability: float | None
    seed: int | None
    count: int | None
    matched: int = 0
    fired: int = 0
    _queue_re: re.Pattern[str] | None = field(default=None, repr=False)
    _rng: random.Random | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._queue_re = None if self.queue == "*" else re.compile(translate(self.queue))
        self._rng = random.Random(self.seed) if self.probability is not None else None

    def matches(self, action: str, queue: str | None) -> bool:
        """True when the call ``action`` on queue name ``queue`` (None: the call has no queue) is this rule's."""
        if self.action != "*" and self.action != action:
            return False
        pattern = self._queue_re
        if pattern is None:
            return True
        return queue is not None and pattern.match(queue) is not None

    def decide(self) -> bool:
        """Count one matching call; True when the rule fires on it (counted in ``fired``)."""
        self.matched += 1
        if self.count is not None and self.fired >= self.count:
            return False
        if self._rng is not None:
            assert self.probability is not None
            fire = self._rng.random() < self.probability
        else:
            fire = self.matched % (self.every or 1) == 0
        if fire:
            self.fired += 1
        return fire

    def to_json(self) -> dict[str, Any]:
        """The normalised rule with its ``matched`` and ``fired`` counters (see the module docstring)."""
        return {
            "id": self.id,
            "action": self.action,
            "queue": self.queue,
            "error": self.error.to_json() if self.error is not None else None,
            "latency_ms": self.latency_ms,
            "drop": self.drop,
            "every": self.every,
            "probability": self.probability,
            "seed": self.seed,
            "count": self.count,
            "matched": self.matched,
            "fired": self.fired,
        }


@dataclass(slots=True)
class Outcome:
    """What the firing rules of one call ask for: ``latency_s`` (seconds, summed), then ``error`` or ``drop``.

    ``rule_ids`` names the rules that fired, in the order they were added.
    """

    latency_s: float = 0.0
    error: ErrorEffect | None = None
    drop: bool = False
    rule_ids: list[str] = field(default_factory=list)


MAX_RULE_INT = 2**53 - 1
"""Largest magnitude of an integer in a rule (``every``, ``count``, ``seed``, ``status``): the integers every JSON
parser reads exactly, so a rule echoed back stays readable (a 4,000-digit ``count`` would not be)."""


def _is_int(value: Any) -> bool:
    """An integer (not a boolean) of at most ``MAX_RULE_INT`` in magnitude."""
    return isinstance(value, int) and not isinstance(value, bool) and -MAX_RULE_INT <= value <= MAX_RULE_INT


def _is_number(value: Any) -> bool:
    """A finite float or an ``_is_int`` integer (``math.isfinite`` overflows on integers past the float range)."""
    return _is_int(value) or (isinstance(value, float) and math.isfinite(value))


def _parse_error(value: Any) -> ErrorEffect:
    if isinstance(value, str):
        value = {"code": value}
    if not isinstance(value, dict):
        raise AdminError('"error" must be an object like {"code": "ThrottlingException", "status": 400}')
    unknown = sorted(set(value) - set(ERROR_KEYS))
    if unknown:
        raise AdminError(f'unknown key(s) in "error": {", ".join(unknown)} (allowed: {", ".join(ERROR_KEYS)})')
    code = value.get("code")
    if not isinstance(code, str) or not _CODE_RE.match(code):
        raise AdminError('"error.code" must be an error code like "ThrottlingException" ([A-Za-z][A-Za-z0-9_.-]*)')
    status = value.get("status")
    if status is not None and (not _is_int(status) or not 400 <= status <= 599):
        raise AdminError('"error.status" must be an integer HTTP status from 400 to 599')
    fault = value.get("fault")
    if fault is not None and fault not in FAULTS:
        raise AdminError('"error.fault" must be "Sender" or "Receiver"')
    message = value.get("message")
    if message is None:
        message = f"sqsemu fault injection: {code}"
    elif not isinstance(message, str):
        raise AdminError('"error.message" must be a string')
    info = injected_error_info(code, status, fault)
    return ErrorEffect(code, info.status, message, info.fault, info)


def parse_rule(data: Any, rule_id: str) -> FaultRule:
    """Validate one rule object (see the module docstring) and build it with ``rule_id`` unless it names its own id.

    Raises ``AdminError`` (400) naming the first problem: not an object, unknown keys, wrong types or ranges, no
    effect, ``error`` with ``drop``, ``every`` with ``probability``, ``seed`` without ``probability``.
    """
    if not isinstance(data, dict):
        raise AdminError(f"a fault rule must be a JSON object like {_EXAMPLE}")
    unknown = sorted(set(data) - set(RULE_KEYS))
    if unknown:
        raise AdminError(f"unknown key(s) in fault rule: {', '.join(unknown)} (allowed: {', '.join(RULE_KEYS)})")

    given_id = data.get("id")
    if given_id is not None:
        if not isinstance(given_id, str) or not _ID_RE.match(given_id):
            raise AdminError('"id" must be 1 to 64 characters of A-Z, a-z, 0-9, "_", "." or "-"')
        rule_id = given_id

    action = data.get("action", "*")
    if action is None:
        action = "*"
    if not isinstance(action, str) or (
        action != "*" and action not in OPERATIONS and action not in SNS_ACTIONS and action not in STS_ACTIONS
    ):
        raise AdminError(
            f'"action" must be "*" or an SQS, SNS or STS action name (e.g. SendMessage, Publish, AssumeRole), got '
            f"{action!r}"
        )

    queue = data.get("queue", "*")
    if queue is None:
        queue = "*"
    if not isinstance(queue, str) or not queue:
        raise AdminError('"queue" must be a non-empty glob on the queue name, e.g. "orders-*"')

    error = None if data.get("error") is None else _parse_error(data["error"])

    latency_ms = data.get("latency_ms", 0)
    if latency_ms is None:
        latency_ms = 0
    if not _is_number(latency_ms) or not 0 <= latency_ms <= MAX_LATENCY_MS:
        raise AdminError(f'"latency_ms" must be a number of milliseconds from 0 to {MAX_LATENCY_MS}')

    drop = data.get("drop", False)
    if drop is None:
        drop = False
    if not isinstance(drop, bool):
        raise AdminError('"drop" must be true or false')
    if drop and error is not None:
        raise AdminError('"drop" and "error" exclude each other (a dropped connection has no answer)')
    if error is None and not drop and latency_ms == 0:
        raise AdminError('a fault rule needs an effect: "error", "latency_ms" > 0 or "drop": true')

    every = data.get("every")
    probability = data.get("probability")
    seed = data.get("seed")
    if every is not None and probability is not None:
        raise AdminError('"every" and "probability" exclude each other')
    if every is not None and (not _is_int(every) or every < 1):
        raise AdminError(f'"every" must be an integer from 1 to {MAX_RULE_INT}')
    if probability is not None:
        if not _is_number(probability) or not 0 < probability <= 1:
            raise AdminError('"probability" must be a number in (0, 1]')
        probability = float(probability)
        if seed is None:
            seed = 0
        elif not _is_int(seed):
            raise AdminError(f'"seed" must be an integer from -{MAX_RULE_INT} to {MAX_RULE_INT}')
    elif seed is not None:
        raise AdminError('"seed" only goes with "probability"')
    elif every is None:
        every = 1

    count = data.get("count")
    if count is not None and (not _is_int(count) or count < 1):
        raise AdminError(f'"count" must be an integer from 1 to {MAX_RULE_INT} (leave it out for no limit)')

    return FaultRule(rule_id, action, queue, error, latency_ms, drop, every, probability, seed, count)


class FaultInjector:
    """The fault rules of one server, in the order they were added.

    The SQS endpoint checks ``rules`` (a plain list: empty means no cost beyond one truth test) and calls
    :meth:`decide` for every call when there are rules. Everything runs on the server's event loop thread.
    """

    def __init__(self) -> None:
        self.rules: list[FaultRule] = []
        self._ids = itertools.count(1)

    def _next_id(self) -> str:
        taken = {rule.id for rule in self.rules}
        while True:
            candidate = f"f-{next(self._ids)}"
            if candidate not in taken:
                return candidate

    def add(self, data: Any) -> FaultRule:
        """Validate ``data`` (see :func:`parse_rule`) and append the rule. An id already in use → AdminError 409."""
        rule = parse_rule(data, self._next_id())
        if self.get(rule.id) is not None:
            raise AdminError(f"a fault rule with id {rule.id!r} exists already", 409)
        self.rules.append(rule)
        return rule

    def add_all(self, items: Iterable[Any]) -> list[FaultRule]:
        """Add several rules, all or none: on the first bad one raise ``AdminError`` prefixed ``rule <n>:``."""
        added: list[FaultRule] = []
        try:
            for n, data in enumerate(items, 1):
                try:
                    added.append(self.add(data))
                except AdminError as exc:
                    raise AdminError(f"rule {n}: {exc.message}", exc.status) from None
        except AdminError:
            for rule in added:
                self.rules.remove(rule)
            raise
        return added

    def load_file(self, path: str | Path) -> list[FaultRule]:
        """Add the rules of a JSON file holding a list of rule objects.

        Raises ``FaultFileError`` (a ``ValueError``) naming the file, and the rule number when a rule is bad.
        """
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise FaultFileError(f"faults file {str(path)!r}: cannot read it: {exc.strerror or exc}") from None
        try:
            items = jsondoc.loads(text)
        except ValueError as exc:
            raise FaultFileError(f"faults file {str(path)!r}: not valid JSON: {exc}") from None
        if not isinstance(items, list):
            raise FaultFileError(f"faults file {str(path)!r}: must hold a JSON list of rule objects like [{_EXAMPLE}]")
        try:
            return self.add_all(items)
        except AdminError as exc:
            raise FaultFileError(f"faults file {str(path)!r}: {exc.message}") from None

    def get(self, rule_id: str) -> FaultRule | None:
        """The rule with ``rule_id``, or None."""
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        return None

    def delete(self, rule_id: str) -> bool:
        """Remove the rule with ``rule_id``; False when there is none."""
        rule = self.get(rule_id)
        if rule is None:
            return False
        self.rules.remove(rule)
        return True

    def clear(self) -> int:
        """Remove every rule; returns how many there were."""
        n = len(self.rules)
        self.rules = []
        return n

    def decide(self, action: str, queue: str | None) -> Outcome | None:
        """Count the call ``action`` on queue name ``queue`` against every rule; what to do, or None for nothing."""
        outcome: Outcome | None = None
        for rule in self.rules:
            if not rule.matches(action, queue) or not rule.decide():
                continue
            if outcome is None:
                outcome = Outcome()
            outcome.rule_ids.append(rule.id)
            outcome.latency_s += rule.latency_ms / 1000.0
            if outcome.error is None and not outcome.drop:
                outcome.error = rule.error
                outcome.drop = rule.drop
        return outcome


def injector_for(broker: Broker) -> FaultInjector:
    """The fault injector of the server that owns ``broker`` (created empty on first use).

    The SQS endpoint and the admin routes both reach a server's rules through its broker, so any number of servers
    in one process keep separate rules.
    """
    injector = broker.layers.get("faults")
    if injector is None:
        injector = broker.layers["faults"] = FaultInjector()
    assert isinstance(injector, FaultInjector)
    return injector


def routes(injector: FaultInjector) -> list[BaseRoute]:
    """The ``/_sqsemu/faults`` routes over ``injector`` (see the module docstring)."""
    from starlette.responses import JSONResponse  # imported with the admin app, at its first request
    from starlette.routing import Route

    async def add(request: Request) -> JSONResponse:
        data: Mapping[str, Any] = await json_object(request, _EXAMPLE)
        rule = injector.add(dict(data))
        return JSONResponse(rule.to_json(), status_code=201)

    async def list_all(request: Request) -> JSONResponse:
        return JSONResponse({"faults": [rule.to_json() for rule in injector.rules]})

    async def delete_all(request: Request) -> JSONResponse:
        return JSONResponse({"deleted": injector.clear()})

    def _found(request: Request) -> FaultRule:
        rule_id = request.path_params["rule_id"]
        rule = injector.get(rule_id)
        if rule is None:
            raise AdminError(f"no fault rule with id {rule_id!r}", 404)
        return rule

    async def get_one(request: Request) -> JSONResponse:
        return JSONResponse(_found(request).to_json())

    async def delete_one(request: Request) -> JSONResponse:
        rule = _found(request)
        injector.delete(rule.id)
        return JSONResponse({"deleted": rule.id})

    return [
        Route("/_sqsemu/faults", add, methods=["POST"]),
        Route("/_sqsemu/faults", list_all, methods=["GET"]),
        Route("/_sqsemu/faults", delete_all, methods=["DELETE"]),
        Route("/_sqsemu/faults/{rule_id}", get_one, methods=["GET"]),
        Route("/_sqsemu/faults/{rule_id}", delete_one, methods=["DELETE"]),
    ]
