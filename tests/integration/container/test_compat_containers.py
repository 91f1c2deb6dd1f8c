"""The sqsemu image as a drop-in for other emulators' containers, with the examples of the "Coming from ..." pages run
as written (docs/coming-from-localstack.md, docs/coming-from-elasticmq.md):

- testcontainers-python's ``LocalStackContainer`` (pinned in pyproject.toml's test extra, tested with 4.15) starts
  the image and waits for its ``Ready.`` line; an SQS round trip goes through ``get_client("sqs")``;
- Node's ``@testcontainers/localstack`` (11.14, pinned in tests/js/testcontainers/package-lock.json) does the same
  with the AWS SDK v3 (``node --test``; skipped without Node.js 20+ and npm);
- a compose file written for ElasticMQ (``softwaremill/elasticmq-native`` with its ``elasticmq.conf`` mounted at
  ``/opt/elasticmq.conf``) runs with the image name changed: its queues exist. The test also maps the host port to
  a free one (``9324:9324`` would clash with other tests), which a user does not need to;
- the page's ``ready.d`` script, which calls ``awslocal``, mounted at ``/etc/localstack/init``: the image built
  without ``--build-arg AWS_CLI=1`` has ``awslocal`` but no AWS CLI, and the script fails saying so; built with
  it, the script makes its queue and sends its message.

Like the other container tests they need a Docker engine (skipped without one; an error when ``CI`` is set).
Testcontainers' reaper (Ryuk) is switched off: its image comes from Docker Hub.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests
from harness import free_port, json_client
from harness.docexamples import example
from harness.docker import BUILD_TIMEOUT_S, ROOT, compose_command, unique_name
from harness.node import ensure_node_modules

from .conftest import RunContainer, container_log, wait_for_health

pytestmark = [pytest.mark.integration, pytest.mark.timeout(BUILD_TIMEOUT_S * 2)]

RECIPE_DIR = ROOT / "tests" / "js" / "testcontainers"


def test_testcontainers_python_localstack_module_starts_the_image(
    sqsemu_image: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from testcontainers.core.config import testcontainers_config

    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)
    code = example("coming-from-localstack.md", "testcontainers-python-localstack")
    assert 'image="sqsemu"' in code
    exec(compile(code.replace('image="sqsemu"', f'image="{sqsemu_image}"'), "coming-from-localstack.md", "exec"), {})


def test_testcontainers_node_localstack_module_starts_the_image(sqsemu_image: str) -> None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(name for name, found in (("node", node), ("npm", npm)) if found is None)
        pytest.skip(f"{missing} not on PATH: the Testcontainers-for-Node recipe needs Node.js 20+ and npm")
    ensure_node_modules(
        npm, RECIPE_DIR, RECIPE_DIR / "node_modules" / "@testcontainers" / "localstack" / "package.json"
    )
    path = RECIPE_DIR / "localstack.test.mjs"  # beside its node_modules (git-ignored)
    path.write_text(example("coming-from-localstack.md", "testcontainers-node-localstack"), encoding="utf-8")
    env = {**os.environ, "SQSEMU_IMAGE": sqsemu_image, "TESTCONTAINERS_RYUK_DISABLED": "true"}
    result = subprocess.run(
        [node, "--test", path.name], cwd=RECIPE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^# pass 1$", result.stdout, re.M), result.stdout


def test_an_elasticmq_compose_file_runs_with_the_image_name_changed(sqsemu_image: str, tmp_path: Path) -> None:
    command = compose_command()
    if command is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but neither `docker compose` nor docker-compose is installed")
        pytest.skip("neither `docker compose` (v2 plugin) nor docker-compose (v1) is installed")
    compose = example("coming-from-elasticmq.md", "elasticmq-compose")
    assert "image: sqsemu " in compose and '"9324:9324"' in compose
    port = free_port()
    compose = compose.replace("image: sqsemu ", f"image: {sqsemu_image} ")
    compose = compose.replace('"9324:9324"', f'"127.0.0.1:{port}:9324"')
    (tmp_path / "docker-compose.yml").write_text(compose, encoding="utf-8")
    (tmp_path / "elasticmq.conf").write_text(example("coming-from-elasticmq.md", "elasticmq-conf"), encoding="utf-8")
    (tmp_path / "elasticmq.conf").chmod(0o644)  # read by the image's unprivileged user
    project = unique_name("sqsemuelasticmq").replace("-", "")

    def run(*args: str) -> None:
        argv = [*command, "--project-name", project, *args]
        result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"{' '.join(argv)}: {result.stdout}{result.stderr}"

    run("up", "--detach")
    try:
        endpoint = f"http://127.0.0.1:{port}"
        wait_for_health(f"{endpoint}/health")
        urls = json_client(endpoint).list_queues().get("QueueUrls", [])
        assert sorted(u.rsplit("/", 1)[1] for u in urls) == ["orders", "orders-dead-letters", "payments.fifo"]
    finally:
        run("down", "--volumes", "--remove-orphans")


def init_dir_with_the_pages_awslocal_script(root: Path) -> Path:
    """``root`` holding ``ready.d/01-queues.sh``, the page's script, readable and runnable by the image's user."""
    ready = root / "ready.d"
    ready.mkdir()
    script = ready / "01-queues.sh"
    script.write_text(example("coming-from-localstack.md", "localstack-awslocal"), encoding="utf-8")
    for path in (root, ready, script):
        path.chmod(0o755)  # read (and run) by the image's unprivileged user
    return root


def ready_log(name: str, deadline_s: float = 60) -> str:
    """The container's log once it has printed ``Ready.``."""
    deadline = time.monotonic() + deadline_s
    while "Ready." not in container_log(name).splitlines() and time.monotonic() < deadline:
        time.sleep(0.2)
    log = container_log(name)
    assert "Ready." in log.splitlines(), log
    return log


def test_awslocal_in_the_image_without_the_aws_cli_says_so(run_container: RunContainer, tmp_path: Path) -> None:
    init = init_dir_with_the_pages_awslocal_script(tmp_path)
    box = run_container("-v", f"{init}:/etc/localstack/init:ro", env={"SQSEMU_COMPAT": "localstack"}, port=4566)
    log = ready_log(box.name)
    scripts = requests.get(f"{box.endpoint_url}/_localstack/init", timeout=10).json()["scripts"]
    assert scripts == [{"stage": "READY", "name": "01-queues.sh", "state": "ERROR"}], log
    assert "awslocal: the AWS CLI (aws) is not on PATH" in log and "--build-arg AWS_CLI=1" in log, log


def test_awslocal_in_the_image_built_with_the_aws_cli(
    run_container: RunContainer, sqsemu_image_with_aws_cli: str, tmp_path: Path
) -> None:
    init = init_dir_with_the_pages_awslocal_script(tmp_path)
    box = run_container(
        "-v",
        f"{init}:/etc/localstack/init:ro",
        env={"SQSEMU_COMPAT": "localstack"},
        port=4566,
        image=sqsemu_image_with_aws_cli,
    )
    log = ready_log(box.name)
    scripts = requests.get(f"{box.endpoint_url}/_localstack/init", timeout=10).json()["scripts"]
    assert scripts == [{"stage": "READY", "name": "01-queues.sh", "state": "SUCCESSFUL"}], log
    sqs = json_client(box.endpoint_url)
    url = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url).get("Messages", [])] == ["first order"], log
