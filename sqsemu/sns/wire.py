"""SNS's Query protocol: the form parameters of a request read as SNS shapes them, and the XML answers and errors.

Requests: ``Action=Publish&TopicArn=...``; maps as ``Attributes.entry.N.key`` / ``.value`` (message attributes
``MessageAttributes.entry.N.Name`` / ``.Value.DataType``...), lists as ``Tags.member.N.Key`` or ``TagKeys.member.N``
(botocore's SNS model, ``query`` protocol serialisation). Answers: ``<ActionResponse xmlns=...><ActionResult>...``
then ``<ResponseMetadata><RequestId>``; errors an ``ErrorResponse`` with ``Type``, ``Code`` and ``Message`` (the
SNS API Reference, "Common Errors"; the layout of the Query protocol's answers).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Union

from sqsemu.sns.errors import InvalidParameter, SNSError

__all__ = ["XMLNS", "Element", "Params", "encode", "encode_error"]

XMLNS = "http://sns.amazonaws.com/doc/2010-03-31/"

Element = tuple[str, Union[str, "Sequence[Element]", None]]
"""One XML element of an answer: ``(name, text)``, ``(name, [children])``, or ``(name, None)`` for an empty one."""


class Params:
    """A Query request's form parameters (``name -> value``, the last of a repeated name kept), read by SNS's
    serialisation rules."""

    __slots__ = ("values",)

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self.values: dict[str, str] = dict(pairs)

    def get(self, name: str) -> str | None:
        """The value of ``name``, or None when absent."""
        return self.values.get(name)

    def required(self, name: str) -> str:
        """The value of ``name``; raises ``InvalidParameter`` (AWS's missing-parameter message) when absent."""
        value = self.values.get(name)
        if value is None:
            raise InvalidParameter(f"Invalid parameter: {name}")
        return value

    def flag(self, name: str) -> bool | None:
        """A boolean parameter (``true``/``false``, any case); None when absent; raises ``InvalidParameter``
        otherwise."""
        value = self.values.get(name)
        if value is None:
            return None
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise InvalidParameter(f"Invalid parameter: {name}")
        return lowered == "true"

    def _indexed(self, prefix: str) -> dict[int, str]:
        """``prefix`` followed by ``N.`` or ``N``: index → the rest of the name (``""`` for a scalar member)."""
        found: dict[int, str] = {}
        for name in self.values:
            if not name.startswith(prefix):
                continue
            index, _, rest = name[len(prefix) :].partition(".")
            if index.isdigit() and not index.startswith("0"):
                found.setdefault(int(index), rest)
        return found

    def scalars(self, name: str) -> list[str] | None:
        """A list of strings (``name.member.N``) in index order; None when no member is given."""
        prefix = f"{name}.member."
        indexes = sorted(self._indexed(prefix))
        if not indexes:
            return None
        return [self.values[f"{prefix}{index}"] for index in indexes if f"{prefix}{index}" in self.values]

    def members(self, name: str) -> list[Params] | None:
        """A list of structures (``name.member.N.Field``), each as its own ``Params``; None when none is given."""
        prefix = f"{name}.member."
        indexes = sorted(self._indexed(prefix))
        if not indexes:
            return None
        out: list[Params] = []
        for index in indexes:
            head = f"{prefix}{index}."
            out.append(Params((key[len(head) :], value) for key, value in self.values.items() if key.startswith(head)))
        return out

    def entries(self, name: str, key: str = "key", value: str = "value") -> dict[str, Params] | None:
        """A map (``name.entry.N.<key>`` and ``name.entry.N.<value>...``): key → the value's parameters (the value
        itself under ``""``, its members under their names); None when no entry is given. Raises
        ``InvalidParameter`` for an entry without a key."""
        prefix = f"{name}.entry."
        indexes = sorted(self._indexed(prefix))
        if not indexes:
            return None
        out: dict[str, Params] = {}
        for index in indexes:
            head = f"{prefix}{index}."
            entry_key = self.values.get(f"{head}{key}")
            if entry_key is None:
                raise InvalidParameter(f"Invalid parameter: {name}")
            value_head = f"{head}{value}"
            pairs = [(k[len(value_head) :].lstrip("."), v) for k, v in self.values.items() if k.startswith(value_head)]
            out[entry_key] = Params(pairs)
        return out

    def string_map(self, name: str) -> dict[str, str] | None:
        """A map of strings (``Attributes.entry.N.key/value``); None when absent."""
        found = self.entries(name)
        if found is None:
            return None
        return {key: params.get("") or "" for key, params in found.items()}


_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters XML 1.0 cannot carry, even as references (its ``Char`` production): replaced by U+FFFD."""


def _escape(text: str) -> str:
    """``text`` as XML character data: markup characters and CR as references, characters XML cannot carry (a
    control character or a lone surrogate echoed back from a request) as U+FFFD, so every answer parses."""
    if not text.isprintable():
        text = _NOT_XML.sub("\ufffd", text)
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        .replace("\r", "&#xD;")
    )  # fmt: skip


def _write(parts: list[str], element: Element, depth: int) -> None:
    name, content = element
    indent = "  " * depth
    if content is None or (not isinstance(content, str) and not content):
        parts.append(f"{indent}<{name}/>\n")
    elif isinstance(content, str):
        parts.append(f"{indent}<{name}>{_escape(content)}</{name}>\n")
    else:
        parts.append(f"{indent}<{name}>\n")
        for child in content:
            _write(parts, child, depth + 1)
        parts.append(f"{indent}</{name}>\n")


def encode(action: str, result: Sequence[Element] | None, request_id: str) -> bytes:
    """The XML answer of ``action``: its ``<ActionResult>`` holding ``result`` (left out when None: the actions
    whose model has no output), then the request id. Laid out as AWS writes it: one element a line, two spaces of
    indent a level, a final newline (recorded: CreateTopic's answer is 326 bytes for a 54-character ARN); an empty
    list or result is one empty element (``<Topics/>``)."""
    parts = [f'<{action}Response xmlns="{XMLNS}">\n']
    if result is not None:
        _write(parts, (f"{action}Result", result), 1)
    parts.append(
        f"  <ResponseMetadata>\n    <RequestId>{request_id}</RequestId>\n  </ResponseMetadata>\n</{action}Response>\n"
    )
    return "".join(parts).encode()


def encode_error(error: SNSError, request_id: str) -> tuple[int, bytes]:
    """``(HTTP status, body)`` of ``error`` as SNS's ``ErrorResponse`` document (laid out as :func:`encode`'s)."""
    body = (
        f'<ErrorResponse xmlns="{XMLNS}">\n  <Error>\n    <Type>{error.fault}</Type>\n'
        f"    <Code>{_escape(error.code)}</Code>\n    <Message>{_escape(error.message)}</Message>\n  </Error>\n"
        f"  <RequestId>{request_id}</RequestId>\n</ErrorResponse>\n"
    )
    return error.status, body.encode()
