"""Protections for a server that runs on a developer's laptop or in a shared environment.

One module per concept, each called from the app (``sqsemu.http.app``) at the cost of a few header comparisons per
request when the feature is off:

- :mod:`~sqsemu.security.crosssite`: browsers' cross-site requests are refused (403) unless ``--cors-origins``
  allows their origin; allowed origins get CORS answers (on by default).
- :mod:`~sqsemu.security.host`: a Host header that is not a valid ``host[:port]`` is refused (400), since queue
  URLs are built from it (on by default; ``--base-url`` makes it moot).
- :mod:`~sqsemu.security.forwarded`: the proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed
  (`--forwarded-allow-ips`; none by default: the client and the scheme come from the socket).
- :mod:`~sqsemu.security.region`: a credential scope's region is used only if it looks like a region.
- :mod:`~sqsemu.security.sigv4`: ``--auth sigv4`` verifies Signature Version 4 with the configured credentials.
- :mod:`~sqsemu.security.admin`: the gate of the admin routes (``--admin-token``, ``--no-admin``, cross-site).
- :mod:`~sqsemu.security.console`: the web console's login form and session cookie under ``--admin-token``.
- :mod:`~sqsemu.security.errors`: the AWS errors these answer with.

docs/security.md says what is and is not protected by default.
"""

from __future__ import annotations
