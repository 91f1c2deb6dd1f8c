"""No line of the server's text log is the policy writer's (issue 47, finding 4), over real HTTP on both wire
protocols, against a real ``python -m sqsemu --auth iam`` whose standard error is captured.

A queue policy's ``Sid`` and condition keys are text any caller who may set the queue's ``Policy`` chooses. The
fail-closed warning of a policy variable that cannot be substituted (docs/behaviour.md 11.5) names them; written
unescaped, a ``Sid`` holding a newline wrote a line of the writer's choosing (here one that looks like an ERROR of
another logger). Every such field now goes through the access log's logfmt quoting.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import ServerProcess, SignedClients, error_of

pytestmark = pytest.mark.integration

A = "111111111111"
ROOT = ("AKIDLOGROOT", "secret-log-root")
ROLE = ("AKIDLOGROLE", "secret-log-role")  # a role: no aws:username, so ${aws:username} cannot be substituted
FORGED_SID_LINE = "2030-01-01T00:00:00.000Z ERROR sqsemu.admin the admin token was disabled"
FORGED_KEY_LINE = "2030-01-01T00:00:00.000Z CRITICAL sqsemu.http forged by a condition key"


@pytest.fixture(scope="module")
def log_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp: Path = tmp_path_factory.mktemp("log-quoting")
    allow_all = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:*",
                                                                    "Resource": "*"}]})  # fmt: skip
    (tmp / "sqsemu.toml").write_text(
        f'[server]\nauth = "iam"\naccount_id = "{A}"\n\n'
        f'[[credentials]]\naccess_key_id = "{ROOT[0]}"\nsecret_access_key = "{ROOT[1]}"\naccount = "{A}"\n\n'
        f'[[credentials]]\naccess_key_id = "{ROLE[0]}"\nsecret_access_key = "{ROLE[1]}"\n'
        f'principal = "arn:aws:iam::{A}:role/forger"\npolicies = {json.dumps([allow_all])}\n'
    )
    with ServerProcess(["--config", str(tmp / "sqsemu.toml"), "--log-format", "text"]) as srv:
        yield srv


def test_a_sid_or_condition_key_holding_a_newline_writes_no_line(log_server: ServerProcess, protocol: str) -> None:
    with SignedClients(log_server.endpoint_url, protocol) as clients:
        root, role = clients.make(*ROOT), clients.make(*ROLE)
        name = f"forged-{uuid.uuid4().hex[:8]}"
        url = root.create_queue(QueueName=name)["QueueUrl"]
        policy = {"Version": "2012-10-17", "Statement": [
            {"Sid": f"own-queue\n{FORGED_SID_LINE}", "Effect": "Allow", "Principal": "*",
             "Action": "sqs:SendMessage", "Resource": f"arn:aws:sqs:*:{A}:${{aws:username}}"},
            {"Sid": "by-key", "Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage",
             "Condition": {"StringEquals": {f"aws:PrincipalTag/team\r\n{FORGED_KEY_LINE}": "${aws:username}"}}},
        ]}  # fmt: skip
        root.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
        # the Deny's variable cannot be substituted for a role: it applies, fail closed, and both are logged
        code, status, _ = error_of(lambda: role.send_message(QueueUrl=url, MessageBody="x"))
        assert (code, status) == ("AccessDenied", 403)
        lines = log_server.log_tail(max_chars=1_000_000).splitlines()
    forged = [line for line in lines if line.startswith(FORGED_SID_LINE) or line.startswith(FORGED_KEY_LINE)]
    assert forged == []
    assert not any(line.endswith("\r") for line in lines)
    warnings = [line for line in lines if "fail_closed=" in line and "statement=" in line]
    assert any('statement="own-queue\\n' + FORGED_SID_LINE + '"' in line for line in warnings), warnings
    assert any("aws:PrincipalTag/team\\r\\n" + FORGED_KEY_LINE in line for line in warnings), warnings
