"""Whether the installed uvicorn has every internal the HTTP fast lane and the guarded protocol read.

``sqsemu.http.protocol`` and ``sqsemu.http.fastlane`` subclass uvicorn's httptools protocol and read some of its
internals (names that are not uvicorn's public API). ``pyproject.toml`` bounds uvicorn to the versions they were
tested on (0.45 to 0.54); this module checks, at start-up and without importing those two modules, that what they
need is there, so that a uvicorn outside those bounds (an install with ``--no-deps``, a future rename) turns the
fast lane off with one warning line (``sqsemu.server``) and a reason in ``GET /health``, instead of silently
taking the slow path or breaking requests.

What is checked (each by name; an instance attribute by the names its class's ``__init__`` or ``connection_made``
uses, from their code objects):

- the modules ``httptools`` and ``uvicorn.protocols.http.httptools_impl``; ``STATUS_LINE`` there and
  ``HIGH_WATER_LIMIT`` in ``uvicorn.protocols.http.flow_control``;
- ``HttpToolsProtocol`` methods ``_start_asgi_task`` (reached from ``on_headers_complete`` and, for pipelined
  requests, ``on_response_complete``), ``on_headers_complete``, ``on_body``, ``on_message_begin``,
  ``on_message_complete``, ``on_response_complete``, ``data_received``, ``connection_made``, ``connection_lost``,
  ``shutdown``; its attributes ``app``, ``loop``, ``logger``, ``access_log``, ``tasks``, ``pipeline``, ``cycle``,
  ``transport``, ``flow``;
- ``RequestResponseCycle`` attributes ``scope``, ``transport``, ``body``, ``default_headers``, ``on_response``,
  ``keep_alive``, ``disconnected``, ``waiting_for_100_continue``, ``response_started``, ``response_complete``, and
  ``FlowControl.read_paused``.
"""

from __future__ import annotations

import importlib
from types import FunctionType
from typing import Any

__all__ = ["fast_lane_unavailable", "guard_unavailable", "h11_guard_unavailable"]

_PROTOCOL_METHODS = (
    "_start_asgi_task",
    "on_headers_complete",
    "on_body",
    "on_message_begin",
    "on_message_complete",
    "on_response_complete",
    "data_received",
    "connection_made",
    "connection_lost",
    "shutdown",
)
_PROTOCOL_ATTRIBUTES = ("app", "loop", "logger", "access_log", "tasks", "pipeline", "cycle", "transport", "flow")
_CYCLE_ATTRIBUTES = (
    "scope",
    "transport",
    "body",
    "default_headers",
    "on_response",
    "keep_alive",
    "disconnected",
    "waiting_for_100_continue",
    "response_started",
    "response_complete",
)
_CALLERS_OF_START = ("on_headers_complete", "on_response_complete")


def _names(*functions: Any) -> set[str]:
    """The attribute and global names the code of ``functions`` uses (``co_names``)."""
    found: set[str] = set()
    for function in functions:
        code = getattr(function, "__code__", None) if isinstance(function, FunctionType) else None
        if code is not None:
            found.update(code.co_names)
    return found


_GUARD_METHODS = (
    "on_headers_complete",
    "on_message_begin",
    "on_message_complete",
    "data_received",
    "connection_made",
    "connection_lost",
    "shutdown",
)
_GUARD_ATTRIBUTES = ("loop", "logger", "cycle", "transport", "flow")


def guard_unavailable() -> str | None:
    """Why the installed uvicorn cannot carry the guarded protocol (``sqsemu.http.protocol``: read deadline, head
    cap), or None when it can. Its needs are a subset of the fast lane's."""
    return _check(_GUARD_METHODS, (), _GUARD_ATTRIBUTES, ("response_started", "response_complete"))


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


def fast_lane_unavailable() -> str | None:
    """Why the installed uvicorn cannot carry the fast lane (one short sentence naming the first missing
    internal), or None when it can."""
    return _check(_PROTOCOL_METHODS, _CALLERS_OF_START, _PROTOCOL_ATTRIBUTES, _CYCLE_ATTRIBUTES)


def _check(
    methods: tuple[str, ...], callers: tuple[str, ...], attributes: tuple[str, ...], cycle_attributes: tuple[str, ...]
) -> str | None:
    try:
        importlib.import_module("httptools")
    except ImportError:
        return "httptools is not installed (uvicorn serves HTTP with h11)"
    try:
        impl = importlib.import_module("uvicorn.protocols.http.httptools_impl")
        flow_control = importlib.import_module("uvicorn.protocols.http.flow_control")
    except ImportError as exc:
        return f"uvicorn has no {exc.name or 'httptools protocol'} module"
    for module, name in ((impl, "STATUS_LINE"), (flow_control, "HIGH_WATER_LIMIT"), (impl, "RequestResponseCycle")):
        if not hasattr(module, name):
            return f"uvicorn has no {module.__name__}.{name}"
    protocol = getattr(impl, "HttpToolsProtocol", None)
    if protocol is None:
        return "uvicorn has no HttpToolsProtocol"
    for method in methods:
        if not callable(getattr(protocol, method, None)):
            return f"uvicorn's HttpToolsProtocol has no {method}()"
    for caller in callers:
        if "_start_asgi_task" not in _names(getattr(protocol, caller)):
            return f"uvicorn's HttpToolsProtocol.{caller}() does not start requests through _start_asgi_task()"
    known = _names(protocol.__init__, protocol.connection_made)
    for attribute in attributes:
        if attribute not in known:
            return f"uvicorn's HttpToolsProtocol has no {attribute} attribute"
    known = _names(impl.RequestResponseCycle.__init__)
    for attribute in cycle_attributes:
        if attribute not in known:
            return f"uvicorn's RequestResponseCycle has no {attribute} attribute"
    if "read_paused" not in _names(flow_control.FlowControl.__init__):
        return "uvicorn's FlowControl has no read_paused attribute"
    return None
