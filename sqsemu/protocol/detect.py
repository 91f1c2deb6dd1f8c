"""Which wire protocol a request speaks, and which action it names (SQS-REFERENCE section 1.1).

JSON 1.0: an ``X-Amz-Target: AmazonSQS.<Action>`` header (or an ``application/x-amz-json-1.0`` content type).
Query: an ``Action`` parameter in the form body (POST) or in the query string (GET or POST).
Neither: the caller answers HTTP 404 ``<UnknownOperationException/>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from urllib.parse import parse_qsl

TARGET_PREFIX = "AmazonSQS."
JSON_CONTENT_TYPE = "application/x-amz-json"


class Protocol(Enum):
    """The two SQS wire protocols."""

    JSON = "json"
    QUERY = "query"


@dataclass(slots=True)
class Detected:
    """The outcome of detection.

    ``action`` is None when the request names no action (or a JSON target outside ``AmazonSQS.``). ``params`` are
    the Query form pairs (query string first, then the form body), empty for JSON.
    """

    protocol: Protocol
    action: str | None
    params: list[tuple[str, str]]


def looks_like_json(target: str | None, content_type: str | None) -> bool:
    """True when the request's headers say JSON 1.0 (so its errors must be rendered as JSON)."""
    return target is not None or (content_type is not None and content_type.startswith(JSON_CONTENT_TYPE))


def detect(method: str, target: str | None, content_type: str | None, query_string: bytes, body: bytes) -> Detected:
    """Detect the protocol and action of a request.

    ``target`` is the ``X-Amz-Target`` header, ``content_type`` the ``Content-Type`` header (both None when absent).
    """
    if looks_like_json(target, content_type):
        action = None
        if target is not None and target.startswith(TARGET_PREFIX):
            action = target[len(TARGET_PREFIX) :] or None
        return Detected(Protocol.JSON, action, [])
    params: list[tuple[str, str]] = []
    if query_string:
        params.extend(parse_qsl(query_string.decode("utf-8", "replace"), keep_blank_values=True))
    if body and method != "GET":
        params.extend(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    action = None
    for key, value in params:
        if key == "Action":
            action = value
    return Detected(Protocol.QUERY, action or None, params)
