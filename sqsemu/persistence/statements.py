"""Many rows per SQLite statement: the durable store's writes in a handful of calls instead of one per row.

A group commit of the round trip (send, receive, delete) holds about as many row inserts, updates and deletes as it
has messages. ``executemany`` binds and steps one statement per row; here a commit writes them with a few multi-row
statements (``INSERT OR REPLACE ... VALUES (...), (...)``, ``DELETE ... WHERE seq IN (...)``, ``UPDATE ... FROM
(VALUES ...)``), so SQLite parses nothing new and steps a few statements. Measured on 150-change commits of 1 KiB
messages: 616 to 525 us of CPU per commit.

Statement texts are built once per row count, and row counts are split into powers of two (50 rows: 32 + 16 + 2),
so a commit runs at most one statement per set bit of its row count and the connection's statement cache holds a
few dozen texts, reused by every commit. A statement never binds more parameters than the connection allows
(``SQLITE_LIMIT_VARIABLE_NUMBER``). SQLite before 3.33 has no ``UPDATE ... FROM``: updates then run one per row.

A ``None`` parameter (NULL: most of a plain message's row) is bound through an adapter registered for ``NoneType``
(:func:`bind_none_directly`): without one, Python's ``sqlite3`` asks the PrepareProtocol type for ``__adapt__`` and
None for ``__conform__`` for every None it binds, formatting and dropping an ``AttributeError`` each time (measured:
1.3-1.5 us per 1 KiB message row, 15-20% of ``write_batch``'s CPU). The value bound is NULL either way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from itertools import chain
from typing import Any

__all__ = ["MultiRow", "bind_none_directly"]

_MAX_ROWS = 512  # per statement: bigger ones gain nothing measurable and parse slower
_UPDATE_FROM = sqlite3.sqlite_version_info >= (3, 33, 0)


_NOTHING: dict[None, None] = {}  # never filled: its ``get`` returns None for None, in C


def bind_none_directly() -> None:
    """Register the ``NoneType`` adapter of ``sqlite3`` (for this process, every connection): a None parameter is
    adapted to None (bound as NULL, as without the adapter) by one lookup in the adapter registry, instead of the
    failed ``__adapt__``/``__conform__`` look-ups (see the module docstring). Idempotent."""
    sqlite3.register_adapter(type(None), _NOTHING.get)


def _values(width: int, rows: int) -> str:
    """``(?,?),(?,?)``: ``rows`` groups of ``width`` parameters."""
    group = f"({','.join('?' * width)})"
    return ",".join((group,) * rows)


class MultiRow:
    """The multi-row statements of one table (see the module docstring).

    ``insert(db, rows)`` runs ``INSERT OR REPLACE INTO <table> (<columns>) VALUES ...`` (rows: tuples in column
    order); ``delete(db, keys)`` runs ``DELETE FROM <table> WHERE <key> IN (...)``; ``update(db, rows)`` sets the
    ``updated`` columns of the rows whose key is the last item of each tuple (the key must be the table's INTEGER
    PRIMARY KEY). Each runs in the caller's transaction and raises what SQLite raises.
    """

    def __init__(self, table: str, columns: Sequence[str], key: str, updated: Sequence[str] = ()) -> None:
        self.table = table
        self.columns = tuple(columns)
        self.key = key
        self.updated = tuple(updated)
        self._texts: dict[tuple[str, int], str] = {}

    def _text(self, kind: str, rows: int) -> str:
        """The statement ``kind`` (insert, delete, update) for ``rows`` rows, built once."""
        text = self._texts.get((kind, rows))
        if text is None:
            table, key = self.table, self.key
            if kind == "insert":
                names = ", ".join(self.columns)
                text = f"INSERT OR REPLACE INTO {table} ({names}) VALUES {_values(len(self.columns), rows)}"
            elif kind == "delete":
                text = f"DELETE FROM {table} WHERE {key} IN ({','.join('?' * rows)})"
            elif rows == 0:  # one row at a time, for SQLite before 3.33
                text = f"UPDATE {table} SET {', '.join(f'{name}=?' for name in self.updated)} WHERE {key}=?"
            else:
                width = len(self.updated) + 1
                settings = ", ".join(f"{name}=v.column{i}" for i, name in enumerate(self.updated, 1))
                text = (
                    f"UPDATE {table} SET {settings} FROM (VALUES {_values(width, rows)}) AS v "
                    f"WHERE {table}.{key}=v.column{width}"
                )
            self._texts[(kind, rows)] = text
        return text

    def insert(self, db: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert (or replace) ``rows``, each a tuple of the table's columns in order."""
        self._run(db, "insert", rows, len(self.columns))

    def delete(self, db: sqlite3.Connection, keys: Sequence[Any]) -> None:
        """Delete the rows whose key is one of ``keys``."""
        self._run(db, "delete", keys, 1, flat=True)

    def update(self, db: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
        """Set the ``updated`` columns: each row is their new values followed by the key of the row to change."""
        if _UPDATE_FROM:
            self._run(db, "update", rows, len(self.updated) + 1)
        else:
            db.executemany(self._text("update", 0), rows)

    def _run(self, db: sqlite3.Connection, kind: str, rows: Sequence[Any], width: int, flat: bool = False) -> None:
        """Bind ``rows`` (tuples of ``width`` parameters, or single parameters if ``flat``) to statements of
        power-of-two row counts, largest first."""
        left = len(rows)
        if not left:
            return
        limit = min(_MAX_ROWS, db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width)
        size = 1
        while size * 2 <= limit:
            size *= 2
        start = 0
        while left:
            while size > left:
                size //= 2
            chunk = rows[start : start + size]
            db.execute(self._text(kind, size), chunk if flat else list(chain.from_iterable(chunk)))
            start += size
            left -= size
