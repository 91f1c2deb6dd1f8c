"""The AWS SDK for JavaScript v3 against a FIFO queue on a real server: two message groups with deduplication ids
and one duplicate, per-group order, SequenceNumber / MessageGroupId / MessageDeduplicationId (tests/js/fifo_check.mjs).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

JS_DIR = Path(__file__).resolve().parents[1] / "js"
SDK_PACKAGE = JS_DIR / "node_modules" / "@aws-sdk" / "client-sqs" / "package.json"


def _ensure_node_modules(npm: str) -> None:
    """``npm ci`` once (under the same file lock as test_js_sdk.py) when the SDK is not installed yet."""
    with open(JS_DIR / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if SDK_PACKAGE.is_file():
            return
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=JS_DIR, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, f"npm ci failed:\n{result.stdout}\n{result.stderr}"


def test_js_sdk_v3_fifo_groups_dedup_and_sequence_numbers(server: Any) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript SDK check needs Node.js")
    npm = shutil.which("npm")
    assert npm is not None, "node is installed but npm is not"
    _ensure_node_modules(npm)
    result = subprocess.run(
        [node, "fifo_check.mjs", server.endpoint_url], cwd=JS_DIR, capture_output=True, text=True, timeout=120
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["ok"] is True
    assert summary["queueUrl"].startswith(server.endpoint_url) and summary["queueUrl"].endswith(".fifo")
    assert sorted(summary["received"]) == ["a-1", "a-2", "a-3", "b-1", "b-2", "b-3"]
