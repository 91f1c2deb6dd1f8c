"""The Spark stream reader's ``stop()`` ends its visibility-renewing thread and waits for it (no thread is left
running after a query stops). Needs only PySpark importable (no JVM): the reader talks to an in-process server."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

pytest.importorskip("pyspark")

from sqsemu.spark.options import parse_options  # noqa: E402
from sqsemu.spark.stream import SQSStreamReader  # noqa: E402
from sqsemu.testing import SQSServer  # noqa: E402


@pytest.fixture
def server() -> Iterator[SQSServer]:
    with SQSServer(clock="system") as srv:
        yield srv


def test_stop_ends_and_joins_the_renewing_thread(server: SQSServer) -> None:
    url = server.client().create_queue(QueueName="stream-stop")["QueueUrl"]
    options = parse_options({"queueUrl": url, "endpointUrl": server.endpoint_url, "region": "us-east-1"})
    reader = SQSStreamReader(options)
    reader.initialOffset()  # creates the driver state
    state = reader._state
    assert state is not None
    reader._ensure_heartbeat(state)
    heartbeat = state.heartbeat
    assert heartbeat is not None and heartbeat.is_alive()
    reader.stop()
    assert not heartbeat.is_alive()
    assert heartbeat not in threading.enumerate()
