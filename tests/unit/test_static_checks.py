"""The type checker, the linter and the formatter's check pass on the whole project, tests included (configured in
pyproject.toml): ``mypy``, ``ruff check`` and ``ruff format --check``.

They run in the test suite so that CI, which runs only the README's test command, keeps the code and the tests
typed, clean and formatted (``ruff format`` fixes what the last one finds).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integration.harness.setupcache import cache_root

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _mypy_cache() -> str:
    """mypy's incremental cache, kept between runs and checkouts with the rest of the kept test set-up
    (tests/integration/harness/setupcache.py), so that a fresh clone checks again only the modules that differ (mypy
    checks each cached module's hash): 15 s -> 0.5 s."""
    return str(cache_root() / "mypy")


def test_mypy_passes_on_the_package_and_the_tests() -> None:
    result = _run("mypy", "--cache-dir", _mypy_cache())
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_passes_on_the_whole_repository() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_whole_repository_is_formatted_as_ruff_format_writes_it() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, "run `ruff format`:\n" + result.stdout + result.stderr
