"""The package installs as the README says: ``python -m build`` makes an sdist and a wheel (the wheel built from the
sdist, so the sdist is complete), ``twine check`` passes on both, and a fresh virtual environment with only the
wheel installed runs ``sqsemu --version`` and serves a boto3 round trip. Where mypyc and a C compiler are there (as
on CI), the wheel holds the compiled hot path: a compiled module for every module ``sqsemu.compiled.MODULES`` lists,
beside its source, and the installed server says ``compiled (mypyc)`` in ``GET /health``.

These are the release's own steps, run as the release workflow (.github/workflows/release.yml) runs them: the
distributions are built by ``scripts/release.py build``, and ``scripts/release.py check`` runs ``twine check
--strict``, installs the wheel into a fresh virtual environment and runs ``scripts/smoke.py`` there (the smoke test
cibuildwheel runs against each wheel of a release), on the compiled wheel and on the pure one a machine without a C
compiler builds.

The distributions are built once per session into a temporary folder; pip's download cache is used as usual, so
after the first run the fresh environment installs without downloading. The wheel's compiled modules come from
setup.py's build cache when the editable install (or an earlier run) compiled the same sources: one mypyc compile
serves both.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest
from harness import ServerProcess, json_client

from sqsemu import __version__, compiled
from tests.buildprobe import can_compile

# Building compiles the hot path (mypyc, about 1.5 minutes of one core) unless setup.py's build cache holds the same
# sources' compile; the no-compiler check sets up a build environment of its own: more than the default timeout on a
# busy machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]


# The package is checked as installed: a PYTHONPATH pointing at a checkout (as when the suite runs on the sources)
# would make pip see sqsemu as installed already and the fresh environment import the checkout instead of the wheel.
_CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


RELEASE = ROOT / "scripts" / "release.py"


def _run(*argv: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=_CLEAN_ENV
    )
    assert result.returncode == 0, f"{' '.join(map(str, argv))}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``{"sdist": ..., "wheel": ...}``: the distributions ``python -m build`` made from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, RELEASE, "build", "--outdir", out)
    (sdist,) = out.glob("sqsemu-*.tar.gz")
    (wheel,) = out.glob("sqsemu-*.whl")
    yield {"sdist": sdist, "wheel": wheel}


def test_twine_check_passes_on_the_sdist_and_the_wheel(dist: dict[str, Path]) -> None:
    result = _run(sys.executable, "-m", "twine", "check", "--strict", dist["sdist"], dist["wheel"])
    assert result.stdout.count("PASSED") == 2, result.stdout


def test_the_distributions_carry_the_license_the_console_files_and_the_extras(dist: dict[str, Path]) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "sqsemu/cli.py"} <= names
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        files = set(wheel.namelist())
        info = f"sqsemu-{__version__}.dist-info"
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
    assert f"{info}/licenses/LICENSE" in files
    assert any(name.startswith("sqsemu/console/templates/") for name in files)
    assert any(name.startswith("sqsemu/console/static/") for name in files)
    assert not any(name.startswith("tests/") for name in files)
    assert metadata["License-Expression"] == "Apache-2.0"
    assert {"auth", "spark", "test"} <= set(metadata.get_all("Provides-Extra") or [])
    assert metadata["Requires-Python"] == ">=3.11"


def test_the_wheel_holds_the_compiled_hot_path_where_a_compiler_is_there(dist: dict[str, Path]) -> None:
    if os.environ.get(compiled.PURE_ENV):
        pytest.skip(f"the wheel is the pure-Python package here: {compiled.PURE_ENV} is set (a pure build asked for)")
    missing = can_compile()
    if missing:
        pytest.skip(f"the wheel is the pure-Python package here: {missing}")
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        files = set(wheel.namelist())
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]  # .cpython-3XX-<arch>.so
    for module in compiled.MODULES:
        path = module.replace(".", "/")
        assert f"{path}{suffix}" in files, f"{module} is not compiled in the wheel"
        assert f"{path}.py" in files, f"{module}'s source is missing (the pure fallback needs it)"
    assert any(name.endswith(f"__mypyc{suffix}") for name in files), "mypyc's shared library is missing"
    assert "-py3-none-any.whl" not in dist["wheel"].name, dist["wheel"].name


def test_without_a_c_compiler_the_wheel_is_the_pure_package_and_says_so(dist: dict[str, Path], tmp_path: Path) -> None:
    """The fallback is real: with no compiler to be had (``CC`` names none), the sdist still builds, into the
    pure-Python wheel, and the build says why."""
    with tarfile.open(dist["sdist"]) as sdist:
        sdist.extractall(tmp_path, filter="data")
    (source,) = tmp_path.glob("sqsemu-*")
    env = {**os.environ, "CC": str(tmp_path / "no-such-compiler")}
    env.pop(compiled.PURE_ENV, None)
    argv = [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "out"), str(source)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "sqsemu build: no C compiler" in result.stdout + result.stderr
    assert "each start says so (the banner's 'build: pure Python' line" in result.stdout + result.stderr
    (wheel,) = (tmp_path / "out").glob("sqsemu-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if name.endswith(".so")]
    # Installed into a fresh environment, the pure wheel serves, and says at start that it is the pure build.
    checked = _run(sys.executable, RELEASE, "check", "--dist", tmp_path / "out")
    assert "smoke: OK: sqsemu" in checked.stdout, checked.stdout + checked.stderr
    assert "build: pure Python: not compiled at install" in checked.stdout, checked.stdout


def test_a_second_build_of_the_same_sources_reuses_the_compiled_modules(dist: dict[str, Path], tmp_path: Path) -> None:
    """setup.py's build cache: the wheel built again from the same sources (the sdist) takes the compiled modules
    the first build kept, says so, and holds the same compiled files (an editable reinstall with another extra
    does the same)."""
    if os.environ.get(compiled.PURE_ENV):
        pytest.skip(f"nothing is compiled here: {compiled.PURE_ENV} is set (a pure build was asked for)")
    missing = can_compile()
    if missing:
        pytest.skip(f"nothing is compiled here: {missing}")
    with tarfile.open(dist["sdist"]) as sdist:
        sdist.extractall(tmp_path, filter="data")
    (source,) = tmp_path.glob("sqsemu-*")
    argv = [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "out"), str(source)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=_CLEAN_ENV)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "reusing its compiled modules" in result.stdout + result.stderr, result.stderr[-3000:]
    (again,) = (tmp_path / "out").glob("sqsemu-*.whl")
    with zipfile.ZipFile(dist["wheel"]) as first, zipfile.ZipFile(again) as second:
        built = {name: first.read(name) for name in first.namelist() if name.endswith(".so")}
        assert built and built == {name: second.read(name) for name in second.namelist() if name.endswith(".so")}


def test_the_release_check_installs_the_wheel_in_a_fresh_venv_where_it_serves(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    """``scripts/release.py check`` (the release workflow's step): twine check on both distributions, the wheel
    alone in a fresh virtual environment, the smoke test's queue round trip there, the build the wheel is; then the
    same environment's ``sqsemu`` serves boto3."""
    venv = tmp_path / "venv"
    # The venv has no pip of its own (ensurepip: 4 s of CPU): this environment's pip installs into it (--python, pip
    # 22.3+), and leaves compiling to the first imports (the server's start compiles what it imports).
    checked = _run(sys.executable, RELEASE, "check", "--dist", dist["wheel"].parent, "--venv", venv)
    report = checked.stdout + checked.stderr
    assert "twine check --strict: 2 distributions PASSED" in report, report
    assert f"installed {dist['wheel'].name} into a fresh virtual environment" in report, report
    for step in ("CreateQueue", "SendMessage", "ReceiveMessage", "DeleteMessage", "DeleteQueue"):
        assert f"smoke: {step}: " in report, report
    expected = "pure Python: " if dist["wheel"].name.endswith("-none-any.whl") else compiled.COMPILED
    assert f"smoke: OK: sqsemu {__version__}, build: {expected}" in checked.stdout, report
    version = _run(venv / "bin" / "sqsemu", "--version").stdout.strip()
    assert version == f"sqsemu, version {__version__}"
    with ServerProcess(command=[str(venv / "bin" / "sqsemu")], env={"PYTHONPATH": ""}) as srv:
        sqs = json_client(srv.endpoint_url)
        url = sqs.create_queue(QueueName="from-the-wheel")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="installed from the wheel")
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        assert [m["Body"] for m in messages] == ["installed from the wheel"]
        with urllib.request.urlopen(f"{srv.endpoint_url}/health", timeout=10) as response:
            build = json.loads(response.read())["build"]
    if can_compile() or compiled.PURE_ENV in os.environ:
        assert build.startswith("pure Python: "), build
    else:
        assert build == compiled.COMPILED, build
