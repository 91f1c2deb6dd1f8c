"""The compiled hot path (mypyc) and the pure-Python sources: which one runs, how it is said, and that both pass.

``pip install -e '.[test]'`` (the README's command, which CI runs) compiles the modules listed in
``sqsemu.compiled.MODULES`` in place when mypyc and a C compiler are present, so ``python -m pytest`` runs the
compiled build. The pure-Python package is tested beside it under CI (``CI`` set) by
:func:`test_the_unit_suite_passes_on_the_pure_python_sources`: the unit suite again, in a child process with
``SQSEMU_PURE_PYTHON=1`` (the listed modules loaded from their ``.py`` sources). Elsewhere that second run is left out
(it would add the unit suite's time again to every run: ``SQSEMU_TEST_BOTH_BUILDS=1`` asks for it), and when the
running build is the pure one it is skipped: the suite itself has just tested it.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sqsemu import compiled
from sqsemu.admin.health import health_document
from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.observability.banner import Banner
from tests.buildprobe import can_compile

ROOT = Path(__file__).resolve().parents[2]
PURE_RUN_TIMEOUT_S = 900


def _child(code: str, **env: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter (this one's environment plus ``env``); its last line, parsed as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, **env}, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


_REPORT = """
import importlib, json
from sqsemu import compiled
files = {m: importlib.import_module(m).__file__ for m in compiled.MODULES}
print(json.dumps({"status": compiled.status(), "files": files}))
"""


def test_health_and_the_banner_say_which_build_runs() -> None:
    status = compiled.status()
    assert status == compiled.COMPILED or status.startswith("pure Python: ")
    assert health_document(ManualClock(0))["build"] == status
    banner = Banner.of(Config(), "1", 9324, restored=0)
    assert banner.lines()[-1] == f"build: {status}" and banner.fields()["build"] == status


def test_the_running_build_is_what_its_modules_are() -> None:
    report = _child(_REPORT)
    files = report["files"]
    assert isinstance(files, dict)
    if report["status"] == compiled.COMPILED:
        assert all(not str(f).endswith(".py") for f in files.values()), files
    else:
        assert all(str(f).endswith(".py") for f in files.values()), files


def test_sqsemu_pure_python_forces_the_sources_and_says_so() -> None:
    report = _child(_REPORT, SQSEMU_PURE_PYTHON="1")
    assert report["status"] == "pure Python: SQSEMU_PURE_PYTHON is set"
    files = report["files"]
    assert isinstance(files, dict) and all(str(f).endswith(".py") for f in files.values()), files


def test_under_ci_a_machine_with_a_c_compiler_runs_the_compiled_build() -> None:
    """CI installs with the README's command on a machine with gcc: the hot path must have compiled (a change that
    mypyc cannot compile falls back to the pure build, announced, and is caught here)."""
    missing = can_compile()
    if missing or not os.environ.get("CI") or os.environ.get(compiled.PURE_ENV):
        pytest.skip(f"not CI, or no compiler here ({missing or 'a pure build was asked for'})")
    assert compiled.status() == compiled.COMPILED


def test_stale_or_missing_compiled_modules_leave_the_sources_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a checkout, a source newer than its compiled module (an edit or a merge after ``pip install -e .``) must
    not run the old compiled code: the sources run, and the status says why."""
    package = tmp_path / "sqsemu"
    (package / "engine").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("")
    monkeypatch.setattr(compiled, "_package_dir", lambda: str(package))
    monkeypatch.setattr(compiled, "MODULES", ("sqsemu.engine.a", "sqsemu.engine.b"))
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    assert compiled._decide().startswith("not compiled at install")
    for name in ("a", "b"):
        (package / "engine" / f"{name}.py").write_text("")
    past = time.time() - 60
    os.utime(package / "engine" / "a.py", (past, past))
    os.utime(package / "engine" / "b.py", (past, past))
    (package / "engine" / f"a{suffix}").write_text("")
    assert compiled._decide() == "compiled build incomplete (sqsemu.engine.b not compiled): reinstall"
    (package / "engine" / f"b{suffix}").write_text("")
    for name in ("a", "b"):
        os.utime(package / "engine" / f"{name}{suffix}", (past + 10, past + 10))  # built after the sources
    assert compiled._decide() == ""
    os.utime(package / "engine" / "b.py", (past + 20, past + 20))  # edited after the build
    assert compiled._decide().startswith("sources changed since the build (sqsemu.engine.b)")
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    assert compiled._decide() == "SQSEMU_PURE_PYTHON is set"


def test_the_unit_suite_passes_on_the_pure_python_sources() -> None:
    """The pure-Python build is the reference: when this run is compiled, the unit suite runs once more on the
    sources (``SQSEMU_PURE_PYTHON=1``), in a child process so that nothing compiled is loaded there."""
    if not compiled.is_compiled():
        pytest.skip(f"this run is the pure-Python build ({compiled.status()}): the suite itself tests it")
    if not (os.environ.get("CI") or os.environ.get("SQSEMU_TEST_BOTH_BUILDS")):
        pytest.skip("the second run on the pure sources runs under CI (or SQSEMU_TEST_BOTH_BUILDS=1)")
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        str(ROOT / "tests" / "unit"),
        "--deselect",
        "tests/unit/test_compiled.py::test_the_unit_suite_passes_on_the_pure_python_sources",
        "--deselect",
        "tests/unit/test_static_checks.py",  # ruff and mypy read the sources: the same in both builds
    ]
    env = {**os.environ, compiled.PURE_ENV: "1"}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=PURE_RUN_TIMEOUT_S, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout.strip().splitlines()[-1]
