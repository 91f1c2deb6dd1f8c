"""The web console (sqsemu.console) through the whole app, on a real broker with a ManualClock (no sockets).

Pages and form posts are driven with the project's ASGI driver; every action is checked on the engine's state
afterwards, and errors are checked to be the engine's own, shown on the page.
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner

import sqsemu.server
from sqsemu import cli
from sqsemu.clock import ManualClock, SystemClock
from sqsemu.config import Config
from sqsemu.console.views import fmt_duration, fmt_time, pages, pretty_body
from sqsemu.engine.broker import Broker, Namespace, Queue
from sqsemu.engine.message import MessageAttributeValue, MessageState, SendEntry
from sqsemu.http.app import create_app
from sqsemu.protocol import operations
from sqsemu.security.console import SESSION_COOKIE, safe_next
from tests.unit.app_helpers import Response, call_asgi, query_call

START_MS = 1_700_000_000_000
NS = Namespace("000000000000", "us-east-1")
UI = "/_sqsemu/ui"
TOKEN = "console-t0ken"
FORM = "application/x-www-form-urlencoded"


class Console:
    """A browser stand-in: GETs and form POSTs against the app, keeping cookies (name=value only)."""

    def __init__(self, config: Config | None = None, clock: SystemClock | None = None) -> None:
        self.clock = ManualClock(START_MS)
        self.config = config or Config(clock="manual")
        self.broker = Broker(clock or self.clock)
        self.broker.start()
        self.app = create_app(self.config, self.broker, clock or self.clock)
        self.cookies: dict[str, str] = {}

    def close(self) -> None:
        self.broker.close()

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Host": "localhost:9324", "Sec-Fetch-Site": "same-origin"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        headers.update(extra or {})
        return {k: v for k, v in headers.items() if v}

    def _keep_cookies(self, response: Response, raw: list[tuple[bytes, bytes]]) -> None:
        for name, value in raw:
            if name.lower() == b"set-cookie":
                pair = value.decode().split(";", 1)[0]
                key, _, val = pair.partition("=")
                if "max-age=0" in value.decode().lower() or not val:
                    self.cookies.pop(key, None)
                else:
                    self.cookies[key] = val

    def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Response:
        path, _, query = path.partition("?")
        raw: list[tuple[bytes, bytes]] = []

        async def app(scope: Any, receive: Any, send: Any) -> None:
            async def capture(message: Any) -> None:
                if message["type"] == "http.response.start":
                    raw.extend(message.get("headers", []))  # every Set-Cookie, not only the last
                await send(message)

            await self.app(scope, receive, capture)

        async def run() -> Response:
            return await call_asgi(app, method, path, self._headers(headers), body, query_string=query.encode())

        response = asyncio.run(run())
        self._keep_cookies(response, raw)
        return response

    def get(self, path: str, headers: dict[str, str] | None = None) -> Response:
        return self.request("GET", path, headers=headers)

    def post(
        self, path: str, fields: dict[str, Any] | list[tuple[str, str]], headers: dict[str, str] | None = None
    ) -> Response:
        body = urlencode(fields, doseq=True).encode()
        return self.request("POST", path, body, {"Content-Type": FORM, **(headers or {})})

    def follow(self, response: Response) -> Response:
        """GET the location of a redirect (as a browser would after a form post; the fragment stays in the
        browser)."""
        assert response.status in (303, 307), (response.status, response.text[:500])
        return self.get(response.headers["location"].split("#", 1)[0])

    def queue(self, name: str, ns: Namespace = NS, **attributes: str) -> Queue:
        return self.broker.create_queue(ns, name, attributes, {})

    def send(self, queue: Queue, body: str, **kw: Any) -> str:
        return self.broker.send_message(queue, SendEntry(body=body, **kw), "000000000000").message_id


@pytest.fixture
def console() -> Iterator[Console]:
    c = Console()
    yield c
    c.close()


def page_of(queue: Queue) -> str:
    ns = queue.namespace
    return f"{UI}/queues/{ns.account_id}/{ns.region}/{queue.name}"


def alert(response: Response) -> str:
    found = re.search(r'role="alert"[^>]*>([^<]*)<', response.text)
    return html.unescape(found.group(1)) if found else ""


def note(response: Response) -> str:
    found = re.search(r'role="status"[^>]*>([^<]*)<', response.text)
    return html.unescape(found.group(1)) if found else ""


def articles(html: str) -> list[str]:
    return re.findall(r"<article class=\"message.*?</article>", html, re.S)


# ------------------------------------------------------------------------------------------------ the root redirect


def test_a_browser_opening_the_root_is_sent_to_the_console(console: Console) -> None:
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    resp = console.get("/", {"Accept": accept, "Sec-Fetch-Site": "none"})
    assert resp.status == 307 and resp.headers["location"] == UI + "/"
    assert console.get("/?foo=bar", {"Accept": accept}).status == 307


def test_sdk_requests_to_the_root_are_unaffected(console: Console) -> None:
    console.queue("q1")
    # A Query GET naming an action is an SQS call even from a browser.
    resp = console.get("/?Action=ListQueues", {"Accept": "text/html"})
    assert resp.status == 200 and "ListQueuesResponse" in resp.text
    # Without text/html (curl) a bare GET / says what the server is (tests/unit/test_first_run.py); with any query
    # string or on a queue URL it keeps its SQS answer.
    assert console.get("/", {"Accept": "*/*"}).text.startswith("sqsemu ")
    assert console.get("/?Version=2012-11-05").status == 404
    assert console.get("/000000000000/q1").status == 404
    assert query_call(console.app, {"Action": "ListQueues"}).status == 200


@pytest.mark.parametrize("config", [Config(console=False), Config(admin=False)], ids=["no-console", "no-admin"])
def test_no_redirect_and_no_console_when_switched_off(config: Config) -> None:
    c = Console(config)
    try:
        home = c.get("/", {"Accept": "text/html"})  # not sent to the console: the plain text says it is off
        assert home.status == 200 and "Web console:  off" in home.text
        resp = c.get(UI + "/")
        assert resp.status == 404 and "switched off" in resp.json()["error"]
        assert c.post(UI + "/server/reset", {"confirm": "yes"}).status == 404
        assert c.get("/health").status == 200
    finally:
        c.close()


# ------------------------------------------------------------------------------------------------ queues page


def test_the_queues_page_lists_every_queue_with_counts_dlq_and_sources(console: Console) -> None:
    dlq = console.queue("orders-dlq")
    policy = json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 3})
    orders = console.queue("orders", RedrivePolicy=policy)
    console.queue("jobs.fifo", FifoQueue="true")
    console.queue("elsewhere", Namespace("123456789012", "eu-west-1"))
    console.send(orders, "a")
    console.send(orders, "b", delay_seconds=30)
    resp = console.get(UI + "/")
    assert resp.status == 200 and resp.headers["content-type"].startswith("text/html")
    text = resp.text
    for name in ("orders-dlq", "orders", "jobs.fifo", "elsewhere"):
        assert f'data-queue="{name}"' in text
    assert "123456789012 · eu-west-1" in re.sub(r"<[^>]+>", "", text)
    row = re.search(r'<tr data-name="orders" .*?</tr>', text, re.S)
    assert row is not None
    assert 'data-count="visible">1<' in row.group(0) and 'data-count="delayed">1<' in row.group(0)
    assert "orders-dlq</a>" in row.group(0) and "after 3 receives" in row.group(0)
    dlq_row = re.search(r'<tr data-name="orders-dlq" .*?</tr>', text, re.S)
    assert dlq_row is not None and ">orders</a>" in dlq_row.group(0)
    assert "badge-fifo" in re.search(r'<tr data-name="jobs.fifo" .*?</tr>', text, re.S).group(0)  # type: ignore[union-attr]


def test_the_queues_page_filters_and_updates_live(console: Console) -> None:
    orders = console.queue("orders")
    console.queue("payments")
    live = console.get(UI + "/?live=1&q=ORD")
    assert live.status == 200
    parts = live.json()
    assert set(parts) == {"queues", "header-clock"}
    assert 'data-queue="orders"' in parts["queues"] and "payments" not in parts["queues"]
    console.send(orders, "x")
    assert 'data-count="visible">1<' in console.get(UI + "/?live=1").json()["queues"]
    assert "No queue name contains" in console.get(UI + "/?live=1&q=zzz").json()["queues"]


def test_an_empty_server_says_how_to_start(console: Console) -> None:
    assert "No queues yet" in console.get(UI + "/").text


# ------------------------------------------------------------------------------------------------ queue page


def test_the_queue_page_peeks_messages_without_changing_them(console: Console) -> None:
    queue = console.queue("orders")
    attrs = {"source": MessageAttributeValue("String", string_value="web")}
    console.send(queue, '{"order": 7, "items": [1, 2]}', message_attributes=attrs)
    received = asyncio.run(console.broker.receive_message(queue, visibility_timeout=60))
    assert len(received) == 1
    console.send(queue, "second", delay_seconds=10)
    html = console.get(page_of(queue)).text
    first, second = articles(html)
    assert 'data-state="in_flight"' in first and 'data-receive-count="1"' in first
    assert "{\n  &#34;order&#34;: 7," in first  # pretty-printed JSON, escaped
    assert "visible again in 1 min" in first and "source" in first and "web" in first
    assert 'data-state="delayed"' in second and "delivered in 10 s" in second
    # Looking changed nothing.
    message = queue.messages[received[0][0].message_id]
    assert message.receive_count == 1
    assert queue.counts[MessageState.IN_FLIGHT] == 1 and queue.counts[MessageState.DELAYED] == 1
    again = console.get(page_of(queue) + "?live=1").json()
    assert set(again) == {"counts", "charts", "messages", "tasks", "header-clock"}
    assert 'data-receive-count="1"' in again["messages"]


def test_fifo_messages_show_group_and_sequence_number(console: Console) -> None:
    queue = console.queue("jobs.fifo", FifoQueue="true", ContentBasedDeduplication="true")
    console.send(queue, "job", group_id="g-1")
    html = console.get(page_of(queue)).text
    (article,) = articles(html)
    assert "<dd>g-1</dd>" in article
    sequence = next(iter(queue.messages.values())).sequence_number
    assert sequence and sequence in article


def test_large_queues_are_paged(console: Console) -> None:
    queue = console.queue("big")
    for i in range(120):
        console.send(queue, f"m-{i}")
    html = console.get(page_of(queue) + "?page=3").text
    assert "101–120 of 120 messages" in html
    bodies = re.findall(r'data-field="body">([^<]*)<', html)
    assert bodies == [f"m-{i}" for i in range(100, 120)]
    assert len(articles(console.get(page_of(queue)).text)) == 50


def test_long_bodies_are_cut_and_shown_whole_on_the_message_page(console: Console) -> None:
    queue = console.queue("long")
    message_id = console.send(queue, "x" * 5000)
    html = console.get(page_of(queue)).text
    assert "3000 more characters" in html
    whole = console.get(f"{page_of(queue)}/messages/{message_id}")
    assert whole.status == 200 and "x" * 5000 in whole.text
    assert console.get(f"{page_of(queue)}/messages/nope").status == 404


def test_an_unknown_queue_is_a_404_page(console: Console) -> None:
    resp = console.get(f"{UI}/queues/000000000000/us-east-1/nope")
    assert resp.status == 404 and "There is no queue" in resp.text
    assert console.get(f"{UI}/queues/000000000000/us-east-1/nope?live=1").status == 404
    assert console.get(f"{UI}/queues/abc/us-east-1/nope").status == 404
    assert console.post(f"{UI}/queues/000000000000/us-east-1/nope/purge", {}).status == 404


# ------------------------------------------------------------------------------------------------ queue actions


def test_send_from_the_console(console: Console) -> None:
    queue = console.queue("orders")
    fields = [
        ("MessageBody", '{"a": 1}\r\nsecond line'),
        ("DelaySeconds", ""),
        ("attr_name", "kind"),
        ("attr_type", ""),
        ("attr_value", "test"),
        ("attr_name", "n"),
        ("attr_type", "Number"),
        ("attr_value", "42"),
        ("attr_name", "blob"),
        ("attr_type", "Binary"),
        ("attr_value", base64.b64encode(b"\x00\x01").decode()),
        ("attr_name", ""),
        ("attr_type", ""),
        ("attr_value", ""),
    ]
    resp = console.post(page_of(queue) + "/send", fields)
    assert resp.status == 303 and resp.headers["location"] == page_of(queue)
    (message,) = queue.messages.values()
    assert message.body == '{"a": 1}\nsecond line'
    assert message.message_attributes == {
        "kind": MessageAttributeValue("String", string_value="test"),
        "n": MessageAttributeValue("Number", string_value="42"),
        "blob": MessageAttributeValue("Binary", binary_value=b"\x00\x01"),
    }
    page = console.follow(resp)
    assert note(page).startswith(f"Sent message {message.message_id}")
    assert SESSION_COOKIE not in console.cookies and "sqsemu_flash" not in console.cookies
    assert note(console.get(page_of(queue))) == ""  # the note is shown once


def test_send_errors_are_the_engines_and_keep_the_form(console: Console) -> None:
    queue = console.queue("orders")
    resp = console.post(page_of(queue) + "/send", {"MessageBody": "keep me", "DelaySeconds": "901"})
    assert resp.status == 400
    assert alert(resp).startswith("InvalidParameterValue: Value 901 for parameter DelaySeconds is invalid.")
    assert ">keep me</textarea>" in resp.text and 'value="901"' in resp.text
    resp = console.post(page_of(queue) + "/send", {"MessageBody": "x", "DelaySeconds": "soon"})
    assert alert(resp) == (
        "InvalidParameterValue: Value soon for parameter DelaySeconds is invalid. Reason: Must be an integer."
    )
    fifo = console.queue("jobs.fifo", FifoQueue="true")
    resp = console.post(page_of(fifo) + "/send", {"MessageBody": "x", "MessageGroupId": "g"})
    assert resp.status == 400 and alert(resp).startswith("InvalidParameterValue")
    assert "ContentBasedDeduplication" in alert(resp) or "deduplication" in alert(resp).lower()
    assert not queue.messages and not fifo.messages


def test_fifo_send_carries_group_and_deduplication_ids(console: Console) -> None:
    fifo = console.queue("jobs.fifo", FifoQueue="true")
    resp = console.post(
        page_of(fifo) + "/send", {"MessageBody": "x", "MessageGroupId": "g", "MessageDeduplicationId": "d"}
    )
    assert resp.status == 303
    (message,) = fifo.messages.values()
    assert (message.group_id, message.deduplication_id) == ("g", "d")
    assert "sequence number" in note(console.follow(resp))


def test_edit_attributes_and_redrive_policy(console: Console) -> None:
    dlq = console.queue("orders-dlq")
    queue = console.queue("orders")
    fields = {"VisibilityTimeout": "45", "DelaySeconds": "0", "dead_letter_arn": dlq.arn, "max_receive_count": "4"}
    resp = console.post(page_of(queue) + "/attributes", fields)
    assert resp.status == 303
    assert queue.attributes["VisibilityTimeout"] == "45" and queue.redrive == (dlq.arn, 4)
    assert note(console.follow(resp)) == "Updated RedrivePolicy, VisibilityTimeout."
    resp = console.post(page_of(queue) + "/attributes", {"VisibilityTimeout": "45", "dead_letter_arn": ""})
    assert queue.redrive is None and "RedrivePolicy" in note(console.follow(resp))
    resp = console.post(page_of(queue) + "/attributes", {"VisibilityTimeout": "99999"})
    assert resp.status == 400 and alert(resp).startswith("InvalidAttributeValue")
    assert 'value="99999"' in resp.text and queue.attributes["VisibilityTimeout"] == "45"
    resp = console.post(page_of(queue) + "/attributes", {"VisibilityTimeout": "45"})
    assert note(console.follow(resp)).startswith("Nothing to change")


@pytest.mark.parametrize("count", ["\u00b2", "\u0663", "9" * 4301], ids=["superscript", "arabic", "4301-digits"])
def test_a_receive_count_int_cannot_read_is_refused_as_sqs_would_refuse_it(console: Console, count: str) -> None:
    dlq = console.queue("orders-dlq")
    queue = console.queue("orders")
    fields = {"dead_letter_arn": dlq.arn, "max_receive_count": count}
    resp = console.post(page_of(queue) + "/attributes", fields)
    assert resp.status == 400 and alert(resp).startswith("InvalidParameterValue"), (resp.status, alert(resp))
    assert queue.redrive is None


def test_tags_purge_and_delete(console: Console) -> None:
    queue = console.queue("orders")
    console.send(queue, "x")
    console.post(page_of(queue) + "/tag", {"key": "team", "value": "core"})
    assert queue.tags == {"team": "core"}
    assert '<th scope="row">team</th>' in console.get(page_of(queue)).text
    console.post(page_of(queue) + "/untag", {"key": "team"})
    assert queue.tags == {}
    resp = console.post(page_of(queue) + "/purge", {})
    assert resp.status == 303 and not queue.messages
    resp = console.post(page_of(queue) + "/delete", {})
    assert resp.status == 303 and resp.headers["location"] == UI + "/"
    assert queue.deleted and "Deleted queue orders." in note(console.follow(resp))


def test_create_queue(console: Console) -> None:
    resp = console.post(
        UI + "/queues", {"name": "jobs", "fifo": "1", "content_based": "1", "account": "", "region": "eu-west-1"}
    )
    assert resp.status == 303
    queue = console.broker.get_queue(Namespace("000000000000", "eu-west-1"), "jobs.fifo")
    assert queue.fifo and queue.attributes["ContentBasedDeduplication"] == "true"
    assert resp.headers["location"] == page_of(queue)
    resp = console.post(UI + "/queues", {"name": "bad name!"})
    assert resp.status == 400 and alert(resp).startswith("InvalidParameterValue: Can only include")
    assert 'value="bad name!"' in resp.text
    assert console.post(UI + "/queues", {"name": "q", "account": "12"}).status == 400


def test_redrive_moves_dead_letters_back_with_progress(console: Console) -> None:
    dlq = console.queue("orders-dlq")
    source = console.queue("orders", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq.arn, "maxReceiveCount": 1}))
    console.send(source, "poison")
    asyncio.run(console.broker.receive_message(source, visibility_timeout=1))
    console.clock.advance(2)
    asyncio.run(console.broker.receive_message(source, wait_time_seconds=0))  # the second receive dead-letters it
    assert len(dlq.messages) == 1 and not source.messages
    page = console.get(page_of(dlq)).text
    assert "badge-dlq" in page and 'id="redrive-form"' in page
    resp = console.post(page_of(dlq) + "/redrive", {"max_per_second": ""})
    assert resp.status == 303
    live = console.get(page_of(dlq) + "?live=1").json()
    assert 'data-task-status="RUNNING"' in live["tasks"]
    console.clock.advance(1)
    assert not dlq.messages and [m.body for m in source.messages.values()] == ["poison"]
    assert 'data-task-status="COMPLETED"' in console.get(page_of(dlq) + "?live=1").json()["tasks"]
    resp = console.post(page_of(dlq) + "/cancel-redrive", {"task_handle": "nope"})
    assert resp.status == 400 and alert(resp)


def test_actions_go_through_the_operations_table(console: Console, monkeypatch: pytest.MonkeyPatch) -> None:
    """One implementation of every action: the console runs the very handlers SQS requests run."""
    seen: list[str] = []
    for action in ("SendMessage", "PurgeQueue", "SetQueueAttributes", "GetQueueAttributes", "DeleteQueue"):
        original = operations.OPERATIONS[action]

        def spy(ctx: Any, req: Any, _original: Any = original, _action: str = action) -> Any:
            seen.append(_action)
            return _original.handler(ctx, req)

        monkeypatch.setitem(operations.OPERATIONS, action, operations.Operation(original.request, spy))
    queue = console.queue("orders")
    console.post(page_of(queue) + "/send", {"MessageBody": "x"})
    console.post(page_of(queue) + "/attributes", {"DelaySeconds": "5"})
    console.post(page_of(queue) + "/purge", {})
    console.post(page_of(queue) + "/delete", {})
    assert seen == ["SendMessage", "GetQueueAttributes", "SetQueueAttributes", "PurgeQueue", "DeleteQueue"]


# ------------------------------------------------------------------------------------------------ server page


def test_clock_buttons_advance_the_manual_clock(console: Console) -> None:
    queue = console.queue("orders")
    console.send(queue, "x")
    asyncio.run(console.broker.receive_message(queue, visibility_timeout=30))
    page = console.get(UI + "/server").text
    for seconds in (1, 30, 300, 3600):
        assert f'name="seconds" value="{seconds}"' in page
    resp = console.post(UI + "/server/advance", {"seconds": "30"})
    assert resp.status == 303 and console.clock.now_ms() == START_MS + 30_000
    assert next(iter(queue.messages.values())).receive_count == 1
    assert queue.counts[MessageState.VISIBLE] == 1
    assert 'data-state="visible"' in console.get(page_of(queue)).text
    resp = console.post(UI + "/server/advance", {"seconds": "-1"})
    assert resp.status == 400 and alert(resp) == '"seconds" must be a finite number >= 0'
    assert console.post(UI + "/server/advance", {"seconds": "x"}).status == 400
    assert fmt_time(console.clock.now_ms()) in console.get(UI + "/server?live=1").json()["clock"]


def test_the_system_clock_has_no_buttons() -> None:
    c = Console(Config(), SystemClock())
    try:
        page = c.get(UI + "/server").text
        assert 'id="advance-buttons"' not in page and "--clock manual" in page
        resp = c.post(UI + "/server/advance", {"seconds": "1"})
        assert resp.status == 400 and "not manual" in alert(resp)
    finally:
        c.close()


def test_fault_rules_list_add_remove(console: Console) -> None:
    fields = {
        "action": "SendMessage",
        "queue": "orders-*",
        "error_code": "ThrottlingException",
        "every": "2",
        "id": "slow-down",
    }
    resp = console.post(UI + "/server/add-fault", fields)
    assert resp.status == 303
    live = console.get(UI + "/server?live=1").json()["faults"]
    assert 'data-fault="slow-down"' in live and "ThrottlingException" in live and "1 call in 2" in live
    resp = console.post(UI + "/server/add-fault", {"error_code": "Throttling", "drop": "1"})
    assert resp.status == 400 and "exclude each other" in alert(resp)
    assert 'value="Throttling"' in resp.text
    assert console.post(UI + "/server/add-fault", {"every": "two", "latency_ms": "5"}).status == 400
    resp = console.post(UI + "/server/delete-fault", {"id": "slow-down"})
    assert resp.status == 303 and "No fault rules" in console.get(UI + "/server?live=1").json()["faults"]
    assert console.post(UI + "/server/delete-fault", {"id": "slow-down"}).status == 404


def test_reset_needs_the_confirmation(console: Console) -> None:
    console.queue("a")
    other = Namespace("123456789012", "us-east-1")
    console.queue("b", other)
    resp = console.post(UI + "/server/reset", {"account": ""})
    assert resp.status == 400 and "tick the box" in alert(resp)
    assert len(console.broker.all_queues()) == 2
    resp = console.post(UI + "/server/reset", {"account": "123456789012", "confirm": "yes"})
    assert [q.name for q in console.broker.all_queues()] == ["a"]
    assert "deleted 1 queue(s)" in note(console.follow(resp))
    console.post(UI + "/server/add-fault", {"latency_ms": "5"})
    resp = console.post(UI + "/server/reset", {"account": "", "confirm": "yes"})
    assert console.broker.all_queues() == [] and "1 fault rule(s)" in note(console.follow(resp))


# ------------------------------------------------------------------------------------------------ security


def test_pages_carry_a_strict_content_security_policy(console: Console) -> None:
    resp = console.get(UI + "/")
    assert "script-src 'self'" in resp.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in resp.headers["content-security-policy"]
    assert resp.headers["x-frame-options"] == "DENY"
    assert "<script>" not in resp.text and " style=" not in resp.text and " onclick=" not in resp.text
    js = console.get(UI + "/static/console.js")
    assert js.status == 200 and "javascript" in js.headers["content-type"]


def test_cross_site_requests_to_the_console_are_refused(console: Console) -> None:
    queue = console.queue("orders")
    console.send(queue, "x")
    resp = console.post(
        page_of(queue) + "/purge", {}, {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
    )
    assert resp.status == 403 and queue.messages
    resp = console.post(page_of(queue) + "/purge", {}, {"Sec-Fetch-Site": "", "Origin": "https://evil.example"})
    assert resp.status == 403 and queue.messages
    assert console.get(UI + "/", {"Sec-Fetch-Site": "cross-site"}).status == 403
    # The console's own form (same origin) passes; so does an old browser's same-origin Origin.
    resp = console.post(page_of(queue) + "/purge", {}, {"Sec-Fetch-Site": "", "Origin": "http://localhost:9324"})
    assert resp.status == 303 and not queue.messages


def test_with_an_admin_token_the_console_asks_for_it_once() -> None:
    c = Console(Config(clock="manual", admin_token=TOKEN))
    try:
        queue = c.queue("orders")
        resp = c.get(UI + "/queues/000000000000/us-east-1/orders?page=2")
        assert resp.status == 303
        wanted = "%2F_sqsemu%2Fui%2Fqueues%2F000000000000%2Fus-east-1%2Forders%3Fpage%3D2"
        assert resp.headers["location"] == f"{UI}/login?next={wanted}"
        login = c.follow(resp)
        assert login.status == 200 and 'name="token"' in login.text
        assert c.get(UI + "/static/console.css").status == 200
        assert c.post(page_of(queue) + "/purge", {}).status == 401
        wrong = c.post(UI + "/login", {"token": "nope", "next": page_of(queue)})
        assert wrong.status == 403 and SESSION_COOKIE not in c.cookies
        ok = c.post(UI + "/login", {"token": TOKEN, "next": page_of(queue) + "?page=2"})
        assert ok.status == 303 and ok.headers["location"] == page_of(queue) + "?page=2"
        assert len(c.cookies[SESSION_COOKIE]) == 43 and TOKEN not in c.cookies[SESSION_COOKIE]  # random, not the token
        assert c.get(page_of(queue)).status == 200
        assert c.post(page_of(queue) + "/purge", {}).status == 303
        # The cookie opens the console only: the JSON admin routes still want the header.
        assert c.get("/_sqsemu/queues").status == 401
        resp = c.post(UI + "/logout", {})
        assert resp.status == 303 and SESSION_COOKIE not in c.cookies
        assert c.get(UI + "/").status == 303
        # The header works too (curl, scripts).
        assert c.get(UI + "/", {"X-Sqsemu-Admin-Token": TOKEN}).status == 200
        assert c.get(UI + "/", {"Cookie": f"{SESSION_COOKIE}=forged"}).status == 303
    finally:
        c.close()


def test_without_a_token_login_goes_straight_in(console: Console) -> None:
    resp = console.get(UI + "/login?next=/_sqsemu/ui/server")
    assert resp.status == 303 and resp.headers["location"] == UI + "/server"
    assert console.get(UI).headers["location"] == UI + "/"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("/_sqsemu/ui/server", "/_sqsemu/ui/server"),
        ("/_sqsemu/ui/queues/1/r/q?page=2", "/_sqsemu/ui/queues/1/r/q?page=2"),
        ("https://evil.example/", "/_sqsemu/ui/"),
        ("//evil.example/_sqsemu/ui/", "/_sqsemu/ui/"),
        ("/_sqsemu/ui/../../x", "/_sqsemu/ui/"),
        ("/_sqsemu/uievil", "/_sqsemu/ui/"),
        (None, "/_sqsemu/ui/"),
    ],
)
def test_login_only_returns_to_console_pages(value: str | None, expected: str) -> None:
    assert safe_next(value) == expected


# ------------------------------------------------------------------------------------------------ configuration


def test_console_is_an_option_of_the_flag_the_environment_and_the_file(tmp_path: Path) -> None:
    assert Config().console is True and "console" in Config.field_names()
    seen: list[Config] = []
    clean = {f"SQSEMU_{f.upper()}": None for f in Config.field_names()}
    with mock.patch.object(sqsemu.server, "run", seen.append):
        assert CliRunner().invoke(cli.main, ["--no-console"], env=clean).exit_code == 0
        assert CliRunner().invoke(cli.main, [], env={**clean, "SQSEMU_CONSOLE": "false"}).exit_code == 0
        path = tmp_path / "sqsemu.toml"
        path.write_text("[server]\nconsole = false\n")
        assert CliRunner().invoke(cli.main, ["--config", str(path)], env=clean).exit_code == 0
        assert CliRunner().invoke(cli.main, [], env=clean).exit_code == 0
    assert [config.console for config in seen] == [False, False, False, True]
    with pytest.raises(ValueError, match="console must be a bool"):
        Config(console="no")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ helpers


def test_view_helpers() -> None:
    assert pretty_body('{"a":[1,2]}') == ('{\n  "a": [\n    1,\n    2\n  ]\n}', True)
    assert pretty_body("{not json}") == ("{not json}", False)
    assert pretty_body("plain") == ("plain", False)
    assert [fmt_duration(s) for s in (0.4, 29, 270, 3600, 7500, 90000)] == [
        "0.4 s",
        "29 s",
        "4 min 30 s",
        "1 h",
        "2 h 5 min",
        "1 d 1 h",
    ]
    assert fmt_time(0) == "1970-01-01 00:00:00 UTC" and fmt_time(None) == ""
    assert pages(0, 1)["first"] == 0 and pages(120, 9)["page"] == 3 and pages(120, 0)["page"] == 1


def test_realism_injections_are_marked_on_the_queue_and_message_pages(console: Console) -> None:
    console.broker.set_realism("duplicates=1", 0)
    queue = console.queue("ledger")
    console.send(queue, "charge")
    ((message, handle),) = asyncio.run(console.broker.receive_message(queue))
    (article,) = articles(console.get(page_of(queue)).text)
    assert 'data-injected="duplicate_pending"' in article
    console.broker.delete_message(queue, handle)
    (article,) = articles(console.get(page_of(queue)).text)
    assert 'data-injected="duplicate"' in article and 'data-state="visible"' in article
    whole = console.get(f"{page_of(queue)}/messages/{message.message_id}").text
    assert 'data-injected="duplicate"' in whole and "a duplicate delivery" in whole
    console.broker.set_realism("off", 0)  # off: nothing is marked any more
    asyncio.run(console.broker.receive_message(queue))
    assert "data-injected" not in console.get(page_of(queue)).text


def test_fair_queue_tenants_and_noisy_tenants_are_shown(console: Console) -> None:
    queue = console.queue("tenants")
    for i in range(40):
        console.send(queue, f"n-{i}", group_id="acme")
    console.send(queue, "q-0", group_id="quiet-co")
    for _ in range(3):
        asyncio.run(console.broker.receive_message(queue, max_number_of_messages=10, visibility_timeout=600))
    page = console.get(page_of(queue)).text
    assert 'data-count="noisy_tenants"' in page and "noisy tenant: acme" in page
    assert 'data-field="tenant">acme<' in page and 'data-field="tenant">quiet-co<' in page
    assert 'data-noisy="acme"' in page and 'data-noisy="quiet-co"' not in page
