"""sqsemu.security.iam (AccessControl) and sqsemu.security.identity: which actions each call needs and on which
queue (the SQS reference table), the request context a call has (TLS, source IP, the server's clock, the queue's
tags), the identities of [[credentials]] (principal, policies inline or from files), and POST
/_sqsemu/authorize's answers."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqsemu.clock import ManualClock
from sqsemu.config import Config, Credential
from sqsemu.declare import ConfigFileError, load_file
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.engine.errors import AccessDenied
from sqsemu.protocol.shapes import (
    CancelMessageMoveTaskRequest,
    ListQueuesRequest,
    SendMessageBatchRequest,
    SendMessageRequest,
    StartMessageMoveTaskRequest,
)
from sqsemu.security.actions import REQUIRED
from sqsemu.security.iam import AccessControl

A, B = "111111111111", "222222222222"
NS = Namespace(A, "us-east-1")
URL = f"http://localhost/{A}/orders"


def policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(action: str | list[str], resource: str = "*", **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def make(*credentials: Credential, clock: ManualClock | None = None) -> tuple[AccessControl, Broker]:
    clock = clock or ManualClock()
    broker = Broker(clock)
    config = Config(auth="iam", account_id=A, credentials=credentials)
    return AccessControl(config, broker, clock), broker


def user(key: str, *policies: str, account: str = A, name: str = "alice") -> Credential:
    return Credential(key, "secret", account, f"arn:aws:iam::{account}:user/{name}", tuple(policies))


def check(control: AccessControl, key: str, action: str, request: object, addressed: Any = (A, "orders"),
          scope: dict[str, Any] | None = None, caller: Namespace = NS) -> None:  # fmt: skip
    control.check(key, action, request, addressed, caller, scope or {"scheme": "http"}, "req-1")


def test_every_operation_has_its_actions() -> None:
    from sqsemu.protocol.operations import OPERATIONS

    assert set(OPERATIONS) <= set(REQUIRED)
    assert REQUIRED["SendMessageBatch"] == (("sqs:SendMessage", "queue"),)
    assert [a for a, _ in REQUIRED["StartMessageMoveTask"]] == [
        "sqs:StartMessageMoveTask", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
        "sqs:SendMessage",
    ]  # fmt: skip


def test_a_batch_needs_the_single_action() -> None:
    control, _ = make(user("K", policy(allow("sqs:SendMessage"))), user("N", policy(allow("sqs:SendMessageBatch"))))
    request = SendMessageBatchRequest(queue_url=URL)
    check(control, "K", "SendMessageBatch", request)
    with pytest.raises(AccessDenied, match="sqs:sendmessage on resource"):
        check(control, "N", "SendMessageBatch", request)
    assert control.denied == {"sqs:SendMessage": 1}


def test_move_tasks_need_the_source_actions_and_send_on_the_destination() -> None:
    dlq = f"arn:aws:sqs:us-east-1:{A}:orders-dlq"
    dest = f"arn:aws:sqs:us-east-1:{A}:orders"
    mover = policy(allow(["sqs:StartMessageMoveTask", "sqs:ReceiveMessage", "sqs:DeleteMessage",
                          "sqs:GetQueueAttributes", "sqs:CancelMessageMoveTask"], dlq))  # fmt: skip
    control, _ = make(user("K", mover, policy(allow("sqs:SendMessage", dest))), user("N", mover))
    start = StartMessageMoveTaskRequest(source_arn=dlq, destination_arn=dest)
    check(control, "K", "StartMessageMoveTask", start, None)
    with pytest.raises(AccessDenied, match=f"sqs:sendmessage on resource: {dest}"):
        check(control, "N", "StartMessageMoveTask", start, None)
    check(control, "N", "StartMessageMoveTask", StartMessageMoveTaskRequest(source_arn=dlq), None)
    handle = base64.b64encode(json.dumps({"taskId": "t", "sourceArn": dlq}).encode()).decode()
    check(control, "N", "CancelMessageMoveTask", CancelMessageMoveTaskRequest(task_handle=handle), None)
    other = base64.b64encode(json.dumps({"taskId": "t", "sourceArn": dest}).encode()).decode()
    with pytest.raises(AccessDenied, match="sqs:cancelmessagemovetask"):
        check(control, "N", "CancelMessageMoveTask", CancelMessageMoveTaskRequest(task_handle=other), None)
    check(control, "N", "CancelMessageMoveTask", CancelMessageMoveTaskRequest(task_handle="not base64"), None)


def test_list_queues_is_on_the_account() -> None:
    control, _ = make(user("K", policy(allow("sqs:ListQueues", f"arn:aws:sqs:us-east-1:{A}:*"))), user("N"))
    check(control, "K", "ListQueues", ListQueuesRequest(), None)
    with pytest.raises(AccessDenied, match=f"sqs:listqueues on resource: arn:aws:sqs:us-east-1:{A}:\\*"):
        check(control, "N", "ListQueues", ListQueuesRequest(), None)


def test_the_context_has_tls_source_ip_clock_and_tags() -> None:
    clock = ManualClock()
    conditions = {
        "Bool": {"aws:SecureTransport": "true"},
        "IpAddress": {"aws:SourceIp": "10.0.0.0/8"},
        "DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"},
        "StringEquals": {"aws:ResourceTag/team": "orders", "aws:username": "alice", "aws:PrincipalType": "User"},
    }
    control, broker = make(user("K", policy(allow("sqs:SendMessage", Condition=conditions))), clock=clock)
    broker.create_queue(NS, "orders", {}, {"team": "orders"})
    good = {"scheme": "https", "client": ("10.1.2.3", 5000)}
    check(control, "K", "SendMessage", SendMessageRequest(queue_url=URL), scope=good)
    for bad in ({**good, "scheme": "http"}, {**good, "client": ("192.0.2.1", 1)}):
        with pytest.raises(AccessDenied):
            check(control, "K", "SendMessage", SendMessageRequest(queue_url=URL), scope=bad)
    clock.advance(max(0.0, 1893456000 - clock.now_ms() / 1000) + 1)  # the manual clock is aws:CurrentTime
    with pytest.raises(AccessDenied):
        check(control, "K", "SendMessage", SendMessageRequest(queue_url=URL), scope=good)


def test_the_queue_policy_is_read_at_each_call() -> None:
    control, broker = make(Credential("R", "s", A), user("K"))
    queue = broker.create_queue(NS, "orders", {}, {})
    with pytest.raises(AccessDenied):
        check(control, "K", "SendMessage", SendMessageRequest(queue_url=URL))
    arn = f"arn:aws:iam::{A}:user/alice"
    broker.set_queue_attributes(queue, {"Policy": policy(allow("sqs:SendMessage", queue.arn, Principal={"AWS": arn}))})
    check(control, "K", "SendMessage", SendMessageRequest(queue_url=URL))
    check(control, "R", "PurgeQueue", SendMessageRequest(queue_url=URL))  # the root user


def test_unknown_keys_and_actions_are_left_to_the_call() -> None:
    control, _ = make(user("K"))
    check(control, "nobody", "SendMessage", SendMessageRequest(queue_url=URL))
    check(control, "K", "NoSuchAction", object())


def test_authorize_answers_like_a_policy_simulator() -> None:
    control, broker = make(user("K", policy(allow("sqs:Receive*"))))
    broker.create_queue(NS, "orders", {}, {})
    answer = control.authorize({"access_key_id": "K", "action": "ReceiveMessage", "queue": URL})
    assert (answer["decision"], answer["deciding"]) == ("allowed", "identity policy 1 statement #1")
    answer = control.authorize({"access_key_id": "K", "action": "sqs:SendMessage", "queue": "orders"})
    assert answer["decision"] == "denied" and answer["message"].endswith("allows the sqs:sendmessage action")
    role = f"arn:aws:iam::{B}:role/x"
    queue_policy = policy(allow("sqs:SendMessage", f"arn:aws:sqs:us-east-1:{A}:orders", Principal={"AWS": role}))
    call = {"principal": role, "policies": [policy(allow("sqs:*"))], "action": "SendMessage"}
    answer = control.authorize({**call, "queue": f"arn:aws:sqs:us-east-1:{A}:orders", "queue_policy": queue_policy})
    assert answer["decision"] == "allowed" and [c["decision"] for c in answer["checks"]] == ["allowed"]
    for bad, why in (
        ({"access_key_id": "X", "action": "SendMessage"}, "no [[credentials]] entry"),
        ({"action": "SendMessage"}, 'give "access_key_id" or "principal"'),
        ({"access_key_id": "K"}, '"action" must be'),
        ({"access_key_id": "K", "action": "Fly", "queue": "q"}, "unknown SQS action"),
        ({"access_key_id": "K", "action": "SendMessage", "queue": "q", "context": []}, '"context" must be'),
        ({"access_key_id": "K", "action": "SendMessage", "queue": "q", "queue_policy": "{"}, "queue policy:"),
        ({"principal": "bob", "action": "SendMessage"}, "principal must be"),
        ({"principal": role, "policies": ["{}"], "action": "SendMessage"}, "identity policy:"),
    ):
        with pytest.raises(ValueError, match=why.replace("[", "\\[").replace("]", "\\]")):
            control.authorize(bad)


def test_authorize_sees_the_facts_the_call_would() -> None:
    """A hypothetical call's ``aws:RequestedRegion`` is the region of the queue it names, as the real call's is the
    region it is made in (docs/behaviour.md 11.5), for a declared key and for a principal given with its policies."""
    no_eu = policy(allow("sqs:*"), {"Effect": "Deny", "Action": "sqs:*", "Resource": "*",
                                    "Condition": {"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}})  # fmt: skip
    control, broker = make(user("K", no_eu))
    eu = Namespace(A, "eu-west-1")
    broker.create_queue(eu, "orders", {}, {})
    eu_url = f"http://localhost/{A}/orders"
    with pytest.raises(AccessDenied):
        check(control, "K", "SendMessage", SendMessageRequest(queue_url=eu_url), caller=eu)
    queue = f"arn:aws:sqs:eu-west-1:{A}:orders"
    answer = control.authorize({"access_key_id": "K", "action": "SendMessage", "queue": queue})
    assert answer["decision"] == "denied" and answer["reason"] == "explicit deny"
    as_principal = {"principal": f"arn:aws:iam::{A}:user/alice", "policies": [no_eu], "action": "SendMessage"}
    answer = control.authorize({**as_principal, "queue": queue})
    assert answer["decision"] == "denied" and answer["reason"] == "explicit deny"
    answer = control.authorize({**as_principal, "queue": f"arn:aws:sqs:us-east-1:{A}:orders"})
    assert answer["decision"] == "allowed"


def test_decide_as_fails_closed_on_a_queue_policy_that_does_not_parse() -> None:
    """The Lambda API's and the mappings' decisions (``decide_as``) deny on a queue whose ``Policy`` does not parse,
    as SQS calls do (docs/behaviour.md 11.4), rather than raising."""
    control, broker = make(user("K", policy(allow("sqs:*"))))
    queue = broker.create_queue(NS, "orders", {}, {})
    queue.attributes["Policy"] = "{not json"  # never by a call: every way in checks it
    principal = control.identities["K"].principal
    decision = control.decide_as(principal, control.identities["K"].policies, "sqs:ReceiveMessage",
                                 f"arn:aws:sqs:us-east-1:{A}:orders", "us-east-1")  # fmt: skip
    assert not decision.allowed and decision.reason.startswith("the queue policy does not parse")


def test_identities_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(policy(allow("sqs:*")))
    (tmp_path / "c.toml").write_text(
        '[server]\nauth = "iam"\n[[credentials]]\naccess_key_id = "K"\nsecret_access_key = "s"\n'
        f'principal = "arn:aws:iam::{B}:role/r"\npolicies = ["p.json", \'{policy(allow("sqs:Get*"))}\']\n'
    )
    loaded = load_file(str(tmp_path / "c.toml"))
    (credential,) = loaded.credentials
    assert credential.policies[0] == str(tmp_path / "p.json")
    control, _ = make(*loaded.credentials)
    identity = control.identities["K"]
    assert identity.principal.account == B and [label for label, _ in identity.policies] == [
        "identity policy p.json", "identity policy 2"]  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ('principal = "bob"', "principal must be an IAM user or role ARN"),
        ('principal = "arn:aws:iam::111111111111:group/g"', "principal must name an IAM user or role"),
        ('policies = ["{}"]', "has policies but no principal"),
        # a root user's ARN as principal: its policies (a Deny among them) would be silently ignored
        (
            'principal = "arn:aws:iam::111111111111:root"\npolicies = [\'{"Statement": {"Effect": "Deny", '
            '"Action": "*", "Resource": "*"}}\']',
            "a root user has no identity-based policies",
        ),
        ('principal = "arn:aws:iam::111111111111:user/u"\npolicies = ["missing.json"]', "cannot read the policy"),
        ('principal = "arn:aws:iam::111111111111:user/u"\npolicies = [\'{"Statement": []}\']', "Statement is required"),
        ('principal = "arn:aws:iam::111111111111:user/u"\naccount = "222222222222"', "is in account 111111111111"),
        ("policies = 5", "policies must be a list"),
        ("principal = 5", "principal must be a string"),
    ],
)
def test_bad_identities_are_refused(tmp_path: Path, entry: str, why: str) -> None:
    (tmp_path / "c.toml").write_text(f'[[credentials]]\naccess_key_id = "K"\nsecret_access_key = "s"\n{entry}\n')
    with pytest.raises(ConfigFileError, match=why):
        load_file(str(tmp_path / "c.toml"))


def test_the_console_shows_the_policy_and_tries_a_call() -> None:
    """Under --auth iam the queue page shows the queue policy and a form that tries a call against it."""
    import html

    from tests.unit.test_console import NS as CONSOLE_NS
    from tests.unit.test_console import UI, Console

    account = CONSOLE_NS.account_id
    reader = f"arn:aws:iam::{account}:user/reader"
    config = Config(clock="manual", auth="iam", credentials=(Credential("AKIDROOT", "s"), user("AKIDREAD",
                    policy(allow("sqs:ReceiveMessage")), account=account, name="reader")))  # fmt: skip
    console = Console(config)
    try:
        arn = f"arn:aws:sqs:us-east-1:{account}:orders"
        queue_policy = policy(allow("sqs:SendMessage", arn, Sid="tls", Principal={"AWS": reader},
                                    Condition={"Bool": {"aws:SecureTransport": "true"}}))  # fmt: skip
        console.queue("orders", Policy=queue_policy)
        page = console.get(f"{UI}/queues/{account}/us-east-1/orders")
        assert page.status == 200 and "Access policy" in page.text
        assert '"aws:SecureTransport": "true"' in html.unescape(page.text)
        # the post answers 303 to the queue page, which shows the result below the form's button, the form filled
        # in as tried (Post/Redirect/Get: tests/integration/test_console_try.py)
        posted = console.post(f"{UI}/queues/{account}/us-east-1/orders/try-call",
                              {"access_key_id": "AKIDREAD", "action": "SendMessage"})  # fmt: skip
        assert posted.status == 303 and posted.headers["location"].endswith("#try-result")
        tried = console.follow(posted)
        assert tried.status == 200 and 'id="try-result" class="try-result try-denied" role="alert"' in tried.text
        assert "Denied: SendMessage as arn:aws:iam::" in html.unescape(tried.text)
        assert "statement tls (Allow): does not apply, its Condition Bool aws:SecureTransport" in tried.text
        assert 'value="AKIDREAD" checked>' in tried.text and "<option selected>SendMessage" in tried.text
        tried = console.follow(console.post(f"{UI}/queues/{account}/us-east-1/orders/try-call",
                                            {"access_key_id": "AKIDREAD", "action": "SendMessage",
                                             "context": '{"aws:SecureTransport": "true"}'}))  # fmt: skip
        assert tried.status == 200 and 'class="try-result try-allowed" role="status"' in tried.text
        assert "Allowed: SendMessage as arn:aws:iam::" in html.unescape(tried.text)
        assert ", by queue policy statement tls." in html.unescape(tried.text)
        assert '{"aws:SecureTransport": "true"}' in html.unescape(tried.text)  # the context input keeps it
        bad = console.follow(console.post(f"{UI}/queues/{account}/us-east-1/orders/try-call",
                                          {"access_key_id": "AKIDREAD", "action": "SendMessage",
                                           "context": "[1"}))  # fmt: skip
        assert bad.status == 200 and "The context must be a JSON object" in bad.text
        assert 'class="try-result try-error" role="alert"' in bad.text and 'id="error"' not in bad.text
    finally:
        console.close()


def test_the_console_has_no_access_card_without_iam() -> None:
    from tests.unit.test_console import UI, Console

    console = Console()
    try:
        console.queue("orders")
        assert "Access policy" not in console.get(f"{UI}/queues/000000000000/us-east-1/orders").text
        assert console.post(f"{UI}/queues/000000000000/us-east-1/orders/try-call", {}).status == 404
    finally:
        console.close()


AUTHORIZE_KEYS = st.sampled_from(
    ["access_key_id", "principal", "policies", "action", "queue", "context", "queue_policy", "region", "account",
     "source_arn", "destination_arn"]
)  # fmt: skip
AUTHORIZE_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=30), st.lists(st.text(max_size=10), max_size=3),
    st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3),
    st.sampled_from(["K", "SendMessage", "sqs:SendMessage", "StartMessageMoveTask", URL, "orders", "http://x/y/z/w",
                     f"arn:aws:sqs:us-east-1:{A}:orders", f"arn:aws:iam::{A}:user/u", "sns.amazonaws.com",
                     policy(allow("sqs:*")), "{", "arn:aws:sqs:::"]),
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(AUTHORIZE_KEYS, AUTHORIZE_VALUES, max_size=7))
def test_authorize_answers_or_refuses_any_body(body: dict[str, Any]) -> None:
    """POST /_sqsemu/authorize: any JSON object is answered or refused with a reason (400), never a 500."""
    control, broker = make(user("K", policy(allow("sqs:*"))))
    broker.create_queue(NS, "orders", {}, {})
    try:
        answer = control.authorize(body)
    except ValueError as exc:
        assert str(exc)
    else:
        assert answer["decision"] in ("allowed", "denied")
