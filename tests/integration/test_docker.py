"""The Docker image's recipe, checked without a Docker engine (the image itself runs in tests/integration/container).

The Dockerfile and docker-compose.yml are parsed and checked against the options sqsemu has; what can run here is
run: the image's HEALTHCHECK command passes exactly when /health answers 200 on the port SQSEMU_PORT names, and the
compose service's settings serve the example queues.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from harness import ServerProcess, free_port, json_client

from sqsemu.config import Config
from sqsemu.declare import config_from_file

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


def local_program(argv: list[str]) -> list[str]:
    """Map the image's programs (``sqsemu``, ``python``) onto this environment's. ``python`` runs without
    site-packages (``-S``): what the image's Python has beyond the standard library is sqsemu's own dependencies,
    not this test environment's."""
    program, *rest = argv
    if program == "sqsemu":
        return [sys.executable, "-m", "sqsemu", *rest]
    if program in {"python", "python3"}:
        return [sys.executable, "-S", *rest]
    raise AssertionError(f"unexpected program in the image's command: {program}")


def health_check(argv: list[str], port: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SQSEMU_PORT": str(port)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)


@contextmanager
def http_stub(port: int, statuses: dict[str, int]) -> Iterator[None]:
    """An HTTP server on 127.0.0.1:``port`` answering GET ``path`` with ``statuses[path]`` (other paths: 200)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            body = b"{}"
            self.send_response(statuses.get(self.path, 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the signature of the base class
            pass

    stub = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=stub.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stub.shutdown()
        stub.server_close()
        thread.join(10)


def image_env(instructions: list[tuple[str, str]]) -> dict[str, str]:
    """The final stage's ``ENV name=value`` settings."""
    final = max(i for i, (kw, _) in enumerate(instructions) if kw == "FROM")
    env: dict[str, str] = {}
    for keyword, args in instructions[final:]:
        if keyword == "ENV":
            for item in shlex.split(args):
                name, _, value = item.partition("=")
                env[name] = value
    return env


def test_dockerfile_defaults_to_slim_python_and_runs_as_a_non_root_user_on_sqsemu_port() -> None:
    instructions = dockerfile_instructions()
    args = [args for kw, args in instructions if kw == "ARG"]
    # BASE_IMAGE before the first FROM; AWS_CLI (the AWS CLI for awslocal in init scripts) off unless asked for
    assert args == ["BASE_IMAGE=python:3.11-slim", "AWS_CLI=0"], args
    assert [args.split()[0] for kw, args in instructions if kw == "FROM"] == ["${BASE_IMAGE}", "${BASE_IMAGE}"]
    user = only(instructions, "USER")
    assert user.split(":")[0] not in {"root", "0"}, user
    env = image_env(instructions)
    assert env["SQSEMU_HOST"] == "0.0.0.0" and env["SQSEMU_PORT"] == PORT
    assert PORT in only(instructions, "EXPOSE").split()
    assert exec_form(only(instructions, "CMD")) == ["sqsemu"]  # host and port come from the variables


def test_the_healthcheck_passes_exactly_when_health_answers_200_on_sqsemu_port() -> None:
    """The HEALTHCHECK command (standard library only) asks /health on SQSEMU_PORT, and only a 200 passes."""
    port = free_port()
    health = local_program(healthcheck_argv(dockerfile_instructions()))
    down = health_check(health, port)
    assert down.returncode != 0, "the health check passed with nothing listening"
    with http_stub(port, {"/health": 200}):
        healthy = health_check(health, port)
    assert healthy.returncode == 0, healthy.stderr
    with http_stub(port, {"/health": 503}):  # every other path answers 200
        unhealthy = health_check(health, port)
    assert unhealthy.returncode != 0, "the health check passed while /health answered 503"


def compose() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_compose_builds_this_image_and_publishes_9324() -> None:
    service = compose()["services"]["sqsemu"]  # type: ignore[index]
    assert service["build"]["context"] == "."
    assert service["build"]["args"] == {"BASE_IMAGE": "${SQSEMU_BASE_IMAGE:-python:3.11-slim}"}
    assert [str(p) for p in service["ports"]] == [f"${{SQSEMU_HOST_PORT:-{PORT}}}:{PORT}"]


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
        if keyword == "COPY" and not args.startswith("--from"):  # --from copies from another stage
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
    assert config_from_file(str(ROOT / source)).queues, "the mounted config declares no queues"


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
    declared = {q.name for q in config_from_file(env["SQSEMU_CONFIG"]).queues}
    for _ in range(2):  # the second start restores the data folder and finds the declarations applied
        with ServerProcess(env=env) as srv:
            sqs = json_client(srv.endpoint_url)
            names = {url.rsplit("/", 1)[1] for url in sqs.list_queues().get("QueueUrls", [])}
            assert names == declared
