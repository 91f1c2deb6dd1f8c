"""A send that fails inside the engine leaves nothing behind, over a real socket (issue 28, finding 4): the SDK's
retry of the 500 stores exactly one copy, on a FIFO queue too (the deduplication ID of the failed attempt was not
remembered, so the retry is not dropped as a duplicate of a message never stored). The failure is injected at a
fault point of the in-process server's engine (``sqsemu.engine.faultpoints``); both wire protocols."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import client_for

from sqsemu.engine import faultpoints
from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer() as srv:
        yield srv


def _fail_once(point: str) -> list[str]:
    hits: list[str] = []

    def hook(name: str) -> None:
        if name == point and not hits:
            hits.append(name)
            raise faultpoints.FaultInjected(name)

    faultpoints.arm(hook)
    return hits


@pytest.mark.parametrize("point", ["send.stored", "send.placed", "send.woken"])
@pytest.mark.parametrize("fifo", [False, True], ids=["standard", "fifo"])
def test_the_retry_of_a_failed_send_stores_one_copy(server: SQSServer, protocol: str, point: str, fifo: bool) -> None:
    account = new_account()
    sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
    try:
        attributes = {"FifoQueue": "true"} if fifo else {}
        url = sqs.create_queue(QueueName="once.fifo" if fifo else "once", Attributes=attributes)["QueueUrl"]
        extra: dict[str, Any] = {"MessageGroupId": "g", "MessageDeduplicationId": "d1"} if fifo else {}
        hits = _fail_once(point)
        try:
            with pytest.raises(ClientError) as failed:
                sqs.send_message(QueueUrl=url, MessageBody="exactly-once", **extra)
        finally:
            faultpoints.disarm()
        assert hits == [point]
        assert failed.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
        assert server.peek(url, account) == []  # nothing of the failed send is left
        sqs.send_message(QueueUrl=url, MessageBody="exactly-once", **extra)  # the client's retry
        peeked = server.peek(url, account)
        assert [m["body"] for m in peeked] == ["exactly-once"]
        attributes_now = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
        assert attributes_now["Attributes"]["ApproximateNumberOfMessages"] == "1"
    finally:
        sqs.close()
