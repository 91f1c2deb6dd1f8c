"""A browser stand-in for the web console over real HTTP: GETs and form POSTs with a cookie jar, redirects returned
(not followed), so a test sees each 303 and where it leads.

``Pages(endpoint_url)``: ``get(path)``, ``post(path, fields)``, ``follow(answer)`` (the GET a browser makes after
a 303); each returns a :class:`Page` (``status``, ``headers`` with lower-case names, every ``set_cookies`` value,
``text``). Cookies set by ``Set-Cookie`` are kept and sent back (name and value only; ``Max-Age=0`` removes one).
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

FORM = "application/x-www-form-urlencoded"


@dataclass
class Page:
    """One answer: its ``status``, ``headers`` (lower-case names; the last value of a repeated one), every
    ``Set-Cookie`` value in ``set_cookies`` and the body as ``text`` (UTF-8)."""

    status: int
    headers: dict[str, str]
    text: str
    body: bytes
    set_cookies: list[str] = field(default_factory=list)

    @property
    def location(self) -> str:
        """The ``Location`` header ("" when none)."""
        return self.headers.get("location", "")


class Pages:
    """Requests to one server as a browser on the same origin makes them (``Sec-Fetch-Site: same-origin``)."""

    def __init__(self, endpoint_url: str, timeout: float = 10.0) -> None:
        parts = urlsplit(endpoint_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.timeout = timeout
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> Page:
        """``method path`` with the kept cookies; the answer, its cookies kept."""
        sent = {"Host": f"{self.host}:{self.port}", "Sec-Fetch-Site": "same-origin", "Accept": "text/html"}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        sent.update(headers or {})
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            data = response.read()
            raw = response.getheaders()
        finally:
            connection.close()
        cookies = [value for name, value in raw if name.lower() == "set-cookie"]
        for value in cookies:
            pair, _, attributes = value.partition(";")
            name, _, kept = pair.strip().partition("=")
            if not kept or "max-age=0" in attributes.lower().replace(" ", ""):
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = kept
        answer_headers = {name.lower(): value for name, value in raw}
        return Page(response.status, answer_headers, data.decode("utf-8", "replace"), data, cookies)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Page:
        """``GET path``."""
        return self.request("GET", path, headers=headers)

    def post(self, path: str, fields: dict[str, str] | list[tuple[str, str]]) -> Page:
        """``POST path`` with ``fields`` as an ``application/x-www-form-urlencoded`` form."""
        return self.request("POST", path, urlencode(fields).encode(), {"Content-Type": FORM})

    def follow(self, answer: Page) -> Page:
        """The ``GET`` a browser makes after a redirect: ``answer``'s ``Location`` (its fragment left out, as a
        browser keeps it to itself)."""
        assert 300 <= answer.status < 400, (answer.status, answer.text[:500])
        target = urlsplit(answer.location)
        path = target.path + ("?" + target.query if target.query else "")
        return self.get(path)
