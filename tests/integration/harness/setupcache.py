"""One-off test set-up kept between runs and checkouts: the legacy boto3 virtual environment and the ``node_modules``
of the Node.js checks, so that a fresh clone (CI's every run) does not make them again; also mypy's cache
(tests/unit/test_static_checks.py) and the runs' bytecode where ``PYTHONDONTWRITEBYTECODE`` is set
(tests/conftest.py).

The folder is ``$SQSEMU_TEST_CACHE``, else ``$XDG_CACHE_HOME/sqsemu/tests``, else ``~/.cache/sqsemu/tests`` (beside
the build cache of setup.py). Each entry's name carries what it was made from (a lock file's hash, the interpreter),
so a change makes a new entry rather than reusing a stale one; an entry is made in a temporary folder and renamed
into place whole, so a run that dies half-way leaves nothing that looks complete.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def user_cache() -> Path:
    """The user's cache folder: ``$XDG_CACHE_HOME``, else ``~/.cache`` (setup.py's build cache lives under it too)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))


def cache_root() -> Path:
    """The folder that holds the kept set-up (made when missing)."""
    chosen = os.environ.get("SQSEMU_TEST_CACHE")
    root = Path(chosen) if chosen else user_cache() / "sqsemu" / "tests"
    root.mkdir(parents=True, exist_ok=True)
    return root


def digest(*parts: bytes | str) -> str:
    """A short hex digest of ``parts`` (an entry's key)."""
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part.encode() if isinstance(part, str) else part)
        sha.update(b"\0")
    return sha.hexdigest()[:16]


def restore_node_modules(folder: Path) -> bool:
    """Copy the kept ``node_modules`` made from ``folder``'s package-lock.json into ``folder``; False when none is
    kept (or it could not be copied: ``npm ci`` then makes it)."""
    entry = _node_entry(folder)
    if entry is None or not (entry / "node_modules").is_dir():
        return False
    shutil.rmtree(folder / "node_modules", ignore_errors=True)  # what a failed install left
    result = subprocess.run(["cp", "-a", str(entry / "node_modules"), str(folder)], capture_output=True, timeout=300)
    if result.returncode != 0:
        shutil.rmtree(folder / "node_modules", ignore_errors=True)
        return False
    return True


def keep_node_modules(folder: Path) -> None:
    """Keep ``folder``'s freshly installed ``node_modules`` for later runs (best effort: a failure only means the
    next run installs again)."""
    entry = _node_entry(folder)
    if entry is None or entry.exists():
        return
    staging = Path(tempfile.mkdtemp(prefix=entry.name + ".", dir=entry.parent))
    try:
        result = subprocess.run(
            ["cp", "-a", str(folder / "node_modules"), str(staging)], capture_output=True, timeout=300
        )
        if result.returncode == 0:
            os.rename(staging, entry)
    except OSError:
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _node_entry(folder: Path) -> Path | None:
    lock = folder / "package-lock.json"
    if not lock.is_file():
        return None
    node = shutil.which("node") or ""
    parent = cache_root() / "npm"
    parent.mkdir(exist_ok=True)
    return parent / f"{folder.name}-{digest(lock.read_bytes(), os.path.realpath(node) if node else '')}"
