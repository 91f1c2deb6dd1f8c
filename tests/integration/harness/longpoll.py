"""Long polls a test can synchronise with, instead of sleeping and hoping the request got there first.

- :func:`waiting_long_polls` - how many ReceiveMessage calls are parked on a queue now: the ``waiting_long_polls``
  field of the admin peek route (``GET /_sqsemu/queues/{account}/{name}/messages``).
- :func:`wait_for_long_polls` - poll that count until it is exactly the expected number (deadline, short interval).
- :class:`Receiver` - a ReceiveMessage call running in a background thread.
- :func:`start_long_poll` - start a :class:`Receiver` and return once the server has it parked.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any
from urllib.parse import quote, urlsplit

from .process import http_get

WAIT_DEADLINE_S = 15.0  # how long a long poll may take to reach the server and park before the test fails
POLL_INTERVAL_S = 0.01


class Receiver(threading.Thread):
    """A ReceiveMessage call (``client.receive_message(**kwargs)``) in a daemon thread; ``result`` or ``error``
    once it ends."""

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.kwargs = kwargs
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.client.receive_message(**self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            self.error = exc

    def messages(self) -> list[dict[str, Any]]:
        """The received messages (``[]`` for an empty answer); fails the test if the call raised."""
        assert self.error is None, self.error
        assert self.result is not None, "the receive has not returned"
        return list(self.result.get("Messages", []))


def waiting_long_polls(endpoint_url: str, queue_url: str) -> int:
    """How many long polls wait on ``queue_url`` (``.../<account>/<name>``, the server's default region) now."""
    parts = [p for p in urlsplit(queue_url).path.split("/") if p]
    account, name = parts[-2], parts[-1]
    url = f"{endpoint_url}/_sqsemu/queues/{quote(account, safe='')}/{quote(name, safe='')}/messages"
    status, _, body = http_get(url, timeout=10)
    if status != 200:
        raise RuntimeError(f"GET {url} answered HTTP {status}: {body!r}")
    return int(json.loads(body)["queue"]["waiting_long_polls"])


def wait_for_long_polls(
    endpoint_url: str,
    queue_url: str,
    count: int,
    receivers: tuple[Receiver, ...] = (),
    deadline_s: float = WAIT_DEADLINE_S,
) -> None:
    """Return once exactly ``count`` long polls wait on ``queue_url``.

    Polls every ``POLL_INTERVAL_S`` seconds; fails (AssertionError) after ``deadline_s`` seconds, or at once when
    one of ``receivers`` - calls expected to be among the waiting ones - has already returned.
    """
    deadline = time.monotonic() + deadline_s
    while True:
        seen = waiting_long_polls(endpoint_url, queue_url)
        if seen == count:
            return
        for receiver in receivers:
            if not receiver.is_alive():
                raise AssertionError(
                    f"a receive returned instead of waiting (result {receiver.result!r}, error {receiver.error!r})"
                )
        if time.monotonic() >= deadline:
            raise AssertionError(f"{seen} long polls wait on {queue_url} after {deadline_s} s, expected {count}")
        time.sleep(POLL_INTERVAL_S)


def start_long_poll(endpoint_url: str, client: Any, **kwargs: Any) -> Receiver:
    """Start ``client.receive_message(**kwargs)`` (``QueueUrl`` required) in a :class:`Receiver` and return once
    the server counts one more long poll waiting on that queue than before."""
    queue_url = kwargs["QueueUrl"]
    before = waiting_long_polls(endpoint_url, queue_url)
    receiver = Receiver(client, **kwargs)
    receiver.start()
    wait_for_long_polls(endpoint_url, queue_url, before + 1, (receiver,))
    return receiver
