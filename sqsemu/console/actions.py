"""The console's actions: form fields → the typed request of an SQS action → its handler in the operations table.

Each function here reads a submitted form, builds the request object the wire decoders would build
(``sqsemu.protocol.shapes``), and runs it through :data:`sqsemu.protocol.operations.OPERATIONS` with a
:class:`~sqsemu.protocol.operations.Context` for the queue's account and region: the same code path as an SDK's
call, so the checks and the errors (``SQSError``) are the engine's. Numbers are converted with the decoders' own
``to_int`` and binary attribute values with ``decode_binary``, so a bad number reads as it would from an SDK.
Server-wide actions call the admin functions (``advance_clock``, ``reset_server``, the fault injector), which raise
``AdminError``. Each action returns a short sentence saying what was done.

Fault rules do not apply to the console's own calls: they are for the clients under test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from sqsemu.admin.clock import advance_clock
from sqsemu.admin.common import AdminError
from sqsemu.admin.faults import FaultInjector
from sqsemu.admin.peek import check_account, reset_server
from sqsemu.clock import Clock
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.message import MessageAttributeValue
from sqsemu.protocol import shapes as s
from sqsemu.protocol.operations import OPERATIONS, Context, Response
from sqsemu.security.region import valid_region

EDITABLE_ATTRIBUTES = (
    ("VisibilityTimeout", "Visibility timeout", "seconds, 0 to 43200"),
    ("DelaySeconds", "Delivery delay", "seconds, 0 to 900"),
    ("MessageRetentionPeriod", "Retention period", "seconds, 60 to 1209600"),
    ("ReceiveMessageWaitTimeSeconds", "Receive wait time", "seconds, 0 to 20"),
    ("MaximumMessageSize", "Maximum message size", "bytes, 1024 to 1048576"),
)
"""The queue attributes the attribute form edits: (name, label, hint). The redrive policy has its own fields."""
FORM_MAX_BYTES = 4 * 1024 * 1024
"""Largest form body the console reads (a message body is at most 1 MiB)."""


class Form:
    """A submitted ``application/x-www-form-urlencoded`` form: its fields in order, repeated names kept."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    @classmethod
    def parse(cls, body: bytes) -> Form:
        """The form of a request body (UTF-8; blank values kept)."""
        return cls(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))

    def raw(self, name: str) -> str | None:
        """The first value of ``name`` exactly as sent, or None when absent."""
        for key, value in self.pairs:
            if key == name:
                return value
        return None

    def get(self, name: str) -> str:
        """The first value of ``name`` without surrounding blanks ("" when absent)."""
        return (self.raw(name) or "").strip()

    def getall(self, name: str) -> list[str]:
        """Every value of ``name``, in order."""
        return [value for key, value in self.pairs if key == name]

    def value(self, name: str, default: object = "") -> object:
        """The first value of ``name`` as sent, else ``default`` (templates fill a form in again after an error)."""
        found = self.raw(name)
        return default if found is None else found

    def __bool__(self) -> bool:
        return bool(self.pairs)


@dataclass(frozen=True, slots=True)
class SQSCalls:
    """Runs SQS actions as the owner of the queue ``name`` in ``ns`` (any queue action of that namespace when
    ``name`` is None); ``base`` is ``scheme://host`` for the queue URLs answers carry."""

    broker: Broker
    ns: Namespace
    name: str | None
    base: str

    def run(self, request: s.Request) -> Response:
        """Run ``request`` through its handler in the operations table; raises what the handler raises."""
        operation = OPERATIONS[request.ACTION]
        if operation.is_async:
            raise TypeError(f"{request.ACTION} waits; the console does not call it")
        path_queue = (self.ns.account_id, self.name) if self.name is not None else None
        result: Response = operation.handler(Context(self.broker, self.ns, self.base, path_queue), request)  # type: ignore[assignment]
        return result


# ------------------------------------------------------------------------------------------------ queue reads


def queue_attributes(calls: SQSCalls) -> dict[str, str]:
    """GetQueueAttributes ``All``: every attribute as SQS answers it."""
    return dict(calls.run(s.GetQueueAttributesRequest(attribute_names=["All"])).get("Attributes", {}))


def queue_tags(calls: SQSCalls) -> dict[str, str]:
    """ListQueueTags."""
    return dict(calls.run(s.ListQueueTagsRequest()).get("Tags", {}))


def move_tasks(calls: SQSCalls, queue: Queue, most: int) -> list[dict[str, Any]]:
    """ListMessageMoveTasks of ``queue`` as the source: up to ``most`` tasks, newest first."""
    return list(calls.run(s.ListMessageMoveTasksRequest(source_arn=queue.arn, max_results=most))["Results"])


# ------------------------------------------------------------------------------------------------ queue actions


def _optional_int(form: Form, field: str) -> int | None:
    value = form.get(field)
    return s.to_int(value, field) if value else None


def send_message(calls: SQSCalls, form: Form, fifo: bool) -> str:
    """SendMessage from the send form: ``MessageBody``; ``DelaySeconds``; attribute rows ``attr_name`` /
    ``attr_type`` (``String`` when blank) / ``attr_value`` (base64 for ``Binary`` types); ``MessageGroupId`` and
    ``MessageDeduplicationId`` for FIFO queues. A textarea sends line breaks as CRLF: they become LF, as typed."""
    body = (form.raw("MessageBody") or "").replace("\r\n", "\n")
    attributes: dict[str, MessageAttributeValue] = {}
    rows = zip(form.getall("attr_name"), form.getall("attr_type"), form.getall("attr_value"), strict=False)
    for name, data_type, value in rows:
        name, data_type = name.strip(), data_type.strip() or "String"
        if not name and not value:
            continue
        if data_type.startswith("Binary"):
            attributes[name] = MessageAttributeValue(data_type, binary_value=s.decode_binary(value.strip()))
        else:
            attributes[name] = MessageAttributeValue(data_type, string_value=value)
    request = s.SendMessageRequest(
        message_body=body,
        delay_seconds=_optional_int(form, "DelaySeconds"),
        message_attributes=attributes,
        message_group_id=(form.get("MessageGroupId") or None) if fifo else None,
        message_deduplication_id=(form.get("MessageDeduplicationId") or None) if fifo else None,
    )
    result = calls.run(request)
    sequence = f", sequence number {result['SequenceNumber']}" if "SequenceNumber" in result else ""
    return f"Sent message {result['MessageId']}{sequence}."


def set_attributes(calls: SQSCalls, form: Form, queue: Queue) -> str:
    """SetQueueAttributes with the fields of the attribute form that differ from the queue's values, and the
    redrive policy (``dead_letter_arn``: "" for none; ``max_receive_count``)."""
    current = queue_attributes(calls)
    changed: dict[str, str] = {}
    for name, _label, _hint in EDITABLE_ATTRIBUTES:
        value = form.get(name)
        if value and value != current.get(name):
            changed[name] = value
    if form.raw("dead_letter_arn") is not None:
        target = form.get("dead_letter_arn")
        if not target:
            if queue.redrive:
                changed["RedrivePolicy"] = ""
        else:
            count_text = form.get("max_receive_count")
            plain = count_text.isascii() and count_text.isdigit() and len(count_text) <= 19  # int() takes "²" too
            count: int | str = int(count_text) if plain else count_text
            wanted = (target, count)
            if queue.redrive != wanted:
                changed["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": target, "maxReceiveCount": count})
    if not changed:
        return "Nothing to change: the values are the queue's."
    calls.run(s.SetQueueAttributesRequest(attributes=changed))
    return "Updated " + ", ".join(sorted(changed)) + "."


def tag_queue(calls: SQSCalls, form: Form) -> str:
    """TagQueue with one ``key`` / ``value``."""
    key = form.get("key")
    calls.run(s.TagQueueRequest(tags={key: form.raw("value") or ""}))
    return f"Tagged {key}."


def untag_queue(calls: SQSCalls, form: Form) -> str:
    """UntagQueue with one ``key``."""
    key = form.get("key")
    calls.run(s.UntagQueueRequest(tag_keys=[key]))
    return f"Removed tag {key}."


def purge_queue(calls: SQSCalls) -> str:
    """PurgeQueue."""
    calls.run(s.PurgeQueueRequest())
    return f"Purged {calls.name}: every message is gone."


def delete_queue(calls: SQSCalls) -> str:
    """DeleteQueue."""
    calls.run(s.DeleteQueueRequest())
    return f"Deleted queue {calls.name}."


def start_redrive(calls: SQSCalls, form: Form, queue: Queue) -> str:
    """StartMessageMoveTask from this dead-letter queue back to each message's source queue, at
    ``max_per_second`` messages per second when given."""
    rate = _optional_int(form, "max_per_second")
    calls.run(s.StartMessageMoveTaskRequest(source_arn=queue.arn, max_number_of_messages_per_second=rate))
    return "Started moving the messages back to their source queues."


def cancel_redrive(calls: SQSCalls, form: Form) -> str:
    """CancelMessageMoveTask of ``task_handle``."""
    result = calls.run(s.CancelMessageMoveTaskRequest(task_handle=form.get("task_handle")))
    return f"Cancelled the redrive after {result['ApproximateNumberOfMessagesMoved']} message(s)."


def create_queue(broker: Broker, base: str, form: Form, default_ns: Namespace) -> tuple[Namespace, str, str]:
    """CreateQueue from the new-queue form (``name``, ``fifo``, ``content_based``, ``account``, ``region``):
    ``(namespace, name, note)``. A FIFO queue's name gets its ``.fifo`` suffix when it lacks it."""
    account = form.get("account") or default_ns.account_id
    region = form.get("region") or default_ns.region
    check_account(account)
    if not valid_region(region):
        raise AdminError(f"region must be a region name like us-east-1, got {region!r}")
    name = form.get("name")
    attributes: dict[str, str] = {}
    if form.get("fifo"):
        attributes["FifoQueue"] = "true"
        if name and not name.endswith(".fifo"):
            name += ".fifo"
        if form.get("content_based"):
            attributes["ContentBasedDeduplication"] = "true"
    ns = Namespace(account, region)
    SQSCalls(broker, ns, None, base).run(s.CreateQueueRequest(queue_name=name, attributes=attributes))
    return ns, name, f"Created queue {name}."


# ------------------------------------------------------------------------------------------------ server actions


def advance(clock: Clock, form: Form) -> str:
    """Advance the manual clock by ``seconds`` (``advance_clock``, as ``POST /_sqsemu/clock/advance``)."""
    text = form.get("seconds")
    try:
        seconds = float(text)
    except ValueError:
        raise AdminError(f'"seconds" must be a number, got {text!r}') from None
    advance_clock(clock, seconds)
    return f"The clock moved forward by {text} s."


def _number(text: str) -> Any:
    """A form field as the JSON value a fault rule takes: an int, a float, or the text (the rule parser then
    says what is wrong with it)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def add_fault(injector: FaultInjector, form: Form) -> str:
    """Add a fault rule from the fault form: the object ``POST /_sqsemu/faults`` takes, checked by the same parser.
    Fields: ``id``, ``action``, ``queue``, ``error_code``, ``error_status``, ``error_message``, ``latency_ms``,
    ``drop``, ``every``, ``probability``, ``seed``, ``count``; blank ones are left out."""
    rule: dict[str, Any] = {}
    for key in ("id", "action", "queue"):
        if form.get(key):
            rule[key] = form.get(key)
    code = form.get("error_code")
    if code:
        error: dict[str, Any] = {"code": code}
        if form.get("error_status"):
            error["status"] = _number(form.get("error_status"))
        if form.get("error_message"):
            error["message"] = form.get("error_message")
        rule["error"] = error
    for key in ("latency_ms", "every", "probability", "seed", "count"):
        if form.get(key):
            rule[key] = _number(form.get(key))
    if form.get("drop"):
        rule["drop"] = True
    added = injector.add(rule)
    return f"Added fault rule {added.id}."


def delete_fault(injector: FaultInjector, form: Form) -> str:
    """Remove the fault rule ``id``."""
    rule_id = form.get("id")
    if not injector.delete(rule_id):
        raise AdminError(f"no fault rule with id {rule_id!r}", 404)
    return f"Removed fault rule {rule_id}."


def reset(broker: Broker, form: Form) -> str:
    """Reset the server (``reset_server``, as ``POST /_sqsemu/reset``): everything, or one ``account``'s queues and
    topics.
    The form must carry ``confirm`` (the box the user ticks)."""
    if not form.get("confirm"):
        raise AdminError("tick the box to confirm the reset")
    account = form.get("account") or None
    result = reset_server(broker, account)
    if account is None:
        return (
            f"Reset: deleted {result['deleted_queues']} queue(s), {result['deleted_topics']} topic(s) and "
            f"{result['deleted_faults']} fault rule(s)."
        )
    deleted = f"{result['deleted_queues']} queue(s) and {result['deleted_topics']} topic(s)"
    return f"Reset account {account}: deleted {deleted}."
