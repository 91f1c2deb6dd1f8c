"""SNS on sqsemu's port: which requests are SNS calls, and the one SNS service per server that answers them.

A request is an SNS call when its SigV4 credential scope names ``sns`` (``<key>/<date>/<region>/sns/aws4_request``;
AWS General Reference, "Elements of an AWS API request signature"), or, without a signature that names a service,
when its ``Action`` is one only SNS has; ``AddPermission`` and ``RemovePermission`` exist in both services, and a
``TopicArn`` parameter (where SQS has ``QueueUrl``) makes them SNS's. SNS speaks the Query protocol only (botocore's
SNS model: ``"protocols": ["query"]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqsemu.eventsource.functions import Functions
    from sqsemu.sns.signing import SigningKey

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqsemu.clock import Clock
from sqsemu.engine.broker import Broker
from sqsemu.sns import envelope
from sqsemu.sns.errors import InvalidAction, SNSError
from sqsemu.sns.fanout import SNS_SENDER_ID, Fanout
from sqsemu.sns.model import Subscription, Topic
from sqsemu.sns.push import Pushers
from sqsemu.sns.service import ACTIONS, NOT_SERVED, Service, SNSCall, not_served
from sqsemu.sns.topics import Topics
from sqsemu.sns.wire import Params, encode

__all__ = ["SNS_ACTIONS", "SNS", "is_sns_call"]

logger = logging.getLogger("sqsemu.sns")

SNS_ACTIONS = frozenset(ACTIONS) | NOT_SERVED
_SHARED = frozenset({"AddPermission", "RemovePermission"})
"""Actions both services have: SNS's when a TopicArn is given."""
_SNS_ONLY = SNS_ACTIONS - _SHARED


def is_sns_call(service: str | None, action: str | None, params: Sequence[tuple[str, str]]) -> bool:
    """Whether a request is an SNS call: signed for ``sns``, or (signed for no service) naming an SNS action."""
    if service is not None:
        return service == "sns"
    if action is None:
        return False
    if action in _SNS_ONLY:
        return True
    return action in _SHARED and any(name == "TopicArn" for name, _ in params)


class SNS:
    """The SNS service of one server: its topics, delivery and signing key, over the server's broker and clock.
    ``data_dir`` (durable mode) keeps the signing key and certificate across restarts; ``functions`` is the server's
    Lambda function registry (the one event source mappings invoke), which ``lambda`` subscriptions are delivered
    to (None: their deliveries are recorded). :meth:`start` on the running loop at start-up, :meth:`aclose` at
    shutdown."""

    def __init__(
        self, broker: Broker, clock: Clock, data_dir: Path | None = None, functions: Functions | None = None
    ) -> None:
        self.broker = broker
        self.clock = clock
        self.topics = Topics(clock)
        self.data_dir = data_dir
        self._signing: SigningKey | None = None
        self.fanout = Fanout(broker, self.topics, clock, self.signing_key)
        self.service = Service(self.topics, self.fanout)
        self.service.on_subscribed = self._subscribed
        self.service.on_unsubscribed = self._unsubscribed
        self.push = Pushers(self.fanout, broker, clock, functions)
        self.push.install()

    def start(self) -> None:
        """Server start-up (on the running loop)."""
        self.push.start()

    async def aclose(self) -> None:
        """Server shutdown: the HTTP/S and Lambda deliveries in progress or waiting for a retry are dropped (they
        live in memory only), the connections to HTTP/S endpoints closed. Never raises."""
        await self.push.aclose()

    def settle_threadsafe(self, timeout_s: float = 10.0) -> None:
        """From another thread (a test's): wait until every publication so far has been handed to its
        subscriptions and every HTTP/S or Lambda delivery is over or waits for the clock. Raises ``TimeoutError``
        after ``timeout_s`` real seconds, ``RuntimeError`` before :meth:`start`."""
        self.push.settle_threadsafe(timeout_s)

    def certificate(self, name: str) -> bytes | None:
        """The PEM of the signing certificate when ``name`` is its file name (``SimpleNotificationService-<hash>.pem``,
        the last part of SigningCertURL), else None."""
        key = self.signing_key()
        return key.cert_pem() if name == key.cert_name else None

    def signing_key(self) -> SigningKey:
        """The server's message signing key and certificate (made, or read from the data folder, at first use)."""
        if self._signing is None:
            from sqsemu.sns.signing import SigningKey  # cryptography: imported at the first signed document

            self._signing = SigningKey.load_or_create(self.data_dir)
        return self._signing

    def answer(self, action: str | None, call: SNSCall, pairs: Sequence[tuple[str, str]], request_id: str) -> bytes:
        """The XML answer of one SNS call; raises :class:`~sqsemu.sns.errors.SNSError`."""
        if action is None or action not in ACTIONS:
            if action in NOT_SERVED:
                raise not_served(action)
            raise InvalidAction(f"Could not find operation {action} for version 2010-03-31")
        result = ACTIONS[action](self.service, call, Params(pairs))
        return encode(action, None if result is None else list(result), request_id)

    def anonymous(self, action: str | None, pairs: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
        """``(region, account)`` of the topic an unsigned call may act on without a signature: ConfirmSubscription
        of a topic that exists, or Unsubscribe of a subscription confirmed without AuthenticateOnUnsubscribe (SNS
        API Reference, "ConfirmSubscription" and "Unsubscribe"); None for every other call."""
        if action == "ConfirmSubscription":
            arn = next((value for name, value in pairs if name == "TopicArn"), "")
            topic = self.topics.by_arn.get(arn)
            return None if topic is None else (topic.region, topic.account)
        if action == "Unsubscribe":
            arn = next((value for name, value in pairs if name == "SubscriptionArn"), "")
            sub = self.topics.subscriptions.get(arn)
            if sub is None or sub.authenticated:
                return None
            parts = sub.topic_arn.split(":")
            return parts[3], parts[4]
        return None

    def reset(self, account: str | None = None) -> int:
        """Delete the topics (of ``account`` when given), with their subscriptions, their counts, filter
        explanations and recorded deliveries (a topic made again starts from nothing); how many."""
        gone = {arn for arn, topic in self.topics.by_arn.items() if account is None or topic.account == account}
        count = self.topics.reset(account)
        fanout = self.fanout
        for arn in gone:
            fanout.counters.pop(arn, None)
            fanout.explained.pop(arn, None)
        kept = [entry for entry in fanout.recorded if entry.get("topic_arn") not in gone]
        if len(kept) != len(fanout.recorded):
            fanout.recorded.clear()
            fanout.recorded.extend(kept)
        return count

    # ------------------------------------------------------------------ confirmations

    def _subscribed(self, call: SNSCall, topic: Topic, sub: Subscription) -> None:
        """A new subscription: confirmed at once, or pending with its SubscriptionConfirmation sent (SNS Developer
        Guide, "Sending Amazon SNS messages to an Amazon SQS queue or AWS Lambda function in a different account":
        the queue owner's own subscription is confirmed; the topic owner's subscription of another account's
        queue waits for that account to confirm; HTTP/S and email endpoints always confirm)."""
        protocol = sub.protocol
        if protocol == "sqs":
            queue_account = sub.endpoint.split(":")[4]
            if queue_account == call.account:
                return
            token = self.topics.mark_pending(sub)
            self._confirmation_to_queue(call, topic, sub, token)
            return
        if protocol in ("http", "https", "email", "email-json"):
            token = self.topics.mark_pending(sub)
            self.fanout.confirmation(call.url_base, topic, sub, token)

    def _confirmation_to_queue(self, call: SNSCall, topic: Topic, sub: Subscription, token: str) -> None:
        queue = self.broker.resolve_arn(sub.endpoint)
        if queue is None:
            logger.info("subscription %s waits for confirmation; its queue does not exist", sub.arn)
            return
        from sqsemu.engine.errors import SQSError
        from sqsemu.engine.message import SendEntry

        access = self.fanout.access  # the confirmation needs the queue policy's grant, as a notification does
        refusal = access(queue, topic, sub) if access is not None else None
        if refusal is not None:
            if self.fanout.refuse_denied:
                logger.warning("subscription %s: its SubscriptionConfirmation was not sent to %s: %s", sub.arn,
                               sub.endpoint, refusal)  # fmt: skip
                return
            logger.warning("subscription %s: AWS would not send its SubscriptionConfirmation to %s: %s", sub.arn,
                           sub.endpoint, refusal)  # fmt: skip
        body = self.fanout.confirmation_document(call.url_base, topic, sub, token)
        try:
            self.broker.send_message(queue, SendEntry(body), SNS_SENDER_ID)
        except SQSError as exc:
            logger.warning("subscription %s: its SubscriptionConfirmation was refused by %s: %s", sub.arn,
                           sub.endpoint, exc.message)  # fmt: skip

    def _unsubscribed(self, call: SNSCall, sub: Subscription) -> None:
        if sub.protocol in ("http", "https"):
            self.fanout.unsubscribed(call.url_base, sub)


def render_error(error: SNSError, request_id: str) -> tuple[int, bytes]:
    """``(status, body)`` of an SNS error."""
    from sqsemu.sns.wire import encode_error

    return encode_error(error, request_id)


_ = (Mapping, envelope)
