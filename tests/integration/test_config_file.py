"""``sqsemu --config FILE`` against a real server process, checked with real clients over both protocols.

Declared queues exist with their attributes, tags and RedrivePolicy; restarting on the same data folder with the
same file changes nothing; a conflicting declaration stops the start-up with a message naming the queue and the
attribute; a bad file is a usage error (exit 2); for ``[server]`` options a flag beats an environment variable,
which beats the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for, free_port

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
OTHER_ACCOUNT = "111122223333"

FILE = """
[server]
fidelity = "strict"

[[queues]]
name = "orders"
tags = { team = "shop", env = "dev" }
dead_letter_queue = "orders-dlq"
max_receive_count = 5
[queues.attributes]
VisibilityTimeout = 60
DelaySeconds = 2
ReceiveMessageWaitTimeSeconds = 0

[[queues]]
name = "orders-dlq"
attributes = { MessageRetentionPeriod = 1209600 }

[[queues]]
name = "jobs.fifo"
attributes = { ContentBasedDeduplication = true }

[[queues]]
name = "elsewhere"
account = "111122223333"
region = "eu-west-1"

[[faults]]
id = "throttle"
action = "SendMessage"
queue = "throttled"
error = "ThrottlingException"

[[queues]]
name = "throttled"
"""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_")}
    env.update(extra)
    return env


def start_fails(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m sqsemu args`` on a free port, expecting it to exit on its own (it must not serve)."""
    argv = [sys.executable, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(free_port()), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=clean_env(**(env or {})))


@pytest.fixture(scope="module")
def config_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "sqsemu.toml"
    path.write_text(FILE)
    return path


@pytest.fixture(scope="module")
def declared_server(config_path: Path) -> Iterator[ServerProcess]:
    srv = ServerProcess(["--config", str(config_path)]).start()
    yield srv
    assert srv.stop() == 0, srv.log_tail()


def url_of(client: Any, name: str) -> str:
    return str(client.get_queue_url(QueueName=name)["QueueUrl"])


def attributes_of(client: Any, url: str) -> dict[str, str]:
    return dict(client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"])


def test_declared_queues_exist_with_attributes_tags_and_redrive_policy(
    declared_server: ServerProcess, protocol: str
) -> None:
    sqs = client_for(declared_server.endpoint_url, protocol)
    orders = attributes_of(sqs, url_of(sqs, "orders"))
    assert (orders["VisibilityTimeout"], orders["DelaySeconds"]) == ("60", "2")
    assert json.loads(orders["RedrivePolicy"]) == {
        "deadLetterTargetArn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:orders-dlq",
        "maxReceiveCount": 5,
    }
    assert sqs.list_queue_tags(QueueUrl=url_of(sqs, "orders"))["Tags"] == {"team": "shop", "env": "dev"}
    dlq_url = url_of(sqs, "orders-dlq")
    assert attributes_of(sqs, dlq_url)["MessageRetentionPeriod"] == "1209600"
    assert sqs.list_dead_letter_source_queues(QueueUrl=dlq_url)["queueUrls"] == [url_of(sqs, "orders")]
    jobs = attributes_of(sqs, url_of(sqs, "jobs.fifo"))
    assert (jobs["FifoQueue"], jobs["ContentBasedDeduplication"]) == ("true", "true")


def test_a_queue_declared_for_another_account_and_region_lives_there(
    declared_server: ServerProcess, protocol: str
) -> None:
    other = client_for(declared_server.endpoint_url, protocol, access_key_id=OTHER_ACCOUNT, region="eu-west-1")
    assert attributes_of(other, url_of(other, "elsewhere"))["QueueArn"] == (
        f"arn:aws:sqs:eu-west-1:{OTHER_ACCOUNT}:elsewhere"
    )
    default = client_for(declared_server.endpoint_url, protocol)
    with pytest.raises(ClientError):
        default.get_queue_url(QueueName="elsewhere")


def test_server_options_and_fault_rules_of_the_file_apply(declared_server: ServerProcess, protocol: str) -> None:
    sqs = client_for(declared_server.endpoint_url, protocol)
    with pytest.raises(ClientError) as caught:
        sqs.send_message(QueueUrl=url_of(sqs, "throttled"), MessageBody="x")
    assert caught.value.response["Error"]["Code"] == "ThrottlingException"
    # fidelity = "strict" from [server]: a second purge within 60 s is refused.
    url = sqs.create_queue(QueueName=f"purged-{uuid.uuid4().hex[:12]}")["QueueUrl"]
    sqs.purge_queue(QueueUrl=url)
    with pytest.raises(ClientError) as caught:
        sqs.purge_queue(QueueUrl=url)
    assert "PurgeQueueInProgress" in caught.value.response["Error"]["Code"]


def test_restarting_on_the_same_data_folder_with_the_same_file_is_idempotent(config_path: Path, tmp_path: Path) -> None:
    args = ["--config", str(config_path), "--data-dir", str(tmp_path / "data")]
    with ServerProcess(args) as first:
        sqs = client_for(first.endpoint_url, "json")
        url = url_of(sqs, "orders-dlq")
        sqs.send_message(QueueUrl=url, MessageBody="kept")
        sqs.tag_queue(QueueUrl=url_of(sqs, "orders"), Tags={"extra": "kept"})
        before = {name: attributes_of(sqs, url_of(sqs, name)) for name in ("orders", "orders-dlq", "jobs.fifo")}
        listed = sorted(sqs.list_queues()["QueueUrls"])
    with ServerProcess(args) as second:
        sqs = client_for(second.endpoint_url, "json")
        after = {name: attributes_of(sqs, url_of(sqs, name)) for name in ("orders", "orders-dlq", "jobs.fifo")}
        for name in before:
            for key in ("CreatedTimestamp", "LastModifiedTimestamp", "VisibilityTimeout", "RedrivePolicy"):
                assert after[name].get(key) == before[name].get(key), (name, key)
        assert sorted(u.replace(str(second.port), str(first.port)) for u in sqs.list_queues()["QueueUrls"]) == listed
        assert sqs.list_queue_tags(QueueUrl=url_of(sqs, "orders"))["Tags"] == {
            "team": "shop",
            "env": "dev",
            "extra": "kept",
        }
        [message] = sqs.receive_message(QueueUrl=url_of(sqs, "orders-dlq"))["Messages"]
        assert message["Body"] == "kept"


def test_a_conflict_with_the_restored_state_stops_the_start_naming_queue_and_attribute(
    config_path: Path, tmp_path: Path
) -> None:
    data = str(tmp_path / "data")
    with ServerProcess(["--config", str(config_path), "--data-dir", data]):
        pass
    changed = tmp_path / "changed.toml"
    changed.write_text(FILE.replace("VisibilityTimeout = 60", "VisibilityTimeout = 45"))
    result = start_fails(["--config", str(changed), "--data-dir", data])
    assert result.returncode == 1, result.stderr
    assert f"config file {str(changed)!r}" in result.stderr
    assert "queue 'orders' (account 000000000000, region us-east-1)" in result.stderr
    assert "attribute VisibilityTimeout: declared '45', existing '60'" in result.stderr
    assert "Traceback" not in result.stderr
    # Nothing was changed: the original file still starts.
    with ServerProcess(["--config", str(config_path), "--data-dir", data]) as srv:
        sqs = client_for(srv.endpoint_url, "json")
        assert attributes_of(sqs, url_of(sqs, "orders"))["VisibilityTimeout"] == "60"


def test_the_same_queue_declared_twice_with_different_values_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "twice.toml"
    path.write_text('[[queues]]\nname = "q"\n[[queues]]\nname = "q"\nattributes = { DelaySeconds = 3 }\n')
    result = start_fails(["--config", str(path)])
    assert result.returncode == 2, result.stderr
    assert "queue 'q' (account 000000000000, region us-east-1)" in result.stderr
    assert "attribute DelaySeconds: declared '3', existing '0'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[server]\nprot = 9324\n", "[server] unknown key(s) 'prot'"),
        ("[server]\nport = 'x'\n", "[server] port must be an integer"),
        ("[[queues]]\nname = 'q'\nattributes = { VisibilityTimeout = 99999 }\n", "queue 'q' (account"),
        ("[[queues]\n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_a_usage_error_naming_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = start_fails([], env={"SQSEMU_CONFIG": str(path)})
    assert result.returncode == 2, result.stderr
    assert f"config file {str(path)!r}" in result.stderr and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = start_fails(["--config", str(tmp_path / "nope.toml")])
    assert result.returncode == 2
    assert "cannot read it" in result.stderr


def test_flag_beats_environment_beats_file_beats_default(tmp_path: Path) -> None:
    file_port, env_port, flag_port = free_port(), free_port(), free_port()
    path = tmp_path / "ports.toml"
    path.write_text(f'[server]\nport = {file_port}\nregion = "eu-west-1"\n\n[[queues]]\nname = "where"\n')

    def declared_in(srv: ServerProcess, region: str) -> bool:
        """Whether the queue the file declares (in the server's region) is in ``region``'s namespace; requests
        signed for a region address that region's queues."""
        sqs = client_for(srv.endpoint_url, "json", region=region)
        try:
            return attributes_of(sqs, url_of(sqs, "where"))["QueueArn"].split(":")[3] == region
        except ClientError:
            return False

    cases = [  # (args, environment, the port and region that must win)
        (["--config", str(path)], {}, file_port, "eu-west-1"),
        (["--config", str(path)], {"SQSEMU_PORT": str(env_port), "SQSEMU_REGION": "us-west-2"}, env_port, "us-west-2"),
        (
            ["--config", str(path), "--port", str(flag_port), "--region", "ap-south-1"],
            {"SQSEMU_PORT": str(env_port), "SQSEMU_REGION": "us-west-2"},
            flag_port,
            "ap-south-1",
        ),
        ([], {"SQSEMU_CONFIG": str(path)}, file_port, "eu-west-1"),
    ]
    for args, env, port, region in cases:
        srv = ServerProcess(["--host", "127.0.0.1", *args], env=env, port=port, pass_host_port=False)
        with srv:
            assert declared_in(srv, region), (args, env)
            assert not declared_in(srv, "us-east-1"), (args, env)  # the default region lost too
