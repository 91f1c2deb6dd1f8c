"""A publication's notification is made and signed once and given each subscription's own UnsubscribeURL
(sqsemu.sns.fanout.Fanout.notification): every queue gets a document that verifies, names its own subscription,
and is what building it for that subscription alone gives, even when the message holds the mark itself."""

from __future__ import annotations

import asyncio
import json

import pytest

from sqsemu.sns import fanout
from tests.unit.sns_app_helpers import NS, SNSApp
from tests.unit.sns_helpers import verify_as_subscriber


def _bodies(app: SNSApp, names: list[str]) -> list[dict[str, object]]:
    out = []
    for name in names:
        queue = app.broker.get_queue(NS, name)
        (message,) = queue.stored()
        assert message.body is not None
        out.append(json.loads(message.body))
    return out


@pytest.mark.parametrize("holds_mark", [False, True], ids=["plain", "holding-the-mark"])
def test_each_subscription_gets_its_own_unsubscribe_url_on_one_signed_document(holds_mark: bool) -> None:
    message = f"a message holding {fanout._UNSUBSCRIBE_MARK} itself" if holds_mark else "order placed"

    async def scenario() -> None:
        app = SNSApp()
        try:
            arn = await app.topic("events")
            names = ["a", "b", "c"]
            subs = []
            for name in names:
                app.queue(name)
                subs.append(await app.subscribe(arn, "sqs", f"arn:aws:sqs:{NS.region}:{NS.account_id}:{name}"))
            await app.publish(arn, message, Subject="s")
            docs = _bodies(app, names)
            cert = app.app.sns.signing_key().cert_pem()
            for doc, sub in zip(docs, subs, strict=True):
                verify_as_subscriber(doc, cert)
                assert doc["UnsubscribeURL"] == f"http://localhost:9324/?Action=Unsubscribe&SubscriptionArn={sub}"
                assert doc["Message"] == message
            assert len({doc["Signature"] for doc in docs}) == 1
        finally:
            app.close()

    asyncio.run(scenario())
