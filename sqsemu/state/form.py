"""The saved-state file: JSON lines (one JSON object per line, UTF-8), version :data:`VERSION`.

::

    {"format": "sqsemu-state", "version": 1, "exported_ms": 1767225600000, "sqsemu": "0.1.0"}
    {"queues": {"uid": "5f0c2a9e", "account": "000000000000", "region": "us-east-1", "name": "orders", ...}}
    {"messages": {"queue_uid": "5f0c2a9e", "message_id": "...", "body": "...", ...}}
    {"deduplication": {...}}
    {"fifo_sequences": {...}}
    {"move_tasks": {...}}
    {"event_source_mappings": {...}}
    {"topics": {...}}
    {"end": {"records": 7}}

The first line is the header: the format's name and version, the server clock's time at export (``exported_ms``,
epoch ms) and the sqsemu version that wrote it. Then one record per line, ``{table: row}``, in the order above:
a queue's rows before the rows that name its ``uid``. A row of ``queues``, ``messages``, ``deduplication``,
``fifo_sequences`` and ``move_tasks`` is the durable store's row of that table (:mod:`sqsemu.persistence.rowforms`)
as an object of its columns, with two differences: the columns the store keeps as JSON text (a queue's
``attributes``, ``tags`` and ``delayed_attributes``, a message's ``message_attributes`` and ``system_attributes``)
are JSON values here, and a message has no ``seq`` (its line's place is its place in the enqueue order). A record of
``event_source_mappings`` or ``topics`` is the document durable mode keeps (``Mapping.saved``, ``Topic.to_doc``).
The last line counts the records: a file cut short (a save that did not finish, a partial copy) has none and is
refused.

:func:`read_state` reads a file into a :class:`SavedState` (rows in the store's form, ready for
``rowforms.restore_rows``), checking every line's shape and every column's type; what the values mean (a queue's
attributes, a message's queue) is checked by :mod:`.load`. Errors are :class:`StateError`, naming the line.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from sqsemu.persistence.rowforms import (
    DEDUPLICATION_COLUMNS,
    MESSAGE_COLUMNS,
    QUEUE_COLUMNS,
    SEQUENCE_COLUMNS,
    TASK_COLUMNS,
)

__all__ = [
    "DOCUMENT_TABLES",
    "FORMAT",
    "MEDIA_TYPE",
    "ROW_TABLES",
    "TABLES",
    "VERSION",
    "SavedState",
    "StateError",
    "document_line",
    "end_line",
    "header_line",
    "read_state",
    "row_line",
]

FORMAT = "sqsemu-state"
VERSION = 1
"""The format version this sqsemu writes, and the newest it reads."""
MEDIA_TYPE = "application/x-ndjson"

_SEQ = MESSAGE_COLUMNS.index("seq")
ROW_TABLES: dict[str, tuple[str, ...]] = {
    "queues": QUEUE_COLUMNS,
    "messages": tuple(column for column in MESSAGE_COLUMNS if column != "seq"),
    "deduplication": DEDUPLICATION_COLUMNS,
    "fifo_sequences": SEQUENCE_COLUMNS,
    "move_tasks": TASK_COLUMNS,
}
"""The tables whose records are rows, with the columns a record holds (a message's without ``seq``)."""
DOCUMENT_TABLES = ("event_source_mappings", "topics")
"""The tables whose records are documents."""
TABLES = (*ROW_TABLES, *DOCUMENT_TABLES)
_JSON_COLUMNS = frozenset({"attributes", "tags", "delayed_attributes", "message_attributes", "system_attributes"})
_INT_MAX = 2**63 - 1  # SQLite's INTEGER: a larger number could not be written by durable mode
_INT_MIN = -(2**63)
_DIGITS = re.compile(r"[0-9]{1,20}")


class StateError(ValueError):
    """A saved state that cannot be loaded: ``message`` says why (and where)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class SavedState:
    """A saved state as read: ``version`` (of the file's format), ``exported_ms`` (the exporting server's clock,
    epoch ms), ``server`` (the sqsemu version that wrote it), ``rows`` by table (tuples in the durable store's
    column order, JSON columns as JSON text, messages numbered by their place) and ``documents`` by table."""

    version: int
    exported_ms: int
    server: str
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=lambda: {table: [] for table in ROW_TABLES})
    documents: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {table: [] for table in DOCUMENT_TABLES})

    def counts(self) -> dict[str, int]:
        """Records per table, in the file's order of tables."""
        return {table: len(self.rows[table]) if table in self.rows else len(self.documents[table]) for table in TABLES}


# ----------------------------------------------------------------------------------------------- writing


def _dumps(value: Any) -> bytes:
    """One line of JSON (UTF-8, no newline inside, ``\\n`` at the end)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except (orjson.JSONEncodeError, TypeError):  # what orjson does not write (a lone surrogate): the slow way
        return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def header_line(exported_ms: int, server_version: str) -> bytes:
    """The first line: format, version, the clock's time at export (epoch ms), the writer's version."""
    return _dumps({"format": FORMAT, "version": VERSION, "exported_ms": exported_ms, "sqsemu": server_version})


def row_line(table: str, row: Sequence[Any]) -> bytes:
    """The record of one row of ``table`` (one of :data:`ROW_TABLES`), given in the durable store's form."""
    if table == "messages":
        row = (*row[:_SEQ], *row[_SEQ + 1 :])
    record: dict[str, Any] = {}
    for column, value in zip(ROW_TABLES[table], row, strict=True):
        record[column] = json.loads(value) if column in _JSON_COLUMNS and value is not None else value
    return _dumps({table: record})


def document_line(table: str, document: dict[str, Any]) -> bytes:
    """The record of one document of ``table`` (one of :data:`DOCUMENT_TABLES`)."""
    return _dumps({table: document})


def end_line(records: int) -> bytes:
    """The last line: how many records came between the header and it."""
    return _dumps({"end": {"records": records}})


# ----------------------------------------------------------------------------------------------- reading


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of every line that is not blank (a ``\\r`` before the ``\\n`` is allowed)."""
    start = 0
    number = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        line = data[start:end]
        start = end + 1
        if line.strip():
            yield number, line


def _object(number: int, line: bytes) -> dict[str, Any]:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise StateError(f"line {number}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise StateError(f"line {number}: not a JSON object")
    return value


def _int(value: Any) -> bool:
    """A count: a whole number from 0 that SQLite's INTEGER holds."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _INT_MAX


def _time(value: Any) -> bool:
    """A time (epoch ms or s): any whole number SQLite's INTEGER holds (a load moves times by the clocks' difference,
    so a state loaded into a clock behind the saving one may hold times before 1970)."""
    return isinstance(value, int) and not isinstance(value, bool) and _INT_MIN <= value <= _INT_MAX


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _attribute_map(value: Any) -> str | None:
    """Why ``value`` is not a message's attribute map (``{name: [data type, string value, binary in base64]}``)."""
    if not isinstance(value, dict):
        return "must be an object {name: [data type, string value, binary value in base64]} or null"
    for name, entry in value.items():
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            return f"attribute {name!r} must be [data type, string value or null, base64 value or null]"
        if entry[1] is not None and not isinstance(entry[1], str):
            return f"attribute {name!r}: the string value must be a string or null"
        if entry[2] is not None:
            if not isinstance(entry[2], str):
                return f"attribute {name!r}: the binary value must be base64 text or null"
            try:
                base64.b64decode(entry[2], validate=True)
            except (binascii.Error, ValueError):
                return f"attribute {name!r}: the binary value is not base64"
    return None


def _delayed(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(entry, list) and len(entry) == 2 and _time(entry[0]) and _string_map(entry[1]) for entry in value
    )


_Check = Callable[[Any], "str | None"]


def _kind(test: Callable[[Any], bool], expected: str) -> _Check:
    return lambda value: None if test(value) else f"must be {expected}"


_TEXT = _kind(lambda v: isinstance(v, str) and v != "", "a non-empty string")
_ANY_TEXT = _kind(lambda v: isinstance(v, str), "a string")
_TEXT_OR_NULL = _kind(lambda v: v is None or isinstance(v, str), "a string or null")
_INT = _kind(_int, f"an integer from 0 to {_INT_MAX}")
_INT_OR_NULL = _kind(lambda v: v is None or _int(v), f"an integer from 0 to {_INT_MAX} or null")
_TIME = _kind(_time, "a whole number (a time)")
_TIME_OR_NULL = _kind(lambda v: v is None or _time(v), "a whole number (a time) or null")
_FLAG = _kind(lambda v: v in (0, 1) and not isinstance(v, float), "0 or 1")
_MAP = _kind(_string_map, "an object of strings")
_DIGIT_TEXT = _kind(lambda v: isinstance(v, str) and _DIGITS.fullmatch(v) is not None, "1 to 20 digits (text)")
_DIGITS_OR_NULL = _kind(
    lambda v: v is None or (isinstance(v, str) and _DIGITS.fullmatch(v) is not None), "1 to 20 digits (text) or null"
)
_DELAYED = _kind(lambda v: v is None or _delayed(v), "null or a list of [due epoch ms, {name: value}]")


def _attributes_or_null(value: Any) -> str | None:
    return None if value is None else _attribute_map(value)


_COLUMN_CHECKS: dict[str, dict[str, _Check]] = {
    "queues": {
        "uid": _TEXT, "account": _TEXT, "region": _TEXT, "name": _TEXT, "fifo": _FLAG, "attributes": _MAP,
        "tags": _MAP, "created_s": _TIME, "last_modified_s": _TIME, "last_purge_ms": _TIME_OR_NULL,
        "delayed_attributes": _DELAYED,
    },
    "messages": {
        "queue_uid": _TEXT, "message_id": _TEXT, "body": _ANY_TEXT, "message_attributes": _attributes_or_null,
        "system_attributes": _attributes_or_null, "trace_header": _TEXT_OR_NULL, "sender_id": _ANY_TEXT,
        "sent_ms": _TIME, "enqueued_ms": _TIME, "size": _INT, "group_id": _TEXT_OR_NULL,
        "deduplication_id": _TEXT_OR_NULL, "sequence_number": _DIGITS_OR_NULL, "dead_letter_source_arn": _TEXT_OR_NULL,
        "receive_count": _INT, "first_receive_ms": _TIME, "received_ms": _TIME, "visible_at_ms": _TIME,
        "receipt_serial": _INT,
    },
    "deduplication": {
        "queue_uid": _TEXT, "key": _TEXT, "expires_ms": _TIME, "message_id": _TEXT, "sequence_number": _DIGIT_TEXT,
    },
    "fifo_sequences": {"queue_uid": _TEXT, "last": _DIGIT_TEXT},
    "move_tasks": {
        "task_id": _TEXT, "source_uid": _TEXT, "destination_arn": _TEXT_OR_NULL, "max_per_second": _INT_OR_NULL,
        "started_ms": _TIME, "to_move": _INT, "moved": _INT, "status": _TEXT, "failure_reason": _TEXT_OR_NULL,
    },
}  # fmt: skip
"""Each column's check: None when the value may be in the column, else what it must be."""


def _row(number: int, table: str, record: Any, place: int) -> tuple[Any, ...]:
    """The store's row of one record (``place``: a message's ``seq``); raises ``StateError`` naming the column."""
    if not isinstance(record, dict):
        raise StateError(f"line {number}: a {table} record must be an object of its columns")
    columns = ROW_TABLES[table]
    unknown = sorted(set(record) - set(columns))
    if unknown:
        raise StateError(f"line {number}: {table} has no column {unknown[0]!r} (its columns: {', '.join(columns)})")
    checks = _COLUMN_CHECKS[table]
    values: list[Any] = []
    for column in columns:
        if column not in record:
            raise StateError(f"line {number}: the {table} record has no {column!r}")
        value = record[column]
        problem = checks[column](value)
        if problem is not None:
            raise StateError(f"line {number}: {table}.{column} {problem}, got {_shown(value)}")
        if column in _JSON_COLUMNS and value is not None:
            value = json.dumps(value)  # the store's form: JSON text
        if table == "queues" and column == "fifo":
            value = int(value)
        values.append(value)
    if table == "messages":
        values.insert(_SEQ, place)
    return tuple(values)


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _header(number: int, line: bytes) -> tuple[int, int, str]:
    """``(version, exported_ms, sqsemu version)`` of the header line. Raises ``StateError`` for a file that is not a
    saved state, or of a format version this sqsemu does not read (newer than :data:`VERSION`)."""
    header = _object(number, line)
    if header.get("format") != FORMAT:
        raise StateError(
            f'line {number}: not a sqsemu saved state (its first line must be {{"format": "{FORMAT}", "version": '
            f"{VERSION}, ...}}, as GET /_sqsemu/state writes it)"
        )
    version = header.get("version")
    if not isinstance(version, int) or not _int(version) or version < 1:
        raise StateError(f"line {number}: the format version must be a whole number from 1, got {_shown(version)}")
    server = header.get("sqsemu")
    if version > VERSION:
        from sqsemu import __version__

        written = f" by sqsemu {server}" if isinstance(server, str) else ""
        raise StateError(
            f"the state file has format version {version} (written{written}); this sqsemu ({__version__}) reads "
            f"format version {VERSION} and older: load it with a newer sqsemu"
        )
    exported = header.get("exported_ms")
    if not isinstance(exported, int) or not _time(exported):
        raise StateError(f"line {number}: exported_ms must be the exporting server's time in epoch ms")
    return version, exported, server if isinstance(server, str) else ""


def read_state(data: bytes) -> SavedState:
    """Read a saved-state file (its whole text, UTF-8) into a :class:`SavedState`, checking each record's table,
    columns and column types, the tables' order and the end line's count. Raises :class:`StateError` naming the
    first line at fault; a file of a newer format version is refused naming both versions."""
    lines = _lines(data)
    first = next(lines, None)
    if first is None:
        raise StateError("the state file is empty")
    version, exported, server = _header(*first)
    state = SavedState(version, exported, server)
    order = {table: index for index, table in enumerate(TABLES)}
    last_table = 0
    records = 0
    ended: int | None = None
    for number, line in lines:
        if ended is not None:
            raise StateError(f"line {number}: nothing may follow the end line (line {ended})")
        record = _object(number, line)
        if len(record) != 1:
            raise StateError(f"line {number}: a record must be one {{table: row}}, got keys {sorted(record)}")
        ((table, value),) = record.items()
        if table == "end":
            count = value.get("records") if isinstance(value, dict) else None
            if count != records:
                raise StateError(
                    f"line {number}: the end line counts {_shown(count)} records, the file holds {records}: it is "
                    "not the file that was saved"
                )
            ended = number
            continue
        if table not in order:
            raise StateError(f"line {number}: unknown table {table!r} (the tables: {', '.join(TABLES)})")
        if order[table] < last_table:
            raise StateError(
                f"line {number}: a {table} record after {TABLES[last_table]} records (the order: {', '.join(TABLES)})"
            )
        last_table = order[table]
        records += 1
        if table in ROW_TABLES:
            rows = state.rows[table]
            rows.append(_row(number, table, value, len(rows) + 1))
        elif isinstance(value, dict):
            state.documents[table].append(value)
        else:
            raise StateError(f"line {number}: a {table} record must be a JSON object")
    if ended is None:
        raise StateError(
            "the state file ends before its end line: it was cut short (a save that did not finish, or a partial "
            "copy); save it again"
        )
    return state
