"""The SQS side of the data source: boto3 clients and the few calls it makes, with their batching and retries.

Everything goes through the public SQS API (ReceiveMessage, SendMessageBatch, DeleteMessageBatch,
ChangeMessageVisibilityBatch, GetQueueUrl, GetQueueAttributes), exactly as against Amazon SQS; only the endpoint
differs. Clients are cached per process and per connection settings (boto3 clients are thread-safe), so a
reused Python worker does not pay for a new client on every task.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from sqsemu.spark.options import ConnectionOptions, SQSOptionError, region_from_queue_url

__all__ = [
    "SQSBatchError",
    "change_visibility",
    "delete_messages",
    "get_client",
    "get_json_client",
    "queue_is_fifo",
    "receive_messages",
    "resolve_queue_url",
    "run_batches",
]

log = logging.getLogger("sqsemu.spark")

BATCH_SIZE = 10  # SQS's maximum number of entries per *Batch call and messages per ReceiveMessage
CONCURRENCY = 4  # parallel calls of a batch write task, and the default of the calls below
BATCH_MAX_BYTES = 262_144  # the payload a SendMessageBatch may carry on every SQS (AWS raised it to 1 MiB in 2025)
_clients: dict[tuple[Any, ...], Any] = {}
_json_clients: dict[tuple[Any, ...], Any] = {}
_clients_lock = threading.Lock()


class SQSBatchError(RuntimeError):
    """Entries of a batch call still failed after the retries. ``failures`` holds ``(entry id, code, message)``."""

    def __init__(self, action: str, queue_url: str, failures: Sequence[tuple[str, str, str]]) -> None:
        sample = "; ".join(f"{code}: {message}" for _, code, message in failures[:3])
        super().__init__(
            f"{action} on {queue_url}: {len(failures)} entr{'y' if len(failures) == 1 else 'ies'} failed ({sample})"
        )
        self.action = action
        self.queue_url = queue_url
        self.failures = list(failures)


def _endpoint_for(connection: ConnectionOptions, queue_url: str | None) -> str | None:
    """The endpoint to use: the option, else the scheme and host of a non-AWS queue URL, else boto3's own."""
    if connection.endpoint_url:
        return connection.endpoint_url
    if queue_url and region_from_queue_url(queue_url) is None:
        parts = urlsplit(queue_url)
        return f"{parts.scheme}://{parts.netloc}"
    return None


def _region_for(connection: ConnectionOptions, queue_url: str | None) -> str:
    if connection.region:
        return connection.region
    if queue_url:
        region = region_from_queue_url(queue_url)
        if region:
            return region
    import boto3

    region = boto3.session.Session().region_name
    if region:
        return str(region)
    raise SQSOptionError(
        "sqs data source: no region: set option 'region' (or AWS_REGION / AWS_DEFAULT_REGION, or use an AWS queue URL)"
    )


def get_client(connection: ConnectionOptions, queue_url: str | None = None, max_attempts: int = 5) -> Any:
    """A boto3 SQS client for ``connection`` (cached per process). ``max_attempts`` is botocore's standard-mode
    retry budget per call (throttling, 5xx and connection errors). Raises :class:`SQSOptionError` without a
    region. The data source's frequent calls go through :func:`get_json_client` instead."""
    return _clients_for(connection, queue_url, max_attempts)[0]


def get_json_client(connection: ConnectionOptions, queue_url: str | None = None, max_attempts: int = 5) -> Any:
    """The lean :class:`sqsemu.spark.jsonclient.SQSJsonClient` for ``connection`` (cached per process), on the
    endpoint, region and credentials boto3 resolves for it. Raises :class:`SQSOptionError` without a region; its
    calls raise botocore's ``NoCredentialsError`` when the default chain finds no credentials.

    When the endpoint is known (the ``endpointUrl`` option, or a queue URL that is not Amazon's) no boto3 client
    is built: importing boto3 and loading the SQS service model cost about 0.2 s of CPU in every process that
    starts a query; the credentials are then the options' keys, or botocore's default chain when they are not
    given."""
    endpoint = _endpoint_for(connection, queue_url or connection.queue_url)
    if endpoint is None:
        return _clients_for(connection, queue_url, max_attempts)[1]
    region = _region_for(connection, queue_url or connection.queue_url)
    key = ("json", *_cache_key(connection, endpoint, region, max_attempts))
    with _clients_lock:
        client = _json_clients.get(key)
        if client is None:
            from sqsemu.spark.jsonclient import SQSJsonClient

            credentials: Callable[[], Any]
            if connection.access_key_id and connection.secret_access_key:
                static = _StaticCredentials(
                    connection.access_key_id, connection.secret_access_key, connection.session_token
                )
                credentials = lambda: static  # noqa: E731
            else:
                credentials = _default_chain
            client = SQSJsonClient(endpoint, region, credentials, max_attempts=max_attempts, read_timeout=60)
            _json_clients[key] = client
    return client


class _StaticCredentials:
    """Credentials given as options, in the shape of botocore's (``get_frozen_credentials()`` and its fields)."""

    def __init__(self, access_key: str, secret_key: str, token: str | None) -> None:
        self.access_key = access_key
        self.secret_key = secret_key
        self.token = token

    def get_frozen_credentials(self) -> _StaticCredentials:
        return self


def _default_chain() -> Any:
    """botocore's default credential chain (environment, shared files, container and instance roles...)."""
    import botocore.session

    return botocore.session.get_session().get_credentials()


def _cache_key(
    connection: ConnectionOptions, endpoint: str | None, region: str, max_attempts: int
) -> tuple[str | int | None, ...]:
    """What a cached client is looked up by: endpoint, region, credentials and retry budget."""
    return (
        endpoint,
        region,
        connection.access_key_id,
        connection.secret_access_key,
        connection.session_token,
        max_attempts,
    )


def _clients_for(connection: ConnectionOptions, queue_url: str | None, max_attempts: int) -> tuple[Any, Any]:
    endpoint = _endpoint_for(connection, queue_url or connection.queue_url)
    region = _region_for(connection, queue_url or connection.queue_url)
    key = _cache_key(connection, endpoint, region, max_attempts)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            import boto3
            from botocore.config import Config as BotoConfig

            from sqsemu.spark.jsonclient import SQSJsonClient

            config = BotoConfig(
                retries={"mode": "standard", "total_max_attempts": max_attempts},
                max_pool_connections=16,
                connect_timeout=10,
                read_timeout=60,  # > the 20 s long-poll maximum
            )
            session = boto3.session.Session(
                aws_access_key_id=connection.access_key_id,
                aws_secret_access_key=connection.secret_access_key,
                aws_session_token=connection.session_token,
            )
            client = session.client("sqs", endpoint_url=endpoint, region_name=region, config=config)
            _clients[key] = client
            _json_clients[key] = SQSJsonClient(
                str(client.meta.endpoint_url),
                str(client.meta.region_name),
                session.get_credentials,
                max_attempts=max_attempts,
                read_timeout=60,
            )
    return client, _json_clients[key]


def resolve_queue_url(connection: ConnectionOptions) -> str:
    """The queue URL: the ``queueUrl`` option as given, or GetQueueUrl of ``queueName``. Raises ``ValueError``
    naming the queue when it does not exist."""
    if connection.queue_url:
        return connection.queue_url
    from botocore.exceptions import ClientError

    assert connection.queue_name is not None
    try:
        return str(get_client(connection).get_queue_url(QueueName=connection.queue_name)["QueueUrl"])
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        raise ValueError(
            f"sqs data source: queue {connection.queue_name!r} not found in region {connection.region} ({code})"
        ) from exc


def queue_is_fifo(queue_url: str) -> bool:
    """Whether the queue is FIFO (its name ends in ``.fifo``, as SQS requires)."""
    return queue_url.rstrip("/").endswith(".fifo")


def receive_messages(
    client: Any,
    queue_url: str,
    max_messages: int,
    wait_time_seconds: int,
    visibility_timeout: int,
    attribute_names: Sequence[str],
    message_attribute_names: Sequence[str],
    deadline: float | None = None,
    concurrency: int = CONCURRENCY,
) -> list[dict[str, Any]]:
    """Receive up to ``max_messages`` messages, each invisible for ``visibility_timeout`` seconds.

    A first ReceiveMessage long-polls ``wait_time_seconds``; if it comes back full (ten), up to ``concurrency``
    threads go on with short polls until one comes back empty, the count is reached (never exceeded) or
    ``time.monotonic()`` passes ``deadline``. Returns boto3's message dicts (each thread's in the order received).
    """

    def receive(count: int, wait: int) -> list[dict[str, Any]]:
        answer = client.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=count,
            WaitTimeSeconds=wait,
            VisibilityTimeout=visibility_timeout,
            MessageSystemAttributeNames=list(attribute_names),
            MessageAttributeNames=list(message_attribute_names),
        )
        return list(answer.get("Messages") or [])

    received = receive(min(BATCH_SIZE, max_messages), wait_time_seconds)
    if len(received) < min(BATCH_SIZE, max_messages) or len(received) >= max_messages:
        return received
    lock = threading.Lock()
    state = {"claimed": len(received), "empty": False}

    def worker() -> list[dict[str, Any]]:
        mine: list[dict[str, Any]] = []
        while True:
            with lock:
                count = min(BATCH_SIZE, max_messages - state["claimed"])
                late = deadline is not None and time.monotonic() >= deadline
                if count <= 0 or state["empty"] or late:
                    return mine
                state["claimed"] += count
            messages = receive(count, 0)
            mine.extend(messages)
            with lock:
                state["claimed"] -= count - len(messages)
                if not messages:
                    state["empty"] = True

    threads = max(1, min(concurrency, (max_messages - len(received) + BATCH_SIZE - 1) // BATCH_SIZE))
    if threads == 1:
        return received + worker()
    with ThreadPoolExecutor(threads, thread_name_prefix="sqs-receive") as pool:
        for part in pool.map(lambda _: worker(), range(threads)):
            received.extend(part)
    return received


def run_batches(
    action: str,
    queue_url: str,
    entries: Sequence[dict[str, Any]],
    call: Callable[[list[dict[str, Any]]], dict[str, Any]],
    max_retries: int,
    retryable: Callable[[dict[str, Any]], bool],
    concurrency: int = 1,
) -> list[tuple[str, str, str]]:
    """Send ``entries`` (each with a unique ``Id``) through ``call`` (one *Batch request) in groups of ten,
    ``concurrency`` calls at a time.

    Groups also keep their message payloads under 256 KiB. Entries the answer lists under ``Failed`` are retried,
    up to ``max_retries`` times with a short exponential back-off, when ``retryable(failure)`` says so. Returns
    the entries that still failed as ``(entry id, code, message)``; an exception of the call itself (after
    botocore's own retries) propagates.
    """
    by_id = {entry["Id"]: entry for entry in entries}
    pending = list(entries)
    failed: list[tuple[str, str, str]] = []
    attempt = 0
    while pending:
        retry: list[dict[str, Any]] = []
        answers = _call_all(call, list(_groups(pending)), concurrency)
        for answer in answers:
            for failure in answer.get("Failed") or []:
                entry_id = str(failure.get("Id"))
                code = str(failure.get("Code", "Unknown"))
                message = str(failure.get("Message", ""))
                if attempt < max_retries and retryable(failure) and entry_id in by_id:
                    retry.append(by_id[entry_id])
                else:
                    failed.append((entry_id, code, message))
        if retry:
            attempt += 1
            log.info("%s on %s: retrying %d failed entries (attempt %d)", action, queue_url, len(retry), attempt)
            time.sleep(min(2.0, 0.05 * 2**attempt))
        pending = retry
    return failed


def _call_all(
    call: Callable[[list[dict[str, Any]]], dict[str, Any]], groups: list[list[dict[str, Any]]], concurrency: int
) -> list[dict[str, Any]]:
    """``call`` on every group, up to ``concurrency`` at once; the answers in any order. Each thread takes the next
    group itself (no future per call); the first exception is raised once every thread has stopped."""
    if concurrency <= 1 or len(groups) <= 1:
        return [call(group) for group in groups]
    answers: list[dict[str, Any]] = []
    errors: list[BaseException] = []
    todo = iter(groups)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                group = None if errors else next(todo, None)
            if group is None:
                return
            try:
                answer = call(group)
            except BaseException as exc:
                with lock:
                    errors.append(exc)
                return
            with lock:
                answers.append(answer)

    threads = [
        threading.Thread(target=worker, name="sqs-batch", daemon=True) for _ in range(min(concurrency, len(groups)))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return answers


def entry_bytes(entry: dict[str, Any]) -> int:
    """The payload size SQS counts for one SendMessageBatch entry: body plus attribute names, types and values."""
    size = len(str(entry.get("MessageBody", "")).encode())
    for name, value in (entry.get("MessageAttributes") or {}).items():
        size += len(name.encode()) + len(str(value.get("DataType", "")).encode())
        size += len(str(value.get("StringValue", "")).encode()) + len(value.get("BinaryValue", b""))
    return size


def _groups(entries: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Groups of at most ten entries whose payloads add up to at most 256 KiB (a larger entry goes alone)."""
    group: list[dict[str, Any]] = []
    size = 0
    for entry in entries:
        n = entry_bytes(entry)
        if group and (len(group) == BATCH_SIZE or size + n > BATCH_MAX_BYTES):
            yield group
            group, size = [], 0
        group.append(entry)
        size += n
    if group:
        yield group


def _server_fault(failure: dict[str, Any]) -> bool:
    return not bool(failure.get("SenderFault", False))


def delete_messages(
    client: Any,
    queue_url: str,
    receipt_handles: Iterable[str],
    max_retries: int = 3,
    concurrency: int = CONCURRENCY,
) -> list[tuple[str, str, str]]:
    """DeleteMessageBatch every receipt handle, in tens (``concurrency`` calls at a time), retrying server-side
    entry failures. Returns the entries that still failed ``(index, code, message)`` (e.g.
    ``ReceiptHandleIsInvalid``); never raises for an entry (a call that fails as a whole raises botocore's error)."""
    entries = [{"Id": str(i), "ReceiptHandle": handle} for i, handle in enumerate(receipt_handles)]
    if not entries:
        return []
    return run_batches(
        "DeleteMessageBatch",
        queue_url,
        entries,
        lambda group: client.delete_message_batch(QueueUrl=queue_url, Entries=group),
        max_retries,
        _server_fault,
        concurrency,
    )


def change_visibility(
    client: Any,
    queue_url: str,
    receipt_handles: Iterable[str],
    visibility_timeout: int,
    concurrency: int = CONCURRENCY,
) -> list[tuple[str, str, str]]:
    """ChangeMessageVisibilityBatch every receipt handle to ``visibility_timeout`` seconds from now, in tens
    (``concurrency`` calls at a time), with one retry of server-side entry failures. Returns the entries that
    failed."""
    entries = [
        {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": visibility_timeout}
        for i, handle in enumerate(receipt_handles)
    ]
    if not entries:
        return []
    return run_batches(
        "ChangeMessageVisibilityBatch",
        queue_url,
        entries,
        lambda group: client.change_message_visibility_batch(QueueUrl=queue_url, Entries=group),
        1,
        _server_fault,
        concurrency,
    )
