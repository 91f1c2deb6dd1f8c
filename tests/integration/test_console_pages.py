"""The console's pages over real HTTP (issue 47, finding 12): "Try the call" answers with Post/Redirect/Get and an
anchor to its result, which names the deciding statement, or every statement and the element that did not match;
"As" shows each identity whole; a dead-letter queue's page says whose dead-letter queue it is; the account and the
region never break inside. The same in a real browser: tests/integration/test_console_browser.py.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from harness import ServerProcess, client_for
from harness.pages import Page, Pages

UI = "/_sqsemu/ui"
ACCOUNT = "000000000000"
ROOT_KEY, READER_KEY = "AKIDROOT", "AKIDREADER"
READER = f"arn:aws:iam::{ACCOUNT}:user/reader-of-the-orders-queue-in-the-checkout-service"
TOPIC = f"arn:aws:sns:us-east-1:{ACCOUNT}:checkout-events"


def _result(page: Page) -> str:
    """The text of the try's result (``#try-result``), which the page holds once."""
    assert page.text.count('id="try-result"') == 1, page.text[:2000]
    found = re.search(r'<div id="try-result".*?</div>', page.text, re.S)
    assert found is not None
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", found.group(0)))).strip()


@pytest.fixture(scope="module")
def iam_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """``--auth iam``: a root key and a reader whose own policy allows only ReceiveMessage."""
    reader_policy = {"Statement": [{"Sid": "receive-only", "Effect": "Allow", "Action": "sqs:ReceiveMessage",
                                    "Resource": "*"}]}  # fmt: skip
    path = Path(tmp_path_factory.mktemp("console-pages")) / "sqsemu.toml"
    path.write_text(
        '[server]\nauth = "iam"\n'
        f'[[credentials]]\naccess_key_id = "{ROOT_KEY}"\nsecret_access_key = "secret"\n'
        f'[[credentials]]\naccess_key_id = "{READER_KEY}"\nsecret_access_key = "secret"\nprincipal = "{READER}"\n'
        f"policies = [{json.dumps(json.dumps(reader_policy))}]\n"
    )
    with ServerProcess(["--config", str(path)]) as srv:
        yield srv


def _queue_sent_to_by_the_topic(endpoint: str) -> str:
    """A queue whose policy lets the reader send only from :data:`TOPIC`; its console path."""
    root = client_for(endpoint, "json", access_key_id=ROOT_KEY, secret_access_key="secret")
    name = f"try-{uuid.uuid4().hex[:8]}"
    try:
        url = root.create_queue(QueueName=name)["QueueUrl"]
        arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}"
        statement = {"Sid": "checkout-events-only", "Effect": "Allow", "Principal": {"AWS": READER},
                     "Action": "sqs:SendMessage", "Resource": arn,
                     "Condition": {"ArnEquals": {"aws:SourceArn": TOPIC}}}  # fmt: skip
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps({"Statement": [statement]})})
    finally:
        root.close()
    return f"{UI}/queues/{ACCOUNT}/us-east-1/{name}"


def test_try_the_call_answers_303_to_a_page_that_shows_the_result_where_it_scrolls(iam_server: ServerProcess) -> None:
    path = _queue_sent_to_by_the_topic(iam_server.endpoint_url)
    pages = Pages(iam_server.endpoint_url)
    wrong = json.dumps({"aws:SourceArn": TOPIC + "-elsewhere"})
    posted = pages.post(path + "/try-call", {"access_key_id": READER_KEY, "action": "SendMessage", "context": wrong})
    # Post/Redirect/Get: the post answers 303 to the queue page, the call in its query, scrolled to the result
    assert posted.status == 303, (posted.status, posted.text[:300])
    target = urlsplit(posted.location)
    assert target.path == path and target.fragment == "try-result"
    assert parse_qs(target.query) == {"try_as": [READER_KEY], "try_call": ["SendMessage"], "try_context": [wrong]}
    shown = pages.follow(posted)
    assert shown.status == 200
    result = _result(shown)
    assert result.startswith(
        f"Denied: SendMessage as {READER}: no statement of its identity-based policies or of the queue policy "
        "allows it."
    ), result
    # which statement failed, and on what: the statement, the condition and its key
    assert (
        "queue policy, statement checkout-events-only (Allow): does not apply, its Condition ArnEquals "
        "aws:SourceArn does not match."
    ) in result
    assert "identity policy 1, statement receive-only (Allow): does not apply, its Action does not match." in result
    assert "An SDK gets AccessDenied: User: " + READER in result
    assert "decided by" not in result
    # a reload is a GET of the same URL: the same result, nothing resent
    again = pages.get(f"{target.path}?{target.query}")
    assert again.status == 200 and _result(again) == result
    # the form holds what was tried; "As" shows every identity whole
    assert f'name="access_key_id" value="{READER_KEY}" checked>' in shown.text
    assert f'<code class="token">{READER_KEY}</code> {READER}</span>' in shown.text
    assert f'<code class="token">{ROOT_KEY}</code> root of {ACCOUNT}</span>' in shown.text
    assert "<option selected>SendMessage</option>" in shown.text
    assert f'name="context" value="{wrong}"' in html.unescape(shown.text)


def test_an_allowed_try_names_the_deciding_statement(iam_server: ServerProcess) -> None:
    path = _queue_sent_to_by_the_topic(iam_server.endpoint_url)
    pages = Pages(iam_server.endpoint_url)
    context = json.dumps({"aws:SourceArn": TOPIC})
    shown = pages.follow(
        pages.post(path + "/try-call", {"access_key_id": READER_KEY, "action": "SendMessage", "context": context})
    )
    result = _result(shown)
    assert result.startswith(f"Allowed: SendMessage as {READER}, by queue policy statement checkout-events-only.")
    assert "queue policy, statement checkout-events-only (Allow): applies; it decided." in result
    assert 'class="try-result try-allowed" role="status"' in shown.text
    root = _result(pages.follow(pages.post(path + "/try-call", {"access_key_id": ROOT_KEY, "action": "PurgeQueue"})))
    assert root.startswith(f"Allowed: PurgeQueue as arn:aws:iam::{ACCOUNT}:root: a root user may make any call")


def test_a_try_that_cannot_be_decided_says_why_in_the_same_place(iam_server: ServerProcess) -> None:
    path = _queue_sent_to_by_the_topic(iam_server.endpoint_url)
    pages = Pages(iam_server.endpoint_url)
    bad = pages.follow(pages.post(path + "/try-call", {"access_key_id": READER_KEY, "action": "SendMessage",
                                                       "context": "[1"}))  # fmt: skip
    assert bad.status == 200 and 'class="try-result try-error" role="alert"' in bad.text
    assert _result(bad) == "The context must be a JSON object of condition keys and values."
    unknown = pages.follow(pages.post(path + "/try-call", {"access_key_id": "AKIDNOBODY", "action": "SendMessage"}))
    assert "no [[credentials]] entry has the access key id 'AKIDNOBODY'" in _result(unknown)
    long = pages.post(path + "/try-call", {"access_key_id": READER_KEY, "action": "SendMessage",
                                           "context": json.dumps({"aws:SourceArn": "x" * 9000})})  # fmt: skip
    assert long.status == 400 and "longer than 8192 characters" in _result(long)


def test_a_dead_letter_queues_page_says_whose_dead_letter_queue_it_is(server: ServerProcess) -> None:
    sqs = client_for(server.endpoint_url, "json")
    name = f"dlq-card-{uuid.uuid4().hex[:8]}"
    dlq = sqs.create_queue(QueueName=name + "-dlq")["QueueUrl"]
    arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}-dlq"
    redrive = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 3})
    source = sqs.create_queue(QueueName=name, Attributes={"RedrivePolicy": redrive})["QueueUrl"]
    try:
        pages = Pages(server.endpoint_url)
        card = _card(pages.get(f"{UI}/queues/{ACCOUNT}/us-east-1/{name}-dlq"), "dead-letter")
        assert card.startswith(f"Dead-letter queue This is the dead-letter queue of {name}: their messages")
        assert "It has no dead-letter queue of its own" in card and "None:" not in card
        assert "Redrive messages" in card
        card = _card(pages.get(f"{UI}/queues/{ACCOUNT}/us-east-1/{name}"), "dead-letter")
        assert f"Messages received 3 times without being deleted move to {name}-dlq." in card
        assert "This is the dead-letter queue" not in card
    finally:
        for url in (source, dlq):
            sqs.delete_queue(QueueUrl=url)
        sqs.close()


def _card(page: Page, card_id: str) -> str:
    """The text of the card ``<section id=card_id>`` of ``page``."""
    assert page.status == 200, page.status
    found = re.search(rf'<section class="card[^"]*" id="{card_id}".*?</section>', page.text, re.S)
    assert found is not None, page.text[:500]
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", found.group(0)))).strip()


def test_the_account_and_the_region_never_break_inside(server: ServerProcess) -> None:
    sqs = client_for(server.endpoint_url, "json", access_key_id="123456789012", region="ap-southeast-2")
    name = f"region-{uuid.uuid4().hex[:8]}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    try:
        pages = Pages(server.endpoint_url)
        kept_whole = '<span class="nowrap">123456789012</span> · <span class="nowrap">ap-southeast-2</span>'
        assert kept_whole in pages.get(f"{UI}/?q={name}").text
        queue = pages.get(f"{UI}/queues/123456789012/ap-southeast-2/{name}").text
        assert kept_whole.replace('class="nowrap">ap', 'class="nowrap" id="queue-region">ap') in queue
    finally:
        sqs.delete_queue(QueueUrl=url)
        sqs.close()
