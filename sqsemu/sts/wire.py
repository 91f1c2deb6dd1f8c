"""STS's Query protocol answers: ``<ActionResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">`` holding
``<ActionResult>`` and ``<ResponseMetadata><RequestId>``, and errors as an ``ErrorResponse`` with ``Type``, ``Code``
and ``Message`` then ``RequestId`` (botocore's STS model: protocol ``query``, API version 2011-06-15, its
``xmlNamespace``; the STS API Reference's example answers)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Union

from sqsemu.sts.errors import STSError

__all__ = ["XMLNS", "Element", "encode", "encode_error"]

XMLNS = "https://sts.amazonaws.com/doc/2011-06-15/"

Element = tuple[str, Union[str, "Sequence[Element]"]]
"""One XML element of an answer: ``(name, text)`` or ``(name, [children])``."""

_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(text: str) -> str:
    """``text`` as XML character data (what XML cannot carry replaced by U+FFFD: an echoed parameter)."""
    if not text.isprintable():
        text = _NOT_XML.sub("\ufffd", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#xD;")


def _write(parts: list[str], element: Element, depth: int) -> None:
    name, content = element
    indent = "  " * depth
    if isinstance(content, str):
        parts.append(f"{indent}<{name}>{_escape(content)}</{name}>\n")
        return
    parts.append(f"{indent}<{name}>\n")
    for child in content:
        _write(parts, child, depth + 1)
    parts.append(f"{indent}</{name}>\n")


def encode(action: str, result: Sequence[Element], request_id: str) -> bytes:
    """The XML answer of ``action``: its ``<ActionResult>`` holding ``result``, then the request id."""
    parts = [f'<{action}Response xmlns="{XMLNS}">\n']
    _write(parts, (f"{action}Result", result), 1)
    parts.append(
        f"  <ResponseMetadata>\n    <RequestId>{request_id}</RequestId>\n  </ResponseMetadata>\n</{action}Response>\n"
    )
    return "".join(parts).encode()


def encode_error(error: STSError, request_id: str) -> tuple[int, bytes]:
    """``(HTTP status, body)`` of ``error`` as STS's ``ErrorResponse`` document."""
    body = (
        f'<ErrorResponse xmlns="{XMLNS}">\n  <Error>\n    <Type>{error.fault}</Type>\n'
        f"    <Code>{_escape(error.code)}</Code>\n    <Message>{_escape(error.message)}</Message>\n  </Error>\n"
        f"  <RequestId>{request_id}</RequestId>\n</ErrorResponse>\n"
    )
    return error.status, body.encode()
