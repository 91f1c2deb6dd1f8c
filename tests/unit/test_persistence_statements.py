"""Multi-row statements of the durable store (``sqsemu.persistence.statements``): whatever the row count and the
connection's parameter limit, every row is written, changed or deleted exactly once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from sqsemu.persistence.statements import MultiRow, bind_none_directly

TABLE = MultiRow("t", ("k", "a", "b"), "k", ("a", "b"))


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a TEXT NOT NULL, b INTEGER)")
    yield connection
    connection.close()


@pytest.mark.parametrize("count", [0, 1, 2, 3, 50, 511, 512, 513, 1500])
@pytest.mark.parametrize("limit", [None, 7])
def test_every_row_is_inserted_updated_and_deleted_once(db: sqlite3.Connection, count: int, limit: int | None) -> None:
    if limit is not None:
        db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)  # two rows of three per statement at most
    TABLE.insert(db, [(k, f"row{k}", None) for k in range(count)])
    assert db.execute("SELECT k, a, b FROM t ORDER BY k").fetchall() == [(k, f"row{k}", None) for k in range(count)]
    TABLE.update(db, [(f"new{k}", k * 2, k) for k in range(0, count, 2)])
    expected = [(k, f"new{k}", k * 2) if k % 2 == 0 else (k, f"row{k}", None) for k in range(count)]
    assert db.execute("SELECT k, a, b FROM t ORDER BY k").fetchall() == expected
    TABLE.delete(db, list(range(1, count, 2)))
    assert db.execute("SELECT k FROM t ORDER BY k").fetchall() == [(k,) for k in range(0, count, 2)]


def test_inserting_a_row_again_replaces_it(db: sqlite3.Connection) -> None:
    TABLE.insert(db, [(1, "first", 1), (2, "other", 2)])
    TABLE.insert(db, [(1, "second", 3)])
    assert db.execute("SELECT k, a, b FROM t ORDER BY k").fetchall() == [(1, "second", 3), (2, "other", 2)]


def test_updating_or_deleting_a_missing_row_changes_nothing(db: sqlite3.Connection) -> None:
    TABLE.insert(db, [(1, "kept", 1)])
    TABLE.update(db, [("changed", 9, 5)])
    TABLE.delete(db, [7, 8])
    assert db.execute("SELECT k, a, b FROM t").fetchall() == [(1, "kept", 1)]


def test_none_parameters_are_bound_as_null_through_the_registered_adapter(db: sqlite3.Connection) -> None:
    """``bind_none_directly`` registers a ``NoneType`` adapter (no failed ``__adapt__``/``__conform__`` look-up per
    None bound); a None is still stored as NULL, by a multi-row statement as by a plain one."""
    bind_none_directly()
    assert sqlite3.adapters[(type(None), sqlite3.PrepareProtocol)](None) is None
    TABLE.insert(db, [(1, "a", None), (2, "b", 5)])
    db.execute("INSERT INTO t (k, a, b) VALUES (?, ?, ?)", (3, "c", None))
    assert db.execute("SELECT k FROM t WHERE b IS NULL ORDER BY k").fetchall() == [(1,), (3,)]
    assert db.execute("SELECT typeof(b) FROM t WHERE k = 1").fetchone() == ("null",)
