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
  tests start would compile sqsemu's and its dependencies' sources anew (two thirds of a server's start-up CPU),
  and every xdist worker would rewrite the asserts of every test module at collection (about 9 s of CPU each).
  The run gives them a cache instead (``PYTHONPYCACHEPREFIX``: ``bytecode/`` in the kept test set-up,
  tests/integration/harness/setupcache.py), kept for later runs and checkouts, so the checkout is still not
  written to and a later run compiles only what changed (Python checks each cached file against its source).
- **Spark's JVMs with the quick compiler only** (:data:`SPARK_TEST_JVM_OPTIONS`, through ``SPARK_SUBMIT_OPTS``,
  which Spark adds to the JVM that ``spark-submit`` starts: the tests' SparkSession, the example pipeline, the Spark
  Connect server): a test's Spark job is short, so the optimising compiler's work is never repaid; a third less
  JVM CPU. A ``SPARK_SUBMIT_OPTS`` of the caller's is kept.
- **Spark's Python processes import the installed PySpark** (:func:`spark_home_without_zip`, through
  ``SPARK_HOME``): Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on the path of every Python process it
  starts (its workers, the data source's planners and writers), and a zip holds no bytecode, so each of them
  compiled PySpark anew (about 1 s of CPU each, a quarter of the Spark tests' CPU). The run's ``SPARK_HOME`` is the
  installed one less that zip (links to everything else), so they import the same PySpark from site-packages,
  compiled once. A ``SPARK_HOME`` of the caller's is kept.
- **``slow``** (the marker): every test of :data:`SLOW_MODULES` and :data:`GROUPED_FOLDERS` carries it, as may any
  test that says so; ``python -m pytest -m "not slow"`` is the inner loop (docs/development.md says what it leaves
  out).

What a new test must do to be parallel-safe is in docs/development.md ("Parallel-safe tests").
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
GROUPED_FOLDERS = ("spark", "integration/container")
"""Folders (under tests/) whose tests share session-scoped set-up defined in their conftest: one group each."""
OWN_PROCESSES = ("spark/test_example.py",)
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


def bytecode_cache() -> Path:
    """The kept bytecode cache of test runs (``bytecode/`` under :func:`setupcache.cache_root`; made when missing).
    Raises ``OSError`` where it cannot be made."""
    from tests.integration.harness.setupcache import cache_root

    folder = cache_root() / "bytecode"
    folder.mkdir(exist_ok=True)
    return folder


def spark_home_without_zip(folder: Path) -> Path | None:
    """Make in ``folder`` a Spark home that is the installed PySpark's (``pyspark/``: its ``jars``, ``bin`` ...,
    linked) without ``python/lib/pyspark.zip``; its path, or ``None`` where PySpark is not installed or has no such
    zip. Raises ``OSError`` where the links cannot be made."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    installed = Path(spec.origin).parent
    if not (installed / "python" / "lib" / "pyspark.zip").is_file():
        return None
    home = folder / "spark-home"
    (home / "python" / "lib").mkdir(parents=True)
    for entry in installed.iterdir():
        if entry.name != "python":
            (home / entry.name).symlink_to(entry)
    for entry in (installed / "python").iterdir():
        if entry.name != "lib":
            (home / "python" / entry.name).symlink_to(entry)
    for entry in (installed / "python" / "lib").iterdir():
        if entry.name != "pyspark.zip":
            (home / "python" / "lib" / entry.name).symlink_to(entry)
    return home


def _use_spark_home_without_zip(config: pytest.Config) -> None:
    if os.environ.get("SPARK_HOME"):
        return
    folder = tempfile.mkdtemp(prefix="sqsemu-test-spark-")
    config.add_cleanup(functools.partial(shutil.rmtree, folder, ignore_errors=True))
    try:
        home = spark_home_without_zip(Path(folder))
    except OSError:
        return  # Spark's processes compile PySpark from its zip, as without this
    if home is not None:
        os.environ["SPARK_HOME"] = str(home)
        config.add_cleanup(_forget_spark_home)


def _forget_spark_home() -> None:
    os.environ.pop("SPARK_HOME", None)


def pytest_configure(config: pytest.Config) -> None:
    """Give the processes of this run a bytecode cache where ``PYTHONDONTWRITEBYTECODE`` forbids the usual one
    (``__pycache__`` beside the sources): ``PYTHONPYCACHEPREFIX`` set to :func:`bytecode_cache`, kept between runs
    (a temporary folder, removed at the end of the run, where that cannot be made). Done once, in the process that
    starts the run: xdist's workers, and every process a test starts with the inherited environment, get it from
    there; the rest of this process's imports (the test modules, with ``-n 0``) use it too. A cache the caller chose
    (``PYTHONPYCACHEPREFIX`` already set) is kept. Also the Spark JVMs' options (:data:`SPARK_TEST_JVM_OPTIONS`)
    and ``SPARK_HOME`` (:func:`spark_home_without_zip`)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ.setdefault("SPARK_SUBMIT_OPTS", SPARK_TEST_JVM_OPTIONS)
    _use_spark_home_without_zip(config)
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    try:
        cache = str(bytecode_cache())
    except OSError:
        cache = tempfile.mkdtemp(prefix="sqsemu-test-bytecode-")
        config.add_cleanup(functools.partial(shutil.rmtree, cache, ignore_errors=True))
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = cache
    config.add_cleanup(functools.partial(_restore_bytecode_flags, sys.dont_write_bytecode, sys.pycache_prefix))
    sys.dont_write_bytecode = False
    sys.pycache_prefix = cache


def _restore_bytecode_flags(dont_write: bool, prefix: str | None) -> None:
    sys.dont_write_bytecode = dont_write
    sys.pycache_prefix = prefix


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
