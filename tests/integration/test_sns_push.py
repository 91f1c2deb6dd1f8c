"""SNS deliveries to HTTP/S endpoints and Lambda functions over real sockets (sqsemu.sns.push): a subscriber's HTTP
server on 127.0.0.1 in a thread gets the SubscriptionConfirmation, confirms it with a GET of its SubscribeURL, and
gets notifications whose headers are AWS's and whose signatures verify with the certificate fetched from
SigningCertURL; retries are walked on the manual clock (``advance``, then ``settle``: never a sleep); spent retries
go to the subscription's dead-letter queue; Lambda subscriptions run in-process Python functions.

Sources: SNS Developer Guide, "Fanout Amazon SNS notifications to HTTPS endpoints", "HTTP/HTTPS headers", "Amazon
SNS message delivery retries", "Amazon SNS dead-letter queues"; Lambda Developer Guide, "How Lambda handles errors
and retries with asynchronous invocation"; the recorded HTTP deliveries (/work/notes/sns-recorded.md 13d, 13e).
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from sqsemu.config import Config
from sqsemu.server import ServerThread
from sqsemu.testing.boto import new_client
from tests.unit.sns_helpers import verify_as_subscriber

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
_names = itertools.count(1)


class Subscriber:
    """An HTTP server on 127.0.0.1 recording every POST (path, headers, body) and answering each path with the
    statuses queued for it (200 once they run out). Invoke API calls (``/2015-03-31/...``) are recorded too."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], str]] = []
        self.statuses: dict[str, list[int]] = {}
        self.cond = threading.Condition()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                with owner.cond:
                    owner.requests.append((self.path, dict(self.headers.items()), body))
                    queued = owner.statuses.get(self.path) or []
                    status = queued.pop(0) if queued else 200
                    owner.cond.notify_all()
                answer = b"null" if self.path.startswith("/2015-03-31/") else b""
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def posts(self, path: str) -> list[tuple[dict[str, str], str]]:
        with self.cond:
            return [(headers, body) for p, headers, body in self.requests if p == path]

    def wait(self, path: str, count: int) -> list[tuple[dict[str, str], str]]:
        """The POSTs to ``path`` once there are ``count`` (5 real seconds at most: a delivery under way)."""
        with self.cond:
            self.cond.wait_for(lambda: sum(1 for p, _, _ in self.requests if p == path) >= count, 5)
        return self.posts(path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class World:
    """A manual-clock server, its SNS and SQS clients, and the subscriber's HTTP server."""

    def __init__(self, srv: ServerThread, subscriber: Subscriber) -> None:
        self.srv = srv
        self.subscriber = subscriber
        options = {
            "endpoint_url": srv.endpoint_url, "region_name": "us-east-1", "aws_access_key_id": ACCOUNT,
            "aws_secret_access_key": "x",
        }  # fmt: skip
        self.sns = new_client("sns", **options)
        self.sqs = new_client("sqs", **options)

    def settle(self) -> None:
        self.srv.app.sns.settle_threadsafe(10)  # type: ignore[attr-defined]

    def advance(self, seconds: float) -> None:
        self.srv.advance(seconds)
        self.settle()

    def topic(self, **attributes: str) -> str:
        return str(self.sns.create_topic(Name=f"t{next(_names)}", Attributes=attributes)["TopicArn"])

    def queue(self) -> tuple[str, str]:
        url = self.sqs.create_queue(QueueName=f"dlq{next(_names)}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return url, arn

    def received(self, url: str) -> list[str]:
        answer = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        return [m["Body"] for m in answer.get("Messages", [])]

    def http_subscription(self, topic: str, path: str, **attributes: str) -> str:
        """Subscribe ``path`` of the subscriber and confirm it through the SubscribeURL of its confirmation."""
        self.sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=self.subscriber.url + path, Attributes=attributes)
        headers, body = self.subscriber.wait(path, 1)[0]
        assert headers["x-amz-sns-message-type"] == "SubscriptionConfirmation"
        with urllib.request.urlopen(json.loads(body)["SubscribeURL"]) as answer:  # a plain, unsigned GET
            text = answer.read().decode()
        return text.split("<SubscriptionArn>")[1].split("</SubscriptionArn>")[0]

    def counters(self, topic: str) -> dict[str, int]:
        sns = self.srv.app.sns  # type: ignore[attr-defined]
        return dict(self.srv.call(lambda: sns.fanout.counts(sns.topics.by_arn[topic]).as_dict()))


@pytest.fixture(scope="module")
def subscriber() -> Iterator[Subscriber]:
    endpoint = Subscriber()
    yield endpoint
    endpoint.close()


@pytest.fixture(scope="module")
def world(subscriber: Subscriber) -> Iterator[World]:
    with ServerThread(Config(clock="manual", host="127.0.0.1", log_level="warning")) as srv:
        yield World(srv, subscriber)


def _certificate(url: str) -> bytes:
    with urllib.request.urlopen(url) as answer:
        assert answer.status == 200
        return bytes(answer.read())


# ---------------------------------------------------------------------------------------------------- HTTP/S


def test_confirmation_notification_and_unsubscribe_over_http(world: World) -> None:
    topic = world.topic()
    path = f"/hook{next(_names)}"
    world.sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=world.subscriber.url + path)
    headers, body = world.subscriber.wait(path, 1)[0]
    confirmation = json.loads(body)
    assert headers["Content-Type"] == "text/plain; charset=UTF-8"
    assert headers["User-Agent"] == "Amazon Simple Notification Service Agent"
    assert headers["x-amz-sns-message-type"] == "SubscriptionConfirmation"
    assert headers["x-amz-sns-message-id"] == confirmation["MessageId"]
    assert headers["x-amz-sns-topic-arn"] == topic
    assert "x-amz-sns-subscription-arn" not in headers
    assert confirmation["Type"] == "SubscriptionConfirmation" and confirmation["TopicArn"] == topic
    certificate = _certificate(confirmation["SigningCertURL"])
    verify_as_subscriber(confirmation, certificate)
    pending = world.sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"][0]
    assert pending["SubscriptionArn"] == "PendingConfirmation"

    with urllib.request.urlopen(confirmation["SubscribeURL"]) as answer:  # unsigned GET, as a subscriber sends
        assert answer.status == 200
    sub_arn = world.sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"][0]["SubscriptionArn"]
    attributes = world.sns.get_subscription_attributes(SubscriptionArn=sub_arn)["Attributes"]
    assert attributes["PendingConfirmation"] == "false"

    message_id = world.sns.publish(
        TopicArn=topic, Message="hello", Subject="greeting",
        MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}},
    )["MessageId"]  # fmt: skip
    headers, body = world.subscriber.wait(path, 2)[1]
    notification = json.loads(body)
    assert [(k, v) for k, v in headers.items() if k.startswith("x-amz-sns-")] == [
        ("x-amz-sns-message-type", "Notification"),
        ("x-amz-sns-message-id", message_id),
        ("x-amz-sns-topic-arn", topic),
        ("x-amz-sns-subscription-arn", sub_arn),
    ]
    assert headers["Content-Type"] == "text/plain; charset=UTF-8"
    assert headers["User-Agent"] == "Amazon Simple Notification Service Agent"
    assert list(notification) == [
        "Type", "MessageId", "TopicArn", "Subject", "Message", "Timestamp", "SignatureVersion", "Signature",
        "SigningCertURL", "UnsubscribeURL", "MessageAttributes",
    ]  # fmt: skip
    assert (notification["Message"], notification["Subject"]) == ("hello", "greeting")
    assert notification["MessageAttributes"] == {"colour": {"Type": "String", "Value": "blue"}}
    verify_as_subscriber(notification, _certificate(notification["SigningCertURL"]))
    world.settle()
    assert world.counters(topic)["delivered"] == 1

    with urllib.request.urlopen(notification["UnsubscribeURL"]) as answer:
        assert answer.status == 200
    headers, body = world.subscriber.wait(path, 3)[2]
    goodbye = json.loads(body)
    assert headers["x-amz-sns-message-type"] == "UnsubscribeConfirmation"
    assert headers["x-amz-sns-subscription-arn"] == sub_arn
    assert goodbye["Type"] == "UnsubscribeConfirmation" and sub_arn in goodbye["Message"]
    verify_as_subscriber(goodbye, certificate)
    assert world.sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"] == []


def test_signature_version_2_verifies_too(world: World) -> None:
    topic = world.topic(SignatureVersion="2")
    path = f"/v2-{next(_names)}"
    world.http_subscription(topic, path)
    world.sns.publish(TopicArn=topic, Message="two")
    notification = json.loads(world.subscriber.wait(path, 2)[1][1])
    assert notification["SignatureVersion"] == "2"
    verify_as_subscriber(notification, _certificate(notification["SigningCertURL"]))


def test_the_certificate_route_serves_only_the_signing_certificate(world: World) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(world.srv.endpoint_url + "/_sqsemu/sns/SimpleNotificationService-nope.pem")
    assert refused.value.code == 404


def test_raw_delivery_and_the_delivery_policy_content_type(world: World) -> None:
    policy = {"http": {"defaultRequestPolicy": {"headerContentType": "application/json"}}}
    topic = world.topic(DeliveryPolicy=json.dumps(policy))
    path = f"/raw{next(_names)}"
    world.sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=world.subscriber.url + path,
                        Attributes={"RawMessageDelivery": "true"})  # fmt: skip
    headers, body = world.subscriber.wait(path, 1)[0]
    assert headers["Content-Type"] == "text/plain; charset=UTF-8"  # a confirmation always is
    urllib.request.urlopen(json.loads(body)["SubscribeURL"]).close()
    world.sns.publish(TopicArn=topic, Message='{"order": 7}')
    headers, body = world.subscriber.wait(path, 2)[1]
    assert body == '{"order": 7}'
    assert headers["x-amz-sns-rawdelivery"] == "true"
    assert headers["Content-Type"] == "application/json"


def test_default_retries_are_walked_by_the_clock_then_dead_lettered(world: World) -> None:
    topic = world.topic()
    dlq_url, dlq_arn = world.queue()
    path = f"/down{next(_names)}"
    world.http_subscription(topic, path, RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}))
    world.subscriber.statuses[path] = [503] * 10
    world.sns.publish(TopicArn=topic, Message="retry me")
    world.settle()
    assert len(world.subscriber.posts(path)) == 2  # the confirmation, the first attempt
    world.advance(19)
    assert len(world.subscriber.posts(path)) == 2
    world.advance(1)  # the default policy: 3 retries, 20 seconds apart
    assert len(world.subscriber.posts(path)) == 3
    world.advance(20)
    world.advance(20)
    attempts = world.subscriber.posts(path)[1:]
    assert len(attempts) == 4
    assert len({headers["x-amz-sns-message-id"] for headers, _ in attempts}) == 1  # the same message each time
    assert world.received(dlq_url)[0] == attempts[0][1]  # the notification as it would have been delivered
    world.advance(600)
    assert len(world.subscriber.posts(path)) == 5
    assert world.counters(topic) | {"published": 0} == {
        "published": 0, "delivered": 0, "filtered": 0, "failed": 1, "dead_lettered": 1,
    }  # fmt: skip


def test_a_subscription_policy_runs_its_phases_and_a_late_success_is_a_delivery(world: World) -> None:
    topic = world.topic()
    dlq_url, dlq_arn = world.queue()
    path = f"/flaky{next(_names)}"
    policy = {"healthyRetryPolicy": {
        "numRetries": 6, "numNoDelayRetries": 1, "numMinDelayRetries": 1, "numMaxDelayRetries": 1,
        "minDelayTarget": 2, "maxDelayTarget": 10, "backoffFunction": "linear",
    }}  # fmt: skip
    world.http_subscription(topic, path, DeliveryPolicy=json.dumps(policy),
                            RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}))  # fmt: skip
    world.subscriber.statuses[path] = [500, 429, 500, 500, 500]
    world.sns.publish(TopicArn=topic, Message="eventually")
    world.settle()
    assert len(world.subscriber.posts(path)) - 1 == 2  # the first attempt and the no-delay retry
    # then 2 s (min delay), backoff 2 -> 10 s over 3 retries: 4.667 s, 7.333 s, 10 s; then 10 s (max delay)
    for seconds, attempts in ((1.9, 2), (0.1, 3), (4.6, 3), (0.1, 4), (7.4, 5), (10, 6)):
        world.advance(seconds)
        assert len(world.subscriber.posts(path)) - 1 == attempts, seconds
    world.advance(1000)
    assert len(world.subscriber.posts(path)) - 1 == 6
    assert world.received(dlq_url) == []
    assert world.counters(topic)["delivered"] == 1


def test_a_client_error_answer_is_not_retried(world: World) -> None:
    topic = world.topic()
    dlq_url, dlq_arn = world.queue()
    path = f"/gone{next(_names)}"
    world.http_subscription(topic, path, RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}),
                            RawMessageDelivery="true")  # fmt: skip
    world.subscriber.statuses[path] = [404]
    world.sns.publish(TopicArn=topic, Message="nobody home")
    world.settle()
    assert world.received(dlq_url) == ["nobody home"]
    world.advance(3600)
    assert len(world.subscriber.posts(path)) == 2  # the confirmation, the one attempt


def test_an_unreachable_endpoint_is_retried_then_dropped_without_a_dead_letter_queue(world: World) -> None:
    topic = world.topic(DeliveryPolicy=json.dumps({"http": {"defaultHealthyRetryPolicy": {"numRetries": 1}}}))
    path = f"/later{next(_names)}"
    sub_arn = world.http_subscription(topic, path)
    world.subscriber.statuses[path] = [500, 500]
    world.sns.publish(TopicArn=topic, Message="dropped")
    world.settle()
    world.advance(20)
    assert len(world.subscriber.posts(path)) == 3
    assert world.counters(topic)["failed"] == 1 and world.counters(topic)["dead_lettered"] == 0
    world.sns.unsubscribe(SubscriptionArn=sub_arn)


def test_unsubscribing_stops_the_retries(world: World) -> None:
    topic = world.topic()
    dlq_url, dlq_arn = world.queue()
    path = f"/leaving{next(_names)}"
    sub_arn = world.http_subscription(topic, path, RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn}))
    world.subscriber.statuses[path] = [500]
    world.sns.publish(TopicArn=topic, Message="stop")
    world.settle()
    world.sns.unsubscribe(SubscriptionArn=sub_arn)
    world.subscriber.wait(path, 3)  # the confirmation, the attempt, the UnsubscribeConfirmation
    world.advance(100)
    kinds = [headers["x-amz-sns-message-type"] for headers, _ in world.subscriber.posts(path)]
    assert kinds == ["SubscriptionConfirmation", "Notification", "UnsubscribeConfirmation"]
    assert world.received(dlq_url) == []  # dropped: the subscription, its dead-letter queue with it, is gone
    assert world.counters(topic)["failed"] == 1


# ---------------------------------------------------------------------------------------------------- Lambda


class Function:
    """A Python function recording its events; it raises while ``failures`` is above 0."""

    def __init__(self, failures: int = 0) -> None:
        self.events: list[dict[str, Any]] = []
        self.failures = failures
        self.lock = threading.Lock()

    def __call__(self, event: dict[str, Any], context: Any) -> None:
        with self.lock:
            self.events.append(event)
            if self.failures > 0:
                self.failures -= 1
                raise RuntimeError("not today")


def _function(world: World, handler: Function) -> str:
    name = f"fn{next(_names)}"
    world.srv.app.event_sources.register_function(name, handler)  # type: ignore[attr-defined]
    return f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:{name}"


def test_lambda_gets_the_sns_event(world: World) -> None:
    topic = world.topic()
    handler = Function()
    sub_arn = world.sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=_function(world, handler))[
        "SubscriptionArn"
    ]
    message_id = world.sns.publish(
        TopicArn=topic, Message="to lambda", MessageAttributes={"n": {"DataType": "Number", "StringValue": "3"}}
    )["MessageId"]
    world.settle()
    [event] = handler.events
    [record] = event["Records"]
    assert (record["EventSource"], record["EventVersion"], record["EventSubscriptionArn"]) == (
        "aws:sns", "1.0", sub_arn,
    )  # fmt: skip
    sns = record["Sns"]
    assert list(sns) == [
        "Type", "MessageId", "TopicArn", "Subject", "Message", "Timestamp", "SignatureVersion", "Signature",
        "SigningCertUrl", "UnsubscribeUrl", "MessageAttributes",
    ]  # fmt: skip
    assert (sns["MessageId"], sns["Subject"], sns["Message"]) == (message_id, None, "to lambda")
    assert sns["MessageAttributes"] == {"n": {"Type": "Number", "Value": "3"}}
    signed = {**sns, "SigningCertURL": sns["SigningCertUrl"]}
    verify_as_subscriber(signed, _certificate(sns["SigningCertUrl"]))
    assert world.counters(topic)["delivered"] == 1


def test_a_missing_function_is_dead_lettered_at_once(world: World) -> None:
    topic = world.topic()
    dlq_url, dlq_arn = world.queue()
    world.sns.subscribe(
        TopicArn=topic, Protocol="lambda", Endpoint=f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:nobody",
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn})},
    )  # fmt: skip
    world.sns.publish(TopicArn=topic, Message="lost")
    world.settle()
    [body] = world.received(dlq_url)
    assert json.loads(body)["Message"] == "lost"
    assert world.counters(topic)["dead_lettered"] == 1


def test_a_function_error_is_retried_by_lambda_twice_then_dropped(world: World) -> None:
    topic = world.topic()
    dlq_url, dlq_arn = world.queue()
    handler = Function(failures=5)
    world.sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=_function(world, handler),
                        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn})})  # fmt: skip
    world.sns.publish(TopicArn=topic, Message="fails")
    world.settle()
    assert len(handler.events) == 1
    world.advance(59)
    assert len(handler.events) == 1
    world.advance(1)  # one minute, then two
    assert len(handler.events) == 2
    world.advance(119)
    assert len(handler.events) == 2
    world.advance(1)
    assert len(handler.events) == 3
    world.advance(3600)
    assert len(handler.events) == 3
    assert world.received(dlq_url) == []  # Lambda's failure, not SNS's: SNS delivered the event
    assert world.counters(topic)["delivered"] == 1
    assert world.srv.app.sns.push.function_errors >= 1  # type: ignore[attr-defined]


def test_a_function_that_recovers_on_lambdas_retry_runs_no_more(world: World) -> None:
    topic = world.topic()
    handler = Function(failures=1)
    world.sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=_function(world, handler))
    world.sns.publish(TopicArn=topic, Message="second time lucky")
    world.settle()
    world.advance(60)
    world.advance(600)
    assert len(handler.events) == 2


def test_an_unreachable_lambda_is_retried_on_the_managed_schedule(subscriber: Subscriber) -> None:
    config = Config(clock="manual", host="127.0.0.1", log_level="warning", lambda_endpoint=subscriber.url)
    with ServerThread(config) as srv:
        world = World(srv, subscriber)
        topic = world.topic()
        name = f"remote{next(_names)}"
        path = f"/2015-03-31/functions/{name}/invocations"
        subscriber.statuses[path] = [502] * 6
        world.sns.subscribe(TopicArn=topic, Protocol="lambda",
                            Endpoint=f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:{name}")  # fmt: skip
        world.sns.publish(TopicArn=topic, Message="via the Invoke API")
        world.settle()
        assert len(subscriber.posts(path)) == 4  # the first attempt and 3 retries without delay
        world.advance(1)
        assert len(subscriber.posts(path)) == 5
        world.advance(1)
        assert len(subscriber.posts(path)) == 6  # the pre-backoff phase: 2 retries 1 s apart
        world.advance(1.5)  # the first backoff retry: a little over 1 s
        posts = subscriber.posts(path)
        assert len(posts) == 7
        event = json.loads(posts[-1][1])
        assert event["Records"][0]["Sns"]["Message"] == "via the Invoke API"
        world.advance(3600)
        assert len(subscriber.posts(path)) == 7
        assert world.counters(topic)["delivered"] == 1


def test_a_failed_confirmation_is_sent_again_until_confirmed(world: World) -> None:
    topic = world.topic()
    path = f"/shy{next(_names)}"
    world.subscriber.statuses[path] = [500, 500]
    world.sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=world.subscriber.url + path)
    world.settle()
    assert len(world.subscriber.posts(path)) == 1
    world.advance(20)
    first, again = world.subscriber.posts(path)
    assert first[1] == again[1]  # the same document, resent
    urllib.request.urlopen(json.loads(again[1])["SubscribeURL"]).close()  # confirmed: no third one
    world.advance(600)
    assert len(world.subscriber.posts(path)) == 2
