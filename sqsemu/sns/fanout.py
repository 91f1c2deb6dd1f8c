"""Delivery of a published message to a topic's subscriptions: filter policies, SQS queues straight into the
engine, HTTP/S and Lambda through their pushers, the other protocols recorded; FIFO deduplication; subscription
dead-letter queues; the counts and the filter explanations the console and metrics read.

Delivery runs after Publish is answered (``loop.call_soon``), as AWS's does, and each subscription's delivery is
all or nothing: a message either enters the queue (or the dead-letter queue) whole or is counted as failed.
Failures are the SNS Developer Guide's two kinds ("Amazon SNS dead-letter queues (DLQs)"): a client-side failure
(the queue is gone, delivery is refused by its policy, a raw message has more than 10 attributes, the queue refuses
the message) goes to the subscription's dead-letter queue at once or is dropped, never retried; server-side
failures are the pushers' (:mod:`sqsemu.sns.push`), retried by the delivery policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqsemu.sns.signing import SigningKey

import asyncio
import logging
import secrets
from collections import deque
from collections.abc import Callable
from typing import Any

import orjson

from sqsemu.clock import Clock
from sqsemu.engine.broker import Broker
from sqsemu.engine.errors import SQSError
from sqsemu.engine.message import MessageAttributeValue, SendEntry
from sqsemu.engine.queue import Queue
from sqsemu.sns import envelope
from sqsemu.sns.model import Subscription, Topic
from sqsemu.sns.publish import DEDUPLICATION_INTERVAL_MS, Publication
from sqsemu.sns.topics import Listener, Topics

__all__ = ["SNS_SENDER_ID", "Counters", "Fanout", "Pusher"]

logger = logging.getLogger("sqsemu.sns")

SNS_SENDER_ID = "AIDAIT2UOQQY3AUEKVGXU"
"""The SenderId of the messages SNS puts into SQS queues (what ReceiveMessage's SenderId shows for them on AWS)."""
RECORDED = 1000
"""Recorded deliveries kept (the newest), for every protocol sqsemu does not deliver to."""
EXPLAINED = 100
"""Filter refusals kept per topic (the newest)."""

Pusher = Callable[[Subscription, Publication], None]
"""Starts the delivery of a publication to an HTTP/S or Lambda subscription (supervised by the pusher)."""
Confirmer = Callable[[Subscription, str, str], None]
"""Sends a subscription's SubscriptionConfirmation or UnsubscribeConfirmation (``(subscription, document, type)``)
to an HTTP/S endpoint."""
AccessCheck = Callable[[Queue, Topic, Subscription], "str | None"]
"""Whether a queue's policy lets the topic send to it: None when it does, else the explanation (``--auth iam``
refuses; the default mode warns)."""


class Counters:
    """One topic's counts: messages published, deliveries made, deliveries a filter policy refused, deliveries
    failed (dead-lettered or dropped), deliveries dead-lettered."""

    __slots__ = ("published", "delivered", "filtered", "failed", "dead_lettered")

    def __init__(self) -> None:
        self.published = 0
        self.delivered = 0
        self.filtered = 0
        self.failed = 0
        self.dead_lettered = 0

    def as_dict(self) -> dict[str, int]:
        """The counts by name."""
        return {name: getattr(self, name) for name in self.__slots__}


class Fanout:
    """Delivers publications. ``pushers`` maps ``http``, ``https`` and ``lambda`` to their pushers (absent: the
    delivery is recorded instead); ``access`` decides a queue policy's grant (None: every delivery allowed);
    ``refuse_denied`` makes a refused grant a failed delivery (``--auth iam``) instead of a warning."""

    def __init__(self, broker: Broker, topics: Topics, clock: Clock, signing: Callable[[], SigningKey]) -> None:
        self.broker = broker
        self.topics = topics
        self.clock = clock
        self._signing = signing
        self.pushers: dict[str, Pusher] = {}
        self.confirmers: dict[str, Confirmer] = {}
        self.access: AccessCheck | None = None
        self.refuse_denied = False
        self.counters: dict[str, Counters] = {}
        self.recorded: deque[dict[str, Any]] = deque(maxlen=RECORDED)
        self.explained: dict[str, deque[dict[str, Any]]] = {}
        self.errors = 0
        self._warned: set[str] = set()
        self._scheduled = 0
        topics.listeners.append(_Forget(self))
        self._idle: asyncio.Event | None = None
        self._made: tuple[Publication, str, str, str | None] | None = None  # the last notification, in two parts

    @property
    def signing(self) -> SigningKey:
        """The server's signing key (made at its first use: an RSA key takes a moment to generate)."""
        return self._signing()

    # ------------------------------------------------------------------ publishing

    def counts(self, topic: Topic) -> Counters:
        """The counts of ``topic`` (made at its first use)."""
        counters = self.counters.get(topic.arn)
        if counters is None:
            counters = self.counters[topic.arn] = Counters()
        return counters

    def deduplicate(self, publication: Publication) -> tuple[str, str] | None:
        """A FIFO topic's deduplication: ``(MessageId, SequenceNumber)`` of an earlier publication with the same
        deduplication ID within 5 minutes (this one then is not delivered), else None after giving this one its
        SequenceNumber and remembering it. Not for standard topics."""
        topic = publication.topic
        now = self.clock.now_ms()
        dedup_id = publication.deduplication_id or ""
        if topic.dedup:
            for key in [k for k, (expiry, _, _) in topic.dedup.items() if expiry <= now]:
                del topic.dedup[key]
        earlier = topic.dedup.get(dedup_id)
        if earlier is not None:
            return earlier[1], earlier[2]
        topic.sequence += 1
        publication.sequence_number = str(10**19 + topic.sequence)  # 20 digits, as AWS writes them
        topic.dedup[dedup_id] = (now + DEDUPLICATION_INTERVAL_MS, publication.message_id, publication.sequence_number)
        self.topics._changed(topic)
        return None

    def publish(self, publication: Publication) -> None:
        """Count the publication and deliver it to the subscriptions the topic has now, after the answer (the
        event loop's next turn)."""
        topic = publication.topic
        self.counts(topic).published += 1
        subscriptions = [sub for sub in topic.subscriptions.values() if not sub.pending]
        if not subscriptions:
            return
        self._scheduled += 1
        asyncio.get_running_loop().call_soon(self._deliver_all, publication, subscriptions)

    async def settle(self) -> None:
        """Wait until every publication scheduled so far has been handed to its subscriptions."""
        while self._scheduled:
            await asyncio.sleep(0)

    def _deliver_all(self, publication: Publication, subscriptions: list[Subscription]) -> None:
        try:
            for sub in subscriptions:
                if sub.arn not in publication.topic.subscriptions:  # unsubscribed since
                    continue
                try:
                    self._deliver(sub, publication)
                except Exception:  # supervised: one subscription's failure does not stop the others
                    self.errors += 1
                    self.counts(publication.topic).failed += 1
                    logger.exception("delivering message %s to %s failed", publication.message_id, sub.arn)
        finally:
            self._scheduled -= 1

    def _deliver(self, sub: Subscription, publication: Publication) -> None:
        refusal = self.filter_refusal(sub, publication)
        topic = publication.topic
        if refusal is not None:
            self.counts(topic).filtered += 1
            self._explain(topic, sub, publication, refusal)
            return
        if sub.protocol == "sqs":
            self.to_queue(sub, publication)
            return
        pusher = self.pushers.get(sub.protocol)
        if pusher is not None:
            pusher(sub, publication)
            return
        self.record(sub, publication)

    # ------------------------------------------------------------------ filters

    @staticmethod
    def filter_refusal(sub: Subscription, publication: Publication) -> tuple[str, str] | None:
        """Why the subscription's filter policy refuses the publication (``(key, reason)``), or None when it
        accepts it (or has none). Body scope reads the message the subscription would get."""
        policy = sub.filter
        if policy is None:
            return None
        if policy.scope == "MessageBody":
            refusal = policy.match_body(publication.message_for(sub.protocol))
        else:
            refusal = policy.match_attributes(publication.attributes)
        return None if refusal is None else (refusal.key, refusal.reason)

    def _explain(self, topic: Topic, sub: Subscription, publication: Publication, refusal: tuple[str, str]) -> None:
        key, reason = refusal
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("filtered out: message %s to %s: key %r: %s", publication.message_id, sub.arn, key, reason)
        kept = self.explained.get(topic.arn)
        if kept is None:
            kept = self.explained[topic.arn] = deque(maxlen=EXPLAINED)
        kept.append({
            "message_id": publication.message_id, "subscription_arn": sub.arn, "protocol": sub.protocol,
            "endpoint": sub.endpoint, "key": key, "reason": reason,
            "timestamp": envelope.iso_timestamp(publication.timestamp_ms),
        })  # fmt: skip

    # ------------------------------------------------------------------ documents

    def cert_url(self, url_base: str) -> str:
        """Where the signing certificate is served on this server."""
        return f"{url_base}/_sqsemu/sns/{self.signing.cert_name}"

    @staticmethod
    def unsubscribe_url(url_base: str, sub: Subscription) -> str:
        """The UnsubscribeURL of a subscription (a GET this server answers)."""
        return f"{url_base}/?Action=Unsubscribe&SubscriptionArn={sub.arn}"

    def notification(self, sub: Subscription, publication: Publication) -> str:
        """The JSON notification ``sub`` gets for ``publication`` (SQS, HTTP/S, email-json); without
        MessageAttributes for a MessageStructure=json publication ("Message attributes are sent only when the
        message structure is String, not JSON": SNS Developer Guide, "Amazon SNS message attributes").

        A publication's notifications differ between its subscriptions only in their UnsubscribeURL, which is not
        signed (SNS Developer Guide, "Verifying the signatures of Amazon SNS messages"): the document is made and
        signed once per publication and message (a MessageStructure=json publication has one per protocol), with a
        mark where the UnsubscribeURL goes, and each subscription's URL is put in its place. An RSA PKCS#1 v1.5
        signature of the same bytes is the same bytes, so every notification is what signing each would give."""
        message = publication.message_for(sub.protocol)
        made = self._made
        if made is None or made[0] is not publication or made[1] != message:
            text = self._document(publication, message, _UNSUBSCRIBE_MARK)
            head, mark, tail = text.partition(_UNSUBSCRIBE_MARK)
            made = self._made = (publication, message, head, tail if mark and _UNSUBSCRIBE_MARK not in tail else None)
        if made[3] is None:  # the mark is in the message itself (it cannot be guessed, but never trust that)
            return self._document(publication, message, self.unsubscribe_url(publication.url_base, sub))
        return made[2] + envelope.json_string_body(self.unsubscribe_url(publication.url_base, sub)) + made[3]

    def _document(self, publication: Publication, message: str, unsubscribe_url: str) -> str:
        return envelope.notification(
            message_id=publication.message_id,
            topic_arn=publication.topic.arn,
            subject=publication.subject,
            message=message,
            timestamp_ms=publication.timestamp_ms,
            signature_version=publication.topic.signature_version,
            signing=self.signing,
            cert_url=self.cert_url(publication.url_base),
            unsubscribe_url=unsubscribe_url,
            message_attributes=publication.attributes if publication.structured is None else {},
            sequence_number=publication.sequence_number,
        )

    # ------------------------------------------------------------------ SQS

    def sqs_entry(self, sub: Subscription, publication: Publication, queue: Queue) -> SendEntry:
        """The SendEntry ``queue`` gets; raises ``_ClientFailure`` for a raw message with more than 10
        attributes."""
        topic = publication.topic
        if sub.raw:
            body = publication.message_for("sqs")
            attributes: dict[str, MessageAttributeValue] | None = None
            if publication.attributes and publication.structured is None:
                if len(publication.attributes) > 10:
                    raise _ClientFailure(
                        f"a raw message delivery carries at most 10 message attributes; this message has "
                        f"{len(publication.attributes)}"
                    )
                attributes = {name: _sqs_attribute(value) for name, value in publication.attributes.items()}
        else:
            body = self.notification(sub, publication)
            attributes = None
        group_id = publication.group_id
        dedup_id = None
        if queue.fifo:
            dedup_id = publication.deduplication_id
        elif topic.fifo:
            group_id = None  # a FIFO topic's standard queue gets neither (recorded)
        return SendEntry(body, None, attributes, None, group_id, dedup_id, publication.trace_header)

    def to_queue(self, sub: Subscription, publication: Publication) -> None:
        """Deliver to an SQS subscription: into the queue, or its failure to the dead-letter queue."""
        queue = self.broker.resolve_arn(sub.endpoint)
        if queue is None:
            self.client_failure(sub, publication, "the queue does not exist")
            return
        try:
            entry = self.sqs_entry(sub, publication, queue)
        except _ClientFailure as exc:
            self.client_failure(sub, publication, str(exc))
            return
        if self.access is not None and (self.refuse_denied or sub.arn not in self._warned):
            refusal = self.access(queue, publication.topic, sub)
            if refusal is not None:
                if self.refuse_denied:
                    self.client_failure(sub, publication, f"delivery refused: {refusal}")
                    return
                self._warned.add(sub.arn)
                logger.warning("subscription %s: AWS would not deliver to %s: %s", sub.arn, sub.endpoint, refusal)
        try:
            self.broker.send_message(queue, entry, SNS_SENDER_ID)
        except SQSError as exc:
            self.client_failure(sub, publication, f"the queue refused the message: {exc.shape}: {exc.message}")
            return
        self.counts(publication.topic).delivered += 1

    def client_failure(self, sub: Subscription, publication: Publication, why: str) -> None:
        """A delivery that cannot succeed: to the subscription's dead-letter queue (the message as it would have
        been delivered), else dropped; counted and logged either way."""
        counts = self.counts(publication.topic)
        counts.failed += 1
        target = _dead_letter_target(sub)
        if target is not None:
            queue = self.broker.resolve_arn(target)
            refusal = self._dead_letter_refusal(sub, queue, publication.topic) if queue is not None else None
            if refusal is not None:
                logger.warning(
                    "subscription %s: message %s not delivered (%s) and dropped: its dead-letter queue %s refused it: "
                    "%s", sub.arn, publication.message_id, why, target, refusal,
                )  # fmt: skip
                return
            if queue is not None:
                body = publication.message_for(sub.protocol) if sub.raw else self.notification(sub, publication)
                attributes = None
                if (
                    sub.raw
                    and publication.attributes
                    and publication.structured is None
                    and len(publication.attributes) <= 10
                ):
                    attributes = {name: _sqs_attribute(value) for name, value in publication.attributes.items()}
                group_id = publication.group_id if queue.fifo or not publication.topic.fifo else None
                dedup_id = publication.deduplication_id if queue.fifo else None
                entry = SendEntry(body, None, attributes, None, group_id, dedup_id, publication.trace_header)
                try:
                    self.broker.send_message(queue, entry, SNS_SENDER_ID)
                except SQSError as exc:
                    logger.warning(
                        "subscription %s: message %s not delivered (%s) and its dead-letter queue %s refused it: %s",
                        sub.arn, publication.message_id, why, target, exc.message,
                    )  # fmt: skip
                    return
                counts.dead_lettered += 1
                logger.info("subscription %s: message %s not delivered (%s); moved to its dead-letter queue %s",
                            sub.arn, publication.message_id, why, target)  # fmt: skip
                return
        logger.warning(
            "subscription %s: message %s not delivered and dropped: %s", sub.arn, publication.message_id, why
        )

    def _dead_letter_refusal(self, sub: Subscription, queue: Queue, topic: Topic) -> str | None:
        """Why the dead-letter ``queue``'s policy refuses the topic (it needs the grant a delivery needs, SNS
        Developer Guide, "Amazon SNS dead-letter queues (DLQs)"): with ``refuse_denied`` the reason (the message is
        then dropped); else None, after one warning per subscription and queue."""
        if self.access is None:
            return None
        key = f"{sub.arn} {queue.arn}"
        if not self.refuse_denied and key in self._warned:
            return None
        refusal = self.access(queue, topic, sub)
        if refusal is None or self.refuse_denied:
            return refusal
        self._warned.add(key)
        logger.warning("subscription %s: AWS would not move its messages to its dead-letter queue %s: %s", sub.arn,
                       queue.arn, refusal)  # fmt: skip
        return None

    # ------------------------------------------------------------------ confirmations

    def confirmation_document(self, url_base: str, topic: Topic, sub: Subscription, token: str) -> str:
        """The SubscriptionConfirmation of ``sub`` (its SubscribeURL a GET this server answers)."""
        subscribe_url = f"{url_base}/?Action=ConfirmSubscription&TopicArn={topic.arn}&Token={token}"
        return envelope.subscription_confirmation(
            message_id=_new_id(), token=token, topic_arn=topic.arn, subscribe_url=subscribe_url,
            timestamp_ms=self.clock.now_ms(), signature_version=topic.signature_version, signing=self.signing,
            cert_url=self.cert_url(url_base),
        )  # fmt: skip

    def confirmation(self, url_base: str, topic: Topic, sub: Subscription, token: str) -> None:
        """Send (HTTP/S) or record (email) a new subscription's SubscriptionConfirmation."""
        document = self.confirmation_document(url_base, topic, sub, token)
        confirmer = self.confirmers.get(sub.protocol)
        if confirmer is not None:
            confirmer(sub, document, envelope.SUBSCRIPTION_CONFIRMATION)
            return
        self.recorded.append({
            "kind": envelope.SUBSCRIPTION_CONFIRMATION, "protocol": sub.protocol, "endpoint": sub.endpoint,
            "subscription_arn": sub.arn, "topic_arn": topic.arn, "token": token, "message": document,
            "timestamp": envelope.iso_timestamp(self.clock.now_ms()),
        })  # fmt: skip

    def unsubscribed(self, url_base: str, sub: Subscription) -> None:
        """Send an HTTP/S subscription's UnsubscribeConfirmation (its SubscribeURL restores it)."""
        confirmer = self.confirmers.get(sub.protocol)
        topic = self.topics.by_arn.get(sub.topic_arn)
        if confirmer is None or topic is None:
            return
        token = sub.token or _new_token()
        document = envelope.unsubscribe_confirmation(
            message_id=_new_id(), token=token, topic_arn=topic.arn, subscription_arn=sub.arn,
            subscribe_url=f"{url_base}/?Action=ConfirmSubscription&TopicArn={topic.arn}&Token={token}",
            timestamp_ms=self.clock.now_ms(), signature_version=topic.signature_version, signing=self.signing,
            cert_url=self.cert_url(url_base),
        )  # fmt: skip
        confirmer(sub, document, envelope.UNSUBSCRIBE_CONFIRMATION)

    # ------------------------------------------------------------------ recorded

    def record(self, sub: Subscription, publication: Publication, kind: str = "Notification") -> dict[str, Any]:
        """Keep what a subscription of a protocol sqsemu does not deliver to would have been sent (read through
        ``GET /_sqsemu/sns/deliveries``)."""
        protocol = sub.protocol
        if protocol == "email-json":
            payload = self.notification(sub, publication)
        else:
            payload = publication.message_for(protocol)
        entry = {
            "kind": kind, "protocol": protocol, "endpoint": sub.endpoint, "subscription_arn": sub.arn,
            "topic_arn": publication.topic.arn, "message_id": publication.message_id, "subject": publication.subject,
            "message": payload,
            "message_attributes": {k: {"Type": t, "Value": v} for k, (t, v) in publication.attributes.items()},
            "timestamp": envelope.iso_timestamp(publication.timestamp_ms),
        }  # fmt: skip
        self.recorded.append(entry)
        self.counts(publication.topic).delivered += 1
        return entry


class _Forget(Listener):
    """Drops a deleted topic's counts and filter refusals, so a topic made again under its ARN starts afresh."""

    def __init__(self, fanout: Fanout) -> None:
        self.fanout = fanout

    def topic_deleted(self, topic: Topic) -> None:
        self.fanout.counters.pop(topic.arn, None)
        self.fanout.explained.pop(topic.arn, None)
        for arn in topic.subscriptions:
            self.fanout._warned.discard(arn)


class _ClientFailure(Exception):
    """A delivery that fails on the subscriber's side (not retried)."""


_UNSUBSCRIBE_MARK = f"sqsemu-unsubscribe-url-{secrets.token_hex(16)}"
"""Where a subscription's UnsubscribeURL goes in a publication's notification (random per process)."""


def _new_id() -> str:
    import uuid

    return str(uuid.uuid4())


def _new_token() -> str:
    import secrets

    return secrets.token_hex(64)


def _sqs_attribute(value: tuple[str, str]) -> MessageAttributeValue:
    import base64

    data_type, text = value
    if data_type.startswith("Binary"):
        return MessageAttributeValue(data_type, None, base64.b64decode(text))
    return MessageAttributeValue(data_type, text, None)


def _dead_letter_target(sub: Subscription) -> str | None:
    policy = sub.attributes.get("RedrivePolicy")
    if not policy:
        return None
    try:
        target = orjson.loads(policy).get("deadLetterTargetArn")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return target if isinstance(target, str) else None
