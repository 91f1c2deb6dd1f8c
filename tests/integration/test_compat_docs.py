"""The "Coming from ..." pages' examples, read from the pages and run as written (docs/coming-from-localstack.md,
coming-from-elasticmq.md, coming-from-moto.md): LocalStack's ``curl`` calls (sent as HTTP requests, the host
``localhost:4566`` mapped onto the test server), ElasticMQ's configuration file, moto's reset. The container
examples (Testcontainers, the compose file) run in tests/integration/container/test_compat_containers.py.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import requests
from harness import ServerProcess, client_for
from harness.docexamples import example

pytestmark = pytest.mark.integration


def run_curl(line: str, endpoint_url: str) -> requests.Response:
    """One ``curl`` command line (``-s``, ``-H``, ``-X``, ``-d``, a URL) as an HTTP request."""
    words = shlex.split(line)
    assert words[0] == "curl", line
    method, headers, data, url = "GET", {}, None, ""
    i = 1
    while i < len(words):
        word = words[i]
        if word == "-s":
            pass
        elif word == "-H":
            i += 1
            name, _, value = words[i].partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-X":
            i += 1
            method = words[i]
        elif word == "-d":
            i += 1
            data = words[i]
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
            method = "POST" if method == "GET" else method
        else:
            url = word
        i += 1
    assert url.startswith("localhost:4566/"), url
    return requests.request(method, endpoint_url + url[len("localhost:4566") :], headers=headers, data=data, timeout=10)


def test_the_localstack_pages_curl_calls(tmp_path: Path) -> None:
    with ServerProcess(["--compat", "localstack", "--init-dir", str(tmp_path)]) as srv:
        sqs = client_for(srv.endpoint_url, "json")
        url = sqs.create_queue(QueueName="orders")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="shown, not received")
        lines = [line for line in example("coming-from-localstack.md", "localstack-curl").splitlines() if line]
        assert len(lines) == 5
        answers = [run_curl(line, srv.endpoint_url) for line in lines]
        assert [a.status_code for a in answers] == [200] * 5, [a.text for a in answers]
        assert answers[0].json()["services"] == {"sns": "running", "sqs": "running", "sts": "running"}
        assert answers[1].json()["completed"]["READY"] is True
        for answer in answers[2:]:
            assert "shown, not received" in answer.text
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
        assert attributes["Attributes"]["ApproximateNumberOfMessages"] == "1"  # still there, still visible


def test_the_elasticmq_pages_configuration(tmp_path: Path, protocol: str) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text(example("coming-from-elasticmq.md", "elasticmq-conf"), encoding="utf-8")
    with ServerProcess(["--config", str(path)]) as srv:
        sqs = client_for(srv.endpoint_url, protocol)
        names = sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues()["QueueUrls"])
        assert names == ["orders", "orders-dead-letters", "payments.fifo"]
        url = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
        assert url == f"{srv.endpoint_url}/000000000000/orders"  # host = "*": from the request
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert (attributes["VisibilityTimeout"], attributes["DelaySeconds"]) == ("10", "5")
        assert '"maxReceiveCount":3' in attributes["RedrivePolicy"].replace(" ", "")
        assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "shop"}
        older = f"{srv.endpoint_url}/queue/orders"
        sqs.send_message(QueueUrl=older, MessageBody="through the older URL", DelaySeconds=0)
        got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
        assert [m["Body"] for m in got] == ["through the older URL"]


def test_the_moto_pages_reset(tmp_path: Path) -> None:
    with ServerProcess() as srv:
        sqs = client_for(srv.endpoint_url, "json")
        sqs.create_queue(QueueName="before-the-reset")
        code = example("coming-from-moto.md", "moto-reset").replace("http://localhost:9324", srv.endpoint_url)
        exec(compile(code, "coming-from-moto.md", "exec"), {})
        assert sqs.list_queues().get("QueueUrls", []) == []
