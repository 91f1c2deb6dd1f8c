"""Lambda's errors as the REST API answers them (botocore's Lambda service model, ``service-2.json``, 2015-03-31).

Each error is answered with its HTTP status, the ``X-Amzn-ErrorType`` header naming the code and a JSON body
``{"Type": "User", "message": ...}`` (``Message`` for the shapes whose member is spelled so), which botocore's
REST-JSON parser turns into ``ClientError`` with that code and message.
"""

from __future__ import annotations


class LambdaError(Exception):
    """A Lambda API error: ``code`` (the error shape's name), ``status`` (HTTP), ``message``; ``member`` is the
    spelling of the message member in the shape (``message`` or ``Message``), ``fault`` ``User`` or ``Service``."""

    code = "ServiceException"
    status = 500
    member = "Message"
    fault = "Service"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, str]:
        """The JSON body of the answer."""
        return {"Type": self.fault, self.member: self.message}


class InvalidParameterValue(LambdaError):
    """``InvalidParameterValueException`` (HTTP 400): a parameter is missing, out of range or not allowed."""

    code = "InvalidParameterValueException"
    status = 400
    member = "message"
    fault = "User"


class ValidationError(LambdaError):
    """``ValidationException`` (HTTP 400): a value outside the service model's enum, as AWS's request validation
    answers it before Lambda looks at the call (recorded on AWS for an unknown ``StartingPosition``: "1 validation error
    detected: Value '0' at 'startingPosition' failed to satisfy constraint: Member must satisfy enum value set:
    [LATEST, AT_TIMESTAMP, TRIM_HORIZON]"). Not a shape of botocore's Lambda model: SDKs read its code from the
    ``X-Amzn-ErrorType`` header."""

    code = "ValidationException"
    status = 400
    member = "message"
    fault = "User"


def enum_refusal(value: str, where: str, allowed: tuple[str, ...], listed: list[str] | None = None) -> ValidationError:
    """The ValidationException for ``value`` at the member ``where`` (``loggingConfig.systemLogLevel``, in the
    lower-camel path AWS's message uses) outside ``allowed``, worded as the recorded one (:class:`ValidationError`).
    ``listed``: the whole list when the member is a list's (``metricsConfig.metrics``), which the message then names
    with the list form of AWS's validation messages (not recorded for Lambda)."""
    rule = f"Member must satisfy enum value set: [{', '.join(allowed)}]"
    if listed is not None:
        value, rule = f"[{', '.join(listed)}]", f"Member must satisfy constraint: [{rule}]"
    return ValidationError(
        f"1 validation error detected: Value '{value}' at '{where}' failed to satisfy constraint: {rule}"
    )


class ResourceNotFound(LambdaError):
    """``ResourceNotFoundException`` (HTTP 404): no such mapping, function or queue."""

    code = "ResourceNotFoundException"
    status = 404
    fault = "User"


class ResourceConflict(LambdaError):
    """``ResourceConflictException`` (HTTP 409): a mapping of that queue to that function exists already."""

    code = "ResourceConflictException"
    status = 409
    member = "message"
    fault = "User"


class ResourceInUse(LambdaError):
    """``ResourceInUseException`` (HTTP 400): the mapping is being deleted."""

    code = "ResourceInUseException"
    status = 400
    fault = "User"


NOT_FOUND_MESSAGE = "The resource you requested does not exist."
"""Lambda's message for a mapping UUID that names nothing."""


def role_refusal(action: str) -> str:
    """Lambda's message for an execution role that may not call the SQS ``action`` (``ReceiveMessage``) on the
    queue, as CreateEventSourceMapping's InvalidParameterValueException gives it (a recorded AWS answer: "The provided
    execution role does not have permissions to call ReceiveMessage on SQS")."""
    return f"The provided execution role does not have permissions to call {action} on SQS"
