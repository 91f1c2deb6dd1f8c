"""``--tls``: which certificate the port serves, checked before the server starts, and what the banner says of it.

TLS is the transport, never a second parser: uvicorn wraps the listening socket with the certificate this module
hands it (``ssl_certfile``/``ssl_keyfile``), and sqsemu's one HTTP protocol (:mod:`sqsemu.http.sqsprotocol`) reads
the decrypted bytes under the same rules as plain HTTP; it sees the TLS transport and says ``scheme`` ``https``, so
queue URLs read ``https://`` and ``aws:SecureTransport`` is ``true``.

- :func:`prepare`: the files to serve. With ``--tls-cert`` (and ``--tls-key``) the operator's, checked
  (:func:`check_certificate`); else a server certificate from the local CA (:mod:`sqsemu.security.localca`, which
  imports cryptography: only here, only with ``--tls``) in :func:`tls_folder`, for the names :func:`server_names`
  gives.
- :func:`note`: the banner's :class:`~sqsemu.observability.banner.TLSNote` (where the CA is, how clients trust it).

Errors: :class:`TLSError` with a message that names the file and what to do (the command line exits with status 2
for an operator's certificate that cannot be used, a usage error, and 1 when the local CA's folder cannot be used,
as for a data folder).
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqsemu.config import Config
from sqsemu.observability.banner import TLSNote

__all__ = ["TLSError", "TLSFiles", "check_certificate", "note", "prepare", "server_names", "tls_folder", "user_folder"]

WILDCARDS = ("0.0.0.0", "::", "")


class TLSError(Exception):
    """The certificate cannot be served: an operator's file that cannot be read, is not PEM, holds no key or a key
    that is not the certificate's (:attr:`usage` True: a usage error), or a local CA folder that cannot be used
    (:attr:`usage` False)."""

    def __init__(self, message: str, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class TLSFiles:
    """What the port serves: ``certfile`` (PEM: the certificate, its chain and, for the local CA's, its key) and
    ``keyfile`` (None: the key is in ``certfile``); for the local CA's, ``ca_file``, ``truststore`` (None when the
    installed cryptography cannot write one), ``folder``, the certificate's ``names`` and ``ca_created``."""

    certfile: str
    keyfile: str | None = None
    ca_file: str | None = None
    truststore: str | None = None
    folder: str | None = None
    names: tuple[str, ...] = ()
    ca_created: bool = False

    @property
    def own(self) -> bool:
        """The operator's certificate (``--tls-cert``), not the local CA's."""
        return self.ca_file is None


def user_folder(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The per-user folder of the local CA when neither ``--tls-dir`` nor ``--data-dir`` is given:
    ``$XDG_DATA_HOME/sqsemu/tls`` (default ``~/.local/share/sqsemu/tls``) on Linux and other Unix systems,
    ``~/Library/Application Support/sqsemu/tls`` on macOS, ``%LOCALAPPDATA%\\sqsemu\\tls`` on Windows."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform.startswith("win"):
        base = env.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "sqsemu" / "tls"
    if platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "sqsemu" / "tls"
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "sqsemu" / "tls"


def tls_folder(config: Config) -> Path:
    """The local CA's folder: ``--tls-dir``, else ``tls`` in ``--data-dir``, else :func:`user_folder`."""
    if config.tls_dir:
        return Path(config.tls_dir).expanduser()
    if config.data_dir:
        return Path(config.data_dir).expanduser() / "tls"
    return user_folder()


def server_names(config: Config) -> list[str]:
    """The names the local CA's server certificate carries besides localhost, 127.0.0.1 and ::1: ``--base-url``'s
    host and ``--host`` unless it is a wildcard address (``0.0.0.0``, ``::``: clients reach it by another name,
    which ``--base-url`` gives)."""
    names: list[str] = []
    if config.base_url:
        host = urllib.parse.urlsplit(config.base_url).hostname
        if host:
            names.append(host)
    if config.host not in WILDCARDS:
        names.append(config.host)
    return names


def check_certificate(certfile: str, keyfile: str | None) -> None:
    """Load ``certfile`` and ``keyfile`` (None: the key is in ``certfile``) as a server's TLS context would; raise
    :class:`TLSError` (usage) saying which file is wrong: one that cannot be read, is not PEM, an encrypted key
    (sqsemu reads unencrypted keys only), a key that is not the certificate's."""
    import ssl

    for label, path in (("tls_cert", certfile), ("tls_key", keyfile)):
        if path is None:
            continue
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise TLSError(f"{label}: cannot read {path}: {(exc.strerror or str(exc)).lower()}", usage=True) from None

    def no_password() -> str:
        raise TLSError(
            f"tls_key: the private key in {keyfile or certfile} is encrypted: give it unencrypted "
            "(openssl pkey -in KEY -out PLAIN)",
            usage=True,
        )

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(certfile, keyfile, password=no_password)
    except TLSError:
        raise
    except ssl.SSLError as exc:
        reason = str(getattr(exc, "reason", "") or exc)
        if "KEY_VALUES_MISMATCH" in reason.upper():
            message = f"tls_key: the key in {keyfile or certfile} is not the key of the certificate in {certfile}"
        elif keyfile is None:
            message = (
                f"tls_cert: {certfile} must hold a PEM certificate and its unencrypted private key (or give the key "
                f"in tls_key): {reason}"
            )
        else:
            message = f"tls_cert/tls_key: {certfile} and {keyfile} must be a PEM certificate and its PEM key: {reason}"
        raise TLSError(message, usage=True) from None


def prepare(config: Config) -> TLSFiles | None:
    """The files the port serves (None without ``--tls``): the operator's, checked, or the local CA's server
    certificate, made or reused in :func:`tls_folder`. Raises :class:`TLSError`."""
    if not config.tls:
        return None
    if config.tls_cert:
        keyfile = config.tls_key or None
        check_certificate(config.tls_cert, keyfile)
        return TLSFiles(certfile=str(Path(config.tls_cert).resolve()), keyfile=keyfile and str(Path(keyfile).resolve()))
    from sqsemu.security.localca import LocalCAError, ensure

    try:
        made = ensure(tls_folder(config), server_names(config))
    except LocalCAError as exc:
        raise TLSError(str(exc), usage=False) from None
    return TLSFiles(
        certfile=str(made.server_file),
        ca_file=str(made.ca_file),
        truststore=None if made.truststore is None else str(made.truststore),
        folder=str(made.folder),
        names=made.names,
        ca_created=made.ca_created,
    )


def note(files: TLSFiles | None) -> TLSNote | None:
    """The banner's note of ``files`` (None without TLS)."""
    if files is None:
        return None
    return TLSNote(
        certfile=files.certfile,
        ca_file=files.ca_file,
        truststore=files.truststore,
        names=files.names,
        ca_created=files.ca_created,
    )
