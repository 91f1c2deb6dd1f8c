"""The real ``sqsemu`` process's exit statuses (the rule is in ``sqsemu --help`` and docs/configuration.md): 1 when
it cannot listen on its address, 2 for an invalid value, 0 after SIGTERM. (3, the durable store failing while
serving, is shown in tests/integration/test_durable.py's store-failure tests.)"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest
from harness import ServerProcess

pytestmark = pytest.mark.integration

UNASSIGNED = "192.0.2.1"  # TEST-NET-1 (RFC 5737): never an address of this machine


def _sqsemu(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sqsemu", *args], capture_output=True, text=True, timeout=60)


def test_a_port_in_use_exits_1_naming_the_address() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _sqsemu("--host", "127.0.0.1", "--port", str(port))
    assert result.returncode == 1, result.stderr
    assert "address already in use" in result.stderr
    assert f"Error: cannot start: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Another port: --port N (or SQSEMU_PORT=N; 0 picks a free one)" in result.stderr
    # refused before the application starts: nothing claims a start-up that did not happen
    assert "Application startup complete" not in result.stderr
    assert "Started server process" not in result.stderr


def test_a_host_that_is_not_this_machines_exits_1() -> None:
    result = _sqsemu("--host", UNASSIGNED, "--port", "0")
    assert result.returncode == 1, result.stderr
    assert f"cannot listen on {UNASSIGNED}:0" in result.stderr
    result = _sqsemu("--host", UNASSIGNED, "--port", "9324")
    assert result.returncode == 1, result.stderr
    assert f"cannot bind {UNASSIGNED}:9324: cannot assign requested address" in result.stderr
    assert "Application startup complete" not in result.stderr


def test_an_invalid_value_exits_2() -> None:
    result = _sqsemu("--port", "70000")
    assert result.returncode == 2, result.stderr
    assert "Invalid value for '--port'" in result.stderr


def test_sigterm_exits_0() -> None:
    srv = ServerProcess().start()
    assert srv.stop(signal.SIGTERM) == 0, srv.log_tail()
