"""SQS clients for both wire protocols, with one calling convention.

``client_for(endpoint, "json")`` is a current boto3 client (AWS JSON 1.0); ``client_for(endpoint, "query")``
is a :class:`~harness.legacy.LegacySQSClient` (boto3 1.28.64, AWS Query). Both: region us-east-1, credentials
``test``/``test`` unless given, no retries, 60 s read timeout (long polls last up to 20 s), and
``client.meta.protocol`` / ``client.meta.service_model.protocol`` naming the protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sqsemu.testing.boto import new_client

from .legacy import LegacySQSClient

PROTOCOLS = ("json", "query")
REGION = "us-east-1"
READ_TIMEOUT_S = 60
CONNECT_TIMEOUT_S = 5


def json_client(
    endpoint_url: str,
    *,
    access_key_id: str = "test",
    secret_access_key: str = "test",
    region: str = REGION,
    verify: str | None = None,
) -> Any:
    """A current boto3 SQS client (AWS JSON 1.0) for ``endpoint_url``; ``verify``: the CA bundle an ``https://``
    endpoint's certificate is verified with (default: the system's, or ``AWS_CA_BUNDLE``)."""
    client = new_client(
        "sqs",
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=access_key_id,
        aws_secret_access_key=secret_access_key,
        verify=verify,
        config=Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=CONNECT_TIMEOUT_S,
            read_timeout=READ_TIMEOUT_S,
            max_pool_connections=32,
        ),
    )
    protocol = client.meta.service_model.protocol
    if protocol != "json":
        raise RuntimeError(f"the installed boto3 speaks {protocol!r} to SQS, expected 'json'")
    client.meta.protocol = "json"
    return client


def client_for(
    endpoint_url: str,
    protocol: str,
    *,
    access_key_id: str = "test",
    secret_access_key: str = "test",
    region: str = REGION,
    verify: str | None = None,
) -> Any:
    """An SQS client speaking ``protocol`` (``"json"`` or ``"query"``) to ``endpoint_url`` (``verify``: the CA
    bundle of an ``https://`` endpoint).

    A 12-digit ``access_key_id`` selects that account on sqsemu (any other key uses the server's default
    account). Query clients own a worker process: call ``.close()`` when done (the fixtures do; leftovers are
    stopped when the test session ends).
    """
    if protocol == "json":
        return json_client(
            endpoint_url,
            access_key_id=access_key_id,
            secret_access_key=secret_access_key,
            region=region,
            verify=verify,
        )
    if protocol == "query":
        return LegacySQSClient(
            endpoint_url,
            region_name=region,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            read_timeout=READ_TIMEOUT_S,
            connect_timeout=CONNECT_TIMEOUT_S,
            verify=verify,
        )
    raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")


class SignedClients:
    """Clients of one server and protocol made per access key, all closed at the end of a ``with`` block (a
    fixture's ``yield``): ``make(key, secret)`` is :func:`client_for` with those credentials."""

    def __init__(self, endpoint_url: str, protocol: str) -> None:
        self.endpoint_url = endpoint_url
        self.protocol = protocol
        self.made: list[Any] = []

    def make(self, access_key_id: str, secret_access_key: str) -> Any:
        client = client_for(
            self.endpoint_url, self.protocol, access_key_id=access_key_id, secret_access_key=secret_access_key
        )
        self.made.append(client)
        return client

    def __enter__(self) -> SignedClients:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for client in self.made:
            client.close()


def error_of(call: Callable[[], Any]) -> tuple[str, int, str]:
    """The AWS error ``call()`` raised, as ``(code, HTTP status, message)``, on either protocol's client (raises
    ``pytest.fail.Exception`` when it raised none)."""
    with pytest.raises(ClientError) as caught:
        call()
    response = caught.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]
