"""The one configuration object: the CLI, SQSEMU_* environment variables, Docker and tests all fill it.

Every field maps 1:1 onto a ``--flag`` of ``sqsemu`` and an ``SQSEMU_<FIELD>``
environment variable (upper case), except the declarations (``queues``, ``fault_rules``), which come from a
configuration file (``--config``, see :mod:`sqsemu.declare`) or from code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

ACCOUNT_RE = re.compile(r"^\d{12}$")
CLOCKS = ("system", "manual")
FIDELITIES = ("relaxed", "strict")
FSYNC_LEVELS = ("normal", "full")
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
REGION_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # us-east-1, eu-central-1, also a local name such as "local"
_TYPES: dict[str, type] = {"str": str, "int": int, "bool": bool}
_NOT_OPTIONS = {"queues", "fault_rules"}


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
class Config:
    """Server options.

    - ``host``/``port``: where to listen (default 127.0.0.1:9324; ``port=0`` picks a free port).
    - ``region``: region of the default namespace and of queue ARNs (``us-east-1``).
    - ``account_id``: the 12-digit account used when a request's access key id is not itself 12 digits.
    - ``base_url``: fixed scheme://host:port for queue URLs; empty means "from the request's Host header".
    - ``clock``: ``system`` (real time) or ``manual`` (time moves only when advanced).
    - ``log_level``: uvicorn log level (``info``, ``warning``...).
    - ``access_log``: log each request (off by default: it costs throughput).
    - ``fidelity``: ``relaxed`` (default) or ``strict``. Strict adds AWS's two 60-second rules that test suites
      usually trip over: a deleted queue's name is refused for 60 s (QueueDeletedRecently) and a queue can be
      purged once per 60 s (PurgeQueueInProgress).
    - ``faults``: path of a JSON file holding a list of fault-injection rules (the objects ``POST /_sqsemu/faults``
      takes, see ``sqsemu.admin.faults``), loaded when the app is built; empty means none. A file that cannot be
      read or holds a bad rule fails the start-up with a message naming the file and the rule.
    - ``data_dir``: durable mode: keep all state in SQLite in this folder (empty: in memory, the default).
    - ``fsync``: durable mode's sync level: ``normal`` (a committed change survives a crash of the process) or
      ``full`` (it also survives a power loss or OS crash, at the cost of an fsync per group commit).
    - ``request_timeout``: seconds a client has to send a whole request, head and body (default 30); a connection
      that has not done so is answered 408 and closed. The wait of a long poll comes after its request was read
      and is not limited by this.
    - ``max_connections``: open connections served at once (default 4096); a client beyond them is answered 503
      (uvicorn's ``limit_concurrency``, which counts running requests too).
    - ``config``: path of the TOML configuration file these settings were read from (informational: the CLI reads
      it; from code use :meth:`from_file`). See :mod:`sqsemu.declare` for the format.
    - ``queues``: :class:`QueueDeclaration` s created at start-up, idempotently (not a flag: from the file or code).
    - ``fault_rules``: fault-rule objects (as ``POST /_sqsemu/faults`` takes) added at start-up, before those of the
      ``faults`` file (not a flag; not compared: two configs differing only here are equal).
    """

    host: str = "127.0.0.1"
    port: int = 9324
    region: str = "us-east-1"
    account_id: str = "000000000000"
    base_url: str = ""
    clock: str = "system"
    log_level: str = "info"
    access_log: bool = False
    fidelity: str = "relaxed"
    faults: str = ""
    data_dir: str = ""
    fsync: str = "normal"
    request_timeout: int = 30
    max_connections: int = 4096
    config: str = ""
    queues: tuple[QueueDeclaration, ...] = ()
    fault_rules: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)

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
        if not ACCOUNT_RE.match(self.account_id):
            raise ValueError(f"account_id must be 12 digits, got {self.account_id!r}")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")
        if self.fidelity not in FIDELITIES:
            raise ValueError(f"fidelity must be one of {', '.join(FIDELITIES)}, got {self.fidelity!r}")
        if self.fsync not in FSYNC_LEVELS:
            raise ValueError(f"fsync must be one of {', '.join(FSYNC_LEVELS)}, got {self.fsync!r}")
        if not 1 <= self.request_timeout <= 3600:
            raise ValueError(f"request_timeout must be 1..3600 seconds, got {self.request_timeout}")
        if not 1 <= self.max_connections <= 1_000_000:
            raise ValueError(f"max_connections must be 1..1000000, got {self.max_connections}")
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
        file's ``[server]`` values, and its queues and fault rules.

        Raises :class:`sqsemu.declare.ConfigFileError` (a ``ValueError``) naming the file and the key at fault.
        """
        from sqsemu.declare import load_file

        loaded = load_file(path)
        values: dict[str, Any] = {**loaded.server, "config": str(path), "queues": loaded.queues}
        values["fault_rules"] = loaded.fault_rules
        values.update(overrides)
        return cls(**values)
