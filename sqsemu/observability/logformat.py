"""The server's log formats (``--log-format``) and the logging set-up of the command-line server.

- ``text`` (default): ``<time> <LEVEL> <logger> <message>``, one line per record, the time in UTC (ISO 8601,
  milliseconds), e.g. ``2026-11-05T10:11:12.345Z INFO sqsemu.access action=SendMessage ...``.
- ``json``: one JSON object per line (JSON Lines, for log collectors): ``time``, ``level``, ``logger``,
  ``message`` (what the text format shows after the logger name), ``exception`` (a traceback, when there is one),
  and the record's own fields when it has them (access lines and the banner: see
  :mod:`~sqsemu.observability.accesslog`, :mod:`~sqsemu.observability.banner`).

:func:`logging_config` is the ``logging.config.dictConfig`` dictionary the command-line server hands uvicorn: one
handler on standard error with the chosen format for uvicorn's loggers and ``sqsemu.*``, at ``--log-level``.
A server started in-process (``ServerThread``, the pytest plugin) leaves ``sqsemu.*`` to the host program's logging
configuration: its records propagate to the root logger as any library's do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from sqsemu.config import Config

__all__ = ["LEVELS", "JsonFormatter", "TextFormatter", "logging_config", "utc_time"]

LEVELS = {"critical": 50, "error": 40, "warning": 30, "info": 20, "debug": 10, "trace": 5}
"""``--log-level`` names and their ``logging`` levels (``trace`` is uvicorn's level 5)."""


def utc_time(created: float) -> str:
    """``created`` (epoch seconds) as ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    seconds = int(created)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int((created - seconds) * 1000):03d}Z"


def record_fields(record: logging.LogRecord) -> Mapping[str, Any] | None:
    """The structured fields a record carries: its message object's ``fields()`` (access lines), or the
    ``fields`` given with ``extra={"fields": {...}}`` (the banner); None for plain records."""
    fields: Callable[[], Mapping[str, Any]] | None = getattr(record.msg, "fields", None)
    if callable(fields):
        return fields()
    given = record.__dict__.get("fields")
    return given if isinstance(given, Mapping) else None


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger> <message>`` (and the traceback on the next lines, if any)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 (logging API)
        return utc_time(record.created)


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": utc_time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = record_fields(record)
        if fields:
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return orjson.dumps(entry, default=str).decode()


def logging_config(config: Config) -> dict[str, Any]:
    """The ``dictConfig`` of the command-line server: uvicorn's loggers and ``sqsemu.*`` write to standard error
    in ``config.log_format``, at ``config.log_level``. Loggers configured elsewhere are left alone."""
    formatter = JsonFormatter if config.log_format == "json" else TextFormatter
    level = LEVELS[config.log_level]
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"sqsemu": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "handlers": {"sqsemu": {"class": "logging.StreamHandler", "formatter": "sqsemu", "stream": "ext://sys.stderr"}},
        "loggers": {
            "uvicorn": {"handlers": ["sqsemu"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["sqsemu"], "level": level, "propagate": False},
            "sqsemu": {"handlers": ["sqsemu"], "level": level, "propagate": False},
        },
    }
