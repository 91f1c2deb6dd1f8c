"""``sqsemu state save FILE`` and ``sqsemu state load FILE``: a running server's state over its admin routes.

Save reads ``GET <endpoint>/_sqsemu/state`` into ``FILE`` (``-``: standard output): into a temporary file beside it,
renamed to ``FILE`` once the answer ended with its end line, so an interrupted save never leaves a partial file in
its place. Load sends ``FILE`` (``-``: standard input) to ``POST <endpoint>/_sqsemu/state``. Both send the admin token
(``X-Sqsemu-Admin-Token``) when given one. The standard library only (``urllib``): nothing more to install.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

__all__ = ["ClientError", "load_state", "save_state"]

_PATH = "/_sqsemu/state"
_TOKEN_HEADER = "X-Sqsemu-Admin-Token"
_CHUNK = 1 << 16


class ClientError(Exception):
    """The server could not be reached, or refused: the message says which and why."""


def _url(endpoint: str) -> str:
    if not endpoint.startswith(("http://", "https://")):
        raise ClientError(f"the endpoint must be a URL like http://127.0.0.1:9324, got {endpoint!r}")
    return endpoint.rstrip("/") + _PATH


def _headers(token: str) -> dict[str, str]:
    return {_TOKEN_HEADER: token} if token else {}


def _refusal(exc: urllib.error.HTTPError, what: str) -> ClientError:
    """The server's refusal, in its own words when it gave them (``{"error": ...}``)."""
    body = exc.read()
    try:
        reason = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        reason = body.decode("utf-8", "replace").strip()[:500] or exc.reason
    return ClientError(f"the server refused the {what} (HTTP {exc.code}): {reason}")


def _unreachable(endpoint: str, exc: OSError) -> ClientError:
    reason = getattr(exc, "reason", None) or exc
    return ClientError(f"cannot reach a sqsemu server at {endpoint}: {reason}")


def save_state(endpoint: str, path: str, token: str = "", timeout: float = 300.0) -> dict[str, Any]:
    """Save the state of the server at ``endpoint`` to ``path`` (``-``: standard output). Returns ``{"bytes": n,
    "records": n}``. Raises :class:`ClientError` (unreachable, refused, or an answer that ended without its end
    line: the file is then not written)."""
    request = urllib.request.Request(_url(endpoint), headers=_headers(token), method="GET")
    target: Path | None = None if path == "-" else Path(path)
    temporary: str | None = None
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            if target is None:
                return _copy(response, sys.stdout.buffer)
            fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
            with os.fdopen(fd, "wb") as out:
                summary = _copy(response, out)
            os.replace(temporary, target)
            temporary = None
            return summary
    except urllib.error.HTTPError as exc:
        raise _refusal(exc, "save") from None
    except http.client.HTTPException as exc:  # the answer broke off (IncompleteRead...)
        raise ClientError(f"the server's answer broke off ({type(exc).__name__}): nothing was saved") from None
    except OSError as exc:
        if isinstance(exc, urllib.error.URLError) or isinstance(exc, ConnectionError | TimeoutError):
            raise _unreachable(endpoint, exc) from None
        raise ClientError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _copy(response: IO[bytes], out: IO[bytes]) -> dict[str, Any]:
    """Copy the answer to ``out``; its last line must be the end line (else ``ClientError``)."""
    size = 0
    tail = b""
    while chunk := response.read(_CHUNK):
        out.write(chunk)
        size += len(chunk)
        tail = (tail + chunk)[-4096:]
    out.flush()
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        end = json.loads(last)["end"]
        records = int(end["records"])
    except (ValueError, KeyError, TypeError):
        raise ClientError(
            "the server's answer ended before the state's end line (a load replaced the state during the save, or "
            "the connection broke): nothing was saved; save again"
        ) from None
    return {"bytes": size, "records": records}


def load_state(endpoint: str, path: str, token: str = "", timeout: float = 300.0) -> dict[str, Any]:
    """Load the state in ``path`` (``-``: standard input) into the server at ``endpoint``, replacing its state.
    Returns the server's answer (``{"loaded": {table: records}, ...}``). Raises :class:`ClientError`."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise ClientError(f"cannot read {path}: {exc.strerror or exc}") from None
    headers = {**_headers(token), "Content-Type": "application/x-ndjson"}
    request = urllib.request.Request(_url(endpoint), data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except urllib.error.HTTPError as exc:
        raise _refusal(exc, "load") from None
    except (OSError, http.client.HTTPException) as exc:
        if isinstance(exc, http.client.HTTPException):
            raise ClientError(f"the server's answer broke off ({type(exc).__name__})") from None
        raise _unreachable(endpoint, exc) from None
