"""The server's fixed resource limits, and raising the process's open-files limit at start.

- :data:`MAX_HEADER_BYTES`: largest request head (request line and headers); larger ones are answered 431 before
  they are parsed (``sqsemu.http.sqsprotocol``).
- :func:`raise_open_files_limit`: every connection holds a file descriptor; the soft ``RLIMIT_NOFILE`` is often
  1,024 while the hard one is far higher, so the server raises the soft one to the hard one at start.
  ``Config.max_connections`` should stay below the result: beyond it the kernel, not the server, turns clients
  away.

Body caps live with their readers: ``sqsemu.http.app.MAX_BODY_BYTES`` (SQS, 8 MiB) and
``sqsemu.admin.limits.ADMIN_MAX_BODY_BYTES`` (``/_sqsemu/*``, 1 MiB).
"""

from __future__ import annotations

import logging

__all__ = [
    "FD_RESERVE",
    "MAX_HEADER_BYTES",
    "raise_open_files_limit",
]

logger = logging.getLogger("sqsemu.http")

MAX_HEADER_BYTES = 64 * 1024
"""Largest request head, in bytes (request line plus headers)."""

FD_RESERVE = 64
"""File descriptors kept for the server itself (listening socket, SQLite files, logs) besides connections."""

_CEILING = 1 << 20  # used when the hard limit is "unlimited", which Linux does not accept as a soft limit


def raise_open_files_limit(max_connections: int | None = None) -> int | None:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (as far as the OS allows); return the soft limit now in
    force, or None where there is no such limit (Windows). Logs a warning when ``max_connections`` connections
    plus :data:`FD_RESERVE` would not fit under it."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = _CEILING if hard == resource.RLIM_INFINITY else hard
    if soft == resource.RLIM_INFINITY:
        return None
    for target in (wanted, _CEILING, 65536, 10240):  # macOS refuses more than its OPEN_MAX for an "unlimited" hard
        if soft < target <= wanted:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            except (ValueError, OSError):
                continue
            soft = target
            break
    if max_connections is not None and max_connections + FD_RESERVE > soft:
        logger.warning(
            "max_connections is %d but only %d files may be open (RLIMIT_NOFILE): clients beyond about %d "
            "connections will wait in the kernel's queue instead of being answered 503",
            max_connections,
            soft,
            max(soft - FD_RESERVE, 0),
        )
    return soft
