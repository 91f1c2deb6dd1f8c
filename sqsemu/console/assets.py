"""The console's templates and static files, read into memory when the server is made (docs/console.md).

A running server never reads them from disk again: an install that moves or replaces the package folder while the
server runs (``pip install -e .`` over a regular install removes the installed ``sqsemu/`` folder) changes nothing
for its console. :func:`load_assets` is called when the app is made (:class:`sqsemu.http.adminapp.AdminApp`), before
the server listens, so a package that lacks them fails at start, naming the file, instead of answering 500 later.

The standard library only: the server imports this at start, and the console itself (Starlette, Jinja2) with its
first page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CONTENT_TYPES", "Assets", "StaticFile", "load_assets"]

HERE = Path(__file__).resolve().parent
CONTENT_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
"""The content type of a static file by its suffix (a static file of another suffix is refused at start)."""


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One static file: its ``body``, ``content_type`` and ``etag`` (a quoted strong validator, RFC 9110 8.8.3:
    the first 32 hex digits of the body's SHA-256)."""

    body: bytes
    content_type: str
    etag: str


@dataclass(frozen=True, slots=True)
class Assets:
    """What the console serves from memory: ``templates`` (name relative to ``templates/``, such as ``base.html``
    or ``parts/counts.html``, to its source text) and ``static`` (file name under ``static/`` to its file)."""

    templates: Mapping[str, str]
    static: Mapping[str, StaticFile]


def load_assets(folder: Path = HERE) -> Assets:
    """Read ``folder/templates/**/*.html`` (UTF-8) and ``folder/static/*`` into memory.

    Raises ``OSError`` (``FileNotFoundError`` naming the folder when one is missing or holds no file) or
    ``UnicodeDecodeError`` when a template cannot be read, and ``ValueError`` for a static file whose suffix has no
    content type in :data:`CONTENT_TYPES`."""
    templates_dir = folder / "templates"
    templates = {
        path.relative_to(templates_dir).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(templates_dir.rglob("*.html"))
    }
    static_dir = folder / "static"
    static: dict[str, StaticFile] = {}
    for path in sorted(static_dir.iterdir()) if static_dir.is_dir() else ():
        if not path.is_file():
            continue
        content_type = CONTENT_TYPES.get(path.suffix)
        if content_type is None:
            raise ValueError(f"the console's static file {path} has no known content type (suffix {path.suffix!r})")
        body = path.read_bytes()
        static[path.name] = StaticFile(body, content_type, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')
    for name, found in (("templates", templates), ("static", static)):
        if not found:
            raise FileNotFoundError(f"the console's {name} are missing: no file in {folder / name}")
    return Assets(templates, static)
