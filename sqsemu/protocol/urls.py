"""Queue URLs and the caller's namespace (docs/behaviour.md sections 1.1 and 7.1).

A queue URL is ``<base>/<account-id>/<queue-name>``; ``<base>`` is ``Config.base_url`` when set, else
``<scheme>://<Host header>``. A ``QueueUrl`` parameter is parsed by its last two path segments, with any host,
a trailing ``/`` tolerated, and a bare queue name meaning "the caller's account". The caller's namespace comes from
the SigV4 credential scope (``Authorization`` header or presigned ``X-Amz-Credential``): a 12-digit access key id
is the account (otherwise ``Config.account_id``), the scope's region is the region when it looks like one
(``sqsemu.security.region``; otherwise ``Config.region``).
"""

from __future__ import annotations

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.config import Config
from sqsemu.engine.broker import Namespace, Queue
from sqsemu.security.region import valid_region

_CACHE_LIMIT = 4096
ELASTICMQ_PREFIX = "queue"
"""The first path segment of ElasticMQ's older queue URLs, ``/queue/<name>``."""
_url_cache: dict[str, tuple[str | None, str]] = {}
URL_CACHE_BOUND = CacheBound(_CACHE_LIMIT, 2 * 1024 * 1024, 2048)
"""What :func:`parse_queue_url` remembers: at most 4,096 URLs and 2 MiB (URLs and their parts), none of over 2 KiB
(a queue URL is at most about 400 characters: a 253-character host, a port, 12 digits and an 80-character name;
a longer ``QueueUrl`` is parsed again each time rather than held)."""


def queue_url(base: str, queue: Queue) -> str:
    """The URL of ``queue`` under ``base`` (``http://host:port``, no trailing slash)."""
    return f"{base}/{queue.namespace.account_id}/{queue.name}"


def url_base(config: Config, scheme: str, host: str | None) -> str:
    """``scheme://host`` for queue URLs: ``config.base_url`` if set, else from the request's Host header."""
    if config.base_url:
        return config.base_url
    return f"{scheme}://{host or f'{config.host}:{config.port}'}"


def parse_queue_url(url: str) -> tuple[str | None, str]:
    """``(account id or None, queue name)`` of a QueueUrl parameter: its last two path segments.

    ``https://sqs.us-east-1.amazonaws.com/123456789012/q`` → ``("123456789012", "q")``; ``q`` → ``(None, "q")``.
    Other emulators' forms: LocalStack's ``http://localhost:4566/queue/us-east-1/000000000000/q`` (its last two
    segments, like any other) and ``http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/q`` (any
    host); ElasticMQ's older ``http://localhost:9324/queue/q`` → ``(None, "q")`` (no account is named ``queue``:
    an account id is 12 digits).
    """
    cached = _url_cache.get(url)
    if cached is not None:
        return cached
    rest = url.strip()
    scheme_end = rest.find("://")
    if scheme_end >= 0:
        rest = rest[scheme_end + 3 :]
        slash = rest.find("/")
        rest = rest[slash + 1 :] if slash >= 0 else ""
    rest = rest.split("?", 1)[0]
    segments = [s for s in rest.split("/") if s]
    if len(segments) == 2 and segments[0] == ELASTICMQ_PREFIX:  # ElasticMQ's older form: /queue/<name>
        result: tuple[str | None, str] = (None, segments[1])
    elif len(segments) >= 2:
        result = (segments[-2], segments[-1])
    elif segments:
        result = (None, segments[0])
    else:
        result = (None, "")
    if URL_CACHE_BOUND.admit(_url_cache, size_of(url, result, result[0], result[1])):
        _url_cache[url] = result
    return result


def path_queue(path: str) -> tuple[str, str] | None:
    """``(account id, queue name)`` when an HTTP request path addresses a queue (``/<account>/<name>[/]``, also
    LocalStack's ``/queue/<region>/<account>/<name>``); ElasticMQ's ``/queue/<name>`` gives ``("", name)``: the
    caller's account."""
    segments = [s for s in path.split("/") if s]
    if len(segments) == 2 and segments[0] == ELASTICMQ_PREFIX:
        return "", segments[1]
    if len(segments) >= 2:
        return segments[-2], segments[-1]
    return None


def _credential(value: str) -> tuple[str, str | None]:
    """``(access key id, region or None)`` from ``<AKID>/<date>/<region>/sqs/aws4_request``."""
    parts = value.split("/")
    return parts[0], (parts[2] if len(parts) >= 3 and parts[2] else None)


def credential_from_authorization(authorization: str) -> str | None:
    """The ``Credential=`` value of a SigV4 ``Authorization`` header, or None."""
    start = authorization.find("Credential=")
    if start < 0:
        return None
    start += len("Credential=")
    end = len(authorization)
    for sep in (",", " "):
        pos = authorization.find(sep, start)
        if 0 <= pos < end:
            end = pos
    return authorization[start:end]


def scope_service(credential: str | None) -> str | None:
    """The service a SigV4 credential scope names (``<key id>/<date>/<region>/<service>/aws4_request``: ``sqs``,
    ``sns``, ``sts``...), or None when ``credential`` is None or has fewer than five parts (AWS General Reference,
    "Signature Version 4 signing process": the credential scope)."""
    if credential is None:
        return None
    known = _services.get(credential)  # hashes the credential once: caller_namespace's lookup reuses the hash
    if known is not None:
        return known or None
    parts = credential.split("/")
    service = parts[3] if len(parts) >= 5 else None
    if SERVICE_CACHE_BOUND.admit(_services, size_of(credential, service or "")):
        _services[credential] = service or ""
    return service


_services: dict[str, str] = {}
SERVICE_CACHE_BOUND = CacheBound(_CACHE_LIMIT, 1024 * 1024, 1024)
"""What :func:`scope_service` remembers: at most 4,096 credential scopes and 1 MiB, none of over 1 KiB ("" for a
scope that names no service)."""


_ns_cache: dict[tuple[str | None, str, str], Namespace] = {}
NAMESPACE_CACHE_BOUND = CacheBound(_CACHE_LIMIT, 1024 * 1024, 1024)
"""What :func:`caller_namespace` remembers: at most 4,096 credential scopes and 1 MiB, none of over 1 KiB (a SigV4
scope is an access key id of at most 128 characters and about 40 more; a longer one is worked out each time)."""


def caller_namespace(credential: str | None, config: Config) -> Namespace:
    """The namespace (account, region) of the caller whose SigV4 credential scope is ``credential``.

    A 12-digit access key id is the account; anything else (or no credential) maps to ``config.account_id``.
    The region is the scope's when it looks like a region (``us-east-1``; not ``a<b>&c`` or
    ``us-east-1:999999999999:evil``), else ``config.region``.
    """
    key = (credential, config.account_id, config.region)
    ns = _ns_cache.get(key)
    if ns is not None:
        return ns
    account, region = config.account_id, config.region
    if credential:
        akid, scope_region = _credential(credential)
        if len(akid) == 12 and akid.isdigit() and akid.isascii():
            account = akid
        if scope_region and valid_region(scope_region):
            region = scope_region
    ns = Namespace(account, region)
    if NAMESPACE_CACHE_BOUND.admit(_ns_cache, size_of(key, credential, ns, ns.account_id, ns.region)):
        _ns_cache[key] = ns
    return ns
