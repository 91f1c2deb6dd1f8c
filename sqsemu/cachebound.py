"""A bound in bytes for the small caches the request path keeps of client-sent strings (queue URLs, credential
scopes, Host headers, policy documents).

Those caches are plain dicts and sets so that a hit stays one lookup; what this module bounds is what a miss may add.
Counting entries alone does not bound memory: the strings are the client's, so 4,096 distinct 1 MB ``QueueUrl``
values would be 4 GB held for ever. :class:`CacheBound` is consulted on a miss only:

- an entry larger than ``max_entry_bytes`` is not kept at all (it is computed again on every use: only a client
  that sends such strings pays for them);
- when adding an entry would take the cache past ``max_entries`` entries or ``max_bytes`` bytes, the cache is
  emptied first (as the entry-count bounds always did: refilling costs one miss per string still in use).

Sizes are ``sys.getsizeof`` of the strings an entry keeps alive (:func:`size_of`): the memory Python holds for them,
in bytes. Not thread-safe: each cache is used from one thread (the server's event loop).
"""

from __future__ import annotations

import sys
from typing import Protocol

__all__ = ["CacheBound", "size_of"]


class _Cache(Protocol):
    """A dict or a set."""

    def __len__(self) -> int: ...
    def clear(self) -> None: ...


class CacheBound:
    """The bound of one cache (module docstring): at most ``max_entries`` entries and ``max_bytes`` bytes in all,
    none over ``max_entry_bytes`` bytes. ``held`` is the bytes of the entries added since the cache was last
    emptied (what the cache holds, as :func:`size_of` counts it)."""

    __slots__ = ("held", "max_bytes", "max_entries", "max_entry_bytes")

    def __init__(self, max_entries: int, max_bytes: int, max_entry_bytes: int) -> None:
        if not 0 < max_entry_bytes <= max_bytes:
            raise ValueError("max_entry_bytes must be positive and at most max_bytes")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self.held = 0

    def admit(self, cache: _Cache, size: int) -> bool:
        """Whether an entry of ``size`` bytes may be added to ``cache`` now; when it may and the cache is full (in
        entries or bytes), the cache is emptied first. The caller adds the entry when this returns True."""
        if size > self.max_entry_bytes:
            return False
        if len(cache) >= self.max_entries or self.held + size > self.max_bytes:
            cache.clear()
            self.held = 0
        self.held += size
        return True

    def clear(self, cache: _Cache) -> None:
        """Empty ``cache`` (for tests and resets) and count nothing held."""
        cache.clear()
        self.held = 0


def size_of(*parts: object) -> int:
    """Bytes Python holds for ``parts`` (``sys.getsizeof`` of each; None counts 0): what a cache entry keeps alive.
    Shared objects (the server's own configuration strings) are not passed, only what the entry alone keeps."""
    total = 0
    for part in parts:
        if part is not None:
            total += sys.getsizeof(part)
    return total
