"""Look inside the server without touching it, and wipe it: the queue list, message peek and reset routes.

- ``GET /_sqsemu/queues`` → ``{"queues": [<queue>, ...]}``, every queue of every account and region, sorted by
  (account, region, name). A ``<queue>`` is ``{"account", "region", "name", "arn", "fifo": bool, "url",
  "visible": int, "in_flight": int, "delayed": int, "waiting_long_polls": int, "noisy_tenants": [str, ...]}``
  (``noisy_tenants``: the message groups of a standard queue that are noisy now, sorted; docs/behaviour.md 4.10;
  always ``[]`` on a FIFO queue); ``url`` is built like the SQS
  layer builds queue URLs (the configured base URL, else the request's scheme and ``Host`` header).
  ``waiting_long_polls`` is how many ReceiveMessage calls are parked on the queue right now, waiting for a message
  (counted when asked; a call that was answered, timed out or whose client disconnected is not counted). Tests
  wait for it to reach the number of long polls they started before they send, instead of sleeping.
- ``GET /_sqsemu/queues/{account}/{name}/messages[?region=...]`` (region defaults to the server's) →
  ``{"queue": <queue>, "messages": [<message>, ...]}``, in the order the messages arrived in the queue (send
  order; a dead-lettered message counts from its move). A ``<message>`` is::

      {"message_id": str, "body": str,
       "state": "visible" | "in_flight" | "delayed",
       "seconds_left": float | null,        # seconds until visible again (in_flight, delayed); null when visible
       "receive_count": int,
       "sent_timestamp": int,               # epoch ms
       "first_receive_timestamp": int | null,  # epoch ms; null before the first receive
       "message_group_id": str | null, "message_deduplication_id": str | null,
       "sequence_number": str | null, "dead_letter_source_arn": str | null,
       "attributes": {str: str},            # system attributes, as ReceiveMessage with All returns them
       "message_attributes": {name: {"DataType": str, "StringValue": str} | {"DataType": str, "BinaryValue": b64}},
       "injected": [str, ...],              # realism mode (docs/realism.md): "duplicate_pending" (deleting this
                                            # delivery leaves a copy), "duplicate" (this is that copy), "reordered"
                                            # (its latest delivery was out of send order); [] otherwise
       "tenant": str | null,                # standard queues: the fair-queue tenant (its MessageGroupId; a message
                                            # without one is a tenant of its own: null); FIFO queues: null
       "noisy": bool}                       # whether its tenant is noisy now (docs/behaviour.md 4.10)

  A peek changes nothing: no receive count, visibility, receipt handle, digest cache, retention or deduplication
  state is touched. Bad account id or region → 400; no such queue → 404.
- ``POST /_sqsemu/reset`` with ``{}`` (every queue and SNS topic of every account, and every fault rule) →
  ``{"deleted_queues": <int>, "deleted_topics": <int>, "deleted_faults": <int>}``, or ``{"account": "<12
  digits>"}`` (that account's queues and topics in every region; fault rules are server-wide and stay) →
  ``{"deleted_queues": <int>, "deleted_topics": <int>}``. A topic goes with its subscriptions, counts, filter
  explanations and recorded deliveries. Waiting long polls on those queues return empty at once. Other keys or a
  malformed account → 400.

Every route runs on the server's event loop, so it sees the engine between operations, never in the middle of one.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from sqsemu.admin import faults
from sqsemu.admin.common import AdminError, json_object
from sqsemu.clock import Clock
from sqsemu.config import ACCOUNT_RE, Config
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.errors import QueueDoesNotExist
from sqsemu.engine.message import Message, MessageState
from sqsemu.protocol.operations import render_attribute, system_attributes
from sqsemu.protocol.urls import queue_url, url_base

STATE_NAMES = {
    MessageState.VISIBLE: "visible",
    MessageState.IN_FLIGHT: "in_flight",
    MessageState.DELAYED: "delayed",
}


def noisy_tenants(queue: Queue, now_ms: int) -> list[str]:
    """The tenants (message groups) of ``queue`` that are noisy at ``now_ms`` (epoch ms), sorted; ``[]`` for a
    queue that never had a message with a MessageGroupId and for FIFO queues."""
    snapshot = queue.fair_snapshot(now_ms)
    return [] if snapshot is None else snapshot.noisy


def queue_view(queue: Queue, base: str, now_ms: int) -> dict[str, Any]:
    """One queue as the admin API shows it (see the module docstring); ``base`` is ``scheme://host``, ``now_ms``
    the clock's time (epoch ms)."""
    ns = queue.namespace
    return {
        "account": ns.account_id,
        "region": ns.region,
        "name": queue.name,
        "arn": queue.arn,
        "fifo": queue.fifo,
        "url": queue_url(base, queue),
        "visible": queue.counts[MessageState.VISIBLE],
        "in_flight": queue.counts[MessageState.IN_FLIGHT],
        "delayed": queue.counts[MessageState.DELAYED],
        "waiting_long_polls": queue.waiters.waiting_count(),
        "noisy_tenants": noisy_tenants(queue, now_ms),
    }


def message_view(
    message: Message, now_ms: int, injected: list[str] | None = None, noisy: frozenset[str] | None = None
) -> dict[str, Any]:
    """One stored message as the admin API shows it (see the module docstring), read without changing it;
    ``injected`` are its realism labels (``QueueRealism.labels``); ``noisy`` the noisy tenants of its queue now,
    None for a FIFO queue (which has no tenants).

    ``seconds_left`` is ``(visible_at - now) / 1000`` seconds, never below 0 (a deadline that has just passed but
    whose timer has not run yet shows 0.0).
    """
    state = STATE_NAMES.get(message.state, message.state.name.lower())
    seconds_left = None if message.state is MessageState.VISIBLE else max(0.0, (message.visible_at_ms - now_ms) / 1000)
    return {
        "message_id": message.message_id,
        "body": message.body,
        "state": state,
        "seconds_left": seconds_left,
        "receive_count": message.receive_count,
        "sent_timestamp": message.sent_ms,
        "first_receive_timestamp": message.first_receive_ms or None,
        "message_group_id": message.group_id,
        "message_deduplication_id": message.deduplication_id,
        "sequence_number": message.sequence_number,
        "dead_letter_source_arn": message.dead_letter_source_arn,
        "attributes": system_attributes(message, None),
        "message_attributes": {name: render_attribute(value) for name, value in message.message_attributes.items()},
        "injected": injected or [],
        "tenant": None if noisy is None else message.group_id,
        "noisy": noisy is not None and message.group_id in noisy,
    }


def list_queues(broker: Broker, base: str, now_ms: int) -> list[dict[str, Any]]:
    """Every queue of every account and region (``queue_view`` each at ``now_ms``), sorted by (account, region,
    name)."""
    return [queue_view(queue, base, now_ms) for queue in broker.all_queues()]


def tenants_of(queue: Queue, now_ms: int) -> frozenset[str] | None:
    """The noisy tenants of ``queue`` at ``now_ms`` as ``message_view`` takes them (None for a FIFO queue)."""
    return None if queue.fifo else frozenset(noisy_tenants(queue, now_ms))


def peek_queue(
    broker: Broker, clock: Clock, ns: Namespace, name: str, base: str, offset: int = 0, limit: int | None = None
) -> dict[str, Any]:
    """``{"queue": <queue>, "messages": [<message>, ...]}`` of queue ``name`` in ``ns``, changing nothing.

    ``offset`` and ``limit`` pick a page of the messages (in arrival order; the web console pages large queues with
    them); by default all of them. Raises ``AdminError`` (404) when there is no such queue.
    """
    try:
        queue = broker.get_queue(ns, name)
    except QueueDoesNotExist:
        raise AdminError(f"queue {name!r} does not exist in account {ns.account_id} region {ns.region}", 404) from None
    now = clock.now_ms()
    stop = None if limit is None else offset + limit
    realism = queue.realism
    noisy = tenants_of(queue, now)
    messages = [
        message_view(message, now, realism.labels(message) if realism is not None else None, noisy)
        for message in islice(queue.messages.values(), offset, stop)
    ]
    return {"queue": queue_view(queue, base, now), "messages": messages}


def reset_server(broker: Broker, account: str | None) -> dict[str, int]:
    """Delete every queue with its messages, every SNS topic with its subscriptions, and every fault rule
    (``account`` None), or the queues and topics of one ``account`` in every region (fault rules are server-wide and
    stay): ``{"deleted_queues", "deleted_topics"[, "deleted_faults"]}``.

    The one implementation of a reset: ``POST /_sqsemu/reset``, moto's reset and the web console call it.
    """
    from sqsemu.sns.layer import sns_for  # the server's SNS (none on a bare broker)

    sns = sns_for(broker)
    if account is not None:
        account = check_account(account)
        deleted = broker.reset(account)
        return {"deleted_queues": deleted, "deleted_topics": sns.reset(account) if sns is not None else 0}
    cleared = faults.injector_for(broker).clear()
    deleted = broker.reset(None)
    topics = sns.reset(None) if sns is not None else 0
    return {"deleted_queues": deleted, "deleted_topics": topics, "deleted_faults": cleared}


def check_account(value: object) -> str:
    """``value`` if it is a 12-digit account id; else raises ``AdminError`` (400)."""
    if not isinstance(value, str) or not ACCOUNT_RE.match(value):
        raise AdminError(f'"account" must be a 12-digit account id, got {value!r}')
    return value


def routes(config: Config, broker: Broker, clock: Clock) -> list[BaseRoute]:
    """The queue list, peek and reset routes for ``broker``."""

    def base_of(request: Request) -> str:
        return url_base(config, request.url.scheme, request.headers.get("host"))

    async def queues(request: Request) -> JSONResponse:
        return JSONResponse({"queues": list_queues(broker, base_of(request), clock.now_ms())})

    async def messages(request: Request) -> JSONResponse:
        account = check_account(request.path_params["account"])
        region = request.query_params.get("region", config.region)
        if not region or "/" in region:
            raise AdminError(f'"region" must be a region name like us-east-1, got {region!r}')
        name = request.path_params["name"]
        return JSONResponse(peek_queue(broker, clock, Namespace(account, region), name, base_of(request)))

    async def reset(request: Request) -> JSONResponse:
        data = await json_object(request, '{"account": "123456789012"} or {}')
        unknown = sorted(set(data) - {"account"})
        if unknown:
            fields = ", ".join(unknown)
            raise AdminError(f'unknown field(s) {fields}: the body is {{}} or {{"account": "<12 digits>"}}')
        return JSONResponse(reset_server(broker, data.get("account")))

    return [
        Route("/_sqsemu/queues", queues, methods=["GET"]),
        Route("/_sqsemu/queues/{account}/{name}/messages", messages, methods=["GET"]),
        Route("/_sqsemu/reset", reset, methods=["POST"]),
    ]
