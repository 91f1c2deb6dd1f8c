"""The command line's one rule for exit statuses (0 stopped, 1 cannot start, 2 usage error, 3 store failed while
serving), its ``--help``, and errors of values from the configuration file blamed on the file, not on a flag that
was not used. No sockets: click's CliRunner with the server's ``run`` replaced (the real process's statuses are
checked in tests/integration/test_exit_status.py)."""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner, Result

import sqsemu.server
from sqsemu import cli
from sqsemu.config import Config
from sqsemu.declare import DeclarationError
from sqsemu.persistence import StoreError

ROOT = Path(__file__).resolve().parents[2]


def _invoke(args: list[str], run: Callable[[Config], int] | None = None) -> Result:
    env = {name: None for name in os.environ if name.startswith("SQSEMU_")}  # CliRunner: None unsets
    with mock.patch.object(sqsemu.server, "run", run or (lambda config: 0)):
        return CliRunner().invoke(cli.main, args, env=env)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_help_names_both_storage_modes_and_the_exit_statuses() -> None:
    result = _invoke(["--help"])
    assert result.exit_code == 0
    summary = _flat(result.output.split("Options:")[0])
    assert "in memory, or on disk with --data-dir" in summary, summary
    assert _flat(cli.EXIT_STATUSES) in _flat(result.output)


def _raises(exc: Exception) -> Callable[[Config], int]:
    def run(config: Config) -> int:
        raise exc

    return run


@pytest.mark.parametrize(
    ("run", "status", "said"),
    [
        (lambda config: 0, 0, ""),
        (lambda config: sqsemu.server.STARTUP_FAILED_EXIT_STATUS, 1, "cannot listen on 127.0.0.1:9324"),
        (_raises(StoreError("data folder in use")), 1, "cannot start: data folder in use"),
        (_raises(DeclarationError("queue 'orders' exists with a different value")), 1, "queue 'orders' exists"),
        (lambda config: sqsemu.server.STORE_FAILED_EXIT_STATUS, 3, ""),
    ],
    ids=["stopped", "cannot-listen", "data-folder", "declaration-conflict", "store-failed"],
)
def test_each_outcome_has_its_exit_status(run: Callable[[Config], int], status: int, said: str) -> None:
    result = _invoke([], run)
    assert result.exit_code == status, result.output
    assert said in result.output
    assert gc.isenabled()  # the collector paused while starting runs again, whatever the outcome


def test_the_collector_is_paused_while_the_server_starts() -> None:
    seen: list[bool] = []

    def run(config: Config) -> int:
        seen.append(gc.isenabled())
        return 0

    assert _invoke([], run).exit_code == 0
    assert seen == [False] and gc.isenabled()


def test_an_invalid_value_is_a_usage_error() -> None:
    result = _invoke(["--region", "Not A Region"])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--region'" in result.output


def test_a_faults_file_named_in_the_config_file_is_blamed_on_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "sqsemu.toml"
    config.write_text('[server]\nfaults = "missing.json"\n')
    result = _invoke(["--config", str(config)])
    assert result.exit_code == 2, result.output
    text = _flat(result.output)
    assert "Invalid value for '--config'" in text
    assert f"config file {str(config)!r}: [server] faults file" in text
    assert "missing.json" in text
    assert "--faults" not in text and "SQSEMU_FAULTS" not in text


def test_a_faults_file_given_by_flag_is_blamed_on_the_flag(tmp_path: Path) -> None:
    result = _invoke(["--faults", str(tmp_path / "missing.json")])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--faults'" in result.output


def test_the_documented_configuration_file_example_starts(tmp_path: Path) -> None:
    """docs/configuration.md's example file, as written, is accepted (it names no file that does not exist)."""
    page = (ROOT / "docs" / "configuration.md").read_text()
    section = page.split("## Configuration file", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "sqsemu.toml"
    path.write_text(example)
    seen: list[Config] = []

    def run(config: Config) -> int:
        seen.append(config)
        return 0

    result = _invoke(["--config", str(path)], run)
    assert result.exit_code == 0, result.output
    assert [queue.name for queue in seen[0].queues] == ["orders", "orders-dlq", "payments.fifo"]
