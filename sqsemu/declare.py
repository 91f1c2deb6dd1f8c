"""The configuration file (``sqsemu --config sqsemu.toml``): server options, declared queues and fault rules.

The file is TOML (read with the standard library's ``tomllib``) with four optional top-level entries::

    [server]                      # keys are Config's option field names (see sqsemu.optionspec)
    region = "eu-west-1"
    fidelity = "strict"

    [[queues]]                    # one table per queue
    name = "orders"               # required; a name ending in .fifo makes a FIFO queue (FifoQueue = true implied)
    account = "000000000000"      # optional, a quoted 12-digit string; default: the server's account_id
    region = "eu-west-1"          # optional; default: the server's region
    attributes = { VisibilityTimeout = 60, DelaySeconds = 0 }   # CreateQueue attributes
    tags = { team = "shop" }      # merged onto the queue's tags
    dead_letter_queue = "orders-dlq"   # a queue of the same account and region -> RedrivePolicy
    max_receive_count = 5              # 1..1000, required with dead_letter_queue (and only with it)
    realism = "duplicates=0.1"         # this queue's realism spec (docs/realism.md): its sqsemu:realism tag

    [[topics]]                    # one table per SNS topic, created after the queues (docs/sns.md)
    name = "orders-events"        # required; a name ending in .fifo makes a FIFO topic (FifoTopic = true implied)
    account = "000000000000"      # optional, as for queues; default: the server's account_id
    region = "eu-west-1"          # optional; default: the server's region
    attributes = { DisplayName = "Orders" }   # CreateTopic attributes
    tags = { team = "shop" }      # merged onto the topic's tags

    [[topics.subscriptions]]      # the topic's subscriptions, made by its account and confirmed at once
    protocol = "sqs"              # required: sqs, http, https, lambda, email, email-json, sms, application, firehose
    endpoint = "orders"           # required; for sqs a queue name (the topic's account and region) or a queue ARN
    attributes = { RawMessageDelivery = true, FilterPolicy = { kind = ["placed"] } }   # Subscribe attributes
    dead_letter_queue = "orders-dlq"   # a queue name or ARN -> the subscription's RedrivePolicy

    [[faults]]                    # the rule objects POST /_sqsemu/faults takes (sqsemu.admin.faults)
    action = "SendMessage"
    queue = "orders"
    error = "ThrottlingException"
    every = 3

    [[credentials]]               # the keys [server] auth = "sigv4" accepts (sqsemu.config.Credential)
    access_key_id = "AKIDEXAMPLE"
    secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    account = "123456789012"      # optional, a quoted 12-digit string; default: the key id if it is 12 digits,
                                  # else the server's account_id
    principal = "arn:aws:iam::123456789012:role/orders-service"  # auth = "iam": the IAM user or role (absent:
                                  # the account's root user)
    policies = ['{"Version": "2012-10-17", "Statement": [...]}', "policies/orders.json"]  # auth = "iam": its
                                  # identity-based policies, JSON text or files (relative to the file's folder)
    trust_policy = "policies/orders-trust.json"   # a role's: who may sts:AssumeRole it (absent: its account)
    max_session_duration = 7200   # a role's longest AssumeRole session, seconds (3600 to 43200; default 3600)

Attribute values may be strings, integers or booleans (``60`` → ``"60"``, ``true`` → ``"true"``); ``Policy`` and
``RedriveAllowPolicy`` may also be tables (sent as compact JSON). ``RedrivePolicy`` is not accepted as an
attribute: ``dead_letter_queue`` and ``max_receive_count`` build it from the dead-letter queue's ARN. Relative
paths in ``[server]`` (``faults``, ``data_dir``) are taken from the file's folder. A topic's ``Policy``,
``DeliveryPolicy`` and ``ArchivePolicy``, and a subscription's ``FilterPolicy``, ``RedrivePolicy``,
``DeliveryPolicy`` and ``ReplayPolicy``, may be tables too.

Two steps, two error types:

- :func:`config_from_file` is the Config a file gives (what ``--config`` gives the command line); :func:`load_file`
  reads and checks the file on its own (types, unknown keys, fault rules) and returns a
  :class:`LoadedFile`; every problem is a :class:`ConfigFileError` naming the file and the key.
- :func:`apply_declarations` creates the declared queues in a broker at start-up (after a durable store restored
  its state) and adds the fault rules. It is idempotent: a queue that exists with the declared attribute values is
  left alone (CreateQueue semantics: only the attributes declared are compared) and only missing or different tags
  are written. Dead-letter queues are created before the queues naming them. All declarations are checked before
  anything changes: a dead-letter cycle, a missing dead-letter queue, an SQS validation error or an existing queue
  with a different value is a :class:`DeclarationError` naming the queue (and the attribute), and no queue is
  created.
- :func:`apply_topic_declarations` creates the declared SNS topics and their subscriptions once the server's SNS
  exists (after the queues, and after a durable store restored the topics). It follows SNS's own rules (the
  checks of CreateTopic and Subscribe, :mod:`sqsemu.sns.topics`), first on copies, so a bad declaration changes
  nothing and is a :class:`DeclarationError` naming the topic (and the subscription or attribute). Idempotent: an
  existing topic must have the declared attribute values (CreateTopic's rule), missing or different tags are
  written, and a subscription of the same protocol and endpoint must have the declared attributes (Subscribe's
  rule). A declared subscription is confirmed at once, whatever its protocol or account: the file is the owner's
  word, as a queue owner's own subscription is confirmed on AWS (no SubscriptionConfirmation is sent).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqsemu.config import (
    Config,
    Credential,
    QueueDeclaration,
    SubscriptionDeclaration,
    TopicDeclaration,
    config_options,
)

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker
    from sqsemu.engine.queue import Namespace, Queue
    from sqsemu.sns.topics import Topics

__all__ = [
    "ConfigFileError",
    "DeclarationError",
    "LoadedFile",
    "apply_declarations",
    "apply_topic_declarations",
    "check_declarations",
    "load_file",
    "parse_document",
]

TOP_KEYS = ("server", "queues", "topics", "faults", "credentials", "event_source_mappings", "functions")
QUEUE_KEYS = ("name", "account", "region", "attributes", "tags", "dead_letter_queue", "max_receive_count", "realism")
TOPIC_KEYS = ("name", "account", "region", "attributes", "tags", "subscriptions")
SUBSCRIPTION_KEYS = ("protocol", "endpoint", "attributes", "dead_letter_queue")
CREDENTIAL_KEYS = (
    "access_key_id", "secret_access_key", "account", "principal", "policies", "trust_policy", "max_session_duration",
)  # fmt: skip
_PROBE_CREDENTIAL = Credential("probe", "probe")  # lets [server] auth = "sigv4" be checked on its own
PATH_KEYS = tuple(item.name for item in config_options() if item.spec.path)
"""``[server]`` keys whose relative values start at the config file's folder (options declared ``path=True``)."""
JSON_ATTRIBUTES = ("Policy", "RedriveAllowPolicy")  # may be given as TOML tables
TOPIC_JSON_ATTRIBUTES = ("Policy", "DeliveryPolicy", "ArchivePolicy")
SUBSCRIPTION_JSON_ATTRIBUTES = ("FilterPolicy", "RedrivePolicy", "DeliveryPolicy", "ReplayPolicy")


def server_keys() -> list[str]:
    """The keys a ``[server]`` table may hold: every Config option except those declared ``in_file=False``
    (``config`` itself)."""
    return [item.name for item in config_options() if item.spec.in_file]


class ConfigFileError(ValueError):
    """The configuration file cannot be read, is not TOML, or holds an unknown key or a value of the wrong type.

    The message starts with ``config file '<path>':`` and names the table and key at fault.
    """


class DeclarationError(ValueError):
    """The declared queues or fault rules cannot be applied; the message names the queue (and the attribute)."""


@dataclass(frozen=True)
class LoadedFile:
    """What a configuration file declares.

    - ``path``: the file as given.
    - ``server``: ``{Config field name: value}`` from ``[server]``, typed (str/int/bool) and validated; relative
      ``faults``/``data_dir`` paths made relative to the current folder.
    - ``queues``: the ``[[queues]]`` entries, in file order.
    - ``topics``: the ``[[topics]]`` entries with their subscriptions, in file order.
    - ``fault_rules``: the ``[[faults]]`` entries, validated, as written.
    - ``credentials``: the ``[[credentials]]`` entries as :class:`~sqsemu.config.Credential` s, validated.
    - ``warnings``: lines to log as warnings (logger ``sqsemu.config``) once logging is set up: the keys of an
      ElasticMQ file that sqsemu does not use. The command line reads the file before it sets up logging, so
      nothing is logged while reading: they become ``Config.file_warnings``, logged by :func:`log_warnings` when
      the server starts.
    """

    path: str
    server: dict[str, Any] = field(default_factory=dict)
    queues: tuple[QueueDeclaration, ...] = ()
    topics: tuple[TopicDeclaration, ...] = ()
    fault_rules: tuple[dict[str, Any], ...] = ()
    credentials: tuple[Credential, ...] = ()
    warnings: tuple[str, ...] = ()


def log_warnings(warnings: Sequence[str]) -> None:
    """Log a :class:`LoadedFile`'s ``warnings``, each a WARNING of logger ``sqsemu.config``."""
    import logging

    for line in warnings:
        logging.getLogger("sqsemu.config").warning("%s", line)


# ------------------------------------------------------------------------------------------------- reading


def load_file(path: str | Path) -> LoadedFile:
    """Read and check the TOML configuration file at ``path`` (a name ending in ``.conf``: ElasticMQ's HOCON file,
    :mod:`sqsemu.compat.elasticmq`).

    Raises :class:`ConfigFileError` when the file cannot be read, is not valid TOML, or its content is wrong (see
    :func:`parse_document`).
    """
    import tomllib  # only with a configuration file: not among every start-up's imports

    source = str(path)
    if source.endswith(".conf"):  # ElasticMQ's HOCON file (docs/coming-from-elasticmq.md)
        return _load_elasticmq(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigFileError(f"config file {source!r}: cannot read it: {exc.strerror or exc}") from None
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"config file {source!r}: not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"config file {source!r}: not valid TOML: {exc}") from None
    return parse_document(document, source, Path(path).parent)


def _load_elasticmq(path: str | Path) -> LoadedFile:
    """An ElasticMQ ``.conf`` file read by :mod:`sqsemu.compat.elasticmq`, then checked like a TOML one."""
    from sqsemu.compat.elasticmq import ElasticMQConfError, read_conf

    source = str(path)
    warnings: list[str] = []
    try:
        document = read_conf(path, warnings)
    except OSError as exc:
        raise ConfigFileError(f"config file {source!r}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigFileError(f"config file {source!r}: not UTF-8 text: {exc}") from None
    except ElasticMQConfError as exc:
        raise ConfigFileError(f"config file {source!r} (ElasticMQ): {exc}") from None
    loaded = parse_document(document, source, Path(path).parent)
    return replace(loaded, warnings=tuple(warnings))


def config_from_file(path: str | Path, **overrides: Any) -> Config:
    """The :class:`~sqsemu.config.Config` a TOML file declares: its ``[server]`` values (``overrides`` win over
    them, as the command line's flags do), its queues, topics, fault rules and credentials; ``config`` is ``path``.

    Raises :class:`ConfigFileError` (a ``ValueError``) naming the file and the key at fault, and ``ValueError`` for
    an override Config refuses. Documented in docs/configuration.md, "Configuration file".
    """
    loaded = load_file(path)
    values: dict[str, Any] = {**loaded.server, "config": str(path), "queues": loaded.queues, "topics": loaded.topics}
    values["fault_rules"] = loaded.fault_rules
    values["credentials"] = loaded.credentials
    values["file_warnings"] = loaded.warnings  # logged when a server starts with the Config
    values.update(overrides)
    return Config(**values)


def parse_document(document: Mapping[str, Any], source: str, base_dir: Path | None = None) -> LoadedFile:
    """Check a decoded TOML document (``tomllib``'s dict) and build the :class:`LoadedFile`.

    ``source`` names the file in messages; ``base_dir`` is where relative paths of ``[server]`` start (None: the
    current folder). Raises :class:`ConfigFileError` naming the table and key at fault.
    """
    prefix = f"config file {source!r}"
    unknown = sorted(set(document) - set(TOP_KEYS))
    if unknown:
        raise ConfigFileError(f"{prefix}: unknown key(s) {_names(unknown)} (allowed: {', '.join(TOP_KEYS)})")
    server = _parse_server(document.get("server", {}), prefix, base_dir)
    if "event_source_mappings" in document or "functions" in document:  # checked by their own module
        from sqsemu.eventsource.declare import check_document

        try:
            check_document(document, base_dir)
        except ValueError as exc:
            raise ConfigFileError(f"{prefix}: {exc}") from None
    queues_raw = document.get("queues", [])
    if not isinstance(queues_raw, list):
        raise ConfigFileError(f"{prefix}: queues must be an array of tables ([[queues]])")
    queues = tuple(_parse_queue(entry, n, prefix) for n, entry in enumerate(queues_raw, 1))
    topics_raw = document.get("topics", [])
    if not isinstance(topics_raw, list):
        raise ConfigFileError(f"{prefix}: topics must be an array of tables ([[topics]])")
    topics = tuple(_parse_topic(entry, n, prefix) for n, entry in enumerate(topics_raw, 1))
    faults_raw = document.get("faults", [])
    if not isinstance(faults_raw, list):
        raise ConfigFileError(f"{prefix}: faults must be an array of tables ([[faults]])")
    rules = tuple(faults_raw)
    if rules:
        error = _fault_rules_error(rules)
        if error is not None:
            raise ConfigFileError(f"{prefix}: [[faults]] {error}")
    credentials = _parse_credentials(document.get("credentials", []), prefix, base_dir)
    if server.get("auth") in ("sigv4", "iam") and not credentials:
        raise ConfigFileError(f'{prefix}: [server] auth = "{server["auth"]}" needs at least one [[credentials]] entry')
    return LoadedFile(source, server, queues, topics, rules, credentials)


def _names(keys: Sequence[str]) -> str:
    return ", ".join(repr(k) for k in keys)


def _parse_server(table: Any, prefix: str, base_dir: Path | None) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ConfigFileError(f"{prefix}: server must be a table ([server])")
    allowed = server_keys()
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigFileError(f"{prefix}: [server] unknown key(s) {_names(unknown)} (allowed: {', '.join(allowed)})")
    options = {item.name: item for item in config_options()}
    values: dict[str, Any] = {}
    for key, value in table.items():
        expected = options[key].type
        where = f"{prefix}: [server] {key}"
        if expected is bool and not isinstance(value, bool):
            raise ConfigFileError(f"{where} must be true or false, got {value!r}")
        if expected is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise ConfigFileError(f"{prefix}: [server] {options[key].bad_integer(value)}")
        if expected is str and not isinstance(value, str):
            hint = ' (quote it: account_id = "000000000000")' if key == "account_id" else ""
            raise ConfigFileError(f"{where} must be a string, got {value!r}{hint}")
        try:
            Config(**{key: value}, credentials=(_PROBE_CREDENTIAL,) if key == "auth" else ())
        except ValueError as exc:
            raise ConfigFileError(f"{prefix}: [server] {_about(key, str(exc))}") from None
        if key in PATH_KEYS and value and base_dir is not None and not Path(value).is_absolute():
            value = str(base_dir / value)
        values[key] = value
    return values


def _about(key: str, message: str) -> str:
    """``message`` about the option ``key``, starting with its name once (``port must be ...``), whether Config's
    message names it already or not."""
    return message if message.startswith(f"{key} ") else f"{key}: {message}"


def _attribute_value(name: str, value: Any, json_names: Sequence[str] = JSON_ATTRIBUTES) -> str | None:
    """The SQS (or SNS) string for one attribute value, or None when its type is not allowed; the attributes
    ``json_names`` may be tables or arrays (sent as compact JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, dict | list) and name in json_names:
        return json.dumps(value, separators=(",", ":"))
    return None


def _string_table(
    table: Any, what: str, where: str, *, attributes: bool, json_names: Sequence[str] = JSON_ATTRIBUTES
) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise ConfigFileError(f"{where}: {what} must be a table, like {what} = {{ ... }}")
    pairs: list[tuple[str, str]] = []
    for key, value in table.items():
        text = _attribute_value(key, value, json_names) if attributes else _attribute_value("", value, ())
        if text is None:
            kinds = "a string, integer or boolean"
            if attributes and key in json_names:
                kinds += " or a table"
            raise ConfigFileError(f"{where}: {what}.{key} must be {kinds}, got {value!r}")
        pairs.append((key, text))
    return tuple(pairs)


def _named_entry(entry: Any, where: str, keys: tuple[str, ...]) -> tuple[str, str]:
    """A ``[[queues]]`` or ``[[topics]]`` entry's ``name`` and where it is (``<where> ('<name>')``), after checking
    that it is a table with a non-empty name and only ``keys``; raises ``ConfigFileError``."""
    if not isinstance(entry, dict):
        raise ConfigFileError(f"{where} must be a table")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigFileError(f"{where}: name is required and must be a non-empty string")
    where = f"{where} ({name!r})"
    unknown = sorted(set(entry) - set(keys))
    if unknown:
        raise ConfigFileError(f"{where}: unknown key(s) {_names(unknown)} (allowed: {', '.join(keys)})")
    return name, where


def _parse_queue(entry: Any, n: int, prefix: str) -> QueueDeclaration:
    name, where = _named_entry(entry, f"{prefix}: [[queues]] #{n}", QUEUE_KEYS)

    account, region = _namespace_keys(entry, where)

    attributes = _string_table(entry.get("attributes", {}), "attributes", where, attributes=True)
    names = [key for key, _ in attributes]
    if "RedrivePolicy" in names:
        raise ConfigFileError(
            f"{where}: attributes.RedrivePolicy is not accepted here: use dead_letter_queue and max_receive_count"
        )
    if name.endswith(".fifo"):
        fifo = dict(attributes).get("FifoQueue")
        if fifo is None:
            attributes = (("FifoQueue", "true"), *attributes)
        elif fifo.lower() != "true":
            raise ConfigFileError(f"{where}: attributes.FifoQueue must be true for a name ending in .fifo")
    tags = _string_table(entry.get("tags", {}), "tags", where, attributes=False)
    realism = entry.get("realism")
    if realism is not None:
        tags = _realism_tag(realism, tags, where)

    dlq = entry.get("dead_letter_queue")
    count = entry.get("max_receive_count")
    if dlq is not None and (not isinstance(dlq, str) or not dlq):
        raise ConfigFileError(f"{where}: dead_letter_queue must be the name of a queue in the same account and region")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 1000):
        raise ConfigFileError(f"{where}: max_receive_count must be an integer from 1 to 1000, got {count!r}")
    if (dlq is None) != (count is None):
        missing = "max_receive_count" if count is None else "dead_letter_queue"
        raise ConfigFileError(f"{where}: dead_letter_queue and max_receive_count go together: {missing} is missing")
    return QueueDeclaration(name, account, region, attributes, tags, dlq, count)


def _namespace_keys(entry: Mapping[str, Any], where: str) -> tuple[str | None, str | None]:
    """A declaration's ``account`` (a quoted 12-digit string) and ``region`` (a non-empty string), None when
    absent."""
    account = entry.get("account")
    if account is not None:
        if not isinstance(account, str):
            raise ConfigFileError(f'{where}: account must be a quoted 12-digit string (account = "000000000000")')
        try:
            Config(account_id=account)
        except ValueError as exc:
            raise ConfigFileError(f"{where}: account: {exc}") from None
    region = entry.get("region")
    if region is not None and (not isinstance(region, str) or not region):
        raise ConfigFileError(f"{where}: region must be a non-empty string")
    return account, region


def _parse_topic(entry: Any, n: int, prefix: str) -> TopicDeclaration:
    """One ``[[topics]]`` entry, checked for its keys and types (SNS's own rules are applied by
    :func:`check_declarations` and :func:`apply_topic_declarations`)."""
    name, where = _named_entry(entry, f"{prefix}: [[topics]] #{n}", TOPIC_KEYS)
    account, region = _namespace_keys(entry, where)
    attributes = _string_table(
        entry.get("attributes", {}), "attributes", where, attributes=True, json_names=TOPIC_JSON_ATTRIBUTES
    )
    if name.endswith(".fifo"):
        fifo = dict(attributes).get("FifoTopic")
        if fifo is None:
            attributes = (("FifoTopic", "true"), *attributes)
        elif fifo.lower() != "true":
            raise ConfigFileError(f"{where}: attributes.FifoTopic must be true for a name ending in .fifo")
    tags = _string_table(entry.get("tags", {}), "tags", where, attributes=False)
    raw = entry.get("subscriptions", [])
    if not isinstance(raw, list):
        raise ConfigFileError(f"{where}: subscriptions must be an array of tables ([[topics.subscriptions]])")
    subscriptions = tuple(_parse_subscription(sub, k, where) for k, sub in enumerate(raw, 1))
    return TopicDeclaration(name, account, region, attributes, tags, subscriptions)


def _parse_subscription(entry: Any, n: int, topic_where: str) -> SubscriptionDeclaration:
    """One ``[[topics.subscriptions]]`` entry, checked for its keys and types."""
    where = f"{topic_where}: subscription #{n}"
    if not isinstance(entry, dict):
        raise ConfigFileError(f"{where} must be a table")
    unknown = sorted(set(entry) - set(SUBSCRIPTION_KEYS))
    if unknown:
        raise ConfigFileError(f"{where}: unknown key(s) {_names(unknown)} (allowed: {', '.join(SUBSCRIPTION_KEYS)})")
    for key in ("protocol", "endpoint"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise ConfigFileError(f"{where}: {key} is required and must be a non-empty string")
    attributes = _string_table(
        entry.get("attributes", {}), "attributes", where, attributes=True, json_names=SUBSCRIPTION_JSON_ATTRIBUTES
    )
    dlq = entry.get("dead_letter_queue")
    if dlq is not None:
        if not isinstance(dlq, str) or not dlq:
            raise ConfigFileError(f"{where}: dead_letter_queue must be a queue name or ARN")
        if any(key == "RedrivePolicy" for key, _ in attributes):
            raise ConfigFileError(f"{where}: give dead_letter_queue or attributes.RedrivePolicy, not both")
    return SubscriptionDeclaration(entry["protocol"], entry["endpoint"], attributes, dlq)


def _realism_tag(realism: Any, tags: tuple[tuple[str, str], ...], where: str) -> tuple[tuple[str, str], ...]:
    """A ``[[queues]]`` entry's ``realism`` spec, checked, as its ``sqsemu:realism`` tag (canonical, effects
    separated by blanks) appended to ``tags``."""
    from sqsemu.engine.realism import REALISM_TAG, RealismSpecError, parse_spec

    if not isinstance(realism, str):
        raise ConfigFileError(f'{where}: realism must be a string like "duplicates=0.1,reorder=0.2", got {realism!r}')
    try:
        spec = parse_spec(realism)
    except RealismSpecError as exc:
        raise ConfigFileError(f"{where}: {exc}") from None
    if any(key == REALISM_TAG for key, _ in tags):
        raise ConfigFileError(f"{where}: give the realism spec once: realism or tags.{REALISM_TAG}, not both")
    return (*tags, (REALISM_TAG, spec.text(" ")))  # a tag value cannot hold the commas


def _parse_credentials(entries: Any, prefix: str, base_dir: Path | None = None) -> tuple[Credential, ...]:
    """The ``[[credentials]]`` entries, each checked by the rules of :class:`~sqsemu.config.Config` (and, when it has
    a ``principal`` or ``policies``, by those of ``auth = "iam"``); a policy file's relative path starts at
    ``base_dir``."""
    if not isinstance(entries, list):
        raise ConfigFileError(f"{prefix}: credentials must be an array of tables ([[credentials]])")
    credentials: list[Credential] = []
    for n, entry in enumerate(entries, 1):
        where = f"{prefix}: [[credentials]] #{n}"
        if not isinstance(entry, dict):
            raise ConfigFileError(f"{where} must be a table")
        key = entry.get("access_key_id")
        if isinstance(key, str) and key:
            where = f"{where} ({key!r})"
        unknown = sorted(set(entry) - set(CREDENTIAL_KEYS))
        if unknown:
            raise ConfigFileError(f"{where}: unknown key(s) {_names(unknown)} (allowed: {', '.join(CREDENTIAL_KEYS)})")
        for name in ("access_key_id", "secret_access_key"):
            if not isinstance(entry.get(name), str) or not entry[name]:
                raise ConfigFileError(f"{where}: {name} is required and must be a non-empty string")
        account = entry.get("account")
        if account is not None and not isinstance(account, str):
            raise ConfigFileError(f'{where}: account must be a quoted 12-digit string (account = "123456789012")')
        principal = entry.get("principal")
        if principal is not None and not isinstance(principal, str):
            raise ConfigFileError(f"{where}: principal must be a string (an IAM user or role ARN)")
        policies = entry.get("policies", [])
        if isinstance(policies, str):
            policies = [policies]
        if not isinstance(policies, list) or not all(isinstance(p, str) for p in policies):
            raise ConfigFileError(f"{where}: policies must be a list of JSON texts or file paths")
        policies = [_policy_path(p, base_dir) for p in policies]
        trust = entry.get("trust_policy")
        if trust is not None and not isinstance(trust, str):
            raise ConfigFileError(f"{where}: trust_policy must be a JSON text or a file path")
        longest = entry.get("max_session_duration")
        if longest is not None and (isinstance(longest, bool) or not isinstance(longest, int)):
            raise ConfigFileError(f"{where}: max_session_duration must be an integer (seconds, 3600 to 43200)")
        credential = Credential(
            entry["access_key_id"], entry["secret_access_key"], account, principal, tuple(policies),
            None if trust is None else _policy_path(trust, base_dir), longest,
        )  # fmt: skip
        try:
            auth = "iam" if principal is not None or policies else "none"
            Config(credentials=(*credentials, credential), auth=auth)
        except ValueError as exc:
            raise ConfigFileError(f"{where}: {exc}") from None
        credentials.append(credential)
    return tuple(credentials)


def _policy_path(source: str, base_dir: Path | None) -> str:
    """A ``policies`` entry: inline JSON as it is, a relative file path from ``base_dir``."""
    if source.lstrip().startswith("{") or base_dir is None or Path(source).is_absolute():
        return source
    return str(base_dir / source)


def _fault_rules_error(rules: Sequence[Any], faults_file: str = "") -> str | None:
    """Why ``rules`` (and then the rules of ``faults_file``) cannot be loaded together, or None."""
    from sqsemu.admin.common import AdminError
    from sqsemu.admin.faults import FaultFileError, FaultInjector

    injector = FaultInjector()
    try:
        injector.add_all(rules)
    except AdminError as exc:
        return exc.message
    if faults_file:
        try:
            injector.load_file(faults_file)
        except FaultFileError as exc:
            return f"together with the [[faults]] rules: {exc}"
    return None


# ------------------------------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Planned:
    """One declaration resolved against the server's account and region, with the attributes CreateQueue gets."""

    account: str
    region: str
    declared: QueueDeclaration
    attributes: dict[str, str]

    @property
    def label(self) -> str:
        return f"queue {self.declared.name!r} (account {self.account}, region {self.region})"


def _prefix(config: Config) -> str:
    return f"config file {config.config!r}: " if config.config else ""


def plan(config: Config) -> list[_Planned]:
    """The declarations of ``config`` in creation order: every dead-letter queue before the queues naming it,
    otherwise file order. Raises :class:`DeclarationError` on a dead-letter cycle (``a -> b -> a``)."""
    keyed: dict[tuple[str, str, str], list[QueueDeclaration]] = {}
    for declared in config.queues:
        key = (declared.account or config.account_id, declared.region or config.region, declared.name)
        keyed.setdefault(key, []).append(declared)

    ordered: list[_Planned] = []
    state: dict[tuple[str, str, str], str] = {}  # "visiting" | "done"

    def visit(key: tuple[str, str, str], path: list[str]) -> None:
        if state.get(key) == "done" or key not in keyed:
            return
        if state.get(key) == "visiting":
            cycle = " -> ".join([*path[path.index(key[2]) :], key[2]])
            raise DeclarationError(f"{_prefix(config)}dead-letter cycle in account {key[0]}, region {key[1]}: {cycle}")
        state[key] = "visiting"
        for declared in keyed[key]:
            if declared.dead_letter_queue:
                visit((key[0], key[1], declared.dead_letter_queue), [*path, key[2]])
        state[key] = "done"
        for declared in keyed[key]:
            ordered.append(_Planned(key[0], key[1], declared, _create_attributes(key[0], key[1], declared)))

    for key in keyed:
        visit(key, [])
    return ordered


def _create_attributes(account: str, region: str, declared: QueueDeclaration) -> dict[str, str]:
    attributes = dict(declared.attributes)
    if declared.dead_letter_queue:
        target = f"arn:aws:sqs:{region}:{account}:{declared.dead_letter_queue}"
        policy = {"deadLetterTargetArn": target, "maxReceiveCount": declared.max_receive_count}
        attributes["RedrivePolicy"] = json.dumps(policy, separators=(",", ":"))
    return attributes


# ------------------------------------------------------------------------------------------------- applying


def check_declarations(config: Config) -> None:
    """Check everything about the declarations of ``config`` that does not depend on existing queues: ordering,
    SQS validation of names, attributes and tags, conflicting duplicate declarations, the topics and subscriptions
    by SNS's rules, and the fault rules together with the ``faults`` file. Dead-letter queues that are not
    declared are assumed to exist.

    Changes nothing. Raises :class:`DeclarationError` naming the queue (and attribute).
    """
    _dry_run(config, plan(config), None)
    if config.topics:
        from sqsemu.clock import ManualClock
        from sqsemu.sns.topics import Topics

        _declare_topics(Topics(ManualClock()), _plan_topics(config), config)
    if config.fault_rules:
        error = _fault_rules_error(config.fault_rules, config.faults)
        if error is not None:
            raise DeclarationError(f"{_prefix(config)}[[faults]] {error}")


def apply_declarations(broker: Broker, config: Config) -> None:
    """Create the queues ``config`` declares in ``broker`` and add its fault rules (see the module docstring).

    Call once at start-up, after any durable state is restored and before serving. Idempotent over restarts.
    Raises :class:`DeclarationError` (nothing changed) when a declaration is invalid, a dead-letter queue is neither
    declared nor existing, or an existing queue has a different value for a declared attribute.
    """
    if not config.queues and not config.fault_rules:
        return
    from sqsemu.admin.common import AdminError
    from sqsemu.admin.faults import injector_for
    from sqsemu.engine import tags as tag_rules
    from sqsemu.engine.errors import SQSError
    from sqsemu.engine.queue import Namespace

    ordered = plan(config)
    _dry_run(config, ordered, broker)

    # Conflicts with queues that exist already (e.g. restored from the data folder), before anything changes.
    for planned in ordered:
        existing = _existing(broker, planned)
        if existing is None:
            continue
        _check_same(config, planned, existing, broker)
        new_tags = _missing_tags(planned.declared, existing)
        try:
            tag_rules.validate_tags(new_tags, existing.tags)
        except SQSError as exc:
            raise DeclarationError(f"{_prefix(config)}{planned.label}: tags: {exc.message}") from None

    for planned in ordered:
        ns = Namespace(planned.account, planned.region)
        try:
            existing = _existing(broker, planned)
            if existing is None:
                broker.create_queue(ns, planned.declared.name, planned.attributes, dict(planned.declared.tags))
            else:
                new_tags = _missing_tags(planned.declared, existing)
                if new_tags:
                    broker.tag_queue(existing, new_tags)
        except SQSError as exc:
            raise DeclarationError(f"{_prefix(config)}{planned.label}: {exc.shape}: {exc.message}") from None

    if config.fault_rules:
        try:
            injector_for(broker).add_all(config.fault_rules)
        except AdminError as exc:
            raise DeclarationError(f"{_prefix(config)}[[faults]] {exc.message}") from None


def _existing(broker: Broker, planned: _Planned) -> Queue | None:
    from sqsemu.engine.errors import QueueDoesNotExist
    from sqsemu.engine.queue import Namespace

    try:
        return broker.get_queue(Namespace(planned.account, planned.region), planned.declared.name)
    except QueueDoesNotExist:
        return None


def _missing_tags(declared: QueueDeclaration, queue: Queue) -> dict[str, str]:
    return {key: value for key, value in declared.tags if queue.tags.get(key) != value}


def _check_same(config: Config, planned: _Planned, existing: Queue, broker: Broker) -> None:
    """Raise :class:`DeclarationError` naming the first declared attribute whose value differs from ``existing``'s."""
    from sqsemu.engine import attributes as queue_attributes
    from sqsemu.engine.errors import SQSError

    try:
        wanted = queue_attributes.normalize(planned.attributes, fifo=existing.fifo, limits=broker.limits)
    except SQSError as exc:
        raise DeclarationError(f"{_prefix(config)}{planned.label}: {exc.shape}: {exc.message}") from None
    for name, value in wanted.items():
        current = existing.attributes.get(name, "")
        if current != value:
            raise DeclarationError(
                f"{_prefix(config)}{planned.label} exists with a different value for attribute {name}: "
                f"declared {value!r}, existing {current!r}"
            )


def _dry_run(config: Config, ordered: list[_Planned], broker: Broker | None) -> None:
    """Create the planned queues in a scratch broker to find SQS validation errors and conflicting duplicates.

    A dead-letter queue that is not declared is taken from ``broker`` (a stand-in of the same type and
    RedriveAllowPolicy); with ``broker`` None it is assumed to exist. Raises :class:`DeclarationError`.
    """
    if not ordered:
        return
    from sqsemu.clock import ManualClock
    from sqsemu.engine.broker import Broker as ScratchBroker
    from sqsemu.engine.errors import QueueNameExists, SQSError
    from sqsemu.engine.limits import DEFAULT_LIMITS
    from sqsemu.engine.queue import Namespace

    scratch = ScratchBroker(ManualClock(), broker.limits if broker is not None else DEFAULT_LIMITS)
    declared_keys = {(p.account, p.region, p.declared.name) for p in ordered}
    for planned in ordered:
        ns = Namespace(planned.account, planned.region)
        name = planned.declared.name
        dlq = planned.declared.dead_letter_queue
        if dlq and (planned.account, planned.region, dlq) not in declared_keys:
            _stand_in(config, scratch, broker, ns, planned)
        try:
            scratch.create_queue(ns, name, planned.attributes, dict(planned.declared.tags))
        except QueueNameExists as exc:  # declared twice with different values
            _check_same(config, planned, scratch.get_queue(ns, name), scratch)
            raise DeclarationError(f"{_prefix(config)}{planned.label}: {exc.message}") from None
        except SQSError as exc:
            raise DeclarationError(f"{_prefix(config)}{planned.label}: {exc.shape}: {exc.message}") from None
        existing = scratch.get_queue(ns, name)
        new_tags = _missing_tags(planned.declared, existing)
        if new_tags:  # a second declaration of the same queue adds tags
            try:
                scratch.tag_queue(existing, new_tags)
            except SQSError as exc:
                raise DeclarationError(f"{_prefix(config)}{planned.label}: tags: {exc.message}") from None


def _stand_in(config: Config, scratch: Broker, broker: Broker | None, ns: Namespace, planned: _Planned) -> None:
    """Put a queue standing in for an undeclared dead-letter queue into ``scratch`` (once)."""
    from sqsemu.engine.errors import QueueDoesNotExist, SQSError

    dlq = planned.declared.dead_letter_queue
    assert dlq is not None
    try:
        scratch.get_queue(ns, dlq)
        return
    except QueueDoesNotExist:
        pass
    attributes: dict[str, str] = {}
    if broker is None:
        fifo = planned.declared.name.endswith(".fifo")
    else:
        try:
            real = broker.get_queue(ns, dlq)
        except QueueDoesNotExist:
            raise DeclarationError(
                f"{_prefix(config)}{planned.label}: dead_letter_queue {dlq!r} is neither declared nor an existing "
                f"queue of account {planned.account}, region {planned.region}"
            ) from None
        fifo = real.fifo
        allow = real.attributes.get("RedriveAllowPolicy")
        if allow:
            attributes["RedriveAllowPolicy"] = allow
    if fifo:
        attributes["FifoQueue"] = "true"
    try:
        scratch.create_queue(ns, dlq, attributes, {})
    except SQSError as exc:
        raise DeclarationError(
            f"{_prefix(config)}{planned.label}: dead_letter_queue {dlq!r}: {exc.shape}: {exc.message}"
        ) from None


# ------------------------------------------------------------------------------------------------- topics


@dataclass(frozen=True)
class _PlannedTopic:
    """One topic declaration resolved against the server's account and region: what CreateTopic and Subscribe
    get."""

    account: str
    region: str
    declared: TopicDeclaration
    subscriptions: tuple[tuple[str, str, dict[str, str]], ...]  # (protocol, endpoint, attributes)

    @property
    def label(self) -> str:
        return f"topic {self.declared.name!r} (account {self.account}, region {self.region})"


def _plan_topics(config: Config) -> list[_PlannedTopic]:
    """The topic declarations of ``config`` in file order, each subscription's endpoint and dead-letter queue
    given as ARNs (a queue name is a queue of the topic's account and region). Raises :class:`DeclarationError`
    for a topic declared twice."""
    planned: list[_PlannedTopic] = []
    seen: set[tuple[str, str, str]] = set()
    for declared in config.topics:
        account = declared.account or config.account_id
        region = declared.region or config.region
        key = (account, region, declared.name)
        if key in seen:
            raise DeclarationError(
                f"{_prefix(config)}topic {declared.name!r} (account {account}, region {region}) is declared twice: "
                "declare it once, with all its subscriptions"
            )
        seen.add(key)
        subscriptions = []
        for sub in declared.subscriptions:
            endpoint = sub.endpoint
            if sub.protocol.lower() == "sqs":
                endpoint = _queue_arn(endpoint, account, region)
            attributes = dict(sub.attributes)
            if sub.dead_letter_queue:
                target = _queue_arn(sub.dead_letter_queue, account, region)
                attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": target}, separators=(",", ":"))
            subscriptions.append((sub.protocol, endpoint, attributes))
        planned.append(_PlannedTopic(account, region, declared, tuple(subscriptions)))
    return planned


def _queue_arn(queue: str, account: str, region: str) -> str:
    """``queue`` when it is an ARN, else the ARN of the queue of that name in ``account`` and ``region``."""
    return queue if queue.startswith("arn:") else f"arn:aws:sqs:{region}:{account}:{queue}"


def apply_topic_declarations(topics: Topics, broker: Broker | None, config: Config) -> None:
    """Create the SNS topics ``config`` declares, with their subscriptions, in ``topics`` (a server's, once its
    durable store restored them, after the queues were declared); see the module docstring.

    Everything is done first on copies of the topics concerned, so a declaration SNS refuses changes nothing.
    Idempotent over restarts. A subscription whose queue is not in ``broker`` (when given) is made all the same
    (Subscribe does not ask for the queue) and logged as a warning, once per start-up: messages published before
    the queue exists go to the subscription's dead-letter queue or are dropped. Raises :class:`DeclarationError`
    naming the topic (and the subscription or attribute): a name, attribute, tag or subscription SNS refuses, a
    topic declared twice, an existing topic with another value of a declared attribute, an existing subscription
    of the same protocol and endpoint with other attributes.
    """
    if not config.topics:
        return
    import logging

    from sqsemu.clock import ManualClock
    from sqsemu.sns.model import Topic, topic_arn
    from sqsemu.sns.topics import Topics as ScratchTopics

    planned = _plan_topics(config)
    scratch = ScratchTopics(ManualClock())
    for item in planned:
        existing = topics.by_arn.get(topic_arn(item.region, item.account, item.declared.name))
        if existing is not None:
            scratch.restore(Topic.from_doc(existing.to_doc()))
    _declare_topics(scratch, planned, config)
    _declare_topics(topics, planned, config)
    if broker is None:
        return
    log = logging.getLogger("sqsemu.config")
    for item in planned:
        for protocol, endpoint, _ in item.subscriptions:
            if protocol.lower() == "sqs" and broker.resolve_arn(endpoint) is None:
                log.warning(
                    "%s%s: its subscription to %s: the queue does not exist (yet); messages published before it is "
                    "created go to the subscription's dead-letter queue or are dropped",
                    _prefix(config), item.label, endpoint,
                )  # fmt: skip


def _declare_topics(topics: Topics, planned: Sequence[_PlannedTopic], config: Config) -> None:
    """Make each planned topic and subscription in ``topics`` by SNS's rules; raises :class:`DeclarationError` at
    the first refusal (``topics`` may then hold the declarations before it: callers run this on a scratch copy
    first)."""
    from sqsemu.sns.errors import SNSError
    from sqsemu.sns.model import topic_arn

    for item in planned:
        declared = item.declared
        attributes = dict(declared.attributes)
        tags = dict(declared.tags)
        arn = topic_arn(item.region, item.account, declared.name)
        existing = topics.by_arn.get(arn)
        try:
            if existing is None:
                topic = topics.create_topic(item.account, item.region, declared.name, attributes, tags, None)
            else:
                topic = existing
                _check_same_topic(topics, item, attributes, config)
                new_tags = {key: value for key, value in tags.items() if topic.tags.get(key) != value}
                if new_tags:
                    topics.tag(arn, new_tags)
        except SNSError as exc:
            raise DeclarationError(f"{_prefix(config)}{item.label}: {exc.code}: {exc.message}") from None
        principal = f"arn:aws:iam::{item.account}:root"
        for n, (protocol, endpoint, sub_attributes) in enumerate(item.subscriptions, 1):
            try:
                sub, _ = topics.subscribe(topic, protocol, endpoint, sub_attributes, item.account, principal)
                if sub.pending and sub.token:  # made through the API and not confirmed: the file confirms it,
                    topics.confirm(
                        topic.arn, topic.region, sub.token, True
                    )  # as its owner (ConfirmationWasAuthenticated true)
            except SNSError as exc:
                raise DeclarationError(
                    f"{_prefix(config)}{item.label}: subscription #{n} ({protocol} {endpoint}): {exc.code}: "
                    f"{exc.message}"
                ) from None


def _check_same_topic(topics: Topics, item: _PlannedTopic, attributes: Mapping[str, str], config: Config) -> None:
    """Raise :class:`DeclarationError` naming the first declared attribute whose value differs from the existing
    topic's (CreateTopic's idempotency rule, asked one attribute at a time; nothing changes)."""
    from sqsemu.sns.errors import InvalidParameter

    name = item.declared.name
    fifo = {"FifoTopic": attributes["FifoTopic"]} if "FifoTopic" in attributes else {}
    for key, value in attributes.items():
        if key == "FifoTopic":
            continue
        try:
            topics.create_topic(item.account, item.region, name, {**fifo, key: value}, None, None)
        except InvalidParameter as exc:
            if "already exists" not in exc.message:
                raise
            existing = topics.by_arn[f"arn:aws:sns:{item.region}:{item.account}:{name}"]
            current = existing.attributes.get(key, existing.describe().get(key, ""))
            raise DeclarationError(
                f"{_prefix(config)}{item.label} exists with a different value for attribute {key}: declared "
                f"{value!r}, existing {current!r}"
            ) from None
