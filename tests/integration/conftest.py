"""Fixtures of the integration tests: real sqsemu servers and real SQS clients over both wire protocols.

Contract (used by every integration test):

- ``server`` (session): ``python -m sqsemu`` on 127.0.0.1:<free port>, system clock; ``.endpoint_url``,
  ``.port``. Stopped with SIGINT at the end of the session, which must exit 0.
- ``manual_server`` (session): the same with ``--clock manual``; also ``.advance(seconds)`` (POST
  /_sqsemu/clock/advance) and ``.now_ms()`` (GET /_sqsemu/clock, epoch ms).
- ``protocol``: parametrised ``"json"`` (current boto3, AWS JSON 1.0) and ``"query"`` (boto3 1.28.64,
  AWS Query).
- ``sqs`` / ``manual_sqs``: a client speaking ``protocol`` to ``server`` / ``manual_server``; region
  us-east-1, credentials test/test (account 000000000000), no retries, 60 s read timeout.
- ``make_queue`` / ``manual_make_queue``: ``make_queue(name=None, **attributes) -> queue_url`` creates a queue
  through ``sqs`` / ``manual_sqs`` with a unique name (``name`` is a prefix; ``.fifo`` is kept last, and
  added when ``FifoQueue="true"``); attribute values may be ints or bools; queues are deleted at teardown.
- ``client_for(endpoint_url, protocol, access_key_id=...)`` (import from ``harness``) for another account.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

# ``import harness`` must work whatever pytest's import mode is.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import PROTOCOLS, ServerProcess, client_for  # noqa: E402
from harness import legacy as _legacy  # noqa: E402

_INTEGRATION_DIR = Path(__file__).resolve().parent
_startup_report: list[str] = []

MakeQueue = Callable[..., str]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/integration carries the ``integration`` marker."""
    for item in items:
        if _INTEGRATION_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.integration)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print how long server start-up and the legacy boto3 venv took (informational)."""
    lines = list(_startup_report)
    if _legacy.venv_setup_seconds is not None:
        seconds = _legacy.venv_setup_seconds
        lines.append(f"legacy boto3 {_legacy.LEGACY_BOTO3} venv created in {seconds:.1f} s")
    if lines:
        terminalreporter.write_sep("-", "sqsemu integration set-up")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _legacy.close_all_workers()


def _start(name: str, args: list[str]) -> ServerProcess:
    srv = ServerProcess(args).start()
    shown = " ".join(srv.args) or "defaults"
    _startup_report.append(f"{name} ({shown}): /health answered 200 {srv.startup_seconds:.3f} s after spawn")
    return srv


def _stop(srv: ServerProcess) -> None:
    status = srv.stop()
    assert status == 0, f"server exited with status {status} on SIGINT\n{srv.log_tail()}"


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    """A session-wide sqsemu subprocess with the system clock."""
    srv = _start("server", [])
    yield srv
    _stop(srv)


@pytest.fixture(scope="session")
def manual_server() -> Iterator[ServerProcess]:
    """A session-wide sqsemu subprocess with ``--clock manual`` (``.advance(seconds)``, ``.now_ms()``)."""
    srv = _start("manual_server", ["--clock", "manual"])
    yield srv
    _stop(srv)


@pytest.fixture(params=PROTOCOLS)
def protocol(request: pytest.FixtureRequest) -> str:
    """``"json"`` or ``"query"``: the wire protocol of ``sqs`` / ``manual_sqs``."""
    return str(request.param)


class _ClientCache:
    def __init__(self) -> None:
        self._clients: dict[tuple[str, str], Any] = {}

    def get(self, endpoint_url: str, protocol: str) -> Any:
        key = (endpoint_url, protocol)
        if key not in self._clients:
            self._clients[key] = client_for(endpoint_url, protocol)
        return self._clients[key]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


@pytest.fixture(scope="session")
def _sqs_clients() -> Iterator[_ClientCache]:
    cache = _ClientCache()
    yield cache
    cache.close()


@pytest.fixture
def sqs(server: ServerProcess, protocol: str, _sqs_clients: _ClientCache) -> Any:
    """An SQS client speaking ``protocol`` to ``server`` (shared across tests: don't register event hooks)."""
    return _sqs_clients.get(server.endpoint_url, protocol)


@pytest.fixture
def manual_sqs(manual_server: ServerProcess, protocol: str, _sqs_clients: _ClientCache) -> Any:
    """An SQS client speaking ``protocol`` to ``manual_server``."""
    return _sqs_clients.get(manual_server.endpoint_url, protocol)


def _unique_name(request: pytest.FixtureRequest, name: str | None, attributes: dict[str, str]) -> str:
    fifo = attributes.get("FifoQueue", "").lower() == "true" or (name or "").endswith(".fifo")
    base = name.removesuffix(".fifo") if name else re.sub(r"[^A-Za-z0-9_-]", "-", request.node.name)
    suffix = uuid.uuid4().hex[:10]
    base = base[: 80 - len(suffix) - 1 - (5 if fifo else 0)]
    return f"{base}-{suffix}" + (".fifo" if fifo else "")


def _attribute_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _queue_factory(client: Any, request: pytest.FixtureRequest) -> Iterator[MakeQueue]:
    created: list[str] = []

    def make_queue(name: str | None = None, **attributes: Any) -> str:
        attrs = {key: _attribute_value(value) for key, value in attributes.items()}
        kwargs: dict[str, Any] = {"QueueName": _unique_name(request, name, attrs)}
        if attrs:
            kwargs["Attributes"] = attrs
        url = str(client.create_queue(**kwargs)["QueueUrl"])
        created.append(url)
        return url

    yield make_queue
    for url in created:
        try:
            client.delete_queue(QueueUrl=url)
        except ClientError:
            pass  # already deleted by the test


@pytest.fixture
def make_queue(sqs: Any, request: pytest.FixtureRequest) -> Iterator[MakeQueue]:
    """``make_queue(name=None, **attributes) -> queue_url`` on ``sqs``; unique names; deleted at teardown."""
    yield from _queue_factory(sqs, request)


@pytest.fixture
def manual_make_queue(manual_sqs: Any, request: pytest.FixtureRequest) -> Iterator[MakeQueue]:
    """``make_queue`` on ``manual_sqs`` (the manual-clock server)."""
    yield from _queue_factory(manual_sqs, request)


# --- strict fidelity (appended for the milestone-2 tests) -----------------------------------------------------


@pytest.fixture(scope="session")
def strict_server() -> Iterator[ServerProcess]:
    """A session-wide sqsemu subprocess with ``--fidelity strict --clock manual`` (AWS quotas enforced)."""
    srv = _start("strict_server", ["--fidelity", "strict", "--clock", "manual"])
    yield srv
    _stop(srv)


@pytest.fixture
def strict_sqs(strict_server: ServerProcess, protocol: str, _sqs_clients: _ClientCache) -> Any:
    """An SQS client speaking ``protocol`` to ``strict_server``."""
    return _sqs_clients.get(strict_server.endpoint_url, protocol)


@pytest.fixture
def strict_make_queue(strict_sqs: Any, request: pytest.FixtureRequest) -> Iterator[MakeQueue]:
    """``make_queue`` on ``strict_sqs`` (the strict-fidelity, manual-clock server)."""
    yield from _queue_factory(strict_sqs, request)
