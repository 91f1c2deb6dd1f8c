"""The admin routes over real HTTP: queue list, message peek and reset, with real clients over both protocols.

The peek tests prove that looking changes nothing: queue attributes, receive counts, first-receive timestamps,
in-flight and delayed messages and FIFO group locks are the same after any number of peeks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any
from urllib.parse import quote

import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for, http_get, http_post_json, start_long_poll

from sqsemu.testing import new_account

pytestmark = pytest.mark.integration

DEFAULT_ACCOUNT = "000000000000"


def get_json(url: str) -> tuple[int, Any]:
    status, _, body = http_get(url, timeout=10)
    return status, json.loads(body)


def peek(server: ServerProcess, queue_url: str, account: str = DEFAULT_ACCOUNT, region: str | None = None) -> Any:
    name = queue_url.rstrip("/").rsplit("/", 1)[-1]
    url = f"{server.endpoint_url}/_sqsemu/queues/{account}/{quote(name)}/messages"
    if region:
        url += f"?region={region}"
    status, data = get_json(url)
    assert status == 200, data
    return data


def all_queues(server: ServerProcess) -> list[dict[str, Any]]:
    status, data = get_json(f"{server.endpoint_url}/_sqsemu/queues")
    assert status == 200
    return list(data["queues"])


def system_names(client: Any) -> dict[str, list[str]]:
    # boto3 1.28.64's Query model has only the older AttributeNames member
    if client.meta.protocol == "json":
        return {"MessageSystemAttributeNames": ["All"]}
    return {"AttributeNames": ["All"]}


def receive(client: Any, url: str, **kwargs: Any) -> list[dict[str, Any]]:
    kwargs.setdefault("MaxNumberOfMessages", 10)
    kwargs.setdefault("MessageAttributeNames", ["All"])
    return list(client.receive_message(QueueUrl=url, **system_names(client), **kwargs).get("Messages", []))


def queue_attributes(client: Any, url: str) -> dict[str, str]:
    return dict(client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"])


# --- queue list -------------------------------------------------------------------------------------------------


def test_queue_list_shows_urls_and_counts(manual_server, manual_sqs, manual_make_queue):
    url = manual_make_queue(VisibilityTimeout=30)
    manual_sqs.send_message(QueueUrl=url, MessageBody="a")
    manual_sqs.send_message(QueueUrl=url, MessageBody="b")
    manual_sqs.send_message(QueueUrl=url, MessageBody="c", DelaySeconds=5)
    assert len(receive(manual_sqs, url, MaxNumberOfMessages=1)) == 1
    queues = all_queues(manual_server)
    keys = [(q["account"], q["region"], q["name"]) for q in queues]
    assert keys == sorted(keys)
    [mine] = [q for q in queues if q["url"] == url]
    name = url.rsplit("/", 1)[-1]
    assert mine == {
        "account": DEFAULT_ACCOUNT,
        "region": "us-east-1",
        "name": name,
        "arn": f"arn:aws:sqs:us-east-1:{DEFAULT_ACCOUNT}:{name}",
        "fifo": False,
        "url": url,
        "visible": 1,
        "in_flight": 1,
        "delayed": 1,
        "waiting_long_polls": 0,
        "noisy_tenants": [],
    }


def test_queue_list_and_peek_other_accounts_and_regions(manual_server, protocol):
    account = new_account()
    client = client_for(manual_server.endpoint_url, protocol, access_key_id=account, region="eu-west-1")
    try:
        url = client.create_queue(QueueName="elsewhere")["QueueUrl"]
        client.send_message(QueueUrl=url, MessageBody="hej")
        [listed] = [q for q in all_queues(manual_server) if q["account"] == account]
        assert (listed["region"], listed["name"], listed["url"]) == ("eu-west-1", "elsewhere", url)
        status, data = get_json(f"{manual_server.endpoint_url}/_sqsemu/queues/{account}/elsewhere/messages")
        assert status == 404 and "error" in data  # the default region is us-east-1
        data = peek(manual_server, url, account, region="eu-west-1")
        assert [m["body"] for m in data["messages"]] == ["hej"]
        assert data["queue"]["arn"] == f"arn:aws:sqs:eu-west-1:{account}:elsewhere"
    finally:
        client.delete_queue(QueueUrl=url)
        client.close()


def test_waiting_long_polls_follows_long_polls_as_they_park_and_end(manual_server, manual_sqs, manual_make_queue):
    # (A long poll whose client disconnects stops counting too: test_wire.py's disconnected long-poll tests.)
    url = manual_make_queue()

    def shown() -> tuple[int, int]:
        [listed] = [q for q in all_queues(manual_server) if q["url"] == url]
        return listed["waiting_long_polls"], peek(manual_server, url)["queue"]["waiting_long_polls"]

    assert shown() == (0, 0)
    assert manual_sqs.receive_message(QueueUrl=url).get("Messages", []) == []  # a short poll never parks
    assert shown() == (0, 0)
    first = start_long_poll(manual_server.endpoint_url, manual_sqs, QueueUrl=url, WaitTimeSeconds=20)
    second = None
    try:
        assert shown() == (1, 1)
        second = start_long_poll(manual_server.endpoint_url, manual_sqs, QueueUrl=url, WaitTimeSeconds=5)
        assert shown() == (2, 2)
        manual_sqs.send_message(QueueUrl=url, MessageBody="answered")
        assert shown() == (1, 1)  # the first in line got it
        first.join(15)
        assert [m["Body"] for m in first.messages()] == ["answered"]
        manual_server.advance(5)
        assert shown() == (0, 0)  # the second one's wait is over
        second.join(15)
        assert second.messages() == []
    finally:
        for receiver in (first, second):
            if receiver is not None and receiver.is_alive():
                manual_server.advance(20)
                receiver.join(5)


# --- peek changes nothing ------------------------------------------------------------------------------------------


def test_peek_changes_nothing_standard(manual_server, manual_sqs, manual_make_queue):
    url = manual_make_queue(VisibilityTimeout=30)
    attrs = {
        "colour": {"DataType": "String", "StringValue": "blue"},
        "raw": {"DataType": "Binary", "BinaryValue": b"\x01"},
    }
    for body in ("one", "two", "three"):
        manual_sqs.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=attrs)
    manual_sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=60)
    [first] = receive(manual_sqs, url, MaxNumberOfMessages=1)
    assert first["Body"] == "one"
    manual_server.advance(1)

    before_attributes = queue_attributes(manual_sqs, url)
    before = peek(manual_server, url)
    states = {m["body"]: (m["state"], m["seconds_left"], m["receive_count"]) for m in before["messages"]}
    assert states == {
        "one": ("in_flight", 29.0, 1),
        "two": ("visible", None, 0),
        "three": ("visible", None, 0),
        "delayed": ("delayed", 59.0, 0),
    }
    one = before["messages"][0]
    assert one["first_receive_timestamp"] == int(first["Attributes"]["ApproximateFirstReceiveTimestamp"])
    assert one["message_attributes"] == {
        "colour": {"DataType": "String", "StringValue": "blue"},
        "raw": {"DataType": "Binary", "BinaryValue": "AQ=="},
    }
    for _ in range(5):
        assert peek(manual_server, url) == before
        all_queues(manual_server)
    assert queue_attributes(manual_sqs, url) == before_attributes

    # the in-flight message stays in flight and the delayed one delayed: only the two visible ones come back
    got = receive(manual_sqs, url)
    assert sorted(m["Body"] for m in got) == ["three", "two"]
    assert {m["Attributes"]["ApproximateReceiveCount"] for m in got} == {"1"}
    # when its timeout ends, "one" returns with its second receive: peeks were not receives
    manual_server.advance(29)
    [again] = [m for m in receive(manual_sqs, url) if m["Body"] == "one"]
    assert again["Attributes"]["ApproximateReceiveCount"] == "2"
    first_receive = first["Attributes"]["ApproximateFirstReceiveTimestamp"]
    assert again["Attributes"]["ApproximateFirstReceiveTimestamp"] == first_receive
    assert again["MessageAttributes"]["raw"]["BinaryValue"] == b"\x01"


def test_peek_changes_nothing_fifo(manual_server, manual_sqs, manual_make_queue):
    url = manual_make_queue(FifoQueue=True, ContentBasedDeduplication=True, VisibilityTimeout=10)
    for body in ("a1", "a2"):
        manual_sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="a")
    manual_sqs.send_message(QueueUrl=url, MessageBody="b1", MessageGroupId="b", DelaySeconds=0)
    [got] = receive(manual_sqs, url, MaxNumberOfMessages=1)
    assert got["Body"] == "a1"
    before_attributes = queue_attributes(manual_sqs, url)
    before = peek(manual_server, url)
    assert [(m["body"], m["state"], m["message_group_id"]) for m in before["messages"]] == [
        ("a1", "in_flight", "a"),
        ("a2", "visible", "a"),
        ("b1", "visible", "b"),
    ]
    assert before["messages"][0]["sequence_number"] == got["Attributes"]["SequenceNumber"]
    for _ in range(5):
        assert peek(manual_server, url) == before
    assert queue_attributes(manual_sqs, url) == before_attributes
    # a1, the first message of group "a", is still in flight, so nothing of "a" is served; group "b" is
    assert [m["Body"] for m in receive(manual_sqs, url)] == ["b1"]
    # the content-based deduplication window was not touched: resending a2 is still a duplicate
    manual_sqs.send_message(QueueUrl=url, MessageBody="a2", MessageGroupId="a")
    assert len(peek(manual_server, url)["messages"]) == 3
    manual_server.advance(10)
    [again] = receive(manual_sqs, url, MaxNumberOfMessages=1)
    assert (again["Body"], again["Attributes"]["ApproximateReceiveCount"]) == ("a1", "2")


def test_peek_errors(manual_server):
    base = f"{manual_server.endpoint_url}/_sqsemu/queues"
    for path, status in (
        (f"/{DEFAULT_ACCOUNT}/no-such-queue-{new_account()}/messages", 404),
        ("/12345/q/messages", 400),
        (f"/{DEFAULT_ACCOUNT}/q/messages?region=", 400),
    ):
        got, data = get_json(base + path)
        assert got == status and isinstance(data["error"], str), path


# --- reset -------------------------------------------------------------------------------------------------------


def test_reset_one_account_leaves_the_others(manual_server, manual_sqs, manual_make_queue, protocol):
    kept = manual_make_queue()
    account = new_account()
    client = client_for(manual_server.endpoint_url, protocol, access_key_id=account)
    try:
        for name in ("x", "y"):
            client.create_queue(QueueName=name)
        client_url = client.create_queue(QueueName="z")["QueueUrl"]
        status, data = http_post_json(f"{manual_server.endpoint_url}/_sqsemu/reset", {"account": account})
        assert (status, data) == (200, {"deleted_queues": 3, "deleted_topics": 0})
        assert client.list_queues().get("QueueUrls", []) == []
        assert kept in manual_sqs.list_queues().get("QueueUrls", [])
        with pytest.raises(ClientError) as exc:
            client.send_message(QueueUrl=client_url, MessageBody="gone")
        assert exc.value.response["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"
    finally:
        client.close()
    for body in ({"account": "123"}, {"account": 1}, {"acount": account}, [1]):
        status, data = http_post_json(f"{manual_server.endpoint_url}/_sqsemu/reset", body)
        assert status == 400 and "error" in data, body


def test_reset_everything_and_the_readme_curl_commands():
    """A server of its own (reset {} deletes every queue), driven with docs/testing.md's curl lines when curl
    exists."""
    with ServerProcess(["--clock", "manual"]) as server:
        client = client_for(server.endpoint_url, "json")
        other = client_for(server.endpoint_url, "json", access_key_id=new_account())
        try:
            url = client.create_queue(QueueName="orders")["QueueUrl"]
            client.send_message(QueueUrl=url, MessageBody="hello")
            other.create_queue(QueueName="orders")
            curl = shutil.which("curl")
            if curl is not None:
                host = f"localhost:{server.port}"

                def run(*args: str) -> Any:
                    out = subprocess.run([curl, "-s", *args], check=True, capture_output=True, text=True, timeout=30)
                    return json.loads(out.stdout)

                assert len(run(f"{host}/_sqsemu/queues")["queues"]) == 2
                peeked = run(f"{host}/_sqsemu/queues/000000000000/orders/messages")
                assert [m["body"] for m in peeked["messages"]] == ["hello"]
                assert peeked["queue"]["url"] == f"http://{host}/000000000000/orders"
                assert run(f"{host}/_sqsemu/queues/000000000000/orders/messages?region=eu-west-1")["error"]
                assert run("-X", "POST", f"{host}/_sqsemu/clock/advance", "-d", '{"seconds": 30}')["mode"] == "manual"
                assert run("-X", "POST", f"{host}/_sqsemu/reset", "-d", '{"account": "000000000000"}') == {
                    "deleted_queues": 1,
                    "deleted_topics": 0,
                }
                run("-X", "POST", f"{host}/_sqsemu/faults", "-d", '{"action": "SendMessage", "latency_ms": 1}')
                assert run("-X", "POST", f"{host}/_sqsemu/reset", "-d", "{}") == {
                    "deleted_queues": 1,
                    "deleted_topics": 0,
                    "deleted_faults": 1,
                }
                assert run(f"{host}/_sqsemu/faults") == {"faults": []}
            else:
                status, data = http_post_json(f"{server.endpoint_url}/_sqsemu/reset", {})
                assert (status, data) == (200, {"deleted_queues": 2, "deleted_topics": 0, "deleted_faults": 0})
            assert all_queues(server) == []
            assert client.list_queues().get("QueueUrls", []) == []
        finally:
            client.close()
            other.close()
