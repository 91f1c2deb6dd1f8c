"""Whether the installed uvicorn and httptools have what sqsemu's HTTP protocol relies on, checked at start-up.

sqsemu's own protocol (``sqsemu.http.sqsprotocol``) subclasses nothing of uvicorn and reads none of its internals: it
frames and serves every request itself. What it still relies on:

- the documented ``http`` option of ``uvicorn.Config`` accepting a callable, called per connection with the
  keywords ``config``, ``server_state``, ``app_state`` (and ``_loop``), and ``Config.loaded_app`` (the app the
  requests that are not SQS calls are served by);
- ``uvicorn.Server.shutdown`` (``sqsemu.http.serving`` runs its own connections' shutdown first);
- httptools' ``HttpRequestParser.set_dangerous_leniencies`` (what a client sends after asking to close is dropped,
  not an error that would lose the answer owed).

``pyproject.toml`` bounds uvicorn to the versions tested; this module checks, without importing sqsemu's protocol,
that each of those is there, so that a uvicorn outside those bounds (an install with ``--no-deps``, a future
rename) turns the fast lane off with one warning line (``sqsemu.server``) and a reason in ``GET /health`` instead
of breaking requests. The h11 fallback's needs are checked by :func:`h11_guard_unavailable`.
"""

from __future__ import annotations

import importlib
from types import FunctionType
from typing import Any

__all__ = ["PROTOCOL_KEYWORDS", "h11_guard_unavailable", "protocol_unavailable"]

PROTOCOL_KEYWORDS = ("config", "server_state", "app_state", "_loop")
"""The keywords uvicorn gives the ``http`` protocol factory."""


def _names(*functions: Any) -> set[str]:
    """The attribute and global names the code of ``functions`` uses (``co_names``)."""
    found: set[str] = set()
    for function in functions:
        code = getattr(function, "__code__", None) if isinstance(function, FunctionType) else None
        if code is not None:
            found.update(code.co_names)
    return found


def protocol_unavailable() -> str | None:
    """Why sqsemu's HTTP protocol cannot serve with the installed uvicorn and httptools (one short sentence naming
    the first missing piece), or None when it can."""
    try:
        httptools = importlib.import_module("httptools")
    except ImportError:
        return "httptools is not installed (uvicorn serves HTTP with h11)"
    parser = getattr(httptools, "HttpRequestParser", None)
    if parser is None or not callable(getattr(parser, "set_dangerous_leniencies", None)):
        return "httptools' HttpRequestParser has no set_dangerous_leniencies() (httptools 0.6.2 or later has)"
    try:
        server = importlib.import_module("uvicorn.server")
        config = importlib.import_module("uvicorn.config")
    except ImportError as exc:
        return f"uvicorn has no {exc.name or 'server'} module"
    server_class = getattr(server, "Server", None)
    if server_class is None or not callable(getattr(server_class, "shutdown", None)):
        return "uvicorn's Server has no shutdown()"
    names = _names(config.Config.load)
    if "http_protocol_class" not in names:
        return "uvicorn's Config does not take a protocol class as its http option"
    if "loaded_app" not in names:
        return "uvicorn's Config has no loaded_app"
    return None


def h11_guard_unavailable() -> str | None:
    """Why uvicorn's h11 protocol cannot carry the read deadline of ``sqsemu.http.h11guard`` (its methods
    ``data_received``, ``connection_made``, ``connection_lost``; its attributes ``conn``, ``loop``, ``transport``),
    or None when it can."""
    try:
        importlib.import_module("h11")
        impl = importlib.import_module("uvicorn.protocols.http.h11_impl")
    except ImportError as exc:
        return f"{exc.name or 'h11'} cannot be imported"
    protocol = getattr(impl, "H11Protocol", None)
    if protocol is None:
        return "uvicorn has no H11Protocol"
    for method in ("data_received", "connection_made", "connection_lost"):
        if not callable(getattr(protocol, method, None)):
            return f"uvicorn's H11Protocol has no {method}()"
    known = _names(protocol.__init__, protocol.connection_made)
    for attribute in ("conn", "loop", "transport"):
        if attribute not in known:
            return f"uvicorn's H11Protocol has no {attribute} attribute"
    return None
