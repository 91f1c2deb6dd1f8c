"""A lean SQS client for the data source's hot calls, speaking the AWS JSON 1.0 protocol directly.

Why: a micro-batch of 10,000 messages costs 1,000 ReceiveMessage and 1,000 DeleteMessageBatch calls, all made by
one Python process. Through boto3 each call costs about 2.5 ms of CPU (event hooks, user agent, endpoint rules,
shape-driven parsing), which caps a stream near 2,000 messages/s however many calls run at once; here a call
costs a fraction of that. Signing (botocore's ``SigV4Auth``), credentials (botocore's default chain, or boto3's
session) and HTTP (the standard library's ``http.client``) stay the libraries'; what is done here is the request
body and the answer's JSON (orjson), and a pool of keep-alive connections that every thread of the process shares
(a short-lived thread reuses an idle connection instead of opening one).

:class:`SQSJsonClient` has the boto3 client's method names, keyword arguments and answer shapes for the calls the
data source makes often (``receive_message``, ``delete_message_batch``, ``change_message_visibility_batch``,
``send_message_batch``, ``get_queue_attributes``), so the batching helpers of :mod:`sqsemu.spark.client` take
either. Wire format: AWS SQS API Reference, "Making API requests" (AWS JSON 1.0: ``POST /``,
``X-Amz-Target: AmazonSQS.<Action>``, ``Content-Type: application/x-amz-json-1.0``); binary message attribute
values travel base64-encoded in JSON and are bytes on the Python side, as with boto3. Errors raise botocore's
``ClientError`` with the code boto3 would give (the ``x-amzn-query-error`` header's code when present, else the
``__type``'s name). Retries follow botocore's "standard" mode in substance: throttling errors, HTTP 5xx and
connection failures are retried with capped exponential back-off and jitter, ``max_attempts`` tries in all.
"""

from __future__ import annotations

import base64
import http.client
import random
import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson

__all__ = ["SQSJsonClient"]

_THROTTLING = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "RequestThrottled",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
    "KmsThrottled",
}
# Server-side failures worth another try whatever their HTTP status (SQS's own ServiceUnavailable, InternalError).
_TRANSIENT = {
    "RequestTimeout",
    "RequestTimeoutException",
    "PriorRequestNotComplete",
    "InternalError",
    "InternalFailure",
    "ServiceUnavailable",
}
_MAX_BACKOFF_S = 20.0
_BASE_BACKOFF_S = 0.05
_MAX_IDLE = 128  # idle keep-alive connections the pool keeps (more are closed when given back)


class _Retry(Exception):
    """An attempt failed in a way worth another try; ``error`` is what to raise when the attempts run out."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class SQSJsonClient:
    """An SQS client for a few actions over AWS JSON 1.0, thread-safe (a pool of keep-alive connections that all
    threads share: a call takes an idle one or opens one, and gives it back when the answer is read).

    ``endpoint_url``: ``http(s)://host[:port]``; ``region``: the signing region; ``credentials``: a function
    returning botocore credentials or None (a boto3 session's ``get_credentials``), called at the first request
    (``NoCredentialsError`` then when it finds none); ``get_frozen_credentials()`` is called per request, so
    refreshing credentials keep working;
    ``max_attempts``: tries per call; ``connect_timeout`` / ``read_timeout``: seconds (the read timeout must
    exceed the 20-second long-poll maximum).
    """

    def __init__(
        self,
        endpoint_url: str,
        region: str,
        credentials: Callable[[], Any],
        max_attempts: int = 5,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
    ) -> None:
        parts = urlsplit(endpoint_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"sqs data source: endpoint {endpoint_url!r} is not http(s)://host[:port]")
        self.endpoint_url = f"{parts.scheme}://{parts.netloc}"
        self.region = region
        self.max_attempts = max(1, max_attempts)
        self._https = parts.scheme == "https"
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._find_credentials = credentials
        self._credentials: Any = None
        self._netloc = parts.netloc
        self._idle: list[http.client.HTTPConnection] = []
        self._idle_lock = threading.Lock()

    # ------------------------------------------------------------------ the actions

    def receive_message(self, **params: Any) -> dict[str, Any]:
        """ReceiveMessage; ``Messages`` as boto3 gives them (binary attribute values as bytes)."""
        answer = self.call("ReceiveMessage", params)
        for message in answer.get("Messages") or ():
            for value in (message.get("MessageAttributes") or {}).values():
                _decode_binary(value)
        return answer

    def delete_message_batch(self, **params: Any) -> dict[str, Any]:
        """DeleteMessageBatch; ``Successful`` and ``Failed`` entries."""
        return self.call("DeleteMessageBatch", params)

    def change_message_visibility_batch(self, **params: Any) -> dict[str, Any]:
        """ChangeMessageVisibilityBatch; ``Successful`` and ``Failed`` entries."""
        return self.call("ChangeMessageVisibilityBatch", params)

    def send_message_batch(self, **params: Any) -> dict[str, Any]:
        """SendMessageBatch; binary attribute values may be given as bytes (sent base64-encoded)."""
        entries = []
        for entry in params.get("Entries") or ():
            attributes = entry.get("MessageAttributes")
            if attributes:
                entry = {**entry, "MessageAttributes": {k: _encode_binary(v) for k, v in attributes.items()}}
            entries.append(entry)
        return self.call("SendMessageBatch", {**params, "Entries": entries})

    def get_queue_attributes(self, **params: Any) -> dict[str, Any]:
        """GetQueueAttributes; ``Attributes`` as a dict of strings."""
        return self.call("GetQueueAttributes", params)

    # ------------------------------------------------------------------ the exchange

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """One SQS action with its JSON parameters; the decoded answer. Raises ``botocore.exceptions.ClientError``
        for an error answer (after the retries, when it is retryable) and the last connection error otherwise."""
        body = orjson.dumps(params)
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._attempt(action, body)
            except _Retry as retry:
                if attempt >= self.max_attempts:
                    raise retry.error from None
                time.sleep(random.random() * min(_MAX_BACKOFF_S, _BASE_BACKOFF_S * 2**attempt))

    def _connection(self, fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
        """An idle keep-alive connection from the pool (the most recently used; not when ``fresh``), or a new one;
        and whether it was reused."""
        if not fresh:
            with self._idle_lock:
                if self._idle:
                    return self._idle.pop(), True
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return kind(self._netloc, timeout=self._connect_timeout), False

    def _give_back(self, connection: http.client.HTTPConnection) -> None:
        with self._idle_lock:
            if len(self._idle) < _MAX_IDLE:
                self._idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        """Close the idle connections (calls under way close theirs when they end)."""
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _headers(self, action: str, body: bytes) -> dict[str, str]:
        """The signed headers of a call (botocore's ``SigV4Auth``)."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        if self._credentials is None:
            from botocore.exceptions import NoCredentialsError

            self._credentials = self._find_credentials() if self._find_credentials is not None else None
            if self._credentials is None:
                raise NoCredentialsError()
        request = AWSRequest(
            method="POST",
            url=self.endpoint_url + "/",
            data=body,
            headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"AmazonSQS.{action}"},
        )
        SigV4Auth(self._credentials.get_frozen_credentials(), "sqs", self.region).add_auth(request)
        return dict(request.headers.items())

    def _exchange(
        self, connection: http.client.HTTPConnection, headers: dict[str, str], body: bytes
    ) -> tuple[http.client.HTTPResponse, bytes]:
        """Send one request on ``connection`` (connecting it first when it is new) and read the whole answer."""
        if connection.sock is None:
            connection.connect()
            # http.client writes the headers and the body in two sends: without TCP_NODELAY, Nagle's algorithm
            # holds the body back until the headers are acknowledged, and delayed ACKs make that up to 40 ms.
            sock = connection.sock
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.request("POST", "/", body=body, headers=headers)
        if connection.sock is not None:
            connection.sock.settimeout(self._read_timeout)
        response = connection.getresponse()
        return response, response.read()

    def _attempt(self, action: str, body: bytes) -> dict[str, Any]:
        headers = self._headers(action, body)
        fresh = False
        while True:
            connection, reused = self._connection(fresh)
            try:
                response, raw = self._exchange(connection, headers, body)
                break
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                if reused and isinstance(exc, ConnectionResetError | BrokenPipeError | http.client.RemoteDisconnected):
                    # An idle connection the server had closed (its keep-alive timeout): the request never got
                    # an answer; send it again at once on a new connection, without counting an attempt.
                    fresh = True
                    continue
                raise _Retry(exc) from None
        if response.will_close:
            connection.close()
        else:
            self._give_back(connection)
        status = response.status
        if status == 200:
            return dict(orjson.loads(raw)) if raw.strip() else {}
        error = _client_error(action, status, raw, response.getheader("x-amzn-query-error"))
        code = error.response["Error"]["Code"]
        if status >= 500 or status == 429 or code in _THROTTLING or code in _TRANSIENT:
            raise _Retry(error)
        raise error


def _client_error(action: str, status: int, raw: bytes, query_error: str | None) -> Any:
    """botocore's ``ClientError`` for an error answer, with the code boto3 would report."""
    from botocore.exceptions import ClientError

    try:
        document = orjson.loads(raw) if raw.strip() else {}
    except ValueError:
        document = {}
    if not isinstance(document, dict):
        document = {}
    code = str(document.get("__type") or document.get("code") or f"HTTP{status}").rsplit("#", 1)[-1]
    message = str(document.get("message") or document.get("Message") or "")
    if query_error:
        code = query_error.split(";", 1)[0] or code
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}},
        action,
    )


def _decode_binary(value: dict[str, Any]) -> None:
    if isinstance(value.get("BinaryValue"), str):
        value["BinaryValue"] = base64.b64decode(value["BinaryValue"])
    if value.get("BinaryListValues"):
        values = value["BinaryListValues"]
        value["BinaryListValues"] = [base64.b64decode(v) if isinstance(v, str) else v for v in values]


def _encode_binary(value: dict[str, Any]) -> dict[str, Any]:
    binary = value.get("BinaryValue")
    if isinstance(binary, bytes | bytearray | memoryview):
        return {**value, "BinaryValue": base64.b64encode(bytes(binary)).decode()}
    return value
