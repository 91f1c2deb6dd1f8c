"""ElasticMQ's configuration file (``sqsemu --config elasticmq.conf``; docs/coming-from-elasticmq.md).

ElasticMQ reads HOCON (Typesafe Config), usually ``/opt/elasticmq.conf`` in its images. A file whose name ends in
``.conf`` is read here, with pyhocon, and turned into the document a TOML configuration file gives
(:func:`sqsemu.declare.parse_document` checks it like any other): facts and formats from ElasticMQ's README, no
ElasticMQ code.

What is read:

- ``queues { <name> { ... } }`` → ``[[queues]]``: ``defaultVisibilityTimeout`` → ``VisibilityTimeout``, ``delay`` →
  ``DelaySeconds``, ``receiveMessageWait`` → ``ReceiveMessageWaitTimeSeconds`` (durations such as ``10 seconds``;
  a bare number is milliseconds, as HOCON says; each must be whole seconds), ``deadLettersQueue { name,
  maxReceiveCount }`` → the dead-letter queue and its max receive count, ``fifo`` → ``FifoQueue``,
  ``contentBasedDeduplication`` → ``ContentBasedDeduplication``, ``tags { k = v }`` → tags. A quoted name
  (``"orders.fifo"``) loses its quotes. ``copyTo`` and ``moveTo`` are refused (naming the queue and the key):
  sqsemu does not copy or divert messages, and a test that relies on it would pass or fail for the wrong reason.
- ``node-address { protocol, host, port, context-path }`` → ``base_url`` (``protocol://host:port``), unless
  ``host = "*"`` or ``generate-node-address = true`` (URLs then follow the request's ``Host``, sqsemu's default);
  a non-empty ``context-path`` is refused (sqsemu's queue URLs have no path prefix).
- ``rest-sqs { bind-hostname, bind-port }`` → ``host``, ``port``; ``rest-sqs.enabled = false`` is refused.
- ``aws { region, accountId }`` → ``region``, ``account_id`` (an unquoted ``000000000000`` reads as a number and is
  written back with its 12 digits).

Everything refused (those keys, and a value sqsemu cannot honour: a duration that is not whole seconds, a
``deadLettersQueue`` without its ``maxReceiveCount``...) is named in one :class:`ElasticMQConfError`, each with
where it is (``queues.orders.copyTo``), so that one start says all that must change.

Every other key (``rest-stats``, ``rest-sqs.sqs-limits``, ``messages-storage``, ``queues-storage``,
``auto-create-queues``, ``akka``, a queue's unknown key...) is named in one warning line (logger ``sqsemu.config``);
none is silently ignored. The command line reads the file before it sets up logging: :func:`read_conf` then hands
the line back (``warnings``) and the server logs it once logging is set up, in the log's format.
``include classpath("application.conf")`` (ElasticMQ's built-in defaults, in its jar) is skipped; other includes
are pyhocon's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["ElasticMQConfError", "document_of", "read_conf"]

logger = logging.getLogger("sqsemu.config")

_CLASSPATH_INCLUDE = re.compile(r"^\s*include\s+classpath\(\s*\"[^\"]*\"\s*\)\s*$", re.M)
_QUEUE_ATTRIBUTES = {
    "defaultVisibilityTimeout": "VisibilityTimeout",
    "delay": "DelaySeconds",
    "receiveMessageWait": "ReceiveMessageWaitTimeSeconds",
}
_QUEUE_FLAGS = {"fifo": "FifoQueue", "contentBasedDeduplication": "ContentBasedDeduplication"}
_REFUSED_QUEUE_KEYS = ("copyTo", "moveTo")


class ElasticMQConfError(ValueError):
    """The ``.conf`` file cannot be parsed, or holds keys or values sqsemu cannot honour: the message names every
    one of them, with where it is (``problems``: one line each)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        if len(problems) == 1:
            message = problems[0]
        else:
            message = f"{len(problems)} settings sqsemu cannot honour:" + "".join(f"\n  - {p}" for p in problems)
        super().__init__(message)


class _Refused(Exception):
    """One refusal, while reading: collected by the caller (:class:`ElasticMQConfError` names them all)."""


def read_conf(path: str | Path, warnings: list[str] | None = None) -> dict[str, Any]:
    """The TOML-shaped document (``{"server": {...}, "queues": [...]}``) of the ElasticMQ file at ``path``. The
    warning line naming the keys it does not use is appended to ``warnings`` (for the caller to log once its
    logging is set up), or logged now when ``warnings`` is None. Raises :class:`ElasticMQConfError` naming
    everything refused (and ``OSError`` when the file is unreadable)."""
    text = Path(path).read_text(encoding="utf-8")
    return document_of(text, str(Path(path).parent), warnings)


def document_of(text: str, base_dir: str = ".", warnings: list[str] | None = None) -> dict[str, Any]:
    """:func:`read_conf` of the file's text (``base_dir``: where its relative includes start)."""
    from pyhocon import ConfigFactory  # only with an ElasticMQ file: not among every start-up's imports

    text = _CLASSPATH_INCLUDE.sub("", text)
    try:
        tree = ConfigFactory.parse_string(text, basedir=base_dir)
    except Exception as exc:  # pyparsing's and pyhocon's errors: the file is not HOCON
        raise ElasticMQConfError([f"not valid HOCON: {exc}"]) from None
    plain = _plain(tree)
    ignored: list[str] = []
    refused: list[str] = []
    server: dict[str, Any] = {}
    _read(refused, _node_address, plain, server, ignored, refused)
    _read(refused, _rest_sqs, plain.get("rest-sqs"), server, ignored, refused)
    _read(refused, _aws, plain.get("aws"), server, ignored)
    queues = _queues(plain.get("queues"), ignored, refused)
    known = ("node-address", "generate-node-address", "rest-sqs", "aws", "queues")
    ignored += [key for key in plain if key not in known]
    if refused:
        raise ElasticMQConfError(refused)
    if ignored:
        line = f"ElasticMQ configuration: sqsemu does not use these keys (ignored): {', '.join(ignored)}"
        if warnings is None:
            logger.warning("%s", line)
        else:
            warnings.append(line)
    document: dict[str, Any] = {"server": server}
    if queues:
        document["queues"] = queues
    return document


def _read(refused: list[str], read: Callable[..., None], *args: Any) -> None:
    """``read(*args)``; a :class:`_Refused` it raises (a section that is not an object, so nothing more to read in
    it) is added to ``refused``."""
    try:
        read(*args)
    except _Refused as exc:
        refused.append(str(exc))


def _plain(value: Any) -> Any:
    """pyhocon's tree as plain dicts (quoted keys unquoted), lists and values."""
    if hasattr(value, "items"):
        return {_unquote(str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _unquote(key: str) -> str:
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] == '"' else key


def _table(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Refused(f"{where} must be an object {{ ... }}")
    return value


def _node_address(plain: dict[str, Any], server: dict[str, Any], ignored: list[str], refused: list[str]) -> None:
    generate = plain.get("generate-node-address", False)
    if not isinstance(generate, bool):
        refused.append(f"generate-node-address must be true or false, got {generate!r}")
    node = _table(plain.get("node-address"), "node-address")
    context = node.get("context-path", "")
    if context not in ("", "/", None):
        refused.append(
            f"node-address.context-path = {context!r} is not supported: sqsemu's queue URLs are "
            "<scheme>://<host:port>/<account>/<name>"
        )
    ignored += [f"node-address.{key}" for key in node if key not in ("protocol", "host", "port", "context-path")]
    host = node.get("host")
    if generate is True or not node or host in ("*", None):
        return
    protocol = str(node.get("protocol", "http"))
    port = node.get("port")
    server["base_url"] = f"{protocol}://{host}" + (f":{port}" if port not in (None, "") else "")


def _rest_sqs(value: Any, server: dict[str, Any], ignored: list[str], refused: list[str]) -> None:
    rest = _table(value, "rest-sqs")
    if rest.get("enabled", True) is not True:
        refused.append("rest-sqs.enabled = false is not supported: sqsemu is the SQS endpoint")
    if "bind-hostname" in rest:
        server["host"] = str(rest["bind-hostname"])
    if "bind-port" in rest:
        server["port"] = rest["bind-port"]
    ignored += [f"rest-sqs.{key}" for key in rest if key not in ("enabled", "bind-hostname", "bind-port")]


def _aws(value: Any, server: dict[str, Any], ignored: list[str]) -> None:
    aws = _table(value, "aws")
    if "region" in aws:
        server["region"] = str(aws["region"])
    if "accountId" in aws:
        account = aws["accountId"]
        if isinstance(account, int) and not isinstance(account, bool) and 0 <= account < 10**12:
            account = f"{account:012d}"  # 000000000000 unquoted is the number 0
        server["account_id"] = str(account)
    ignored += [f"aws.{key}" for key in aws if key not in ("region", "accountId")]


def _seconds(value: Any, where: str) -> str:
    """A HOCON duration as whole seconds (a string, as SQS attributes are)."""
    if isinstance(value, bool):
        raise _Refused(f"{where} must be a duration such as 10 seconds, got {value!r}")
    if isinstance(value, (int, float)):  # a bare number is milliseconds (HOCON, "Duration format")
        seconds = value / 1000
    elif isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif hasattr(value, "normalized"):  # dateutil's relativedelta (pyhocon's seconds, minutes...)
        start = datetime(2000, 1, 1)
        seconds = (start + value - start).total_seconds()
    else:
        raise _Refused(f"{where} must be a duration such as 10 seconds, got {value!r}")
    if seconds != int(seconds):
        raise _Refused(f"{where} must be whole seconds (SQS counts in seconds), got {seconds} s")
    return str(int(seconds))


def _queues(value: Any, ignored: list[str], refused: list[str]) -> list[dict[str, Any]]:
    try:
        queues = _table(value, "queues")
    except _Refused as exc:
        refused.append(str(exc))
        return []
    out: list[dict[str, Any]] = []
    for name, body in queues.items():
        where = f"queues.{name}"
        try:
            queue = _table(body, where)
        except _Refused as exc:
            refused.append(str(exc))
            continue
        entry: dict[str, Any] = {"name": name}
        attributes: dict[str, Any] = {}
        for key, item in queue.items():
            try:
                _queue_key(key, item, where, entry, attributes, ignored)
            except _Refused as exc:
                refused.append(str(exc))
        if attributes:
            entry["attributes"] = attributes
        out.append(entry)
    return out


def _queue_key(
    key: str, item: Any, where: str, entry: dict[str, Any], attributes: dict[str, Any], ignored: list[str]
) -> None:
    """Read one key of the queue at ``where`` into its ``entry`` and ``attributes``; raises :class:`_Refused`."""
    if key in _QUEUE_ATTRIBUTES:
        attributes[_QUEUE_ATTRIBUTES[key]] = _seconds(item, f"{where}.{key}")
    elif key in _QUEUE_FLAGS:
        if not isinstance(item, bool):
            raise _Refused(f"{where}.{key} must be true or false, got {item!r}")
        if item:  # false is SQS's default (and ContentBasedDeduplication is refused on a standard queue)
            attributes[_QUEUE_FLAGS[key]] = item
    elif key == "deadLettersQueue":
        dlq = _table(item, f"{where}.deadLettersQueue")
        if "name" not in dlq or "maxReceiveCount" not in dlq:
            raise _Refused(f"{where}.deadLettersQueue needs name and maxReceiveCount")
        entry["dead_letter_queue"] = str(dlq["name"])
        entry["max_receive_count"] = dlq["maxReceiveCount"]
        ignored += [f"{where}.deadLettersQueue.{k}" for k in dlq if k not in ("name", "maxReceiveCount")]
    elif key == "tags":
        entry["tags"] = {str(k): str(v) for k, v in _table(item, f"{where}.tags").items()}
    elif key in _REFUSED_QUEUE_KEYS:
        raise _Refused(
            f"{where}.{key} is not supported: sqsemu does not {'copy' if key == 'copyTo' else 'move'} "
            f"messages to another queue; remove {key} (or read both queues in the test)"
        )
    else:
        ignored.append(f"{where}.{key}")
