"""The AWS Query wire format: form parameters → request objects; response dicts and errors → XML (or JSON).

docs/behaviour.md section 1.2 (key map, flattened lists and maps, legacy forms) and 1.3 (XML layout). Parameters are
first folded into a tree on ``.`` (``MessageAttribute.1.Value.StringValue`` → ``tree["MessageAttribute"]["1"]
["Value"]["StringValue"]``); the member specs of ``protocol.shapes`` then read the tree. Responses are written by a
small emitter of their own (elements and text only, SQS's flattened lists and maps) with SQS's escaping (``&``, ``<``,
``>``, ``"`` → ``&quot;``, CR → ``&#xD;``) so bodies round-trip exactly. It replaced ``xmltodict.unparse``, whose
per-element name validation cost about 0.5 ms per 10-entry batch response and kept Query SendMessageBatch under the
25,000 messages/s floor; the unit tests parse its output with an XML parser, the integration tests with a real
Query client.

Response format negotiation: a Query request whose ``Accept`` header contains ``application/json`` gets its
response as JSON (``Content-Type: application/json``), as AWS does (observed, not documented); ``*/*``, any other
``Accept`` or none gets XML. The JSON is not a transcription of the XML document: AWS renders its internal result
object, and the rules below follow responses recorded on AWS; where no recording shows a member, its name is the API
model's (botocore's SQS service model, ``shapes`` of ``sqs/2012-11-05/service-2.json``). ``JSON_RESULTS`` lists the
members of every result structure once; ``encode_json`` reads nothing else (``_emit_struct``, the XML rendering, is
driven by ``WITH_RESULT``, ``LIST_ELEMENTS`` and ``MAP_ELEMENTS`` and does not read it):

- ``{Action}Response`` → ``{Action}Result`` (only for actions with output) and ``ResponseMetadata/RequestId``
  (recorded on AWS)::

    {"ListQueuesResponse": {"ListQueuesResult": {"NextExclusiveStartQueueName": null, "NextToken": null,
                                                 "queueUrls": ["https://sqs.us-east-1.amazonaws.com/<acct>/a"]},
                            "ResponseMetadata": {"RequestId": "..."}}}

- every member of the result structure is present, ``null`` when absent; an empty list or map is ``null`` too
  (recorded on AWS: ``"queueUrls": null`` without queues, ``"messages": null`` without messages, a message's
  ``"Attributes": null``, ``"MessageAttributes": null``, ``"MD5OfMessageAttributes": null``);
- member names are the API model's member names, except where recorded otherwise: ``ListQueuesResult`` has
  ``queueUrls`` (model: ``QueueUrls``) and an extra ``NextExclusiveStartQueueName`` (always ``null`` here: sqsemu
  pages with ``NextToken``), ``ReceiveMessageResult`` has ``messages`` (model: ``Messages``), all recorded on AWS.
  ``ListDeadLetterSourceQueuesResult``'s ``queueUrls`` is its model name;
- members are in ASCII order of their names, as in every recorded response (``Attributes``, ``Body``, ``MD5OfBody``,
  ``MD5OfMessageAttributes``, ``MessageAttributes``, ``MessageId``, ``ReceiptHandle``);
- a list is a JSON list, also with one item (recorded on AWS); a map is a list of entries named as the XML's map entries
  are: ``{"Name": key, "Value": value}`` (recorded on AWS for GetQueueAttributes' ``Attributes``; the same for a
  message's ``Attributes`` and ``MessageAttributes``) and ``{"Key": key, "Value": value}`` for ListQueueTags'
  ``Tags``, whose XML entries use ``Key`` (no recording shows tags)::

    {"ReceiveMessageResult": {"messages": [{"Attributes": [{"Name": "SentTimestamp", "Value": "1700000000000"}],
        "Body": "...", "MD5OfBody": "...", "MD5OfMessageAttributes": "...",
        "MessageAttributes": [{"Name": "Foo", "Value": {"BinaryListValues": null, "BinaryValue": null,
                                                         "DataType": "String", "StringListValues": null,
                                                         "StringValue": "Bar"}}],
        "MessageId": "...", "ReceiptHandle": "..."}]}}

  A message attribute's value (every ``MessageAttributeValue`` member, ``BinaryValue`` base64) is not in any
  recording: it is a reasoned guess in the recorded style;
- values keep their JSON type where the model's type is not a string (``"SenderFault": true``,
  ``"ApproximateNumberOfMessagesMoved": 3``); everything else is a string, as in XML;
- errors (recorded on AWS): ``{"Error": {"Type": "Sender", "Code": <Query code>, "Message": ...}, "RequestId":
  ...}`` with the HTTP status and ``x-amzn-query-error`` header of the XML error.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from sqsemu.engine.errors import MalformedInput, SQSError
from sqsemu.engine.message import MessageAttributeValue
from sqsemu.protocol.errors import error_info, query_message
from sqsemu.protocol.shapes import Kind, Member, Request, decode_binary, to_int

XMLNS = "http://queue.amazonaws.com/doc/2012-11-05/"
CONTENT_TYPE = b"text/xml"
JSON_CONTENT_TYPE = b"application/json"
"""Content type of a Query response negotiated to JSON (``Accept: application/json``)."""
UNKNOWN_OPERATION_BODY = b"<UnknownOperationException/>"

# ------------------------------------------------------------------------------ the XML response document
# Read by the XML rendering (``encode``, ``_emit_struct``). Results are JSON-model dicts.

# Actions whose response has a <{Action}Result> wrapper (docs/behaviour.md 1.3).
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
        if "." not in key:  # a top-level member (Action, QueueUrl, MessageBody...): no path to walk
            existing = root.get(key)
            if isinstance(existing, dict):
                existing[""] = value
            else:
                root[key] = value
            continue
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


MAX_INDEX = 2**31 - 1
"""Largest list index (AWS reads indexes as 32-bit integers)."""


def _index(key: str) -> int:
    """The list index named by ``key``, a segment made of digits (``str.isdigit``).

    An index is a decimal number of ASCII digits from 1 to ``MAX_INDEX`` (leading zeros allowed). Anything else made
    of digits (``0``, ``²``, ``١``, a number past ``MAX_INDEX``, 5,000 digits) raises MalformedInput ``<key> is not a
    valid index``, as AWS answers ``AttributeNameList.0``. ``int()`` only ever sees at most 10 ASCII digits.
    """
    if key.isascii():
        significant = key.lstrip("0")
        if 0 < len(significant) <= 10:
            number = int(significant)
            if number <= MAX_INDEX:
                return number
    raise MalformedInput(f"{key} is not a valid index")


def _numbered(node: Tree) -> list[Any]:
    """The children of ``node`` with a decimal index, in index order (``X.1``, ``X.2``, ... ``X.10``).

    Children whose key is not made of digits are not list entries and are skipped (``Name`` and ``Value`` of the
    legacy unindexed forms live beside the entries); a key made of digits that is not a valid index raises
    MalformedInput (``_index``).
    """
    indexed = [(_index(k), v) for k, v in node.items() if k.isdigit()]
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


_Step = tuple[Member, str, Kind, bool]
"""A member as the decoder reads it: (member, first Query key, kind, whether that key is the only place it can be
given: no other Query key, no legacy key)."""

_PLANS: dict[int, list[_Step]] = {}  # id(members tuple) -> the members' steps


def _plan(members: tuple[Member, ...]) -> list[_Step]:
    """Each member's step, worked out once per members tuple (they live for ever)."""
    plan = _PLANS.get(id(members))
    if plan is None:
        plan = _PLANS[id(members)] = [
            (member, member.query_keys[0], member.kind, len(member.query_keys) == 1 and not member.legacy)
            for member in members
        ]
    return plan


def _members(members: tuple[Member, ...], tree: Tree) -> dict[str, Any]:
    """Keyword arguments for a request/entry class from a parameter tree, per ``members``. A member whose only key
    is absent is skipped at once (an absent member decodes to nothing and raises nothing, whatever its kind)."""
    out: dict[str, Any] = {}
    for member, key, kind, single in _plan(members):
        if single and key not in tree:
            continue
        value: Any
        if kind is Kind.STR:
            node = tree.get(key)
            if node is None:
                continue
            value = node if type(node) is str else _scalar(node)
        elif kind is Kind.INT:
            raw = _scalar(tree.get(key))
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
            node = tree.get(key)
            if not isinstance(node, dict):
                continue
            entries = []
            for entry in _numbered(node):
                entries.append(struct.build(_members(struct.members, entry) if isinstance(entry, dict) else {}))
            value = entries
        if value is not None:
            out[member.attr] = value
    return out


def decode(cls: type[Request], tree: Tree) -> Request:
    """Decode a Query parameter tree (see ``build_tree``) into ``cls``.

    Raises InvalidParameterValue for a non-integer integer member or bad base64 in ``BinaryValue``, MalformedInput
    for a list index that is made of digits but is not a valid index (``0``, ``²``, past 2,147,483,647).
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
    """Append the elements of a JSON-model structure with SQS's flattened lists and maps (docs/behaviour.md 1.3)."""
    for key, value in result.items():
        if value.__class__ is str:  # most members: the element as _emit_value writes it, without its type tests
            out.append(f"<{key}>{_text(value)}</{key}>")
            continue
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


def xml_escape(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities (what ``xml.sax.saxutils.escape`` does, without importing it: it brings in
    ``urllib.request`` and ``http.client``, a tenth of the server's start-up)."""
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def sqs_escape(text: str) -> str:
    """Apply SQS's extra text escaping to already XML-escaped text: ``"`` → ``&quot;``, CR → ``&#xD;``."""
    return text.replace('"', "&quot;").replace("\r", "&#xD;")


def encode(action: str, result: dict[str, Any], request_id: str) -> bytes:
    """The XML body of a successful ``action`` response (``<{Action}Response>`` with ``<{Action}Result>`` for
    actions with output, ``<ResponseMetadata><RequestId>``)."""
    frame = _FRAMES.get(action)
    if frame is None:
        frame = _FRAMES[action] = _frame(action)
    head, open_result, close_result, tail = frame
    if action not in WITH_RESULT:
        return f"{head}{_METADATA}{request_id}{tail}".encode()
    if not result:
        return f"{head}<{action}Result/>{_METADATA}{request_id}{tail}".encode()
    out = [open_result]
    _emit_struct(action, result, out)
    out.append(close_result)
    out.append(request_id)
    out.append(tail)
    return "".join(out).encode()


_METADATA = "<ResponseMetadata><RequestId>"


def _frame(action: str) -> tuple[str, str, str, str]:
    """The fixed text of ``action``'s response document: (``<?xml ...?><{Action}Response ...>``, that and
    ``<{Action}Result>``, ``</{Action}Result>`` up to the request id, the rest after the request id)."""
    head = f'<?xml version="1.0"?><{action}Response xmlns="{XMLNS}">'
    return (
        head,
        f"{head}<{action}Result>",
        f"</{action}Result>{_METADATA}",
        f"</RequestId></ResponseMetadata></{action}Response>",
    )


_FRAMES: dict[str, tuple[str, str, str, str]] = {}
"""``_frame(action)`` by action, made at its first answer (the actions are a fixed set)."""


def wants_json(accept: bytes | None) -> bool:
    """True when an ``Accept`` header value asks for the JSON rendering of a Query response.

    That is any value containing ``application/json`` (``application/json``, ``application/json, text/plain``, in
    any case); ``*/*``, ``text/xml``, other values and no header (None) keep XML.
    """
    if accept is None:
        return False
    return JSON_CONTENT_TYPE in accept or JSON_CONTENT_TYPE in accept.lower()


# ------------------------------------------------------------------------------ the JSON response document
# Read by the JSON rendering (``encode_json``) only. Naming rules and their sources: module docstring.


class JsonKind(enum.Enum):
    """How a result member is rendered in JSON."""

    SCALAR = "scalar"  # string, number or boolean, as the JSON-model dict has it
    LIST = "list"  # a list of scalars
    MAP = "map"  # a map of scalars → [{"Name": key, "Value": value}, ...]
    STRUCT_LIST = "struct_list"  # a list of structures (``members``)
    STRUCT_MAP = "struct_map"  # a map of structures (``members``) → [{"Name": key, "Value": {...}}, ...]


@dataclass(frozen=True, slots=True)
class JsonMember:
    """One member of a result structure rendered as JSON."""

    name: str
    """The JSON key: the API model's member name unless recorded otherwise."""
    model: str | None
    """The API model's member name, which is also the key of the handler's JSON-model dict; None for a member AWS
    sends that the model does not have (always null)."""
    kind: JsonKind = JsonKind.SCALAR
    members: tuple[JsonMember, ...] = ()
    """The members of the structures of a STRUCT_LIST / STRUCT_MAP."""
    key: str = "Name"
    """The key member of a MAP / STRUCT_MAP entry: the XML entry's key element (``Name``; ``Key`` for tags)."""


def _scalars(*names: str) -> tuple[JsonMember, ...]:
    return tuple(JsonMember(name, name) for name in names)


_BATCH_RESULT_ERROR_ENTRY = _scalars("Code", "Id", "Message", "SenderFault")
_ID_ENTRY = _scalars("Id")
# A reasoned guess (no recording shows a message attribute in JSON): every MessageAttributeValue member, in the
# recorded style (all present, null when absent, ASCII order), BinaryValue base64 as in JSON 1.0.
_MESSAGE_ATTRIBUTE_VALUE = (
    JsonMember("BinaryListValues", "BinaryListValues", JsonKind.LIST),
    *_scalars("BinaryValue", "DataType"),
    JsonMember("StringListValues", "StringListValues", JsonKind.LIST),
    *_scalars("StringValue"),
)
_MESSAGE = (
    JsonMember("Attributes", "Attributes", JsonKind.MAP),
    *_scalars("Body", "MD5OfBody", "MD5OfMessageAttributes"),
    JsonMember("MessageAttributes", "MessageAttributes", JsonKind.STRUCT_MAP, _MESSAGE_ATTRIBUTE_VALUE),
    *_scalars("MessageId", "ReceiptHandle"),
)
_SEND_RESULT = _scalars(
    "MD5OfMessageAttributes", "MD5OfMessageBody", "MD5OfMessageSystemAttributes", "MessageId", "SequenceNumber"
)


def _batch(success: tuple[JsonMember, ...]) -> tuple[JsonMember, ...]:
    return (
        JsonMember("Failed", "Failed", JsonKind.STRUCT_LIST, _BATCH_RESULT_ERROR_ENTRY),
        JsonMember("Successful", "Successful", JsonKind.STRUCT_LIST, success),
    )


# Action → the members of its {Action}Result, in the order they are written (ASCII order of the JSON names, as
# recorded). An action that is not here has no result element (only ResponseMetadata). A unit test checks the table
# against botocore's SQS model (every output member of every operation, nothing else but the recorded extras).
JSON_RESULTS: dict[str, tuple[JsonMember, ...]] = {
    "CancelMessageMoveTask": _scalars("ApproximateNumberOfMessagesMoved"),
    "ChangeMessageVisibilityBatch": _batch(_ID_ENTRY),
    "CreateQueue": _scalars("QueueUrl"),
    "DeleteMessageBatch": _batch(_ID_ENTRY),
    "GetQueueAttributes": (JsonMember("Attributes", "Attributes", JsonKind.MAP),),
    "GetQueueUrl": _scalars("QueueUrl"),
    "ListDeadLetterSourceQueues": (
        JsonMember("NextToken", "NextToken"),
        JsonMember("queueUrls", "queueUrls", JsonKind.LIST),
    ),
    "ListMessageMoveTasks": (
        JsonMember(
            "Results",
            "Results",
            JsonKind.STRUCT_LIST,
            _scalars(
                "ApproximateNumberOfMessagesMoved",
                "ApproximateNumberOfMessagesToMove",
                "DestinationArn",
                "FailureReason",
                "MaxNumberOfMessagesPerSecond",
                "SourceArn",
                "StartedTimestamp",
                "Status",
                "TaskHandle",
            ),
        ),
    ),
    "ListQueueTags": (JsonMember("Tags", "Tags", JsonKind.MAP, key="Key"),),
    "ListQueues": (  # recorded on AWS: queueUrls (model: QueueUrls) and NextExclusiveStartQueueName (no model member)
        JsonMember("NextExclusiveStartQueueName", None),
        JsonMember("NextToken", "NextToken"),
        JsonMember("queueUrls", "QueueUrls", JsonKind.LIST),
    ),
    "ReceiveMessage": (JsonMember("messages", "Messages", JsonKind.STRUCT_LIST, _MESSAGE),),  # recorded: messages
    "SendMessage": _SEND_RESULT,
    "SendMessageBatch": _batch(_scalars("Id", *(m.name for m in _SEND_RESULT))),
    "StartMessageMoveTask": _scalars("TaskHandle"),
}


def _json_struct(members: tuple[JsonMember, ...], source: dict[str, Any]) -> dict[str, Any]:
    """The JSON object of a structure: every one of ``members``, read from the JSON-model dict ``source``; absent,
    None, empty lists and empty maps are ``None`` (rules in the module docstring)."""
    out: dict[str, Any] = {}
    for member in members:
        value = None if member.model is None else source.get(member.model)
        kind = member.kind
        if value is None or (not value and kind is not JsonKind.SCALAR):
            out[member.name] = None
        elif kind is JsonKind.SCALAR or kind is JsonKind.LIST:
            out[member.name] = value
        elif kind is JsonKind.MAP:
            out[member.name] = [{member.key: k, "Value": v} for k, v in value.items()]
        elif kind is JsonKind.STRUCT_LIST:
            out[member.name] = [_json_struct(member.members, item) for item in value]
        else:  # JsonKind.STRUCT_MAP
            out[member.name] = [{member.key: k, "Value": _json_struct(member.members, v)} for k, v in value.items()]
    return out


def encode_json(action: str, result: dict[str, Any], request_id: str) -> bytes:
    """The JSON body of a successful ``action`` response to a Query request with ``Accept: application/json``:
    ``{"{Action}Response": {"{Action}Result": {...}, "ResponseMetadata": {"RequestId": ...}}}``, the result with
    every member ``JSON_RESULTS`` lists for ``action``; ``{Action}Result`` only for actions with output. Rules in
    the module docstring."""
    response: dict[str, Any] = {}
    members = JSON_RESULTS.get(action)
    if members is not None:
        response[f"{action}Result"] = _json_struct(members, result)
    response["ResponseMetadata"] = {"RequestId": request_id}
    return orjson.dumps({f"{action}Response": response})


# Characters outside XML 1.0's ``Char`` production (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
# [#x10000-#x10FFFF]): C0 controls but tab, line feed and carriage return; lone surrogates; U+FFFE and U+FFFF.
# Written with the regular expression's own escapes (a raw string): mypyc cannot compile lone surrogates in a literal.
_NOT_XML_CHAR = r"\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff"
_FORBIDDEN = re.compile(f"[{_NOT_XML_CHAR}]")
# Whether a text needs any work: markup characters, CR, or a character XML 1.0 cannot carry. ASCII text (ids, digests,
# numbers, receipt handles, most bodies) is searched with an ASCII-only class, which sre matches with a bitmap as fast
# as the markup-only class it replaced; the wider class is searched only in non-ASCII text (``str.isascii`` is O(1)).
_NEEDS_ESCAPE_ASCII = re.compile('[&<>"\r\x00-\x08\x0b\x0c\x0e-\x1f]')
_NEEDS_ESCAPE = re.compile(f'[&<>"\r{_NOT_XML_CHAR}]')
_PLAIN_ASCII = bytes(c for c in range(128) if _NEEDS_ESCAPE_ASCII.match(chr(c)) is None)
"""The ASCII characters that need no work, as bytes: an ASCII text made only of them (nothing left once they are
deleted, ``bytes.translate``) is XML text as it is. For a 1 KiB body that test costs about a seventh of
``_NEEDS_ESCAPE_ASCII.search``, which tries its class at every position."""
REPLACEMENT_CHARACTER = "\ufffd"


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot carry replaced by U+FFFD (REPLACEMENT CHARACTER).

    A character reference cannot stand in for them (``&#x1;`` is not well-formed XML 1.0 either), so they are
    replaced, not escaped. Message bodies never need it (SendMessage refuses such characters,
    InvalidMessageContents); what does are values echoed back as given: receipt handles, batch entry ids and
    attribute names in error messages, and the like.
    """
    return _FORBIDDEN.sub(REPLACEMENT_CHARACTER, text)


def _text(value: str) -> str:
    """``value`` as XML text with SQS's escaping, always well-formed XML 1.0 character data: ``&``, ``<``, ``>``
    and ``"`` become entities, CR ``&#xD;``, and characters outside XML 1.0's ``Char`` production U+FFFD
    (``xml_safe``).

    Cost: most values (ids, digests, numbers, bodies) need none of it; an ASCII one costs one ``bytes.translate``
    (``_PLAIN_ASCII``), any other one regex search. Text that needs
    escaping pays ``xml_safe``'s extra scan only when ``str.isprintable`` (a fast C loop) is False, i.e. when it holds
    a control character, a line break, or another non-printable character; every character XML cannot carry is one.
    """
    if value.isascii():
        if not value.encode().translate(None, _PLAIN_ASCII):
            return value
    elif _NEEDS_ESCAPE.search(value) is None:
        return value
    if not value.isprintable():
        value = xml_safe(value)
    return sqs_escape(xml_escape(value))


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
