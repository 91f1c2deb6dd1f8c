"""Another AWS service's call reaching sqsemu (``--compat localstack``): answered with an error that says what
sqsemu is, instead of an SQS error about an unknown action.

LocalStack serves every AWS service on one port, so a LocalStack user's code may send S3, SNS or DynamoDB calls to
the endpoint sqsemu now answers. Every SDK signs its calls with Signature Version 4, whose credential scope names the
service (``<key id>/<date>/<region>/<service>/aws4_request``; AWS General Reference, "Elements of an AWS API request
signature"). sqsemu serves three of them on that port, SQS, SNS (:mod:`sqsemu.sns`) and STS (:mod:`sqsemu.sts`);
a scope naming any other service gets HTTP 400 ``InvalidAction`` whose message names the service and sqsemu. An
unsigned request (curl) goes on as an SQS or SNS request, by its action.
"""

from __future__ import annotations

from sqsemu.engine.errors import InvalidAction

__all__ = ["SERVED", "ServiceNotServed", "foreign_service", "not_served"]

SERVED = ("sqs", "sns", "sts")
"""The services sqsemu answers, as a SigV4 credential scope names them."""


class ServiceNotServed(InvalidAction):
    """A call signed for another AWS service (HTTP 400, code ``InvalidAction``)."""


def foreign_service(authorization: str) -> str | None:
    """The service a SigV4 ``Authorization`` header's credential scope names when sqsemu does not serve it (not one
    of :data:`SERVED`); None for ``sqs``, ``sns``, ``sts`` or a header without a readable scope."""
    start = authorization.find("Credential=")
    if start < 0:
        return None
    scope = authorization[start + len("Credential=") :].split(",", 1)[0].split(" ", 1)[0]
    parts = scope.split("/")
    if len(parts) < 5:
        return None
    service = parts[3]
    return None if service in SERVED or not service else service[:64]


def not_served(service: str) -> ServiceNotServed:
    """The error answered to a call signed for ``service``."""
    return ServiceNotServed(
        f"This endpoint is sqsemu, a local Amazon SQS and SNS server answering LocalStack's SQS and SNS parts "
        f"(--compat localstack); it does not serve the {service!r} service. Point that client at an emulator of "
        f"{service!r}."
    )
