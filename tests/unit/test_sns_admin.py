"""SNS's admin routes, metrics and access lines through the whole app (sqsemu.admin.sns,
sqsemu.observability.topicfamilies, the SNS part of the request metrics and of the access log)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sqsemu.config import Config
from sqsemu.observability.accesslog import ACCESS_LOGGER, SnsCall
from tests.unit.sns_app_helpers import NS, OnlyAttribute, SNSApp, attribute
from tests.unit.sns_helpers import verify_as_subscriber

TOKEN = "admin-t0ken"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def run(test: Callable[[SNSApp], Coroutine[Any, Any, None]], config: Config | None = None) -> None:
    app = SNSApp(config)
    try:
        asyncio.run(test(app))
    finally:
        app.close()


def parse(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def topic_labels(name: str, **more: str) -> dict[str, str]:
    return {"account": NS.account_id, "region": NS.region, "topic": name, **more}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


# ------------------------------------------------------------------------------------------------ topics


def test_the_topics_route_lists_every_topic_with_its_subscriptions_and_counts() -> None:
    async def test(app: SNSApp) -> None:
        queue = app.queue("orders-q")
        orders = await app.topic("orders")
        other = await app.topic("audit.fifo", FifoTopic="true", ContentBasedDeduplication="true")
        await app.subscribe(orders, "sqs", queue.arn)
        await app.subscribe(orders, "sms", "+15555550100")
        await app.subscribe(orders, "email", "ops@example.com")  # pending until confirmed
        await app.publish(orders, "one")
        await app.publish(orders, "two")
        response = await app.get("/_sqsemu/sns/topics")
        assert response.status == 200
        audit, listed = response.json()["topics"]  # sorted by account, region, name
        assert listed == {
            "arn": orders,
            "name": "orders",
            "account": NS.account_id,
            "region": NS.region,
            "fifo": False,
            "subscriptions_confirmed": 2,
            "subscriptions_pending": 1,
            "subscriptions_deleted": 0,
            "counts": {"published": 2, "delivered": 4, "filtered": 0, "failed": 0, "dead_lettered": 0},
        }
        assert audit["arn"] == other and audit["fifo"] is True and audit["counts"]["published"] == 0
        assert queue.message_count() == 2

    run(test)


def test_a_topic_peek_shows_its_attributes_subscriptions_and_which_subscription_refused_which_message() -> None:
    async def test(app: SNSApp) -> None:
        red, blue = app.queue("red"), app.queue("blue")
        arn = await app.topic("paint")
        red_sub = await app.subscribe(arn, "sqs", red.arn)
        blue_sub = await app.subscribe(arn, "sqs", blue.arn)
        await app.sns(
            "SetSubscriptionAttributes", SubscriptionArn=red_sub, AttributeName="FilterPolicy",
            AttributeValue='{"color": ["red"]}',
        )  # fmt: skip
        await app.sns("TagResource", ResourceArn=arn, **{"Tags.member.1.Key": "team", "Tags.member.1.Value": "a"})
        app.subscription(red_sub).filter = OnlyAttribute("color", "red")
        blue_id = await app.publish(arn, "blue paint", **attribute(1, "color", "blue"))
        bare_id = await app.publish(arn, "no color")
        await app.publish(arn, "red paint", **attribute(1, "color", "red"))
        response = await app.get("/_sqsemu/sns/topics/" + arn)
        assert response.status == 200
        peek = response.json()
        assert peek["counts"] == {"published": 3, "delivered": 4, "filtered": 2, "failed": 0, "dead_lettered": 0}
        assert peek["attributes"]["TopicArn"] == arn and peek["attributes"]["SubscriptionsConfirmed"] == "2"
        assert peek["tags"] == {"team": "a"}
        first, second = peek["subscriptions"]
        assert first["arn"] == red_sub and second["arn"] == blue_sub
        assert first["filter_policy"] == '{"color": ["red"]}' and first["filter_policy_scope"] == "MessageAttributes"
        assert second["filter_policy"] is None and second["filter_policy_scope"] is None
        assert first["protocol"] == "sqs" and first["endpoint"] == red.arn and first["pending"] is False
        assert first["raw"] is False and first["attributes"]["FilterPolicy"] == '{"color": ["red"]}'
        refusals = [{k: v for k, v in r.items() if k != "timestamp"} for r in peek["filtered_out"]]
        assert refusals == [
            {"message_id": blue_id, "subscription_arn": red_sub, "protocol": "sqs", "endpoint": red.arn,
             "key": "color", "reason": "'blue' is not 'red'"},
            {"message_id": bare_id, "subscription_arn": red_sub, "protocol": "sqs", "endpoint": red.arn,
             "key": "color", "reason": "the message has no such attribute"},
        ]  # fmt: skip
        assert peek["filtered_out"][0]["timestamp"] == "2023-11-14T22:13:20.000Z"  # the server's clock
        assert (red.message_count(), blue.message_count()) == (1, 3)

    run(test)


def test_a_topic_peek_of_no_topic_is_404_and_of_no_topic_arn_400() -> None:
    async def test(app: SNSApp) -> None:
        missing = await app.get("/_sqsemu/sns/topics/arn:aws:sns:us-east-1:000000000000:nope")
        assert missing.status == 404
        assert missing.json() == {"error": "topic arn:aws:sns:us-east-1:000000000000:nope does not exist"}
        bad = await app.get("/_sqsemu/sns/topics/orders")
        assert bad.status == 400 and "is not a topic ARN" in bad.json()["error"]

    run(test)


# ------------------------------------------------------------------------------------------------ deliveries


def test_the_deliveries_route_gives_the_sms_and_email_a_publish_triggered_filtered_and_cleared() -> None:
    async def test(app: SNSApp) -> None:
        orders = await app.topic("orders")
        audit = await app.topic("audit")
        sms = await app.subscribe(orders, "sms", "+15555550100")
        await app.subscribe(orders, "email", "ops@example.com")
        await app.subscribe(audit, "sms", "+15555550199")
        message_id = await app.publish(orders, "Your order shipped", Subject="Order 1")
        await app.publish(audit, "audited")
        everything = (await app.get("/_sqsemu/sns/deliveries")).json()["deliveries"]
        assert [(d["kind"], d["endpoint"]) for d in everything] == [
            ("SubscriptionConfirmation", "ops@example.com"),
            ("Notification", "+15555550100"),
            ("Notification", "+15555550199"),
        ]
        response = await app.get("/_sqsemu/sns/deliveries?protocol=sms&topic_arn=" + quote(orders))
        [text] = response.json()["deliveries"]
        assert {k: v for k, v in text.items() if k != "timestamp"} == {
            "kind": "Notification", "protocol": "sms", "endpoint": "+15555550100", "subscription_arn": sms,
            "topic_arn": orders, "message_id": message_id, "subject": "Order 1", "message": "Your order shipped",
            "message_attributes": {},
        }  # fmt: skip
        confirmation = (await app.get("/_sqsemu/sns/deliveries?endpoint=ops@example.com")).json()["deliveries"]
        [email] = confirmation
        assert email["kind"] == "SubscriptionConfirmation" and json.loads(email["message"])["Token"] == email["token"]
        unknown = await app.get("/_sqsemu/sns/deliveries?phone=1")
        assert unknown.status == 400 and "phone" in unknown.json()["error"]
        cleared = await app.request("DELETE", "/_sqsemu/sns/deliveries?topic_arn=" + quote(audit))
        assert cleared.json() == {"deleted": 1}
        assert len((await app.get("/_sqsemu/sns/deliveries")).json()["deliveries"]) == 2
        assert (await app.request("DELETE", "/_sqsemu/sns/deliveries")).json() == {"deleted": 2}
        assert (await app.get("/_sqsemu/sns/deliveries")).json() == {"deliveries": []}

    run(test)


# ------------------------------------------------------------------------------------------------ certificate


def test_the_signing_certificate_is_served_without_the_admin_token_and_verifies_what_sns_signs() -> None:
    async def test(app: SNSApp) -> None:
        arn = await app.topic("orders")
        await app.subscribe(arn, "email-json", "ops@example.com")
        [confirmation] = (await app.get("/_sqsemu/sns/deliveries", {"X-Sqsemu-Admin-Token": TOKEN})).json()[
            "deliveries"
        ]
        document = json.loads(confirmation["message"])
        url = document["SigningCertURL"]
        assert url.startswith("http://localhost:9324/_sqsemu/sns/SimpleNotificationService-") and url.endswith(".pem")
        path = url.removeprefix("http://localhost:9324")
        response = await app.get(path)  # no token: a subscriber's validator sends none
        assert response.status == 200
        assert response.headers["content-type"] == "application/x-x509-ca-cert"
        verify_as_subscriber(document, response.body)
        cross_site = await app.get(path, {"Sec-Fetch-Site": "cross-site", "Origin": "https://elsewhere.example"})
        assert cross_site.status == 200  # public, as AWS's certificate is
        other = await app.get("/_sqsemu/sns/SimpleNotificationService-0123.pem")
        assert other.status == 404
        assert (await app.get("/_sqsemu/sns/topics")).status == 401  # the other routes keep the token
        assert (await app.get("/_sqsemu/sns/deliveries")).status == 401

    run(test, Config(clock="manual", admin_token=TOKEN))


def test_the_signing_certificate_is_served_with_the_admin_routes_off() -> None:
    async def test(app: SNSApp) -> None:
        key = app.app.sns.signing_key()
        response = await app.get("/_sqsemu/sns/" + key.cert_name)
        assert response.status == 200 and response.body == key.cert_pem()
        assert (await app.get("/_sqsemu/sns/topics")).status == 404

    run(test, Config(clock="manual", admin=False))


# ------------------------------------------------------------------------------------------------ metrics


def test_the_metrics_count_publishes_deliveries_filtered_and_failed_per_topic() -> None:
    async def test(app: SNSApp) -> None:
        red, gone, dlq = app.queue("red"), app.queue("gone"), app.queue("dlq")
        arn = await app.topic("paint")
        await app.topic("idle")
        red_sub = await app.subscribe(arn, "sqs", red.arn)
        gone_sub = await app.subscribe(arn, "sqs", gone.arn)
        await app.subscribe(arn, "email", "ops@example.com")
        await app.sns(
            "SetSubscriptionAttributes", SubscriptionArn=gone_sub, AttributeName="RedrivePolicy",
            AttributeValue=json.dumps({"deadLetterTargetArn": dlq.arn}),
        )  # fmt: skip
        app.broker.delete_queue(gone)
        app.subscription(red_sub).filter = OnlyAttribute("color", "red")
        await app.publish(arn, "red", **attribute(1, "color", "red"))
        await app.publish(arn, "blue", **attribute(1, "color", "blue"))
        await app.sns("Publish", TopicArn=arn + "-missing", Message="x")
        await app.sns("AddPermission", TopicArn=arn, Label="l", **{"AWSAccountId.member.1": "111111111111",
                                                                  "ActionName.member.1": "Publish"})  # fmt: skip
        await app.request("POST", "/", {"Content-Type": "application/x-amz-json-1.0",
                                        "X-Amz-Target": "AmazonSQS.ListQueues"}, b"{}")  # fmt: skip
        response = await app.get("/metrics")
        samples = parse(response.text)
        paint = topic_labels("paint")
        assert value(samples, "sqsemu_sns_messages_published_total", **paint) == 2
        assert value(samples, "sqsemu_sns_deliveries_total", **paint) == 1  # red, once
        assert value(samples, "sqsemu_sns_filtered_total", **paint) == 1  # blue, refused by red's policy
        assert value(samples, "sqsemu_sns_delivery_failures_total", **paint) == 2  # the deleted queue, twice
        assert value(samples, "sqsemu_sns_dead_lettered_total", **paint) == 2
        assert value(samples, "sqsemu_sns_subscriptions", **topic_labels("paint", state="confirmed")) == 2
        assert value(samples, "sqsemu_sns_subscriptions", **topic_labels("paint", state="pending")) == 1
        assert value(samples, "sqsemu_sns_messages_published_total", **topic_labels("idle")) == 0
        assert value(samples, "sqsemu_sns_topics") == 2
        assert dlq.message_count() == 2
        sns = {"protocol": "query", "service": "sns"}
        assert value(samples, "sqsemu_requests_total", action="Publish", outcome="ok", **sns) == 2
        assert value(samples, "sqsemu_requests_total", action="Publish", outcome="NotFound", **sns) == 1
        assert value(samples, "sqsemu_requests_total", action="AddPermission", outcome="ok", **sns) == 1
        assert value(samples, "sqsemu_requests_total", action="CreateTopic", outcome="ok", **sns) == 2
        assert value(samples, "sqsemu_request_duration_seconds_count", action="Subscribe", **sns) == 3
        # the SQS series keep their labels, without "service"
        assert value(samples, "sqsemu_requests_total", action="ListQueues", outcome="ok", protocol="json") == 1
        assert not any(name == "sqsemu_requests_total" and ("action", "unknown") in labels
                       for name, labels in samples)  # fmt: skip

    run(test)


def test_sns_calls_are_counted_as_sns_signed_or_not_an_unknown_action_as_unknown() -> None:
    async def test(app: SNSApp) -> None:
        assert (await app.sns("ListQueuesOfTopics")).status == 400  # signed for sns: SNS's, whatever the action
        unsigned = await app.post_form("/", {"Action": "ListTopics", "Version": "2010-03-31"})  # SNS's by its action
        assert unsigned.status == 200 and "ListTopicsResponse" in unsigned.text
        samples = parse((await app.get("/metrics")).text)
        sns = {"protocol": "query", "service": "sns"}
        assert value(samples, "sqsemu_requests_total", action="unknown", outcome="InvalidAction", **sns) == 1
        assert value(samples, "sqsemu_requests_total", action="ListTopics", outcome="ok", **sns) == 1

    run(test)


# ------------------------------------------------------------------------------------------------ access log


def test_the_access_log_names_the_topic_of_each_sns_call(caplog: pytest.LogCaptureFixture) -> None:
    async def test(app: SNSApp) -> None:
        queue = app.queue("orders-q")
        arn = await app.topic("orders")
        sub = await app.subscribe(arn, "sqs", queue.arn)
        await app.publish(arn, "hello")
        await app.sns("Unsubscribe", SubscriptionArn=sub)
        await app.sns("ListTopics")
        await app.sns("GetTopicAttributes", TopicArn=arn + "-missing")

    with caplog.at_level(logging.INFO, logger=ACCESS_LOGGER):
        run(test, Config(clock="manual", access_log=True))
    lines = [record.msg.fields() for record in caplog.records if isinstance(record.msg, SnsCall)]
    texts = [record.getMessage() for record in caplog.records if record.name == ACCESS_LOGGER]
    arn = "arn:aws:sns:us-east-1:000000000000:orders"
    assert [(line["action"], line["topic"], line["status"], line["error"]) for line in lines] == [
        ("CreateTopic", arn, 200, None),
        ("Subscribe", arn, 200, None),
        ("Publish", arn, 200, None),
        ("Unsubscribe", arn, 200, None),  # the topic part of the subscription's ARN
        ("ListTopics", None, 200, None),
        ("GetTopicAttributes", arn + "-missing", 404, "NotFound"),
    ]
    assert all(line["service"] == "sns" and line["protocol"] == "query" for line in lines)
    assert texts[2].startswith(f"action=Publish service=sns topic={arn} protocol=query status=200 latency_ms=")
    assert "topic=" not in texts[4]
