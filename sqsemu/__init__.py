"""sqsemu: a local Amazon SQS-compatible server (AWS JSON 1.0 and AWS Query protocols).

Public API (imported lazily, so ``import sqsemu`` stays cheap):

- :class:`Config` - the one frozen configuration dataclass (the CLI and ``SQSEMU_*`` variables fill it too).
- :func:`run` - serve a ``Config`` in the foreground until Ctrl-C / SIGTERM.
- :class:`ServerThread` - a server in a background thread on a free port, for tests (a context manager).
- :func:`build` - ``(app, broker, clock)`` for embedding the ASGI app elsewhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqsemu import compiled as _compiled

__version__ = "0.1.0"

# The compiled hot path (mypyc) or the pure-Python sources: chosen once, before any of those modules is imported.
_compiled.activate()

__all__ = ["Config", "ServerThread", "__version__", "build", "run"]

if TYPE_CHECKING:
    from sqsemu.config import Config
    from sqsemu.server import ServerThread, build, run

_LAZY = {
    "Config": "sqsemu.config",
    "run": "sqsemu.server",
    "build": "sqsemu.server",
    "ServerThread": "sqsemu.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sqsemu' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
