"""STS on sqsemu's port: which requests are STS calls, and the one STS service per server that answers them.

A request is an STS call when its SigV4 credential scope names ``sts`` (``<key>/<date>/<region>/sts/aws4_request``;
AWS General Reference, "Elements of an AWS API request signature"; a presigned URL's ``X-Amz-Credential`` too), or,
signed for no service, when its ``Action`` is one of STS's (no SQS or SNS action has one of their names). STS speaks
the Query protocol only (botocore's STS model: ``"protocols": ["query"]``, API version 2011-06-15).
``AssumeRoleWithWebIdentity`` and ``AssumeRoleWithSAML``, which AWS answers unsigned, reach STS unsigned whatever
``--auth`` says, to be told that sqsemu does not serve them.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from sqsemu.clock import Clock
from sqsemu.config import Config
from sqsemu.security.sessions import Sessions
from sqsemu.sts.errors import InvalidAction, STSError
from sqsemu.sts.service import ACTIONS, NOT_SERVED, Service, STSCall, not_served
from sqsemu.sts.wire import encode, encode_error

if TYPE_CHECKING:
    from sqsemu.security.iam import AccessControl

__all__ = ["STS", "STS_ACTIONS", "UNSIGNED_ACTIONS", "is_sts_call", "presigned_service", "render_error"]

STS_ACTIONS = frozenset(ACTIONS) | NOT_SERVED
UNSIGNED_ACTIONS = frozenset({"AssumeRoleWithWebIdentity", "AssumeRoleWithSAML"})
"""The STS actions AWS answers without a signature (botocore's model: ``"auth": ["smithy.api#noAuth"]``)."""


def presigned_service(query_string: bytes) -> str | None:
    """The service a presigned URL's ``X-Amz-Credential`` scope names, or None (no such parameter)."""
    if b"X-Amz-Credential" not in query_string:
        return None
    for name, value in parse_qsl(query_string.decode("latin-1")):
        if name == "X-Amz-Credential":
            parts = value.split("/")
            return parts[3] if len(parts) >= 5 else None
    return None


def is_sts_call(service: str | None, action: str | None) -> bool:
    """Whether a request is an STS call: signed for ``sts``, or (signed for no service) naming an STS action."""
    if service is not None:
        return service == "sts"
    return action is not None and action in STS_ACTIONS


class STS:
    """The STS service of one server over its clock: its temporary credentials (:attr:`sessions`, which the SigV4
    verifier and the access control consult) and the actions (:mod:`sqsemu.sts.service`); ``access`` is the server's
    access control under ``--auth iam``."""

    def __init__(self, config: Config, clock: Clock, access: AccessControl | None = None) -> None:
        self.sessions = Sessions(config, clock.now_ms)
        self.service = Service(config, self.sessions, access)

    def answer(
        self,
        action: str | None,
        pairs: Sequence[tuple[str, str]],
        account: str,
        region: str,
        access_key_id: str,
        scope: MutableMapping[str, Any] | None,
        request_id: str,
    ) -> bytes:
        """The XML answer of one STS call made by ``access_key_id`` acting as ``account`` in ``region``; raises
        :class:`~sqsemu.sts.errors.STSError`."""
        handler = ACTIONS.get(action or "")
        if handler is None:
            if action in NOT_SERVED:
                raise not_served(action)
            raise InvalidAction(f"Could not find operation {action} for version 2011-06-15")
        assert action is not None
        params = {name: value for name, value in pairs if name not in ("Action", "Version")}
        call = STSCall(params, account, region, access_key_id, scope, request_id)
        return encode(action, handler(self.service, call), request_id)


def render_error(error: STSError, request_id: str) -> tuple[int, bytes]:
    """``(status, body)`` of an STS error."""
    return encode_error(error, request_id)
