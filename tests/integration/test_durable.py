"""Durable mode (``sqsemu --data-dir DIR``): state survives a restart, over both wire protocols.

Each test starts a real server on a fresh data folder, changes state with a real client, stops the server (a
clean SIGINT stop, or SIGKILL where an unclean stop matters), starts a new server on the same folder (on a new
port: queue URLs carry the Host of the request) and checks the state with a real client again.

Most tests run both servers with ``--clock manual``: a manual clock starts at the wall time when its process
starts, so the second server's clock is a little later than the first one's and every deadline set before the
restart is still ahead. Deadlines are then checked exactly: advance to one millisecond before, then past them.

The last tests check what happens when the folder cannot be kept: a commit that fails (a file-size limit on the
server process stands in for a full disk) stops the server with exit status 3 and loses nothing acknowledged; a
second server on a folder in use is refused; a folder or file the server cannot write is refused as such.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import BotoCoreError, ClientError
from harness import (
    ServerProcess,
    client_for,
    free_port,
    http_get,
    http_post_json,
    json_client,
    start_long_poll,
)

pytestmark = pytest.mark.integration

STOPS = ("sigint", "sigkill")
OTHER_ACCOUNT = "111111111111"
TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
MESSAGE_ATTRIBUTES = {
    "text": {"DataType": "String", "StringValue": "h\u00e9llo \u2713"},
    "number": {"DataType": "Number", "StringValue": "-12.50"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xffbinary"},
    "custom": {"DataType": "String.custom", "StringValue": "typed"},
}
COUNT_NAMES = [
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
]


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


class Durable:
    """A server on a data folder that can be restarted, with a client speaking ``protocol`` to it."""

    def __init__(self, data_dir: Path, protocol: str, clock: str = "manual") -> None:
        self.data_dir = data_dir
        self.protocol = protocol
        self.clock = clock
        self.server: ServerProcess | None = None
        self.sqs: Any = None
        self._clients: list[Any] = []

    def start(self, *extra: str, env: dict[str, str] | None = None, data_dir_flag: bool = True) -> Durable:
        args = ["--clock", self.clock, *extra]
        if data_dir_flag:
            args = ["--data-dir", str(self.data_dir), *args]
        self.server = ServerProcess(args, env=env).start()
        self.sqs = self.client()
        return self

    def client(self, access_key_id: str = "test") -> Any:
        assert self.server is not None
        client = client_for(self.server.endpoint_url, self.protocol, access_key_id=access_key_id)
        self._clients.append(client)
        return client

    def stop(self, how: str) -> None:
        """Stop the server: ``"sigint"`` (graceful, must exit 0) or ``"sigkill"``."""
        server = self.server
        assert server is not None
        self._close_clients()
        if how == "sigint":
            status = server.stop()
            assert status == 0, f"server exited with {status} on SIGINT\n{server.log_tail()}"
        else:
            server.stop(signal.SIGKILL)
            server.log_path.unlink(missing_ok=True)
        self.server = None

    def restart(self, how: str, *extra: str) -> None:
        """Stop and start again. The new manual clock starts at the wall time; if the old one had been advanced
        past that, the new one is moved up to where the old one stopped (time never runs backwards)."""
        last_ms = self.now_ms() if self.clock == "manual" else None
        self.stop(how)
        self.start(*extra)
        if last_ms is not None and self.now_ms() < last_ms:
            self.advance_to(last_ms)

    def close(self) -> None:
        self._close_clients()
        if self.server is not None and self.server.proc is not None and self.server.proc.poll() is None:
            self.server.kill()

    def _close_clients(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()
        self.sqs = None

    # --- helpers

    def url(self, name: str) -> str:
        return str(self.sqs.get_queue_url(QueueName=name)["QueueUrl"])

    def now_ms(self) -> int:
        assert self.server is not None
        return self.server.now_ms()

    def advance(self, seconds: float) -> None:
        assert self.server is not None
        self.server.advance(seconds)

    def advance_to(self, target_ms: int) -> None:
        """Move the manual clock to exactly ``target_ms`` (it must be ahead)."""
        now = self.now_ms()
        assert target_ms > now, f"deadline {target_ms} is not ahead of the restarted server's clock {now}"
        self.advance((target_ms - now) / 1000)
        assert self.now_ms() == target_ms

    def counts(self, url: str) -> tuple[int, int, int]:
        attrs = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=COUNT_NAMES)["Attributes"]
        return tuple(int(attrs[name]) for name in COUNT_NAMES)  # type: ignore[return-value]

    def receive(self, url: str, max_number: int = 10, **kwargs: Any) -> list[dict[str, Any]]:
        answer = self.sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=max_number,
            WaitTimeSeconds=0,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            **kwargs,
        )
        return list(answer.get("Messages", []))

    def bodies(self, url: str, max_number: int = 10, **kwargs: Any) -> list[str]:
        return [m["Body"] for m in self.receive(url, max_number, **kwargs)]


@pytest.fixture
def durable(tmp_path: Path, protocol: str) -> Iterator[Durable]:
    """A restartable manual-clock server on ``tmp_path/data``, not started yet."""
    d = Durable(tmp_path / "data", protocol)
    yield d
    d.close()


# ----------------------------------------------------------------------------------------------------- queues


@pytest.mark.parametrize("stop", STOPS)
def test_queues_attributes_tags_and_policy_are_restored(durable: Durable, stop: str) -> None:
    durable.start()
    sqs = durable.sqs
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = f'{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":3}}'
    source = sqs.create_queue(
        QueueName="source",
        Attributes={
            "VisibilityTimeout": "45",
            "DelaySeconds": "7",
            "MaximumMessageSize": "2048",
            "MessageRetentionPeriod": "3600",
            "ReceiveMessageWaitTimeSeconds": "3",
            "RedrivePolicy": redrive,
        },
        tags={"team": "core", "env": "dev", "gone": "soon"},
    )["QueueUrl"]
    durable.advance(5)  # LastModifiedTimestamp moves away from CreatedTimestamp
    sqs.set_queue_attributes(QueueUrl=source, Attributes={"VisibilityTimeout": "50"})
    sqs.untag_queue(QueueUrl=source, TagKeys=["gone"])
    sqs.tag_queue(QueueUrl=source, Tags={"owner": "me"})
    sqs.add_permission(QueueUrl=source, Label="send", AWSAccountIds=[OTHER_ACCOUNT], Actions=["SendMessage"])
    sqs.add_permission(QueueUrl=source, Label="temp", AWSAccountIds=[OTHER_ACCOUNT], Actions=["DeleteMessage"])
    sqs.remove_permission(QueueUrl=source, Label="temp")
    fifo = sqs.create_queue(
        QueueName="orders.fifo",
        Attributes={
            "FifoQueue": "true",
            "ContentBasedDeduplication": "true",
            "DeduplicationScope": "messageGroup",
            "FifoThroughputLimit": "perMessageGroupId",
            "VisibilityTimeout": "12",
        },
    )["QueueUrl"]
    before = {
        name: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        for name, url in (("dlq", dlq), ("source", source), ("orders.fifo", fifo))
    }
    tags_before = sqs.list_queue_tags(QueueUrl=source)["Tags"]
    assert before["source"]["CreatedTimestamp"] != before["source"]["LastModifiedTimestamp"]
    assert "Policy" in before["source"]

    durable.restart(stop)
    sqs = durable.sqs
    urls = sorted(sqs.list_queues().get("QueueUrls", []))
    assert [u.rsplit("/", 1)[1] for u in urls] == ["dlq", "orders.fifo", "source"]
    assert all(u.startswith(durable.server.endpoint_url) for u in urls)  # type: ignore[union-attr]
    for name, attributes in before.items():
        after = sqs.get_queue_attributes(QueueUrl=durable.url(name), AttributeNames=["All"])["Attributes"]
        assert after == attributes, name
    assert (
        sqs.list_queue_tags(QueueUrl=durable.url("source"))["Tags"]
        == tags_before
        == {
            "team": "core",
            "env": "dev",
            "owner": "me",
        }
    )
    sources = sqs.list_dead_letter_source_queues(QueueUrl=durable.url("dlq"))["queueUrls"]
    assert [u.rsplit("/", 1)[1] for u in sources] == ["source"]
    # the restored Policy is the one AddPermission / RemovePermission built: AddPermission extends it
    policy = json.loads(before["source"]["Policy"])
    assert [statement["Sid"] for statement in policy["Statement"]] == ["send"]
    sqs.add_permission(QueueUrl=durable.url("source"), Label="more", AWSAccountIds=[OTHER_ACCOUNT], Actions=["*"])
    sqs.remove_permission(QueueUrl=durable.url("source"), Label="send")
    policy = sqs.get_queue_attributes(QueueUrl=durable.url("source"), AttributeNames=["Policy"])["Attributes"]
    assert [statement["Sid"] for statement in json.loads(policy["Policy"])["Statement"]] == ["more"]


def test_queue_changes_after_a_restart_are_kept_too(durable: Durable) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q", Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
    durable.restart("sigkill")
    durable.sqs.set_queue_attributes(QueueUrl=durable.url("q"), Attributes={"VisibilityTimeout": "20"})
    durable.sqs.tag_queue(QueueUrl=durable.url("q"), Tags={"k": "v"})
    durable.sqs.create_queue(QueueName="second")
    durable.restart("sigkill")
    url = durable.url("q")
    attrs = durable.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    assert attrs == {"VisibilityTimeout": "20"}
    assert durable.sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"k": "v"}
    assert durable.url("second").endswith("/second")


def test_an_answered_delayed_attribute_change_survives_sigkill_before_it_takes_effect(durable: Durable) -> None:
    # Realism's attribute_delay holds an answered SetQueueAttributes back for 30 s (docs/realism.md): the answer
    # promises the change, so it is on disk before the answer and a restart applies it when due.
    durable.start("--realism", "attribute_delay=30")
    url = durable.sqs.create_queue(QueueName="late-change")["QueueUrl"]
    durable.sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "100", "DelaySeconds": "7"})
    due_ms = durable.now_ms() + 30_000
    durable.restart("sigkill", "--realism", "attribute_delay=30")
    url = durable.url("late-change")
    names = ["VisibilityTimeout", "DelaySeconds"]
    assert durable.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"] == {
        "VisibilityTimeout": "30",
        "DelaySeconds": "0",
    }
    durable.advance_to(due_ms + 1)
    assert durable.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"] == {
        "VisibilityTimeout": "100",
        "DelaySeconds": "7",
    }
    # Applied, it is the queue's own value: a restart keeps it, and applies nothing twice.
    durable.restart("sigkill")
    url = durable.url("late-change")
    assert durable.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"] == {
        "VisibilityTimeout": "100",
        "DelaySeconds": "7",
    }


def test_data_dir_from_the_environment(durable: Durable) -> None:
    durable.start(env={"SQSEMU_DATA_DIR": str(durable.data_dir)}, data_dir_flag=False)
    durable.sqs.create_queue(QueueName="from-env")
    durable.stop("sigint")
    assert (durable.data_dir / "sqsemu.db").is_file()
    durable.start()
    assert durable.url("from-env").endswith("/from-env")


# --------------------------------------------------------------------------------------------------- messages


@pytest.mark.parametrize("stop", STOPS)
def test_visible_messages_are_restored_with_attributes_in_order(durable: Durable, stop: str) -> None:
    durable.start()
    sqs = durable.sqs
    url = sqs.create_queue(QueueName="q")["QueueUrl"]
    sqs.add_permission(QueueUrl=url, Label="send", AWSAccountIds=[OTHER_ACCOUNT], Actions=["SendMessage"])
    sent_ms = durable.now_ms()
    first = sqs.send_message(
        QueueUrl=url,
        MessageBody="first \u2713 <xml> & stuff",
        MessageAttributes=MESSAGE_ATTRIBUTES,
        MessageSystemAttributes={"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
    )
    batch = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "a", "MessageBody": "second", "MessageAttributes": {"n": MESSAGE_ATTRIBUTES["number"]}},
            {"Id": "b", "MessageBody": "third"},
        ],
    )
    assert len(batch["Successful"]) == 2
    durable.advance(2)
    foreign_ms = durable.now_ms()
    foreign = durable.client(OTHER_ACCOUNT).send_message(QueueUrl=url, MessageBody="fourth")

    durable.restart(stop)
    url = durable.url("q")
    assert durable.counts(url) == (4, 0, 0)
    messages = durable.receive(url)
    assert [m["Body"] for m in messages] == ["first \u2713 <xml> & stuff", "second", "third", "fourth"]
    by_id = {entry["Id"]: entry for entry in batch["Successful"]}
    expected_ids = [first["MessageId"], by_id["a"]["MessageId"], by_id["b"]["MessageId"], foreign["MessageId"]]
    assert [m["MessageId"] for m in messages] == expected_ids

    m0, m1, m2, m3 = messages
    assert m0["MD5OfBody"] == first["MD5OfMessageBody"]
    assert m0["MD5OfMessageAttributes"] == first["MD5OfMessageAttributes"]
    assert m0["MessageAttributes"] == MESSAGE_ATTRIBUTES
    assert m0["Attributes"]["AWSTraceHeader"] == TRACE_HEADER
    assert m1["MessageAttributes"] == {"n": MESSAGE_ATTRIBUTES["number"]}
    assert m1["MD5OfMessageAttributes"] == by_id["a"]["MD5OfMessageAttributes"]
    assert "MessageAttributes" not in m2 and "AWSTraceHeader" not in m2["Attributes"]
    for message in (m0, m1, m2):
        assert message["Attributes"]["SentTimestamp"] == str(sent_ms)
        assert message["Attributes"]["SenderId"] == "000000000000"
        assert message["Attributes"]["ApproximateReceiveCount"] == "1"
    assert m3["Attributes"]["SentTimestamp"] == str(foreign_ms)
    assert m3["Attributes"]["SenderId"] == OTHER_ACCOUNT


@pytest.mark.parametrize("fsync", ["normal", "full"])
def test_sends_acknowledged_survive_sigkill_at_either_fsync_level(durable: Durable, fsync: str) -> None:
    """Both levels keep what was acknowledged when the process is killed; only a power loss or an OS crash tells
    them apart, so the sync mode each level sets is checked where it can be seen: on the connection the store
    writes with (tests/unit/test_sqlite_store.py, "sync level")."""
    durable.start("--fsync", fsync)
    url = durable.sqs.create_queue(QueueName="q")["QueueUrl"]
    for start in range(0, 30, 10):
        entries = [{"Id": str(i), "MessageBody": f"m{i}"} for i in range(start, start + 10)]
        assert len(durable.sqs.send_message_batch(QueueUrl=url, Entries=entries)["Successful"]) == 10
    durable.restart("sigkill", "--fsync", fsync)
    url = durable.url("q")
    bodies = durable.bodies(url) + durable.bodies(url) + durable.bodies(url)
    assert bodies == [f"m{i}" for i in range(30)]


@pytest.mark.parametrize("stop", STOPS)
def test_in_flight_message_stays_in_flight_until_its_deadline(durable: Durable, stop: str) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    sent = durable.sqs.send_message(QueueUrl=url, MessageBody="taken")
    durable.sqs.send_message(QueueUrl=url, MessageBody="waiting")
    received_ms = durable.now_ms()
    (taken,) = durable.receive(url, 1)
    assert taken["Body"] == "taken"
    first_receive = taken["Attributes"]["ApproximateFirstReceiveTimestamp"]
    assert first_receive == str(received_ms)
    deadline = received_ms + 30_000

    durable.restart(stop)
    url = durable.url("q")
    assert durable.counts(url) == (1, 1, 0)
    assert durable.bodies(url, VisibilityTimeout=0) == ["waiting"]  # stays visible: VisibilityTimeout 0
    durable.advance_to(deadline - 1)
    assert durable.counts(url) == (1, 1, 0)
    assert durable.bodies(url, VisibilityTimeout=0) == ["waiting"]
    durable.advance(0.001)
    assert durable.counts(url) == (2, 0, 0)
    again = {m["Body"]: m for m in durable.receive(url)}
    assert set(again) == {"taken", "waiting"}
    attrs = again["taken"]["Attributes"]
    assert attrs["ApproximateReceiveCount"] == "2"
    assert attrs["ApproximateFirstReceiveTimestamp"] == first_receive
    assert attrs["SentTimestamp"] == taken["Attributes"]["SentTimestamp"]
    assert again["taken"]["MessageId"] == sent["MessageId"]


@pytest.mark.parametrize("stop", STOPS)
def test_receipt_handles_from_before_the_restart_stay_valid(durable: Durable, stop: str) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q", Attributes={"VisibilityTimeout": "60"})["QueueUrl"]
    for body in ("delete-me", "release-me", "extend-me"):
        durable.sqs.send_message(QueueUrl=url, MessageBody=body)
    received_ms = durable.now_ms()
    handles = {m["Body"]: m["ReceiptHandle"] for m in durable.receive(url)}
    assert set(handles) == {"delete-me", "release-me", "extend-me"}

    durable.restart(stop)
    url = durable.url("q")
    assert durable.counts(url) == (0, 3, 0)
    durable.sqs.delete_message(QueueUrl=url, ReceiptHandle=handles["delete-me"])
    durable.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["release-me"], VisibilityTimeout=0)
    extend_from = durable.now_ms()
    durable.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["extend-me"], VisibilityTimeout=300)
    assert durable.counts(url) == (1, 1, 0)
    released = durable.receive(url, VisibilityTimeout=0)
    assert [m["Body"] for m in released] == ["release-me"]
    assert released[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    durable.advance_to(received_ms + 60_001)  # the original deadline is gone: extended
    assert durable.bodies(url, VisibilityTimeout=0) == ["release-me"]
    durable.advance_to(extend_from + 300_000)
    assert sorted(durable.bodies(url)) == ["extend-me", "release-me"]  # never "delete-me"


@pytest.mark.parametrize("stop", STOPS)
def test_change_visibility_before_the_restart_is_kept(durable: Durable, stop: str) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q", Attributes={"VisibilityTimeout": "10"})["QueueUrl"]
    durable.sqs.send_message(QueueUrl=url, MessageBody="extended")
    durable.sqs.send_message(QueueUrl=url, MessageBody="released")
    now = durable.now_ms()
    handles = {m["Body"]: m["ReceiptHandle"] for m in durable.receive(url)}
    durable.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["extended"], VisibilityTimeout=120)
    durable.sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handles["released"], VisibilityTimeout=0)

    durable.restart(stop)
    url = durable.url("q")
    assert durable.counts(url) == (1, 1, 0)
    assert durable.bodies(url, VisibilityTimeout=0) == ["released"]
    durable.advance_to(now + 10_001)  # past the queue's timeout of 10 s: still in flight
    assert durable.bodies(url, VisibilityTimeout=0) == ["released"]
    durable.advance_to(now + 119_999)
    assert durable.counts(url) == (1, 1, 0)
    durable.advance(0.001)
    assert sorted(durable.bodies(url)) == ["extended", "released"]


@pytest.mark.parametrize("stop", STOPS)
def test_delayed_messages_stay_delayed_until_their_original_time(durable: Durable, stop: str) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q", Attributes={"DelaySeconds": "90"})["QueueUrl"]
    sent_ms = durable.now_ms()
    durable.sqs.send_message(QueueUrl=url, MessageBody="queue-delay")
    durable.sqs.send_message(QueueUrl=url, MessageBody="own-delay", DelaySeconds=120)
    durable.sqs.send_message(QueueUrl=url, MessageBody="no-delay", DelaySeconds=0)

    durable.restart(stop)
    url = durable.url("q")
    assert durable.counts(url) == (1, 0, 2)
    assert durable.bodies(url, VisibilityTimeout=0) == ["no-delay"]
    durable.advance_to(sent_ms + 89_999)
    assert durable.counts(url) == (1, 0, 2)
    durable.advance(0.001)
    assert durable.counts(url) == (2, 0, 1)
    assert sorted(durable.bodies(url, VisibilityTimeout=0)) == ["no-delay", "queue-delay"]
    durable.advance_to(sent_ms + 119_999)
    assert durable.counts(url) == (2, 0, 1)
    durable.advance(0.001)
    assert durable.counts(url) == (3, 0, 0)


@pytest.mark.parametrize("stop", STOPS)
def test_retention_counts_from_the_original_send(durable: Durable, stop: str) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
    sent_ms = durable.now_ms()
    durable.sqs.send_message(QueueUrl=url, MessageBody="visible")
    durable.sqs.send_message(QueueUrl=url, MessageBody="in-flight")
    durable.sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=30)
    durable.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, VisibilityTimeout=0)  # "visible" stays
    durable.advance(1)
    later_ms = durable.now_ms()
    durable.sqs.send_message(QueueUrl=url, MessageBody="later")
    messages = durable.receive(url, 10, VisibilityTimeout=300)
    assert sorted(m["Body"] for m in messages) == ["in-flight", "later", "visible"]
    for message in messages:
        if message["Body"] != "in-flight":
            durable.sqs.change_message_visibility(
                QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )

    durable.restart(stop)
    url = durable.url("q")
    assert durable.counts(url) == (2, 1, 1)
    durable.advance_to(sent_ms + 59_999)
    assert durable.counts(url) == (3, 1, 0)  # the delayed one is visible now
    durable.advance(0.001)
    durable.advance(0.5)  # expiry may run on the next timer pass
    assert durable.counts(url) == (1, 0, 0)
    assert durable.bodies(url) == ["later"]
    durable.advance_to(later_ms + 60_000 + 500)
    assert durable.counts(url) == (0, 0, 0)


# ------------------------------------------------------------------------------------------------------- FIFO


def _fifo_send(sqs: Any, url: str, body: str, group: str, dedup: str | None = None) -> dict[str, Any]:
    return dict(
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId=dedup or body)
    )


@pytest.mark.parametrize("stop", STOPS)
def test_fifo_order_locks_sequence_numbers_and_deduplication_survive(durable: Durable, stop: str) -> None:
    durable.start()
    sqs = durable.sqs
    url = sqs.create_queue(QueueName="q.fifo", Attributes={"FifoQueue": "true", "VisibilityTimeout": "30"})["QueueUrl"]
    sent_ms = durable.now_ms()
    sent = {body: _fifo_send(sqs, url, body, body[0]) for body in ("a1", "a2", "a3", "b1", "b2")}
    sequence = [int(s["SequenceNumber"]) for s in sent.values()]
    assert sequence == sorted(sequence)
    received_ms = durable.now_ms()
    (a1,) = durable.receive(url, 1)
    assert a1["Body"] == "a1"  # group "a" is now locked by a1

    durable.restart(stop)
    sqs = durable.sqs
    url = durable.url("q.fifo")
    # a duplicate of a2 sent after the restart, within 5 minutes of the original: accepted, not delivered
    duplicate = _fifo_send(sqs, url, "a2", "a")
    assert duplicate["MessageId"] == sent["a2"]["MessageId"]
    # sequence numbers keep increasing
    c1 = _fifo_send(sqs, url, "c1", "c")
    assert int(c1["SequenceNumber"]) > max(sequence)
    # group "a" stays locked: only b1, b2 (in order) and c1 come out
    batch = durable.receive(url, 10)
    assert [m["Body"] for m in batch] == ["b1", "b2", "c1"]
    assert [m["Attributes"]["SequenceNumber"] for m in batch[:2]] == [
        sent["b1"]["SequenceNumber"],
        sent["b2"]["SequenceNumber"],
    ]
    assert batch[0]["Attributes"]["MessageGroupId"] == "b"
    assert batch[0]["Attributes"]["MessageDeduplicationId"] == "b1"
    for message in batch:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    durable.advance_to(received_ms + 29_999)
    assert durable.receive(url, 10) == []
    durable.advance(0.001)
    again = durable.receive(url, 10)
    assert [m["Body"] for m in again] == ["a1", "a2", "a3"]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert again[0]["ReceiptHandle"] != a1["ReceiptHandle"]
    for message in again:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    # the deduplication window runs from the original send: still a duplicate just before 5 minutes ...
    durable.advance_to(sent_ms + 299_000)
    assert _fifo_send(sqs, url, "x", "a", dedup="a3")["MessageId"] == sent["a3"]["MessageId"]
    assert durable.receive(url, 10) == []
    # ... and a new message once they are over
    durable.advance_to(sent_ms + 300_001)
    fresh = _fifo_send(sqs, url, "a3-again", "a", dedup="a3")
    assert fresh["MessageId"] != sent["a3"]["MessageId"]
    assert [m["Body"] for m in durable.receive(url, 10)] == ["a3-again"]


def test_content_based_deduplication_survives_a_second_restart(durable: Durable) -> None:
    durable.start()
    url = durable.sqs.create_queue(
        QueueName="q.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    original = durable.sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    durable.restart("sigkill")
    durable.restart("sigint")
    url = durable.url("q.fifo")
    again = durable.sqs.send_message(QueueUrl=url, MessageBody="same", MessageGroupId="g")
    assert again["MessageId"] == original["MessageId"]
    assert durable.bodies(url) == ["same"]
    assert durable.counts(url) == (0, 1, 0)


# ------------------------------------------------------------------------------------------------ dead letters


def _arn(sqs: Any, url: str) -> str:
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def _queues_with_dlq(sqs: Any) -> tuple[str, str, str, str]:
    dlq = sqs.create_queue(QueueName="dlq")["QueueUrl"]
    dlq_arn = _arn(sqs, dlq)
    policy = f'{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":1}}'
    source = sqs.create_queue(QueueName="source", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    return source, _arn(sqs, source), dlq, dlq_arn


def _dead_letter(durable: Durable, source: str, bodies: list[str]) -> None:
    """Send ``bodies`` to ``source`` and receive each twice (maxReceiveCount 1): they end up in the DLQ."""
    for body in bodies:
        durable.sqs.send_message(QueueUrl=source, MessageBody=body)
    assert len(durable.receive(source, 10, VisibilityTimeout=0)) == len(bodies)
    assert durable.receive(source, 10) == []


@pytest.mark.parametrize("stop", STOPS)
def test_dead_lettered_message_is_in_the_dlq_after_a_restart(durable: Durable, stop: str) -> None:
    durable.start()
    source, source_arn, _dlq, _ = _queues_with_dlq(durable.sqs)
    sent_ms = durable.now_ms()
    _dead_letter(durable, source, ["poison"])

    durable.restart(stop)
    dlq = durable.url("dlq")
    assert durable.counts(durable.url("source")) == (0, 0, 0)
    assert durable.counts(dlq) == (1, 0, 0)
    (message,) = durable.receive(dlq)
    assert message["Body"] == "poison"
    assert message["Attributes"]["DeadLetterQueueSourceArn"] == source_arn
    assert message["Attributes"]["SentTimestamp"] == str(sent_ms)


@pytest.mark.parametrize("stop", STOPS)
def test_running_move_task_carries_on_after_a_restart(durable: Durable, stop: str) -> None:
    durable.start()
    source, _source_arn, dlq, dlq_arn = _queues_with_dlq(durable.sqs)
    bodies = [f"m{i}" for i in range(6)]
    _dead_letter(durable, source, bodies)
    assert durable.counts(dlq) == (6, 0, 0)
    handle = durable.sqs.start_message_move_task(SourceArn=dlq_arn, MaxNumberOfMessagesPerSecond=1)["TaskHandle"]
    durable.advance(1)
    (task,) = durable.sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
    assert task["Status"] == "RUNNING"
    moved_before = task["ApproximateNumberOfMessagesMoved"]
    assert 0 < moved_before < 6
    assert durable.counts(source)[0] == moved_before

    durable.restart(stop)
    source, dlq = durable.url("source"), durable.url("dlq")
    (task,) = durable.sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
    assert task["Status"] == "RUNNING"
    assert task["TaskHandle"] == handle
    assert task["ApproximateNumberOfMessagesToMove"] == 6
    # the new clock may have been moved up to where the old one stopped (a tick may have run): no move is lost
    moved = task["ApproximateNumberOfMessagesMoved"]
    assert moved_before <= moved < 6
    assert durable.counts(source) == (moved, 0, 0)
    assert durable.counts(dlq) == (6 - moved, 0, 0)
    durable.advance(10)
    (task,) = durable.sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
    assert task["Status"] == "COMPLETED"
    assert task["ApproximateNumberOfMessagesMoved"] == 6
    assert durable.counts(dlq) == (0, 0, 0)
    assert durable.counts(source) == (6, 0, 0)
    # the finished task is kept too
    durable.restart(stop)
    (task,) = durable.sqs.list_message_move_tasks(SourceArn=dlq_arn)["Results"]
    assert (task["Status"], task["ApproximateNumberOfMessagesMoved"]) == ("COMPLETED", 6)
    assert sorted(durable.bodies(durable.url("source"))) == bodies


# ------------------------------------------------------------------------------------------- what must not return


@pytest.mark.parametrize("stop", STOPS)
def test_deleted_messages_purged_and_deleted_queues_do_not_come_back(durable: Durable, stop: str) -> None:
    durable.start()
    sqs = durable.sqs
    kept = sqs.create_queue(QueueName="kept")["QueueUrl"]
    purged = sqs.create_queue(QueueName="purged")["QueueUrl"]
    deleted = sqs.create_queue(QueueName="deleted")["QueueUrl"]
    fifo = sqs.create_queue(QueueName="f.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for i in range(4):
        sqs.send_message(QueueUrl=kept, MessageBody=f"k{i}")
        sqs.send_message(QueueUrl=purged, MessageBody=f"p{i}")
        sqs.send_message(QueueUrl=deleted, MessageBody=f"d{i}")
    sqs.send_message(QueueUrl=fifo, MessageBody="f", MessageGroupId="g", MessageDeduplicationId="f")
    handles = {m["Body"]: m["ReceiptHandle"] for m in durable.receive(kept, 2)}
    assert sorted(handles) == ["k0", "k1"]
    sqs.delete_message(QueueUrl=kept, ReceiptHandle=handles["k0"])
    sqs.delete_message_batch(QueueUrl=kept, Entries=[{"Id": "x", "ReceiptHandle": handles["k1"]}])
    sqs.purge_queue(QueueUrl=purged)
    durable.advance(1)
    sqs.send_message(QueueUrl=purged, MessageBody="after-purge")
    sqs.delete_queue(QueueUrl=deleted)
    sqs.purge_queue(QueueUrl=fifo)

    durable.restart(stop)
    sqs = durable.sqs
    names = sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues().get("QueueUrls", []))
    assert names == ["f.fifo", "kept", "purged"]
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_url(QueueName="deleted")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    durable.advance(3600)  # nothing in flight or delayed may reappear either
    assert sorted(durable.bodies(durable.url("kept"))) == ["k2", "k3"]
    assert durable.bodies(durable.url("purged")) == ["after-purge"]
    fifo = durable.url("f.fifo")
    assert durable.counts(fifo) == (0, 0, 0)
    # the purge also cleared the deduplication history
    fresh = sqs.send_message(QueueUrl=fifo, MessageBody="f", MessageGroupId="g", MessageDeduplicationId="f")
    assert fresh["MessageId"]
    assert durable.bodies(fifo) == ["f"]
    # a queue created again under a deleted name starts empty
    again = sqs.create_queue(QueueName="deleted")["QueueUrl"]
    assert durable.counts(again) == (0, 0, 0)


def test_a_queue_deleted_after_a_restart_stays_deleted(durable: Durable) -> None:
    durable.start()
    url = durable.sqs.create_queue(QueueName="q")["QueueUrl"]
    durable.sqs.send_message(QueueUrl=url, MessageBody="m")
    durable.restart("sigkill")
    durable.sqs.delete_queue(QueueUrl=durable.url("q"))
    durable.restart("sigkill")
    assert durable.sqs.list_queues().get("QueueUrls", []) == []


# ------------------------------------------------------------------------------------------ unusable data files


def _start_expecting_failure(data_dir: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(free_port())]
    command += ["--data-dir", str(data_dir)]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def _assert_clear_refusal(result: subprocess.CompletedProcess[str], db: Path, *words: str) -> None:
    assert result.returncode != 0, f"the server started on {db}:\n{result.stderr}"
    assert str(db) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr.lower(), result.stderr


def test_a_corrupt_data_file_stops_the_server_at_start(tmp_path: Path) -> None:
    db = tmp_path / "sqsemu.db"
    garbage = b"this is not a database at all\x00\xff" * 200
    db.write_bytes(garbage)
    _assert_clear_refusal(_start_expecting_failure(tmp_path), db, "corrupt")
    assert db.read_bytes() == garbage  # left as it was


def test_a_damaged_sqsemu_data_file_stops_the_server_at_start(tmp_path: Path) -> None:
    durable = Durable(tmp_path, "json")
    try:
        durable.start()
        url = durable.sqs.create_queue(QueueName="q")["QueueUrl"]
        durable.sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "x" * 4000} for i in range(10)]
        )
        durable.stop("sigint")
    finally:
        durable.close()
    db = tmp_path / "sqsemu.db"
    data = bytearray(db.read_bytes())
    assert len(data) > 3 * 4096
    data[4096 + 100 : len(data) - 100] = b"\xa5" * (len(data) - 4096 - 200)  # keep the header, wreck the pages
    db.write_bytes(bytes(data))
    _assert_clear_refusal(_start_expecting_failure(tmp_path), db, "corrupt")


def test_a_foreign_sqlite_database_stops_the_server_at_start(tmp_path: Path) -> None:
    db = tmp_path / "sqsemu.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
        connection.execute("INSERT INTO invoices (amount) VALUES (12.5)")
    connection.close()
    _assert_clear_refusal(_start_expecting_failure(tmp_path), db, "another application")
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT amount FROM invoices").fetchall() == [(12.5,)]
        assert [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["invoices"]
    connection.close()


def test_a_data_file_of_another_schema_version_stops_the_server_at_start(tmp_path: Path) -> None:
    durable = Durable(tmp_path, "json")
    try:
        durable.start()
        durable.sqs.create_queue(QueueName="q")
        durable.stop("sigint")
    finally:
        durable.close()
    db = tmp_path / "sqsemu.db"
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA user_version=99")
    connection.close()
    _assert_clear_refusal(_start_expecting_failure(tmp_path), db, "version")


def test_a_data_dir_that_is_a_file_stops_the_server_at_start(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    result = _start_expecting_failure(not_a_folder)
    assert result.returncode != 0
    assert str(not_a_folder) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("stop", STOPS)
def test_queues_wiped_by_the_reset_route_do_not_come_back(durable: Durable, stop: str) -> None:
    durable.start()
    for name in ("a", "b"):
        url = durable.sqs.create_queue(QueueName=name)["QueueUrl"]
        durable.sqs.send_message(QueueUrl=url, MessageBody="m")
    assert durable.server is not None
    status, answer = http_post_json(f"{durable.server.endpoint_url}/_sqsemu/reset", {})
    assert (status, answer["deleted_queues"]) == (200, 2)
    durable.restart(stop)
    assert durable.sqs.list_queues().get("QueueUrls", []) == []


def test_a_reset_is_on_disk_when_it_is_answered(tmp_path: Path) -> None:
    """SIGKILL right after the reset route answered: the wiped queues must not come back (the answer promises the
    change is committed, as for SQS requests)."""
    durable = Durable(tmp_path / "data", "json", clock="system")
    try:
        for attempt in range(3):
            durable.start()
            for n in range(50):
                durable.sqs.create_queue(QueueName=f"q{attempt}-{n}")
            assert durable.server is not None and durable.server.proc is not None
            status, answer = http_post_json(f"{durable.server.endpoint_url}/_sqsemu/reset", {})
            durable.server.proc.kill()  # at once: nothing may be left to commit
            assert (status, answer["deleted_queues"]) == (200, 50)
            durable.stop("sigkill")
            durable.start()
            assert durable.sqs.list_queues().get("QueueUrls", []) == [], f"attempt {attempt}"
            durable.stop("sigint")
    finally:
        durable.close()


# ------------------------------------------------------------------ a failed commit, one server per folder, read-only


FILE_SIZE_LIMIT = 2 * 1024 * 1024  # bytes: the WAL of the store under test fills up after about 35 sends below
PADDING = "x" * 50_000


def _server_with_file_size_limit(limit_bytes: int) -> list[str]:
    """``python -m sqsemu`` under ``RLIMIT_FSIZE``: no file it writes may grow past ``limit_bytes``. A write that
    would fails as on a full disk (a short write, which SQLite reports as ``database or disk is full``; or EFBIG)
    instead of sending SIGXFSZ, which is ignored. An operating-system limit, nothing in sqsemu knows of it."""
    code = (
        "import resource, runpy, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_bytes}, {limit_bytes})); "
        "runpy.run_module('sqsemu', run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-c", code]


def _peek(endpoint_url: str, name: str) -> dict[str, str]:
    """Every message of queue ``name`` (account 000000000000), in flight or not: message id -> body."""
    status, _, body = http_get(f"{endpoint_url}/_sqsemu/queues/000000000000/{name}/messages", timeout=10)
    assert status == 200, body
    return {m["message_id"]: m["body"] for m in json.loads(body)["messages"]}


class _Ledger:
    """What the server answered, from several client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: dict[str, str] = {}  # acknowledged sends: message id -> body
        self.deleted: set[str] = set()  # message ids whose deletion was acknowledged
        self.failures: list[str] = []  # the first failure of each writer
        self.later: list[str] = []  # what requests made after a writer's first failure got
        self.first_failure_at: float | None = None

    def failed(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)
            if self.first_failure_at is None:
                self.first_failure_at = time.monotonic()


def _failure(exc: Exception) -> str:
    """``HTTP <status> <error code>`` of an error answer; the exception's type when there was no answer."""
    if isinstance(exc, ClientError):
        return f"HTTP {exc.response['ResponseMetadata'].get('HTTPStatusCode')} {exc.response['Error']['Code']}"
    return type(exc).__name__  # the server closed the connection or had gone


def _writer(endpoint_url: str, url: str, writer: int, handles: list[tuple[str, str]], ledger: _Ledger) -> None:
    """Send ~50 KB messages, deleting one of ``handles`` after each, until a request fails; then make three more
    requests, none of which may succeed."""
    sqs = json_client(endpoint_url)
    try:
        for n in range(200):
            try:
                message_id = sqs.send_message(QueueUrl=url, MessageBody=f"w{writer}-{n}-{PADDING}")["MessageId"]
                with ledger.lock:
                    ledger.sent[message_id] = f"w{writer}-{n}-{PADDING}"
                    taken = handles.pop() if handles else None
                if taken is not None:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=taken[1])
                    with ledger.lock:
                        ledger.deleted.add(taken[0])
            except (ClientError, BotoCoreError) as exc:
                ledger.failed(_failure(exc))
                break
        for call in (
            lambda: sqs.send_message(QueueUrl=url, MessageBody="after the failure"),
            lambda: sqs.get_queue_url(QueueName="q"),
            lambda: sqs.list_queues(),
        ):
            try:
                call()
                outcome = "HTTP 200"
            except (ClientError, BotoCoreError) as exc:
                outcome = _failure(exc)
            with ledger.lock:
                ledger.later.append(outcome)
    finally:
        sqs.close()


def test_a_failed_commit_stops_the_server_and_a_restart_keeps_every_acknowledged_change(tmp_path: Path) -> None:
    """The disk fills up under four concurrent writers (a file-size limit on the server process). Every request
    from then on fails (HTTP 500 InternalError while the server stops, then no connection), a long poll under way
    is answered at once, the log says once what failed, with SQLite's own reason and no traceback, and the process
    exits with status 3 within seconds. Restarted on the same folder, it holds exactly the acknowledged changes:
    every acknowledged send and deletion, and none that was refused."""
    data_dir = tmp_path / "data"
    server = ServerProcess(["--data-dir", str(data_dir)], command=_server_with_file_size_limit(FILE_SIZE_LIMIT))
    server.start()
    ledger = _Ledger()
    try:
        sqs = json_client(server.endpoint_url)
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        idle = sqs.create_queue(QueueName="idle")["QueueUrl"]
        first = [sqs.send_message(QueueUrl=url, MessageBody=f"first-{n}")["MessageId"] for n in range(8)]
        handles: list[tuple[str, str]] = []
        while len(handles) < len(first):
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=600)["Messages"]
            handles += [(m["MessageId"], m["ReceiptHandle"]) for m in got]
        long_poll = start_long_poll(
            server.endpoint_url, json_client(server.endpoint_url), QueueUrl=idle, WaitTimeSeconds=20
        )
        writers = [
            threading.Thread(target=_writer, args=(server.endpoint_url, url, n, handles, ledger)) for n in range(4)
        ]
        for thread in writers:
            thread.start()
        for thread in writers:
            thread.join(60)
        assert server.proc is not None
        status = server.proc.wait(15)
        stopped_after = time.monotonic() - (ledger.first_failure_at or 0)
        long_poll.join(5)
        sqs.close()
    finally:
        server.kill()
    log = server.log_tail(100_000)
    assert status == 3, log
    assert ledger.sent and len(ledger.failures) == 4, (ledger.failures, log)
    assert "HTTP 500 InternalError" in ledger.failures, ledger.failures  # the requests of the failed commit
    assert "HTTP 200" not in ledger.later, ledger.later  # nothing acknowledged on top of the failure
    assert stopped_after < 5, f"the server took {stopped_after:.1f} s to stop"
    assert isinstance(long_poll.error, ClientError) and _failure(long_poll.error) == "HTTP 500 InternalError"
    store_lines = [line for line in log.splitlines() if "durable store" in line]
    assert len(store_lines) == 1, log
    assert "failed to commit" in store_lines[0] and "rollback" not in store_lines[0], store_lines[0]
    assert "database or disk is full" in store_lines[0] or "disk I/O error" in store_lines[0], store_lines[0]
    assert "Traceback" not in log, log

    again = ServerProcess(["--data-dir", str(data_dir)]).start()
    try:
        stored = _peek(again.endpoint_url, "q")
        expected = {message_id: f"first-{first.index(message_id)}" for message_id in first}
        for message_id in ledger.deleted:
            del expected[message_id]
        expected.update(ledger.sent)
        assert stored.keys() == expected.keys()
        assert stored == expected
        sqs = json_client(again.endpoint_url)
        sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName="q")["QueueUrl"], MessageBody="the file is fine")
        sqs.close()
    finally:
        assert again.stop() == 0


def _start_and_wait(data_dir: Path, timeout_s: float = 15) -> subprocess.CompletedProcess[str]:
    """Start ``sqsemu --data-dir data_dir``, expecting it to exit at once; fails the test if it is still running
    after ``timeout_s`` seconds."""
    command = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(free_port())]
    try:
        return subprocess.run(
            command + ["--data-dir", str(data_dir)], capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"a second server on {data_dir} started and ran")


def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    """One folder, one server: a second one exits 1, naming the first one's pid, and takes nothing from it; a
    killed server leaves no stale lock behind."""
    data_dir = tmp_path / "data"
    first = ServerProcess(["--data-dir", str(data_dir)]).start()
    try:
        sqs = json_client(first.endpoint_url)
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        sent = {sqs.send_message(QueueUrl=url, MessageBody=f"m{n}")["MessageId"]: f"m{n}" for n in range(5)}
        result = _start_and_wait(data_dir)
        assert result.returncode == 1, result.stderr
        assert result.stderr.strip() == (
            f"Error: cannot start: data dir {data_dir} is in use by another sqsemu (pid {first.proc.pid})"
        )
        sent[sqs.send_message(QueueUrl=url, MessageBody="after")["MessageId"]] = "after"  # the first one serves on
        sqs.close()
    finally:
        first.stop(signal.SIGKILL)  # the OS releases its lock
    again = ServerProcess(["--data-dir", str(data_dir)]).start()
    try:
        assert _peek(again.endpoint_url, "q") == sent
    finally:
        assert again.stop() == 0


def _subject_to_file_permissions() -> list[str]:
    """A command prefix under which the server obeys file permissions. Root ignores them (CAP_DAC_OVERRIDE), and
    these tests run as root in CI: there, ``setpriv`` (util-linux) starts the server without the capabilities that
    bypass permissions, so a folder or file without write permission is read-only to it as to any user. Skips the
    test if that is not possible (no setpriv, or not allowed to change the capability bounding set)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and no setpriv (util-linux) to drop CAP_DAC_OVERRIDE with")
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]
    tried = subprocess.run([*prefix, "true"], capture_output=True, text=True)
    if tried.returncode != 0:
        pytest.skip(f"running as root, and setpriv may not drop CAP_DAC_OVERRIDE here: {tried.stderr.strip()}")
    return prefix


@pytest.mark.parametrize("what", ["folder", "file", "new folder"])
def test_a_data_dir_that_cannot_be_written_is_refused_as_such(tmp_path: Path, what: str) -> None:
    """A data folder (or its sqsemu.db) that is read-only for the server stops it at start with a message that says
    so, naming the path; not 'corrupt', and the file is left as it was."""
    prefix = _subject_to_file_permissions()
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    db = data_dir / "sqsemu.db"
    if what != "new folder":
        durable = Durable(data_dir, "json")
        try:
            durable.start()
            durable.sqs.create_queue(QueueName="q")
            durable.stop("sigint")
        finally:
            durable.close()
    read_only = db if what == "file" else data_dir
    read_only.chmod(0o444 if what == "file" else 0o555)
    try:
        before = db.read_bytes() if db.exists() else None
        command = [*prefix, sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(free_port())]
        result = subprocess.run([*command, "--data-dir", str(data_dir)], capture_output=True, text=True, timeout=15)
        assert result.returncode == 1, result.stderr
        assert "cannot be opened for writing" in result.stderr, result.stderr
        assert str(read_only) in result.stderr, result.stderr
        assert "corrupt" not in result.stderr and "Traceback" not in result.stderr, result.stderr
        assert (db.read_bytes() if db.exists() else None) == before
    finally:
        read_only.chmod(0o644 if what == "file" else 0o755)
