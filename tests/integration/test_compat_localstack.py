"""``--compat localstack`` the way LocalStack's users meet it: its documented ``curl`` calls (``/_localstack/health``,
``/_localstack/init``, the SQS developer endpoint ``/_aws/sqs/messages``) sent as plain HTTP requests, boto3 over
both wire protocols with LocalStack's queue URL forms, a ``ready.d`` init script, the ``Ready.`` line, and another
service's call (docs/coming-from-localstack.md).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import pytest
import requests
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for
from harness.docexamples import example

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"

INIT_SCRIPT = """\
import os

import boto3

sqs = boto3.client("sqs", endpoint_url=os.environ["AWS_ENDPOINT_URL"])
sqs.create_queue(QueueName="made-by-ready-d")
print("queue made")
"""


# A ready.d script as LocalStack's users write them, from the page (awslocal, and a queue URL on localhost:4566: the
# test's server listens elsewhere; the URL names the queue, the endpoint is awslocal's).
AWSLOCAL_SCRIPT = example("coming-from-localstack.md", "localstack-awslocal")


def wait_for_ready_line(srv: ServerProcess, deadline_s: float = 60) -> str:
    """The server's log once it has printed ``Ready.`` (fails with the log after ``deadline_s``)."""
    deadline = time.monotonic() + deadline_s
    while "Ready." not in srv.log_tail(100_000).splitlines() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = srv.log_tail(100_000)
    assert "Ready." in log.splitlines(), log
    return log


def ready_d(root: Path, name: str, text: str) -> Path:
    """``root`` with ``ready.d/<name>`` (executable) holding ``text``."""
    (root / "ready.d").mkdir()
    script = root / "ready.d" / name
    script.write_text(text, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return root


@pytest.fixture(scope="module")
def localstack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    init = tmp_path_factory.mktemp("init")
    ready = init / "ready.d"
    ready.mkdir()
    (ready / "01-queues.py").write_text(INIT_SCRIPT, encoding="utf-8")
    failing = ready / "02-fails.sh"
    failing.write_text("#!/bin/sh\necho going wrong\necho on stderr >&2\nexit 3\n", encoding="utf-8")
    failing.chmod(failing.stat().st_mode | stat.S_IXUSR)
    (ready / "README.md").write_text("# what these scripts do\n", encoding="utf-8")  # no script: left out
    (ready / ".gitkeep").write_text("", encoding="utf-8")
    with ServerProcess(["--compat", "localstack", "--init-dir", str(init)]) as srv:
        deadline = time.monotonic() + 30
        while "Ready." not in srv.log_tail(100_000) and time.monotonic() < deadline:
            time.sleep(0.05)
        yield srv


def queue_name(prefix: str, protocol: str) -> str:
    return f"{prefix}-{protocol}-{os.getpid()}"


def test_the_ready_line_comes_after_the_init_scripts(localstack: ServerProcess) -> None:
    log = localstack.log_tail(100_000)
    lines = log.splitlines()
    assert "Ready." in lines, log
    ready_at = lines.index("Ready.")
    assert any("queue made" in line for line in lines[:ready_at]), log
    assert any("02-fails.sh failed with exit status 3" in line for line in lines[:ready_at]), log


def test_each_init_script_says_how_it_ended_in_one_line(localstack: ServerProcess) -> None:
    """Issue 47, finding 13: one line per script with its exit status and duration (a failure at ERROR with its
    last output lines, stdout and stderr in the order written), then a summary; before, a success logged nothing
    and a failure only its status."""
    log = localstack.log_tail(100_000)
    assert re.search(
        r"INFO sqsemu\.compat init script 01-queues\.py: SUCCESSFUL \(exit status 0, \d+\.\d\d s\)", log
    ), log
    failed = r"ERROR sqsemu\.compat init script 02-fails\.sh failed with exit status 3 after \d+\.\d\d s \(ERROR\)"
    assert re.search(failed + r"; last output: going wrong \| on stderr$", log, re.MULTILINE), log
    assert "WARNING sqsemu.compat init scripts: 2 run, 1 SUCCESSFUL, 1 ERROR" in log, log


def test_files_that_are_no_scripts_are_left_out_in_one_info_line(localstack: ServerProcess) -> None:
    """Issue 47, suspicion of finding 9: a README.md or .gitkeep in ready.d (neither .sh nor .py, not executable) is
    not shown as an ERROR script: left out of /_localstack/init, named in one INFO line."""
    log = localstack.log_tail(100_000)
    left_out = "not scripts, not run (neither .sh nor .py, nor executable): .gitkeep, README.md"
    assert f"INFO sqsemu.compat init scripts: {left_out}" in log, log
    assert "README.md is not executable" not in log
    names = [
        s["name"] for s in requests.get(f"{localstack.endpoint_url}/_localstack/init", timeout=10).json()["scripts"]
    ]
    assert names == ["01-queues.py", "02-fails.sh"]


def _sqsemu_exits(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m sqsemu ARGS`` on a free port, expected to stop by itself (a refused start)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_") or k == "SQSEMU_PURE_PYTHON"}
    argv = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", "0", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env={**environment, **(env or {})})


def test_an_init_dir_that_does_not_exist_is_refused_at_start(tmp_path: Path) -> None:
    """Issue 47, finding 13: ``--init-dir`` naming no folder ran nothing, said nothing and printed ``Ready.``; it
    is a usage error (exit status 2) naming the option, or its variable."""
    missing = str(tmp_path / "no-such-init")
    result = _sqsemu_exits("--compat", "localstack", "--init-dir", missing)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"Invalid value for '--init-dir': {missing!r} does not exist" in result.stderr
    assert "Ready." not in result.stdout
    by_variable = _sqsemu_exits("--compat", "localstack", env={"SQSEMU_INIT_DIR": missing})
    assert by_variable.returncode == 2, by_variable.stderr
    assert "(env var: 'SQSEMU_INIT_DIR')" in by_variable.stderr


def test_an_init_dir_holding_scripts_but_no_ready_d_is_refused_saying_what_is_expected(tmp_path: Path) -> None:
    (tmp_path / "01-queues.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    result = _sqsemu_exits("--compat", "localstack", "--init-dir", str(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{str(tmp_path)!r} holds scripts (01-queues.sh) but no ready.d folder" in result.stderr
    assert "move them there, or give a folder named ready.d" in result.stderr


def test_an_init_dir_naming_a_ready_d_folder_runs_its_scripts(tmp_path: Path) -> None:
    """Issue 47, finding 13: ``--init-dir .../ready.d`` (a stage folder, as LocalStack lets one mount it) ran
    nothing (it looked for ``ready.d/ready.d``); its scripts now run, and the log says how the folder was taken."""
    ready = tmp_path / "ready.d"
    ready.mkdir()
    (ready / "01-queues.py").write_text(INIT_SCRIPT, encoding="utf-8")
    with ServerProcess(["--compat", "localstack", "--init-dir", str(ready)]) as srv:
        log = wait_for_ready_line(srv)
        assert f"--init-dir {ready} is a ready.d folder: its scripts run as the READY stage" in log, log
        data = requests.get(f"{srv.endpoint_url}/_localstack/init", timeout=10).json()
        assert data["scripts"] == [{"stage": "READY", "name": "01-queues.py", "state": "SUCCESSFUL"}], log
        assert client_for(srv.endpoint_url, "json").get_queue_url(QueueName="made-by-ready-d")["QueueUrl"]


def test_health_as_localstack_clients_poll_it(localstack: ServerProcess) -> None:
    # curl localhost:4566/_localstack/health
    response = requests.get(f"{localstack.endpoint_url}/_localstack/health", timeout=10)
    assert response.status_code == 200
    data = response.json()
    assert data["services"] == {"sns": "running", "sqs": "running", "sts": "running"}
    assert data["edition"] == "community" and isinstance(data["version"], str)
    head = requests.head(f"{localstack.endpoint_url}/_localstack/health", timeout=10)
    assert head.status_code == 200 and head.content == b""


def test_init_shows_the_ready_scripts_and_their_states(localstack: ServerProcess) -> None:
    # curl -s localhost:4566/_localstack/init | jq .
    data = requests.get(f"{localstack.endpoint_url}/_localstack/init", timeout=10).json()
    assert data["completed"] == {"BOOT": True, "START": True, "READY": True, "SHUTDOWN": False}
    assert data["scripts"] == [
        {"stage": "READY", "name": "01-queues.py", "state": "SUCCESSFUL"},
        {"stage": "READY", "name": "02-fails.sh", "state": "ERROR"},
    ]
    ready = requests.get(f"{localstack.endpoint_url}/_localstack/init/ready", timeout=10).json()
    assert ready["completed"] is True and len(ready["scripts"]) == 2
    assert requests.get(f"{localstack.endpoint_url}/_localstack/init/nope", timeout=10).status_code == 404


def test_the_init_script_reached_the_server(localstack: ServerProcess, protocol: str) -> None:
    sqs = client_for(localstack.endpoint_url, protocol)
    assert sqs.get_queue_url(QueueName="made-by-ready-d")["QueueUrl"].endswith(f"/{ACCOUNT}/made-by-ready-d")


def test_awslocal_in_a_ready_d_shell_script_reaches_the_server(tmp_path: Path) -> None:
    """``awslocal sqs ...`` in a ``ready.d`` shell script (the page's) runs the AWS CLI (v1 here, the test extra's)
    against this server: the queue and its message are there, the script is SUCCESSFUL."""
    if shutil.which("aws") is None:
        pytest.skip("the AWS CLI (aws) is not on PATH (the test extra installs awscli)")
    init = ready_d(tmp_path, "01-queues.sh", AWSLOCAL_SCRIPT)
    with ServerProcess(["--compat", "localstack", "--init-dir", str(init)]) as srv:
        log = wait_for_ready_line(srv)
        data = requests.get(f"{srv.endpoint_url}/_localstack/init", timeout=10).json()
        assert data["scripts"] == [{"stage": "READY", "name": "01-queues.sh", "state": "SUCCESSFUL"}], log
        sqs = client_for(srv.endpoint_url, "json")
        url = sqs.get_queue_url(QueueName="orders")["QueueUrl"]
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        assert [m["Body"] for m in messages] == ["first order"], log


def test_awslocal_finds_the_aws_cli_beside_the_servers_python_without_it_on_path(tmp_path: Path) -> None:
    """A server run from a virtual environment that is not activated (its ``PATH`` has no ``aws``): ``awslocal``
    runs the AWS CLI installed beside the server's Python, and the script reaches the server. (Without any AWS CLI
    it fails with exit status 127 saying what to install: tests/unit/test_compat.py.) The server's ``PATH`` is an
    empty folder of the test's, so an AWS CLI of the machine's (Debian's ``awscli`` in /usr/bin) is not found."""
    beside = os.path.join(os.path.dirname(sys.executable), "aws")
    if not os.access(beside, os.X_OK):
        pytest.skip(f"no AWS CLI beside this Python ({beside}; the test extra installs awscli)")
    path = tmp_path / "empty-path"
    path.mkdir()
    init = ready_d(tmp_path, "01-queues.sh", AWSLOCAL_SCRIPT)
    with ServerProcess(["--compat", "localstack", "--init-dir", str(init)], env={"PATH": str(path)}) as srv:
        log = wait_for_ready_line(srv)
        data = requests.get(f"{srv.endpoint_url}/_localstack/init", timeout=10).json()
        assert data["scripts"] == [{"stage": "READY", "name": "01-queues.sh", "state": "SUCCESSFUL"}], log
        sqs = client_for(srv.endpoint_url, "json")
        assert sqs.get_queue_url(QueueName="orders")["QueueUrl"].endswith("/orders")


def xml_messages(body: bytes) -> list[dict[str, Any]]:
    root = ET.fromstring(body)
    assert root.tag == f"{NS}ReceiveMessageResponse", body
    out = []
    for message in root.iter(f"{NS}Message"):
        attributes = {a.findtext(f"{NS}Name"): a.findtext(f"{NS}Value") for a in message.findall(f"{NS}Attribute")}
        out.append(
            {
                "Body": message.findtext(f"{NS}Body"),
                "MessageId": message.findtext(f"{NS}MessageId"),
                "Attributes": attributes,
                "MessageAttributes": [m.findtext(f"{NS}Name") for m in message.findall(f"{NS}MessageAttribute")],
            }
        )
    return out


def send_three(sqs: Any, url: str) -> None:
    """One visible (with a message attribute), one in flight, one delayed."""
    sqs.send_message(
        QueueUrl=url,
        MessageBody="visible",
        MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}},
    )
    sqs.send_message(QueueUrl=url, MessageBody="in flight")
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300)["Messages"]
    for message in received:  # the first two are visible: make the second in flight again, the first visible
        visibility = 0 if message["Body"] == "visible" else 300
        sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=visibility
        )
    sqs.send_message(QueueUrl=url, MessageBody="delayed", DelaySeconds=900)


def test_developer_endpoint_curl_calls_change_nothing(localstack: ServerProcess, protocol: str) -> None:
    sqs = client_for(localstack.endpoint_url, protocol)
    name = queue_name("peek", protocol)
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    send_three(sqs, url)
    base = localstack.endpoint_url
    # LocalStack's default URL form, sent as a QueueUrl value (*.localhost.localstack.cloud is not resolved here)
    ls_url = f"http://sqs.us-east-1.localhost.localstack.cloud:4566/{ACCOUNT}/{name}"

    # curl "localhost:4566/_aws/sqs/messages?QueueUrl=..."
    plain = requests.get(f"{base}/_aws/sqs/messages", params={"QueueUrl": ls_url}, timeout=10)
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("text/xml")
    shown = xml_messages(plain.content)
    assert [m["Body"] for m in shown] == ["visible"]
    assert shown[0]["MessageAttributes"] == ["colour"]
    assert shown[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    assert "IsVisible" not in shown[0]["Attributes"]

    # curl -H "Accept: application/json" \
    #   "localhost:4566/_aws/sqs/messages?QueueUrl=...&ShowInvisible=true&ShowDelayed=true"
    everything = requests.get(
        f"{base}/_aws/sqs/messages",
        params={"QueueUrl": url, "ShowInvisible": "true", "ShowDelayed": "true"},
        headers={"Accept": "application/json"},
        timeout=10,
    )
    assert everything.status_code == 200
    # the Query protocol's JSON form, as AWS answers it (attributes as Name/Value lists)
    result = everything.json()["ReceiveMessageResponse"]["ReceiveMessageResult"]
    by_body = {m["Body"]: {a["Name"]: a["Value"] for a in m["Attributes"]} for m in result["messages"]}
    assert set(by_body) == {"visible", "in flight", "delayed"}
    flags = {body: (attrs["IsVisible"], attrs["IsDelayed"]) for body, attrs in by_body.items()}
    assert flags == {
        "visible": ("true", "false"),
        "in flight": ("false", "false"),
        "delayed": ("false", "true"),
    }

    # the path form /_aws/sqs/messages/{region}/{account_id}/{queue_name}, ShowInvisible=1
    path_form = requests.get(
        f"{base}/_aws/sqs/messages/us-east-1/{ACCOUNT}/{quote(name)}", params={"ShowInvisible": "1"}, timeout=10
    )
    assert sorted(m["Body"] for m in xml_messages(path_form.content)) == ["in flight", "visible"]

    # POST with a form body, and with a JSON 1.0 ReceiveMessage body (answered in JSON 1.0)
    form = requests.post(
        f"{base}/_aws/sqs/messages",
        data={"Action": "ReceiveMessage", "QueueUrl": f"http://localhost:4566/queue/us-east-1/{ACCOUNT}/{name}"},
        timeout=10,
    )
    assert [m["Body"] for m in xml_messages(form.content)] == ["visible"]
    json10 = requests.post(
        f"{base}/_aws/sqs/messages",
        data=json.dumps({"QueueUrl": url, "ShowDelayed": True}),
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ReceiveMessage"},
        timeout=10,
    )
    assert sorted(m["Body"] for m in json10.json()["Messages"]) == ["delayed", "visible"]

    # nothing changed: the visible message is still received once more with its first receive count
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "1"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"
    names = {"MessageSystemAttributeNames": ["All"]} if protocol == "json" else {"AttributeNames": ["All"]}
    again = sqs.receive_message(QueueUrl=url, **names)["Messages"]
    assert [(m["Body"], m["Attributes"]["ApproximateReceiveCount"]) for m in again] == [("visible", "2")]


def test_developer_endpoint_errors(localstack: ServerProcess) -> None:
    base = localstack.endpoint_url
    missing = requests.get(
        f"{base}/_aws/sqs/messages", params={"QueueUrl": f"http://localhost:4566/{ACCOUNT}/no-such"}, timeout=10
    )
    assert missing.status_code == 400 and b"NonExistentQueue" in missing.content
    bad = requests.get(f"{base}/_aws/sqs/messages", params={"QueueUrl": "not a url"}, timeout=10)
    assert bad.status_code == 400 and b"<Code>InvalidAddress</Code>" in bad.content
    none = requests.get(f"{base}/_aws/sqs/messages", headers={"Accept": "application/json"}, timeout=10)
    assert none.status_code == 400 and none.json()["Error"]["Code"] == "MissingParameter"
    other = requests.post(f"{base}/_aws/sqs/messages", data={"Action": "DeleteQueue", "QueueUrl": "x"}, timeout=10)
    assert other.status_code == 400 and b"<Code>InvalidRequest</Code>" in other.content


@pytest.mark.parametrize(
    "form",
    [
        "http://sqs.us-east-1.localhost.localstack.cloud:4566/{account}/{name}",
        "http://us-east-1.queue.localhost.localstack.cloud:4566/{account}/{name}",
        "http://localhost:4566/queue/us-east-1/{account}/{name}",
        "http://localhost.localstack.cloud:4566/{account}/{name}",
    ],
)
def test_boto3_with_localstacks_queue_url_forms(localstack: ServerProcess, protocol: str, form: str) -> None:
    sqs = client_for(localstack.endpoint_url, protocol)
    name = queue_name(f"forms{abs(hash(form)) % 1000}", protocol)
    sqs.create_queue(QueueName=name)
    url = form.format(account=ACCOUNT, name=name)
    sqs.send_message(QueueUrl=url, MessageBody="through a LocalStack URL")
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url)["Messages"]] == ["through a LocalStack URL"]


def test_query_call_on_the_path_form_of_a_queue_url(localstack: ServerProcess) -> None:
    sqs = client_for(localstack.endpoint_url, "json")
    name = queue_name("curl", "query")
    sqs.create_queue(QueueName=name)
    # curl "http://localhost:4566/000000000000/sample-queue?Action=SendMessage&MessageBody=hello%2Fworld"
    sent = requests.get(
        f"{localstack.endpoint_url}/{ACCOUNT}/{name}?Action=SendMessage&MessageBody=hello%2Fworld", timeout=10
    )
    assert sent.status_code == 200 and b"<MessageId>" in sent.content
    path = requests.get(
        f"{localstack.endpoint_url}/queue/us-east-1/{ACCOUNT}/{name}?Action=ReceiveMessage",
        headers={"Accept": "application/json"},
        timeout=10,
    )
    result = path.json()["ReceiveMessageResponse"]["ReceiveMessageResult"]
    assert [m["Body"] for m in result["messages"]] == ["hello/world"]


@pytest.mark.parametrize(("service", "call"), [("s3", "list_buckets"), ("dynamodb", "list_tables")])
def test_another_services_call_is_told_what_sqsemu_is(localstack: ServerProcess, service: str, call: str) -> None:
    other = boto3.client(
        service,
        endpoint_url=localstack.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=BotoConfig(retries={"max_attempts": 1}),
    )
    with pytest.raises(ClientError) as caught:
        getattr(other, call)()
    assert "sqsemu" in str(caught.value) and f"'{service}'" in str(caught.value)


def test_sns_is_served_beside_sqs_as_localstack_serves_both(localstack: ServerProcess) -> None:
    def client(service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=localstack.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=BotoConfig(retries={"max_attempts": 1}),
        )

    sqs, sns = client("sqs"), client("sns")
    url = sqs.create_queue(QueueName=queue_name("fanout", "json"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    topic = sns.create_topic(Name=queue_name("topic", "json"))["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
    sns.publish(TopicArn=topic, Message="from sns")
    [message] = sqs.receive_message(QueueUrl=url)["Messages"]
    assert message["Body"] == "from sns"


def test_default_mode_does_not_answer_localstacks_routes(server: ServerProcess) -> None:
    response = requests.get(f"{server.endpoint_url}/_localstack/health", timeout=10)
    assert response.status_code == 404
    assert "--compat localstack" in response.json()["error"]
    assert "Ready." not in server.log_tail(100_000).splitlines()


def test_health_and_init_need_no_admin_token_but_the_peek_does(tmp_path: Path) -> None:
    args = ["--compat", "localstack", "--init-dir", str(tmp_path), "--admin-token", "tok-12345"]
    with ServerProcess(args) as srv:
        assert requests.get(f"{srv.endpoint_url}/_localstack/health", timeout=10).status_code == 200
        assert requests.get(f"{srv.endpoint_url}/_localstack/init", timeout=10).status_code == 200
        peek = requests.get(f"{srv.endpoint_url}/_aws/sqs/messages", params={"QueueUrl": "q"}, timeout=10)
        assert peek.status_code == 401


def test_compat_localstack_listens_on_4566_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port rule through the command line, the environment and the configuration file (without starting a
    server: the options are parsed and the server start is replaced)."""
    from click.testing import CliRunner

    from sqsemu import cli

    seen: list[int] = []
    monkeypatch.setattr(cli, "_serve", lambda config: seen.append(config.port))
    only_compat = tmp_path / "compat.toml"
    only_compat.write_text('[server]\ncompat = "localstack"\n', encoding="utf-8")
    with_port = tmp_path / "port.toml"
    with_port.write_text('[server]\ncompat = "localstack"\nport = 4601\n', encoding="utf-8")
    cleared: dict[str, str | None] = {"SQSEMU_PORT": None, "SQSEMU_COMPAT": None, "SQSEMU_CONFIG": None}
    for argv, env in (
        (["--compat", "localstack"], {}),
        (["--compat", "localstack", "--port", "4599"], {}),
        ([], {"SQSEMU_COMPAT": "localstack", "SQSEMU_PORT": "4600"}),
        ([], {"SQSEMU_COMPAT": "localstack"}),
        (["--config", str(only_compat)], {}),
        (["--config", str(with_port)], {}),
        ([], {}),
    ):
        result = CliRunner().invoke(cli.main, argv, env={**cleared, **env})
        assert result.exit_code == 0, result.output
    assert seen == [4566, 4599, 4600, 4566, 4566, 4601, 9324]


@pytest.mark.parametrize(
    "host", ["sqs.us-east-1.localhost.localstack.cloud:4566", "localhost.localstack.cloud:4566", "localhost:4566"]
)
def test_queue_urls_are_built_on_the_host_the_client_called(localstack: ServerProcess, host: str) -> None:
    """A client addressing LocalStack's host names (which resolve to 127.0.0.1 through public DNS: sent here as the
    Host header) gets queue URLs on that host, in LocalStack's form."""
    name = queue_name(f"host{len(host)}", "query")
    answer = requests.get(
        f"{localstack.endpoint_url}/?Action=CreateQueue&QueueName={name}",
        headers={"Host": host, "Accept": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    url = answer.json()["CreateQueueResponse"]["CreateQueueResult"]["QueueUrl"]
    assert url == f"http://{host}/{ACCOUNT}/{name}"
