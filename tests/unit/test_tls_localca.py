"""The local CA of ``--tls`` (``sqsemu.security.localca``): the certificates it makes, what it reuses, what it
issues again, the folders it refuses; and a TLS handshake in memory (no sockets) that Python's strictest verifier
(``VERIFY_X509_STRICT``, on by default in Python 3.13's ``create_default_context``) accepts for every name the
certificate must carry. Times are given to ``ensure`` (``now``): nothing sleeps."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path
from typing import TypeVar

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID

from sqsemu.security import localca
from sqsemu.security.localca import LocalCAError, ensure

NOW = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)


def certificates(path: Path) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(path.read_bytes())


E = TypeVar("E", bound=x509.ExtensionType)


def ext(cert: x509.Certificate, kind: type[E]) -> x509.Extension[E]:
    return cert.extensions.get_extension_for_class(kind)


def test_the_ca_is_a_ca_valid_for_ten_years_with_key_identifiers(tmp_path: Path) -> None:
    made = ensure(tmp_path / "tls", [], now=NOW)
    assert made.ca_created and made.issued
    (ca,) = certificates(made.ca_file)
    constraints = ext(ca, x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca is True
    usage = ext(ca, x509.KeyUsage)
    assert usage.critical and usage.value.key_cert_sign and usage.value.crl_sign
    ski = ext(ca, x509.SubjectKeyIdentifier).value
    assert ext(ca, x509.AuthorityKeyIdentifier).value.key_identifier == ski.digest
    assert ca.not_valid_after_utc - NOW == datetime.timedelta(days=localca.CA_VALIDITY_DAYS)
    assert ca.subject == ca.issuer
    assert (made.folder / "ca-key.pem").stat().st_mode & 0o077 == 0  # the CA's key: the owner's only


def test_the_server_certificate_names_the_local_addresses_and_the_given_names(tmp_path: Path) -> None:
    made = ensure(tmp_path, ["sqs.example.test", "10.0.0.5", "[fd00::1]", "SQS.example.test"], now=NOW)
    (ca,) = certificates(made.ca_file)
    leaf = certificates(made.server_file)[0]
    names = ext(leaf, x509.SubjectAlternativeName).value
    assert sorted(names.get_values_for_type(x509.DNSName)) == ["localhost", "sqs.example.test"]
    assert sorted(map(str, names.get_values_for_type(x509.IPAddress))) == sorted(
        ["127.0.0.1", "10.0.0.5", "::1", "fd00::1"]
    )
    assert made.names == ("localhost", "sqs.example.test", "10.0.0.5", "127.0.0.1", "::1", "fd00::1")
    assert ext(leaf, x509.BasicConstraints).value.ca is False
    usage = ext(leaf, x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and not usage.value.key_cert_sign
    assert list(ext(leaf, x509.ExtendedKeyUsage).value) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert ext(leaf, x509.SubjectKeyIdentifier).value.digest  # present
    issuer_key = ext(ca, x509.SubjectKeyIdentifier).value.digest
    assert ext(leaf, x509.AuthorityKeyIdentifier).value.key_identifier == issuer_key
    assert leaf.not_valid_after_utc - leaf.not_valid_before_utc <= datetime.timedelta(days=825, hours=1)
    assert leaf.not_valid_after_utc - NOW == datetime.timedelta(days=localca.LEAF_VALIDITY_DAYS)
    leaf.verify_directly_issued_by(ca)
    assert made.server_file.stat().st_mode & 0o077 == 0  # it holds the server's key


def test_a_second_start_reuses_the_ca_and_the_certificate(tmp_path: Path) -> None:
    first = ensure(tmp_path, ["sqs.local"], now=NOW)
    ca, server = first.ca_file.read_bytes(), first.server_file.read_bytes()
    again = ensure(tmp_path, ["sqs.local"], now=NOW + datetime.timedelta(days=100))
    assert (again.ca_created, again.issued) == (False, False)
    assert again.ca_file.read_bytes() == ca and again.server_file.read_bytes() == server


def test_other_names_get_a_certificate_of_their_own_from_the_same_ca(tmp_path: Path) -> None:
    first = ensure(tmp_path, ["a.local"], now=NOW)
    other = ensure(tmp_path, ["b.local"], now=NOW)
    assert not other.ca_created and other.issued and other.server_file != first.server_file
    assert "b.local" in other.names and "a.local" not in other.names
    assert ensure(tmp_path, ["a.local"], now=NOW).server_file.read_bytes() == first.server_file.read_bytes()


@pytest.mark.parametrize("days", [localca.LEAF_VALIDITY_DAYS + 1, localca.LEAF_VALIDITY_DAYS - 10])
def test_an_expired_or_expiring_certificate_is_issued_again(tmp_path: Path, days: int) -> None:
    before = ensure(tmp_path, [], now=NOW).server_file.read_bytes()
    later = NOW + datetime.timedelta(days=days)
    again = ensure(tmp_path, [], now=later)
    assert again.issued and not again.ca_created
    leaf = certificates(again.server_file)[0]
    assert leaf.not_valid_before_utc <= later < leaf.not_valid_after_utc
    assert again.server_file.read_bytes() != before


def test_a_certificate_of_another_ca_is_issued_again(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    first = ensure(tmp_path, [], now=NOW)
    elsewhere = ensure(tmp_path_factory.mktemp("other"), [], now=NOW)
    first.server_file.write_bytes(elsewhere.server_file.read_bytes())  # same names, another CA's signature
    again = ensure(tmp_path, [], now=NOW)
    assert again.issued
    certificates(again.server_file)[0].verify_directly_issued_by(certificates(first.ca_file)[0])


def test_an_expired_ca_is_made_anew(tmp_path: Path) -> None:
    before = ensure(tmp_path, [], now=NOW).ca_file.read_bytes()
    again = ensure(tmp_path, [], now=NOW + datetime.timedelta(days=localca.CA_VALIDITY_DAYS + 1))
    assert again.ca_created and again.issued
    assert again.ca_file.read_bytes() != before


def test_the_java_truststore_holds_the_ca_without_a_password(tmp_path: Path) -> None:
    made = ensure(tmp_path, [], now=NOW)
    assert made.truststore is not None and made.truststore.name == "truststore.p12"
    loaded = pkcs12.load_pkcs12(made.truststore.read_bytes(), None)
    assert loaded.key is None and loaded.cert is None
    assert [entry.certificate for entry in loaded.additional_certs] == certificates(made.ca_file)


@pytest.mark.parametrize("kept", ["ca.pem", "ca-key.pem"])
def test_a_ca_certificate_without_its_key_or_the_other_way_round_is_refused(tmp_path: Path, kept: str) -> None:
    ensure(tmp_path, [], now=NOW)
    (tmp_path / ({"ca.pem", "ca-key.pem"} - {kept}).pop()).unlink()
    with pytest.raises(LocalCAError, match=f"holds {kept} but not"):
        ensure(tmp_path, [], now=NOW)


def test_a_ca_file_that_is_not_pem_or_not_the_keys_is_refused(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    ensure(tmp_path, [], now=NOW)
    (tmp_path / "ca.pem").write_text("not a certificate")
    with pytest.raises(LocalCAError, match="is not a PEM certificate"):
        ensure(tmp_path, [], now=NOW)
    other = ensure(tmp_path_factory.mktemp("other"), [], now=NOW)
    (tmp_path / "ca.pem").write_bytes(other.ca_file.read_bytes())
    with pytest.raises(LocalCAError, match="is not the key of"):
        ensure(tmp_path, [], now=NOW)


def test_a_folder_that_cannot_be_made_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(LocalCAError, match="cannot be used"):
        ensure(blocker / "tls", [], now=NOW)


def handshake(server_file: Path, ca_file: Path, name: str) -> str:
    """A TLS handshake in memory between a server serving ``server_file`` and a client of Python's default context
    trusting ``ca_file`` only, with ``VERIFY_X509_STRICT`` on, asking for ``name``; the negotiated version."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(server_file)
    client_context = ssl.create_default_context(cafile=str(ca_file))
    client_context.verify_flags |= ssl.VERIFY_X509_STRICT
    pipes = [ssl.MemoryBIO() for _ in range(4)]
    client = client_context.wrap_bio(pipes[0], pipes[1], server_hostname=name)
    server = server_context.wrap_bio(pipes[2], pipes[3], server_side=True)
    done = {"client": False, "server": False}
    for _ in range(10):
        for side, end in (("client", client), ("server", server)):
            if not done[side]:
                try:
                    end.do_handshake()
                    done[side] = True
                except ssl.SSLWantReadError:
                    pass
        pipes[2].write(pipes[1].read())  # client -> server
        pipes[0].write(pipes[3].read())  # server -> client
        if all(done.values()):
            break
    assert all(done.values())
    return str(client.version())


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "::1", "sqs.example.test"])
def test_pythons_strict_verification_accepts_the_certificate_for_each_name(tmp_path: Path, name: str) -> None:
    made = ensure(tmp_path, ["sqs.example.test"])
    assert handshake(made.server_file, made.ca_file, name).startswith("TLS")


def test_pythons_strict_verification_refuses_a_name_the_certificate_does_not_carry(tmp_path: Path) -> None:
    made = ensure(tmp_path, [])
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch|match"):
        handshake(made.server_file, made.ca_file, "elsewhere.example")


def test_split_names_drops_duplicates_and_brackets() -> None:
    dns, ips = localca.split_names(["LOCALHOST.", "localhost", "[::1]", "0:0::1", " ", "127.0.0.1"])
    assert dns == ["localhost"]
    assert ips == [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]
