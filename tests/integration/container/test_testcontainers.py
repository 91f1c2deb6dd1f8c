"""The image started the way Testcontainers users start their dependencies from a test: ``DockerContainer`` from the
Python ``testcontainers`` library, waiting for /health, then a send/receive with boto3 through the mapped port
(docs/docker.md, "Testcontainers for Python"). Testcontainers' reaper container (Ryuk) is switched off here: its
image comes from Docker Hub, which this machine cannot reach; the container is removed when the ``with`` block ends.
"""

from __future__ import annotations

import boto3
import pytest
from harness.docker import BUILD_TIMEOUT_S, docker
from testcontainers.core.config import testcontainers_config
from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import HttpWaitStrategy

# The first test to need the image builds it (and, on a machine without a base image, the base: minutes).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(BUILD_TIMEOUT_S * 2)]


def test_testcontainers_starts_the_image_and_a_message_goes_through(
    sqsemu_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)
    container = DockerContainer(sqsemu_image).with_exposed_ports(9324)
    container.waiting_for(HttpWaitStrategy(9324, "/health").for_status_code(200))
    with container:
        endpoint = f"http://{container.get_container_host_ip()}:{container.get_exposed_port(9324)}"
        sqs = boto3.client(
            "sqs", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        )
        url = sqs.create_queue(QueueName="from-testcontainers")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="hello")
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
        assert [m["Body"] for m in messages] == ["hello"]
        name = container.get_wrapped_container().name
    assert docker("ps", "--all", "--quiet", "--filter", f"name=^{name}$") == ""  # removed on leaving the block
