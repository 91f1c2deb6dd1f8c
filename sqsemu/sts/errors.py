"""STS's errors as its Query protocol writes them: a code, an HTTP status and a fault (``Sender`` or ``Receiver``).

Codes and statuses from botocore's STS model (``service-2.json``) and the STS API Reference's "Common Errors"; the
messages are AWS's where recorded answers give them (docs/behaviour.md, "STS").
"""

from __future__ import annotations

__all__ = ["AccessDenied", "InvalidAction", "STSError", "ValidationError", "length_problem", "validation_error"]


class STSError(Exception):
    """An STS error answered to the caller: ``code`` (the Query ``Code``), ``status`` (HTTP), ``fault`` (``Sender``
    or ``Receiver``) and the ``message`` AWS writes."""

    code = "InternalError"
    status = 500
    fault = "Receiver"

    def __init__(self, message: str, code: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
            self.fault = "Receiver" if status >= 500 else "Sender"


class ValidationError(STSError):
    """``ValidationError`` (400): a parameter the model's constraints refuse, or a duration longer than the role
    allows."""

    code = "ValidationError"
    status = 400
    fault = "Sender"


class AccessDenied(STSError):
    """``AccessDenied`` (403): ``AssumeRole`` not allowed, ``GetSessionToken`` with session credentials."""

    code = "AccessDenied"
    status = 403
    fault = "Sender"


class InvalidAction(STSError):
    """``InvalidAction`` (400): an action STS does not have, or one sqsemu does not serve."""

    code = "InvalidAction"
    status = 400
    fault = "Sender"


def validation_error(problems: list[str]) -> ValidationError:
    """The ValidationError of one or more ``Value ... at '<member>' failed to satisfy constraint: ...`` problems, as
    AWS's request validation words it (recorded: ``1 validation error detected: Value '600' at 'durationSeconds'
    failed to satisfy constraint: Member must have value greater than or equal to 900``)."""
    count = len(problems)
    plural = "s" if count > 1 else ""
    return ValidationError(f"{count} validation error{plural} detected: " + "; ".join(problems))


def length_problem(value: str, member: str, low: int, high: int) -> str | None:
    """The problem of a string member outside its model's length bounds, or None."""
    if len(value) < low:
        bound = f"greater than or equal to {low}"
    elif len(value) > high:
        bound = f"less than or equal to {high}"
    else:
        return None
    return f"Value '{value}' at '{member}' failed to satisfy constraint: Member must have length {bound}"
