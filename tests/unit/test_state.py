"""Saved states (docs/state.md): ``GET /_sqsemu/state`` saves the whole state of a server, ``POST /_sqsemu/state``
and ``--load-state`` load one, all or nothing, on the loading server's clock. Real servers in threads (SQSServer),
real boto3 clients, the manual clock."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsemu.clock import ManualClock
from sqsemu.config import QueueDeclaration
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.message import SendEntry
from sqsemu.state.export import export_state
from sqsemu.state.form import StateError, read_state
from sqsemu.testing.server import AdminAPIError, SQSServer

ACCOUNT = "000000000000"


def handler_into(calls: list[list[str]]) -> Any:
    def handler(event: dict[str, Any], context: Any) -> None:
        calls.append([record["body"] for record in event["Records"]])

    return handler


def queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return str(url), str(arn)


def build_rich_state(server: SQSServer) -> dict[str, Any]:
    """Standard, FIFO, fair and dead-letter queues with messages in every state, a FIFO deduplication history, a
    running move task, an event source mapping and SNS topics with subscriptions."""
    sqs = server.client()
    sns = server.sns_client()
    out: dict[str, Any] = {}
    dlq, dlq_arn = queue(sqs, "orders-dlq")
    orders, orders_arn = queue(
        sqs,
        "orders",
        VisibilityTimeout="45",
        MessageRetentionPeriod="86400",
        RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"}),
    )
    sqs.tag_queue(QueueUrl=orders, Tags={"team": "shop", "env": "test"})
    sqs.add_permission(QueueUrl=orders, Label="reader", AWSAccountIds=["111111111111"], Actions=["ReceiveMessage"])
    # Two messages dead-lettered after two receives each.
    for body in ("poison-1", "poison-2"):
        sqs.send_message(QueueUrl=orders, MessageBody=body)
    for _ in range(2):
        got = sqs.receive_message(QueueUrl=orders, MaxNumberOfMessages=10)["Messages"]
        assert sorted(m["Body"] for m in got) == ["poison-1", "poison-2"]
        server.advance(46)
    assert sqs.receive_message(QueueUrl=orders).get("Messages") is None  # third receive: moved to the DLQ
    # A visible message with attributes of every type and a trace header, one in flight, one delayed.
    sqs.send_message(
        QueueUrl=orders,
        MessageBody="visible",
        MessageAttributes={
            "kind": {"DataType": "String", "StringValue": "placed"},
            "count": {"DataType": "Number.int", "StringValue": "3"},
            "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xffraw"},
        },
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-abc-def"}},
    )
    sqs.send_message(QueueUrl=orders, MessageBody="in flight")
    received = sqs.receive_message(QueueUrl=orders, MaxNumberOfMessages=10, VisibilityTimeout=120)["Messages"]
    sqs.change_message_visibility(
        QueueUrl=orders, ReceiptHandle=next(m for m in received if m["Body"] == "visible")["ReceiptHandle"],
        VisibilityTimeout=0,
    )  # fmt: skip
    out["in_flight"] = next(m for m in received if m["Body"] == "in flight")
    sqs.send_message(QueueUrl=orders, MessageBody="delayed", DelaySeconds=300)
    # FIFO: a group with one message in flight (the group locked) and one behind it; the deduplication history.
    jobs, _ = queue(sqs, "jobs.fifo", FifoQueue="true")
    out["first_job"] = sqs.send_message(
        QueueUrl=jobs, MessageBody="job 1", MessageGroupId="g1", MessageDeduplicationId="d1"
    )
    sqs.send_message(QueueUrl=jobs, MessageBody="job 2", MessageGroupId="g1", MessageDeduplicationId="d2")
    sqs.send_message(QueueUrl=jobs, MessageBody="job 3", MessageGroupId="g2", MessageDeduplicationId="d3")
    sqs.receive_message(QueueUrl=jobs, MaxNumberOfMessages=1)
    # A fair queue: a standard queue whose messages have groups (tenants).
    fair, _ = queue(sqs, "fair")
    for tenant, count in (("tenant-a", 3), ("tenant-b", 1)):
        for i in range(count):
            sqs.send_message(QueueUrl=fair, MessageBody=f"{tenant} {i}", MessageGroupId=tenant)
    # A running move task: the DLQ's two messages back to their source, one per second.
    out["task"] = sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    # An event source mapping on a queue of its own.
    mapped, mapped_arn = queue(sqs, "lambda-in")
    out["mapping"] = server.map_queue(mapped_arn, "handler", BatchSize=5)
    # SNS: a topic with a raw, filtered subscription; a FIFO topic with a deduplication history.
    events_in, events_in_arn = queue(sqs, "events-in")
    topic = sns.create_topic(
        Name="events", Attributes={"DisplayName": "Events"}, Tags=[{"Key": "team", "Value": "shop"}]
    )["TopicArn"]
    sns.subscribe(
        TopicArn=topic,
        Protocol="sqs",
        Endpoint=events_in_arn,
        Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"kind": ["placed"]})},
    )
    ledger_in, ledger_in_arn = queue(sqs, "ledger-in.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    ledger = sns.create_topic(
        Name="ledger.fifo", Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"}
    )["TopicArn"]
    sns.subscribe(TopicArn=ledger, Protocol="sqs", Endpoint=ledger_in_arn)
    out["published"] = sns.publish(TopicArn=ledger, Message="credit 5", MessageGroupId="acct-1")
    server.sns_settle()
    out.update(
        orders=orders, dlq=dlq, dlq_arn=dlq_arn, jobs=jobs, fair=fair, mapped=mapped, events_in=events_in,
        ledger_in=ledger_in, topic=topic, ledger=ledger,
    )  # fmt: skip
    return out


def same_time(a: SQSServer, b: SQSServer) -> None:
    """Advance the server behind so both clocks read the same millisecond."""
    gap = b.clock.now_ms() - a.clock.now_ms()
    (a if gap > 0 else b).advance(abs(gap) / 1000)
    assert a.clock.now_ms() == b.clock.now_ms()


def observed(server: SQSServer) -> dict[str, Any]:
    """Everything a client and the admin API see of a server's state, without changing it."""
    sqs = server.client()
    sns = server.sns_client()
    lam = server.lambda_client()
    seen: dict[str, Any] = {"queues": {}}
    for entry in server.queues():
        url = entry["url"]
        seen["queues"][entry["name"]] = {
            "attributes": sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"],
            "tags": sqs.list_queue_tags(QueueUrl=url).get("Tags", {}),
            "messages": server.peek(url),
            "tasks": sqs.list_message_move_tasks(SourceArn=entry["arn"], MaxResults=10)["Results"],
        }
    seen["mappings"] = lam.list_event_source_mappings()["EventSourceMappings"]
    seen["topics"] = {
        t["TopicArn"]: {
            "attributes": sns.get_topic_attributes(TopicArn=t["TopicArn"])["Attributes"],
            "tags": sns.list_tags_for_resource(ResourceArn=t["TopicArn"])["Tags"],
        }
        for t in sns.list_topics()["Topics"]
    }
    seen["subscriptions"] = {
        s["SubscriptionArn"]: sns.get_subscription_attributes(SubscriptionArn=s["SubscriptionArn"])["Attributes"]
        for s in sns.list_subscriptions()["Subscriptions"]
    }
    return seen


@pytest.fixture
def calls() -> list[list[str]]:
    return []


@pytest.fixture
def saved_server(calls: list[list[str]]) -> Iterator[tuple[SQSServer, dict[str, Any]]]:
    with SQSServer(functions={"handler": handler_into(calls)}) as server:
        built = build_rich_state(server)
        server.settle()
        yield server, built


def test_a_rich_state_saved_and_loaded_is_the_same_field_by_field(
    saved_server: tuple[SQSServer, dict[str, Any]], calls: list[list[str]]
) -> None:
    a, built = saved_server
    with SQSServer(functions={"handler": handler_into(calls)}) as b:
        b.client().create_queue(QueueName="replaced")  # B's own state goes
        same_time(a, b)
        saved = a.save_state()
        answer = b.load_state(saved)
        assert answer["loaded"] == {
            "queues": 7, "messages": 13, "deduplication": 4, "fifo_sequences": 2, "move_tasks": 1,
            "event_source_mappings": 1, "topics": 2,
        }  # fmt: skip
        assert answer["shifted_ms"] == 0 and answer["format_version"] == 1
        b.settle()

        # Field by field, through the clients and the admin API: queues (attributes, tags, policy), every message
        # (bodies, attributes, system attributes, receive counts, first receives, visibility, delays, groups,
        # deduplication ids, sequence numbers, dead-letter sources), move tasks, mappings, topics, subscriptions.
        before, after = observed(a), observed(b)
        assert "replaced" not in after["queues"]
        assert after == before
        orders = after["queues"]["orders"]
        assert orders["tags"] == {"team": "shop", "env": "test"}
        assert "111111111111" in orders["attributes"]["Policy"]
        states = {m["body"]: (m["state"], m["receive_count"]) for m in orders["messages"]}
        assert states == {"visible": ("visible", 1), "in flight": ("in_flight", 1), "delayed": ("delayed", 0)}
        orders_arn = orders["attributes"]["QueueArn"]
        dlq = after["queues"]["orders-dlq"]["messages"]
        assert [(m["body"], m["receive_count"], m["dead_letter_source_arn"]) for m in dlq] == [
            ("poison-1", 2, orders_arn),
            ("poison-2", 2, orders_arn),
        ]
        assert [t["Status"] for t in after["queues"]["orders-dlq"]["tasks"]] == ["RUNNING"]
        # The file itself: saved again from B, it is the same file, byte for byte.
        assert b.save_state() == saved

        sqs = b.client()
        # The FIFO deduplication history: the same deduplication id within 5 minutes is the first message again.
        again = sqs.send_message(
            QueueUrl=built["jobs"], MessageBody="job 1", MessageGroupId="g1", MessageDeduplicationId="d1"
        )
        assert (again["MessageId"], again["SequenceNumber"]) == (
            built["first_job"]["MessageId"],
            built["first_job"]["SequenceNumber"],
        )
        # The FIFO group stays locked by its message in flight: only the other group's message is received.
        assert [m["Body"] for m in sqs.receive_message(QueueUrl=built["jobs"], MaxNumberOfMessages=10)["Messages"]] == [
            "job 3"
        ]
        # The SNS FIFO topic's deduplication history too.
        repeated = b.sns_client().publish(TopicArn=built["ledger"], Message="credit 5", MessageGroupId="acct-1")
        assert repeated["MessageId"] == built["published"]["MessageId"]
        # The receipt handle A issued still works on B: the message in flight is deleted with it.
        sqs.delete_message(QueueUrl=built["orders"], ReceiptHandle=built["in_flight"]["ReceiptHandle"])
        assert [m["body"] for m in b.peek(built["orders"])] == ["visible", "delayed"]
        # Delivery after the load follows the loaded subscriptions and mappings.
        b.sns_client().publish(
            TopicArn=built["topic"],
            Message="placed #1",
            MessageAttributes={"kind": {"DataType": "String", "StringValue": "placed"}},
        )
        b.sns_settle()
        assert [m["body"] for m in b.peek(built["events_in"])] == ["placed #1"]
        calls.clear()
        sqs.send_message(QueueUrl=built["mapped"], MessageBody="to lambda")
        b.settle()
        assert calls == [["to lambda"]]
        # The move task carries on: one message a second back into orders.
        b.advance(3)
        assert [t["Status"] for t in sqs.list_message_move_tasks(SourceArn=built["dlq_arn"])["Results"]] == [
            "COMPLETED"
        ]
        assert b.peek(built["dlq"]) == []


def test_in_flight_and_delayed_messages_keep_what_was_left_of_their_time_on_the_loaders_clock(
    saved_server: tuple[SQSServer, dict[str, Any]],
) -> None:
    a, built = saved_server
    with SQSServer(functions={"handler": lambda event, context: None}) as b:
        same_time(a, b)
        b.advance(1000)  # the loading server's clock is 1,000 s ahead of the saving one's
        a.advance(30)  # 90 s of the in-flight message's 120 left, 270 s of the delay of 300
        before = {m["body"]: m for m in a.peek(built["orders"])}
        answer = b.load_state(a.save_state())
        assert answer["shifted_ms"] == 970_000
        after = {m["body"]: m for m in b.peek(built["orders"])}
        for body in ("in flight", "delayed"):
            assert after[body]["state"] == before[body]["state"]
            assert after[body]["seconds_left"] == before[body]["seconds_left"]
            assert after[body]["sent_timestamp"] == before[body]["sent_timestamp"] + 970_000
        assert after["in flight"]["first_receive_timestamp"] == before["in flight"]["first_receive_timestamp"] + 970_000
        sqs = b.client()
        created = sqs.get_queue_attributes(QueueUrl=built["orders"], AttributeNames=["CreatedTimestamp"])
        original = a.client().get_queue_attributes(QueueUrl=built["orders"], AttributeNames=["CreatedTimestamp"])
        assert int(created["Attributes"]["CreatedTimestamp"]) == int(original["Attributes"]["CreatedTimestamp"]) + 970
        b.advance(89)
        assert {m["body"]: m["state"] for m in b.peek(built["orders"])}["in flight"] == "in_flight"
        b.advance(1)
        got = sqs.receive_message(
            QueueUrl=built["orders"], MaxNumberOfMessages=10, AttributeNames=["All"], VisibilityTimeout=900
        )
        by_body = {m["Body"]: m for m in got["Messages"]}
        assert set(by_body) == {"visible", "in flight", "poison-1", "poison-2"}  # the move task ended on A
        assert by_body["in flight"]["Attributes"]["ApproximateReceiveCount"] == "2"
        b.advance(179)
        assert sqs.receive_message(QueueUrl=built["orders"]).get("Messages") is None
        b.advance(1)
        assert [m["Body"] for m in sqs.receive_message(QueueUrl=built["orders"])["Messages"]] == ["delayed"]
        # The deduplication window keeps what was left of its 5 minutes: 270 s after the save it has ended.
        jobs = built["jobs"]
        assert (
            sqs.send_message(QueueUrl=jobs, MessageBody="x", MessageGroupId="g9", MessageDeduplicationId="d3")[
                "MessageId"
            ]
            != built["first_job"]["MessageId"]
        )


def test_a_file_of_a_newer_format_is_refused_naming_both_versions(
    saved_server: tuple[SQSServer, dict[str, Any]],
) -> None:
    a, _built = saved_server
    saved = a.save_state()
    header, rest = saved.split(b"\n", 1)
    newer = json.dumps({**json.loads(header), "version": 2, "sqsemu": "9.0.0"}).encode() + b"\n" + rest
    with SQSServer() as b:
        b.client().create_queue(QueueName="kept")
        before = b.save_state()
        with pytest.raises(AdminAPIError) as refused:
            b.load_state(newer)
        assert refused.value.status == 400
        assert "format version 2 (written by sqsemu 9.0.0)" in refused.value.message
        assert "reads format version 1 and older" in refused.value.message
        assert b.save_state() == before


def _edit(saved: bytes, table: str, change: Any) -> bytes:
    """``saved`` with the first record of ``table`` changed by ``change(record)``."""
    lines = saved.split(b"\n")
    for index, line in enumerate(lines):
        if line.startswith(f'{{"{table}":'.encode()):
            record = json.loads(line)
            change(record[table])
            lines[index] = json.dumps(record).encode()
            return b"\n".join(lines)
    raise AssertionError(f"no {table} record")


BROKEN: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "cut short": (lambda s: s.rsplit(b"\n", 2)[0] + b"\n", "it was cut short"),
    "not JSON": (lambda s: s.replace(b'{"queues"', b"{queues", 1), "line 2: not JSON"),
    "a count that lies": (lambda s: s.rsplit(b"\n", 2)[0] + b'\n{"end":{"records":1}}\n', "the end line counts 1"),
    "not a state": (lambda s: b'{"hello": 1}\n', "not a sqsemu saved state"),
    "a column of the wrong type": (
        lambda s: _edit(s, "messages", lambda r: r.update(receive_count="2")),
        "messages.receive_count must be an integer",
    ),
    "an unknown column": (lambda s: _edit(s, "queues", lambda r: r.update(colour="red")), "no column 'colour'"),
    "a bad attribute": (
        lambda s: _edit(s, "queues", lambda r: r["attributes"].update(VisibilityTimeout="99999")),
        "InvalidAttributeValue",
    ),
    "a message of no queue": (
        lambda s: _edit(s, "messages", lambda r: r.update(queue_uid="nope")),
        "queue_uid 'nope' is no queue of the file",
    ),
    "a topic whose filter policy does not parse": (
        lambda s: _edit(s, "topics", lambda r: r["subscriptions"][0]["attributes"].update(FilterPolicy="{")),
        "FilterPolicy",
    ),
    "a mapping of a queue not in the file": (
        lambda s: _edit(s, "event_source_mappings", lambda r: r.update(event_source_arn="arn:aws:sqs:us-east-1:1:x")),
        "is not in the file",
    ),
    "a FIFO message without its group": (
        lambda s: s.replace(b'"group_id":"g1"', b'"group_id":null', 1),
        "a FIFO queue's message has a group_id",
    ),
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_file_is_refused_and_leaves_the_state_unchanged(
    saved_server: tuple[SQSServer, dict[str, Any]], broken: str
) -> None:
    a, built = saved_server
    saved = a.save_state()
    damage, reason = BROKEN[broken]
    with SQSServer(functions={"handler": lambda event, context: None}) as b:
        sqs = b.client()
        url = sqs.create_queue(QueueName="kept", Attributes={"VisibilityTimeout": "7"})["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="still here")
        before = b.save_state()
        with pytest.raises(AdminAPIError) as refused:
            b.load_state(damage(saved))
        assert refused.value.status == 400
        assert reason in refused.value.message
        assert b.save_state() == before
        assert [m["body"] for m in b.peek(url)] == ["still here"]


def test_a_load_replaces_queues_topics_and_mappings_that_the_file_lacks(tmp_path: Path) -> None:
    with SQSServer() as empty:
        nothing = empty.save_state()
    with SQSServer(functions={"handler": lambda event, context: None}) as b:
        sqs = b.client()
        url, arn = queue(sqs, "gone")
        sqs.send_message(QueueUrl=url, MessageBody="gone too")
        b.sns_client().create_topic(Name="gone")
        b.map_queue(arn, "handler")
        answer = b.load_state(nothing)
        assert set(answer["loaded"].values()) == {0}
        assert b.queues() == []
        assert b.sns_client().list_topics()["Topics"] == []
        assert b.lambda_client().list_event_source_mappings()["EventSourceMappings"] == []


def test_load_state_at_start_up_then_the_declarations(
    saved_server: tuple[SQSServer, dict[str, Any]], tmp_path: Path
) -> None:
    a, built = saved_server
    path = tmp_path / "state.jsonl"
    a.save_state(path)
    declared = (QueueDeclaration(name="declared", attributes=(("DelaySeconds", "5"),)),)
    with SQSServer(load_state=str(path), queues=declared, functions={"handler": lambda e, c: None}) as b:
        names = [q["name"] for q in b.queues()]
        assert "declared" in names and "orders" in names
        assert [m["body"] for m in b.peek(built["orders"])] == [m["body"] for m in a.peek(built["orders"])]
        assert b.lambda_client().list_event_source_mappings()["EventSourceMappings"][0]["UUID"] == built["mapping"]


def test_a_start_up_with_a_file_that_cannot_be_loaded_fails_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "state.jsonl"
    path.write_text('{"format": "sqsemu-state", "version": 1, "exported_ms": 0}\n')
    with pytest.raises(StateError, match=f"the state file {path} cannot be loaded: .*cut short"):
        SQSServer(load_state=str(path)).start()
    with pytest.raises(StateError, match="cannot read the state file"):
        SQSServer(load_state=str(tmp_path / "missing.jsonl")).start()


def test_a_large_state_is_written_in_slices_and_reads_back_whole() -> None:
    broker = Broker(ManualClock(1_700_000_000_000))
    ns = Namespace(ACCOUNT, "us-east-1")
    queue_ = broker.create_queue(ns, "big", {}, {})
    for i in range(20_000):  # most of them kept cold (bytes), written one object at a time
        broker.send_message(queue_, SendEntry(f"message {i}"), ACCOUNT)
    chunks = list(export_state(broker, None, None, "test"))
    assert len(chunks) > 1
    state = read_state(b"".join(chunks))
    assert state.counts()["messages"] == 20_000
    assert [row[3] for row in state.rows["messages"][:2]] == ["message 0", "message 1"]
    assert state.rows["messages"][-1][3] == "message 19999"


def test_a_load_during_a_save_stops_the_save_without_its_end_line() -> None:
    broker = Broker(ManualClock(1_700_000_000_000))
    queue_ = broker.create_queue(Namespace(ACCOUNT, "us-east-1"), "big", {}, {})
    for i in range(20_000):
        broker.send_message(queue_, SendEntry(f"message {i}"), ACCOUNT)
    generation = [0]
    chunks = export_state(broker, None, None, "test", lambda: generation[0])
    written = next(chunks)
    generation[0] += 1  # a load
    written += b"".join(chunks)
    with pytest.raises(StateError, match="cut short"):
        read_state(written)


def test_a_durable_server_loading_its_own_earlier_state_keeps_it_after_a_restart(
    tmp_path: Path, calls: list[list[str]]
) -> None:
    """The rows of the state replaced and of the state loaded share queue uids, message ids, topic ARNs and mapping
    UUIDs: the store deletes the old rows before it writes the new ones."""
    data = str(tmp_path / "data")
    with SQSServer(data_dir=data, functions={"handler": handler_into(calls)}) as server:
        built = build_rich_state(server)
        server.settle()
        saved = server.save_state()
        sqs = server.client()
        sqs.purge_queue(QueueUrl=built["jobs"])
        sqs.delete_queue(QueueUrl=built["fair"])
        sqs.send_message(QueueUrl=built["orders"], MessageBody="after the save")
        server.sns_client().delete_topic(TopicArn=built["ledger"])
        server.lambda_client().delete_event_source_mapping(UUID=built["mapping"])
        server.load_state(saved)
        assert server.save_state() == saved
    with SQSServer(data_dir=data, functions={"handler": handler_into(calls)}) as restarted:
        assert restarted.save_state().split(b"\n")[1:] == saved.split(b"\n")[1:]


def test_load_state_at_start_up_replaces_what_the_data_folder_held(tmp_path: Path) -> None:
    """Before the server starts, its mappings are still rows of the store only: a --load-state replaces them too,
    and the replacement is what the next start restores."""
    data = str(tmp_path / "data")
    with SQSServer() as empty:
        nothing = empty.save_state(tmp_path / "empty.jsonl")
    with SQSServer(data_dir=data, functions={"handler": lambda e, c: None}) as server:
        _url, arn = queue(server.client(), "held")
        server.map_queue(arn, "handler")
        server.sns_client().create_topic(Name="held")
    with SQSServer(data_dir=data, load_state=str(tmp_path / "empty.jsonl")) as loaded:
        assert loaded.save_state().split(b"\n")[1:] == nothing.split(b"\n")[1:]
    with SQSServer(data_dir=data, functions={"handler": lambda e, c: None}) as restarted:
        assert restarted.queues() == []
        assert restarted.lambda_client().list_event_source_mappings()["EventSourceMappings"] == []
        assert restarted.sns_client().list_topics()["Topics"] == []
