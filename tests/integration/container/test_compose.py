"""docker-compose.yml as a user runs it: the declared queues of docker/sqsemu.toml exist, and state kept in the named
volume survives ``down`` and ``up`` again. The compose project gets a unique name and a free host port
(``SQSEMU_HOST_PORT``), runs the session's image (``SQSEMU_IMAGE``, ``--no-build``), and is taken down with its
volume and network at the end.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import free_port, json_client
from harness.docker import BUILD_TIMEOUT_S, ROOT, compose_command, docker, unique_name

from sqsemu.declare import config_from_file

from .conftest import report, wait_for_health

# The first test to need the image builds it (and, on a machine without a base image, the base: minutes).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(BUILD_TIMEOUT_S * 2)]


class Compose:
    """``docker compose -p <unique project> -f docker-compose.yml ...`` with the session's image on a free port."""

    def __init__(self, command: list[str], image: str) -> None:
        self.command = command
        self.project = unique_name("sqsemutest").replace("-", "")
        self.port = free_port()
        self.env = {**os.environ, "SQSEMU_IMAGE": image, "SQSEMU_HOST_PORT": f"127.0.0.1:{self.port}"}
        self.endpoint_url = f"http://127.0.0.1:{self.port}"

    def __call__(self, *args: str) -> str:
        argv = [*self.command, "--project-name", self.project, "--file", str(ROOT / "docker-compose.yml"), *args]
        result = subprocess.run(argv, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{' '.join(argv)}: {result.stdout}{result.stderr}"
        return result.stdout

    def up(self) -> float:
        self("up", "--detach", "--no-build")
        return wait_for_health(f"{self.endpoint_url}/health")


@pytest.fixture
def compose(sqsemu_image: str) -> Iterator[Compose]:
    command = compose_command()
    if command is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but neither `docker compose` nor docker-compose is installed")
        pytest.skip("neither `docker compose` (v2 plugin) nor docker-compose (v1) is installed")
    project = Compose(command, sqsemu_image)
    report.append(f"compose: {' '.join(command)} {project('version').splitlines()[0]}")
    yield project
    project("down", "--volumes", "--remove-orphans")


def _queue_names(endpoint_url: str) -> set[str]:
    urls = json_client(endpoint_url).list_queues().get("QueueUrls", [])
    return {url.rsplit("/", 1)[1] for url in urls}


def test_compose_serves_the_declared_queues_and_keeps_state_in_its_named_volume(compose: Compose) -> None:
    declared = {queue.name for queue in config_from_file(str(Path(ROOT) / "docker" / "sqsemu.toml")).queues}
    assert declared, "docker/sqsemu.toml declares no queues"
    compose.up()
    assert _queue_names(compose.endpoint_url) == declared

    sqs = json_client(compose.endpoint_url)
    orders = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
    sqs.send_message(QueueUrl=orders, MessageBody="order 1")
    volumes = docker("volume", "ls", "--quiet", "--filter", f"label=com.docker.compose.project={compose.project}")
    assert volumes.splitlines() == [f"{compose.project}_sqsemu-data"]

    compose("down")  # the containers and the network go; the named volume stays
    assert docker("ps", "--all", "--quiet", "--filter", f"label=com.docker.compose.project={compose.project}") == ""
    compose.up()
    assert _queue_names(compose.endpoint_url) == declared  # restored, and the declarations found applied
    redrive = sqs.get_queue_attributes(QueueUrl=orders, AttributeNames=["RedrivePolicy"])["Attributes"]
    assert '"maxReceiveCount":5' in redrive["RedrivePolicy"].replace(" ", "")
    messages = sqs.receive_message(QueueUrl=orders, WaitTimeSeconds=1).get("Messages", [])
    assert [m["Body"] for m in messages] == ["order 1"]
