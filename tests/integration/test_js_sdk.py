"""The AWS SDK for JavaScript v3 against a real server: send and receive with String, Number and Binary message
attributes; the SDK verifies MD5OfMessageBody itself, and tests/js/sdk_check.mjs checks every value and digest."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

JS_DIR = Path(__file__).resolve().parents[1] / "js"
SDK_PACKAGE = JS_DIR / "node_modules" / "@aws-sdk" / "client-sqs" / "package.json"


def _ensure_node_modules(npm: str) -> None:
    """``npm ci`` once (under a file lock) when the SDK is not installed yet."""
    with open(JS_DIR / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if SDK_PACKAGE.is_file():
            return
        started = time.monotonic()
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=JS_DIR, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, f"npm ci failed:\n{result.stdout}\n{result.stderr}"
        print(f"\nnpm ci in tests/js took {time.monotonic() - started:.1f} s")


def test_js_sdk_v3_sends_and_receives_with_message_attributes(server: Any) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript SDK check needs Node.js")
    npm = shutil.which("npm")
    assert npm is not None, "node is installed but npm is not"
    _ensure_node_modules(npm)
    result = subprocess.run(
        [node, "sdk_check.mjs", server.endpoint_url], cwd=JS_DIR, capture_output=True, text=True, timeout=120
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["ok"] is True
    assert summary["queueUrl"].startswith(server.endpoint_url)
