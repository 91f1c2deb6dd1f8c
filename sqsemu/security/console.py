"""The web console's way in when ``--admin-token`` is set: a login form that sets a cookie.

The console (:mod:`sqsemu.console`, ``/_sqsemu/ui/``) is one of the admin routes, so it is behind the same gate
(:mod:`sqsemu.security.admin`): ``--no-admin`` switches it off and cross-site browser requests to it are refused.
A browser cannot add the ``X-Sqsemu-Admin-Token`` header to the pages it opens, so with a token the console also
accepts a session cookie:

- ``GET /_sqsemu/ui/login`` shows a form asking for the admin token; ``POST /_sqsemu/ui/login`` with the right
  token (compared with ``hmac.compare_digest``) sets the cookie and sends the browser on to the page it wanted.
- The cookie ``sqsemu_console`` holds ``HMAC-SHA256(token, "sqsemu-console-session-v1")`` in hex, never the token
  itself. It is ``HttpOnly`` (page scripts cannot read it), ``SameSite=Strict`` (no other site's page makes the
  browser send it), scoped to ``Path=/_sqsemu/ui`` (the JSON admin routes still need the header) and ``Secure``
  when the console is served over https. It lasts for the browser session; ``POST /_sqsemu/ui/logout`` clears it.
  It stays valid for as long as the server keeps the same token: change the token to log everyone out.
- Without a valid cookie or header, a console page (``GET``) is answered with a redirect to the login form, any
  other console request with 401. The login form and the console's static files (CSS, JavaScript, icon) need
  neither.

Without ``--admin-token`` there is nothing to log in to: the console is open like the other admin routes.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote

__all__ = [
    "CONSOLE_PREFIX",
    "LOGIN_PATH",
    "SESSION_COOKIE",
    "ConsoleSession",
    "is_console_path",
    "login_redirect",
    "open_console_path",
]

CONSOLE_PREFIX = "/_sqsemu/ui"
"""Every console path starts with this (the pages are under ``/_sqsemu/ui/``)."""
LOGIN_PATH = CONSOLE_PREFIX + "/login"
STATIC_PREFIX = CONSOLE_PREFIX + "/static/"
SESSION_COOKIE = "sqsemu_console"
_LABEL = b"sqsemu-console-session-v1"


def is_console_path(path: str) -> bool:
    """Whether ``path`` belongs to the console (``/_sqsemu/ui`` or below)."""
    return path == CONSOLE_PREFIX or path.startswith(CONSOLE_PREFIX + "/")


def open_console_path(path: str) -> bool:
    """Console paths served without the token: the login form and the static files."""
    return path == LOGIN_PATH or path.startswith(STATIC_PREFIX)


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
    """The session cookie of the console for one admin ``token`` (module docstring)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()
        self.cookie_value = hmac.new(self._token, _LABEL, hashlib.sha256).hexdigest()

    def token_matches(self, given: str) -> bool:
        """Whether ``given`` (typed into the login form) is the admin token."""
        return hmac.compare_digest(given.encode("utf-8", "replace"), self._token)

    def cookie_matches(self, cookie_header: bytes | None) -> bool:
        """Whether a ``Cookie`` request header carries this session's cookie."""
        if not cookie_header:
            return False
        wanted = self.cookie_value.encode()
        for item in cookie_header.split(b";"):
            name, sep, value = item.strip().partition(b"=")
            if sep and name == SESSION_COOKIE.encode() and hmac.compare_digest(value.strip(), wanted):
                return True
        return False

    def set_cookie_header(self, secure: bool) -> str:
        """The ``Set-Cookie`` value that logs a browser in."""
        return _cookie(self.cookie_value, secure)

    @staticmethod
    def clear_cookie_header(secure: bool) -> str:
        """The ``Set-Cookie`` value that logs a browser out."""
        return _cookie("", secure) + "; Max-Age=0"


def _cookie(value: str, secure: bool) -> str:
    flags = "; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
    return f"{SESSION_COOKIE}={value}; Path={CONSOLE_PREFIX}{flags}"
