"""SNS's Query protocol: the form parameters of a request read as SNS shapes them, and the XML answers and errors.

Requests: ``Action=Publish&TopicArn=...``; maps as ``Attributes.entry.N.key`` / ``.value`` (message attributes
``MessageAttributes.entry.N.Name`` / ``.Value.DataType``...), lists as ``Tags.member.N.Key`` or ``TagKeys.member.N``
(botocore's SNS model, ``query`` protocol serialisation). Answers: ``<ActionResponse xmlns=...><ActionResult>...``
then ``<ResponseMetadata><RequestId>``; errors an ``ErrorResponse`` with ``Type``, ``Code`` and ``Message`` (the
SNS API Reference, "Common Errors"; the layout of the Query protocol's answers).
"""

from __future__ import annotations

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


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        .replace("\r", "&#xD;")
    )  # fmt: skip


def _write(parts: list[str], element: Element) -> None:
    name, content = element
    if content is None:
        parts.append(f"<{name}/>")
    elif isinstance(content, str):
        parts.append(f"<{name}>{_escape(content)}</{name}>")
    else:
        parts.append(f"<{name}>")
        for child in content:
            _write(parts, child)
        parts.append(f"</{name}>")


def encode(action: str, result: Sequence[Element] | None, request_id: str) -> bytes:
    """The XML answer of ``action``: its ``<ActionResult>`` holding ``result`` (left out when None: the actions
    whose model has no output), then the request id."""
    parts = [f'<{action}Response xmlns="{XMLNS}">']
    if result is not None:
        _write(parts, (f"{action}Result", result))
    parts.append(f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata></{action}Response>")
    return "".join(parts).encode()


def encode_error(error: SNSError, request_id: str) -> tuple[int, bytes]:
    """``(HTTP status, body)`` of ``error`` as SNS's ``ErrorResponse`` document."""
    body = (
        f'<ErrorResponse xmlns="{XMLNS}"><Error><Type>{error.fault}</Type><Code>{_escape(error.code)}</Code>'
        f"<Message>{_escape(error.message)}</Message></Error><RequestId>{request_id}</RequestId></ErrorResponse>"
    )
    return error.status, body.encode()
