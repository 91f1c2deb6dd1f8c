"""Request ids (``x-amzn-RequestId``, the Query answers' ``RequestId``): a UUID's form, never the same twice, also
across the counter's blocks of 4,096 (``sqsemu.http.app.next_request_id`` writes the last three hex digits from a
table and the rest once per block)."""

from __future__ import annotations

import itertools
import re

import pytest

from sqsemu.http import app

UUID_FORM = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


@pytest.mark.parametrize("start", [1, 4090, 2 * 4096 - 3, 0xFFFFFFFFFFFF - 2])
def test_request_ids_are_uuid_shaped_and_count_across_blocks(monkeypatch: pytest.MonkeyPatch, start: int) -> None:
    monkeypatch.setattr(app, "_id_counter", itertools.count(start))
    ids = [app.next_request_id() for _ in range(9)]
    assert all(UUID_FORM.fullmatch(i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    assert [int(i[-12:], 16) for i in ids] == [n & 0xFFFFFFFFFFFF for n in range(start, start + 9)]
    assert len({i[:24] for i in ids}) == 1  # the process's own prefix, the same for every id
