"""SNS's errors as the Query protocol writes them: a code, an HTTP status and a fault (``Sender`` or ``Receiver``).

The codes and statuses are botocore's SNS model (``service-2.json``, each exception's ``error`` trait); the messages
are AWS's where a recording or the SNS API Reference gives them (docs/behaviour.md, "SNS").
"""

from __future__ import annotations

__all__ = [
    "AuthorizationError",
    "BatchEntryIdsNotDistinct",
    "BatchRequestTooLong",
    "EmptyBatchRequest",
    "FilterPolicyLimitExceeded",
    "InjectedSNSError",
    "InternalError",
    "InvalidAction",
    "InvalidBatchEntryId",
    "InvalidParameter",
    "InvalidParameterValue",
    "InvalidSecurity",
    "NotFound",
    "ResourceNotFound",
    "SNSError",
    "SubscriptionLimitExceeded",
    "TagLimitExceeded",
    "TooManyEntriesInBatchRequest",
    "TopicLimitExceeded",
    "ValidationError",
    "ValidationException",
    "length_problem",
    "null_problem",
    "validation_error",
]


class SNSError(Exception):
    """An SNS error answered to the caller: ``code`` (the Query ``Code``), ``status`` (HTTP), ``fault``
    (``Sender`` or ``Receiver``) and the ``message`` AWS writes."""

    code = "InternalError"
    status = 500
    fault = "Receiver"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Sender(SNSError):
    fault = "Sender"
    status = 400


class InvalidParameter(_Sender):
    """``InvalidParameter`` (400): a request parameter does not comply with the associated constraints."""

    code = "InvalidParameter"


class InvalidParameterValue(_Sender):
    """``ParameterValueInvalid`` (400): a message attribute or Publish parameter's value is invalid."""

    code = "ParameterValueInvalid"


class ValidationException(_Sender):
    """``ValidationException`` (400): e.g. a FIFO Publish without a deduplication ID."""

    code = "ValidationException"


class ValidationError(_Sender):
    """``ValidationError`` (400): a value the model's constraints refuse (a required member of a structure left out,
    a string too long), as AWS's request validation words it (recorded: ``1 validation error detected: Value null at
    'messageAttributes.attr1.member.dataType' failed to satisfy constraint: Member must not be null``)."""

    code = "ValidationError"


def validation_error(problems: list[str]) -> ValidationError:
    """The ValidationError of one or more ``Value ... at '<path>' failed to satisfy constraint: ...`` problems."""
    count = len(problems)
    plural = "s" if count > 1 else ""
    return ValidationError(f"{count} validation error{plural} detected: " + "; ".join(problems))


def length_problem(value: str | None, path: str, low: int, high: int) -> str | None:
    """The problem of a string member against its model's length bounds (None: within them, or absent)."""
    if value is None:
        return None
    if len(value) < low:
        bound = f"greater than or equal to {low}"
    elif len(value) > high:
        bound = f"less than or equal to {high}"
    else:
        return None
    return f"Value '{value}' at '{path}' failed to satisfy constraint: Member must have length {bound}"


def null_problem(path: str) -> str:
    """The problem of a required structure member left out."""
    return f"Value null at '{path}' failed to satisfy constraint: Member must not be null"


class NotFound(_Sender):
    """``NotFound`` (404): the topic, subscription or endpoint does not exist."""

    code = "NotFound"
    status = 404


class ResourceNotFound(_Sender):
    """``ResourceNotFound`` (404): the tagged resource does not exist."""

    code = "ResourceNotFound"
    status = 404


class AuthorizationError(_Sender):
    """``AuthorizationError`` (403): the caller may not run the action on the resource."""

    code = "AuthorizationError"
    status = 403


class InvalidSecurity(_Sender):
    """``InvalidSecurity`` (403): the credential signature is not SigV4."""

    code = "InvalidSecurity"
    status = 403


class TopicLimitExceeded(_Sender):
    """``TopicLimitExceeded`` (403): the account has the most topics allowed."""

    code = "TopicLimitExceeded"
    status = 403


class SubscriptionLimitExceeded(_Sender):
    """``SubscriptionLimitExceeded`` (403)."""

    code = "SubscriptionLimitExceeded"
    status = 403


class FilterPolicyLimitExceeded(_Sender):
    """``FilterPolicyLimitExceeded`` (403): 200 filter policies per topic, 10,000 per account."""

    code = "FilterPolicyLimitExceeded"
    status = 403


class TagLimitExceeded(_Sender):
    """``TagLimitExceeded`` (400): more than 50 tags on a resource."""

    code = "TagLimitExceeded"


class BatchEntryIdsNotDistinct(_Sender):
    """``BatchEntryIdsNotDistinct`` (400)."""

    code = "BatchEntryIdsNotDistinct"


class BatchRequestTooLong(_Sender):
    """``BatchRequestTooLong`` (400): the batch's messages together exceed the topic's maximum size."""

    code = "BatchRequestTooLong"


class EmptyBatchRequest(_Sender):
    """``EmptyBatchRequest`` (400)."""

    code = "EmptyBatchRequest"


class InvalidBatchEntryId(_Sender):
    """``InvalidBatchEntryId`` (400)."""

    code = "InvalidBatchEntryId"


class TooManyEntriesInBatchRequest(_Sender):
    """``TooManyEntriesInBatchRequest`` (400): more than 10 entries."""

    code = "TooManyEntriesInBatchRequest"


class InvalidAction(_Sender):
    """``InvalidAction`` (400): an action SNS does not have, or one sqsemu does not serve (the SMS and mobile
    push management actions: docs/sns.md, "What is not served")."""

    code = "InvalidAction"


class InjectedSNSError(SNSError):
    """An SNS call's error of a given code, status and fault: a fault rule's (``/_sqsemu/faults``), or one raised
    before SNS's handlers (a refused signature, a failed durable store), written as SNS writes its errors."""

    def __init__(self, code: str, status: int, fault: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.fault = fault


class InternalError(SNSError):
    """``InternalError`` (500, Receiver)."""

    code = "InternalError"
