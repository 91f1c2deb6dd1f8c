"""``--tls``, ``--tls-cert``, ``--tls-key`` and ``--tls-dir`` (``sqsemu.security.tls``): where the local CA lives,
which names its certificate carries, the operator's certificate checked before the server starts (a usage error,
exit status 2, naming the option), a CA folder that cannot be used (exit status 1), and the banner's HTTPS lines.
No sockets: click's CliRunner with the server's ``run`` replaced (tests/integration/test_tls.py serves HTTPS)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization

import sqsemu.server
from sqsemu import cli
from sqsemu.config import Config
from sqsemu.observability.banner import Banner, TLSNote, start_warnings
from sqsemu.security import tls
from sqsemu.security.localca import ensure
from sqsemu.security.tls import TLSError, check_certificate, prepare, server_names, tls_folder, user_folder


def _invoke(args: list[str], run: Callable[[Config], int] | None = None) -> Result:
    env = {name: None for name in os.environ if name.startswith("SQSEMU_")}
    with mock.patch.object(sqsemu.server, "run", run or (lambda config: 0)):
        return CliRunner().invoke(cli.main, args, env=env)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def operator_files(folder: Path) -> tuple[Path, Path]:
    """A certificate and its key in two files, as an operator would bring them (issued by a CA made in
    ``folder``)."""
    made = ensure(folder / "their-ca", [])
    pem = made.server_file.read_text()
    key, _, cert = pem.partition("-----END PRIVATE KEY-----\n")
    (folder / "cert.pem").write_text(cert)
    (folder / "key.pem").write_text(key + "-----END PRIVATE KEY-----\n")
    return folder / "cert.pem", folder / "key.pem"


def test_a_key_without_its_certificate_is_refused_and_tls_files_without_tls_are_warned() -> None:
    with pytest.raises(ValueError, match="tls_key needs tls_cert"):
        Config(tls=True, tls_key="key.pem")
    result = _invoke(["--tls", "--tls-key", "key.pem"])
    assert result.exit_code == 2 and "tls_key needs tls_cert" in result.output
    (warning,) = start_warnings(Config(tls_cert="c.pem", tls_key="k.pem"))
    assert warning == "--tls-cert, --tls-key set, but --tls is off: plain HTTP is served"


def test_the_operators_certificate_and_key_are_taken(tmp_path: Path) -> None:
    cert, key = operator_files(tmp_path)
    seen: list[Config] = []

    def run(config: Config) -> int:
        seen.append(config)
        return 0

    result = _invoke(["--tls", "--tls-cert", str(cert), "--tls-key", str(key)], run)
    assert result.exit_code == 0, result.output
    assert (seen[0].tls, seen[0].tls_cert, seen[0].tls_key) == (True, str(cert), str(key))
    files = prepare(seen[0])
    assert files is not None and files.own and files.certfile == str(cert) and files.keyfile == str(key)
    assert not (tmp_path / "tls").exists()  # no local CA made for it


def test_a_certificate_file_holding_its_key_needs_no_tls_key(tmp_path: Path) -> None:
    made = ensure(tmp_path, [])
    check_certificate(str(made.server_file), None)
    result = _invoke(["--tls", "--tls-cert", str(made.server_file)])
    assert result.exit_code == 0, result.output


def test_an_unreadable_certificate_is_a_usage_error_naming_the_flag(tmp_path: Path) -> None:
    result = _invoke(["--tls", "--tls-cert", str(tmp_path / "missing.pem")])
    assert result.exit_code == 2, result.output
    text = _flat(result.output)
    assert "Invalid value for '--tls-cert'" in text and "cannot read" in text and "missing.pem" in text


def test_a_key_of_another_certificate_is_a_usage_error_naming_tls_key(tmp_path: Path) -> None:
    cert, _ = operator_files(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    _, wrong_key = operator_files(other)
    result = _invoke(["--tls", "--tls-cert", str(cert), "--tls-key", str(wrong_key)])
    assert result.exit_code == 2, result.output
    text = _flat(result.output)
    assert "Invalid value for '--tls-key'" in text and "is not the key of the certificate" in text


def test_an_encrypted_key_is_a_usage_error_not_a_password_prompt(tmp_path: Path) -> None:
    cert, key = operator_files(tmp_path)
    loaded = serialization.load_pem_private_key(key.read_bytes(), None)
    key.write_bytes(
        loaded.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    result = _invoke(["--tls", "--tls-cert", str(cert), "--tls-key", str(key)])
    assert result.exit_code == 2, result.output
    assert "is encrypted" in _flat(result.output)


def test_a_file_that_is_not_pem_is_a_usage_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("hello")
    with pytest.raises(TLSError, match="must hold a PEM certificate and its unencrypted private key") as caught:
        check_certificate(str(junk), None)
    assert caught.value.usage
    result = _invoke(["--tls", "--tls-cert", str(junk)])
    assert result.exit_code == 2 and "Invalid value for '--tls-cert'" in result.output


def test_a_certificate_named_in_the_config_file_is_blamed_on_the_file(tmp_path: Path) -> None:
    config = tmp_path / "sqsemu.toml"
    config.write_text('[server]\ntls = true\ntls_cert = "missing.pem"\n')
    result = _invoke(["--config", str(config)])
    assert result.exit_code == 2, result.output
    text = _flat(result.output)
    assert "Invalid value for '--config'" in text and "[server] tls_cert" in text
    assert str(tmp_path / "missing.pem") in text  # relative to the file's folder


def test_a_ca_folder_that_cannot_be_used_stops_the_start_with_status_1(tmp_path: Path) -> None:
    def run(config: Config) -> int:
        raise TLSError("the TLS folder /x cannot be used: permission denied", usage=False)

    result = _invoke(["--tls"], run)
    assert result.exit_code == 1, result.output
    assert "cannot start: the TLS folder /x cannot be used" in result.output


def test_the_ca_folder_is_tls_dir_else_the_data_folders_else_the_users() -> None:
    assert tls_folder(Config(tls=True, tls_dir="/ca", data_dir="/data")) == Path("/ca")
    assert tls_folder(Config(tls=True, data_dir="/data")) == Path("/data/tls")
    assert tls_folder(Config(tls=True)) == user_folder()


def test_the_per_user_folder_of_each_platform() -> None:
    home = Path.home()
    assert user_folder({"XDG_DATA_HOME": "/xdg"}, "linux") == Path("/xdg/sqsemu/tls")
    assert user_folder({}, "linux") == home / ".local" / "share" / "sqsemu" / "tls"
    assert user_folder({}, "darwin") == home / "Library" / "Application Support" / "sqsemu" / "tls"
    assert user_folder({"LOCALAPPDATA": "C:/Users/a/AppData/Local"}, "win32") == Path(
        "C:/Users/a/AppData/Local/sqsemu/tls"
    )


def test_the_certificate_names_the_base_urls_host_and_a_host_that_is_not_a_wildcard() -> None:
    assert server_names(Config(tls=True)) == ["127.0.0.1"]
    assert server_names(Config(tls=True, host="0.0.0.0", base_url="https://sqs.internal:9324")) == ["sqs.internal"]
    assert server_names(Config(tls=True, host="::", base_url="https://[fd00::5]:9324")) == ["fd00::5"]
    assert server_names(Config(tls=True, host="devbox.lan")) == ["devbox.lan"]


def test_prepare_makes_the_local_cas_files_for_those_names(tmp_path: Path) -> None:
    config = Config(tls=True, tls_dir=str(tmp_path / "ca"), host="0.0.0.0", base_url="https://sqs.internal:9324")
    files = prepare(config)
    assert files is not None and not files.own and files.keyfile is None
    assert files.ca_file == str(tmp_path / "ca" / "ca.pem") and Path(files.certfile).parent == tmp_path / "ca"
    assert "sqs.internal" in files.names and "localhost" in files.names and files.ca_created
    assert prepare(Config()) is None


def test_the_banner_says_https_where_the_ca_is_and_how_each_client_trusts_it() -> None:
    note = TLSNote("/ca/server-1.pem", "/ca/ca.pem", "/ca/truststore.p12", ("localhost", "127.0.0.1", "::1"), True)
    banner = Banner.of(Config(tls=True), "1.2.3", 9324, restored=0, tls=note)
    lines = banner.lines()
    assert lines[0].startswith("sqsemu 1.2.3 serving SQS at https://127.0.0.1:9324 ")
    assert lines[3].startswith("metrics at https://127.0.0.1:9324/metrics; console at https://127.0.0.1:9324/")
    assert lines[-2:] == [
        "TLS: HTTPS only; local CA /ca/ca.pem (made now: clients trust it from now on); certificate for localhost, "
        "127.0.0.1, ::1",
        "trust the CA: boto3 and the AWS CLI AWS_CA_BUNDLE=/ca/ca.pem; Node NODE_EXTRA_CA_CERTS=/ca/ca.pem; Java "
        "-Djavax.net.ssl.trustStore=/ca/truststore.p12 (PKCS#12, no password)",
    ]
    fields = banner.fields()
    assert fields["endpoint"] == "https://127.0.0.1:9324" and fields["tls"]["ca_file"] == "/ca/ca.pem"  # type: ignore[index]
    assert "tls" not in Banner.of(Config(), "1", 9324, restored=0).fields()
    wildcard = Banner.of(Config(tls=True, host="0.0.0.0"), "1", 9324, restored=0, tls=note)
    assert "every interface: https://localhost:9324 from this machine" in wildcard.lines()[0]


def test_the_banner_names_the_operators_certificate() -> None:
    banner = Banner.of(Config(tls=True, tls_cert="/etc/c.pem"), "1", 9324, restored=0, tls=TLSNote("/etc/c.pem"))
    assert banner.lines()[-1] == "TLS: HTTPS only, with the operator's certificate /etc/c.pem"


def test_settings_tls_leaves_unused_or_wrong_are_warned() -> None:
    assert start_warnings(Config(tls=True)) == []
    (unused,) = start_warnings(Config(tls_dir="/ca"))
    assert unused == "--tls-dir set, but --tls is off: plain HTTP is served"
    (own,) = start_warnings(Config(tls=True, tls_dir="/ca", tls_cert="/c.pem"))
    assert "the operator's certificate (--tls-cert) is served: no local CA is used" in own
    (plain,) = start_warnings(Config(tls=True, base_url="http://sqs.local:9324"))
    assert "queue URLs say http://" in plain


def test_tls_is_imported_only_with_tls() -> None:
    """The local CA's module (cryptography) is loaded by ``prepare`` with ``--tls`` only: without it nothing of it
    is touched."""
    with mock.patch.object(tls, "tls_folder", side_effect=AssertionError("touched")):
        assert prepare(Config()) is None


def test_localstack_init_scripts_call_the_https_endpoint_trusting_the_local_ca(tmp_path: Path) -> None:
    from sqsemu.compat.initscripts import script_environment

    env = script_environment(Config(tls=True, tls_dir=str(tmp_path), compat="localstack"), 4566)
    assert env["AWS_ENDPOINT_URL"] == "https://127.0.0.1:4566"
    if "AWS_CA_BUNDLE" not in os.environ:
        assert env["AWS_CA_BUNDLE"] == str(tmp_path.resolve() / "ca.pem")
    assert script_environment(Config(compat="localstack"), 4566)["AWS_ENDPOINT_URL"] == "http://127.0.0.1:4566"
