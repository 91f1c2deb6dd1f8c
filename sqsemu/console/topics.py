"""The console's SNS pages (docs/console.md, "Topics"): the topics, one topic, its publish form, why a message was
filtered out, and the deliveries sqsemu recorded instead of sending.

Pages (``GET``; each also answers ``?live=1`` with its changing parts, as the queue pages do):

- ``/_sqsemu/ui/topics`` every topic of every account and region (``?q=`` filters by name) with its subscriptions
  and counts; the recorded deliveries (email, SMS, mobile push, Firehose; email confirmations), newest first;
  parts ``topics``, ``deliveries``;
- ``/_sqsemu/ui/topics/{account}/{region}/{name}`` one topic: its counts, subscriptions (protocol, endpoint,
  pending or confirmed, raw delivery, filter policy and scope, dead-letter queue), the latest messages a filter
  policy refused (which subscription, on which key, why), its recorded deliveries, the publish form and its
  attributes and tags; parts ``topic-counts``, ``subscriptions``, ``filtered``, ``deliveries``.

Form posts: ``POST .../topics/{account}/{region}/{name}/publish`` runs Publish through the SNS service's own
handler (:data:`sqsemu.sns.service.ACTIONS`: the checks, errors and delivery an SDK's Publish gets) as the topic's
owner; ``POST /_sqsemu/ui/topics/clear-deliveries`` forgets the recorded deliveries
(:func:`sqsemu.admin.sns.clear_deliveries`, as ``DELETE /_sqsemu/sns/deliveries``). Success answers 303 to the
page with a note; an error answers the page again with ``Code: message``, the status SNS would answer and the form
filled in (Post/Redirect/Get, as every console form).

The pages read the admin views (:mod:`sqsemu.admin.sns`) and change nothing. This module reaches the console's
plumbing (pages, parts, notes, forms) through :class:`Pages`, which :class:`sqsemu.console.routes.Console` is.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from sqsemu.admin.common import AdminError
from sqsemu.admin.sns import clear_deliveries, list_topics, recorded_deliveries, topic_view
from sqsemu.config import ACCOUNT_RE
from sqsemu.console.actions import Form
from sqsemu.console.views import BODY_PREVIEW_CHARS, PREFIX, link_to_arn, pretty_body
from sqsemu.engine import jsondoc
from sqsemu.security.region import valid_region
from sqsemu.sns.errors import SNSError
from sqsemu.sns.model import Topic, topic_arn
from sqsemu.sns.service import ACTIONS, SNSCall
from sqsemu.sns.wire import Params

if TYPE_CHECKING:
    from sqsemu.sns.api import SNS

__all__ = ["Pages", "TopicPages", "attribute_pairs", "publish", "topic_href"]

DELIVERIES_SHOWN = 50
"""Recorded deliveries a page lists (the newest)."""
ATTRIBUTES_EXAMPLE = '{"color": "red", "size": {"DataType": "Number", "StringValue": "3"}}'


class Pages(Protocol):
    """The console plumbing the topic pages use (:class:`sqsemu.console.routes.Console`)."""

    def page(
        self, request: Request, template: str, context: dict[str, Any], status: int = 200, error: str | None = None
    ) -> Response: ...

    def parts(self, request: Request, names: tuple[str, ...], context: dict[str, Any]) -> Response: ...

    @staticmethod
    def done(location: str, note: str) -> Response: ...

    @staticmethod
    async def form(request: Request) -> Form: ...

    def base(self, request: Request) -> str: ...


def topic_href(account: str, region: str, name: str) -> str:
    """The console page of a topic."""
    return f"{PREFIX}/topics/{account}/{region}/{quote(name, safe='')}"


def describe(error: Exception) -> tuple[str, int]:
    """``(text, HTTP status)`` of an error to show: an SNS error as ``Code: message`` with its status, an admin
    error's message with its status."""
    if isinstance(error, SNSError):
        return f"{error.code}: {error.message}", error.status
    if isinstance(error, AdminError):
        return error.message, error.status
    return str(error), 400


def attribute_pairs(text: str) -> list[tuple[str, str]]:
    """The ``MessageAttributes.entry.N.*`` parameters of the publish form's attributes, a JSON object: each name to
    ``{"DataType": ..., "StringValue": ...}`` (or ``"BinaryValue"``, base64) as the SDKs take it, or to a plain
    string (``String``), number (``Number``), true/false (``String``) or list (``String.Array``). Blank: none.
    Raises ``AdminError`` (400) for anything else; the values themselves are checked by Publish."""
    if not text.strip():
        return []
    bad = AdminError(f"The message attributes must be a JSON object like {ATTRIBUTES_EXAMPLE}.")
    try:
        document = jsondoc.loads(text)
    except ValueError:
        raise bad from None
    if not isinstance(document, dict):
        raise bad
    pairs: list[tuple[str, str]] = []
    for index, (name, value) in enumerate(document.items(), 1):
        head = f"MessageAttributes.entry.{index}."
        pairs.append((head + "Name", name))
        if isinstance(value, dict):
            for field in ("DataType", "StringValue", "BinaryValue"):
                given = value.get(field)
                if given is None:
                    continue
                if not isinstance(given, str):
                    raise AdminError(f"Message attribute {name!r}: {field} must be a string.")
                pairs.append((f"{head}Value.{field}", given))
            unknown = sorted(set(value) - {"DataType", "StringValue", "BinaryValue"})
            if unknown:
                raise AdminError(f"Message attribute {name!r}: unknown field(s) {', '.join(unknown)}.")
        elif isinstance(value, bool):
            pairs += [(head + "Value.DataType", "String"), (head + "Value.StringValue", "true" if value else "false")]
        elif isinstance(value, str):
            pairs += [(head + "Value.DataType", "String"), (head + "Value.StringValue", value)]
        elif isinstance(value, int | float):
            pairs += [(head + "Value.DataType", "Number"), (head + "Value.StringValue", json.dumps(value))]
        elif isinstance(value, list):
            pairs += [(head + "Value.DataType", "String.Array"), (head + "Value.StringValue", json.dumps(value))]
        else:
            raise AdminError(f"Message attribute {name!r}: null is not a value; give a string, a number or a list.")
    return pairs


def publish(sns: SNS, topic: Topic, form: Form, base: str) -> str:
    """Publish from the publish form as the topic's owner, through the SNS service's Publish handler: ``Message``
    (line breaks as LF), ``Subject``, ``MessageStructure`` (``json`` when ticked), ``attributes`` (JSON:
    :func:`attribute_pairs`), ``MessageGroupId`` and ``MessageDeduplicationId`` (FIFO topics); blank fields are
    left out. The note to show; raises ``SNSError`` (what Publish answers) or ``AdminError``."""
    pairs = [("TopicArn", topic.arn), ("Message", (form.raw("Message") or "").replace("\r\n", "\n"))]
    subject = form.raw("Subject") or ""
    if subject:
        pairs.append(("Subject", subject))
    if form.get("MessageStructure"):
        pairs.append(("MessageStructure", "json"))
    if topic.fifo:
        for field in ("MessageGroupId", "MessageDeduplicationId"):
            if form.get(field):
                pairs.append((field, form.get(field)))
    pairs += attribute_pairs(form.raw("attributes") or "")
    call = SNSCall(topic.account, topic.region, f"arn:aws:iam::{topic.account}:root", base)
    result = dict(ACTIONS["Publish"](sns.service, call, Params(pairs)) or ())
    sequence = f", sequence number {result['SequenceNumber']}" if "SequenceNumber" in result else ""
    return f"Published message {result['MessageId']}{sequence}."


def _delivery_row(entry: dict[str, Any]) -> dict[str, Any]:
    text, is_json = pretty_body(str(entry.get("message") or ""))
    cut = max(0, len(text) - BODY_PREVIEW_CHARS)
    return {**entry, "text": text[:BODY_PREVIEW_CHARS], "is_json": is_json, "cut": cut}


class TopicPages:
    """The topic pages of one console (``pages``) over the server's ``sns`` (the module docstring)."""

    def __init__(self, pages: Pages, sns: SNS) -> None:
        self.pages = pages
        self.sns = sns

    def deliveries(self, topic: Topic | None) -> list[dict[str, Any]]:
        """The newest recorded deliveries (of ``topic`` when given), newest first."""
        entries = recorded_deliveries(self.sns, {"topic_arn": topic.arn} if topic is not None else None)
        return [_delivery_row(entry) for entry in reversed(entries[-DELIVERIES_SHOWN:])]

    def find(self, request: Request) -> Topic | None:
        """The topic a console URL names, or None."""
        account, region = request.path_params["account"], request.path_params["region"]
        if not ACCOUNT_RE.match(account) or not valid_region(region):
            return None
        return self.sns.topics.by_arn.get(topic_arn(region, account, request.path_params["name"]))

    def missing(self, request: Request) -> Response:
        """The 404 page (or live answer) of a topic that does not exist."""
        params = request.path_params
        message = (
            f"There is no topic {params['name']!r} in account {params['account']!r}, region {params['region']!r}: "
            "it was deleted, or never created."
        )
        if request.query_params.get("live"):
            from starlette.responses import JSONResponse

            return JSONResponse({"error": message}, status_code=404, headers={"Cache-Control": "no-store"})
        context = {"message": message, "nav": "topics", "live": False}
        return self.pages.page(request, "missing.html", context, 404)

    # ------------------------------------------------------------------------------------------------ pages

    async def topics_page(self, request: Request, status: int = 200, error: str | None = None) -> Response:
        """Every topic, and the recorded deliveries."""
        q = request.query_params.get("q", "")
        wanted = q.strip().lower()
        rows = [
            {**row, "href": topic_href(row["account"], row["region"], row["name"])}
            for row in list_topics(self.sns)
            if not wanted or wanted in row["name"].lower()
        ]
        context: dict[str, Any] = {"rows": rows, "q": q, "deliveries": self.deliveries(None), "show_topic": True}
        if request.query_params.get("live"):
            return self.pages.parts(request, ("topics", "deliveries"), context)
        context.update(nav="topics", page_url=PREFIX + "/topics")
        return self.pages.page(request, "topics.html", context, status, error)

    def topic_live(self, topic: Topic) -> dict[str, Any]:
        """The changing parts of a topic page: counts, subscriptions, filter refusals, recorded deliveries."""
        view = topic_view(self.sns, topic)
        subscriptions = []
        for sub in view["subscriptions"]:
            policy = sub["filter_policy"]
            redrive = sub["attributes"].get("RedrivePolicy")
            dlq = None
            if redrive:
                try:
                    target = json.loads(redrive).get("deadLetterTargetArn")
                except (ValueError, AttributeError):
                    target = None
                dlq = link_to_arn(self.sns.broker, target) if isinstance(target, str) else None
            queue = link_to_arn(self.sns.broker, sub["endpoint"]) if sub["protocol"] == "sqs" else None
            subscriptions.append(
                {
                    **sub,
                    "policy_text": pretty_body(policy)[0] if policy else None,
                    "queue": queue,
                    "dlq": dlq,
                    "redrive": redrive,
                }
            )
        return {
            "topic": topic,
            "view": view,
            "subscriptions": subscriptions,
            "filtered": list(reversed(view["filtered_out"])),
            "deliveries": self.deliveries(topic),
            "show_topic": False,
        }

    async def topic_page(
        self, request: Request, form: Form | None = None, status: int = 200, error: str | None = None
    ) -> Response:
        """One topic (the module docstring); ``form`` the publish form to fill in again after an error."""
        topic = self.find(request)
        if topic is None:
            return self.missing(request)
        context = self.topic_live(topic)
        if request.query_params.get("live"):
            return self.pages.parts(request, ("topic-counts", "subscriptions", "filtered", "deliveries"), context)
        attributes = dict(context["view"]["attributes"])
        policies = {}
        for name in ("Policy", "EffectiveDeliveryPolicy", "DeliveryPolicy"):
            if name in attributes:
                policies[name] = pretty_body(attributes.pop(name))[0]
        href = topic_href(topic.account, topic.region, topic.name)
        context.update(
            nav="topics",
            href=href,
            page_url=href,
            f=form or Form([]),
            attributes=attributes,
            policies=policies,
            tags=dict(topic.tags),
        )
        return self.pages.page(request, "topic.html", context, status, error)

    # ------------------------------------------------------------------------------------------------ actions

    async def topic_action(self, request: Request) -> Response:
        """POST ``.../{action}``: ``publish``."""
        topic = self.find(request)
        if topic is None:
            return self.missing(request)
        action = request.path_params["action"]
        form = await self.pages.form(request)
        if action != "publish":
            context = {"message": f"The console has no topic action {action!r}.", "nav": "topics", "live": False}
            return self.pages.page(request, "missing.html", context, 404)
        try:
            note = publish(self.sns, topic, form, self.pages.base(request))
        except (SNSError, AdminError) as exc:
            text, status = describe(exc)
            return await self.topic_page(request, form, status, text)
        return self.pages.done(topic_href(topic.account, topic.region, topic.name), note)

    async def clear(self, request: Request) -> Response:
        """POST ``/_sqsemu/ui/topics/clear-deliveries``: forget every recorded delivery."""
        await self.pages.form(request)
        count = clear_deliveries(self.sns)
        return self.pages.done(PREFIX + "/topics", f"Forgot {count} recorded deliver{'y' if count == 1 else 'ies'}.")

    def routes(self) -> list[BaseRoute]:
        """The topic pages' routes."""
        topic = PREFIX + "/topics/{account}/{region}/{name}"
        return [
            Route(PREFIX + "/topics", self.topics_page, methods=["GET"]),
            Route(PREFIX + "/topics/clear-deliveries", self.clear, methods=["POST"]),
            Route(topic, self.topic_page, methods=["GET"]),
            Route(topic + "/{action}", self.topic_action, methods=["POST"]),
        ]
