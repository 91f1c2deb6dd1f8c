"""``GET /metrics`` on a real server with 2,000 queues (issue 47, finding 7): the answer is whole, well-formed
Prometheus text, and it is written in slices, the server answering other clients in between.

How the slicing is seen without timing anything: the scraper reads the answer's head and first bytes, then stops
reading (its receive buffer is small, so the server soon has more than the connection will take: a server that
writes in slices waits for the scraper there, one that wrote everything in one go has finished). Meanwhile another
connection makes a GetQueueUrl call, the only one of the test. The server-wide families come last in the answer:
when the answer is made in slices they are written after that call was answered, so they count it.
"""

from __future__ import annotations

import json
import socket
from collections import Counter

from harness import ServerProcess
from prometheus_client.parser import text_string_to_metric_families

QUEUES = 2000
AUTH = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0"
PER_QUEUE = (
    "sqs_approximate_number_of_messages_visible",
    "sqs_approximate_number_of_messages_not_visible",
    "sqs_approximate_number_of_messages_delayed",
    "sqs_approximate_age_of_oldest_message_seconds",
    "sqs_number_of_messages_sent",
    "sqs_number_of_messages_received",
    "sqs_number_of_messages_deleted",
    "sqs_number_of_empty_receives",
    "sqs_sent_message_size_bytes",
    "sqs_number_of_messages_dead_lettered",
    "sqs_number_of_messages_expired",
    "sqs_approximate_number_of_noisy_groups",
    "sqs_approximate_number_of_messages_visible_in_quiet_groups",
    "sqs_approximate_number_of_messages_not_visible_in_quiet_groups",
    "sqs_approximate_number_of_messages_delayed_in_quiet_groups",
    "sqs_approximate_age_of_oldest_message_in_quiet_groups_seconds",
)


def call(port: int, action: str, doc: dict[str, object]) -> bytes:
    """The bytes of one JSON 1.0 call."""
    body = json.dumps(doc).encode()
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"X-Amz-Target: AmazonSQS.{action}\r\nAuthorization: {AUTH}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Reader:
    """What arrives on one socket, read as asked."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def more(self) -> None:
        data = self.sock.recv(1 << 16)
        assert data, "the server closed the connection"
        self.buffer += data

    def until(self, marker: bytes) -> bytes:
        """Everything up to and including ``marker``."""
        while (end := self.buffer.find(marker)) < 0:
            self.more()
        taken, self.buffer = self.buffer[: end + len(marker)], self.buffer[end + len(marker) :]
        return taken

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self.more()
        taken, self.buffer = self.buffer[:size], self.buffer[size:]
        return taken

    def answer(self) -> tuple[int, bytes]:
        """One ``Content-Length`` framed answer: (status, body)."""
        head = self.until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        length = next(int(line.split(":", 1)[1]) for line in head[1:] if line.lower().startswith("content-length:"))
        return int(head[0].split()[1]), self.exactly(length)

    def chunked(self) -> bytes:
        """A chunked body, to its last chunk."""
        parts: list[bytes] = []
        while size := int(self.until(b"\r\n").split(b";")[0], 16):
            parts.append(self.exactly(size))
            assert self.exactly(2) == b"\r\n"
        assert self.until(b"\r\n") == b"\r\n"  # no trailers
        return b"".join(parts)


def create_queues(port: int, count: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        reader = Reader(sock)
        for start in range(0, count, 200):
            batch = range(start, min(count, start + 200))
            sock.sendall(b"".join(call(port, "CreateQueue", {"QueueName": f"slice-{n:05d}"}) for n in batch))
            for _ in batch:
                status, body = reader.answer()
                assert status == 200, body


def test_metrics_of_2000_queues_is_whole_and_written_in_slices_other_calls_answered_between() -> None:
    with ServerProcess([]) as server:
        port = server.port
        create_queues(port, QUEUES)
        scraper = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        scraper.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)  # before connecting: a small window
        scraper.settimeout(60)
        scraper.connect(("127.0.0.1", port))
        try:
            scraper.sendall(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            reading = Reader(scraper)
            head = reading.until(b"\r\n\r\n").decode("latin-1").lower()
            assert head.startswith("http/1.1 200 ")
            assert "content-type: text/plain; version=0.0.4; charset=utf-8\r\n" in head
            assert "transfer-encoding: chunked\r\n" in head, head  # sent as it is written
            if not reading.buffer:
                reading.more()  # the first bytes of the body: the answer has begun

            # The scraper reads nothing more until another client's call is answered.
            with socket.create_connection(("127.0.0.1", port), timeout=60) as other:
                other.sendall(call(port, "GetQueueUrl", {"QueueName": "slice-01999"}))
                status, body = Reader(other).answer()
            assert status == 200, body
            assert json.loads(body)["QueueUrl"].endswith("/000000000000/slice-01999")

            text = reading.chunked().decode()
        finally:
            scraper.close()

    assert text.endswith("\n")
    families = {family.name: family for family in text_string_to_metric_families(text)}
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types)) == len(families)  # each family once
    names = {f"slice-{n:05d}" for n in range(QUEUES)}
    for name in PER_QUEUE:
        samples = families[name].samples
        kinds = Counter(sample.name for sample in samples)
        if name == "sqs_sent_message_size_bytes":
            assert kinds == {f"{name}_bucket": 9 * QUEUES, f"{name}_count": QUEUES, f"{name}_sum": QUEUES}
        else:
            assert len(samples) == QUEUES, name
        assert {sample.labels["queue"] for sample in samples} == names, name
        assert all(sample.value == 0 for sample in samples), name  # empty queues
    assert families["sqsemu_queues"].samples[0].value == QUEUES
    requests = {
        (sample.labels["action"], sample.labels["outcome"]): sample.value
        for sample in families["sqsemu_requests"].samples
    }
    assert requests[("CreateQueue", "ok")] == QUEUES
    # Written after the GetQueueUrl call was answered, while the per-queue families were still being sent.
    assert requests.get(("GetQueueUrl", "ok")) == 1, requests
