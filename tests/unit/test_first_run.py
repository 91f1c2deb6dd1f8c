"""What a new user meets on a first run, each as the documentation shows it (issue 24's frictions): the start-up
banner, the answer to a plain ``GET /``, and the command line's messages and help. No sockets: the ASGI app called
in-process, click's CliRunner with the server's ``run`` replaced."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sqsemu import cli
from sqsemu.config import Config, config_options
from sqsemu.observability.banner import Banner
from sqsemu.server import build
from tests.unit.app_helpers import call_asgi

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.1.0"


def _documented_banner(page: str) -> list[str]:
    """The banner's five lines as ``page`` shows them (the code block that starts with ``sqsemu <version>``)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    match = re.search(r"```\n(sqsemu \d[^\n]*\n(?:[^\n]+\n){4})```", text)
    assert match is not None, f"{page} shows no start-up banner"
    return match.group(1).splitlines()


# docs/getting-started.md shows the whole start-up output, log prefixes included: compared with what a real
# `sqsemu` prints by tests/integration/test_doc_examples.py.
@pytest.mark.parametrize("page", ["docs/observability.md"])
def test_the_documented_banner_is_the_one_the_server_prints(page: str) -> None:
    documented = _documented_banner(page)
    printed = Banner.of(Config(), VERSION, 9324, restored=0).lines()
    # The last line names the build this process runs (sqsemu.compiled): the pages show the compiled one.
    assert documented[:-1] == printed[:-1]
    assert documented[-1] == "build: compiled (mypyc)" and printed[-1].startswith("build: ")


def _get(config: Config, path: str, headers: dict[str, str] | None = None) -> Any:
    app, _broker, _clock = build(config)
    return asyncio.run(call_asgi(app, "GET", path, {"Host": "127.0.0.1:9324", **(headers or {})}))


def test_a_plain_get_of_the_root_says_what_the_server_is_and_where_the_console_is() -> None:
    resp = _get(Config(), "/", {"Accept": "*/*"})  # what curl sends
    assert resp.status == 200
    assert resp.headers["content-type"] == "text/plain; charset=utf-8"
    text = resp.body.decode()
    assert text.startswith(f"sqsemu {VERSION}: a local Amazon SQS-compatible server")
    assert "SQS endpoint: http://127.0.0.1:9324 " in text
    assert "Web console:  http://127.0.0.1:9324/_sqsemu/ui/" in text


def test_head_of_the_root_answers_as_get_without_the_body() -> None:
    app, _broker, _clock = build(Config())
    head = asyncio.run(call_asgi(app, "HEAD", "/", {"Host": "127.0.0.1:9324", "Accept": "*/*"}))
    get = _get(Config(), "/", {"Accept": "*/*"})
    assert (head.status, head.body) == (200, b"")
    assert head.headers["content-type"] == get.headers["content-type"]
    assert head.headers["content-length"] == str(len(get.body))
    browser = asyncio.run(call_asgi(app, "HEAD", "/", {"Host": "127.0.0.1:9324", "Accept": "text/html"}))
    assert browser.status == 307


def test_the_root_page_says_when_the_console_is_off() -> None:
    assert "Web console:  off (--no-console)" in _get(Config(console=False), "/").body.decode()
    assert "Web console:  off (--no-admin)" in _get(Config(admin=False), "/").body.decode()


def test_a_browser_is_still_sent_to_the_console_and_a_queue_url_still_answers_aws_404() -> None:
    assert _get(Config(), "/", {"Accept": "text/html"}).status == 307
    resp = _get(Config(), "/000000000000/q")
    assert (resp.status, resp.body) == (404, b"<UnknownOperationException/>")
    resp = _get(Config(), "/?Version=2012-11-05")  # a query string without an action: not the plain root
    assert (resp.status, resp.body) == (404, b"<UnknownOperationException/>")


def _invoke(args: list[str], env: dict[str, str] | None = None, columns: int = 80) -> Any:
    seen: list[Config] = []

    def run(config: Config) -> int:
        seen.append(config)
        return 0

    clean: dict[str, str | None] = {"COLUMNS": str(columns), "SQSEMU_CONFIG": None, "SQSEMU_PORT": None}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sqsemu.server.run", run)
        return CliRunner().invoke(cli.main, args, env={**clean, **(env or {})})


def _error(result: Any) -> str:
    assert result.exit_code == 2, result.output
    return " ".join(result.output.split())


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--port", "foo"], {}),
        ([], {"SQSEMU_PORT": "foo"}),
    ],
)
def test_a_port_that_is_not_a_number_is_called_that(args: list[str], env: dict[str, str]) -> None:
    message = _error(_invoke(args, env))
    assert "port must be an integer from 0 to 65535, got 'foo'" in message
    assert "integer range" not in message


def test_a_bad_port_is_worded_the_same_from_the_flag_the_variable_and_the_file(tmp_path: Path) -> None:
    wording = "port must be an integer from 0 to 65535, got"
    assert f"'--port': {wording} 70000" in _error(_invoke(["--port", "70000"]))
    assert f"(env var: 'SQSEMU_PORT'): {wording} 70000" in _error(_invoke([], {"SQSEMU_PORT": "70000"}))
    for value, shown in (("70000", "70000"), ('"x"', "'x'"), ("true", "True")):
        path = tmp_path / "sqsemu.toml"
        path.write_text(f"[server]\nport = {value}\n")
        assert f"[server] {wording} {shown}" in _error(_invoke(["--config", str(path)])), value
    with pytest.raises(ValueError, match=f"^{wording} 70000$"):
        Config(port=70000)


def test_the_variable_is_named_only_when_the_value_came_from_it(tmp_path: Path) -> None:
    path = tmp_path / "sqsemu.toml"
    path.write_text("[server]\nprot = 1\n")
    from_flag = _error(_invoke(["--config", str(path)]))
    assert "Invalid value for '--config': config file" in from_flag
    assert "env var" not in from_flag
    from_variable = _error(_invoke([], {"SQSEMU_CONFIG": str(path)}))
    assert "Invalid value for '--config' (env var: 'SQSEMU_CONFIG'): config file" in from_variable


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_help_never_breaks_a_word_and_says_variable_then_default_for_every_option(columns: int) -> None:
    result = _invoke(["--help"], columns=columns)
    assert result.exit_code == 0, result.output
    help_text = result.output
    for word in ("https://app.example.com,http://localhost:3000;", "us-east-1]", "SQSEMU_CORS_ORIGINS;"):
        assert word in help_text, f"{word!r} is broken across lines at {columns} columns"
    extras = re.findall(r"\[(env var: [^\]]*)\]", " ".join(help_text.split()))
    assert len(extras) == len(config_options())
    for extra in extras:
        assert re.fullmatch(r"env var: SQSEMU_[A-Z_]+(; default: .+)?", extra), extra
    assert "[default:" not in help_text.replace("; default:", "")
