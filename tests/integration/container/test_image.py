"""The image, built from the repository's Dockerfile and run in a real Docker engine, reached through its published
port on 127.0.0.1: /health, round trips with boto3 (both wire protocols) and the AWS CLI, the unprivileged user,
SQSEMU_* variables (the port included, which the health check follows), a prompt ``docker stop`` with a long poll
open, durable state across ``docker restart``, an image without compilers or pip, and the hot path compiled (the
build stage installs a C compiler; /health says ``compiled (mypyc)``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from harness import client_for, json_client, start_long_poll
from harness.docker import BASE_SCRIPT, BUILD_TIMEOUT_S, LOCAL_BASE, docker, unique_name

from sqsemu import compiled

from .conftest import RunContainer, report, wait_for_health

# The first test to need the image builds it (and, on a machine without a base image, the base: minutes).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(BUILD_TIMEOUT_S * 2)]

STOP_BOUND_S = 2.0
HEALTH_DEADLINE_S = 30.0


def test_health_and_a_round_trip_through_the_published_port(run_container: RunContainer, protocol: str) -> None:
    box = run_container()
    report.append(f"docker run to healthy /health: {box.healthy_after_s:.2f} s")
    sqs = client_for(box.endpoint_url, protocol)
    url = sqs.create_queue(QueueName=f"container-{protocol}")["QueueUrl"]
    assert url == f"{box.endpoint_url}/000000000000/container-{protocol}"
    sqs.send_message(QueueUrl=url, MessageBody="through the container")
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    assert [m["Body"] for m in messages] == ["through the container"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=messages[0]["ReceiptHandle"])
    assert sqs.receive_message(QueueUrl=url).get("Messages", []) == []


def test_the_image_runs_the_compiled_hot_path(run_container: RunContainer) -> None:
    box = run_container()
    with urllib.request.urlopen(f"{box.endpoint_url}/health", timeout=10) as response:
        build = json.loads(response.read())["build"]
    assert build == compiled.COMPILED, f"the image's build: {build} (see the docker build log)"


def test_an_aws_cli_round_trip(run_container: RunContainer) -> None:
    box = run_container()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_MAX_ATTEMPTS="1",
    )

    def aws(*args: str) -> dict[str, object]:
        argv = [sys.executable, "-m", "awscli", "sqs", *args, "--endpoint-url", box.endpoint_url, "--output", "json"]
        result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else {}

    url = str(aws("create-queue", "--queue-name", "cli-in-a-container")["QueueUrl"])
    aws("send-message", "--queue-url", url, "--message-body", "hello from the AWS CLI")
    received = aws("receive-message", "--queue-url", url, "--wait-time-seconds", "1")["Messages"]
    assert isinstance(received, list) and [m["Body"] for m in received] == ["hello from the AWS CLI"]
    aws("delete-message", "--queue-url", url, "--receipt-handle", received[0]["ReceiptHandle"])
    attributes = aws("get-queue-attributes", "--queue-url", url, "--attribute-names", "All")["Attributes"]
    assert isinstance(attributes, dict)
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"


def test_the_server_runs_as_the_unprivileged_user(run_container: RunContainer) -> None:
    box = run_container()
    status = docker("exec", box.name, "cat", "/proc/1/status")
    uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
    assert set(uids) == {"10001"}, status  # real, effective, saved and file-system uid: none is root
    cmdline = docker("exec", box.name, "cat", "/proc/1/cmdline").replace("\0", " ")
    assert "sqsemu" in cmdline, cmdline  # process 1 is the server itself: docker stop's SIGTERM reaches it
    assert docker("exec", box.name, "id", "-un") == "sqsemu"


def _wait_for_health_status(name: str, wanted: str, deadline_s: float = HEALTH_DEADLINE_S) -> str:
    """Docker's own health status of the container, once it is ``wanted`` (or the last one seen at the deadline)."""
    deadline = time.monotonic() + deadline_s
    status = ""
    while time.monotonic() < deadline:
        status = docker("inspect", "--format", "{{.State.Health.Status}}", name)
        if status == wanted:
            break
        time.sleep(0.2)
    return status


def test_sqsemu_variables_are_honoured_and_the_health_check_follows_the_port(run_container: RunContainer) -> None:
    env = {"SQSEMU_PORT": "9555", "SQSEMU_REGION": "eu-west-1", "SQSEMU_ACCOUNT_ID": "123456789012"}
    # the image's own HEALTHCHECK command, probed every second instead of every 10 s
    box = run_container("--health-interval", "1s", "--health-start-period", "0s", env=env, port=9555)
    sqs = json_client(box.endpoint_url, region="eu-west-1")
    url = sqs.create_queue(QueueName="honoured")["QueueUrl"]
    assert url == f"{box.endpoint_url}/123456789012/honoured"
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert arn == "arn:aws:sqs:eu-west-1:123456789012:honoured"
    assert _wait_for_health_status(box.name, "healthy") == "healthy"


def test_the_health_check_fails_when_its_port_does_not_answer(run_container: RunContainer) -> None:
    """The check asks the port SQSEMU_PORT names: a server told (by a flag, which wins) to listen elsewhere turns
    the container unhealthy although it serves."""
    box = run_container(
        "--health-interval",
        "1s",
        "--health-retries",
        "1",
        env={"SQSEMU_PORT": "9556"},
        port=9557,
        command=["sqsemu", "--port", "9557"],
    )
    assert _wait_for_health_status(box.name, "unhealthy") == "unhealthy"


def test_docker_stop_with_a_long_poll_open_is_prompt_and_exits_0(run_container: RunContainer) -> None:
    box = run_container()
    sqs = json_client(box.endpoint_url)
    url = sqs.create_queue(QueueName="stop-while-polling")["QueueUrl"]
    poll = start_long_poll(box.endpoint_url, sqs, QueueUrl=url, WaitTimeSeconds=20)
    started = time.monotonic()
    docker("stop", box.name)  # SIGTERM, then SIGKILL after the 10 s grace period
    stop_s = time.monotonic() - started
    report.append(f"docker stop with a long poll open: {stop_s:.2f} s")
    poll.join(10)
    assert poll.messages() == []  # answered at once, empty
    assert docker("inspect", "--format", "{{.State.ExitCode}} {{.State.OOMKilled}}", box.name) == "0 false"
    assert stop_s < STOP_BOUND_S, f"docker stop took {stop_s:.2f} s"


def test_durable_state_survives_docker_restart(run_container: RunContainer) -> None:
    volume = unique_name("sqsemu-test-data")
    docker("volume", "create", volume)
    try:
        box = run_container("-v", f"{volume}:/data", env={"SQSEMU_DATA_DIR": "/data"})
        sqs = json_client(box.endpoint_url)
        url = sqs.create_queue(QueueName="kept", Attributes={"VisibilityTimeout": "45"})["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="before the restart")
        docker("restart", box.name)
        wait_for_health(f"{box.endpoint_url}/health", name=box.name)
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
        assert attributes["VisibilityTimeout"] == "45"
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        assert [m["Body"] for m in messages] == ["before the restart"]
    finally:
        docker("rm", "--force", box.name, check=False)  # before its volume can go
        docker("volume", "rm", "--force", volume, check=False)


def test_the_image_has_no_compiler_no_pip_and_no_pip_cache(sqsemu_image: str) -> None:
    script = "for p in gcc cc c++ make pip pip3; do command -v $p || true; done; ls -a /root/.cache 2>/dev/null || true"
    found = docker("run", "--rm", "--user", "root", sqsemu_image, "sh", "-c", script)
    assert found == "", found
    assert docker("run", "--rm", sqsemu_image, "sqsemu", "--version").startswith("sqsemu, version ")


def test_build_base_reuses_an_existing_image(docker_engine: str) -> None:
    if docker("image", "ls", "--quiet", LOCAL_BASE) == "":
        pytest.skip(f"{LOCAL_BASE} was not built here (the tests used another base)")
    result = subprocess.run(["bash", str(BASE_SCRIPT)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "reusing" in result.stdout, result.stdout
    version = docker("run", "--rm", LOCAL_BASE, "python3", "-c", "import sys, venv; print(sys.version_info[:2])")
    assert version == "(3, 11)", version  # Debian 12's Python, which sqsemu's requires-python (>= 3.11) accepts
