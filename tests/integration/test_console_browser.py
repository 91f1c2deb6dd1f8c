"""The web console in a real browser: Debian's Chromium, headless, driven by Playwright, against real servers.

Each scenario checks the console against what a real SQS client sees (boto3, over both protocols where the client
side matters): messages sent with boto3 appear live, a boto3 receive shows as in flight, the console's send, purge
and redrive are what boto3 then observes, and the manual clock's buttons release an in-flight message.

The browser is the system's Chromium (``SQSEMU_CHROMIUM``, else ``chromium`` / ``chromium-browser`` on the PATH),
never Playwright's own download. It is launched with the flags a container needs (``--no-sandbox``, no GPU, no QUIC,
none of Chromium's background connections, which otherwise get connections refused many at a time) and a fresh
profile per launch (Playwright gives ``launch()`` a new temporary user-data-dir). Without Playwright or Chromium the
tests are skipped, naming what is missing; under CI (``CI`` set) that is an error, as for the Spark tests.
``.ci/run`` installs Chromium when it is missing.

``SQSEMU_SCREENSHOTS=1`` makes :func:`test_screenshots_of_the_queues_and_a_queue_page` and
:func:`test_screenshot_of_a_queues_charts` write the documentation's screenshots to ``docs/screenshots/``;
otherwise they write them to a temporary folder (the repository is not rewritten by every run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import ServerProcess, client_for

pytestmark = pytest.mark.browser

CHROMIUM_NAMES = ("chromium", "chromium-browser")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT_DIR = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
UI = "/_sqsemu/ui"
LIVE_S = 2.0
"""What "live" promises: a change shows on an open page within this many seconds."""


def _chromium() -> str:
    """The Chromium executable, or skip (an error under CI) naming what is missing."""
    problem = None
    path = os.environ.get("SQSEMU_CHROMIUM") or next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "playwright is not installed (pip install -e '.[test]' brings it)"
    if problem is None and path is None:
        problem = "no Chromium browser found (apt-get install chromium; .ci/run installs it; or set SQSEMU_CHROMIUM)"
    if problem is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"browser tests cannot run: {problem}")
        pytest.skip(problem)
    assert path is not None
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module."""
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) and page; confirmation dialogs are accepted, as a user would."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    tab.on("dialog", lambda dialog: dialog.accept())
    yield tab
    context.close()


def queue_page(endpoint: str, queue_url: str) -> str:
    """The console page of the queue at ``queue_url`` (default account and region)."""
    account, name = queue_url.rsplit("/", 2)[-2:]
    return f"{endpoint}{UI}/queues/{account}/us-east-1/{name}"


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def message(page: Any, state: str | None = None) -> Any:
    """The message cards of the open queue page (in one ``state`` when given)."""
    return page.locator("article.message" + (f'[data-state="{state}"]' if state else ""))


# ------------------------------------------------------------------------------------------------ scenarios


def test_a_message_sent_with_boto3_appears_on_the_queue_page(page, server, sqs, make_queue, protocol) -> None:
    url = make_queue()
    page.goto(queue_page(server.endpoint_url, url))
    expect()(page.locator("#messages")).to_contain_text("The queue is empty")
    body = json.dumps({"order": uuid.uuid4().hex, "total": 12.5})
    sent_at = time.monotonic()
    sqs.send_message(QueueUrl=url, MessageBody=body)
    card = message(page, "visible")
    expect()(card).to_have_count(1, timeout=LIVE_S * 1000)
    assert time.monotonic() - sent_at < LIVE_S + 0.5
    assert json.loads(card.locator('[data-field="body"]').inner_text()) == json.loads(body)
    expect()(page.locator('.count-visible [data-count="visible"]')).to_have_text("1")


def test_a_message_received_with_boto3_shows_in_flight(page, server, sqs, make_queue, protocol) -> None:
    url = make_queue()
    sqs.send_message(QueueUrl=url, MessageBody="work item")
    page.goto(queue_page(server.endpoint_url, url))
    expect()(message(page, "visible")).to_have_count(1)
    received = sqs.receive_message(QueueUrl=url, VisibilityTimeout=120).get("Messages", [])
    assert len(received) == 1
    card = message(page, "in_flight")
    expect()(card).to_have_count(1, timeout=LIVE_S * 1000)
    expect()(card).to_have_attribute("data-receive-count", "1")
    expect()(card.locator('[data-field="receive-count"]')).to_have_text("1")
    expect()(card).to_contain_text("In flight")
    expect()(page.locator('.count-in_flight [data-count="in_flight"]')).to_have_text("1")


def test_sending_from_the_console_delivers_to_boto3(page, server, sqs, make_queue, protocol) -> None:
    url = make_queue()
    body = '{"order": 42, "note": "café ☕"}\nsecond line'
    page.goto(queue_page(server.endpoint_url, url))
    form = page.locator("#send-form")
    form.locator('textarea[name="MessageBody"]').fill(body)
    rows = form.locator(".attribute-row")
    rows.nth(0).locator('input[name="attr_name"]').fill("source")
    rows.nth(0).locator('input[name="attr_value"]').fill("console")
    form.get_by_role("button", name="+ Attribute").click()
    rows.nth(1).locator('input[name="attr_name"]').fill("priority")
    rows.nth(1).locator('input[name="attr_type"]').fill("Number")
    rows.nth(1).locator('input[name="attr_value"]').fill("7")
    form.get_by_role("button", name="Send").click()
    expect()(page.locator("#flash")).to_contain_text("Sent message")
    got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"], WaitTimeSeconds=1)["Messages"]
    assert len(got) == 1
    assert got[0]["Body"] == body
    assert got[0]["MessageAttributes"] == {
        "source": {"DataType": "String", "StringValue": "console"},
        "priority": {"DataType": "Number", "StringValue": "7"},
    }


def test_purge_from_the_console_empties_the_queue(page, server, sqs, make_queue) -> None:
    url = make_queue()
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")
    page.goto(queue_page(server.endpoint_url, url))
    expect()(message(page)).to_have_count(3)
    page.locator("#purge-form button").click()  # the confirmation dialog is accepted
    expect()(page.locator("#flash")).to_contain_text("every message is gone")
    expect()(message(page)).to_have_count(0)
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
    assert sqs.receive_message(QueueUrl=url).get("Messages", []) == []


def test_redrive_from_the_console_moves_dead_letters_back(page, server, sqs, make_queue) -> None:
    dlq = make_queue("dlq")
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    source = make_queue("source", RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1}))
    bodies = {"poison-1", "poison-2"}
    for body in sorted(bodies):
        sqs.send_message(QueueUrl=source, MessageBody=body)
    assert len(sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10, VisibilityTimeout=0)["Messages"]) == 2
    assert sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10).get("Messages", []) == []  # moved away
    page.goto(queue_page(server.endpoint_url, dlq))
    expect()(message(page)).to_have_count(2)
    expect()(page.locator("h1 .badge-dlq")).to_be_visible()
    page.locator("#redrive-form button").click()
    expect()(page.locator("#flash")).to_contain_text("Started moving")
    expect()(page.locator('#move-tasks [data-task-status="COMPLETED"]')).to_have_count(1, timeout=5_000)
    expect()(page.locator("#move-tasks")).to_contain_text("2 / 2")
    got = sqs.receive_message(QueueUrl=source, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    assert {m["Body"] for m in got} == bodies
    assert (
        sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["All"])["Attributes"]["ApproximateNumberOfMessages"]
        == "0"
    )


def test_advancing_the_manual_clock_releases_an_in_flight_message(
    page, manual_server, manual_sqs, manual_make_queue
) -> None:
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="held")
    assert len(manual_sqs.receive_message(QueueUrl=url, VisibilityTimeout=30)["Messages"]) == 1
    page.goto(queue_page(manual_server.endpoint_url, url))
    expect()(message(page, "in_flight")).to_have_count(1)
    page.get_by_role("link", name="Server").click()
    expect()(page.locator("#clock")).to_contain_text("Manual")
    page.locator("#advance-buttons").get_by_role("button", name="+30 s").click()
    expect()(page.locator("#flash")).to_contain_text("moved forward by 30 s")
    page.goto(queue_page(manual_server.endpoint_url, url))
    expect()(message(page, "visible")).to_have_count(1)
    got = manual_sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"])["Messages"]
    assert got[0]["Body"] == "held" and got[0]["Attributes"]["ApproximateReceiveCount"] == "2"


def test_the_queue_charts_show_its_last_minutes_and_follow_it_live(
    page, manual_server, manual_sqs, manual_make_queue
) -> None:
    """The charts are drawn from the server's 10-second samples on its (manual) clock: 12 sends, then 4 received of
    which 3 deleted, read back from the legend's latest values and from the JSON the admin route gives."""
    url = manual_make_queue()
    for n in range(12):
        manual_sqs.send_message(QueueUrl=url, MessageBody=f"m{n}")
    manual_server.advance(10)
    got = manual_sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=4, VisibilityTimeout=300)["Messages"]
    assert len(got) == 4
    for received in got[:3]:
        manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=received["ReceiptHandle"])
    manual_server.advance(10)
    page.goto(queue_page(manual_server.endpoint_url, url))
    for chart in ("depth", "rates"):
        expect()(page.locator(f'svg[data-chart="{chart}"]')).to_be_visible()
        expect()(page.locator(f'svg[data-chart="{chart}"] polyline')).to_have_count(3)
    latest = page.locator("[data-latest]")
    expect()(page.locator('[data-latest="visible"]')).to_have_text("8")
    expect()(page.locator('[data-latest="in_flight"]')).to_have_text("1")
    expect()(page.locator('[data-latest="received_per_second"]')).to_have_text("0.4")
    expect()(page.locator('[data-latest="deleted_per_second"]')).to_have_text("0.3")
    assert latest.count() == 6
    # live: the next sample shows on the open page within LIVE_S
    for n in range(5):
        manual_sqs.send_message(QueueUrl=url, MessageBody=f"more{n}")
    manual_server.advance(10)
    expect()(page.locator('[data-latest="visible"]')).to_have_text("13", timeout=LIVE_S * 1000)
    expect()(page.locator('[data-latest="sent_per_second"]')).to_have_text("0.5", timeout=LIVE_S * 1000)
    account, name = url.rsplit("/", 2)[-2:]
    with urllib.request.urlopen(f"{manual_server.endpoint_url}/_sqsemu/queues/{account}/{name}/history") as resp:
        history = json.load(resp)
    assert len(history["samples"]) == 90 and history["interval_seconds"] == 10
    assert [s["visible"] for s in history["samples"][-3:]] == [12, 8, 13]


def test_the_admin_token_login(page) -> None:
    with ServerProcess(["--admin-token", "browser-t0ken"]) as srv:
        page.goto(srv.endpoint_url + "/")  # a browser at the root: to the console, which asks for the token
        expect()(page.locator("#login-form")).to_be_visible()
        page.locator('input[name="token"]').fill("wrong")
        page.get_by_role("button", name="Log in").click()
        expect()(page.locator("#error")).to_contain_text("not the admin token")
        page.locator('input[name="token"]').fill("browser-t0ken")
        page.get_by_role("button", name="Log in").click()
        expect()(page.get_by_role("heading", name="Queues")).to_be_visible()
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)  # live calls pass too
        page.get_by_role("button", name="Log out").click()
        expect()(page.locator("#login-form")).to_be_visible()


# ------------------------------------------------------------------------------------------------ screenshots


def _fill_demo(endpoint: str) -> None:
    """A few queues with messages in every state, for the screenshots."""
    sqs = client_for(endpoint, "json")
    dlq = sqs.create_queue(QueueName="orders-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3})
    orders = sqs.create_queue(QueueName="orders", Attributes={"RedrivePolicy": policy})["QueueUrl"]
    sqs.tag_queue(QueueUrl=orders, Tags={"team": "checkout"})
    payments = sqs.create_queue(
        QueueName="payments.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    emails = sqs.create_queue(QueueName="emails")["QueueUrl"]
    elsewhere = client_for(endpoint, "json", access_key_id="123456789012", region="eu-west-1")
    elsewhere.create_queue(QueueName="audit-log")
    elsewhere.close()
    for n, (customer, total) in enumerate((("ada", 42.5), ("grace", 17.0), ("alan", 99.9), ("edsger", 5.25))):
        body = json.dumps({"order_id": 1041 + n, "customer": customer, "total": total, "currency": "EUR"})
        attributes = {"source": {"DataType": "String", "StringValue": "web" if n % 2 == 0 else "mobile"}}
        sqs.send_message(QueueUrl=orders, MessageBody=body, MessageAttributes=attributes)
    sqs.send_message(QueueUrl=orders, MessageBody=json.dumps({"order_id": 1045, "retry": True}), DelaySeconds=60)
    sqs.receive_message(QueueUrl=orders, MaxNumberOfMessages=1, VisibilityTimeout=300)
    for n in range(3):
        sqs.send_message(QueueUrl=payments, MessageBody=json.dumps({"payment": n}), MessageGroupId=f"customer-{n % 2}")
    for n in range(7):
        sqs.send_message(QueueUrl=emails, MessageBody=f"welcome email {n}")
    sqs.receive_message(QueueUrl=emails, MaxNumberOfMessages=2, VisibilityTimeout=300)
    sqs.send_message(QueueUrl=dlq, MessageBody=json.dumps({"order_id": 1002, "error": "card declined"}))
    sqs.close()


def test_screenshots_of_the_queues_and_a_queue_page(page, tmp_path: Path) -> None:
    folder = SCREENSHOT_DIR if os.environ.get("SQSEMU_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    with ServerProcess([]) as srv:
        _fill_demo(srv.endpoint_url)
        page.set_viewport_size({"width": 1280, "height": 480})
        page.goto(srv.endpoint_url + "/")
        expect()(page.locator("#queue-table tbody tr")).to_have_count(5)
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        page.screenshot(path=str(folder / "console-queues.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 860})
        page.locator("a.queue-name", has_text=re.compile(r"^orders$")).click()
        expect()(message(page)).to_have_count(5)
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        page.screenshot(path=str(folder / "console-queue.png"))
    for name in ("console-queues.png", "console-queue.png"):
        assert (folder / name).stat().st_size > 10_000


def test_screenshot_of_a_queues_charts(page, tmp_path: Path) -> None:
    """docs/screenshots/console-charts.png: a queue's charts after a few minutes of traffic on a manual clock."""
    folder = SCREENSHOT_DIR if os.environ.get("SQSEMU_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    with ServerProcess(["--clock", "manual"]) as srv:
        sqs = client_for(srv.endpoint_url, "json")
        url = sqs.create_queue(QueueName="orders")["QueueUrl"]
        for step in range(60):  # 10 minutes: a producer outruns its consumer, which then catches up
            for n in range(6 + step % 5 if step < 35 else 2):
                sqs.send_message(QueueUrl=url, MessageBody=f"order {step}-{n}", DelaySeconds=15 * (n % 4 == 0))
            for _ in range(1 if step < 35 else 2):
                most = 4 if step < 35 else 10
                received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=most, VisibilityTimeout=25)
                for n, got in enumerate(received.get("Messages", [])):
                    if n % 5:  # one in five is not deleted: it comes back after its visibility timeout
                        sqs.delete_message(QueueUrl=url, ReceiptHandle=got["ReceiptHandle"])
            srv.advance(10)
        sqs.close()
        page.set_viewport_size({"width": 1280, "height": 860})
        page.goto(queue_page(srv.endpoint_url, url))
        expect()(page.locator('svg[data-chart="rates"]')).to_be_visible()
        page.locator("#charts").screenshot(path=str(folder / "console-charts.png"))
    assert (folder / "console-charts.png").stat().st_size > 5_000
