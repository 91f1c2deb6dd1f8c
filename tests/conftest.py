"""Shared test helpers for the whole suite."""

from __future__ import annotations

import socket

import pytest


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (bind to port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_tcp_port() -> int:
    """A free TCP port on 127.0.0.1."""
    return free_port()
