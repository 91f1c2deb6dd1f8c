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


def _reader_on(server: SQSServer, name: str, messages: int) -> tuple[str, SQSStreamReader]:
    """A queue ``name`` holding ``messages`` messages (``m-0``, ``m-1``...) and a stream reader on it (short polls,
    60 s visibility timeout)."""
    client = server.client()
    url = client.create_queue(QueueName=name)["QueueUrl"]
    for first in range(0, messages, 10):
        entries = [{"Id": str(i), "MessageBody": f"m-{first + i}"} for i in range(10)]
        client.send_message_batch(QueueUrl=url, Entries=entries)
    options = parse_options(
        {
            "queueUrl": url,
            "endpointUrl": server.endpoint_url,
            "region": "us-east-1",
            "accessKeyId": "test",
            "secretAccessKey": "test",
            "waitTimeSeconds": "0",
            "visibilityTimeout": "60",
        }
    )
    return url, SQSStreamReader(options)


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


def test_stop_gives_back_what_was_received_ahead_and_keeps_the_planned_batch_in_flight(server: SQSServer) -> None:
    from pyspark.sql.streaming.datasource import ReadMaxRows

    url, reader = _reader_on(server, "stream-ahead", 30)
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadMaxRows(10))  # batch 1 planned; batch 2 received ahead
    assert end["seq"] == 1
    state = reader._state
    assert state is not None and state.prefetch is not None
    state.prefetch.result()
    assert sorted(m["state"] for m in server.peek(url)) == ["in_flight"] * 20 + ["visible"] * 10
    reader.stop()
    states = [m["state"] for m in server.peek(url)]
    assert sorted(states) == ["in_flight"] * 10 + ["visible"] * 20  # nothing deleted; only batch 1 still held


def test_only_batches_whose_timeout_runs_out_soon_are_renewed(server: SQSServer) -> None:
    """The renewing thread renews a held batch whose visibility timeout would end before its wake-up after next,
    and leaves alone one with long enough still to run (a batch that ends early costs no renewal calls)."""
    import time

    url, reader = _reader_on(server, "stream-renew", 20)
    reader.initialOffset()
    state = reader._state
    assert state is not None
    soon, later = reader._receive(state, 10), reader._receive(state, 10)
    assert len(soon) == len(later) == 10
    now = time.monotonic()
    state.pending.update({1: soon, 2: later})
    state.expires.update({1: now + 5, 2: now + 100})  # with a 10 s period, only batch 1 is due
    time.sleep(2)
    reader._renew_due(state, 10.0)
    left = {m["body"]: m["seconds_left"] for m in server.peek(url)}
    renewed = [left[m["Body"]] for m in soon]
    untouched = [left[m["Body"]] for m in later]
    assert min(renewed) > max(untouched) + 1  # batch 1 got 60 s from now; batch 2 still counts from its receipt
    assert state.expires[1] > now + 60 and state.expires[2] == now + 100
    reader.stop()


@pytest.mark.parametrize("ends", ["commit", "release"])
def test_a_renewal_under_way_lands_before_the_delete_or_release_of_its_messages(
    server: SQSServer, monkeypatch: pytest.MonkeyPatch, ends: str
) -> None:
    # The renewing thread chooses its receipt handles, then calls ChangeMessageVisibilityBatch; a commit (delete)
    # or a release (visibility 0) of the same messages meanwhile must land after it, or the renewal would act on
    # deleted messages or hide released ones again for a whole visibility timeout.
    from sqsemu.spark import client as sqs_client
    from sqsemu.spark import stream

    _, reader = _reader_on(server, f"renew-race-{ends}", 10)
    start = reader.initialOffset()
    end = reader.latestOffset(start, reader.getDefaultReadLimit())
    state = reader._driver()
    landed: list[str] = []
    chosen, go, ended = threading.Event(), threading.Event(), threading.Event()
    real_change, real_delete = sqs_client.change_visibility, sqs_client.delete_messages

    def change(client: object, url: str, handles: list[str], timeout: int, concurrency: int = 1) -> object:
        if threading.current_thread().name == "renewer":
            chosen.set()
            go.wait(10)
            landed.append("renew")
        else:
            landed.append("release")
            ended.set()
        return real_change(client, url, handles, timeout, concurrency=concurrency)

    def delete(client: object, url: str, handles: list[str], concurrency: int = 1) -> object:
        landed.append("delete")
        ended.set()
        return real_delete(client, url, handles, concurrency=concurrency)

    monkeypatch.setattr(stream, "change_visibility", change)
    monkeypatch.setattr(stream, "delete_messages", delete)
    renewer = threading.Thread(target=reader._renew_due, args=(state, 1000.0), name="renewer")
    renewer.start()
    assert chosen.wait(10)
    if ends == "commit":
        other = threading.Thread(target=reader.commit, args=(end,))
    else:
        other = threading.Thread(target=reader._release, args=(state, state.pending[1]))
    other.start()
    ended.wait(2)  # without the renewal lock the delete or release lands now, before the renewal
    go.set()
    renewer.join(10)
    other.join(10)
    assert landed == ["renew", "delete" if ends == "commit" else "release"]
    reader.stop()
