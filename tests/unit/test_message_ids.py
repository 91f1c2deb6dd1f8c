"""New MessageIds (``sqsemu.engine.message.RandomIds``): version 4 UUIDs with RFC 4122's variant, never the same
twice, also across the pool's refills, and a dropped pool (a forked child's) is never handed out again."""

from __future__ import annotations

import uuid

from sqsemu.engine.message import RandomIds, id_text


def test_ids_are_distinct_version_4_uuids_across_refills() -> None:
    ids = RandomIds()
    raw = [ids.next() for _ in range(3 * 256 + 5)]  # three refills of the 256-id pool and part of a fourth
    assert len(set(raw)) == len(raw)
    for one in raw:
        parsed = uuid.UUID(bytes=one)
        assert len(one) == 16 and parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert id_text(one) == str(parsed)


def test_a_dropped_pool_is_not_handed_out() -> None:
    ids = RandomIds()
    first = ids.next()
    pool = ids.pool
    ids.drop()
    after = [ids.next() for _ in range(255)]
    assert first not in after and not any(pool.find(one) % 16 == 0 and pool.find(one) >= 0 for one in after)
