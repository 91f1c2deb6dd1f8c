"""The one table of SQS errors: each error shape's JSON ``__type``, Query code, HTTP status and fault.

docs/behaviour.md section 1.5. Both wire formats render errors from this table: the JSON 1.0 protocol sends
``{"__type": ..., "message": ...}`` plus the ``x-amzn-query-error: <QueryCode>;<Fault>`` header, the Query protocol
sends an ``ErrorResponse`` XML document whose ``<Code>`` is the Query code.

:class:`InjectedError` (fault injection, ``sqsemu.admin.faults``) carries its own row, so an arbitrary code, status
and fault render exactly like a modelled error.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqsemu.engine.errors import SQSError

SQS_NS = "com.amazonaws.sqs#"
CORAL_NS = "com.amazon.coral.service#"

QUEUE_DOES_NOT_EXIST_QUERY_MESSAGE = "The specified queue does not exist for this wsdl version."


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """How one error shape travels: JSON ``__type``, Query ``<Code>``, HTTP ``status`` and ``fault``.

    ``fault`` is ``Sender`` (client errors) or ``Receiver`` (server faults). ``header`` is the precomputed
    ``x-amzn-query-error`` value (``<QueryCode>;<fault>``) as bytes.
    """

    json_type: str
    query_code: str
    status: int
    fault: str = "Sender"

    @property
    def header(self) -> bytes:
        """The ``x-amzn-query-error`` header value."""
        return f"{self.query_code};{self.fault}".encode()


def _sqs(shape: str, code: str, status: int = 400) -> ErrorInfo:
    return ErrorInfo(SQS_NS + shape, code, status)


_AWS = "AWS.SimpleQueueService."

ERRORS: dict[str, ErrorInfo] = {
    # Modelled SQS errors (Query codes and statuses from the last query model).
    "QueueDoesNotExist": _sqs("QueueDoesNotExist", _AWS + "NonExistentQueue"),
    "QueueNameExists": _sqs("QueueNameExists", "QueueAlreadyExists"),
    "QueueDeletedRecently": _sqs("QueueDeletedRecently", _AWS + "QueueDeletedRecently"),
    "PurgeQueueInProgress": _sqs("PurgeQueueInProgress", _AWS + "PurgeQueueInProgress", 403),
    "OverLimit": _sqs("OverLimit", "OverLimit", 403),
    "BatchEntryIdsNotDistinct": _sqs("BatchEntryIdsNotDistinct", _AWS + "BatchEntryIdsNotDistinct"),
    "BatchRequestTooLong": _sqs("BatchRequestTooLong", _AWS + "BatchRequestTooLong"),
    "EmptyBatchRequest": _sqs("EmptyBatchRequest", _AWS + "EmptyBatchRequest"),
    "InvalidBatchEntryId": _sqs("InvalidBatchEntryId", _AWS + "InvalidBatchEntryId"),
    "TooManyEntriesInBatchRequest": _sqs("TooManyEntriesInBatchRequest", _AWS + "TooManyEntriesInBatchRequest"),
    "MessageNotInflight": _sqs("MessageNotInflight", _AWS + "MessageNotInflight"),
    "UnsupportedOperation": _sqs("UnsupportedOperation", _AWS + "UnsupportedOperation"),
    "ResourceNotFoundException": _sqs("ResourceNotFoundException", "ResourceNotFoundException", 404),
    "InvalidAttributeName": _sqs("InvalidAttributeName", "InvalidAttributeName"),
    "InvalidAttributeValue": _sqs("InvalidAttributeValue", "InvalidAttributeValue"),
    "ReceiptHandleIsInvalid": _sqs("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid"),
    "InvalidMessageContents": _sqs("InvalidMessageContents", "InvalidMessageContents"),
    "InvalidIdFormat": _sqs("InvalidIdFormat", "InvalidIdFormat"),
    # Modelled only in the current JSON model: no Query code documented, the shape name is used.
    "InvalidAddress": _sqs("InvalidAddress", "InvalidAddress"),
    "InvalidSecurity": _sqs("InvalidSecurity", "InvalidSecurity"),
    "RequestThrottled": _sqs("RequestThrottled", "RequestThrottled", 403),
    "KmsAccessDenied": _sqs("KmsAccessDenied", "KmsAccessDenied"),
    "KmsDisabled": _sqs("KmsDisabled", "KmsDisabled"),
    "KmsInvalidKeyUsage": _sqs("KmsInvalidKeyUsage", "KmsInvalidKeyUsage"),
    "KmsInvalidState": _sqs("KmsInvalidState", "KmsInvalidState"),
    "KmsNotFound": _sqs("KmsNotFound", "KmsNotFound"),
    "KmsOptInRequired": _sqs("KmsOptInRequired", "KmsOptInRequired"),
    "KmsThrottled": _sqs("KmsThrottled", "KmsThrottled"),
    # Unmodelled (service-framework) errors.
    "InvalidParameterValue": ErrorInfo(CORAL_NS + "InvalidParameterValueException", "InvalidParameterValue", 400),
    "MissingParameter": ErrorInfo(CORAL_NS + "MissingRequiredParameterException", "MissingParameter", 400),
    "AccessDenied": ErrorInfo(CORAL_NS + "AccessDeniedException", "AccessDenied", 403),
    # Authentication (sqsemu.security; AWS "Common Errors"). JSON clients read the code from x-amzn-query-error.
    "MissingAuthenticationToken": ErrorInfo(
        CORAL_NS + "MissingAuthenticationTokenException", "MissingAuthenticationToken", 403
    ),
    "InvalidClientTokenId": ErrorInfo(CORAL_NS + "UnrecognizedClientException", "InvalidClientTokenId", 403),
    "SignatureDoesNotMatch": ErrorInfo(CORAL_NS + "InvalidSignatureException", "SignatureDoesNotMatch", 403),
    "RequestExpired": ErrorInfo(CORAL_NS + "RequestExpired", "RequestExpired", 400),
    "ExpiredToken": ErrorInfo(CORAL_NS + "ExpiredTokenException", "ExpiredToken", 403),
    "IncompleteSignature": ErrorInfo(CORAL_NS + "IncompleteSignatureException", "IncompleteSignature", 400),
    "InvalidAction": ErrorInfo(CORAL_NS + "InvalidAction", "InvalidAction", 400),
    "UnknownOperationException": ErrorInfo(CORAL_NS + "UnknownOperationException", "UnknownOperation", 404),
    "SerializationException": ErrorInfo(CORAL_NS + "SerializationException", "SerializationException", 400),
    # A malformed Query parameter key (a bad list index); only the Query decoder raises it.
    "MalformedInput": ErrorInfo(CORAL_NS + "MalformedInput", "MalformedInput", 400),
    "InternalError": ErrorInfo(CORAL_NS + "InternalFailure", "InternalError", 500, "Receiver"),
}


_BY_QUERY_CODE: dict[str, ErrorInfo] = {info.query_code: info for info in ERRORS.values()}


def injected_error_info(code: str, status: int | None = None, fault: str | None = None) -> ErrorInfo:
    """The row for an error of ``code`` chosen by a fault-injection rule.

    ``code`` may name a table row by its shape (``OverLimit``, ``InternalError``) or by its Query code
    (``AWS.SimpleQueueService.NonExistentQueue``): that row's JSON ``__type`` and Query code are used. Any other code
    renders as ``com.amazonaws.sqs#<code>`` with Query code ``<code>`` (e.g. ``ThrottlingException``).
    ``status`` defaults to the row's status (400 for unknown codes); ``fault`` defaults to ``Sender`` below 500 and
    ``Receiver`` from 500 on.
    """
    known = ERRORS.get(code) or _BY_QUERY_CODE.get(code)
    json_type, query_code = (known.json_type, known.query_code) if known else (SQS_NS + code, code)
    if status is None:
        status = known.status if known else 400
    if fault is None:
        fault = "Receiver" if status >= 500 else "Sender"
    return ErrorInfo(json_type, query_code, status, fault)


class InjectedError(SQSError):
    """An error raised by a fault-injection rule instead of running the call; renders from its own ``info`` row."""

    def __init__(self, info: ErrorInfo, message: str) -> None:
        super().__init__(message)
        self.shape = info.json_type.rpartition("#")[2]
        self.info = info


def error_info(error: SQSError) -> ErrorInfo:
    """The table row of ``error``'s shape; an unknown shape falls back to ``com.amazonaws.sqs#<shape>``/400.

    An :class:`InjectedError` brings its own row."""
    if isinstance(error, InjectedError):
        return error.info
    info = ERRORS.get(error.shape)
    if info is None:
        info = ErrorInfo(SQS_NS + error.shape, error.shape, 400)
    return info


def query_message(error: SQSError) -> str:
    """The message the Query protocol shows for ``error`` (QueueDoesNotExist has its own wsdl-era text)."""
    if error.shape == "QueueDoesNotExist" and error.message == "The specified queue does not exist.":
        return QUEUE_DOES_NOT_EXIST_QUERY_MESSAGE
    return error.message
