"""The one configuration object: the CLI, SQSEMU_* environment variables, Docker and tests all fill it.

Every field maps 1:1 onto a ``--flag`` of ``sqsemu`` and an ``SQSEMU_<FIELD>``
environment variable (upper case), except the declarations (``queues``, ``fault_rules``, ``credentials``), which
come from a configuration file (``--config``, see :mod:`sqsemu.declare`) or from code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

ACCOUNT_RE = re.compile(r"^\d{12}$")
AUTH_MODES = ("none", "sigv4")
CLOCKS = ("system", "manual")
FIDELITIES = ("relaxed", "strict")
FSYNC_LEVELS = ("normal", "full")
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
LOG_FORMATS = ("text", "json")
REGION_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # us-east-1, eu-central-1, also a local name such as "local"
ACCESS_KEY_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
"""An access key id sqsemu accepts in ``[[credentials]]``: AWS's are 16 to 128 letters and digits (``AKIA...``);
``_``, ``.`` and ``-`` are allowed for local names (``test-key``). Never ``/``, ``,`` or blanks, which delimit the
SigV4 ``Credential=`` value."""
ADMIN_TOKEN_RE = re.compile(r"^[\x21-\x7e]{1,1024}$")
"""An admin token: 1 to 1024 visible ASCII characters (it travels as an HTTP header value)."""
CORS_ORIGIN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s,]+$")
"""One ``--cors-origins`` entry besides ``*`` and ``null``: ``scheme://host[:port]``, no path (a browser's
``Origin`` header: https://app.example.com, http://localhost:3000)."""
_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool}
_NOT_OPTIONS = {"queues", "fault_rules", "credentials"}


@dataclass(frozen=True)
class QueueDeclaration:
    """One queue to create at start-up (a ``[[queues]]`` entry of the configuration file).

    - ``name``: the queue name (a FIFO queue's ends in ``.fifo``; ``FifoQueue=true`` is then implied).
    - ``account``/``region``: its namespace; ``None`` means the server's ``account_id``/``region``.
    - ``attributes``: ``(name, value)`` pairs as CreateQueue takes them (SQS strings, e.g. ``("DelaySeconds", "5")``).
    - ``tags``: ``(key, value)`` pairs merged onto the queue's tags.
    - ``dead_letter_queue``: name of a queue in the same account and region that becomes the ``deadLetterTargetArn``
      of the queue's ``RedrivePolicy``, with ``max_receive_count`` (1..1000) receives; both or neither.

    Hashable (tuples only), so a :class:`Config` holding declarations stays hashable and comparable.
    """

    name: str
    account: str | None = None
    region: str | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    tags: tuple[tuple[str, str], ...] = ()
    dead_letter_queue: str | None = None
    max_receive_count: int | None = None


@dataclass(frozen=True)
class Credential:
    """One access key sqsemu accepts with ``auth = "sigv4"`` (a ``[[credentials]]`` entry of the configuration file).

    - ``access_key_id``: the key id clients sign with (``ACCESS_KEY_ID_RE``).
    - ``secret_access_key``: its secret (not shown by ``repr``).
    - ``account``: the 12-digit account the key acts as; ``None`` means the key id itself when it is 12 digits,
      else the server's ``account_id`` (the same rule as without authentication).
    """

    access_key_id: str
    secret_access_key: str = field(repr=False)
    account: str | None = None

    def account_for(self, default: str) -> str:
        """The account this key acts as, ``default`` being the server's ``account_id``."""
        if self.account is not None:
            return self.account
        key = self.access_key_id
        return key if ACCOUNT_RE.match(key) else default


@dataclass(frozen=True)
class Config:
    """Server options.

    - ``host``/``port``: where to listen (default 127.0.0.1:9324; ``port=0`` picks a free port).
    - ``region``: region of the default namespace and of queue ARNs (``us-east-1``).
    - ``account_id``: the 12-digit account used when a request's access key id is not itself 12 digits.
    - ``base_url``: fixed scheme://host:port for queue URLs; empty means "from the request's Host header".
    - ``clock``: ``system`` (real time) or ``manual`` (time moves only when advanced).
    - ``log_level``: the server's log level (``info``, ``warning``...), uvicorn's and sqsemu's loggers.
    - ``access_log``: log one line per SQS call and per admin call, at INFO (off by default: it costs throughput;
      see :mod:`sqsemu.observability.accesslog`).
    - ``log_format``: ``text`` (default) or ``json`` (one JSON object per line, for log collectors); see
      :mod:`sqsemu.observability.logformat`.
    - ``fidelity``: ``relaxed`` (default) or ``strict``. Strict adds AWS's two 60-second rules that test suites
      usually trip over: a deleted queue's name is refused for 60 s (QueueDeletedRecently) and a queue can be
      purged once per 60 s (PurgeQueueInProgress).
    - ``faults``: path of a JSON file holding a list of fault-injection rules (the objects ``POST /_sqsemu/faults``
      takes, see ``sqsemu.admin.faults``), loaded when the app is built; empty means none. A file that cannot be
      read or holds a bad rule fails the start-up with a message naming the file and the rule.
    - ``data_dir``: durable mode: keep all state in SQLite in this folder (empty: in memory, the default).
    - ``fsync``: durable mode's sync level: ``normal`` (a committed change survives a crash of the process) or
      ``full`` (it also survives a power loss or OS crash, at the cost of an fsync per group commit).
    - ``config``: path of the TOML configuration file these settings were read from (informational: the CLI reads
      it; from code use :meth:`from_file`). See :mod:`sqsemu.declare` for the format.
    - ``queues``: :class:`QueueDeclaration` s created at start-up, idempotently (not a flag: from the file or code).
    - ``fault_rules``: fault-rule objects (as ``POST /_sqsemu/faults`` takes) added at start-up, before those of the
      ``faults`` file (not a flag; not compared: two configs differing only here are equal).
    - ``cors_origins``: comma-separated browser origins allowed to call the server cross-site
      (``https://app.example.com,http://localhost:3000``; ``*`` for any; empty, the default, for none). Requests a
      browser marks as cross-site or same-site (``Sec-Fetch-Site``) or whose ``Origin`` is another origin are
      refused (403) unless their origin is listed; listed origins get CORS answers (see :mod:`sqsemu.security`).
    - ``auth``: ``none`` (default: any credentials are accepted) or ``sigv4``: every SQS request must be signed
      (Signature Version 4) with one of ``credentials``.
    - ``admin_token``: when set, the ``/_sqsemu/*`` admin routes require it in the ``X-Sqsemu-Admin-Token``
      header (not shown by ``repr``); ``/health`` stays open.
    - ``admin``: ``False`` switches the ``/_sqsemu/*`` admin routes off (404); ``/health`` and ``/metrics`` stay.
    - ``metrics``: serve Prometheus metrics at ``GET /metrics`` (default on; ``False`` answers it 404). The admin
      token and the cross-site rule guard it like the admin routes (see :mod:`sqsemu.observability.metrics`).
    - ``credentials``: the :class:`Credential` s that ``auth = "sigv4"`` accepts (not a flag: from the file's
      ``[[credentials]]`` or code); ``sigv4`` needs at least one.
    """

    host: str = "127.0.0.1"
    port: int = 9324
    region: str = "us-east-1"
    account_id: str = "000000000000"
    base_url: str = ""
    clock: str = "system"
    log_level: str = "info"
    access_log: bool = False
    log_format: str = "text"
    fidelity: str = "relaxed"
    faults: str = ""
    data_dir: str = ""
    fsync: str = "normal"
    config: str = ""
    cors_origins: str = ""
    auth: str = "none"
    admin_token: str = field(default="", repr=False)
    admin: bool = True
    metrics: bool = True
    queues: tuple[QueueDeclaration, ...] = ()
    fault_rules: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    credentials: tuple[Credential, ...] = ()

    def __post_init__(self) -> None:
        """Check every field once, whoever filled it (CLI, environment, file or code): a bad value raises
        ``ValueError`` naming the field, before any server starts. ``log_level`` is stored in lower case."""
        self._check_types()
        if not self.host:
            raise ValueError("host must not be empty")
        if not REGION_RE.match(self.region):
            raise ValueError(
                f"region must be lower-case letters and digits joined by hyphens (us-east-1), got {self.region!r}"
            )
        if self.log_level.lower() not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}, got {self.log_level!r}")
        object.__setattr__(self, "log_level", self.log_level.lower())
        if self.log_format not in LOG_FORMATS:
            raise ValueError(f"log_format must be one of {', '.join(LOG_FORMATS)}, got {self.log_format!r}")
        if not ACCOUNT_RE.match(self.account_id):
            raise ValueError(f"account_id must be 12 digits, got {self.account_id!r}")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")
        if self.fidelity not in FIDELITIES:
            raise ValueError(f"fidelity must be one of {', '.join(FIDELITIES)}, got {self.fidelity!r}")
        if self.fsync not in FSYNC_LEVELS:
            raise ValueError(f"fsync must be one of {', '.join(FSYNC_LEVELS)}, got {self.fsync!r}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0..65535, got {self.port}")
        if self.base_url and not re.match(r"^https?://[^/]+$", self.base_url):
            raise ValueError(f"base_url must look like http://host:port (no path), got {self.base_url!r}")
        # Lists are accepted for convenience and stored as tuples (the dataclass is frozen and hashable).
        object.__setattr__(self, "queues", tuple(self.queues))
        object.__setattr__(self, "fault_rules", tuple(self.fault_rules))
        for declared in self.queues:
            if not isinstance(declared, QueueDeclaration):
                raise ValueError(f"queues must hold QueueDeclaration objects, got {declared!r}")
        self._check_security()

    def _check_security(self) -> None:
        """``cors_origins``, ``auth``, ``admin_token`` and ``credentials`` (stored as a tuple)."""
        for origin in self.cors_origins.split(","):
            origin = origin.strip()
            if origin and origin not in ("*", "null") and not CORS_ORIGIN_RE.fullmatch(origin):
                raise ValueError(
                    "cors_origins must be a comma-separated list of origins like https://app.example.com or "
                    f"http://localhost:3000 (scheme://host[:port], no path), or *, got {origin!r}"
                )
        if self.auth not in AUTH_MODES:
            raise ValueError(f"auth must be one of {', '.join(AUTH_MODES)}, got {self.auth!r}")
        if self.admin_token and not ADMIN_TOKEN_RE.fullmatch(self.admin_token):
            raise ValueError("admin_token must be 1 to 1024 visible ASCII characters (no blanks)")
        object.__setattr__(self, "credentials", tuple(self.credentials))
        seen: set[str] = set()
        for credential in self.credentials:
            if not isinstance(credential, Credential):
                raise ValueError(f"credentials must hold Credential objects, got {type(credential).__name__}")
            key = credential.access_key_id
            if not isinstance(key, str) or not ACCESS_KEY_ID_RE.fullmatch(key):
                raise ValueError(
                    f"credentials: access_key_id must be 1 to 128 letters, digits, '_', '.' or '-', got {key!r}"
                )
            if key in seen:
                raise ValueError(f"credentials: access_key_id {key!r} is declared twice")
            seen.add(key)
            if not isinstance(credential.secret_access_key, str) or not credential.secret_access_key:
                raise ValueError(f"credentials: the secret_access_key of {key!r} must be a non-empty string")
            if credential.account is not None and (
                not isinstance(credential.account, str) or not ACCOUNT_RE.fullmatch(credential.account)
            ):
                raise ValueError(f"credentials: the account of {key!r} must be 12 digits, got {credential.account!r}")
        if self.auth == "sigv4" and not self.credentials:
            raise ValueError(
                'auth "sigv4" needs at least one access key: declare [[credentials]] in the configuration file '
                '(access_key_id, secret_access_key, account)'
            )

    def _check_types(self) -> None:
        """Each option field holds its declared type (a bool is not accepted for an int)."""
        for spec in fields(self):
            expected = _TYPES.get(str(spec.type))
            if expected is None:
                continue  # the declarations: checked below
            value = getattr(self, spec.name)
            name = spec.name
            if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            if expected is not int and not isinstance(value, expected):
                raise ValueError(f"{name} must be a {expected.__name__}, got {value!r}")

    @classmethod
    def field_names(cls) -> list[str]:
        """Names of the fields that are command-line options (``--flag`` / ``SQSEMU_*``), in declaration order."""
        return [f.name for f in fields(cls) if f.name not in _NOT_OPTIONS]

    @classmethod
    def from_file(cls, path: str, **overrides: Any) -> Config:
        """The configuration a TOML file declares (see :mod:`sqsemu.declare`), with ``overrides`` winning over the
        file's ``[server]`` values, and its queues, fault rules and credentials.

        Raises :class:`sqsemu.declare.ConfigFileError` (a ``ValueError``) naming the file and the key at fault.
        """
        from sqsemu.declare import load_file

        loaded = load_file(path)
        values: dict[str, Any] = {**loaded.server, "config": str(path), "queues": loaded.queues}
        values["fault_rules"] = loaded.fault_rules
        values["credentials"] = loaded.credentials
        values.update(overrides)
        return cls(**values)
