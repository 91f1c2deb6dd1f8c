"""The start-up banner: what is serving where, logged at INFO by ``sqsemu.banner`` once the server listens.

Five lines, e.g.::

    sqsemu 0.1.0 serving SQS at http://127.0.0.1:9324 (region us-east-1, default account 000000000000)
    clock system, fidelity relaxed, data in memory, auth none (any credentials)
    queues: 0 restored, 2 declared
    metrics at http://127.0.0.1:9324/metrics; console: none in this build
    build: compiled (mypyc)

In durable mode the second line reads ``data durable in /abs/dir (fsync normal)``; it ends with the auth mode
(``--auth``): ``auth none (any credentials)``, ``auth sigv4 (2 credentials)`` or ``auth iam (3 identities)``, the
number of ``[[credentials]]`` keys. The last line says ``metrics off
(--no-metrics)`` or ``console off`` when they are switched off (``--no-admin``, or the console's own switch, when
the Config has one), and ``(admin token required)`` when ``--admin-token`` guards them. The last line is
:func:`sqsemu.compiled.status`: ``compiled (mypyc)`` or ``pure Python: <reason>``. With ``--log-format json``
every line is a record of its own and the first carries the facts as fields: ``version``, ``endpoint``,
``region``, ``account``, ``clock``, ``fidelity``, ``data_dir`` (``null``: in memory), ``fsync``,
``queues_restored``, ``queues_declared``, ``metrics_url``, ``console_url`` (``null`` when off or absent), ``build``,
``auth`` (``none``, ``sigv4``, ``iam``) and ``identities`` (the keys it accepts; 0 with ``none``).
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import asdict, dataclass

from sqsemu import compiled
from sqsemu.config import Config
from sqsemu.observability import METRICS_PATH

__all__ = ["BANNER_LOGGER", "CONSOLE_PATH", "Banner", "console_installed"]

BANNER_LOGGER = "sqsemu.banner"
CONSOLE_PATH = "/_sqsemu/ui/"
"""Where the web console is served, when this build has one (the ``sqsemu.console`` package)."""


def console_installed() -> bool:
    """Whether this build has the web console (``sqsemu.console``)."""
    return importlib.util.find_spec("sqsemu.console") is not None


def endpoint_url(config: Config, port: int) -> str:
    """The SQS endpoint clients should use: ``--base-url``, else ``http://<host>:<port>`` (IPv6 in brackets)."""
    if config.base_url:
        return config.base_url
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"http://{host}:{port}"


@dataclass(frozen=True)
class Banner:
    """The facts the banner shows (``data_dir`` None: in memory; a URL None: switched off or absent)."""

    version: str
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

    @classmethod
    def of(cls, config: Config, version: str, port: int, restored: int, data_dir: str | None = None) -> Banner:
        """The banner of a server of ``config`` listening on ``port``, having restored ``restored`` queues from
        ``data_dir`` (its absolute path; None: in memory)."""
        endpoint = endpoint_url(config, port)
        built = console_installed()
        console_on = config.admin and bool(getattr(config, "console", True))  # a Config with a console switch
        return cls(
            version=version,
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
        return [
            f"sqsemu {self.version} serving SQS at {self.endpoint} (region {self.region}, default account "
            f"{self.account})",
            f"clock {self.clock}, fidelity {self.fidelity}, {data}, {self.auth_words()}",
            f"queues: {self.queues_restored} restored, {self.queues_declared} declared",
            f"{metrics}; {console}",
            f"build: {self.build}",
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
        for internal in ("admin_token", "admin", "console_built"):
            facts.pop(internal)
        return facts

    def log(self, logger: logging.Logger | None = None) -> None:
        """Log the lines at INFO (to ``sqsemu.banner`` unless ``logger`` is given); the first carries ``fields``. A
        stale or incomplete compile is then logged as a warning (:func:`sqsemu.compiled.warn_if_stale`)."""
        logger = logger or logging.getLogger(BANNER_LOGGER)
        for index, line in enumerate(self.lines()):
            logger.info(line, extra={"fields": self.fields()} if index == 0 else None)
        compiled.warn_if_stale()  # a stale or incomplete compile: said as a warning too, not only in ``build``
