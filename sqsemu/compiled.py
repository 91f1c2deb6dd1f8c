"""Which build is running: the hot path compiled with mypyc, or the pure-Python sources (the reference).

:data:`MODULES` is the one list of the modules that ``setup.py`` compiles with mypyc when mypy and a C compiler are
present at install time (``pip install .``, ``pip install -e .``, ``python -m build``, the Docker image); every other
module is always pure Python. To take a module out of the compiled build, delete its line here and reinstall. The
compiled modules are protocol and engine code, never a subclass of a dependency's class (``sqsemu.http.h11guard`` and
``sqsemu.http.serving`` use uvicorn's classes and stay pure); docs/compiled.md says what is left out and why, and
how to build and check either way.

At run time the compiled modules are used when all of them are installed and current; else the pure sources run and
:func:`status` says why. Current is decided by content: the build records a SHA-256 of each compiled module's source
in :data:`SOURCES_FILE` beside the package's modules (:func:`record_sources`), and a start hashes the sources again
(about a millisecond): a source rewritten with the same bytes, or an extension older than its source, is still
current; a source whose bytes differ is stale. A stale or incomplete compile is also logged as a warning at start
(:func:`warn_if_stale`). ``setup.py`` installs each compiled file with :func:`install_file` (a new file renamed into
place), so that a reinstall never rewrites a file a running server has mapped.

``SQSEMU_PURE_PYTHON=1`` in the environment forces the pure sources even where compiled modules are installed (as
it forces a pure build at install time). :func:`activate` makes that choice once, before any listed module is
imported (``sqsemu/__init__.py`` calls it); :func:`status` answers the start-up banner's and ``GET /health``'s
``build`` field: ``compiled (mypyc)`` or ``pure Python: <reason>``.

This module imports only the standard library: ``setup.py`` reads :data:`MODULES` from it without importing sqsemu.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TypeVar

__all__ = [
    "COMPILED",
    "BuildProgress",
    "MODULES",
    "PURE_ENV",
    "SOURCES_FILE",
    "activate",
    "compile_side_by_side",
    "install_file",
    "module_of_c_file",
    "is_compiled",
    "record_sources",
    "source_digests",
    "status",
    "warn_if_stale",
]

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
    # the engine's clock: every call reads it (interpreted, each read was a Python frame on the request's path)
    "sqsemu.clock",
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

SOURCES_FILE = "compiled-sources.txt"
"""The build's record of what it compiled, in the package's folder: one ``<sha256 of the source> <module>`` a line."""

_state: dict[str, str] = {}


def source_digests(package_dir: str) -> dict[str, str]:
    """``{module: SHA-256 hex of its .py source}`` for each listed module whose source is in ``package_dir`` (the
    ``sqsemu`` package's folder)."""
    digests: dict[str, str] = {}
    for module in MODULES:
        path = os.path.join(package_dir, *module.split(".")[1:]) + ".py"
        try:
            with open(path, "rb") as f:
                digests[module] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            continue
    return digests


def install_file(source: str, target: str) -> None:
    """Copy ``source`` to ``target`` by writing a new file beside ``target`` and renaming it into place: a process
    that has ``target`` loaded (a running server's compiled modules, mapped in memory) keeps the old file, where
    copying over it in place would change the pages under it and crash it. The mode is copied, the times are not."""
    folder = os.path.dirname(os.path.abspath(target))
    os.makedirs(folder, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as original:
            shutil.copyfileobj(original, out)
        shutil.copymode(source, partial)
        os.replace(partial, target)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


def compile_side_by_side(
    compile_files: Callable[[list[str]], list[str]],
    sources: Sequence[str],
    jobs: int,
    done: Callable[[str], None] = lambda source: None,
) -> list[str]:
    """Compile the C files ``sources`` at most ``jobs`` at a time, the largest first, and return their object
    files in the order of ``sources`` (what a linker is given).

    ``compile_files([source])`` compiles one file and returns its object files (setuptools' ``CCompiler.compile``
    with the extension's options bound); ``done(source)`` is called, in this thread, as each finishes. mypyc's
    ``multi_file`` output is one C file per compiled module in one extension, which setuptools would compile one
    after the other: ``setup.py`` compiles them here on every core. The first failure (``CompileError``) is raised
    once the files already being compiled are finished; the files not started are not compiled."""
    from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

    def size(source: str) -> int:
        try:
            return os.path.getsize(source)
        except OSError:
            return 0

    waiting = sorted(sources, key=size, reverse=True)
    objects: dict[str, list[str]] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running: dict[Future[list[str]], str] = {}
        while waiting or running:
            while waiting and len(running) < max(1, jobs):  # fed as each finishes: none starts after a failure
                source = waiting.pop(0)
                running[pool.submit(compile_files, [source])] = source
            finished, _ = wait(running, return_when=FIRST_EXCEPTION)
            for future in finished:
                source = running.pop(future)
                error = future.exception()
                if error is not None:
                    wait(running)
                    raise error
                objects[source] = future.result()
                done(source)
    return [obj for source in sources for obj in objects[source]]


_T = TypeVar("_T")


class BuildProgress:
    """What ``setup.py`` says while it compiles, every figure measured on this build, none assumed.

    The build's steps, in order: mypyc translates the modules to C (:meth:`translating`, :meth:`translated`: the
    time it took); the C files of the one shared library compile side by side (:meth:`extension`, then
    :meth:`compiled` as each file is done, which names its module, or mypyc's runtime, with the seconds since
    compiling began and, from the second file on, an estimate of the compiling left: the C not yet compiled at this
    build's pace so far, in bytes per second, labelled as an estimate); the library links (:meth:`link`: a line
    when the linker starts, one with its duration when it ends); the modules' import stubs (one tiny C file each)
    compile and link (one line when they start); :meth:`finished` gives the total and each step's time.
    ``say(line)`` writes a line; ``clock()`` gives seconds (``time.monotonic``). No figure is a constant:
    docs/compiled.md shows a run."""

    def __init__(
        self, say: Callable[[str], None], modules: int = 0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.say = say
        self.modules = modules
        self.clock = clock
        self.seconds: dict[str, float] = {}
        """Seconds per step: ``translate``, ``compile``, ``link``, ``stubs``."""
        self._step = ""
        self._mark = self._began = clock()
        self._compile_began: float | None = None
        self._sizes: dict[str, int] = {}
        self._done_bytes = 0
        self._files_done = 0
        self._stubs = 0

    def _switch(self, step: str) -> float:
        """Close the current step's time at now, start ``step``; now."""
        now = self.clock()
        if self._step:
            self.seconds[self._step] = self.seconds.get(self._step, 0.0) + now - self._mark
        self._step, self._mark = step, now
        return now

    def translating(self) -> None:
        """mypyc begins to type-check the modules and translate them to C."""
        self._switch("translate")
        self.say(f"type-checking and translating {self.modules} modules to C")

    def translated(self) -> None:
        """mypyc has translated the modules to C."""
        self._switch("")
        self.say(f"translated to C in {self.seconds['translate']:.0f} s")

    def extension(self, name: str, sources: Sequence[str], jobs: int) -> None:
        """An extension's build begins: the shared library (its C files compiled ``jobs`` at a time), or a module's
        import stub (a listed module's name and one C file: the first one says that they follow)."""
        if name in MODULES and len(sources) == 1:
            self._switch("stubs")
            self._stubs += 1
            if self._stubs == 1:
                self.say(f"compiling and linking the modules' import stubs ({self.modules}, one small C file each)")
            return
        now = self._switch("compile")
        if self._compile_began is None:
            self._compile_began = now
        for source in sources:
            try:
                self._sizes[source] = os.path.getsize(source)
            except OSError:
                self._sizes[source] = 0
        modules = sum(1 for source in sources if module_of_c_file(source) is not None)
        self.say(f"compiling {len(sources)} C files, {jobs} at a time ({modules} modules, mypyc's runtime)")

    def compiled(self, source: str) -> None:
        """A C file is compiled: ``[ 3/44] sqsemu.engine.broker (27 s; estimate: about 40 s more at this build's
        pace)``; another (mypyc's runtime, the group's shared code) by its name, ``[40/44] str_ops.c (80 s)``; a
        file of no announced extension (a stub's) says nothing."""
        if source not in self._sizes:
            return
        self._done_bytes += self._sizes[source]
        self._files_done += 1
        now = self.clock()
        elapsed = now - (self._compile_began if self._compile_began is not None else now)
        module = module_of_c_file(source)
        what = module if module is not None else os.path.basename(source)  # mypyc's runtime, the group's shared code
        line = f"[{self._files_done:>{len(str(len(self._sizes)))}}/{len(self._sizes)}] {what} ({elapsed:.0f} s"
        left = sum(self._sizes.values()) - self._done_bytes
        estimate = elapsed * left / self._done_bytes if self._done_bytes > 0 else 0.0
        if self._files_done > 1 and estimate >= 0.5:  # shown rounded to the second: "about 0 s" says nothing
            line += f"; estimate: about {estimate:.0f} s more at this build's pace"
        self.say(line + ")")

    def link(self, link: Callable[[], _T], target: str, objects: int) -> _T:
        """Run ``link()`` (the linker making ``target`` of ``objects`` object files) and return what it returns;
        the shared library's link says when it starts and how long it took (a stub's is counted in ``stubs``)."""
        if self._step == "stubs":
            return link()
        self._switch("link")
        self.say(f"linking {objects} object files into {os.path.basename(target)}")
        started = self.clock()
        result = link()
        self.say(f"linked in {self.clock() - started:.0f} s")
        self._switch("")
        return result

    def finished(self) -> None:
        """Every extension is built: the total, and each step's measured time."""
        now = self._switch("")
        names = (("translate", "translating"), ("compile", "compiling"), ("link", "linking"), ("stubs", "stubs"))
        steps = ", ".join(f"{words} {self.seconds[step]:.0f} s" for step, words in names if step in self.seconds)
        self.say(f"compiled and linked in {now - self._began:.0f} s ({steps})")


def module_of_c_file(path: str) -> str | None:
    """The compiled module whose code a C file of mypyc's ``multi_file`` output holds
    (``build/__native_sqsemu___engine___queue.c``: ``sqsemu.engine.queue``), or None for mypyc's own files (its
    run-time library, a module's import stub)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if not stem.startswith("__native_"):
        return None
    module = stem[len("__native_") :].replace("___", ".")
    return module if module in MODULES else None


def record_sources(package_dir: str, target_dir: str) -> None:
    """Write :data:`SOURCES_FILE` into ``target_dir``: the digests of the sources in ``package_dir`` that this build
    compiles (written to a new file and renamed into place, as :func:`install_file` does)."""
    text = "".join(f"{digest} {module}\n" for module, digest in sorted(source_digests(package_dir).items()))
    os.makedirs(target_dir, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target_dir, prefix=f".{SOURCES_FILE}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.chmod(partial, 0o644)
        os.replace(partial, os.path.join(target_dir, SOURCES_FILE))
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


def _recorded() -> dict[str, str] | None:
    """The digests :data:`SOURCES_FILE` records, or None when the build left no record."""
    try:
        with open(os.path.join(_package_dir(), SOURCES_FILE)) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    recorded: dict[str, str] = {}
    for line in lines:
        digest, _, module = line.strip().partition(" ")
        if module:
            recorded[module] = digest
    return recorded


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


def _decide() -> str:
    """``""`` when the compiled modules should run; else the reason the pure sources run."""
    if _forced_pure():
        return f"{PURE_ENV} is set"
    missing = [module for module in MODULES if not _paths(module)[1]]
    if len(missing) == len(MODULES):
        return "not compiled at install (no mypyc or no C compiler then, or a pure build was asked for)"
    if missing:
        return f"compiled build incomplete ({', '.join(missing)} not compiled): reinstall"
    recorded = _recorded()
    if recorded is None:
        return f"the build left no record of the sources it compiled ({SOURCES_FILE}): reinstall (pip install -e .)"
    current = source_digests(_package_dir())
    stale = [module for module in MODULES if module in current and current[module] != recorded.get(module)]
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


_NOT_ASKED = ("not compiled at install", f"{PURE_ENV} is set")


def warn_if_stale(logger: logging.Logger | None = None) -> bool:
    """Log a warning (to ``sqsemu.compiled`` unless ``logger`` is given) when compiled modules are installed but the
    pure sources run because they are stale or incomplete; returns whether it warned. A build that compiled nothing,
    or ``SQSEMU_PURE_PYTHON``, is said by the banner's ``build`` line alone."""
    activate()
    reason = _state["reason"]
    if not reason or reason.startswith(_NOT_ASKED):
        return False
    (logger or logging.getLogger("sqsemu.compiled")).warning(
        "the compiled modules are not used, the pure-Python sources run (slower): %s", reason
    )
    return True
