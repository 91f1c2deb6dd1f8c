"""In-process CPU cost of sqsemu's own request handling: the ASGI app called directly, no sockets, no uvicorn.

Measures the server's Python work per message for the benchmark's workloads (SendMessage JSON and Query,
SendMessageBatch, the round trip send batch / receive 10 / delete batch), in CPU microseconds per message
(``time.process_time``; ``longpoll``: the wall time from a SendMessage's start to the answer of the long poll
it wakes, one at a time, n/10 of them; ``backlog``: the RSS bytes per stored 1 KiB message after n batch sends,
then the receive+delete CPU per message at the head and at the tail of that backlog, n/20 messages each), so that a
change to the app, the protocol layer or the engine can be judged without the noise of a shared machine's network
stack. The socket-level benchmark is ``bench/compare.py``.

    python bench/inproc.py [--n 20000]
                           [--workloads send,send-query,send-batch,roundtrip,roundtrip-query,longpoll,backlog]
                           [--data-dir DIR] [--profile OUT.pstats] [--through app|fastlane|asgi]

``--through``: ``app`` (the default) calls the ASGI app; ``fastlane`` feeds raw HTTP/1.1 requests to the server's
own HTTP protocol (httptools parsing, the fast lane, uvicorn's connection handling) over a fake transport, so the
figure is all of the server's Python work but the socket calls; ``asgi`` does the same through the guarded
protocol without the fast lane (every request through uvicorn's ASGI cycle), for comparison. The ``longpoll``
workload always calls the app.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import random
import re
import shutil
import string
import tempfile
import time
from typing import Any
from urllib.parse import urlencode

from sqsemu.config import Config
from sqsemu.server import build

BODY = "x" * 1024
_FILL_RANDOM = random.Random(7)
_FILL = "".join(_FILL_RANDOM.choice(string.ascii_letters + string.digits) for _ in range(1008))
HOST = b"127.0.0.1:9324"
AUTH = b"AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0"


def _json_scope(action: str, body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "query_string": b"",
        "headers": [
            (b"host", HOST),
            (b"content-type", b"application/x-amz-json-1.0"),
            (b"x-amz-target", f"AmazonSQS.{action}".encode()),
            (b"authorization", AUTH),
            (b"content-length", str(len(body)).encode()),
        ],
    }


def _query_scope(body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "query_string": b"",
        "headers": [
            (b"host", HOST),
            (b"content-type", b"application/x-www-form-urlencoded; charset=utf-8"),
            (b"authorization", AUTH),
            (b"content-length", str(len(body)).encode()),
        ],
    }


class Client:
    """Calls the app as uvicorn would: one request message, then collects the response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def call(self, scope: dict[str, Any], body: bytes) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self.app(scope, receive, send)
        return sent[0]["status"], sent[1]["body"]

    async def json(self, action: str, doc: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(doc).encode()
        status, out = await self.call(_json_scope(action, body), body)
        if status != 200:
            raise RuntimeError(out)
        return json.loads(out) if out else {}


class _FakeTransport:
    """Just enough of an asyncio transport for uvicorn's protocol: collects what is written."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.closed = False
        self.done: asyncio.Future[None] | None = None

    def write(self, data: bytes) -> None:
        self.out += data
        if self.done is not None and not self.done.done() and _complete(self.out):
            self.done.set_result(None)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 9324)}.get(name, default)


def _complete(out: bytearray) -> bool:
    end = out.find(b"\r\n\r\n")
    if end < 0:
        return False
    length = int(out[:end].lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
    return len(out) >= end + 4 + length


class ProtocolClient(Client):
    """Calls the server through its HTTP protocol (``fastlane``: sqsemu's own, answering SQS calls itself; ``asgi``:
    the same protocol handing every request to uvicorn's and the ASGI cycle) on one keep-alive connection over a fake
    transport."""

    def __init__(self, app: Any, config: Config, through: str) -> None:
        super().__init__(app)
        from uvicorn.server import ServerState

        from sqsemu.server import _serving

        uv, lane = _serving(config, app)
        uv.load()
        if lane is not None and through != "fastlane":
            lane.fast = False
        cls: Any = uv.http_protocol_class
        self.protocol = cls(config=uv, server_state=ServerState(), app_state={}, _loop=asyncio.get_running_loop())
        self.transport = _FakeTransport()
        self.protocol.connection_made(self.transport)
        self.heads: dict[tuple[Any, ...], bytes] = {}

    def _head(self, scope: dict[str, Any]) -> bytes:
        key = (scope["method"], scope["path"], *scope["headers"])
        head = self.heads.get(key)
        if head is None:
            lines = [f"{scope['method']} {scope['path']} HTTP/1.1".encode()]
            lines += [name + b": " + value for name, value in scope["headers"]]
            head = self.heads[key] = b"\r\n".join(lines) + b"\r\n\r\n"
        return head

    async def call(self, scope: dict[str, Any], body: bytes) -> tuple[int, bytes]:
        transport = self.transport
        transport.done = asyncio.get_running_loop().create_future()
        self.protocol.data_received(self._head(scope) + body)
        if not transport.done.done():
            await transport.done
        out = bytes(transport.out)
        transport.out.clear()
        end = out.find(b"\r\n\r\n")
        return int(out[9:12]), out[end + 4 :]


async def _lifespan(app: Any) -> tuple[asyncio.Queue[Any], asyncio.Task[None]]:
    inbox: asyncio.Queue[Any] = asyncio.Queue()
    outbox: asyncio.Queue[Any] = asyncio.Queue()
    task = asyncio.ensure_future(app({"type": "lifespan"}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    await outbox.get()
    return inbox, task


class _LongPoll:
    """One long-poll ReceiveMessage as uvicorn hands it over: the body, then (once read) ``receive`` blocks until
    the client goes away (never, here); ``answered`` is when the response body was sent (``perf_counter``)."""

    def __init__(self, body: bytes, forever: asyncio.Future[None]) -> None:
        self.body = body
        self.forever = forever
        self.calls = 0
        self.answered = 0.0

    async def receive(self) -> dict[str, Any]:
        self.calls += 1
        if self.calls == 1:
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.forever
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            self.answered = time.perf_counter()


async def _longpoll_wakes(
    app: Any, client: Client, url: str, n: int, send_scope: dict[str, Any], send_doc: bytes
) -> list[float]:
    """Wall microseconds from the start of a SendMessage to the answer of the long poll it wakes, ``n`` times."""
    doc = json.dumps({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 20}).encode()
    scope = _json_scope("ReceiveMessage", doc)
    forever: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    wakes: list[float] = []
    for _ in range(n):
        poll = _LongPoll(doc, forever)
        task = asyncio.ensure_future(app(scope, poll.receive, poll.send))
        for _ in range(5):  # let the long poll park in the waiter line
            await asyncio.sleep(0)
        t0 = time.perf_counter()
        await client.call(send_scope, send_doc)
        await task
        wakes.append(1e6 * (poll.answered - t0))
    return wakes


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _receive_delete(client: Client, url: str, n: int) -> tuple[int, float]:
    """Receive (10 at a time) and delete (in batches) up to ``n`` messages; (messages, CPU us per message)."""
    recv_doc = json.dumps({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 0}).encode()
    recv_scope = _json_scope("ReceiveMessage", recv_doc)
    done = 0
    t0 = time.process_time()
    while done < n:
        _, out = await client.call(recv_scope, recv_doc)
        got = json.loads(out).get("Messages") or []
        if not got:
            break
        entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
        delete = json.dumps({"QueueUrl": url, "Entries": entries}).encode()
        await client.call(_json_scope("DeleteMessageBatch", delete), delete)
        done += len(got)
    return done, 1e6 * (time.process_time() - t0) / max(1, done)


async def _backlog(client: Client, url: str, n: int) -> None:
    """The backlog workload: bodies as bench/sqsbench.py sends them (16 unique characters, a shared random
    alphanumeric fill: 1,024 ASCII characters), 10 per SendMessageBatch."""
    gc.collect()
    before = _rss_bytes()
    for start in range(0, n, 10):
        entries = [{"Id": str(i), "MessageBody": f"{start + i:015d}|{_FILL}"} for i in range(10)]
        doc = json.dumps({"QueueUrl": url, "Entries": entries}).encode()
        await client.call(_json_scope("SendMessageBatch", doc), doc)
    gc.collect()
    print(f"{'backlog':12s} {(_rss_bytes() - before) / n:8.1f} B RSS per 1 KiB message  ({n} messages)", flush=True)
    probe = max(10, n // 20)
    head, head_us = await _receive_delete(client, url, probe)
    middle, _ = await _receive_delete(client, url, n - head - probe)
    tail, tail_us = await _receive_delete(client, url, n)
    print(
        f"{'backlog':12s} receive+delete {head_us:.1f} us CPU per message at the head ({head}), "
        f"{tail_us:.1f} at the tail ({tail}; {middle} between)",
        flush=True,
    )


async def run(workloads: list[str], n: int, data_dir: str | None, profile: str | None, through: str = "app") -> None:
    config = Config(data_dir=data_dir) if data_dir else Config()
    app, _broker, _clock = build(config)
    inbox, life = await _lifespan(app)
    client = Client(app) if through == "app" else ProtocolClient(app, config, through)
    url = (await client.json("CreateQueue", {"QueueName": "inproc"}))["QueueUrl"]
    prof = cProfile.Profile() if profile else None
    for workload in workloads:
        send_doc = json.dumps({"QueueUrl": url, "MessageBody": BODY}).encode()
        send_scope = _json_scope("SendMessage", send_doc)
        query_doc = urlencode({"Action": "SendMessage", "QueueUrl": url, "MessageBody": BODY}).encode()
        query_scope = _query_scope(query_doc)
        batch_doc = json.dumps(
            {"QueueUrl": url, "Entries": [{"Id": str(i), "MessageBody": BODY} for i in range(10)]}
        ).encode()
        batch_scope = _json_scope("SendMessageBatch", batch_doc)
        recv_doc = json.dumps({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 0}).encode()
        recv_scope = _json_scope("ReceiveMessage", recv_doc)
        await client.json("PurgeQueue", {"QueueUrl": url})
        messages = n
        if prof is not None:
            prof.enable()
        t0 = time.process_time()
        if workload == "send":
            for _ in range(n):
                await client.call(send_scope, send_doc)
        elif workload == "send-query":
            for _ in range(n):
                await client.call(query_scope, query_doc)
        elif workload == "send-batch":
            for _ in range(n // 10):
                await client.call(batch_scope, batch_doc)
        elif workload == "roundtrip":
            for _ in range(n // 10):
                await client.call(batch_scope, batch_doc)
                _, out = await client.call(recv_scope, recv_doc)
                got = json.loads(out)["Messages"]
                delete = json.dumps(
                    {
                        "QueueUrl": url,
                        "Entries": [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)],
                    }
                ).encode()
                await client.call(_json_scope("DeleteMessageBatch", delete), delete)
        elif workload == "roundtrip-query":
            qbatch = [("Action", "SendMessageBatch"), ("QueueUrl", url)]
            for i in range(10):
                qbatch += [(f"SendMessageBatchRequestEntry.{i + 1}.Id", str(i))]
                qbatch += [(f"SendMessageBatchRequestEntry.{i + 1}.MessageBody", BODY)]
            qbatch_doc = urlencode(qbatch).encode()
            qrecv_doc = urlencode({"Action": "ReceiveMessage", "QueueUrl": url, "MaxNumberOfMessages": 10}).encode()
            for _ in range(n // 10):
                await client.call(_query_scope(qbatch_doc), qbatch_doc)
                _, out = await client.call(_query_scope(qrecv_doc), qrecv_doc)
                handles = re.findall(rb"<ReceiptHandle>(.*?)</ReceiptHandle>", out)
                qdelete = [("Action", "DeleteMessageBatch"), ("QueueUrl", url)]
                for i, handle in enumerate(handles):
                    qdelete += [(f"DeleteMessageBatchRequestEntry.{i + 1}.Id", str(i))]
                    qdelete += [(f"DeleteMessageBatchRequestEntry.{i + 1}.ReceiptHandle", handle.decode())]
                qdelete_doc = urlencode(qdelete).encode()
                await client.call(_query_scope(qdelete_doc), qdelete_doc)
        elif workload == "backlog":
            await _backlog(client, url, n)
        elif workload == "longpoll":
            wakes = await _longpoll_wakes(app, client, url, n // 10, send_scope, send_doc)
            messages = len(wakes)
            wakes.sort()
            print(
                f"{'longpoll':12s} wake (send start -> receive answered) p50 {wakes[len(wakes) // 2]:.1f} us"
                f" p99 {wakes[int(len(wakes) * 0.99)]:.1f} us",
                flush=True,
            )
        else:
            raise SystemExit(f"unknown workload {workload}")
        spent = time.process_time() - t0
        if prof is not None:
            prof.disable()
        if workload != "backlog":  # it prints its own figures
            print(f"{workload:12s} {1e6 * spent / messages:8.1f} us CPU per message  ({messages} messages)", flush=True)
    if prof is not None and profile:
        prof.dump_stats(profile)
    await inbox.put({"type": "lifespan.shutdown"})
    await life


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="messages per workload")
    ap.add_argument("--workloads", default="send,send-query,send-batch,roundtrip")
    ap.add_argument("--data-dir", help="durable mode in this folder (a fresh temporary one with 'tmp')")
    ap.add_argument("--profile", help="write a cProfile of the measured loops here")
    ap.add_argument("--through", choices=("app", "fastlane", "asgi"), default="app", help="see above")
    a = ap.parse_args()
    data_dir = a.data_dir
    tmp = None
    if data_dir == "tmp":
        tmp = data_dir = tempfile.mkdtemp(prefix="sqsemu-inproc-")
    try:
        import uvloop

        uvloop.run(run(a.workloads.split(","), a.n, data_dir, a.profile, a.through))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
