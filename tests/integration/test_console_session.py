"""The console's session with ``--admin-token`` ends: logout revokes it on the server, and it lasts 12 hours of wall
time (issue 47, suspicion 9 of finding 9; docs/console.md, docs/security.md).

Before, the cookie was a fixed HMAC of the token: a copy of it, taken before logout, still opened the console, and
it never expired.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from harness import ServerProcess
from harness.pages import Pages

from sqsemu.config import Config
from sqsemu.http.app import SQSApp
from sqsemu.security.console import SESSION_COOKIE, SESSION_LIFETIME_S, ConsoleSession
from sqsemu.server import ServerThread

TOKEN = "session-t0ken"
UI = "/_sqsemu/ui"


def _log_in(pages: Pages) -> str:
    """Log ``pages`` in with the token; the session cookie's value."""
    answer = pages.post(UI + "/login", {"token": TOKEN, "next": UI + "/"})
    assert answer.status == 303 and answer.location == UI + "/", (answer.status, answer.text[:300])
    (set_cookie,) = [c for c in answer.set_cookies if c.startswith(SESSION_COOKIE + "=")]
    attributes = {part.strip().split("=")[0].lower() for part in set_cookie.split(";")[1:]}
    assert attributes == {"path", "httponly", "samesite"}, set_cookie  # no Max-Age: the browser's session only
    assert "Path=/_sqsemu/ui" in set_cookie and "SameSite=Strict" in set_cookie
    value = pages.cookies[SESSION_COOKIE]
    assert TOKEN not in value and len(value) >= 43
    return value


def _with_cookie(endpoint_url: str, value: str) -> Pages:
    """Another client that presents the session cookie ``value`` (a copy of a browser's)."""
    pages = Pages(endpoint_url)
    pages.cookies[SESSION_COOKIE] = value
    return pages


def _opens_the_console(pages: Pages) -> bool:
    """Whether ``pages`` gets the console (200), or is sent to the login form (303 there)."""
    answer = pages.get(UI + "/")
    if answer.status == 303:
        assert answer.location.startswith(UI + "/login?next="), answer.location
        return False
    assert answer.status == 200, (answer.status, answer.text[:300])
    return True


def test_logout_revokes_the_session_on_the_server() -> None:
    with ServerProcess(["--admin-token", TOKEN]) as srv:
        browser, other = Pages(srv.endpoint_url), Pages(srv.endpoint_url)
        taken = _log_in(browser)
        kept = _log_in(other)
        copy = _with_cookie(srv.endpoint_url, taken)
        assert _opens_the_console(browser) and _opens_the_console(copy)
        assert copy.get(UI + "/?live=1").status == 200
        out = browser.post(UI + "/logout", {})
        assert out.status == 303 and out.location == UI + "/login"
        assert any(c.startswith(SESSION_COOKIE + "=;") and "Max-Age=0" in c for c in out.set_cookies)
        assert SESSION_COOKIE not in browser.cookies
        # the copy of the cookie taken before the logout opens nothing any more
        assert not _opens_the_console(copy)
        assert copy.get(UI + "/?live=1").status == 303
        refused = copy.post(UI + "/server/advance", {"seconds": "1"})
        assert refused.status == 401 and "log in" in refused.text
        assert not _opens_the_console(browser)
        # the logout ended that session only: another browser's stays
        assert _opens_the_console(other)
        # a logout whose session already ended is answered as one (to the login form), not refused
        assert copy.post(UI + "/logout", {}).status == 303
        assert _opens_the_console(other)
        assert taken != kept  # one session per login


@pytest.fixture
def token_server() -> Iterator[ServerThread]:
    """A ``--clock manual`` server with an admin token, in this process: its sessions' wall clock can be set."""
    with ServerThread(Config(clock="manual", admin_token=TOKEN)) as srv:
        yield srv


def test_a_session_ends_12_hours_after_its_login_by_wall_time(token_server: ServerThread) -> None:
    app = token_server.app
    assert isinstance(app, SQSApp) and app.admin.console is not None
    sessions = app.admin.console
    wall = [1_800_000_000.0]
    sessions.now = lambda: wall[0]  # the machine's clock, as the server reads it for sessions
    assert SESSION_LIFETIME_S == 12 * 3600
    pages = Pages(token_server.endpoint_url)
    value = _log_in(pages)
    copy = _with_cookie(token_server.endpoint_url, value)
    # the emulated clock does not end sessions: --clock manual moved by a day changes nothing
    token_server.advance(24 * 3600)
    assert _opens_the_console(pages)
    wall[0] += SESSION_LIFETIME_S - 1
    assert _opens_the_console(pages) and _opens_the_console(copy)
    wall[0] += 1
    assert not _opens_the_console(pages)
    assert not _opens_the_console(copy)
    assert pages.get(UI + "/?live=1").status == 303  # the open page's live updates send it to the login form
    # a new login opens a new session, with its own 12 hours
    _log_in(pages)
    assert _opens_the_console(pages)
    wall[0] += SESSION_LIFETIME_S - 1
    assert _opens_the_console(pages)


def test_a_login_beyond_the_most_sessions_ends_the_oldest() -> None:
    """The server holds at most MAX_SESSIONS (1,024) sessions; here 2, on the session store itself."""
    sessions = ConsoleSession(TOKEN, max_sessions=2)
    first, second, third = (sessions.open().encode() for _ in range(3))
    cookie = SESSION_COOKIE.encode() + b"="
    assert not sessions.cookie_matches(cookie + first)
    assert sessions.cookie_matches(cookie + second) and sessions.cookie_matches(b"a=b; " + cookie + third)
    assert sessions.revoke(cookie + second) and not sessions.cookie_matches(cookie + second)
