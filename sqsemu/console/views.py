"""What the console's templates show, built from the admin views and read-only engine state.

Nothing here changes the server: the message lists come from :func:`sqsemu.admin.peek.peek_queue` (which touches no
receive count, visibility or receipt), the queue rows from :func:`sqsemu.admin.peek.list_queues`. The helpers turn
epoch milliseconds into readable UTC times, seconds into short durations and JSON bodies into indented text.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from sqsemu.admin.peek import list_queues
from sqsemu.engine.broker import Broker, Queue, parse_arn

PREFIX = "/_sqsemu/ui"
PAGE_SIZE = 50
"""Messages per page of the queue page."""
BODY_PREVIEW_CHARS = 2000
"""Longer bodies are cut in the message list; the message's own page shows all of it."""
PRETTY_MAX_CHARS = 64 * 1024
"""The message list indents JSON bodies up to this size (it is rendered every second); the message page, any."""
SHOWN_SYSTEM_ATTRIBUTES = ("SenderId", "MessageDeduplicationId", "AWSTraceHeader", "DeadLetterQueueSourceArn")
"""System attributes listed with a message besides those that have their own column."""


def queue_href(account: str, region: str, name: str) -> str:
    """The console page of a queue."""
    return f"{PREFIX}/queues/{account}/{region}/{quote(name, safe='')}"


def fmt_time(ms: int | None) -> str:
    """Epoch milliseconds as ``2026-11-02 03:51:07 UTC``; an empty string for None."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def fmt_iso(ms: int | None) -> str:
    """Epoch milliseconds as an ISO 8601 UTC instant with milliseconds (for ``<time datetime>`` and titles)."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fmt_duration(seconds: float) -> str:
    """A short duration: ``0.4 s``, ``29 s``, ``4 min 30 s``, ``2 h 5 min``, ``3 d 4 h``."""
    if seconds < 10 and seconds != int(seconds):
        return f"{seconds:.1f} s"
    total = int(round(seconds))
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def pretty_body(body: str) -> tuple[str, bool]:
    """``(text, is_json)``: a body that is a JSON object or array, indented by two spaces; any other body as is."""
    stripped = body.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False), True
        except ValueError:
            pass
    return body, False


@dataclass(frozen=True, slots=True)
class QueueLink:
    """A queue named on a page: where it lives, and whether it still exists."""

    name: str
    account: str
    region: str
    exists: bool = True

    @property
    def href(self) -> str:
        """Its console page."""
        return queue_href(self.account, self.region, self.name)


def link_to(queue: Queue) -> QueueLink:
    """A link to ``queue``."""
    return QueueLink(queue.name, queue.namespace.account_id, queue.namespace.region)


def link_to_arn(broker: Broker, arn: str) -> QueueLink | None:
    """A link to the queue with ``arn`` (``exists`` False when it was deleted); None for a malformed ARN."""
    parsed = parse_arn(arn)
    if parsed is None:
        return None
    ns, name = parsed
    return QueueLink(name, ns.account_id, ns.region, broker.resolve_arn(arn) is not None)


def dead_letter_sources(broker: Broker) -> dict[str, list[Queue]]:
    """Dead-letter queue ARN → the queues whose RedrivePolicy names it (sorted by name), over every namespace."""
    sources: dict[str, list[Queue]] = defaultdict(list)
    for queue in broker.all_queues():
        if queue.redrive:
            sources[queue.redrive[0]].append(queue)
    return sources


def queue_rows(broker: Broker, base: str, name_filter: str = "", now_ms: int = 0) -> list[dict[str, Any]]:
    """The rows of the queues page: every queue of every account and region (``peek.list_queues``), each with its
    dead-letter queue (``dlq``: a :class:`QueueLink` or None), its sources (``sources``: links) and its page
    (``href``). ``name_filter`` keeps the queues whose name contains it (case-insensitive); ``now_ms`` is the clock's
    time (epoch ms: which tenants are noisy)."""
    wanted = name_filter.strip().lower()
    sources = dead_letter_sources(broker)
    queues = {(q.namespace.account_id, q.namespace.region, q.name): q for q in broker.all_queues()}
    rows = []
    for view in list_queues(broker, base, now_ms):
        if wanted and wanted not in view["name"].lower():
            continue
        queue = queues[(view["account"], view["region"], view["name"])]
        rows.append(
            {
                **view,
                "href": queue_href(view["account"], view["region"], view["name"]),
                "dlq": link_to_arn(broker, queue.redrive[0]) if queue.redrive else None,
                "max_receive_count": queue.redrive[1] if queue.redrive else None,
                "sources": [link_to(source) for source in sources.get(queue.arn, [])],
            }
        )
    return rows


def message_row(view: dict[str, Any], preview_chars: int | None = BODY_PREVIEW_CHARS) -> dict[str, Any]:
    """A peeked message (``peek.message_view``) as the message list and the message page show it: times as text,
    the body pretty-printed when it is JSON (in the list only up to ``PRETTY_MAX_CHARS``) and cut to
    ``preview_chars`` (None: all of it), its message attributes as ``(name, type, value)`` and the other system
    attributes worth showing."""
    raw = view["body"]
    body, is_json = (raw, False) if preview_chars is not None and len(raw) > PRETTY_MAX_CHARS else pretty_body(raw)
    cut = 0
    if preview_chars is not None and len(body) > preview_chars:
        cut = len(body) - preview_chars
        body = body[:preview_chars]
    attributes = []
    for name, value in sorted(view["message_attributes"].items()):
        if "BinaryValue" in value:
            attributes.append((name, value["DataType"], value["BinaryValue"] + " (base64)"))
        else:
            attributes.append((name, value["DataType"], value["StringValue"]))
    system = [(name, view["attributes"][name]) for name in SHOWN_SYSTEM_ATTRIBUTES if name in view["attributes"]]
    seconds_left = view["seconds_left"]
    return {
        **view,
        "body_text": body,
        "body_is_json": is_json,
        "body_cut": cut,
        "body_length": len(view["body"]),
        "sent": fmt_time(view["sent_timestamp"]),
        "sent_iso": fmt_iso(view["sent_timestamp"]),
        "first_receive": fmt_time(view["first_receive_timestamp"]),
        "first_receive_iso": fmt_iso(view["first_receive_timestamp"]),
        "left": None if seconds_left is None else fmt_duration(seconds_left),
        "message_attribute_rows": attributes,
        "system_attribute_rows": system,
    }


def task_rows(results: list[dict[str, Any]], broker: Broker) -> list[dict[str, Any]]:
    """ListMessageMoveTasks results (JSON-model form) as the redrive section shows them."""
    rows = []
    for task in results:
        destination = task.get("DestinationArn")
        rows.append(
            {
                "handle": task.get("TaskHandle"),
                "status": task["Status"],
                "moved": task["ApproximateNumberOfMessagesMoved"],
                "to_move": task["ApproximateNumberOfMessagesToMove"],
                "rate": task.get("MaxNumberOfMessagesPerSecond"),
                "failure": task.get("FailureReason"),
                "started": fmt_time(task["StartedTimestamp"]),
                "destination": link_to_arn(broker, destination) if destination else None,
            }
        )
    return rows


def pages(total: int, page: int, size: int = PAGE_SIZE) -> dict[str, int]:
    """Paging of ``total`` messages: ``page`` (1-based, clamped), ``pages``, ``first`` and ``last`` (1-based
    positions shown; 0 and 0 when empty), ``offset`` and ``size``."""
    count = max(1, -(-total // size))
    page = min(max(1, page), count)
    offset = (page - 1) * size
    return {
        "page": page,
        "pages": count,
        "offset": offset,
        "size": size,
        "first": offset + 1 if total else 0,
        "last": min(offset + size, total),
        "total": total,
    }
