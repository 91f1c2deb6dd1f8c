"""``SQSServer``: a real sqsemu server in a background thread, with the testing aids as plain Python methods.

Everything here goes through the server's public HTTP API (the SQS endpoint and the ``/_sqsemu/*`` admin routes,
with ``urllib``) and the public :class:`sqsemu.server.ServerThread`; nothing reaches into the engine
(docs/architecture.md, principle 10). boto3 is imported only when :meth:`SQSServer.client` is called.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from sqsemu.config import ACCOUNT_RE, Config
from sqsemu.testing.boto import new_client

if TYPE_CHECKING:
    from sqsemu.server import ServerThread

__all__ = ["AdminAPIError", "SQSServer", "ServerClock", "new_account"]

ADMIN_TIMEOUT_S = 30.0
DUMMY_SECRET = "sqsemu-test-secret"

# Fresh account ids: a random 4-digit prefix (1000-9999, so never 000000000000) and a per-process counter.
_account_prefix = 1000 + secrets.randbelow(9000)
_account_counter = itertools.count(1)
_account_lock = threading.Lock()


def new_account() -> str:
    """A 12-digit account id not handed out before in this process (and never ``000000000000``).

    Use it as the access key id of a client (``SQSServer.client(account=...)``) to get a namespace of queues that
    no other test sees.
    """
    with _account_lock:
        n = next(_account_counter)
    return f"{_account_prefix:04d}{n % 100_000_000:08d}"


class AdminAPIError(RuntimeError):
    """An admin route answered an error: ``status`` is the HTTP status, ``message`` the server's ``error`` text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never send loopback calls to a proxy


ADMIN_TOKEN_HEADER = "X-Sqsemu-Admin-Token"


def _admin_call(method: str, url: str, payload: Any = None, token: str = "") -> Any:
    """One JSON admin request (with the admin ``token`` when not empty); returns the decoded answer or raises
    ``AdminAPIError``."""
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header(ADMIN_TOKEN_HEADER, token)
    try:
        with _opener.open(request, timeout=ADMIN_TIMEOUT_S) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            message = str(json.loads(body)["error"])
        except (ValueError, KeyError, TypeError):
            message = body.decode("utf-8", "replace") or str(exc.reason)
        raise AdminAPIError(exc.code, message) from None
    return json.loads(raw) if raw.strip() else None


def _state_call(request: urllib.request.Request, token: str) -> bytes:
    """The answer's body of a ``/_sqsemu/state`` request; raises ``AdminAPIError`` for an error answer."""
    if token:
        request.add_header(ADMIN_TOKEN_HEADER, token)
    try:
        with _opener.open(request, timeout=ADMIN_TIMEOUT_S) as response:
            body: bytes = response.read()
            return body
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            message = str(json.loads(raw)["error"])
        except (ValueError, KeyError, TypeError):
            message = raw.decode("utf-8", "replace") or str(exc.reason)
        raise AdminAPIError(exc.code, message) from None


class ServerClock:
    """The clock of a running server, through ``/_sqsemu/clock``: ``now_ms()`` and ``advance(seconds)``.

    ``admin_token`` is sent when the server requires one (``--admin-token``)."""

    def __init__(self, endpoint_url: str, admin_token: str = "") -> None:
        self._url = endpoint_url
        self._token = admin_token

    def now_ms(self) -> int:
        """The server's current time, epoch milliseconds."""
        return int(_admin_call("GET", f"{self._url}/_sqsemu/clock", token=self._token)["now_ms"])

    @property
    def mode(self) -> str:
        """``"manual"`` or ``"system"``."""
        return str(_admin_call("GET", f"{self._url}/_sqsemu/clock", token=self._token)["mode"])

    def advance(self, seconds: float) -> int:
        """Move a manual clock forward by ``seconds`` (>= 0), firing every timer that falls due (visibility
        timeouts, delays, retention, long-poll timeouts) in deadline order. Returns the new time, epoch ms.

        Raises ``AdminAPIError`` (400) when the server clock is not manual or ``seconds`` is invalid.
        """
        answer = _admin_call("POST", f"{self._url}/_sqsemu/clock/advance", {"seconds": seconds}, self._token)
        return int(answer["now_ms"])


class SQSServer:
    """A real sqsemu server on a free port of 127.0.0.1, in a background thread; usable with or without pytest::

        with SQSServer() as server:                    # clock="manual" by default
            sqs = server.client()                      # boto3 SQS client for this server
            url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
            sqs.send_message(QueueUrl=url, MessageBody="hi")
            server.peek("jobs")                        # -> [{"message_id": ..., "state": "visible", ...}]
            server.advance(30)                         # 30 s pass for the server; due timers fire
            sns = server.sns_client()                  # boto3 SNS client: topics on the same port
            server.sns_settle()                        # every publication so far handed to its subscriptions

    ``clock``, ``region``, ``account_id`` and any other :class:`~sqsemu.config.Config` field (``fidelity``,
    ``base_url``, ``log_level``...) configure the server; ``port`` is ignored (a free one is picked) and
    ``log_level`` defaults to ``warning``. With ``clock="manual"`` time moves only through :meth:`advance`: a long
    poll (``WaitTimeSeconds`` > 0) then ends only when a message arrives or the clock is advanced (from another
    thread, since the client call blocks).

    Security options work too: with ``admin_token`` the admin calls (:meth:`peek`, :meth:`advance`, :meth:`reset`,
    :meth:`inject`...) send it; with ``auth="sigv4"`` and ``credentials`` (:class:`~sqsemu.config.Credential` s)
    :meth:`client` signs with the key of the account it is asked for; with ``auth="iam"`` the credentials'
    ``principal`` and ``policies`` are enforced, and ``client(principal=<ARN>)`` signs as that IAM user or role.
    ``admin=False`` leaves those admin calls failing with ``AdminAPIError`` (404).

    :meth:`save_state` and :meth:`load_state` save the whole state to a file and load one (docs/state.md);
    ``load_state=PATH`` loads one at start-up.

    Attributes once started: ``endpoint_url`` (``http://127.0.0.1:<port>``), ``clock`` (:class:`ServerClock`),
    ``config``.
    """

    def __init__(
        self,
        clock: str = "manual",
        region: str = "us-east-1",
        account_id: str = "000000000000",
        functions: Mapping[str, Callable[[dict[str, Any], Any], Any]] | None = None,
        **config: Any,
    ) -> None:
        config.setdefault("host", "127.0.0.1")
        config.setdefault("log_level", "warning")
        self.config = Config(clock=clock, region=region, account_id=account_id, **config)
        self._functions = dict(functions or {})
        self._thread: ServerThread | None = None
        self._clock: ServerClock | None = None

    # ----------------------------------------------------------------- life cycle

    def start(self) -> SQSServer:
        """Start serving (waits until the server accepts requests). Raises ``RuntimeError`` if it cannot start."""
        if self._thread is not None:
            raise RuntimeError("SQSServer already started")
        from sqsemu.server import ServerThread

        self._thread = ServerThread(self.config).start()
        self._clock = ServerClock(self._thread.endpoint_url, self.config.admin_token)
        for name, handler in self._functions.items():
            self.function(name, handler)
        return self

    def stop(self) -> None:
        """Shut the server down (waiting long polls return empty). Safe to call twice."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop()

    def __enter__(self) -> SQSServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether :meth:`start` was called and :meth:`stop` was not."""
        return self._thread is not None

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:<port>``: the SQS endpoint (and ``/_sqsemu/*`` admin routes) of the server."""
        if self._thread is None:
            raise RuntimeError("SQSServer is not running (use it as a context manager or call start())")
        return self._thread.endpoint_url

    @property
    def region(self) -> str:
        """The server's default region (clients made by :meth:`client` use it)."""
        return self.config.region

    @property
    def account_id(self) -> str:
        """The server's default 12-digit account (requests whose access key id is not 12 digits land there)."""
        return self.config.account_id

    # ----------------------------------------------------------------- time

    @property
    def clock(self) -> ServerClock:
        """The server clock: ``now_ms()`` (epoch ms) and ``advance(seconds)``."""
        if self._clock is None:
            raise RuntimeError("SQSServer is not running")
        return self._clock

    def advance(self, seconds: float) -> int:
        """``clock.advance(seconds)``: move a manual clock forward, firing due timers; returns the new epoch ms."""
        return self.clock.advance(seconds)

    # ----------------------------------------------------------------- clients and accounts

    @staticmethod
    def new_account() -> str:
        """A fresh 12-digit account id (see :func:`new_account`)."""
        return new_account()

    def client(self, account: str | None = None, principal: str | None = None, **kwargs: Any) -> Any:
        """A boto3 SQS client for this server.

        ``account`` (12 digits) becomes the access key id, which sqsemu takes as the caller's account (default:
        the server's ``account_id``). Region is the server's, the secret a dummy, retries are off. ``kwargs`` go
        to ``boto3.session.Session.client`` and override those defaults (e.g. ``config=``). Made from one
        session per process (:func:`sqsemu.testing.boto.new_client`): a millisecond or two, not 50-60 ms.

        With ``auth="sigv4"`` or ``auth="iam"`` the client signs with the first configured credential acting as
        ``account`` (under ``iam``, the account's root user's first when there is one), or with the credential
        whose ``principal`` is the given IAM user or role ARN (``ValueError`` when none is), unless ``kwargs``
        give ``aws_access_key_id`` themselves.
        """
        return new_client("sqs", **self._client_options(account, principal, kwargs))

    def sns_client(self, account: str | None = None, principal: str | None = None, **kwargs: Any) -> Any:
        """A boto3 SNS client for this server (topics are served on the same port, docs/sns.md), made as
        :meth:`client` makes the SQS one: ``account`` (12 digits) is the caller's account, region the server's,
        dummy secret, retries off; with ``auth="sigv4"``/``"iam"`` it signs with a configured credential of
        ``account`` (or of ``principal``). ``kwargs`` override those defaults. Raises ``ValueError`` for a bad
        ``account`` or a missing credential."""
        return new_client("sns", **self._client_options(account, principal, kwargs))

    def _client_options(self, account: str | None, principal: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The keywords of ``Session.client`` for a client of this server acting as ``account`` (see
        :meth:`client`)."""
        from botocore.config import Config as BotoConfig

        account = account if account is not None else self.account_id
        if not ACCOUNT_RE.match(account):
            raise ValueError(f"account must be a 12-digit account id, got {account!r}")
        key_id, secret = account, DUMMY_SECRET
        if self.config.auth != "none" and "aws_access_key_id" not in kwargs:
            key_id, secret = self._credential_for(account, principal)
        options: dict[str, Any] = {
            "endpoint_url": self.endpoint_url,
            "region_name": self.region,
            "aws_access_key_id": key_id,
            "aws_secret_access_key": secret,
            "config": BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}),
        }
        options.update(kwargs)
        return options

    def _credential_for(self, account: str, principal: str | None = None) -> tuple[str, str]:
        """``(access key id, secret)`` of the configured credential of ``principal`` (an ARN), or else of the first
        acting as ``account`` (a root user's first)."""
        credentials = self.config.credentials
        if principal is not None:
            for credential in credentials:
                if credential.principal == principal:
                    return credential.access_key_id, credential.secret_access_key
            raise ValueError(f"no configured credential has the principal {principal!r}")
        ranked = sorted(credentials, key=lambda c: c.principal is not None)  # stable: root users first
        for credential in ranked:
            if credential.account_for(self.account_id) == account:
                return credential.access_key_id, credential.secret_access_key
        raise ValueError(f"no configured credential acts as account {account!r} (auth is {self.config.auth})")

    # ----------------------------------------------------------------- Lambda: event source mappings

    def _event_sources(self) -> Any:
        if self._thread is None:
            raise RuntimeError("SQSServer is not running")
        return getattr(self._thread.app, "event_sources")  # noqa: B009 - the app's public attribute

    def function(self, name: str, handler: Callable[[dict[str, Any], Any], Any]) -> None:
        """Make the Lambda function ``name`` the Python callable ``handler(event, context)``, run in this process
        (in a worker thread; a coroutine function on the server's loop) whenever an event source mapping invokes
        ``name`` (docs/lambda.md). A name the config file declares (``[functions.NAME]``) is that function, of its
        one account; any other name is a function of every account."""
        self._event_sources().register_function(name, handler)

    def lambda_client(self, account: str | None = None, **kwargs: Any) -> Any:
        """A boto3 ``lambda`` client for this server's event-source-mapping API, acting as ``account`` (as
        :meth:`client`)."""
        account = account if account is not None else self.account_id
        if self.config.auth == "sigv4" and "aws_access_key_id" not in kwargs:
            key_id, secret = self._credential_for(account)  # signed with a configured key, as ``client`` is
            kwargs.update(aws_access_key_id=key_id, aws_secret_access_key=secret)
        return self.lambda_client_for(self.endpoint_url, account, self.region, **kwargs)

    @staticmethod
    def lambda_client_for(
        endpoint_url: str, account: str = "000000000000", region: str = "us-east-1", **kwargs: Any
    ) -> Any:
        """A boto3 ``lambda`` client for the sqsemu server at ``endpoint_url`` (one not started by this class,
        too), acting as ``account`` in ``region``; retries off, dummy secret."""
        from botocore.config import Config as BotoConfig

        options: dict[str, Any] = {
            "endpoint_url": endpoint_url,
            "region_name": region,
            "aws_access_key_id": account,
            "aws_secret_access_key": DUMMY_SECRET,
            "config": BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}),
        }
        options.update(kwargs)
        return new_client("lambda", **options)

    def map_queue(self, queue: str, function: str, account: str | None = None, **parameters: Any) -> str:
        """Create an event source mapping from ``queue`` (a queue URL, ARN or name in ``account``) to ``function``
        with CreateEventSourceMapping's ``parameters`` (``BatchSize=10``, ``FunctionResponseTypes=[...]``...);
        returns its UUID."""
        account = account if account is not None else self.account_id
        if queue.startswith("arn:"):
            arn = queue
        else:
            if "/" in queue:
                parts = [p for p in urllib.parse.urlsplit(queue).path.split("/") if p]
                account, queue = parts[-2], parts[-1]
            arn = f"arn:aws:sqs:{self.region}:{account}:{queue}"
        client = self.lambda_client(account)
        answer = client.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, **parameters)
        return str(answer["UUID"])

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until every event source mapping is idle: each of its pollers waits for a message or for the
        clock, and no function is running. Call it after sending or :meth:`advance` to let the invocations those
        cause finish. Raises ``TimeoutError`` after ``timeout`` real seconds."""
        self._event_sources().settle_threadsafe(timeout)

    # ----------------------------------------------------------------- admin API

    def _admin(self, method: str, path: str, payload: Any = None) -> Any:
        return _admin_call(method, f"{self.endpoint_url}{path}", payload, self.config.admin_token)

    def queues(self) -> list[dict[str, Any]]:
        """Every queue of every account and region (``GET /_sqsemu/queues``), sorted by (account, region, name):
        ``{"account", "region", "name", "arn", "fifo", "url", "visible", "in_flight", "delayed",
        "waiting_long_polls"}`` each; the last is how many ReceiveMessage long polls are waiting on the queue now
        (answered, timed-out and disconnected ones not counted)."""
        return list(self._admin("GET", "/_sqsemu/queues")["queues"])

    def peek_queue(self, queue: str, account: str | None = None, region: str | None = None) -> dict[str, Any]:
        """``{"queue": {...}, "messages": [...]}`` for ``queue`` without changing anything: ``"queue"`` as in
        :meth:`queues` (``peek_queue(url)["queue"]["waiting_long_polls"]`` tells when a long poll started in
        another thread is parked, so a test can send only then), ``"messages"`` as :meth:`peek` returns them."""
        if "/" in queue:
            parts = [p for p in urllib.parse.urlsplit(queue).path.split("/") if p]
            if len(parts) < 2:
                raise ValueError(f"not a queue URL: {queue!r}")
            account, name = parts[-2], parts[-1]
        else:
            name = queue
            account = account if account is not None else self.account_id
        path = f"/_sqsemu/queues/{urllib.parse.quote(account, safe='')}/{urllib.parse.quote(name, safe='')}/messages"
        if region is not None:
            path += "?" + urllib.parse.urlencode({"region": region})
        result: dict[str, Any] = self._admin("GET", path)
        return result

    def peek(self, queue: str, account: str | None = None, region: str | None = None) -> list[dict[str, Any]]:
        """The messages of ``queue`` (a queue URL, or a name in ``account``, default the server's account), in
        the order they arrived, without receiving them: no receive count, visibility or receipt changes.

        Each is ``{"message_id", "body", "state" ("visible"|"in_flight"|"delayed"), "seconds_left" (float s until
        visible, None when visible), "receive_count", "sent_timestamp" (epoch ms), "first_receive_timestamp"
        (epoch ms or None), "message_group_id", "message_deduplication_id", "sequence_number",
        "dead_letter_source_arn", "attributes" (system attributes as strings), "message_attributes" ({name:
        {"DataType", "StringValue"|"BinaryValue" (base64)}}), "injected" (realism labels: "duplicate_pending",
        "duplicate", "reordered")}``. ``region`` defaults to the server's region.
        Raises ``AdminAPIError`` (404) for an unknown queue.
        """
        return list(self.peek_queue(queue, account, region)["messages"])

    def reset(self, account: str | None = None) -> int:
        """Delete every queue and SNS topic (only ``account``'s, when given) with its messages and subscriptions
        (and, without ``account``, every fault rule); returns how many queues went."""
        payload = {} if account is None else {"account": account}
        return int(self._admin("POST", "/_sqsemu/reset", payload)["deleted_queues"])

    def save_state(self, path: str | os.PathLike[str] | None = None) -> bytes:
        """The server's whole state as a saved-state file (``GET /_sqsemu/state``, docs/state.md): its queues,
        messages, deduplication history, move tasks, event source mappings and SNS topics. Written to ``path`` too
        when given. Raises ``AdminAPIError`` when the server refuses."""
        request = urllib.request.Request(f"{self.endpoint_url}/_sqsemu/state", method="GET")
        data = _state_call(request, self.config.admin_token)
        if path is not None:
            Path(path).write_bytes(data)
        return data

    def load_state(self, state: bytes | str | os.PathLike[str]) -> dict[str, Any]:
        """Replace the server's whole state by a saved one (``POST /_sqsemu/state``): ``state`` is the file's bytes
        (:meth:`save_state`'s) or its path. Returns the server's answer (``{"loaded": {table: records}, ...}``).
        Raises ``AdminAPIError`` (400, the state unchanged) for a file that cannot be loaded."""
        data = state if isinstance(state, bytes) else Path(state).read_bytes()
        request = urllib.request.Request(f"{self.endpoint_url}/_sqsemu/state", data=data, method="POST")
        answer: dict[str, Any] = json.loads(_state_call(request, self.config.admin_token))
        return answer

    def sns_settle(self, timeout: float = 10.0) -> None:
        """Wait until every message published to an SNS topic so far has been handed to its subscriptions (into
        their SQS queues, to their HTTP/S and Lambda deliveries, or recorded): ``POST /_sqsemu/sns/settle``. Call
        it after Publish before looking at what the delivery changed from elsewhere (a peek, a count, another
        thread's consumer). ``timeout`` is in real seconds (0 to 300); raises ``AdminAPIError`` (504) when the
        deliveries take longer."""
        self._admin("POST", "/_sqsemu/sns/settle", {"timeout": timeout})

    def inject(
        self,
        action: str = "*",
        queue: str = "*",
        error: None | str | dict[str, Any] = None,
        latency_ms: int | None = None,
        drop: bool = False,
        every: int | None = None,
        probability: float | None = None,
        seed: int | None = None,
        count: int | None = None,
        rule_id: str | None = None,
    ) -> str:
        """Add a fault-injection rule (``POST /_sqsemu/faults``, server-wide: clear it when done); returns its id.

        ``action`` is an SQS action name or ``"*"``; ``queue`` a queue-name glob or ``"*"``. ``error`` is an error
        code (``"ServiceUnavailable"``, sent as ``{"code": ...}``) or ``{"code", "status", "message"}``;
        ``latency_ms`` delays matching requests (milliseconds); ``drop`` closes the connection without an answer.
        ``every`` (every n-th match), ``probability`` (0..1, with ``seed``) and ``count`` (at most that many times)
        choose which matches fire. ``rule_id`` names the rule (default: the server picks one). Options left at
        None are not sent. Raises ``AdminAPIError`` (400) for a rule the server refuses.
        """
        rule: dict[str, Any] = {"action": action, "queue": queue, "drop": drop}
        optional = {
            "error": {"code": error} if isinstance(error, str) else error,
            "latency_ms": latency_ms,
            "every": every,
            "probability": probability,
            "seed": seed,
            "count": count,
            "id": rule_id,
        }
        rule.update({key: value for key, value in optional.items() if value is not None})
        answer = self._admin("POST", "/_sqsemu/faults", rule)
        return _rule_id(answer)

    def clear_faults(self) -> None:
        """Remove every fault-injection rule (``DELETE /_sqsemu/faults``)."""
        self._admin("DELETE", "/_sqsemu/faults")

    def realism(self) -> dict[str, Any]:
        """The server's realism mode (``GET /_sqsemu/realism``): ``{"spec": "duplicates=0.1" | "off", "effects":
        {effect: value}, "seed": int}`` (docs/realism.md)."""
        return dict(self._admin("GET", "/_sqsemu/realism"))

    def set_realism(self, spec: str, seed: int | None = None) -> dict[str, Any]:
        """Set the server's realism spec (``"duplicates=0.1,reorder=0.2"``, ``"off"``) and, when given, its seed
        (``PUT /_sqsemu/realism``); every queue without its own ``sqsemu:realism`` tag follows it, starting a fresh
        random sequence. Returns the new state as :meth:`realism` does. Raises ``AdminAPIError`` (400) for a bad
        spec, naming the effect at fault."""
        payload: dict[str, Any] = {"spec": spec}
        if seed is not None:
            payload["seed"] = seed
        return dict(self._admin("PUT", "/_sqsemu/realism", payload))


def _rule_id(answer: Any) -> str:
    """The rule id in a ``POST /_sqsemu/faults`` answer (the normalised rule, ``{"id": ..., ...}``)."""
    if isinstance(answer, dict) and answer.get("id") is not None:
        return str(answer["id"])
    raise AdminAPIError(200, f"no rule id in the answer of POST /_sqsemu/faults: {answer!r}")
