"""Another AWS service's call reaching sqsemu (``--compat localstack``): answered with an error that says what
sqsemu is, instead of an SQS error about an unknown action.

LocalStack serves every AWS service on one port, so a LocalStack user's code may send S3, SNS or DynamoDB calls to
the endpoint sqsemu now answers. Every SDK signs its calls with Signature Version 4, whose credential scope names the
service (``<key id>/<date>/<region>/<service>/aws4_request``; AWS General Reference, "Elements of an AWS API request
signature"): a scope naming a service other than ``sqs`` gets HTTP 400 ``InvalidAction`` whose message names the
service and sqsemu. An unsigned request (curl) goes on as an SQS request.
"""

from __future__ import annotations

from sqsemu.engine.errors import InvalidAction

__all__ = ["ServiceNotServed", "foreign_service", "not_served"]


class ServiceNotServed(InvalidAction):
    """A call signed for another AWS service (HTTP 400, code ``InvalidAction``)."""


def foreign_service(authorization: str) -> str | None:
    """The service a SigV4 ``Authorization`` header's credential scope names when it is not ``sqs``; None for
    ``sqs`` or a header without a readable scope."""
    start = authorization.find("Credential=")
    if start < 0:
        return None
    scope = authorization[start + len("Credential=") :].split(",", 1)[0].split(" ", 1)[0]
    parts = scope.split("/")
    if len(parts) < 5:
        return None
    service = parts[3]
    return None if service in ("sqs", "") else service[:64]


def not_served(service: str) -> ServiceNotServed:
    """The error answered to a call signed for ``service``."""
    return ServiceNotServed(
        f"This endpoint is sqsemu, a local Amazon SQS server answering LocalStack's SQS part (--compat localstack); "
        f"it does not serve the {service!r} service. Point that client at an emulator of {service!r}."
    )
