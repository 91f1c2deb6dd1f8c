"""The Docker image's recipe, checked without a Docker engine.

The Dockerfile and docker-compose.yml are parsed and checked for what a user relies on (slim base, non-root user,
health check, listening on 0.0.0.0:9324, the compose port mapping), then the image's own CMD and HEALTHCHECK
commands are run here against each other (host and port swapped for 127.0.0.1 and a free port).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from harness import ServerProcess, free_port, json_client

from sqsemu.config import Config

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PORT = "9324"


def dockerfile_instructions() -> list[tuple[str, str]]:
    """``[(INSTRUCTION, arguments)]`` of the Dockerfile: comments dropped, continuation lines joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, rest = full.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
    assert not pending, "Dockerfile ends inside a continued line"
    return instructions


def exec_form(arguments: str) -> list[str]:
    """The argv of a JSON exec-form instruction (``["a", "b"]``); shell form is split like a shell would."""
    if arguments.startswith("["):
        argv = json.loads(arguments)
        assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        return argv
    return shlex.split(arguments)


def only(instructions: list[tuple[str, str]], keyword: str) -> str:
    found = [args for kw, args in instructions if kw == keyword]
    assert found, f"Dockerfile has no {keyword}"
    return found[-1]  # Docker uses the last one


def healthcheck_argv(instructions: list[tuple[str, str]]) -> list[str]:
    args = only(instructions, "HEALTHCHECK")
    assert " CMD " in f" {args} ", f"HEALTHCHECK without CMD: {args}"
    return exec_form(args.split("CMD", 1)[1].strip())


def swap_port(argv: list[str], port: int) -> list[str]:
    return [a.replace(f":{PORT}", f":{port}") if a != PORT else str(port) for a in argv]


def local_program(argv: list[str]) -> list[str]:
    """Map the image's programs (``sqsemu``, ``python``) onto this environment's."""
    program, *rest = argv
    if program == "sqsemu":
        return [sys.executable, "-m", "sqsemu", *rest]
    if program in {"python", "python3"}:
        return [sys.executable, *rest]
    raise AssertionError(f"unexpected program in the image's command: {program}")


def test_dockerfile_uses_slim_python_and_a_non_root_user() -> None:
    instructions = dockerfile_instructions()
    base = only(instructions, "FROM")
    assert base.startswith("python:3.11") and "slim" in base, base
    user = only(instructions, "USER")
    assert user.split(":")[0] not in {"root", "0"}, user
    run_lines = " ".join(args for kw, args in instructions if kw == "RUN")
    assert "pip install ." in run_lines
    assert PORT in only(instructions, "EXPOSE").split()


def test_dockerfile_cmd_listens_on_all_interfaces_port_9324() -> None:
    argv = exec_form(only(dockerfile_instructions(), "CMD"))
    assert argv[0] == "sqsemu"
    assert argv[argv.index("--host") + 1] == "0.0.0.0"
    assert argv[argv.index("--port") + 1] == PORT


def test_healthcheck_uses_python_urllib_on_health() -> None:
    argv = healthcheck_argv(dockerfile_instructions())
    assert argv[0] in {"python", "python3"}
    code = " ".join(argv)
    assert "urllib" in code
    assert f"127.0.0.1:{PORT}/health" in code


def test_the_image_cmd_serves_and_its_healthcheck_passes() -> None:
    instructions = dockerfile_instructions()
    port = free_port()
    cmd = swap_port(exec_form(only(instructions, "CMD")), port)
    cmd[cmd.index("--host") + 1] = "127.0.0.1"
    health = local_program(swap_port(healthcheck_argv(instructions), port))

    down = subprocess.run(health, capture_output=True, timeout=30)
    assert down.returncode != 0, "the health check passed with no server running"

    srv = ServerProcess(command=local_program(cmd), pass_host_port=False, port=port)
    srv.start()
    try:
        up = subprocess.run(health, capture_output=True, text=True, timeout=30)
        assert up.returncode == 0, up.stderr
    finally:
        assert srv.stop() == 0, srv.log_tail()


def compose() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_compose_builds_this_image_and_publishes_9324() -> None:
    service = compose()["services"]["sqsemu"]  # type: ignore[index]
    assert service["build"] in (".", {"context": "."})
    assert f"{PORT}:{PORT}" in [str(p) for p in service["ports"]]


def env_file_values() -> dict[str, str]:
    service = compose()["services"]["sqsemu"]  # type: ignore[index]
    values: dict[str, str] = {}
    for name in service.get("env_file", []):
        for line in (ROOT / name).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, value = line.partition("=")
                values[key] = value
    return values


def test_compose_env_file_names_only_real_options_and_the_server_accepts_them() -> None:
    values = env_file_values()
    fields = {f"SQSEMU_{name.upper()}" for name in Config.field_names()}
    assert values, "compose passes no SQSEMU_* settings"
    assert set(values) <= fields, set(values) - fields
    env = {k: v for k, v in values.items() if k not in {"SQSEMU_HOST", "SQSEMU_PORT"}}
    srv = ServerProcess(env=env).start()
    try:
        assert srv.proc is not None and srv.proc.poll() is None
    finally:
        assert srv.stop() == 0, srv.log_tail()


def test_dockerignore_keeps_what_the_build_copies() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    copied = set()
    for keyword, args in dockerfile_instructions():
        if keyword == "COPY":
            copied.update(args.split()[:-1])
    assert copied, "the Dockerfile copies nothing"
    assert not copied & ignored, copied & ignored
    for path in copied:
        assert os.path.exists(ROOT / path), path


def compose_environment() -> dict[str, str]:
    service = compose()["services"]["sqsemu"]  # type: ignore[index]
    environment = service.get("environment", {})
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    return {str(k): str(v) for k, v in environment.items()}


def compose_mounts() -> dict[str, str]:
    """``{container path: host path or volume name}`` of the service's short-syntax volumes."""
    service = compose()["services"]["sqsemu"]  # type: ignore[index]
    mounts: dict[str, str] = {}
    for volume in service.get("volumes", []):
        source, target = str(volume).split(":")[:2]
        mounts[target] = source
    return mounts


def test_compose_environment_names_only_real_options() -> None:
    fields = {f"SQSEMU_{name.upper()}" for name in Config.field_names()}
    environment = compose_environment()
    assert set(environment) <= fields, set(environment) - fields


def test_compose_mounts_the_example_config_where_sqsemu_config_points() -> None:
    target = compose_environment()["SQSEMU_CONFIG"]
    source = compose_mounts()[target]
    assert (ROOT / source).resolve() == ROOT / "docker" / "sqsemu.toml"
    assert Config.from_file(str(ROOT / source)).queues, "the mounted config declares no queues"


def test_compose_keeps_durable_state_in_a_named_volume_the_image_user_owns() -> None:
    target = compose_environment()["SQSEMU_DATA_DIR"]
    volume = compose_mounts()[target]
    named = compose().get("volumes") or {}
    assert isinstance(named, dict) and volume in named, f"{volume} is not a named volume"
    user = only(dockerfile_instructions(), "USER").split(":")[0]
    run_lines = " ".join(args for kw, args in dockerfile_instructions() if kw == "RUN")
    assert f"mkdir {target}" in run_lines and f"chown {user}:{user} {target}" in run_lines, run_lines


def test_the_compose_configuration_serves_the_example_queues(tmp_path: Path) -> None:
    # The compose service's settings with the container paths mapped onto this checkout and a temporary folder.
    env = {k: v for k, v in env_file_values().items() if k not in {"SQSEMU_HOST", "SQSEMU_PORT"}}
    env["SQSEMU_CONFIG"] = str(ROOT / compose_mounts()[compose_environment()["SQSEMU_CONFIG"]])
    env["SQSEMU_DATA_DIR"] = str(tmp_path / "data")
    declared = {q.name for q in Config.from_file(env["SQSEMU_CONFIG"]).queues}
    for _ in range(2):  # the second start restores the data folder and finds the declarations applied
        with ServerProcess(env=env) as srv:
            sqs = json_client(srv.endpoint_url)
            names = {url.rsplit("/", 1)[1] for url in sqs.list_queues().get("QueueUrls", [])}
            assert names == declared
