"""The compat package's pieces on their own: ElasticMQ's HOCON read into sqsemu's configuration, LocalStack's queue
URL forms, the foreign-service check, the init scripts' order and environment, ElasticMQ's /queue/<name> form."""

from __future__ import annotations

import logging
import stat
import subprocess
from pathlib import Path

import pytest

from sqsemu.compat.elasticmq import ElasticMQConfError, document_of
from sqsemu.compat.foreign import foreign_service
from sqsemu.compat.initscripts import InitScripts, script_environment, write_awslocal
from sqsemu.compat.localstack import InvalidAddress, locate
from sqsemu.config import Config
from sqsemu.declare import ConfigFileError, load_file
from sqsemu.engine.broker import Namespace
from sqsemu.http.app import is_admin_path
from sqsemu.protocol.urls import parse_queue_url, path_queue


def test_durations_flags_tags_and_the_dead_letter_queue() -> None:
    document = document_of(
        """
        queues {
          q1 {
            defaultVisibilityTimeout = 2 minutes
            delay = 5000
            receiveMessageWait = 20 seconds
            deadLettersQueue { name = "q1-dlq", maxReceiveCount = 3 }
            tags { team = shop }
          }
          q1-dlq { }
          "o.fifo" { fifo = true, contentBasedDeduplication = true }
        }
        """
    )
    assert document["queues"] == [
        {
            "name": "q1",
            "attributes": {"VisibilityTimeout": "120", "DelaySeconds": "5", "ReceiveMessageWaitTimeSeconds": "20"},
            "dead_letter_queue": "q1-dlq",
            "max_receive_count": 3,
            "tags": {"team": "shop"},
        },
        {"name": "q1-dlq"},
        {"name": "o.fifo", "attributes": {"FifoQueue": True, "ContentBasedDeduplication": True}},
    ]


def test_server_settings_and_an_unquoted_account() -> None:
    document = document_of(
        """
        include classpath("application.conf")
        node-address { protocol = https, host = sqs.local, port = 8443, context-path = "" }
        rest-sqs { enabled = true, bind-port = 9400, bind-hostname = "0.0.0.0" }
        aws { region = eu-central-1, accountId = 000000000042 }
        """
    )
    assert document["server"] == {
        "base_url": "https://sqs.local:8443",
        "host": "0.0.0.0",
        "port": 9400,
        "region": "eu-central-1",
        "account_id": "000000000042",
    }


@pytest.mark.parametrize(
    "text", ['node-address { host = "*", port = 9324 }', "node-address { host = a }\ngenerate-node-address = true"]
)
def test_a_node_address_from_the_request(text: str) -> None:
    assert "base_url" not in document_of(text)["server"]


def test_every_unused_key_is_named_in_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sqsemu.config"):
        document_of(
            """
            rest-sqs { sqs-limits = relaxed }
            rest-stats { enabled = true }
            messages-storage { enabled = true }
            queues { q { visibilityWhatever = 3 } }
            """
        )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    for key in ("rest-sqs.sqs-limits", "rest-stats", "messages-storage", "queues.q.visibilityWhatever"):
        assert key in warnings[0]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('queues { q { copyTo = "audit" } }', "queues.q.copyTo"),
        ('queues { q { moveTo = "other" } }', "queues.q.moveTo"),
        ('node-address { host = a, context-path = "/sqs" }', "context-path"),
        ("rest-sqs { enabled = false }", "rest-sqs.enabled"),
        ("queues { q { delay = 1500 } }", "queues.q.delay"),
        ("queues { q { fifo = maybe } }", "queues.q.fifo"),
        ("queues { q { deadLettersQueue { name = x } } }", "deadLettersQueue"),
        ("queues { q { ", "HOCON"),
    ],
)
def test_what_cannot_be_honoured_is_refused_naming_the_key(text: str, named: str) -> None:
    with pytest.raises(ElasticMQConfError, match=named):
        document_of(text)


def test_load_file_reads_a_conf_file_as_a_configuration_file(tmp_path: Path) -> None:
    path = tmp_path / "elasticmq.conf"
    path.write_text("rest-sqs { bind-port = 9400 }\nqueues { orders { delay = 1 second } }\n", encoding="utf-8")
    loaded = load_file(path)
    assert loaded.server == {"port": 9400}
    assert [(q.name, q.attributes) for q in loaded.queues] == [("orders", (("DelaySeconds", "1"),))]
    path.write_text('queues { q { moveTo = "x" } }', encoding="utf-8")
    with pytest.raises(ConfigFileError, match=r"elasticmq.conf' \(ElasticMQ\): queues.q.moveTo is not supported"):
        load_file(path)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://sqs.eu-west-1.localhost.localstack.cloud:4566/000000000000/q", ("eu-west-1", "q")),
        ("http://eu-west-2.queue.localhost.localstack.cloud:4566/000000000000/q", ("eu-west-2", "q")),
        ("http://localhost:4566/queue/ap-south-1/000000000000/q", ("ap-south-1", "q")),
        ("http://localhost.localstack.cloud:4566/000000000000/q", ("us-east-1", "q")),
        ("http://127.0.0.1:4566/000000000000/q.fifo", ("us-east-1", "q.fifo")),
    ],
)
def test_localstacks_queue_url_forms(url: str, expected: tuple[str, str]) -> None:
    ns, name = locate(url, "us-east-1")
    assert (ns.region, name) == expected and ns == Namespace("000000000000", expected[0])


@pytest.mark.parametrize("url", ["q", "http://localhost:4566/q", "http://localhost/abc/q", ""])
def test_an_unreadable_queue_url_is_invalid_address(url: str) -> None:
    with pytest.raises(InvalidAddress):
        locate(url, "us-east-1")


def test_the_foreign_service_check() -> None:
    scope = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/{}/aws4_request, SignedHeaders=host, Signature=x"
    assert foreign_service(scope.format("sqs")) is None
    assert foreign_service(scope.format("sns")) is None  # served on the same port (sqsemu.sns)
    assert foreign_service(scope.format("s3")) == "s3"
    assert foreign_service(scope.format("dynamodb")) == "dynamodb"
    assert foreign_service("Bearer token") is None
    assert foreign_service("AWS4-HMAC-SHA256 Credential=test/x") is None


def test_elasticmqs_older_queue_url_form() -> None:
    assert parse_queue_url("http://localhost:9324/queue/orders") == (None, "orders")
    assert parse_queue_url("http://localhost:9324/000000000000/orders") == ("000000000000", "orders")
    assert path_queue("/queue/orders") == ("", "orders")
    assert path_queue("/queue/us-east-1/000000000000/orders") == ("000000000000", "orders")


def test_the_other_emulators_paths_go_to_the_admin_app() -> None:
    for path in ("/moto-api/reset", "/_localstack/health", "/_aws/sqs/messages"):
        assert is_admin_path(path)
    assert not is_admin_path("/000000000000/q")


def test_init_scripts_run_in_order_and_report_their_states(tmp_path: Path) -> None:
    ready = tmp_path / "ready.d"
    (ready / "sub").mkdir(parents=True)
    log = tmp_path / "order.txt"
    for name in ("b.sh", "a.sh", "sub/c.sh"):
        script = ready / name
        script.write_text(f"#!/bin/sh\necho {name} >> {log}\n", encoding="utf-8")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (ready / "c-not-executable.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    scripts = InitScripts()
    scripts.discover(ready)
    scripts.run_all(script_environment(Config(port=4566), 4566))
    assert log.read_text().split() == ["a.sh", "b.sh", "sub/c.sh"]
    assert [(s["name"], s["state"]) for s in scripts.document()["scripts"]] == [
        ("a.sh", "SUCCESSFUL"),
        ("b.sh", "SUCCESSFUL"),
        ("c-not-executable.sh", "ERROR"),
        ("c.sh", "SUCCESSFUL"),
    ]
    assert scripts.stage_document("READY")["completed"] is True


def test_the_scripts_environment_points_at_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    env = script_environment(Config(host="0.0.0.0", region="eu-west-1"), 4566)
    assert env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:4566"
    assert env["AWS_DEFAULT_REGION"] == "eu-west-1"
    assert script_environment(Config(host="::1"), 4566)["AWS_ENDPOINT_URL"] == "http://[::1]:4566"


def test_awslocal_runs_aws_with_the_endpoint_and_every_argument(tmp_path: Path) -> None:
    launcher = write_awslocal(tmp_path, "http://127.0.0.1:4566")
    assert launcher.name == "awslocal" and launcher.stat().st_mode & stat.S_IXUSR
    fake = tmp_path / "bin"
    fake.mkdir()
    aws = fake / "aws"
    aws.write_text('#!/bin/sh\nfor a in "$@"; do echo "[$a]"; done\n', encoding="utf-8")
    aws.chmod(0o755)
    argv = [str(launcher), "sqs", "send-message", "--message-body", "a 'b' $c"]
    done = subprocess.run(argv, env={"PATH": f"{fake}:/usr/bin:/bin"}, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    words = ["--endpoint-url", "http://127.0.0.1:4566", "sqs", "send-message", "--message-body", "a 'b' $c"]
    assert done.stdout.splitlines() == [f"[{w}]" for w in words]


def test_awslocal_without_aws_fails_and_says_what_to_install(tmp_path: Path) -> None:
    launcher = write_awslocal(tmp_path, "http://[::1]:4566", beside=str(tmp_path / "nowhere" / "aws"))
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run(
        [str(launcher), "sqs", "list-queues"], env={"PATH": str(empty)}, capture_output=True, text=True
    )
    assert done.returncode == 127
    assert "the AWS CLI (aws) is not on PATH" in done.stderr
    assert "pip install awscli" in done.stderr and "AWS CLI v2" in done.stderr and "AWS_CLI=1" in done.stderr


def test_awslocal_finds_the_aws_cli_beside_the_servers_python_when_path_has_none(tmp_path: Path) -> None:
    """A server run from a virtual environment that is not activated: the AWS CLI installed in it is used. The
    ``PATH`` is a folder of the test's with nothing in it (the launcher needs only the shell's built-ins), so an AWS
    CLI of the machine's (Debian's ``awscli`` in /usr/bin) is not the one found."""
    fake = tmp_path / "venv-bin"
    fake.mkdir()
    aws = fake / "aws"
    aws.write_text('#!/bin/sh\necho "beside: $*"\n', encoding="utf-8")
    aws.chmod(0o755)
    launcher = write_awslocal(tmp_path, "http://127.0.0.1:4566", beside=str(aws))
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run(
        [str(launcher), "sqs", "list-queues"], env={"PATH": str(empty)}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "beside: --endpoint-url http://127.0.0.1:4566 sqs list-queues\n"


def test_everything_refused_is_named_in_one_error() -> None:
    with pytest.raises(ElasticMQConfError) as refused:
        document_of(
            """
            node-address { host = a, context-path = "/sqs" }
            rest-sqs { enabled = false }
            queues { q { copyTo = "a", moveTo = "b", delay = 1500 }, r = 3 }
            """
        )
    assert refused.value.problems == (
        "node-address.context-path = '/sqs' is not supported: sqsemu's queue URLs are "
        "<scheme>://<host:port>/<account>/<name>",
        "rest-sqs.enabled = false is not supported: sqsemu is the SQS endpoint",
        "queues.q.copyTo is not supported: sqsemu does not copy messages to another queue; remove copyTo (or read "
        "both queues in the test)",
        "queues.q.moveTo is not supported: sqsemu does not move messages to another queue; remove moveTo (or read "
        "both queues in the test)",
        "queues.q.delay must be whole seconds (SQS counts in seconds), got 1.5 s",
        "queues.r must be an object { ... }",
    )
    assert str(refused.value).startswith("6 settings sqsemu cannot honour:\n  - node-address.context-path")


def test_the_warning_is_handed_back_when_a_list_is_given(caplog: pytest.LogCaptureFixture) -> None:
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING, logger="sqsemu.config"):
        document_of("rest-stats { enabled = true }", warnings=warnings)
    assert warnings == ["ElasticMQ configuration: sqsemu does not use these keys (ignored): rest-stats"]
    assert not caplog.records  # logged by whoever reads the file, once its logging is set up


def test_awslocal_takes_its_endpoint_as_data_never_as_shell_text(tmp_path: Path) -> None:
    """An endpoint holding shell syntax (quotes, ``$(...)``) is passed on and shown as it is, never run."""
    endpoint = "http://h\"$(touch pwned)'`x`:4566"
    launcher = write_awslocal(tmp_path, endpoint, beside=str(tmp_path / "nowhere" / "aws"))
    done = subprocess.run([str(launcher)], env={"PATH": str(tmp_path)}, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 127
    assert f"awslocal runs 'aws --endpoint-url {endpoint} ...'" in done.stderr
    assert not (tmp_path / "pwned").exists()
