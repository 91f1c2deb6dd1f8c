"""The message body's character check (``check_body``) decides exactly as the implementation it replaced (issue 50):
the same bodies accepted, the same error (type and message, naming the first refused character) for the rest.

The reference below is the check as it was before issue 50 (an ASCII body by deleting its allowed bytes, any other
by the regular expression of the refused characters), kept here verbatim as the specification the faster check is
proven against, over arbitrary text that includes lone surrogates, U+FFFE/U+FFFF, the C0 controls and the
characters around every edge of the allowed set."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sqsemu.engine.errors import InvalidMessageContents, MissingParameter, SQSError
from sqsemu.engine.validation import check_body
from sqsemu.protocol.json import plain_strings

_REF_FORBIDDEN_CHAR = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_REF_ASCII_ALLOWED = b"\t\n\r" + bytes(range(0x20, 0x80))


def reference_check_body(body: str | None) -> str:
    """check_body before issue 50 (sqsemu/engine/validation.py at c81bee6)."""
    if not body:
        raise MissingParameter.named("MessageBody")
    if body.isascii() and not body.encode().translate(None, _REF_ASCII_ALLOWED):
        return body
    bad = _REF_FORBIDDEN_CHAR.search(body)
    if bad is not None:
        raise InvalidMessageContents(
            f"Invalid binary character '#x{ord(bad.group()):X}' was found in the message body, the set of allowed "
            "characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"
        )
    return body


def outcome(check: object, body: str | None) -> tuple[str, str]:
    """What a check does with ``body``: ("ok", the body returned) or (the error's class name, its message)."""
    assert callable(check)
    try:
        return "ok", check(body)
    except SQSError as error:
        return type(error).__name__, error.message


# The edges of the allowed set and the bytes the fast path treats specially (0xEF leads U+F000-U+FFFF in UTF-8).
_EDGES = [
    *map(chr, range(0x00, 0x21)),
    "\x7f",
    "\x80",
    "\x9f",
    "\xa0",
    "\xef",
    "\xff",
    "\u0100",
    "\ud7ff",
    "\ud800",
    "\udbff",
    "\udc00",
    "\udfff",
    "\ue000",
    "\uefbf",
    "\uf000",
    "\ufeff",
    "\ufffd",
    "\ufffe",
    "\uffff",
    "\U00010000",
    "\U0010ffff",
]
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(_EDGES),
        st.characters(min_codepoint=0, max_codepoint=0x7F),
        st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()),
    ),
    max_size=40,
)


@settings(max_examples=3000, deadline=None)
@given(prefix=st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=300), body=_TEXT)
@example(prefix="", body="")
@example(prefix="a", body="\ud800")
@example(prefix="a", body="\ud800\x00")  # a surrogate before a control: the first one is named
@example(prefix="é", body="\x00\ud800")
@example(prefix="", body="\uffff")
@example(prefix="", body="\ufffe")
@example(prefix="", body="\uf8ff\x0b")  # 0xEF-led but allowed, then a refused control
@example(prefix="", body="\ufffd\t\n\r")
def test_the_check_decides_as_the_reference(prefix: str, body: str) -> None:
    text = prefix + body
    assert outcome(check_body, text) == outcome(reference_check_body, text)


@pytest.mark.parametrize("body", [None, ""])
def test_an_absent_or_empty_body_is_missing(body: str | None) -> None:
    assert (
        outcome(check_body, body)
        == outcome(reference_check_body, body)
        == (
            "MissingParameter",
            MissingParameter.named("MessageBody").message,
        )
    )


def test_the_first_refused_character_is_named() -> None:
    assert outcome(check_body, "ok \ufffe then \x01") == (
        "InvalidMessageContents",
        "Invalid binary character '#xFFFE' was found in the message body, the set of allowed characters is "
        "#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
    )


# ---------------------------------------------------------------------------------------------------------------
# plain_strings: a JSON request body that vouches for its message bodies (the engine then skips check_body)


def _raw_request(text: str) -> bytes:
    """A JSON 1.0 SendMessage body with ``text`` written into the string as it stands (no escaping by us)."""
    return b'{"QueueUrl":"http://h/1/q","MessageBody":"' + text.encode("utf-8", "surrogatepass") + b'"}'


@settings(max_examples=3000, deadline=None)
@given(prefix=st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=100), body=_TEXT)
@example(prefix="", body="\ufffe")
@example(prefix="", body="\uffff")
@example(prefix="a", body="\x01")
@example(prefix="a", body="\t")
@example(prefix="a", body="\ud800")
@example(prefix="a", body="\\u0001")
@example(prefix="caf\u00e9 ", body="\U0001f600")
def test_a_body_vouched_for_by_the_request_passes_the_check(prefix: str, body: str) -> None:
    """Whenever plain_strings says yes and the parser reads the request, the body it reads passes check_body:
    skipping the check never lets a refused character through."""
    raw = _raw_request(prefix + body)
    try:
        decoded = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return  # refused as not JSON (a raw control, a surrogate, a stray quote): never reaches the engine
    if not plain_strings(raw):
        return  # checked by check_body as any other
    text = decoded["MessageBody"]
    if text:
        assert outcome(check_body, text) == ("ok", text)


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        (_raw_request("hello world"), True),
        (_raw_request("Gr\u00fc\u00dfe \u6771\u4eac \U0001f600"), True),  # non-ASCII, nothing refused
        (_raw_request("\\u0001"), False),  # an escape: its character is checked
        (_raw_request("tab\\tin"), False),
        (_raw_request("\ufffe"), False),  # U+FFFE as raw UTF-8: valid JSON, a refused body
        (_raw_request("\uffff"), False),
    ],
)
def test_plain_strings(raw: bytes, plain: bool) -> None:
    assert plain_strings(raw) is plain


@pytest.mark.parametrize("control", [chr(c) for c in range(0x20)])
def test_the_parser_refuses_a_raw_control_character(control: str) -> None:
    """plain_strings relies on the JSON parser refusing every raw character below U+0020 in a string (RFC 8259,
    section 7) and a surrogate's bytes: an orjson that accepted them would make it wrong, and fails here."""
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(_raw_request("a" + control + "b"))


def test_the_parser_refuses_a_surrogate() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(_raw_request("a\ud800b"))
