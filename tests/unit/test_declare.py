"""The configuration file (sqsemu.declare): parsing, ordering, conflicts, idempotent application, and the CLI's
precedence (flag > environment > file > default). No sockets: brokers on a ManualClock, click's CliRunner."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner

import sqsemu.server
from sqsemu import cli
from sqsemu.admin.faults import injector_for
from sqsemu.clock import ManualClock
from sqsemu.config import Config, QueueDeclaration
from sqsemu.declare import (
    ConfigFileError,
    DeclarationError,
    apply_declarations,
    check_declarations,
    config_from_file,
    load_file,
    parse_document,
    plan,
)
from sqsemu.engine.broker import Broker, Namespace

NS = Namespace("000000000000", "us-east-1")
EXAMPLE = Path(__file__).resolve().parents[2] / "docker" / "sqsemu.toml"


def write(tmp_path: Path, text: str, name: str = "sqsemu.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def config_of(text: str, tmp_path: Path, **overrides: Any) -> Config:
    return config_from_file(str(write(tmp_path, text)), **overrides)


@pytest.fixture
def broker() -> Iterator[Broker]:
    b = Broker(ManualClock(1_700_000_000_000))
    yield b


# ----------------------------------------------------------------------------------------------- reading


def test_a_full_file_loads_into_typed_declarations(tmp_path: Path) -> None:
    loaded = load_file(
        write(
            tmp_path,
            """
            [server]
            region = "eu-west-1"
            port = 9400
            access_log = true
            faults = "faults.json"

            [[queues]]
            name = "orders"
            account = "111122223333"
            tags = { team = "shop", tier = 2 }
            dead_letter_queue = "orders-dlq"
            max_receive_count = 5
            [queues.attributes]
            VisibilityTimeout = 60
            DelaySeconds = 0
            RedriveAllowPolicy = { redrivePermission = "allowAll" }

            [[queues]]
            name = "jobs.fifo"
            attributes = { ContentBasedDeduplication = true }

            [[faults]]
            action = "SendMessage"
            error = "ThrottlingException"
            """,
        )
    )
    assert loaded.server == {
        "region": "eu-west-1",
        "port": 9400,
        "access_log": True,
        "faults": str(tmp_path / "faults.json"),  # relative to the file's folder
    }
    orders, jobs = loaded.queues
    assert orders == QueueDeclaration(
        name="orders",
        account="111122223333",
        region=None,
        attributes=(
            ("VisibilityTimeout", "60"),
            ("DelaySeconds", "0"),
            ("RedriveAllowPolicy", '{"redrivePermission":"allowAll"}'),
        ),
        tags=(("team", "shop"), ("tier", "2")),
        dead_letter_queue="orders-dlq",
        max_receive_count=5,
    )
    assert jobs.attributes == (("FifoQueue", "true"), ("ContentBasedDeduplication", "true"))
    assert loaded.fault_rules == ({"action": "SendMessage", "error": "ThrottlingException"},)


def test_an_empty_file_declares_nothing(tmp_path: Path) -> None:
    loaded = load_file(write(tmp_path, "# nothing\n"))
    assert (loaded.server, loaded.queues, loaded.fault_rules) == ({}, (), ())


def test_the_docker_example_file_loads_and_checks() -> None:
    config = config_from_file(str(EXAMPLE))
    assert config.queues, "the example declares no queues"
    check_declarations(config)
    assert any(q.dead_letter_queue for q in config.queues)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "port = 1",
            "unknown key(s) 'port' (allowed: server, queues, topics, faults, credentials, event_source_mappings, "
            "functions)",
        ),
        ("[server]\nprot = 1", "[server] unknown key(s) 'prot'"),
        ("[server]\nconfig = 'x.toml'", "[server] unknown key(s) 'config'"),
        ("[server]\nport = '9324'", "[server] port must be an integer from 0 to 65535, got '9324'"),
        ("[server]\nport = true", "[server] port must be an integer"),
        ("[server]\nport = 70000", "[server] port must be an integer from 0 to 65535, got 70000"),
        ("[server]\naccess_log = 'yes'", "[server] access_log must be true or false"),
        ("[server]\naccount_id = 111122223333", "account_id must be a string, got 111122223333 (quote it"),
        ("[server]\nclock = 'sundial'", "[server] clock must be one of system, manual"),
        ("[server]\nlog_level = 'loud'", "[server] log_level must be one of critical"),
        ("server = 1", "server must be a table"),
        ("queues = 1", "queues must be an array of tables"),
        ("[[queues]]\nattributes = {}", "[[queues]] #1: name is required"),
        ("[[queues]]\nname = 'a'\nattrs = {}", "[[queues]] #1 ('a'): unknown key(s) 'attrs'"),
        ("[[queues]]\nname = 'a'\naccount = 12", "[[queues]] #1 ('a'): account must be a quoted 12-digit string"),
        ("[[queues]]\nname = 'a'\naccount = '12'", "[[queues]] #1 ('a'): account: account_id must be 12 digits"),
        ("[[queues]]\nname = 'a'\nregion = ''", "region must be a non-empty string"),
        ("[[queues]]\nname = 'a'\nattributes = 5", "attributes must be a table"),
        ("[[queues]]\nname = 'a'\nattributes = { DelaySeconds = 1.5 }", "attributes.DelaySeconds must be a string"),
        ("[[queues]]\nname = 'a'\nattributes = { DelaySeconds = {} }", "attributes.DelaySeconds must be a string"),
        ("[[queues]]\nname = 'a'\ntags = { t = [1] }", "tags.t must be a string, integer or boolean"),
        ("[[queues]]\nname = 'a'\nattributes = { RedrivePolicy = 'x' }", "use dead_letter_queue and max_receive"),
        ("[[queues]]\nname = 'a.fifo'\nattributes = { FifoQueue = false }", "FifoQueue must be true for a name"),
        ("[[queues]]\nname = 'a'\ndead_letter_queue = 'b'", "max_receive_count is missing"),
        ("[[queues]]\nname = 'a'\nmax_receive_count = 3", "dead_letter_queue is missing"),
        ("[[queues]]\nname = 'a'\ndead_letter_queue = 'b'\nmax_receive_count = 0", "from 1 to 1000, got 0"),
        ("[[queues]]\nname = 'a'\ndead_letter_queue = 1\nmax_receive_count = 3", "dead_letter_queue must be"),
        ("faults = {}", "faults must be an array of tables"),
        ("[[faults]]\naction = 'SendMessage'", "[[faults]] rule 1: a fault rule needs an effect"),
        ("[[faults]]\nid = 'x'\ndrop = true\n[[faults]]\nid = 'x'\ndrop = true", "rule 2: a fault rule with id 'x'"),
    ],
)
def test_a_bad_file_names_the_file_and_the_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigFileError) as caught:
        load_file(path)
    message = str(caught.value)
    assert message.startswith(f"config file {str(path)!r}: "), message
    assert expected in message, message


def test_unreadable_and_invalid_toml_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="cannot read it"):
        load_file(tmp_path / "missing.toml")
    with pytest.raises(ConfigFileError, match=r"not valid TOML: .*line 1"):
        load_file(write(tmp_path, "[server\n"))
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigFileError, match="not UTF-8"):
        load_file(tmp_path / "bin.toml")


def test_parse_document_takes_relative_paths_from_the_base_folder() -> None:
    loaded = parse_document({"server": {"data_dir": "state", "faults": "/abs/f.json"}}, "x", Path("/etc/sqsemu"))
    assert loaded.server == {"data_dir": "/etc/sqsemu/state", "faults": "/abs/f.json"}


# ----------------------------------------------------------------------------------------------- ordering


def test_dead_letter_queues_come_before_the_queues_naming_them(tmp_path: Path) -> None:
    config = config_of(
        """
        [[queues]]
        name = "a"
        dead_letter_queue = "b"
        max_receive_count = 2
        [[queues]]
        name = "c"
        [[queues]]
        name = "b"
        dead_letter_queue = "d"
        max_receive_count = 2
        [[queues]]
        name = "d"
        """,
        tmp_path,
    )
    assert [p.declared.name for p in plan(config)] == ["d", "b", "a", "c"]


def test_the_server_account_and_region_are_the_defaults(tmp_path: Path) -> None:
    config = config_of('[[queues]]\nname = "a"\n[[queues]]\nname = "a"\nregion = "eu-west-1"', tmp_path)
    moved = Config(region="ap-south-1", account_id="111122223333", queues=config.queues)
    assert [(p.account, p.region) for p in plan(moved)] == [
        ("111122223333", "ap-south-1"),
        ("111122223333", "eu-west-1"),
    ]


@pytest.mark.parametrize(
    ("wiring", "cycle"),
    [
        ({"a": "a"}, "a -> a"),
        ({"a": "b", "b": "a"}, "a -> b -> a"),
        ({"x": "a", "a": "b", "b": "c", "c": "a"}, ": a -> b -> c -> a"),
    ],
)
def test_a_dead_letter_cycle_is_an_error(wiring: dict[str, str], cycle: str) -> None:
    queues = tuple(QueueDeclaration(src, dead_letter_queue=dst, max_receive_count=1) for src, dst in wiring.items())
    with pytest.raises(DeclarationError, match="dead-letter cycle in account 000000000000, region us-east-1") as caught:
        plan(Config(queues=queues, config="q.toml"))
    assert str(caught.value).startswith("config file 'q.toml': ")
    assert cycle in str(caught.value)


def test_the_same_name_in_another_region_is_not_a_cycle() -> None:
    queues = (
        QueueDeclaration("a", region="eu-west-1", dead_letter_queue="a", max_receive_count=1),
        QueueDeclaration("a"),
    )
    with pytest.raises(DeclarationError, match="region eu-west-1: a -> a"):
        plan(Config(queues=queues))
    ok = (QueueDeclaration("a", region="eu-west-1"), QueueDeclaration("a"))
    assert len(plan(Config(queues=ok))) == 2


# ----------------------------------------------------------------------------------------------- applying


def test_apply_creates_queues_with_attributes_tags_and_redrive_policy(tmp_path: Path, broker: Broker) -> None:
    config = config_of(
        """
        [[queues]]
        name = "orders"
        attributes = { VisibilityTimeout = 60, ReceiveMessageWaitTimeSeconds = 5 }
        tags = { team = "shop" }
        dead_letter_queue = "orders-dlq"
        max_receive_count = 5
        [[queues]]
        name = "orders-dlq"
        attributes = { MessageRetentionPeriod = 1209600 }
        [[queues]]
        name = "jobs.fifo"
        account = "111122223333"
        region = "eu-west-1"
        """,
        tmp_path,
    )
    apply_declarations(broker, config)
    orders = broker.get_queue(NS, "orders")
    assert orders.attributes["VisibilityTimeout"] == "60"
    assert orders.attributes["ReceiveMessageWaitTimeSeconds"] == "5"
    assert json.loads(orders.attributes["RedrivePolicy"]) == {
        "deadLetterTargetArn": "arn:aws:sqs:us-east-1:000000000000:orders-dlq",
        "maxReceiveCount": 5,
    }
    assert orders.tags == {"team": "shop"}
    assert broker.get_queue(NS, "orders-dlq").attributes["MessageRetentionPeriod"] == "1209600"
    jobs = broker.get_queue(Namespace("111122223333", "eu-west-1"), "jobs.fifo")
    assert jobs.fifo and jobs.attributes["FifoQueue"] == "true"


class _Patchable(Broker):
    """The real broker as a Python subclass, whose instances take attributes (``mock.patch.object``)."""


def test_applying_twice_changes_nothing(tmp_path: Path) -> None:
    broker = _Patchable(ManualClock(1_700_000_000_000))
    config = config_of(
        """
        [[queues]]
        name = "orders"
        attributes = { VisibilityTimeout = 60 }
        tags = { team = "shop" }
        dead_letter_queue = "dlq"
        max_receive_count = 5
        [[queues]]
        name = "dlq"
        """,
        tmp_path,
    )
    apply_declarations(broker, config)
    orders = broker.get_queue(NS, "orders")
    before = (dict(orders.attributes), dict(orders.tags), orders.last_modified_s)
    with mock.patch.object(broker, "tag_queue", side_effect=AssertionError("tags rewritten")):
        apply_declarations(broker, config)
    assert broker.get_queue(NS, "orders") is orders
    assert (dict(orders.attributes), dict(orders.tags), orders.last_modified_s) == before
    assert len(broker.all_queues()) == 2


def test_an_existing_queue_keeps_undeclared_attributes_and_gets_declared_tags_merged(broker: Broker) -> None:
    existing = broker.create_queue(NS, "orders", {"DelaySeconds": "5"}, {"owner": "me", "team": "old"})
    config = Config(queues=(QueueDeclaration("orders", tags=(("team", "shop"), ("tier", "1"))),))
    apply_declarations(broker, config)
    assert existing.attributes["DelaySeconds"] == "5"
    assert existing.tags == {"owner": "me", "team": "shop", "tier": "1"}


def test_a_conflict_with_an_existing_queue_names_queue_and_attribute_and_changes_nothing(broker: Broker) -> None:
    broker.create_queue(NS, "orders", {"VisibilityTimeout": "30"}, {})
    config = Config(
        config="sqsemu.toml",
        queues=(
            QueueDeclaration("new-one"),
            QueueDeclaration("orders", attributes=(("VisibilityTimeout", "60"),), tags=(("t", "v"),)),
        ),
    )
    with pytest.raises(DeclarationError) as caught:
        apply_declarations(broker, config)
    assert str(caught.value) == (
        "config file 'sqsemu.toml': queue 'orders' (account 000000000000, region us-east-1) exists with a different "
        "value for attribute VisibilityTimeout: declared '60', existing '30'"
    )
    assert [q.name for q in broker.all_queues()] == ["orders"]
    assert broker.get_queue(NS, "orders").tags == {}


def test_a_redrive_policy_conflict_is_reported(broker: Broker) -> None:
    broker.create_queue(NS, "dlq", {}, {})
    broker.create_queue(NS, "other-dlq", {}, {})
    policy = '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:other-dlq","maxReceiveCount":3}'
    broker.create_queue(NS, "orders", {"RedrivePolicy": policy}, {})
    config = Config(queues=(QueueDeclaration("orders", dead_letter_queue="dlq", max_receive_count=3),))
    with pytest.raises(DeclarationError, match="'orders' .* different value for attribute RedrivePolicy"):
        apply_declarations(broker, config)


def test_declaring_a_queue_twice_with_different_values_is_a_conflict(tmp_path: Path) -> None:
    config = config_of(
        """
        [[queues]]
        name = "orders"
        attributes = { DelaySeconds = 1 }
        [[queues]]
        name = "orders"
        attributes = { DelaySeconds = 2 }
        """,
        tmp_path,
    )
    with pytest.raises(DeclarationError, match="'orders' .* attribute DelaySeconds: declared '2', existing '1'"):
        check_declarations(config)


def test_declaring_a_queue_twice_with_equal_values_merges_tags(broker: Broker) -> None:
    queues = (
        QueueDeclaration("orders", attributes=(("DelaySeconds", "1"),), tags=(("a", "1"),)),
        QueueDeclaration("orders", attributes=(("DelaySeconds", "1"),), tags=(("b", "2"),)),
    )
    apply_declarations(broker, Config(queues=queues))
    assert broker.get_queue(NS, "orders").tags == {"a": "1", "b": "2"}


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (QueueDeclaration("bad name!"), r"queue 'bad name!' \(account 000000000000, region us-east-1\): InvalidP"),
        (QueueDeclaration("q", attributes=(("VisibilityTimeout", "99999"),)), "'q' .*InvalidAttributeValue"),
        (QueueDeclaration("q", attributes=(("Colour", "red"),)), "'q' .*InvalidAttributeName: Unknown Attribute"),
        (QueueDeclaration("q", attributes=(("FifoQueue", "true"),)), "'q' .*must end with .fifo"),
        (QueueDeclaration("q", tags=(("aws:x", "1"),)), "'q' .*InvalidParameterValue"),
    ],
)
def test_sqs_validation_errors_name_the_queue(broker: Broker, declared: QueueDeclaration, expected: str) -> None:
    with pytest.raises(DeclarationError, match=expected):
        check_declarations(Config(queues=(declared,)))
    with pytest.raises(DeclarationError, match=expected):
        apply_declarations(broker, Config(queues=(declared, QueueDeclaration("fine"))))
    assert broker.all_queues() == []


def test_a_fifo_queue_cannot_use_a_standard_dead_letter_queue(broker: Broker) -> None:
    queues = (QueueDeclaration("dlq"), QueueDeclaration("q.fifo", attributes=(("FifoQueue", "true"),),
              dead_letter_queue="dlq", max_receive_count=2))  # fmt: skip
    with pytest.raises(DeclarationError, match="'q.fifo' .*same type of queue"):
        apply_declarations(broker, Config(queues=queues))
    assert broker.all_queues() == []


def test_an_undeclared_dead_letter_queue_must_exist(broker: Broker) -> None:
    config = Config(queues=(QueueDeclaration("orders", dead_letter_queue="dlq", max_receive_count=3),))
    check_declarations(config)  # without a broker it is assumed to exist
    with pytest.raises(DeclarationError, match="'orders' .*dead_letter_queue 'dlq' is neither declared nor an exist"):
        apply_declarations(broker, config)
    broker.create_queue(NS, "dlq", {}, {})
    apply_declarations(broker, config)
    assert broker.get_queue(NS, "orders").redrive is not None


def test_an_existing_dead_letter_queues_redrive_allow_policy_is_respected(broker: Broker) -> None:
    broker.create_queue(NS, "dlq", {"RedriveAllowPolicy": '{"redrivePermission":"denyAll"}'}, {})
    config = Config(queues=(QueueDeclaration("orders", dead_letter_queue="dlq", max_receive_count=3),))
    with pytest.raises(DeclarationError, match="'orders' .*RedriveAllowPolicy"):
        apply_declarations(broker, config)
    assert [q.name for q in broker.all_queues()] == ["dlq"]


def test_fault_rules_are_added_to_the_servers_injector(tmp_path: Path, broker: Broker) -> None:
    config = config_of('[[faults]]\nid = "slow"\nlatency_ms = 5\nqueue = "orders"', tmp_path)
    apply_declarations(broker, config)
    [rule] = injector_for(broker).rules
    assert (rule.id, rule.queue, rule.latency_ms) == ("slow", "orders", 5)


def test_inline_fault_rules_and_the_faults_file_must_not_share_ids(tmp_path: Path) -> None:
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps([{"id": "x", "drop": True}]))
    config = config_of('[server]\nfaults = "faults.json"\n[[faults]]\nid = "x"\ndrop = true', tmp_path)
    with pytest.raises(DeclarationError, match="together with the .* id 'x' exists already"):
        check_declarations(config)


def test_config_stays_hashable_and_comparable_with_declarations() -> None:
    a = Config(queues=[QueueDeclaration("q", tags=(("a", "1"),))])  # type: ignore[arg-type]
    b = Config(queues=(QueueDeclaration("q", tags=(("a", "1"),)),))
    assert a == b and hash(a) == hash(b) and isinstance(a.queues, tuple)
    assert Config(queues=(QueueDeclaration("r"),)) != b
    with pytest.raises(ValueError, match="QueueDeclaration"):
        Config(queues=("q",))  # type: ignore[arg-type]
    assert "queues" not in Config.field_names() and "config" in Config.field_names()


# ----------------------------------------------------------------------------------------------- the CLI


def invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, Config | None]:
    """Run ``sqsemu args`` with ``run`` replaced: (exit code, output, the Config it would serve)."""
    seen: list[Config] = []
    clean = {name: None for name in (f"SQSEMU_{f.upper()}" for f in Config.field_names())}
    with mock.patch.object(sqsemu.server, "run", seen.append):
        result = CliRunner().invoke(cli.main, args, env={**clean, **(env or {})})
    return result.exit_code, result.output, seen[0] if seen else None


def test_cli_precedence_is_flag_then_environment_then_file_then_default(tmp_path: Path) -> None:
    path = str(write(tmp_path, '[server]\nport = 9401\nregion = "eu-west-1"\nfidelity = "strict"'))
    code, output, config = invoke(["--config", path])
    assert code == 0, output
    assert config is not None and (config.port, config.region, config.fidelity) == (9401, "eu-west-1", "strict")
    assert (config.clock, config.config) == ("system", path)  # default; the path is recorded

    _, _, config = invoke(["--config", path], {"SQSEMU_PORT": "9402", "SQSEMU_REGION": "us-west-2"})
    assert config is not None and (config.port, config.region, config.fidelity) == (9402, "us-west-2", "strict")

    _, _, config = invoke(["--config", path, "--port", "9403"], {"SQSEMU_PORT": "9402", "SQSEMU_REGION": "us-west-2"})
    assert config is not None and (config.port, config.region) == (9403, "us-west-2")

    _, _, config = invoke([], {"SQSEMU_CONFIG": path})
    assert config is not None and (config.port, config.config) == (9401, path)


def test_cli_passes_the_declarations_on(tmp_path: Path) -> None:
    path = str(write(tmp_path, '[[queues]]\nname = "a"\n[[faults]]\ndrop = true'))
    code, output, config = invoke(["--config", path])
    assert code == 0, output
    assert config is not None and config.queues == (QueueDeclaration("a"),)
    assert config.fault_rules == ({"drop": True},)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[server]\nprot = 1", "[server] unknown key(s) 'prot'"),
        ("[server", "not valid TOML"),
        ("[[queues]]\nname = 'a'\nattributes = { VisibilityTimeout = -1 }", "queue 'a' (account 000000000000"),
        ("[[queues]]\nname = 'a'\ndead_letter_queue = 'a'\nmax_receive_count = 1", "dead-letter cycle"),
    ],
)
def test_cli_reports_a_bad_file_as_a_usage_error(tmp_path: Path, text: str, expected: str) -> None:
    path = str(write(tmp_path, text))
    code, output, config = invoke(["--config", path])
    assert (code, config) == (2, None), output
    assert "--config" in output and f"config file {path!r}" in output and expected in output, output


def test_cli_reports_a_conflict_at_start_up_without_a_traceback(tmp_path: Path) -> None:
    path = str(write(tmp_path, '[[queues]]\nname = "a"'))

    def failing_run(config: Config) -> None:
        raise DeclarationError(f"config file {path!r}: queue 'a' exists with a different value for attribute X")

    with mock.patch.object(sqsemu.server, "run", failing_run):
        result = CliRunner().invoke(cli.main, ["--config", path], env={"SQSEMU_PORT": None})
    assert result.exit_code == 1
    assert "Error: config file" in result.output and "attribute X" in result.output
    assert "Traceback" not in result.output
