"""One server's SNS among its other layers: found from the server's broker (the admin routes, the reset), restored
from the durable store at start-up and journaled into it from then on.

Durable mode (``--data-dir``) keeps each topic as one document (:meth:`~sqsemu.sns.model.Topic.to_doc`: its
attributes, tags, data protection policy, FIFO deduplication history and sequence number, and its subscriptions with
their attributes, pending state and confirmation tokens) in the store's ``topics`` table
(:mod:`sqsemu.persistence.sqlite`). A change is recorded when :class:`~sqsemu.sns.topics.Topics` tells its listeners,
and the call that made it is answered once it is committed, as an SQS call is (docs/durable.md). The counts and
recorded deliveries of :class:`~sqsemu.sns.fanout.Fanout` are observations, not state: they start at zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import orjson

from sqsemu.engine.broker import Broker
from sqsemu.persistence import StoreError
from sqsemu.sns.api import SNS
from sqsemu.sns.filterpolicy import FilterPolicyError
from sqsemu.sns.model import Topic
from sqsemu.sns.topics import Listener, Topics

__all__ = [
    "LAYER",
    "TopicStore",
    "attach",
    "replace_topics",
    "restore_topic_documents",
    "restore_topics",
    "sns_for",
]

LAYER = "sns"
"""The key of a server's :class:`~sqsemu.sns.api.SNS` in ``Broker.layers``."""


class TopicStore(Protocol):
    """What SNS needs of the durable store (``sqsemu.persistence.Store``)."""

    def topic_saved(self, topic: Topic) -> None:
        """Record that ``topic`` was created or changed."""

    def topic_forgotten(self, arn: str) -> None:
        """Record that the topic ``arn`` is gone."""

    def saved_topics(self) -> list[str]:
        """The saved topics' documents (JSON texts), in creation order."""


class _Journal(Listener):
    """Tells the store every change of a topic."""

    def __init__(self, store: TopicStore) -> None:
        self.store = store

    def topic_changed(self, topic: Topic) -> None:
        self.store.topic_saved(topic)

    def topic_deleted(self, topic: Topic) -> None:
        self.store.topic_forgotten(topic.arn)


def sns_for(broker: Broker) -> SNS | None:
    """The SNS service of the server whose broker is ``broker`` (None: none attached, e.g. a bare broker)."""
    sns = broker.layers.get(LAYER)
    assert sns is None or isinstance(sns, SNS)
    return sns


def attach(sns: SNS, store: TopicStore | None = None) -> int:
    """Make ``sns`` the SNS of its broker's server (:func:`sns_for`); with ``store`` (durable mode), restore the
    saved topics into it and record every later change. Returns how many topics were restored. Raises
    ``StoreError`` for a saved topic that cannot be read (see :func:`restore_topics`)."""
    sns.broker.layers[LAYER] = sns
    if store is None:
        return 0
    restored = restore_topics(sns.topics, store)
    sns.topics.listeners.append(_Journal(store))
    return restored


def restore_topics(topics: Topics, store: TopicStore) -> int:
    """Put the store's saved topics into ``topics`` (:func:`restore_topic_documents`). Returns how many.

    Raises ``StoreError`` (the server does not start) for a document that cannot be read, or a filter policy this
    version no longer accepts: serving such a subscription without its filter would deliver what it refuses."""
    texts = store.saved_topics()
    documents: list[Mapping[str, Any]] = []
    for text in texts:
        try:
            documents.append(orjson.loads(text))
        except orjson.JSONDecodeError as exc:
            raise StoreError(f"a saved SNS topic cannot be read ({type(exc).__name__}: {exc}): {text[:200]}") from None
    return len(restore_topic_documents(topics, documents))


def restore_topic_documents(topics: Topics, documents: Iterable[Mapping[str, Any]]) -> list[Topic]:
    """Put the topics of these documents (:meth:`Topic.to_doc`, in creation order) into ``topics``, their
    subscriptions' filter policies parsed again; ListSubscriptions keeps its order (subscriptions of every topic
    by creation time). The one way back from a topic's document: durable mode's restore and a loaded state
    (``sqsemu.state``) both come here. Returns the topics restored.

    Raises ``StoreError`` for a document that is not a topic's, or a filter policy this version does not accept
    (the topics before it are restored)."""
    restored: list[Topic] = []
    for document in documents:
        try:
            topic = Topic.from_doc(document)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            text = orjson.dumps(document, default=str).decode()
            raise StoreError(f"a saved SNS topic cannot be read ({type(exc).__name__}: {exc}): {text[:200]}") from None
        try:
            topics.restore(topic)
        except FilterPolicyError as exc:
            raise StoreError(
                f"the saved SNS topic {topic.arn} has a subscription whose FilterPolicy this sqsemu refuses: "
                f"{exc.message}"
            ) from None
        restored.append(topic)
    if restored:
        ordered = sorted(topics.subscriptions.values(), key=lambda sub: sub.created_ms)  # stable: topic order
        topics.subscriptions.clear()
        topics.subscriptions.update((sub.arn, sub) for sub in ordered)
    return restored


def replace_topics(sns: SNS, documents: Iterable[Mapping[str, Any]]) -> int:
    """Replace every topic of ``sns`` by the topics of ``documents`` (a loaded state, ``sqsemu.state``): the
    topics go as ``POST /_sqsemu/reset`` makes them go (with their counts and recorded deliveries), the new ones
    come through :func:`restore_topic_documents`, and the listeners (the durable store) hear each of them. The
    documents must have been checked (restored into a scratch :class:`Topics` without error). Returns how many."""
    sns.reset()
    restored = restore_topic_documents(sns.topics, documents)
    for topic in restored:
        for listener in sns.topics.listeners:
            listener.topic_changed(topic)
    return len(restored)
