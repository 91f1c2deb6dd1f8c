"""Admin routes of the realism mode (docs/realism.md): the server's spec and seed, and each queue's own spec.

- ``GET /_sqsemu/realism`` → ``{"spec": "duplicates=0.1" | "off", "effects": {effect: value}, "seed": int}``.
- ``PUT /_sqsemu/realism`` with ``{"spec": "duplicates=0.1,reorder=0.2", "seed": 7}`` (``seed`` optional: the
  current one is kept) → the same shape. It applies to every queue without its own spec, and every queue starts a
  fresh random sequence. A bad spec or seed → 400 ``{"error"}`` naming the problem.
- ``GET /_sqsemu/realism/queues/{account}/{name}[?region=...]`` → ``{"account", "region", "name", "own": text |
  null, "spec": effective text, "effects": {...}, "seed": int, "injected": {"duplicates", "reordered",
  "sampled_out", "lost_answers", "delayed_changes"}}`` (counts since the queue's realism was last installed).
  No such queue → 404.
- ``PUT`` the same path with ``{"spec": "reorder=0.5"}`` → the queue's own spec, stored in canonical form (effects
  separated by blanks: a tag value cannot hold a comma) as its ``sqsemu:realism`` tag (so it is listed by
  ListQueueTags and kept in durable mode; ``off`` switches realism off for that queue alone); answers like GET.
  ``DELETE`` removes the queue's own spec (the server's applies again).

The same functions serve the web console.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from sqsemu.admin.common import AdminError, json_object
from sqsemu.admin.peek import check_account
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.errors import QueueDoesNotExist
from sqsemu.engine.realism import OFF, REALISM_TAG, RealismSpecError, parse_spec

_EXAMPLE = '{"spec": "duplicates=0.1,reorder=0.2", "seed": 7}'
MAX_SEED = 2**53 - 1


def server_state(broker: Broker) -> dict[str, Any]:
    """The server's realism: ``{"spec", "effects", "seed"}``."""
    return broker.realism_controller().state() if broker.realism is not None else _off_state()


def _off_state() -> dict[str, Any]:
    return {"spec": OFF, "effects": parse_spec(OFF).as_dict(), "seed": 0}


def set_server(broker: Broker, spec: Any, seed: Any = None) -> dict[str, Any]:
    """Set the server's spec (and seed, when not None); raises ``AdminError`` (400) for a bad one."""
    if not isinstance(spec, str):
        raise AdminError(f'"spec" must be a string like "duplicates=0.1,reorder=0.2" (or "off"), got {spec!r}')
    if seed is None:
        seed = broker.realism.seed if broker.realism is not None else 0
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise AdminError(f'"seed" must be an integer from 0 to {MAX_SEED}, got {seed!r}')
    try:
        broker.set_realism(spec, seed)
    except RealismSpecError as exc:
        raise AdminError(str(exc)) from None
    return server_state(broker)


def queue_state(broker: Broker, queue: Queue) -> dict[str, Any]:
    """One queue's realism (see the module docstring)."""
    realism = queue.realism
    spec = realism.spec if realism is not None else parse_spec(OFF)
    ns = queue.namespace
    return {
        "account": ns.account_id,
        "region": ns.region,
        "name": queue.name,
        "own": queue.tags.get(REALISM_TAG),
        "spec": spec.text(),
        "effects": spec.as_dict(),
        "seed": broker.realism.seed if broker.realism is not None else 0,
        "injected": asdict(realism.injected) if realism is not None else _no_injections(),
    }


def _no_injections() -> dict[str, int]:
    return {"duplicates": 0, "reordered": 0, "sampled_out": 0, "lost_answers": 0, "delayed_changes": 0}


def set_queue(broker: Broker, queue: Queue, spec: Any) -> dict[str, Any]:
    """Give ``queue`` its own spec (its ``sqsemu:realism`` tag), or drop it (``spec`` None); raises ``AdminError``
    (400) for a bad spec."""
    if spec is None:
        if REALISM_TAG in queue.tags:
            broker.untag_queue(queue, [REALISM_TAG])
        return queue_state(broker, queue)
    if not isinstance(spec, str):
        raise AdminError(f'"spec" must be a string like "reorder=0.5" (or "off", or null), got {spec!r}')
    try:
        parsed = parse_spec(spec)
    except RealismSpecError as exc:
        raise AdminError(str(exc)) from None
    broker.tag_queue(queue, {REALISM_TAG: parsed.text(" ")})
    return queue_state(broker, queue)


def routes(config: Config, broker: Broker) -> list[BaseRoute]:
    """The ``/_sqsemu/realism`` routes (see the module docstring)."""

    def found(request: Request) -> Queue:
        account = check_account(request.path_params["account"])
        region = request.query_params.get("region", config.region)
        name = request.path_params["name"]
        try:
            return broker.get_queue(Namespace(account, region), name)
        except QueueDoesNotExist:
            raise AdminError(f"queue {name!r} does not exist in account {account} region {region}", 404) from None

    async def get_server(request: Request) -> JSONResponse:
        return JSONResponse(server_state(broker))

    async def put_server(request: Request) -> JSONResponse:
        data = await json_object(request, _EXAMPLE)
        unknown = sorted(set(data) - {"spec", "seed"})
        if unknown:
            raise AdminError(f"unknown field(s) {', '.join(unknown)}: the body is like {_EXAMPLE}")
        if "spec" not in data:
            raise AdminError(f'"spec" is required: the body is like {_EXAMPLE}')
        return JSONResponse(set_server(broker, data["spec"], data.get("seed")))

    async def get_queue(request: Request) -> JSONResponse:
        return JSONResponse(queue_state(broker, found(request)))

    async def put_queue(request: Request) -> JSONResponse:
        queue = found(request)
        data = await json_object(request, '{"spec": "reorder=0.5"}')
        unknown = sorted(set(data) - {"spec"})
        if unknown or "spec" not in data:
            raise AdminError('the body is {"spec": "<effects>"} (or {"spec": null} to drop the queue\'s own spec)')
        return JSONResponse(set_queue(broker, queue, data["spec"]))

    async def delete_queue(request: Request) -> JSONResponse:
        return JSONResponse(set_queue(broker, found(request), None))

    path = "/_sqsemu/realism/queues/{account}/{name}"
    return [
        Route("/_sqsemu/realism", get_server, methods=["GET"]),
        Route("/_sqsemu/realism", put_server, methods=["PUT"]),
        Route(path, get_queue, methods=["GET"]),
        Route(path, put_queue, methods=["PUT"]),
        Route(path, delete_queue, methods=["DELETE"]),
    ]
