"""Delivery to HTTP/S endpoints and to Lambda functions: the pushers and confirmers :class:`~sqsemu.sns.fanout.Fanout`
calls, each delivery a supervised task on the server's loop, its retries waiting on the server's clock.

HTTP/S ("Fanout Amazon SNS notifications to HTTPS endpoints", "HTTP/HTTPS headers", "Amazon SNS message delivery
retries"): the notification (or, with RawMessageDelivery, the message itself) is POSTed with the ``x-amz-sns-*``
headers, ``Content-Type`` from the effective delivery policy's ``headerContentType`` (a confirmation is always
``text/plain; charset=UTF-8``) and ``User-Agent: Amazon Simple Notification Service Agent``. A 2xx answer is a
delivery. A 5xx or 429 answer, no connection, or no answer within :data:`HTTP_TIMEOUT_S` is a server-side failure,
retried as the effective delivery policy says; any other answer is a permanent (client-side) failure, not retried
("Amazon SNS considers all 5XX errors and 429 (too many requests sent) errors as retryable ... All other errors are
considered as permanent failures"). When the retries are spent, or at once for a permanent failure, the message goes
to the subscription's dead-letter queue, or is dropped, counted and logged (``Fanout.client_failure``).

The effective HTTP/S retry policy: the subscription's ``DeliveryPolicy`` ``healthyRetryPolicy`` (unless the topic's
``http.disableSubscriptionOverrides`` is true), else the topic's ``DeliveryPolicy`` ``http.defaultHealthyRetryPolicy``,
else AWS's default (3 retries, 20 seconds apart); a field the chosen policy leaves out takes AWS's default, as
recorded for EffectiveDeliveryPolicy. The retries run through the policy's four phases in order: ``numNoDelayRetries``
at once, ``numMinDelayRetries`` ``minDelayTarget`` seconds apart, the backoff phase (the retries left) from
``minDelayTarget`` to ``maxDelayTarget`` by ``backoffFunction`` (:func:`backoff_delay_s`), then
``numMaxDelayRetries`` ``maxDelayTarget`` seconds apart. AWS adds jitter; sqsemu does not, so a manual clock walks
the retries at exact times.

Lambda ("Using AWS Lambda with Amazon SNS", "How Lambda handles errors and retries with asynchronous invocation"):
SNS invokes the function asynchronously with the SNS event (:func:`sqsemu.sns.envelope.lambda_event`), through the
server's function registry (the one event source mappings use). A function that does not exist is a client-side
failure (the SNS dead-letter queue page names a deleted function): dead-lettered or dropped at once. An Invoke
endpoint that cannot be reached, or answers an HTTP error, is Lambda unavailable: a server-side failure, retried on
AWS's schedule for AWS-managed endpoints (:data:`MANAGED_POLICY`: 3 retries at once, 2 one second apart, 10 backing
off exponentially from 1 to 20 seconds, then 100,000 twenty seconds apart: 100,015 retries over about 23 days).
Once the function has run, SNS's delivery is made; a function error is Lambda's to retry: two more runs, one minute
and then two minutes later (:data:`LAMBDA_RETRY_DELAYS_S`), after which the event is dropped and logged (sqsemu has
no function dead-letter queue or on-failure destination).

At most :data:`MAX_WAITING` deliveries wait for a retry at once (server-wide): a server-side failure beyond that is
treated as a spent policy (dead-lettered or dropped, and logged), so an endpoint that stays down cannot pile up
deliveries without bound. Deliveries waiting for a retry live in memory only: a restart forgets them.
"""

from __future__ import annotations

import asyncio
import logging
import math
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from sqsemu.clock import Clock
from sqsemu.engine.broker import Broker
from sqsemu.quiet import wait_until_quiet
from sqsemu.sns import envelope
from sqsemu.sns.fanout import Fanout
from sqsemu.sns.model import Subscription, Topic
from sqsemu.sns.publish import Publication

if TYPE_CHECKING:
    import httpx

    from sqsemu.eventsource.functions import Functions

__all__ = [
    "BACKOFF_FUNCTIONS",
    "HTTP_DEFAULT_POLICY",
    "HTTP_TIMEOUT_S",
    "LAMBDA_RETRY_DELAYS_S",
    "MANAGED_POLICY",
    "MAX_WAITING",
    "Pushers",
    "RetryPolicy",
    "backoff_delay_s",
    "http_delivery_policy",
]

logger = logging.getLogger("sqsemu.sns")

HTTP_TIMEOUT_S = 15.0
"""Longest wait for an HTTP/S endpoint's answer, connection included (seconds, wall clock)."""
MAX_ANSWER_BYTES = 64 * 1024
"""Bytes of an HTTP/S endpoint's answer read at most (the rest is left unread; only the status matters)."""
LAMBDA_TIMEOUT_S = 900.0
"""Longest run of a function SNS invokes (seconds): Lambda's largest function timeout; sqsemu knows no function's
own timeout."""
LAMBDA_RETRY_DELAYS_S = (60.0, 120.0)
"""Lambda's retries of a function error in an asynchronous invocation: one minute before the first, two minutes
before the second ("How Lambda handles errors and retries with asynchronous invocation")."""
MAX_WAITING = 1000
"""Deliveries waiting for a retry at once, server-wide (sqsemu's cap; AWS documents none)."""
MAX_CONNECTIONS = 100
"""Connections kept open to HTTP/S endpoints at most (all endpoints together)."""

BACKOFF_FUNCTIONS = ("linear", "arithmetic", "geometric", "exponential")
"""The backoffFunction values a delivery policy takes ("Creating an HTTP/S delivery policy")."""

_RETRY = "retry"
_PERMANENT = "permanent"
_DONE = "done"
_GONE = "gone"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """A delivery policy's retries: ``num_retries`` in all (after the first attempt), of which
    ``num_no_delay_retries`` at once, then ``num_min_delay_retries`` ``min_delay_s`` apart, then the backoff phase
    (the retries not in another phase) from ``min_delay_s`` to ``max_delay_s`` by ``backoff_function``, then
    ``num_max_delay_retries`` ``max_delay_s`` apart ("Amazon SNS message delivery retries", "Delivery policy
    stages"). Delays are seconds."""

    num_retries: int = 3
    num_no_delay_retries: int = 0
    num_min_delay_retries: int = 0
    num_max_delay_retries: int = 0
    min_delay_s: int = 20
    max_delay_s: int = 20
    backoff_function: str = "linear"

    @property
    def num_backoff_retries(self) -> int:
        """The retries of the backoff phase."""
        return max(
            0,
            self.num_retries - self.num_no_delay_retries - self.num_min_delay_retries - self.num_max_delay_retries,
        )

    def delay_s(self, retry: int) -> float:
        """The wait before retry number ``retry`` (1 for the first retry), in seconds; raises ``ValueError`` for a
        retry number outside ``1..num_retries``."""
        if not 1 <= retry <= self.num_retries:
            raise ValueError(f"retry {retry} is not one of this policy's {self.num_retries} retries")
        if retry <= self.num_no_delay_retries:
            return 0.0
        retry -= self.num_no_delay_retries
        if retry <= self.num_min_delay_retries:
            return float(self.min_delay_s)
        retry -= self.num_min_delay_retries
        backoff = self.num_backoff_retries
        if retry <= backoff:
            return backoff_delay_s(self.backoff_function, retry, backoff, self.min_delay_s, self.max_delay_s)
        return float(self.max_delay_s)

    @classmethod
    def from_document(cls, document: Mapping[str, Any] | None) -> RetryPolicy:
        """The policy of a ``healthyRetryPolicy`` (or ``defaultHealthyRetryPolicy``) object; a field it lacks (or
        gives as something other than a whole number) takes AWS's default (``minDelayTarget`` and
        ``maxDelayTarget`` 20, ``numRetries`` 3, the phase counts 0, ``linear``). The phases are trimmed to fit
        ``numRetries`` (no-delay first, then min-delay, then max-delay), and ``maxDelayTarget`` raised to
        ``minDelayTarget`` when below it, so that any stored document gives a usable policy."""
        given = document if isinstance(document, Mapping) else {}
        total = _whole(given.get("numRetries"), 3)
        no_delay = min(_whole(given.get("numNoDelayRetries"), 0), total)
        min_delay = min(_whole(given.get("numMinDelayRetries"), 0), total - no_delay)
        max_delay = min(_whole(given.get("numMaxDelayRetries"), 0), total - no_delay - min_delay)
        low = max(_whole(given.get("minDelayTarget"), 20), 0)
        high = max(_whole(given.get("maxDelayTarget"), 20), low)
        function = given.get("backoffFunction")
        if function not in BACKOFF_FUNCTIONS:
            function = "linear"
        return cls(total, no_delay, min_delay, max_delay, low, high, str(function))


HTTP_DEFAULT_POLICY = RetryPolicy()
"""AWS's HTTP/S default: 3 retries, 20 seconds apart ("Step 4: Optional - Set the delivery policy for the Amazon SNS
subscription"; the recorded EffectiveDeliveryPolicy)."""

MANAGED_POLICY = RetryPolicy(
    num_retries=100_015,
    num_no_delay_retries=3,
    num_min_delay_retries=2,
    num_max_delay_retries=100_000,
    min_delay_s=1,
    max_delay_s=20,
    backoff_function="exponential",
)
"""AWS's policy for AWS-managed endpoints (Lambda, SQS, Firehose), which no attribute changes ("Amazon SNS message
delivery retries", table "Delivery protocols and policies")."""


def backoff_delay_s(function: str, step: int, steps: int, low: float, high: float) -> float:
    """The wait before backoff retry ``step`` of ``steps`` (``1..steps``), from ``low`` to ``high`` seconds.

    AWS shows the four functions only as a graph ("Creating an HTTP/S delivery policy"); sqsemu's reading, with
    ``t = step / steps`` (the last step always waits ``high``):

    - ``linear``: the wait grows by the same amount each retry, ``low + (high - low) * t``;
    - ``arithmetic``: the growth itself grows by the same amount each retry, ``low + (high - low) * t**2``;
    - ``geometric``: each wait is the previous one times the same factor, ``low * (high / low) ** t`` (linear
      when ``low`` is 0);
    - ``exponential``: the growth doubles each retry, ``low + (high - low) * (2**step - 1) / (2**steps - 1)``.

    Raises ``ValueError`` for another function or a step outside ``1..steps``.
    """
    if not 1 <= step <= steps:
        raise ValueError(f"backoff step {step} is not one of {steps}")
    t = step / steps
    if function == "linear":
        return low + (high - low) * t
    if function == "arithmetic":
        return low + (high - low) * t * t
    if function == "geometric":
        if low <= 0:
            return high * t
        return float(low * (high / low) ** t)
    if function == "exponential":
        if steps > 60:  # (2**step - 1) / (2**steps - 1) is 2**(step - steps) to double precision (no overflow)
            return low + (high - low) * math.pow(2.0, step - steps)
        return low + (high - low) * (math.pow(2.0, step) - 1) / (math.pow(2.0, steps) - 1)
    raise ValueError(f"backoffFunction is one of {', '.join(BACKOFF_FUNCTIONS)}, not {function!r}")


def _whole(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _json_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return document if isinstance(document, dict) else {}


def http_delivery_policy(topic: Topic | None, sub: Subscription) -> tuple[RetryPolicy, str]:
    """The effective retry policy and Content-Type of an HTTP/S subscription (module docstring): the subscription's
    ``healthyRetryPolicy`` and ``requestPolicy.headerContentType`` when it sets them and the topic's
    ``http.disableSubscriptionOverrides`` is not true, else the topic's ``http.defaultHealthyRetryPolicy`` and
    ``http.defaultRequestPolicy.headerContentType``, else AWS's defaults (:data:`HTTP_DEFAULT_POLICY`,
    ``text/plain; charset=UTF-8``). The topic's ``http`` section serves ``https`` subscriptions too, as the
    SNS Developer Guide's topic policy has only that key."""
    section = _json_object(topic.attributes.get("DeliveryPolicy") if topic is not None else None).get("http")
    section = section if isinstance(section, dict) else {}
    retry = section.get("defaultHealthyRetryPolicy")
    request = section.get("defaultRequestPolicy")
    if section.get("disableSubscriptionOverrides") is not True:
        own = _json_object(sub.attributes.get("DeliveryPolicy"))
        if isinstance(own.get("healthyRetryPolicy"), dict):
            retry = own["healthyRetryPolicy"]
        if isinstance(own.get("requestPolicy"), dict) and isinstance(
            own["requestPolicy"].get("headerContentType"), str
        ):
            request = own["requestPolicy"]
    content_type = envelope.CONTENT_TYPE
    if isinstance(request, dict) and isinstance(request.get("headerContentType"), str):
        content_type = request["headerContentType"]
    return RetryPolicy.from_document(retry if isinstance(retry, dict) else None), content_type


@dataclass(slots=True)
class _Attempt:
    """One attempt's outcome: ``kind`` (``done``, ``retry``: a server-side failure, ``permanent``: a client-side
    one, ``gone``: the subscription went away while the delivery waited for a retry) and what happened (for the
    log)."""

    kind: str
    why: str = ""


def _resolve(future: asyncio.Future[None], _due: int) -> None:
    if not future.done():
        future.set_result(None)


class Pushers:
    """The HTTP/S and Lambda deliveries of one server's :class:`Fanout`: :meth:`install` registers them;
    :meth:`start` (on the running loop) before the first delivery, :meth:`aclose` at shutdown. ``functions`` is the
    server's function registry (None: Lambda subscriptions are recorded, not delivered). ``function_errors`` counts
    the events a function failed on, Lambda's retries spent."""

    def __init__(self, fanout: Fanout, broker: Broker, clock: Clock, functions: Functions | None = None) -> None:
        self.fanout = fanout
        self.broker = broker
        self.clock = clock
        self.functions = functions
        self.loop: asyncio.AbstractEventLoop | None = None
        self.function_errors = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._waiting = 0  # tasks waiting on the server's clock for a retry
        self._client: httpx.AsyncClient | None = None

    def install(self) -> None:
        """Register the HTTP/S pushers and confirmers, and the Lambda pusher when there is a function registry."""
        for protocol in ("http", "https"):
            self.fanout.pushers[protocol] = self.push_http
            self.fanout.confirmers[protocol] = self.confirm_http
        if self.functions is not None:
            self.fanout.pushers["lambda"] = self.push_lambda

    def start(self) -> None:
        """Note the running loop (server start-up): :meth:`settle_threadsafe` waits on it."""
        self.loop = asyncio.get_running_loop()

    # ------------------------------------------------------------------ supervision

    def _spawn(self, work: Callable[[], Awaitable[None]], what: str) -> None:
        """Run ``work()`` as a task of its own; whatever it raises is logged once and counted in ``fanout.errors``
        (the coroutine is made inside the task, so a task cancelled before it starts leaves none unawaited)."""
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(self._supervised(work, what))  # supervised
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _supervised(self, work: Callable[[], Awaitable[None]], what: str) -> None:
        try:
            await work()
        except asyncio.CancelledError:
            raise
        except Exception:
            self.fanout.errors += 1
            logger.exception("%s failed", what)

    def quiet(self) -> bool:
        """Whether nothing is being delivered now: every delivery waits on the clock for a retry, and every
        publication has been handed to its subscriptions."""
        return self.fanout._scheduled == 0 and len(self._tasks) == self._waiting

    async def settle(self, timeout_s: float = 10.0) -> None:
        """Return once :meth:`quiet` (after a publish or an ``advance``, the deliveries they caused are over or
        wait for the clock). Raises ``TimeoutError`` after ``timeout_s`` real seconds."""
        await wait_until_quiet(self.quiet, 3, timeout_s, "SNS deliveries still busy")

    def settle_threadsafe(self, timeout_s: float = 10.0) -> None:
        """:meth:`settle` from another thread (a test's). Raises ``RuntimeError`` before :meth:`start`."""
        if self.loop is None:
            raise RuntimeError("the SNS deliveries have not started")
        asyncio.run_coroutine_threadsafe(self.settle(timeout_s), self.loop).result(timeout_s + 5)

    async def aclose(self) -> None:
        """Cancel the deliveries in progress or waiting for a retry (server shutdown; they are not kept) and close
        the connections to HTTP/S endpoints. Never raises."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
            logger.info("SNS: %d HTTP/S or Lambda deliveries in progress or waiting for a retry dropped at shutdown",
                        len(tasks))  # fmt: skip
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.aclose()
            except Exception:
                logger.exception("closing the connections to HTTP/S subscribers failed; shutdown goes on")

    # ------------------------------------------------------------------ retries

    async def _wait(self, until_ms: int) -> None:
        """Wait until the server's clock reads ``until_ms`` (epoch ms)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.broker.schedule(until_ms, _resolve, future)
        self._waiting += 1
        try:
            await future
        finally:
            self._waiting -= 1

    async def _with_retries(
        self, attempt: Callable[[], Awaitable[_Attempt]], policy: RetryPolicy, wanted: Callable[[], bool]
    ) -> _Attempt:
        """Attempt until done, a permanent failure, or the policy's retries are spent (then ``retry`` with the last
        failure), or ``wanted()`` turns false while waiting (``gone``: nobody to deliver to). Each retry is due
        its delay after the previous attempt ended on the server's clock; a manual clock advanced past several
        retries runs them one after another."""
        retry = 0
        due = self.clock.now_ms()
        while True:
            started = self.clock.now_ms()
            result = await attempt()
            if result.kind != _RETRY or retry >= policy.num_retries:
                return result
            retry += 1
            due += self.clock.now_ms() - started + round(policy.delay_s(retry) * 1000)
            if due > self.clock.now_ms():
                if self._waiting >= MAX_WAITING:
                    return _Attempt(_RETRY, f"{result.why}; sqsemu holds at most {MAX_WAITING} deliveries waiting "
                                            "for a retry")  # fmt: skip
                await self._wait(due)
            else:
                await asyncio.sleep(0)
            if not wanted():
                return _Attempt(_GONE, "the subscription was deleted while the delivery waited for a retry")

    # ------------------------------------------------------------------ HTTP/S

    def _http(self) -> httpx.AsyncClient:
        import httpx  # at the first HTTP/S delivery, not at start-up

        client = self._client
        if client is None or client.is_closed:
            client = self._client = httpx.AsyncClient(
                trust_env=False,  # no proxy from the environment
                verify=ssl.create_default_context(),  # the system's trust store (SSL_CERT_FILE honoured by OpenSSL)
                limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS),
                follow_redirects=False,
                timeout=httpx.Timeout(HTTP_TIMEOUT_S),
            )
            client.headers.pop("accept", None)  # SNS sends none
            client.headers["accept-encoding"] = "gzip,deflate"  # as recorded
        return client

    async def _post(self, url: str, body: str, headers: list[tuple[str, str]]) -> _Attempt:
        """One POST: ``done`` on a 2xx, ``retry`` on a 5xx, a 429, no connection or no answer in time, else
        ``permanent``."""
        import httpx

        try:
            async with asyncio.timeout(HTTP_TIMEOUT_S):
                async with self._http().stream("POST", url, content=body.encode(), headers=headers) as answer:
                    status = answer.status_code
                    read = 0
                    async for chunk in answer.aiter_raw():
                        read += len(chunk)
                        if read >= MAX_ANSWER_BYTES:
                            break
        except (TimeoutError, httpx.TimeoutException):
            return _Attempt(_RETRY, f"no answer from {_shown(url)} within {HTTP_TIMEOUT_S:g} s")
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            return _Attempt(_PERMANENT, f"{_shown(url)} cannot be reached: {exc}")
        except httpx.HTTPError as exc:
            return _Attempt(_RETRY, f"{_shown(url)}: {type(exc).__name__}: {_first_line(exc)}")
        if 200 <= status < 300:
            return _Attempt(_DONE)
        if status >= 500 or status == 429:
            return _Attempt(_RETRY, f"{_shown(url)} answered HTTP {status}")
        return _Attempt(_PERMANENT, f"{_shown(url)} answered HTTP {status} (not retried: only 5xx and 429 are)")

    def _wanted(self, sub: Subscription) -> Callable[[], bool]:
        subscriptions = self.fanout.topics.subscriptions
        return lambda: subscriptions.get(sub.arn) is sub

    def push_http(self, sub: Subscription, publication: Publication) -> None:
        """Deliver ``publication`` to an HTTP/S subscription (a task; see the module docstring)."""
        self._spawn(
            lambda: self._http_delivery(sub, publication), f"delivering message {publication.message_id} to {sub.arn}"
        )

    async def _http_delivery(self, sub: Subscription, publication: Publication) -> None:
        topic = publication.topic
        policy, content_type = http_delivery_policy(topic, sub)
        if sub.raw:
            body = publication.message_for(sub.protocol)
        else:
            body = self.fanout.notification(sub, publication)
        headers = envelope.http_headers(
            envelope.NOTIFICATION, publication.message_id, topic.arn, sub.arn, sub.raw, content_type
        )
        try:
            result = await self._with_retries(
                lambda: self._post(sub.endpoint, body, headers), policy, self._wanted(sub)
            )
        except asyncio.CancelledError:
            raise
        except Exception:
            self.fanout.counts(topic).failed += 1
            raise
        self._settled(sub, publication, result)

    def _settled(self, sub: Subscription, publication: Publication, result: _Attempt) -> None:
        """Count a delivery's end: delivered, or failed (to the dead-letter queue, or dropped; dropped only when
        the subscription is gone)."""
        if result.kind == _DONE:
            self.fanout.counts(publication.topic).delivered += 1
        elif result.kind == _GONE:
            self.fanout.counts(publication.topic).failed += 1
            logger.info("subscription %s: message %s dropped: %s", sub.arn, publication.message_id, result.why)
        elif result.kind == _RETRY:
            self.fanout.client_failure(sub, publication, f"retries spent: {result.why}")
        else:
            self.fanout.client_failure(sub, publication, result.why)

    def confirm_http(self, sub: Subscription, document: str, kind: str) -> None:
        """Send a SubscriptionConfirmation or UnsubscribeConfirmation (``kind``) to an HTTP/S endpoint (a task),
        retried as the subscription's notifications are; when the retries are spent it is logged and dropped. Without
        a running event loop (a caller outside the server) it is logged, not sent."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            logger.warning("subscription %s: its %s is not sent: no event loop runs here", sub.arn, kind)
            return
        self._spawn(lambda: self._confirmation(sub, document, kind), f"sending the {kind} of {sub.arn}")

    async def _confirmation(self, sub: Subscription, document: str, kind: str) -> None:
        fields = orjson.loads(document)
        topic = self.fanout.topics.by_arn.get(sub.topic_arn)
        policy, _ = http_delivery_policy(topic, sub)
        subscription_arn = sub.arn if kind == envelope.UNSUBSCRIBE_CONFIRMATION else None
        headers = envelope.http_headers(kind, fields["MessageId"], fields["TopicArn"], subscription_arn, False)
        token = sub.token
        current = self._wanted(sub)
        if kind == envelope.SUBSCRIPTION_CONFIRMATION:  # while the subscription still waits for this very one
            wanted: Callable[[], bool] = lambda: current() and sub.pending and sub.token == token  # noqa: E731
        else:
            wanted = lambda: True  # noqa: E731
        result = await self._with_retries(lambda: self._post(sub.endpoint, document, headers), policy, wanted)
        if result.kind == _RETRY:
            logger.warning("subscription %s: its %s was not delivered (retries spent): %s", sub.arn, kind, result.why)
        elif result.kind == _PERMANENT:
            logger.warning("subscription %s: its %s was not delivered: %s", sub.arn, kind, result.why)

    # ------------------------------------------------------------------ Lambda

    def push_lambda(self, sub: Subscription, publication: Publication) -> None:
        """Deliver ``publication`` to a Lambda subscription (a task; see the module docstring)."""
        self._spawn(
            lambda: self._lambda_delivery(sub, publication), f"delivering message {publication.message_id} to {sub.arn}"
        )

    def lambda_event(self, sub: Subscription, publication: Publication) -> dict[str, Any]:
        """The event the subscription's function gets (its SignatureVersion is always 1, as recorded)."""
        return envelope.lambda_event(
            subscription_arn=sub.arn,
            message_id=publication.message_id,
            topic_arn=publication.topic.arn,
            subject=publication.subject,
            message=publication.message_for(sub.protocol),
            timestamp_ms=publication.timestamp_ms,
            signature_version="1",
            signing=self.fanout.signing,
            cert_url=self.fanout.cert_url(publication.url_base),
            unsubscribe_url=self.fanout.unsubscribe_url(publication.url_base, sub),
            message_attributes=publication.attributes,
        )

    async def _invoke(self, sub: Subscription, event: dict[str, Any]) -> _Attempt:
        """One asynchronous invocation: ``done`` when the function ran (``why`` holds a function error, empty when
        it succeeded), ``retry`` when Lambda is unreachable, ``permanent`` when there is no such function."""
        functions = self.functions
        assert functions is not None
        parts = sub.endpoint.split(":")
        name, account = parts[6], parts[4]
        arn = ":".join(parts[:7])
        expired: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.broker.schedule(self.clock.now_ms() + int(LAMBDA_TIMEOUT_S * 1000), _resolve, expired)
        try:
            outcome = await functions.invoke(name, arn, event, LAMBDA_TIMEOUT_S, expired, account)
        finally:
            if not expired.done():
                expired.set_result(None)
        if outcome.kind == "ok":
            return _Attempt(_DONE)
        if outcome.kind == "function_error":
            if outcome.exception is not None:
                logger.info("function %s failed on an SNS event", name, exc_info=outcome.exception)
            return _Attempt(_DONE, outcome.error or "function error")
        if outcome.kind == "unreachable":
            return _Attempt(_RETRY, outcome.error)
        return _Attempt(_PERMANENT, outcome.error or f"Function not found: {arn}")

    async def _lambda_delivery(self, sub: Subscription, publication: Publication) -> None:
        topic = publication.topic
        event = self.lambda_event(sub, publication)
        try:
            result = await self._with_retries(lambda: self._invoke(sub, event), MANAGED_POLICY, self._wanted(sub))
        except asyncio.CancelledError:
            raise
        except Exception:
            self.fanout.counts(topic).failed += 1
            raise
        self._settled(sub, publication, result)
        if result.kind != _DONE or not result.why:
            return
        why = result.why
        due = self.clock.now_ms()
        for delay_s in LAMBDA_RETRY_DELAYS_S:  # Lambda's own retries of a function error, timed as _with_retries
            due += round(delay_s * 1000)
            if due > self.clock.now_ms():
                await self._wait(due)
            started = self.clock.now_ms()
            again = await self._invoke(sub, event)
            due += self.clock.now_ms() - started
            if again.kind == _DONE and not again.why:
                return
            why = again.why
        self.function_errors += 1
        logger.warning(
            "function %s failed on message %s of %s %d times (Lambda's retries spent); the event is dropped: %s",
            sub.endpoint, publication.message_id, topic.arn, 1 + len(LAMBDA_RETRY_DELAYS_S), why,
        )  # fmt: skip


def _shown(url: str) -> str:
    """``url`` without the user and password it may hold (Basic authentication)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = host.rsplit("@", 1)[1]
    return f"{scheme}://{host}{slash}{path}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().split("\n", 1)[0]
    return text[:300] or type(exc).__name__
