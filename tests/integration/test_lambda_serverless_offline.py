"""serverless-offline (npm) as a real Lambda Invoke endpoint serving a Node function: an event source mapping of
sqsemu invokes it over HTTP, and the function's partial batch response is honoured (the reported item comes back
after its visibility timeout, the others are deleted). SQS calls over both wire protocols.

Needs Node.js (skipped without it); ``npm ci`` in tests/js/serverless-offline on first use (serverless 3 and
serverless-offline 13, about 280 MB), or a copy of the ``node_modules`` an earlier run kept (harness/setupcache.py).
No cloud is involved: ``sls offline start`` serves the Invoke API locally.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import client_for, free_port
from harness.node import ensure_node_modules

from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration

PROJECT = Path(__file__).resolve().parents[1] / "js" / "serverless-offline"
SERVERLESS = PROJECT / "node_modules" / "serverless" / "bin" / "serverless.js"


def _install(npm: str) -> None:
    ensure_node_modules(npm, PROJECT, SERVERLESS)


@pytest.fixture(scope="module")
def offline() -> Iterator[str]:
    """``sls offline start`` on free ports; yields its Lambda endpoint (``http://127.0.0.1:<port>``)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(name for name, found in (("node", node), ("npm", npm)) if found is None)
        pytest.skip(f"{missing} not on PATH: serverless-offline needs Node.js and npm")
    _install(npm)
    lambda_port = free_port()
    argv = [node, str(SERVERLESS), "offline", "start", "--host", "127.0.0.1", "--lambdaPort", str(lambda_port)]
    argv += ["--httpPort", str(free_port()), "--websocketPort", str(free_port())]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        SLS_TELEMETRY_DISABLED="1",
        SLS_NOTIFICATIONS_MODE="off",
        AWS_ACCESS_KEY_ID="test",
        AWS_SECRET_ACCESS_KEY="test",
        AWS_REGION="us-east-1",
    )
    proc = subprocess.Popen(
        argv, cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    ready = threading.Event()
    output: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            output.append(line)
            if re.search(rf"\[http for lambda\] listening on http://127\.0\.0\.1:{lambda_port}", line):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(120), "serverless-offline did not start:\n" + "".join(output)
        yield f"http://127.0.0.1:{lambda_port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def test_a_node_function_behind_serverless_offline(offline: str, protocol: str) -> None:
    with SQSServer(lambda_endpoint=offline) as server:
        account = new_account()
        sqs = client_for(server.endpoint_url, protocol, access_key_id=account)
        try:
            url = sqs.create_queue(QueueName="orders", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
            lam = server.lambda_client(account)
            uid = server.map_queue(
                url, "orders-dev-consume", account=account, FunctionResponseTypes=["ReportBatchItemFailures"]
            )
            entries = [{"Id": str(n), "MessageBody": body} for n, body in enumerate(["good-1", "bad", "good-2"])]
            assert not sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed")
            server.settle(timeout=60)
            assert lam.get_event_source_mapping(UUID=uid)["LastProcessingResult"] == "OK"
            (left,) = server.peek(url, account)
            assert left["body"] == "bad" and left["state"] == "in_flight" and left["receive_count"] == 1
            server.advance(30)
            server.settle(timeout=60)
            (left,) = server.peek(url, account)
            assert left["body"] == "bad" and left["receive_count"] == 2  # invoked again, reported again
        finally:
            sqs.close()
