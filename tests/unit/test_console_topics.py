"""The console's SNS pages (sqsemu.console.topics) through the whole app: the topics, a topic with its
subscriptions, filter refusals and recorded deliveries, and the publish form, which runs SNS's own Publish."""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import unquote

from sqsemu.config import Config
from tests.unit.sns_app_helpers import NS, OnlyAttribute, SNSApp, attribute

UI = "/_sqsemu/ui"
SAME = {"Sec-Fetch-Site": "same-origin"}
PAGE = f"{UI}/topics/{NS.account_id}/{NS.region}"


def run(test: Callable[[SNSApp], Coroutine[Any, Any, None]], config: Config | None = None) -> None:
    app = SNSApp(config)
    try:
        asyncio.run(test(app))
    finally:
        app.close()


def text_of(page: str) -> str:
    """The page's text, tags dropped and blanks squeezed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def section(page: str, element_id: str) -> str:
    start = page.index(f'id="{element_id}"')
    return page[start : page.index("</section>", start)]


def flash(response_headers: dict[str, str]) -> str:
    cookie = response_headers["set-cookie"]
    return unquote(cookie.split(";", 1)[0].split("=", 1)[1])


def test_the_topics_page_lists_every_topic_with_its_counts_and_the_navigation_links_it() -> None:
    async def test(app: SNSApp) -> None:
        queue = app.queue("orders-q")
        orders = await app.topic("orders")
        await app.topic("audit.fifo", FifoTopic="true")
        await app.subscribe(orders, "sqs", queue.arn)
        await app.subscribe(orders, "email", "ops@example.com")
        await app.publish(orders, "hello")
        page = await app.get(UI + "/topics", SAME)
        assert page.status == 200
        assert f'<a href="{UI}/topics" aria-current="page">Topics</a>' in page.text
        row = re.search(r'<tr data-name="orders".*?</tr>', page.text, re.S)
        assert row is not None
        assert text_of(row.group(0)).split() == [
            "orders", "Standard", "1", "confirmed", "·", "1", "pending", "1", "1", "0", "0", "000000000000", "·",
            "us-east-1",
        ]  # fmt: skip
        assert f'href="{PAGE}/orders"' in row.group(0)
        assert "FIFO" in text_of(re.search(r'<tr data-name="audit.fifo".*?</tr>', page.text, re.S).group(0))  # type: ignore[union-attr]
        assert "ops@example.com" in section(page.text, "deliveries")  # the email confirmation, recorded
        filtered = await app.get(UI + "/topics?q=AUD", SAME)
        assert 'data-name="audit.fifo"' in filtered.text and 'data-name="orders"' not in filtered.text
        queues_page = await app.get(UI + "/", SAME)
        assert f'<a href="{UI}/topics">Topics</a>' in queues_page.text

    run(test)


def test_the_topics_page_updates_live() -> None:
    async def test(app: SNSApp) -> None:
        arn = await app.topic("orders")
        await app.subscribe(arn, "sms", "+15555550100")
        live = (await app.get(UI + "/topics?live=1", SAME)).json()
        assert set(live) == {"topics", "deliveries", "header-clock"}
        assert 'data-count="published">0<' in live["topics"]
        await app.publish(arn, "Your code is 1234")
        live = (await app.get(UI + "/topics?live=1", SAME)).json()
        assert 'data-count="published">1<' in live["topics"] and 'data-count="delivered">1<' in live["topics"]
        assert "Your code is 1234" in live["deliveries"] and "+15555550100" in live["deliveries"]

    run(test)


def test_a_topic_page_shows_subscriptions_filter_policies_refusals_and_recorded_deliveries() -> None:
    async def test(app: SNSApp) -> None:
        red, dlq = app.queue("red"), app.queue("red-dlq")
        arn = await app.topic("paint")
        red_sub = await app.subscribe(arn, "sqs", red.arn)
        await app.subscribe(arn, "sms", "+15555550100")
        await app.sns("SetSubscriptionAttributes", SubscriptionArn=red_sub, AttributeName="FilterPolicy",
                      AttributeValue='{"color": ["red"]}')  # fmt: skip
        await app.sns("SetSubscriptionAttributes", SubscriptionArn=red_sub, AttributeName="RedrivePolicy",
                      AttributeValue=json.dumps({"deadLetterTargetArn": dlq.arn}))  # fmt: skip
        app.subscription(red_sub).filter = OnlyAttribute("color", "red")
        blue_id = await app.publish(arn, "blue paint", Subject="Paint", **attribute(1, "color", "blue"))
        page = await app.get(PAGE + "/paint", SAME)
        assert page.status == 200
        assert arn in page.text and "Standard" in section(page.text, "topic-title")
        counts = text_of(page.text[page.text.index('data-part="topic-counts"') :].split("</section>", 1)[0])
        assert "1 published" in counts and "1 delivered" in counts and "1 filtered out" in counts
        subscriptions = section(page.text, "subscriptions")
        row = re.search(f'<tr data-subscription="{re.escape(red_sub)}">.*?</tr>', subscriptions, re.S)
        assert row is not None
        cells = text_of(row.group(0))
        assert f'href="{UI}/queues/{NS.account_id}/{NS.region}/red"' in row.group(0)
        assert "confirmed" in cells and "scope MessageAttributes" in cells
        assert '"color": [ "red" ]' in cells  # the filter policy, indented
        assert f'href="{UI}/queues/{NS.account_id}/{NS.region}/red-dlq"' in row.group(0)
        refusals = text_of(section(page.text, "filtered"))
        assert f"{blue_id} sqs {red.arn} color 'blue' is not 'red'" in refusals
        recorded = text_of(section(page.text, "deliveries"))
        assert "sms +15555550100" in recorded and "Subject Paint" in recorded and "blue paint" in recorded
        attributes = section(page.text, "attributes")
        assert "SubscriptionsConfirmed" in attributes and "__default_policy_ID" in attributes
        live = (await app.get(PAGE + "/paint?live=1", SAME)).json()
        assert set(live) == {"topic-counts", "subscriptions", "filtered", "deliveries", "header-clock"}
        assert blue_id in live["filtered"]

    run(test)


def test_publishing_from_the_topic_page_delivers_through_sns_and_says_what_was_published() -> None:
    async def test(app: SNSApp) -> None:
        queue = app.queue("orders-q")
        arn = await app.topic("orders")
        sub = await app.subscribe(arn, "sqs", queue.arn)
        await app.sns("SetSubscriptionAttributes", SubscriptionArn=sub, AttributeName="RawMessageDelivery",
                      AttributeValue="true")  # fmt: skip
        fields = {
            "Message": "line one\r\nline two",
            "Subject": "",
            "attributes": '{"color": "red", "size": 3, "tags": ["a", "b"], '
            '"blob": {"DataType": "Binary", "BinaryValue": "AAE="}}',
        }
        response = await app.post_form(PAGE + "/orders/publish", fields, SAME)
        assert response.status == 303 and response.headers["location"] == PAGE + "/orders"
        await app.app.sns.fanout.settle()
        [message] = queue.messages.values()
        assert message.body == "line one\nline two"
        attributes = {
            name: (v.data_type, v.string_value, v.binary_value) for name, v in message.message_attributes.items()
        }
        assert attributes == {
            "color": ("String", "red", None),
            "size": ("Number", "3", None),
            "tags": ("String.Array", '["a", "b"]', None),
            "blob": ("Binary", None, b"\x00\x01"),
        }
        note = flash(response.headers)
        assert re.fullmatch(r"Published message [0-9a-f-]{36}\.", note)
        assert app.app.sns.fanout.counters[arn].published == 1

    run(test)


def test_publishing_to_a_fifo_topic_takes_the_group_and_deduplication_ids() -> None:
    async def test(app: SNSApp) -> None:
        queue = app.queue("orders.fifo", FifoQueue="true")
        arn = await app.topic("orders.fifo", FifoTopic="true")
        await app.subscribe(arn, "sqs", queue.arn)
        page = await app.get(PAGE + "/orders.fifo", SAME)
        assert 'name="MessageGroupId"' in page.text and 'name="MessageDeduplicationId"' in page.text
        fields = {"Message": "m", "MessageGroupId": "g1", "MessageDeduplicationId": "d1"}
        response = await app.post_form(PAGE + "/orders.fifo/publish", fields, SAME)
        assert response.status == 303
        assert re.fullmatch(r"Published message [0-9a-f-]{36}, sequence number \d{20}\.", flash(response.headers))
        await app.app.sns.fanout.settle()
        [message] = queue.messages.values()
        assert (message.group_id, message.deduplication_id) == ("g1", "d1")
        assert json.loads(message.body)["Message"] == "m"

    run(test)


def test_a_refused_publish_shows_sns_error_and_keeps_the_form() -> None:
    async def test(app: SNSApp) -> None:
        queue = app.queue("orders.fifo", FifoQueue="true")
        arn = await app.topic("orders.fifo", FifoTopic="true")
        await app.subscribe(arn, "sqs", queue.arn)
        response = await app.post_form(PAGE + "/orders.fifo/publish", {"Message": "kept text"}, SAME)
        assert response.status == 400
        error = text_of(re.search(r'id="error">(.*?)</div>', response.text, re.S).group(1))  # type: ignore[union-attr]
        direct = await app.sns("Publish", TopicArn=arn, Message="kept text")
        code = re.search(r"<Code>(.*?)</Code>", direct.text).group(1)  # type: ignore[union-attr]
        message = html.unescape(re.search(r"<Message>(.*?)</Message>", direct.text).group(1))  # type: ignore[union-attr]
        assert error == f"{code}: {message}"  # what an SDK's Publish gets
        assert ">kept text</textarea>" in response.text
        bad = await app.post_form(PAGE + "/orders.fifo/publish", {"Message": "m", "attributes": "[1]"}, SAME)
        assert bad.status == 400 and "The message attributes must be a JSON object" in text_of(bad.text)
        assert queue.message_count() == 0 and app.app.sns.fanout.counters.get(arn) is None

    run(test)


def test_a_topic_that_does_not_exist_is_a_404_page_and_cross_site_posts_are_refused() -> None:
    async def test(app: SNSApp) -> None:
        missing = await app.get(PAGE + "/nope", SAME)
        assert missing.status == 404 and "There is no topic 'nope'" in text_of(missing.text)
        assert (await app.get(PAGE + "/nope?live=1", SAME)).status == 404
        arn = await app.topic("orders")
        refused = await app.post_form(
            PAGE + "/orders/publish", {"Message": "m"}, {"Sec-Fetch-Site": "cross-site", "Origin": "https://x.example"}
        )
        assert refused.status == 403
        assert app.app.sns.fanout.counters.get(arn) is None

    run(test)


def test_the_recorded_deliveries_can_be_forgotten_from_the_topics_page() -> None:
    async def test(app: SNSApp) -> None:
        arn = await app.topic("orders")
        await app.subscribe(arn, "sms", "+15555550100")
        await app.publish(arn, "one")
        await app.publish(arn, "two")
        response = await app.post_form(UI + "/topics/clear-deliveries", {}, SAME)
        assert response.status == 303 and flash(response.headers) == "Forgot 2 recorded deliveries."
        assert list(app.app.sns.fanout.recorded) == []

    run(test)
