"""One raw HTTP request with ``http.client``, for tests that must control every header (``Host``, ``Origin``,
``Sec-Fetch-Site``, a hand-made ``Authorization``), which SDKs and ``urllib`` would set themselves."""

from __future__ import annotations

import http.client
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class RawResponse:
    """``status``, ``headers`` (lower-case names) and ``body`` of one answer."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)

    def xml(self) -> ET.Element:
        return ET.fromstring(self.body)


def raw_request(
    endpoint: str,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    timeout: float = 30,
) -> RawResponse:
    """Send ``method path`` to ``endpoint`` (``http://host:port``) with exactly ``headers`` (plus ``Host`` unless
    given, and ``Content-Length`` for a body) and return the answer."""
    parts = urlsplit(endpoint)
    assert parts.hostname is not None, endpoint
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        given = {k.lower() for k in (headers or {})}
        conn.putrequest(method, path, skip_host="host" in given, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body or method in ("POST", "PUT"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        resp = conn.getresponse()
        return RawResponse(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()
