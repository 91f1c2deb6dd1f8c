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

``SQSEMU_SCREENSHOTS=1`` makes :func:`test_screenshots_of_the_queues_and_a_queue_page` (at 1280 and 420 px),
:func:`test_screenshot_of_a_denied_try` and :func:`test_screenshot_of_a_queues_charts` write the documentation's
screenshots to ``docs/screenshots/``; otherwise they write them to a temporary folder (the repository is not
rewritten by every run).
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


# ------------------------------------------------------------------------------------------------ issue 43, finding 6

ROOT_KEY, READER_KEY = "AKIDROOT", "AKIDREADER"
READER = "arn:aws:iam::000000000000:user/reader"
TOPIC = "arn:aws:sns:us-east-1:000000000000:" + "order-events-from-the-checkout-service-in-every-region-" * 2 + "x"
"""A long ``aws:SourceArn``: the queue policy's longest line, wider than its card."""


def _iam_config(folder: Path) -> Path:
    """An ``--auth iam`` configuration: a root key and a reader whose own policy allows only ReceiveMessage."""
    reader_policy = {"Statement": [{"Effect": "Allow", "Action": "sqs:ReceiveMessage", "Resource": "*"}]}
    path = folder / "sqsemu.toml"
    path.write_text(
        '[server]\nauth = "iam"\n'
        f'[[credentials]]\naccess_key_id = "{ROOT_KEY}"\nsecret_access_key = "secret"\n'
        f'[[credentials]]\naccess_key_id = "{READER_KEY}"\nsecret_access_key = "secret"\nprincipal = "{READER}"\n'
        f"policies = [{json.dumps(json.dumps(reader_policy))}]\n"
    )
    return path


@pytest.fixture(scope="module")
def iam_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with ServerProcess(["--config", str(_iam_config(tmp_path_factory.mktemp("console-iam")))]) as srv:
        yield srv


def _queue_with_a_long_policy(endpoint: str, name: str) -> str:
    """A queue whose policy lets the reader send only from :data:`TOPIC` (a long line); its URL."""
    root = client_for(endpoint, "json", access_key_id=ROOT_KEY, secret_access_key="secret")
    try:
        url: str = root.create_queue(QueueName=name)["QueueUrl"]
        arn = root.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        statement = {
            "Sid": "checkout-events-only",
            "Effect": "Allow",
            "Principal": {"AWS": READER},
            "Action": "sqs:SendMessage",
            "Resource": arn,
            "Condition": {"ArnEquals": {"aws:SourceArn": TOPIC}},
        }
        policy = json.dumps({"Version": "2012-10-17", "Statement": [statement]})
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": policy})
    finally:
        root.close()
    return url


def _try_call(page: Any, context: str) -> Any:
    """Fill in the access card's form (the reader, SendMessage, ``context``), press "Try the call"; its result."""
    form = page.locator("#try-call-form")
    form.locator(f'input[name="access_key_id"][value="{READER_KEY}"]').check()
    form.locator('select[name="action"]').select_option("SendMessage")
    form.locator('input[name="context"]').fill(context)
    with page.expect_navigation() as navigation:
        form.get_by_role("button", name="Try the call").click()
    # Post/Redirect/Get: the page shown came from a GET (a reload resends nothing), scrolled to the result
    request = navigation.value.request
    assert request.method == "GET" and request.redirected_from is not None
    assert request.redirected_from.method == "POST"
    assert page.url.endswith("#try-result"), page.url
    return page.locator("#try-result")


def test_a_denied_try_shows_below_its_button_as_a_refusal_and_keeps_the_form(page, iam_server) -> None:
    url = _queue_with_a_long_policy(iam_server.endpoint_url, f"try-{uuid.uuid4().hex[:8]}")
    page.goto(queue_page(iam_server.endpoint_url, url))
    wrong = json.dumps({"aws:SourceArn": TOPIC.replace("order-events", "other-events")})
    result = _try_call(page, wrong)
    expect()(result).to_contain_text(f"Denied: SendMessage as {READER}")
    expect()(result).to_have_attribute("role", "alert")
    expect()(result).to_have_class(re.compile(r"\btry-denied\b"))
    expect()(page.locator("#flash")).to_have_count(0)  # no banner at the top of the page
    # right below the button that asked, inside its form
    expect()(page.locator("#try-call-form #try-result")).to_have_count(1)
    button = page.locator("#try-call-form").get_by_role("button", name="Try the call").bounding_box()
    box = result.bounding_box()
    assert box["y"] >= button["y"] + button["height"], (box, button)
    assert box["y"] - (button["y"] + button["height"]) <= 24, (box, button)
    assert box["x"] < button["x"] + button["width"] and box["x"] + box["width"] > button["x"]
    # in the error colours: a red border, red text on a reddish background
    colours = result.evaluate(
        "e => { const s = getComputedStyle(e); return [s.color, s.backgroundColor, s.borderLeftColor]; }"
    )
    red, background, border = ([int(n) for n in re.findall(r"\d+", c)[:3]] for c in colours)
    assert red[0] > red[1] + 60 and border[0] > border[1] + 60 and background[0] > background[1], colours
    # the form keeps what was tried
    form = page.locator("#try-call-form")
    expect()(form.locator(f'input[name="access_key_id"][value="{READER_KEY}"]')).to_be_checked()
    expect()(form.locator('select[name="action"]')).to_have_value("SendMessage")
    expect()(form.locator('input[name="context"]')).to_have_value(wrong)
    # the page answered to the post still updates live
    expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
    # and an allowed call reads as one, in the same place
    allowed = _try_call(page, json.dumps({"aws:SourceArn": TOPIC}))
    expect()(allowed).to_contain_text("Allowed: SendMessage")
    expect()(allowed).to_contain_text("checkout-events-only")
    expect()(allowed).to_have_attribute("role", "status")
    expect()(page.locator("#try-call-form #try-result.try-allowed")).to_have_count(1)
    expect()(form.locator('input[name="context"]')).to_have_value(json.dumps({"aws:SourceArn": TOPIC}))


OVERFLOW = "e => [e.scrollWidth, e.clientWidth]"


@pytest.mark.parametrize("width", [1280, 420])
def test_a_long_policy_wraps_inside_its_card(page, iam_server, width: int) -> None:
    url = _queue_with_a_long_policy(iam_server.endpoint_url, f"policy-{uuid.uuid4().hex[:8]}")
    page.set_viewport_size({"width": width, "height": 860})
    page.goto(queue_page(iam_server.endpoint_url, url))
    policy = page.locator("#access pre.policy")
    expect()(policy).to_contain_text(TOPIC)  # all of it, on the page
    scroll, client = policy.evaluate(OVERFLOW)
    assert scroll <= client, (scroll, client)
    scroll, client = page.locator("#access").evaluate(OVERFLOW)
    assert scroll <= client, (scroll, client)
    pre, card = policy.bounding_box(), page.locator("#access").bounding_box()
    assert pre["x"] + pre["width"] <= card["x"] + card["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width


IN_VIEW = """e => { const r = e.getBoundingClientRect();
  const bar = document.querySelector('.topbar').getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, bar: bar.bottom, height: window.innerHeight}; }"""
"""Where an element is in the window, and where the sticky top bar ends."""


@pytest.mark.parametrize("width", [1280, 420])
def test_a_tried_call_opens_with_its_result_in_view(page, iam_server, width: int) -> None:
    """Issue 47, finding 12: the result sat 1,870 px below the top of the page the post answered (2,725 at 420)."""
    url = _queue_with_a_long_policy(iam_server.endpoint_url, f"view-{uuid.uuid4().hex[:8]}")
    page.set_viewport_size({"width": width, "height": 860})
    page.goto(queue_page(iam_server.endpoint_url, url))
    result = _try_call(page, json.dumps({"aws:SourceArn": TOPIC.replace("order-events", "other-events")}))
    expect()(result).to_contain_text("checkout-events-only (Allow): does not apply, its Condition ArnEquals")
    box = result.evaluate(IN_VIEW)
    assert box["top"] >= box["bar"] and box["bottom"] <= box["height"], box  # whole, below the sticky top bar
    assert page.evaluate("window.scrollY") > 0
    # a reload shows it again (a GET: no form to resend), in view again
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    page.reload()
    expect()(page.locator("#try-result")).to_contain_text(f"Denied: SendMessage as {READER}")
    assert not dialogs
    box = page.locator("#try-result").evaluate(IN_VIEW)
    assert box["top"] >= box["bar"] and box["bottom"] <= box["height"], box


@pytest.mark.parametrize("width", [1280, 420])
def test_as_shows_each_identity_whole(page, iam_server, width: int) -> None:
    """Issue 47, finding 12: the "As" select was cut to ``AKIDORDERS (arn:a``."""
    url = _queue_with_a_long_policy(iam_server.endpoint_url, f"as-{uuid.uuid4().hex[:8]}")
    page.set_viewport_size({"width": width, "height": 860})
    page.goto(queue_page(iam_server.endpoint_url, url))
    identities = page.locator("#try-call-form .try-as .identity")
    expect()(identities).to_have_count(2)
    expect()(identities.nth(0)).to_have_text(f"{ROOT_KEY} root of 000000000000")
    expect()(identities.nth(1)).to_have_text(f"{READER_KEY} {READER}")
    card = page.locator("#access").bounding_box()
    for n in range(2):
        scroll, client = identities.nth(n).evaluate(OVERFLOW)
        assert scroll <= client, (scroll, client)
        box = identities.nth(n).bounding_box()
        assert box["x"] >= card["x"] and box["x"] + box["width"] <= card["x"] + card["width"], (box, card)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


LINES = """e => { const range = document.createRange(); range.selectNodeContents(e);
  return new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.bottom))).size; }"""
"""How many lines the text of an element takes."""


@pytest.mark.parametrize("width", [760, 1000, 1280])
def test_the_region_does_not_wrap(page, server, width: int) -> None:
    """Issue 47, finding 12: beside long queue names, ``us-east-1`` broke across lines in the queues table."""
    sqs = client_for(server.endpoint_url, "json", region="ap-southeast-2")
    name = f"orders-from-the-checkout-service-in-every-region-{uuid.uuid4().hex[:8]}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    try:
        page.set_viewport_size({"width": width, "height": 860})
        page.goto(f"{server.endpoint_url}{UI}/?q={name}")
        cell = page.locator(f'#queue-table tr[data-queue="{name}"] td[data-label="Account · region"]')
        expect()(cell).to_have_text("000000000000 · ap-southeast-2")
        assert cell.evaluate(LINES) == 1
        page.goto(f"{server.endpoint_url}{UI}/queues/000000000000/ap-southeast-2/{name}")
        assert page.locator(".crumbs").evaluate(LINES) == 1
    finally:
        sqs.delete_queue(QueueUrl=url)
        sqs.close()


@pytest.mark.parametrize("width", [1280, 420])
def test_the_charts_use_their_cards_width(page, server, width: int) -> None:
    """Issue 47, finding 12: the two charts used two thirds of their card."""
    sqs = client_for(server.endpoint_url, "json")
    url = sqs.create_queue(QueueName=f"charts-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    try:
        page.set_viewport_size({"width": width, "height": 860})
        page.goto(queue_page(server.endpoint_url, url))
        row = page.locator('#charts [data-part="charts"]').bounding_box()
        charts = [page.locator(f"#charts #chart-{n}").bounding_box() for n in ("depth", "rates")]  # axes included
        if width >= 1000:  # side by side, sharing the row
            assert charts[0]["y"] == charts[1]["y"]
            used = charts[1]["x"] + charts[1]["width"] - charts[0]["x"]
            assert used >= 0.95 * row["width"], (used, row)
            assert min(c["width"] for c in charts) >= 0.45 * row["width"], (charts, row)
        else:  # one under the other, each the row's width
            assert charts[1]["y"] > charts[0]["y"]
            assert min(c["width"] for c in charts) >= 0.95 * row["width"], (charts, row)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        sqs.delete_queue(QueueUrl=url)
        sqs.close()


CELLS = """row => [...row.querySelectorAll('td')].map(td => {
  const r = td.getBoundingClientRect();
  return {left: r.left, right: r.right, width: r.width, label: getComputedStyle(td, '::before').content,
          text: td.innerText.trim()};
})"""


def test_the_queues_table_fits_a_420_px_screen(page, server) -> None:
    sqs = client_for(server.endpoint_url, "json")
    name = f"narrow-{uuid.uuid4().hex[:8]}"
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3})
    url = sqs.create_queue(QueueName=name, Attributes={"RedrivePolicy": redrive})["QueueUrl"]
    try:
        page.set_viewport_size({"width": 420, "height": 860})
        page.goto(f"{server.endpoint_url}{UI}/?q={name}")
        row = page.locator(f'#queue-table tbody tr[data-queue="{name}"]')
        expect()(row).to_be_visible()
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        assert page.evaluate("document.documentElement.scrollWidth") <= 420
        cells = row.evaluate(CELLS)
        labels = [cell["label"].strip('"') for cell in cells]
        assert labels == ["Name", "Type", "Visible", "In flight", "Delayed", "Dead-letter queue", "Sources",
                          "Account · region"]  # fmt: skip
        for cell in cells:  # every cell whole on the screen, under its column's name
            assert cell["width"] > 0 and cell["left"] >= 0 and cell["right"] <= 420, cell
        assert f"{name}-dlq after 3 receives" in cells[5]["text"]
    finally:
        for gone in (url, dlq):
            sqs.delete_queue(QueueUrl=gone)
        sqs.close()


@pytest.mark.parametrize("width", [420, 640, 1280])
def test_the_fifo_hint_does_not_break_mid_word(page, server, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 860})
    page.goto(f"{server.endpoint_url}{UI}/")
    page.locator("#create-queue > summary").click()
    hint = page.locator("#create-queue label.check code", has_text=".fifo")
    expect()(hint).to_be_visible()
    assert hint.evaluate("e => getComputedStyle(e).whiteSpace") == "nowrap"
    assert hint.evaluate("e => e.getClientRects().length") == 1  # one piece: not split across lines
    # and it reads as part of its sentence, on the line where the sentence reaches it
    sentence = page.locator("#create-queue label.check > span", has_text="FIFO queue")
    expect()(sentence).to_have_text("FIFO queue (the name gets .fifo)")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_chart_legends_and_the_counts_say_which_is_which(
    page, manual_server, manual_sqs, manual_make_queue
) -> None:
    """The legends give the last 10-second sample, the counts now: after a send since the last sample they differ,
    and the page says why."""
    url = manual_make_queue()
    manual_sqs.send_message(QueueUrl=url, MessageBody="sampled")
    manual_server.advance(10)
    manual_sqs.send_message(QueueUrl=url, MessageBody="not yet sampled")
    page.goto(queue_page(manual_server.endpoint_url, url))
    expect()(page.locator('.count-visible [data-count="visible"]')).to_have_text("2")
    expect()(page.locator('[data-latest="visible"]')).to_have_text("1")
    expect()(page.locator('[data-part="counts"] .counts-caption')).to_have_text("Now")
    legends = page.locator("#charts .chart-legend")
    expect()(legends).to_have_count(2)
    for n in range(2):
        expect()(legends.nth(n).locator(".legend-caption")).to_have_text("Last 10-second sample:")
    expect()(page.locator("#charts .chart-note")).to_contain_text("the counts above (Now) are the queue as it is")
    # the captions are part of the live parts: still there after the next swap
    manual_server.advance(10)
    expect()(page.locator('[data-latest="visible"]')).to_have_text("2", timeout=LIVE_S * 1000)
    expect()(page.locator('[data-part="counts"] .counts-caption')).to_have_text("Now")
    expect()(legends.first.locator(".legend-caption")).to_have_text("Last 10-second sample:")


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
        page.locator("#create-queue > summary").click()  # the new-queue form open, its .fifo hint shown
        page.evaluate("window.scrollTo(0, 0)")  # the sticky top bar at the top of the whole-page shot
        page.mouse.move(0, 0)  # no row under the pointer
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        page.screenshot(path=str(folder / "console-queues.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 860})
        page.locator("a.queue-name", has_text=re.compile(r"^orders$")).click()
        expect()(message(page)).to_have_count(5)
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        page.screenshot(path=str(folder / "console-queue.png"))
        # the same two pages on a narrow screen (a phone): the queues stacked, the queue page's top
        page.set_viewport_size({"width": 420, "height": 860})
        page.goto(srv.endpoint_url + "/")
        expect()(page.locator("#queue-table tbody tr")).to_have_count(5)
        page.locator("#create-queue > summary").click()
        page.evaluate("window.scrollTo(0, 0)")
        page.mouse.move(0, 0)
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        page.screenshot(path=str(folder / "console-queues-420.png"), full_page=True)
        page.locator("a.queue-name", has_text=re.compile(r"^orders$")).click()
        expect()(message(page)).to_have_count(5)
        expect()(page.locator("#live-status")).to_have_text("live", timeout=LIVE_S * 1000)
        page.screenshot(path=str(folder / "console-queue-420.png"))
    for name in ("console-queues.png", "console-queue.png", "console-queues-420.png", "console-queue-420.png"):
        assert (folder / name).stat().st_size > 10_000


def test_screenshot_of_a_denied_try(page, iam_server, tmp_path: Path) -> None:
    """docs/screenshots/console-try-denied.png: the access card, a long policy wrapped, a denied call below its
    button with the form as it was tried."""
    folder = SCREENSHOT_DIR if os.environ.get("SQSEMU_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    url = _queue_with_a_long_policy(iam_server.endpoint_url, "payments")
    page.set_viewport_size({"width": 1280, "height": 860})
    page.goto(queue_page(iam_server.endpoint_url, url))
    result = _try_call(page, json.dumps({"aws:SourceArn": "arn:aws:sns:us-east-1:000000000000:refunds"}))
    expect()(result).to_contain_text("Denied")
    # the whole page in view, so that the sticky top bar does not cover the card
    page.set_viewport_size({"width": 1280, "height": page.evaluate("document.documentElement.scrollHeight")})
    page.locator("#access").screenshot(path=str(folder / "console-try-denied.png"))
    assert (folder / "console-try-denied.png").stat().st_size > 5_000


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
