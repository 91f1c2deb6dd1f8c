"""What the operator (or a person with a browser) is told where a mistake used to pass in silence (issue 47, finding
13), over a real server process and real sockets:

- a client in the wrong region gets AWS's ``QueueDoesNotExist`` unchanged, and the server's log names where a queue
  of that name does exist (one line per name, rate-limited);
- ``--auth iam`` without ``--admin-token`` says at start that the operator's routes are open;
- a queue URL opened in a browser leads to the console's page of that queue (SDK requests keep AWS's 404).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from botocore.exceptions import ClientError
from harness import ServerProcess, client_for

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"  # what Firefox sends
BROWSER = {"Accept": BROWSER_ACCEPT, "Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}


@pytest.fixture
def clients(server: ServerProcess, protocol: str) -> Iterator[dict[str, Any]]:
    """``{"us-east-1": client, "eu-west-2": client}`` speaking ``protocol`` to the shared server."""
    made = {region: client_for(server.endpoint_url, protocol, region=region) for region in ("us-east-1", "eu-west-2")}
    yield made
    for client in made.values():
        close = getattr(client, "close", None)
        if close is not None:
            close()


def _error(call: Any, **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    error = caught.value.response
    return error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"], error["Error"]["Message"]


def test_a_wrong_region_gets_aws_answer_and_the_log_names_the_queues_region(
    server: ServerProcess, clients: dict[str, Any], protocol: str
) -> None:
    """Before: the answer alone, nothing in the log. The answer stays exactly the one of a queue that exists
    nowhere; one INFO line names the region (and account) where the queue is, once per name and minute."""
    name = f"hint-{protocol}-{uuid.uuid4().hex[:8]}"
    url = clients["us-east-1"].create_queue(QueueName=name)["QueueUrl"]
    wrong = clients["eu-west-2"]
    nowhere = _error(wrong.get_queue_url, QueueName=f"nowhere-{uuid.uuid4().hex[:8]}")
    assert nowhere[2].startswith("The specified queue does not exist")  # Query adds "for this wsdl version."
    assert _error(wrong.get_queue_url, QueueName=name) == nowhere
    assert _error(wrong.send_message, QueueUrl=url, MessageBody="lost?") == nowhere
    hint = (
        f"INFO sqsemu.engine QueueDoesNotExist for queue '{name}' in region eu-west-2, account {ACCOUNT} (the "
        f"caller's); a queue of that name exists in region us-east-1, account {ACCOUNT}: is the client's region "
        "(or account) the queue's?"
    )
    log = server.log_tail(1_000_000)
    assert log.count(hint) == 1, log[-3000:]  # the second call within the minute adds no line
    assert "nowhere-" not in log  # a name that exists nowhere gets no hint


def _iam_config(tmp_path: Path, token: str | None) -> Path:
    path = tmp_path / "sqsemu.toml"
    server = '[server]\nauth = "iam"\n' + (f'admin_token = "{token}"\n' if token else "")
    path.write_text(
        server + '[[credentials]]\naccess_key_id = "AKIDHINTS"\nsecret_access_key = "secret"\n'
        'account = "111111111111"\n',
        encoding="utf-8",
    )
    return path


def test_auth_iam_without_an_admin_token_warns_at_start_that_the_operators_routes_are_open(tmp_path: Path) -> None:
    """Before: nothing at start said that /_sqsemu/*, the console and /metrics answer anyone under --auth iam."""
    with ServerProcess(["--config", str(_iam_config(tmp_path, None))]) as srv:
        log = srv.log_tail(100_000)
        warning = re.search(
            r"WARNING sqsemu\.banner --auth iam checks every SQS call, but the operator's routes are .*", log
        )
        assert warning is not None, log
        for route in ("/_sqsemu/*", "the web console", "/metrics", "--admin-token"):
            assert route in warning.group(0)
        assert requests.get(f"{srv.endpoint_url}/_sqsemu/clock", timeout=10).status_code == 200  # open indeed


def test_a_queue_url_opened_in_a_browser_leads_to_the_consoles_page_of_that_queue(server: ServerProcess) -> None:
    """Before: 404 ``UnknownOperationException`` for the browser too. Now a browser's GET (HTML accepted, no
    Action) is sent to the console's page of the queue, in its region; an SDK's request keeps AWS's answers."""
    name = f"browsed-{uuid.uuid4().hex[:8]}"
    url = client_for(server.endpoint_url, "json", region="eu-west-2").create_queue(QueueName=name)["QueueUrl"]
    path = f"/{ACCOUNT}/{name}"
    opened = requests.get(server.endpoint_url + path, headers=BROWSER, allow_redirects=False, timeout=10)
    assert opened.status_code == 307, opened.text
    assert opened.headers["location"] == f"/_sqsemu/ui/queues/{ACCOUNT}/eu-west-2/{name}"
    page = requests.get(server.endpoint_url + path, headers=BROWSER, timeout=10)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert name in page.text and url.rsplit("/", 1)[-1] == name
    plain = requests.get(server.endpoint_url + path, timeout=10)  # curl, an SDK: no HTML asked for
    assert plain.status_code == 404 and plain.text == "<UnknownOperationException/>"
    home = f"home-{uuid.uuid4().hex[:8]}"  # a queue in the server's region, which unsigned calls address
    client_for(server.endpoint_url, "json").create_queue(QueueName=home)
    call = f"{server.endpoint_url}/{ACCOUNT}/{home}"
    with_action = requests.get(call, params={"Action": "GetQueueAttributes"}, headers=BROWSER, timeout=10)
    assert with_action.status_code == 200 and "GetQueueAttributesResponse" in with_action.text  # a call, answered
    json_call = requests.post(
        call,
        data=json.dumps({"QueueUrl": call, "AttributeNames": ["QueueArn"]}),
        headers={
            "X-Amz-Target": "AmazonSQS.GetQueueAttributes",
            "Content-Type": "application/x-amz-json-1.0",
            **BROWSER,
        },
        timeout=10,
    )
    assert json_call.status_code == 200 and json_call.json()["Attributes"]["QueueArn"].endswith(f":{home}")
