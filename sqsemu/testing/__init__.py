"""Testing aids: a server in a thread with peek, reset, clock and fault-injection helpers, and a pytest plugin.

- :class:`SQSServer` - a real sqsemu server on a free port in a background thread (a context manager), with
  ``endpoint_url``, ``clock``, ``advance(seconds)``, ``client(account)``, ``sns_client(account)``, ``peek(queue)``,
  ``queues()``, ``reset(account)``, ``sns_settle()``, ``inject(...)`` and ``clear_faults()``; all through the
  server's public HTTP API.
- :func:`new_account` - a fresh 12-digit account id, for per-test isolation.
- :mod:`sqsemu.testing.plugin` - the pytest plugin (registered through the ``pytest11`` entry point): fixtures
  ``sqs_server``, ``sqs_account``, ``sqs``, ``sqs_clock``, ``sqs_lambda``, ``sns`` and ``sns_topic``.

Importing this package is cheap: the server, uvicorn and boto3 are imported only when used.
"""

from __future__ import annotations

from sqsemu.testing.server import AdminAPIError, ServerClock, SQSServer, new_account

__all__ = ["AdminAPIError", "SQSServer", "ServerClock", "new_account"]
