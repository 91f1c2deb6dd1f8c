"""The security options in Config, the configuration file ([server] keys, [[credentials]]) and the command line."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner

import sqsemu.server
from sqsemu import cli
from sqsemu.config import Config, Credential
from sqsemu.declare import ConfigFileError, config_from_file, load_file

CREDENTIALS = """
[[credentials]]
access_key_id = "AKIDSQSEMU"
secret_access_key = "secret"
account = "123456789012"

[[credentials]]
access_key_id = "111122223333"
secret_access_key = "other"
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sqsemu.toml"
    path.write_text(text)
    return str(path)


def invoke(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, Config | None]:
    seen: list[Config] = []
    clean = {f"SQSEMU_{f.upper()}": None for f in Config.field_names()}
    with mock.patch.object(sqsemu.server, "run", seen.append):
        result = CliRunner().invoke(cli.main, args, env={**clean, **(env or {})})
    return result.exit_code, result.output, seen[0] if seen else None


def test_defaults_are_open_as_before() -> None:
    config = Config()
    assert (config.cors_origins, config.auth, config.admin_token, config.admin, config.credentials) == (
        "",
        "none",
        "",
        True,
        (),
    )


def test_config_checks_the_security_fields() -> None:
    with pytest.raises(ValueError, match="auth must be one of none, sigv4"):
        Config(auth="basic")
    with pytest.raises(ValueError, match=r'auth "sigv4" needs at least one access key'):
        Config(auth="sigv4")
    with pytest.raises(ValueError, match="declared twice"):
        Config(credentials=(Credential("a", "x"), Credential("a", "y")))
    with pytest.raises(ValueError, match="access_key_id must be"):
        Config(credentials=(Credential("a/b", "x"),))
    with pytest.raises(ValueError, match="secret_access_key of 'a' must be a non-empty string"):
        Config(credentials=(Credential("a", ""),))
    with pytest.raises(ValueError, match="account of 'a' must be 12 digits"):
        Config(credentials=(Credential("a", "x", "123"),))
    with pytest.raises(ValueError, match="Credential objects"):
        Config(credentials=(("a", "x"),))  # type: ignore[arg-type]
    config = Config(auth="sigv4", credentials=[Credential("a", "topsecret")])  # type: ignore[arg-type]
    assert isinstance(config.credentials, tuple) and "topsecret" not in repr(config)
    assert hash(config) == hash(Config(auth="sigv4", credentials=(Credential("a", "topsecret"),)))


def test_the_file_declares_credentials_and_auth(tmp_path: Path) -> None:
    server = '[server]\nauth = "sigv4"\nadmin_token = "t"\ncors_origins = "*"\n'
    loaded = load_file(write(tmp_path, server + CREDENTIALS))
    assert loaded.server == {"auth": "sigv4", "admin_token": "t", "cors_origins": "*"}
    assert loaded.credentials == (
        Credential("AKIDSQSEMU", "secret", "123456789012"),
        Credential("111122223333", "other", None),
    )
    config = config_from_file(str(tmp_path / "sqsemu.toml"))
    assert config.auth == "sigv4" and len(config.credentials) == 2
    assert config.credentials[1].account_for(config.account_id) == "111122223333"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[server]\nauth = "sigv4"', '[server] auth = "sigv4" needs at least one [[credentials]] entry'),
        ('[server]\nauth = "basic"', "[server] auth must be one of none, sigv4"),
        ('[server]\ncors_origins = "localhost:3000"', "[server] cors_origins must be"),
        ("[server]\nadmin = 'no'", "[server] admin must be true or false"),
        ("credentials = 1", "credentials must be an array of tables"),
        ("[[credentials]]\nsecret_access_key = 'x'", "[[credentials]] #1: access_key_id is required"),
        ("[[credentials]]\naccess_key_id = 'a'", "[[credentials]] #1 ('a'): secret_access_key is required"),
        (
            "[[credentials]]\naccess_key_id = 'a'\nsecret_access_key = 'x'\naccount = 123456789012",
            "[[credentials]] #1 ('a'): account must be a quoted 12-digit string",
        ),
        (
            "[[credentials]]\naccess_key_id = 'a'\nsecret_access_key = 'x'\nsecret = 'y'",
            "[[credentials]] #1 ('a'): unknown key(s) 'secret'",
        ),
        (
            "[[credentials]]\naccess_key_id = 'a'\nsecret_access_key = 'x'\n"
            "[[credentials]]\naccess_key_id = 'a'\nsecret_access_key = 'y'",
            "[[credentials]] #2 ('a'): credentials: ",
        ),
    ],
)
def test_bad_security_settings_in_the_file_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigFileError) as caught:
        load_file(write(tmp_path, text))
    assert expected in str(caught.value), str(caught.value)


def test_cli_flags_and_environment(tmp_path: Path) -> None:
    code, output, config = invoke(["--cors-origins", "http://localhost:3000", "--admin-token", "tok", "--no-admin"])
    assert code == 0, output
    assert config is not None
    assert (config.cors_origins, config.admin_token, config.admin) == ("http://localhost:3000", "tok", False)
    env = {"SQSEMU_CORS_ORIGINS": "*", "SQSEMU_ADMIN_TOKEN": "e", "SQSEMU_ADMIN": "false"}
    _, _, config = invoke([], env)
    assert config is not None and (config.cors_origins, config.admin_token, config.admin) == ("*", "e", False)
    path = write(tmp_path, CREDENTIALS)
    code, output, config = invoke(["--config", path, "--auth", "sigv4"])
    assert code == 0, output
    assert config is not None and config.auth == "sigv4" and len(config.credentials) == 2


def test_cli_refuses_sigv4_without_credentials_and_bad_values() -> None:
    code, output, _ = invoke(["--auth", "sigv4"])
    assert code == 2 and 'auth "sigv4" needs' in output and "[[credentials]]" in output
    code, output, _ = invoke(["--cors-origins", "localhost:3000"])
    assert code == 2 and "cors_origins must be" in output
    code, output, _ = invoke(["--admin-token", "a b"])
    assert code == 2 and "admin_token must be" in output


def test_a_value_only_config_can_check_is_a_usage_error_not_a_traceback() -> None:
    code, output, _ = invoke(["--region", "BAD"])
    assert code == 2 and "region must be lower-case" in output


@pytest.fixture
def without_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain ``pip install .``: the ``auth`` extra (botocore) is not installed."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *more: None if name == "botocore" else real(name, *more)
    )


@pytest.mark.usefixtures("without_botocore")
def test_a_missing_auth_extra_names_the_mode_asked_for_where_and_the_extra(tmp_path: Path) -> None:
    path = write(tmp_path, '[server]\nauth = "iam"\n' + CREDENTIALS)
    code, output, _ = invoke(["--config", path])
    assert code == 2, output
    flat = " ".join(output.split())  # click wraps the message
    assert f'config file {path!r}: [server] auth "iam" verifies signatures with botocore' in flat, flat
    assert "pip install 'sqsemu[auth]'" in flat and "pip install '.[auth]'" in flat
    assert "sigv4" not in flat and "'--auth'" not in flat  # neither a mode nor a flag that was never given
    code, output, _ = invoke(["--config", path], {"SQSEMU_AUTH": "sigv4"})
    flat = " ".join(output.split())
    assert code == 2 and "(env var: 'SQSEMU_AUTH')" in flat and 'auth "sigv4" verifies' in flat, flat
    code, output, _ = invoke(["--config", path, "--auth", "iam"])
    flat = " ".join(output.split())
    assert code == 2 and "Invalid value for '--auth'" in flat and 'auth "iam" verifies' in flat, flat
