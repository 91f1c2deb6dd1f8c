"""Which proxies' ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed: none unless the operator names them.

A client can put any header in its request, so a proxy header is evidence only when the connection comes from a
proxy the operator trusts (``--forwarded-allow-ips``, off by default: docs/security.md, "Behind a proxy"). Without
it the client's address (``aws:SourceIp``) and the scheme (``aws:SecureTransport``, queue URLs) come from the
socket. With it, a request whose peer address is in the list takes, as uvicorn's ``--proxy-headers`` with
``--forwarded-allow-ips`` does:

- the scheme from ``X-Forwarded-Proto`` when it is ``http`` or ``https`` (anything else is ignored);
- the client from ``X-Forwarded-For``: its comma-separated addresses read from the right, the first one that is not
  itself a trusted proxy (all trusted: the leftmost), with port 0.

The standard ``Forwarded`` header (RFC 7239) is never read. The list holds addresses and networks (``10.0.0.0/8``,
``::1``) separated by commas, or ``*`` for every peer. A peer or forwarded address in IPv4-mapped IPv6 form
(``::ffff:10.0.0.5``, as a server listening on ``::`` sees an IPv4 client) is compared as the IPv4 address it maps.
"""

from __future__ import annotations

import ipaddress
import logging

from sqsemu.security.conditions import unmapped

__all__ = ["TrustedProxies"]

logger = logging.getLogger("sqsemu.http")

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class TrustedProxies:
    """The proxies named by ``--forwarded-allow-ips``. Raises ``ValueError`` for an entry that is neither ``*``, an
    IP address nor a network."""

    __slots__ = ("_any", "_hosts", "_networks")

    def __init__(self, spec: str) -> None:
        self._any = False
        self._hosts: set[str] = set()
        self._networks: list[_Network] = []
        for entry in (part.strip() for part in spec.split(",")):
            if not entry:
                continue
            if entry == "*":
                self._any = True
                continue
            network = ipaddress.ip_network(entry, strict=False)  # ValueError names the entry
            if network.num_addresses == 1:
                self._hosts.add(unmapped(str(network.network_address)))
            else:
                self._networks.append(network)

    def trusts(self, host: str) -> bool:
        """Whether the address ``host`` (text) is a trusted proxy; an IPv4-mapped IPv6 address (``::ffff:a.b.c.d``:
        a proxy reaching a server listening on ``::`` over IPv4) is the IPv4 address it maps, so an IPv4 entry names
        it (and an entry written in the mapped form names it too)."""
        if self._any or host in self._hosts:
            return True
        plain = unmapped(host)
        if plain != host:
            return self.trusts(plain)
        if not self._networks:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self._networks)

    def apply(
        self, peer: tuple[str, int] | None, scheme: str, headers: dict[bytes, bytes]
    ) -> tuple[tuple[str, int] | None, str, bool]:
        """``(client, scheme, proxied)`` for a request from ``peer`` (the socket's address) with ``headers`` (by
        lower-case name): the proxy's word when ``peer`` is trusted, the socket's otherwise; ``proxied`` says
        whether a proxy header was believed."""
        if peer is None or not self.trusts(peer[0]):
            return peer, scheme, False
        proxied = False
        proto = headers.get(b"x-forwarded-proto")
        if proto is not None:
            value = proto.decode("latin-1").strip().lower()
            if value in ("http", "https"):
                scheme, proxied = value, True
        forwarded_for = headers.get(b"x-forwarded-for")
        if forwarded_for is not None:
            hosts = [part.strip() for part in forwarded_for.decode("latin-1").split(",") if part.strip()]
            if hosts:
                client = hosts[0]
                for host in reversed(hosts):
                    if not self.trusts(host):
                        client = host
                        break
                peer, proxied = (client, 0), True
        return peer, scheme, proxied
