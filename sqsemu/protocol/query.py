"""The AWS Query wire format: form parameters → request objects; response dicts and errors → XML (or JSON).

SQS-REFERENCE section 1.2 (key map, flattened lists and maps, legacy forms) and 1.3 (XML layout). Parameters are
first folded into a tree on ``.`` (``MessageAttribute.1.Value.StringValue`` → ``tree["MessageAttribute"]["1"]
["Value"]["StringValue"]``); the member specs of ``protocol.shapes`` then read the tree. Responses are written by a
small emitter of their own (elements and text only, SQS's flattened lists and maps) with SQS's escaping (``&``, ``<``,
``>``, ``"`` → ``&quot;``, CR → ``&#xD;``) so bodies round-trip exactly. It replaced ``xmltodict.unparse``, whose
per-element name validation cost about 0.5 ms per 10-entry batch response and kept Query SendMessageBatch under the
25,000 messages/s floor; the unit tests parse its output with an XML parser, the integration tests with a real
Query client.

Response format negotiation: a Query request whose ``Accept`` header contains ``application/json`` gets the same
response document as JSON (``Content-Type: application/json``), as AWS does (observed, not documented); ``*/*``,
any other ``Accept`` or none gets XML. The document is the one of "Interpreting Amazon SQS XML API responses" (SQS
Developer Guide). Both renderings are driven by one description of the document (``WITH_RESULT``,
``LIST_ELEMENTS``, ``MAP_ELEMENTS``, ``JSON_LIST_KEYS`` below) applied to the handler's JSON-model result dict:

- ``{Action}Response`` → ``{Action}Result`` (only for actions with output) and ``ResponseMetadata/RequestId``::

    {"ListQueuesResponse": {"ListQueuesResult": {"QueueUrl": ["http://.../q"]},
                            "ResponseMetadata": {"RequestId": "..."}}}

- a repeated (flattened) XML element is a JSON list, also with one item; a list or map that XML leaves out (empty)
  is left out of the JSON too; a map entry is ``{"Name": ..., "Value": ...}`` (``Key``/``Value`` for tags)::

    {"ReceiveMessageResult": {"Message": [{"MessageId": "...", "Body": "...",
        "Attribute": [{"Name": "SentTimestamp", "Value": "1700000000000"}],
        "MessageAttribute": [{"Name": "Foo", "Value": {"StringValue": "Bar", "DataType": "String"}}]}]}}

  GetQueueAttributesResult's entries are the one exception to "key = XML element name": they are listed under
  ``Attributes`` (``JSON_LIST_KEYS``);
- element text keeps its JSON type (``"SenderFault": true``, ``"ApproximateNumberOfMessagesMoved": 3``);
- errors: ``{"Error": {"Type": "Sender", "Code": <Query code>, "Message": ...}, "RequestId": ...}`` with the HTTP
  status and ``x-amzn-query-error`` header of the XML error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from xml.sax.saxutils import escape

import orjson

from sqsemu.engine.errors import SQSError
from sqsemu.engine.message import MessageAttributeValue
from sqsemu.protocol.errors import error_info, query_message
from sqsemu.protocol.shapes import Kind, Member, Request, decode_binary, to_int

XMLNS = "http://queue.amazonaws.com/doc/2012-11-05/"
CONTENT_TYPE = b"text/xml"
JSON_CONTENT_TYPE = b"application/json"
"""Content type of a Query response negotiated to JSON (``Accept: application/json``)."""
UNKNOWN_OPERATION_BODY = b"<UnknownOperationException/>"

# ------------------------------------------------------------------------------ the response document, described once
# Read by both renderings: ``_emit_struct`` (XML) and ``_json_struct`` (JSON). Results are JSON-model dicts.

# Actions whose response has a <{Action}Result> wrapper (SQS-REFERENCE 1.3).
WITH_RESULT = frozenset(
    {
        "CreateQueue",
        "GetQueueUrl",
        "GetQueueAttributes",
        "ListQueues",
        "ListQueueTags",
        "ListDeadLetterSourceQueues",
        "ReceiveMessage",
        "SendMessage",
        "SendMessageBatch",
        "DeleteMessageBatch",
        "ChangeMessageVisibilityBatch",
        "StartMessageMoveTask",
        "CancelMessageMoveTask",
        "ListMessageMoveTasks",
    }
)

# JSON list member → flattened (repeated) element name; ``Successful`` is ``{Action}ResultEntry``, any other list
# member repeats under its own name.
LIST_ELEMENTS = {
    "QueueUrls": "QueueUrl",
    "queueUrls": "QueueUrl",
    "Messages": "Message",
    "Failed": "BatchResultErrorEntry",
    "Results": "ListMessageMoveTasksResultEntry",
}
# JSON map member → (flattened entry element, key element, value element).
MAP_ELEMENTS = {
    "Attributes": ("Attribute", "Name", "Value"),
    "Tags": ("Tag", "Key", "Value"),
    "MessageAttributes": ("MessageAttribute", "Name", "Value"),
}
# JSON rendering only: (result element, repeated element) → the key its list is given instead of the element name.
JSON_LIST_KEYS = {
    ("GetQueueAttributesResult", "Attribute"): "Attributes",
}


def list_element(action: str, member: str) -> str:
    """The repeated element of list member ``member`` in ``action``'s response."""
    element = LIST_ELEMENTS.get(member)
    if element is not None:
        return element
    return f"{action}ResultEntry" if member == "Successful" else member


Tree = dict[str, Any]  # nodes are str (leaf) or Tree; a node that is both keeps its own value under ""


# ----------------------------------------------------------------------------------------------------- decoding


def build_tree(pairs: Iterable[tuple[str, str]]) -> Tree:
    """Fold ``(key, value)`` form pairs into a tree on ``.``; a repeated key keeps its last value."""
    root: Tree = {}
    for key, value in pairs:
        node = root
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {} if child is None else {"": child}
                node[part] = child
            node = child
        last = parts[-1]
        existing = node.get(last)
        if isinstance(existing, dict):
            existing[""] = value
        else:
            node[last] = value
    return root


def _scalar(node: object) -> str | None:
    if isinstance(node, str):
        return node
    if isinstance(node, dict):
        value = node.get("")
        return value if isinstance(value, str) else None
    return None


def _numbered(node: Tree) -> list[Any]:
    """The children of ``node`` with a decimal index, in index order (``X.1``, ``X.2``, ... ``X.10``)."""
    indexed = [(int(k), v) for k, v in node.items() if k.isdigit()]
    indexed.sort(key=lambda kv: kv[0])
    return [v for _, v in indexed]


def _str_list(tree: Tree, member: Member) -> list[str] | None:
    out: list[str] = []
    present = False
    for key in member.query_keys:
        node = tree.get(key)
        if node is None:
            continue
        present = True
        bare = _scalar(node)
        if bare:  # legacy un-indexed form (``AttributeName=All``); empty = botocore's empty list
            out.append(bare)
        if isinstance(node, dict):
            out.extend(v for v in map(_scalar, _numbered(node)) if v is not None)
    return out if present else None


def _str_map(tree: Tree, member: Member) -> dict[str, str] | None:
    out: dict[str, str] = {}
    present = False
    node = tree.get(member.query_keys[0])
    if isinstance(node, dict):
        for entry in [*_numbered(node), node]:  # the node itself: legacy ``Attribute.Name=..&Attribute.Value=..``
            if isinstance(entry, dict):
                key = _scalar(entry.get(member.map_key))
                if key is not None:
                    value = _scalar(entry.get(member.map_value))
                    out[key] = "" if value is None else value
                    present = True
    for legacy_key, map_key in member.legacy:
        value = _scalar(tree.get(legacy_key))
        if value is not None and map_key not in out:
            out[map_key] = value
            present = True
    return out if present else None


def _attr_value(node: object) -> MessageAttributeValue:
    if not isinstance(node, dict):
        return MessageAttributeValue("")
    data_type = _scalar(node.get("DataType"))
    binary = _scalar(node.get("BinaryValue"))
    return MessageAttributeValue(
        data_type or "",
        _scalar(node.get("StringValue")),
        None if binary is None else decode_binary(binary),
    )


def _attr_map(tree: Tree, member: Member) -> dict[str, MessageAttributeValue] | None:
    node = tree.get(member.query_keys[0])
    if not isinstance(node, dict):
        return None
    out: dict[str, MessageAttributeValue] = {}
    for entry in _numbered(node):
        if isinstance(entry, dict):
            name = _scalar(entry.get("Name"))
            if name is not None:
                out[name] = _attr_value(entry.get("Value"))
    return out


def _members(members: tuple[Member, ...], tree: Tree) -> dict[str, Any]:
    """Keyword arguments for a request/entry class from a parameter tree, per ``members``."""
    out: dict[str, Any] = {}
    for member in members:
        kind = member.kind
        value: Any
        if kind is Kind.STR:
            value = _scalar(tree.get(member.query_keys[0]))
        elif kind is Kind.INT:
            raw = _scalar(tree.get(member.query_keys[0]))
            value = to_int(raw, member.name) if raw else None
        elif kind is Kind.STR_LIST:
            value = _str_list(tree, member)
        elif kind is Kind.STR_MAP:
            value = _str_map(tree, member)
        elif kind is Kind.ATTR_MAP:
            value = _attr_map(tree, member)
        else:  # Kind.STRUCT_LIST
            struct = member.struct
            assert struct is not None
            node = tree.get(member.query_keys[0])
            if not isinstance(node, dict):
                continue
            entries = []
            for entry in _numbered(node):
                kwargs = dict(struct.defaults)
                if isinstance(entry, dict):
                    kwargs.update(_members(struct.members, entry))
                entries.append(struct.factory(**kwargs))
            value = entries
        if value is not None:
            out[member.attr] = value
    return out


def decode(cls: type[Request], tree: Tree) -> Request:
    """Decode a Query parameter tree (see ``build_tree``) into ``cls``.

    Raises InvalidParameterValue for a non-integer integer member or bad base64 in ``BinaryValue``.
    """
    return cls(**_members(cls.MEMBERS, tree))


# ----------------------------------------------------------------------------------------------------- encoding


def _emit_value(action: str, name: str, value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        out.append(f"<{name}>")
        _emit_struct(action, value, out)
        out.append(f"</{name}>")
    elif isinstance(value, bool):
        out.append(f"<{name}>{'true' if value else 'false'}</{name}>")
    elif value is not None:
        out.append(f"<{name}>{_text(str(value))}</{name}>")


def _emit_struct(action: str, result: dict[str, Any], out: list[str]) -> None:
    """Append the elements of a JSON-model structure with SQS's flattened lists and maps (SQS-REFERENCE 1.3)."""
    for key, value in result.items():
        mapped = MAP_ELEMENTS.get(key)
        if mapped is not None and isinstance(value, dict):
            element, key_name, value_name = mapped
            for k, v in value.items():
                out.append(f"<{element}><{key_name}>{_text(k)}</{key_name}>")
                _emit_value(action, value_name, v, out)
                out.append(f"</{element}>")
        elif isinstance(value, list):
            element = list_element(action, key)
            for item in value:
                _emit_value(action, element, item, out)
        else:
            _emit_value(action, key, value, out)


def sqs_escape(text: str) -> str:
    """Apply SQS's extra text escaping to already XML-escaped text: ``"`` → ``&quot;``, CR → ``&#xD;``."""
    return text.replace('"', "&quot;").replace("\r", "&#xD;")


def encode(action: str, result: dict[str, Any], request_id: str) -> bytes:
    """The XML body of a successful ``action`` response (``<{Action}Response>`` with ``<{Action}Result>`` for
    actions with output, ``<ResponseMetadata><RequestId>``)."""
    head = f'<?xml version="1.0"?><{action}Response xmlns="{XMLNS}">'
    tail = f"<ResponseMetadata><RequestId>{request_id}</RequestId></ResponseMetadata></{action}Response>"
    if action not in WITH_RESULT:
        return (head + tail).encode()
    if not result:
        return f"{head}<{action}Result/>{tail}".encode()
    out = [head, f"<{action}Result>"]
    _emit_struct(action, result, out)
    out.append(f"</{action}Result>{tail}")
    return "".join(out).encode()


def wants_json(accept: bytes | None) -> bool:
    """True when an ``Accept`` header value asks for the JSON rendering of a Query response.

    That is any value containing ``application/json`` (``application/json``, ``application/json, text/plain``, in
    any case); ``*/*``, ``text/xml``, other values and no header (None) keep XML.
    """
    if accept is None:
        return False
    return JSON_CONTENT_TYPE in accept or JSON_CONTENT_TYPE in accept.lower()


def _json_struct(action: str, result: dict[str, Any], element: str) -> dict[str, Any]:
    """The JSON object of a structure, mirroring ``_emit_struct``: each repeated element becomes a list under its
    element name (``JSON_LIST_KEYS`` may rename it within ``element``), lists and maps that XML leaves out (empty)
    and None members are left out, map entries are ``{key element: key, value element: value}``."""
    out: dict[str, Any] = {}
    for key, value in result.items():
        if value is None:
            continue
        mapped = MAP_ELEMENTS.get(key)
        if mapped is not None and isinstance(value, dict):
            if not value:
                continue
            entry_element, key_name, value_name = mapped
            entries = []
            for k, v in value.items():
                entry: dict[str, Any] = {key_name: k}
                if v is not None:
                    entry[value_name] = _json_struct(action, v, value_name) if isinstance(v, dict) else v
                entries.append(entry)
            out[JSON_LIST_KEYS.get((element, entry_element), entry_element)] = entries
        elif isinstance(value, list):
            items = [item for item in value if item is not None]
            if not items:
                continue
            item_element = list_element(action, key)
            out[JSON_LIST_KEYS.get((element, item_element), item_element)] = [
                _json_struct(action, item, item_element) if isinstance(item, dict) else item for item in items
            ]
        elif isinstance(value, dict):
            out[key] = _json_struct(action, value, key)
        else:
            out[key] = value
    return out


def encode_json(action: str, result: dict[str, Any], request_id: str) -> bytes:
    """The JSON rendering of the document ``encode`` writes as XML, for a Query request with
    ``Accept: application/json``: ``{"{Action}Response": {"{Action}Result": {...}, "ResponseMetadata":
    {"RequestId": ...}}}``; ``{Action}Result`` only for actions with output (``{}`` when the result is empty,
    where XML has ``<{Action}Result/>``). Rules in the module docstring."""
    response: dict[str, Any] = {}
    if action in WITH_RESULT:
        element = f"{action}Result"
        response[element] = _json_struct(action, result, element)
    response["ResponseMetadata"] = {"RequestId": request_id}
    return orjson.dumps({f"{action}Response": response})


_NEEDS_ESCAPE = re.compile('[&<>"\r]')


def _text(value: str) -> str:
    """``value`` as XML text with SQS's escaping; most values (ids, digests, numbers) need none."""
    if _NEEDS_ESCAPE.search(value) is None:
        return value
    return sqs_escape(escape(value))


def encode_error(error: SQSError, request_id: str) -> tuple[int, bytes, bytes]:
    """``(HTTP status, x-amzn-query-error header value, body)`` of ``error`` as an ``ErrorResponse`` document."""
    info = error_info(error)
    body = (
        f'<?xml version="1.0"?><ErrorResponse xmlns="{XMLNS}"><Error><Type>{info.fault}</Type>'
        f"<Code>{_text(info.query_code)}</Code><Message>{_text(query_message(error))}</Message><Detail/></Error>"
        f"<RequestId>{request_id}</RequestId></ErrorResponse>"
    )
    return info.status, info.header, body.encode()


def encode_error_json(error: SQSError, request_id: str) -> tuple[int, bytes, bytes]:
    """``encode_error`` rendered as JSON (``Accept: application/json``): the same status, header, Query code and
    message, body ``{"Error": {"Type": "Sender", "Code": ..., "Message": ...}, "RequestId": ...}``."""
    info = error_info(error)
    error_element = {"Type": info.fault, "Code": info.query_code, "Message": query_message(error)}
    body = orjson.dumps({"Error": error_element, "RequestId": request_id})
    return info.status, info.header, body
