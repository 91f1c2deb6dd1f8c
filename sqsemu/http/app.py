"""The ASGI application: the SQS endpoint as a raw ASGI callable, plus ``/health`` and ``/_sqsemu/*`` admin routes.

The SQS path (any path except ``/health`` and ``/_sqsemu/...``; ``/`` and queue URLs ``/<account>/<queue>``) reads
the body straight from ``receive()``, takes headers from the scope, detects the protocol, decodes, runs the operation
and writes the response with precomputed headers: no framework objects on the hot path. Every response carries
``x-amzn-RequestId`` (and Query XML its ``RequestId``). Request bodies are capped (``MAX_BODY_BYTES``); any
unexpected exception becomes an InternalError (HTTP 500, fault Receiver) in the request's wire format and is logged.

Query responses are XML unless the request's ``Accept`` header contains ``application/json``: then the response
(errors included) is JSON with ``Content-Type: application/json``, in the form recorded on AWS (``query.encode_json``,
``query.encode_error_json``; rules in ``sqsemu.protocol.query``). The header is kept as bytes while reading the
headers and looked into only when present, so XML requests without it pay one dictionary lookup more. A request
that is not an SQS request (no action) is answered 404 ``<UnknownOperationException/>`` whatever its ``Accept``,
except a plain ``GET /``, answered with a few lines of text saying what the server is (``sqsemu.http.home``).
JSON 1.0 requests ignore ``Accept``.

``/health`` and the admin routes run on a small Starlette app (``sqsemu.admin.app``); so does the web console
(``sqsemu.console``, ``/_sqsemu/ui/``). A browser opening ``/`` (a GET accepting ``text/html``, without ``Action``)
is redirected there (307) unless ``--no-console`` or ``--no-admin``.

Fault injection (``sqsemu.admin.faults``): when the server has fault rules, each decoded call is offered to them
before it runs; a firing rule may add latency, answer an injected error in the request's wire format, or drop the
connection (the response is started and never finished, so the client sees the connection close). With no rules
the cost is one truth test.

Security (``sqsemu.security``): a request carrying ``Origin`` or ``Sec-Fetch-Site`` (browsers only) goes through
the cross-site rule (403 AccessDenied, or CORS headers for an allowed origin, preflights answered here); a Host
header that is not a valid ``host[:port]`` is refused (400) unless ``--base-url`` is set (valid hosts are
remembered, so the check is one set lookup); with ``--auth sigv4`` each request's signature is verified once its
body is read, and the verified key decides the account; with ``--auth iam`` the decoded call is then allowed or
denied by ``sqsemu.security.iam`` (one call in ``_dispatch``, before the call runs). With the defaults an SDK
request pays two more dictionary lookups (the request's headers are read into a dictionary once) and the host
lookup. The admin routes sit behind
``sqsemu.security.admin.AdminGate``.

Observability (``sqsemu.observability``): with ``--access-log`` every SQS call and every admin call is logged once
answered; with metrics on (the default) every SQS call is counted by action, protocol and outcome with its duration,
and ``GET /metrics`` (behind the admin gate) serves the Prometheus metrics. With both off the hot path pays one
truth test per request; the per-queue counters come from the engine's events, the gauges from the engine's state
when scraped. The server tells the app once it listens (``listening``): the app logs the start-up banner.

The ASGI lifespan calls ``broker.start()`` on startup (inside the running loop) and ``broker.close()`` on shutdown
(then closes the durable store, if any). In durable mode a request is answered only once the changes it made are
committed (``Store.durable()``); an SQS error answer does not wait (errors change nothing). Once the store has
failed, every request is answered InternalError (HTTP 500): nothing is acknowledged that is not on disk.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from sqsemu.admin.faults import injector_for
from sqsemu.admin.health import package_version
from sqsemu.clock import Clock
from sqsemu.compat.foreign import foreign_service, not_served
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.errors import InternalError, InvalidAction, InvalidParameterValue, SQSError, UnknownOperation
from sqsemu.engine.realism import Realism
from sqsemu.eventsource import LAMBDA_API_PREFIX, LAMBDA_API_PREFIXES, LAMBDA_TAGS_PREFIX
from sqsemu.http.adminapp import AdminApp
from sqsemu.http.cycle import DROP_EXTENSION, declared_length
from sqsemu.http.home import CONTENT_TYPE as HOME_CONTENT_TYPE
from sqsemu.http.home import console_queue_page, home_text
from sqsemu.observability import METRICS_PATH
from sqsemu.observability.accesslog import ACCESS_LOGGER, AccessLog, logfmt, sns_topic
from sqsemu.observability.banner import Banner, TLSNote
from sqsemu.observability.fastlane import FastLaneState
from sqsemu.observability.requeststats import UNKNOWN_ACTION
from sqsemu.persistence import Store, StoreError
from sqsemu.protocol import json as jsonproto
from sqsemu.protocol import query
from sqsemu.protocol.detect import Detected, Protocol, detect, looks_like_json
from sqsemu.protocol.errors import InjectedError, error_info
from sqsemu.protocol.operations import NOT_ON_QUEUE_URL, OPERATIONS, Context, Operation
from sqsemu.protocol.shapes import Request
from sqsemu.protocol.urls import (
    caller_namespace,
    credential_from_authorization,
    parse_queue_url,
    path_queue,
    scope_service,
    url_base,
)
from sqsemu.security.admin import AdminGate
from sqsemu.security.crosssite import CrossSitePolicy
from sqsemu.security.errors import ExpiredToken, InvalidClientTokenId, RequestExpired, SignatureDoesNotMatch
from sqsemu.security.host import GOOD_HOSTS, invalid_host, valid_host
from sqsemu.sns.api import SNS_ACTIONS, is_sns_call
from sqsemu.sns.errors import AuthorizationError as SNSAuthorizationError
from sqsemu.sns.errors import InjectedSNSError, SNSError
from sqsemu.sns.service import SNSCall
from sqsemu.sns.wire import encode_error as encode_sns_error
from sqsemu.sts.api import STS_ACTIONS, is_sts_call, presigned_service
from sqsemu.sts.api import UNSIGNED_ACTIONS as STS_UNSIGNED
from sqsemu.sts.errors import STSError
from sqsemu.sts.wire import encode_error as encode_sts_error

if TYPE_CHECKING:
    from sqsemu.engine.queue import Queue
    from sqsemu.observability.metrics import Metrics
    from sqsemu.security.iam import AccessControl
    from sqsemu.sns.fanout import AccessCheck
    from sqsemu.sns.model import Subscription, Topic
    from sqsemu.state.form import SavedState

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("sqsemu.http")
_refusals = logging.getLogger(ACCESS_LOGGER)  # signature refusals (SQSApp._refused), beside --auth iam's denials

MAX_BODY_BYTES = 8 * 1024 * 1024
"""Largest accepted request body (bytes); larger ones get InvalidParameterValue (HTTP 400)."""

_CT_JSON = jsonproto.CONTENT_TYPE
_CT_XML = query.CONTENT_TYPE
_CT_QUERY_JSON = query.JSON_CONTENT_TYPE
_REQUEST_ID = b"x-amzn-RequestId"
_QUERY_ERROR = b"x-amzn-query-error"
_CONTENT_TYPE = b"content-type"
_HOME_METHODS = ("GET", "HEAD")
"""The methods a plain ``/`` is answered for (the home text, or a browser's redirect to the console)."""
_CONTENT_LENGTH = b"content-length"


_ID_PREFIX = uuid.uuid4().hex[:20]
_ID_HEAD = f"{_ID_PREFIX[:8]}-{_ID_PREFIX[8:12]}-4{_ID_PREFIX[13:16]}-{_ID_PREFIX[16:20]}-"
_id_counter = itertools.count(1)
_ID_LOW = [f"{low:03x}" for low in range(4096)]
"""The counter's last three hex digits, written once (4,096 short strings)."""
_id_block: tuple[int, str] = (-1, "")  # the counter's block of 4,096 (its number), the id's text up to its digits


def next_request_id() -> str:
    """A unique request id in UUID form: a per-process random prefix and a counter (cheaper than uuid4). The
    prefix's four groups are written once, the counter's first nine hex digits once per 4,096 requests: a request
    adds the last three from a table (one concatenation, not a formatting)."""
    global _id_block
    number = next(_id_counter) & 0xFFFFFFFFFFFF
    current = _id_block  # one tuple, replaced whole: a thread reading it sees a block and its own text
    if current[0] != number >> 12:
        current = _id_block = (number >> 12, _ID_HEAD + "%09x" % (number >> 12))
    return current[1] + _ID_LOW[number & 0xFFF]


Answer = tuple[int, list[tuple[bytes, bytes]], bytes]
"""An SQS call's answer: HTTP status, response headers (lower-case names, bytes) and body (bytes)."""

DROP_STATUS = 0
"""The status of :data:`DROP`, which no real answer has."""

DROP: Answer = (DROP_STATUS, [], b"")
"""What :meth:`SQSApp.answer` returns when the connection is to be dropped unanswered. Recognised by its status,
not its identity: compiled (mypyc), a tuple is copied on its way out of a function."""


def is_admin_path(path: str) -> bool:
    """Whether ``path`` is served by a sub-app rather than as the SQS endpoint: the admin app (``/health``,
    ``/metrics``, ``/_sqsemu/...``, and other emulators' ``/moto-api/...``, ``/_localstack/...``, ``/_aws/...``:
    :mod:`sqsemu.compat`) or the Lambda API of event source mappings (``/2015-03-31/...``, and its tags under
    ``/2017-03-31/tags/...``)."""
    return path == "/health" or path.startswith(_SUB_APP_PREFIXES) or path == METRICS_PATH


SNS_CERT_PREFIX = "/_sqsemu/sns/SimpleNotificationService-"
"""Paths of SNS's signing certificate (sqsemu.sns.fanout.Fanout.cert_url), served without the admin gate."""

_SUB_APP_PREFIXES = ("/_sqsemu", LAMBDA_API_PREFIX, LAMBDA_TAGS_PREFIX, "/moto-api", "/_localstack", "/_aws")
"""Paths of the admin app (with other emulators' routes: sqsemu.compat) and of the Lambda API."""


def _too_large(limit: int) -> InvalidParameterValue:
    return InvalidParameterValue(f"The request body must not be larger than {limit} bytes.")


class _ClientGone(Exception):
    """The client disconnected before its request body arrived."""


class _UnknownOperationQuery(Exception):
    """A non-JSON request naming no action: answered 404 ``<UnknownOperationException/>``."""


class _DropConnection(Exception):
    """A fault rule asked for this request's connection to be dropped."""


_UNFINISHED_RESPONSE = "ASGI callable returned without completing response."
_dropping: ContextVar[bool] = ContextVar("sqsemu_dropping", default=False)


class _DropLogFilter(logging.Filter):
    """Silences the server's complaint about an unfinished response when a fault rule left it unfinished on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_dropping.get() and record.msg == _UNFINISHED_RESPONSE)


def _quiet_drops() -> None:
    server_logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DropLogFilter) for f in server_logger.filters):
        server_logger.addFilter(_DropLogFilter())


def _text(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("latin-1")


class _Call:
    """One SQS call on its way through :meth:`SQSApp.answer`: what its request head said, what it turned out to
    be, and how it ended; the access line's queue (``account/name``) and counts (messages returned, batch entries
    that succeeded and failed)."""

    __slots__ = (
        "scope",
        "headers",
        "started",
        "target",
        "content_type",
        "authorization",
        "host",
        "trace",
        "accept",
        "request_id",
        "is_json",
        "query_json",
        "action",
        "namespace",
        "access_key_id",
        "status",
        "query_error",
        "error_code",
        "cors",
        "queue",
        "messages",
        "failed",
        "sns",
        "topic",
        "sts",
    )

    def __init__(self, scope: Scope, headers: dict[bytes, bytes], observed: bool) -> None:
        self.scope = scope
        self.headers = headers
        self.started = perf_counter() if observed else 0.0
        self.target = _text(headers.get(b"x-amz-target"))
        self.content_type = _text(headers.get(b"content-type"))
        self.authorization = _text(headers.get(b"authorization"))
        self.host = _text(headers.get(b"host"))
        self.trace = _text(headers.get(b"x-amzn-trace-id"))
        self.accept = headers.get(b"accept")  # compiled: a dict lookup each, no call
        self.request_id = next_request_id()
        self.is_json = looks_like_json(self.target, self.content_type)
        self.query_json = self.accept is not None and not self.is_json and query.wants_json(self.accept)
        self.action: str | None = None
        self.namespace: Namespace | None = None  # the caller's, when a verified signature decided it
        self.access_key_id: str | None = None  # the key that signed it (--auth sigv4, iam)
        self.status = 200
        self.query_error: bytes | None = None
        self.error_code: str | None = None
        self.cors: list[tuple[bytes, bytes]] | None = None
        self.queue: str | None = None
        self.messages: int | None = None
        self.failed: int | None = None
        self.sns = False  # an SNS call (sqsemu.sns): counted and logged as one
        self.topic: str | None = None  # the topic ARN it addresses (the access line's, with --access-log)
        self.sts = False  # an STS call (sqsemu.sts): answered in STS's form

    def url_host(self) -> str | None:
        """The host of queue URLs: the Host header; when it names no port but names the very address the
        connection was accepted on (or ``localhost`` for a loopback one), with that connection's port: a client
        that sends ``Host: 127.0.0.1`` to port 9324 gets URLs on port 9324. A name (a service's, a proxy's, a port
        mapping's: ``Host: sqs`` reaching port 9324 through a port-80 mapping) keeps its default port, as does a
        request a trusted proxy carried (``--forwarded-allow-ips``) or one to the scheme's default port."""
        host = self.host
        server = self.scope.get("server")
        if host is None:  # HTTP/1.0 without Host: the address the connection was accepted on
            if not server or server[1] is None:
                return None
            return f"[{server[0]}]:{server[1]}" if ":" in server[0] else f"{server[0]}:{server[1]}"
        if ":" in host and not host.endswith("]"):
            return host
        if not server or server[1] is None or server[1] == _DEFAULT_PORTS.get(self.scope.get("scheme", "http")):
            return host
        if not _names_address(host, server[0]):
            return host
        if self.scope.get("proxied"):  # a trusted proxy carried it (sqsemu.security.forwarded)
            return host
        return f"{host}:{server[1]}"


def _names_address(host: str, address: str) -> bool:
    """Whether a port-less Host header ``host`` names the local ``address`` a connection was accepted on."""
    bare = host[1:-1] if host.startswith("[") else host
    if bare == address:
        return True
    return bare.lower() == "localhost" and (address.startswith("127.") or address == "::1")


_DEFAULT_PORTS = {"http": 80, "https": 443}
_PUBLISH_ACTIONS = frozenset({"Publish", "PublishBatch"})


def _delivery_access(clock: Clock) -> AccessCheck:
    """SNS's ``Fanout.access``: why the queue's ``Policy`` refuses a topic's delivery (the statement to add), None
    when it allows it (:func:`sqsemu.security.topics.delivery_refusal`, imported at the first delivery)."""

    def now() -> float:
        return clock.now_ms() / 1000

    def access(queue: Queue, topic: Topic, sub: Subscription) -> str | None:
        from sqsemu.security.topics import delivery_refusal

        policy = queue.attributes.get("Policy")
        return delivery_refusal(queue.arn, policy, queue.tags, topic.arn, topic.account, now)

    return access


def _addressed(request: object, queue_path: tuple[str, str] | None, caller: Namespace) -> tuple[str, str] | None:
    """``(account id, queue name)`` of the queue a call addresses (its QueueUrl, the request path's queue, or the
    QueueName of CreateQueue and GetQueueUrl, in the caller's or the named owner's account); None when it
    addresses none (ListQueues). The region is the caller's (docs/behaviour.md 7.1)."""
    url = getattr(request, "queue_url", None)
    if url:
        account, name = parse_queue_url(url)
        return account or caller.account_id, name
    if queue_path is not None:
        return queue_path
    queue_name = getattr(request, "queue_name", None)
    if queue_name:
        owner = getattr(request, "queue_owner_aws_account_id", None)
        return owner or caller.account_id, queue_name
    return None


def _count_messages(call: _Call, action: str, result: dict[str, Any]) -> None:
    """Messages a ReceiveMessage returned; entries of a batch that succeeded and failed."""
    if action == "ReceiveMessage":
        call.messages = len(result.get("Messages") or ())
    elif action.endswith("Batch"):
        call.messages = len(result.get("Successful") or ())
        call.failed = len(result.get("Failed") or ())


class SQSApp:
    """The ASGI application returned by ``create_app``."""

    def __init__(
        self,
        config: Config,
        broker: Broker,
        clock: Clock,
        max_body_bytes: int = MAX_BODY_BYTES,
        store: Store | None = None,
        restored_queues: int = 0,
        initial_state: SavedState | None = None,
    ) -> None:
        self.config = config
        self.broker = broker
        self.clock = clock
        self.store = store
        self.max_body_bytes = max_body_bytes
        self.faults = injector_for(broker)
        if config.faults:
            self.faults.load_file(config.faults)
        self.cross_site = CrossSitePolicy(config)
        self.check_host = not config.base_url
        self.verifier = None
        if config.auth != "none":
            from sqsemu.security.sigv4 import SigV4Verifier

            self.verifier = SigV4Verifier(config)
        self.restored_queues = restored_queues
        self.version = package_version()
        self.access = AccessLog() if config.access_log else None
        self.lane = FastLaneState()
        self.metrics: Metrics | None = None
        if config.metrics:
            from sqsemu.observability.metrics import Metrics

            self.metrics = Metrics(config, broker, store, self.version, self.lane)
        self.observed = self.access is not None or self.metrics is not None
        admin_app = AdminApp(config, broker, clock, self.metrics, self.lane)
        self.admin = AdminGate(config, admin_app, self.cross_site)
        admin_app.console_session = self.admin.console  # one set of sessions: the gate checks, the console opens/ends
        self.access_control: AccessControl | None = None
        if config.auth == "iam":  # sqsemu.security.iam: policies enforced on each call, POST /_sqsemu/authorize
            from sqsemu.security.iam import AccessControl

            self.access_control = AccessControl(config, broker, clock)
            admin_app.more_routes += self.access_control.routes()
            admin_app.authorize = self.access_control.authorize
            if self.metrics is not None:
                self.metrics.collectors.append(self.access_control.collector())
        self.console_home = config.console and config.admin
        self.foreign_calls = config.compat == "localstack"
        from sqsemu.eventsource.registry import EventSources  # the Lambda API and event source mappings

        self.event_sources = EventSources(config, broker, clock, store)
        self.event_sources.access = self.access_control  # --auth iam: mappings act as their functions' roles
        from sqsemu.sns.api import SNS  # SNS topics on the same port (docs/sns.md)
        from sqsemu.sns.layer import attach as attach_sns

        data = Path(config.data_dir) if config.data_dir else None
        self.sns = SNS(broker, clock, data, self.event_sources.functions)  # lambda subscriptions: the same functions
        # SNS delivers into a queue only where the queue's policy lets the topic send (sqsemu.security.topics):
        # refused under --auth iam (dead-letter queue or dropped), else delivered with one warning per subscription
        self.sns.fanout.access = _delivery_access(clock)
        self.sns.fanout.refuse_denied = config.auth == "iam"
        admin_app.sns = self.sns  # the /_sqsemu/sns/* routes and the console's topics (docs/sns.md)
        admin_app.store = store  # POST /_sqsemu/state records the loaded state in it (docs/state.md)
        attach_sns(self.sns, store)  # found from the broker (reset, admin); durable mode: restored and journaled
        if initial_state is not None:  # --load-state: the file's state replaces the restored one (docs/state.md)
            from sqsemu.declare import apply_declarations
            from sqsemu.state.load import replace_state

            replace_state(broker, self.sns, self.event_sources, store, initial_state)
            apply_declarations(broker, config)  # the [[queues]], on top of the loaded state
        if config.topics:  # the configuration file's [[topics]], after its queues (sqsemu.declare)
            from sqsemu.declare import apply_topic_declarations

            apply_topic_declarations(self.sns.topics, broker, config)
        from sqsemu.sts.api import STS  # STS on the same port (docs/security.md, STS)

        self.sts = STS(config, clock, self.access_control)
        if self.verifier is not None:  # temporary credentials: accepted by SigV4, decided as their role or user
            self.verifier.sessions = self.sts.sessions
        if self.access_control is not None:
            self.access_control.sessions = self.sts.sessions
        self._lambda_api: ASGIApp | None = None
        if self.metrics is not None:
            from sqsemu.eventsource.metrics import EventSourceCollector

            self.metrics.collectors.append(EventSourceCollector(self.event_sources))
            from sqsemu.observability.topicfamilies import TopicFamilyWriter

            self.metrics.topic_writer = TopicFamilyWriter(self.sns)

    def listening(self, port: int, connections: Callable[[], int] | None = None, tls: TLSNote | None = None) -> None:
        """The server listens on ``port``: log the start-up banner (``tls``: its HTTPS lines); ``connections`` gives
        the number of open connections (for the metrics)."""
        if self.metrics is not None:
            self.metrics.connections = connections
        data_dir = None
        if self.store is not None:
            from pathlib import Path

            data_dir = str(Path(self.config.data_dir).resolve())
        Banner.of(self.config, self.version, port, self.restored_queues, data_dir, tls=tls).log()
        if self.config.compat == "localstack":  # ready.d init scripts, then the "Ready." line (sqsemu.compat)
            from sqsemu.compat.initscripts import start_ready_stage

            start_ready_stage(self.config, self.broker, port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The routing: ``/health``, ``/metrics`` and ``/_sqsemu/*`` to the admin app, every other path to the SQS
        endpoint; the ASGI lifespan starts and closes the broker."""
        kind = scope["type"]
        if kind == "http":
            if is_admin_path(scope["path"]):
                if scope["path"].startswith(SNS_CERT_PREFIX):  # public, as AWS's: no admin token, with --no-admin too
                    await self._sns_certificate(scope, send)
                    return
                await self._admin(scope, receive, send)
            else:
                await self._sqs(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    def _lambda(self, path: str) -> ASGIApp | None:
        """The Lambda API app (made at its first request) for a path under ``/2015-03-31/`` or ``/2017-03-31/tags/``,
        else None."""
        if not path.startswith(LAMBDA_API_PREFIXES):
            return None
        if self._lambda_api is None:
            from sqsemu.eventsource.api import LambdaAPI

            self._lambda_api = LambdaAPI(self.event_sources, self.cross_site, self.verifier, self.access_control)
        return self._lambda_api

    async def _sns_certificate(self, scope: Scope, send: Send) -> None:
        """``GET /_sqsemu/sns/SimpleNotificationService-<hash>.pem``: the certificate SNS messages are signed with
        (their SigningCertURL); 404 for another name, 405 for a method other than GET or HEAD."""
        name = scope["path"].removeprefix("/_sqsemu/sns/")
        status, content_type, body = 405, b"application/json", b'{"error": "only GET and HEAD"}'
        if scope["method"] in ("GET", "HEAD"):
            pem = self.sns.certificate(name)
            status, content_type, body = 404, b"application/json", b'{"error": "no such certificate"}'
            if pem is not None:
                status, content_type, body = 200, b"application/x-x509-ca-cert", pem
        headers = [(_CONTENT_TYPE, content_type), (_CONTENT_LENGTH, str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})

    async def _admin(self, scope: Scope, receive: Receive, send: Send) -> None:
        """An admin request, or a Lambda API request (under ``/2015-03-31/``): answered by the admin app (or the
        Lambda API) once its changes are committed (durable mode), its access line logged (``--access-log``)."""
        path: str = scope["path"]
        started = perf_counter()
        status: list[int] = []
        if self.access is not None:
            send = self._status_of(send, status)
        if self.store is not None and path != METRICS_PATH:
            send = self._after_commit(send)
        try:
            await (self._lambda(path) or self.admin)(scope, receive, send)
        finally:
            if self.access is not None:
                self.access.admin(scope["method"], path, status[0] if status else 0, perf_counter() - started)

    @staticmethod
    def _status_of(send: Send, status: list[int]) -> Send:
        """``send`` noting the response's status in ``status`` (for the admin access line)."""

        async def send_noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        return send_noting

    def _after_commit(self, send: Send) -> Send:
        """``send`` holding back an admin answer until the changes made so far are committed (durable mode). Once
        the store has failed, the answer is replaced by ``{"error": why}`` with HTTP 500."""
        store = self.store
        assert store is not None
        failed = False

        async def send_committed(message: Message) -> None:
            nonlocal failed
            if message["type"] == "http.response.start":
                try:
                    await store.durable()
                except StoreError as exc:
                    failed = True
                    body = json.dumps({"error": str(exc)}).encode()
                    headers = [(_CONTENT_TYPE, b"application/json"), (_CONTENT_LENGTH, str(len(body)).encode())]
                    await send({"type": "http.response.start", "status": 500, "headers": headers})
                    await send({"type": "http.response.body", "body": body})
                    return
            elif failed:
                return  # the body of the answer replaced above
            await send(message)

        return send_committed

    # ------------------------------------------------------------------------------------------------ lifespan

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    self.broker.start()
                    self.event_sources.start()
                    self.sns.start()
                except Exception as exc:
                    logger.exception("broker failed to start")
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    self.event_sources.close()
                    await self.sns.aclose()  # HTTP/S and Lambda deliveries (never raises)
                    self.broker.close()
                    if self.store is not None:
                        self.store.close()
                except StoreError:
                    pass  # the last commit failed: the store logged why in one line (and the server exits 3)
                except Exception as exc:
                    logger.exception("broker failed to close")
                    await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ------------------------------------------------------------------------------------------------ SQS path

    def _declared_over_cap(self, content_length: bytes | None) -> bool:
        """Whether a ``Content-Length`` value declares more than the body cap (read by ``declared_length``)."""
        declared = declared_length(content_length)
        return declared is not None and declared > self.max_body_bytes

    async def _read_body(self, receive: Receive, content_length: bytes | None) -> bytes:
        limit = self.max_body_bytes
        if self._declared_over_cap(content_length):
            raise _too_large(limit)
        message = await receive()
        if message["type"] != "http.request":
            raise _ClientGone
        body: bytes = message.get("body", b"")
        if not message.get("more_body", False):
            if len(body) > limit:
                raise _too_large(limit)
            return body
        chunks = [body]
        size = len(body)
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _ClientGone
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _sqs(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The SQS endpoint over ASGI: :meth:`answer` with the body read from ``receive()`` (a long poll watches
        ``receive()`` for the client leaving)."""
        request_headers: dict[bytes, bytes] = dict(scope["headers"])  # one C loop; a repeated header: its last value
        header = request_headers.get
        watchers: list[asyncio.Task[None]] = []
        disconnected: list[asyncio.Future[None]] = []

        def watch_disconnect() -> asyncio.Future[None]:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()

            async def watch() -> None:
                try:
                    while True:
                        message = await receive()
                        if message["type"] == "http.disconnect":
                            break
                except Exception:  # the server could not read the connection: the client is treated as gone
                    logger.exception("reading the connection failed during a long poll; treated as a disconnect")
                if not future.done():
                    future.set_result(None)

            watchers.append(loop.create_task(watch()))  # supervised
            disconnected.append(future)
            return future

        try:
            answer = await self.answer(
                scope, request_headers, lambda: self._read_body(receive, header(b"content-length")), watch_disconnect
            )
        finally:
            for task in watchers:
                task.cancel()
        if answer is None:
            return
        if answer[0] == DROP_STATUS:
            await self._drop(scope, send)
            return
        status, headers, payload = answer
        if self._declared_over_cap(header(b"content-length")):
            headers = [*headers, (b"connection", b"close")]  # its body is not read: closed after, as on the fast lane
        try:
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
        except OSError:
            if not any(f.done() for f in disconnected):
                raise

    async def answer(
        self,
        scope: Scope,
        headers: dict[bytes, bytes],
        read_body: Callable[[], Awaitable[bytes]] | None,
        watch_disconnect: Callable[[], asyncio.Future[None]],
        body: bytes = b"",
    ) -> Answer | None:
        """One SQS call, from its request head to its answer: ``(status, headers, body)``, :data:`DROP` when the
        connection is to be dropped unanswered (a fault rule, realism's lost answers), or None when the client left
        before its body arrived.

        ``scope`` gives the method, path, query string, scheme and server address (ASGI keys); ``headers`` maps
        the request headers' lower-case names to their values (bytes; a repeated header's last value);
        ``read_body`` returns the whole body (bytes; raises ``InvalidParameterValue`` beyond
        :data:`MAX_BODY_BYTES`), or is None when the caller has read the body whole already and gives it as
        ``body`` (checked against the same cap); ``watch_disconnect``, called only when a long poll has to wait,
        returns a future completed when the client disconnects. A browser's request goes through the cross-site
        rule first (a preflight is answered here, and a browser opening ``/`` is sent to the console; neither is
        counted). The call is counted and logged (metrics, ``--access-log``) before this returns. Used by the ASGI
        path (:meth:`_sqs`); sqsemu's own HTTP protocol (``sqsemu.http.sqsprotocol``), which has the body whole,
        calls :meth:`begin`.
        """
        if read_body is None:
            started = self.begin(scope, headers, body, watch_disconnect)
            return started if isinstance(started, tuple) else await started
        call = _Call(scope, headers, self.observed)
        try:
            early = self._screen(call)
            if early is not None:
                return early
            body = await read_body()
        except _ClientGone:
            return None
        except Exception as exc:  # every failure is answered, in the request's wire format
            return self._respond(call, self._failed(call, exc))
        started = self._start(call, body, watch_disconnect)
        return started if isinstance(started, tuple) else await started

    def begin(
        self,
        scope: Scope,
        headers: dict[bytes, bytes],
        body: bytes,
        watch_disconnect: Callable[[], asyncio.Future[None]],
        too_large: bool = False,
    ) -> Answer | Coroutine[Any, Any, Answer | None]:
        """:meth:`answer` for a caller that has read the body whole (``body``; ``too_large``: it was over the cap
        and dropped, answered with the cap's error): the answer itself when the call needs no wait (most calls in
        memory: no coroutine is made for them), else a coroutine that the caller runs to get it (a long poll, an
        SNS or STS call, a fault rule's latency, durable mode's commit)."""
        call = _Call(scope, headers, self.observed)
        try:
            early = self._screen(call)
            if early is not None:
                return early
            if too_large or len(body) > self.max_body_bytes:
                raise _too_large(self.max_body_bytes)
        except Exception as exc:  # every failure is answered, in the request's wire format
            return self._respond(call, self._failed(call, exc))
        return self._start(call, body, watch_disconnect)

    def _start(
        self, call: _Call, body: bytes, watch_disconnect: Callable[[], asyncio.Future[None]]
    ) -> Answer | Coroutine[Any, Any, Answer | None]:
        """Run a screened call with its body: its answer, or the coroutine that finishes it (:meth:`_finish`)."""
        try:
            payload = self._run(call, body, watch_disconnect)
            if not isinstance(payload, bytes) or self.store is not None:
                return self._finish(call, payload)
        except Exception as exc:  # every failure is answered, in the request's wire format
            payload = self._failed(call, exc)
        return self._respond(call, payload)

    async def _finish(self, call: _Call, pending: bytes | Coroutine[Any, Any, bytes]) -> Answer | None:
        """The rest of a call that waits: its encoded answer (``pending``: a coroutine to run, or the payload
        itself), then, in durable mode, the commit of its changes (nothing is acknowledged that is not on disk)."""
        try:
            payload = pending if isinstance(pending, bytes) else await pending
            store = self.store
            if store is not None:  # durable mode: answered once its changes are on disk (self._committed() inlined)
                waiter = store.commit_waiter()
                if waiter is not None:
                    await waiter
        except _ClientGone:
            return None
        except _DropConnection:
            self._observe(call, 0, "ConnectionDropped")
            return DROP
        except Exception as exc:  # every failure is answered, in the request's wire format
            payload = self._failed(call, exc)
        return self._respond(call, payload)

    def _screen(self, call: _Call) -> Answer | None:
        """What is decided from the request head alone: the cross-site rule (a preflight is answered here), the
        Host check (raises the SQS error of an invalid Host), a browser sent to the console, a plain ``GET /`` told
        what this server is (``sqsemu.http.home``); None to go on."""
        scope = call.scope
        origin = call.headers.get(b"origin")
        fetch_site = call.headers.get(b"sec-fetch-site")
        if origin is not None or fetch_site is not None:
            call.cors = self.cross_site.decide(origin, fetch_site, scope.get("scheme", "http"), call.host)
            if call.cors and scope["method"] == "OPTIONS":
                preflight = self.cross_site.preflight(scope["headers"], call.cors)
                if preflight is not None:
                    return 200, preflight, b""
        host = call.host
        if host is not None and self.check_host and host not in GOOD_HOSTS and not valid_host(host):
            raise invalid_host(host)
        if self.foreign_calls and call.authorization is not None:  # --compat localstack: another service's call
            service = foreign_service(call.authorization)
            if service is not None:
                raise not_served(service)
        accept = call.accept
        method = scope["method"]
        if accept is not None and self.console_home and method in _HOME_METHODS and _browser_home(scope, accept):
            return 307, _CONSOLE_REDIRECT, b""
        if accept is not None and self.console_home and method in _HOME_METHODS and _browser_get(call, accept):
            page = console_queue_page(scope["path"], self.config, self.broker)  # a queue URL opened in a browser
            if page is not None:
                return 307, [(b"location", page), (_CONTENT_LENGTH, b"0")], b""
        if method in _HOME_METHODS and scope["path"] == "/" and not scope["query_string"] and call.target is None:
            return self._home(scope, host)
        return None

    def _run(
        self, call: _Call, body: bytes, watch_disconnect: Callable[[], asyncio.Future[None]]
    ) -> bytes | Coroutine[Any, Any, bytes]:
        """Verify the signature (``--auth sigv4``), recognise the protocol and the action, run the call: its
        encoded answer, or the coroutine that runs a call that may wait (:meth:`_dispatch`)."""
        authorization = call.authorization
        credential = credential_from_authorization(authorization) if authorization else None
        service = scope_service(credential)
        if service is None and authorization is None:
            service = presigned_service(call.scope["query_string"])
        call.sns = service == "sns"
        call.sts = service == "sts"
        if self.verifier is not None and not self._anonymous_sns(call, body) and not self._unsigned_sts(call, body):
            try:
                call.namespace, call.access_key_id = self.verifier.verify_key(
                    call.scope, body, service if service in ("sns", "sts") else "sqs"
                )
            except (InvalidClientTokenId, SignatureDoesNotMatch, RequestExpired, ExpiredToken) as exc:
                self._refused(call, body, exc)
                raise
        detected = detect(call.scope["method"], call.target, call.content_type, call.scope["query_string"], body)
        call.is_json = detected.protocol is Protocol.JSON
        call.action = detected.action
        if service != "sqs":  # signed for SQS (nearly every call): neither STS's nor SNS's
            if call.sts or (service is None and is_sts_call(None, detected.action)):
                call.is_json = call.query_json = False
                call.sts = True
                return self._sts(call, detected)
            if is_sns_call(service, detected.action, detected.params):
                call.is_json = call.query_json = False
                call.sns = True
                return self._sns(call, detected)
        return self._dispatch(call, detected, body, watch_disconnect, credential)

    def _anonymous_sns(self, call: _Call, body: bytes) -> bool:
        """Whether an unsigned request is one SNS answers without a signature: a ConfirmSubscription (the token
        proves the endpoint: a SubscribeURL opened as it is), or an Unsubscribe of a subscription confirmed without
        AuthenticateOnUnsubscribe (an UnsubscribeURL) (SNS API Reference, "ConfirmSubscription", "Unsubscribe")."""
        if call.authorization is not None or b"X-Amz-Credential" in call.scope["query_string"]:
            return False
        detected = detect(call.scope["method"], call.target, call.content_type, call.scope["query_string"], body)
        if detected.protocol is not Protocol.QUERY or any(name == "X-Amz-Credential" for name, _ in detected.params):
            return False
        return self.sns.anonymous(detected.action, detected.params) is not None

    def _unsigned_sts(self, call: _Call, body: bytes) -> bool:
        """Whether an unsigned request is one of the STS actions AWS answers unsigned (web identity, SAML: STS
        answers that sqsemu does not serve them, whatever ``--auth`` says; ``sqsemu.sts.api``)."""
        if call.authorization is not None or b"X-Amz-Credential" in call.scope["query_string"]:
            return False
        detected = detect(call.scope["method"], call.target, call.content_type, call.scope["query_string"], body)
        return detected.protocol is Protocol.QUERY and detected.action in STS_UNSIGNED

    async def _sts(self, call: _Call, detected: Detected) -> bytes:
        """An STS call (sqsemu.sts.api): fault rules as for any call, answered in STS's XML. Its access decision
        is STS's own (AssumeRole's trust policy; GetCallerIdentity needs no permission)."""
        authorization = call.authorization
        credential = credential_from_authorization(authorization) if authorization else None
        if credential is None:
            credential = _presigned_credential(detected.params)
        caller = call.namespace or caller_namespace(credential, self.config)
        key = call.access_key_id or (credential.split("/", 1)[0] if credential else "")
        if self.faults.rules and detected.action is not None:
            await self._inject(detected.action, None)
        return self.sts.answer(
            detected.action, detected.params, caller.account_id, caller.region, key, call.scope, call.request_id
        )

    async def _sns(self, call: _Call, detected: Detected) -> bytes:
        """An SNS call (sqsemu.sns.api): the same checks as an SQS call (access control, fault rules), answered in
        SNS's XML."""
        authorization = call.authorization
        credential = credential_from_authorization(authorization) if authorization else None
        if credential is None:
            credential = _presigned_credential(detected.params)
        caller = call.namespace or caller_namespace(credential, self.config)
        action = detected.action
        anonymous = self.sns.anonymous(action, detected.params) if credential is None else None
        if anonymous is not None:  # a SubscribeURL or UnsubscribeURL: the topic's own namespace
            caller = Namespace(anonymous[1], anonymous[0])
        if self.access is not None:
            call.topic = sns_topic(action, detected.params, caller.account_id, caller.region)
        principal = f"arn:aws:iam::{caller.account_id}:root"
        if self.access_control is not None and anonymous is None:  # --auth iam: SNS's actions, the same evaluator
            principal = self._sns_authorized(call, action, detected.params, caller)
        if self.faults.rules and action is not None:
            try:
                await self._inject(action, None)
            except InjectedError as exc:  # answered as SNS writes errors
                raise InjectedSNSError(exc.info.query_code, exc.info.status, exc.info.fault, exc.message) from None
        base = url_base(self.config, call.scope.get("scheme", "http"), call.url_host())
        sns_call = SNSCall(caller.account_id, caller.region, principal, base, call.trace)
        answer = self.sns.answer(action, sns_call, detected.params, call.request_id)
        if self.store is not None and action in _PUBLISH_ACTIONS:
            # Durable mode: delivery into the queues runs on the loop's next turn (sqsemu.sns.fanout); let it run
            # first, so the commit this answer waits for holds the delivered messages (nothing is acknowledged
            # that is not on disk, docs/architecture.md principle 11).
            await asyncio.sleep(0)
        return answer

    def _sns_authorized(
        self, call: _Call, action: str | None, params: Sequence[tuple[str, str]], caller: Namespace
    ) -> str:
        """``--auth iam``: allow the SNS call or raise SNS's ``AuthorizationError`` (403, AWS's message), decided by
        the caller's identity-based policies and the topic's Policy (``sqsemu.security.topics``); the caller's
        principal ARN (a subscription's SubscriptionPrincipal)."""
        from sqsemu.security.topics import sns_denial_message, sns_needs, sns_request_keys
        from sqsemu.sns.model import default_topic_policy

        access = self.access_control
        assert access is not None
        identity = access.identity(call.access_key_id)
        if identity is None:
            return f"arn:aws:iam::{caller.account_id}:root"
        needs = sns_needs(action, params, caller.region, caller.account_id)
        if needs is None:  # not served, or names no resource: the call's own error answers it
            return identity.principal.arn
        topics = self.sns.topics
        topic = topics.by_arn.get(needs.topic_arn) if needs.topic_arn is not None else None
        policy = None
        if topic is not None:  # its Policy, or the default one SNS gives it (sqsemu.sns.model)
            policy = topic.attributes.get("Policy") or default_topic_policy(topic.arn, topic.account)
        sub = topics.subscriptions.get(needs.subscription_arn) if needs.subscription_arn is not None else None
        decision = access.check_sns(
            call.access_key_id, needs, caller, policy, topic.tags if topic is not None else None,
            sub.owner if sub is not None else None, sns_request_keys(action, params), call.scope, call.request_id,
        )  # fmt: skip
        if decision is not None:
            raise SNSAuthorizationError(sns_denial_message(decision))
        return identity.principal.arn

    def _refused(
        self,
        call: _Call,
        body: bytes,
        exc: InvalidClientTokenId | SignatureDoesNotMatch | RequestExpired | ExpiredToken,
    ) -> None:
        """Log a signature refusal (``sqsemu.access``, INFO, with or without ``--access-log``): the error, the key
        id offered and the action the request names (its ``X-Amz-Target`` or ``Action``, ``-`` when none can be
        read), which the call's access line then names too."""
        try:
            call.action = detect(
                call.scope["method"], call.target, call.content_type, call.scope["query_string"], body
            ).action
        except Exception:  # noqa: BLE001 - a request too broken to name an action: it is refused all the same
            call.action = None
        if _refusals.isEnabledFor(logging.INFO):
            fields = {
                "refused": exc.shape,
                "access_key_id": exc.access_key_id,
                "action": call.action or "-",
                "protocol": "json" if call.is_json else "query",
                "request_id": call.request_id,
            }
            _refusals.info(logfmt(fields))

    async def _committed(self) -> None:
        """Durable mode: wait until the changes made so far are on disk (raises ``StoreError`` once the store
        failed)."""
        if self.store is not None:
            await self.store.durable()

    def _failed(self, call: _Call, exc: Exception) -> bytes:
        """The error answer's body for ``exc`` (its status, code and ``x-amzn-query-error`` noted on ``call``): an
        SQS error as itself, a non-SQS request without an action 404, a failed durable store or anything
        unexpected (logged) ``InternalError``."""
        if isinstance(exc, _UnknownOperationQuery):
            call.status, call.query_json, call.error_code = 404, False, "UnknownOperationException"
            return query.UNKNOWN_OPERATION_BODY
        if call.sts:  # an STS call's every error in STS's own form
            sts_error = exc if isinstance(exc, STSError) else self._as_sts_error(call, exc)
            call.status, payload = encode_sts_error(sts_error, call.request_id)
            call.error_code = sts_error.code
            return payload
        if call.sns and not isinstance(exc, SNSError):  # an SNS call's every error in SNS's own form
            exc = self._as_sns_error(call, exc)
        if isinstance(exc, SNSError):
            call.status, payload = encode_sns_error(exc, call.request_id)
            call.error_code = exc.code
            return payload
        if isinstance(exc, SQSError):
            error = exc
        else:
            if not isinstance(exc, StoreError):  # the store logged why, once; its changes are not on disk
                logger.exception(
                    "internal error handling %s (request id %s)", call.action or "request", call.request_id
                )
            error = InternalError("We encountered an internal error. Please try again.")
        call.status, call.query_error, payload = self._render_error(
            error, call.is_json, call.query_json, call.request_id
        )
        call.error_code = error.shape
        return payload

    @staticmethod
    def _as_sns_error(call: _Call, exc: Exception) -> SNSError:
        """An error of an SNS call raised outside SNS's handlers (a refused signature, a failed durable store,
        anything unexpected: logged) as SNS writes it: the same code, status and fault."""
        if isinstance(exc, SQSError):
            info = error_info(exc)
            return InjectedSNSError(info.query_code, info.status, info.fault, exc.message)
        if not isinstance(exc, StoreError):  # the store logged why, once; its changes are not on disk
            logger.exception("internal error handling %s (request id %s)", call.action or "request", call.request_id)
        return InjectedSNSError("InternalError", 500, "Receiver", "We encountered an internal error. Please try again.")

    @staticmethod
    def _as_sts_error(call: _Call, exc: Exception) -> STSError:
        """An error of an STS call raised outside STS's handlers (a refused signature, an injected fault, anything
        unexpected: logged) as STS writes it: the same code, status and message."""
        if isinstance(exc, SQSError):
            info = error_info(exc)
            return STSError(exc.message, info.query_code, info.status)
        if not isinstance(exc, StoreError):
            logger.exception("internal error handling %s (request id %s)", call.action or "request", call.request_id)
        return STSError("We encountered an internal error. Please try again.", "InternalError", 500)

    def _respond(self, call: _Call, payload: bytes) -> Answer:
        """The answer's status, headers (content type, request id, length, the Query error code, CORS) and body;
        the call is counted and logged."""
        content_type = _CT_JSON if call.is_json else _CT_QUERY_JSON if call.query_json else _CT_XML
        headers = [
            (_CONTENT_TYPE, content_type),
            (_REQUEST_ID, call.request_id.encode()),
            (_CONTENT_LENGTH, str(len(payload)).encode()),
        ]
        if call.query_error is not None:
            headers.append((_QUERY_ERROR, call.query_error))
        if call.cors:
            headers.extend(call.cors)
        self._observe(call, call.status, call.error_code)
        return call.status, headers, payload

    def _observe(self, call: _Call, status: int, error_code: str | None) -> None:
        """Count the answered call (metrics) and log its access line (``--access-log``)."""
        if not self.observed:
            return
        seconds = perf_counter() - call.started
        protocol = "json" if call.is_json else "query"
        action = call.action
        metrics = self.metrics
        if call.sts:  # sqsemu.sts: its own action labels (service="sts") and access line
            if metrics is not None:
                label = action if action in STS_ACTIONS else UNKNOWN_ACTION
                metrics.sts_requests.record(label, "query", error_code or "ok", seconds)
            if self.access is not None:
                self.access.sts(action, status, error_code, seconds, call.request_id)
            return
        if call.sns:  # sqsemu.sns: its own action labels (service="sns") and access line
            if metrics is not None:
                label = action if action in SNS_ACTIONS else UNKNOWN_ACTION
                metrics.sns_requests.record(label, "query", error_code or "ok", seconds)
            if self.access is not None:
                self.access.sns(action, call.topic, status, error_code, seconds, call.request_id)
            return
        if metrics is not None:
            label = action if action in OPERATIONS else UNKNOWN_ACTION
            metrics.requests.record(label, protocol, error_code or "ok", seconds)
        if self.access is not None:
            self.access.sqs(
                action, call.queue, protocol, status, error_code, call.messages, call.failed, seconds, call.request_id
            )

    @staticmethod
    async def _drop(scope: Scope, send: Send) -> None:
        """Close the connection without answering: the client sees it closed before any status line.

        sqsemu's own protocol offers the ``sqsemu.drop`` extension (``sqsemu.http.cycle``): the message goes
        through whatever wraps ``send`` (uvicorn's message logger under ``--log-level trace``) and the connection
        closes. Under uvicorn's own protocols (the h11 fallback), ``send`` is a method of uvicorn's per-request
        cycle, which holds the connection's transport; closing that transport and letting the loop run
        ``connection_lost`` marks the request as disconnected, so the server neither answers nor logs. Under
        another ASGI server, start a response and never finish it (the server then closes the connection
        mid-response)."""
        extensions = scope.get("extensions")
        if extensions is not None and DROP_EXTENSION in extensions:
            await send({"type": DROP_EXTENSION})
            return
        transport = _cycle_transport(send)
        close = getattr(transport, "close", None)  # uvloop's transports are not asyncio.BaseTransport subclasses
        if callable(close):
            close()
            for _ in range(3):
                await asyncio.sleep(0)
            return
        _quiet_drops()
        _dropping.set(True)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [(_CONTENT_LENGTH, b"1")]})
        except OSError:
            pass

    async def _inject(self, action: str, queue: tuple[str, str] | None) -> None:
        """Offer the call on ``queue`` (``(account, name)``, None for none) to the fault rules: sleep, raise an
        injected error or ``_DropConnection``, or return."""
        outcome = self.faults.decide(action, queue[1] if queue is not None else None)
        if outcome is None:
            return
        logger.debug("fault rule(s) %s fired on %s", ", ".join(outcome.rule_ids), action)
        if outcome.latency_s > 0:
            await asyncio.sleep(outcome.latency_s)
        if outcome.error is not None:
            raise outcome.error.exception()
        if outcome.drop:
            raise _DropConnection

    async def _lose_answer(self, realism: Realism, action: str, queue: Namespace, name: str) -> None:
        """Realism ``lost_answers`` (docs/realism.md): the call on queue ``name`` of ``queue`` (the addressed
        queue's account, in the caller's region) ran; when that queue's answers are to be lost, commit the change
        (durable mode) and drop the connection unanswered (``_DropConnection``)."""
        if not realism.lose_answer(queue, name):
            return
        logger.debug("realism: the answer of %s is lost", action)
        await self._committed()
        raise _DropConnection

    def _home(self, scope: Scope, host: str | None) -> Answer:
        """A plain ``GET /`` (no action, no query string): what this server is and where its console is
        (``sqsemu.http.home``); not counted, like the console redirect. ``HEAD /`` gets the same status and headers
        without the body (RFC 9110, 9.3.2)."""
        body = home_text(self.config, self.version, url_base(self.config, scope.get("scheme", "http"), host))
        headers = [(_CONTENT_TYPE, HOME_CONTENT_TYPE), (_CONTENT_LENGTH, str(len(body)).encode())]
        return 200, headers, b"" if scope["method"] == "HEAD" else body

    @staticmethod
    def _render_error(error: SQSError, is_json: bool, query_json: bool, request_id: str) -> tuple[int, bytes, bytes]:
        """``(status, x-amzn-query-error, body)``: JSON 1.0, Query as JSON (``query_json``) or Query XML."""
        if is_json:
            return jsonproto.encode_error(error)
        if query_json:
            return query.encode_error_json(error, request_id)
        return query.encode_error(error, request_id)

    def _dispatch(
        self,
        call: _Call,
        detected: Detected,
        body: bytes,
        watch_disconnect: Callable[[], asyncio.Future[None]],
        credential: str | None,
    ) -> bytes | Coroutine[Any, Any, bytes]:
        """Decode, run and encode one SQS call (a Query response as JSON when ``call.query_json``); the caller's
        namespace is ``call.namespace`` when a verified signature decided it, else the credential scope's
        (``credential``: the ``Authorization`` header's, None when it has none); the access line's queue and counts
        are noted on ``call``. A call that may wait (an asynchronous handler, a fault rule, realism's lost answers)
        is run by the coroutine returned (:meth:`_dispatch_waiting`); any other is run here."""
        action = detected.action
        scope = call.scope
        queue_path: tuple[str, str] | None = None
        if detected.protocol is Protocol.JSON:
            if action is None:
                raise UnknownOperation("The requested operation is not recognised.")
            operation = OPERATIONS.get(action)
            if operation is None:
                raise InvalidAction(f"The action {action} is not valid for this endpoint.")
            request = jsonproto.decode(operation.request, body)
            if credential is None and scope["query_string"]:
                credential = _presigned_credential(parse_qsl(scope["query_string"].decode("latin-1")))
        else:
            if action is None:
                raise _UnknownOperationQuery
            queue_path = path_queue(scope["path"])
            operation = OPERATIONS.get(action)
            if operation is None or (queue_path is not None and action in NOT_ON_QUEUE_URL):
                raise InvalidAction(f"The action {action} is not valid for this endpoint.")
            request = query.decode(operation.request, query.build_tree(detected.params))
            if credential is None:
                credential = _presigned_credential(detected.params)
        config = self.config
        caller = call.namespace or caller_namespace(credential, config)
        if self.access_control is not None:  # --auth iam: allowed, or AccessDenied (sqsemu.security.iam)
            self.access_control.check(
                call.access_key_id, action, request, _addressed(request, queue_path, caller), caller, scope,
                call.request_id,
            )  # fmt: skip
        if self.access is not None:
            addressed = _addressed(request, queue_path, caller)
            call.queue = None if addressed is None else f"{addressed[0]}/{addressed[1]}"
        base = url_base(config, scope.get("scheme", "http"), call.url_host())
        sender = None if self.access_control is None else self.access_control.sender_for(call.access_key_id)
        plain = detected.protocol is Protocol.JSON and action in _SENDS and jsonproto.plain_strings(body)
        ctx = Context(self.broker, caller, base, queue_path, call.trace, watch_disconnect, sender, plain)
        realism = self.broker.realism
        if operation.is_async or self.faults.rules or (realism is not None and realism.lossy):
            return self._dispatch_waiting(call, detected, operation, request, queue_path, ctx)
        result: dict[str, Any] = operation.handler(ctx, request)  # type: ignore[assignment]  # not is_async
        if self.access is not None:
            _count_messages(call, action, result)
        return self._encode(call, detected, result)

    async def _dispatch_waiting(
        self,
        call: _Call,
        detected: Detected,
        operation: Operation,
        request: Request,
        queue_path: tuple[str, str] | None,
        ctx: Context,
    ) -> bytes:
        """The rest of :meth:`_dispatch` for a call that may wait: the fault rules, the handler (awaited when it is
        asynchronous), realism's lost answers; the encoded answer."""
        action = detected.action
        assert action is not None
        caller = ctx.caller
        if self.faults.rules:
            await self._inject(action, _addressed(request, queue_path, caller))
        if operation.is_async:
            result = await operation.handler(ctx, request)  # type: ignore[misc]
        else:
            result = operation.handler(ctx, request)
        if self.access is not None:
            _count_messages(call, action, result)
        realism = self.broker.realism
        if realism is not None and realism.lossy:
            addressed = _addressed(request, queue_path, caller)
            if addressed is not None:
                await self._lose_answer(realism, action, Namespace(addressed[0], caller.region), addressed[1])
        return self._encode(call, detected, result)

    @staticmethod
    def _encode(call: _Call, detected: Detected, result: dict[str, Any]) -> bytes:
        """A successful call's answer body: JSON 1.0, Query as JSON (``call.query_json``) or Query XML."""
        if detected.protocol is Protocol.JSON:
            return jsonproto.encode(result)
        action = detected.action
        assert action is not None
        if call.query_json:
            return query.encode_json(action, result, call.request_id)
        return query.encode(action, result, call.request_id)


_CONSOLE_REDIRECT = [(b"location", b"/_sqsemu/ui/"), (_CONTENT_LENGTH, b"0")]
_SENDS = frozenset({"SendMessage", "SendMessageBatch"})
"""The actions whose message bodies a JSON request's :func:`~sqsemu.protocol.json.plain_strings` can vouch for."""


def _cycle_transport(send: Send) -> object:
    """The transport of uvicorn's per-request cycle whose method ``send`` is, or whose method a wrapper of ``send``
    closes over (uvicorn's message logger under ``--log-level trace``); None when neither."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is not None:
        return transport
    for cell in getattr(send, "__closure__", None) or ():
        try:
            inner = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        transport = getattr(getattr(inner, "__self__", None), "transport", None)
        if transport is not None:
            return transport
    return None


def _browser_home(scope: Scope, accept: bytes) -> bool:
    """Whether a GET is a browser opening the endpoint's root (``/``, HTML accepted, no ``Action`` parameter): it is
    sent to the web console (SDKs never ask for HTML)."""
    if scope["path"] != "/" or b"text/html" not in accept:
        return False
    return not any(key == "Action" for key, _ in parse_qsl(scope["query_string"].decode("latin-1")))


def _browser_get(call: _Call, accept: bytes) -> bool:
    """Whether a GET is a browser's (HTML accepted, no ``X-Amz-Target``, no ``Action`` parameter): SDKs never ask
    for HTML, so their requests keep AWS's answers."""
    if b"text/html" not in accept or call.target is not None:
        return False
    return not any(key == "Action" for key, _ in parse_qsl(call.scope["query_string"].decode("latin-1")))


def _presigned_credential(params: list[tuple[str, str]]) -> str | None:
    for key, value in params:
        if key == "X-Amz-Credential":
            return value
    return None


def create_app(
    config: Config,
    broker: Broker,
    clock: Clock,
    store: Store | None = None,
    restored_queues: int = 0,
    initial_state: SavedState | None = None,
) -> ASGIApp:
    """The sqsemu ASGI application for ``config``, serving ``broker`` with time from ``clock``; in durable mode
    ``store`` keeps the state and every request is answered once its changes are committed. ``restored_queues``
    (how many queues the store restored) is for the start-up banner. ``initial_state`` (``--load-state``, checked)
    replaces the state once the layers are made, then the ``[[queues]]`` declarations apply (the caller has not
    applied them) and the ``[[topics]]`` ones.

    SQS errors are rendered per docs/behaviour.md 1.5; unexpected exceptions become InternalError (500).
    """
    return SQSApp(config, broker, clock, store=store, restored_queues=restored_queues, initial_state=initial_state)
