"""scripts/smoke.py, the release's smoke test, against a running server (``--url``, as the release workflow runs it
against the image): it passes where the server serves and is the build expected, and fails, naming the build, where
it is not, as it fails a wheel of the release that fell back to pure Python. Its other mode (starting the installed
sqsemu itself) runs in tests/integration/test_package.py, on the compiled and the pure wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from sqsemu import __version__, compiled
from sqsemu.server import ServerThread

pytestmark = pytest.mark.integration

SMOKE = Path(__file__).resolve().parents[2] / "scripts" / "smoke.py"


def _list_queues(url: str) -> list[str]:
    request = urllib.request.Request(
        url + "/",
        data=b"{}",
        headers={"X-Amz-Target": "AmazonSQS.ListQueues", "Content-Type": "application/x-amz-json-1.0"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return list(json.loads(response.read()).get("QueueUrls", []))


def _smoke(url: str, expect: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(SMOKE), "--url", url, "--expect-build", expect, "--timeout", "30"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_the_smoke_test_passes_on_a_serving_server_of_the_build_expected_and_fails_on_another() -> None:
    running = "compiled" if compiled.is_compiled() else "pure"
    other = "pure" if running == "compiled" else "compiled"
    with ServerThread() as srv:
        passed = _smoke(srv.endpoint_url, running)
        failed = _smoke(srv.endpoint_url, other)
        # Nothing left behind: the queue it made is deleted.
        remaining = _list_queues(srv.endpoint_url)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert f"smoke: OK: sqsemu {__version__}, build: {compiled.status()}" in passed.stdout
    for step in ("CreateQueue", "SendMessage", "ReceiveMessage", "DeleteMessage", "DeleteQueue"):
        assert f"smoke: {step}: " in passed.stdout, passed.stdout
    assert failed.returncode == 1
    assert f"smoke: FAILED: the build is {compiled.status()!r}" in failed.stderr, failed.stderr
    assert remaining == []


def test_the_smoke_test_fails_where_nothing_serves() -> None:
    with ServerThread() as srv:
        url = srv.endpoint_url
    result = subprocess.run(
        [sys.executable, str(SMOKE), "--url", url, "--timeout", "1"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "smoke: FAILED: " in result.stderr
