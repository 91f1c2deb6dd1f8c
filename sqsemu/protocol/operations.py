"""The single table of operations: action name → (request class, handler).

One table of operations (docs/architecture.md, principle 2). A handler resolves the queue, calls the broker and builds
the response dict in JSON-model form; the wire encoders (``protocol.json`` / ``protocol.query``) render it. Handlers
decode nothing and validate only what the protocol layer owns: QueueUrl/QueueName presence (MissingParameter),
ListQueues-style ``MaxResults`` (1..1000) and ``NextToken`` (InvalidParameterValue). Everything else is passed through
to the engine, which raises the SQS errors. Receive-side attribute filtering and MD5 digests (docs/behaviour.md 4.7,
4.8, 8) happen here.

"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.elsewhere import hint_missing_queue
from sqsemu.engine.errors import (
    InvalidParameterValue,
    MissingParameter,
    QueueDoesNotExist,
    SQSError,
    invalid_value,
)
from sqsemu.engine.message import NO_EXTRAS, Message, MessageAttributeValue, ReceiptEntry, SendEntry
from sqsemu.protocol import md5
from sqsemu.protocol import shapes as s
from sqsemu.protocol.errors import error_info
from sqsemu.protocol.urls import parse_queue_url, queue_url

Response = dict[str, Any]


class Context:
    """What a handler knows about its request besides the decoded request object.

    ``caller`` is the caller's namespace (``urls.caller_namespace``); ``url_base`` is ``scheme://host`` for queue
    URLs; ``path_queue`` is ``(account, name)`` when a Query request was sent to a queue URL; ``trace_header`` is
    the ``X-Amzn-Trace-Id`` header; ``watch_disconnect`` starts watching for the client going away and returns a
    future resolved when it does (for long polls); ``sender_id`` is the ``SenderId`` of the messages the caller
    sends (``--auth iam``: an IAM user's or role's, :meth:`sqsemu.security.iam.AccessControl.sender_id`), the
    caller's account id when None. ``plain_text`` True says every string of the request is known to hold only
    characters allowed in a message body (``sqsemu.protocol.json.plain_strings``): its bodies need no check.

    A plain class, not a dataclass: one is made per call, and compiled (mypyc) a dataclass's ``__init__`` is the
    interpreted one the dataclasses module writes, where this one is compiled.
    """

    __slots__ = (
        "broker",
        "caller",
        "url_base",
        "path_queue",
        "trace_header",
        "watch_disconnect",
        "sender_id",
        "plain_text",
    )

    def __init__(
        self,
        broker: Broker,
        caller: Namespace,
        url_base: str,
        path_queue: tuple[str, str] | None = None,
        trace_header: str | None = None,
        watch_disconnect: Callable[[], asyncio.Future[None]] | None = None,
        sender_id: str | None = None,
        plain_text: bool = False,
    ) -> None:
        self.broker = broker
        self.caller = caller
        self.url_base = url_base
        self.path_queue = path_queue
        self.trace_header = trace_header
        self.watch_disconnect = watch_disconnect
        self.sender_id = sender_id if sender_id is not None else caller.account_id
        self.plain_text = plain_text

    def queue_url(self, queue: Queue) -> str:
        """The URL of ``queue`` as this request sees it."""
        return queue_url(self.url_base, queue)

    def resolve(self, url: str | None) -> Queue:
        """The queue a request addresses: its ``QueueUrl`` parameter, else the request path's queue.

        Raises MissingParameter (``The request must contain the parameter QueueUrl.``) when neither is given, and
        whatever ``Broker.get_queue`` raises (QueueDoesNotExist).
        """
        if url:
            account, name = parse_queue_url(url)
        elif self.path_queue is not None:
            account, name = self.path_queue
        else:
            raise MissingParameter.named("QueueUrl")
        caller = self.caller
        if not account or account == caller.account_id:  # None or "": the caller's (urls.path_queue)
            ns = caller
        else:
            ns = Namespace(account, caller.region)
        return _get_queue(self.broker, ns, name)


def _get_queue(broker: Broker, ns: Namespace, name: str) -> Queue:
    """``broker.get_queue(ns, name)`` for a call; a ``QueueDoesNotExist`` is raised as it is (AWS's answer), after a
    rate-limited hint in the log when a queue of that name exists in another region or account
    (:mod:`sqsemu.engine.elsewhere`)."""
    try:
        return broker.get_queue(ns, name)
    except QueueDoesNotExist:
        hint_missing_queue(broker, ns, name)
        raise


Handler = Callable[[Context, Any], Response]
AsyncHandler = Callable[[Context, Any], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class Operation:
    """One row of the table: the request class and its handler (``is_async`` for coroutine handlers)."""

    request: type[s.Request]
    handler: Handler | AsyncHandler
    is_async: bool = False


# --------------------------------------------------------------------------------------------------- pagination

_TOKEN_PREFIX = b"sqsemu:"


def _check_max_results(value: int | None, most: int) -> None:
    if value is not None and not 1 <= value <= most:
        raise invalid_value(value, "MaxResults", f"Must be between 1 and {most}, if provided.")


def _make_token(after_name: str) -> str:
    return base64.urlsafe_b64encode(_TOKEN_PREFIX + after_name.encode()).decode()


def _token_name(token: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(token.encode())
    except (binascii.Error, ValueError):
        raw = b""
    if not raw.startswith(_TOKEN_PREFIX):
        raise InvalidParameterValue("Invalid NextToken value.")
    return raw[len(_TOKEN_PREFIX) :].decode("utf-8", "replace")


def _paginate(
    ctx: Context, queues: Sequence[Queue], key: str, max_results: int | None, next_token: str | None
) -> Response:
    """Page ``queues`` (sorted by name) into ``{key: [urls], "NextToken"?}``.

    Without ``max_results``: the first 1000, never a token. With it: up to ``max_results`` after the token's queue,
    plus a token when more remain.
    """
    most = ctx.broker.limits.list_queues_max_results
    _check_max_results(max_results, most)
    items: Iterable[Queue] = queues
    if next_token:
        after = _token_name(next_token)
        items = [q for q in queues if q.name > after]
    items = list(items)
    limit = max_results if max_results is not None else most
    page = items[:limit]
    result: Response = {key: [ctx.queue_url(q) for q in page]}
    if max_results is not None and len(items) > limit and page:
        result["NextToken"] = _make_token(page[-1].name)
    return result


# ------------------------------------------------------------------------------------------------ queue actions


def create_queue(ctx: Context, req: s.CreateQueueRequest) -> Response:
    """CreateQueue → ``{"QueueUrl"}`` in the caller's namespace (engine: name/attribute validation)."""
    queue = ctx.broker.create_queue(ctx.caller, req.queue_name, req.attributes, req.tags)
    return {"QueueUrl": ctx.queue_url(queue)}


def get_queue_url(ctx: Context, req: s.GetQueueUrlRequest) -> Response:
    """GetQueueUrl → ``{"QueueUrl"}``; honours QueueOwnerAWSAccountId. MissingParameter without QueueName."""
    if not req.queue_name:
        raise MissingParameter.named("QueueName")
    ns = ctx.caller
    owner = req.queue_owner_aws_account_id
    if owner and owner != ns.account_id:
        ns = Namespace(owner, ns.region)
    return {"QueueUrl": ctx.queue_url(_get_queue(ctx.broker, ns, req.queue_name))}


def list_queues(ctx: Context, req: s.ListQueuesRequest) -> Response:
    """ListQueues → ``{"QueueUrls"?, "NextToken"?}`` (QueueUrls omitted when empty)."""
    _check_max_results(req.max_results, ctx.broker.limits.list_queues_max_results)
    queues = ctx.broker.list_queues(ctx.caller, req.queue_name_prefix or None)
    result = _paginate(ctx, queues, "QueueUrls", req.max_results, req.next_token)
    if not result["QueueUrls"]:
        del result["QueueUrls"]
    return result


def delete_queue(ctx: Context, req: s.DeleteQueueRequest) -> Response:
    """DeleteQueue → ``{}``."""
    ctx.broker.delete_queue(ctx.resolve(req.queue_url))
    return {}


def purge_queue(ctx: Context, req: s.PurgeQueueRequest) -> Response:
    """PurgeQueue → ``{}`` (engine: PurgeQueueInProgress)."""
    ctx.broker.purge_queue(ctx.resolve(req.queue_url))
    return {}


def get_queue_attributes(ctx: Context, req: s.GetQueueAttributesRequest) -> Response:
    """GetQueueAttributes → ``{"Attributes"?}`` (omitted when empty; engine: InvalidAttributeName)."""
    attributes = ctx.broker.get_queue_attributes(ctx.resolve(req.queue_url), req.attribute_names)
    return {"Attributes": attributes} if attributes else {}


def set_queue_attributes(ctx: Context, req: s.SetQueueAttributesRequest) -> Response:
    """SetQueueAttributes → ``{}``; ``Attributes`` is required (API Reference: "Required: Yes"), so a request
    without it (or with none: the Query protocol cannot tell the two apart) is ``MissingParameter``."""
    queue = ctx.resolve(req.queue_url)
    if not req.attributes:
        raise MissingParameter.named("Attributes")
    ctx.broker.set_queue_attributes(queue, req.attributes)
    return {}


def list_dead_letter_source_queues(ctx: Context, req: s.ListDeadLetterSourceQueuesRequest) -> Response:
    """ListDeadLetterSourceQueues → ``{"queueUrls": [...], "NextToken"?}`` (queueUrls always present)."""
    _check_max_results(req.max_results, ctx.broker.limits.list_queues_max_results)
    sources = ctx.broker.list_dead_letter_source_queues(ctx.resolve(req.queue_url))
    return _paginate(ctx, sources, "queueUrls", req.max_results, req.next_token)


# ---------------------------------------------------------------------------------------------- message actions


def _send_result(message: Message, entry_id: str | None = None) -> Response:
    """What SendMessage answers for ``message`` (a SendMessageBatch entry's result, led by its ``Id``, when
    ``entry_id`` is given)."""
    if message.extras is NO_EXTRAS:  # no attributes, no sequence number: the common case in one step
        if entry_id is not None:
            return {"Id": entry_id, "MD5OfMessageBody": md5.body_md5_cached(message), "MessageId": message.message_id}
        return {"MD5OfMessageBody": md5.body_md5_cached(message), "MessageId": message.message_id}
    result: Response = {} if entry_id is None else {"Id": entry_id}
    result["MD5OfMessageBody"] = md5.body_md5_cached(message)
    attrs_md5 = md5.attributes_md5_cached(message)
    if attrs_md5 is not None:
        result["MD5OfMessageAttributes"] = attrs_md5
    sys_md5 = md5.system_attributes_md5_cached(message)
    if sys_md5 is not None:
        result["MD5OfMessageSystemAttributes"] = sys_md5
    result["MessageId"] = message.message_id
    if message.sequence_number is not None:
        result["SequenceNumber"] = message.sequence_number
    return result


def send_message(ctx: Context, req: s.SendMessageRequest) -> Response:
    """SendMessage → ``{MD5OfMessageBody, MD5OfMessageAttributes?, MD5OfMessageSystemAttributes?, MessageId,
    SequenceNumber?}``; ``X-Amzn-Trace-Id`` becomes ``SendEntry.trace_header``; the sender id is
    ``ctx.sender_id`` (the caller's account, or its IAM user's or role's id)."""
    queue = ctx.resolve(req.queue_url)
    entry = SendEntry(
        body=req.message_body,
        delay_seconds=req.delay_seconds,
        message_attributes=req.message_attributes,
        system_attributes=req.message_system_attributes,
        group_id=req.message_group_id,
        deduplication_id=req.message_deduplication_id,
        trace_header=ctx.trace_header,
        body_checked=ctx.plain_text,
    )
    return _send_result(ctx.broker.send_message(queue, entry, ctx.sender_id))


def _failed(entry_id: str, error: SQSError) -> Response:
    info = error_info(error)
    return {"Id": entry_id, "SenderFault": info.fault == "Sender", "Code": info.query_code, "Message": error.message}


def _batch_response(successful: list[Response], failed: list[Response]) -> Response:
    """``{"Successful"?: [...], "Failed"?: [...]}``: an empty list is left out, as AWS does in JSON 1.0 (the
    SendMessageBatch, DeleteMessageBatch and ChangeMessageVisibilityBatch pages of the API Reference mark both
    members required; AWS sends neither when empty). Query renders an empty list as no element either way."""
    result: Response = {}
    if successful:
        result["Successful"] = successful
    if failed:
        result["Failed"] = failed
    return result


def send_message_batch(ctx: Context, req: s.SendMessageBatchRequest) -> Response:
    """SendMessageBatch → ``{"Successful"?: [...], "Failed"?: [...]}`` (each left out when empty)."""
    queue = ctx.resolve(req.queue_url)
    if ctx.trace_header is not None:
        for entry in req.entries:
            entry.trace_header = ctx.trace_header
    if ctx.plain_text:
        for entry in req.entries:
            entry.body_checked = True
    outcomes = ctx.broker.send_message_batch(queue, req.entries, ctx.sender_id)
    successful: list[Response] = []
    failed: list[Response] = []
    for entry, outcome in zip(req.entries, outcomes, strict=False):
        if isinstance(outcome, SQSError):
            failed.append(_failed(entry.id, outcome))
        else:
            successful.append(_send_result(outcome, entry.id))
    return _batch_response(successful, failed)


def system_attributes(message: Message, names: frozenset[str] | None) -> dict[str, str]:
    """The ``Attributes`` of a received message: the system attributes in ``names`` (None = ``All``) that apply.

    Timestamps are epoch milliseconds as strings.
    """
    extras = message.extras  # the fields most messages leave empty (read here without the properties' step)
    values: dict[str, str | None] = {
        "SenderId": message.sender_id,
        "SentTimestamp": str(message.sent_ms),
        "ApproximateReceiveCount": str(message.receive_count),
        "ApproximateFirstReceiveTimestamp": str(message.first_receive_ms),
        "SequenceNumber": extras.sequence_number,
        "MessageDeduplicationId": extras.deduplication_id,
        "MessageGroupId": extras.group_id,
        "AWSTraceHeader": _trace_header(message),
        "DeadLetterQueueSourceArn": extras.dead_letter_source_arn,
    }
    return {name: value for name, value in values.items() if value is not None and (names is None or name in names)}


def _trace_header(message: Message) -> str | None:
    sent = message.system_attributes.get("AWSTraceHeader")
    if sent is not None and sent.string_value is not None:
        return sent.string_value
    return message.trace_header


@dataclass(frozen=True, slots=True)
class AttributeFilter:
    """A ReceiveMessage ``MessageAttributeNames`` selector: ``All``/``.*``/``*``, exact names, ``prefix.*``."""

    everything: bool
    exact: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def parse(cls, names: Sequence[str]) -> AttributeFilter | None:
        """The filter for ``names``; None when nothing is requested (no attributes, no digest)."""
        if not names:
            return None
        if any(n in ("All", ".*", "*") for n in names):
            return cls(True, frozenset(), ())
        prefixes = tuple(n[:-2] for n in names if n.endswith(".*"))
        return cls(False, frozenset(n for n in names if not n.endswith(".*")), prefixes)

    def select(self, attributes: dict[str, MessageAttributeValue]) -> dict[str, MessageAttributeValue]:
        """The attributes this filter returns."""
        if self.everything:
            return attributes
        return {k: v for k, v in attributes.items() if k in self.exact or k.startswith(self.prefixes)}


def render_attribute(value: MessageAttributeValue) -> Response:
    """A MessageAttributeValue in JSON-model form (``BinaryValue`` base64-encoded)."""
    if value.binary_value is not None:
        return {"BinaryValue": base64.b64encode(value.binary_value).decode(), "DataType": value.data_type}
    return {"StringValue": value.string_value, "DataType": value.data_type}


def render_message(
    message: Message, receipt_handle: str, names: frozenset[str] | None, wanted: bool, flt: AttributeFilter | None
) -> Response:
    """One received message: ``MessageId, ReceiptHandle, MD5OfBody, Body, Attributes?, MD5OfMessageAttributes?,
    MessageAttributes?``. ``wanted`` says whether any system attribute was requested (``names`` None = all)."""
    out: Response = {
        "MessageId": message.message_id,
        "ReceiptHandle": receipt_handle,
        "MD5OfBody": md5.body_md5_cached(message),
        "Body": message.body,
    }
    if wanted:
        attrs = system_attributes(message, names)
        if attrs:
            out["Attributes"] = attrs
    if flt is not None and message.message_attributes:
        selected = flt.select(message.message_attributes)
        if selected:
            if len(selected) == len(message.message_attributes):
                out["MD5OfMessageAttributes"] = md5.attributes_md5_cached(message)
            else:
                out["MD5OfMessageAttributes"] = md5.md5_of_attributes(selected)
            out["MessageAttributes"] = {k: render_attribute(v) for k, v in selected.items()}
    return out


async def receive_message(ctx: Context, req: s.ReceiveMessageRequest) -> Response:
    """ReceiveMessage → ``{"Messages"?}`` (omitted when empty).

    System attributes: ``AttributeNames`` ∪ ``MessageSystemAttributeNames`` (``All`` = every applicable one).
    A long poll (``WaitTimeSeconds`` not 0) watches for the client disconnecting.
    """
    queue = ctx.resolve(req.queue_url)
    disconnected = ctx.watch_disconnect if req.wait_time_seconds != 0 else None  # called only if it waits
    received = await ctx.broker.receive_message(
        queue,
        max_number_of_messages=req.max_number_of_messages,
        visibility_timeout=req.visibility_timeout,
        wait_time_seconds=req.wait_time_seconds,
        receive_request_attempt_id=req.receive_request_attempt_id,
        disconnected=disconnected,
    )
    if not received:
        return {}
    requested = {*req.attribute_names, *req.message_system_attribute_names}
    names = None if "All" in requested else frozenset(requested)
    flt = AttributeFilter.parse(req.message_attribute_names)
    wanted = bool(requested)
    return {"Messages": [render_message(m, handle, names, wanted, flt) for m, handle in received]}


def delete_message(ctx: Context, req: s.DeleteMessageRequest) -> Response:
    """DeleteMessage → ``{}`` (engine: ReceiptHandleIsInvalid, MissingParameter)."""
    ctx.broker.delete_message(ctx.resolve(req.queue_url), req.receipt_handle)
    return {}


def _batch_result(entries: Sequence[ReceiptEntry], outcomes: Sequence[SQSError | None]) -> Response:
    successful: list[Response] = []
    failed: list[Response] = []
    for entry, outcome in zip(entries, outcomes, strict=False):
        if outcome is None:
            successful.append({"Id": entry.id})
        else:
            failed.append(_failed(entry.id, outcome))
    return _batch_response(successful, failed)


def delete_message_batch(ctx: Context, req: s.DeleteMessageBatchRequest) -> Response:
    """DeleteMessageBatch → ``{"Successful"?: [{Id}], "Failed"?: [...]}`` (each left out when empty)."""
    outcomes = ctx.broker.delete_message_batch(ctx.resolve(req.queue_url), req.entries)
    return _batch_result(req.entries, outcomes)


def change_message_visibility(ctx: Context, req: s.ChangeMessageVisibilityRequest) -> Response:
    """ChangeMessageVisibility → ``{}``."""
    ctx.broker.change_message_visibility(ctx.resolve(req.queue_url), req.receipt_handle, req.visibility_timeout)
    return {}


def change_message_visibility_batch(ctx: Context, req: s.ChangeMessageVisibilityBatchRequest) -> Response:
    """ChangeMessageVisibilityBatch → ``{"Successful"?: [{Id}], "Failed"?: [...]}`` (each left out when empty)."""
    outcomes = ctx.broker.change_message_visibility_batch(ctx.resolve(req.queue_url), req.entries)
    return _batch_result(req.entries, outcomes)


# ------------------------------------------------------------------------- tags, permissions, move tasks


def tag_queue(ctx: Context, req: s.TagQueueRequest) -> Response:
    """TagQueue → ``{}``."""
    ctx.broker.tag_queue(ctx.resolve(req.queue_url), req.tags)
    return {}


def untag_queue(ctx: Context, req: s.UntagQueueRequest) -> Response:
    """UntagQueue → ``{}``."""
    ctx.broker.untag_queue(ctx.resolve(req.queue_url), req.tag_keys)
    return {}


def list_queue_tags(ctx: Context, req: s.ListQueueTagsRequest) -> Response:
    """ListQueueTags → ``{"Tags"?}`` (omitted when the queue has none)."""
    tags = ctx.broker.list_queue_tags(ctx.resolve(req.queue_url))
    return {"Tags": tags} if tags else {}


def add_permission(ctx: Context, req: s.AddPermissionRequest) -> Response:
    """AddPermission → ``{}``."""
    ctx.broker.add_permission(ctx.resolve(req.queue_url), req.label, req.aws_account_ids, req.actions)
    return {}


def remove_permission(ctx: Context, req: s.RemovePermissionRequest) -> Response:
    """RemovePermission → ``{}``."""
    ctx.broker.remove_permission(ctx.resolve(req.queue_url), req.label)
    return {}


def start_message_move_task(ctx: Context, req: s.StartMessageMoveTaskRequest) -> Response:
    """StartMessageMoveTask → ``{"TaskHandle"}``."""
    handle = ctx.broker.start_message_move_task(
        ctx.caller, req.source_arn, req.destination_arn, req.max_number_of_messages_per_second
    )
    return {"TaskHandle": handle}


def cancel_message_move_task(ctx: Context, req: s.CancelMessageMoveTaskRequest) -> Response:
    """CancelMessageMoveTask → ``{"ApproximateNumberOfMessagesMoved"}``."""
    return {"ApproximateNumberOfMessagesMoved": ctx.broker.cancel_message_move_task(ctx.caller, req.task_handle)}


def list_message_move_tasks(ctx: Context, req: s.ListMessageMoveTasksRequest) -> Response:
    """ListMessageMoveTasks → ``{"Results": [...]}`` (entries in JSON-model form, newest first)."""
    return {"Results": ctx.broker.list_message_move_tasks(ctx.caller, req.source_arn, req.max_results)}


def _op(request: type[s.Request], handler: Any, is_async: bool = False) -> tuple[str, Operation]:
    return request.ACTION, Operation(request, handler, is_async)


OPERATIONS: dict[str, Operation] = dict(
    [
        _op(s.CreateQueueRequest, create_queue),
        _op(s.GetQueueUrlRequest, get_queue_url),
        _op(s.ListQueuesRequest, list_queues),
        _op(s.DeleteQueueRequest, delete_queue),
        _op(s.GetQueueAttributesRequest, get_queue_attributes),
        _op(s.SetQueueAttributesRequest, set_queue_attributes),
        _op(s.SendMessageRequest, send_message),
        _op(s.SendMessageBatchRequest, send_message_batch),
        _op(s.ReceiveMessageRequest, receive_message, True),
        _op(s.DeleteMessageRequest, delete_message),
        _op(s.DeleteMessageBatchRequest, delete_message_batch),
        _op(s.ChangeMessageVisibilityRequest, change_message_visibility),
        _op(s.ChangeMessageVisibilityBatchRequest, change_message_visibility_batch),
        _op(s.PurgeQueueRequest, purge_queue),
        _op(s.ListDeadLetterSourceQueuesRequest, list_dead_letter_source_queues),
        _op(s.AddPermissionRequest, add_permission),
        _op(s.RemovePermissionRequest, remove_permission),
        _op(s.TagQueueRequest, tag_queue),
        _op(s.UntagQueueRequest, untag_queue),
        _op(s.ListQueueTagsRequest, list_queue_tags),
        _op(s.StartMessageMoveTaskRequest, start_message_move_task),
        _op(s.CancelMessageMoveTaskRequest, cancel_message_move_task),
        _op(s.ListMessageMoveTasksRequest, list_message_move_tasks),
    ]
)
"""Every SQS action → its Operation. ``set(OPERATIONS) == set(shapes.REQUESTS)``."""

# Actions that do not address a queue; on a queue-URL path (Query) they are InvalidAction.
NOT_ON_QUEUE_URL = frozenset({"CreateQueue", "ListQueues"})
