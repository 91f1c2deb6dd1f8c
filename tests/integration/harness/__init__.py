"""Integration-test harness: real sqsemu server processes and real SQS clients for both wire protocols.

- :class:`ServerProcess` - ``python -m sqsemu`` on 127.0.0.1:<free port>, health-checked, stopped with SIGINT.
- :func:`client_for` - a boto3-shaped SQS client speaking ``"json"`` (current boto3) or ``"query"``
  (boto3 1.28.64 in its own venv, see :mod:`harness.legacy`).
- :func:`free_port`, :func:`http_get`, :func:`http_post_json`, :func:`wait_for_health` - small helpers;
  :func:`raw_request` sends exactly the headers it is given (``Host``, ``Origin``...).
- :func:`start_long_poll`, :func:`wait_for_long_polls`, :func:`waiting_long_polls`, :class:`Receiver` - long polls
  in background threads, synchronised on the server's count of waiting long polls (see :mod:`harness.longpoll`).
"""

from __future__ import annotations

from .clients import PROTOCOLS, SignedClients, client_for, error_of, json_client
from .legacy import LegacySQSClient, ensure_legacy_venv
from .longpoll import Receiver, start_long_poll, wait_for_long_polls, waiting_long_polls
from .process import ServerProcess, free_port, http_get, http_post_json, wait_for_health
from .raw import RawResponse, raw_request

__all__ = [
    "PROTOCOLS",
    "LegacySQSClient",
    "RawResponse",
    "Receiver",
    "ServerProcess",
    "SignedClients",
    "client_for",
    "ensure_legacy_venv",
    "error_of",
    "free_port",
    "http_get",
    "http_post_json",
    "json_client",
    "raw_request",
    "start_long_poll",
    "wait_for_health",
    "wait_for_long_polls",
    "waiting_long_polls",
]
