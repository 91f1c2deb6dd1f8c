"""The sqsemu pytest plugin, registered through the ``pytest11`` entry point (``sqsemu = "sqsemu.testing.plugin"``).

Installing sqsemu (with boto3 for the ``sqs`` fixture) is all it takes; no conftest lines are needed.

Fixtures:

- ``sqs_server`` (session): one :class:`~sqsemu.testing.SQSServer` for the whole run, on a free port of
  127.0.0.1, with the **manual** clock by default. With the manual clock, time moves only when a test advances
  it: a long poll (``WaitTimeSeconds`` > 0) ends only when a message arrives or the clock is advanced.
- ``sqs_account`` (function): a fresh 12-digit account id for this test. Queues live per account, so tests (also
  tests running at the same time against the same server) never see each other's queues. Its queues are deleted
  when the test ends.
- ``sqs`` (function): a boto3 SQS client for ``sqs_server`` acting as ``sqs_account`` (region ``us-east-1``,
  dummy secret, retries off).
- ``sqs_clock`` (function): the server clock, ``.advance(seconds)`` (fires every timer due: visibility timeouts,
  delays, retention, long-poll timeouts) and ``.now_ms()`` (epoch ms). Time is shared by every test of the run.
- ``sqs_lambda`` (function): a boto3 ``lambda`` client for the event-source-mapping API acting as ``sqs_account``
  (docs/lambda.md); functions are Python callables registered with ``sqs_server.function(name, handler)``, and
  ``sqs_server.settle()`` waits until the mappings' invocations are over.
- ``sns`` (function): a boto3 SNS client for ``sqs_server`` acting as ``sqs_account`` (topics are served on the
  same port, docs/sns.md). Its topics go with the account's queues when the test ends.
- ``sns_topic`` (function): the ARN of a new standard topic of ``sqs_account``, named after the test.
  ``sqs_server.sns_settle()`` waits until every message published so far has been handed to its subscriptions.

Marker: ``@pytest.mark.sqs_realism("duplicates=0.1", seed=7)`` runs the test with the server's realism mode set to
that spec and seed (docs/realism.md), and puts the previous setting back afterwards. Queue names and the seed decide
every realism decision (not the test's account), so a marked test sees the same duplicates and orders on every run.

Options: ``--sqsemu-clock=manual|system`` on the command line, or ``sqsemu_clock = system`` in the ini file,
choose the clock of ``sqs_server``.

The plugin imports nothing heavy at start-up: the server starts only when a test asks for one of the fixtures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sqsemu.config import CLOCKS
from sqsemu.testing.server import AdminAPIError, ServerClock, SQSServer

DEFAULT_CLOCK = "manual"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--sqsemu-clock`` and the ``sqsemu_clock`` ini option."""
    group = parser.getgroup("sqsemu", "sqsemu: local SQS server fixtures")
    group.addoption(
        "--sqsemu-clock",
        choices=CLOCKS,
        default=None,
        help="clock of the sqs_server fixture: manual (default; time moves only via sqs_clock.advance) or system",
    )
    parser.addini("sqsemu_clock", help="clock of the sqs_server fixture: manual (default) or system", default="")


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``sqs_realism`` marker."""
    config.addinivalue_line(
        "markers",
        'sqs_realism(spec, seed=0): run the test with sqsemu\'s realism mode on (e.g. "duplicates=0.1"); '
        "see sqsemu's docs/realism.md",
    )


def server_clock(config: pytest.Config) -> str:
    """The clock the ``sqs_server`` fixture uses: the command line, else the ini file, else ``manual``."""
    chosen = config.getoption("sqsemu_clock") or str(config.getini("sqsemu_clock") or "").strip() or DEFAULT_CLOCK
    if chosen not in CLOCKS:
        raise pytest.UsageError(f"sqsemu_clock must be one of {', '.join(CLOCKS)}, got {chosen!r}")
    return str(chosen)


@pytest.fixture(scope="session")
def sqs_server(pytestconfig: pytest.Config) -> Iterator[SQSServer]:
    """One sqsemu server for the test session (manual clock unless ``--sqsemu-clock``/``sqsemu_clock`` says
    otherwise). Long polls on the manual clock end only when the clock is advanced or a message arrives."""
    with SQSServer(clock=server_clock(pytestconfig)) as server:
        yield server


@pytest.fixture(autouse=True)
def _sqs_realism(request: pytest.FixtureRequest) -> Iterator[None]:
    """Apply a test's ``sqs_realism`` marker to ``sqs_server`` (started only for marked tests) and undo it."""
    marker = request.node.get_closest_marker("sqs_realism")
    if marker is None:
        yield
        return
    if len(marker.args) != 1 or not isinstance(marker.args[0], str) or set(marker.kwargs) - {"seed"}:
        raise pytest.UsageError('use the marker as @pytest.mark.sqs_realism("duplicates=0.1", seed=7)')
    server: SQSServer = request.getfixturevalue("sqs_server")
    before = server.realism()
    server.set_realism(marker.args[0], int(marker.kwargs.get("seed", 0)))
    try:
        yield
    finally:
        server.set_realism(before["spec"], before["seed"])


@pytest.fixture
def sqs_account(sqs_server: SQSServer) -> Iterator[str]:
    """A fresh 12-digit account id for this test; its queues are deleted afterwards."""
    account = sqs_server.new_account()
    yield account
    try:
        sqs_server.reset(account)
    except (AdminAPIError, OSError):
        pass  # the server is gone already; nothing to clean


@pytest.fixture
def sqs(sqs_server: SQSServer, sqs_account: str) -> Iterator[Any]:
    """A boto3 SQS client for ``sqs_server`` acting as ``sqs_account``."""
    client = sqs_server.client(sqs_account)
    yield client
    close = getattr(client, "close", None)
    if close is not None:
        close()


@pytest.fixture
def sns(sqs_server: SQSServer, sqs_account: str) -> Iterator[Any]:
    """A boto3 SNS client for ``sqs_server`` acting as ``sqs_account`` (whose topics are deleted afterwards)."""
    client = sqs_server.sns_client(sqs_account)
    yield client
    close = getattr(client, "close", None)
    if close is not None:
        close()


def topic_name(test_name: str) -> str:
    """A topic name made of a test's name: its letters, digits, ``-`` and ``_`` (others become ``-``), at most 256
    characters (SNS's rule, API Reference "CreateTopic")."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", test_name)[:256] or "topic"


@pytest.fixture
def sns_topic(sns: Any, request: pytest.FixtureRequest) -> str:
    """The ARN of a new standard topic of ``sqs_account`` named after the test."""
    return str(sns.create_topic(Name=topic_name(request.node.name))["TopicArn"])


@pytest.fixture
def sqs_clock(sqs_server: SQSServer) -> ServerClock:
    """The server clock: ``advance(seconds)`` -> new epoch ms, ``now_ms()`` -> epoch ms."""
    return sqs_server.clock


@pytest.fixture
def sqs_lambda(sqs_server: SQSServer, sqs_account: str) -> Iterator[Any]:
    """A boto3 ``lambda`` client for ``sqs_server``'s event-source-mapping API acting as ``sqs_account``; the
    account's mappings are deleted afterwards. Register functions with ``sqs_server.function(name, handler)``."""
    client = sqs_server.lambda_client(sqs_account)
    yield client
    try:
        for mapping in client.list_event_source_mappings()["EventSourceMappings"]:
            client.delete_event_source_mapping(UUID=mapping["UUID"])
    except Exception:  # noqa: BLE001 - the server is gone already; nothing to clean
        pass
    close = getattr(client, "close", None)
    if close is not None:
        close()
