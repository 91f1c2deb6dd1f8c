"""Fixtures of the container tests: the sqsemu image built once per session and run in a real Docker engine.

- ``docker_engine`` (session): a running Docker engine answers (the tests never start one). Where none can be
  had the tests are skipped with the reason; with ``CI`` set that is an error instead.
- ``sqsemu_image`` (session): the repository's Dockerfile built on :func:`harness.docker.base_image` under a unique
  tag, removed at the end of the session.
- ``sqsemu_image_with_aws_cli`` (session): the same built with ``--build-arg AWS_CLI=1`` (the AWS CLI, for
  ``awslocal`` in init scripts), built only by the tests that ask for it.
- ``run_container``: ``run_container(*docker_run_args, env={...}, port=9324, command=(), image=None) ->
  Container``: the image (``image``, else ``sqsemu_image``) started detached under a unique name (``command``
  replaces its CMD), its ``port`` published on 127.0.0.1:<free port>, waited for until /health answers 200 there;
  removed (``docker rm -f``) at teardown.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pytest
from harness import free_port, http_get
from harness.docker import DockerUnavailable, base_image, build_image, docker, ensure_engine, unique_name

HEALTHY_DEADLINE_S = 60.0
report: list[str] = []
"""Figures the container tests print at the end of the session (build time, start-up, stop)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if report:
        terminalreporter.write_sep("-", "sqsemu container figures")
        for line in report:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def docker_engine() -> str:
    try:
        how = ensure_engine()
    except DockerUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but no Docker engine can be had: {exc}")
        pytest.skip(f"no Docker engine: {exc}")
    version = docker("version", "--format", "{{.Server.Version}}")
    report.append(f"Docker engine {version} ({how})")
    return version


@pytest.fixture(scope="session")
def sqsemu_image(docker_engine: str) -> Iterator[str]:
    base = base_image()
    tag = f"sqsemu-test:{unique_name('image').split('-', 1)[1]}"
    seconds = build_image(tag, base)
    size = int(docker("image", "inspect", "--format", "{{.Size}}", tag))
    report.append(f"image built on {base} in {seconds:.1f} s; size {size / 1e6:.0f} MB")
    yield tag
    docker("image", "rm", "--force", tag, check=False)


@pytest.fixture(scope="session")
def sqsemu_image_with_aws_cli(docker_engine: str) -> Iterator[str]:
    base = base_image()
    tag = f"sqsemu-test:{unique_name('awscli').split('-', 1)[1]}"
    seconds = build_image(tag, base, {"AWS_CLI": "1"})
    size = int(docker("image", "inspect", "--format", "{{.Size}}", tag))
    report.append(f"image with AWS_CLI=1 built on {base} in {seconds:.1f} s; size {size / 1e6:.0f} MB")
    yield tag
    docker("image", "rm", "--force", tag, check=False)


@dataclass
class Container:
    """A running sqsemu container: ``name``, ``endpoint_url`` (``http://127.0.0.1:<published port>``) and the
    seconds from ``docker run`` to the first 200 from /health (``healthy_after_s``)."""

    name: str
    host_port: int
    healthy_after_s: float = 0.0

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.host_port}"


def container_log(name: str) -> str:
    """What the container wrote (the server logs to standard error)."""
    result = subprocess.run(["docker", "logs", name], capture_output=True, text=True, timeout=60)
    return result.stdout + result.stderr


def wait_for_health(url: str, deadline_s: float = HEALTHY_DEADLINE_S, name: str = "") -> float:
    """Poll ``url`` until it answers 200; the seconds waited. Fails with the container's log after ``deadline_s``."""
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        try:
            if http_get(url, timeout=1.0)[0] == 200:
                return time.monotonic() - started
        except OSError:
            pass
        time.sleep(0.02)
    logs = container_log(name) if name else ""
    raise AssertionError(f"{url} did not answer 200 within {deadline_s} s\n{logs[-3000:]}")


RunContainer = Callable[..., Container]


@pytest.fixture
def run_container(sqsemu_image: str) -> Iterator[RunContainer]:
    names: list[str] = []

    def run(
        *args: str,
        env: dict[str, str] | None = None,
        port: int = 9324,
        command: Sequence[str] = (),
        image: str | None = None,
    ) -> Container:
        name = unique_name("sqsemu-test")
        host_port = free_port()
        env_args = [item for key, value in (env or {}).items() for item in ("-e", f"{key}={value}")]
        started = time.monotonic()
        names.append(name)
        publish = f"127.0.0.1:{host_port}:{port}"
        docker("run", "-d", "--name", name, "-p", publish, *env_args, *args, image or sqsemu_image, *command)
        container = Container(name, host_port)
        wait_for_health(f"{container.endpoint_url}/health", name=name)
        container.healthy_after_s = time.monotonic() - started
        return container

    yield run
    for name in names:
        docker("rm", "--force", "--volumes", name, check=False)
