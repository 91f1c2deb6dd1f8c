"""Test helpers for SNS through the whole app (no sockets): SNS calls in the Query protocol, admin and console
requests, on a real broker with a ManualClock, every request of a test on one event loop so that the deliveries
Publish schedules (``loop.call_soon``) run there, then waited for (``Fanout.settle``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.http.app import create_app
from sqsemu.sns.model import Subscription
from tests.unit.app_helpers import Response, call_asgi
from tests.unit.engine_helpers import START_MS

NS = Namespace("000000000000", "us-east-1")
HOST = "localhost:9324"
FORM = "application/x-www-form-urlencoded"
SNS_AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/sns/aws4_request, "
    "SignedHeaders=host;x-amz-date, Signature=abc"
)


class Refusal:
    """Why a filter policy refused a message (``key``, ``reason``), as :mod:`sqsemu.sns.filterpolicy` gives it."""

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason


class OnlyAttribute:
    """A filter policy accepting only messages whose String attribute ``key`` is ``value`` (the interface of
    :class:`sqsemu.sns.filterpolicy.FilterPolicy`: these tests are about what is shown of a refusal, not about
    filter policies, which have their own tests)."""

    scope = "MessageAttributes"

    def __init__(self, key: str, value: str) -> None:
        self.key = key
        self.value = value

    def match_attributes(self, attributes: Mapping[str, tuple[str, str]]) -> Refusal | None:
        found = attributes.get(self.key)
        if found is None:
            return Refusal(self.key, "the message has no such attribute")
        if found[1] != self.value:
            return Refusal(self.key, f"{found[1]!r} is not {self.value!r}")
        return None

    def match_body(self, body: str) -> Refusal | None:
        return None


class SNSApp:
    """The app over a broker on a manual clock; ``config`` as given (``clock="manual"`` by default)."""

    def __init__(self, config: Config | None = None) -> None:
        self.clock = ManualClock(START_MS)
        self.broker = Broker(self.clock)
        self.broker.start()
        self.app: Any = create_app(config or Config(clock="manual"), self.broker, self.clock)

    def close(self) -> None:
        self.broker.close()

    async def request(
        self, method: str, path: str, headers: Mapping[str, str] | None = None, body: bytes = b""
    ) -> Response:
        path, _, query = path.partition("?")
        return await call_asgi(self.app, method, path, {"Host": HOST, **(headers or {})}, body, query.encode())

    async def get(self, path: str, headers: Mapping[str, str] | None = None) -> Response:
        return await self.request("GET", path, headers)

    async def post_form(
        self, path: str, fields: Mapping[str, str] | list[tuple[str, str]], headers: Mapping[str, str] | None = None
    ) -> Response:
        body = urlencode(fields, doseq=True).encode()
        return await self.request("POST", path, {"Content-Type": FORM, **(headers or {})}, body)

    async def sns(self, action: str, **params: str) -> Response:
        """An SNS call signed for ``sns`` (the signature is not checked: ``--auth none``)."""
        fields = {"Action": action, "Version": "2010-03-31", **params}
        return await self.post_form("/", fields, {"Authorization": SNS_AUTH})

    async def topic(self, name: str, **attributes: str) -> str:
        """CreateTopic: the new topic's ARN."""
        params = {}
        for index, (key, value) in enumerate(attributes.items(), 1):
            params[f"Attributes.entry.{index}.key"] = key
            params[f"Attributes.entry.{index}.value"] = value
        response = await self.sns("CreateTopic", Name=name, **params)
        assert response.status == 200, response.text
        return xml_value(response.text, "TopicArn")

    async def subscribe(self, topic_arn: str, protocol: str, endpoint: str) -> str:
        """Subscribe: the subscription's ARN (pending ones too)."""
        response = await self.sns(
            "Subscribe", TopicArn=topic_arn, Protocol=protocol, Endpoint=endpoint, ReturnSubscriptionArn="true"
        )
        assert response.status == 200, response.text
        return xml_value(response.text, "SubscriptionArn")

    async def publish(self, topic_arn: str, message: str, **params: str) -> str:
        """Publish, then wait until it is delivered: its MessageId."""
        response = await self.sns("Publish", TopicArn=topic_arn, Message=message, **params)
        assert response.status == 200, response.text
        await self.app.sns.fanout.settle()
        return xml_value(response.text, "MessageId")

    def queue(self, name: str, **attributes: str) -> Queue:
        return self.broker.create_queue(NS, name, attributes, {})

    def subscription(self, arn: str) -> Subscription:
        found: Subscription = self.app.sns.topics.subscriptions[arn]
        return found


def xml_value(text: str, element: str) -> str:
    found = re.search(f"<{element}>(.*?)</{element}>", text)
    assert found is not None, text
    return found.group(1)


def attribute(index: int, name: str, value: str, data_type: str = "String") -> dict[str, str]:
    """Publish's ``MessageAttributes.entry.N`` parameters."""
    head = f"MessageAttributes.entry.{index}."
    return {head + "Name": name, head + "Value.DataType": data_type, head + "Value.StringValue": value}
