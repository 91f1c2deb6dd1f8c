"""``sqsemu --config elasticmq.conf``: ElasticMQ's own configuration examples (from its README, kept here as data)
read by a real server, with boto3 over both wire protocols, and ElasticMQ's queue URL forms
(docs/coming-from-elasticmq.md).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import ServerProcess, client_for, free_port

pytestmark = pytest.mark.integration

# ElasticMQ's README, "Automatically creating queues on startup" (as data), without its copyTo/moveTo lines (sqsemu
# refuses those: test_copy_to_and_move_to_are_refused_naming_the_key) and with a FIFO queue added as ElasticMQ
# users declare one.
README_QUEUES = """\
include classpath("application.conf")

queues {
    queue1 {
        defaultVisibilityTimeout = 10 seconds
        delay = 5 seconds
        receiveMessageWait = 0 seconds
        deadLettersQueue {
            name = "queue1-dead-letters"
            maxReceiveCount = 3 // from 1 to 1000
        }
        fifo = false
        contentBasedDeduplication = false
        tags {
            tag1 = "tagged1"
            tag2 = "tagged2"
        }
    }
    queue1-dead-letters { }
    "orders.fifo" {
        fifo = true
        contentBasedDeduplication = true
    }
}
"""

# ElasticMQ's README, "current ElasticMQ configuration values", with an aws block (region, accountId).
README_SERVER = """\
include classpath("application.conf")

// What is the outside visible address of this ElasticMQ node
// Used to create the queue URL (may be different from bind address!)
node-address {
    protocol = http
    host = localhost
    port = 9324
    context-path = ""
}

rest-sqs {
    enabled = true
    bind-port = 9324
    bind-hostname = "0.0.0.0"
    // Possible values: relaxed, strict
    sqs-limits = strict
}

rest-stats {
    enabled = true
    bind-port = 9325
    bind-hostname = "0.0.0.0"
}

// Should the node-address be generated from the bind port/hostname
// Set this to true e.g. when assigning port automatically by using port 0.
generate-node-address = false

aws {
    region = eu-west-1
    accountId = 000000000000
}

queues {
    queue1 { }
}
"""


@pytest.fixture(scope="module")
def elasticmq(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    path = tmp_path_factory.mktemp("elasticmq") / "elasticmq.conf"
    path.write_text(README_QUEUES, encoding="utf-8")
    with ServerProcess(["--config", str(path)]) as srv:
        yield srv


def test_the_readme_queues_exist_with_their_attributes(elasticmq: ServerProcess, protocol: str) -> None:
    sqs = client_for(elasticmq.endpoint_url, protocol)
    url = sqs.get_queue_url(QueueName="queue1")["QueueUrl"]
    dlq_url = sqs.get_queue_url(QueueName="queue1-dead-letters")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["VisibilityTimeout"] == "10"
    assert attributes["DelaySeconds"] == "5"
    assert attributes["ReceiveMessageWaitTimeSeconds"] == "0"
    assert json.loads(attributes["RedrivePolicy"]) == {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3}
    assert "FifoQueue" not in attributes
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"tag1": "tagged1", "tag2": "tagged2"}
    fifo_url = sqs.get_queue_url(QueueName="orders.fifo")["QueueUrl"]
    fifo = sqs.get_queue_attributes(QueueUrl=fifo_url, AttributeNames=["All"])["Attributes"]
    assert fifo["FifoQueue"] == "true" and fifo["ContentBasedDeduplication"] == "true"
    body = f"no deduplication id needed ({protocol})"  # one body per protocol: the same body is a duplicate
    sqs.send_message(QueueUrl=fifo_url, MessageBody=body, MessageGroupId=protocol)
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=fifo_url)["Messages"]] == [body]


@pytest.mark.parametrize("form", ["{base}/queue/{name}", "{base}/000000000000/{name}"])
def test_elasticmqs_queue_url_forms(elasticmq: ServerProcess, protocol: str, form: str) -> None:
    sqs = client_for(elasticmq.endpoint_url, protocol)
    name = f"url-form-{protocol}-{'queue' if '/queue/' in form else 'account'}"
    sqs.create_queue(QueueName=name)
    url = form.format(base=elasticmq.endpoint_url, name=name)
    sqs.send_message(QueueUrl=url, MessageBody="hello")
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url)["Messages"]] == ["hello"]


def test_a_query_call_on_the_older_queue_path(elasticmq: ServerProcess) -> None:
    import requests

    sqs = client_for(elasticmq.endpoint_url, "json")
    sqs.create_queue(QueueName="older-path")
    sent = requests.get(f"{elasticmq.endpoint_url}/queue/older-path?Action=SendMessage&MessageBody=hi", timeout=10)
    assert sent.status_code == 200, sent.text
    got = sqs.receive_message(QueueUrl=sqs.get_queue_url(QueueName="older-path")["QueueUrl"])
    assert [m["Body"] for m in got["Messages"]] == ["hi"]


def test_the_readme_server_settings_and_the_warning_line(tmp_path: Path, protocol: str) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text(README_SERVER, encoding="utf-8")
    # the harness's --host/--port flags win over rest-sqs's bind address (as any flag wins over the file)
    with ServerProcess(["--config", str(path)]) as srv:
        sqs = client_for(srv.endpoint_url, protocol, region="eu-west-1")
        url = sqs.get_queue_url(QueueName="queue1")["QueueUrl"]
        assert url == "http://localhost:9324/000000000000/queue1"  # node-address builds the URLs
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        assert arn == "arn:aws:sqs:eu-west-1:000000000000:queue1"
        warnings = [line for line in srv.log_tail(100_000).splitlines() if "sqsemu does not use" in line]
    assert len(warnings) == 1, srv.log_tail(100_000)
    assert "rest-sqs.sqs-limits" in warnings[0] and "rest-stats" in warnings[0]


def test_copy_to_and_move_to_are_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text(README_QUEUES.replace("fifo = false", 'fifo = false\n        copyTo = "audit-queue-name"'))
    result = subprocess.run(
        [sys.executable, "-m", "sqsemu", "--config", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "queues.queue1.copyTo is not supported" in result.stderr


def test_every_refused_key_is_named_in_one_refusal(tmp_path: Path) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text(
        README_QUEUES.replace("fifo = false", 'fifo = false\n        copyTo = "audit"\n        moveTo = "archive"')
        .replace("queue1-dead-letters { }", 'queue1-dead-letters { copyTo = "audit" }')
        .replace("delay = 5 seconds", "delay = 1500")
        + 'node-address { host = localhost, context-path = "/sqs" }\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "sqsemu", "--config", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr  # a usage error, as one refused key is
    assert result.stderr.count("Error:") == 1, result.stderr
    assert "5 settings sqsemu cannot honour:" in result.stderr
    for where in (
        "queues.queue1.copyTo is not supported",
        "queues.queue1.moveTo is not supported",
        "queues.queue1-dead-letters.copyTo is not supported",
        "queues.queue1.delay must be whole seconds",
        "node-address.context-path = '/sqs' is not supported",
    ):
        assert f"\n  - {where}" in result.stderr, result.stderr


def _warning_lines(srv: ServerProcess) -> list[str]:
    return [line for line in srv.log_tail(100_000).splitlines() if "sqsemu does not use these keys" in line]


def test_the_warning_line_is_a_log_line_with_its_time_and_level(tmp_path: Path) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text(README_SERVER, encoding="utf-8")
    with ServerProcess(["--config", str(path)]) as srv:
        (line,) = _warning_lines(srv)
    time_ = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
    assert re.fullmatch(rf"{time_} WARNING sqsemu\.config ElasticMQ configuration: sqsemu does not use .*", line), line


def test_the_warning_line_is_json_with_log_format_json(tmp_path: Path) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text(README_SERVER, encoding="utf-8")
    with ServerProcess(["--config", str(path), "--log-format", "json"]) as srv:
        (line,) = _warning_lines(srv)
    entry = json.loads(line)
    assert (entry["level"], entry["logger"]) == ("WARNING", "sqsemu.config")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])
    assert "rest-sqs.sqs-limits" in entry["message"] and "rest-stats" in entry["message"]


def _banner_first_line(srv: ServerProcess) -> str:
    return next(line for line in srv.log_tail(100_000).splitlines() if " serving SQS at " in line)


def test_the_banner_names_the_address_bound_from_the_conf(tmp_path: Path) -> None:
    port = free_port()
    path = tmp_path / "elasticmq.conf"
    path.write_text(README_SERVER.replace("bind-port = 9324", f"bind-port = {port}"), encoding="utf-8")
    # bound on 0.0.0.0 by the file; the harness connects through 127.0.0.1
    with ServerProcess(["--config", str(path)], port=port, pass_host_port=False) as srv:
        line = _banner_first_line(srv)
        sqs = client_for(srv.endpoint_url, "json", region="eu-west-1")
        url = sqs.get_queue_url(QueueName="queue1")["QueueUrl"]
    assert line.endswith(
        f" serving SQS at http://0.0.0.0:{port} (region eu-west-1, default account 000000000000); every interface: "
        f"http://localhost:{port} from this machine; queue URLs name http://localhost:9324"
    ), line
    assert url == "http://localhost:9324/000000000000/queue1"  # node-address still builds the queue URLs


def test_the_banner_names_a_wildcard_host_given_as_a_flag() -> None:
    port = free_port()
    with ServerProcess(["--host", "0.0.0.0", "--port", str(port)], port=port, pass_host_port=False) as srv:
        line = _banner_first_line(srv)
    assert line.endswith(
        f" serving SQS at http://0.0.0.0:{port} (region us-east-1, default account 000000000000); every interface: "
        f"http://localhost:{port} from this machine"
    ), line
