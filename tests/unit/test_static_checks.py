"""The type checker and the linter pass on the whole project, tests included (configured in pyproject.toml).

They run in the test suite so that CI, which runs only the README's test command, keeps the code and the tests
typed and clean.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_mypy_passes_on_the_package_and_the_tests() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_passes_on_the_package_and_the_tests() -> None:
    result = _run("ruff", "check", "sqsemu", "tests")
    assert result.returncode == 0, result.stdout + result.stderr
