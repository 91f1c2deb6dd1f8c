#!/usr/bin/env python3
"""sqsbench -- single-file asyncio load driver for SQS-compatible HTTP endpoints.

Speaks the SQS AWS JSON 1.0 protocol (default) or the Query protocol over
keep-alive HTTP/1.1 connections.  The HTTP client is a minimal asyncio.Protocol
(one connection per worker) with httptools' C parser when available (pure-Python
fallback otherwise) and uvloop when available: the cheapest client we measured
(about 14 us of CPU per request, against about 100 us for aiohttp and h11),
so that the client is not the bottleneck.  Client CPU is
measured and reported for every run.

Usage:
  python sqsbench.py --endpoint http://127.0.0.1:5000 --protocol json \
      --workload send --duration 20 --concurrency 16 \
      [--server-pid PID] [--json-out out.json]

Workloads: hello, send, send-batch, roundtrip, longpoll-latency,
           visibility-expiry, backlog, fanout (SNS Publish to a topic with
           --subscriptions SQS queues, drained)   (see --help; bench/compare.py runs
           them all against sqsemu, the bare-uvicorn ceiling, moto and
           LocalStack and prints the README's comparison table)

Traffic is only ever sent to the --endpoint given; every loop is bounded in
time (and count where stated) and the program exits by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import random
import re
import socket
import string
import sys
import time
import urllib.parse
import uuid

try:  # C HTTP parser (ships with uvicorn[standard])
    import httptools  # type: ignore
except Exception:  # pragma: no cover
    httptools = None

VERSION = "1.0"
pc = time.perf_counter

# --------------------------------------------------------------------------- #
# HTTP/1.1 keep-alive client (asyncio.Protocol, one in-flight request per conn)
# --------------------------------------------------------------------------- #


class HTTPClientError(Exception):
    pass


class _Conn(asyncio.Protocol):
    """One TCP connection; requests are strictly sequential on it."""

    def __init__(self, loop):
        self.loop = loop
        self.transport = None
        self.fut = None
        self.closed = False
        self.done_at = 0.0  # perf_counter when the last answer was parsed whole (before its awaiting task resumes)
        self.status = 0
        self.body = []
        self.keep_alive = True
        if httptools is not None:
            self.parser = httptools.HttpResponseParser(self)
        else:
            self.parser = None
            self.buf = bytearray()
            self._pstate = None

    # -- asyncio callbacks --
    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass

    def connection_lost(self, exc):
        self.closed = True
        f = self.fut
        if f is not None and not f.done():
            f.set_exception(HTTPClientError(f"connection lost: {exc!r}"))

    def data_received(self, data):
        if self.parser is not None:
            try:
                self.parser.feed_data(data)
            except Exception as e:  # parser error
                self._fail(HTTPClientError(f"parse error: {e!r}"))
        else:
            self.buf += data
            self._py_parse()

    # -- httptools callbacks --
    def on_header(self, name, value):
        if name.lower() == b"connection" and value.lower() == b"close":
            self.keep_alive = False

    def on_body(self, b):
        self.body.append(b)

    def on_message_complete(self):
        self.status = self.parser.get_status_code()
        if not self.parser.should_keep_alive():
            self.keep_alive = False
        self._done()

    # -- helpers --
    def _done(self):
        self.done_at = pc()
        f = self.fut
        self.fut = None
        body = b"".join(self.body) if len(self.body) != 1 else self.body[0]
        self.body = []
        if f is not None and not f.done():
            f.set_result((self.status, body))

    def _fail(self, exc):
        f = self.fut
        self.fut = None
        if f is not None and not f.done():
            f.set_exception(exc)
        if self.transport is not None:
            self.transport.close()
        self.closed = True

    def _py_parse(self):  # minimal fallback parser: Content-Length or chunked
        while True:
            st = self._pstate
            if st is None:
                i = self.buf.find(b"\r\n\r\n")
                if i < 0:
                    return
                head = bytes(self.buf[:i]).split(b"\r\n")
                del self.buf[: i + 4]
                parts = head[0].split(b" ", 2)
                self.status = int(parts[1])
                hdrs = {}
                for line in head[1:]:
                    k, _, v = line.partition(b":")
                    hdrs[k.strip().lower()] = v.strip()
                if hdrs.get(b"connection", b"").lower() == b"close" or parts[0] == b"HTTP/1.0":
                    self.keep_alive = False
                if b"content-length" in hdrs:
                    self._pstate = ("len", int(hdrs[b"content-length"]))
                elif hdrs.get(b"transfer-encoding", b"").lower() == b"chunked":
                    self._pstate = ("chunk", None)
                else:
                    self._pstate = ("len", 0)
            elif st[0] == "len":
                n = st[1]
                if len(self.buf) < n:
                    return
                self.body.append(bytes(self.buf[:n]))
                del self.buf[:n]
                self._pstate = None
                self._done()
            else:  # chunked
                i = self.buf.find(b"\r\n")
                if i < 0:
                    return
                size = int(bytes(self.buf[:i]).split(b";")[0], 16)
                if size == 0:
                    j = self.buf.find(b"\r\n\r\n", i)
                    if j < 0:
                        return
                    del self.buf[: j + 4]
                    self._pstate = None
                    self._done()
                else:
                    if len(self.buf) < i + 2 + size + 2:
                        return
                    self.body.append(bytes(self.buf[i + 2 : i + 2 + size]))
                    del self.buf[: i + 2 + size + 2]


class HTTPClient:
    """A single keep-alive connection; reopens it when the server closed it or said
    'Connection: close' (counted in HTTPClient.connects)."""

    connects = 0  # class-wide counter of TCP connections opened

    def __init__(self, host, port, timeout=30.0, ssl_context=None):
        self.host, self.port, self.timeout = host, port, timeout
        self.ssl = ssl_context  # an https:// endpoint: the TLS context (asyncio's TLS under the same protocol)
        self.loop = asyncio.get_event_loop()
        self.conn = None
        self.sent_at = 0.0  # perf_counter just before the last request's bytes were written

    async def connect(self):
        c = self.conn
        if c is not None:
            if not c.closed and c.keep_alive:
                return
            if not c.closed:
                c.closed = True
                c.transport.close()
        HTTPClient.connects += 1
        _, self.conn = await self.loop.create_connection(lambda: _Conn(self.loop), self.host, self.port, ssl=self.ssl)

    async def request(self, raw: bytes, timeout=None, sent=None):
        """Send ``raw`` and await its answer ``(status, body)``; ``sent`` (a list), when given, gets the
        ``perf_counter`` time just before the bytes were written appended."""
        c = self.conn
        if c is None or c.closed or not c.keep_alive:
            await self.connect()
            c = self.conn
        fut = self.loop.create_future()
        c.fut = fut
        self.sent_at = pc()
        if sent is not None:
            sent.append(self.sent_at)
        c.transport.write(raw)
        h = self.loop.call_later(timeout or self.timeout, _expire, c, fut)
        try:
            return await fut
        except asyncio.CancelledError:
            c.fut = None
            c.closed = True
            c.transport.close()
            raise
        finally:
            h.cancel()

    def close(self):
        if self.conn is not None and self.conn.transport is not None:
            self.conn.closed = True
            self.conn.transport.close()


def _expire(c, fut):
    if not fut.done():
        c._fail(HTTPClientError("timeout"))


# --------------------------------------------------------------------------- #
# SQS protocols (JSON 1.0 and Query)
# --------------------------------------------------------------------------- #

AUTH = (
    "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" + "0" * 64
)


class SQSError(Exception):
    def __init__(self, status, code, msg=""):
        super().__init__(f"{status} {code} {msg[:200]}")
        self.status, self.code = status, code


class JsonProto:
    name = "json"

    def __init__(self, hostport):
        self.heads = {}
        self.hostport = hostport

    def _head(self, op):
        h = self.heads.get(op)
        if h is None:
            h = (
                f"POST / HTTP/1.1\r\nHost: {self.hostport}\r\nUser-Agent: sqsbench/{VERSION}\r\n"
                "Content-Type: application/x-amz-json-1.0\r\n"
                f"X-Amz-Target: AmazonSQS.{op}\r\nX-Amz-Date: 20260101T000000Z\r\n"
                f"Authorization: {AUTH}\r\nContent-Length: "
            ).encode()
            self.heads[op] = h
        return h

    def _req(self, op, body: bytes) -> bytes:
        return b"".join((self._head(op), str(len(body)).encode(), b"\r\n\r\n", body))

    @staticmethod
    def check(status, body):
        if status != 200:
            try:
                d = json.loads(body)
                code = d.get("__type", "?").rsplit("#", 1)[-1]
                msg = d.get("message", d.get("Message", ""))
            except Exception:
                code, msg = "HTTP%d" % status, body[:200].decode("latin1")
            raise SQSError(status, code, msg)

    # builders return raw request bytes; parsers take (status, body)
    def create_queue(self, name, attrs=None):
        d = {"QueueName": name}
        if attrs:
            d["Attributes"] = {k: str(v) for k, v in attrs.items()}
        return self._req("CreateQueue", json.dumps(d).encode())

    def parse_create_queue(self, st, b):
        self.check(st, b)
        return json.loads(b)["QueueUrl"]

    def delete_queue(self, url):
        return self._req("DeleteQueue", json.dumps({"QueueUrl": url}).encode())

    def get_attrs(self, url):
        return self._req("GetQueueAttributes", json.dumps({"QueueUrl": url, "AttributeNames": ["All"]}).encode())

    def parse_get_attrs(self, st, b):
        self.check(st, b)
        return json.loads(b).get("Attributes", {})

    def send(self, url, body: str):
        # body is [A-Za-z0-9|] only, url is plain: no JSON escaping needed
        return self._req("SendMessage", (f'{{"QueueUrl":"{url}","MessageBody":"{body}"}}').encode())

    def parse_send(self, st, b):
        self.check(st, b)

    def send_batch(self, url, bodies):
        ents = ",".join('{"Id":"%d","MessageBody":"%s"}' % (i, x) for i, x in enumerate(bodies))
        return self._req("SendMessageBatch", (f'{{"QueueUrl":"{url}","Entries":[{ents}]}}').encode())

    def parse_send_batch(self, st, b):
        """-> (list of ok entry ids (int), list of failed (id, code))"""
        self.check(st, b)
        d = json.loads(b)
        ok = [int(e["Id"]) for e in d.get("Successful", ())]
        bad = [(int(e["Id"]), e.get("Code", "?")) for e in d.get("Failed", ())]
        return ok, bad

    def receive(self, url, maxn=10, wait=0, vis=None):
        s = '{"QueueUrl":"%s","MaxNumberOfMessages":%d,"WaitTimeSeconds":%d' % (url, maxn, wait)
        if vis is not None:
            s += ',"VisibilityTimeout":%d' % vis
        return self._req("ReceiveMessage", (s + "}").encode())

    def parse_receive(self, st, b):
        """-> list of (receipt_handle, body)"""
        self.check(st, b)
        d = json.loads(b)
        return [(m["ReceiptHandle"], m["Body"]) for m in d.get("Messages", ())]

    def delete_batch(self, url, handles):
        return self._req(
            "DeleteMessageBatch",
            json.dumps(
                {"QueueUrl": url, "Entries": [{"Id": str(i), "ReceiptHandle": h} for i, h in enumerate(handles)]}
            ).encode(),
        )

    def parse_delete_batch(self, st, b):
        return self.parse_send_batch(st, b)

    def change_vis_batch(self, url, handles, vis):
        return self._req(
            "ChangeMessageVisibilityBatch",
            json.dumps(
                {
                    "QueueUrl": url,
                    "Entries": [
                        {"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": vis} for i, h in enumerate(handles)
                    ],
                }
            ).encode(),
        )


_RE_MSG = re.compile(r"<Message>(.*?)</Message>", re.S)
_RE_RH = re.compile(r"<ReceiptHandle>(.*?)</ReceiptHandle>", re.S)
_RE_BODY = re.compile(r"<Body>(.*?)</Body>", re.S)
_RE_QURL = re.compile(r"<QueueUrl>(.*?)</QueueUrl>", re.S)
_RE_OKID = re.compile(
    r"<(?:SendMessageBatchResultEntry|DeleteMessageBatchResultEntry|"
    r"ChangeMessageVisibilityBatchResultEntry)>.*?<Id>(.*?)</Id>",
    re.S,
)
_RE_BAD = re.compile(r"<BatchResultErrorEntry>(.*?)</BatchResultErrorEntry>", re.S)
_RE_ID = re.compile(r"<Id>(.*?)</Id>")
_RE_CODE = re.compile(r"<Code>(.*?)</Code>")
_RE_ATTR = re.compile(r"<Attribute>\s*<Name>(.*?)</Name>\s*<Value>(.*?)</Value>\s*</Attribute>", re.S)


class QueryProto(JsonProto):
    name = "query"

    def __init__(self, hostport):
        super().__init__(hostport)
        self.head = (
            "POST / HTTP/1.1\r\nHost: {}\r\nUser-Agent: sqsbench/{}\r\n"
            "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"
            "X-Amz-Date: 20260101T000000Z\r\nAuthorization: {}\r\nContent-Length: ".format(
                hostport, VERSION, AUTH.replace(";x-amz-target", "")
            )
        ).encode()

    def _q(self, action, params):
        p = [("Action", action), ("Version", "2012-11-05")] + list(params)
        body = urllib.parse.urlencode(p).encode()
        return b"".join((self.head, str(len(body)).encode(), b"\r\n\r\n", body))

    @staticmethod
    def check(status, body):
        if status != 200:
            t = body.decode("utf-8", "replace")
            m = _RE_CODE.search(t)
            raise SQSError(status, m.group(1) if m else "HTTP%d" % status, t[:200])

    def create_queue(self, name, attrs=None):
        p = [("QueueName", name)]
        for i, (k, v) in enumerate((attrs or {}).items(), 1):
            p += [("Attribute.%d.Name" % i, k), ("Attribute.%d.Value" % i, str(v))]
        return self._q("CreateQueue", p)

    def parse_create_queue(self, st, b):
        self.check(st, b)
        return html.unescape(_RE_QURL.search(b.decode()).group(1))

    def delete_queue(self, url):
        return self._q("DeleteQueue", [("QueueUrl", url)])

    def get_attrs(self, url):
        return self._q("GetQueueAttributes", [("QueueUrl", url), ("AttributeName.1", "All")])

    def parse_get_attrs(self, st, b):
        self.check(st, b)
        return dict(_RE_ATTR.findall(b.decode()))

    def send(self, url, body):
        return self._q("SendMessage", [("QueueUrl", url), ("MessageBody", body)])

    def send_batch(self, url, bodies):
        p = [("QueueUrl", url)]
        for i, x in enumerate(bodies, 1):
            p += [
                ("SendMessageBatchRequestEntry.%d.Id" % i, str(i - 1)),
                ("SendMessageBatchRequestEntry.%d.MessageBody" % i, x),
            ]
        return self._q("SendMessageBatch", p)

    def parse_send_batch(self, st, b):
        self.check(st, b)
        t = b.decode()
        ok = [int(x) for x in _RE_OKID.findall(t)]
        bad = []
        for e in _RE_BAD.findall(t):
            i, c = _RE_ID.search(e), _RE_CODE.search(e)
            bad.append((int(i.group(1)) if i else -1, c.group(1) if c else "?"))
        return ok, bad

    def receive(self, url, maxn=10, wait=0, vis=None):
        p = [("QueueUrl", url), ("MaxNumberOfMessages", str(maxn)), ("WaitTimeSeconds", str(wait))]
        if vis is not None:
            p.append(("VisibilityTimeout", str(vis)))
        return self._q("ReceiveMessage", p)

    def parse_receive(self, st, b):
        self.check(st, b)
        out = []
        for m in _RE_MSG.findall(b.decode()):
            out.append((html.unescape(_RE_RH.search(m).group(1)), html.unescape(_RE_BODY.search(m).group(1))))
        return out

    def delete_batch(self, url, handles):
        p = [("QueueUrl", url)]
        for i, h in enumerate(handles, 1):
            p += [
                ("DeleteMessageBatchRequestEntry.%d.Id" % i, str(i - 1)),
                ("DeleteMessageBatchRequestEntry.%d.ReceiptHandle" % i, h),
            ]
        return self._q("DeleteMessageBatch", p)

    def parse_delete_batch(self, st, b):
        return self.parse_send_batch(st, b)

    def change_vis_batch(self, url, handles, vis):
        p = [("QueueUrl", url)]
        for i, h in enumerate(handles, 1):
            p += [
                ("ChangeMessageVisibilityBatchRequestEntry.%d.Id" % i, str(i - 1)),
                ("ChangeMessageVisibilityBatchRequestEntry.%d.ReceiptHandle" % i, h),
                ("ChangeMessageVisibilityBatchRequestEntry.%d.VisibilityTimeout" % i, str(vis)),
            ]
        return self._q("ChangeMessageVisibilityBatch", p)


SNS_AUTH = (
    "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sns/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date, Signature=" + "0" * 64
)
_RE_TOPIC = re.compile(r"<TopicArn>(.*?)</TopicArn>", re.S)
_RE_SUBARN = re.compile(r"<SubscriptionArn>(.*?)</SubscriptionArn>", re.S)
_RE_MSGID = re.compile(r"<MessageId>(.*?)</MessageId>", re.S)
# the sequence number a fan-out message starts with, in a notification's JSON ("Message" : "000...|" or the
# compact "Message":"000...|") or as the body itself (raw delivery)
_RE_NOTE_SEQ = re.compile(r'"Message" ?: ?"(\d{15})\|')


class SNSProto:
    """SNS (API 2010-03-31) over the Query protocol (form-encoded, XML answers), the only protocol SNS has. The
    Authorization header is a fixed SigV4 header whose credential scope names ``sns`` (as an SDK's would); neither
    sqsemu in its default mode nor fauxqs verifies the signature."""

    def __init__(self, hostport):
        self.head = (
            f"POST / HTTP/1.1\r\nHost: {hostport}\r\nUser-Agent: sqsbench/{VERSION}\r\n"
            "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"
            f"X-Amz-Date: 20260101T000000Z\r\nAuthorization: {SNS_AUTH}\r\nContent-Length: "
        ).encode()

    def _q(self, action, params):
        body = urllib.parse.urlencode([("Action", action), ("Version", "2010-03-31"), *params]).encode()
        return b"".join((self.head, str(len(body)).encode(), b"\r\n\r\n", body))

    @staticmethod
    def check(status, body):
        QueryProto.check(status, body)

    def create_topic(self, name):
        return self._q("CreateTopic", [("Name", name)])

    def parse_create_topic(self, st, b):
        self.check(st, b)
        return html.unescape(_RE_TOPIC.search(b.decode()).group(1))

    def delete_topic(self, arn):
        return self._q("DeleteTopic", [("TopicArn", arn)])

    def subscribe(self, topic_arn, queue_arn, raw=False):
        p = [("TopicArn", topic_arn), ("Protocol", "sqs"), ("Endpoint", queue_arn), ("ReturnSubscriptionArn", "true")]
        if raw:
            p += [("Attributes.entry.1.key", "RawMessageDelivery"), ("Attributes.entry.1.value", "true")]
        return self._q("Subscribe", p)

    def parse_subscribe(self, st, b):
        self.check(st, b)
        return html.unescape(_RE_SUBARN.search(b.decode()).group(1))

    def publish_prefix(self, topic_arn):
        """The form body of a Publish up to its Message's value (the message is [A-Za-z0-9|]: no escaping)."""
        return (
            urllib.parse.urlencode([("Action", "Publish"), ("Version", "2010-03-31"), ("TopicArn", topic_arn)]).encode()
            + b"&Message="
        )

    def publish(self, prefix, message):
        body = prefix + message.encode().replace(b"|", b"%7C")
        return b"".join((self.head, str(len(body)).encode(), b"\r\n\r\n", body))

    def parse_publish(self, st, b):
        self.check(st, b)
        if b"<MessageId>" not in b:
            raise SQSError(st, "NoMessageId", b[:200].decode("latin1"))


# --------------------------------------------------------------------------- #
# measurement helpers
# --------------------------------------------------------------------------- #

CLK = os.sysconf("SC_CLK_TCK")
_FILL_RANDOM = random.Random(7)  # one generator: a fresh Random(7) per character gave one character 4,096 times
_FILL = "".join(_FILL_RANDOM.choice(string.ascii_letters + string.digits) for _ in range(4096))


def make_body(seq: int, size: int) -> str:
    """Unique, JSON/XML/form-safe body of exactly `size` chars; first 16 chars = seq."""
    return "%015d|" % seq + _FILL[: size - 16]


def body_seq(body: str) -> int:
    return int(body[:15])


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[k]


def lat_stats(vals, scale=1000.0):
    """percentiles in ms (scale=1000) of a list of seconds"""
    if not vals:
        return {"n": 0}
    s = sorted(vals)
    r = lambda x: round(x * scale, 3)  # noqa: E731
    return {
        "n": len(s),
        "p50": r(pct(s, 50)),
        "p90": r(pct(s, 90)),
        "p99": r(pct(s, 99)),
        "max": r(s[-1]),
        "min": r(s[0]),
        "mean": r(sum(s) / len(s)),
    }


def _proc_tree(pid):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                ppid = int(st[st.rindex(")") + 2 :].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except Exception:
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, ()))
    return out


class ServerProbe:
    """CPU (utime+stime, incl. reaped children) and RSS of the server process tree."""

    def __init__(self, pid):
        self.pid = pid

    def cpu(self):
        if not self.pid:
            return None
        tot = 0
        for p in _proc_tree(self.pid):
            try:
                with open("/proc/%d/stat" % p) as f:
                    st = f.read()
                fs = st[st.rindex(")") + 2 :].split()
                tot += int(fs[11]) + int(fs[12]) + int(fs[13]) + int(fs[14])
            except Exception:
                pass
        return tot / CLK

    def rss_kb(self):
        """(main process VmRSS kB, whole tree VmRSS kB)"""
        if not self.pid:
            return None, None
        main = tree = 0
        for p in _proc_tree(self.pid):
            try:
                with open("/proc/%d/status" % p) as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            v = int(line.split()[1])
                            tree += v
                            if p == self.pid:
                                main = v
                            break
            except Exception:
                pass
        return main, tree


def _machine_cpu():
    """(busy jiffies, total jiffies) for the whole machine from /proc/stat"""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)
    return busy, busy + v[3] + v[4]


NCPU = os.cpu_count() or 1


class Window:
    """Wall, client CPU, server CPU and whole-machine CPU over a measured phase.
    foreign_cpu_pct = machine busy - client - server (other processes: noise)."""

    def __init__(self, probe: ServerProbe):
        self.probe = probe

    def __enter__(self):
        self.m0 = _machine_cpu()
        self.t0, self.c0, self.s0 = pc(), time.process_time(), self.probe.cpu()
        return self

    def __exit__(self, *a):
        self.t1, self.c1, self.s1 = pc(), time.process_time(), self.probe.cpu()
        self.m1 = _machine_cpu()

    def result(self, msgs=None, reqs=None):
        wall = self.t1 - self.t0
        ccpu = self.c1 - self.c0
        d = {
            "wall_s": round(wall, 3),
            "client_cpu_s": round(ccpu, 3),
            "client_cpu_pct": round(100 * ccpu / wall, 1) if wall else None,
        }
        db, dt = self.m1[0] - self.m0[0], self.m1[1] - self.m0[1]
        mach = 100.0 * NCPU * db / dt if dt else 0.0  # in "% of one core" units
        d["machine_busy_pct"] = round(mach, 1)
        if self.s0 is not None:
            scpu = self.s1 - self.s0
            d["server_cpu_s"] = round(scpu, 3)
            d["server_cpu_pct"] = round(100 * scpu / wall, 1) if wall else None
            d["foreign_cpu_pct"] = round(max(0.0, mach - d["client_cpu_pct"] - d["server_cpu_pct"]), 1)
            if msgs:
                d["server_cpu_ms_per_1k_msgs"] = round(1e6 * scpu / msgs, 1)
        else:
            d["foreign_cpu_pct"] = round(max(0.0, mach - d["client_cpu_pct"]), 1)
        if msgs is not None:
            d["msgs"] = msgs
            d["msgs_per_s"] = round(msgs / wall, 1) if wall else None
            if msgs:
                d["client_cpu_us_per_msg"] = round(1e6 * ccpu / msgs, 1)
        if reqs is not None:
            d["requests"] = reqs
            d["req_per_s"] = round(reqs / wall, 1) if wall else None
            if reqs:
                d["client_cpu_us_per_req"] = round(1e6 * ccpu / reqs, 1)
                if self.s0 is not None:
                    d["server_cpu_us_per_req"] = round(1e6 * (self.s1 - self.s0) / reqs, 1)
        return d


class Errors:
    def __init__(self):
        self.counts = {}
        self.samples = []

    def add(self, op, exc):
        k = "{}:{}".format(op, getattr(exc, "code", type(exc).__name__))
        self.counts[k] = self.counts.get(k, 0) + 1
        if len(self.samples) < 5:
            self.samples.append(f"{op}: {str(exc)[:300]}")

    def total(self):
        return sum(self.counts.values())

    def as_dict(self):
        return {"total": self.total(), "by_kind": self.counts, "samples": self.samples}


# --------------------------------------------------------------------------- #
# Bench context
# --------------------------------------------------------------------------- #


class Bench:
    def __init__(self, args):
        self.a = args
        u = urllib.parse.urlsplit(args.endpoint)
        https = u.scheme == "https"
        self.host, self.port = u.hostname, u.port or (443 if https else 80)
        self.ssl = None
        if https:  # --cafile: the CA that issued the server's certificate (sqsemu --tls: its ca.pem)
            import ssl

            self.ssl = ssl.create_default_context(cafile=args.cafile or None)
        hostport = "%s:%d" % (self.host, self.port)
        self.proto = JsonProto(hostport) if args.protocol == "json" else QueryProto(hostport)
        self.probe = ServerProbe(args.server_pid)
        self.errors = Errors()
        self.ctl = None
        self.queues = []
        self.topics = []  # SNS topic ARNs made by the fanout workload (deleted by cleanup)
        self.seq = 0

    def next_seq(self):
        self.seq += 1
        return self.seq

    async def client(self, timeout=None):
        c = HTTPClient(self.host, self.port, timeout or self.a.timeout, self.ssl)
        await c.connect()
        return c

    async def clients(self, n, timeout=None):
        return [await self.client(timeout) for _ in range(n)]

    async def call(self, cl, raw, parse, op, timeout=None):
        """request + parse; returns parsed value or raises (after recording)"""
        st, b = await cl.request(raw, timeout)
        return parse(st, b)

    async def create_queue(self, tag, attrs=None):
        if self.ctl is None:
            self.ctl = await self.client()
        name = "sqsbench-%s-%d-%s" % (tag, os.getpid(), uuid.uuid4().hex[:8])
        st, b = await self.ctl.request(self.proto.create_queue(name, attrs))
        url = self.proto.parse_create_queue(st, b)
        self.queues.append(url)
        return url

    async def queue_attrs(self, url):
        try:
            st, b = await self.ctl.request(self.proto.get_attrs(url))
            a = self.proto.parse_get_attrs(st, b)
            return {
                k: a[k]
                for k in (
                    "ApproximateNumberOfMessages",
                    "ApproximateNumberOfMessagesNotVisible",
                    "ApproximateNumberOfMessagesDelayed",
                )
                if k in a
            }
        except Exception as e:
            return {"error": str(e)[:200]}

    async def cleanup(self):
        if self.topics:
            sns = SNSProto("%s:%d" % (self.host, self.port))
            for arn in self.topics:
                try:
                    if self.ctl is None or self.ctl.conn.closed:
                        self.ctl = await self.client()
                    st, b = await self.ctl.request(sns.delete_topic(arn), 60)
                    if st != 200:
                        print("warning: DeleteTopic %s -> %d %s" % (arn, st, b[:200]), file=sys.stderr)
                except Exception as e:
                    print(f"warning: DeleteTopic {arn} failed: {e}", file=sys.stderr)
            self.topics = []
        for url in self.queues:
            try:
                if self.ctl is None or self.ctl.conn.closed:
                    self.ctl = await self.client()
                st, b = await self.ctl.request(self.proto.delete_queue(url), 60)
                if st != 200:
                    print("warning: DeleteQueue %s -> %d %s" % (url, st, b[:200]), file=sys.stderr)
            except Exception as e:
                print(f"warning: DeleteQueue {url} failed: {e}", file=sys.stderr)
        self.queues = []

    # ---- reusable loops ----
    async def fill(self, url, n, conc, size):
        """SendMessageBatch n messages (seq numbers) using conc connections."""
        cls = await self.clients(conc)
        seqs = []
        remaining = [n]

        async def w(cl):
            while remaining[0] > 0:
                k = min(10, remaining[0])
                remaining[0] -= k
                ss = [self.next_seq() for _ in range(k)]
                try:
                    st, b = await cl.request(self.proto.send_batch(url, [make_body(s, size) for s in ss]))
                    ok, bad = self.proto.parse_send_batch(st, b)
                    seqs.extend(ss[i] for i in ok)
                    for _i, c in bad:
                        self.errors.add("SendMessageBatch.entry", SQSError(200, c))
                except Exception as e:
                    self.errors.add("SendMessageBatch", e)

        await asyncio.gather(*(w(c) for c in cls))
        for c in cls:
            c.close()
        return seqs

    async def recv_delete(self, url, target, conc, budget, wait=1, vis=None, lat=None, max_empty=3):
        """receive+DeleteMessageBatch until `target` deleted, `budget` s passed, or a worker saw
        `max_empty` consecutive empty receives (queue exhausted).
        Returns (deleted, empty receives, time of last successful delete or None)."""
        cls = await self.clients(conc, timeout=max(self.a.timeout, wait + 15))
        done = [0, 0, None]  # deleted, empty receives, t_last_delete
        end = pc() + budget
        rl, dl = (lat or {}).get("receive"), (lat or {}).get("delete")

        claimed = [0]  # messages asked for by receives whose deletes have not finished yet

        async def w(cl):
            empties = 0
            while done[0] < target and pc() < end and empties < max_empty:
                want = min(10, target - done[0] - claimed[0])
                if want <= 0:
                    await asyncio.sleep(0.005)
                    continue
                claimed[0] += want
                try:
                    empty = await one(cl, want)
                finally:
                    claimed[0] -= want
                empties = empties + 1 if empty else 0

        async def one(cl, want):
            """one receive (+ delete); returns True when the receive came back empty"""
            try:
                t0 = pc()
                st, b = await cl.request(self.proto.receive(url, want, wait, vis))
                t1 = pc()
                msgs = self.proto.parse_receive(st, b)
                if rl is not None:
                    rl.append(t1 - t0)
            except Exception as e:
                self.errors.add("ReceiveMessage", e)
                return False
            if not msgs:
                done[1] += 1
                if wait == 0:
                    await asyncio.sleep(0.01)
                return True
            try:
                t0 = pc()
                st, b = await cl.request(self.proto.delete_batch(url, [m[0] for m in msgs]))
                ok, bad = self.proto.parse_delete_batch(st, b)
                t1 = pc()
                if dl is not None:
                    dl.append(t1 - t0)
                done[0] += len(ok)
                done[2] = t1
                for _i, c in bad:
                    self.errors.add("DeleteMessageBatch.entry", SQSError(200, c))
            except Exception as e:
                self.errors.add("DeleteMessageBatch", e)
            return False

        await asyncio.gather(*(w(c) for c in cls))
        for c in cls:
            c.close()
        return done[0], done[1], done[2]


# --------------------------------------------------------------------------- #
# Workloads
# --------------------------------------------------------------------------- #


async def wl_hello(B: Bench):
    """POST a small JSON body to any endpoint (e.g. hello_asgi) -- client/stack ceiling."""
    a = B.a
    raw = (
        B.proto._req("SendMessage", b'{"QueueUrl":"http://x/000000000000/q","MessageBody":"hello"}')
        if a.protocol == "json"
        else B.proto.send("http://x/000000000000/q", "hello")
    )
    cls = await B.clients(a.concurrency)
    lat, n = [], [0]
    end = pc() + a.duration

    async def w(cl):
        while pc() < end:
            t0 = pc()
            try:
                st, _b = await cl.request(raw)
            except Exception as e:
                B.errors.add("POST", e)
                continue
            if st == 200:
                lat.append(pc() - t0)
                n[0] += 1
            else:
                B.errors.add("POST", SQSError(st, "HTTP%d" % st))

    with Window(B.probe) as W:
        await asyncio.gather(*(w(c) for c in cls))
    r = W.result(reqs=n[0])
    r["latency_ms"] = lat_stats(lat)
    r["summary"] = "{:.0f} req/s  p50 {:.2f} ms  p99 {:.2f} ms  server {} us CPU/req".format(
        r["req_per_s"],
        r["latency_ms"].get("p50") or 0,
        r["latency_ms"].get("p99") or 0,
        r.get("server_cpu_us_per_req", "?"),
    )
    return r


async def wl_send(B: Bench, batch=False):
    a = B.a
    url = await B.create_queue("sendb" if batch else "send")
    cls = await B.clients(a.concurrency)
    lat, cnt = [], [0, 0]  # msgs, requests
    end = pc() + a.duration

    async def w(cl):
        while pc() < end:
            if batch:
                ss = [B.next_seq() for _ in range(10)]
                raw = B.proto.send_batch(url, [make_body(s, a.body_size) for s in ss])
            else:
                raw = B.proto.send(url, make_body(B.next_seq(), a.body_size))
            t0 = pc()
            try:
                st, b = await cl.request(raw)
                if batch:
                    ok, bad = B.proto.parse_send_batch(st, b)
                    for _i, c in bad:
                        B.errors.add("SendMessageBatch.entry", SQSError(200, c))
                    k = len(ok)
                else:
                    B.proto.parse_send(st, b)
                    k = 1
            except Exception as e:
                B.errors.add("SendMessageBatch" if batch else "SendMessage", e)
                continue
            lat.append(pc() - t0)
            cnt[0] += k
            cnt[1] += 1

    rss0 = B.probe.rss_kb()
    with Window(B.probe) as W:
        await asyncio.gather(*(w(c) for c in cls))
    rss1 = B.probe.rss_kb()
    for c in cls:
        c.close()
    r = W.result(msgs=cnt[0], reqs=cnt[1])
    r["latency_ms"] = lat_stats(lat)
    if rss0[0] is not None:
        r["server_rss_kb_before"], r["server_rss_kb_after"] = rss0[0], rss1[0]
    r["queue_attrs_after"] = await B.queue_attrs(url)
    r["summary"] = "{:.0f} msgs/s ({:.0f} req/s)  p50 {:.2f} ms  p99 {:.2f} ms".format(
        r["msgs_per_s"],
        r["req_per_s"],
        r["latency_ms"].get("p50") or 0,
        r["latency_ms"].get("p99") or 0,
    )
    return r


async def wl_roundtrip(B: Bench):
    a = B.a
    url = await B.create_queue("rt", {"VisibilityTimeout": a.rt_visibility})
    nprod = a.producers or max(1, a.concurrency // 4)
    ncons = a.consumers or max(1, a.concurrency - nprod)
    pcl = await B.clients(nprod)
    ccl = await B.clients(ncons, timeout=max(a.timeout, a.wait + 15))
    sent_at = {}  # seq -> send request start time (acknowledged sends only)
    uncertain = set()  # sends whose outcome is unknown (error/timeout)
    recv_cnt = {}  # seq -> times received
    del_cnt = {}  # seq -> successful deletes
    e2e = []
    st_ = {"sent": 0, "deleted": 0, "recv_reqs": 0, "empty_recv": 0, "t_last_del": None}
    t_start = pc()
    prod_end = t_start + a.duration
    hard_end = prod_end + a.drain_timeout
    producing = [True]
    dup_info, first_rx, first_rh = [], {}, {}

    async def producer(cl):
        while pc() < prod_end:
            if st_["sent"] - st_["deleted"] >= a.max_inflight:
                await asyncio.sleep(0.002)
                continue
            ss = [B.next_seq() for _ in range(10)]
            raw = B.proto.send_batch(url, [make_body(s, a.body_size) for s in ss])
            t0 = pc()
            for s in ss:  # registered before the request: a consumer may see it before our ack
                sent_at[s] = t0
            try:
                stt, b = await cl.request(raw)
                ok, bad = B.proto.parse_send_batch(stt, b)
            except Exception as e:
                B.errors.add("SendMessageBatch", e)
                for s in ss:
                    sent_at.pop(s, None)
                uncertain.update(ss)
                continue
            st_["sent"] += len(ok)
            for i, c in bad:
                sent_at.pop(ss[i], None)
                B.errors.add("SendMessageBatch.entry", SQSError(200, c))

    async def consumer(cl):
        while True:
            now = pc()
            if now > hard_end:
                return
            if not producing[0] and st_["deleted"] >= st_["sent"]:
                return
            try:
                stt, b = await cl.request(B.proto.receive(url, 10, a.wait))
                t1 = pc()
                msgs = B.proto.parse_receive(stt, b)
            except Exception as e:
                B.errors.add("ReceiveMessage", e)
                continue
            st_["recv_reqs"] += 1
            if not msgs:
                st_["empty_recv"] += 1
                continue
            seqs = []
            for rh, body in msgs:
                s = body_seq(body)
                seqs.append(s)
                c = recv_cnt.get(s, 0)
                recv_cnt[s] = c + 1
                if c:
                    dup_info.append(
                        {
                            "seq": s,
                            "t_since_start_s": round(t1 - t_start, 3),
                            "first_receipt_t_s": round(first_rx[s] - t_start, 3),
                            "same_receipt_handle": rh == first_rh.get(s),
                        }
                    )
                else:
                    first_rx[s] = t1
                    first_rh[s] = rh
                if c == 0:
                    t0 = sent_at.get(s)
                    if t0 is not None:
                        e2e.append(t1 - t0)
                    elif s not in uncertain:
                        # received before the send ack was processed by us: fine; or truly unexpected
                        pass
            try:
                stt, b = await cl.request(B.proto.delete_batch(url, [m[0] for m in msgs]))
                ok, bad = B.proto.parse_delete_batch(stt, b)
            except Exception as e:
                B.errors.add("DeleteMessageBatch", e)
                continue
            for i in ok:
                s = seqs[i]
                c = del_cnt.get(s, 0)
                del_cnt[s] = c + 1
                if c == 0:
                    st_["deleted"] += 1
            st_["t_last_del"] = pc()
            for _i, c in bad:
                B.errors.add("DeleteMessageBatch.entry", SQSError(200, c))

    async def prod_all():
        await asyncio.gather(*(producer(c) for c in pcl))
        producing[0] = False

    with Window(B.probe) as W:
        await asyncio.gather(prod_all(), *(consumer(c) for c in ccl))
    for c in pcl + ccl:
        c.close()
    sent_set = set(sent_at)
    recv_set = set(recv_cnt)
    unexpected = [s for s in recv_set if s not in sent_set and s not in uncertain]
    dup_recv = sum(c - 1 for c in recv_cnt.values() if c > 1)
    lost = len(sent_set - recv_set)
    not_deleted = len(sent_set - set(del_cnt))
    multi_del = sum(1 for c in del_cnt.values() if c > 1)
    deleted_unique = len(set(del_cnt) & (sent_set | uncertain))
    t_end = st_["t_last_del"] or W.t1
    wall_e2e = t_end - t_start
    r = W.result(msgs=deleted_unique)
    r["e2e_msgs_per_s"] = round(deleted_unique / wall_e2e, 1) if wall_e2e > 0 else None
    r["send_phase_s"] = a.duration
    r["producers"], r["consumers"], r["max_inflight"] = nprod, ncons, a.max_inflight
    r["verify"] = {
        "sent_acked": len(sent_set),
        "send_uncertain": len(uncertain),
        "received_unique": len(recv_set),
        "duplicate_receives": dup_recv,
        "lost": lost,
        "not_deleted": not_deleted,
        "deleted_more_than_once": multi_del,
        "unexpected_bodies": len(unexpected),
        "ok": lost == 0 and dup_recv == 0 and not_deleted == 0 and multi_del == 0 and not unexpected,
    }
    r["receive_requests"], r["empty_receives"] = st_["recv_reqs"], st_["empty_recv"]
    r["duplicate_samples"] = dup_info[:10]
    r["e2e_latency_ms"] = lat_stats(e2e)
    r["queue_attrs_after"] = await B.queue_attrs(url)
    v = r["verify"]
    r["summary"] = "%.0f msgs/s end-to-end  e2e p50 %.1f ms p99 %.1f ms  sent %d lost %d dup %d %s" % (
        r["e2e_msgs_per_s"] or 0,
        r["e2e_latency_ms"].get("p50") or 0,
        r["e2e_latency_ms"].get("p99") or 0,
        v["sent_acked"],
        v["lost"],
        v["duplicate_receives"],
        "OK" if v["ok"] else "VERIFY-FAILED",
    )
    return r


async def wl_longpoll(B: Bench):
    """Long-poll wake: ``--consumers`` long polls (``--lp-wait``) parked on one queue, one SendMessage every
    ``--interval`` s on its own connection; each message's latency to the consumer that got it, three ways:

    - ``latency_from_send_start_ms``: from before the send's request is built to the consumer's task resuming with
      the answer (what compare.py's row shows);
    - ``latency_on_the_wire_ms``: from just before the send's bytes are written to the moment the receive's answer
      is parsed whole on its connection (``_Conn.done_at``, before the consumer's task is scheduled): the server's
      part and the kernel's, without the client's own request building and task scheduling (on this client, on an
      idle 2-core machine, those were 0.05-0.08 ms of every sample);
    - ``latency_from_send_ack_ms``: from the send's answer (the wake itself, after the send was served).
    """
    a = B.a
    url = await B.create_queue("lp")
    k = a.consumers or 10
    ccl = await B.clients(k, timeout=a.lp_wait + 15)
    pcl = await B.client()
    sent = {}  # seq -> (t_send_start, t_send_ack)
    wire = {}  # seq -> [perf_counter just before the SendMessage's bytes were written]
    got = {}  # seq -> receive count
    lat_start, lat_ack, lat_wire = [], [], []
    empties = []  # durations of empty long-poll responses
    stop = asyncio.Event()
    n_sent = [0]
    unexpected, before_ack = [0], [0]

    async def consumer(cl):
        while not stop.is_set():
            t0 = pc()
            try:
                st, b = await cl.request(B.proto.receive(url, 10, a.lp_wait, 30))
                t1 = pc()
                msgs = B.proto.parse_receive(st, b)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                B.errors.add("ReceiveMessage", e)
                await asyncio.sleep(0.05)
                continue
            if not msgs:
                empties.append(t1 - t0)
                continue
            for _rh, body in msgs:
                s = body_seq(body)
                got[s] = got.get(s, 0) + 1
                if got[s] > 1:
                    continue
                ts = sent.get(s)
                if ts is None:
                    unexpected[0] += 1
                    continue
                lat_start.append(t1 - ts[0])
                written = wire.get(s)
                if written:
                    lat_wire.append(cl.conn.done_at - written[0])
                if ts[1] is None:
                    before_ack[0] += 1
                else:
                    lat_ack.append(t1 - ts[1])
            try:
                st, b = await cl.request(B.proto.delete_batch(url, [m[0] for m in msgs]))
                B.proto.parse_delete_batch(st, b)
            except Exception as e:
                B.errors.add("DeleteMessageBatch", e)

    async def producer():
        t_next = pc()
        end = t_next + a.duration
        while True:
            t_next += a.interval
            if t_next > end:
                break
            d = t_next - pc()
            if d > 0:
                await asyncio.sleep(d)
            s = B.next_seq()
            t0 = pc()
            sent[s] = (t0, None)
            wire[s] = []
            try:
                st, b = await pcl.request(B.proto.send(url, make_body(s, a.body_size)), sent=wire[s])
                B.proto.parse_send(st, b)
                sent[s] = (t0, pc())
                n_sent[0] += 1
            except Exception as e:
                B.errors.add("SendMessage", e)
                sent.pop(s, None)

    # let consumers park in their long polls before producing
    with Window(B.probe) as W:
        tasks = [asyncio.ensure_future(consumer(c)) for c in ccl]
        await asyncio.sleep(0.5)
        await producer()
        t_wait_end = pc() + a.lp_wait + 5
        while pc() < t_wait_end and any(s not in got for s in sent):
            await asyncio.sleep(0.05)
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    pcl.close()
    for c in ccl:
        c.close()
    lost = [s for s in sent if s not in got]
    dups = sum(v - 1 for v in got.values() if v > 1)
    r = W.result(msgs=n_sent[0])
    r["consumers"], r["interval_ms"], r["wait_time_s"] = k, a.interval * 1000, a.lp_wait
    r["latency_from_send_start_ms"] = lat_stats(lat_start)
    r["latency_from_send_ack_ms"] = lat_stats(lat_ack)
    r["latency_on_the_wire_ms"] = lat_stats(lat_wire)
    r["received_before_send_ack"], r["unexpected"] = before_ack[0], unexpected[0]
    r["empty_longpoll_responses"] = {"n": len(empties), **({"duration_s": lat_stats(empties, 1)} if empties else {})}
    r["lost"], r["duplicates"] = len(lost), dups
    l, w = r["latency_from_send_start_ms"], r["latency_on_the_wire_ms"]
    r["summary"] = (
        "send->recv p50 %.2f ms p99 %.2f ms max %.2f ms; on the wire p50 %.2f ms p99 %.2f ms"
        "  (%d msgs, lost %d, dup %d, empty polls %d)"
    ) % (
        l.get("p50") or 0,
        l.get("p99") or 0,
        l.get("max") or 0,
        w.get("p50") or 0,
        w.get("p99") or 0,
        n_sent[0],
        len(lost),
        dups,
        len(empties),
    )
    return r


async def wl_visibility(B: Bench):
    a = B.a
    V = a.visibility_timeout
    url = await B.create_queue("vis")
    n = a.messages or 20000
    with Window(B.probe) as Wf:
        seqs = await B.fill(url, n, a.concurrency, a.body_size)
    fill = Wf.result(msgs=len(seqs))
    want = set(seqs)
    first = {}  # seq -> response time of first receive
    first_q = {}  # seq -> request start time of first receive
    second_ub = {}  # seq -> lateness upper bound (s)
    second = {}  # seq -> lateness (s)
    extra = [0]  # sightings beyond the 2nd
    parked = [0]
    phase1_end = [None]
    state = {"reqs": 0, "empty": 0}
    ccl = await B.clients(a.consumers or a.concurrency, timeout=max(a.timeout, a.poll_wait + 15))
    t_begin = pc()
    hard_end = [t_begin + a.max_time]

    async def consumer(cl):
        while len(second) < len(want):
            now = pc()
            if now > hard_end[0]:
                return
            vis = V if phase1_end[0] is None else a.park_visibility
            try:
                t0 = pc()
                st, b = await cl.request(B.proto.receive(url, 10, a.poll_wait, vis))
                t1 = pc()
                msgs = B.proto.parse_receive(st, b)
            except Exception as e:
                B.errors.add("ReceiveMessage", e)
                continue
            state["reqs"] += 1
            if not msgs:
                state["empty"] += 1
                if a.poll_wait == 0:
                    await asyncio.sleep(a.poll_sleep)
                continue
            park = []
            for rh, body in msgs:
                s = body_seq(body)
                if s not in want:
                    continue
                f = first.get(s)
                if f is None:
                    first[s] = t1
                    first_q[s] = t0
                    if len(first) == len(want):
                        phase1_end[0] = t1
                        hard_end[0] = min(hard_end[0], t1 + V + a.grace)
                elif s not in second:
                    second[s] = t1 - (f + V)  # vs first receive's response time
                    second_ub[s] = t1 - (first_q[s] + V)  # vs first receive's request start (upper bound)
                    if vis == V:
                        park.append(rh)
                else:
                    extra[0] += 1
                    if vis == V:
                        park.append(rh)
            if park and a.after_observe != "none":
                # take observed messages out of circulation so they do not cycle every V seconds
                try:
                    if a.after_observe == "delete":
                        raw = B.proto.delete_batch(url, park)
                    else:
                        raw = B.proto.change_vis_batch(url, park, a.park_visibility)
                    st, b = await cl.request(raw)
                    _ok, bad = B.proto.parse_delete_batch(st, b)
                    parked[0] += len(_ok)
                    for _i, c in bad:
                        B.errors.add("Park.entry", SQSError(200, c))
                except Exception as e:
                    B.errors.add(
                        "ChangeMessageVisibilityBatch" if a.after_observe == "park" else "DeleteMessageBatch", e
                    )

    with Window(B.probe) as W:
        await asyncio.gather(*(consumer(c) for c in ccl))
    for c in ccl:
        c.close()
    r = W.result(msgs=len(first) + len(second) + extra[0])  # deliveries observed
    r["fill"] = fill
    r["messages"], r["visibility_timeout_s"], r["poll_wait_s"] = len(want), V, a.poll_wait
    r["consumers"] = len(ccl)
    p1 = (phase1_end[0] - t_begin) if phase1_end[0] else None
    r["phase1_receive_all_s"] = round(p1, 3) if p1 else None
    r["received_once"], r["redelivered_observed"] = len(first), len(second)
    r["never_redelivered"] = len(want) - len(second)
    r["extra_sightings"], r["parked"], r["after_observe"] = extra[0], parked[0], a.after_observe
    r["receive_requests"], r["empty_receives"] = state["reqs"], state["empty"]
    # premature = provably re-delivered before its deadline (even vs. the first receive's request start):
    # a correctness problem (e.g. two concurrent receives returning the same message), not timer lateness
    premature = [s for s in second if second_ub[s] < -0.05]
    ok = [s for s in second if second_ub[s] >= -0.05]
    r["lateness_ms"] = lat_stats([second[s] for s in ok])
    r["lateness_upper_bound_ms"] = lat_stats([second_ub[s] for s in ok])
    r["early_count_over_50ms"] = len(premature)
    r["premature_samples_ms_before_deadline"] = sorted(round(-1000 * second_ub[s], 1) for s in premature)[-10:]
    if phase1_end[0]:
        # messages whose deadline fell after phase 1 ended: re-delivery not competing with first receives
        quiet = [second[s] for s in ok if first[s] + V > phase1_end[0]]
        r["lateness_ms_deadline_after_phase1"] = lat_stats(quiet)
    l = r["lateness_ms"]
    r["summary"] = (
        "lateness p50 %.0f ms p99 %.0f ms max %.0f ms  (N=%d, receive-all %.1fs, unobserved %d, premature %d)"
        % (
            l.get("p50") or 0,
            l.get("p99") or 0,
            l.get("max") or 0,
            len(want),
            p1 or -1,
            r["never_redelivered"],
            r["early_count_over_50ms"],
        )
    )
    return r


async def wl_backlog(B: Bench):
    a = B.a
    m = a.messages or 200000
    P = a.probe
    url = await B.create_queue("bl", {"VisibilityTimeout": 120})
    r = {}
    rss0 = B.probe.rss_kb()
    seqs, curve = [], []
    chunk = max(10, m // 10)
    fill_end = pc() + a.fill_budget
    with Window(B.probe) as W:
        while len(seqs) < m and pc() < fill_end:
            depth = len(seqs)
            with Window(B.probe) as Wc:
                seqs += await B.fill(url, min(chunk, m - depth), a.concurrency, a.body_size)
            c = Wc.result(msgs=len(seqs) - depth)
            curve.append(
                {
                    "depth_from": depth,
                    "depth_to": len(seqs),
                    "msgs_per_s": c["msgs_per_s"],
                    "server_cpu_ms_per_1k_msgs": c.get("server_cpu_ms_per_1k_msgs"),
                }
            )
    rss1 = B.probe.rss_kb()
    r["fill"] = W.result(msgs=len(seqs))
    r["fill_curve"] = curve
    r["fill_completed"] = len(seqs) >= m
    r["messages_requested"], r["messages"] = m, len(seqs)
    if rss0[0] is not None:
        r["server_rss_kb"] = {
            "before": rss0[0],
            "after_fill": rss1[0],
            "tree_before": rss0[1],
            "tree_after_fill": rss1[1],
        }
        r["bytes_per_msg"] = round((rss1[0] - rss0[0]) * 1024 / max(1, len(seqs)), 1)
    r["queue_attrs_after_fill"] = await B.queue_attrs(url)

    async def probe(label, target, budget, q=url):
        lat = {"receive": [], "delete": []}
        with Window(B.probe) as W:
            d, empty, t_last = await B.recv_delete(q, target, a.concurrency, budget, wait=1, lat=lat)
        x = W.result(msgs=d)
        if t_last and d:  # rate over the active part (excludes the final empty polls that detect exhaustion)
            x["msgs_per_s_window"] = x["msgs_per_s"]
            x["msgs_per_s"] = round(d / max(1e-6, t_last - W.t0), 1)
        x["target"], x["completed"], x["empty_receives"] = target, d >= target, empty
        x["receive_latency_ms"] = lat_stats(lat["receive"])
        x["delete_latency_ms"] = lat_stats(lat["delete"])
        r[label] = x
        return d

    d_head = await probe("head", P, a.probe_budget)
    remaining = len(seqs) - d_head
    mid = max(0, remaining - P)
    d_mid = 0
    if mid > 0:
        d_mid = await probe("drain_middle", mid, a.drain_budget)
    drained_all_mid = r.get("drain_middle", {}).get("completed", True)
    if drained_all_mid:
        # whatever is left (P, give or take the overshoot of the previous phases' last receives)
        await probe("tail", max(1, len(seqs) - d_head - d_mid), a.probe_budget)
        r["tail_is_real"] = True
    else:
        # tail not reachable in budget: reference = same probe on a fresh queue holding only P messages
        r["tail_is_real"] = False
        q2 = await B.create_queue("blref", {"VisibilityTimeout": 120})
        await B.fill(q2, P, a.concurrency, a.body_size)
        await probe("tail", P, a.probe_budget, q=q2)
    rss2 = B.probe.rss_kb()
    await B.cleanup()
    await asyncio.sleep(1.0)
    rss3 = B.probe.rss_kb()
    if rss0[0] is not None:
        r["server_rss_kb"].update({"after_drain": rss2[0], "after_delete_queue": rss3[0]})
    h, t = r["head"], r["tail"]
    ratio = (h["msgs_per_s"] / t["msgs_per_s"]) if t.get("msgs_per_s") else None
    r["head_vs_tail_rate_ratio"] = round(ratio, 3) if ratio else None
    r["summary"] = (
        "fill {:.0f} msgs/s, {} B/msg RSS; recv+del head {:.0f} msgs/s vs tail{} {:.0f} msgs/s; "
        "srv cpu head {:.0f} vs tail {:.0f} ms/1k".format(
            r["fill"]["msgs_per_s"],
            r.get("bytes_per_msg", "?"),
            h["msgs_per_s"] or 0,
            "" if r["tail_is_real"] else "(ref)",
            t["msgs_per_s"] or 0,
            h.get("server_cpu_ms_per_1k_msgs") or 0,
            t.get("server_cpu_ms_per_1k_msgs") or 0,
        )
    )
    return r


async def wl_fanout(B: Bench):
    """SNS fan-out: Publish (Query, one message a request) to a topic with --subscriptions SQS subscriptions, each
    its own queue, while consumers drain every queue (ReceiveMessage 10, DeleteMessageBatch). Every queue must get
    every published message exactly once (counted per queue: lost, duplicated, unexpected). The rate is deliveries
    (messages deleted from the queues) per second from the first Publish to the last delete; server CPU is per
    delivery. Notifications (the SNS JSON envelope) unless --raw (RawMessageDelivery). One message goes through
    every queue before the measured window (a warm-up, not counted)."""
    a = B.a
    n = a.subscriptions
    sns = SNSProto("%s:%d" % (B.host, B.port))
    urls = [await B.create_queue("fan%d" % i, {"VisibilityTimeout": a.rt_visibility}) for i in range(n)]
    arns = []
    for url in urls:
        st, b = await B.ctl.request(B.proto.get_attrs(url))
        arns.append(B.proto.parse_get_attrs(st, b)["QueueArn"])
    st, b = await B.ctl.request(sns.create_topic("sqsbench-fanout-%d-%s" % (os.getpid(), uuid.uuid4().hex[:8])))
    topic = sns.parse_create_topic(st, b)
    B.topics.append(topic)
    for arn in arns:
        st, b = await B.ctl.request(sns.subscribe(topic, arn, a.raw))
        sns.parse_subscribe(st, b)
    prefix = sns.publish_prefix(topic)
    # one message through every queue before the window: what a server does once (sqsemu makes its signing key at
    # the first signed notification) is not measured
    st, b = await B.ctl.request(sns.publish(prefix, make_body(0, a.body_size)))
    sns.parse_publish(st, b)
    for url in urls:
        for _ in range(10):
            st, b = await B.ctl.request(B.proto.receive(url, 10, 1))
            msgs = B.proto.parse_receive(st, b)
            if msgs:
                st, b = await B.ctl.request(B.proto.delete_batch(url, [m[0] for m in msgs]))
                B.proto.parse_delete_batch(st, b)
                break
    nprod = a.producers or max(1, a.concurrency // 4)
    per_queue = a.consumers or max(2, (a.concurrency - nprod) // n)
    pcl = await B.clients(nprod)
    ccl = [await B.clients(per_queue, timeout=max(a.timeout, a.wait + 15)) for _ in range(n)]
    sent_at = {}  # seq -> Publish start time (acknowledged publishes only)
    uncertain = set()  # publishes whose outcome is unknown (error/timeout)
    recv = [{} for _ in range(n)]  # per queue: seq -> times received
    dels = [{} for _ in range(n)]  # per queue: seq -> successful deletes
    deleted = [0] * n
    unparsed = [0]
    e2e = []
    st_ = {"published": 0, "deleted": 0, "recv_reqs": 0, "empty_recv": 0, "t_last_del": None}
    t_start = pc()
    prod_end = t_start + a.duration
    hard_end = prod_end + a.drain_timeout
    producing = [True]
    seq_of_raw = body_seq

    def seq_of_note(body):
        m = _RE_NOTE_SEQ.search(body)
        return int(m.group(1)) if m else None

    seq_of = seq_of_raw if a.raw else seq_of_note

    async def producer(cl):
        while pc() < prod_end:
            if st_["published"] * n - st_["deleted"] >= a.max_inflight * n:
                await asyncio.sleep(0.002)
                continue
            s = B.next_seq()
            raw = sns.publish(prefix, make_body(s, a.body_size))
            t0 = pc()
            sent_at[s] = t0  # before the request: a consumer may see it before our ack
            try:
                stt, b = await cl.request(raw)
                sns.parse_publish(stt, b)
            except Exception as e:
                B.errors.add("Publish", e)
                sent_at.pop(s, None)
                uncertain.add(s)
                continue
            st_["published"] += 1

    async def consumer(q, cl):
        url, got, gone = urls[q], recv[q], dels[q]
        empties = 0
        while True:
            if pc() > hard_end:
                return
            if not producing[0]:
                if deleted[q] >= st_["published"] or empties >= a.drain_empty:
                    return
            try:
                stt, b = await cl.request(B.proto.receive(url, 10, a.wait))
                t1 = pc()
                msgs = B.proto.parse_receive(stt, b)
            except Exception as e:
                B.errors.add("ReceiveMessage", e)
                continue
            st_["recv_reqs"] += 1
            if not msgs:
                st_["empty_recv"] += 1
                empties += 1
                continue
            empties = 0
            seqs = []
            for _rh, body in msgs:
                s = seq_of(body)
                seqs.append(s)
                if s is None:
                    unparsed[0] += 1
                    continue
                c = got.get(s, 0)
                got[s] = c + 1
                if c == 0 and q == 0:
                    t0 = sent_at.get(s)
                    if t0 is not None:
                        e2e.append(t1 - t0)
            try:
                stt, b = await cl.request(B.proto.delete_batch(url, [m[0] for m in msgs]))
                ok, bad = B.proto.parse_delete_batch(stt, b)
            except Exception as e:
                B.errors.add("DeleteMessageBatch", e)
                continue
            for i in ok:
                s = seqs[i]
                c = gone.get(s, 0)
                gone[s] = c + 1
                if c == 0 and s is not None:
                    deleted[q] += 1
                    st_["deleted"] += 1
            st_["t_last_del"] = pc()
            for _i, c in bad:
                B.errors.add("DeleteMessageBatch.entry", SQSError(200, c))

    async def prod_all():
        await asyncio.gather(*(producer(c) for c in pcl))
        producing[0] = False

    with Window(B.probe) as W:
        await asyncio.gather(prod_all(), *(consumer(q, c) for q in range(n) for c in ccl[q]))
    for c in pcl + [c for cs in ccl for c in cs]:
        c.close()
    sent_set = set(sent_at)
    known = sent_set | uncertain
    per_queue_unique = [len(set(got) & known) for got in recv]
    lost = sum(len(sent_set - set(got)) for got in recv)
    dup = sum(c - 1 for got in recv for c in got.values() if c > 1)
    unexpected = sum(1 for got in recv for s in got if s not in known) + unparsed[0]
    not_deleted = sum(len(sent_set - set(gone)) for gone in dels)
    multi_del = sum(1 for gone in dels for c in gone.values() if c > 1)
    deliveries = sum(len(set(gone) & known) for gone in dels)
    t_end = st_["t_last_del"] or W.t1
    wall = t_end - t_start
    r = W.result(msgs=deliveries)
    r["deliveries"] = deliveries
    r["deliveries_per_s"] = round(deliveries / wall, 1) if wall > 0 else None
    r["published"] = len(sent_set)
    r["publishes_per_s"] = round(len(sent_set) / wall, 1) if wall > 0 else None
    r["subscriptions"], r["raw"] = n, a.raw
    if r.get("server_cpu_s") is not None and sent_set:
        r["server_cpu_us_per_publish"] = round(1e6 * r["server_cpu_s"] / len(sent_set), 1)
    r["publish_phase_s"] = a.duration
    r["producers"], r["consumers_per_queue"], r["max_inflight_per_queue"] = nprod, per_queue, a.max_inflight
    r["verify"] = {
        "published_acked": len(sent_set),
        "publish_uncertain": len(uncertain),
        "received_unique_per_queue": per_queue_unique,
        "expected_deliveries": len(sent_set) * n,
        "lost": lost,
        "duplicate_receives": dup,
        "not_deleted": not_deleted,
        "deleted_more_than_once": multi_del,
        "unexpected_bodies": unexpected,
        "ok": lost == 0 and dup == 0 and not_deleted == 0 and multi_del == 0 and not unexpected,
    }
    r["receive_requests"], r["empty_receives"] = st_["recv_reqs"], st_["empty_recv"]
    r["e2e_latency_ms"] = lat_stats(e2e)  # from the Publish's start to the first queue's receive
    r["queue_attrs_after"] = await B.queue_attrs(urls[0])
    v = r["verify"]
    r["summary"] = "%d subs: %.0f deliveries/s (%.0f publishes/s)  e2e p50 %.1f ms  published %d lost %d dup %d %s" % (
        n,
        r["deliveries_per_s"] or 0,
        r["publishes_per_s"] or 0,
        r["e2e_latency_ms"].get("p50") or 0,
        v["published_acked"],
        v["lost"],
        v["duplicate_receives"],
        "OK" if v["ok"] else "VERIFY-FAILED",
    )
    return r


WORKLOADS = {
    "hello": wl_hello,
    "send": wl_send,
    "send-batch": lambda B: wl_send(B, batch=True),
    "roundtrip": wl_roundtrip,
    "longpoll-latency": wl_longpoll,
    "visibility-expiry": wl_visibility,
    "backlog": wl_backlog,
    "fanout": wl_fanout,
}


async def amain(a):
    B = Bench(a)
    t0 = time.time()
    try:
        res = await WORKLOADS[a.workload](B)
    finally:
        try:
            await B.cleanup()
        except Exception:
            pass
    out = {
        "tool": "sqsbench",
        "version": VERSION,
        "workload": a.workload,
        "endpoint": a.endpoint,
        "protocol": a.protocol,
        "concurrency": a.concurrency,
        "duration_s": a.duration,
        "label": a.label,
        "server_pid": a.server_pid,
        "started_unix": round(t0, 3),
        "client": {
            "http": "asyncio.Protocol+" + ("httptools" if httptools else "pure-python-parser"),
            "loop": type(asyncio.get_event_loop()).__module__.split(".")[0],
            "connections_opened": HTTPClient.connects,
        },
        "errors": B.errors.as_dict(),
        "result": res,
    }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", default="http://127.0.0.1:5000", help="http:// or https:// (then --cafile)")
    ap.add_argument("--cafile", default="", help="https: the CA bundle the server's certificate is verified with")
    ap.add_argument("--protocol", choices=["json", "query"], default="json")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    ap.add_argument("--duration", type=float, default=20.0, help="measured/producing phase seconds")
    ap.add_argument("--concurrency", type=int, default=16, help="connections (workers)")
    ap.add_argument("--json-out")
    ap.add_argument("--label", default="", help="free-form tag (e.g. server name) stored in output")
    ap.add_argument("--server-pid", type=int, default=0, help="read /proc/PID for server CPU and RSS")
    ap.add_argument("--body-size", type=int, default=1024)
    ap.add_argument("--timeout", type=float, default=30.0, help="per-request timeout (s)")
    ap.add_argument("--no-uvloop", action="store_true")
    g = ap.add_argument_group("roundtrip")
    g.add_argument("--producers", type=int, default=0, help="default max(1, C//4)")
    g.add_argument("--consumers", type=int, default=0, help="roundtrip: C-producers; longpoll: 10; vis: C")
    g.add_argument("--wait", type=int, default=1, help="roundtrip receive WaitTimeSeconds")
    g.add_argument(
        "--max-inflight",
        type=int,
        default=500,
        help="producers pause when sent-deleted exceeds this (fanout: per queue)",
    )
    g.add_argument("--drain-timeout", type=float, default=30.0)
    g.add_argument("--rt-visibility", type=int, default=30)
    g = ap.add_argument_group("fanout (also --producers, --consumers per queue, --wait, --max-inflight per queue)")
    g.add_argument("--subscriptions", type=int, default=1, help="SQS subscriptions (one queue each)")
    g.add_argument("--raw", action="store_true", help="RawMessageDelivery (the body as published)")
    g.add_argument(
        "--drain-empty",
        type=int,
        default=5,
        help="a consumer stops after publishing ended and this many empty receives in a row",
    )
    g = ap.add_argument_group("longpoll-latency")
    g.add_argument("--interval", type=float, default=0.05, help="producer send interval (s)")
    g.add_argument("--lp-wait", type=int, default=20, help="consumer WaitTimeSeconds")
    g = ap.add_argument_group("visibility-expiry / backlog")
    g.add_argument("--messages", type=int, default=0, help="N (vis: 20000, backlog: 200000)")
    g.add_argument("--visibility-timeout", type=int, default=2)
    g.add_argument(
        "--park-visibility",
        type=int,
        default=600,
        help="VisibilityTimeout used once every message was received once (parks re-sightings)",
    )
    g.add_argument(
        "--after-observe",
        choices=["park", "delete", "none"],
        default="park",
        help="vis: what to do with a message once its re-delivery was observed during the "
        "receive-all phase: ChangeMessageVisibilityBatch to --park-visibility (default), "
        "DeleteMessageBatch, or nothing (it keeps cycling every V s and competes)",
    )
    g.add_argument("--poll-wait", type=int, default=1, help="vis: receive WaitTimeSeconds (0 = short poll)")
    g.add_argument("--poll-sleep", type=float, default=0.005, help="vis: sleep after an empty short poll")
    g.add_argument("--grace", type=float, default=30.0, help="vis: give up this long after the last deadline")
    g.add_argument("--max-time", type=float, default=300.0, help="vis: absolute cap on the receive phase")
    g.add_argument("--probe", type=int, default=10000, help="backlog: messages per head/tail probe")
    g.add_argument("--probe-budget", type=float, default=60.0, help="backlog: seconds cap per probe")
    g.add_argument("--drain-budget", type=float, default=300.0, help="backlog: seconds cap for draining the middle")
    g.add_argument("--fill-budget", type=float, default=600.0, help="backlog: seconds cap for the fill phase")
    a = ap.parse_args(argv)
    if not a.no_uvloop:
        try:
            import uvloop  # type: ignore

            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        except Exception:
            pass
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    out = loop.run_until_complete(amain(a))
    loop.close()
    r = out["result"]
    line = "[%s%s %s C=%d] %s | srv cpu %s ms/1k msgs | client cpu %s%% | other procs %s%% | errors %d" % (
        a.workload,
        (" " + a.label) if a.label else "",
        a.protocol,
        a.concurrency,
        r.get("summary", ""),
        r.get("server_cpu_ms_per_1k_msgs", r.get("fill", {}).get("server_cpu_ms_per_1k_msgs", "-")),
        r.get("client_cpu_pct", r.get("fill", {}).get("client_cpu_pct", "-")),
        r.get("foreign_cpu_pct", r.get("fill", {}).get("foreign_cpu_pct", "-")),
        out["errors"]["total"],
    )
    out["summary_line"] = line
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
