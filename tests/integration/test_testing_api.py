"""sqsemu.testing.SQSServer, the Python API of the testing aids: a real server in a thread, its clock, clients per
account, peek, queue list, reset and fault injection."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from sqsemu.testing import AdminAPIError, SQSServer, new_account

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer() as srv:
        yield srv


@pytest.fixture
def account(server: SQSServer) -> Iterator[str]:
    acct = new_account()
    yield acct
    server.reset(acct)


@pytest.fixture
def client(server: SQSServer, account: str) -> Any:
    return server.client(account)


def test_new_account_ids_are_fresh_12_digit_ids() -> None:
    ids = [new_account() for _ in range(1000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9]{12}", a) and a != "000000000000" for a in ids)
    assert SQSServer.new_account() not in ids


def test_start_stop_without_with() -> None:
    srv = SQSServer(region="eu-west-1", account_id="123456789012", fidelity="strict")
    assert not srv.running
    with pytest.raises(RuntimeError):
        srv.endpoint_url  # noqa: B018 - not started
    srv.start()
    try:
        assert srv.running and srv.endpoint_url.startswith("http://127.0.0.1:")
        sqs = srv.client()
        assert sqs.meta.region_name == "eu-west-1"
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        assert url == f"{srv.endpoint_url}/123456789012/q"
        [listed] = srv.queues()
        assert (listed["account"], listed["region"], listed["url"]) == ("123456789012", "eu-west-1", url)
        assert srv.peek("q") == []
    finally:
        srv.stop()
        srv.stop()
    assert not srv.running


def test_clock(server: SQSServer, client: Any) -> None:
    assert server.clock.mode == "manual"
    start = server.clock.now_ms()
    assert server.advance(1.5) == start + 1500
    assert server.clock.advance(0) == start + 1500 == server.clock.now_ms()
    url = client.create_queue(QueueName="delays")["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="x", DelaySeconds=30)
    [message] = server.peek(url)
    assert (message["state"], message["seconds_left"]) == ("delayed", 30.0)
    server.advance(30)
    assert server.peek(url)[0]["state"] == "visible"
    with pytest.raises(AdminAPIError) as info:
        server.advance(-1)
    assert info.value.status == 400


def test_system_clock_cannot_advance() -> None:
    with SQSServer(clock="system") as srv:
        assert srv.clock.mode == "system"
        with pytest.raises(AdminAPIError, match="not manual"):
            srv.advance(1)


def test_long_poll_on_manual_clock_ends_when_the_clock_is_advanced(server: SQSServer, client: Any) -> None:
    url = client.create_queue(QueueName="poll")["QueueUrl"]
    result: list[Any] = []
    poller = threading.Thread(
        target=lambda: result.append(client.receive_message(QueueUrl=url, WaitTimeSeconds=20)), daemon=True
    )
    poller.start()
    time.sleep(0.2)
    assert poller.is_alive()  # time does not pass on its own
    server.advance(20)
    poller.join(10)
    assert not poller.is_alive() and "Messages" not in result[0]


def test_clients_per_account_are_isolated(server: SQSServer, client: Any, account: str) -> None:
    other_account = new_account()
    other = server.client(account=other_account)
    mine = client.create_queue(QueueName="same-name")["QueueUrl"]
    theirs = other.create_queue(QueueName="same-name")["QueueUrl"]
    assert mine.endswith(f"/{account}/same-name") and theirs.endswith(f"/{other_account}/same-name")
    client.send_message(QueueUrl=mine, MessageBody="mine")
    assert other.list_queues()["QueueUrls"] == [theirs]
    assert server.peek(theirs) == []
    assert [m["body"] for m in server.peek("same-name", account=account)] == ["mine"]
    assert server.reset(other_account) == 1
    assert [q["url"] for q in server.queues() if q["account"] in (account, other_account)] == [mine]
    with pytest.raises(ValueError):
        server.client(account="42")


def test_peek_by_url_or_name_and_errors(server: SQSServer, client: Any, account: str) -> None:
    url = client.create_queue(QueueName="jobs.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    client.send_message(QueueUrl=url, MessageBody="b", MessageGroupId="g", MessageDeduplicationId="d")
    by_url = server.peek(url)
    assert by_url == server.peek("jobs.fifo", account=account)
    assert by_url[0]["message_group_id"] == "g" and by_url[0]["message_deduplication_id"] == "d"
    whole = server.peek_queue(url)
    assert whole["queue"]["fifo"] is True and whole["messages"] == by_url
    with pytest.raises(AdminAPIError) as info:
        server.peek("jobs.fifo")  # the server's default account has no such queue
    assert info.value.status == 404
    with pytest.raises(AdminAPIError) as info:
        server.peek(url, region="eu-west-1")
    assert info.value.status == 404


def test_reset_everything() -> None:
    with SQSServer() as srv:
        for acct in (None, new_account(), new_account()):
            srv.client(acct).create_queue(QueueName="q")
        assert len(srv.queues()) == 3
        assert srv.reset() == 3
        assert srv.queues() == []
        with pytest.raises(AdminAPIError) as info:
            srv.reset("nope")
        assert info.value.status == 400


def test_inject_and_clear_faults(server: SQSServer, client: Any) -> None:
    url = client.create_queue(QueueName="faulty")["QueueUrl"]
    rule_id = server.inject(action="SendMessage", queue="faulty", error="ServiceUnavailable", count=1)
    try:
        assert isinstance(rule_id, str) and rule_id
        with pytest.raises(ClientError) as info:
            client.send_message(QueueUrl=url, MessageBody="x")
        assert info.value.response["Error"]["Code"] == "ServiceUnavailable"
        client.send_message(QueueUrl=url, MessageBody="x")  # count=1: spent
        named = server.inject(
            action="ReceiveMessage", error={"code": "Boom", "status": 500, "message": "no"}, rule_id="boom"
        )
        assert named == "boom"
        with pytest.raises(ClientError) as info:
            client.receive_message(QueueUrl=url)
        assert info.value.response["Error"]["Code"] == "Boom"
        assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    finally:
        server.clear_faults()
    assert client.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "x"


HOST_LOGGING = """
import logging, sys
logging.basicConfig(stream=sys.stderr, format="HOST %(levelname)s %(name)s: %(message)s", level=logging.INFO)
from sqsemu import ServerThread
with ServerThread() as server:
    print(server.endpoint_url)
"""


def test_server_thread_logs_only_through_the_host_programs_logging() -> None:
    """A ServerThread installs no handler or format of its own: uvicorn's lines, like sqsemu's, come out in the
    format the host program configured, and nothing else reaches standard error."""
    result = subprocess.run([sys.executable, "-c", HOST_LOGGING], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines and all(line.startswith("HOST ") for line in lines), result.stderr
    assert any(line.startswith("HOST INFO uvicorn.error: ") for line in lines), result.stderr
    assert any(line.startswith("HOST INFO sqsemu.banner: sqsemu ") for line in lines), result.stderr
