"""What a mapping's function name invokes, and what came back.

A function is, in this order: a Python callable registered in-process (``handler(event, context)``, as a Lambda
Python runtime calls it; a coroutine function is awaited), a per-function Lambda Invoke API endpoint (config file
``[functions.NAME] endpoint``), or the server's ``--lambda-endpoint``. An endpoint is called as Lambda's Invoke
API is ("Invoke", AWS Lambda API Reference): ``POST {endpoint}/2015-03-31/functions/{FunctionName}/invocations``
with the event as the JSON body and ``X-Amz-Invocation-Type: RequestResponse``; HTTP 200 with an
``X-Amz-Function-Error`` header is a function error, HTTP 200 without one a result (the body, JSON). The runtime
interface emulator of Lambda's container images serves one function, named ``function``: give it as the
endpoint's ``function_name`` in the config file.

Outcomes (:class:`Outcome`): ``ok`` (a result), ``function_error`` (the handler raised, the endpoint said so, or
the endpoint misbehaved: it closed the connection before a whole answer, answered something that is not HTTP, took
longer than the invocation's timeout, or sent an answer over Lambda's 6 MB synchronous response limit),
``unreachable`` (no connection to the endpoint, or an HTTP error status), and ``no_function`` (nothing to invoke
for that name). Each leaves the whole batch to come back after its visibility timeout ("Handling errors for an SQS
event source in Lambda"); :meth:`Functions.invoke` never raises.

A function belongs to one account ("Viewing resource-based IAM policies in Lambda": another account reaches a
function only through grants on it, which sqsemu does not model): a function of the config file
(``[functions.NAME]``) to the account of its ``role``'s ARN, else to its ``account``, else to the server's
``--account-id`` (:attr:`Functions.accounts`); a name declared nowhere (a Python callable registered by name, or
one only ``--lambda-endpoint`` reaches) is a function of every account, run as no role. :meth:`Functions.known`,
:meth:`Functions.role_of` and :meth:`Functions.invoke` answer for one account: another account's function is not
there.

Endpoints are called through one ``httpx.AsyncClient`` per server (made at the first call on the running loop,
closed by :meth:`Functions.aclose`): connections are kept and reused, no thread per call, no proxy from the
environment (the endpoints are local).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    import httpx

    from sqsemu.security.evaluate import Principal
    from sqsemu.security.policy import Policy

logger = logging.getLogger("sqsemu.eventsource")

Handler = Callable[[dict[str, Any], Any], Any]
"""A Python function in Lambda's form: ``handler(event, context)`` returning a JSON-serialisable value."""

INVOKE_TIMEOUT_S = 900.0
"""Longest wait for an Invoke endpoint's answer (seconds): Lambda's largest function timeout."""
MAX_RESPONSE_BYTES = 6 * 1024 * 1024
"""Longest answer read from an Invoke endpoint (bytes): Lambda's synchronous invocation response payload quota
("Lambda quotas", 6 MB); a longer one is a function error."""
CONNECT_TIMEOUT_S = 10.0
"""Longest wait for a connection to an Invoke endpoint (seconds)."""
MAX_CONNECTIONS = 100
"""Connections kept open to Invoke endpoints at most (all endpoints together)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A Lambda Invoke API endpoint (``http://host:port``) and the function name to invoke there (None: the
    mapping's own)."""

    url: str
    function_name: str | None = None


@dataclass(frozen=True, slots=True)
class ExecutionRole:
    """The role a function runs as ("Defining Lambda function permissions with an execution role"): its
    ``principal`` (an IAM role) and identity-based ``policies`` (``(label, policy)``). With ``--auth iam`` a
    mapping of the function polls and deletes as this role."""

    principal: Principal
    policies: tuple[tuple[str, Policy], ...]


@dataclass(slots=True)
class Outcome:
    """One invocation's result: ``kind`` (``ok``, ``function_error``, ``unreachable``, ``no_function``),
    ``payload`` (the function's result, decoded JSON; ``INVALID`` when it was not JSON), ``error`` (a line
    saying what went wrong, for logs and ``LastProcessingResult``) and ``exception`` (what an in-process handler
    raised, logged with its whole text and traceback: Powertools' ``BatchProcessingError`` carries each record's
    error after its first line)."""

    kind: str
    payload: Any = None
    error: str = ""
    exception: BaseException | None = None


INVALID = object()
"""The payload of an answer that was not JSON."""


class LambdaContext:
    """The context object a Python handler receives: the attributes of Lambda's Python runtime context
    ("Using the Lambda context object to retrieve Python function information")."""

    def __init__(self, function_name: str, function_arn: str, deadline_s: float) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = function_arn
        self.memory_limit_in_mb = 128
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = f"sqsemu/{self.aws_request_id}"
        self.identity = None
        self.client_context = None
        self._deadline = deadline_s

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the invocation's deadline (wall-clock)."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class Functions:
    """The function names this server can invoke: in-process callables, per-function endpoints, the default
    endpoint (``--lambda-endpoint``); ``accounts``: the account of each declared function (module docstring)."""

    def __init__(
        self,
        default_endpoint: str = "",
        endpoints: Mapping[str, Endpoint] | None = None,
        accounts: Mapping[str, str] | None = None,
    ) -> None:
        self.default_endpoint = default_endpoint.rstrip("/")
        self.endpoints: dict[str, Endpoint] = dict(endpoints or {})
        self.handlers: dict[str, Handler] = {}
        self.roles: dict[str, ExecutionRole] = {}
        self.accounts: dict[str, str] = dict(accounts or {})
        """Declared function name -> its account (12 digits); a name not here is a function of every account."""
        self._client: httpx.AsyncClient | None = None

    def belongs(self, name: str, account: str) -> bool:
        """Whether the function ``name`` is one of ``account``'s: declared in that account, or declared nowhere."""
        owner = self.accounts.get(name)
        return owner is None or owner == account

    def role_of(self, name: str, account: str) -> ExecutionRole | None:
        """The execution role of ``account``'s function ``name``; None when it has none or is not ``account``'s."""
        return self.roles.get(name) if self.belongs(name, account) else None

    def names(self, account: str) -> list[str]:
        """The names of ``account``'s functions that something runs (:meth:`known`), sorted: registered in-process
        or declared; a name declared nowhere that only ``--lambda-endpoint`` would reach is not listed (sqsemu
        cannot ask the endpoint which functions it has)."""
        return sorted(name for name in {*self.handlers, *self.endpoints, *self.accounts} if self.known(name, account))

    def register(self, name: str, handler: Handler) -> None:
        """Make ``name`` invoke ``handler`` in-process (replacing what it invoked before)."""
        if not callable(handler):
            raise TypeError(f"the function {name!r} must be callable, got {type(handler).__name__}")
        self.handlers[name] = handler

    def unregister(self, name: str) -> None:
        """Forget the in-process handler of ``name`` (nothing if none)."""
        self.handlers.pop(name, None)

    def known(self, name: str, account: str) -> bool:
        """Whether ``account`` has a function ``name`` and invoking it would reach something."""
        if not self.belongs(name, account):
            return False
        return name in self.handlers or name in self.endpoints or bool(self.default_endpoint)

    def describe(self, name: str) -> str:
        """Where ``name`` goes: ``python:<qualified name>``, the endpoint URL, or ``none``."""
        handler = self.handlers.get(name)
        if handler is not None:
            return f"python:{getattr(handler, '__qualname__', type(handler).__name__)}"
        endpoint = self.endpoints.get(name)
        if endpoint is not None:
            return endpoint.url
        return self.default_endpoint or "none"

    async def invoke(
        self,
        name: str,
        arn: str,
        event: dict[str, Any],
        timeout_s: float,
        expired: asyncio.Future[None] | None = None,
        account: str | None = None,
    ) -> Outcome:
        """Invoke ``name`` with ``event``, waiting ``timeout_s`` seconds at most (an in-process handler also until
        ``expired``, the deadline on the server's clock, is done); never raises for the function's own failures
        (see :class:`Outcome`; a timeout is a function error). ``account``: the invoking mapping's; a function of
        another account is ``no_function``, as one that does not exist."""
        if account is not None and not self.belongs(name, account):
            return Outcome("no_function", error=f"Function not found: {arn}")
        handler = self.handlers.get(name)
        if handler is not None:
            return await _call_python(handler, name, arn, event, timeout_s, expired)
        endpoint = self.endpoints.get(name)
        if endpoint is None and self.default_endpoint:
            endpoint = Endpoint(self.default_endpoint)
        if endpoint is None:
            return Outcome("no_function", error=f"Function not found: {arn}")
        body = json.dumps(event).encode()
        try:
            return await self._post(endpoint, endpoint.function_name or name, body, timeout_s)
        except Exception as exc:  # noqa: BLE001 - whatever the endpoint did is the invocation's outcome
            return Outcome("function_error", error=f"Invoke failed: {type(exc).__name__}: {_first_line(exc)}")

    def _http(self) -> httpx.AsyncClient:
        import httpx  # at the first call, not at start-up

        client = self._client
        if client is None or client.is_closed:
            client = self._client = httpx.AsyncClient(
                trust_env=False,  # never send loopback calls to a proxy named in the environment
                limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS),
                follow_redirects=False,
            )
        return client

    async def aclose(self) -> None:
        """Close the connections to the Invoke endpoints (server shutdown); a later invoke opens new ones."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _post(self, endpoint: Endpoint, name: str, body: bytes, timeout_s: float) -> Outcome:
        """One Invoke call over HTTP: the outcome of the endpoint's answer, or of its misbehaviour."""
        import httpx

        url = f"{endpoint.url.rstrip('/')}/2015-03-31/functions/{quote(name, safe='')}/invocations"
        headers = {"Content-Type": "application/json", "X-Amz-Invocation-Type": "RequestResponse"}
        timeout = httpx.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s))
        try:
            async with asyncio.timeout(timeout_s):
                async with self._http().stream("POST", url, content=body, headers=headers, timeout=timeout) as answer:
                    raw = bytearray()
                    async for chunk in answer.aiter_bytes():  # decoded (gzip...), counted as read
                        raw += chunk
                        if len(raw) > MAX_RESPONSE_BYTES:
                            return Outcome(
                                "function_error",
                                error=f"Invoke answer longer than {MAX_RESPONSE_BYTES} bytes (Lambda's response limit)",
                            )
                    status = answer.status_code
                    function_error = answer.headers.get("X-Amz-Function-Error")
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return Outcome("unreachable", error=f"Invoke endpoint {endpoint.url} unreachable: {_first_line(exc)}")
        except TimeoutError:
            return Outcome("function_error", error=f"Invoke timed out after {timeout_s:g} s")
        except httpx.TimeoutException:
            return Outcome("function_error", error=f"Invoke timed out after {timeout_s:g} s")
        except httpx.HTTPError as exc:  # closed mid-answer, not HTTP, a broken encoding...
            return Outcome("function_error", error=f"Invoke failed: {type(exc).__name__}: {_first_line(exc)}")
        if status >= 300:
            detail = bytes(raw[:200]).decode("utf-8", "replace")
            return Outcome("unreachable", error=f"Invoke answered HTTP {status}: {detail}")
        try:
            payload: Any = json.loads(raw) if raw.strip() else None
        except (ValueError, RecursionError):
            payload = INVALID
        if function_error:
            message = payload.get("errorMessage", "") if isinstance(payload, dict) else ""
            return Outcome("function_error", payload, f"{function_error}: {message}".rstrip(": "))
        return Outcome("ok", payload)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0]
    return text[:300] or type(exc).__name__


async def _call_python(
    handler: Handler,
    name: str,
    arn: str,
    event: dict[str, Any],
    timeout_s: float,
    expired: asyncio.Future[None] | None = None,
) -> Outcome:
    """The handler called with a fresh copy of the event (as a runtime decodes it), its result passed through JSON
    as a runtime encodes it; an exception (or a result JSON cannot encode) is a function error. A handler still
    running after ``timeout_s`` seconds (wall-clock), or when ``expired`` (the same deadline on the server's clock)
    is done, is abandoned: a function error, ``Task timed out after N seconds`` (Lambda's timeout message,
    "Troubleshoot invocation issues in Lambda"). A coroutine is cancelled; a plain function's thread cannot be
    stopped, so it runs on and what it returns or raises is ignored."""
    fresh = json.loads(json.dumps(event))
    context = LambdaContext(name, arn, time.monotonic() + timeout_s)
    # Both calls are awaited below: what they raise is the outcome (a function error, counted by the mapping); one
    # abandoned (a timeout, or this invocation cancelled: the mapping stopped, shutdown) is cancelled and its
    # outcome read by _forget, never left for asyncio to report.
    if inspect.iscoroutinefunction(handler):
        call: asyncio.Future[Any] = asyncio.ensure_future(handler(fresh, context))  # supervised
    else:
        call = asyncio.ensure_future(asyncio.to_thread(handler, fresh, context))  # supervised
    waits: set[asyncio.Future[Any]] = {call}
    if expired is not None:
        waits.add(expired)
    try:
        await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # this invocation is cancelled while the function runs: the function is abandoned too
        if not call.done():
            call.cancel()
        call.add_done_callback(_forget)
        raise
    if not call.done():
        call.cancel()  # a coroutine stops; a thread runs on, its outcome unread
        call.add_done_callback(_forget)
        return Outcome("function_error", error=f"Task timed out after {timeout_s:.2f} seconds")
    try:
        payload = json.loads(json.dumps(call.result()))
    except Exception as exc:  # noqa: BLE001 - the function's own failure is its outcome
        first_line = str(exc).strip().split("\n", 1)[0]
        return Outcome("function_error", error=f"{type(exc).__name__}: {first_line}", exception=_own_frames(exc))
    return Outcome("ok", payload)


def _own_frames(exc: BaseException) -> BaseException:
    """``exc`` with its traceback starting at the function's own code: the frames of this module and of the asyncio
    and thread-pool machinery that called it are left out (as Lambda's log shows the function's frames only)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None and _is_machinery(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return exc.with_traceback(tb)


def _is_machinery(filename: str) -> bool:
    path = filename.replace("\\", "/")
    return path.endswith("sqsemu/eventsource/functions.py") or "/asyncio/" in path or "/concurrent/futures/" in path


def _forget(call: asyncio.Future[Any]) -> None:
    """Read an abandoned call's outcome so that asyncio does not report it (it was a timeout already)."""
    if not call.cancelled():
        call.exception()
