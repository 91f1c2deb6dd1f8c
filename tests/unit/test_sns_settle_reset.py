"""The server-wide routes that cover SNS, through the app (no sockets): ``POST /_sqsemu/sns/settle`` waits until
what was published has been delivered; ``POST /_sqsemu/reset`` and moto's ``POST /moto-api/reset`` delete topics
with their subscriptions and what was counted and recorded of them."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

import pytest

from sqsemu.config import Config
from sqsemu.engine.broker import Namespace
from tests.unit.app_helpers import Response, call_asgi, make_app

ACCOUNT = "000000000000"
OTHER = "111111111111"
FORM = {"Content-Type": "application/x-www-form-urlencoded", "Host": "localhost:9324"}


async def sns(app: Any, action: str, account: str = ACCOUNT, **params: str) -> Response:
    """One unsigned SNS call (its action names the service) as ``account`` (a 12-digit access key id)."""
    headers = {
        **FORM,
        "Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20240101/us-east-1/sns/aws4_request, "
        "SignedHeaders=host, Signature=abc",
    }
    return await call_asgi(app, body=urlencode({"Action": action, **params}).encode(), headers=headers)


async def admin(app: Any, path: str, body: bytes = b"{}") -> Response:
    return await call_asgi(app, "POST", path, body=body, headers={"Content-Type": "application/json"})


def topic_arn(name: str, account: str = ACCOUNT) -> str:
    return f"arn:aws:sns:us-east-1:{account}:{name}"


def test_settle_waits_until_what_was_published_is_in_its_queues() -> None:
    app, broker = make_app(Config(clock="manual"))
    queue = broker.create_queue(Namespace(ACCOUNT, "us-east-1"), "q", {}, {})

    async def scenario() -> tuple[int, int, Any]:
        assert (await sns(app, "CreateTopic", Name="t")).status == 200
        await sns(app, "Subscribe", TopicArn=topic_arn("t"), Protocol="sqs", Endpoint=queue.arn)
        published = await sns(app, "Publish", TopicArn=topic_arn("t"), Message="m")
        assert published.status == 200, published.text
        before = len(queue.messages)  # delivered on the loop's next turn, after the answer
        settled = await admin(app, "/_sqsemu/sns/settle")
        return before, len(queue.messages), settled

    before, after, settled = asyncio.run(scenario())
    assert (before, after) == (0, 1)
    assert (settled.status, settled.json()) == (200, {"settled": True})


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"timeout": -1}', '"timeout" must be a number of seconds from 0 to 300, got -1'),
        (b'{"timeout": "5"}', "\"timeout\" must be a number of seconds from 0 to 300, got '5'"),
        (b'{"timeout": true}', '"timeout" must be a number of seconds from 0 to 300, got True'),
        (b'{"wait": 1}', "unknown field(s) wait"),
        (b"[]", "the body must be a JSON object"),
    ],
)
def test_settle_refuses_a_bad_body(body: bytes, expected: str) -> None:
    app, _ = make_app()
    answer = asyncio.run(admin(app, "/_sqsemu/sns/settle", body))
    assert answer.status == 400 and expected in answer.json()["error"]


def test_settle_answers_504_when_deliveries_take_longer_than_the_timeout() -> None:
    app, _ = make_app()
    app.sns.fanout._scheduled = 1  # a delivery that never ends
    answer = asyncio.run(admin(app, "/_sqsemu/sns/settle", b'{"timeout": 0.01}'))
    assert (answer.status, answer.json()) == (504, {"error": "SNS deliveries were still under way after 0.01 s"})


@pytest.mark.parametrize("path", ["/_sqsemu/reset", "/moto-api/reset"])
def test_a_reset_deletes_topics_with_their_subscriptions_counts_and_records(path: str) -> None:
    app, broker = make_app(Config(clock="manual"))
    queue = broker.create_queue(Namespace(ACCOUNT, "us-east-1"), "q", {}, {})

    async def scenario() -> Any:
        await sns(app, "CreateTopic", Name="t")
        await sns(app, "CreateTopic", Name="theirs", account=OTHER)
        await sns(app, "Subscribe", TopicArn=topic_arn("t"), Protocol="sqs", Endpoint=queue.arn)
        await sns(app, "Subscribe", TopicArn=topic_arn("t"), Protocol="sms", Endpoint="+15555550100")
        await sns(app, "Publish", TopicArn=topic_arn("t"), Message="m")
        await admin(app, "/_sqsemu/sns/settle")
        fanout = app.sns.fanout
        assert fanout.counts(app.sns.topics.by_arn[topic_arn("t")]).published == 1 and len(fanout.recorded) == 1
        answer = await admin(app, path)
        made_again = await sns(app, "CreateTopic", Name="t")
        return answer, made_again, await sns(app, "ListSubscriptions")

    answer, made_again, listed = asyncio.run(scenario())
    assert answer.status == 200
    if path == "/_sqsemu/reset":
        assert answer.json() == {"deleted_queues": 1, "deleted_topics": 2, "deleted_faults": 0}
    assert made_again.status == 200 and "<member>" not in listed.text  # no subscription came back with the name
    fanout = app.sns.fanout
    assert fanout.counters.get(topic_arn("t")) is None and list(fanout.recorded) == []


def test_an_accounts_reset_deletes_that_accounts_topics_only() -> None:
    app, _ = make_app()

    async def scenario() -> Any:
        await sns(app, "CreateTopic", Name="mine")
        await sns(app, "CreateTopic", Name="theirs", account=OTHER)
        answer = await admin(app, "/_sqsemu/reset", f'{{"account": "{OTHER}"}}'.encode())
        return answer, await sns(app, "ListTopics"), await sns(app, "ListTopics", account=OTHER)

    answer, mine, theirs = asyncio.run(scenario())
    assert answer.json() == {"deleted_queues": 0, "deleted_topics": 1}
    assert topic_arn("mine") in mine.text and "<TopicArn>" not in theirs.text
