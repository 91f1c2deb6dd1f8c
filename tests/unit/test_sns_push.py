"""The retry schedules of SNS deliveries (sqsemu.sns.push): the documented HTTP/S default, AWS's fixed policy for
AWS-managed endpoints (Lambda), a delivery policy's four phases and backoff functions, and which DeliveryPolicy
applies to a subscription ("Amazon SNS message delivery retries", "Creating an HTTP/S delivery policy")."""

from __future__ import annotations

import asyncio
import json

import pytest

from sqsemu.clock import ManualClock
from sqsemu.engine.broker import Broker
from sqsemu.sns.fanout import Fanout
from sqsemu.sns.model import Subscription, Topic
from sqsemu.sns.publish import Publication
from sqsemu.sns.push import (
    HTTP_DEFAULT_POLICY,
    MANAGED_POLICY,
    Pushers,
    RetryPolicy,
    backoff_delay_s,
    http_delivery_policy,
)
from sqsemu.sns.signing import SigningKey
from sqsemu.sns.topics import Topics


def delays(policy: RetryPolicy) -> list[float]:
    return [round(policy.delay_s(retry), 3) for retry in range(1, policy.num_retries + 1)]


def test_the_http_default_is_three_retries_twenty_seconds_apart() -> None:
    assert delays(HTTP_DEFAULT_POLICY) == [20, 20, 20]


def test_the_managed_policy_has_the_documented_phases() -> None:
    # 3 at once, 2 one second apart, 10 backing off from 1 to 20 seconds, 100,000 twenty seconds apart
    assert MANAGED_POLICY.num_retries == 100_015
    assert [MANAGED_POLICY.delay_s(r) for r in range(1, 6)] == [0, 0, 0, 1, 1]
    backoff = [MANAGED_POLICY.delay_s(r) for r in range(6, 16)]
    assert backoff == sorted(backoff) and 1 < backoff[0] < 2 and backoff[-1] == 20
    assert {MANAGED_POLICY.delay_s(r) for r in (16, 50_000, 100_015)} == {20}
    total_days = sum(MANAGED_POLICY.delay_s(r) for r in range(1, 100_016)) / 86_400
    assert 23 <= total_days < 24  # "100,015 times, over 23 days"


def test_a_policy_runs_its_phases_in_order() -> None:
    policy = RetryPolicy.from_document({
        "numRetries": 7, "numNoDelayRetries": 1, "numMinDelayRetries": 2, "numMaxDelayRetries": 2,
        "minDelayTarget": 2, "maxDelayTarget": 10, "backoffFunction": "linear",
    })  # fmt: skip
    assert policy.num_backoff_retries == 2
    assert delays(policy) == [0, 2, 2, 6, 10, 10, 10]
    with pytest.raises(ValueError):
        policy.delay_s(8)


@pytest.mark.parametrize("function", ["linear", "arithmetic", "geometric", "exponential"])
def test_every_backoff_function_climbs_from_min_to_max(function: str) -> None:
    steps = [backoff_delay_s(function, step, 10, 5, 600) for step in range(1, 11)]
    assert steps == sorted(steps)
    assert 5 < steps[0] < 600 and steps[-1] == pytest.approx(600)


def test_backoff_functions_differ_in_shape() -> None:
    middle = {f: backoff_delay_s(f, 5, 10, 10, 1000) for f in ("linear", "arithmetic", "geometric", "exponential")}
    assert middle["linear"] == pytest.approx(505)
    assert middle["arithmetic"] == pytest.approx(257.5)
    assert middle["geometric"] == pytest.approx(100)
    assert middle["exponential"] == pytest.approx(10 + 990 * 31 / 1023)
    with pytest.raises(ValueError):
        backoff_delay_s("cubic", 1, 2, 1, 2)


def test_missing_fields_take_the_defaults_and_phases_are_trimmed() -> None:
    assert RetryPolicy.from_document({"numRetries": 1}) == RetryPolicy(num_retries=1)
    assert RetryPolicy.from_document(None) == HTTP_DEFAULT_POLICY
    trimmed = RetryPolicy.from_document({"numRetries": 2, "numNoDelayRetries": 5, "numMaxDelayRetries": 3})
    assert delays(trimmed) == [0, 0]
    odd = RetryPolicy.from_document({"minDelayTarget": 30, "maxDelayTarget": 5, "backoffFunction": "spiral"})
    assert (odd.min_delay_s, odd.max_delay_s, odd.backoff_function) == (30, 30, "linear")


def _topic(policy: dict[str, object] | None) -> Topic:
    topic = Topic("t", "000000000000", "us-east-1", False, 0)
    if policy is not None:
        topic.attributes["DeliveryPolicy"] = json.dumps(policy)
    return topic


def _sub(policy: dict[str, object] | None) -> Subscription:
    sub = Subscription("arn:aws:sns:us-east-1:000000000000:t:1", "arn", "http", "http://x/", "0" * 12, "p", 0)
    if policy is not None:
        sub.attributes["DeliveryPolicy"] = json.dumps(policy)
    return sub


def test_the_subscription_policy_wins_over_the_topic_default() -> None:
    topic = _topic({"http": {"defaultHealthyRetryPolicy": {"numRetries": 1, "minDelayTarget": 5, "maxDelayTarget": 5},
                             "defaultRequestPolicy": {"headerContentType": "application/json"}}})  # fmt: skip
    assert http_delivery_policy(topic, _sub(None)) == (RetryPolicy(1, 0, 0, 0, 5, 5), "application/json")
    own = _sub({"healthyRetryPolicy": {"numRetries": 2}, "requestPolicy": {"headerContentType": "text/csv"}})
    assert http_delivery_policy(topic, own) == (RetryPolicy(num_retries=2), "text/csv")
    assert http_delivery_policy(None, _sub(None)) == (HTTP_DEFAULT_POLICY, "text/plain; charset=UTF-8")


def test_disable_subscription_overrides_keeps_the_topic_policy() -> None:
    topic = _topic({"http": {"defaultHealthyRetryPolicy": {"numRetries": 1}, "disableSubscriptionOverrides": True}})
    own = _sub({"healthyRetryPolicy": {"numRetries": 9}, "requestPolicy": {"headerContentType": "text/csv"}})
    assert http_delivery_policy(topic, own) == (RetryPolicy(num_retries=1), "text/plain; charset=UTF-8")


def test_a_delivery_that_raises_is_logged_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    """A failure inside a delivery task (here a function registry that raises, which the real one never does) is
    caught, logged once with its traceback, and counted in ``fanout.errors`` and the topic's failed deliveries."""

    class Broken:
        async def invoke(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("registry bug")

    async def scenario() -> Fanout:
        clock = ManualClock(0)
        topics = Topics(clock)
        key = SigningKey.create()
        fanout = Fanout(Broker(clock), topics, clock, lambda: key)
        pushers = Pushers(fanout, fanout.broker, clock, Broken())  # type: ignore[arg-type]
        pushers.install()
        pushers.start()
        topic = topics.create_topic("000000000000", "us-east-1", "t", None, None, None)
        sub, _ = topics.subscribe(topic, "lambda", "arn:aws:lambda:us-east-1:000000000000:function:f", None,
                                  "000000000000", "arn:aws:iam::000000000000:root")  # fmt: skip
        fanout.pushers["lambda"](sub, Publication(topic, "m", 0, "http://localhost"))
        await pushers.settle(5)
        assert fanout.counts(topic).failed == 1
        return fanout

    with caplog.at_level("ERROR", logger="sqsemu.sns"):
        fanout = asyncio.run(scenario())
    assert fanout.errors == 1
    logged = [r.exc_info for r in caplog.records if r.exc_info]
    assert len(logged) == 1 and "registry bug" in str(logged[0][1])
