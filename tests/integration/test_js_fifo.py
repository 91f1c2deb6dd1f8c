"""The AWS SDK for JavaScript v3 against a FIFO queue on a real server: two message groups with deduplication ids
and one duplicate, per-group order, SequenceNumber / MessageGroupId / MessageDeduplicationId (tests/js/fifo_check.mjs).
"""

from __future__ import annotations

from typing import Any

import pytest
from harness.node import run_js_check

pytestmark = pytest.mark.integration


def test_js_sdk_v3_fifo_groups_dedup_and_sequence_numbers(server: Any) -> None:
    summary = run_js_check("fifo_check.mjs", server.endpoint_url)
    assert summary["ok"] is True
    assert summary["queueUrl"].startswith(server.endpoint_url) and summary["queueUrl"].endswith(".fifo")
    assert sorted(summary["received"]) == ["a-1", "a-2", "a-3", "b-1", "b-2", "b-3"]
