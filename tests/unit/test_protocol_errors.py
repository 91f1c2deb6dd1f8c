"""The error table (docs/behaviour.md 1.5)."""

from __future__ import annotations

import inspect

import pytest

from sqsemu.engine import errors as e
from sqsemu.protocol.errors import ERRORS, error_info, query_message


@pytest.mark.parametrize(
    ("error", "json_type", "code", "status", "fault"),
    [
        (
            e.QueueDoesNotExist(),
            "com.amazonaws.sqs#QueueDoesNotExist",
            "AWS.SimpleQueueService.NonExistentQueue",
            400,
            "Sender",
        ),
        (e.QueueNameExists("x"), "com.amazonaws.sqs#QueueNameExists", "QueueAlreadyExists", 400, "Sender"),
        (
            e.PurgeQueueInProgress("x"),
            "com.amazonaws.sqs#PurgeQueueInProgress",
            "AWS.SimpleQueueService.PurgeQueueInProgress",
            403,
            "Sender",
        ),
        (e.OverLimit("x"), "com.amazonaws.sqs#OverLimit", "OverLimit", 403, "Sender"),
        (
            e.TooManyEntriesInBatchRequest("x"),
            "com.amazonaws.sqs#TooManyEntriesInBatchRequest",
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            400,
            "Sender",
        ),
        (
            e.ResourceNotFound("x"),
            "com.amazonaws.sqs#ResourceNotFoundException",
            "ResourceNotFoundException",
            404,
            "Sender",
        ),
        (
            e.ReceiptHandleIsInvalid("x"),
            "com.amazonaws.sqs#ReceiptHandleIsInvalid",
            "ReceiptHandleIsInvalid",
            400,
            "Sender",
        ),
        (
            e.InvalidParameterValue("x"),
            "com.amazon.coral.service#InvalidParameterValueException",
            "InvalidParameterValue",
            400,
            "Sender",
        ),
        (
            e.MissingParameter("x"),
            "com.amazon.coral.service#MissingRequiredParameterException",
            "MissingParameter",
            400,
            "Sender",
        ),
        (e.InvalidAction("x"), "com.amazon.coral.service#InvalidAction", "InvalidAction", 400, "Sender"),
        (
            e.UnknownOperation("x"),
            "com.amazon.coral.service#UnknownOperationException",
            "UnknownOperation",
            404,
            "Sender",
        ),
        (e.AccessDenied("x"), "com.amazon.coral.service#AccessDeniedException", "AccessDenied", 403, "Sender"),
        (e.InternalError("x"), "com.amazon.coral.service#InternalFailure", "InternalError", 500, "Receiver"),
        (
            e.UnsupportedOperation("x"),
            "com.amazonaws.sqs#UnsupportedOperation",
            "AWS.SimpleQueueService.UnsupportedOperation",
            400,
            "Sender",
        ),
    ],
)
def test_rows(error: e.SQSError, json_type: str, code: str, status: int, fault: str) -> None:
    info = error_info(error)
    assert (info.json_type, info.query_code, info.status, info.fault) == (json_type, code, status, fault)
    assert info.header == f"{code};{fault}".encode()


def test_every_engine_error_has_a_row() -> None:
    for _, cls in inspect.getmembers(e, inspect.isclass):
        if issubclass(cls, e.SQSError) and cls is not e.SQSError:
            assert cls.shape in ERRORS, cls


def test_unknown_shape_falls_back() -> None:
    class Odd(e.SQSError):
        shape = "OddError"

    info = error_info(Odd("x"))
    assert (info.json_type, info.query_code, info.status) == ("com.amazonaws.sqs#OddError", "OddError", 400)


def test_query_message_of_queue_does_not_exist() -> None:
    assert query_message(e.QueueDoesNotExist()) == "The specified queue does not exist for this wsdl version."
    assert query_message(e.InvalidParameterValue("m")) == "m"
