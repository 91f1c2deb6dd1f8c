"""What the server tells its operators: logs that say what happened, and Prometheus metrics.

One concept per module:

- :mod:`~sqsemu.observability.logformat`: the log formats (``--log-format text|json``) and the logging set-up of
  the command-line server.
- :mod:`~sqsemu.observability.accesslog`: one access line per SQS or SNS call, another kind per admin call
  (``--access-log``).
- :mod:`~sqsemu.observability.banner`: the start-up banner.
- :mod:`~sqsemu.observability.histogram`: a lock-free histogram for the event loop's thread.
- :mod:`~sqsemu.observability.requeststats`: requests by action, protocol and outcome, and their durations.
- :mod:`~sqsemu.observability.queuecounters`: per-queue counters, from the engine's events (a Journal subscriber).
- :mod:`~sqsemu.observability.queuefamilies`, :mod:`~sqsemu.observability.topicfamilies`: the per-queue and the
  SNS families of ``GET /metrics``, written in slices.
- :mod:`~sqsemu.observability.metrics`: ``GET /metrics``: a prometheus-client collector reading the engine's state,
  the counters above and the server's, when scraped (docs/architecture.md, principle 7).

Nothing here runs on the SQS hot path when ``--access-log`` is off and ``--no-metrics`` is given; with metrics on
the hot path pays one request record (a dict update and a histogram bucket) and the per-queue counters' events.
"""

from __future__ import annotations

METRICS_PATH = "/metrics"
"""Where the Prometheus metrics are served (``GET``)."""
