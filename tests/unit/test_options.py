"""Options declared once (sqsemu.optionspec, sqsemu.options): every Config option field has complete metadata, and
its flag, its SQSEMU_* variable, its [server] key and its row in the documentation's options table all follow from
it. No sockets: click's CliRunner with the server's ``run`` replaced."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner

import sqsemu.server
from sqsemu import cli
from sqsemu.config import Config
from sqsemu.declare import PATH_KEYS, server_keys
from sqsemu.options import (
    TABLE_END,
    TABLE_START,
    Option,
    config_options,
    main,
    option,
    options_of,
    options_table,
    replace_options_table,
    table_section,
)

ROOT = Path(__file__).resolve().parents[2]
DECLARATIONS = {"queues", "topics", "fault_rules", "credentials", "file_warnings"}
"""The Config fields that are not options (no flag, no variable, no [server] key)."""
CREDENTIALS = '[[credentials]]\naccess_key_id = "AKIDOPTIONS"\nsecret_access_key = "secret"\n'
"""In every file the CLI tests read, so that auth = "sigv4" is a valid sample."""
STRING_SAMPLES: dict[str, tuple[str, str]] = {
    "host": ("10.1.2.3", "localhost"),
    "region": ("eu-west-1", "local"),
    "account_id": ("123456789012", "210987654321"),
    "base_url": ("http://sqs.test:9000", "https://sqs.example.com"),
    "cors_origins": ("*", "http://localhost:3000,https://app.example.com"),
    "forwarded_allow_ips": ("127.0.0.1", "10.0.0.0/8,::1"),
    "admin_token": ("token-a", "token-b"),
    "realism": ("duplicates=0.1", "reorder=0.2,reorder_window=4"),
    "lambda_endpoint": ("http://127.0.0.1:3001", "http://lambda.test:9000"),
}
"""Two valid values, both not the default, of each free-text option whose values Config checks by a pattern (a
new one is tried with "value-a"/"value-b" unless listed here)."""
OPTIONS = {item.name: item for item in config_options()}


# ------------------------------------------------------------------------------------------ the metadata


def test_every_config_field_is_an_option_or_a_declaration() -> None:
    """A field added without ``metadata=option(...)`` would have no flag: declare it (see sqsemu.options)."""
    names = [f.name for f in fields(Config)]
    missing = [name for name in names if name not in OPTIONS and name not in DECLARATIONS]
    assert not missing, f"Config fields without option metadata: {missing} (add metadata=option(help=...))"
    assert Config.field_names() == [name for name in names if name in OPTIONS]
    assert not DECLARATIONS & set(OPTIONS)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_every_option_has_complete_metadata(name: str) -> None:
    item = OPTIONS[name]
    spec = item.spec
    assert item.type in (str, int, bool)
    for text in (spec.help, spec.readme, spec.default_text):
        assert "|" not in text and "\n" not in text and text == text.strip(), text
        assert text.count("`") % 2 == 0, f"unbalanced code span in {text!r}"
    assert spec.help and spec.help[0] == spec.help[0].upper() or spec.help.startswith("`"), spec.help
    assert spec.help.endswith("."), spec.help
    assert not spec.readme or spec.readme.endswith("."), spec.readme
    assert "](" not in spec.help, "links are for the documentation's table only: put them in readme="
    if spec.choices:
        assert item.type is str and item.default in spec.choices and len(set(spec.choices)) == len(spec.choices)
    else:
        assert spec.case_sensitive, "case_sensitive applies to choices"
    if spec.bounds is not None:
        low, high = spec.bounds
        assert item.type is int and low <= item.default <= high
    else:
        assert not spec.unit, "unit applies to bounds"
    assert not spec.metavar or spec.metavar.isupper()
    assert not spec.default_text or item.default == "", "default_text describes an empty default"
    assert not spec.path or item.type is str
    assert item.flag.startswith("--") and item.envvar == f"SQSEMU_{name.upper()}"
    if item.type is bool:
        assert "/" in item.flag, "a bool option is an on/off flag pair"
    assert getattr(Config(), name) == item.default


def test_flags_and_variables_are_unique() -> None:
    flags = [part for item in config_options() for part in item.flag.split("/")]
    assert len(flags) == len(set(flags))
    assert len({item.envvar for item in config_options()}) == len(config_options())


def test_config_checks_choices_and_bounds_from_the_metadata() -> None:
    with pytest.raises(ValueError, match="fsync must be one of normal, full, got 'fast'"):
        Config(fsync="fast")
    with pytest.raises(ValueError, match="auth must be one of none, sigv4, iam, got 'basic'"):
        Config(auth="basic")
    with pytest.raises(ValueError, match="log_level must be one of .* got 'LOUD'"):
        Config(log_level="LOUD")
    with pytest.raises(ValueError, match=r"request_timeout must be an integer from 1 to 3600 \(seconds\), got 3601"):
        Config(request_timeout=3601)
    with pytest.raises(ValueError, match="port must be an integer from 0 to 65535, got -1"):
        Config(port=-1)
    assert Config(log_level="Warning").log_level == "warning"


def test_the_file_keys_and_path_keys_follow_the_metadata() -> None:
    assert server_keys() == [item.name for item in config_options() if item.spec.in_file]
    assert "config" not in server_keys()
    assert PATH_KEYS == ("tls_cert", "tls_key", "tls_dir", "faults", "data_dir", "load_state", "init_dir")


def test_an_option_must_be_a_str_int_or_bool_with_a_default() -> None:
    @dataclass(frozen=True)
    class Listed:
        names: tuple[str, ...] = field(default=(), metadata=option("Names."))

    with pytest.raises(TypeError, match="option names must be a str, int or bool field"):
        options_of(Listed)


def test_texts_are_written_once_for_help_and_readme() -> None:
    item = OPTIONS["base_url"]
    assert item.cli_help == "Fixed scheme://host:port for queue URLs."
    assert item.cli_default_text == "from the request's Host header"
    assert item.readme_default == "from the request's `Host` header"
    assert item.readme_meaning == item.spec.help
    # the README names the choices when the texts do not
    level = OPTIONS["log_level"]
    assert level.readme_meaning == "Server log level. One of `critical`, `error`, `warning`, `info`, `debug`, `trace`."
    clock = OPTIONS["clock"]
    assert clock.readme_meaning == clock.spec.help
    assert (OPTIONS["access_log"].readme_default, OPTIONS["admin"].readme_default) == ("off", "on")
    assert (OPTIONS["faults"].readme_default, OPTIONS["port"].readme_default) == ("*(empty)*", "`9324`")
    assert OPTIONS["fidelity"].readme_meaning.endswith(OPTIONS["fidelity"].spec.readme)


# ----------------------------------------------------------------------------------------- the command line


def _squeeze(text: str) -> str:
    """Text without any whitespace: click wraps help lines, also inside hyphenated words."""
    return "".join(text.split())


def test_help_lists_every_flag_variable_and_help_text() -> None:
    result = CliRunner().invoke(cli.main, ["--help"])
    assert result.exit_code == 0, result.output
    shown = _squeeze(result.output)
    for item in config_options():
        for flag in item.flag.split("/"):
            assert f"{flag} " in result.output or f"{flag}\n" in result.output, flag
        assert item.envvar in shown, item.envvar
        assert _squeeze(item.cli_help) in shown, item.name
        if item.spec.metavar:
            assert f"{item.flag} {item.spec.metavar}" in result.output


def samples(item: Option, tmp_path: Path) -> tuple[Any, Any]:
    """Two valid values of an option, ``a`` never its default (``b`` may be, when there is no other)."""
    if item.name in ("faults", "config"):
        made = []
        for n in ("a", "b"):
            path = tmp_path / f"{item.name}-{n}.{'json' if item.name == 'faults' else 'toml'}"
            path.write_text("[]" if item.name == "faults" else CREDENTIALS)
            made.append(str(path))
        return made[0], made[1]
    if item.type is bool:
        return not item.default, item.default
    if item.spec.choices:
        others = [choice for choice in item.spec.choices if choice != item.default]
        return others[0], others[1] if len(others) > 1 else item.default
    if item.spec.bounds is not None:
        low, high = item.spec.bounds
        return (low, high) if item.default not in (low, high) else (low + 1, high - 1)
    if item.spec.path:
        return str(tmp_path / "path-a"), str(tmp_path / "path-b")
    if item.type is int:
        return item.default + 1, item.default + 2
    return STRING_SAMPLES.get(item.name, ("value-a", "value-b"))


def flag_args(item: Option, value: Any) -> list[str]:
    if item.type is bool:
        on, off = item.flag.split("/")
        return [on if value else off]
    return [item.flag, str(value)]


def env_value(item: Option, value: Any) -> str:
    return ("true" if value else "false") if item.type is bool else str(value)


def config_file(tmp_path: Path, item: Option | None = None, value: Any = None) -> str:
    """A configuration file holding the test credentials and, with ``item``, ``[server] <item> = value``."""
    path = tmp_path / ("sqsemu.toml" if item is None else f"server-{item.name}-{value}.toml".replace("/", "_"))
    server = "" if item is None else f"[server]\n{item.name} = {json.dumps(value)}\n"
    path.write_text(server + CREDENTIALS)
    return str(path)


def invoke(args: list[str], env: dict[str, str] | None = None) -> Config:
    """``sqsemu args`` with no SQSEMU_* variable but ``env`` and ``run`` replaced: the Config it would serve."""
    seen: list[Config] = []
    clean: dict[str, str | None] = {item.envvar: None for item in config_options()}
    with mock.patch.object(sqsemu.server, "run", seen.append):
        result = CliRunner().invoke(cli.main, args, env={**clean, **(env or {})})
    assert result.exit_code == 0 and seen, result.output
    return seen[0]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_the_flag_the_variable_and_the_file_key_set_each_option(name: str, tmp_path: Path) -> None:
    item = OPTIONS[name]
    a, b = samples(item, tmp_path)
    base = [] if name == "config" else ["--config", config_file(tmp_path)]
    assert getattr(invoke(flag_args(item, a) + base), name) == a
    assert getattr(invoke(base, {item.envvar: env_value(item, a)}), name) == a
    if name != "config":
        assert getattr(invoke(base), name) == item.default
    if item.spec.in_file:
        assert getattr(invoke(["--config", config_file(tmp_path, item, a)]), name) == a
    else:
        assert name not in server_keys()


@pytest.mark.parametrize("name", list(OPTIONS))
def test_flag_beats_variable_beats_file_for_each_option(name: str, tmp_path: Path) -> None:
    item = OPTIONS[name]
    a, b = samples(item, tmp_path)
    env = {item.envvar: env_value(item, b)}
    if item.spec.in_file:
        from_file = ["--config", config_file(tmp_path, item, a)]
        assert getattr(invoke(from_file, env), name) == b
        assert getattr(invoke(flag_args(item, a) + ["--config", config_file(tmp_path, item, b)], env), name) == a
    else:
        assert getattr(invoke(flag_args(item, a), env), name) == a


def test_a_bad_value_names_the_flag_whatever_checks_it() -> None:
    """Choices and ranges are click's types; every other value is checked by Config, through the option."""
    clean: dict[str, str | None] = {item.envvar: None for item in config_options()}
    for args, message in [
        (["--region", "BAD"], "Invalid value for '--region': region must be lower-case"),
        (["--host", ""], "Invalid value for '--host': host must not be empty"),
        (["--clock", "fast"], "Invalid value for '--clock': 'fast' is not one of"),
        (["--port", "70000"], "Invalid value for '--port': port must be an integer from 0 to 65535, got 70000"),
    ]:
        result = CliRunner().invoke(cli.main, args, env=clean)
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.output.split()), result.output


# ------------------------------------------------------------------------------------------ the documentation


def test_the_documented_options_table_is_the_generated_one() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    expected = options_table()
    assert table_section(text) == expected, (
        "docs/configuration.md's options table differs from Config's fields: run "
        "`python -m sqsemu.options --update-docs`, or paste this between the options-table markers:\n\n" + expected
    )


def test_the_table_has_one_row_per_option_in_field_order() -> None:
    rows = options_table().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| `{item.flag}`" for item in config_options()]


def test_the_table_is_printed_and_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--table"]) == 0
    assert capsys.readouterr().out == options_table()
    page = tmp_path / "configuration.md"
    for flag in ("--update-docs", "--update-readme"):  # the older spelling still works
        page.write_text(f"# x\n\n{TABLE_START}\n| old |\n{TABLE_END}\n\nafter\n")
        assert main([flag, str(page)]) == 0
        assert page.read_text() == f"# x\n\n{TABLE_START}\n{options_table()}{TABLE_END}\n\nafter\n"
    assert replace_options_table(page.read_text()) == page.read_text()
    with pytest.raises(ValueError, match="no"):
        table_section("# no table\n")


def test_the_readme_keeps_no_copy_of_the_table() -> None:
    """One source of truth: the table is generated into docs/configuration.md only."""
    assert TABLE_START not in (ROOT / "README.md").read_text(encoding="utf-8")
