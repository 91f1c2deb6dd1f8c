"""Running the AWS SDK for JavaScript v3 checks in tests/js: ``npm ci`` once, then a script against a server."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .setupcache import keep_node_modules, restore_node_modules

JS_DIR = Path(__file__).resolve().parents[2] / "js"
# The last dependency added to tests/js/package.json: a node_modules installed before it was added is installed again.
SDK_PACKAGE = JS_DIR / "node_modules" / "@aws-sdk" / "client-sns" / "package.json"


def ensure_node_modules(npm: str, folder: Path, installed: Path) -> None:
    """``npm ci`` in ``folder`` once (under a file lock, so parallel tests install once) unless ``installed`` (a
    package's package.json under its node_modules) is already there; a ``node_modules`` kept by an earlier run from
    the same package-lock.json (:mod:`harness.setupcache`) is copied in instead, and a fresh one is kept."""
    with open(folder / ".npm-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed.is_file():
            return
        if restore_node_modules(folder) and installed.is_file():
            return
        started = time.monotonic()
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, f"npm ci failed:\n{result.stdout}\n{result.stderr}"
        print(f"\nnpm ci in {folder.name} took {time.monotonic() - started:.1f} s")
        keep_node_modules(folder)


def _ensure_node_modules(npm: str) -> None:
    """``npm ci`` in tests/js once, when the SDK clients (SQS and SNS) are not installed yet."""
    ensure_node_modules(npm, JS_DIR, SDK_PACKAGE)


def run_js_check(script: str, endpoint_url: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``tests/js/<script>`` with Node against ``endpoint_url`` (``env``: variables added to the environment,
    e.g. ``NODE_EXTRA_CA_CERTS``); it must exit 0 and print a JSON summary as its last line, which is returned.
    Skips the test when Node.js is not installed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JavaScript SDK check needs Node.js")
    npm = shutil.which("npm")
    assert npm is not None, "node is installed but npm is not"
    _ensure_node_modules(npm)
    environment = {**os.environ, **env} if env else None
    result = subprocess.run(
        [node, script, endpoint_url], cwd=JS_DIR, capture_output=True, text=True, timeout=120, env=environment
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stderr
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary
