"""The image's entrypoint (docker/entrypoint.sh) and health check without Docker: the drop-in conventions they apply
(docs/coming-from-localstack.md, docs/coming-from-elasticmq.md). The ``/opt/elasticmq.conf`` rule is checked with
the path the script names (a test cannot create /opt/elasticmq.conf on a shared machine); the container tests run
it for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"


def entrypoint_env(env: dict[str, str]) -> dict[str, str]:
    """The environment the entrypoint hands to its command, started with ``env`` (no SQSEMU_* otherwise)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_")}
    result = subprocess.run(
        ["sh", str(ENTRYPOINT), "env"], env={**base, **env}, capture_output=True, text=True, timeout=30, check=True
    )
    return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)


@pytest.mark.parametrize(
    ("env", "port"),
    [
        ({"SQSEMU_PORT": "9324"}, "9324"),  # the image's default, without compat
        ({"SQSEMU_PORT": "9324", "SQSEMU_COMPAT": "localstack"}, "4566"),
        ({"SQSEMU_PORT": "5000", "SQSEMU_COMPAT": "localstack"}, "5000"),  # a port the user chose stays
        ({"SQSEMU_COMPAT": "localstack"}, "4566"),
    ],
)
def test_the_port_rule(env: dict[str, str], port: str) -> None:
    assert entrypoint_env(env).get("SQSEMU_PORT", "9324") == port


def test_the_elasticmq_conf_rule_is_written_for_opt_elasticmq_conf() -> None:
    script = ENTRYPOINT.read_text(encoding="utf-8")
    assert "[ -f /opt/elasticmq.conf ]" in script and "export SQSEMU_CONFIG=/opt/elasticmq.conf" in script
    env = entrypoint_env({"SQSEMU_CONFIG": "/etc/sqsemu/sqsemu.toml"})
    assert env["SQSEMU_CONFIG"] == "/etc/sqsemu/sqsemu.toml"  # a file named by the user wins
    assert os.access(ENTRYPOINT, os.X_OK), "docker/entrypoint.sh must be executable (the image runs it)"


def test_the_entrypoint_runs_its_command_with_its_arguments() -> None:
    result = subprocess.run(
        ["sh", str(ENTRYPOINT), "sh", "-c", "echo $0 $1", "one", "two words"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert result.stdout.strip() == "one two words"


def test_the_dockerfile_uses_the_entrypoint_and_the_health_check_follows_the_port_rule() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["sqsemu-entrypoint"]' in dockerfile
    assert "COPY docker/entrypoint.sh /usr/local/bin/sqsemu-entrypoint" in dockerfile
    argv = json.loads(dockerfile.split("HEALTHCHECK", 1)[1].split("CMD", 1)[1].split("\n\n", 1)[0])
    assert argv[:2] == ["python3", "-c"]
    # the check's code, with urlopen replaced by one that prints the URL it was given and answers 200
    fake = (
        "import urllib.request as u; u.urlopen = lambda url, timeout: (print(url), type('R', (), {'status': 200}))[1]\n"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_")}
    for env, port in (
        ({"SQSEMU_PORT": "9324"}, "9324"),
        ({"SQSEMU_PORT": "9324", "SQSEMU_COMPAT": "localstack"}, "4566"),
        ({"SQSEMU_PORT": "5000", "SQSEMU_COMPAT": "localstack"}, "5000"),
    ):
        result = subprocess.run(
            [sys.executable, "-c", fake + argv[2]], env={**base, **env}, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"http://127.0.0.1:{port}/health", result.stderr
