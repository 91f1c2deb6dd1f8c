"""Whether the installed uvicorn has what sqsemu's HTTP protocol relies on, checked at start-up.

sqsemu's own protocol (``sqsemu.http.sqsprotocol``) subclasses nothing of uvicorn and reads none of its internals
on the SQS path. What it still relies on of uvicorn:

- the documented ``http`` option of ``uvicorn.Config`` accepting a callable, called per connection with the
  keywords ``config``, ``server_state``, ``app_state`` (and ``_loop``);
- for the connections it hands over (``sqsemu.http.relay``): the class
  ``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`` (what ``http="httptools"`` selects), made with those
  same keywords, and its ``asyncio.Protocol`` methods ``connection_made``, ``data_received``, ``connection_lost``,
  ``pause_writing``, ``resume_writing``;
- ``uvicorn.Server.shutdown`` (``sqsemu.http.serving`` runs its own connections' shutdown first).

``pyproject.toml`` bounds uvicorn to the versions tested; this module checks, without importing sqsemu's protocol,
that each of those is there, so that a uvicorn outside those bounds (an install with ``--no-deps``, a future
rename) turns the fast lane off with one warning line (``sqsemu.server``) and a reason in ``GET /health`` instead
of breaking requests. The h11 fallback's needs are checked by :func:`h11_guard_unavailable`.
"""

from __future__ import annotations

import importlib
import inspect
from types import FunctionType
from typing import Any

__all__ = ["PROTOCOL_KEYWORDS", "h11_guard_unavailable", "protocol_unavailable"]

PROTOCOL_KEYWORDS = ("config", "server_state", "app_state", "_loop")
"""The keywords uvicorn gives the ``http`` protocol factory, and sqsemu passes on to uvicorn's protocol."""

_PROTOCOL_METHODS = ("connection_made", "data_received", "connection_lost", "pause_writing", "resume_writing")


def _names(*functions: Any) -> set[str]:
    """The attribute and global names the code of ``functions`` uses (``co_names``)."""
    found: set[str] = set()
    for function in functions:
        code = getattr(function, "__code__", None) if isinstance(function, FunctionType) else None
        if code is not None:
            found.update(code.co_names)
    return found


def protocol_unavailable() -> str | None:
    """Why sqsemu's HTTP protocol cannot serve with the installed uvicorn (one short sentence naming the first
    missing piece), or None when it can."""
    try:
        importlib.import_module("httptools")
    except ImportError:
        return "httptools is not installed (uvicorn serves HTTP with h11)"
    try:
        impl = importlib.import_module("uvicorn.protocols.http.httptools_impl")
        server = importlib.import_module("uvicorn.server")
    except ImportError as exc:
        return f"uvicorn has no {exc.name or 'httptools protocol'} module"
    protocol = getattr(impl, "HttpToolsProtocol", None)
    if protocol is None:
        return "uvicorn has no HttpToolsProtocol"
    for method in _PROTOCOL_METHODS:
        if not callable(getattr(protocol, method, None)):
            return f"uvicorn's HttpToolsProtocol has no {method}()"
    try:
        parameters = inspect.signature(protocol).parameters
    except (TypeError, ValueError):
        return "uvicorn's HttpToolsProtocol has no readable signature"
    for keyword in PROTOCOL_KEYWORDS:
        if keyword not in parameters:
            return f"uvicorn's HttpToolsProtocol takes no {keyword} argument"
    server_class = getattr(server, "Server", None)
    if server_class is None or not callable(getattr(server_class, "shutdown", None)):
        return "uvicorn's Server has no shutdown()"
    if "http_protocol_class" not in _names(importlib.import_module("uvicorn.config").Config.load):
        return "uvicorn's Config does not take a protocol class as its http option"
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
