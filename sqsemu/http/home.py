"""What a plain ``GET /`` that is no SQS call answers: a few lines saying what the server is and where to go.

An SQS client never sends it (its calls are ``POST`` requests, or ``GET`` with an ``Action`` parameter); a person
trying the endpoint with curl does, and AWS's bare ``404 <UnknownOperationException/>`` read as if the server were
broken. A browser opening ``/`` is sent to the web console instead (``sqsemu.http.app``), and so is a browser
opening a queue URL (``/<account>/<name>``): to the console's page of that queue (:func:`console_queue_page`). Other
requests without an action (an SDK's, curl's: no ``text/html`` in ``Accept``) keep the 404 (docs/behaviour.md, 1.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from sqsemu.config import ACCOUNT_RE, Config
from sqsemu.protocol.urls import path_queue

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker

__all__ = ["CONSOLE_QUEUES", "CONTENT_TYPE", "console_queue_page", "home_text"]

CONTENT_TYPE = b"text/plain; charset=utf-8"
CONSOLE_QUEUES = "/_sqsemu/ui/queues"
"""Where the web console's queue pages are: ``<CONSOLE_QUEUES>/<account>/<region>/<name>`` (``sqsemu.console``)."""


def console_queue_page(path: str, config: Config, broker: Broker) -> bytes | None:
    """The console's page (a path, for ``Location``) of the queue a request path addresses (``/<account>/<name>``,
    ElasticMQ's ``/queue/<name>``), or None when ``path`` is no queue URL. The region is the server's, unless the
    queue is only in other regions and the console is open to all (no ``--admin-token``): then its first region
    (the page's place names nothing that the console would not show anyone). A queue that exists nowhere gets its
    page in the server's region, which says so."""
    addressed = path_queue(path)
    if addressed is None:
        return None
    account, name = addressed
    account = account or config.account_id
    if not ACCOUNT_RE.match(account) or not name:
        return None
    region = config.region
    if not config.admin_token:
        regions = sorted(
            ns.region for ns, queues in broker.namespaces.items() if ns.account_id == account and name in queues
        )
        if regions and region not in regions:
            region = regions[0]
    return f"{CONSOLE_QUEUES}/{account}/{quote(region, safe='')}/{quote(name, safe='')}".encode()


def home_text(config: Config, version: str, base: str) -> bytes:
    """The answer's body (UTF-8 text): the version, the SQS endpoint ``base`` (``scheme://host:port``), the web
    console's address (or why there is none), ``/health`` and ``/metrics``."""
    if not config.admin:
        console = "off (--no-admin)"
    elif not config.console:
        console = "off (--no-console)"
    else:
        console = f"{base}/_sqsemu/ui/ (open it in a browser)"
    metrics = f"{base}/metrics" if config.metrics else "off (--no-metrics)"
    lines = [
        f"sqsemu {version}: a local Amazon SQS-compatible server (AWS JSON 1.0 and AWS Query protocols).",
        "",
        f"SQS endpoint: {base}  (give it to an SQS client as its endpoint URL)",
        f"Web console:  {console}",
        f"Health:       {base}/health",
        f"Metrics:      {metrics}",
        "",
        "This answers a plain GET of / only: SQS calls are POST requests, or GET requests with an Action parameter.",
    ]
    return ("\n".join(lines) + "\n").encode()
