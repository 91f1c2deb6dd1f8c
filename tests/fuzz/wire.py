"""Mutation fuzzing of the HTTP layer over real sockets: well-formed requests of every route, mutated at the byte level,
sent to a real server (``ServerThread``), every answer parsed strictly.

**Seeds** (:func:`seed_requests`): every SQS action in both wire protocols (JSON 1.0 with ``X-Amz-Target``, Query
form-encoded; the members come from ``tests/fuzz/grammar.py`` with every hostile branch off, so they are valid), every
admin route (``/health``, ``/metrics``, ``/_sqsemu/...`` GET, POST, PUT and DELETE, the web console's pages and forms,
the other emulators' routes) and the Lambda event-source-mapping API under ``/2015-03-31/``.

**Mutations** (:class:`Mutator`, one ``random.Random`` per case from the run's seed and the case's index, so a case is
reproduced by its number): requests pipelined in one write or several, truncated (with or without a half-close),
flooded heads (many headers, a huge header, a head over 64 KiB, a second head over 64 KiB pipelined behind a small
request, a chunked request with a flooded head on a connection already handed to uvicorn), malformed header lines,
bad ``Content-Length`` values (huge, thousands of digits, negative, duplicated, beside ``Transfer-Encoding``), chunked
bodies with bad sizes, odd request lines, byte flips, insertions and deletions in head and body, random garbage,
and stacks of two or three of these.

**The oracle** (:func:`run_case`, :class:`Answers`): each case has its own connection. Every answer must be
well-formed HTTP/1.1 as h11 (the client side) reads it, with a ``Content-Length`` (or chunked framing) whose bytes
follow exactly: a short body at close or a stray byte after a body is a *length mismatch*. No status of 500 or more
(except an error a fault rule injected on purpose, which says ``sqsemu fault injection``). Within the read deadline
(``request_timeout``, 2 s) plus a margin after its last byte was sent, the connection must be closed by the server or
have its requests answered: as many answers as h11, reading the bytes sent as a server would, finds complete requests
in them (at least one when anything was sent). Bytes that are valid HTTP/1.1 as sent (unmutated seeds, validly
chunked or with more headers under the 64 KiB cap, pipelined or not: :attr:`Case.valid`) must all be served: neither
refused as malformed (``Invalid HTTP request received.``) nor left unanswered when the server closes. A reset
connection (``ECONNRESET``) is a failure of its own; so is any ERROR record with a traceback in the ``sqsemu`` and
``uvicorn`` loggers, and a server that no longer answers ``GET /health`` at the end.

Fault rules and realism a mutated admin request may add are undone every few seconds (a maintenance task, which also
advances the manual clock by 21 s every half second, so that long polls end, and creates the seeded queues again after
a reset), and seeded fault rules can match no call (``ListQueueTags`` of a queue that does not exist).

Used by ``tests/fuzz/test_wire_mutation.py`` (a bounded, seeded run) and ``bench/fuzz.py --wire`` (as long as asked).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import random
import re
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import h11

from sqsemu.config import Config
from sqsemu.protocol.shapes import REQUESTS
from sqsemu.server import ServerThread
from tests.fuzz.grammar import (
    ACCOUNT,
    ACTIONS,
    AUTH_TEMPLATE,
    HOST,
    REGION,
    Biased,
    RandomDraw,
    State,
    query_pairs,
    request_members,
    to_json,
)

__all__ = [
    "CLASSES",
    "Case",
    "Mutator",
    "Outcome",
    "Report",
    "WireServer",
    "run_one",
    "run_wire",
    "seed_requests",
]

CLASSES = (
    "5xx",
    "malformed answer",
    "length mismatch",
    "not answered or closed in time",
    "valid request refused",
    "reset",
    "traceback",
)
"""The failure classes, in the order reports list them."""

REQUEST_TIMEOUT_S = 2
"""The server's read deadline (``Config.request_timeout``)."""
JSON_CT = "application/json"
FORM_CT = "application/x-www-form-urlencoded"
SQS_JSON_CT = "application/x-amz-json-1.0"
AUTH = AUTH_TEMPLATE.format(key=ACCOUNT, region=REGION)
FUNCTION = "fz-fn"
UUID_SLOT = b"00000000-0000-4000-8000-000000000000"
"""Stands for a real mapping's UUID in seeds; replaced, same length, by one an earlier answer named."""
SEEDED_QUEUES = ("fz-dlq", "fz-dlq.fifo", "fz-std", "fz-fifo.fifo")
INJECTED = b"sqsemu fault injection"
"""What the default message of an error a fault rule injected says: a 5xx that says it was asked for."""
KEPT_BYTES = 2000
"""Bytes of what the server sent that an :class:`Outcome` keeps (for the examples of a report)."""
_UUID_RE = re.compile(rb'"UUID":\s*"([0-9a-f-]{36})"')

# ------------------------------------------------------------------------------------------------ seeds


def http_request(method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes = b"") -> bytes:
    """The bytes of one HTTP/1.1 request (a ``Content-Length`` added for a body, or for POST/PUT)."""
    lines = [f"{method} {target} HTTP/1.1", *(f"{name}: {value}" for name, value in headers)]
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@dataclass(frozen=True)
class SeedRequest:
    """A well-formed request: ``label`` (``json SendMessage``, ``admin GET /health``...), its ``data`` and whether
    it is an SQS call (``sqs``: the SQS endpoint; else admin, console or Lambda API)."""

    label: str
    data: bytes
    sqs: bool


def sqs_request(rng: random.Random, protocol: str, action: str) -> SeedRequest:
    """A valid ``action`` call in ``protocol`` (``json`` or ``query``) on the seeded queues (the grammar's members
    with every hostile branch off)."""
    draw = Biased(RandomDraw(rng.randrange(2**32)), 0)
    state = State(queue_names=list(SEEDED_QUEUES))
    members = request_members(draw, action, state)
    if protocol == "json":
        body = to_json(members).encode("utf-8", "surrogatepass")
        headers = [("Host", HOST), ("Content-Type", SQS_JSON_CT), ("X-Amz-Target", f"AmazonSQS.{action}")]
    else:
        pairs = [("Action", action), ("Version", "2012-11-05"), *query_pairs(draw, REQUESTS[action].MEMBERS, members)]
        body = urlencode(pairs, encoding="utf-8", errors="surrogatepass").encode()
        headers = [("Host", HOST), ("Content-Type", FORM_CT)]
    headers.append(("Authorization", AUTH))
    return SeedRequest(f"{protocol} {action}", http_request("POST", "/", headers, body), True)


_UI = "/_sqsemu/ui"
_QUEUE_UI = f"{_UI}/queues/{ACCOUNT}/{REGION}/fz-std"
_DLQ_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT}:fz-dlq"
_HARMLESS_RULE = {  # matches no call: ListQueueTags of a queue that does not exist; a 4xx if it ever did
    "id": "fz-rule",
    "action": "ListQueueTags",
    "queue": "fz-no-such-queue",
    "error": {"code": "FuzzInjected", "status": 400},
    "count": 1,
}
_MAPPINGS = "/2015-03-31/event-source-mappings"
_MAPPING = f"{_MAPPINGS}/{UUID_SLOT.decode()}"

OTHER_ROUTES: tuple[tuple[str, str, str | None, bytes], ...] = (
    # (method, target, content type, body)
    ("GET", "/health", None, b""),
    ("HEAD", "/health", None, b""),
    ("GET", "/metrics", None, b""),
    ("GET", "/", None, b""),
    ("GET", "/?Action=ListQueues&Version=2012-11-05", None, b""),
    ("GET", "/_sqsemu/clock", None, b""),
    ("POST", "/_sqsemu/clock/advance", JSON_CT, b'{"seconds": 1}'),
    ("GET", "/_sqsemu/faults", None, b""),
    ("POST", "/_sqsemu/faults", JSON_CT, json.dumps(_HARMLESS_RULE).encode()),
    ("GET", "/_sqsemu/faults/fz-rule", None, b""),
    ("DELETE", "/_sqsemu/faults/fz-rule", None, b""),
    ("DELETE", "/_sqsemu/faults", None, b""),
    ("GET", "/_sqsemu/queues", None, b""),
    ("GET", f"/_sqsemu/queues/{ACCOUNT}/fz-std/messages", None, b""),
    ("GET", f"/_sqsemu/queues/{ACCOUNT}/fz-fifo.fifo/messages?region={REGION}", None, b""),
    ("GET", f"/_sqsemu/queues/{ACCOUNT}/fz-std/history", None, b""),
    ("POST", "/_sqsemu/reset", JSON_CT, b'{"account": "111122223333"}'),
    ("GET", "/_sqsemu/realism", None, b""),
    ("PUT", "/_sqsemu/realism", JSON_CT, b'{"spec": "duplicates=0.1,reorder=0.2", "seed": 7}'),
    ("GET", f"/_sqsemu/realism/queues/{ACCOUNT}/fz-std", None, b""),
    ("PUT", f"/_sqsemu/realism/queues/{ACCOUNT}/fz-std", JSON_CT, b'{"spec": "reorder=0.5"}'),
    ("DELETE", f"/_sqsemu/realism/queues/{ACCOUNT}/fz-std", None, b""),
    ("GET", "/_sqsemu/nothing", None, b""),
    ("GET", _UI, None, b""),
    ("GET", _UI + "/", None, b""),
    ("GET", _QUEUE_UI, None, b""),
    ("GET", _QUEUE_UI + "?page=2", None, b""),
    ("GET", _QUEUE_UI + "/messages/no-such-message", None, b""),
    ("POST", _UI + "/queues", FORM_CT, b"name=fz-ui&fifo=on&content_based=on"),
    ("POST", _QUEUE_UI + "/send", FORM_CT, b"MessageBody=hello+console&DelaySeconds=0"),
    (
        "POST",
        _QUEUE_UI + "/attributes",
        FORM_CT,
        urlencode({"VisibilityTimeout": "31", "dead_letter_arn": _DLQ_ARN, "max_receive_count": "3"}).encode(),
    ),
    ("POST", _QUEUE_UI + "/tag", FORM_CT, b"key=team&value=fz"),
    ("POST", _QUEUE_UI + "/untag", FORM_CT, b"key=team"),
    ("GET", _UI + "/server", None, b""),
    ("POST", _UI + "/server/advance", FORM_CT, b"seconds=1"),
    (
        "POST",
        _UI + "/server/add-fault",
        FORM_CT,
        b"id=fz-ui-rule&action=ListQueueTags&queue=fz-no-such-queue&error_code=FuzzInjected&error_status=400&count=1",
    ),
    ("POST", _UI + "/server/delete-fault", FORM_CT, b"id=fz-ui-rule"),
    ("GET", _UI + "/login", None, b""),
    ("POST", _UI + "/logout", FORM_CT, b""),
    ("GET", _UI + "/static/console.css", None, b""),
    ("POST", "/moto-api/reset", None, b""),
    ("GET", "/_localstack/health", None, b""),
    (
        "POST",
        _MAPPINGS + "/",
        JSON_CT,
        json.dumps({"EventSourceArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:fz-std", "FunctionName": FUNCTION}).encode(),
    ),
    ("GET", _MAPPINGS + f"/?FunctionName={FUNCTION}&MaxItems=5", None, b""),
    ("GET", _MAPPING, None, b""),
    ("PUT", _MAPPING, JSON_CT, b'{"BatchSize": 3, "Enabled": false}'),
    ("DELETE", _MAPPING, None, b""),
)
"""Every route that is not an SQS call, with a valid request for each (the console's and the Lambda API's too)."""


def other_request(method: str, target: str, content_type: str | None, body: bytes) -> SeedRequest:
    """A request of :data:`OTHER_ROUTES`."""
    headers = [("Host", HOST)]
    if content_type is not None:
        headers.append(("Content-Type", content_type))
    if target.startswith("/2015-03-31/"):
        headers.append(("Authorization", AUTH))
    kind = "lambda" if target.startswith("/2015-03-31/") else "admin"
    return SeedRequest(f"{kind} {method} {target.split('?')[0]}", http_request(method, target, headers, body), False)


Maker = Callable[[random.Random], SeedRequest]


def _sqs_maker(protocol: str, action: str) -> Maker:
    def make(rng: random.Random) -> SeedRequest:
        return sqs_request(rng, protocol, action)

    return make


def _fixed_maker(request: SeedRequest) -> Maker:
    def make(rng: random.Random) -> SeedRequest:
        return request

    return make


def seed_requests() -> list[Maker]:
    """One maker per seed kind: every SQS action in both protocols (a fresh valid request each call, its members
    drawn from the ``random.Random`` given) and every route of :data:`OTHER_ROUTES`."""
    makers: list[Maker] = []
    for action in ACTIONS:
        for protocol in ("json", "query"):
            makers.append(_sqs_maker(protocol, action))
    for route in OTHER_ROUTES:
        makers.append(_fixed_maker(other_request(*route)))
    return makers


# ------------------------------------------------------------------------------------------------ mutations


def split_head(data: bytes) -> tuple[bytes, bytes]:
    """``(head without its blank line, body)``; all of ``data`` is head when it has no blank line."""
    head, sep, body = data.partition(b"\r\n\r\n")
    return (head, body) if sep else (data, b"")


def join(head: bytes, body: bytes) -> bytes:
    return head + b"\r\n\r\n" + body


def set_header(head: bytes, name: bytes, values: Sequence[bytes]) -> bytes:
    """``head`` with every ``name`` header removed and one line per value of ``values`` added at its end."""
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(name.lower() + b":")]
    return b"\r\n".join([*lines, *(name + b": " + value for value in values)])


def add_lines(head: bytes, lines: Sequence[bytes], at_end: bool = False) -> bytes:
    """``head`` with raw header ``lines`` added after the request line (or at the end)."""
    first, _, rest = head.partition(b"\r\n")
    if at_end:
        return head + b"".join(b"\r\n" + line for line in lines)
    return first + b"".join(b"\r\n" + line for line in lines) + (b"\r\n" + rest if rest else b"")


MALFORMED_LINES = (
    b"NoColonHere",
    b"Bad Name: value",
    b" Leading-Space: value",
    b"\tFolded continuation",
    b": no-name",
    b"X-Ctl: a\x00b",
    b"X-Ctl: \x01\x02\x7f",
    b"X-High: \xff\xfe\x80",
    b"X-Bare-Cr: a\rb",
    b"X-Colon\x00: v",
    b"X-Spaces :   v   ",
    b"X-Empty:",
    b"Host: second.example",
    b"Host:",
    b"Transfer-Encoding: gzip",
    b"Transfer-Encoding: chunked, identity",
    b"Transfer-Encoding: identity",
    b"Content-Type: application/x-amz-json-1.0; charset=\xff",
    b"X-Amz-Target: AmazonSQS.\xe9\x00",
    b"Expect: 100-continue",
    b"Expect: something-else",
    b"Connection: upgrade\r\nUpgrade: websocket",
    b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA",
    b"Origin: http://evil.example",
    b"Sec-Fetch-Site: cross-site",
    b"X-Forwarded-For: 1.2.3.4, \xff",
    b"X-Forwarded-Proto: gopher",
)

LONG_LENGTHS = (b"9" * 4301, b"0" * 4300 + b"1", b"0" * 4294 + b"2000000", b"1" * 5000, b"0" * 5000)
"""``Content-Length`` values of thousands of digits: past what Python's ``int()`` converts (4,300 digits), some of
them a small number all the same (leading zeros), which HTTP parsers take."""

BAD_LENGTHS = (
    b"99999999999999999999",
    b"18446744073709551616",
    b"18446744073709551615",
    b"9223372036854775808",
    b"-1",
    b"-0",
    b"+5",
    b" 5 ",
    b"5 5",
    b"5,5",
    b"0x10",
    b"1e3",
    b"abc",
    b"",
    b"\xd9\xa3",
    b"\xc2\xb2",
    b"1048577",
    b"65537",
    b"8388609",
)

BAD_CHUNK_SIZES = (
    b"zz",
    b"-1",
    b"-0",
    b"0x10",
    b" 5",
    b"5 ",
    b"ffffffffffffffffffff",
    b"f" * 4301,
    b"0" * 4300 + b"1",
    b"7fffffffffffffff",
    b"1;ext=\xff",
    b"",
    b"\xd9\xa3",
)

TARGETS = (
    b"*",
    b"http://localhost:9324/",
    b"//",
    b"/%",
    b"/%00",
    b"/%zz",
    b"/../../etc/passwd",
    b"/?",
    b"/?" + b"A" * 5000,
    b"/" + b"a" * 20000,
    b"/\xff\xfe",
    b"/a b",
    b"",
    b"/_sqsemu/%2e%2e/health",
    b"/health?x=" + b"%" * 100,
)

METHODS = (b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT", b"FOO", b"get", b"GE T", b"", b"P\x00ST", b"POST" * 200)

FITTING_HEAD = 64_000
"""A head shorter than this fits the server's 64 KiB cap with room to spare (a flooded valid request stays valid)."""

VERSIONS = (b"HTTP/1.0", b"HTTP/1.2", b"HTTP/2.0", b"HTTP/0.9", b"http/1.1", b"HTTP/1.1 extra", b"HTTP/11", b"")


_RUN_RE = re.compile(rb"(.)\1{31,}", re.S)


def shorten(data: bytes, most: int = 600) -> str:
    """``repr`` of ``data`` with runs of one byte written ``<4300 x b'0'>`` and cut after ``most`` characters."""
    parts: list[str] = []
    at = 0
    for match in _RUN_RE.finditer(data):
        parts.append(repr(data[at : match.start()])[1:])
        parts.append(f"<{match.end() - match.start():,} x {match.group(1)!r}>")
        at = match.end()
    parts.append(repr(data[at:])[1:])
    text = " ".join(part for part in parts if part not in ("''", '""'))
    return text if len(text) <= most else text[:most] + f" ... ({len(data):,} bytes)"


@dataclass
class Case:
    """One connection's worth of bytes: ``writes`` in order, then a half-close when ``half_close``. ``kind`` names
    the mutation, ``labels`` the seed requests in it (one per request sent), ``notes`` what was done to them."""

    index: int
    kind: str
    writes: list[bytes]
    labels: list[str]
    notes: list[str] = field(default_factory=list)
    half_close: bool = False
    valid: bool = False
    """Every byte is valid HTTP/1.1 the server must serve: unmutated seeds, validly chunked or with more headers
    (heads under the 64 KiB cap), in one write or several."""

    @property
    def data(self) -> bytes:
        return b"".join(self.writes)

    def describe(self, most: int = 600) -> str:
        """One paragraph: the case's number, kind, seeds, notes and its first ``most`` bytes."""
        data = self.data
        shown = shorten(data, most)
        extra = (" + " + "; ".join(self.notes)) if self.notes else ""
        close = ", then half-closed" if self.half_close else ""
        return f"case {self.index} [{self.kind}{extra}] of {', '.join(self.labels)}{close}:\n    {shown}"


class Mutator:
    """The cases of one run: ``case(i)`` is the same for the same ``seed`` and ``i`` (its own ``random.Random``)."""

    FAMILIES: tuple[tuple[str, int], ...] = (
        ("intact", 5),
        ("pipelined", 9),
        ("truncated", 8),
        ("many headers", 5),
        ("huge header", 5),
        ("head over 64 KiB", 4),
        ("second head over 64 KiB", 5),
        ("malformed header", 8),
        ("bad content-length", 10),
        ("thousands of digits", 4),
        ("bad chunked body", 10),
        ("request line", 5),
        ("byte flips", 8),
        ("byte insertions", 5),
        ("byte deletions", 5),
        ("garbage", 4),
        ("relayed chunked flood", 4),
        ("stacked", 6),
    )

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.makers = seed_requests()
        self._kinds = [name for name, _ in self.FAMILIES]
        self._weights = [weight for _, weight in self.FAMILIES]

    def seed_request(self, rng: random.Random, sqs: bool | None = None) -> SeedRequest:
        """A seed request of any kind (or an SQS call when ``sqs``, or not one when ``sqs`` is False)."""
        while True:
            made = rng.choice(self.makers)(rng)
            if sqs is None or made.sqs == sqs:
                return made

    def case(self, index: int) -> Case:
        """Case ``index``: seed kinds are taken in turn (every route and action is reached in the first
        ``len(self.makers)`` cases), the mutation family drawn."""
        rng = random.Random(self.seed * 1_000_003 + index)
        first = self.makers[index % len(self.makers)](rng)
        kind = rng.choices(self._kinds, self._weights)[0]
        case = Case(index, kind, [first.data], [first.label])
        self._apply(rng, case, kind, first)
        return case

    # mutation families ------------------------------------------------------------------------------------

    def _apply(self, rng: random.Random, case: Case, kind: str, seed: SeedRequest) -> None:
        data = seed.data
        if kind == "intact":
            case.valid = True
            case.writes = self._writes(rng, data)
            return
        if kind == "pipelined":
            parts = [data]
            case.valid = True
            for _ in range(rng.randint(1, 4)):
                more = self.seed_request(rng)
                draw = rng.random()
                if draw < 0.3:
                    more_data = self._request_mutation(rng, case, more.data)
                    case.valid = False
                elif draw < 0.5:
                    more_data = self._chunked(rng, case, more.data, bad=False)
                else:
                    more_data = more.data
                parts.append(more_data)
                case.labels.append(more.label)
            case.writes = self._writes(rng, b"".join(parts))
            return
        if kind == "truncated":
            stream = data if rng.random() < 0.6 else data + self.seed_request(rng).data
            cut = rng.randint(1, max(1, len(stream) - 1))
            case.writes = [stream[:cut]]
            case.half_close = rng.random() < 0.3
            case.notes.append(f"cut at {cut} of {len(stream)}")
            return
        if kind == "garbage":
            choice = rng.randrange(4)
            if choice == 0:
                junk = rng.randbytes(rng.randint(1, 3000))
            elif choice == 1:
                junk = bytes(rng.choice(b"abcXYZ019 :/\r\n\t") for _ in range(rng.randint(1, 3000)))
            elif choice == 2:
                junk = b"POST / HTTP/1.1\r\n" + rng.randbytes(rng.randint(1, 500))
            else:
                junk = data + rng.randbytes(rng.randint(1, 500))
            case.writes = self._writes(rng, junk)
            case.labels = ["garbage"] if choice < 3 else case.labels
            return
        if kind == "second head over 64 KiB":
            small = self.seed_request(rng)
            big = self._flood(rng, case, self.seed_request(rng).data, over=True)
            case.writes = self._writes(rng, small.data + big)
            case.labels = [small.label, case.labels[0]]
            return
        if kind == "relayed chunked flood":
            admin = self.seed_request(rng, sqs=False)
            sqs_call = self.seed_request(rng, sqs=True)
            bad = rng.random() < 0.3
            flooded = self._flood(rng, case, self._chunked(rng, case, sqs_call.data, bad=bad))
            case.writes = self._writes(rng, admin.data + flooded)
            case.labels = [admin.label, sqs_call.label]
            case.valid = not bad and len(split_head(flooded)[0]) < FITTING_HEAD
            return
        if kind == "thousands of digits":
            # a Content-Length past what int() converts (4,300 digits), on a fresh or a relayed connection
            head, body = split_head(data)
            value = rng.choice(LONG_LENGTHS)
            case.notes.append(f"Content-Length of {len(value):,} digits ({value[:3]!r}...{value[-7:]!r})")
            stream = join(set_header(head, b"Content-Length", [value]), body)
            if rng.random() < 0.5:
                admin = self.seed_request(rng, sqs=False)
                stream = admin.data + stream
                case.labels.insert(0, admin.label)
            case.writes = self._writes(rng, stream)
            return
        if kind == "stacked":
            for _ in range(rng.randint(2, 3)):
                data = self._request_mutation(rng, case, data)
            case.writes = self._writes(rng, data)
            return
        mutated = self._request_mutation(rng, case, data, kind)
        case.writes = self._writes(rng, mutated)
        case.valid = kind in ("many headers", "huge header") and len(split_head(mutated)[0]) < FITTING_HEAD

    def _request_mutation(self, rng: random.Random, case: Case, data: bytes, kind: str | None = None) -> bytes:
        """One mutation of one request's bytes (``kind``, or one drawn)."""
        kinds = (
            "many headers",
            "huge header",
            "head over 64 KiB",
            "malformed header",
            "bad content-length",
            "bad chunked body",
            "request line",
            "byte flips",
            "byte insertions",
            "byte deletions",
        )
        kind = kind or rng.choice(kinds)
        if kind in ("many headers", "huge header", "head over 64 KiB"):
            many = True if kind == "many headers" else False if kind == "huge header" else None
            return self._flood(rng, case, data, over=kind == "head over 64 KiB", many=many)
        if kind == "malformed header":
            head, body = split_head(data)
            if rng.random() < 0.15:
                case.notes.append("bare LF line ends")
                return head.replace(b"\r\n", b"\n") + b"\n\n" + body
            line = rng.choice(MALFORMED_LINES)
            case.notes.append(f"header line {line[:60]!r}")
            return join(add_lines(head, [line], at_end=rng.random() < 0.5), body)
        if kind == "bad content-length":
            return self._bad_length(rng, case, data)
        if kind == "bad chunked body":
            return self._chunked(rng, case, data, bad=True)
        if kind == "request line":
            return self._request_line(rng, case, data)
        if kind == "byte flips":
            out = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                at = self._position(rng, data)
                out[at] ^= 1 << rng.randrange(8)
            case.notes.append("bits flipped")
            return bytes(out)
        if kind == "byte insertions":
            out = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                piece = rng.choice((b"\r\n", b"\n", b"\r", b"\x00", b":", b" ", b"\t", b"\r\n\r\n", rng.randbytes(3)))
                at = self._position(rng, bytes(out))
                out[at:at] = piece
            case.notes.append("bytes inserted")
            return bytes(out)
        # byte deletions
        out = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            at = self._position(rng, bytes(out))
            del out[at : at + rng.choice((1, 1, 2, 5, 40))]
        case.notes.append("bytes deleted")
        return bytes(out)

    @staticmethod
    def _position(rng: random.Random, data: bytes) -> int:
        """A position in ``data``: in its head half the time (where the framing is)."""
        head_length = len(split_head(data)[0])
        if data and rng.random() < 0.5 and head_length:
            return rng.randrange(head_length)
        return rng.randrange(max(1, len(data)))

    @staticmethod
    def _writes(rng: random.Random, data: bytes) -> list[bytes]:
        """``data`` in one write, or in several (cut at random points)."""
        if len(data) < 2 or rng.random() < 0.6:
            return [data]
        cuts = sorted({rng.randrange(1, len(data)) for _ in range(rng.randint(1, 4))})
        bounds = [0, *cuts, len(data)]
        return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]

    @staticmethod
    def _flood(rng: random.Random, case: Case, data: bytes, over: bool = False, many: bool | None = None) -> bytes:
        """``data`` with a flooded head: many small headers or one huge one; over 64 KiB when ``over``."""
        head, body = split_head(data)
        many = rng.random() < 0.5 if many is None else many
        if many:
            count = rng.choice((4000, 6000)) if over else rng.choice((50, 200, 1000, 2000, 3000))
            lines = [b"X-Fz-%d: %s" % (n, b"v" * rng.randint(1, 12)) for n in range(count)]
            case.notes.append(f"{count} headers")
        else:
            size = rng.choice((66_000, 70_000, 200_000)) if over else rng.choice((4_000, 16_000, 40_000, 60_000))
            lines = [b"X-Fz-Huge: " + b"h" * size]
            case.notes.append(f"a {size:,}-byte header")
        return join(add_lines(head, lines, at_end=rng.random() < 0.5), body)

    @staticmethod
    def _bad_length(rng: random.Random, case: Case, data: bytes) -> bytes:
        head, body = split_head(data)
        choice = rng.randrange(6)
        if choice == 0:
            value = rng.choice(LONG_LENGTHS if rng.random() < 0.4 else BAD_LENGTHS)
            case.notes.append(f"Content-Length {value[:30]!r}{'...' if len(value) > 30 else ''} ({len(value)} bytes)")
            return join(set_header(head, b"Content-Length", [value]), body)
        if choice == 1:
            values = rng.choice(
                (
                    [b"%d" % len(body)] * 2,
                    [b"%d" % len(body), b"%d" % (len(body) + 1)],
                    [b"%d, %d" % (len(body), len(body))],
                )
            )
            case.notes.append(f"Content-Length {values!r}")
            return join(set_header(head, b"Content-Length", values), body)
        if choice == 2:
            case.notes.append("Content-Length and Transfer-Encoding: chunked")
            return join(
                set_header(head, b"Content-Length", [b"%d" % len(body)]) + b"\r\nTransfer-Encoding: chunked", body
            )
        if choice == 3:
            shorter = rng.randint(0, max(0, len(body) - 1))
            case.notes.append(f"Content-Length {shorter} for a body of {len(body)}")
            return join(set_header(head, b"Content-Length", [b"%d" % shorter]), body)
        if choice == 4:
            longer = len(body) + rng.choice((1, 10, 1000, 100_000))
            case.notes.append(f"Content-Length {longer} for a body of {len(body)}")
            return join(set_header(head, b"Content-Length", [b"%d" % longer]), body)
        case.notes.append("no Content-Length")
        return join(set_header(head, b"Content-Length", []), body)

    @staticmethod
    def _chunked(rng: random.Random, case: Case, data: bytes, bad: bool) -> bytes:
        """``data`` with its body chunked (sizes drawn); with ``bad``, one size or the framing broken."""
        head, body = split_head(data)
        head = set_header(head, b"Content-Length", [])
        head = set_header(head, b"Transfer-Encoding", [rng.choice((b"chunked", b"chunked", b"Chunked", b" chunked "))])
        pieces: list[bytes] = []
        at = 0
        while at < len(body):
            size = rng.choice((1, 7, 100, 4096, 70_000))
            pieces.append(body[at : at + size])
            at += size
        chunks = [b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces]
        end = b"0\r\n\r\n"
        if not bad:
            return join(head, b"".join(chunks) + end)
        choice = rng.randrange(6)
        if choice == 0 and chunks:
            n = rng.randrange(len(chunks))
            bad_size = rng.choice(BAD_CHUNK_SIZES)
            chunks[n] = bad_size + b"\r\n" + pieces[n] + b"\r\n"
            case.notes.append(f"chunk size {bad_size[:30]!r} ({len(bad_size)} bytes)")
        elif choice == 1 and chunks:
            n = rng.randrange(len(chunks))
            chunks[n] = b"%x\r\n%s\r\n" % (len(pieces[n]) + rng.choice((1, 100, 10**6)), pieces[n])
            case.notes.append("a chunk size larger than its data")
        elif choice == 2:
            end = b""
            case.notes.append("no last chunk")
        elif choice == 3:
            end = b"0\r\nX-Trailer: " + b"t" * rng.choice((10, 70_000)) + b"\r\n\r\n"
            case.notes.append("a trailer")
        elif choice == 4 and chunks:
            n = rng.randrange(len(chunks))
            chunks[n] = b"%x\r\n%s" % (len(pieces[n]), pieces[n])  # no CRLF after the data
            case.notes.append("no CRLF after a chunk's data")
        else:
            chunks = [b"%x;ext=%s\r\n%s\r\n" % (len(p), b"e" * rng.choice((1, 100, 70_000)), p) for p in pieces]
            case.notes.append("chunk extensions")
        return join(head, b"".join(chunks) + end)

    @staticmethod
    def _request_line(rng: random.Random, case: Case, data: bytes) -> bytes:
        line, sep, rest = data.partition(b"\r\n")
        method, _, remainder = line.partition(b" ")
        target, _, version = remainder.rpartition(b" ")
        choice = rng.randrange(4)
        if choice == 0:
            method = rng.choice(METHODS)
            case.notes.append(f"method {method[:20]!r}")
        elif choice == 1:
            target = rng.choice(TARGETS)
            case.notes.append(f"target {target[:30]!r} ({len(target)} bytes)")
        elif choice == 2:
            version = rng.choice(VERSIONS)
            case.notes.append(f"version {version!r}")
        else:
            head, body = split_head(data)
            value = rng.choice((b"close", b"keep-alive", b"close, close", b"\xff"))
            case.notes.append(f"Connection: {value!r}")
            return join(set_header(head, b"Connection", [value]), body)
        return method + b" " + target + b" " + version + sep + rest


# ------------------------------------------------------------------------------------------------ the oracle


@dataclass
class Expected:
    """What the bytes of a case hold, read as a server would with h11: ``complete`` requests (their ``methods``),
    then ``tail``: ``clean`` (nothing more), ``partial`` (a request begun) or ``invalid`` (bytes h11 refuses)."""

    complete: int
    methods: list[bytes]
    tail: str
    lenient: int | None = None
    """The index of an answer to a ``HEAD`` h11 refused: the server may answer it with a body or without."""


def expected(data: bytes) -> Expected:
    """:class:`Expected` for ``data`` (h11's server side, with no limit on a head's size: the server's 64 KiB cap is
    its own to apply). A request h11 refuses that begins with ``HEAD`` may be answered with or without a body
    (:attr:`Expected.lenient`)."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=len(data) + 1)
    conn.receive_data(data)
    methods: list[bytes] = []
    complete = 0
    start = data  # where the request being read begins
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError:
            lenient = complete if start.startswith(b"HEAD ") else None
            return Expected(complete, methods[:complete], "invalid", lenient)
        if event is h11.NEED_DATA or event is h11.PAUSED:
            return Expected(complete, methods, "partial" if conn.trailing_data[0] else "clean")
        if isinstance(event, h11.Request):
            methods.append(event.method)
        elif isinstance(event, h11.EndOfMessage):
            complete += 1
            if conn.our_state is not h11.SEND_RESPONSE:
                return Expected(complete, methods, "clean" if not conn.trailing_data[0] else "invalid")
            try:
                conn.send(h11.Response(status_code=200, headers=[("content-length", "0")]))
                conn.send(h11.EndOfMessage())
                conn.start_next_cycle()
            except h11.LocalProtocolError:  # Connection: close, HTTP/1.0: nothing after it is read
                return Expected(complete, methods, "clean" if not conn.trailing_data[0] else "invalid")
            start = conn.trailing_data[0]
        elif isinstance(event, h11.ConnectionClosed):
            return Expected(complete, methods, "clean")


class Answers:
    """The answers on one connection, read strictly with h11's client side: ``statuses``, ``bodies``, ``complete``
    (answers read whole), ``problem`` (``(class, detail)`` of the first failure) and ``midway`` (an answer begun and
    not finished)."""

    def __init__(self, methods: Sequence[bytes], lenient: int | None = None) -> None:
        self.methods = [m if re.fullmatch(rb"[A-Z]{1,20}", m) else b"GET" for m in methods]
        self.lenient = lenient
        self.conn = h11.Connection(h11.CLIENT)
        self.statuses: list[int] = []
        self.bodies: list[bytes] = []
        self.complete = 0
        self.problem: tuple[str, str] | None = None
        self.midway = False
        self._framed = True
        self._declared = 0  # the Content-Length of the answer being read
        self._ignoring = False
        self._body = bytearray()
        self._ask()

    def _ask(self) -> None:
        method = self.methods[self.complete] if self.complete < len(self.methods) else b"GET"
        self.conn.send(h11.Request(method=method, target="/", headers=[("Host", "fz")]))
        self.conn.send(h11.EndOfMessage())

    def feed(self, data: bytes) -> None:
        """Bytes received (``b""``: the server closed the connection)."""
        if self.problem is not None or self._ignoring:
            return
        if not data and not self.midway and not self.conn.trailing_data[0]:
            return  # closed between answers (or before the first): allowed
        try:
            self.conn.receive_data(data)
        except RuntimeError as exc:  # data after the close-delimited state: h11 refuses more
            self.problem = ("length mismatch", f"bytes after the connection's last answer: {exc}")
            return
        self._drain()

    def _drain(self) -> None:
        while self.problem is None:
            pending = self.conn.trailing_data[0]
            try:
                event = self.conn.next_event()
            except h11.RemoteProtocolError as exc:
                if self.complete == self.lenient and self.midway and not self._body and "complete message" in str(exc):
                    self.complete += 1  # a HEAD (that h11 refused) answered without a body, then closed: right
                    self.bodies.append(b"")
                    self.midway = False
                    return
                last = self.complete - 1
                if (
                    "expecting EOF" in str(exc)
                    and 0 <= last < len(self.methods)
                    and self.methods[last] == b"HEAD"
                    and self.statuses[-1] >= 400
                    and len(pending) <= self._declared
                ):  # a refusal of a HEAD (before it was parsed) with its body, then closed: not stray bytes
                    self._ignoring = True
                    return
                kind, detail = self._classify(str(exc), pending)
                after = (
                    f"after {len(self.statuses)} answer(s), the last HTTP {self.statuses[-1]}"
                    if self.statuses
                    else "before any answer"
                )
                self.problem = (kind, f"{detail} ({after})")
                return
            if event is h11.NEED_DATA or event is h11.PAUSED or isinstance(event, h11.ConnectionClosed):
                if event is h11.PAUSED and self.conn.their_state is h11.SWITCHED_PROTOCOL:
                    status = self.statuses[-1] if self.statuses else 0
                    self.problem = ("malformed answer", f"HTTP {status} to a CONNECT or Upgrade: a tunnel, by HTTP")
                elif event is h11.PAUSED:
                    self.problem = ("length mismatch", "bytes after an answer that closes the connection")
                return
            if isinstance(event, h11.InformationalResponse):
                continue
            if isinstance(event, h11.Response):
                self.midway = True
                self.statuses.append(event.status_code)
                names = {name for name, _ in event.headers}
                method = self.methods[self.complete] if self.complete < len(self.methods) else b"GET"
                bodiless = method == b"HEAD" or event.status_code in (204, 304)
                self._framed = bodiless or b"content-length" in names or b"transfer-encoding" in names
                lengths = [value for name, value in event.headers if name == b"content-length"]
                self._declared = int(lengths[0]) if lengths and lengths[0].isdigit() and len(lengths[0]) < 19 else 0
                self._body = bytearray()
            elif isinstance(event, h11.Data):
                self._body += event.data
            elif isinstance(event, h11.EndOfMessage):
                self.midway = False
                self.complete += 1
                self.bodies.append(bytes(self._body))
                if not self._framed:
                    self.problem = ("malformed answer", f"answer {self.complete} has no Content-Length")
                    return
                if self.conn.their_state is h11.DONE and self.conn.our_state is h11.DONE:
                    self.conn.start_next_cycle()
                    self._ask()

    def stray(self) -> bytes:
        """Bytes received after the last whole answer that cannot begin another one (none: ``b""``)."""
        pending = self.conn.trailing_data[0]
        if self.problem is not None or self._ignoring or self.midway or not pending:
            return b""
        return b"" if pending.startswith(b"HTTP/") or b"HTTP/".startswith(pending) else pending

    @staticmethod
    def _classify(message: str, pending: bytes) -> tuple[str, str]:
        if "expecting EOF" in message:
            return ("length mismatch", f"{message}: stray bytes {pending[:40]!r} after a body")
        if "without sending complete message body" in message:
            return ("length mismatch", message)
        if pending and not pending.startswith(b"HTTP/") and not b"HTTP/".startswith(pending[:5]):
            return ("length mismatch", f"{message}: stray bytes {pending[:40]!r} where an answer should begin")
        return ("malformed answer", message)


@dataclass
class Outcome:
    """What happened on one case's connection: the failure ``classes`` (empty: it passed) with a ``detail`` each,
    ``statuses`` of the answers, the first :data:`KEPT_BYTES` bytes ``received``, whether the server ``closed`` it
    (``reset``: with a reset), the ``seconds`` it took."""

    case: Case
    classes: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    received: bytes = b""
    closed: bool = False
    reset: bool = False
    seconds: float = 0.0
    started: float = 0.0
    ended: float = 0.0

    def fail(self, kind: str, detail: str) -> None:
        if kind not in self.classes:
            self.classes.append(kind)
            self.details.append(detail)


async def run_case(port: int, case: Case, margin_s: float, uuids: Sequence[bytes] = ()) -> Outcome:
    """Send ``case`` on a connection of its own and judge what comes back (module docstring)."""
    data = case.data
    if UUID_SLOT in data and uuids:
        case.writes = [w.replace(UUID_SLOT, uuids[-1]) for w in case.writes]
        data = case.data
    want = expected(data)
    answers = Answers(want.methods, want.lenient)
    outcome = Outcome(case, started=time.monotonic())
    deadline_s = REQUEST_TIMEOUT_S + margin_s
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    reset = False
    try:
        try:
            await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", port)), deadline_s)
        except (OSError, TimeoutError) as exc:
            outcome.fail("not answered or closed in time", f"could not connect: {exc!r}")
            return outcome
        try:
            for chunk in case.writes:
                await asyncio.wait_for(loop.sock_sendall(sock, chunk), deadline_s)
            if case.half_close:
                sock.shutdown(socket.SHUT_WR)
        except (ConnectionResetError, BrokenPipeError):
            pass  # the server closed while the request was still going out: what it answered is read below
        except TimeoutError:
            pass  # the server stopped reading (flow control): judged by what it answers in time
        sent_at = time.monotonic()
        early = want.tail == "clean" and want.complete >= 1
        while True:
            left = sent_at + deadline_s - time.monotonic()
            if left <= 0:
                break
            try:
                chunk = await asyncio.wait_for(loop.sock_recv(sock, 262_144), left)
            except TimeoutError:
                break
            except ConnectionResetError:
                reset = outcome.reset = True
                break
            answers.feed(chunk)
            if len(outcome.received) < KEPT_BYTES:
                outcome.received += chunk[: KEPT_BYTES - len(outcome.received)]
            if not chunk:
                outcome.closed = True
                break
            if answers.problem is not None:
                break
            if early and answers.complete >= want.complete and not answers.midway:
                break
    finally:
        sock.close()
    outcome.ended = time.monotonic()
    outcome.seconds = outcome.ended - outcome.started
    outcome.statuses = answers.statuses
    for status, body in zip(answers.statuses, answers.bodies, strict=False):
        if status >= 500 and INJECTED not in body:
            outcome.fail("5xx", f"HTTP {status} {body[:200]!r}")
    if answers.problem is not None:
        outcome.fail(*answers.problem)
    elif answers.stray():
        outcome.fail("length mismatch", f"stray bytes {answers.stray()[:40]!r} after answer {answers.complete}")
    if reset:
        outcome.fail("reset", f"connection reset after {answers.complete} answer(s) {answers.statuses}")
    if case.valid and not case.half_close and answers.problem is None:
        refused = [n for n, body in enumerate(answers.bodies, 1) if body.startswith(b"Invalid HTTP request")]
        if refused:
            outcome.fail(
                "valid request refused",
                f"answer {refused[0]} of {want.complete} valid request(s) was HTTP {answers.statuses[refused[0] - 1]} "
                f"{answers.bodies[refused[0] - 1]!r}; answers {answers.statuses}",
            )
        elif outcome.closed and answers.complete < want.complete:
            outcome.fail(
                "valid request refused",
                f"closed after {answers.complete} answer(s) {answers.statuses} of {want.complete} valid request(s)",
            )
    if not reset and not outcome.closed and answers.problem is None:
        needed = max(want.complete, 1 if data else 0)
        if answers.complete < needed or answers.midway:
            outcome.fail(
                "not answered or closed in time",
                f"{answers.complete} answer(s) {answers.statuses} of {want.complete} complete request(s) "
                f"({want.tail} tail) and the connection still open {deadline_s:.1f} s after the last byte",
            )
    return outcome


# ------------------------------------------------------------------------------------------------ the run


class _Tracebacks(logging.Handler):
    """ERROR records with a traceback, each with the cases whose connections were open when it was logged (the
    handler runs in the server's thread: ``running`` is shared under ``guard``)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[tuple[logging.LogRecord, list[Case]]] = []
        self.running: dict[int, Case] = {}
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[0] is not None:
            with self.guard:
                running = list(self.running.values())
            self.records.append((record, running))


def _ask(port: int, request: bytes, timeout_s: float = 10.0) -> tuple[int, bytes]:
    """One well-formed request on a connection of its own (the run's own calls): ``(status, body)``."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(request)
        answers = Answers(expected(request).methods)
        while answers.complete < 1 and answers.problem is None:
            chunk = sock.recv(65536)
            answers.feed(chunk)
            if not chunk:
                break
    if answers.complete < 1:
        raise OSError(f"no answer to {request[:60]!r}: {answers.problem}")
    return answers.statuses[0], answers.bodies[0]


def _json_call(action: str, payload: dict[str, Any]) -> bytes:
    headers = [("Host", HOST), ("Content-Type", SQS_JSON_CT), ("X-Amz-Target", f"AmazonSQS.{action}")]
    return http_request("POST", "/", [*headers, ("Authorization", AUTH)], json.dumps(payload).encode())


def seed_state(port: int) -> None:
    """Create the seeded queues (a dead-letter pair for each kind) and put messages in them, in flight or not;
    what exists already stays (run again after a reset)."""
    arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:"
    for name in SEEDED_QUEUES:
        attributes: dict[str, str] = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
        if name.startswith("fz-std") or name.startswith("fz-fifo"):
            target = "fz-dlq.fifo" if name.endswith(".fifo") else "fz-dlq"
            attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": arn + target, "maxReceiveCount": 2})
        if name.startswith("fz-fifo"):
            attributes["ContentBasedDeduplication"] = "true"
        _ask(port, _json_call("CreateQueue", {"QueueName": name, "Attributes": attributes}))
    for name in ("fz-std", "fz-fifo.fifo"):
        url = f"http://{HOST}/{ACCOUNT}/{name}"
        for n in range(3):
            extra = {"MessageGroupId": "g1"} if name.endswith(".fifo") else {}
            _ask(port, _json_call("SendMessage", {"QueueUrl": url, "MessageBody": f"seed {n}", **extra}))
        _ask(port, _json_call("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 1}))


def _undo(port: int) -> None:
    """What a mutated admin request may have switched on and must not last: fault rules, realism."""
    _ask(port, http_request("DELETE", "/_sqsemu/faults", [("Host", HOST)]))
    _ask(port, http_request("PUT", "/_sqsemu/realism", [("Host", HOST)], b'{"spec": "off"}'))


@dataclass
class Report:
    """A run: ``cases`` and ``requests`` run (requests: the seed requests in all cases; a mutation may make more or
    fewer of them), the answers' ``statuses``, the mutation ``kinds`` and seed ``labels`` seen, the ``failures``
    (the outcomes of the cases that failed), ``tracebacks`` (each with the cases running when it was logged),
    ``alive`` (the server answered ``GET /health`` at the end), ``seconds`` (wall time)."""

    seed: int
    cases: int = 0
    requests: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    kinds: set[str] = field(default_factory=set)
    labels: set[str] = field(default_factory=set)
    failures: list[Outcome] = field(default_factory=list)
    tracebacks: list[tuple[logging.LogRecord, list[Case]]] = field(default_factory=list)
    alive: bool = False
    seconds: float = 0.0

    def add(self, outcome: Outcome) -> None:
        """Count ``outcome`` (kept whole only when it failed)."""
        self.cases += 1
        self.requests += len(outcome.case.labels)
        self.statuses.update(outcome.statuses)
        self.kinds.add(outcome.case.kind)
        self.labels.update(outcome.case.labels)
        if outcome.classes:
            self.failures.append(outcome)

    def failed(self, kind: str) -> list[Outcome]:
        """The outcomes that failed with ``kind`` (a :data:`CLASSES` entry other than ``traceback``), by case."""
        return sorted((o for o in self.failures if kind in o.classes), key=lambda o: o.case.index)

    def counts(self) -> dict[str, tuple[int, int]]:
        """``{class: (cases, requests)}`` of each failure class (tracebacks: records, and the requests running)."""
        out: dict[str, tuple[int, int]] = {}
        for kind in CLASSES:
            if kind == "traceback":
                running = {case.index: len(case.labels) for _, cases in self.tracebacks for case in cases}
                out[kind] = (len(self.tracebacks), sum(running.values()))
            else:
                failed = self.failed(kind)
                out[kind] = (len(failed), sum(len(outcome.case.labels) for outcome in failed))
        return out

    def summary(self, examples: int = 4) -> str:
        """Figures and, per failure class, its count and its kinds of failure (``examples`` at most, the most
        frequent first), each with a count and one example case."""
        statuses = self.statuses
        lines = [
            f"wire fuzz: seed {self.seed}, {self.cases:,} cases, {self.requests:,} requests in "
            f"{self.seconds:,.1f} s; server alive at the end: {self.alive}",
            "answers by status: " + ", ".join(f"{status}: {count:,}" for status, count in sorted(statuses.items())),
            "failures (cases, requests in them):",
        ]
        for kind, (failed_cases, requests) in self.counts().items():
            if kind == "traceback":
                lines.append(f"  {kind}: {failed_cases:,} logged, {requests:,} requests on the connections open then")
            else:
                lines.append(f"  {kind}: {failed_cases:,} cases, {requests:,} requests")
        kinds = collections.Counter(outcome.case.kind for outcome in self.failures)
        if kinds:
            lines.append("failing cases by mutation: " + ", ".join(f"{k}: {n}" for k, n in kinds.most_common()))
        for kind in CLASSES:
            if kind == "traceback":
                by_kind: dict[str, list[tuple[logging.LogRecord, list[Case]]]] = {}
                for record, cases in self.tracebacks:
                    by_kind.setdefault(crash_kind(record), []).append((record, cases))
                for where, found in sorted(by_kind.items(), key=lambda item: -len(item[1]))[:examples]:
                    record, cases = found[0]
                    text = logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
                    lines.append(f"\n--- traceback x{len(found)}: {where} ({record.getMessage()})\n{text[-2500:]}")
                    lines.extend("  running: " + case.describe(300) for case in cases[:3])
                continue
            groups: dict[str, list[Outcome]] = {}
            for outcome in self.failed(kind):
                detail = outcome.details[outcome.classes.index(kind)]
                groups.setdefault(signature(detail), []).append(outcome)
            ranked = sorted(groups.items(), key=lambda item: -len(item[1]))
            for sig, members in ranked[:examples]:
                first = members[0]
                detail = first.details[first.classes.index(kind)]
                lines.append(f"\n--- {kind} x{len(members)}: {sig}\n  {detail}\n  " + first.case.describe())
                closing = "closed" if first.closed else "reset" if first.reset else "left open"
                lines.append(f"  answered ({closing} after {first.seconds:.1f} s): {shorten(first.received, 400)}")
            if len(ranked) > examples:
                lines.append(f"\n--- {kind}: {len(ranked) - examples} more kind(s) not shown")
        return "\n".join(lines)


def crash_kind(record: logging.LogRecord) -> str:
    """A logged traceback by its exception type and innermost frame (``ValueError at .../limits.py:52``)."""
    if not record.exc_info or record.exc_info[0] is None:
        return record.getMessage()
    frames = traceback.extract_tb(record.exc_info[2])
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
    return f"{record.exc_info[0].__name__} at {where}"


def signature(detail: str) -> str:
    """A failure's detail with its numbers and quoted bytes left out, to group failures of one kind."""
    text = re.sub(r"b'(?:[^'\\]|\\.)*'|b\"(?:[^\"\\]|\\.)*\"", "b'...'", detail)
    text = re.sub(r"\[[0-9, ]*\]", "[...]", text)
    return re.sub(r"HTTP \d{3}|\d+(?:\.\d+)?", lambda m: m[0] if m[0].startswith("HTTP") else "N", text)[:160]


class WireServer:
    """A real server for a wire run (``ServerThread``, manual clock, 2-second read deadline), with the Lambda
    function the seeds name registered and the seeded queues made; its loggers' tracebacks are collected."""

    def __init__(self) -> None:
        self.thread = ServerThread(Config(host="127.0.0.1", clock="manual", request_timeout=REQUEST_TIMEOUT_S))
        self.watch = _Tracebacks()
        self._loggers = [logging.getLogger(name) for name in ("sqsemu", "uvicorn", "uvicorn.error")]

    def __enter__(self) -> WireServer:
        for log in self._loggers:
            log.addHandler(self.watch)
        self.thread.start()
        self.thread.app.event_sources.register_function(FUNCTION, lambda event, context: None)  # type: ignore[attr-defined]
        seed_state(self.thread.port)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.thread.stop()
        finally:
            for log in self._loggers:
                log.removeHandler(self.watch)

    @property
    def port(self) -> int:
        return self.thread.port

    def alive(self) -> bool:
        """Whether ``GET /health`` is answered 200 ``"status": "ok"`` (5 s at most)."""
        try:
            status, body = _ask(self.port, http_request("GET", "/health", [("Host", HOST)]), 5.0)
        except OSError:
            return False
        return status == 200 and b'"status":"ok"' in body.replace(b" ", b"")


async def _maintain(port: int, stop: asyncio.Event) -> None:
    """Every half second: the manual clock 21 s on (long polls end); every 3 s: fault rules and realism undone,
    the seeded queues made again (a mutated reset may have deleted them). Its calls use blocking sockets, each in a
    worker thread."""
    advance = http_request("POST", "/_sqsemu/clock/advance", [("Host", HOST), ("Content-Type", JSON_CT)],
                           b'{"seconds": 21}')  # fmt: skip
    ticks = 0
    while not stop.is_set():
        try:
            await asyncio.to_thread(_ask, port, advance)
            if ticks % 6 == 5:
                await asyncio.to_thread(_undo, port)
                await asyncio.to_thread(seed_state, port)
        except OSError:
            pass  # judged by the health check at the end
        ticks += 1
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except TimeoutError:
            pass


async def run_cases(
    port: int,
    cases: Iterator[Case],
    concurrency: int,
    margin_s: float,
    report: Report,
    watch: _Tracebacks,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Run ``cases``, ``concurrency`` connections at a time, with the maintenance task beside them; each outcome is
    added to ``report``, each case is in ``watch.running`` while its connection is open."""
    uuids: list[bytes] = []
    stop = asyncio.Event()
    maintenance = asyncio.create_task(_maintain(port, stop))
    gate = asyncio.Semaphore(concurrency)

    broken: list[tuple[Case, BaseException]] = []  # the harness's own errors: raised after the run

    async def one(case: Case) -> None:
        async with gate:
            with watch.guard:
                watch.running[case.index] = case
            try:
                outcome = await run_case(port, case, margin_s, uuids)
            except Exception as exc:
                broken.append((case, exc))
                return
            finally:
                with watch.guard:
                    del watch.running[case.index]
        report.add(outcome)
        if progress is not None:
            progress(report.cases)

    async def harvest() -> None:  # mapping UUIDs for the Lambda seeds: from a list of the function's mappings
        listing = http_request("GET", f"{_MAPPINGS}/?FunctionName={FUNCTION}", [("Host", HOST)])
        try:
            _, body = await asyncio.to_thread(_ask, port, listing)
        except OSError:
            return
        uuids.extend(_UUID_RE.findall(body)[-4:])
        del uuids[:-8]

    try:
        pending: set[asyncio.Task[None]] = set()
        for n, case in enumerate(cases):
            if n % 50 == 0:
                await harvest()
            while len(pending) >= concurrency * 2:
                _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            pending.add(asyncio.create_task(one(case)))
        if pending:
            await asyncio.wait(pending)
    finally:
        stop.set()
        await maintenance
    if broken:
        case, exc = broken[0]
        raise RuntimeError(f"the wire fuzz harness failed on {len(broken)} case(s), first {case.describe()}") from exc


def run_wire(
    cases: int,
    seed: int,
    concurrency: int = 24,
    margin_s: float = 3.0,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """``cases`` cases of ``Mutator(seed)`` against a fresh :class:`WireServer`; the :class:`Report`."""
    mutator = Mutator(seed)
    started = time.monotonic()
    report = Report(seed)
    with WireServer() as server:
        made = (mutator.case(i) for i in range(cases))
        asyncio.run(run_cases(server.port, made, concurrency, margin_s, report, server.watch, progress))
        report.alive = server.alive()
        report.tracebacks = list(server.watch.records)
    report.seconds = time.monotonic() - started
    return report


def run_one(seed: int, index: int, margin_s: float = 3.0) -> Outcome:
    """Case ``index`` of ``Mutator(seed)`` alone, on a fresh :class:`WireServer` (to look at one failure again)."""
    case = Mutator(seed).case(index)
    with WireServer() as server:
        return asyncio.run(run_case(server.port, case, margin_s))
