"""The package installs as the README says: ``python -m build`` makes an sdist and a wheel (the wheel built from the
sdist, so the sdist is complete), ``twine check`` passes on both, and a fresh virtual environment with only the
wheel installed runs ``sqsemu --version`` and serves a boto3 round trip.

The distributions are built once per session into a temporary folder; pip's download cache is used as usual, so
after the first run the fresh environment installs without downloading.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest
from harness import ServerProcess, json_client

from sqsemu import __version__

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert result.returncode == 0, f"{' '.join(map(str, argv))}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``{"sdist": ..., "wheel": ...}``: the distributions ``python -m build`` made from this checkout."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, ROOT)
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


def test_a_fresh_venv_with_the_wheel_runs_sqsemu(dist: dict[str, Path], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", dist["wheel"])
    version = _run(venv / "bin" / "sqsemu", "--version").stdout.strip()
    assert version == f"sqsemu, version {__version__}"
    with ServerProcess(command=[str(venv / "bin" / "sqsemu")]) as srv:
        sqs = json_client(srv.endpoint_url)
        url = sqs.create_queue(QueueName="from-the-wheel")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="installed from the wheel")
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        assert [m["Body"] for m in messages] == ["installed from the wheel"]
