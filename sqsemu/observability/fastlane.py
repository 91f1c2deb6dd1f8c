"""Whether the HTTP fast lane serves this server, and how many SQS calls it answered: what ``GET /health`` shows as
``http_fast_lane``, ``sqsemu_info`` as its ``http_fast_lane`` label and ``/metrics`` as
``sqsemu_fast_lane_answers_total``.

The server decides once, when it makes its uvicorn settings (``sqsemu.server``): ``on``, or ``off: <reason>`` when
the installed uvicorn lacks an internal the fast lane reads (``sqsemu.http.lanecheck``), httptools is missing, or
the app is not served by sqsemu's own server (an in-process ASGI caller). The fast lane counts each answer it
writes (one integer addition, on the event loop's thread); the scrape reads the count there too.
"""

from __future__ import annotations

__all__ = ["NOT_SERVED", "FastLaneState"]

NOT_SERVED = "off: the app is not served by sqsemu's HTTP server"
"""The status of an app that no sqsemu server serves (yet): an in-process ASGI caller, a test."""


class FastLaneState:
    """``status``: ``"on"`` or ``"off: <reason>"``; ``answers``: SQS calls answered by the fast lane so far;
    ``app_errors``: requests of the other routes whose ASGI app raised (each logged once, answered 500 or closed:
    ``sqsemu.http.cycle``)."""

    __slots__ = ("answers", "app_errors", "status")

    def __init__(self) -> None:
        self.status = NOT_SERVED
        self.answers = 0
        self.app_errors = 0

    @property
    def on(self) -> bool:
        """Whether the fast lane serves the SQS endpoint."""
        return self.status == "on"
