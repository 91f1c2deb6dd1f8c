"""The key that signs what SNS delivers, and the SNS string-to-sign.

A server has one ``SigningKey``: an RSA 2048 private key and a self-signed X.509 certificate for it. The certificate
is served at ``SigningCertURL`` (file name ``cert_name``) so that a subscriber verifies a message as it would one
from AWS: rebuild the string to sign from the message's own fields, decode ``Signature`` from Base64 and check it
with the certificate's public key, SHA1withRSA for ``SignatureVersion`` "1" and SHA256withRSA for "2" (SNS Developer
Guide, "Verifying the signatures of Amazon SNS messages" and "HTTP/HTTPS notification JSON format").

In durable mode the key and the certificate are PEM files in the data folder (``load_or_create``), so a restarted
server signs with the same key and serves the same certificate under the same name.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

KEY_FILE = "sns-signing-key.pem"
"""The private key's file in a durable folder (PKCS#8 PEM, unencrypted, mode 0600)."""

CERT_FILE = "sns-signing-cert.pem"
"""The certificate's file in a durable folder (PEM)."""

KEY_BITS = 2048
"""The RSA modulus size, in bits (AWS's SNS signing certificates carry 2048-bit RSA keys)."""

NOTIFICATION_FIELDS = ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type")
"""The fields a ``Notification`` signs, in byte order; ``Subject`` only when the message has one."""

CONFIRMATION_FIELDS = ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type")
"""The fields a ``SubscriptionConfirmation`` or ``UnsubscribeConfirmation`` signs, in byte order."""

_HASHES: dict[str, type[hashes.SHA1] | type[hashes.SHA256]] = {"1": hashes.SHA1, "2": hashes.SHA256}

# The certificate's validity is fixed rather than read from the clock: a certificate saved in a data folder stays
# valid across restarts, and nothing here depends on the wall clock.
_NOT_BEFORE = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
_NOT_AFTER = datetime.datetime(2100, 1, 1, tzinfo=datetime.UTC)


class SigningKeyError(ValueError):
    """A durable folder's key or certificate cannot be used (unreadable, not PEM, not an RSA key, or a certificate
    that is not the key's): the server must not start with it."""


def string_to_sign(message: Mapping[str, str | None]) -> bytes:
    """The bytes SNS signs for ``message`` (a delivered document's fields by name), UTF-8 encoded.

    Each signed field is written as its name, a newline, its value and a newline, the names in byte order: for
    ``Type`` "Notification" Message, MessageId, Subject (only if the message has one: absent or None leaves it out),
    Timestamp, TopicArn, Type; for "SubscriptionConfirmation" and "UnsubscribeConfirmation" Message, MessageId,
    SubscribeURL, Timestamp, Token, TopicArn, Type (SNS Developer Guide, "Verifying the signatures of Amazon SNS
    messages"). Other fields (SequenceNumber, MessageAttributes, the URLs of a notification) are not signed.

    Raises ``ValueError`` for another ``Type`` or a missing field.
    """
    kind = message.get("Type")
    names: tuple[str, ...]
    if kind == "Notification":
        names = NOTIFICATION_FIELDS
    elif kind in ("SubscriptionConfirmation", "UnsubscribeConfirmation"):
        names = CONFIRMATION_FIELDS
    else:
        raise ValueError(f"no string to sign for an SNS message of Type {kind!r}")
    parts: list[str] = []
    for name in names:
        value = message.get(name)
        if value is None:
            if name == "Subject":
                continue
            raise ValueError(f"an SNS {kind} message must have {name} to be signed")
        parts.append(f"{name}\n{value}\n")
    return "".join(parts).encode("utf-8")


def _hash_for(version: str) -> hashes.SHA1 | hashes.SHA256:
    algorithm = _HASHES.get(version)
    if algorithm is None:
        raise ValueError(f"SignatureVersion must be '1' (SHA1withRSA) or '2' (SHA256withRSA), not {version!r}")
    return algorithm()


def _new_certificate(key: rsa.RSAPrivateKey) -> x509.Certificate:
    """A self-signed certificate for ``key``, named as AWS's SNS certificates are (CN sns.amazonaws.com)."""
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "sqsemu"),
            x509.NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com"),
        ]
    )
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_NOT_BEFORE)
        .not_valid_after(_NOT_AFTER)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` whole or not at all (a partial file renamed into place), with ``mode``."""
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(partial, mode)
    os.replace(partial, path)


class SigningKey:
    """One server's SNS signing key and its self-signed certificate (made once per server)."""

    def __init__(self, key: rsa.RSAPrivateKey, certificate: x509.Certificate) -> None:
        """Use ``key`` with ``certificate``; raises ``SigningKeyError`` when the certificate is not the key's."""
        if certificate.public_key() != key.public_key():
            raise SigningKeyError("the SNS signing certificate does not belong to the signing key")
        self._key = key
        self._cert_pem = certificate.public_bytes(serialization.Encoding.PEM)
        der = certificate.public_bytes(serialization.Encoding.DER)
        self._cert_name = f"SimpleNotificationService-{hashlib.sha256(der).hexdigest()[:32]}.pem"

    @classmethod
    def create(cls) -> SigningKey:
        """A new key (RSA 2048, public exponent 65537) and a new certificate, kept in memory only."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
        return cls(key, _new_certificate(key))

    @classmethod
    def load_or_create(cls, folder: Path | None) -> SigningKey:
        """The signing key of a server: in memory when ``folder`` is None, else the one saved in ``folder``.

        In a folder the key is ``KEY_FILE`` and the certificate ``CERT_FILE``. Both present: they are loaded, so a
        restarted server serves the same certificate under the same ``cert_name``. Neither: a new pair is made and
        saved. Only the key: a new certificate is made for it and saved (signatures still verify with the key).
        Only the certificate: it is of no use without its key, and a new pair replaces it.

        Raises ``SigningKeyError`` for a file that cannot be read or parsed, a key that is not RSA, or a certificate
        that is not the key's; ``OSError`` when the folder cannot be written.
        """
        if folder is None:
            return cls.create()
        key_path, cert_path = folder / KEY_FILE, folder / CERT_FILE
        if not key_path.exists():
            signing = cls.create()
            signing.save(folder)
            return signing
        key = _load_key(key_path)
        if not cert_path.exists():
            certificate = _new_certificate(key)
            _write(cert_path, certificate.public_bytes(serialization.Encoding.PEM), 0o644)
        else:
            certificate = _load_certificate(cert_path)
        return cls(key, certificate)

    def save(self, folder: Path) -> None:
        """Write the key (mode 0600) and the certificate as PEM files into ``folder`` (created if missing)."""
        folder.mkdir(parents=True, exist_ok=True)
        key_pem = self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        _write(folder / KEY_FILE, key_pem, 0o600)
        _write(folder / CERT_FILE, self._cert_pem, 0o644)

    def cert_pem(self) -> bytes:
        """The certificate as PEM, what ``SigningCertURL`` serves."""
        return self._cert_pem

    @property
    def cert_name(self) -> str:
        """The certificate's file name, shaped like AWS's: ``SimpleNotificationService-<32 hex digits>.pem`` (the
        digits are the start of the certificate's SHA-256 fingerprint, so they change only with the certificate)."""
        return self._cert_name

    def sign(self, message: Mapping[str, str | None], version: str) -> str:
        """The Base64 ``Signature`` of ``message`` (``string_to_sign``): PKCS#1 v1.5 with SHA-1 for ``version`` "1",
        SHA-256 for "2". Raises ``ValueError`` for another version or a message ``string_to_sign`` refuses."""
        algorithm = _hash_for(version)
        signature = self._key.sign(string_to_sign(message), padding.PKCS1v15(), algorithm)
        return base64.b64encode(signature).decode("ascii")

    def verify(self, message: Mapping[str, str | None], signature: str, version: str) -> bool:
        """Whether ``signature`` (Base64) is this key's signature of ``message`` under ``version``."""
        try:
            raw = base64.b64decode(signature, validate=True)
            self._key.public_key().verify(raw, string_to_sign(message), padding.PKCS1v15(), _hash_for(version))
        except (InvalidSignature, ValueError):
            return False
        return True


def _load_key(path: Path) -> rsa.RSAPrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise SigningKeyError(f"cannot read the SNS signing key {path}: {error}") from error
    if not isinstance(key, rsa.RSAPrivateKey):
        raise SigningKeyError(f"the SNS signing key {path} is not an RSA key")
    return key


def _load_certificate(path: Path) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError) as error:
        raise SigningKeyError(f"cannot read the SNS signing certificate {path}: {error}") from error
