"""What the Lambda API shows of functions: GetFunction and ListFunctions (botocore's Lambda service model,
2015-03-31), for the functions of one account (``sqsemu.eventsource.functions``: a declared function is one
account's, a name declared nowhere every account's).

A function's ``FunctionConfiguration`` holds what sqsemu knows of it: ``FunctionName``, ``FunctionArn`` (in the
caller's region and the function's account, as Lambda writes a function's ARN), ``Role`` (its declared execution
role, when it has one), ``Version`` ``$LATEST``, ``State`` ``Active`` and ``LastUpdateStatus`` ``Successful``;
sqsemu runs no code package, so ``Runtime``, ``Handler``, ``CodeSize`` and the rest are left out, and GetFunction
has no ``Code``. A function another account owns, one nothing runs, or a qualifier other than ``$LATEST`` (sqsemu
has no versions or aliases) is ``ResourceNotFoundException`` ``Function not found: <function ARN>``.
"""

from __future__ import annotations

from typing import Any

from sqsemu.engine.queue import Namespace
from sqsemu.eventsource.errors import InvalidParameterValue, ResourceNotFound
from sqsemu.eventsource.functions import Functions
from sqsemu.eventsource.mapping import FunctionRef, function_arn

LIST_PAGE_MAX = 50
"""Most functions in one ListFunctions answer, whatever ``MaxItems`` says (the model's ListFunctions doc: "returns
a maximum of 50 items in each response, even if you set the number higher")."""
MAX_ITEMS = 10_000
"""MaxItems' range (1 to 10,000: the ``MaxListItems`` shape)."""
LATEST = "$LATEST"


def configuration(functions: Functions, name: str, caller: Namespace) -> dict[str, Any]:
    """The ``FunctionConfiguration`` of ``caller``'s function ``name`` (which exists: :func:`get_function` checks)."""
    out: dict[str, Any] = {
        "FunctionName": name,
        "FunctionArn": function_arn(caller.region, caller.account_id, name),
        "Version": LATEST,
        "State": "Active",
        "LastUpdateStatus": "Successful",
    }
    role = functions.role_of(name, caller.account_id)
    if role is not None:
        out["Role"] = role.principal.arn
    return out


def get_function(functions: Functions, ref: FunctionRef, qualifier: str | None, caller: Namespace) -> dict[str, Any]:
    """GetFunction: ``{"Configuration": ...}`` for the function ``ref`` names (``qualifier``: the ``Qualifier``
    query parameter). Raises ``ResourceNotFound`` for a function the caller's account does not have (another
    account's or region's included: the API authorized the call on that function's ARN first)."""
    wanted = qualifier if qualifier is not None else ref.qualifier
    missing = FunctionRef(ref.name, ref.region, ref.account, wanted).qualified_arn(caller.region, caller.account_id)
    if (
        (ref.account or caller.account_id) != caller.account_id
        or (ref.region or caller.region) != caller.region
        or wanted not in (None, LATEST)
        or not functions.known(ref.name, caller.account_id)
    ):
        raise ResourceNotFound(f"Function not found: {missing}")
    return {"Configuration": configuration(functions, ref.name, caller)}


def list_functions(functions: Functions, caller: Namespace, query: dict[str, str]) -> dict[str, Any]:
    """ListFunctions: the caller's account's functions (:meth:`Functions.names`), by name, at most
    :data:`LIST_PAGE_MAX` an answer with ``NextMarker`` for the rest. ``FunctionVersion`` may be ``ALL`` (the same
    list: every function has ``$LATEST`` only); ``MasterRegion`` (Lambda@Edge replicas, of which sqsemu has none)
    lists nothing and needs ``FunctionVersion=ALL``, as the model says. Raises ``InvalidParameterValue``."""
    version = query.get("FunctionVersion")
    if version is not None and version != "ALL":
        raise InvalidParameterValue(f"FunctionVersion must be ALL, got {version!r}.")
    if "MasterRegion" in query:
        if version != "ALL":
            raise InvalidParameterValue("MasterRegion requires FunctionVersion to be ALL.")
        return {"Functions": []}
    size = LIST_PAGE_MAX
    raw = query.get("MaxItems")
    if raw is not None:
        try:
            size = int(raw)
        except ValueError:
            raise InvalidParameterValue("MaxItems must be an integer.") from None
        if not 1 <= size <= MAX_ITEMS:
            raise InvalidParameterValue(f"MaxItems must be between 1 and {MAX_ITEMS}.")
        size = min(size, LIST_PAGE_MAX)
    names = functions.names(caller.account_id)
    start = 0
    marker = query.get("Marker")
    if marker:
        if marker not in names:
            raise InvalidParameterValue("Invalid Marker.")
        start = names.index(marker)
    out: dict[str, Any] = {"Functions": [configuration(functions, n, caller) for n in names[start : start + size]]}
    if start + size < len(names):
        out["NextMarker"] = names[start + size]
    return out
