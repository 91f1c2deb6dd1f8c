"""The console's routes under ``/_sqsemu/ui``: pages, form posts, live updates, login, static files.

Pages (``GET``; each also answers ``?live=1`` with ``{"<part>": "<html>", ...}``, the page's changing parts
rendered by the same templates, which ``static/console.js`` swaps in once a second):

- ``/_sqsemu/ui/`` the queues of every account and region (``?q=`` filters by name); parts ``queues``;
- ``/_sqsemu/ui/queues/{account}/{region}/{name}`` one queue (``?page=`` pages its messages); parts ``counts``,
  ``messages``, ``tasks``; ``.../messages/{message_id}`` one message, whole;
- ``/_sqsemu/ui/server`` the clock, the fault rules and the reset; parts ``clock``, ``faults``;
- ``/_sqsemu/ui/topics`` and ``/_sqsemu/ui/topics/{account}/{region}/{name}``: SNS (:mod:`sqsemu.console.topics`);
- every live answer also carries ``header-clock``.

Form posts (``application/x-www-form-urlencoded``; :mod:`sqsemu.console.actions` runs them through the operations
table or the admin functions): ``POST /_sqsemu/ui/queues`` (create), ``POST .../queues/{account}/{region}/{name}/
{send|attributes|tag|untag|purge|delete|redrive|cancel-redrive}``, ``POST /_sqsemu/ui/server/{advance|add-fault|
delete-fault|reset}``. Success answers 303 to the page, with a note carried by a short-lived cookie
(``sqsemu_flash``); an error answers the page again with the error (``Code: message``), the HTTP status the SQS
action would have had (or the admin route's), and the submitted form filled in. The queue page's "Try the call"
(``.../try-call``, ``--auth iam``; :mod:`sqsemu.console.access`) answers 303 to the queue page with the call in
its query (``?try_as=&try_call=&try_context=``) and the fragment ``#try-result``: that page decides the call and
shows the result right below the button that asked, scrolled into view, the form filled in with what was tried;
a reload shows it again without resending anything. A page answered to a post names its own URL
(``data-live-url``) for the live updates, since the post's URL answers no ``GET``.

``GET|POST /_sqsemu/ui/login`` and ``POST /_sqsemu/ui/logout``: the session cookie when ``--admin-token`` is set
(:mod:`sqsemu.security.console`: a session lasts 12 hours; logout ends it on the server). Every page carries a
Content-Security-Policy that allows only the server's own scripts, styles and connections (no inline script, no CDN)
and forbids framing.

``GET /_sqsemu/ui/static/{name}``: the stylesheet, the script and the icon. They and the templates are read into
memory when the server is made (:mod:`sqsemu.console.assets`): an install that moves the package folder while the
server runs leaves its console as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from sqsemu.admin.common import AdminError
from sqsemu.admin.faults import injector_for
from sqsemu.admin.health import clock_mode, package_version
from sqsemu.admin.peek import STATE_NAMES, message_view, peek_queue, tenants_of
from sqsemu.clock import Clock
from sqsemu.config import ACCOUNT_RE, Config
from sqsemu.console import actions
from sqsemu.console.access import TRY_ACTIONS, TRY_CONTEXT_MAX_CHARS, TRY_FIELDS, refused_form, tried_call
from sqsemu.console.actions import EDITABLE_ATTRIBUTES, Form, SQSCalls
from sqsemu.console.assets import Assets
from sqsemu.console.views import (
    PREFIX,
    fmt_duration,
    fmt_time,
    link_to,
    link_to_arn,
    message_row,
    pages,
    queue_href,
    queue_rows,
    task_rows,
)
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.errors import QueueDoesNotExist, SQSError
from sqsemu.protocol.errors import error_info
from sqsemu.protocol.operations import OPERATIONS
from sqsemu.protocol.urls import queue_url, url_base
from sqsemu.security.console import ConsoleSession, safe_next
from sqsemu.security.region import valid_region

if TYPE_CHECKING:
    import jinja2
    from starlette.templating import Jinja2Templates

    from sqsemu.observability.history import QueueHistory
    from sqsemu.sns.api import SNS

FLASH_COOKIE = "sqsemu_flash"
MAX_TASKS_SHOWN = 10
ADVANCE_STEPS = ((1, "+1 s"), (30, "+30 s"), (300, "+5 min"), (3600, "+1 h"))
"""The clock buttons of the server page: (seconds, label)."""
COMMON_ERROR_CODES = (
    "ThrottlingException",
    "ServiceUnavailable",
    "InternalError",
    "RequestThrottled",
    "KmsThrottled",
    "AccessDenied",
    "QueueDoesNotExist",
    "OverLimit",
)
"""Suggestions for the fault form's error code (any code is accepted)."""
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
STATE_LABELS = {"visible": "Visible", "in_flight": "In flight", "delayed": "Delayed"}
INJECTED_LABELS = {
    "duplicate_pending": "Realism mode: deleting this delivery leaves a copy that is delivered again",
    "duplicate": "Realism mode: this is the copy a deleted delivery left behind (a duplicate delivery)",
    "reordered": "Realism mode: its latest delivery was taken out of send order",
}
"""The realism labels a message can carry (``peek.message_view``'s ``injected``), as the console explains them."""


class NotFound(Exception):
    """A console page about something that does not exist (a queue, a message): answered 404 with a page."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def describe(error: Exception) -> tuple[str, int]:
    """``(text, HTTP status)`` of an error to show on a page: an SQS error as ``Code: message`` with its status,
    an admin error's message with its status."""
    if isinstance(error, SQSError):
        info = error_info(error)
        return f"{error.shape}: {error.message}", info.status
    if isinstance(error, AdminError):
        return error.message, error.status
    return str(error), 400


def _environment(templates: Mapping[str, str]) -> jinja2.Environment:
    import jinja2  # imported with the first page, not at start-up (it is a fifth of the server's imports)

    env = jinja2.Environment(
        loader=jinja2.DictLoader(dict(templates)),  # read at start (sqsemu.console.assets), never from disk again
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["duration"] = fmt_duration
    env.filters["when"] = fmt_time
    return env


class Console:
    """The console of one server: its pages and actions over ``broker`` and ``clock`` (module docstring), its
    templates and static files served from ``assets`` (read at start, :mod:`sqsemu.console.assets`)."""

    def __init__(
        self,
        config: Config,
        broker: Broker,
        clock: Clock,
        history: QueueHistory | None = None,
        authorize: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
        *,
        assets: Assets,
        session: ConsoleSession | None = None,
    ) -> None:
        if config.admin_token and session is None:
            raise ValueError("the console of a server with an admin token needs its gate's sessions")
        self.config = config
        self.assets = assets
        self.authorize = authorize  # --auth iam (sqsemu.security.iam): the queue page's "try a call" form
        self.history = history
        self.broker = broker
        self.clock = clock
        self.injector = injector_for(broker)
        self._templates: Jinja2Templates | None = None
        self.session = session if config.admin_token else None  # opened at login, ended at logout or after 12 h
        self.version = package_version()
        self.default_ns = Namespace(config.account_id, config.region)

    # ------------------------------------------------------------------------------------------------ plumbing

    @property
    def templates(self) -> Jinja2Templates:
        """The page templates, loaded with the first page shown."""
        if self._templates is None:
            from starlette.templating import Jinja2Templates

            self._templates = Jinja2Templates(env=_environment(self.assets.templates))
        return self._templates

    def base(self, request: Request) -> str:
        """``scheme://host`` of queue URLs, as the SQS layer builds them."""
        return url_base(self.config, request.url.scheme, request.headers.get("host"))

    def common(self, request: Request) -> dict[str, Any]:
        """What every page and part needs."""
        return {
            "request": request,
            "prefix": PREFIX,
            "version": self.version,
            "clock_mode": clock_mode(self.clock),
            "now": fmt_time(self.clock.now_ms()),
            "logged_in": self.session is not None,
            "base": self.base(request),
        }

    def page(
        self,
        request: Request,
        template: str,
        context: dict[str, Any],
        status: int = 200,
        error: str | None = None,
    ) -> Response:
        """A whole page; shows (and clears) the note left by the last action."""
        flash = request.cookies.get(FLASH_COOKIE)
        note = unquote(flash) if flash else None
        # answered to a post (an error, a refused try): the live updates ask the page's own URL (``page_url``)
        live_url = context.get("page_url") if request.method == "POST" else None
        full = {**self.common(request), "note": note, "error": error, "live": True, "live_url": live_url, **context}
        response = self.templates.TemplateResponse(request, template, full, status_code=status, headers=PAGE_HEADERS)
        if flash is not None:
            response.delete_cookie(FLASH_COOKIE, path=PREFIX)
        return response

    def parts(self, request: Request, names: tuple[str, ...], context: dict[str, Any]) -> JSONResponse:
        """The live answer: each named part rendered by its template (``parts/<name>.html``)."""
        full = {**self.common(request), **context}
        rendered = {name: self.templates.get_template(f"parts/{name}.html").render(full) for name in names}
        rendered["header-clock"] = self.templates.get_template("parts/header-clock.html").render(full)
        return JSONResponse(rendered, headers={"Cache-Control": "no-store"})

    def missing(self, request: Request, message: str, live: bool) -> Response:
        """The 404 page (or live answer) for something that does not exist."""
        if live:
            return JSONResponse({"error": message}, status_code=404, headers={"Cache-Control": "no-store"})
        return self.page(request, "missing.html", {"message": message, "nav": "queues", "live": False}, 404)

    @staticmethod
    def done(location: str, note: str) -> Response:
        """303 to ``location`` carrying ``note`` for the next page."""
        response = RedirectResponse(location, status_code=303)
        response.set_cookie(FLASH_COOKIE, quote(note), path=PREFIX, httponly=True, samesite="strict")
        return response

    @staticmethod
    async def form(request: Request) -> Form:
        """The posted form (at most ``FORM_MAX_BYTES``; more is an ``AdminError``, 413)."""
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > actions.FORM_MAX_BYTES:
                raise AdminError(f"the form is larger than {actions.FORM_MAX_BYTES} bytes", 413)
            chunks.append(chunk)
        return Form.parse(b"".join(chunks))

    def queue_ref(self, request: Request) -> tuple[Namespace, str]:
        """The queue a console URL names; ``NotFound`` when the account or region cannot be one."""
        account = request.path_params["account"]
        region = request.path_params["region"]
        name = request.path_params["name"]
        if not ACCOUNT_RE.match(account) or not valid_region(region):
            raise NotFound(f"There is no queue {name!r} in account {account!r}, region {region!r}.")
        return Namespace(account, region), name

    def find_queue(self, ns: Namespace, name: str) -> Queue:
        """The queue, or ``NotFound``."""
        try:
            return self.broker.get_queue(ns, name)
        except QueueDoesNotExist:
            raise NotFound(
                f"There is no queue {name!r} in account {ns.account_id}, region {ns.region}: it was deleted, "
                "or never created."
            ) from None

    # ------------------------------------------------------------------------------------------------ queues page

    async def queues_page(
        self, request: Request, forms: dict[str, Form] | None = None, status: int = 200, error: str | None = None
    ) -> Response:
        """The list of queues (``?q=`` filters by name)."""
        q = request.query_params.get("q", "")
        context: dict[str, Any] = {"rows": queue_rows(self.broker, self.base(request), q, self.clock.now_ms()), "q": q}
        if request.query_params.get("live"):
            return self.parts(request, ("queues",), context)
        context.update(
            nav="queues",
            forms=forms or {},
            empty=Form([]),
            default_account=self.default_ns.account_id,
            default_region=self.default_ns.region,
            page_url=PREFIX + "/",
        )
        return self.page(request, "queues.html", context, status, error)

    async def create_queue(self, request: Request) -> Response:
        """POST: CreateQueue, then the new queue's page."""
        form = await self.form(request)
        try:
            ns, name, note = actions.create_queue(self.broker, self.base(request), form, self.default_ns)
        except (SQSError, AdminError) as exc:
            text, status = describe(exc)
            return await self.queues_page(request, {"create": form}, status, text)
        return self.done(queue_href(ns.account_id, ns.region, name), note)

    # ------------------------------------------------------------------------------------------------ queue page

    def queue_live(self, request: Request, queue: Queue) -> dict[str, Any]:
        """The changing parts of a queue page: counts, the page of messages, the move tasks."""
        ns, name = queue.namespace, queue.name
        base = self.base(request)
        calls = SQSCalls(self.broker, ns, name, base)
        try:
            page = int(request.query_params.get("page", "1"))
        except ValueError:
            page = 1
        paging = pages(queue.message_count(), page)
        peeked = peek_queue(self.broker, self.clock, ns, name, base, paging["offset"], paging["size"])
        sources = self.broker.list_dead_letter_source_queues(queue)
        tasks = actions.move_tasks(calls, queue, MAX_TASKS_SHOWN)
        return {
            "queue": queue,
            "view": peeked["queue"],
            "href": queue_href(ns.account_id, ns.region, name),
            "messages": [message_row(m) for m in peeked["messages"]],
            "paging": paging,
            "fifo": queue.fifo,
            "state_labels": STATE_LABELS,
            "injected_labels": INJECTED_LABELS,
            "sources": [link_to(source) for source in sources],
            "is_dlq": bool(sources) or bool(tasks),
            "tasks": task_rows(tasks, self.broker),
            "running_task": next((t for t in tasks if t["Status"] == "RUNNING"), None),
            **self.queue_charts(queue),
        }

    def queue_charts(self, queue: Queue) -> dict[str, Any]:
        """The queue's charts (``sqsemu.console.charts``) from the history sampler, when there is one."""
        if self.history is None:
            return {"charts": []}
        from sqsemu.console.charts import charts

        series = self.history.series(queue, self.clock.now_ms())
        return {
            "charts": charts(series),
            "history_interval": series["interval_seconds"],
            "history_rates": series["rates"],
        }

    async def queue_page(
        self,
        request: Request,
        forms: dict[str, Form] | None = None,
        status: int = 200,
        error: str | None = None,
        tried: dict[str, Any] | None = None,
    ) -> Response:
        """One queue: counts, messages, send form, attributes, tags, dead-letter settings, redrive, purge, delete;
        with ``?try_call=`` (``--auth iam``), the access card's "Try the call" decided and shown below its button
        (:mod:`sqsemu.console.access`); ``tried`` is a result decided already (a form refused in place)."""
        live = bool(request.query_params.get("live"))
        try:
            ns, name = self.queue_ref(request)
            queue = self.find_queue(ns, name)
        except NotFound as exc:
            return self.missing(request, exc.message, live)
        context = self.queue_live(request, queue)
        if live:
            return self.parts(request, ("counts", "charts", "messages", "tasks"), context)
        forms = dict(forms or {})
        if tried is None and self.authorize is not None and "try_call" in request.query_params:
            fields = {field: request.query_params.get(param, "") for field, param in TRY_FIELDS}
            forms["try-call"] = Form(list(fields.items()))
            try:
                tried = tried_call(self.authorize, fields, queue.arn)
            except AdminError as exc:
                tried = refused_form(describe(exc)[0])
        calls = SQSCalls(self.broker, ns, name, self.base(request))
        attributes = actions.queue_attributes(calls)
        candidates = [q for q in self.broker.list_queues(ns, None) if q.fifo == queue.fifo and q is not queue]
        context.update(
            nav="queues",
            forms=forms,
            empty=Form([]),
            url=queue_url(self.base(request), queue),
            attributes=attributes,
            editable=EDITABLE_ATTRIBUTES,
            tags=actions.queue_tags(calls),
            dlq=link_to_arn(self.broker, queue.redrive[0]) if queue.redrive else None,
            redrive=queue.redrive,
            dlq_candidates=[(q.arn, q.name) for q in candidates],
            mappings=self.mappings_of(queue),
            access=self.access_view(attributes.get("Policy")),
            tried=tried,
            page_url=context["href"],
        )
        return self.page(request, "queue.html", context, status, error)

    def access_view(self, policy: str | None) -> dict[str, Any] | None:
        """What the queue page's access card shows under ``--auth iam``: the queue policy (indented) and the
        declared keys to try a call as; None without ``--auth iam``."""
        if self.authorize is None:
            return None
        shown = policy
        if policy:
            try:
                shown = json.dumps(json.loads(policy), indent=2)
            except ValueError:
                pass
        keys = [(c.access_key_id, c.principal or f"root of {c.account_for(self.config.account_id)}")
                for c in self.config.credentials]  # fmt: skip
        return {"policy": shown, "keys": keys, "actions": TRY_ACTIONS}

    def mappings_of(self, queue: Queue) -> list[dict[str, Any]]:
        """The event source mappings reading ``queue`` (docs/lambda.md), their last invocations' times formatted."""
        from sqsemu.eventsource.registry import event_sources_for

        sources = event_sources_for(self.broker)
        if sources is None:
            return []
        rows = sources.queue_view(queue.arn)
        for row in rows:
            for invocation in row["recent"]:
                invocation["when"] = fmt_time(invocation["at_ms"])
        return rows

    async def queue_action(self, request: Request) -> Response:
        """POST ``.../{action}``: one of the queue's forms, run through the operations table."""
        try:
            ns, name = self.queue_ref(request)
            queue = self.find_queue(ns, name)
        except NotFound as exc:
            return self.missing(request, exc.message, False)
        action = request.path_params["action"]
        form = await self.form(request)
        calls = SQSCalls(self.broker, ns, name, self.base(request))
        href = queue_href(ns.account_id, ns.region, name)
        if action == "try-call" and self.authorize is not None:
            # Post/Redirect/Get: the page shows the call decided, from its query; a reload resends nothing
            fields = [(param, form.get(field)) for field, param in TRY_FIELDS]
            if len(form.get("context")) > TRY_CONTEXT_MAX_CHARS:  # it travels in the URL: refused here, in place
                text = f"The context keys are longer than {TRY_CONTEXT_MAX_CHARS} characters."
                return await self.queue_page(request, {action: form}, 400, tried=refused_form(text))
            return RedirectResponse(f"{href}?{urlencode(fields)}#try-result", status_code=303)
        try:
            if action == "send":
                note = actions.send_message(calls, form, queue.fifo)
            elif action == "attributes":
                note = actions.set_attributes(calls, form, queue)
            elif action == "tag":
                note = actions.tag_queue(calls, form)
            elif action == "untag":
                note = actions.untag_queue(calls, form)
            elif action == "purge":
                note = actions.purge_queue(calls)
            elif action == "redrive":
                note = actions.start_redrive(calls, form, queue)
            elif action == "cancel-redrive":
                note = actions.cancel_redrive(calls, form)
            elif action == "delete":
                return self.done(PREFIX + "/", actions.delete_queue(calls))
            else:
                return self.missing(request, f"The console has no queue action {action!r}.", False)
        except (SQSError, AdminError) as exc:
            text, status = describe(exc)
            return await self.queue_page(request, {action: form}, status, text)
        return self.done(href, note)

    async def message_page(self, request: Request) -> Response:
        """One message, whole (peeked: nothing changes)."""
        try:
            ns, name = self.queue_ref(request)
            queue = self.find_queue(ns, name)
            message = queue.messages.get(request.path_params["message_id"])
            if message is None or message.state not in STATE_NAMES:
                raise NotFound(f"Queue {name} holds no message {request.path_params['message_id']!r} now.")
        except NotFound as exc:
            return self.missing(request, exc.message, False)
        realism = queue.realism
        labels = realism.labels(message) if realism is not None else None
        now = self.clock.now_ms()
        row = message_row(message_view(message, now, labels, tenants_of(queue, now)), None)
        context = {
            "nav": "queues",
            "queue": queue,
            "fifo": queue.fifo,
            "href": queue_href(ns.account_id, ns.region, name),
            "m": row,
            "state_labels": STATE_LABELS,
            "injected_labels": INJECTED_LABELS,
            "system_attributes": sorted(row["attributes"].items()),
            "live": False,
        }
        return self.page(request, "message.html", context)

    # ------------------------------------------------------------------------------------------------ server page

    async def server_page(
        self, request: Request, forms: dict[str, Form] | None = None, status: int = 200, error: str | None = None
    ) -> Response:
        """The clock, the fault rules and the reset."""
        context: dict[str, Any] = {
            "faults": [rule.to_json() for rule in self.injector.rules],
            "steps": ADVANCE_STEPS,
            "now_ms": self.clock.now_ms(),
        }
        if request.query_params.get("live"):
            return self.parts(request, ("clock", "faults"), context)
        accounts = sorted({q.namespace.account_id for q in self.broker.all_queues()})
        context.update(
            nav="server",
            forms=forms or {},
            empty=Form([]),
            config=self.config,
            accounts=accounts,
            actions_list=sorted(OPERATIONS),
            error_codes=COMMON_ERROR_CODES,
            page_url=PREFIX + "/server",
        )
        return self.page(request, "server.html", context, status, error)

    async def server_action(self, request: Request) -> Response:
        """POST ``/_sqsemu/ui/server/{action}``: the clock, fault rules and reset, through the admin functions."""
        action = request.path_params["action"]
        form = await self.form(request)
        try:
            if action == "advance":
                note = actions.advance(self.clock, form)
            elif action == "add-fault":
                note = actions.add_fault(self.injector, form)
            elif action == "delete-fault":
                note = actions.delete_fault(self.injector, form)
            elif action == "reset":
                note = actions.reset(self.broker, form)
            else:
                return self.missing(request, f"The console has no server action {action!r}.", False)
        except (SQSError, AdminError) as exc:
            text, status = describe(exc)
            return await self.server_page(request, {action: form}, status, text)
        return self.done(PREFIX + "/server", note)

    # ------------------------------------------------------------------------------------------------ login

    async def login_page(self, request: Request) -> Response:
        """The admin-token form (only with ``--admin-token``); POST checks the token and sets the cookie."""
        target = safe_next(request.query_params.get("next"))
        if self.session is None:
            return RedirectResponse(target, status_code=303)
        secure = request.url.scheme == "https"
        if request.method == "POST":
            form = await self.form(request)
            target = safe_next(form.get("next") or None)
            if self.session.token_matches(form.get("token")):
                response = RedirectResponse(target, status_code=303)
                response.headers.append("set-cookie", self.session.set_cookie_header(self.session.open(), secure))
                return response
            context = {"next": target, "nav": "", "live": False, "logged_in": False}
            return self.page(request, "login.html", context, 403, "That is not the admin token.")
        return self.page(request, "login.html", {"next": target, "nav": "", "live": False, "logged_in": False})

    async def logout(self, request: Request) -> Response:
        """End the session the request carries, on the server (its cookie no longer authenticates), and clear the
        browser's cookie; then the login form."""
        if self.session is not None:
            cookie = request.headers.get("cookie")
            self.session.revoke(cookie.encode("latin-1") if cookie is not None else None)
        response = RedirectResponse(PREFIX + "/login", status_code=303)
        response.headers.append("set-cookie", ConsoleSession.clear_cookie_header(request.url.scheme == "https"))
        return response

    async def static_file(self, request: Request) -> Response:
        """``GET|HEAD /_sqsemu/ui/static/{name}``: a static file from memory, with its content type and ``ETag``
        (``If-None-Match`` naming it: 304); ``Cache-Control: no-cache`` (the pages name each file with the
        server's version, ``?v=``); an unknown name is 404."""
        found = self.assets.static.get(request.path_params["name"])
        if found is None:
            return Response("Not Found", 404, media_type="text/plain")
        headers = {"ETag": found.etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
        wanted = request.headers.get("if-none-match")
        if wanted is not None and (wanted.strip() == "*" or found.etag in (tag.strip() for tag in wanted.split(","))):
            return Response(status_code=304, headers=headers)
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(found.body))
            return Response(b"", headers=headers, media_type=found.content_type)
        return Response(found.body, headers=headers, media_type=found.content_type)

    async def home(self, request: Request) -> Response:
        """``/_sqsemu/ui`` without its slash."""
        return RedirectResponse(PREFIX + "/", status_code=307)

    # ------------------------------------------------------------------------------------------------ routes

    def routes(self) -> list[BaseRoute]:
        """Every console route."""
        queue = PREFIX + "/queues/{account}/{region}/{name}"
        return [
            Route(PREFIX, self.home, methods=["GET"]),
            Route(PREFIX + "/", self.queues_page, methods=["GET"]),
            Route(PREFIX + "/queues", self.create_queue, methods=["POST"]),
            Route(queue, self.queue_page, methods=["GET"]),
            Route(queue + "/messages/{message_id}", self.message_page, methods=["GET"]),
            Route(queue + "/{action}", self.queue_action, methods=["POST"]),
            Route(PREFIX + "/server", self.server_page, methods=["GET"]),
            Route(PREFIX + "/server/{action}", self.server_action, methods=["POST"]),
            Route(PREFIX + "/login", self.login_page, methods=["GET", "POST"]),
            Route(PREFIX + "/logout", self.logout, methods=["POST"]),
            Route(PREFIX + "/static/{name:path}", self.static_file, methods=["GET"]),
        ]


def routes(
    config: Config,
    broker: Broker,
    clock: Clock,
    history: QueueHistory | None = None,
    authorize: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
    *,
    assets: Assets,
    session: ConsoleSession | None = None,
    sns: SNS | None = None,
) -> list[BaseRoute]:
    """The console's routes for one server (mounted by ``sqsemu.http.adminapp`` beside the admin routes); the
    queue pages chart ``history`` when given, and (``--auth iam``) show the queue policy with a form that tries a
    call against it through ``authorize`` (``sqsemu.security.iam.AccessControl.authorize``); its templates and
    static files are ``assets``, read when the server was made (:func:`sqsemu.console.assets.load_assets`). With
    an admin token, ``session`` is the admin gate's (:class:`sqsemu.security.console.ConsoleSession`): login opens
    a session in it, logout ends one; raises ``ValueError`` when it is missing then. With the server's ``sns``, the
    topic pages too (:mod:`sqsemu.console.topics`)."""
    console = Console(config, broker, clock, history, authorize, assets=assets, session=session)
    found = console.routes()
    if sns is not None:
        from sqsemu.console.topics import TopicPages

        found += TopicPages(console, sns).routes()
    return found


__all__ = ["Console", "describe", "routes"]
