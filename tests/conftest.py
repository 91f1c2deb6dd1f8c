"""Shared test helpers for the whole suite, and how the suite runs in parallel (pytest-xdist).

``python -m pytest`` runs on several worker processes (``-n auto --dist loadgroup`` in pyproject.toml's addopts;
``-n 0`` runs in this process, ``SQSEMU_TEST_WORKERS=N`` picks the count). What this file adds to that:

- **Worker count** (:func:`pytest_xdist_auto_num_workers`): two workers per core, at least 2 and at most 8, since
  most integration tests wait on sockets and child processes rather than compute.
- **Groups** (:func:`pytest_xdist_make_scheduler`, :func:`group_of`): tests that share a heavy resource run on one
  worker, so the resource is made once per run and not once per worker: every test of a module that defines a
  module- or session-scoped fixture (a server with special flags, a built site, a built wheel, a browser), and every
  test under a folder of :data:`GROUPED_FOLDERS` (one SparkSession, one Docker image). Every other test is scheduled
  on its own. The longest tests come first (:data:`LONG_RUNNING`), so that none starts last and keeps the run waiting.
- **A bytecode cache for the processes the tests start** (:func:`pytest_configure`): where
  ``PYTHONDONTWRITEBYTECODE`` is set (as in CI's environment), every server, client worker and Spark worker the
  tests start would compile sqsemu's and its dependencies' sources anew: two thirds of a server's start-up CPU.
  The run gives them a cache of its own instead (``PYTHONPYCACHEPREFIX``, a temporary folder removed when the run
  ends), so the checkout is still not written to.
- **Spark's JVMs with the quick compiler only** (:data:`SPARK_TEST_JVM_OPTIONS`, through ``SPARK_SUBMIT_OPTS``,
  which Spark adds to the JVM that ``spark-submit`` starts: the tests' SparkSession, the example pipeline, the Spark
  Connect server): a test's Spark job is short, so the optimising compiler's work is never repaid; a third less
  JVM CPU. A ``SPARK_SUBMIT_OPTS`` of the caller's is kept.
- **``slow``** (the marker): every test of :data:`SLOW_MODULES` and :data:`GROUPED_FOLDERS` carries it, as may any
  test that says so; ``python -m pytest -m "not slow"`` is the inner loop (docs/development.md says what it leaves
  out).

What a new test must do to be parallel-safe is in docs/development.md ("Parallel-safe tests").
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
GROUPED_FOLDERS = ("spark", "integration/container")
"""Folders (under tests/) whose tests share session-scoped set-up defined in their conftest: one group each."""
OWN_PROCESSES = ("spark/test_example.py", "spark/test_connect.py")
"""Modules under a grouped folder that do not use its shared set-up (they start Spark in processes of their own):
scheduled like any other module, beside the folder's group."""
SLOW_MODULES = (
    "integration/test_package.py",
    "integration/test_console_browser.py",
    "integration/test_security_browser.py",
    "integration/test_lambda_invoke.py",
    "integration/test_lambda_observability.py",
    "integration/test_lambda_plugin.py",
    "integration/test_lambda_serverless_offline.py",
    "integration/test_js_sdk.py",
    "integration/test_js_fifo.py",
    "integration/test_differential_moto.py",
    "integration/test_crash.py",
    "integration/test_cli_walk.py",
    "unit/test_docs_site.py",
    "unit/test_static_checks.py",
    "unit/test_import_cycles.py",
    "unit/test_compiled.py",
)
"""Modules whose tests take seconds each (a build, a browser, Node, a Lambda runtime, mypy): the ``slow`` marker."""
LONG_RUNNING = (
    "spark/test_example.py",
    "spark/test_connect.py",
    "spark",
    "integration/test_crash.py",
    "integration/test_lambda_serverless_offline.py",
    "integration/container",
    "integration/test_package.py",
    "integration/test_console_browser.py",
    "fuzz/test_wire_mutation.py",
)
"""Paths (under tests/) whose tests run longest (by ``--durations``), longest first: scheduled first, so that none
starts last and keeps the run waiting."""


SPARK_TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JVM options of the Spark processes the tests start: the C1 compiler only, the serial collector."""


def pytest_configure(config: pytest.Config) -> None:
    """Give the processes of this run a bytecode cache where ``PYTHONDONTWRITEBYTECODE`` forbids the usual one
    (``__pycache__`` beside the sources): ``PYTHONPYCACHEPREFIX`` in a temporary folder, removed at the end of the
    run. Done once, in the process that starts the run: xdist's workers, and every process a test starts with the
    inherited environment, get it from there. A cache the caller chose (``PYTHONPYCACHEPREFIX`` already set) is
    kept. Also the Spark JVMs' options (:data:`SPARK_TEST_JVM_OPTIONS`)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ.setdefault("SPARK_SUBMIT_OPTS", SPARK_TEST_JVM_OPTIONS)
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    cache = tempfile.mkdtemp(prefix="sqsemu-test-bytecode-")
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = cache
    config.add_cleanup(functools.partial(shutil.rmtree, cache, ignore_errors=True))


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (bind to port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_tcp_port() -> int:
    """A free TCP port on 127.0.0.1."""
    return free_port()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: ``SQSEMU_TEST_WORKERS`` when set, else two workers per core (at least 2, at most 8)."""
    chosen = os.environ.get("SQSEMU_TEST_WORKERS")
    if chosen:
        return int(chosen)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(2, min(8, 2 * cores))


def _relative(item: pytest.Item) -> str:
    try:
        return Path(str(item.path)).resolve().relative_to(TESTS_DIR).as_posix()
    except ValueError:
        return str(item.path)


_SHARED_FIXTURE = re.compile(r"@pytest\.fixture\(\s*scope=[\"'](module|session)[\"']")


@functools.cache
def _defines_shared_fixture(path: Path) -> bool:
    """Whether the test module at ``path`` defines a module- or session-scoped fixture (read from its source, so
    that xdist's controller, which collects nothing, can tell)."""
    try:
        return bool(_SHARED_FIXTURE.search(path.read_text(encoding="utf-8")))
    except OSError:
        return False


def group_of(path: Path, nodeid: str) -> str:
    """The unit of scheduling of the test ``nodeid`` in the file ``path``: a folder of :data:`GROUPED_FOLDERS`,
    the module when it defines a shared fixture, else the test itself."""
    try:
        relative = path.resolve().relative_to(TESTS_DIR).as_posix()
    except ValueError:
        return nodeid
    for folder in GROUPED_FOLDERS:
        if relative.startswith(folder + "/") and relative not in OWN_PROCESSES:
            return folder
    if _defines_shared_fixture(path.resolve()):
        return relative
    return nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's ``loadgroup`` scheduler with the groups of :func:`group_of` (its own ``xdist_group`` marker does not
    reach the scheduler under pytest 9.2, which no longer reads ``item._nodeid``), in collection order."""
    from xdist.scheduler import LoadGroupScheduling

    root = Path(str(config.rootpath))
    config.option.loadscopereorder = False  # the collection order already puts the long groups first

    class Grouped(LoadGroupScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return group_of(root / nodeid.split("::", 1)[0], nodeid)

    return Grouped(config, log)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the tests of :data:`SLOW_MODULES` and :data:`GROUPED_FOLDERS` ``slow``."""
    relative = _relative(item)
    if relative in SLOW_MODULES or any(relative.startswith(f + "/") for f in GROUPED_FOLDERS):
        item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the longest-running tests first (the rest keeps its collection order)."""

    def rank(item: pytest.Item) -> int:
        relative = _relative(item)
        for place, prefix in enumerate(LONG_RUNNING):
            if relative == prefix or relative.startswith(prefix + "/"):
                return place
        return len(LONG_RUNNING)

    items.sort(key=rank)  # stable: the collection order is kept within each rank
