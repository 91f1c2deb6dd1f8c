"""The AWS JSON 1.0 wire format: request bodies → request objects, response dicts and errors → bytes.

docs/behaviour.md section 1.4/1.5. Member names are the current model's; blobs are base64 strings; absent members are
omitted from responses. A body that is not a JSON object raises SerializationError (``SerializationException``);
an integer member that is not an integer raises InvalidParameterValue; a wrongly typed string/list/map member raises
SerializationError.
"""

from __future__ import annotations

from typing import Any

import orjson

from sqsemu.engine.errors import SerializationError, SQSError
from sqsemu.engine.message import MessageAttributeValue
from sqsemu.protocol.errors import error_info
from sqsemu.protocol.shapes import Kind, Member, Request, decode_binary, to_int

CONTENT_TYPE = b"application/x-amz-json-1.0"


def _wrong_type(name: str, expected: str) -> SerializationError:
    return SerializationError(f"Unexpected value type for member {name}: expected {expected}.")


def _str(value: object, name: str) -> str:
    if isinstance(value, str):
        return value
    raise _wrong_type(name, "string")


def _str_list(value: object, name: str) -> list[str]:
    if not isinstance(value, list):
        raise _wrong_type(name, "list")
    return [_str(item, name) for item in value]


def _str_map(value: object, name: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise _wrong_type(name, "map")
    return {_str(k, name): _str(v, name) for k, v in value.items()}


def _attr_value(value: object, name: str) -> MessageAttributeValue:
    if not isinstance(value, dict):
        raise _wrong_type(name, "structure")
    data_type = value.get("DataType")
    string_value = value.get("StringValue")
    binary_value = value.get("BinaryValue")
    return MessageAttributeValue(
        "" if data_type is None else _str(data_type, "DataType"),
        None if string_value is None else _str(string_value, "StringValue"),
        None if binary_value is None else decode_binary(_str(binary_value, "BinaryValue")),
    )


def _attr_map(value: object, name: str) -> dict[str, MessageAttributeValue]:
    if not isinstance(value, dict):
        raise _wrong_type(name, "map")
    return {_str(k, name): _attr_value(v, name) for k, v in value.items()}


def _value(member: Member, value: object) -> Any:
    """The request value of one present JSON member."""
    kind = member.kind
    if kind is Kind.STR:
        return _str(value, member.name)
    if kind is Kind.INT:
        return to_int(value, member.name)
    if kind is Kind.STR_LIST:
        return _str_list(value, member.name)
    if kind is Kind.STR_MAP:
        return _str_map(value, member.name)
    if kind is Kind.ATTR_MAP:
        return _attr_map(value, member.name)
    # Kind.STRUCT_LIST
    struct = member.struct
    assert struct is not None
    if not isinstance(value, list):
        raise _wrong_type(member.name, "list")
    members = struct.members
    by_name = _by_name(members)
    build = struct.build
    entries = []
    for item in value:
        if not isinstance(item, dict):
            raise _wrong_type(member.name, "structure")
        entries.append(build(_fields(by_name, members, item)))
    return entries


_Field = tuple[str, bool, Member]
"""A member as the decoder looks it up by its JSON name: (request attribute, whether a string member, the member)."""

_BY_NAME: dict[int, dict[str, _Field]] = {}  # id(members tuple) -> {JSON name: field}; the tuples live for ever


def _by_name(members: tuple[Member, ...]) -> dict[str, _Field]:
    """``members`` by JSON name, worked out once per members tuple."""
    by_name = _BY_NAME.get(id(members))
    if by_name is None:
        by_name = _BY_NAME[id(members)] = {m.name: (m.attr, m.kind is Kind.STR, m) for m in members}
    return by_name


def _members(members: tuple[Member, ...], obj: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for a request/entry class from a JSON object, per ``members``."""
    return _fields(_by_name(members), members, obj)


def _fields(by_name: dict[str, _Field], members: tuple[Member, ...], obj: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments from a JSON object, its members looked up in ``by_name`` (``_by_name(members)``).

    The object's own keys are looked up (unknown ones are ignored); when a value is wrong, the members are gone
    through in their declared order instead, so the error raised is the one for the first wrong member."""
    out: dict[str, Any] = {}
    try:
        for key, value in obj.items():
            field = by_name.get(key)
            if field is None or value is None:
                continue
            if field[1] and type(value) is str:  # a string member holding a string: most members
                out[field[0]] = value
            else:
                out[field[0]] = _value(field[2], value)
    except SQSError:
        _members_in_order(members, obj)
        raise
    return out


def _members_in_order(members: tuple[Member, ...], obj: dict[str, Any]) -> None:
    """Decode ``obj``'s members in declared order: raises the error of the first wrong one."""
    for member in members:
        value = obj.get(member.name)
        if value is not None:
            _value(member, value)


def decode(cls: type[Request], body: bytes) -> Request:
    """Decode a JSON 1.0 request body into ``cls``. An empty body is ``{}``.

    Raises SerializationError (not JSON / not an object / wrong member type) or InvalidParameterValue (a non-integer
    integer member, bad base64 in ``BinaryValue``).
    """
    if not body or body.isspace():
        obj: object = {}
    else:
        try:
            obj = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise SerializationError("The request body is not valid JSON.") from None
    if not isinstance(obj, dict):
        raise SerializationError("The request body must be a JSON object.")
    return cls(**_members(cls.MEMBERS, obj))


def plain_strings(body: bytes) -> bool:
    """Whether every string that :func:`decode` reads from the request body ``body`` (the UTF-8 bytes of a JSON
    text) holds only characters of XML 1.0's ``Char``, the characters SQS allows in a message body (API Reference,
    ``SendMessage``: "MessageBody"), so that its bodies need no check of their own.

    True when ``body`` has no backslash (no escape: each string's characters are its bytes as they stand) and no
    UTF-8 of U+FFFE or U+FFFF (``EF BF BE``, ``EF BF BF``). The parser refuses the rest of what ``Char`` leaves out:
    a raw character below U+0020 in a string (RFC 8259, section 7: TAB, LF and CR must be escaped too, so an
    allowed one always comes with a backslash) and a surrogate's UTF-8 (not UTF-8 at all); both are checked by
    ``tests/unit/test_body_check.py`` against the installed orjson. A False answer proves nothing: the bodies are
    checked as any other's. Costs two ``memchr`` over ``body`` (two searches more for a body with an 0xEF byte),
    not a pass per character.
    """
    # find(), not ``in``: a bytes ``in`` tries its operand as an int first (a TypeError raised and cleared); a
    # one-byte needle is a memchr (about 1 instruction in 20 bytes), a longer one a scan of about 4 a byte
    return body.find(b"\\") < 0 and (
        body.find(b"\xef") < 0 or (body.find(b"\xef\xbf\xbe") < 0 and body.find(b"\xef\xbf\xbf") < 0)
    )


def encode(result: dict[str, Any]) -> bytes:
    """The JSON body of a successful response (``result`` is already in JSON-model form)."""
    return orjson.dumps(result)


def encode_error(error: SQSError) -> tuple[int, bytes, bytes]:
    """``(HTTP status, x-amzn-query-error header value, body)`` of ``error`` in JSON 1.0 form."""
    info = error_info(error)
    body = orjson.dumps({"__type": info.json_type, "message": error.message})
    return info.status, info.header, body
