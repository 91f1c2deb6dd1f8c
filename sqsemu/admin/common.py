"""Small helpers shared by the admin routes: JSON errors and JSON bodies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqsemu.engine import jsondoc

if TYPE_CHECKING:  # Starlette is imported with the admin app, at its first request (not by the SQS path)
    from starlette.requests import Request
    from starlette.responses import JSONResponse


class AdminError(Exception):
    """A bad admin request: answered ``{"error": message}`` with ``status`` (400 unless said otherwise)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def json_error(message: str, status: int = 400) -> JSONResponse:
    """``{"error": message}`` with HTTP ``status``."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


async def json_object(request: Request, example: str) -> dict[str, Any]:
    """The request body as a JSON object; raises ``AdminError`` (400) naming ``example`` when it is not one (also
    when it nests more than ``jsondoc.MAX_DEPTH`` levels deep). An empty body is an empty object."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = jsondoc.loads(raw)  # never RecursionError: too deep (> jsondoc.MAX_DEPTH levels) is a ValueError
    except ValueError:
        raise AdminError(f"the body must be a JSON object like {example}") from None
    if not isinstance(data, dict):
        raise AdminError(f"the body must be a JSON object like {example}")
    return data
