"""boto3 clients made from one session per process: the testing aids' clients (:meth:`SQSServer.client`, the
pytest plugin's ``sqs`` fixture) cost a millisecond or two to make instead of 50-60 ms.

A fresh ``boto3.session.Session()`` loads and parses the service model, the endpoint rule set and the partitions
each time it makes its first client; clients made from one session share what it parsed. Each client still gets
its own event hooks, configuration and credentials (botocore copies the session's event emitter and config store
for every client), so clients made here are as independent as clients made from sessions of their own. Making a
client from a session is not documented as thread-safe: it is done under a lock. boto3 is imported at the first
call (``import sqsemu.testing`` stays cheap).

See boto3's documentation, "Session reference" and "Clients" (creating clients from a session).
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_session: Any = None


def new_client(service_name: str, **options: Any) -> Any:
    """A boto3 client of ``service_name`` (``"sqs"``, ``"lambda"``...) made with ``options`` (the keywords of
    ``boto3.session.Session.client``: ``endpoint_url``, ``region_name``, credentials, ``config``...) from this
    process's shared session. Raises what ``Session.client`` raises (``botocore.exceptions.UnknownServiceError``,
    ``ValueError`` for a bad endpoint URL...)."""
    global _session
    with _lock:
        if _session is None:
            import boto3

            _session = boto3.session.Session()
        return _session.client(service_name, **options)
