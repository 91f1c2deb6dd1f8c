"""A topic's counts (published, delivered...) belong to the topic: deleting it forgets them, so a topic made again
under the same ARN starts from zero (GET /_sqsemu/sns/topics, the metrics and the console read them)."""

from __future__ import annotations

import asyncio

from tests.unit.sns_app_helpers import NS, SNSApp


def test_a_topic_made_again_under_its_arn_starts_its_counts_afresh() -> None:
    async def scenario() -> None:
        app = SNSApp()
        try:
            queue = app.queue("orders")
            arn = await app.topic("events")
            await app.subscribe(arn, "sqs", f"arn:aws:sqs:{NS.region}:{NS.account_id}:{queue.name}")
            await app.publish(arn, "one")
            counts = app.app.sns.fanout.counters[arn].as_dict()
            assert (counts["published"], counts["delivered"]) == (1, 1)
            assert (await app.sns("DeleteTopic", TopicArn=arn)).status == 200
            assert await app.topic("events") == arn
            await app.publish(arn, "two")  # no subscription now: published, delivered nowhere
            counts = app.app.sns.fanout.counters[arn].as_dict()
            assert (counts["published"], counts["delivered"]) == (1, 0)
        finally:
            app.close()

    asyncio.run(scenario())
