"""The one configuration object: the CLI, SQSEMU_* environment variables, Docker and tests all fill it.

Every option field (its metadata made by :func:`sqsemu.optionspec.option`) maps 1:1 onto a ``--flag`` of ``sqsemu``,
an ``SQSEMU_<FIELD>`` environment variable (upper case) and a key of the configuration file's ``[server]`` table;
the declarations (``queues``, ``topics``, ``fault_rules``, ``credentials``) come from a configuration file
(``--config``, see :mod:`sqsemu.declare`) or from code. To add an option, see :mod:`sqsemu.options`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqsemu.optionspec import Option, option, options_of

ACCOUNT_RE = re.compile(r"^\d{12}$")
AUTH_MODES = ("none", "sigv4", "iam")
CLOCKS = ("system", "manual")
FIDELITIES = ("relaxed", "strict")
FSYNC_LEVELS = ("normal", "full")
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
LOG_FORMATS = ("text", "json")
COMPAT_MODES = ("none", "localstack")
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
class SubscriptionDeclaration:
    """One subscription of a declared topic (a ``[[topics.subscriptions]]`` entry of the configuration file).

    - ``protocol``: as Subscribe takes it (``sqs``, ``http``, ``https``, ``lambda``, ``email``...).
    - ``endpoint``: as Subscribe takes it; for ``sqs`` a queue ARN, or a queue name in the topic's account and region.
    - ``attributes``: ``(name, value)`` pairs as Subscribe takes them (``("RawMessageDelivery", "true")``,
      ``("FilterPolicy", "{...}")``).
    - ``dead_letter_queue``: a queue name (in the topic's account and region) or ARN that becomes the
      ``deadLetterTargetArn`` of the subscription's ``RedrivePolicy``.
    """

    protocol: str
    endpoint: str
    attributes: tuple[tuple[str, str], ...] = ()
    dead_letter_queue: str | None = None


@dataclass(frozen=True)
class TopicDeclaration:
    """One SNS topic to create at start-up, with its subscriptions (a ``[[topics]]`` entry of the configuration file).

    - ``name``: the topic name (a FIFO topic's ends in ``.fifo``; ``FifoTopic=true`` is then implied).
    - ``account``/``region``: its namespace; ``None`` means the server's ``account_id``/``region``.
    - ``attributes``: ``(name, value)`` pairs as CreateTopic takes them.
    - ``tags``: ``(key, value)`` pairs merged onto the topic's tags.
    - ``subscriptions``: :class:`SubscriptionDeclaration` s, made by the topic's account, confirmed at once.

    Hashable (tuples only), as :class:`QueueDeclaration`.
    """

    name: str
    account: str | None = None
    region: str | None = None
    attributes: tuple[tuple[str, str], ...] = ()
    tags: tuple[tuple[str, str], ...] = ()
    subscriptions: tuple[SubscriptionDeclaration, ...] = ()


@dataclass(frozen=True)
class Credential:
    """One access key sqsemu accepts with ``auth = "sigv4"`` (a ``[[credentials]]`` entry of the configuration file).

    - ``access_key_id``: the key id clients sign with (``ACCESS_KEY_ID_RE``).
    - ``secret_access_key``: its secret (not shown by ``repr``).
    - ``account``: the 12-digit account the key acts as; ``None`` means the key id itself when it is 12 digits,
      else the server's ``account_id`` (the same rule as without authentication).
    - ``principal`` (``auth = "iam"``): the IAM user or role ARN the key belongs to
      (``arn:aws:iam::111111111111:role/orders-service``); ``None``: the account's root user. Its account is the
      key's account, as in AWS an identity acts in the account its ARN names: ``account`` may be left out, and
      one that disagrees is refused (``Config`` raises ValueError, whatever ``auth`` is).
    - ``policies`` (``auth = "iam"``): the principal's identity-based policy documents, each inline JSON text or
      the path of a JSON file (``sqsemu.security.identity``); a root user has none.
    - ``trust_policy`` (a role's, ``auth = "iam"``): the role's trust policy, inline JSON text or a file's path:
      who may ``sts:AssumeRole`` it (``sqsemu.security.roles``); None: the role's own account (its users and roles
      whose identity-based policies allow ``sts:AssumeRole`` on it), as the IAM console's "This account" trust.
    - ``max_session_duration`` (a role's): the longest session ``AssumeRole`` gives, seconds, 3,600 to 43,200 (IAM
      ``CreateRole``'s ``MaxSessionDuration``); None: 3,600, AWS's default.
    """

    access_key_id: str
    secret_access_key: str = field(repr=False)
    account: str | None = None
    principal: str | None = None
    policies: tuple[str, ...] = ()
    trust_policy: str | None = None
    max_session_duration: int | None = None

    def account_for(self, default: str) -> str:
        """The account this key acts as, ``default`` being the server's ``account_id``: ``account``, else the
        account of ``principal``'s ARN, else the key id when it is 12 digits, else ``default``."""
        if self.account is not None:
            return self.account
        named = principal_account(self.principal)
        if named is not None:
            return named
        key = self.access_key_id
        return key if ACCOUNT_RE.match(key) else default


ROLE_SESSION_BOUNDS = (3600, 43200)
"""The bounds of a role's ``MaxSessionDuration`` (seconds; IAM API Reference, "CreateRole")."""


def _check_role_settings(credential: Credential) -> None:
    """A credential's ``trust_policy`` and ``max_session_duration``: a role's only, a string and an integer of
    :data:`ROLE_SESSION_BOUNDS` (the trust policy's grammar is checked under ``auth = "iam"``:
    ``sqsemu.security.roles``). Raises ValueError naming the key."""
    key = credential.access_key_id
    if credential.trust_policy is None and credential.max_session_duration is None:
        return
    principal = credential.principal
    if not (isinstance(principal, str) and principal_account(principal) and ":role/" in principal):
        raise ValueError(
            f"credentials: {key!r} has a trust_policy or max_session_duration but its principal is not an IAM role "
            "(arn:aws:iam::<account>:role/<name>): only a role is assumed"
        )
    if credential.trust_policy is not None and not isinstance(credential.trust_policy, str):
        raise ValueError(f"credentials: the trust_policy of {key!r} must be a JSON text or a file path")
    duration = credential.max_session_duration
    if duration is not None:
        low, high = ROLE_SESSION_BOUNDS
        if isinstance(duration, bool) or not isinstance(duration, int) or not low <= duration <= high:
            raise ValueError(
                f"credentials: the max_session_duration of {key!r} must be an integer from {low} to {high} "
                f"(seconds), got {duration!r}"
            )


def principal_account(principal: str | None) -> str | None:
    """The 12-digit account an IAM ARN names (``arn:aws:iam::111111111111:role/x`` -> ``111111111111``); None for
    None or a text that is not such an ARN (``sqsemu.security.evaluate.principal_for`` says what is wrong with it
    under ``auth = "iam"``)."""
    if not isinstance(principal, str):
        return None
    parts = principal.split(":", 5)
    if len(parts) == 6 and parts[0] == "arn" and parts[2] == "iam" and ACCOUNT_RE.fullmatch(parts[4]):
        return parts[4]
    return None


@dataclass(frozen=True)
class Config:
    """Server options, and the declarations applied at start-up.

    Each option field carries its help text, choices, bounds... in its metadata (``option(...)``, see
    :mod:`sqsemu.options`), from which the ``--flag``, the ``SQSEMU_*`` variable, the ``[server]`` key and the
    options table of docs/configuration.md follow. Notes the help texts leave out:

    - ``port=0`` picks a free port; ``log_level`` is stored in lower case.
    - ``faults``: the rules are the objects ``POST /_sqsemu/faults`` takes (see ``sqsemu.admin.faults``), loaded
      when the app is built; a file that cannot be read or holds a bad rule fails the start-up with a message
      naming the file and the rule.
    - ``max_connections`` is uvicorn's ``limit_concurrency``, which counts running requests too.
    - ``config`` is informational: the CLI reads the file; from code use
      :func:`sqsemu.declare.config_from_file`. See
      :mod:`sqsemu.declare` for the format.
    - ``cors_origins``: requests a browser marks as cross-site or same-site (``Sec-Fetch-Site``) or whose
      ``Origin`` is another origin are refused (403) unless their origin is listed (see :mod:`sqsemu.security`).
    - ``admin_token`` is not shown by ``repr``; ``/health`` stays open whatever the admin options.

    The declarations, which are not options (no flag, variable or ``[server]`` key; from the file or code):

    - ``queues``: :class:`QueueDeclaration` s created at start-up, idempotently.
    - ``topics``: :class:`TopicDeclaration` s (SNS topics with their subscriptions) created at start-up, after the
      queues, idempotently.
    - ``fault_rules``: fault-rule objects (as ``POST /_sqsemu/faults`` takes) added at start-up, before those of the
      ``faults`` file (not compared: two configs differing only here are equal).
    - ``credentials``: the :class:`Credential` s that ``auth = "sigv4"`` accepts (the file's ``[[credentials]]``);
      ``sigv4`` needs at least one.
    """

    host: str = field(
        default="127.0.0.1", metadata=option("Interface to listen on (`0.0.0.0` for all, as in the Docker image).")
    )
    port: int = field(default=9324, metadata=option("TCP port (`0` picks a free one).", bounds=(0, 65535)))
    region: str = field(default="us-east-1", metadata=option("Region of the default namespace and of queue ARNs."))
    account_id: str = field(
        default="000000000000",
        metadata=option("12-digit account used when a request's access key id is not itself 12 digits."),
    )
    base_url: str = field(
        default="",
        metadata=option("Fixed `scheme://host:port` for queue URLs.", default_text="from the request's `Host` header"),
    )
    tls: bool = field(
        default=False,
        metadata=option(
            "Serve HTTPS only, with a certificate from a local CA that sqsemu makes once (or the operator's own: "
            "`--tls-cert`); the banner says where the CA is and how each client trusts it.",
            readme="See [HTTPS](tls.md).",
        ),
    )
    tls_cert: str = field(
        default="",
        metadata=option(
            "With `--tls`: the operator's own certificate (PEM, the chain after it) instead of the local CA's; "
            "its key in `--tls-key` or in the same file.",
            default_text="one from the local CA",
            metavar="PATH",
            path=True,
        ),
    )
    tls_key: str = field(
        default="",
        metadata=option(
            "The private key (PEM, unencrypted) of `--tls-cert`.",
            default_text="in the `--tls-cert` file",
            metavar="PATH",
            path=True,
        ),
    )
    tls_dir: str = field(
        default="",
        metadata=option(
            "With `--tls`: the folder of the local CA (`ca.pem`, `truststore.p12`, the server certificates), made "
            "once and reused.",
            default_text="`tls/` in `--data-dir`, else a per-user folder",
            metavar="PATH",
            path=True,
        ),
    )
    clock: str = field(
        default="system",
        metadata=option(
            "`system`: real time; `manual`: time moves only via `POST /_sqsemu/clock/advance`.", choices=CLOCKS
        ),
    )
    log_level: str = field(
        default="info", metadata=option("Server log level.", choices=LOG_LEVELS, case_sensitive=False)
    )
    access_log: bool = field(
        default=False,
        metadata=option(
            "Log one line per SQS call (action, queue, protocol, status, error code, message count, latency, request "
            "id) and per admin call, at INFO.",
            readme="See [Logs and metrics](observability.md).",
        ),
    )
    log_format: str = field(
        default="text",
        metadata=option(
            "`text`: one readable line per record; `json`: one JSON object per line, for log collectors.",
            choices=LOG_FORMATS,
        ),
    )
    fidelity: str = field(
        default="relaxed",
        metadata=option(
            "`strict`: also enforce AWS's 60-second rules (`QueueDeletedRecently`, `PurgeQueueInProgress`).",
            readme="A deleted queue's name is then refused for 60 s and a queue can be purged once per 60 s; "
            "`relaxed` allows both at once, which is what test suites that recreate and purge queues between "
            "tests want.",
            choices=FIDELITIES,
        ),
    )
    faults: str = field(
        default="",
        metadata=option(
            "JSON file with a list of fault-injection rules (as `POST /_sqsemu/faults` takes), loaded at start-up.",
            readme="See [Fault injection](testing.md#fault-injection).",
            metavar="PATH",
            path=True,
        ),
    )
    data_dir: str = field(
        default="",
        metadata=option(
            "Durable mode: keep all state in SQLite in this folder.",
            readme="See [Durable mode](durable.md).",
            default_text="in memory",
            path=True,
        ),
    )
    fsync: str = field(
        default="normal",
        metadata=option(
            "Durable mode: `normal` survives a crash of the process; `full` also a power loss (an fsync per group "
            "commit).",
            choices=FSYNC_LEVELS,
        ),
    )
    load_state: str = field(
        default="",
        metadata=option(
            "Saved-state file (as `GET /_sqsemu/state` or `sqsemu state save` writes it) whose state replaces the "
            "server's at start-up, before the configuration file's declarations apply.",
            readme="See [Saved states](state.md).",
            metavar="PATH",
            path=True,
        ),
    )
    request_timeout: int = field(
        default=30,
        metadata=option(
            "Seconds a client has to send a whole request, head and body; a slower one is answered 408 and its "
            "connection closed. A long poll's wait comes after its request was read and is not cut.",
            bounds=(1, 3600),
            unit="seconds",
            metavar="SECONDS",
        ),
    )
    max_connections: int = field(
        default=4096,
        metadata=option(
            "Open connections served at once; a client beyond them is answered 503.",
            readme="That is a retryable error for the SDKs, where the kernel's backlog would leave the client waiting.",
            bounds=(1, 1_000_000),
        ),
    )
    forwarded_allow_ips: str = field(
        default="",
        metadata=option(
            "Comma-separated addresses or networks of the proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` "
            "headers are believed (`10.0.0.5,172.16.0.0/12`; `*` for any peer); empty: those headers are ignored.",
            readme="Without it the client's address (`aws:SourceIp`) and the scheme (`aws:SecureTransport`, queue "
            'URLs) come from the socket: any client can write those headers (docs/security.md, "Behind a proxy").',
        ),
    )
    cors_origins: str = field(
        default="",
        metadata=option(
            "Comma-separated browser origins allowed to call sqsemu cross-site, with CORS answers "
            "(`https://app.example.com,http://localhost:3000`; `*` for any).",
            readme="See [Security](security.md).",
            default_text="none: browsers' cross-site requests are refused",
            metavar="ORIGINS",
        ),
    )
    auth: str = field(
        default="none",
        metadata=option(
            "`sigv4`: every SQS request must be signed (Signature Version 4) with a key of the config file's "
            "`[[credentials]]`; `iam`: signed, and each call is allowed or denied by the key's identity policies "
            "and the queue's policy, as AWS decides; `none`: any credentials are accepted.",
            choices=AUTH_MODES,
        ),
    )
    admin_token: str = field(
        default="",
        repr=False,
        metadata=option(
            "Require this token in the `X-Sqsemu-Admin-Token` header of the `/_sqsemu/*` admin routes (401 without "
            "it, 403 when wrong).",
            default_text="none: the admin routes are open",
            metavar="TOKEN",
        ),
    )
    admin: bool = field(
        default=True,
        metadata=option(
            "Serve the `/_sqsemu/*` admin routes (clock, peek, reset, faults, the web console); `--no-admin` answers "
            "them 404. `/health` stays."
        ),
    )
    metrics: bool = field(
        default=True,
        metadata=option(
            "Serve Prometheus metrics at `GET /metrics` (guarded like the admin routes); `--no-metrics` answers it "
            "404.",
            readme="See [Logs and metrics](observability.md).",
        ),
    )
    console: bool = field(
        default=True,
        metadata=option(
            "Serve the web console at `/_sqsemu/ui/` (a browser opening `/` is sent there); it is part of the admin "
            "routes, so `--no-admin` switches it off too; `--no-console` answers its paths 404.",
            readme="See [Web console](console.md).",
        ),
    )
    realism: str = field(
        default="",
        metadata=option(
            "Realism mode: make SQS's weak guarantees happen on purpose, as `EFFECT=VALUE,...` with the effects "
            "`duplicates`, `reorder`, `short_poll_sampling`, `lost_answers` (probabilities 0 to 1), `reorder_window` "
            "(messages, 2 to 1000) and `attribute_delay` (seconds, 0 to 60).",
            readme="A queue's `sqsemu:realism` tag overrides it. See [Realism mode](realism.md).",
            default_text="off",
            metavar="SPEC",
        ),
    )
    realism_seed: int = field(
        default=0,
        metadata=option(
            "Seed of the realism mode's random decisions: the same seed and the same calls give the same run.",
            bounds=(0, 2**53 - 1),
            metavar="N",
        ),
    )
    lambda_endpoint: str = field(
        default="",
        metadata=option(
            "Lambda Invoke API endpoint (`http://host:port`) that event source mappings invoke their functions at "
            "(`sam local start-lambda`, serverless-offline, the runtime interface emulator); the config file's "
            "`[functions.NAME]` tables name one per function.",
            readme="See [Lambda consumers](lambda.md).",
            default_text="none: in-process Python functions only",
            metavar="URL",
        ),
    )
    compat: str = field(
        default="none",
        metadata=option(
            "Answer as a drop-in for another emulator: `localstack` (its SQS part: port 4566 unless `--port` or "
            "`SQSEMU_PORT` says otherwise, `/_localstack/health`, `/_aws/sqs/messages`, the `Ready.` line, "
            "`ready.d` init scripts) or `none`.",
            readme="See [Coming from LocalStack](coming-from-localstack.md).",
            choices=COMPAT_MODES,
        ),
    )
    init_dir: str = field(
        default="",
        metadata=option(
            "With `--compat localstack`: the folder whose `ready.d` scripts run once the server is ready "
            "(LocalStack's init hooks), or a `ready.d` folder itself; one that does not exist, or holds scripts "
            "but no `ready.d`, is refused at start.",
            default_text="`/etc/localstack/init`",
            metavar="PATH",
            path=True,
        ),
    )
    config: str = field(
        default="",
        metadata=option(
            "TOML file with `[server]` options, `[[queues]]` to create, `[[faults]]` rules and `[[credentials]]` "
            "(or an ElasticMQ `.conf` file); flags and `SQSEMU_*` variables win over its `[server]` values.",
            readme="See [Configuration file](#configuration-file).",
            metavar="PATH",
            in_file=False,
        ),
    )
    queues: tuple[QueueDeclaration, ...] = ()
    topics: tuple[TopicDeclaration, ...] = ()
    fault_rules: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    credentials: tuple[Credential, ...] = ()
    file_warnings: tuple[str, ...] = field(default=(), compare=False)
    """Warnings found in reading the configuration file (the keys of an ElasticMQ file that sqsemu does not use),
    logged (logger ``sqsemu.config``) when a server starts with this Config: the command line reads the file
    before it sets up logging, and logs them once it has, in the log's format."""

    def __post_init__(self) -> None:
        """Check every field once, whoever filled it (CLI, environment, file or code): a bad value raises
        ``ValueError`` naming the field, before any server starts. ``log_level`` is stored in lower case."""
        self._check_types()
        self._check_options()
        if not self.host:
            raise ValueError("host must not be empty")
        if not REGION_RE.match(self.region):
            raise ValueError(
                f"region must be lower-case letters and digits joined by hyphens (us-east-1), got {self.region!r}"
            )
        if not ACCOUNT_RE.match(self.account_id):
            raise ValueError(f"account_id must be 12 digits, got {self.account_id!r}")
        if self.realism:
            from sqsemu.realismspec import parse_spec

            parse_spec(self.realism)  # RealismSpecError is a ValueError naming the effect at fault
        if self.lambda_endpoint and not re.match(r"^https?://[^/?#\s]+/?$", self.lambda_endpoint):
            raise ValueError(f"lambda_endpoint must look like http://host:port (no path), got {self.lambda_endpoint!r}")
        if self.forwarded_allow_ips:
            from sqsemu.security.forwarded import TrustedProxies

            try:
                TrustedProxies(self.forwarded_allow_ips)
            except ValueError as exc:
                raise ValueError(f"forwarded_allow_ips: {exc}") from None
        if self.base_url and not re.match(r"^https?://[^/]+$", self.base_url):
            raise ValueError(f"base_url must look like http://host:port (no path), got {self.base_url!r}")
        if self.tls and self.tls_key and not self.tls_cert:
            raise ValueError("tls_key needs tls_cert: the certificate the key belongs to")
        # Lists are accepted for convenience and stored as tuples (the dataclass is frozen and hashable).
        object.__setattr__(self, "queues", tuple(self.queues))
        object.__setattr__(self, "fault_rules", tuple(self.fault_rules))
        object.__setattr__(self, "file_warnings", tuple(self.file_warnings))
        for declared in self.queues:
            if not isinstance(declared, QueueDeclaration):
                raise ValueError(f"queues must hold QueueDeclaration objects, got {declared!r}")
        object.__setattr__(self, "topics", tuple(self.topics))
        for topic in self.topics:
            if not isinstance(topic, TopicDeclaration):
                raise ValueError(f"topics must hold TopicDeclaration objects, got {topic!r}")
        self._check_security()

    def _check_security(self) -> None:
        """``cors_origins``, ``admin_token`` and ``credentials`` (stored as a tuple); ``auth`` needs credentials."""
        for origin in self.cors_origins.split(","):
            origin = origin.strip()
            if origin and origin not in ("*", "null") and not CORS_ORIGIN_RE.fullmatch(origin):
                raise ValueError(
                    "cors_origins must be a comma-separated list of origins like https://app.example.com or "
                    f"http://localhost:3000 (scheme://host[:port], no path), or *, got {origin!r}"
                )
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
            _check_role_settings(credential)
            named = principal_account(credential.principal)
            if credential.account is not None and named is not None and named != credential.account:
                raise ValueError(
                    f"credentials: {key!r} has account {credential.account} but its principal "
                    f"{credential.principal} is in account {named}: an identity acts in its principal's account "
                    "(leave account out, or give the principal's)"
                )
        if self.auth in ("sigv4", "iam") and not self.credentials:
            raise ValueError(
                f'auth "{self.auth}" needs at least one access key: declare [[credentials]] in the configuration '
                "file (access_key_id, secret_access_key, account)"
            )
        if self.auth == "iam":
            from sqsemu.security.identity import identities_error

            error = identities_error(self.credentials, self.account_id)
            if error is None:
                from sqsemu.security.roles import roles_error

                error = roles_error(self.credentials, self.account_id)
            if error is not None:
                raise ValueError(error)

    def _check_types(self) -> None:
        """Each option field holds its declared type (a bool is not accepted for an int)."""
        for item in options_of(type(self)):
            value = getattr(self, item.name)
            name = item.name
            if item.type is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(item.bad_integer(value))
            if item.type is not int and not isinstance(value, item.type):
                raise ValueError(f"{name} must be a {item.type.__name__}, got {value!r}")

    def _check_options(self) -> None:
        """What the options' metadata declares: ``choices`` (stored in lower case when not case-sensitive) and
        ``bounds``."""
        for item in options_of(type(self)):
            value = getattr(self, item.name)
            spec = item.spec
            if spec.choices:
                if (value if spec.case_sensitive else value.lower()) not in spec.choices:
                    raise ValueError(f"{item.name} must be one of {', '.join(spec.choices)}, got {value!r}")
                if not spec.case_sensitive:
                    object.__setattr__(self, item.name, value.lower())
            if spec.bounds is not None:
                low, high = spec.bounds
                if not low <= value <= high:
                    raise ValueError(item.bad_integer(value))

    @classmethod
    def field_names(cls) -> list[str]:
        """Names of the fields that are options (``--flag`` / ``SQSEMU_*`` / ``[server]`` key), in declaration order:
        those whose metadata holds an :class:`~sqsemu.optionspec.OptionSpec`."""
        return [item.name for item in options_of(cls)]


def config_options() -> tuple[Option, ...]:
    """The options of :class:`Config`, in declaration order (see :mod:`sqsemu.optionspec`)."""
    return options_of(Config)
