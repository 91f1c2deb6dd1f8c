"""The event-source-mapping part of the Lambda REST API (REST-JSON, botocore's Lambda service model 2015-03-31):

==========================  ======  ===============================================  ======
CreateEventSourceMapping    POST    /2015-03-31/event-source-mappings/               202
ListEventSourceMappings     GET     /2015-03-31/event-source-mappings/               200
GetEventSourceMapping       GET     /2015-03-31/event-source-mappings/{UUID}         200
UpdateEventSourceMapping    PUT     /2015-03-31/event-source-mappings/{UUID}         202
DeleteEventSourceMapping    DELETE  /2015-03-31/event-source-mappings/{UUID}         202
GetFunction                 GET     /2015-03-31/functions/{FunctionName}             200
ListFunctions               GET     /2015-03-31/functions/                           200
TagResource                 POST    /2017-03-31/tags/{ARN}                           204
UntagResource               DELETE  /2017-03-31/tags/{ARN}?tagKeys=...               204
ListTags                    GET     /2017-03-31/tags/{ARN}                           200
==========================  ======  ===============================================  ======

The tagging operations take an event source mapping's ARN (``EventSourceMappingArn``,
``arn:aws:lambda:<region>:<account>:event-source-mapping:<UUID>``); sqsemu tags no other Lambda resource.

The caller's account and region come from the SigV4 credential, as for SQS calls (a 12-digit access key id is the
account). With ``--auth sigv4`` the signature is verified as SQS calls' are (``sqsemu.security.sigv4``), scoped to
the service ``lambda``, and the account is the credential's; a request that fails is answered 403 with the code a
REST-JSON AWS API gives (``MissingAuthenticationTokenException``, ``UnrecognizedClientException``,
``InvalidSignatureException``; docs/behaviour.md). A mapping belongs to the account and region that created it:
another caller's Get, Update or Delete of its UUID is ``ResourceNotFoundException`` (``registry``), and it uses
only its account's functions; GetFunction and ListFunctions show a caller its own account's functions
(``catalog``). Errors:
``sqsemu.eventsource.errors``; a body that is not a JSON object is InvalidParameterValueException (400); any other
path under ``/2015-03-31/`` is 404 ``UnknownOperationException``. In durable mode a change is answered once written
(``registry``). A browser's cross-site request is refused (403 ``AccessDeniedException``) by the same rule as SQS
calls (``--cors-origins``).

With ``--auth iam`` each operation is authorized, once the signature is verified and before it runs, as the IAM
action ``lambda:<Operation>`` against the signing identity's identity-based policies (``sqsemu.security.iam``,
:meth:`~sqsemu.security.iam.AccessControl.decide_as`), on the resources the IAM page "Actions, resources, and
condition keys for AWS Lambda" gives: ``arn:aws:lambda:<region>:<account>:event-source-mapping:<UUID>`` for Get,
Update and Delete, ``*`` for Create and List (actions with no resource type), with the condition key
``lambda:FunctionArn`` (the function the request names, in the account and region it names, else the caller's;
else the mapping's); GetFunction on ``arn:aws:lambda:<region>:<account>:function:<name>`` (the function it names),
ListFunctions on ``*``; TagResource, UntagResource and ListTags on the mapping's ARN. A CreateEventSourceMapping
with ``Tags`` is also authorized as ``lambda:TagResource`` on the new mapping's ARN ("Using tags on event source
mappings": "lambda:TagResource–Grant this permission to anyone who needs to call TagResource or perform a tag on
create"). The tag condition keys: ``aws:RequestTag/<key>`` and ``aws:TagKeys`` from the tags a Create or TagResource
gives (``aws:TagKeys`` from the keys an UntagResource removes), ``aws:ResourceTag/<key>`` from an existing
mapping's tags. A function of another account is a resource of that account: with no resource-based policy
(sqsemu models none) its GetFunction is denied whatever the caller's policies allow. A denial is 403
``AccessDeniedException`` "User: <principal ARN> is not authorized to perform: lambda:<Operation> on resource:
<resource> because no identity-based policy allows the lambda:<Operation> action" (or "... because no
resource-based policy allows ...", or "with an explicit deny in an identity-based policy"), logged and counted as an
SQS call's denial is.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from sqsemu.engine.errors import SQSError
from sqsemu.engine.queue import Namespace
from sqsemu.eventsource import LAMBDA_TAGS_PREFIX
from sqsemu.eventsource.catalog import get_function, list_functions
from sqsemu.eventsource.errors import InvalidParameterValue, LambdaError
from sqsemu.eventsource.mapping import function_ref
from sqsemu.eventsource.registry import EventSources
from sqsemu.observability.accesslog import ACCESS_LOGGER, logfmt
from sqsemu.protocol.urls import caller_namespace, credential_from_authorization
from sqsemu.security.crosssite import CrossSitePolicy
from sqsemu.security.errors import CrossSiteRefused

if TYPE_CHECKING:
    from sqsemu.security.evaluate import Decision
    from sqsemu.security.iam import AccessControl
    from sqsemu.security.sigv4 import SigV4Verifier

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

logger = logging.getLogger("sqsemu.eventsource")
_refusals = logging.getLogger(ACCESS_LOGGER)  # signature refusals, as the SQS path logs them (docs/security.md)

MAPPINGS_PATH = "/2015-03-31/event-source-mappings"
FUNCTIONS_PATH = "/2015-03-31/functions"
TAGS_PATH = LAMBDA_TAGS_PREFIX.rstrip("/")
MAX_BODY_BYTES = 6 * 1024 * 1024


class UnknownOperation(LambdaError):
    """No Lambda operation sqsemu serves has this method and path."""

    code = "UnknownOperationException"
    status = 404
    fault = "User"


class AccessDenied(LambdaError):
    """A browser's cross-site request (``sqsemu.security.crosssite``), refused as the SQS endpoint refuses it, or a
    call ``--auth iam`` denies (:func:`denial_message`)."""

    code = "AccessDeniedException"
    status = 403
    fault = "User"


class NotAuthenticated(LambdaError):
    """A request ``--auth sigv4`` refuses: 403 with the code of the SigV4 failure (see :data:`AUTH_CODES`)."""

    status = 403
    fault = "User"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


AUTH_CODES = {
    "MissingAuthenticationToken": "MissingAuthenticationTokenException",
    "InvalidClientTokenId": "UnrecognizedClientException",
    "SignatureDoesNotMatch": "InvalidSignatureException",
    "IncompleteSignature": "IncompleteSignatureException",
    "RequestExpired": "InvalidSignatureException",
    "ExpiredToken": "ExpiredTokenException",
}
"""The SigV4 verifier's error shapes (SQS's names) -> the codes of a REST-JSON AWS API such as Lambda."""


def _operation(scope: Scope) -> str:
    """The Lambda operation a request names by its method and path (``lambda:ListEventSourceMappings``), or ``-``:
    what a signature refusal's log line names as its action."""
    method = scope.get("method")
    path = str(scope.get("path", "")).rstrip("/")
    if path == MAPPINGS_PATH:
        name = {"POST": "CreateEventSourceMapping", "GET": "ListEventSourceMappings"}.get(str(method))
    elif path.startswith(MAPPINGS_PATH + "/"):
        name = {"GET": "GetEventSourceMapping", "PUT": "UpdateEventSourceMapping"}.get(str(method))
        name = name or ("DeleteEventSourceMapping" if method == "DELETE" else None)
    elif method == "GET" and path == FUNCTIONS_PATH:
        name = "ListFunctions"
    elif method == "GET" and path.startswith(FUNCTIONS_PATH + "/") and "/" not in path[len(FUNCTIONS_PATH) + 1 :]:
        name = "GetFunction"
    elif path.startswith(TAGS_PATH + "/"):
        name = {"POST": "TagResource", "DELETE": "UntagResource", "GET": "ListTags"}.get(str(method))
    else:
        name = None
    return f"lambda:{name}" if name else "-"


def denial_message(decision: Decision) -> str:
    """Lambda's AccessDeniedException message for a denied ``decision`` (module docstring): the IAM form of "User:
    <arn> is not authorized to perform: <action> on resource: <resource>" with the reason, the action spelled as
    the policy names it (``lambda:CreateEventSourceMapping``, not in lower case as SQS writes its own)."""
    head = (
        f"User: {decision.principal} is not authorized to perform: {decision.action} on resource: {decision.resource}"
    )
    if decision.reason == "explicit deny":
        return f"{head} with an explicit deny in an identity-based policy"
    kind = "resource-based" if decision.reason == "no resource-based policy allows" else "identity-based"
    return f"{head} because no {kind} policy allows the {decision.action} action"


class LambdaAPI:
    """The ASGI app of the Lambda REST API over one :class:`EventSources`; a browser's request (``Origin`` or
    ``Sec-Fetch-Site``) goes through the server's cross-site rule first (``cross_site``, None: none)."""

    def __init__(
        self,
        sources: EventSources,
        cross_site: CrossSitePolicy | None = None,
        verifier: SigV4Verifier | None = None,
        access: AccessControl | None = None,
    ) -> None:
        self.sources = sources
        self.cross_site = cross_site
        self.verifier = verifier
        self.access = access

    def _caller(self, scope: Scope, headers: dict[str, str], body: bytes) -> tuple[Namespace, str]:
        """The caller's account and region, and the access key id that signed: verified with ``--auth sigv4`` or
        ``iam`` (service ``lambda``), else read from the credential. Raises :class:`NotAuthenticated`."""
        if self.verifier is None:
            credential = credential_from_authorization(headers.get("authorization", ""))
            return caller_namespace(credential, self.sources.config), ""
        try:
            return self.verifier.verify_key(scope, body, service="lambda")
        except SQSError as exc:
            code = AUTH_CODES.get(type(exc).shape, "AccessDeniedException")
            key = getattr(exc, "access_key_id", None)
            if key is not None and _refusals.isEnabledFor(logging.INFO):  # as the SQS path logs its refusals
                fields = {"refused": code, "access_key_id": key, "action": _operation(scope), "protocol": "rest-json"}
                _refusals.info(logfmt(fields))
            raise NotAuthenticated(code, exc.message) from None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request_id = str(uuid.uuid4())
        cors: list[tuple[bytes, bytes]] = []
        try:
            if self.cross_site is not None and ("origin" in headers or "sec-fetch-site" in headers):
                origin, site = headers.get("origin"), headers.get("sec-fetch-site")
                try:
                    cors = self.cross_site.decide(
                        None if origin is None else origin.encode("latin-1"),
                        None if site is None else site.encode("latin-1"),
                        scope.get("scheme", "http"),
                        headers.get("host"),
                    )
                except CrossSiteRefused as refused:
                    raise AccessDenied(refused.message) from None
            body = await _read(receive)
            caller, key = self._caller(scope, headers, body)
            status, answer = self._dispatch(scope, body, caller, Authorizer(self.access, key, scope, request_id))
        except LambdaError as exc:
            status, answer = exc.status, exc.body()
            extra = [(b"x-amzn-errortype", exc.code.encode())]
        except Exception:
            logger.exception("Lambda API request failed")
            status, answer = 500, {"Type": "Service", "Message": "An internal error occurred."}
            extra = [(b"x-amzn-errortype", b"ServiceException")]
        else:
            extra = []
        payload, framing = b"", []  # 204 (TagResource, UntagResource): no content, no Content-Length (RFC 9110 8.6)
        if status != 204:
            payload = json.dumps(answer).encode()
            framing = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        response_headers = [*framing, (b"x-amzn-requestid", request_id.encode()), *extra, *cors]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": payload})

    def _dispatch(
        self, scope: Scope, body: bytes, caller: Namespace, authorize: Authorizer
    ) -> tuple[int, dict[str, Any]]:
        method = scope["method"]
        path: str = scope["path"].rstrip("/")
        sources = self.sources
        if path == MAPPINGS_PATH:
            if method == "POST":
                params = _json(body)
                function = _named_function(params, caller)
                asked = _tag_keys(params.get("Tags"))
                authorize("CreateEventSourceMapping", "*", caller, function, asked)
                mapping_id = str(uuid.uuid4())
                if params.get("Tags"):  # a tag on create needs lambda:TagResource too, on the new mapping's ARN
                    arn = f"arn:aws:lambda:{caller.region}:{caller.account_id}:event-source-mapping:{mapping_id}"
                    authorize("TagResource", arn, caller, function, asked)
                return 202, sources.create(params, caller, mapping_id)
            if method == "GET":
                authorize("ListEventSourceMappings", "*", caller, None)
                query = _query(scope)
                max_items: Any = query.get("MaxItems")
                if max_items is not None:
                    try:
                        max_items = int(max_items)
                    except ValueError:
                        raise InvalidParameterValue("MaxItems must be an integer.") from None
                return 200, sources.list_mappings(
                    caller, query.get("EventSourceArn"), query.get("FunctionName"), query.get("Marker"), max_items
                )
        elif path.startswith(MAPPINGS_PATH + "/") and "/" not in path[len(MAPPINGS_PATH) + 1 :]:
            mapping_id = unquote(path[len(MAPPINGS_PATH) + 1 :])
            resource = f"arn:aws:lambda:{caller.region}:{caller.account_id}:event-source-mapping:{mapping_id}"
            mapping = sources.mappings.get(mapping_id)
            current, held = None, None
            if mapping is not None and (mapping.account, mapping.region) == (caller.account_id, caller.region):
                current, held = mapping.function_arn, _resource_tags(mapping.tags)
            if method == "GET":
                authorize("GetEventSourceMapping", resource, caller, current, held)
                return 200, sources.get(mapping_id, caller)
            if method == "PUT":
                params = _json(body)
                function = _named_function(params, caller) or current
                authorize("UpdateEventSourceMapping", resource, caller, function, held)
                return 202, sources.update(mapping_id, params, caller)
            if method == "DELETE":
                authorize("DeleteEventSourceMapping", resource, caller, current, held)
                return 202, sources.delete(mapping_id, caller)
        elif path.startswith(TAGS_PATH + "/") and method in ("POST", "DELETE", "GET"):
            return self._tagging(scope, method, path[len(TAGS_PATH) + 1 :], body, caller, authorize)
        elif method == "GET" and path == FUNCTIONS_PATH:
            authorize("ListFunctions", "*", caller, None)
            return 200, list_functions(sources.functions, caller, _query(scope))
        elif method == "GET" and path.startswith(FUNCTIONS_PATH + "/") and "/" not in path[len(FUNCTIONS_PATH) + 1 :]:
            ref = function_ref(unquote(path[len(FUNCTIONS_PATH) + 1 :]))
            query = _query(scope)
            qualifier = query.get("Qualifier")
            authorize("GetFunction", ref.arn(caller.region, caller.account_id), caller, None)
            return 200, get_function(sources.functions, ref, qualifier, caller)
        raise UnknownOperation(f"No Lambda operation is served at {method} {scope['path']}.")

    def _tagging(
        self, scope: Scope, method: str, resource: str, body: bytes, caller: Namespace, authorize: Authorizer
    ) -> tuple[int, dict[str, Any]]:
        """TagResource (POST), UntagResource (DELETE) or ListTags (GET) of the resource ARN ``resource``, authorized
        on that ARN first (with the mapping's function and tags when the caller owns such a mapping)."""
        sources = self.sources
        mapping = None
        target = resource.rsplit(":", 1)[-1] if ":event-source-mapping:" in resource else None
        if target is not None:
            mapping = sources.mappings.get(target.lower())
        function, held = None, None
        if mapping is not None and mapping.arn == resource and mapping.account == caller.account_id:
            function, held = mapping.function_arn, _resource_tags(mapping.tags)
        if method == "POST":
            params = _json(body)
            asked = _tag_keys(params.get("Tags"))
            authorize("TagResource", resource, caller, function, {**(held or {}), **(asked or {})})
            sources.tag(resource, params.get("Tags"), caller)
            return 204, {}
        if method == "DELETE":
            keys = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("tagKeys", [])
            removed = {"aws:TagKeys": tuple(keys)} if keys else {}
            authorize("UntagResource", resource, caller, function, {**(held or {}), **removed})
            sources.untag(resource, keys, caller)
            return 204, {}
        authorize("ListTags", resource, caller, function, held)
        return 200, sources.list_tags(resource, caller)


class Authorizer:
    """One request's ``--auth iam`` check (nothing without ``--auth iam``, or for a key with no identity)."""

    __slots__ = ("access", "key", "scope", "request_id")

    def __init__(self, access: AccessControl | None, key: str, scope: Scope, request_id: str) -> None:
        self.access = access
        self.key = key
        self.scope = scope
        self.request_id = request_id

    def __call__(
        self,
        operation: str,
        resource: str,
        caller: Namespace,
        function: str | None,
        tags: Mapping[str, str | tuple[str, ...]] | None = None,
    ) -> None:
        """Allow ``lambda:<operation>`` on ``resource`` (``function``: the ``lambda:FunctionArn`` condition key's
        value, None: absent; ``tags``: the tag condition keys, ``aws:RequestTag/<key>``, ``aws:TagKeys``,
        ``aws:ResourceTag/<key>``, with their values), or raise :class:`AccessDenied` (logged and counted)."""
        access = self.access
        if access is None:
            return
        identity = access.identity(self.key)
        if identity is None:
            return
        # aws:userid as the caller's SQS calls see it (AccessControl._fixed_context): a key of every request context
        context: dict[str, str | tuple[str, ...]] = {"aws:userid": access.user_id(identity)}
        if function is not None:
            context["lambda:FunctionArn"] = function
        context.update(tags or {})
        decision = access.decide_as(
            identity.principal, identity.policies, f"lambda:{operation}", resource, caller.region, context, self.scope
        )
        if not decision.allowed:
            access.denied_call(self.key, decision, self.request_id)  # names the caller as AWS does (denial_arn)
            raise AccessDenied(denial_message(decision))


def _named_function(params: dict[str, Any], caller: Namespace) -> str | None:
    """The ARN of the function a request's ``FunctionName`` names (in the account and region it names, else the
    caller's, as the mapping's ``FunctionArn`` is made; without its qualifier), None when it names none or is not a
    valid name (the operation then refuses it)."""
    value = params.get("FunctionName")
    if value is None:
        return None
    try:
        ref = function_ref(value)
    except InvalidParameterValue:
        return None
    return ref.arn(caller.region, caller.account_id)


def _tag_keys(tags: Any) -> dict[str, str | tuple[str, ...]] | None:
    """The condition keys a request's ``Tags`` set: ``aws:RequestTag/<key>`` (each value) and ``aws:TagKeys`` (the
    keys, in the request's order); None without tags (or with a value the operation then refuses)."""
    if not isinstance(tags, dict) or not tags or not all(isinstance(v, str) for v in tags.values()):
        return None
    found: dict[str, str | tuple[str, ...]] = {"aws:TagKeys": tuple(str(k) for k in tags)}
    for key, value in tags.items():
        found.setdefault(f"aws:RequestTag/{key}", value)
    return found


def _resource_tags(tags: Mapping[str, str]) -> dict[str, str | tuple[str, ...]]:
    """``aws:ResourceTag/<key>`` for each of a mapping's tags."""
    return {f"aws:ResourceTag/{key}": value for key, value in tags.items()}


def _query(scope: Scope) -> dict[str, str]:
    """The request's query parameters (the last of each name)."""
    return {k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode("latin-1")).items()}


async def _read(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise InvalidParameterValue("The request body is too large.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _json(body: bytes) -> dict[str, Any]:
    if not body.strip():
        return {}
    try:
        document = json.loads(body)
    except ValueError:
        raise InvalidParameterValue("The request body is not valid JSON.") from None
    if not isinstance(document, dict):
        raise InvalidParameterValue("The request body must be a JSON object.")
    return document
