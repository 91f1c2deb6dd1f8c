"""The suite's own set-up (tests/conftest.py): what the processes a test run starts get from it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import conftest as suite


class _Config:
    """What ``pytest_configure`` uses of a ``pytest.Config``."""

    def __init__(self) -> None:
        self.cleanups: list[Callable[[], object]] = []

    def add_cleanup(self, cleanup: Callable[[], object]) -> None:
        self.cleanups.append(cleanup)


@pytest.fixture
def controller(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The environment of the process that starts a run (not an xdist worker), restored after the test."""
    for name in ("PYTEST_XDIST_WORKER", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE", "SPARK_SUBMIT_OPTS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_under_dont_write_bytecode_the_processes_of_a_run_share_a_cache_outside_the_sources(
    controller: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The cache is kept with the rest of the kept test set-up, so the next run compiles nothing that did not
    change (the test modules' rewritten asserts included)."""
    controller.setenv("PYTHONDONTWRITEBYTECODE", "1")
    controller.setenv("SQSEMU_TEST_CACHE", str(tmp_path / "kept"))
    before = (sys.dont_write_bytecode, sys.pycache_prefix)
    config = _Config()
    suite.pytest_configure(config)  # type: ignore[arg-type]
    cache = Path(os.environ["PYTHONPYCACHEPREFIX"])
    assert cache == tmp_path / "kept" / "bytecode"
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
    assert not sys.dont_write_bytecode and sys.pycache_prefix == str(cache)  # this process's own imports too
    (tmp_path / "probe_module.py").write_text("VALUE = 1\n")
    subprocess.run([sys.executable, "-c", "import probe_module"], cwd=tmp_path, check=True, env=dict(os.environ))
    (compiled,) = cache.rglob("probe_module*.pyc")  # written to the run's cache
    assert not (tmp_path / "__pycache__").exists()  # not beside the source
    for cleanup in config.cleanups:
        cleanup()
    assert (sys.dont_write_bytecode, sys.pycache_prefix) == before  # as they were
    written = compiled.stat().st_mtime_ns
    controller.setenv("PYTHONDONTWRITEBYTECODE", "1")
    controller.delenv("PYTHONPYCACHEPREFIX")
    again = _Config()
    suite.pytest_configure(again)  # type: ignore[arg-type]  # the next run
    subprocess.run([sys.executable, "-c", "import probe_module"], cwd=tmp_path, check=True, env=dict(os.environ))
    assert compiled.stat().st_mtime_ns == written  # kept, and used as it is
    for cleanup in again.cleanups:
        cleanup()


def test_a_cache_the_caller_chose_and_a_worker_process_are_left_alone(
    controller: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    controller.setenv("PYTHONDONTWRITEBYTECODE", "1")
    controller.setenv("PYTHONPYCACHEPREFIX", str(tmp_path))
    suite.pytest_configure(_Config())  # type: ignore[arg-type]
    assert os.environ["PYTHONPYCACHEPREFIX"] == str(tmp_path)
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"
    controller.delenv("PYTHONPYCACHEPREFIX")
    controller.setenv("PYTEST_XDIST_WORKER", "gw0")
    suite.pytest_configure(_Config())  # type: ignore[arg-type]
    assert "PYTHONPYCACHEPREFIX" not in os.environ


def test_spark_jvms_get_the_quick_compiler_unless_the_caller_set_their_options(controller: pytest.MonkeyPatch) -> None:
    suite.pytest_configure(_Config())  # type: ignore[arg-type]
    assert os.environ["SPARK_SUBMIT_OPTS"] == suite.SPARK_TEST_JVM_OPTIONS
    controller.setenv("SPARK_SUBMIT_OPTS", "-Xmx2g")
    suite.pytest_configure(_Config())  # type: ignore[arg-type]
    assert os.environ["SPARK_SUBMIT_OPTS"] == "-Xmx2g"


def test_a_run_says_why_each_test_was_skipped(tmp_path: Path) -> None:
    """The README's test command ends with one line per skipped test and its reason (``-rs`` in the project's
    pytest options), so "N skipped" never stands alone."""
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n\ndef test_needs_a_tool() -> None:\n    pytest.skip('no frobnicator here: install it')\n"
    )
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-m", "pytest", "-c", str(root / "pyproject.toml"), "--rootdir", str(tmp_path)]
    argv += ["-n", "0", "-p", "no:cacheprovider", str(tmp_path / "test_skips.py")]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "SKIPPED [1]" in result.stdout and "no frobnicator here: install it" in result.stdout, result.stdout


def test_spark_processes_import_the_installed_pyspark_not_its_zip(tmp_path: Path) -> None:
    """The run's ``SPARK_HOME`` is the installed one less ``python/lib/pyspark.zip``: a Python process given the
    path Spark gives its workers (that zip first, then py4j's) imports PySpark from site-packages, where its
    bytecode is kept, and Spark's launcher scripts and jars are found there as in the installed home."""
    pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed (the test extra brings it)")
    home = suite.spark_home_without_zip(tmp_path)
    assert home is not None
    installed = Path(pyspark.__file__).resolve().parent
    assert (home / "bin" / "spark-submit").resolve() == installed / "bin" / "spark-submit"
    assert (home / "jars").resolve() == installed / "jars"
    assert not (home / "python" / "lib" / "pyspark.zip").exists()
    (py4j,) = (home / "python" / "lib").glob("py4j-*.zip")
    worker_path = os.pathsep.join([str(home / "python" / "lib" / "pyspark.zip"), str(py4j)])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = "import pyspark, py4j; print(pyspark.__file__); print(py4j.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", probe], env={**env, "PYTHONPATH": worker_path}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    imported, from_py4j = done.stdout.splitlines()
    assert Path(imported).resolve().parent == installed  # not from a zip: its bytecode can be kept
    assert from_py4j.startswith(str(py4j))  # py4j still comes from Spark's path
