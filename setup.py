"""Build sqsemu: the hot path compiled with mypyc where it can be, the pure-Python package otherwise.

Everything else about the package is in pyproject.toml; this file only adds the compiled extension modules. The
modules compiled are the one list ``MODULES`` in ``sqsemu/compiled.py`` (read here without importing sqsemu).
mypyc compiles them when all of these hold, else the build is pure Python and says why on standard error (pip
shows it with ``-v``; the server's banner and ``GET /health`` say it too, as ``build``):

- ``SQSEMU_PURE_PYTHON`` is not set (``SQSEMU_PURE_PYTHON=1 pip install .`` asks for the pure build);
- mypyc imports (mypy is in the build requirements, so an isolated build has it);
- a C compiler compiles a file that includes ``Python.h`` (the compiler named by ``CC`` or Python's build);
- mypyc type-checks and translates the modules, and the C compiles and links (a failure there is announced and the
  pure package is installed: the ``.py`` sources are always in it).

**The build cache.** A compile is kept in ``$SQSEMU_BUILD_CACHE`` (default ``~/.cache/sqsemu/mypyc``; ``off`` turns
the cache off), under a key that hashes every file of the package's sources, this file, pyproject.toml, the mypy
version and the Python ABI. A build whose key is there reuses those compiled modules instead of compiling again, and
says so: an editable reinstall with another extra, or the wheel that ``python -m build`` makes from the same sources
(the package tests), takes seconds instead of minutes. Identical inputs give the same C, so what is reused is what
would have been compiled.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from typing import IO, Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


PROGRESS_ENV = "SQSEMU_BUILD_PROGRESS"


def _terminal() -> IO[str] | None:
    """The terminal the install was started from, when the build's own output is captured (pip shows a build's
    output only with ``-v``) and ``SQSEMU_BUILD_PROGRESS`` is not ``0``; else None (no terminal: CI, Docker)."""
    if os.environ.get(PROGRESS_ENV, "").strip().lower() in ("0", "off", "false", "no") or sys.stderr.isatty():
        return None
    try:
        return open("/dev/tty", "w")  # noqa: SIM115 - kept open for the build's lines
    except OSError:
        return None


_TERMINAL = _terminal()
_SAY_LOCK = threading.Lock()


def _say(message: str) -> None:
    """One line of the build's own: on standard error, and on the terminal when pip captures standard error."""
    line = f"sqsemu build: {message}"
    with _SAY_LOCK:
        print(line, file=sys.stderr, flush=True)
        if _TERMINAL is not None:
            try:
                print(line, file=_TERMINAL, flush=True)
            except OSError:
                pass


@functools.cache
def _compiled_module() -> Any:
    """sqsemu/compiled.py, loaded on its own (standard library only): ``MODULES``, ``PURE_ENV``, ``install_file``,
    ``record_sources``."""
    spec = importlib.util.spec_from_file_location("_sqsemu_compiled_list", os.path.join(HERE, "sqsemu", "compiled.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compiled_list() -> tuple[tuple[str, ...], str]:
    """``(MODULES, PURE_ENV)`` from sqsemu/compiled.py."""
    module = _compiled_module()
    return tuple(module.MODULES), str(module.PURE_ENV)


def _compiler_works() -> str:
    """``""`` when a C compiler builds against Python.h; else why not. On Windows, where Python's build names no
    ``CC``, the compiler setuptools would use (MSVC, found through the Visual Studio installation) compiles a probe."""
    if os.name == "nt" and not os.environ.get("CC"):
        return _msvc_works()
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    include = sysconfig.get_paths()["include"]
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as f:
            f.write("#include <Python.h>\nint main(void) { return 0; }\n")
        try:
            result = subprocess.run(
                [*shlex.split(cc), "-fsyntax-only", f"-I{include}", probe], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"no C compiler ({cc}: {error})"
    if result.returncode != 0:
        return f"the C compiler cannot build against Python.h ({cc}: {result.stderr.strip()[:300]})"
    return ""


def _msvc_works() -> str:
    """``""`` when setuptools' default compiler on Windows (MSVC) compiles a file that includes Python.h; else why
    not (no Visual Studio Build Tools: "Microsoft Visual C++ 14.0 or greater is required")."""
    from distutils.ccompiler import new_compiler  # setuptools' own copy (setuptools is imported above)

    include = sysconfig.get_paths()["include"]
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as f:
            f.write("#include <Python.h>\nint main(void) { return 0; }\n")
        try:
            new_compiler().compile([probe], output_dir=tmp, include_dirs=[include])
        except Exception as error:  # noqa: BLE001 - no compiler, or one that cannot build against Python.h
            return f"no C compiler (MSVC: {str(error).strip()[:300]})"
    return ""


def _pure_because(reason: str) -> str:
    """What the build says when it falls back to the pure-Python package for ``reason`` (no compiler, no mypyc)."""
    return (
        f"{reason}: building the pure-Python package, the same server with 10 to 25% fewer messages per second; "
        "each start says so (the banner's 'build: pure Python' line and GET /health's build). A C compiler and "
        "Python's headers give the compiled build (docs/compiled.md)"
    )


CACHE_ENV = "SQSEMU_BUILD_CACHE"


def _cache_root() -> str | None:
    """The build cache's folder, or None when ``SQSEMU_BUILD_CACHE=off``."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen.lower() in ("off", "0", "false", "no"):
        return None
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sqsemu", "mypyc")


def _cache_key() -> str:
    """A hash of everything the compiled modules depend on (see the module docstring)."""
    import mypy.version

    digest = hashlib.sha256()
    digest.update(f"{mypy.version.__version__} {sysconfig.get_config_var('EXT_SUFFIX')} {_MYPY_FLAGS}".encode())
    names = ["setup.py", "pyproject.toml"]
    for folder, dirs, files in os.walk(os.path.join(HERE, "sqsemu")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        names += [os.path.relpath(os.path.join(folder, f), HERE) for f in sorted(files) if f.endswith(".py")]
    for name in names:
        digest.update(name.encode() + b"\0")
        with open(os.path.join(HERE, name), "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()[:32]


def _cached_extensions() -> tuple[list[Any], str] | None:
    """``(extensions, folder)`` when the build cache holds this key's compiled modules, else None. Each extension
    has no sources: ``_OptionalBuildExt`` copies its file from the folder (``MANIFEST``: one ``name file`` a line)."""
    root = _cache_root()
    if root is None:
        return None
    folder = os.path.join(root, _cache_key())
    manifest = os.path.join(folder, "MANIFEST")
    if not os.path.isfile(manifest):
        return None
    extensions: list[Any] = []
    with open(manifest) as f:
        for line in f:
            name, _, file = line.strip().partition(" ")
            if not os.path.isfile(os.path.join(folder, file)):
                return None
            extension = Extension(name, sources=[])
            extension.sqsemu_cached = os.path.join(folder, file)
            extensions.append(extension)
    return extensions, folder


def _store_in_cache(built: list[tuple[str, str]]) -> None:
    """Keep the compiled modules ``[(extension name, built file), ...]`` in the build cache (written to a temporary
    folder and renamed into place, so that a build running beside this one never sees half of it)."""
    root = _cache_root()
    if root is None or not built:
        return
    try:
        os.makedirs(root, exist_ok=True)
        folder = os.path.join(root, _cache_key())
        if os.path.isdir(folder):
            return
        partial = tempfile.mkdtemp(dir=root, prefix=".partial-")
        with open(os.path.join(partial, "MANIFEST"), "w") as manifest:
            for name, path in built:
                kept = f"{name}{os.path.splitext(path)[1]}"  # by extension name: two packages may share a basename
                shutil.copy2(path, os.path.join(partial, kept))
                manifest.write(f"{name} {kept}\n")
        try:
            os.rename(partial, folder)
        except OSError:  # another build stored the same key first
            shutil.rmtree(partial, ignore_errors=True)
    except OSError as error:
        _say(f"could not store the compiled modules in the build cache ({error}); the build is unaffected")


class _OptionalBuildExt(build_ext):
    """build_ext that installs the pure package when compiling or linking fails, saying so.

    Every compiled file it puts in place (in the build folder, or beside the sources for an editable install) is
    written to a new file and renamed over the old one (``sqsemu.compiled.install_file``): a server running from
    the same checkout keeps the file it has mapped, where copying over it in place crashes it (SIGSEGV). Beside
    the compiled files it records the digests of the sources they were compiled from (``compiled-sources.txt``),
    which the run-time check compares. It always compiles (``force``): an up-to-date-looking ``build/`` folder
    never stands in for a compile of changed sources (the build cache is what skips a compile, by content)."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self._built: list[str] = []
        self._jobs = 1

    def finalize_options(self) -> None:
        super().finalize_options()
        # The extensions are built one after the other and each one's C files side by side (``build_extension``):
        # nearly all the C is the one extension holding every compiled module, which setuptools' own ``--parallel``
        # (one extension per worker) would compile on one core.
        chosen = self.parallel
        self._jobs = chosen if isinstance(chosen, int) and not isinstance(chosen, bool) and chosen > 0 else _cores()
        self.parallel = None
        self.force = True

    def copy_file(self, infile: Any, outfile: Any, *args: Any, **kwargs: Any) -> tuple[str, bool]:
        """Copy a built extension beside the sources (``--inplace``, editable installs): renamed into place."""
        if os.path.isdir(outfile):
            outfile = os.path.join(outfile, os.path.basename(infile))
        _compiled_module().install_file(infile, outfile)
        return outfile, True

    def _record_sources(self) -> None:
        """Write the compiled sources' digests beside the compiled package (build folder, and sources in place)."""
        record = _compiled_module().record_sources
        package = os.path.join(HERE, "sqsemu")
        record(package, os.path.join(self.build_lib, "sqsemu"))
        if self.inplace:
            record(package, package)

    def run(self) -> None:
        cached = [ext for ext in self.extensions if hasattr(ext, "sqsemu_cached")]
        if cached:
            for ext in cached:
                _compiled_module().install_file(ext.sqsemu_cached, self.get_ext_fullpath(ext.name))
            self._record_sources()
            return
        try:
            super().run()
            if self.extensions:
                _progress().finished()
            _store_in_cache([(ext.name, self.get_ext_fullpath(ext.name)) for ext in self.extensions])
            if self.extensions:
                self._record_sources()
        except Exception as error:  # noqa: BLE001 - any compile or link failure: the pure package still works
            _say(_pure_because(f"compiling failed ({error})"))
            self.extensions = []
            for ext_file in self._built:
                if os.path.isfile(ext_file):
                    os.remove(ext_file)

    def build_extension(self, ext: Any) -> None:
        """Build one extension, its C files compiled ``self._jobs`` at a time (``compile_side_by_side``), each step
        said as it happens with its measured time (``sqsemu.compiled.BuildProgress``): each compiled module as its C
        file is done, the link when it starts and when it ends."""
        compiler = self.compiler
        compile_files = compiler.compile
        link_files = compiler.link_shared_object
        helpers = _compiled_module()
        progress = _progress()

        def compile_side_by_side(sources: list[str], output_dir: str | None = None, **options: Any) -> list[str]:
            def one(files: list[str]) -> list[str]:
                return list(compile_files(files, output_dir=output_dir, **options))

            return list(helpers.compile_side_by_side(one, sources, self._jobs, progress.compiled))

        def link_shared_object(objects: list[str], output_filename: str, *args: Any, **options: Any) -> Any:
            return progress.link(
                lambda: link_files(objects, output_filename, *args, **options), output_filename, len(objects)
            )

        if getattr(compiler, "initialized", True) is False:  # MSVC finds its tools once, before threads compile
            compiler.initialize()
        progress.extension(ext.name, list(ext.sources), self._jobs)
        compiler.compile = compile_side_by_side
        compiler.link_shared_object = link_shared_object
        try:
            super().build_extension(ext)
        finally:
            del compiler.compile  # the instance attributes: the class's methods again
            del compiler.link_shared_object
        self._built.append(self.get_ext_fullpath(ext.name))


def _cores() -> int:
    """The CPUs this process may run on (its affinity where the platform says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_PROGRESS: list[Any] = []  # the build's BuildProgress (sqsemu.compiled), made by _ext_modules or at first use


def _progress() -> Any:
    """This build's ``sqsemu.compiled.BuildProgress``: what it says, with its measured times."""
    if not _PROGRESS:
        _PROGRESS.append(_compiled_module().BuildProgress(_say, len(_compiled_list()[0])))
    return _PROGRESS[0]


# The setup.py commands that build (PEP 517 runs this file for egg_info and dist_info first, which need no mypyc run).
_BUILDING = {"bdist_wheel", "editable_wheel", "build", "build_ext", "install", "develop", "bdist_egg"}


# mypyc type-checks with pyproject.toml's mypy settings (strict), in a build environment that may not have the
# dependencies installed (an isolated build: `python -m build`): their types are then Any, which strict mode refuses
# in a few places that the project's own mypy run (with them installed) accepts. What compiles is the same.
_MYPY_FLAGS = [
    "--ignore-missing-imports",
    "--allow-subclassing-any",
    "--no-warn-return-any",
    "--no-warn-unused-ignores",
]


def _ext_modules() -> list[Any]:
    if not _BUILDING.intersection(sys.argv[1:]):
        return []
    modules, pure_env = _compiled_list()
    if os.environ.get(pure_env, "").strip().lower() not in ("", "0", "false", "no"):
        _say(f"{pure_env} is set: building the pure-Python package")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as error:
        _say(_pure_because(f"mypyc is not available ({error})"))
        return []
    problem = _compiler_works()
    if problem:
        _say(_pure_because(problem))
        return []
    try:
        cached = _cached_extensions()
    except (OSError, ImportError) as error:
        _say(f"the build cache cannot be read ({error}): compiling")
        cached = None
    if cached is not None:
        _say(f"the sources are unchanged since a build kept in {cached[1]}: reusing its compiled modules")
        return cached[0]
    paths = [os.path.join(*m.split(".")) + ".py" for m in modules]
    _say(
        f"compiling the hot path ({len(paths)} modules) with mypyc, then a C compiler: each step's time is said as "
        f"it ends (docs/compiled.md); {pure_env}=1 skips it and installs the pure-Python package"
    )
    progress = _progress()
    progress.translating()
    try:
        # multi_file: a C file per module (one shared library still), so that the C compiles on every core.
        extensions = list(mypycify([*_MYPY_FLAGS, *paths], opt_level="3", debug_level="0", multi_file=True))
        progress.translated()
        return extensions
    except (SystemExit, Exception) as error:  # noqa: BLE001 - mypyc's type errors exit; the pure package still works
        _say(_pure_because(f"mypyc could not translate the modules ({error!r})"))
        return []


if __name__ == "__main__":  # pip's build backend runs this file as __main__; a test may load it without building
    setup(ext_modules=_ext_modules(), cmdclass={"build_ext": _OptionalBuildExt})
