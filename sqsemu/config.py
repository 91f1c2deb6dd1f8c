"""The one configuration object: the CLI, SQSEMU_* environment variables, Docker and tests all fill it.

ARCHITECTURE principle 8. Every field maps 1:1 onto a ``--flag`` of ``sqsemu`` and an ``SQSEMU_<FIELD>``
environment variable (upper case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

ACCOUNT_RE = re.compile(r"^\d{12}$")
CLOCKS = ("system", "manual")
FIDELITIES = ("relaxed", "strict")


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
    extra: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not ACCOUNT_RE.match(self.account_id):
            raise ValueError(f"account_id must be 12 digits, got {self.account_id!r}")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")
        if self.fidelity not in FIDELITIES:
            raise ValueError(f"fidelity must be one of {', '.join(FIDELITIES)}, got {self.fidelity!r}")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0..65535, got {self.port}")
        if self.base_url and not re.match(r"^https?://[^/]+$", self.base_url):
            raise ValueError(f"base_url must look like http://host:port (no path), got {self.base_url!r}")

    @classmethod
    def field_names(cls) -> list[str]:
        """Names of the user-settable fields, in declaration order."""
        return [f.name for f in fields(cls) if f.name != "extra"]
