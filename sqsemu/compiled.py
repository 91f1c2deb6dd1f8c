"""Which build is running: the hot path compiled with mypyc, or the pure-Python sources (the reference).

:data:`MODULES` is the one list of the modules that ``setup.py`` compiles with mypyc when mypy and a C compiler are
present at install time (``pip install .``, ``pip install -e .``, ``python -m build``, the Docker image); every other
module is always pure Python. To take a module out of the compiled build, delete its line here and reinstall. The
compiled modules are protocol and engine code, never a subclass of a dependency's class (``sqsemu.http.h11guard`` and
``sqsemu.http.serving`` use uvicorn's classes and stay pure); docs/compiled.md says what is left out and why, and
how to build and check either way.

At run time the compiled modules are used when all of them are installed and current; else the pure sources run and
:func:`status` says why. ``SQSEMU_PURE_PYTHON=1`` in the environment forces the pure sources even where compiled
modules are installed (as it forces a pure build at install time). :func:`activate` makes that choice once, before
any listed module is imported (``sqsemu/__init__.py`` calls it); :func:`status` answers the start-up banner's and
``GET /health``'s ``build`` field: ``compiled (mypyc)`` or ``pure Python: <reason>``.

This module imports only the standard library: ``setup.py`` reads :data:`MODULES` from it without importing sqsemu.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["COMPILED", "MODULES", "PURE_ENV", "activate", "is_compiled", "status"]

MODULES: tuple[str, ...] = (
    # the wire protocols
    "sqsemu.protocol.detect",
    "sqsemu.protocol.errors",
    "sqsemu.protocol.json",
    "sqsemu.protocol.md5",
    "sqsemu.protocol.operations",
    "sqsemu.protocol.query",
    "sqsemu.protocol.urls",
    # the engine
    "sqsemu.engine.attributes",
    "sqsemu.engine.broker",
    "sqsemu.engine.events",
    "sqsemu.engine.fifo",
    "sqsemu.engine.message",
    "sqsemu.engine.queue",
    "sqsemu.engine.timerwheel",
    "sqsemu.engine.validation",
    "sqsemu.engine.waiters",
    # the SQS answer path (a plain class) and sqsemu's own HTTP protocol (subclassing nothing: sqsemu.http.h11guard
    # and sqsemu.http.serving, which use uvicorn's classes, stay pure; so does sqsemu.http.cycle, off the hot path)
    "sqsemu.http.app",
    "sqsemu.http.deadline",
    "sqsemu.http.sqsprotocol",
    # what the engine's events and each call feed (the journal's fan-out calls these per message, the app per call)
    "sqsemu.observability.histogram",
    "sqsemu.observability.history",
    "sqsemu.observability.queuecounters",
    "sqsemu.observability.requeststats",
    # the durable store's per-message recording (the rest of sqsemu.persistence stays pure: SQLite, the writer)
    "sqsemu.persistence.rows",
    # Left pure: sqsemu.protocol.shapes (mypyc 2.4 compiles a dataclass's ClassVar, the request classes' ACTION and
    # MEMBERS, into an attribute that the generated __init__ then fails to write).
)
"""The modules compiled with mypyc, by import name (one list: ``setup.py`` and the run-time check both read it)."""

PURE_ENV = "SQSEMU_PURE_PYTHON"
"""The environment variable that forces the pure-Python build (at install time) or sources (at run time)."""

COMPILED = "compiled (mypyc)"
"""What :func:`status` answers when the compiled modules run."""

_state: dict[str, str] = {}


def _forced_pure() -> bool:
    return os.environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def _paths(module: str) -> tuple[str, list[str]]:
    """``(source path, [compiled extension paths that exist])`` of a listed module, found beside this file."""
    parts = module.split(".")[1:]
    base = os.path.join(_package_dir(), *parts)
    extensions = [base + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES if os.path.isfile(base + suffix)]
    return base + ".py", extensions


def _in_checkout() -> bool:
    """Whether sqsemu runs from a source checkout (an editable install), where sources change after a build."""
    return os.path.isfile(os.path.join(os.path.dirname(_package_dir()), "pyproject.toml"))


def _decide() -> str:
    """``""`` when the compiled modules should run; else the reason the pure sources run."""
    if _forced_pure():
        return f"{PURE_ENV} is set"
    missing: list[str] = []
    stale: list[str] = []
    checkout = _in_checkout()
    for module in MODULES:
        source, extensions = _paths(module)
        if not extensions:
            missing.append(module)
        elif checkout and os.path.isfile(source):
            if os.path.getmtime(source) > max(os.path.getmtime(e) for e in extensions):
                stale.append(module)
    if len(missing) == len(MODULES):
        return "not compiled at install (no mypyc or no C compiler then, or a pure build was asked for)"
    if missing:
        return f"compiled build incomplete ({', '.join(missing)} not compiled): reinstall"
    if stale:
        return f"sources changed since the build ({', '.join(stale)}): reinstall (pip install -e .) to compile"
    return ""


class _SourceFinder:
    """A meta path finder that loads the listed modules from their ``.py`` sources, never their extensions."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in MODULES:
            return None
        source, _ = _paths(fullname)
        if not os.path.isfile(source):
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def activate() -> None:
    """Choose the build once, before any listed module is imported: when the pure sources are to run, a finder in
    front of ``sys.meta_path`` loads the listed modules from source. Calling it again does nothing."""
    if "reason" in _state:
        return
    reason = _decide()
    if reason and not any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
    _state["reason"] = reason


def is_compiled() -> bool:
    """Whether the listed modules run compiled (each one imported is a mypyc extension module)."""
    activate()
    if _state["reason"]:
        return False
    for module in MODULES:
        loaded = sys.modules.get(module)
        if loaded is not None and not isinstance(
            getattr(loaded, "__loader__", None), importlib.machinery.ExtensionFileLoader
        ):
            return False
    return True


def status() -> str:
    """``compiled (mypyc)`` or ``pure Python: <reason>``: what the banner and ``GET /health`` say."""
    activate()
    reason = _state["reason"]
    if not reason and not is_compiled():
        reason = "a listed module was imported from source before the build was chosen"
    return f"pure Python: {reason}" if reason else COMPILED
