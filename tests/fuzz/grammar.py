"""The request grammar of the fuzz tests: JSON 1.0, AWS Query and admin requests, valid or not.

One grammar, two sources of choices: every generator takes a :class:`Draw` and asks it for choices
(``choice``, ``integer``, ``text``...). :class:`RandomDraw` answers from ``random.Random`` (fast: ``bench/fuzz.py``
runs a million requests with it); :class:`HypothesisDraw` answers from Hypothesis' ``data.draw`` (the pytest fuzz
tests, which get shrinking and a reproducible, derandomized run). Both walk the same generators, so the bench and
the test suite explore the same space.

The grammar reads the real tables (``sqsemu.protocol.shapes.REQUESTS``, each action's ``MEMBERS`` with their JSON
names, Query keys and kinds; ``sqsemu.engine.attributes.ALL_NAMES``), so a new action or member is fuzzed without a
change here. Values are mostly plausible (known queue URLs, real receipt handles harvested from earlier answers, in-
range integers) so requests get deep into the engine, and otherwise hostile: ill-typed members, integers of 20 to
5,000 digits, non-ASCII digits, deeply nested JSON, control characters, U+FFFE/U+FFFF, lone surrogates (JSON escapes,
percent-encoded UTF-8 of surrogates), Query list indexes such as ``0``, ``²`` or 5,000 nines, percent-encoded junk.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import quote, urlencode

from sqsemu.engine.attributes import ALL_NAMES, FIFO_ONLY, SETTABLE
from sqsemu.protocol.shapes import REQUESTS, Kind, Member

T = TypeVar("T")

ACCOUNT = "000000000000"
REGION = "us-east-1"
HOST = "localhost:9324"
BASE = f"http://{HOST}"
ACTIONS = sorted(REQUESTS)
AUTH_TEMPLATE = (
    "AWS4-HMAC-SHA256 Credential={key}/20240101/{region}/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature=0"
)

# Characters that break naive writers and parsers: XML-illegal controls, XML markup, CR, U+FFFE/U+FFFF, the edges of
# the XML Char ranges, astral characters, digits of other scripts, percent and plus (Query encoding), dots (Query key
# separators), quotes and backslashes (JSON).
SPECIAL_CHARS = (
    "\x00\x01\x08\x0b\x0c\x0e\x1f\x7f\x85\t\n\r &<>\"'%+=.;,/\\?#[]{}:"
    "\ud7ff\ue000\ufffd\ufffe\uffff\U00010000\U0010ffff\U0001f600"
    "²³¹١٢٣①߀०𝟘é中\u200b\u202e\u0301"
)
PLAIN_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
LONE_SURROGATES = "\ud800\udbff\udc00\udfff"


class Raw(str):
    """JSON text written as it is (a number of 5,000 digits, ``1e400``, ``NaN``, nested brackets)."""


class Draw(Protocol):
    """Where the grammar's choices come from."""

    def integer(self, low: int, high: int) -> int:
        """An integer from ``low`` to ``high`` inclusive."""

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options`` (not empty)."""

    def text(self, max_size: int) -> str:
        """A string of at most ``max_size`` characters, biased to hostile ones (``SPECIAL_CHARS``)."""

    def data(self, max_size: int) -> bytes:
        """Arbitrary bytes, at most ``max_size``."""


class RandomDraw:
    """Choices from ``random.Random(seed)``: fast, for long runs."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.random.randrange(len(options))]

    def text(self, max_size: int) -> str:
        rnd = self.random
        size = min(max_size, rnd.choice((0, 1, 2, 3, 5, 8, 13, 30, 64, max_size)))
        mode = rnd.randrange(4)
        if mode == 0:  # plain
            return "".join(rnd.choice(PLAIN_CHARS) for _ in range(size))
        if mode == 1:  # hostile characters only
            return "".join(rnd.choice(SPECIAL_CHARS) for _ in range(size))
        if mode == 2:  # any code point but surrogates
            out = []
            for _ in range(size):
                cp = rnd.choice(
                    (rnd.randrange(0x80), rnd.randrange(0x800), rnd.randrange(0x10000), rnd.randrange(0x110000))
                )
                out.append(chr(cp) if not 0xD800 <= cp <= 0xDFFF else "\ufffe")
            return "".join(out)
        text = "".join(
            rnd.choice(PLAIN_CHARS) if rnd.random() < 0.8 else rnd.choice(SPECIAL_CHARS) for _ in range(size)
        )
        if text and rnd.random() < 0.1:  # now and then a lone surrogate (JSON: an escape; Query: its UTF-8 bytes)
            at = rnd.randrange(len(text))
            text = text[:at] + rnd.choice(LONE_SURROGATES) + text[at + 1 :]
        return text

    def data(self, max_size: int) -> bytes:
        return self.random.randbytes(self.random.randint(0, max_size))


class HypothesisDraw:
    """Choices from Hypothesis (``st.data()``): shrinkable and reproducible, for the pytest fuzz tests."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self._st = st
        self._data = data
        self._alphabet = st.one_of(
            st.sampled_from(PLAIN_CHARS),
            st.sampled_from(SPECIAL_CHARS),
            st.characters(),
            st.sampled_from(LONE_SURROGATES),
        )

    def integer(self, low: int, high: int) -> int:
        return int(self._data.draw(self._st.integers(low, high)))

    def choice(self, options: Sequence[T]) -> T:
        return options[self.integer(0, len(options) - 1)]

    def text(self, max_size: int) -> str:
        return str(self._data.draw(self._st.text(alphabet=self._alphabet, max_size=max_size)))

    def data(self, max_size: int) -> bytes:
        return bytes(self._data.draw(self._st.binary(max_size=max_size)))


# ------------------------------------------------------------------------------------------------ shared state


@dataclass
class State:
    """What earlier answers revealed, so later requests can address real things (kept short: newest last)."""

    queue_names: list[str] = field(default_factory=list)
    receipts: dict[str, list[str]] = field(default_factory=dict)
    """Receipt handles by the name of the queue they were received from."""
    task_handles: list[str] = field(default_factory=list)

    @staticmethod
    def _remember(items: list[str], item: str, most: int = 64) -> None:
        if item not in items:
            items.append(item)
            if len(items) > most:
                del items[0]

    def add_queue(self, name: str) -> None:
        self._remember(self.queue_names, name, 256)

    def drop_queue(self, name: str) -> None:
        if name in self.queue_names:
            self.queue_names.remove(name)
        self.receipts.pop(name, None)

    def add_receipt(self, queue: str, handle: str) -> None:
        self._remember(self.receipts.setdefault(queue, []), handle, 16)
        if len(self.receipts) > 64:
            del self.receipts[next(iter(self.receipts))]

    def any_receipt(self, d: Draw) -> str | None:
        """A receipt handle of any queue, or None when none is known."""
        if not self.receipts:
            return None
        return d.choice(self.receipts[d.choice(list(self.receipts))])

    def add_task(self, handle: str) -> None:
        self._remember(self.task_handles, handle)


@dataclass
class FuzzRequest:
    """One HTTP request for the in-process app. ``kind`` is ``json``, ``query`` or ``admin``."""

    kind: str
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    query_string: bytes = b""
    label: str = ""
    action: str = ""
    queue: str | None = None
    """The name of the (default-account) queue the request's ``QueueUrl`` names, if any."""

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None


# ------------------------------------------------------------------------------------------------ values


class Biased:
    """A :class:`Draw` with a hostility level: ``bad`` is the percent chance that each decision of one request
    takes its hostile branch (chosen per request from ``BAD_LEVELS``, so some requests are almost valid and get
    deep into the engine while others are junk from top to bottom)."""

    def __init__(self, d: Draw, bad: int) -> None:
        self.d = d
        self.bad = bad

    def integer(self, low: int, high: int) -> int:
        return self.d.integer(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return self.d.choice(options)

    def text(self, max_size: int) -> str:
        return self.d.text(max_size)

    def data(self, max_size: int) -> bytes:
        return self.d.data(max_size)


# Hypothesis favours the first option of a choice (half the examples take it): it is a level that finds bugs.
BAD_LEVELS = (25, 5, 60, 1, 10, 0, 2)


def biased(d: Draw) -> Biased:
    """``d`` with a hostility level drawn from ``BAD_LEVELS`` (biased towards the low ones)."""
    return d if isinstance(d, Biased) else Biased(d, d.choice(BAD_LEVELS))


def _pct(d: Draw, p: int) -> bool:
    """True with probability ``p`` percent."""
    return d.integer(0, 99) < p


def hostile(d: Draw) -> bool:
    """True when this decision takes its hostile branch (``Biased.bad`` percent of the time; 20 for a bare Draw)."""
    return d.integer(0, 99) < (d.bad if isinstance(d, Biased) else 20)


def huge_digits(d: Draw) -> str:
    return d.choice(("1", "9", "0")) * d.choice((19, 20, 25, 40, 100, 4299, 4300, 4301, 5000))


def token(d: Draw, low: int = 1, high: int = 12) -> str:
    return "".join(d.choice(PLAIN_CHARS) for _ in range(d.integer(low, high)))


def queue_name(d: Draw, state: State, new: bool = False) -> str:
    """A known queue's name (a new valid one when ``new``), or a hostile one."""
    if hostile(d):
        return d.choice(("q" * d.choice((80, 81, 300)), "", "a.b", "x.fifo", d.text(40)))
    if new or not state.queue_names or _pct(d, 10):
        return "fz-" + token(d) + (".fifo" if _pct(d, 30) else "")
    return d.choice(state.queue_names)


def queue_url(d: Draw, state: State) -> str:
    name = queue_name(d, state)
    if not hostile(d):
        return f"{BASE}/{ACCOUNT}/{name}"
    return d.choice(
        (
            name,
            f"https://sqs.{REGION}.amazonaws.com/{d.choice((ACCOUNT, '111122223333', 'x', ''))}/{name}",
            f"{BASE}/{d.text(8)}/{name}/{d.text(4)}",
            f"{BASE}/{ACCOUNT}/fz-gone-{token(d)}",
            d.text(60),
        )
    )


def arn(d: Draw, state: State) -> str:
    if not hostile(d):
        return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue_name(d, state)}"
    return d.choice(
        (
            f"arn:aws:sqs:{d.text(10)}:{d.text(12)}:{d.text(10)}",
            "arn:aws:sqs:::",
            "arn:" + d.text(20),
            f"arn:aws:sqs:eu-west-1:{ACCOUNT}:fz-std",
            d.text(40),
        )
    )


def ill_typed(d: Draw, depth: int = 0) -> Any:
    """A JSON value of any type, sometimes nested or raw."""
    r = d.integer(0, 11 if depth < 3 else 7)
    if r == 0:
        return None
    if r == 1:
        return d.choice((True, False))
    if r == 2:
        return d.integer(-(2**63), 2**64 - 1)
    if r == 3:
        return d.choice((0.5, -0.0, 1e22, 1e308, 5.0))
    if r == 4:
        return Raw(d.choice(("1e400", "-1e400", "NaN", "Infinity", "1" * 21, "-" + "9" * 30, huge_digits(d))))
    if r in (5, 6, 7):
        return d.text(20)
    if r in (8, 9):
        return [ill_typed(d, depth + 1) for _ in range(d.integer(0, 3))]
    if r == 10:
        return {d.text(8): ill_typed(d, depth + 1) for _ in range(d.integer(0, 3))}
    return deep_json(d)


def deep_json(d: Draw) -> Raw:
    """Nested arrays or objects, from harmless depths to far past any recursion limit."""
    n = d.choice((2, 50, 99, 100, 101, 254, 256, 999, 1000, 1100, 5000))
    if _pct(d, 50):
        return Raw("[" * n + "]" * n)
    return Raw('{"a":' * n + "1" + "}" * n)


PLAUSIBLE_INTS = {
    "DelaySeconds": (0, 5),
    "MaxNumberOfMessages": (1, 10),
    "VisibilityTimeout": (0, 60),
    "WaitTimeSeconds": (0, 2),
    "MaxResults": (1, 10),
    "MaxNumberOfMessagesPerSecond": (1, 500),
}


def integer_value(d: Draw, name: str = "") -> Any:
    """A value for integer member ``name``: plausible, or boundary, huge, textual, non-ASCII digits, ill-typed."""
    if not hostile(d):
        low, high = PLAUSIBLE_INTS.get(name, (0, 10))
        return d.integer(low, high) if _pct(d, 90) else str(d.integer(low, high))
    r = d.integer(0, 99)
    if r < 30:
        return d.choice(
            (
                0,
                1,
                9,
                10,
                11,
                20,
                21,
                60,
                900,
                901,
                1000,
                1001,
                43200,
                43201,
                1209600,
                2**31 - 1,
                2**31,
                2**63 - 1,
                2**63,
                2**64 - 1,
                -1,
                -(2**63),
                d.integer(-5, 25),
            )
        )
    if r < 45:
        return Raw(huge_digits(d))
    if r < 60:
        return d.choice((str(d.integer(-3, 30)), " 7 ", "+5", "-0", "0" * 5000 + "1", "9" * 19, "9" * 20))
    if r < 80:
        return d.choice(("²", "١٢", "①", "1_0", "1.0", "1e3", "", "0x10", d.text(6)))
    return ill_typed(d)


def string_value(d: Draw, name: str, state: State, fifo: bool = False, queue: str | None = None) -> Any:
    """A value for the string member ``name`` (JSON name): mostly plausible for that member, sometimes not.
    ``queue`` is the name of the queue the request addresses (receipt handles are taken from it)."""
    if hostile(d) and _pct(d, 30):
        return ill_typed(d)
    if name == "QueueUrl":
        return queue_url(d, state)
    if name == "QueueName":
        return queue_name(d, state)
    if name == "ReceiptHandle":
        own = state.receipts.get(queue or "")
        if own and not hostile(d):
            return d.choice(own)
        other = state.any_receipt(d)
        if other is not None and _pct(d, 60):
            return other if _pct(d, 50) else other[:-2] + d.text(3)
        return d.text(80)
    if name in ("SourceArn", "DestinationArn"):
        return arn(d, state)
    if name == "TaskHandle":
        if state.task_handles and not hostile(d):
            return d.choice(state.task_handles)
        raw = json.dumps({"taskId": d.text(8), "sourceArn": arn(d, state)}).encode()
        if _pct(d, 20):
            raw = str(deep_json(d)).encode() if _pct(d, 50) else to_json(ill_typed(d)).encode("utf-8", "surrogatepass")
        return base64.b64encode(raw).decode() if _pct(d, 50) else d.text(40)
    if name == "MessageBody":
        if not hostile(d):
            return token(d, 1, 40)
        if _pct(d, 5):
            return "x" * d.choice((262144, 1048576, 1048577))
        return d.text(200)
    if name in ("MessageGroupId", "MessageDeduplicationId", "ReceiveRequestAttemptId"):
        if not hostile(d):
            return d.choice(("g1", "g2", "d-" + str(d.integer(0, 50))))
        return d.choice(("x" * 129, "", d.text(10)))
    if name == "Id":
        return str(d.integer(1, 10)) if not hostile(d) else d.choice(("x" * 81, "", d.text(6)))
    if name == "Label":
        return d.choice(("l1", "l2")) if not hostile(d) else d.choice(("x" * 81, "", d.text(12)))
    if name == "QueueOwnerAWSAccountId":
        return ACCOUNT if not hostile(d) else d.choice(("111122223333", "", d.text(12)))
    if name == "NextToken":
        raw_token = base64.b64encode(b"sqsemu:" + d.text(10).encode("utf-8", "surrogatepass")).decode()
        return d.choice((raw_token, "", d.text(30)))
    if name == "QueueNamePrefix":
        return "fz" if not hostile(d) else d.text(10)
    return d.text(40)


def _policy(d: Draw, state: State) -> Any:
    statement = {"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": arn(d, state)}
    if _pct(d, 30):
        statement["Sid"] = d.text(10)
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


INT_ATTRIBUTES = {
    "DelaySeconds": (0, 900),
    "MaximumMessageSize": (1024, 1048576),
    "MessageRetentionPeriod": (60, 1209600),
    "ReceiveMessageWaitTimeSeconds": (0, 2),
    "VisibilityTimeout": (0, 43200),
    "KmsDataKeyReusePeriodSeconds": (60, 86400),
}


def attribute_value(d: Draw, name: str, state: State) -> Any:
    """A queue attribute value for attribute ``name`` (always a string in valid requests)."""
    if hostile(d):
        r = d.integer(0, 99)
        if r < 20:
            return ill_typed(d)
        if r < 45:
            return d.text(30)
        if r < 60:
            return str(deep_json(d))
    if name in INT_ATTRIBUTES:
        if not hostile(d):
            return str(d.integer(*INT_ATTRIBUTES[name]))
        value = integer_value(d, name)
        return "" if value is None or isinstance(value, list | dict) else _query_scalar(value)
    if name in ("SqsManagedSseEnabled", "ContentBasedDeduplication", "FifoQueue"):
        return d.choice(("true", "false")) if not hostile(d) else d.choice(("TRUE", " false ", "yes", ""))
    if name == "DeduplicationScope":
        return d.choice(("messageGroup", "queue", "x"))
    if name == "FifoThroughputLimit":
        return d.choice(("perQueue", "perMessageGroupId", "x"))
    if name == "Policy":
        if not hostile(d):
            return _policy(d, state)
        return d.choice(("{}", "[]", "", '{"a": "\ufffe\\u0000"}', '{"n": ' + huge_digits(d) + "}", str(deep_json(d))))
    if name == "RedrivePolicy":
        if _pct(d, 15):
            return ""
        count: Any = d.integer(1, 5)
        if hostile(d):
            count = d.choice(
                (
                    1000,
                    1001,
                    0,
                    "5",
                    " 7 ",
                    "٣",
                    "1_0",
                    5.0,
                    True,
                    None,
                    [1],
                    {"a": 1},
                    Raw(huge_digits(d)),
                    str(deep_json(d)),
                )
            )
        target = arn(d, state) if _pct(d, 50) else f"arn:aws:sqs:{REGION}:{ACCOUNT}:fz-dlq"
        body: dict[str, Any] = {"deadLetterTargetArn": target, "maxReceiveCount": count}
        if hostile(d):
            del body[d.choice(("deadLetterTargetArn", "maxReceiveCount"))]
        return to_json(body)
    if name == "RedriveAllowPolicy":
        if _pct(d, 15):
            return ""
        permission = d.choice(("allowAll", "denyAll", "byQueue")) if not hostile(d) else d.text(8)
        allow: dict[str, Any] = {"redrivePermission": permission}
        if permission == "byQueue" or hostile(d):
            allow["sourceQueueArns"] = [arn(d, state) for _ in range(d.integer(0 if hostile(d) else 1, 11))]
        return to_json(allow)
    if name == "KmsMasterKeyId":
        return d.choice(("", "alias/aws/sqs")) if not hostile(d) else d.text(20)
    return d.text(20)


def attribute_name(d: Draw) -> str:
    if not hostile(d):
        return d.choice(sorted(ALL_NAMES))
    return d.choice(("All", "", d.text(20)))


def queue_attributes(d: Draw, state: State, fifo: bool) -> dict[str, Any]:
    """An ``Attributes`` map for CreateQueue / SetQueueAttributes."""
    settable = [n for n in sorted(ALL_NAMES) if n not in FIFO_ONLY or fifo] if not hostile(d) else sorted(ALL_NAMES)
    names = [d.choice(settable) if not hostile(d) else attribute_name(d) for _ in range(d.integer(0, 4))]
    out = {name: attribute_value(d, name, state) for name in names}
    if fifo and not hostile(d):
        out["FifoQueue"] = "true"
    if not hostile(d):  # read-only names are only sent in hostile requests
        for name in [n for n in out if n not in SETTABLE]:
            del out[name]
    return out


def message_attribute(d: Draw, system: bool) -> tuple[str, Any]:
    if system:
        name = "AWSTraceHeader" if not hostile(d) else d.choice(("Other", "", d.text(10)))
    else:
        name = (
            d.choice(("a1", "Attr.2", "n-3"))
            if not hostile(d)
            else d.choice(("", "AWS.x", ".a", "a..b", "x" * 257, d.text(12)))
        )
    if not hostile(d):
        data_type = "String" if system else d.choice(("String", "Number", "Binary", "Number.float", "String.x"))
    else:
        data_type = d.choice(("", "Blob", "String" * 50, d.text(8)))
    value: dict[str, Any] = {"DataType": data_type}
    if data_type.startswith("Binary") or hostile(d):
        good = base64.b64encode(d.data(20) or b"x").decode()
        value["BinaryValue"] = good if not hostile(d) else d.choice(("!!!", "", "YQ", d.text(8)))
    if not data_type.startswith("Binary") or hostile(d):
        if system and not hostile(d):
            value["StringValue"] = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
        elif data_type.startswith("Number") and not hostile(d):
            value["StringValue"] = d.choice(("1.5", "-3e2", "42"))
        else:
            value["StringValue"] = token(d, 1, 20) if not hostile(d) else d.choice(("", "abc", d.text(30)))
    if hostile(d) and _pct(d, 20):
        return name, ill_typed(d)
    return name, value


def member_value(d: Draw, member: Member, state: State, fifo: bool = False, queue: str | None = None) -> Any:
    """A JSON-model value for ``member`` (lists, maps and structures as Python lists and dicts); ``fifo`` says
    whether the request addresses a FIFO queue."""
    kind = member.kind
    if kind is Kind.STR:
        return string_value(d, member.name, state, fifo, queue)
    if kind is Kind.INT:
        return integer_value(d, member.name)
    if hostile(d) and _pct(d, 20):
        return ill_typed(d)
    count_max = 10 if not hostile(d) else 12
    if kind is Kind.STR_LIST:
        if member.name in ("AttributeNames", "MessageSystemAttributeNames"):
            good = ("All", "SentTimestamp", "ApproximateReceiveCount", "MessageGroupId", "QueueArn", "AWSTraceHeader")
            return [d.choice(good) if not hostile(d) else attribute_name(d) for _ in range(d.integer(0, 4))]
        if member.name == "MessageAttributeNames":
            return [
                d.choice(("All", ".*", "a1", "Attr.*")) if not hostile(d) else d.text(10)
                for _ in range(d.integer(0, 4))
            ]
        if member.name == "Actions":
            return [
                d.choice(("SendMessage", "*", "ReceiveMessage")) if not hostile(d) else d.text(10)
                for _ in range(d.integer(1, 4))
            ]
        if member.name == "AWSAccountIds":
            return [
                d.choice((ACCOUNT, "111122223333")) if not hostile(d) else d.text(12) for _ in range(d.integer(1, 3))
            ]
        return [d.choice(("k1", "k2")) if not hostile(d) else d.text(20) for _ in range(d.integer(0, 4))]
    if kind is Kind.STR_MAP:
        if member.name == "Attributes":
            return queue_attributes(d, state, fifo)
        tags: dict[str, Any] = {}
        for _ in range(d.integer(0, 4)):
            if not hostile(d):
                tags[d.choice(("k1", "k2", "team"))] = token(d, 0, 10)
            else:
                tags[d.choice(("aws:x", "", "k" * 129, d.text(20)))] = d.choice(("", "v" * 257, d.text(20)))
        return tags
    if kind is Kind.ATTR_MAP:
        system = "System" in member.name
        return dict(message_attribute(d, system) for _ in range(d.integer(0, 1 if system else count_max + 1)))
    # Kind.STRUCT_LIST: batch entries
    struct = member.struct
    assert struct is not None
    entries = []
    for n in range(d.integer(0 if hostile(d) else 1, count_max)):
        entry: dict[str, Any] = {}
        for sub in struct.members:
            if sub.name == "Id":
                entry["Id"] = str(n + 1) if not hostile(d) else d.choice(("1", "", "x" * 81, d.text(6)))
            elif sub.name in ("MessageBody", "ReceiptHandle") or _pct(d, 30):
                if sub.name == "MessageGroupId" and not fifo and not hostile(d):
                    continue
                entry[sub.name] = member_value(d, sub, state, fifo, queue)
        if fifo and "MessageBody" in entry and not hostile(d):
            entry["MessageGroupId"] = d.choice(("g1", "g2"))
        entries.append(entry)
    return entries


RECEIPT_ACTIONS = frozenset(
    {"DeleteMessage", "ChangeMessageVisibility", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"}
)
DLQ_NAMES = ("fz-dlq", "fz-dlq.fifo")


def queue_of(url: object) -> str | None:
    """The queue name of a default-account queue URL of this server, else None."""
    prefix = f"{BASE}/{ACCOUNT}/"
    if isinstance(url, str) and url.startswith(prefix) and "/" not in url[len(prefix) :]:
        return url[len(prefix) :]
    return None


def request_members(d: Draw, action: str, state: State) -> dict[str, Any]:
    """A JSON-model request for ``action``: its members present or not, plausible or not, a stray one now and then.

    The queue a request addresses is drawn first, so members that depend on it (receipt handles, ``MessageGroupId``,
    ``FifoQueue``) can follow it; actions that take receipt handles aim at a queue whose handles are known.
    """
    cls = REQUESTS[action]
    out: dict[str, Any] = {}
    fifo = False
    queue: str | None = None
    for member in cls.MEMBERS:
        if member.name in ("QueueUrl", "QueueName"):
            if not hostile(d) or _pct(d, 70):
                if member.name == "QueueName" and action == "CreateQueue":
                    value: Any = queue_name(d, state, new=_pct(d, 70))
                elif action in RECEIPT_ACTIONS and state.receipts and not hostile(d):
                    value = f"{BASE}/{ACCOUNT}/{d.choice(list(state.receipts))}"
                else:
                    value = string_value(d, member.name, state)
                out[member.name] = value
                fifo = isinstance(value, str) and value.endswith(".fifo")
                queue = queue_of(value)
            continue
        if member.name == "SourceArn" and not hostile(d):
            out[member.name] = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{d.choice(DLQ_NAMES)}"
            continue
        required = member.name in (
            "MessageBody",
            "ReceiptHandle",
            "Entries",
            "SourceArn",
            "TaskHandle",
            "Label",
            "Tags",
            "TagKeys",
            "AWSAccountIds",
            "Actions",
        )
        required = required or (member.name == "VisibilityTimeout" and action == "ChangeMessageVisibility")
        wanted = (required and not hostile(d)) or _pct(d, 40)
        if member.name == "MessageGroupId" and fifo and not hostile(d):
            wanted = True
        if member.name in ("MessageGroupId", "MessageDeduplicationId", "ReceiveRequestAttemptId") and not fifo:
            wanted = wanted and hostile(d)
        if wanted:
            out[member.name] = member_value(d, member, state, fifo, queue)
    if hostile(d) and _pct(d, 20):
        out[d.text(10)] = ill_typed(d)
    return out


# ------------------------------------------------------------------------------------------------ JSON 1.0


def to_json(value: Any) -> str:
    """JSON text of ``value``; :class:`Raw` pieces are written as they are, lone surrogates as ``\\uXXXX``."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    if isinstance(value, float) and value != value:
        return "NaN"
    return json.dumps(value)


def _auth_headers(d: Draw) -> list[tuple[str, str]]:
    headers = [("Host", HOST if not hostile(d) else d.choice(("example.com", "", "h\u00e9", "[::1]:1")))]
    if not hostile(d):
        if _pct(d, 60):
            key = d.choice(("AKIDEXAMPLE", ACCOUNT))
            headers.append(("Authorization", AUTH_TEMPLATE.format(key=key, region=REGION)))
    else:
        key = d.choice(("111122223333", d.text(12)))
        region = d.choice(("eu-west-1", d.text(6)))
        headers.append(("Authorization", d.choice((AUTH_TEMPLATE.format(key=key, region=region), d.text(40)))))
    if hostile(d) and _pct(d, 10):
        headers.append(("Content-Length", d.choice(("9" * 5000, "0" * 5000 + "1", "-1", "abc", "99999999999"))))
    if _pct(d, 5):
        headers.append(("X-Amzn-Trace-Id", d.choice(("Root=1-5759e988-bd862e3fe1be46a994272793", d.text(30)))))
    return headers


def _latin1(text: str) -> str:
    """``text`` limited to what an HTTP header value can carry (latin-1)."""
    return text.encode("latin-1", "replace").decode("latin-1")


def json_request(d: Draw, state: State) -> FuzzRequest:
    """A JSON 1.0 request: valid action names with arbitrary or ill-typed members, odd targets and bodies."""
    d = biased(d)
    action = d.choice(ACTIONS)
    r = d.integer(0, 99) if hostile(d) else 0
    if r < 50:
        target: str | None = "AmazonSQS." + action
    elif r < 60:
        target = None
    elif r < 70:
        target = "AmazonSQS."
    elif r < 80:
        target = "AmazonSNS.Publish"
    else:
        target = "AmazonSQS." + _latin1(d.text(20))
    content_type = (
        "application/x-amz-json-1.0"
        if not hostile(d)
        else d.choice(
            (
                "application/json",
                "application/x-amz-json-1.1",
                "application/x-amz-json-1.0; charset=utf-8",
                "APPLICATION/X-AMZ-JSON-1.0",
            )
        )
    )
    r = d.integer(0, 99) if hostile(d) else 0
    queue = None
    if r < 40:
        members = request_members(d, action, state)
        queue = queue_of(members.get("QueueUrl"))
        body = to_json(members).encode("utf-8", "surrogatepass")
    elif r < 55:
        body = d.data(64)
    elif r < 65:
        body = to_json(ill_typed(d)).encode("utf-8", "surrogatepass")
    elif r < 78:
        body = str(deep_json(d)).encode()
    elif r < 90:
        members = request_members(d, action, state)
        members[
            d.choice(
                (
                    "DelaySeconds",
                    "MaxNumberOfMessages",
                    "VisibilityTimeout",
                    "WaitTimeSeconds",
                    "MaxResults",
                    "MaxNumberOfMessagesPerSecond",
                )
            )
        ] = Raw(huge_digits(d))
        body = to_json(members).encode("utf-8", "surrogatepass")
    elif r < 95:
        body = b'{"QueueUrl": "\\ud800", "QueueName": "\\udfff"}'
    else:
        body = b""
    headers = [("Content-Type", content_type), *_auth_headers(d)]
    if target is not None:
        headers.append(("X-Amz-Target", target))
    if hostile(d):
        headers.append(("Accept", "application/json"))
    path = "/" if not hostile(d) else f"/{ACCOUNT}/{quote(queue_name(d, state), safe='', errors='surrogatepass')}"
    return FuzzRequest("json", "POST", path, headers, body, label=f"json {action}", action=action, queue=queue)


# ------------------------------------------------------------------------------------------------ AWS Query


def list_index(d: Draw, n: int) -> str:
    """The index of the ``n``-th (1-based) entry of a Query list: mostly ``n``, sometimes a malformed one."""
    if not hostile(d) or _pct(d, 50):
        return str(n)
    return d.choice(
        (
            "0",
            "00",
            "01",
            "²",
            "١",
            "①",
            "߀",
            "9" * 10,
            "2147483647",
            "2147483648",
            "9" * d.choice((20, 4300, 4301, 5000)),
            "-1",
            "",
            "x",
            "1.5",
            "Name",
            d.text(3),
        )
    )


def _query_scalar(value: Any) -> str | None:
    """A JSON-model value as one Query string (None: leave the parameter out)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return to_json(value)


def query_pairs(d: Draw, members: Sequence[Member], values: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Flatten a JSON-model request into Query pairs by the members' Query keys and kinds."""
    pairs: list[tuple[str, str]] = []

    def add(key: str, value: Any) -> None:
        text = _query_scalar(value)
        if text is not None:
            pairs.append((prefix + key, text))

    for member in members:
        if member.name not in values:
            continue
        value = values[member.name]
        key = d.choice(member.query_keys)
        kind = member.kind
        if kind in (Kind.STR, Kind.INT) or not isinstance(value, list | dict):
            add(key, value)
        elif kind is Kind.STR_LIST:
            if isinstance(value, dict):
                value = list(value)
            if _pct(d, 5) and value:  # legacy unindexed form
                add(key, value[0])
            for n, item in enumerate(value, 1):
                add(f"{key}.{list_index(d, n)}", item)
        elif kind is Kind.STR_MAP:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for n, (k, v) in enumerate(items, 1):
                index = list_index(d, n)
                add(f"{key}.{index}.{member.map_key}", k)
                add(f"{key}.{index}.{member.map_value}", v)
        elif kind is Kind.ATTR_MAP:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for n, (name, attr) in enumerate(items, 1):
                index = list_index(d, n)
                add(f"{key}.{index}.Name", name)
                if isinstance(attr, dict):
                    for field_name, field_value in attr.items():
                        add(f"{key}.{index}.Value.{field_name}", field_value)
                else:
                    add(f"{key}.{index}.Value", attr)
        else:  # STRUCT_LIST
            struct = member.struct
            assert struct is not None
            for n, entry in enumerate(value if isinstance(value, list) else [value], 1):
                entry_prefix = f"{key}.{list_index(d, n)}."
                if isinstance(entry, dict):
                    pairs.extend(query_pairs(d, struct.members, entry, prefix + entry_prefix))
                else:
                    add(entry_prefix.rstrip("."), entry)
    return pairs


_PERCENT_JUNK = (
    b"%",
    b"%G1",
    b"%C2",
    b"%ED%A0%80",
    b"%EF%BF%BF",
    b"%00",
    b"%FF%FE",
    b"+",
    b"=",
    b"&&",
    b"\xff\xfe",
    b"\xc0\x80",
    b"a.b.c",
    b"..",
    b".=1",
    b"Action",
    b"Action=",
    b"%2E",
)


def query_request(d: Draw, state: State) -> FuzzRequest:
    """An AWS Query request (form POST or GET): random actions, list indexes, percent-encoded junk."""
    d = biased(d)
    r = d.integer(0, 99) if hostile(d) else 0
    action = d.choice(ACTIONS)
    values = request_members(d, action, state)
    queue = queue_of(values.get("QueueUrl"))
    pairs = query_pairs(d, REQUESTS[action].MEMBERS, values)
    if r < 60:
        pairs.insert(d.integer(0, len(pairs)), ("Action", action))
    elif r < 80:
        pairs.append(("Action", d.text(20)))
    elif r < 90:
        pairs.append(("Action", ""))
    if _pct(d, 60):
        pairs.append(("Version", "2012-11-05"))
    for _ in range(d.integer(0, 2) if hostile(d) else 0):
        pairs.append((d.text(15), d.text(15)))
    encoded = urlencode(pairs, encoding="utf-8", errors="surrogatepass").encode()
    if hostile(d) and _pct(d, 50):
        junk = b"".join(d.choice(_PERCENT_JUNK) for _ in range(d.integer(1, 4)))
        at = d.integer(0, len(encoded))
        encoded = encoded[:at] + junk + encoded[at:]
    headers = _auth_headers(d)
    r = d.integer(0, 99)
    if r < 10:
        method, body, query_string = "GET", b"", encoded
    elif r < 15:
        method, body, query_string = "POST", b"", encoded
    else:
        method, body, query_string = "POST", encoded, b""
    if method == "POST":
        ct = (
            "application/x-www-form-urlencoded"
            if not hostile(d)
            else d.choice(("application/x-www-form-urlencoded; charset=utf-8", "text/plain", "", "application/json"))
        )
        if ct:
            headers.append(("Content-Type", ct))
    if hostile(d) and _pct(d, 30):
        headers.append(("X-Amz-Target", d.choice(("AmazonSQSv20121105." + action, "AmazonSQS." + action))))
    r = d.integer(0, 99)
    if r < 20:
        headers.append(("Accept", d.choice(("application/json", "Application/JSON, text/plain", "text/xml", "*/*"))))
    r = d.integer(0, 99) if hostile(d) else 0
    if r < 50:
        path = "/"
    elif r < 80:
        path = f"/{ACCOUNT}/{quote(queue_name(d, state), safe='', errors='surrogatepass')}"
    else:
        path = "/" + d.choice(("x", "a/b/c", f"queue/{REGION}/{ACCOUNT}/q", "%2F", _latin1(d.text(10))))
    return FuzzRequest("query", method, path, headers, body, query_string, f"query {action}", action, queue)


# ------------------------------------------------------------------------------------------------ admin


def _fault_rule(d: Draw) -> Any:
    keys = ("id", "action", "queue", "error", "latency_ms", "drop", "every", "probability", "seed", "count", "x")
    rule: dict[str, Any] = {}
    for key in keys:
        if not _pct(d, 35):
            continue
        if key == "action":
            rule[key] = d.choice(("*", "SendMessage", "Bogus", d.text(8)))
        elif key == "error":
            rule[key] = d.choice(
                (
                    "ThrottlingException",
                    {"code": "OverLimit", "status": d.choice((400, 503, 600))},
                    {"code": d.text(8), "fault": d.text(4)},
                    ill_typed(d),
                )
            )
        elif key in ("latency_ms", "every", "count", "seed", "probability"):
            rule[key] = d.choice((0, 1, 0.5, -1, 600001, 1e308, Raw(huge_digits(d)), Raw("NaN"), ill_typed(d)))
        elif key == "drop":
            rule[key] = d.choice((True, False, "yes"))
        else:
            rule[key] = d.choice(("r1", "", "x" * 65, d.text(10), ill_typed(d)))
    return rule


def admin_request(d: Draw, state: State) -> FuzzRequest:
    """A request to ``/health`` or an ``/_sqsemu`` route, with random JSON (or not JSON) bodies."""
    d = biased(d)
    route = d.integer(0, 12)
    body: Any = None
    method = "GET"
    if route == 0:
        path = "/health"
    elif route == 1:
        path = "/_sqsemu/clock"
    elif route in (2, 3, 4):
        method, path = "POST", "/_sqsemu/clock/advance"
        seconds = d.choice(
            (
                0,
                1,
                2.5,
                30,
                86400,
                315360000,
                315360001,
                1e22,
                1e308,
                -1,
                True,
                None,
                "30",
                Raw("1e400"),
                Raw("NaN"),
                Raw("-Infinity"),
                Raw(huge_digits(d)),
                ill_typed(d),
            )
        )
        body = {"seconds": seconds} if _pct(d, 90) else ill_typed(d)
    elif route in (5, 6):
        method, path = "POST", "/_sqsemu/faults"
        body = _fault_rule(d)
    elif route == 7:
        method, path = d.choice(("GET", "DELETE")), "/_sqsemu/faults"
    elif route == 8:
        method = d.choice(("GET", "DELETE"))
        path = "/_sqsemu/faults/" + quote(d.choice(("f-1", "r1", d.text(10))), safe="", errors="surrogatepass")
    elif route == 9:
        path = "/_sqsemu/queues"
    elif route == 10:
        account = d.choice((ACCOUNT, "111122223333", "1", d.text(12)))
        name = queue_name(d, state)
        quoted = [quote(part, safe="", errors="surrogatepass") for part in (account, name)]
        path = f"/_sqsemu/queues/{quoted[0]}/{quoted[1]}/messages"
    elif route == 11:
        method, path = "POST", "/_sqsemu/reset"
        body = (
            d.choice(({"account": d.choice(("111122223333", "1", d.text(12), ill_typed(d)))}, {"x": 1}, ill_typed(d)))
            if _pct(d, 97)
            else {}
        )
    else:
        method = d.choice(("GET", "POST", "PUT", "DELETE", "PATCH"))
        path = d.choice(
            ("/_sqsemu", "/_sqsemu/", "/_sqsemu/clock/advance", "/_sqsemu/nothing", "/_sqsemu/" + _latin1(d.text(12)))
        )
        body = ill_typed(d)
    r = d.integer(0, 99)
    if body is None:
        raw = b""
    elif r < 8:
        raw = str(deep_json(d)).encode()
    elif r < 12:
        raw = d.data(40)
    else:
        raw = to_json(body).encode("utf-8", "surrogatepass")
    query_string = b""
    if route == 10 and _pct(d, 40):
        query_string = urlencode({"region": d.choice((REGION, "", "a/b", d.text(8)))}, errors="surrogatepass").encode()
    headers = [("Host", HOST), ("Content-Type", "application/json")]
    return FuzzRequest("admin", method, path, headers, raw, query_string, label=f"admin {method} {path[:40]}")


def any_request(d: Draw, state: State) -> FuzzRequest:
    """A request of any kind: 45% JSON 1.0, 45% Query, 10% admin."""
    r = d.integer(0, 19)
    if r < 9:
        return json_request(d, state)
    if r < 18:
        return query_request(d, state)
    return admin_request(d, state)
