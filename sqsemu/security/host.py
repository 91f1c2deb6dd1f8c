"""The ``Host`` header: accepted only when it is a syntactically valid ``host[:port]`` (RFC 9110 section 7.2,
RFC 3986 section 3.2.2), because sqsemu builds queue URLs from it verbatim.

Today a request with ``Host: attacker.example:443/x?`` gets ``QueueUrl`` ``http://attacker.example:443/x?/...``: any
text a client puts there ends up in URLs (and in the XML and JSON around them). :func:`valid_host` accepts:

- a DNS name or IPv4 address: labels of letters, digits, ``-`` and ``_`` (Docker service names such as
  ``sqs_local``) separated by dots, at most 63 characters each and 253 in all, with an optional final dot;
- an IPv6 literal in brackets (``[::1]``, ``[fe80::1%25eth0]``), checked with :mod:`ipaddress`;
- either followed by ``:<port>``, 0 to 65535.

**What an invalid Host gets: HTTP 400 in the request's protocol** (:func:`invalid_host`, an
``InvalidParameterValue`` naming the header; the admin routes answer ``{"error": ...}`` with 400), rather than a
fall-back to the server's own address. Reasons: no real client sends such a header (HTTP clients write the
authority they connected to), so one that does is a forgery or a broken proxy, and a visible error points at it; a
fall-back would hand out URLs built from the bind address (``0.0.0.0:9324`` in the Docker image), which clients
cannot use, so the failure would only move to the next call and be harder to trace; and every URL sqsemu builds is
then known to come from a checked host. ``--base-url`` still overrides: with it set the Host header is not used for
URLs and is not checked. A request without a Host header (HTTP/1.0) keeps using ``--host``/``--port``.

Valid hosts are remembered (a set bounded in entries and bytes: :data:`GOOD_HOSTS_BOUND`), so a client that keeps
sending the same Host pays one set lookup.
"""

from __future__ import annotations

import ipaddress
import re

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.engine.errors import InvalidParameterValue

__all__ = ["GOOD_HOSTS", "GOOD_HOSTS_BOUND", "invalid_host", "valid_host"]

_NAME = r"[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*\.?"
_HOST_RE = re.compile(
    rf"(?:(?P<name>{_NAME})|\[(?P<ip6>[0-9A-Fa-f:.]+)(?:%25(?P<zone>[A-Za-z0-9._~-]+))?\])"
    r"(?::(?P<port>[0-9]{1,5}))?"
)
_MAX_REMEMBERED = 1024

GOOD_HOSTS: set[str] = set()
"""Host header values found valid so far (within :data:`GOOD_HOSTS_BOUND`; emptied when full). The app tests
membership first."""
GOOD_HOSTS_BOUND = CacheBound(_MAX_REMEMBERED, 512 * 1024, 512)
"""At most 1,024 hosts and 512 KiB in :data:`GOOD_HOSTS`, none of over 512 bytes: a DNS name with its port is at
most 259 characters; an IPv6 literal's zone (``[fe80::1%25eth0]``) has no length limit of its own, so a longer valid
Host is checked again on every request rather than held."""


def valid_host(host: str) -> bool:
    """True when ``host`` is ``<dns name | IPv4 | [IPv6]>[:port]`` (module docstring); remembers valid ones."""
    if host in GOOD_HOSTS:
        return True
    match = _HOST_RE.fullmatch(host)
    if match is None:
        return False
    name, ip6, port = match.group("name"), match.group("ip6"), match.group("port")
    if name is not None and len(name.rstrip(".")) > 253:
        return False
    if ip6 is not None:
        try:
            ipaddress.IPv6Address(ip6)
        except ValueError:
            return False
    if port is not None and int(port) > 65535:
        return False
    if GOOD_HOSTS_BOUND.admit(GOOD_HOSTS, size_of(host)):
        GOOD_HOSTS.add(host)
    return True


def invalid_host(host: str) -> InvalidParameterValue:
    """The 400 error for a Host header that :func:`valid_host` refuses (shown with ``repr``, so it stays one line)."""
    shown = host if len(host) <= 100 else host[:100] + "..."
    return InvalidParameterValue(
        f"The Host header {shown!r} is not a valid host[:port]; sqsemu builds queue URLs from it "
        "(or set --base-url to build them from a fixed address)."
    )
