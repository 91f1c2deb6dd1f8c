"""The start-up banner: what is serving where, logged at INFO by ``sqsemu.banner`` once the server listens.

Five lines, e.g.::

    sqsemu 0.1.0 serving SQS at http://127.0.0.1:9324 (region us-east-1, default account 000000000000)
    clock system, fidelity relaxed, data in memory, auth none (any credentials)
    queues: 0 restored, 2 declared
    metrics at http://127.0.0.1:9324/metrics; console: none in this build
    build: compiled (mypyc)

The first line names the address the server listens on (``--host``, ``--port``: the port bound when it is 0). On
a wildcard address (``0.0.0.0``, ``::``: every interface) it adds how to reach it from the same machine, and with
``--base-url`` (an ElasticMQ file's ``node-address``) what queue URLs name, which need not be where it listens::

    sqsemu 0.1.0 serving SQS at http://0.0.0.0:9324 (region us-east-1, default account 000000000000); every
    interface: http://localhost:9324 from this machine; queue URLs name http://sqs.local:9324

In durable mode the second line reads ``data durable in /abs/dir (fsync normal)``; it ends with the auth mode
(``--auth``): ``auth none (any credentials)``, ``auth sigv4 (2 credentials)`` or ``auth iam (3 identities)``, the
number of ``[[credentials]]`` keys. The last line says ``metrics off
(--no-metrics)`` or ``console off`` when they are switched off (``--no-admin``, or the console's own switch, when
the Config has one), and ``(admin token required)`` when ``--admin-token`` guards them. The last line is
:func:`sqsemu.compiled.status`: ``compiled (mypyc)`` or ``pure Python: <reason>``. With ``--log-format json``
every line is a record of its own and the first carries the facts as fields: ``version``, ``listen`` (the
address listened on, ``http://0.0.0.0:9324``), ``endpoint`` (the URL clients use: ``--base-url``, else the address
listened on, a wildcard one as ``localhost``; the metrics and console URLs start with it),
``region``, ``account``, ``clock``, ``fidelity``, ``data_dir`` (``null``: in memory), ``fsync``,
``queues_restored``, ``queues_declared``, ``metrics_url``, ``console_url`` (``null`` when off or absent), ``build``,
``auth`` (``none``, ``sigv4``, ``iam``) and ``identities`` (the keys it accepts; 0 with ``none``).

With ``--tls`` the URLs say ``https://`` and two lines follow (:class:`TLSNote`): the local CA's ``ca.pem`` (made
now or reused) and the names of the server certificate, then how each client trusts the CA (``AWS_CA_BUNDLE``,
``NODE_EXTRA_CA_CERTS``, Java's ``-Djavax.net.ssl.trustStore``); or one line naming the operator's certificate. The
JSON record then carries ``tls`` (the note's fields); without ``--tls`` it has no ``tls`` field.

After the lines, what the settings leave open or unused is logged as warnings (:func:`start_warnings`), each once
per start: ``--auth sigv4``/``iam`` without ``--admin-token`` while the operator's routes are on (they are open to
anyone who reaches the port: docs/security.md), ``--init-dir`` without ``--compat localstack`` (no script runs),
``--tls-cert``, ``--tls-key`` or ``--tls-dir`` without ``--tls`` (plain HTTP is served), ``--tls-dir`` beside
``--tls-cert`` (no local CA is used), and ``--tls`` with an ``http://`` ``--base-url``.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import asdict, dataclass

from sqsemu import compiled
from sqsemu.config import Config
from sqsemu.observability import METRICS_PATH

__all__ = ["BANNER_LOGGER", "CONSOLE_PATH", "Banner", "TLSNote", "console_installed", "start_warnings"]

BANNER_LOGGER = "sqsemu.banner"
CONSOLE_PATH = "/_sqsemu/ui/"
"""Where the web console is served, when this build has one (the ``sqsemu.console`` package)."""


def console_installed() -> bool:
    """Whether this build has the web console (``sqsemu.console``)."""
    return importlib.util.find_spec("sqsemu.console") is not None


WILDCARD_HOSTS = ("0.0.0.0", "::")
"""Hosts that listen on every interface: no client connects to them by that name on every system."""


def scheme(config: Config) -> str:
    """``https`` with ``--tls``, else ``http``."""
    return "https" if config.tls else "http"


def listen_url(config: Config, port: int) -> str:
    """``http://<host>:<port>`` (``https`` with ``--tls``) of the address listened on (IPv6 in brackets)."""
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"{scheme(config)}://{host}:{port}"


def endpoint_url(config: Config, port: int) -> str:
    """The SQS endpoint clients should use: ``--base-url``, else the address listened on (:func:`listen_url`), a
    wildcard one (every interface) as ``http://localhost:<port>`` (``https`` with ``--tls``)."""
    if config.base_url:
        return config.base_url
    if config.host in WILDCARD_HOSTS:
        return f"{scheme(config)}://localhost:{port}"
    return listen_url(config, port)


@dataclass(frozen=True)
class TLSNote:
    """What the banner says of ``--tls``: the certificate file served; for the local CA's, ``ca_file``
    (``ca.pem``), ``truststore`` (``truststore.p12``, None when none could be written), the certificate's
    ``names`` and whether the CA was made at this start (``ca_created``). ``ca_file`` None: the operator's own
    certificate (``--tls-cert``)."""

    certfile: str
    ca_file: str | None = None
    truststore: str | None = None
    names: tuple[str, ...] = ()
    ca_created: bool = False

    def lines(self) -> list[str]:
        """The banner's TLS lines: the certificate, and for the local CA how each client trusts it."""
        if self.ca_file is None:
            return [f"TLS: HTTPS only, with the operator's certificate {self.certfile}"]
        made = "made now: clients trust it from now on" if self.ca_created else "reused"
        ca = self.ca_file
        java = (
            f"Java -Djavax.net.ssl.trustStore={self.truststore} (PKCS#12, no password)"
            if self.truststore
            else f"Java: keytool -importcert -file {ca} -keystore truststore.p12 (cryptography 45+ writes one)"
        )
        return [
            f"TLS: HTTPS only; local CA {ca} ({made}); certificate for {', '.join(self.names)}",
            f"trust the CA: boto3 and the AWS CLI AWS_CA_BUNDLE={ca}; Node NODE_EXTRA_CA_CERTS={ca}; {java}",
        ]


def start_warnings(config: Config) -> list[str]:
    """The warnings a server of ``config`` logs at start (after the banner): settings that leave something open, or
    that do nothing, without a word otherwise. Empty for the defaults."""
    warnings: list[str] = []
    if config.auth != "none" and config.admin and not config.admin_token:
        routes = "/_sqsemu/* (peek, reset, clock, faults, authorize)"
        routes += ", the web console" if config.console else ""
        routes += ", /moto-api/reset"
        routes += ", /metrics" if config.metrics else ""
        if config.compat == "localstack":
            routes += ", /_aws/sqs/messages"
        warnings.append(
            f"--auth {config.auth} checks every SQS call, but the operator's routes are open to anyone who reaches "
            f"this port, without a signature: {routes}; set --admin-token (or --no-admin) where others can reach "
            "it (docs/security.md)"
        )
    if config.init_dir and config.compat != "localstack":
        warnings.append(
            f"--init-dir {config.init_dir} is set, but init scripts run only with --compat localstack: none run"
        )
    if not config.tls and (config.tls_cert or config.tls_key or config.tls_dir):
        given = ", ".join(
            f"--{name.replace('_', '-')}" for name in ("tls_cert", "tls_key", "tls_dir") if getattr(config, name)
        )
        warnings.append(f"{given} set, but --tls is off: plain HTTP is served")
    elif config.tls_dir and config.tls_cert:
        warnings.append(
            f"--tls-dir {config.tls_dir} is set, but the operator's certificate (--tls-cert) is served: no local CA "
            "is used"
        )
    if config.tls and config.base_url.startswith("http://"):
        warnings.append(
            f"--tls serves HTTPS only, but --base-url {config.base_url} makes queue URLs say http://: a client "
            "that calls a queue URL cannot connect (give --base-url https://...)"
        )
    return warnings


@dataclass(frozen=True)
class Banner:
    """The facts the banner shows (``data_dir`` None: in memory; a URL None: switched off or absent)."""

    version: str
    listen: str
    endpoint: str
    region: str
    account: str
    clock: str
    fidelity: str
    data_dir: str | None
    fsync: str
    queues_restored: int
    queues_declared: int
    metrics_url: str | None
    console_url: str | None
    admin_token: bool = False
    admin: bool = True  # the console is on (the admin routes are, and the console's own switch if there is one)
    console_built: bool = False
    build: str = ""  # sqsemu.compiled.status()
    auth: str = "none"  # --auth: none, sigv4 or iam
    identities: int = 0  # the [[credentials]] keys --auth sigv4 or iam accepts (each one identity under iam)
    local_url: str | None = None  # a wildcard address (every interface) as reached from this machine
    fixed_urls: bool = False  # the endpoint is --base-url (queue URLs name it)
    warnings: tuple[str, ...] = ()  # start_warnings(config), logged after the lines
    tls: TLSNote | None = None  # --tls: the certificate and the CA (None: plain HTTP)

    @classmethod
    def of(
        cls,
        config: Config,
        version: str,
        port: int,
        restored: int,
        data_dir: str | None = None,
        tls: TLSNote | None = None,
    ) -> Banner:
        """The banner of a server of ``config`` listening on ``port``, having restored ``restored`` queues from
        ``data_dir`` (its absolute path; None: in memory); ``tls``: what it serves with ``--tls``."""
        endpoint = endpoint_url(config, port)
        built = console_installed()
        console_on = config.admin and bool(getattr(config, "console", True))  # a Config with a console switch
        return cls(
            version=version,
            listen=listen_url(config, port),
            endpoint=endpoint,
            region=config.region,
            account=config.account_id,
            clock=config.clock,
            fidelity=config.fidelity,
            data_dir=data_dir,
            fsync=config.fsync,
            queues_restored=restored,
            queues_declared=len(config.queues),
            metrics_url=endpoint + METRICS_PATH if config.metrics else None,
            console_url=endpoint + CONSOLE_PATH if built and console_on else None,
            admin_token=bool(config.admin_token),
            admin=console_on,
            console_built=built,
            build=compiled.status(),
            auth=config.auth,
            identities=len(config.credentials) if config.auth != "none" else 0,
            local_url=f"{scheme(config)}://localhost:{port}" if config.host in WILDCARD_HOSTS else None,
            fixed_urls=bool(config.base_url),
            warnings=tuple(start_warnings(config)),
            tls=tls,
        )

    def lines(self) -> list[str]:
        """The banner's lines."""
        data = f"data durable in {self.data_dir} (fsync {self.fsync})" if self.data_dir else "data in memory"
        token = " (admin token required)" if self.admin_token else ""
        metrics = f"metrics at {self.metrics_url}{token}" if self.metrics_url else "metrics off (--no-metrics)"
        if self.console_url:
            console = f"console at {self.console_url}{token}"
        elif self.console_built and not self.admin:
            console = "console off"
        else:
            console = "console: none in this build"
        serving = (
            f"sqsemu {self.version} serving SQS at {self.listen} (region {self.region}, default account {self.account})"
        )
        if self.local_url:
            serving += f"; every interface: {self.local_url} from this machine"
        if self.fixed_urls:
            serving += f"; queue URLs name {self.endpoint}"
        return [
            serving,
            f"clock {self.clock}, fidelity {self.fidelity}, {data}, {self.auth_words()}",
            f"queues: {self.queues_restored} restored, {self.queues_declared} declared",
            f"{metrics}; {console}",
            f"build: {self.build}",
            *(self.tls.lines() if self.tls is not None else ()),
        ]

    def auth_words(self) -> str:
        """The auth mode in words: ``auth none (any credentials)``, ``auth sigv4 (2 credentials)``, ``auth iam (3
        identities)``."""
        if self.auth == "none":
            return "auth none (any credentials)"
        one, many = ("identity", "identities") if self.auth == "iam" else ("credential", "credentials")
        return f"auth {self.auth} ({self.identities} {one if self.identities == 1 else many})"

    def fields(self) -> dict[str, object]:
        """The facts, for the JSON format."""
        facts = asdict(self)
        for internal in ("admin_token", "admin", "console_built", "local_url", "fixed_urls", "warnings"):
            facts.pop(internal)
        if self.tls is None:
            facts.pop("tls")  # plain HTTP: the facts stay as they were before --tls
        return facts

    def log(self, logger: logging.Logger | None = None) -> None:
        """Log the lines at INFO (to ``sqsemu.banner`` unless ``logger`` is given); the first carries ``fields``.
        Then each of :attr:`warnings` at WARNING, and a stale or incomplete compile as a warning too
        (:func:`sqsemu.compiled.warn_if_stale`)."""
        logger = logger or logging.getLogger(BANNER_LOGGER)
        for index, line in enumerate(self.lines()):
            logger.info(line, extra={"fields": self.fields()} if index == 0 else None)
        for warning in self.warnings:
            logger.warning("%s", warning)
        compiled.warn_if_stale()  # a stale or incomplete compile: said as a warning too, not only in ``build``
