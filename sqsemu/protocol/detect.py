"""Which wire protocol a request speaks, and which action it names.

AWS documents the two request forms in the SQS Developer Guide pages "Making query API requests using AWS JSON
protocol in Amazon SQS" (``X-Amz-Target: AmazonSQS.<Action>`` with ``Content-Type: application/x-amz-json-1.0``)
and "Making query API requests using AWS query protocol in Amazon SQS" (an ``Action`` parameter, GET or POST).
The rule, by the ``Content-Type`` and ``X-Amz-Target`` headers:

- ``application/x-amz-json-*`` or ``application/json`` with ``AmazonSQS.<Action>``: JSON 1.0, action ``<Action>``.
- ``application/x-amz-json-*`` with no target or another one (``AmazonSNS.Publish``): JSON 1.0 naming no action,
  answered with a JSON ``UnknownOperationException`` (HTTP 404).
- Anything else: Query, whatever ``X-Amz-Target`` says; the action is the ``Action`` parameter (query string, then
  the form body of a non-GET request). That covers a form body with a target (Perl's Amazon::SQS::Simple sends
  ``X-Amz-Target: AmazonSQSv20121105.CreateQueue`` with ``Action=CreateQueue&...``), a target without any
  content type, and ``application/json`` without an ``AmazonSQS.`` target.

So a request is JSON 1.0 only when it has a JSON content type. ``application/x-amz-json`` is the JSON protocol's own
media type, so such a request is answered in JSON even when its target is missing or names another service; the
generic ``application/json`` means JSON 1.0 only together with an ``AmazonSQS.`` target. Media types are compared
case-insensitively and without their parameters (``; charset=utf-8``).

A Query request naming no action is not an SQS request: the caller answers HTTP 404 ``<UnknownOperationException/>``.
"""

from __future__ import annotations

from enum import Enum
from urllib.parse import unquote

TARGET_PREFIX = "AmazonSQS."
AMZ_JSON_MEDIA_TYPE = "application/x-amz-json"
"""Prefix of the JSON protocol's media types (``application/x-amz-json-1.0``; 1.1 is accepted too)."""
JSON_MEDIA_TYPE = "application/json"
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"


class Protocol(Enum):
    """The two SQS wire protocols."""

    JSON = "json"
    QUERY = "query"


class Detected:
    """The outcome of detection.

    ``action`` is None when the request names no action (or a JSON target outside ``AmazonSQS.``). ``params`` are
    the Query form pairs (query string first, then the form body), empty for JSON. A plain class, not a dataclass:
    one is made per call, and compiled (mypyc) a dataclass's ``__init__`` is the interpreted one the dataclasses
    module writes.
    """

    __slots__ = ("protocol", "action", "params")

    def __init__(self, protocol: Protocol, action: str | None, params: list[tuple[str, str]]) -> None:
        self.protocol = protocol
        self.action = action
        self.params = params

    def __repr__(self) -> str:
        return f"Detected({self.protocol!r}, {self.action!r}, {self.params!r})"


def _media_type(content_type: str) -> str:
    """``content_type`` without parameters, lower-cased (``"Text/Plain; charset=utf-8"`` → ``"text/plain"``)."""
    return content_type.partition(";")[0].strip().lower()


def looks_like_json(target: str | None, content_type: str | None) -> bool:
    """True when the headers make the request an AWS JSON 1.0 request (so its errors are rendered as JSON).

    ``application/x-amz-json-*`` always does; ``application/json`` does with an ``AmazonSQS.`` target; no other
    content type does, whatever the target.
    """
    if content_type is None:
        return False
    if content_type.startswith(AMZ_JSON_MEDIA_TYPE):  # what JSON SDKs send: no normalising needed
        return True
    if content_type.startswith(FORM_MEDIA_TYPE):  # what Query SDKs send
        return False
    media = _media_type(content_type)
    if media.startswith(AMZ_JSON_MEDIA_TYPE):
        return True
    return media == JSON_MEDIA_TYPE and target is not None and target.startswith(TARGET_PREFIX)


_HEX_DIGITS = "0123456789ABCDEFabcdef"
_HEX_BYTE: dict[bytes, int] = {(a + b).encode(): int(a + b, 16) for a in _HEX_DIGITS for b in _HEX_DIGITS}
"""Every two-digit percent escape (either case) → its byte, as ``urllib.parse.unquote_to_bytes`` reads them."""


def unquote_text(text: str) -> str:
    """``urllib.parse.unquote(text, errors="replace")``: ``%XX`` escapes decoded as UTF-8 (undecodable bytes
    replaced), a ``%`` not followed by two hex digits kept as it is. An ASCII ``text`` (every form an SDK sends: it
    percent-encodes the rest) is decoded here in one pass over its escapes, without urllib's pure-Python steps
    (about a tenth of a Query SendMessage's work); other text goes to urllib."""
    if not text.isascii():
        return unquote(text, errors="replace")
    parts = text.encode("ascii").split(b"%")
    out = bytearray(parts[0])
    for index in range(1, len(parts)):
        part = parts[index]
        byte = _HEX_BYTE.get(part[:2])
        if byte is None:
            out += b"%"
            out += part
        else:
            out.append(byte)
            out += part[2:]
    return out.decode("utf-8", "replace")


_SHORT_CHARS = 256
"""Escaped form names and values up to this length (queue URLs, attribute names, receipt handles: what repeats
from call to call) are unquoted once and then found in ``_UNQUOTED``; longer ones (message bodies) every time."""
_UNQUOTED: dict[str, str] = {}
_UNQUOTED_LIMIT = 1024
"""Most entries of ``_UNQUOTED`` (emptied when full: at most about half a megabyte)."""


def _unquoted(text: str) -> str:
    """:func:`unquote_text` of a form name or value that holds a ``%``, short ones remembered."""
    if len(text) > _SHORT_CHARS:
        return unquote_text(text)
    done = _UNQUOTED.get(text)
    if done is None:
        done = unquote_text(text)
        if len(_UNQUOTED) >= _UNQUOTED_LIMIT:
            _UNQUOTED.clear()
        _UNQUOTED[text] = done
    return done


def parse_form(text: str) -> list[tuple[str, str]]:
    """``urllib.parse.parse_qsl(text, keep_blank_values=True)`` (UTF-8, undecodable bytes replaced), with the work
    skipped for the pairs that need none: ``+`` and ``%`` are looked for before :func:`unquote_text` is called."""
    pairs: list[tuple[str, str]] = []
    for field in text.split("&"):
        if not field:
            continue
        name, _, value = field.partition("=")
        if "+" in name:
            name = name.replace("+", " ")
        if "%" in name:
            name = _unquoted(name)
        if "+" in value:
            value = value.replace("+", " ")
        if "%" in value:
            value = _unquoted(value)
        pairs.append((name, value))
    return pairs


def detect(method: str, target: str | None, content_type: str | None, query_string: bytes, body: bytes) -> Detected:
    """Detect the protocol and action of a request (rule in the module docstring).

    ``target`` is the ``X-Amz-Target`` header, ``content_type`` the ``Content-Type`` header (both None when absent).
    """
    if looks_like_json(target, content_type):
        action = None
        if target is not None and target.startswith(TARGET_PREFIX):
            action = target[len(TARGET_PREFIX) :] or None
        return Detected(Protocol.JSON, action, [])
    params: list[tuple[str, str]] = []
    if query_string:
        params.extend(parse_form(query_string.decode("utf-8", "replace")))
    if body and method != "GET":
        params.extend(parse_form(body.decode("utf-8", "replace")))
    action = None
    for key, value in params:
        if key == "Action":
            action = value
    return Detected(Protocol.QUERY, action or None, params)
