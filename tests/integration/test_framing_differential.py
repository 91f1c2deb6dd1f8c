"""Request framing compared with a reference parser: every byte stream below, sent on one connection, must be cut
into requests by sqsemu exactly as h11 (the HTTP/1.1 library of the Python ecosystem, strict about framing) cuts it.

Why: a server whose connection is framed by two parsers in series (or by one parser whose idea of where a request
ends differs from a proxy's) can be made to run a request hidden inside another one's body or behind a
``Connection: close``: request smuggling. This test only looks at what a client can see over a real socket (the
answers, whether the connection closes, and what the requests did to a queue made for the stream), so it holds for
any implementation of the server's HTTP/1.1 protocol.

**The oracle.** Each stream is framed by h11 as a server would (``h11.Connection(h11.SERVER)``, fed the bytes in
1 KiB reads, an empty 200 sent after each request so that it goes on to the next one). That gives the requests h11
sees, in order, and how the stream ends: ``open`` (idle between requests), ``partial`` (a request not yet whole),
``closed`` (a request that ends the connection: HTTP/1.0, ``Connection: close``) or ``error`` (a framing error).
A few rules of RFC 9112 that h11 does not apply add alternatives ("views"); sqsemu must match one of them:

- a request with both ``Content-Length`` and ``Transfer-Encoding`` may be refused, or answered (framed by
  ``Transfer-Encoding``), after which the connection MUST close (RFC 9112 section 6.1); the same for an HTTP/1.0
  request with ``Transfer-Encoding`` (section 6.1: its framing is faulty, the connection closes after it);
- an HTTP/1.0 request with ``Connection: keep-alive`` may keep the connection open (section 9.3); h11 never does;
- a case marked ``may_reject`` has something RFC 9110 / 9112 let a server refuse (an obs-fold, a repeated identical
  ``Content-Length``, bare LF line ends, whitespace after a chunk size, a nameless chunk extension, a framing field
  in the trailers, a method or version it does not serve): the server may refuse it (one 4xx, close);
- a case marked ``lenient`` is one where h11 is stricter than RFC 9112 (it refuses a stream the RFC tells a server
  to accept, such as an empty line before the request line): the case names an ``equivalent`` stream, the same
  requests written as h11 accepts them, whose views are accepted too.

**What sqsemu must do**, for a view with requests R:

- ``open`` / ``partial`` / ``closed``: answer exactly R, in order (every SendMessage, CreateQueue or admin GET of R
  with a 2xx), nothing more; ``closed``: then close; ``partial``: then nothing, or one 4xx and close (a read
  deadline). The queue's messages are exactly the SendMessage bodies of R (each MessageBody is a marker unique to
  the stream), and the queues made are exactly those of R's CreateQueue calls. Requests are read as SQS calls from
  their method, target, headers and body, never their trailers (RFC 9110 6.5.1: trailers are not headers); an SQS
  call under another method than POST may run or not (the endpoint's choice, not a framing one).
- ``error``: answer a prefix of R, then at most one 4xx (or 501 / 505), and close; its effects lie between those of
  the answered prefix and those of R.

So a request h11 does not see (a SendMessage hidden in a body, behind ``Connection: close``, after a refused chunk)
must never run, and a request h11 sees must never be lost.

The corpus covers Content-Length with Transfer-Encoding both ways, repeated and malformed Content-Length,
obfuscated Transfer-Encoding, chunk sizes and extensions, line ends, obs-folds, whitespace before a colon,
trailers, HTTP/1.0, ``Connection: close``, pipelined SQS calls (AWS JSON 1.0 and Query) mixed with admin GETs,
bodies in GET requests, bodies around 64 KiB and ``Expect: 100-continue``. A Hypothesis property then draws
pipelines of 1-4 requests from a small grammar, with at most one framing token mutated, under the same oracle.

The answers are read by a parser of this file (``100 Continue`` skipped; Content-Length, chunked or close-delimited
bodies); bytes after a refusal the server closes on are left to ``test_a_refusal_is_framed_by_its_content_length``.
Reading goes on until the server closes the connection, or 3 s (the server's request-read deadline is 2 s); where no
view needs the connection closed, it stops once the answers expected have come and nothing more came for 0.2 s (or,
where an answer beyond them is a refusal, once the server closes).
"""

from __future__ import annotations

import json
import re
import selectors
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import count
from typing import Any
from urllib.parse import parse_qs, urlencode

import h11
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from sqsemu.config import Config
from sqsemu.server import ServerThread
from tests.integration.harness.raw import raw_request

AUTH = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=x"
HOST = "127.0.0.1"
JSON_TYPE = "application/x-amz-json-1.0"
FORM_TYPE = "application/x-www-form-urlencoded"
MAX_HEAD = 64 * 1024
"""The server's cap on a request head (its documented default): h11 is given the same cap."""
FEED = 1024
"""h11 is fed the stream in reads of this size, so that its head cap (checked on the bytes it holds while a head
is unfinished) applies to the head, within a read's size, wherever the head sits in the stream."""
READ_DEADLINE_S = 3.0
"""The longest a stream's answers are read: the server's read deadline (``request_timeout=2``) plus a second."""
QUIET_S = 0.2
"""Where no view needs the connection closed: reading stops once this long passes with nothing more."""
ADMIN_GETS = ("/health", "/_sqsemu/queues", "/_sqsemu/clock", "/_sqsemu/faults")
"""Admin GET routes a stream may call (they change nothing)."""
FAST_LANE_LIMIT = 64 * 1024
"""Bodies of this size and around it are in the corpus: the old protocol handed larger ones to a second parser."""


def is_refusal(status: int) -> bool:
    """A status a server may refuse a malformed or unfinished request with (400, 408, 411, 413, 431, ..., 501, 505)."""
    return 400 <= status < 500 or status in (501, 505)


# --------------------------------------------------------------------------------------------- building requests


def _hex(size: int) -> str:
    return f"{size:x}"


@dataclass
class Req:
    """One request as bytes are written for it; every field of its framing can be changed (the corpus's forms).

    ``framing``: ``"cl"`` (a ``Content-Length`` line), ``"chunked"`` (``Transfer-Encoding: chunked``, the body in
    chunks of ``sizes``) or ``"none"``; ``framing_lines`` replaces the framing header lines; ``eol`` ends the head's
    lines; ``size_format`` writes a chunk size, ``ext`` follows it, ``after_data`` follows a chunk's data,
    ``last_chunk`` is the last chunk's line and ``trailers`` the trailer lines."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    framing: str = "cl"
    version: str = "1.1"
    eol: str = "\r\n"
    line: str | None = None
    framing_lines: list[str] | None = None
    sizes: list[int] | None = None
    ext: str = ""
    size_format: Callable[[int], str] = _hex
    size_eol: bytes = b"\r\n"
    after_data: bytes = b"\r\n"
    last_chunk: str = "0"
    trailers: list[str] = field(default_factory=list)
    prefix: bytes = b""

    def header(self, name: str, value: str) -> Req:
        """A copy with one more header line (after the others, before the framing lines)."""
        return replace(self, headers=[*self.headers, (name, value)])

    def framing_header_lines(self) -> list[str]:
        if self.framing_lines is not None:
            return self.framing_lines
        if self.framing == "cl":
            return [f"Content-Length: {len(self.body)}"]
        if self.framing == "chunked":
            return ["Transfer-Encoding: chunked"]
        return []

    def chunks(self) -> list[bytes]:
        body = self.body
        sizes = list(self.sizes or [len(body)])
        out: list[bytes] = []
        at = 0
        for size in sizes:
            if at >= len(body):
                break
            out.append(body[at : at + size])
            at += size
        if at < len(body):
            out.append(body[at:])
        return out

    def payload(self) -> bytes:
        if self.framing != "chunked":
            return self.body
        ext = self.ext.encode("latin-1")
        parts = [
            self.size_format(len(c)).encode("latin-1") + ext + self.size_eol + c + self.after_data
            for c in self.chunks()
        ]
        parts.append(self.last_chunk.encode("latin-1") + b"\r\n")
        parts += [line.encode("latin-1") + b"\r\n" for line in self.trailers]
        parts.append(b"\r\n")
        return b"".join(parts)

    def head(self) -> bytes:
        line = self.line if self.line is not None else f"{self.method} {self.target} HTTP/{self.version}"
        lines = [line, *(f"{name}: {value}" for name, value in self.headers), *self.framing_header_lines()]
        return (self.eol.join(lines) + self.eol + self.eol).encode("latin-1")

    def render(self) -> bytes:
        return self.prefix + self.head() + self.payload()


Part = Req | bytes


def stream(*parts: Part) -> bytes:
    """The bytes of ``parts`` one after the other (requests rendered, bytes as given)."""
    return b"".join(part.render() if isinstance(part, Req) else part for part in parts)


class Ctx:
    """One stream's queue (made for it, empty) and the requests written for it. Every SendMessage's body is a marker
    ``<queue name>-<tag>`` and every CreateQueue's queue name is the same, so what ran is read from the queues."""

    def __init__(self, url: str, qname: str, account: str) -> None:
        self.url = url
        self.qname = qname
        self.account = account

    def mark(self, tag: str) -> str:
        return f"{self.qname}-{tag}"

    @staticmethod
    def _json(payload: dict[str, Any], size: int | None) -> bytes:
        body = json.dumps(payload, separators=(",", ":")).encode()
        if size is not None:
            assert size >= len(body), (size, len(body))
            body += b" " * (size - len(body))  # JSON allows trailing whitespace: the body has exactly ``size`` bytes
        return body

    def _post(self, headers: list[tuple[str, str]], body: bytes, kw: dict[str, Any]) -> Req:
        body = kw.pop("body", body)  # a body of the caller's instead (the headers stay)
        return Req("POST", "/", [("Host", HOST), *headers, ("Authorization", AUTH)], body, **kw)

    def send(self, tag: str, size: int | None = None, **kw: Any) -> Req:
        """SendMessage over AWS JSON 1.0 (the body padded to ``size`` bytes when given)."""
        body = self._json({"QueueUrl": self.url, "MessageBody": self.mark(tag)}, size)
        return self._post([("X-Amz-Target", "AmazonSQS.SendMessage"), ("Content-Type", JSON_TYPE)], body, kw)

    def create(self, tag: str, **kw: Any) -> Req:
        """CreateQueue over AWS JSON 1.0 (the queue named ``mark(tag)``)."""
        body = self._json({"QueueName": self.mark(tag)}, None)
        return self._post([("X-Amz-Target", "AmazonSQS.CreateQueue"), ("Content-Type", JSON_TYPE)], body, kw)

    def qsend(self, tag: str, **kw: Any) -> Req:
        """SendMessage over AWS Query."""
        params = {"Action": "SendMessage", "QueueUrl": self.url, "MessageBody": self.mark(tag), "Version": "2012-11-05"}
        return self._post([("Content-Type", FORM_TYPE)], urlencode(params).encode(), kw)

    def qcreate(self, tag: str, **kw: Any) -> Req:
        """CreateQueue over AWS Query."""
        params = {"Action": "CreateQueue", "QueueName": self.mark(tag), "Version": "2012-11-05"}
        return self._post([("Content-Type", FORM_TYPE)], urlencode(params).encode(), kw)

    def get(self, path: str, body: bytes = b"", **kw: Any) -> Req:
        """A GET (no framing header unless ``framing`` is given with a body)."""
        kw.setdefault("framing", "cl" if body else "none")
        return Req("GET", path, [("Host", HOST)], body, **kw)


# --------------------------------------------------------------------------------------------- the reference


@dataclass(frozen=True)
class Seen:
    """A request as h11 framed it."""

    method: bytes
    target: bytes
    version: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    trailers: tuple[tuple[bytes, bytes], ...]

    def values(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers if key == name]


@dataclass(frozen=True)
class View:
    """One acceptable framing of a stream: the requests, in order, and how the stream ends (``open``, ``partial``,
    ``closed`` or ``error``); ``note`` says which rule made it."""

    requests: tuple[Seen, ...]
    end: str
    note: str = "h11"


def _tokens(seen: Seen, name: bytes) -> set[bytes]:
    return {token.strip().lower() for value in seen.values(name) for token in value.split(b",") if token.strip()}


def h11_views(data: bytes) -> list[View]:
    """The views of ``data`` (see the module docstring): h11's framing, with RFC 9112's alternatives."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    seen: list[Seen] = []
    views: list[View] = []
    at = 0
    request: h11.Request | None = None
    body: list[bytes] = []
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            return [*views, View(tuple(seen), "error", f"h11: {exc}")]
        if event is h11.NEED_DATA:
            if at < len(data):
                conn.receive_data(data[at : at + FEED])
                at += FEED
                continue
            pending = request is not None or bool(conn.trailing_data[0])
            return [*views, View(tuple(seen), "partial" if pending else "open")]
        if isinstance(event, h11.Request):
            request, body = event, []
        elif isinstance(event, h11.Data):
            body.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            one = Seen(
                bytes(request.method),
                bytes(request.target),
                bytes(request.http_version),
                tuple((bytes(k), bytes(v)) for k, v in request.headers),
                b"".join(body),
                tuple((bytes(k), bytes(v)) for k, v in event.headers),
            )
            seen.append(one)
            request = None
            names = {name for name, _ in one.headers}
            if b"transfer-encoding" in names and (b"content-length" in names or one.version == b"1.0"):
                why = "Content-Length with" if b"content-length" in names else "HTTP/1.0 with"
                return [
                    *views,
                    View(tuple(seen[:-1]), "error", f"RFC 9112 6.1: {why} Transfer-Encoding may be refused"),
                    View(tuple(seen), "closed", f"RFC 9112 6.1: {why} Transfer-Encoding, then the connection closes"),
                ]
            conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
            conn.send(h11.EndOfMessage())
            if h11.MUST_CLOSE in (conn.our_state, conn.their_state):
                connection = _tokens(one, b"connection")
                if one.version == b"1.0" and b"keep-alive" in connection and b"close" not in connection:
                    rest = conn.trailing_data[0] + data[at:]
                    for later in h11_views(rest):
                        note = f"RFC 9112 9.3: HTTP/1.0 keep-alive honoured; then {later.note}"
                        views.append(View((*seen, *later.requests), later.end, note))
                return [*views, View(tuple(seen), "closed")]
            conn.start_next_cycle()
        elif isinstance(event, h11.ConnectionClosed):  # pragma: no cover - the stream is never closed
            return [*views, View(tuple(seen), "closed")]


@dataclass(frozen=True)
class Effect:
    """What a request h11 saw must do: the message bodies it sends to the stream's queue, the queues it creates, and
    whether it must be answered with a 2xx (a well-formed SQS call or admin GET). ``optional``: it may do them or
    not (an SQS call under another method than POST: whether the endpoint serves it is not a framing matter)."""

    sends: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    ok: bool = False
    optional: bool = False


def effect_of(seen: Seen, ctx: Ctx) -> Effect:
    """The effect of one request h11 saw: read from its method, target, headers (never its trailers) and body."""
    if seen.method == b"GET" and seen.target.decode("latin-1") in ADMIN_GETS and not seen.body:
        return Effect(ok=True)
    if seen.target != b"/":
        return Effect()
    call = _sqs_effect(seen, ctx)
    if seen.method != b"POST":
        return Effect(call.sends, call.creates, ok=False, optional=True)
    return call


def _sqs_effect(seen: Seen, ctx: Ctx) -> Effect:
    """The effect of ``seen`` as an SQS call (its method aside)."""
    targets = seen.values(b"x-amz-target")
    types = seen.values(b"content-type")
    if len(targets) > 1 or len(types) != 1:
        return Effect()
    params: dict[str, Any]
    if targets and types[0] == JSON_TYPE.encode():
        prefix, _, action = targets[0].decode("latin-1").partition(".")
        try:
            params = json.loads(seen.body)
        except ValueError:
            return Effect()
        if prefix != "AmazonSQS" or not isinstance(params, dict):
            return Effect()
    elif not targets and types[0] == FORM_TYPE.encode():
        try:
            form = parse_qs(seen.body.decode("utf-8"), keep_blank_values=True, strict_parsing=True)
        except (ValueError, UnicodeDecodeError):
            return Effect()
        if any(len(values) != 1 for values in form.values()):
            return Effect()
        params = {key: values[0] for key, values in form.items()}
        action = params.pop("Action", "")
    else:
        return Effect()
    if action == "SendMessage" and params.get("QueueUrl") == ctx.url and isinstance(params.get("MessageBody"), str):
        return Effect(sends=(params["MessageBody"],), ok=True)
    if action == "CreateQueue" and isinstance(params.get("QueueName"), str):
        return Effect(creates=(params["QueueName"],), ok=True)
    return Effect()


# --------------------------------------------------------------------------------------------- the server's side


@dataclass
class Observed:
    """What the server did with a stream: its final answers' statuses (``100 Continue`` left out), whether it
    closed the connection, bytes that are not an answer, and the queue's messages and the stream's queues after."""

    finals: list[int]
    interim: int
    closed: bool
    garbage: str | None
    sends: list[str] = field(default_factory=list)
    queues: set[str] = field(default_factory=set)


def parse_responses(data: bytes, closed: bool) -> tuple[list[int], int, bool, str | None]:
    """The answers in ``data``: ``(final statuses, interim answers, whether the last one is whole, garbage)``."""
    finals: list[int] = []
    interim = 0
    at = 0
    while at < len(data):
        if closed and finals and is_refusal(finals[-1]) and not data.startswith(b"HTTP/", at):
            break  # bytes after the refusal the server closed on: test_a_refusal_is_framed_by_its_length's concern
        end = data.find(b"\r\n\r\n", at)
        if end < 0:
            return finals, interim, False, (f"a truncated answer head: {data[at : at + 80]!r}" if closed else None)
        lines = data[at:end].split(b"\r\n")
        found = re.fullmatch(rb"HTTP/1\.[01] ([0-9]{3})(?: .*)?", lines[0])
        if found is None:
            return finals, interim, False, f"not an answer: {data[at : at + 80]!r}"
        status = int(found.group(1))
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                return finals, interim, False, f"a malformed answer header: {line!r}"
            headers[name.strip().lower()] = value.strip()
        at = end + 4
        if 100 <= status < 200:
            interim += 1
            continue
        if status in (204, 304):
            pass
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            while True:
                line_end = data.find(b"\r\n", at)
                if line_end < 0:
                    return finals, interim, False, ("a truncated chunked answer" if closed else None)
                size = int(data[at:line_end].split(b";")[0], 16)
                at = line_end + 2
                if size == 0:
                    trailer_end = data.find(b"\r\n", at)
                    while trailer_end > at:  # trailer lines, then the empty line
                        at = trailer_end + 2
                        trailer_end = data.find(b"\r\n", at)
                    if trailer_end < 0:
                        return finals, interim, False, ("a truncated chunked answer" if closed else None)
                    at = trailer_end + 2
                    break
                if len(data) < at + size + 2:
                    return finals, interim, False, ("a truncated chunked answer" if closed else None)
                at += size + 2
        elif b"content-length" in headers:
            size = int(headers[b"content-length"])
            if len(data) < at + size:
                return finals, interim, False, (f"a truncated answer ({status})" if closed else None)
            at += size
        elif closed:  # a body that ends with the connection
            at = len(data)
        else:
            return finals, interim, False, None
        finals.append(status)
    return finals, interim, True, None


def exchange(port: int, data: bytes, need_close: bool, enough: int) -> Observed:
    """Send ``data`` on a new connection while reading what comes back; see the module docstring for when reading
    stops (``enough``: the answers after which a quiet connection ends the reading, unless ``need_close``)."""
    sock = socket.create_connection((HOST, port), timeout=READ_DEADLINE_S)
    sock.setblocking(False)
    selector = selectors.DefaultSelector()
    view = memoryview(data)
    received = bytearray()
    sent = 0
    closed = False
    started = last = time.monotonic()
    try:
        selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        while True:
            now = time.monotonic()
            if now - started >= READ_DEADLINE_S:
                break
            finals, _, whole, _ = parse_responses(bytes(received), False)
            sending = sent < len(data)
            refused = len(finals) > enough and is_refusal(finals[-1])  # its close is part of what is checked
            quiet = not need_close and not sending and not refused
            if quiet and whole and len(finals) >= enough and now - last >= QUIET_S:
                break
            wait = READ_DEADLINE_S - (now - started)
            if quiet:
                wait = min(wait, max(0.01, QUIET_S - (now - last)))
            for _key, mask in selector.select(wait):
                if mask & selectors.EVENT_WRITE and sent < len(data):
                    try:
                        sent += sock.send(view[sent:])
                    except BlockingIOError:
                        pass
                    except OSError:  # the server closed: what was not sent is not sent
                        sent = len(data)
                    if sent >= len(data):
                        selector.modify(sock, selectors.EVENT_READ)
                        last = time.monotonic()
                if mask & selectors.EVENT_READ:
                    try:
                        chunk = sock.recv(65536)
                    except BlockingIOError:
                        continue
                    except OSError:  # a reset: the server closed with bytes of ours unread
                        chunk = b""
                    if not chunk:
                        closed = True
                        break
                    received += chunk
                    last = time.monotonic()
            if closed:
                break
    finally:
        selector.close()
        sock.close()
    finals, interim, _, garbage = parse_responses(bytes(received), closed)
    return Observed(finals, interim, closed, garbage)


# --------------------------------------------------------------------------------------------- judging


def _between(got: Counter[str], low: Counter[str], high: Counter[str]) -> bool:
    return not (low - got) and not (got - high)


def judge(view: View, seen: Observed, ctx: Ctx) -> list[str]:
    """What sqsemu did differently from ``view`` (nothing: it matches)."""
    problems: list[str] = []
    effects = [effect_of(request, ctx) for request in view.requests]
    finals = list(seen.finals)
    if seen.garbage is not None:
        problems.append(seen.garbage)
    if view.end == "error":
        if finals and is_refusal(finals[-1]) and seen.closed:
            answered = finals[:-1]
            if len(answered) > len(effects):
                problems.append(f"{len(answered)} answers before the refusal, h11 sees {len(effects)} requests")
        else:
            answered = finals
            if len(finals) > len(effects):
                problems.append(f"{len(finals)} answers, h11 sees {len(effects)} requests then an error")
        if not seen.closed:
            problems.append("the connection stayed open after a framing error")
    else:
        answered = finals[: len(effects)]
        extra = finals[len(effects) :]
        if len(answered) < len(effects):
            problems.append(f"{len(finals)} answers, h11 sees {len(effects)} requests")
        if view.end == "partial":
            if len(extra) > 1 or (extra and not (is_refusal(extra[0]) and seen.closed)):
                problems.append(f"answers {extra} beyond the {len(effects)} requests h11 sees (one unfinished)")
        elif extra:
            problems.append(f"answers {extra} beyond the {len(effects)} requests h11 sees")
        if view.end == "closed" and not seen.closed:
            problems.append("the connection stayed open after a request that closes it")
    for index, (status, effect) in enumerate(zip(answered, effects, strict=False)):
        if effect.ok and not 200 <= status < 300:
            problems.append(f"request {index + 1} answered {status}")
    high_sends = Counter(s for e in effects for s in e.sends)
    high_creates = Counter(q for e in effects for q in e.creates) + Counter({ctx.qname: 1})
    done = [e for e in (effects[: len(answered)] if view.end == "error" else effects) if not e.optional]
    low_sends = Counter(s for e in done for s in e.sends)
    low_creates = Counter(q for e in done for q in e.creates) + Counter({ctx.qname: 1})
    got_sends = Counter(seen.sends)
    got_creates = Counter(seen.queues)
    if not _between(got_sends, low_sends, high_sends):
        hidden = sorted(got_sends - high_sends)
        lost = sorted(low_sends - got_sends)
        problems.append(f"messages sent that h11 does not see: {hidden}; lost: {lost}")
    if not _between(got_creates, low_creates, high_creates):
        hidden = sorted(got_creates - high_creates)
        lost = sorted(low_creates - got_creates)
        problems.append(f"queues created that h11 does not see: {hidden}; lost: {lost}")
    return problems


def describe(view: View, ctx: Ctx) -> str:
    requests = ", ".join(
        f"{r.method.decode()} {r.target.decode('latin-1')[:40]} ({len(r.body)} B"
        f"{', sends ' + ' '.join(effect_of(r, ctx).sends) if effect_of(r, ctx).sends else ''})"
        for r in view.requests
    )
    return f"[{view.note}] {view.end} after {len(view.requests)}: {requests}"


# --------------------------------------------------------------------------------------------- the server


_queues = count(1)


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerThread]:
    with ServerThread(Config(host=HOST, clock="manual", request_timeout=2)) as server:
        assert raw_request(server.endpoint_url, "GET", "/_sqsemu/queues").status == 200  # the admin app made
        yield server


def new_ctx(srv: ServerThread) -> Ctx:
    qname = f"fd{next(_queues):05d}"
    body = json.dumps({"QueueName": qname}).encode()
    headers = {"X-Amz-Target": "AmazonSQS.CreateQueue", "Content-Type": JSON_TYPE, "Authorization": AUTH}
    answer = raw_request(srv.endpoint_url, "POST", "/", body, headers, timeout=10)
    assert answer.status == 200, answer.text
    url: str = answer.json()["QueueUrl"]
    account = url.rstrip("/").split("/")[-2]
    return Ctx(url, qname, account)


def run_stream(srv: ServerThread, ctx: Ctx, data: bytes, views: list[View]) -> tuple[Observed, list[list[str]]]:
    """Send ``data``, read the answers and the queues; the problems against each view."""
    need_close = all(view.end in ("closed", "error") for view in views)
    enough = min((len(v.requests) for v in views if v.end in ("open", "partial")), default=0)
    seen = exchange(srv.port, data, need_close, enough)
    peek = raw_request(srv.endpoint_url, "GET", f"/_sqsemu/queues/{ctx.account}/{ctx.qname}/messages", timeout=10)
    assert peek.status == 200, peek.text
    seen.sends = [message["body"] for message in peek.json()["messages"]]
    listing = raw_request(srv.endpoint_url, "GET", "/_sqsemu/queues", timeout=10).json()["queues"]
    seen.queues = {q["name"] for q in listing if q["name"] == ctx.qname or q["name"].startswith(ctx.qname + "-")}
    return seen, [judge(view, seen, ctx) for view in views]


def check(srv: ServerThread, ctx: Ctx, data: bytes, views: list[View]) -> None:
    seen, problems = run_stream(srv, ctx, data, views)
    if any(not p for p in problems):
        return
    lines = [
        f"sqsemu: answers {seen.finals} (+{seen.interim} interim), closed={seen.closed}, "
        f"messages {sorted(seen.sends)}, queues {sorted(seen.queues)}",
        f"stream ({len(data)} B): {data[:600]!r}{'...' if len(data) > 600 else ''}",
    ]
    for view, found in zip(views, problems, strict=True):
        lines.append(f"  view {describe(view, ctx)}: " + "; ".join(found))
    pytest.fail("\n".join(lines), pytrace=False)


def views_for(data: bytes, may_reject: str | None, equivalent: bytes | None) -> list[View]:
    views = h11_views(data)
    if equivalent is not None:
        views += [replace(v, note=f"equivalent stream: {v.note}") for v in h11_views(equivalent)]
    if may_reject is not None:
        views += [View(v.requests, "error", f"may refuse: {may_reject}") for v in list(views)]
    return views


# --------------------------------------------------------------------------------------------- the corpus


Build = Callable[[Ctx], bytes]


@dataclass(frozen=True)
class Case:
    """A named stream. ``may_reject``: why the RFCs let a server refuse it; ``lenient``: why h11 refusing it is
    stricter than RFC 9112 (``equivalent``: the same requests as h11 accepts them). Keep both rare and cited."""

    name: str
    build: Build
    may_reject: str | None = None
    lenient: str | None = None
    equivalent: Build | None = None


def _get_only(c: Ctx, path: str) -> bytes:
    return stream(c.get(path))


def _big(c: Ctx, tag: str, size: int, **kw: Any) -> Req:
    return c.send(tag, size=size, **kw)


def _cl(req: Req, *lines: str) -> Req:
    return replace(req, framing_lines=list(lines))


def _len(req: Req) -> int:
    return len(req.body)


def _chunked_len(req: Req) -> int:
    return len(replace(req, framing="chunked").payload())


def _framed(c: Ctx, *lines: str) -> bytes:
    """SendMessage ``a`` with ``lines`` (formatted with ``n``: its body's length; ``n2``: that and half of the next
    request; ``wrap``: ``n`` plus 2**64) for framing header lines, then SendMessage ``b``."""
    first, second = c.send("a"), c.send("b")
    n = len(first.body)
    values = {"n": n, "n2": n + len(second.render()) // 2, "wrap": n + 2**64}
    return stream(_cl(first, *(line.format(**values) for line in lines)), second)


def _te_cl(c: Ctx, te_value: str, *, cl: bool = True, version: str = "1.1") -> bytes:
    """A SendMessage whose chunked body is framed by ``Transfer-Encoding: <te_value>`` (with a ``Content-Length``
    of the unchunked body when ``cl``), then a second SendMessage: a proxy framing by the other header would see
    the second inside the first, or the first's chunks as a request."""
    first = c.send("a", framing="chunked", version=version)
    lines = [f"Transfer-Encoding: {te_value}"]
    if cl:
        lines.insert(0, f"Content-Length: {_len(first)}")
    return stream(_cl(first, *lines), c.send("b"))


SMUGGLE = b"0\r\n\r\n"
"""The start of a body that is, decoded, the end of a chunked body: a parser reading the decoded bytes as chunked
framing sees the rest as the next request."""
OBS_FOLD = "RFC 9112 5.2: a server may refuse an obs-fold with 400 instead of unfolding it"
BARE_LF = "RFC 9112 2.2: a recipient MAY recognize a bare LF as a line end; one that does not refuses the request"
DUP_CL = "RFC 9110 8.6: a Content-Length repeating one value may be refused as invalid"
CHUNK_WS = "RFC 9112 7.1.1: whitespace after a chunk size is allowed only before a chunk extension (BWS ';')"
CHUNK_EXT = "RFC 9112 7.1.1: a chunk extension is ';' and a name (a token): a bare ';' may be refused"
FRAMING_TRAILER = "RFC 9110 6.5.1: framing fields are not allowed in trailers; a request sending one may be refused"
METHOD = "RFC 9110 9.1: a server may refuse a method it does not know (501)"
VERSION = "RFC 9110 2.5 / RFC 9112 2.3: a server may answer 505 to a version it does not serve"


def _corpus() -> list[Case]:
    cases: list[Case] = []

    def add(name: str, build: Build, **kw: Any) -> None:
        cases.append(Case(name, build, **kw))

    # ---- baselines: every form here is ordinary HTTP/1.1
    add("baseline-json-send", lambda c: stream(c.send("a")))
    add("baseline-query-send", lambda c: stream(c.qsend("a")))
    add("baseline-json-send-chunked", lambda c: stream(c.send("a", framing="chunked")))
    add("baseline-json-send-chunked-7-byte-chunks", lambda c: stream(c.send("a", framing="chunked", sizes=[7] * 40)))
    add("baseline-query-send-chunked", lambda c: stream(c.qsend("a", framing="chunked", sizes=[10, 20])))
    add("baseline-json-create-queue", lambda c: stream(c.create("q1")))
    add("baseline-query-create-queue", lambda c: stream(c.qcreate("q1")))
    for path in ADMIN_GETS:
        add(f"baseline-get-{path.strip('/').replace('/', '-')}", partial(_get_only, path=path))
    add("pipeline-json-json-json", lambda c: stream(c.send("a"), c.send("b"), c.send("c")))
    add("pipeline-json-query", lambda c: stream(c.send("a"), c.qsend("b")))
    add("pipeline-health-then-json", lambda c: stream(c.get("/health"), c.send("a")))
    add("pipeline-queues-then-query", lambda c: stream(c.get("/_sqsemu/queues"), c.qsend("a")))
    add(
        "pipeline-json-health-query-queues-json",
        lambda c: stream(c.send("a"), c.get("/health"), c.qsend("b"), c.get("/_sqsemu/queues"), c.send("c")),
    )
    add("pipeline-chunked-then-cl", lambda c: stream(c.send("a", framing="chunked"), c.qsend("b")))
    add("pipeline-cl-then-chunked", lambda c: stream(c.qsend("a"), c.send("b", framing="chunked", sizes=[3, 50])))
    add("pipeline-create-then-send", lambda c: stream(c.create("q1"), c.send("a"), c.qcreate("q2")))
    add("pipeline-clock-faults-send", lambda c: stream(c.get("/_sqsemu/clock"), c.get("/_sqsemu/faults"), c.send("a")))

    # ---- after a request the old protocol handed to a second parser (admin GET, Expect, a large body): chunked
    # bodies, and a chunked body whose decoded bytes are themselves a chunked end and a request
    add("relay-then-chunked-send", lambda c: stream(c.get("/health"), c.send("a", framing="chunked"), c.send("b")))
    add(
        "relay-then-chunked-query-send",
        lambda c: stream(c.get("/_sqsemu/clock"), c.qsend("a", framing="chunked", sizes=[9])),
    )
    add(
        "relay-then-chunked-body-smuggles-send",
        lambda c: stream(
            c.get("/health"), c.send("x", framing="chunked", body=SMUGGLE + c.send("h").render()), c.send("b")
        ),
    )
    add(
        "relay-then-chunked-body-smuggles-create",
        lambda c: stream(
            c.get("/_sqsemu/queues"), c.qsend("x", framing="chunked", body=SMUGGLE + c.create("h").render())
        ),
    )
    add(
        "get-chunked-body-smuggles-send",
        lambda c: stream(c.get("/health", SMUGGLE + c.send("h").render(), framing="chunked"), c.send("a")),
    )
    add(
        "get-cl-body-smuggles-send",
        lambda c: stream(c.get("/health", SMUGGLE + c.send("h").render()), c.send("a")),
    )
    add(
        "expect-chunked-body-smuggles-send",
        lambda c: stream(
            c.send("x", framing="chunked", body=SMUGGLE + c.send("h").render()).header("Expect", "100-continue")
        ),
    )
    add(
        "size-65537-then-chunked-body-smuggles-send",
        lambda c: stream(
            _big(c, "a", FAST_LANE_LIMIT + 1), c.send("x", framing="chunked", body=SMUGGLE + c.send("h").render())
        ),
    )
    add(
        "size-65537-chunked-body-smuggles-send",
        lambda c: stream(c.send("x", framing="chunked", body=SMUGGLE + c.send("h").render() + b" " * FAST_LANE_LIMIT)),
    )

    # ---- Content-Length forms (each followed by a second SendMessage: a desync shows as it running, or not)
    add("cl-duplicate-same", lambda c: _framed(c, "Content-Length: {n}", "Content-Length: {n}"), may_reject=DUP_CL)
    add("cl-duplicate-conflicting-smaller-first", lambda c: _framed(c, "Content-Length: 10", "Content-Length: {n}"))
    add("cl-duplicate-conflicting-larger-second", lambda c: _framed(c, "Content-Length: {n}", "Content-Length: {n2}"))
    add("cl-list-same", lambda c: _framed(c, "Content-Length: {n}, {n}"), may_reject=DUP_CL)
    add("cl-list-conflicting", lambda c: _framed(c, "Content-Length: {n}, 5"))
    add("cl-plus-sign", lambda c: _framed(c, "Content-Length: +{n}"))
    add("cl-minus-one", lambda c: _framed(c, "Content-Length: -1"))
    add("cl-negative-length", lambda c: _framed(c, "Content-Length: -{n}"))
    add("cl-leading-zeros", lambda c: _framed(c, "Content-Length: 000{n}"))
    add("cl-hex", lambda c: _framed(c, "Content-Length: 0x{n:x}"))
    add("cl-space-inside-digits", lambda c: _framed(c, "Content-Length: 1 {n}"))
    add("cl-trailing-space", lambda c: _framed(c, "Content-Length: {n}  "))
    add("cl-leading-tab", lambda c: _framed(c, "Content-Length:\t{n}"))
    add("cl-empty-value", lambda c: _framed(c, "Content-Length: "))
    add("cl-trailing-comma", lambda c: _framed(c, "Content-Length: {n},"))
    add("cl-decimal-point", lambda c: _framed(c, "Content-Length: {n}.0"))
    add("cl-20-digits", lambda c: _framed(c, "Content-Length: " + "9" * 20))
    add("cl-21-digits", lambda c: _framed(c, "Content-Length: 1" + "0" * 20))
    add("cl-overflow-wraps-to-body-length", lambda c: _framed(c, "Content-Length: {wrap}"))
    add("cl-space-before-colon", lambda c: _framed(c, "Content-Length : {n}"))
    add("cl-tab-before-colon", lambda c: _framed(c, "Content-Length\t: {n}"))
    add("cl-underscore-name", lambda c: _framed(c, "Content_Length: {n}"))
    add("cl-upper-case-name", lambda c: _framed(c, "CONTENT-LENGTH: {n}"))
    add("cl-missing-on-post-with-body", lambda c: _framed(c))
    add("cl-zero-then-body-bytes", lambda c: _framed(c, "Content-Length: 0"))
    add(
        "cl-short-body-swallows-next-head",
        lambda c: stream(_cl(c.send("a"), f"Content-Length: {_len(c.send('a')) + 20}"), c.send("b"), c.send("c")),
    )
    add("cl-body-on-get-hides-send", lambda c: stream(c.get("/health", c.send("h").render()), c.send("a")))
    add("cl-body-on-get-hides-create", lambda c: stream(c.get("/_sqsemu/queues", c.create("h").render()), c.send("a")))

    # ---- Transfer-Encoding with Content-Length, and obfuscated Transfer-Encoding
    add("te-cl-chunked-wins", lambda c: _te_cl(c, "chunked"))
    add(
        "te-cl-content-length-first-hides-send",
        # CL.TE: the Content-Length covers the chunked body's end and a whole SendMessage after it
        lambda c: stream(
            _cl(
                c.send("a", framing="chunked"),
                f"Content-Length: {_chunked_len(c.send('a')) + len(c.send('h').render())}",
                "Transfer-Encoding: chunked",
            ),
            c.send("h"),
            c.send("b"),
        ),
    )
    add(
        "te-cl-transfer-encoding-first",
        lambda c: stream(
            _cl(c.send("a", framing="chunked"), "Transfer-Encoding: chunked", f"Content-Length: {_len(c.send('a'))}"),
            c.send("b"),
        ),
    )
    add(
        "te-cl-zero-length-chunked-hides-send",
        # TE.CL: Content-Length 4 covers the first chunk-size line; the chunk carries a whole SendMessage
        lambda c: stream(
            _cl(
                Req("POST", "/", [("Host", HOST)], c.send("h").render(), framing="chunked"),
                "Content-Length: 4",
                "Transfer-Encoding: chunked",
            ),
            c.send("b"),
        ),
    )
    add("te-chunked-trailing-space", lambda c: _te_cl(c, "chunked ", cl=False))
    add("te-chunked-trailing-space-with-cl", lambda c: _te_cl(c, "chunked "))
    add("te-xchunked", lambda c: _te_cl(c, "xchunked", cl=False))
    add("te-xchunked-with-cl", lambda c: _te_cl(c, "xchunked"))
    add("te-chunked-comma-identity", lambda c: _te_cl(c, "chunked, identity", cl=False))
    add("te-chunked-comma-identity-with-cl", lambda c: _te_cl(c, "chunked, identity"))
    add("te-identity-comma-chunked", lambda c: _te_cl(c, "identity, chunked", cl=False))
    add("te-identity-comma-chunked-with-cl", lambda c: _te_cl(c, "identity, chunked"))
    add("te-gzip-comma-chunked", lambda c: _te_cl(c, "gzip, chunked", cl=False))
    add("te-chunked-comma-chunked", lambda c: _te_cl(c, "chunked, chunked", cl=False))
    add("te-identity", lambda c: _te_cl(c, "identity", cl=False))
    add("te-identity-with-cl", lambda c: _te_cl(c, "identity"))
    add("te-tab-before-value", lambda c: _te_cl(c, "\tchunked", cl=False))
    add("te-tab-after-value-with-cl", lambda c: _te_cl(c, "chunked\t"))
    add("te-upper-case", lambda c: _te_cl(c, "CHUNKED", cl=False))
    add("te-mixed-case-with-cl", lambda c: _te_cl(c, "ChUnKeD"))
    add("te-vertical-tab", lambda c: _te_cl(c, "\x0bchunked", cl=False))
    add("te-form-feed-with-cl", lambda c: _te_cl(c, "\x0cchunked"))
    add("te-quoted", lambda c: _te_cl(c, '"chunked"', cl=False))
    add("te-chunked-semicolon", lambda c: _te_cl(c, "chunked;q=1", cl=False))
    add("te-nul-after", lambda c: _te_cl(c, "chunked\x00", cl=False))
    add(
        "te-empty-list-element-first",
        lambda c: _te_cl(c, ", chunked", cl=False),
        lenient="RFC 9110 5.6.1: a recipient MUST accept and ignore empty list elements; h11 refuses ', chunked'",
        equivalent=lambda c: _te_cl(c, "chunked", cl=False),
    )
    add(
        "te-duplicate-headers",
        lambda c: stream(
            _cl(c.send("a", framing="chunked"), "Transfer-Encoding: chunked", "Transfer-Encoding: chunked"), c.send("b")
        ),
    )
    add(
        "te-identity-then-chunked-headers",
        lambda c: stream(
            _cl(c.send("a", framing="chunked"), "Transfer-Encoding: identity", "Transfer-Encoding: chunked"),
            c.send("b"),
        ),
    )
    add(
        "te-chunked-then-identity-headers-with-cl",
        lambda c: stream(
            _cl(
                c.send("a", framing="chunked"),
                f"Content-Length: {_len(c.send('a'))}",
                "Transfer-Encoding: chunked",
                "Transfer-Encoding: identity",
            ),
            c.send("b"),
        ),
    )
    add(
        "te-space-before-colon",
        lambda c: stream(_cl(c.send("a", framing="chunked"), "Transfer-Encoding : chunked"), c.send("b")),
    )
    add(
        "te-space-before-colon-with-cl",
        lambda c: stream(
            _cl(c.send("a"), f"Content-Length: {_len(c.send('a'))}", "Transfer-Encoding : chunked"), c.send("b")
        ),
    )
    add(
        "te-obs-fold-value",
        lambda c: stream(_cl(c.send("a", framing="chunked"), "Transfer-Encoding:\r\n chunked"), c.send("b")),
        may_reject=OBS_FOLD,
    )
    add(
        "te-obs-fold-value-with-cl",
        lambda c: stream(
            _cl(
                c.send("a", framing="chunked"), f"Content-Length: {_len(c.send('a'))}", "Transfer-Encoding:\r\n chunked"
            ),
            c.send("b"),
        ),
        may_reject=OBS_FOLD,
    )
    add("te-http10", lambda c: _te_cl(c, "chunked", cl=False, version="1.0"))
    add("te-http10-with-cl", lambda c: _te_cl(c, "chunked", version="1.0"))
    add(
        "te-http10-keep-alive",
        lambda c: stream(
            _cl(
                c.send("a", framing="chunked", version="1.0").header("Connection", "keep-alive"),
                "Transfer-Encoding: chunked",
            ),
            c.send("b"),
        ),
    )
    add(
        "te-chunked-on-get-hides-send",
        lambda c: stream(c.get("/health", c.send("h").render(), framing="chunked"), c.send("a")),
    )
    add(
        "te-chunked-on-get-queues-hides-create",
        lambda c: stream(
            c.get("/_sqsemu/queues", c.create("h").render(), framing="chunked", sizes=[30, 30]), c.send("a")
        ),
    )
    add(
        "te-chunked-on-get-with-cl-hides-send",
        lambda c: stream(
            _cl(
                c.get("/health", c.send("h").render(), framing="chunked"),
                "Content-Length: 0",
                "Transfer-Encoding: chunked",
            ),
            c.send("a"),
        ),
    )

    # ---- chunk sizes, extensions, chunk ends
    add(
        "chunk-extension",
        lambda c: stream(c.send("a", framing="chunked", sizes=[20, 20], ext=";name=value"), c.send("b")),
    )
    add("chunk-extension-quoted", lambda c: stream(c.send("a", framing="chunked", ext=';n="a;b=c"'), c.send("b")))
    add("chunk-extension-bare-name", lambda c: stream(c.send("a", framing="chunked", ext=";flag"), c.send("b")))
    add("chunk-extension-long", lambda c: stream(c.send("a", framing="chunked", ext=";x=" + "y" * 2000), c.send("b")))
    add(
        "chunk-extension-empty",
        lambda c: stream(c.send("a", framing="chunked", ext=";"), c.send("b")),
        may_reject=CHUNK_EXT,
    )
    add(
        "chunk-extension-space-before-semicolon",
        lambda c: stream(c.send("a", framing="chunked", ext=" ;x=1"), c.send("b")),
    )
    add(
        "chunk-size-leading-zeros",
        lambda c: stream(c.send("a", framing="chunked", size_format="{:08x}".format), c.send("b")),
    )
    add(
        "chunk-size-upper-hex", lambda c: stream(c.send("a", framing="chunked", size_format="{:X}".format), c.send("b"))
    )
    add(
        "chunk-size-0x-prefix",
        lambda c: stream(c.send("a", framing="chunked", size_format="0x{:x}".format), c.send("b")),
    )
    add(
        "chunk-size-negative", lambda c: stream(c.send("a", framing="chunked", size_format="-{:x}".format), c.send("b"))
    )
    add("chunk-size-plus", lambda c: stream(c.send("a", framing="chunked", size_format="+{:x}".format), c.send("b")))
    add("chunk-size-non-hex", lambda c: stream(c.send("a", framing="chunked", size_format="g{:x}".format), c.send("b")))
    add(
        "chunk-size-space-before",
        lambda c: stream(c.send("a", framing="chunked", size_format=" {:x}".format), c.send("b")),
    )
    add(
        "chunk-size-space-after",
        lambda c: stream(c.send("a", framing="chunked", size_format="{:x} ".format), c.send("b")),
        may_reject=CHUNK_WS,
    )
    add(
        "chunk-size-tab-after",
        lambda c: stream(c.send("a", framing="chunked", size_format="{:x}\t".format), c.send("b")),
        may_reject=CHUNK_WS,
    )
    add("chunk-size-empty", lambda c: stream(c.send("a", framing="chunked", size_format="".format), c.send("b")))
    add(
        "chunk-size-huge-17-digits",
        lambda c: stream(c.send("a", framing="chunked", size_format=lambda n: "f" * 17), c.send("b")),
    )
    add(
        "chunk-size-overflow-wraps-to-length",
        lambda c: stream(
            c.send("a", framing="chunked", size_format=lambda n: "1" + f"{n:x}".rjust(16, "0")), c.send("b")
        ),
    )
    add(
        "chunk-size-21-digits",
        lambda c: stream(c.send("a", framing="chunked", size_format=lambda n: f"{n:x}".rjust(21, "0")), c.send("b")),
        lenient="RFC 9112 7.1: chunk-size is 1*HEXDIG, leading zeros allowed; h11 refuses more than 20 digits",
        equivalent=lambda c: stream(c.send("a", framing="chunked"), c.send("b")),
    )
    add("chunk-size-bare-lf", lambda c: stream(c.send("a", framing="chunked", size_eol=b"\n"), c.send("b")))
    add("chunk-data-missing-crlf", lambda c: stream(c.send("a", framing="chunked", after_data=b""), c.send("b")))
    add("chunk-data-bare-lf", lambda c: stream(c.send("a", framing="chunked", after_data=b"\n"), c.send("b")))
    add("chunk-data-bare-cr", lambda c: stream(c.send("a", framing="chunked", after_data=b"\r"), c.send("b")))
    add("chunk-data-extra-bytes", lambda c: stream(c.send("a", framing="chunked", after_data=b"XX\r\n"), c.send("b")))
    add(
        "chunk-size-larger-than-data",
        lambda c: stream(c.send("a", framing="chunked", size_format=lambda n: f"{n + 30:x}"), c.send("b"), c.send("c")),
    )
    add(
        "chunk-size-smaller-than-data",
        lambda c: stream(c.send("a", framing="chunked", size_format=lambda n: f"{n - 10:x}"), c.send("b")),
    )
    add(
        "chunk-last-with-extension", lambda c: stream(c.send("a", framing="chunked", last_chunk="0;end=1"), c.send("b"))
    )
    add("chunk-last-leading-zeros", lambda c: stream(c.send("a", framing="chunked", last_chunk="000"), c.send("b")))
    add(
        "chunk-last-missing-final-crlf",
        lambda c: stream(c.send("a", framing="chunked").render()[:-2], c.send("b"), c.send("c")),
    )
    add("chunk-one-byte-chunks", lambda c: stream(c.send("a", framing="chunked", sizes=[1] * 400), c.send("b")))

    # ---- trailers
    add("trailer-plain", lambda c: stream(c.send("a", framing="chunked", trailers=["X-Note: 1"]), c.send("b")))
    add(
        "trailer-x-amz-target",
        lambda c: stream(c.send("a", framing="chunked", trailers=["X-Amz-Target: AmazonSQS.CreateQueue"]), c.send("b")),
    )
    add(
        "trailer-x-amz-target-on-query",
        lambda c: stream(c.qsend("a", framing="chunked", trailers=["X-Amz-Target: AmazonSQS.ListQueues"]), c.send("b")),
    )
    add("trailer-host", lambda c: stream(c.send("a", framing="chunked", trailers=["Host: evil.example"]), c.send("b")))
    add(
        "trailer-content-type",
        lambda c: stream(c.send("a", framing="chunked", trailers=[f"Content-Type: {FORM_TYPE}"]), c.send("b")),
    )
    add(
        "trailer-content-length",
        lambda c: stream(c.send("a", framing="chunked", trailers=["Content-Length: 5"]), c.send("b")),
        may_reject=FRAMING_TRAILER,
    )
    add(
        "trailer-transfer-encoding",
        lambda c: stream(c.send("a", framing="chunked", trailers=["Transfer-Encoding: chunked"]), c.send("b")),
        may_reject=FRAMING_TRAILER,
    )
    add(
        "trailer-connection-close",
        lambda c: stream(c.send("a", framing="chunked", trailers=["Connection: close"]), c.send("b")),
        may_reject="RFC 9110 7.6.1 and 6.5.1: Connection is a control field, never one a sender may put in a trailer",
    )
    add(
        "trailer-space-before-colon",
        lambda c: stream(c.send("a", framing="chunked", trailers=["X-Note : 1"]), c.send("b")),
    )
    add(
        "trailer-not-a-header",
        lambda c: stream(c.send("a", framing="chunked", trailers=["this is not a header"]), c.send("b")),
    )

    # ---- line ends, folds, whitespace, request lines
    add("bare-lf-head", lambda c: stream(c.send("a", eol="\n"), c.send("b")), may_reject=BARE_LF)
    add(
        "bare-lf-head-chunked",
        lambda c: stream(c.send("a", eol="\n", framing="chunked"), c.send("b")),
        may_reject=BARE_LF,
    )
    add(
        "bare-lf-one-header-line",
        lambda c: stream(c.send("a").header("X-Note", "1\nX-Other: 2"), c.send("b")),
        may_reject=BARE_LF,
    )
    add("bare-cr-in-header-value", lambda c: stream(c.send("a").header("X-Note", "1\rX-Other: 2"), c.send("b")))
    add(
        "bare-cr-hides-content-length",
        lambda c: stream(
            _cl(c.send("a"), "X-Note: 1\rContent-Length: 0", f"Content-Length: {_len(c.send('a'))}"), c.send("b")
        ),
    )
    add(
        "empty-line-before-request",
        lambda c: stream(b"\r\n", c.send("a")),
        lenient="RFC 9112 2.2: a server SHOULD ignore at least one empty line before a request-line; h11 refuses it",
        equivalent=lambda c: stream(c.send("a")),
    )
    add(
        "empty-line-between-requests",
        lambda c: stream(c.send("a"), b"\r\n", c.send("b")),
        lenient="RFC 9112 2.2: a server SHOULD ignore at least one empty line before a request-line; h11 refuses it",
        equivalent=lambda c: stream(c.send("a"), c.send("b")),
    )
    add(
        "obs-fold-harmless-header",
        lambda c: stream(c.send("a").header("User-Agent", "one\r\n two"), c.send("b")),
        may_reject=OBS_FOLD,
    )
    add(
        "obs-fold-content-length",
        lambda c: stream(_cl(c.send("a"), f"Content-Length:\r\n {_len(c.send('a'))}"), c.send("b")),
        may_reject=OBS_FOLD,
    )
    add(
        "obs-fold-x-amz-target",
        lambda c: stream(c.send("a").header("X-Amz-Target", "AmazonSQS.SendMessage\r\n\tx"), c.send("b")),
        may_reject=OBS_FOLD,
    )
    add(
        "obs-fold-first-header-line",
        lambda c: stream(replace(c.send("a"), line="POST / HTTP/1.1\r\n X-Note: 1"), c.send("b")),
    )
    add(
        "space-before-colon-host",
        lambda c: stream(replace(c.send("a"), headers=[("Host ", HOST), *c.send("a").headers[1:]]), c.send("b")),
    )
    add("header-without-colon", lambda c: stream(c.send("a").header("X-Note 1", "").header("X", "y"), c.send("b")))
    add("header-empty-name", lambda c: stream(c.send("a").header("", "value"), c.send("b")))
    add("header-nul-in-value", lambda c: stream(c.send("a").header("X-Note", "a\x00b"), c.send("b")))
    add(
        "request-line-two-spaces",
        lambda c: stream(replace(c.send("a"), line="POST  / HTTP/1.1"), c.send("b")),
        lenient="RFC 9112 3: a recipient MAY parse a request-line on whitespace boundaries; h11 refuses two spaces",
        equivalent=lambda c: stream(c.send("a"), c.send("b")),
    )
    add("request-line-lower-case-version", lambda c: stream(replace(c.send("a"), line="POST / http/1.1"), c.send("b")))
    add("request-line-space-in-target", lambda c: stream(replace(c.send("a"), line="POST /a b HTTP/1.1"), c.send("b")))
    add("request-line-http-1-2", lambda c: stream(c.send("a", version="1.2"), c.send("b")), may_reject=VERSION)
    add("request-line-http-2-0", lambda c: stream(c.send("a", version="2.0"), c.send("b")), may_reject=VERSION)
    add("head-over-64-kib", lambda c: stream(c.send("a").header("X-Big", "x" * 70_000), c.send("b")))
    add(
        "head-over-64-kib-in-second-request",
        lambda c: stream(c.send("a"), c.send("h").header("X-Big", "x" * 70_000), c.send("b")),
    )
    add("head-over-64-kib-after-health", lambda c: stream(c.get("/health"), c.send("h").header("X-Big", "x" * 70_000)))
    add("method-lower-case", lambda c: stream(replace(c.send("a"), method="post"), c.send("b")), may_reject=METHOD)
    add(
        "method-unknown-with-body",
        lambda c: stream(replace(c.send("a"), method="FROB"), c.send("b")),
        may_reject=METHOD,
    )
    add("target-high-byte", lambda c: stream(c.get("/health\xff"), c.send("a")))
    add("target-percent-encoded-admin-path", lambda c: stream(c.get("/%68ealth"), c.send("a")))
    add("head-of-8-kib", lambda c: stream(c.send("a").header("X-Big", "x" * 8_000), c.send("b")))

    # ---- HTTP/1.0 and Connection
    add("http10-send", lambda c: stream(c.send("a", version="1.0")))
    add("http10-send-then-send", lambda c: stream(c.send("a", version="1.0"), c.send("b")))
    add("http10-send-then-create", lambda c: stream(c.qsend("a", version="1.0"), c.create("h")))
    add(
        "http10-keep-alive-then-send",
        lambda c: stream(c.send("a", version="1.0").header("Connection", "keep-alive"), c.send("b")),
    )
    add(
        "http10-keep-alive-twice-then-plain-then-send",
        lambda c: stream(
            c.send("a", version="1.0").header("Connection", "keep-alive"),
            c.qsend("b", version="1.0").header("Connection", "Keep-Alive"),
            c.send("c", version="1.0"),
            c.send("d"),
        ),
    )
    add("http10-get-health-then-send", lambda c: stream(c.get("/health", version="1.0"), c.send("a")))
    add(
        "http10-keep-alive-health-then-send",
        lambda c: stream(c.get("/health", version="1.0").header("Connection", "keep-alive"), c.send("a")),
    )
    add(
        "http10-keep-alive-expect-then-send",
        lambda c: stream(
            c.send("a", version="1.0").header("Connection", "keep-alive").header("Expect", "100-continue"), c.send("b")
        ),
    )
    add(
        "close-on-expect-then-send",
        lambda c: stream(c.send("a").header("Connection", "close").header("Expect", "100-continue"), c.send("b")),
    )
    add("http10-chunked-then-send", lambda c: stream(c.send("a", version="1.0", framing="chunked"), c.send("b")))
    add("close-then-send", lambda c: stream(c.send("a").header("Connection", "close"), c.send("b")))
    add("close-then-create", lambda c: stream(c.send("a").header("Connection", "close"), c.create("h")))
    add("close-upper-case-then-send", lambda c: stream(c.qsend("a").header("Connection", "CLOSE"), c.qsend("b")))
    add("close-in-list-then-send", lambda c: stream(c.send("a").header("Connection", "keep-alive, close"), c.send("b")))
    add("close-on-health-then-send", lambda c: stream(c.get("/health").header("Connection", "close"), c.send("a")))
    add(
        "close-on-queues-then-create",
        lambda c: stream(c.get("/_sqsemu/queues").header("Connection", "close"), c.create("h")),
    )
    add(
        "close-on-chunked-then-send",
        lambda c: stream(c.send("a", framing="chunked").header("Connection", "close"), c.send("b")),
    )
    add(
        "close-on-third-then-send",
        lambda c: stream(c.send("a"), c.qsend("b"), c.send("c").header("Connection", "close"), c.send("d")),
    )
    add("close-then-garbage", lambda c: stream(c.send("a").header("Connection", "close"), b"NOT HTTP AT ALL\r\n\r\n"))
    add("garbage-after-send", lambda c: stream(c.send("a"), b"\x16\x03\x01\x00\xa5garbage\r\n\r\n"))
    add("keep-alive-header-on-http11", lambda c: stream(c.send("a").header("Connection", "keep-alive"), c.send("b")))

    # ---- bodies around 64 KiB (the old fast lane's limit)
    add("size-65535", lambda c: stream(_big(c, "a", FAST_LANE_LIMIT - 1), c.send("b")))
    add("size-65536", lambda c: stream(_big(c, "a", FAST_LANE_LIMIT), c.send("b")))
    add("size-65537", lambda c: stream(_big(c, "a", FAST_LANE_LIMIT + 1), c.send("b")))
    add("size-200000", lambda c: stream(c.send("z"), _big(c, "a", 200_000), c.send("b")))
    add(
        "size-65537-chunked-one-chunk",
        lambda c: stream(_big(c, "a", FAST_LANE_LIMIT + 1, framing="chunked"), c.send("b")),
    )
    add(
        "size-70000-chunked-4-kib-chunks-with-ext",
        lambda c: stream(_big(c, "a", 70_000, framing="chunked", sizes=[4096] * 20, ext=";x=y"), c.qsend("b")),
    )
    add(
        "size-65537-chunked-trailer-x-amz-target",
        lambda c: stream(
            _big(
                c,
                "a",
                FAST_LANE_LIMIT + 1,
                framing="chunked",
                sizes=[60_000],
                trailers=["X-Amz-Target: AmazonSQS.CreateQueue"],
            ),
            c.send("b"),
        ),
    )
    add(
        "size-65537-close-then-send",
        lambda c: stream(_big(c, "a", FAST_LANE_LIMIT + 1).header("Connection", "close"), c.send("b")),
    )
    add(
        "size-65537-te-cl",
        lambda c: stream(
            _cl(
                _big(c, "a", FAST_LANE_LIMIT + 1, framing="chunked"),
                f"Content-Length: {FAST_LANE_LIMIT + 1}",
                "Transfer-Encoding: chunked",
            ),
            c.send("b"),
        ),
    )
    add(
        "size-70000-get-chunked-hides-send",
        lambda c: stream(
            c.get("/health", b"x" * 70_000 + c.send("h").render(), framing="chunked", sizes=[70_000]), c.send("a")
        ),
    )
    add(
        "size-65537-chunked-missing-crlf",
        lambda c: stream(_big(c, "a", FAST_LANE_LIMIT + 1, framing="chunked", after_data=b""), c.send("b")),
    )

    # ---- Expect: 100-continue
    add("expect-100-send", lambda c: stream(c.send("a").header("Expect", "100-continue")))
    add("expect-100-send-then-send", lambda c: stream(c.send("a").header("Expect", "100-continue"), c.qsend("b")))
    add(
        "expect-100-chunked",
        lambda c: stream(c.send("a", framing="chunked").header("Expect", "100-continue"), c.send("b")),
    )
    add("expect-100-http10", lambda c: stream(c.send("a", version="1.0").header("Expect", "100-continue"), c.send("b")))
    add(
        "expect-100-large",
        lambda c: stream(_big(c, "a", FAST_LANE_LIMIT + 100).header("Expect", "100-continue"), c.send("b")),
    )
    add(
        "expect-100-te-cl",
        lambda c: stream(
            _cl(
                c.send("a", framing="chunked").header("Expect", "100-continue"),
                "Content-Length: 3",
                "Transfer-Encoding: chunked",
            ),
            c.send("b"),
        ),
    )
    add(
        "expect-100-get-body-hides-send",
        lambda c: stream(c.get("/health", c.send("h").render()).header("Expect", "100-continue"), c.send("a")),
    )
    return cases


CORPUS = _corpus()


def test_the_corpus_is_large_and_named_uniquely() -> None:
    names = [case.name for case in CORPUS]
    assert len(names) == len(set(names))
    assert len(CORPUS) >= 120


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_the_server_frames_the_stream_as_h11_does(srv: ServerThread, case: Case) -> None:
    ctx = new_ctx(srv)
    data = case.build(ctx)
    equivalent = case.equivalent(ctx) if case.equivalent is not None else None
    check(srv, ctx, data, views_for(data, case.may_reject, equivalent))


# --------------------------------------------------------------------------------------------- generated streams


@dataclass(frozen=True)
class Drawn:
    """One request of a generated stream, ``Ctx``-free: rendered once the stream's queue exists."""

    kind: str  # send, qsend, create, qcreate, get, get-hiding, post-hiding (a body that hides a request)
    path: str
    framing: str
    sizes: tuple[int, ...]
    ext: str
    version: str
    connection: str | None
    expect: bool


MUTATIONS = (
    "cl-plus",
    "cl-leading-zeros",
    "cl-duplicate-same",
    "cl-duplicate-conflicting",
    "cl-space-before-colon",
    "cl-hex",
    "add-te-to-cl",
    "add-cl-to-chunked",
    "te-xchunked",
    "te-chunked-identity",
    "te-identity-chunked",
    "te-upper",
    "te-tab",
    "te-trailing-space",
    "te-duplicate",
    "chunk-ext",
    "chunk-size-leading-zeros",
    "chunk-size-huge",
    "chunk-data-missing-crlf",
    "chunk-data-bare-lf",
    "chunk-size-space-after",
    "trailer-x-amz-target",
    "bare-lf",
    "obs-fold",
    "space-before-colon",
)


def render_drawn(drawn: Drawn, ctx: Ctx, tag: str) -> Req:
    kw: dict[str, Any] = {"framing": drawn.framing, "version": drawn.version}
    if drawn.framing == "chunked":
        kw.update(sizes=list(drawn.sizes), ext=drawn.ext)
    if drawn.kind == "send":
        req = ctx.send(tag, **kw)
    elif drawn.kind == "qsend":
        req = ctx.qsend(tag, **kw)
    elif drawn.kind == "create":
        req = ctx.create(tag, **kw)
    elif drawn.kind == "qcreate":
        req = ctx.qcreate(tag, **kw)
    elif drawn.kind == "get-hiding":
        req = ctx.get(drawn.path, SMUGGLE + ctx.send(f"{tag}h").render(), **kw)
    elif drawn.kind == "post-hiding":
        req = ctx.send(tag, body=SMUGGLE + ctx.create(f"{tag}h").render(), **kw)
    else:
        req = ctx.get(drawn.path, version=drawn.version)
    if drawn.connection is not None:
        req = req.header("Connection", drawn.connection)
    if drawn.expect and req.method == "POST":
        req = req.header("Expect", "100-continue")
    return req


def mutate(req: Req, mutation: str) -> tuple[Req, str | None]:
    """``req`` with one framing token changed (unchanged where the form does not apply); and why the RFC lets a
    server refuse the result, where it does."""
    size = len(req.body)
    cl = req.framing == "cl"
    chunked = req.framing == "chunked"
    if mutation == "cl-plus" and cl:
        return _cl(req, f"Content-Length: +{size}"), None
    if mutation == "cl-leading-zeros" and cl:
        return _cl(req, f"Content-Length: 00{size}"), None
    if mutation == "cl-duplicate-same" and cl:
        return _cl(req, f"Content-Length: {size}", f"Content-Length: {size}"), DUP_CL
    if mutation == "cl-duplicate-conflicting" and cl:
        return _cl(req, f"Content-Length: {size}", f"Content-Length: {size + 7}"), None
    if mutation == "cl-space-before-colon" and cl:
        return _cl(req, f"Content-Length : {size}"), None
    if mutation == "cl-hex" and cl:
        return _cl(req, f"Content-Length: 0x{size:x}"), None
    if mutation == "add-te-to-cl" and cl:
        return _cl(req, f"Content-Length: {size}", "Transfer-Encoding: chunked"), None
    if mutation == "add-cl-to-chunked" and chunked:
        return _cl(req, "Transfer-Encoding: chunked", f"Content-Length: {size}"), None
    te_forms = {
        "te-xchunked": "xchunked",
        "te-chunked-identity": "chunked, identity",
        "te-identity-chunked": "identity, chunked",
        "te-upper": "CHUNKED",
        "te-tab": "\tchunked",
        "te-trailing-space": "chunked ",
    }
    if mutation in te_forms and chunked:
        return _cl(req, f"Transfer-Encoding: {te_forms[mutation]}"), None
    if mutation == "te-duplicate" and chunked:
        return _cl(req, "Transfer-Encoding: chunked", "Transfer-Encoding: chunked"), None
    if mutation == "chunk-ext" and chunked:
        return replace(req, ext=";a=b", last_chunk="0;z"), None
    if mutation == "chunk-size-leading-zeros" and chunked:
        return replace(req, size_format="{:06x}".format), None
    if mutation == "chunk-size-huge" and chunked:
        return replace(req, size_format=lambda n: "1" + f"{n:x}".rjust(16, "0")), None
    if mutation == "chunk-data-missing-crlf" and chunked:
        return replace(req, after_data=b""), None
    if mutation == "chunk-data-bare-lf" and chunked:
        return replace(req, after_data=b"\n"), None
    if mutation == "chunk-size-space-after" and chunked:
        return replace(req, size_format="{:x} ".format), CHUNK_WS
    if mutation == "trailer-x-amz-target" and chunked:
        return replace(req, trailers=["X-Amz-Target: AmazonSQS.CreateQueue"]), None
    if mutation == "bare-lf":
        return replace(req, eol="\n"), BARE_LF
    if mutation == "obs-fold":
        return req.header("User-Agent", "a\r\n b"), OBS_FOLD
    if mutation == "space-before-colon":
        return replace(req, headers=[("Host ", HOST), *req.headers[1:]]), None
    return req, None


@st.composite
def drawn_requests(draw: st.DrawFn) -> Drawn:
    kind = draw(st.sampled_from(["send", "qsend", "create", "qcreate", "get", "get-hiding", "post-hiding"]))
    path = draw(st.sampled_from(ADMIN_GETS))
    framing = draw(st.sampled_from(["cl", "chunked", "none"])) if kind != "get" else "none"
    if kind in ("get-hiding", "post-hiding") and framing == "none":
        framing = "chunked"
    sizes = tuple(draw(st.lists(st.integers(1, 120), min_size=1, max_size=4))) if framing == "chunked" else ()
    ext = draw(st.sampled_from(["", "", ";x", ";k=v", ';q="a b"'])) if framing == "chunked" else ""
    version = draw(st.sampled_from(["1.1", "1.1", "1.1", "1.0"]))
    connection = draw(st.sampled_from([None, None, None, "close", "keep-alive"]))
    expect = draw(st.booleans()) and draw(st.booleans())
    return Drawn(kind, path, framing, sizes, ext, version, connection, expect)


@st.composite
def drawn_streams(draw: st.DrawFn) -> tuple[list[Drawn], int, str | None]:
    requests = draw(st.lists(drawn_requests(), min_size=1, max_size=4))
    target = draw(st.integers(0, len(requests) - 1))
    mutation = draw(st.none() | st.sampled_from(MUTATIONS))
    return requests, target, mutation


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: every example costs a connection (the stream is shown)
    suppress_health_check=[HealthCheck.too_slow],
)
@given(drawn=drawn_streams())
def test_generated_streams_are_framed_as_h11_frames_them(
    srv: ServerThread, drawn: tuple[list[Drawn], int, str | None]
) -> None:
    requests, target, mutation = drawn
    ctx = new_ctx(srv)
    parts: list[Part] = []
    may_reject: str | None = None
    for index, one in enumerate(requests):
        req = render_drawn(one, ctx, f"r{index}")
        if index == target and mutation is not None:
            req, may_reject = mutate(req, mutation)
        parts.append(req)
    data = stream(*parts)
    check(srv, ctx, data, views_for(data, may_reject, None))


# --------------------------------------------------------------------------------------------- the oracle itself


def test_the_oracle_sees_a_send_hidden_in_a_get_body_as_the_get_s_body() -> None:
    ctx = Ctx("http://127.0.0.1:1/000000000000/q", "q", "000000000000")
    data = stream(ctx.get("/health", ctx.send("h").render(), framing="chunked"), ctx.send("a"))
    (view,) = h11_views(data)
    assert view.end == "open" and [r.method for r in view.requests] == [b"GET", b"POST"]
    assert [effect_of(r, ctx).sends for r in view.requests] == [(), ("q-a",)]


def test_the_oracle_stops_at_connection_close_and_at_errors() -> None:
    ctx = Ctx("http://127.0.0.1:1/000000000000/q", "q", "000000000000")
    (closed,) = h11_views(stream(ctx.send("a").header("Connection", "close"), ctx.send("b")))
    assert closed.end == "closed" and len(closed.requests) == 1
    (error,) = h11_views(_te_cl(ctx, "xchunked"))
    assert error.end == "error" and not error.requests
    te_cl = h11_views(_te_cl(ctx, "chunked"))
    assert [(v.end, len(v.requests)) for v in te_cl] == [("error", 0), ("closed", 1)]
    keep = h11_views(stream(ctx.send("a", version="1.0").header("Connection", "keep-alive"), ctx.send("b")))
    assert sorted((v.end, len(v.requests)) for v in keep) == [("closed", 1), ("open", 2)]
    (partial,) = h11_views(ctx.send("a").render()[:-3])
    assert partial.end == "partial" and not partial.requests


def test_the_answer_reader_handles_interim_chunked_and_close_delimited_answers() -> None:
    data = (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
        b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\nbad"
    )
    assert parse_responses(data, True) == ([200, 200, 400], 1, True, None)
    assert parse_responses(data[:-40], False)[:3] == ([200, 200], 1, False)


def test_a_refusal_is_framed_by_its_content_length(srv: ServerThread) -> None:
    """The answer to a malformed request is itself well framed: its body is as long as its Content-Length says (the
    answer reader above ignores bytes after a refusal the server closes on, so that this is reported once, here)."""
    with socket.create_connection((HOST, srv.port), timeout=READ_DEADLINE_S) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        data = bytearray()
        deadline = time.monotonic() + READ_DEADLINE_S
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), data
    found = re.search(rb"\r\ncontent-length: *([0-9]+)", head, re.I)
    if found is not None:  # else the body ends with the connection
        size = int(found.group(1))
        assert len(body) == size, f"Content-Length {size}, body {body!r} ({len(body)} bytes)"
