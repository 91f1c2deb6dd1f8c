"""The local certificate authority of ``--tls``: a CA made once per folder and the server certificates it issues.

``ensure(folder, names)`` makes what a server needs to serve HTTPS that clients can verify, in one folder:

- ``ca.pem`` (the CA certificate, for clients) and ``ca-key.pem`` (its private key, mode 0600): made at the first
  start and reused by every later one, so a client trusts the CA once. CA:true (critical BasicConstraints, path
  length 0), KeyUsage keyCertSign and cRLSign (critical), SubjectKeyIdentifier; valid ``CA_VALIDITY_DAYS`` (10 years).
  An expired CA is made anew (said: clients must trust the new ``ca.pem``).
- ``truststore.p12``: the CA as a PKCS#12 truststore for Java, without a password (cryptography's
  ``serialize_java_truststore``, which marks the entry trusted as the JDK's keytool does; cryptography 45 or later).
- ``server-<digest>.pem``: a server certificate and its private key in one file (mode 0600), one per set of names
  (the digest is of the names): localhost, 127.0.0.1, ::1 and the names the caller adds. CA:false, KeyUsage
  digitalSignature (critical), ExtendedKeyUsage serverAuth, SubjectAlternativeName (DNS names and IP addresses),
  SubjectKeyIdentifier and AuthorityKeyIdentifier (the CA's key identifier; Python 3.13's default
  ``VERIFY_X509_STRICT`` requires both key identifiers); valid ``LEAF_VALIDITY_DAYS`` (825: the most Apple's
  platforms accept for a certificate issued by a CA a user added, "Requirements for trusted certificates in iOS 13
  and macOS 10.15"). It is issued again when it has less than ``RENEW_WITHIN_DAYS`` left or has expired, names other
  names, or was not issued by the folder's CA. One file per set of names, written whole (a rename): two servers
  with other names sharing the folder never serve each other's certificate or a key of another certificate.

Keys are ECDSA P-256 (cheap handshakes; every current TLS client takes them). The work is done under a lock on
``folder/.lock`` so that servers starting at once make one CA. Times are the machine's real time (``now``), never a
server's manual clock: clients check certificates against their own clocks.

Imports cryptography at the top: imported only with ``--tls`` (:mod:`sqsemu.security.tls`).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import ipaddress
import os
import secrets
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "CA_FILE",
    "CA_KEY_FILE",
    "CA_VALIDITY_DAYS",
    "LEAF_VALIDITY_DAYS",
    "RENEW_WITHIN_DAYS",
    "TRUSTSTORE_FILE",
    "LocalCA",
    "LocalCAError",
    "ensure",
]

CA_FILE = "ca.pem"
"""The CA certificate (PEM): what clients trust (``AWS_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS``, ``cafile=``)."""
CA_KEY_FILE = "ca-key.pem"
"""The CA's private key (PKCS#8 PEM, unencrypted, mode 0600). Whoever reads it can make certificates this machine's
clients trust: it never leaves the folder."""
TRUSTSTORE_FILE = "truststore.p12"
"""The CA certificate as a PKCS#12 truststore for Java (``-Djavax.net.ssl.trustStore=``), without a password."""
CA_VALIDITY_DAYS = 3650
"""How long a CA made here is valid (days)."""
LEAF_VALIDITY_DAYS = 825
"""How long a server certificate issued here is valid (days)."""
RENEW_WITHIN_DAYS = 30
"""A server certificate with fewer days left than this is issued again at the next start."""
_BACKDATE = datetime.timedelta(hours=1)  # notBefore an hour back: a client whose clock is a little behind accepts it


class LocalCAError(Exception):
    """The folder cannot be used: not writable, or it holds a CA certificate without its key (or the other way
    round), a file that is not PEM, or a key that is not the certificate's. The server must not start; the message
    names the file and what to do."""


@dataclass(frozen=True)
class LocalCA:
    """What :func:`ensure` made or found (absolute paths).

    - ``folder``: the folder; ``ca_file``: ``ca.pem``; ``truststore``: ``truststore.p12`` (None when the installed
      cryptography cannot write a Java truststore: older than 45).
    - ``server_file``: the server certificate and its key in one PEM file (uvicorn's ``ssl_certfile``).
    - ``names``: the names the server certificate carries, DNS names then IP addresses.
    - ``ca_created``: the CA was made at this call (clients trust it anew); ``issued``: the server certificate
      was issued at this call.
    """

    folder: Path
    ca_file: Path
    truststore: Path | None
    server_file: Path
    names: tuple[str, ...]
    ca_created: bool
    issued: bool


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def split_names(names: Sequence[str]) -> tuple[list[str], list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    """``names`` as (DNS names, IP addresses), each without duplicates and in a stable order; the DNS names in lower
    case, IP addresses in their canonical form (``0:0::1`` is ``::1``), brackets of an IPv6 address dropped."""
    dns: list[str] = []
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for name in names:
        text = name.strip().strip("[]")
        if not text:
            continue
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            lowered = text.lower().rstrip(".")
            if lowered and lowered not in dns:
                dns.append(lowered)
            continue
        if address not in ips:
            ips.append(address)
    return sorted(dns), sorted(ips, key=lambda a: (a.version, int(a)))


def ensure(folder: str | os.PathLike[str], names: Sequence[str], now: datetime.datetime | None = None) -> LocalCA:
    """Make (or reuse) the CA in ``folder`` and a server certificate for ``names`` plus localhost, 127.0.0.1 and
    ::1; write ``ca.pem`` and the Java truststore. ``now``: the time certificates are checked and issued at
    (default: the machine's UTC time). Raises :class:`LocalCAError` when the folder cannot be used."""
    now = now or _now()
    root = Path(folder).expanduser().resolve()
    dns, ips = split_names(["localhost", "127.0.0.1", "::1", *names])
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _locked(root):
            ca_cert, ca_key, created = _ca(root, now)
            truststore = _truststore(root, ca_cert, created)
            server_file, issued = _server(root, ca_cert, ca_key, dns, ips, now)
    except OSError as exc:
        raise LocalCAError(f"the TLS folder {root} cannot be used: {exc.strerror or exc}") from None
    shown = tuple(dns) + tuple(str(ip) for ip in ips)
    return LocalCA(root, root / CA_FILE, truststore, server_file, shown, created, issued)


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``root/.lock`` (POSIX ``flock``; Windows ``msvcrt.locking``)."""
    with open(root / ".lock", "a+b") as handle:
        if sys.platform == "win32":  # pragma: no cover - Windows
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write(path: Path, data: bytes, private: bool = False) -> None:
    """Write ``path`` whole (a temporary file renamed over it); mode 0600 when ``private``, else 0644."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temp, 0o600 if private else 0o644)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _ca(root: Path, now: datetime.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey, bool]:
    """The folder's CA (certificate, key, made now?): read when both files are there and it is still valid, else
    made and written."""
    cert_path, key_path = root / CA_FILE, root / CA_KEY_FILE
    have_cert, have_key = cert_path.exists(), key_path.exists()
    if have_cert != have_key:
        present, missing = (cert_path, key_path) if have_cert else (key_path, cert_path)
        raise LocalCAError(
            f"the TLS folder {root} holds {present.name} but not {missing.name}: restore it, or delete {present} "
            "to make a new CA (clients then trust the new ca.pem)"
        )
    if have_cert:
        cert, key = _read_ca(cert_path, key_path)
        if cert.not_valid_after_utc > now:
            return cert, key, False
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "sqsemu"),
            x509.NameAttribute(NameOID.COMMON_NAME, f"sqsemu local CA {secrets.token_hex(4)}"),
        ]
    )
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + datetime.timedelta(days=CA_VALIDITY_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    pkcs8 = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write(key_path, pkcs8, private=True)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert, key, True


def _read_ca(cert_path: Path, key_path: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The CA certificate and key from their files; :class:`LocalCAError` when either is not PEM or the key is not
    the certificate's."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    except ValueError:
        raise LocalCAError(
            f"{cert_path} is not a PEM certificate: delete the folder's ca*.pem to make a new CA"
        ) from None
    try:
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (ValueError, TypeError):
        raise LocalCAError(
            f"{key_path} is not an unencrypted PEM private key: delete the folder's ca*.pem to make a new CA"
        ) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.public_key() != cert.public_key():
        raise LocalCAError(f"{key_path} is not the key of {cert_path}: delete both to make a new CA")
    return cert, key


def _truststore(root: Path, ca_cert: x509.Certificate, rewrite: bool) -> Path | None:
    """``truststore.p12`` holding ``ca_cert`` as a trusted certificate, written when missing or ``rewrite``; None
    when this cryptography has no ``serialize_java_truststore`` (before 45)."""
    serialize = getattr(pkcs12, "serialize_java_truststore", None)
    if serialize is None:  # pragma: no cover - cryptography older than 45
        return None
    path = root / TRUSTSTORE_FILE
    if rewrite or not path.exists():
        entry = pkcs12.PKCS12Certificate(ca_cert, b"sqsemu-local-ca")
        _write(path, serialize([entry], serialization.NoEncryption()))
    return path


def _server(
    root: Path,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    dns: list[str],
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address],
    now: datetime.datetime,
) -> tuple[Path, bool]:
    """The server certificate file for these names (path, issued now?): kept while it is valid for
    ``RENEW_WITHIN_DAYS`` more days, names these names and was issued by ``ca_cert``; else issued again."""
    wanted = x509.SubjectAlternativeName([*(x509.DNSName(d) for d in dns), *(x509.IPAddress(ip) for ip in ips)])
    digest = hashlib.sha256("\n".join([*dns, *(str(ip) for ip in ips)]).encode()).hexdigest()[:12]
    path = root / f"server-{digest}.pem"
    if _usable(path, ca_cert, wanted, now):
        return path, False
    key = ec.generate_private_key(ec.SECP256R1())
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(min(now + datetime.timedelta(days=LEAF_VALIDITY_DAYS), ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(wanted, critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    _write(path, pem + cert.public_bytes(serialization.Encoding.PEM), private=True)
    return path, True


def _usable(path: Path, ca_cert: x509.Certificate, wanted: x509.SubjectAlternativeName, now: datetime.datetime) -> bool:
    """Whether ``path`` holds a key and a certificate for it, issued by ``ca_cert``, naming exactly ``wanted`` and
    valid from now for ``RENEW_WITHIN_DAYS`` more days."""
    try:
        data = path.read_bytes()
        cert = x509.load_pem_x509_certificate(data)
        key = serialization.load_pem_private_key(data, password=None)
        cert.verify_directly_issued_by(ca_cert)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except Exception:  # noqa: BLE001 - unreadable, not PEM, not signed by the CA (InvalidSignature), no SAN: issue anew
        return False
    if key.public_key() != cert.public_key() or set(names) != set(wanted):
        return False
    return cert.not_valid_before_utc <= now and cert.not_valid_after_utc - now > datetime.timedelta(
        days=RENEW_WITHIN_DAYS
    )
