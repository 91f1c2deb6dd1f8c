"""SNS through the admin routes: the topics with their counts and filter refusals, the recorded deliveries, and the
signing certificate (docs/sns.md, "Admin routes").

- ``GET /_sqsemu/sns/topics`` → ``{"topics": [<topic>, ...]}``, every topic of every account and region, sorted by
  (account, region, name). A ``<topic>`` is ``{"arn", "name", "account", "region", "fifo": bool,
  "subscriptions_confirmed": int, "subscriptions_pending": int, "subscriptions_deleted": int, "counts":
  {"published", "delivered", "filtered", "failed", "dead_lettered"}}`` (the counts since the server started:
  :class:`sqsemu.sns.fanout.Counters`; ``delivered`` counts recorded deliveries too).
- ``GET /_sqsemu/sns/topics/{arn}`` (the ARN whole, its colons as they are or %-encoded) → a peek of one topic:
  ``<topic>`` plus ``"attributes"`` (GetTopicAttributes' map), ``"tags"``, ``"subscriptions"``: ``[{"arn",
  "protocol", "endpoint", "owner", "pending": bool, "raw": bool, "filter_policy": str | null,
  "filter_policy_scope": str | null, "attributes": <GetSubscriptionAttributes' map>}, ...]`` in subscription order,
  and ``"filtered_out"``: the latest filter refusals (at most :data:`sqsemu.sns.fanout.EXPLAINED` per topic),
  oldest first, each ``{"message_id", "subscription_arn", "protocol", "endpoint", "key", "reason", "timestamp"}``:
  which subscription's filter policy refused which message, on which key and why. A malformed ARN → 400; no such
  topic → 404. Looking changes nothing.
- ``GET /_sqsemu/sns/deliveries[?protocol=&endpoint=&topic_arn=&subscription_arn=&kind=]`` → ``{"deliveries":
  [...]}``: what sqsemu would have sent to the subscriptions it does not deliver to (``email``, ``email-json``,
  ``sms``, ``application``, ``firehose``; ``http``/``https``/``lambda`` when no pusher serves them) and the
  SubscriptionConfirmations of email subscriptions, oldest first (the newest
  :data:`sqsemu.sns.fanout.RECORDED` are kept). Each is ``{"kind": "Notification" | "SubscriptionConfirmation",
  "protocol", "endpoint", "subscription_arn", "topic_arn", "message", "timestamp", ...}``: a notification adds
  ``"message_id", "subject", "message_attributes"``, a confirmation ``"token"`` (what ConfirmSubscription takes).
  The query keeps those whose fields equal every one given; another query parameter → 400.
- ``DELETE /_sqsemu/sns/deliveries`` (the same filters) → ``{"deleted": int}``: forgets those recorded.
- The signing certificate (``GET /_sqsemu/sns/<certificate>.pem``, the ``SigningCertURL`` of what SNS sends) is
  not one of these routes: ``sqsemu.http.app`` answers it before the admin gate, public as AWS's is.

Every route runs on the server's event loop and reads the state between two operations; the work is bounded by the
topics and subscriptions that exist and the deliveries kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqsemu.admin.common import AdminError
from sqsemu.sns.fanout import Counters
from sqsemu.sns.model import Subscription, Topic
from sqsemu.sns.topics import parse_topic_arn

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.routing import BaseRoute

    from sqsemu.sns.api import SNS

__all__ = [
    "DELIVERY_FILTERS",
    "clear_deliveries",
    "find_topic",
    "list_topics",
    "recorded_deliveries",
    "routes",
    "subscription_view",
    "topic_summary",
    "topic_view",
]

DELIVERY_FILTERS = ("protocol", "endpoint", "topic_arn", "subscription_arn", "kind")
"""The fields ``GET|DELETE /_sqsemu/sns/deliveries`` filter on."""


def topic_summary(sns: SNS, topic: Topic) -> dict[str, Any]:
    """One topic as ``GET /_sqsemu/sns/topics`` lists it (the module docstring's ``<topic>``)."""
    pending = sum(1 for sub in topic.subscriptions.values() if sub.pending)
    counts = sns.fanout.counters.get(topic.arn) or Counters()
    return {
        "arn": topic.arn,
        "name": topic.name,
        "account": topic.account,
        "region": topic.region,
        "fifo": topic.fifo,
        "subscriptions_confirmed": len(topic.subscriptions) - pending,
        "subscriptions_pending": pending,
        "subscriptions_deleted": topic.deleted,
        "counts": counts.as_dict(),
    }


def list_topics(sns: SNS) -> list[dict[str, Any]]:
    """Every topic (:func:`topic_summary`), sorted by (account, region, name)."""
    topics = sorted(sns.topics.by_arn.values(), key=lambda t: (t.account, t.region, t.name))
    return [topic_summary(sns, topic) for topic in topics]


def subscription_view(sub: Subscription) -> dict[str, Any]:
    """One subscription as a topic's peek shows it."""
    policy = sub.attributes.get("FilterPolicy") or None
    return {
        "arn": sub.arn,
        "protocol": sub.protocol,
        "endpoint": sub.endpoint,
        "owner": sub.owner,
        "pending": sub.pending,
        "raw": sub.raw,
        "filter_policy": policy,
        "filter_policy_scope": sub.attributes.get("FilterPolicyScope", "MessageAttributes") if policy else None,
        "attributes": sub.describe(),
    }


def topic_view(sns: SNS, topic: Topic) -> dict[str, Any]:
    """A peek of one topic (``GET /_sqsemu/sns/topics/{arn}``): its summary, attributes, tags, subscriptions and
    latest filter refusals, oldest first."""
    return {
        **topic_summary(sns, topic),
        "attributes": topic.describe(),
        "tags": dict(topic.tags),
        "subscriptions": [subscription_view(sub) for sub in topic.subscriptions.values()],
        "filtered_out": [dict(entry) for entry in sns.fanout.explained.get(topic.arn, ())],
    }


def find_topic(sns: SNS, arn: str) -> Topic:
    """The topic of ``arn``, in any account and region; raises ``AdminError`` (400 for what is not a topic ARN,
    404 for no such topic)."""
    if parse_topic_arn(arn) is None:
        raise AdminError(f"{arn!r} is not a topic ARN like arn:aws:sns:us-east-1:000000000000:orders")
    topic = sns.topics.by_arn.get(arn)
    if topic is None:
        raise AdminError(f"topic {arn} does not exist", 404)
    return topic


def _matches(entry: Mapping[str, Any], filters: Mapping[str, str]) -> bool:
    return all(entry.get(field) == wanted for field, wanted in filters.items())


def check_filters(query: Mapping[str, str]) -> dict[str, str]:
    """The deliveries' filters of a query string; raises ``AdminError`` (400) naming an unknown parameter."""
    unknown = sorted(set(query) - set(DELIVERY_FILTERS))
    if unknown:
        raise AdminError(
            f"unknown query parameter(s) {', '.join(unknown)}: the deliveries filter on {', '.join(DELIVERY_FILTERS)}"
        )
    return {field: query[field] for field in DELIVERY_FILTERS if field in query}


def recorded_deliveries(sns: SNS, filters: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The recorded deliveries whose fields equal every one of ``filters``, oldest first (copies)."""
    return [dict(entry) for entry in sns.fanout.recorded if not filters or _matches(entry, filters)]


def clear_deliveries(sns: SNS, filters: Mapping[str, str] | None = None) -> int:
    """Forget the recorded deliveries matching ``filters`` (all without); how many."""
    recorded = sns.fanout.recorded
    if not filters:
        count = len(recorded)
        recorded.clear()
        return count
    kept = [entry for entry in recorded if not _matches(entry, filters)]
    count = len(recorded) - len(kept)
    recorded.clear()
    recorded.extend(kept)
    return count


def routes(sns: SNS) -> list[BaseRoute]:
    """The ``/_sqsemu/sns/*`` routes of the server's ``sns`` (the module docstring)."""
    from starlette.responses import JSONResponse  # imported with the admin app, at its first request
    from starlette.routing import Route

    async def topics(request: Request) -> JSONResponse:
        return JSONResponse({"topics": list_topics(sns)})

    async def topic(request: Request) -> JSONResponse:
        return JSONResponse(topic_view(sns, find_topic(sns, request.path_params["arn"])))

    async def deliveries(request: Request) -> JSONResponse:
        filters = check_filters(request.query_params)
        if request.method == "DELETE":
            return JSONResponse({"deleted": clear_deliveries(sns, filters)})
        return JSONResponse({"deliveries": recorded_deliveries(sns, filters)})

    return [
        Route("/_sqsemu/sns/topics", topics, methods=["GET"]),
        Route("/_sqsemu/sns/topics/{arn}", topic, methods=["GET"]),
        Route("/_sqsemu/sns/deliveries", deliveries, methods=["GET", "DELETE"]),
    ]
