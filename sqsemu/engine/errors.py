"""Domain errors raised by the engine and by request validation.

Each class is named after the SQS error *shape* (the JSON ``__type`` short name of the current botocore model);
none of them knows about HTTP. ``sqsemu.protocol.errors`` maps each one to its Query-compatible code, HTTP status
and fault in one table, for both wire formats (docs/behaviour.md section 1.5).
"""

from __future__ import annotations


class SQSError(Exception):
    """Base class: an SQS error with a human-readable message.

    ``shape`` is the error's name in the SQS JSON model (``QueueDoesNotExist``, ``InvalidParameterValue``...).
    """

    shape: str = "InternalError"

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


class QueueDoesNotExist(SQSError):
    """The queue named by a URL or name does not exist (API Reference, every QueueUrl-taking action)."""

    shape = "QueueDoesNotExist"

    def __init__(self, message: str = "The specified queue does not exist.") -> None:
        super().__init__(message)


class QueueNameExists(SQSError):
    """CreateQueue with a name that exists with a different attribute value (Query code QueueAlreadyExists)."""

    shape = "QueueNameExists"


class QueueDeletedRecently(SQSError):
    """CreateQueue within 60 seconds of deleting a queue of the same name."""

    shape = "QueueDeletedRecently"


class PurgeQueueInProgress(SQSError):
    """A second PurgeQueue on the same queue within 60 seconds (HTTP 403)."""

    shape = "PurgeQueueInProgress"


class OverLimit(SQSError):
    """A quota was reached (in-flight messages on a short-poll receive, permission statements...) (HTTP 403)."""

    shape = "OverLimit"


class BatchEntryIdsNotDistinct(SQSError):
    """Two batch entries share an ``Id``; AWS's message is ``Id <id> repeated.``."""

    shape = "BatchEntryIdsNotDistinct"


class BatchRequestTooLong(SQSError):
    """The sum of a SendMessageBatch's messages exceeds 1,048,576 bytes."""

    shape = "BatchRequestTooLong"


class EmptyBatchRequest(SQSError):
    """A batch action without entries; AWS's message names the action's entry type: ``There should be at least one
    SendMessageBatchRequestEntry in the request.``."""

    shape = "EmptyBatchRequest"


class InvalidBatchEntryId(SQSError):
    """A batch entry ``Id`` that is not 1 to 80 characters of ``[A-Za-z0-9_-]``."""

    shape = "InvalidBatchEntryId"

    def __init__(
        self,
        message: str = (
            "A batch entry id can only contain alphanumeric characters, hyphens and underscores. "
            "It can be at most 80 letters long."
        ),
    ) -> None:
        super().__init__(message)


class TooManyEntriesInBatchRequest(SQSError):
    """A batch action with more than 10 entries."""

    shape = "TooManyEntriesInBatchRequest"


class MessageNotInflight(SQSError):
    """The message is not in flight (modelled for ChangeMessageVisibility; see docs/behaviour.md 10.5)."""

    shape = "MessageNotInflight"


class ReceiptHandleIsInvalid(SQSError):
    """A receipt handle that this server did not issue (malformed, or for another queue)."""

    shape = "ReceiptHandleIsInvalid"


class InvalidMessageContents(SQSError):
    """A message body with characters outside the XML 1.0 ``Char`` production (docs/behaviour.md 4.6)."""

    shape = "InvalidMessageContents"


class InvalidAttributeName(SQSError):
    """An unknown or read-only queue attribute name (``Unknown Attribute <Name>.``)."""

    shape = "InvalidAttributeName"


class InvalidAttributeValue(SQSError):
    """A queue attribute value out of range or malformed."""

    shape = "InvalidAttributeValue"


class UnsupportedOperation(SQSError):
    """An operation this queue type does not support."""

    shape = "UnsupportedOperation"


class ResourceNotFound(SQSError):
    """A move-task source, destination or task that does not exist (HTTP 404)."""

    shape = "ResourceNotFoundException"


class InvalidParameterValue(SQSError):
    """The generic validation error (unmodelled; Query code InvalidParameterValue, HTTP 400)."""

    shape = "InvalidParameterValue"


class MissingParameter(SQSError):
    """A required parameter is absent (unmodelled; Query code MissingParameter, HTTP 400)."""

    shape = "MissingParameter"

    @classmethod
    def named(cls, name: str) -> MissingParameter:
        """The AWS message for a missing parameter ``name``."""
        return cls(f"The request must contain the parameter {name}.")


class MalformedInput(SQSError):
    """A Query parameter key that cannot be read: a list index that is not a positive decimal number of ASCII
    digits up to 2,147,483,647 (``Attribute.0.Name``, ``Attribute.².Name``). AWS answers ``MalformedInput``
    ``<index> is not a valid index`` (recorded for ``AttributeNameList.0``); HTTP 400."""

    shape = "MalformedInput"


class InvalidAction(SQSError):
    """An unknown action, or an action not valid on a queue URL (Query code InvalidAction, HTTP 400)."""

    shape = "InvalidAction"


class UnknownOperation(SQSError):
    """A request that names no action at all (AWS answers 404 ``UnknownOperationException``)."""

    shape = "UnknownOperationException"


class AccessDenied(SQSError):
    """Access denied (HTTP 403)."""

    shape = "AccessDenied"


class SerializationError(SQSError):
    """A request body that cannot be decoded (bad JSON, wrong member types)."""

    shape = "SerializationException"


class InternalError(SQSError):
    """An unexpected server fault (HTTP 500, fault ``Receiver``); never raised on purpose."""

    shape = "InternalError"


def invalid_value(value: object, parameter: str, reason: str) -> InvalidParameterValue:
    """``Value <v> for parameter <p> is invalid. Reason: <r>`` (the AWS message pattern)."""
    return InvalidParameterValue(f"Value {value} for parameter {parameter} is invalid. Reason: {reason}")
