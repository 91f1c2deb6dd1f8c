"""What a plain ``GET /`` that is no SQS call answers: a few lines saying what the server is and where to go.

An SQS client never sends it (its calls are ``POST`` requests, or ``GET`` with an ``Action`` parameter); a person
trying the endpoint with curl does, and AWS's bare ``404 <UnknownOperationException/>`` read as if the server were
broken. A browser opening ``/`` is sent to the web console instead (``sqsemu.http.app``). Other paths without an
action (a queue URL) keep the 404 (docs/behaviour.md, 1.1).
"""

from __future__ import annotations

from sqsemu.config import Config

__all__ = ["CONTENT_TYPE", "home_text"]

CONTENT_TYPE = b"text/plain; charset=utf-8"


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
