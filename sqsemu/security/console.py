"""The web console's way in when ``--admin-token`` is set: a login form that opens a session, kept in a cookie.

The console (:mod:`sqsemu.console`, ``/_sqsemu/ui/``) is one of the admin routes, so it is behind the same gate
(:mod:`sqsemu.security.admin`): ``--no-admin`` switches it off and cross-site browser requests to it are refused.
A browser cannot add the ``X-Sqsemu-Admin-Token`` header to the pages it opens, so with a token the console also
accepts a session cookie:

- ``GET /_sqsemu/ui/login`` shows a form asking for the admin token; ``POST /_sqsemu/ui/login`` with the right
  token (compared with ``hmac.compare_digest``) opens a session and sends the browser on to the page it wanted.
- A session is 32 random bytes (``secrets.token_urlsafe``) in the cookie ``sqsemu_console``, never the token nor
  anything derived from it; the server keeps only each open session's SHA-256 and its end, in memory.
- A session ends :data:`SESSION_LIFETIME_S` (12 hours) after its login, by the machine's wall clock
  (``time.time``: never the emulated clock, which ``--clock manual`` stops and ``/_sqsemu/clock/advance`` moves);
  ``POST /_sqsemu/ui/logout`` ends it at once on the server (revoked: the same cookie, replayed, no longer
  authenticates) and clears the cookie; a restart of the server ends every session. At most
  :data:`MAX_SESSIONS` are open: a login beyond that ends the oldest.
- The cookie is ``HttpOnly`` (page scripts cannot read it), ``SameSite=Strict`` (no other site's page makes the
  browser send it), scoped to ``Path=/_sqsemu/ui`` (the JSON admin routes still need the header), ``Secure`` when
  the console is served over https, and has no ``Max-Age``: the browser forgets it when it closes, the server
  after the lifetime, whichever comes first.
- Without a valid cookie or header, a console page (``GET``) is answered with a redirect to the login form, any
  other console request with 401. The login form, the logout (it ends only the session its request carries) and
  the console's static files (CSS, JavaScript, icon) need neither.

Without ``--admin-token`` there is nothing to log in to: the console is open like the other admin routes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from urllib.parse import quote

__all__ = [
    "CONSOLE_PREFIX",
    "LOGIN_PATH",
    "LOGOUT_PATH",
    "MAX_SESSIONS",
    "SESSION_LIFETIME_S",
    "SESSION_COOKIE",
    "ConsoleSession",
    "is_console_path",
    "login_redirect",
    "open_console_path",
]

CONSOLE_PREFIX = "/_sqsemu/ui"
"""Every console path starts with this (the pages are under ``/_sqsemu/ui/``)."""
LOGIN_PATH = CONSOLE_PREFIX + "/login"
LOGOUT_PATH = CONSOLE_PREFIX + "/logout"
STATIC_PREFIX = CONSOLE_PREFIX + "/static/"
SESSION_COOKIE = "sqsemu_console"
SESSION_LIFETIME_S = 12 * 3600.0
"""How long a console session lasts after its login, in seconds of wall time (module docstring)."""
MAX_SESSIONS = 1024
"""The most sessions open at once; a login beyond them ends the oldest."""


def is_console_path(path: str) -> bool:
    """Whether ``path`` belongs to the console (``/_sqsemu/ui`` or below)."""
    return path == CONSOLE_PREFIX or path.startswith(CONSOLE_PREFIX + "/")


def open_console_path(path: str) -> bool:
    """Console paths served without the token: the login form, the logout and the static files."""
    return path in (LOGIN_PATH, LOGOUT_PATH) or path.startswith(STATIC_PREFIX)


def login_redirect(path: str, query: str) -> str:
    """The login form's URL, with ``next`` set to the page the browser asked for."""
    wanted = path + ("?" + query if query else "")
    return f"{LOGIN_PATH}?next={quote(wanted, safe='')}"


def safe_next(value: str | None) -> str:
    """Where to go after logging in: ``value`` when it is a console page of this server, else the console's root
    (never another site: ``//evil.example`` and ``/_sqsemu/ui/../x`` are refused)."""
    if (
        value
        and is_console_path(value.split("?", 1)[0])
        and "//" not in value
        and "\\" not in value
        and ".." not in value
    ):
        return value
    return CONSOLE_PREFIX + "/"


class ConsoleSession:
    """The console sessions of one server whose admin token is ``token`` (module docstring): each lasts
    ``lifetime_s`` seconds of ``now`` (wall time, ``time.time``), at most ``max_sessions`` open at once. Shared by
    the admin gate (:meth:`cookie_matches`) and the console's login and logout (:meth:`open`, :meth:`revoke`); it
    belongs to the server's event loop (no lock)."""

    def __init__(
        self,
        token: str,
        lifetime_s: float = SESSION_LIFETIME_S,
        now: Callable[[], float] = time.time,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self._token = token.encode()
        self.lifetime_s = lifetime_s
        self.now = now
        self.max_sessions = max_sessions
        self._ends: dict[bytes, float] = {}  # SHA-256 of an open session's cookie value -> its end (wall time, s)

    def token_matches(self, given: str) -> bool:
        """Whether ``given`` (typed into the login form) is the admin token."""
        return hmac.compare_digest(given.encode("utf-8", "replace"), self._token)

    def open(self) -> str:
        """A new session: its cookie value (43 URL-safe characters), valid for ``lifetime_s`` from now."""
        now = self.now()
        for key, end in list(self._ends.items()):
            if end <= now:
                del self._ends[key]
        while len(self._ends) >= self.max_sessions:
            del self._ends[next(iter(self._ends))]  # the oldest login (dicts keep insertion order)
        value = secrets.token_urlsafe(32)
        self._ends[_digest(value.encode())] = now + self.lifetime_s
        return value

    def cookie_matches(self, cookie_header: bytes | None) -> bool:
        """Whether a ``Cookie`` request header carries an open session's cookie (one that has ended is forgotten)."""
        for value in _session_values(cookie_header):
            key = _digest(value)
            end = self._ends.get(key)
            if end is None:
                continue
            if self.now() < end:
                return True
            del self._ends[key]
        return False

    def revoke(self, cookie_header: bytes | None) -> bool:
        """End the sessions a ``Cookie`` request header carries (logout); whether one was open."""
        ended = False
        for value in _session_values(cookie_header):
            ended = self._ends.pop(_digest(value), None) is not None or ended
        return ended

    @staticmethod
    def set_cookie_header(value: str, secure: bool) -> str:
        """The ``Set-Cookie`` value that gives a browser the session ``value`` (from :meth:`open`)."""
        return _cookie(value, secure)

    @staticmethod
    def clear_cookie_header(secure: bool) -> str:
        """The ``Set-Cookie`` value that makes a browser forget its session cookie."""
        return _cookie("", secure) + "; Max-Age=0"


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


def _session_values(cookie_header: bytes | None) -> list[bytes]:
    """The values of every ``sqsemu_console`` cookie in a ``Cookie`` header."""
    if not cookie_header:
        return []
    found = []
    for item in cookie_header.split(b";"):
        name, sep, value = item.strip().partition(b"=")
        if sep and name == SESSION_COOKIE.encode() and value.strip():
            found.append(value.strip())
    return found


def _cookie(value: str, secure: bool) -> str:
    flags = "; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
    return f"{SESSION_COOKIE}={value}; Path={CONSOLE_PREFIX}{flags}"
