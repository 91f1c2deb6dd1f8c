"""A hint in the log when a call names a queue that exists, but in another region or account than the caller's.

A client whose region (or account) is not the queue's gets SQS's answer, ``QueueDoesNotExist`` ("The specified queue
does not exist."), exactly as AWS gives it: queues are per region and account (docs/behaviour.md 1.3). Nothing in that
answer says that a queue of the name exists elsewhere on this server, which is the usual cause on a local server (an
SDK's default region, a profile's). :func:`hint_missing_queue` logs one INFO line (``sqsemu.engine``) naming where a
queue of that name does exist::

    QueueDoesNotExist for queue 'orders' in region eu-west-1, account 000000000000 (the caller's); a queue of that
    name exists in region us-east-1, account 000000000000: is the client's region (or account) the queue's?

The line is bounded and rate-limited, so that a client polling a wrong URL cannot flood the log: at most
``LISTED_PLACES`` places are named (``and N more``); one line per (caller's account, region, queue name) each
``WINDOW_MS`` of the server's clock; at most ``MOST_LINES`` lines per window in all; at most ``MOST_KEYS`` names
remembered (beyond them, no hint until the window ends). Only the log changes: the answer is AWS's.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker, Namespace

__all__ = ["LISTED_PLACES", "MOST_KEYS", "MOST_LINES", "WINDOW_MS", "MissingQueueHints", "hint_missing_queue"]

logger = logging.getLogger("sqsemu.engine")

WINDOW_MS = 60_000
"""The rate limit's window (milliseconds of the server's clock)."""
MOST_LINES = 10
"""Hint lines logged per window, all names together."""
MOST_KEYS = 1_024
"""(account, region, name) keys remembered per window."""
LISTED_PLACES = 3
"""Places (region and account) one line names before ``and N more``."""
_LAYER = "missing queue hints"


class MissingQueueHints:
    """The rate limit of one server's hints (kept in ``Broker.layers``)."""

    def __init__(self) -> None:
        self.window_start_ms = -WINDOW_MS
        self.lines = 0
        self.logged: set[tuple[str, str, str]] = set()

    def admit(self, key: tuple[str, str, str], now_ms: int) -> bool:
        """Whether a hint for ``key`` may be logged at ``now_ms`` (and count it when it may)."""
        if now_ms - self.window_start_ms >= WINDOW_MS:
            self.window_start_ms, self.lines = now_ms, 0
            self.logged.clear()
        if key in self.logged or self.lines >= MOST_LINES or len(self.logged) >= MOST_KEYS:
            return False
        self.logged.add(key)
        self.lines += 1
        return True


def hint_missing_queue(broker: Broker, ns: Namespace, name: str) -> None:
    """A call in ``ns`` (the caller's region, the addressed account) named queue ``name``, which ``ns`` lacks: log
    where a queue of that name exists on this server, if anywhere (see the module docstring; rate-limited)."""
    places = sorted(
        (other.account_id, other.region)
        for other, queues in broker.namespaces.items()
        if other != ns and name in queues
    )
    if not places:
        return
    hints = broker.layers.get(_LAYER)
    if not isinstance(hints, MissingQueueHints):
        hints = broker.layers[_LAYER] = MissingQueueHints()
    if not hints.admit((ns.account_id, ns.region, name), broker.clock.now_ms()):
        return
    named = [f"region {region}, account {account}" for account, region in places[:LISTED_PLACES]]
    more = len(places) - len(named)
    where = "; ".join(named) + (f" and {more} more" if more > 0 else "")
    logger.info(
        "QueueDoesNotExist for queue %r in region %s, account %s (the caller's); a queue of that name exists in %s: "
        "is the client's region (or account) the queue's?",
        name, ns.region, ns.account_id, where,
    )  # fmt: skip
