"""Cross-site requests: a web page the developer visits must not be able to drive the server on their laptop.

Browsers send some requests to any site without asking first (no CORS preflight): a form-encoded or ``text/plain``
POST and a GET. Against an open sqsemu a page could purge queues (``POST /`` with ``Action=PurgeQueue``), wipe
everything (``POST /_sqsemu/reset``), inject faults or create queues (``GET /?Action=CreateQueue``). The browser
marks such requests, and nothing a page's script does can remove or forge the marks (both are forbidden header
names, Fetch standard):

- ``Sec-Fetch-Site`` (Fetch Metadata Request Headers): ``cross-site``, ``same-site``, ``same-origin`` or ``none``
  (the user typed the URL). Sent by current browsers on every request.
- ``Origin`` (RFC 6454, Fetch standard): the page's origin, on every cross-origin request except no-cors GETs, and
  on same-origin POSTs.

**The rule** (:meth:`CrossSitePolicy.check`), for a request carrying either header (SDKs, the AWS CLI and curl send
neither, so they are never affected, and cost two header-name comparisons each in the app's header loop):

1. Its ``Origin`` is allowed by ``--cors-origins`` (listed, or ``*``): served, with CORS headers.
2. Else ``Sec-Fetch-Site: same-origin`` or ``none``: served (a page of the server itself, e.g. the web console's
   forms and live updates, or a URL typed by the user). ``cross-site`` or ``same-site`` (another port of
   ``localhost`` is same-site): refused.
3. Else (no ``Sec-Fetch-Site``, older browsers) an ``Origin`` equal to the server's own origin (``<scheme>://<Host
   header>``, or ``--base-url``; default ports ignored) is served, any other is refused.

With ``--cors-origins '*'`` a cross-site request without ``Origin`` (a no-cors GET) is served too. A refusal is HTTP
403 ``AccessDenied`` in the request's protocol (``Access to the resource <url> is denied.``, the AWS wording, plus
why and how to allow it); the admin routes answer ``{"error": ...}`` with 403 (:mod:`sqsemu.security.admin`).

**CORS for allowed origins**, as SQS answers browser SDKs (Amazon SQS Developer Guide, "Cross-origin resource
sharing"; Fetch standard, "CORS protocol"): every answer gets ``Access-Control-Allow-Origin`` (the request's origin
and ``Vary: Origin``, or ``*`` when only ``*`` allows it) and ``Access-Control-Expose-Headers: x-amzn-RequestId,
x-amzn-query-error, Date``. A preflight (``OPTIONS`` with ``Access-Control-Request-Method``) is answered 200 with an
empty body, ``Access-Control-Allow-Methods``, ``Access-Control-Allow-Headers`` (the requested headers that an AWS
SDK sends: ``authorization``, ``content-type``, ``accept``, ``x-amz-*``, ``amz-sdk-*``, ``x-amzn-*``, plus
``x-sqsemu-admin-token``) and ``Access-Control-Max-Age: 7200``. Credentials (cookies) are never involved, so no
``Access-Control-Allow-Credentials``.

Not covered: DNS rebinding (a page whose own host name resolves to 127.0.0.1 is same-origin with the server by
every browser rule); ``--auth sigv4`` covers it for the SQS API, ``--admin-token`` for the admin routes.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

from sqsemu.config import Config
from sqsemu.security.errors import CrossSiteRefused
from sqsemu.security.host import valid_host

__all__ = ["ALLOWED_HEADER_NAMES", "ALLOWED_HEADER_PREFIXES", "CrossSitePolicy", "Header"]

Header = tuple[bytes, bytes]
Scope = MutableMapping[str, Any]

ALLOWED_HEADER_NAMES = frozenset({"authorization", "content-type", "accept", "x-sqsemu-admin-token"})
"""Request headers a preflight may ask for by exact name."""
ALLOWED_HEADER_PREFIXES = ("x-amz-", "amz-sdk-", "x-amzn-")
"""... and by prefix: the AWS SDKs' own headers (``x-amz-date``, ``x-amz-target``, ``amz-sdk-invocation-id``...)."""
DEFAULT_ALLOWED_HEADERS = (
    b"authorization, content-type, accept, x-amz-date, x-amz-target, x-amz-security-token, x-amz-user-agent, "
    b"x-amz-content-sha256, amz-sdk-invocation-id, amz-sdk-request, x-amzn-trace-id, x-amzn-query-mode, "
    b"x-sqsemu-admin-token"
)
"""``Access-Control-Allow-Headers`` of a preflight that names no ``Access-Control-Request-Headers``."""
SQS_METHODS = b"GET, POST, OPTIONS"
ADMIN_METHODS = b"GET, POST, PUT, DELETE, OPTIONS"
MAX_AGE = b"7200"

_CROSS = (b"cross-site", b"same-site")
_SAME = (b"same-origin", b"none")
_EXPOSE: Header = (b"access-control-expose-headers", b"x-amzn-RequestId, x-amzn-query-error, Date")
_VARY: Header = (b"vary", b"Origin")
_ACAO = b"access-control-allow-origin"
_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def _strip_default_port(origin: str) -> str:
    """``http://h:80`` -> ``http://h``, ``https://h:443`` -> ``https://h`` (an origin without its default port)."""
    scheme, _, rest = origin.partition("://")
    port = _DEFAULT_PORTS.get(scheme)
    if port is not None and rest.endswith(port):
        return origin[: -len(port)]
    return origin


class CrossSitePolicy:
    """The rule of the module docstring for one server configuration.

    ``origins`` are ``Config.cors_origins`` entries, compared case-insensitively and without default ports;
    ``*`` allows every origin.
    """

    def __init__(self, config: Config) -> None:
        entries = [entry.strip() for entry in config.cors_origins.split(",") if entry.strip()]
        self.any_origin = "*" in entries
        self.origins = frozenset(_strip_default_port(entry.lower()) for entry in entries if entry != "*")
        self._base_origin = _strip_default_port(config.base_url.lower()) if config.base_url else None
        self._fallback = f"{config.host}:{config.port}"
        self._base_url = config.base_url

    # ------------------------------------------------------------------------------------------------ deciding

    def decide(self, origin: bytes | None, fetch_site: bytes | None, scheme: str, host: str | None) -> list[Header]:
        """The CORS headers to add to the answer (``[]``: none needed), or raise :class:`CrossSiteRefused`.

        ``origin`` and ``fetch_site`` are the raw ``Origin`` and ``Sec-Fetch-Site`` header values (None when
        absent), ``scheme`` the request's, ``host`` its Host header.
        """
        text: str | None = None
        if origin is not None:
            text = origin.decode("latin-1").strip()
            if self.any_origin:
                return [(_ACAO, b"*"), _EXPOSE]
            if _strip_default_port(text.lower()) in self.origins:
                return [(_ACAO, origin.strip()), _VARY, _EXPOSE]
        elif self.any_origin:
            return []
        if fetch_site is not None:
            site = fetch_site.strip().lower()
            if site in _SAME:
                return []
            if site in _CROSS:
                raise self._refusal(text, site.decode("latin-1"), scheme, host)
        if text is None or self._own_origin(text, scheme, host):
            return []
        raise self._refusal(text, None, scheme, host)

    def _own_origin(self, origin: str, scheme: str, host: str | None) -> bool:
        """Whether ``origin`` is the server's own: ``<scheme>://<Host>`` or ``--base-url``."""
        candidate = _strip_default_port(origin.lower())
        if self._base_origin is not None and candidate == self._base_origin:
            return True
        return host is not None and candidate == _strip_default_port(f"{scheme}://{host}".lower())

    def _refusal(self, origin: str | None, site: str | None, scheme: str, host: str | None) -> CrossSiteRefused:
        if self._base_url:
            base = self._base_url
        else:
            base = f"{scheme}://{host if host is not None and valid_host(host) else self._fallback}"
        if origin is not None:
            shown = origin if len(origin) <= 100 else origin[:100] + "..."
            why = f"a browser page of origin {shown!r} sent it"
        else:
            why = f"a browser sent it from another site (Sec-Fetch-Site: {site})"
        return CrossSiteRefused(
            f"Access to the resource {base}/ is denied. sqsemu refuses cross-site requests: {why}; allow an "
            "origin with --cors-origins."
        )

    # ------------------------------------------------------------------------------------------------ preflight

    @staticmethod
    def preflight(headers: Iterable[Header], cors: list[Header], methods: bytes = SQS_METHODS) -> list[Header] | None:
        """The headers of the 200 answer to a CORS preflight, or None when the request is not one (an ``OPTIONS``
        without ``Access-Control-Request-Method``). ``cors`` is what :meth:`decide` returned (not empty)."""
        requested: bytes | None = None
        is_preflight = False
        for name, value in headers:
            if name == b"access-control-request-method":
                is_preflight = True
            elif name == b"access-control-request-headers":
                requested = value
        if not is_preflight:
            return None
        if requested is None:
            allowed = DEFAULT_ALLOWED_HEADERS
        else:
            names = [n.strip().lower() for n in requested.decode("latin-1").split(",") if n.strip()]
            allowed = ", ".join(n for n in names if _allowed_header(n)).encode("latin-1")
        return [
            *cors,
            (b"access-control-allow-methods", methods),
            (b"access-control-allow-headers", allowed),
            (b"access-control-max-age", MAX_AGE),
            (b"content-length", b"0"),
        ]


def _allowed_header(name: str) -> bool:
    return name in ALLOWED_HEADER_NAMES or name.startswith(ALLOWED_HEADER_PREFIXES)
