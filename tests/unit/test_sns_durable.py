"""SNS topics in the durable store (``sqsemu.persistence.sqlite`` with ``sqsemu.sns.layer``), without sockets: a
server's SNS records into a store; a second store opened on the same folder restores into a fresh SNS, which must
hold the same topics, subscriptions, pending confirmations, tags, attributes and FIFO deduplication history. Also:
one document per topic per batch, creation order, refusal of an unreadable saved topic, and a Publish answered
only once its deliveries are on disk."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.http.app import create_app
from sqsemu.persistence import StoreError
from sqsemu.persistence.sqlite import FILE_NAME, SQLiteStore
from sqsemu.sns.api import SNS
from sqsemu.sns.layer import attach, sns_for
from sqsemu.sns.service import SNSCall
from tests.unit.app_helpers import call_asgi
from tests.unit.engine_helpers import START_MS

ACCOUNT = "000000000000"
OTHER = "111111111111"
REGION = "us-east-1"
BASE = "http://localhost:9324"


class SNSNode:
    """A broker on a manual clock with a store on ``data_dir`` and the server's SNS over them, restored like the
    server restores them (the broker's state first, then the topics)."""

    def __init__(self, data_dir: Path, now_ms: int = START_MS) -> None:
        self.clock = ManualClock(now_ms)
        self.broker = Broker(self.clock)
        self.store = SQLiteStore.open(str(data_dir))
        self.store.restore(self.broker)
        self.store.attach(self.broker)
        self.sns = SNS(self.broker, self.clock)
        self.restored = attach(self.sns, self.store)
        self.requests = 0

    def call(self, action: str, account: str = ACCOUNT, **params: Any) -> str:
        """One SNS call through the service, as the HTTP layer makes it (``A__b`` names the parameter ``A.b``); its
        XML answer."""
        pairs: list[tuple[str, str]] = [(k.replace("__", "."), str(v)) for k, v in params.items()]
        call = SNSCall(account, REGION, f"arn:aws:iam::{account}:root", BASE)
        self.requests += 1
        return self.sns.answer(action, call, pairs, f"req-{self.requests}").decode()

    def topic_docs(self) -> list[dict[str, Any]]:
        return [topic.to_doc() for topic in self.sns.topics.by_arn.values()]

    def close(self) -> None:
        try:
            self.store.commit_pending()
        except StoreError:
            pass
        self.store.close()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def node(data_dir: Path) -> Iterator[SNSNode]:
    n = SNSNode(data_dir)
    yield n
    n.close()


def reopen(node: SNSNode, data_dir: Path) -> SNSNode:
    now = node.clock.now_ms()
    node.close()
    return SNSNode(data_dir, now)


def rows(data_dir: Path, sql: str) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(data_dir / FILE_NAME)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def topic_arn(name: str, account: str = ACCOUNT) -> str:
    return f"arn:aws:sns:{REGION}:{account}:{name}"


def queue_arn(name: str, account: str = ACCOUNT) -> str:
    return f"arn:aws:sqs:{REGION}:{account}:{name}"


def result(xml: str) -> str:
    """The ``<PublishResult>`` element of an answer."""
    return xml[xml.index("<PublishResult>") : xml.index("</PublishResult>")]


def listed(node: SNSNode) -> tuple[list[str], list[str]]:
    """ListTopics and ListSubscriptions of the default account, in their order."""
    topics = [t.arn for t in node.sns.topics.list_topics(ACCOUNT, REGION, None)[0]]
    subs = [s.arn for s in node.sns.topics.list_subscriptions(ACCOUNT, REGION, None)[0]]
    return topics, subs


def test_topics_come_back_whole_after_a_restart(node: SNSNode, data_dir: Path) -> None:
    node.call(
        "CreateTopic", Name="orders", Attributes__entry__1__key="DisplayName", Attributes__entry__1__value="Orders",
        Tags__member__1__Key="team", Tags__member__1__Value="shop",
    )  # fmt: skip
    orders = node.sns.topics.by_arn[topic_arn("orders")]
    topics = node.sns.topics
    raw, _ = topics.subscribe(orders, "sqs", queue_arn("billing"), {"RawMessageDelivery": "true"}, ACCOUNT, "p")
    node.clock.advance(1)
    filtered, _ = topics.subscribe(
        orders, "sqs", queue_arn("audit"), {"FilterPolicy": '{"kind": ["placed"]}'}, ACCOUNT, "p"
    )
    node.clock.advance(1)
    topics.set_subscription_attribute(filtered, "RedrivePolicy", f'{{"deadLetterTargetArn":"{queue_arn("dlq")}"}}')
    node.call("Subscribe", TopicArn=orders.arn, Protocol="sqs", Endpoint=queue_arn("theirs", OTHER))  # pending
    node.clock.advance(1)
    node.call("Subscribe", TopicArn=orders.arn, Protocol="email", Endpoint="ops@example.com")  # pending
    gone, _ = topics.subscribe(orders, "sqs", queue_arn("gone"), None, ACCOUNT, "p")
    topics.unsubscribe(gone.arn)  # SubscriptionsDeleted: 1
    node.call("PutDataProtectionPolicy", ResourceArn=orders.arn, DataProtectionPolicy='{"Name": "p"}')
    node.call("SetTopicAttributes", TopicArn=orders.arn, AttributeName="SignatureVersion", AttributeValue="2")
    node.call(
        "CreateTopic", Name="events.fifo", Attributes__entry__1__key="FifoTopic", Attributes__entry__1__value="true"
    )
    fifo = topic_arn("events.fifo")
    first = node.call("Publish", TopicArn=fifo, Message="a", MessageGroupId="g", MessageDeduplicationId="d1")
    node.call("Publish", TopicArn=fifo, Message="b", MessageGroupId="g", MessageDeduplicationId="d2")
    pending = [s for s in orders.subscriptions.values() if s.pending]
    assert len(pending) == 2 and all(s.token for s in pending)
    before_docs, before_lists = node.topic_docs(), listed(node)

    node = reopen(node, data_dir)
    try:
        assert node.restored == 2
        assert node.topic_docs() == before_docs  # subscriptions, tokens, tags, attributes, dedup, sequence
        assert listed(node) == before_lists
        restored = node.sns.topics.by_arn[topic_arn("orders")]
        assert restored.describe()["SubscriptionsDeleted"] == "1"
        assert restored.describe()["SubscriptionsPending"] == "2"
        assert restored.subscriptions[filtered.arn].filter is not None  # the filter policy is parsed again
        assert node.sns.topics.subscription(raw.arn).raw
        # A publication deduplicated before the restart answers as the first one did.
        again = node.call("Publish", TopicArn=fifo, Message="a", MessageGroupId="g", MessageDeduplicationId="d1")
        assert result(again) == result(first)  # the same MessageId and SequenceNumber
        third = node.call("Publish", TopicArn=fifo, Message="c", MessageGroupId="g", MessageDeduplicationId="d3")
        assert "<SequenceNumber>10000000000000000003</SequenceNumber>" in third
        # A pending confirmation made before the restart is confirmed with its token after it.
        token = next(s.token for s in restored.subscriptions.values() if s.protocol == "email")
        node.call("ConfirmSubscription", TopicArn=restored.arn, Token=token)
    finally:
        node = reopen(node, data_dir)
    try:
        orders_now = node.sns.topics.by_arn[topic_arn("orders")]
        assert [s.pending for s in orders_now.subscriptions.values() if s.protocol == "email"] == [False]
        assert node.sns.topics.by_arn[fifo].sequence == 3
    finally:
        node.close()


def test_deleted_topics_stay_deleted_and_topics_keep_their_creation_order(node: SNSNode, data_dir: Path) -> None:
    for name in ("a", "b", "c", "d"):
        node.call("CreateTopic", Name=name)
    node.store.commit_pending()
    node.call("DeleteTopic", TopicArn=topic_arn("a"))
    node.call("CreateTopic", Name="a")  # made again after the deletion was committed
    node.store.commit_pending()
    node.call("DeleteTopic", TopicArn=topic_arn("b"))
    node.call("CreateTopic", Name="b")  # deleted and made again in one batch
    node.call("DeleteTopic", TopicArn=topic_arn("c"))
    node.call("SetTopicAttributes", TopicArn=topic_arn("d"), AttributeName="DisplayName", AttributeValue="D")
    node = reopen(node, data_dir)
    try:
        assert listed(node)[0] == [topic_arn("d"), topic_arn("a"), topic_arn("b")]
        assert rows(data_dir, "SELECT arn FROM topics ORDER BY rowid") == [(topic_arn(n),) for n in "dab"]
    finally:
        node.close()


def test_a_topic_changed_many_times_in_one_batch_is_written_once_as_it_last_is(node: SNSNode, data_dir: Path) -> None:
    node.call("CreateTopic", Name="f.fifo", Attributes__entry__1__key="FifoTopic", Attributes__entry__1__value="true")
    for n in range(50):
        node.call("Publish", TopicArn=topic_arn("f.fifo"), Message="m", MessageGroupId="g", MessageDeduplicationId=n)
    batch = node.store._take()
    saves = [op for op in batch[0] if op[0] == "save_topic"]
    assert len(saves) == 1 and '"sequence":50' in saves[0][1][1]
    node.store._write(batch)
    assert rows(data_dir, "SELECT COUNT(*) FROM topics") == [(1,)]


def test_reset_forgets_the_topics_on_disk_too(node: SNSNode, data_dir: Path) -> None:
    node.call("CreateTopic", Name="mine")
    node.call("CreateTopic", Name="theirs", account=OTHER)
    node.store.commit_pending()
    assert node.sns.reset(OTHER) == 1
    node = reopen(node, data_dir)
    try:
        assert list(node.sns.topics.by_arn) == [topic_arn("mine")]
        assert node.sns.reset() == 1
    finally:
        node = reopen(node, data_dir)
    try:
        assert node.sns.topics.by_arn == {} and node.restored == 0
    finally:
        node.close()


def test_a_file_made_before_the_topics_table_gets_it(data_dir: Path) -> None:
    SQLiteStore.open(str(data_dir)).close()
    connection = sqlite3.connect(data_dir / FILE_NAME)
    connection.execute("DROP TABLE topics")
    connection.commit()
    connection.close()
    node = SNSNode(data_dir)
    node.call("CreateTopic", Name="t")
    node = reopen(node, data_dir)
    try:
        assert list(node.sns.topics.by_arn) == [topic_arn("t")]
    finally:
        node.close()


def test_an_unreadable_saved_topic_stops_the_start(data_dir: Path) -> None:
    SQLiteStore.open(str(data_dir)).close()
    connection = sqlite3.connect(data_dir / FILE_NAME)
    connection.execute("INSERT INTO topics VALUES ('arn:aws:sns:us-east-1:000000000000:t', '{\"name\": \"t\"}')")
    connection.commit()
    connection.close()
    store = SQLiteStore.open(str(data_dir))
    try:
        clock = ManualClock(START_MS)
        with pytest.raises(StoreError, match="a saved SNS topic cannot be read"):
            attach(SNS(Broker(clock), clock), store)
    finally:
        store.close()


def test_a_topic_that_cannot_be_written_fails_the_store(node: SNSNode, data_dir: Path) -> None:
    node.call("CreateTopic", Name="t")
    node.store.commit_pending()
    topic = node.sns.topics.by_arn[topic_arn("t")]
    topic.attributes["broken"] = object()  # type: ignore[assignment]  # a document orjson cannot write
    node.sns.topics.tag(topic.arn, {"k": "v"})
    with pytest.raises(StoreError, match="failed to record topic"):
        node.store.commit_pending()
    assert node.store.failure is not None
    with pytest.raises(StoreError):
        asyncio.run(node.store.durable())
    del topic.attributes["broken"]
    assert rows(data_dir, "SELECT document FROM topics")[0][0].find('"k"') < 0  # the tag never reached the file


def test_sns_for_finds_the_servers_sns(node: SNSNode) -> None:
    assert sns_for(node.broker) is node.sns
    assert sns_for(Broker(ManualClock(START_MS))) is None


# ------------------------------------------------------------------------------------------------ through the app


def _form(action: str, params: Sequence[tuple[str, str]]) -> bytes:
    return urlencode([("Action", action), *params]).encode()


def test_a_publish_is_answered_once_its_deliveries_are_on_disk(data_dir: Path) -> None:
    """Durable mode acknowledges nothing that is not on disk: Publish's answer waits for the commit of the
    messages it delivered into the queues (delivered on the loop's turn after the call)."""
    clock = ManualClock(START_MS)
    broker = Broker(clock)
    store = SQLiteStore.open(str(data_dir))
    store.restore(broker)
    store.attach(broker)
    app = create_app(Config(clock="manual"), broker, clock, store)
    form = {"Content-Type": "application/x-www-form-urlencoded", "Host": "localhost:9324"}

    async def scenario() -> list[tuple[Any, ...]]:
        broker.start()
        await call_asgi(app, body=_form("CreateQueue", [("QueueName", "q")]), headers=form)
        topic = await call_asgi(app, body=_form("CreateTopic", [("Name", "t")]), headers=form)
        assert topic.status == 200, topic.text
        subscribed = await call_asgi(
            app,
            body=_form("Subscribe", [("TopicArn", topic_arn("t")), ("Protocol", "sqs"), ("Endpoint", queue_arn("q"))]),
            headers=form,
        )
        assert subscribed.status == 200, subscribed.text
        published = await call_asgi(
            app, body=_form("Publish", [("TopicArn", topic_arn("t")), ("Message", "kept")]), headers=form
        )
        assert published.status == 200, published.text
        return rows(data_dir, "SELECT body FROM messages")

    try:
        committed = asyncio.run(scenario())
    finally:
        broker.close()
        store.close()
    assert len(committed) == 1 and "kept" in committed[0][0]
