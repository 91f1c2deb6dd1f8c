"""LocalStack's own endpoints for its SQS part (``--compat localstack``; docs/coming-from-localstack.md).

Facts from LocalStack's documentation ("Internal Endpoints", "Initialization Hooks", the SQS service page's
"Developer endpoints"); no LocalStack code.

- ``GET``/``HEAD /_localstack/health`` → ``{"edition": "community", "services": {"sns": "running", "sqs":
  "running"}, "version": "<sqsemu's>"}``: the services listed are the two sqsemu serves, running (clients and test
  harnesses poll it until the services they need are ``available`` or ``running``; the others are absent, so a wait
  for them fails rather than hangs on a wrong answer).
- ``GET /_localstack/init`` → ``{"completed": {"BOOT": bool, "START": bool, "READY": bool, "SHUTDOWN": bool},
  "scripts": [{"stage": "READY", "name": "<file name>", "state": "UNKNOWN"|"RUNNING"|"SUCCESSFUL"|"ERROR"}]}``;
  ``GET /_localstack/init/<stage>`` → ``{"completed": bool, "scripts": [...]}`` (stage in any case; an unknown one
  is 404). Only ``ready.d`` scripts run (:mod:`sqsemu.compat.initscripts`); BOOT and START are complete at once.
- ``GET``/``POST /_aws/sqs/messages`` with ``QueueUrl`` (query string, or a form body), and ``GET
  /_aws/sqs/messages/<region>/<account_id>/<queue_name>``: the queue's messages as a ``ReceiveMessage`` answer,
  changing nothing (no receive count, visibility, receive timestamp, receipt handle or digest cache is touched:
  it reads what the admin peek reads, :mod:`sqsemu.admin.peek`). Only visible messages unless ``ShowInvisible``
  (in flight) or ``ShowDelayed`` (delayed) is ``true``/``1``; with either, every message carries the attribute
  ``IsVisible`` / ``IsDelayed`` (``"true"``/``"false"``). Every system attribute and message attribute is
  included; the receipt handle is a fixed dummy that no delete accepts. The answer is Query XML, JSON when
  ``Accept`` asks for ``application/json`` (the Query protocol's JSON form), or JSON 1.0 when the body is a JSON
  1.0 ``AmazonSQS.ReceiveMessage`` call. A body in an AWS protocol naming another action: ``InvalidRequest``;
  no ``QueueUrl``: ``MissingParameter``; an unreadable one: ``InvalidAddress``; no such queue:
  ``QueueDoesNotExist``; each in the answer's format.

Queue URLs in ``QueueUrl`` may take any of LocalStack's forms: ``http://sqs.<region>.localhost.localstack.cloud:4566
/<account>/<name>`` (its default), ``http://<region>.queue.localhost.localstack.cloud:4566/<account>/<name>``,
``http://localhost:4566/queue/<region>/<account>/<name>`` and ``http://<any host>/<account>/<name>``; the region is
the URL's when it names one, else the server's.
"""

from __future__ import annotations

import re
from itertools import count
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sqsemu.admin.health import package_version
from sqsemu.compat.initscripts import STAGES, init_scripts_for
from sqsemu.config import ACCOUNT_RE, Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.errors import MissingParameter, SQSError
from sqsemu.engine.message import Message, MessageState
from sqsemu.protocol import json as jsonproto
from sqsemu.protocol import md5, query
from sqsemu.protocol.operations import render_attribute, system_attributes
from sqsemu.security.region import valid_region

__all__ = ["DUMMY_RECEIPT_HANDLE", "HEALTH_PATH", "InvalidAddress", "InvalidRequest", "locate", "routes"]

HEALTH_PATH = "/_localstack/health"
INIT_PATH = "/_localstack/init"
MESSAGES_PATH = "/_aws/sqs/messages"
SERVICES = {"sns": "running", "sqs": "running", "sts": "running"}
"""The services ``/_localstack/health`` lists: those sqsemu serves (:data:`sqsemu.compat.foreign.SERVED`)."""
DUMMY_RECEIPT_HANDLE = "SQSEMU/PEEK/NOT-A-RECEIPT-HANDLE"
"""The receipt handle of every message the developer endpoint shows (DeleteMessage refuses it)."""

_HOST_REGION = re.compile(r"^(?:sqs\.(?P<a>[a-z0-9-]+)|(?P<b>[a-z0-9-]+)\.queue)\.localhost\.localstack\.cloud$")
_TRUE = ("true", "1")
_ids = count(1)


class InvalidAddress(SQSError):
    """A ``QueueUrl`` that names no queue (HTTP 400 ``InvalidAddress``)."""

    shape = "InvalidAddress"


class InvalidRequest(SQSError):
    """A developer-endpoint body in an AWS protocol that is not a ReceiveMessage call (HTTP 400)."""

    shape = "InvalidRequest"


def locate(url: str, default_region: str) -> tuple[Namespace, str]:
    """``(namespace, queue name)`` of a queue URL in any of the module docstring's forms; raises
    :class:`InvalidAddress` when it has no ``/<12-digit account>/<name>`` at its end."""
    parts = urlsplit(url.strip())
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) < 2 or not ACCOUNT_RE.match(segments[-2]):
        raise InvalidAddress(f"The address {url} is not valid for this endpoint.")
    region = default_region
    match = _HOST_REGION.match(parts.hostname or "")
    if match is not None:
        region = match.group("a") or match.group("b")
    if len(segments) >= 4 and segments[-4] == "queue":
        region = segments[-3]
    if not valid_region(region):
        raise InvalidAddress(f"The address {url} is not valid for this endpoint.")
    return Namespace(segments[-2], region), segments[-1]


def _peeked(message: Message, show_invisible: bool, show_delayed: bool) -> dict[str, Any]:
    """One message as ReceiveMessage shows it, read without changing it (no cached digest is written)."""
    attributes = system_attributes(message, None)
    if show_invisible:
        attributes["IsVisible"] = "true" if message.state is MessageState.VISIBLE else "false"
    if show_delayed:
        attributes["IsDelayed"] = "true" if message.state is MessageState.DELAYED else "false"
    out: dict[str, Any] = {
        "MessageId": message.message_id,
        "ReceiptHandle": DUMMY_RECEIPT_HANDLE,
        "MD5OfBody": md5.md5_of_body(message.body),
        "Body": message.body,
        "Attributes": attributes,
    }
    if message.message_attributes:
        out["MD5OfMessageAttributes"] = md5.md5_of_attributes(message.message_attributes)
        out["MessageAttributes"] = {k: render_attribute(v) for k, v in message.message_attributes.items()}
    return out


def peek_messages(broker: Broker, ns: Namespace, name: str, show_invisible: bool, show_delayed: bool) -> dict[str, Any]:
    """The ``ReceiveMessage`` result (``{"Messages": [...]}``, or ``{}``) of queue ``name`` in ``ns``, in arrival
    order; raises ``QueueDoesNotExist``."""
    queue = broker.get_queue(ns, name)
    shown = [
        _peeked(m, show_invisible, show_delayed)
        for m in queue.messages.values()
        if m.state is MessageState.VISIBLE
        or (show_invisible and m.state is MessageState.IN_FLIGHT)
        or (show_delayed and m.state is MessageState.DELAYED)
    ]
    return {"Messages": shown} if shown else {}


class _Format:
    """The answer's wire format: JSON 1.0, the Query protocol's JSON form, or Query XML."""

    def __init__(self, json10: bool, query_json: bool) -> None:
        self.json10 = json10
        self.query_json = query_json

    def result(self, result: dict[str, Any]) -> Response:
        request_id = _request_id()
        if self.json10:
            return Response(jsonproto.encode(result), media_type=jsonproto.CONTENT_TYPE.decode())
        if self.query_json:
            body = query.encode_json("ReceiveMessage", result, request_id)
            return Response(body, media_type=query.JSON_CONTENT_TYPE.decode())
        return Response(query.encode("ReceiveMessage", result, request_id), media_type=query.CONTENT_TYPE.decode())

    def error(self, error: SQSError) -> Response:
        request_id = _request_id()
        if self.json10:
            status, code, body = jsonproto.encode_error(error)
            media = jsonproto.CONTENT_TYPE.decode()
        elif self.query_json:
            status, code, body = query.encode_error_json(error, request_id)
            media = query.JSON_CONTENT_TYPE.decode()
        else:
            status, code, body = query.encode_error(error, request_id)
            media = query.CONTENT_TYPE.decode()
        return Response(body, status_code=status, media_type=media, headers={"x-amzn-query-error": code.decode()})


def _request_id() -> str:
    return f"00000000-0000-4000-8000-{next(_ids) & 0xFFFFFFFFFFFF:012x}"


async def _parameters(request: Request) -> tuple[dict[str, str], bool]:
    """The request's parameters (query string, then a form or JSON 1.0 body) and whether the body was JSON 1.0;
    raises :class:`InvalidRequest` for a body that is an AWS call other than ReceiveMessage."""
    params = dict(request.query_params)
    if request.method != "POST":
        return params, False
    body = await request.body()
    target = request.headers.get("x-amz-target")
    content_type = request.headers.get("content-type", "")
    if target is not None or "amz-json" in content_type:
        if target is not None and target != "AmazonSQS.ReceiveMessage":
            raise InvalidRequest(f"This endpoint takes only ReceiveMessage calls, not {target}.")
        try:
            data = orjson.loads(body) if body.strip() else {}
        except orjson.JSONDecodeError:
            raise InvalidRequest("The body is not a JSON object.") from None
        if not isinstance(data, dict):
            raise InvalidRequest("The body is not a JSON object.")
        params.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in data.items()})
        return params, True
    form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    action = form.get("Action")
    if action is not None and action != "ReceiveMessage":
        raise InvalidRequest(f"This endpoint takes only ReceiveMessage calls, not {action}.")
    params.update(form)
    return params, False


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept")
    return accept is not None and query.wants_json(accept.encode("latin-1"))


def routes(config: Config, broker: Broker) -> list[BaseRoute]:
    """The ``/_localstack/*`` and ``/_aws/sqs/messages`` routes (see the module docstring)."""
    version = package_version()
    scripts = init_scripts_for(broker)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"edition": "community", "services": SERVICES, "version": version})

    async def init(request: Request) -> JSONResponse:
        return JSONResponse(scripts.document())

    async def init_stage(request: Request) -> JSONResponse:
        stage = request.path_params["stage"].upper()
        if stage not in STAGES:
            return JSONResponse({"error": f"no such stage {request.path_params['stage']!r}"}, status_code=404)
        return JSONResponse(scripts.stage_document(stage))

    async def answer(request: Request, ns: Namespace | None, name: str | None) -> Response:
        fmt = _Format(False, _wants_json(request))
        try:
            params, json10 = await _parameters(request)
            fmt.json10 = json10
            if ns is None or name is None:
                url = params.get("QueueUrl")
                if not url:
                    raise MissingParameter.named("QueueUrl")
                ns, name = locate(url, config.region)
            show_invisible = params.get("ShowInvisible", "").lower() in _TRUE
            show_delayed = params.get("ShowDelayed", "").lower() in _TRUE
            return fmt.result(peek_messages(broker, ns, name, show_invisible, show_delayed))
        except SQSError as exc:  # QueueDoesNotExist, MissingParameter, InvalidAddress, InvalidRequest
            return fmt.error(exc)

    async def messages(request: Request) -> Response:
        return await answer(request, None, None)

    async def messages_at(request: Request) -> Response:
        region, account = request.path_params["region"], request.path_params["account"]
        name = request.path_params["name"]
        if not ACCOUNT_RE.match(account) or not valid_region(region):
            return _Format(False, _wants_json(request)).error(
                InvalidAddress(f"The address {request.url.path} is not valid for this endpoint.")
            )
        return await answer(request, Namespace(account, region), name)

    return [
        Route(HEALTH_PATH, health, methods=["GET"]),
        Route(INIT_PATH, init, methods=["GET"]),
        Route(INIT_PATH + "/{stage}", init_stage, methods=["GET"]),
        Route(MESSAGES_PATH, messages, methods=["GET", "POST"]),
        Route(MESSAGES_PATH + "/{region}/{account}/{name}", messages_at, methods=["GET", "POST"]),
    ]


def off_routes() -> list[BaseRoute]:
    """Without ``--compat localstack``: ``/_localstack/*`` and ``/_aws/*`` answer 404 saying which option serves
    them."""

    async def off(request: Request) -> JSONResponse:
        return JSONResponse(
            {"error": "LocalStack's endpoints are served with --compat localstack (SQSEMU_COMPAT=localstack)"},
            status_code=404,
        )

    methods = ["GET", "POST", "PUT", "DELETE"]
    return [
        Route("/_localstack/{rest:path}", off, methods=methods),
        Route("/_aws/{rest:path}", off, methods=methods),
    ]
