"""The config file's tables for event source mappings (``sqsemu --config FILE``)::

    [[event_source_mappings]]
    queue = "orders"                      # a queue of the server's account and region, or
    # event_source_arn = "arn:aws:sqs:us-east-1:000000000000:orders"
    function = "process-orders"
    batch_size = 10                       # optional, as CreateEventSourceMapping's parameters
    maximum_batching_window = 0
    function_response_types = ["ReportBatchItemFailures"]
    maximum_concurrency = 5               # or provisioned mode (not both):
    # minimum_pollers = 2                 #   ProvisionedPollerConfig, each optional (2 and 200 by default)
    # maximum_pollers = 200
    filter_patterns = ['{"body": {"kind": ["order"]}}']
    metrics = ["EventCount"]              # MetricsConfig
    kms_key_arn = "arn:aws:kms:us-east-1:000000000000:key/orders"   # KMSKeyArn (kept and answered only)
    tags = { team = "orders" }            # the mapping's tags (replace those it has at each start)
    enabled = true

    [functions.process-orders]            # where a function is invoked (else --lambda-endpoint)
    endpoint = "http://127.0.0.1:9001"
    function_name = "function"            # the name to invoke there (the runtime interface emulator's)
    role = "arn:aws:iam::000000000000:role/orders-consumer"   # the execution role (--auth iam)
    policies = ["consumer-policy.json"]   # the role's identity-based policies (JSON text or file path)
    account = "000000000000"              # the function's account: its role's, else this, else --account-id

A function's ``role`` is the IAM role ARN it runs as and ``policies`` that role's identity-based policies (each
inline JSON text or the path of a JSON file, as ``[[credentials]]`` ``policies``); with ``--auth iam`` its mappings
poll and delete as that role (``sqsemu.eventsource.registry``). A declared function belongs to one account
(``sqsemu.eventsource.functions``): its role's (a Lambda function's execution role is of its own account), else its
``account`` (12 digits), else the server's ``--account-id``; an ``account`` that is not its role's is refused. A
table gives ``endpoint``, ``role``, ``account`` or several (without ``endpoint`` the function runs in-process or at
``--lambda-endpoint``). A declared mapping (``[[event_source_mappings]]``) belongs to its function's account when
the function is declared, else to its queue's.

:func:`check_document` checks both tables when ``sqsemu.declare`` reads the file; :func:`load_declarations`
reads them again when the server starts. Errors are ``ValueError`` naming the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqsemu.eventsource.functions import Endpoint

TABLES = ("event_source_mappings", "functions")
"""The top-level keys of the config file this module reads."""

MAPPING_KEYS = {
    "queue": str,
    "account": str,
    "region": str,
    "event_source_arn": str,
    "function": str,
    "batch_size": int,
    "maximum_batching_window": int,
    "function_response_types": list,
    "maximum_concurrency": int,
    "minimum_pollers": int,
    "maximum_pollers": int,
    "filter_patterns": list,
    "metrics": list,
    "kms_key_arn": str,
    "tags": dict,
    "enabled": bool,
}
FUNCTION_KEYS = {"endpoint": str, "function_name": str, "role": str, "policies": list, "account": str}


@dataclass(frozen=True)
class DeclaredMapping:
    """One ``[[event_source_mappings]]`` entry."""

    function: str
    queue: str | None = None
    account: str | None = None
    region: str | None = None
    event_source_arn: str | None = None
    batch_size: int | None = None
    maximum_batching_window: int | None = None
    function_response_types: tuple[str, ...] | None = None
    maximum_concurrency: int | None = None
    minimum_pollers: int | None = None
    maximum_pollers: int | None = None
    filter_patterns: tuple[str, ...] | None = None
    metrics: tuple[str, ...] | None = None
    kms_key_arn: str | None = None
    tags: Mapping[str, Any] | None = None
    enabled: bool = True

    def parameters(self) -> dict[str, Any]:
        """The entry as CreateEventSourceMapping's parameters."""
        out: dict[str, Any] = {"Enabled": self.enabled}
        if self.batch_size is not None:
            out["BatchSize"] = self.batch_size
        if self.maximum_batching_window is not None:
            out["MaximumBatchingWindowInSeconds"] = self.maximum_batching_window
        if self.function_response_types is not None:
            out["FunctionResponseTypes"] = list(self.function_response_types)
        if self.maximum_concurrency is not None:
            out["ScalingConfig"] = {"MaximumConcurrency": self.maximum_concurrency}
        if self.minimum_pollers is not None or self.maximum_pollers is not None:
            pollers = {"MinimumPollers": self.minimum_pollers, "MaximumPollers": self.maximum_pollers}
            out["ProvisionedPollerConfig"] = {k: v for k, v in pollers.items() if v is not None}
        if self.filter_patterns is not None:
            out["FilterCriteria"] = {"Filters": [{"Pattern": p} for p in self.filter_patterns]}
        if self.metrics is not None:
            out["MetricsConfig"] = {"Metrics": list(self.metrics)}
        if self.kms_key_arn is not None:
            out["KMSKeyArn"] = self.kms_key_arn
        if self.tags is not None:
            out["Tags"] = dict(self.tags)
        return out


@dataclass(frozen=True)
class DeclaredRole:
    """A function's execution role: ``arn`` (``arn:aws:iam::<account>:role/<name>``) and its identity-based
    ``policies`` (``(label, JSON text)``; the label ``identity policy <n>`` or the file's name)."""

    arn: str
    policies: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Declarations:
    """The file's mappings, function endpoints, functions' execution roles and functions' accounts (``accounts``:
    each declared function's name -> its role's account or its ``account``; a function with neither is absent, of
    the server's ``--account-id``: :meth:`function_accounts`)."""

    mappings: tuple[DeclaredMapping, ...]
    endpoints: dict[str, Endpoint]
    roles: dict[str, DeclaredRole] = field(default_factory=dict)
    accounts: dict[str, str] = field(default_factory=dict)
    functions: tuple[str, ...] = ()
    """Every declared function's name, in the file's order."""

    def function_accounts(self, default_account: str) -> dict[str, str]:
        """Every declared function's name -> its account, ``default_account`` (``--account-id``) for one that
        names none."""
        return {name: self.accounts.get(name, default_account) for name in self.functions}


def _typed(entry: Mapping[str, Any], keys: Mapping[str, type], where: str) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be a table")
    unknown = sorted(set(entry) - set(keys))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(keys)})")
    for key, value in entry.items():
        kind = keys[key]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise ValueError(f"{where}: {key} must be a {kind.__name__}, got {value!r}")


def check_document(document: Mapping[str, Any], base_dir: Path | None = None) -> Declarations:
    """The two tables of a parsed config file, checked; a role's relative policy file paths start at ``base_dir``
    (the config file's folder; None: the current folder). Raises ``ValueError``."""
    raw_mappings = document.get("event_source_mappings", [])
    if not isinstance(raw_mappings, list):
        raise ValueError("event_source_mappings must be an array of tables ([[event_source_mappings]])")
    mappings = []
    for n, entry in enumerate(raw_mappings, 1):
        where = f"[[event_source_mappings]] #{n}"
        _typed(entry, MAPPING_KEYS, where)
        if "function" not in entry:
            raise ValueError(f"{where}: function is required")
        if ("queue" in entry) == ("event_source_arn" in entry):
            raise ValueError(f"{where}: give either queue or event_source_arn")
        for key in ("function_response_types", "filter_patterns", "metrics"):
            if key in entry and not all(isinstance(v, str) for v in entry[key]):
                raise ValueError(f"{where}: {key} must be a list of strings")
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
        declared = DeclaredMapping(**values)
        _check_parameters(declared, where)
        mappings.append(declared)
    raw_functions = document.get("functions", {})
    if not isinstance(raw_functions, dict):
        raise ValueError("functions must be a table of tables ([functions.NAME])")
    endpoints = {}
    roles = {}
    accounts = {}
    for name, entry in raw_functions.items():
        where = f"[functions.{name}]"
        _typed(entry, FUNCTION_KEYS, where)
        url = entry.get("endpoint")
        if "role" in entry:
            roles[name] = _role(entry["role"], entry.get("policies", []), where, base_dir)
        elif "policies" in entry:
            raise ValueError(f"{where}: policies are the execution role's: give role (an IAM role ARN) too")
        account = _account(entry, roles.get(name), where)
        if account is not None:
            accounts[name] = account
        if url is None and ("role" in entry or "account" in entry) and "function_name" not in entry:
            continue  # an in-process function or --lambda-endpoint, of this account (run as this role)
        if not url or not url.startswith(("http://", "https://")):
            raise ValueError(f"{where}: endpoint must be an http:// or https:// URL")
        endpoints[name] = Endpoint(url, entry.get("function_name"))
    return Declarations(tuple(mappings), endpoints, roles, accounts, tuple(raw_functions))


def _account(entry: Mapping[str, Any], role: DeclaredRole | None, where: str) -> str | None:
    """A declared function's account: its role's (the ARN's account field), else its ``account``; None when it
    gives neither. Raises ``ValueError`` for an ``account`` that is not 12 digits or not the role's account."""
    given = entry.get("account")
    if given is not None and (len(given) != 12 or not given.isdigit()):
        raise ValueError(f"{where}: account must be a 12-digit account id, got {given!r}")
    if role is None:
        return given
    owner = role.arn.split(":")[4]
    if given is not None and given != owner:
        raise ValueError(
            f"{where}: account {given} is not the account of its role {role.arn} (a function's execution role is "
            "of the function's own account)"
        )
    return owner


def _role(arn: str, policies: list[Any], where: str, base_dir: Path | None) -> DeclaredRole:
    """A function's execution role checked: an IAM role ARN, and policies that parse. Raises ``ValueError``."""
    from sqsemu.security.evaluate import principal_for
    from sqsemu.security.identity import load_policy
    from sqsemu.security.policy import PolicyError, parse_policy

    try:
        kind = principal_for(arn, "").kind
    except ValueError as exc:
        raise ValueError(f"{where}: role: {exc}") from None
    if kind != "role":
        raise ValueError(f"{where}: role must be an IAM role ARN (arn:aws:iam::<account>:role/<name>), got {arn!r}")
    texts = []
    for n, source in enumerate(policies, 1):
        if not isinstance(source, str):
            raise ValueError(f"{where}: policies must be a list of JSON texts or file paths")
        if base_dir is not None and not source.lstrip().startswith("{") and not Path(source).is_absolute():
            source = str(base_dir / source)
        text, file_name = load_policy(source)
        label = f"identity policy {file_name or n}"
        try:
            parse_policy(text, False)
        except PolicyError as exc:
            raise ValueError(f"{where}: {label}: {exc}") from None
        texts.append((label, text))
    return DeclaredRole(arn, tuple(texts))


def _check_parameters(declared: DeclaredMapping, where: str) -> None:
    """The entry's settings checked as CreateEventSourceMapping checks them (a queue named ``*.fifo`` is FIFO)."""
    from sqsemu.eventsource.errors import LambdaError
    from sqsemu.eventsource.mapping import Mapping, apply_parameters, function_name
    from sqsemu.eventsource.tags import parse_tags

    source = declared.event_source_arn or declared.queue or ""
    try:
        scratch = Mapping("", "", "", source, function_name(declared.function))
        apply_parameters(scratch, declared.parameters(), source.endswith(".fifo"))
        if declared.tags is not None:
            parse_tags(dict(declared.tags))
    except LambdaError as exc:
        raise ValueError(f"{where}: {exc.message}") from None


def load_declarations(path: str) -> Declarations:
    """The mappings and endpoints the config file at ``path`` declares (none in an ElasticMQ ``.conf`` file)."""
    import tomllib

    if path.endswith(".conf"):
        return check_document({})
    with open(path, "rb") as source:
        return check_document(tomllib.load(source), Path(path).parent)


def declared_arn(declared: DeclaredMapping, config: Any) -> str:
    """The queue ARN a declared mapping names (``queue`` in the server's, or the given, account and region)."""
    if declared.event_source_arn:
        return declared.event_source_arn
    region = declared.region or config.region
    account = declared.account or config.account_id
    return f"arn:aws:sqs:{region}:{account}:{declared.queue}"
