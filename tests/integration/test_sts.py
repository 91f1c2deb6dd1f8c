"""STS on sqsemu's port, over real sockets with boto3 (docs/security.md, STS): GetCallerIdentity as the identity
model has each caller, AssumeRole decided by the caller's policies and the role's trust policy (ExternalId, cross
account, root refused), temporary credentials that SigV4 accepts and that act with the role's policies (the
assumed-role ARN in denials, aws:PrincipalArn the role's, aws:userid and SenderId <role id>:<session>), their
expiry walked with the manual clock, GetSessionToken, the validation errors AWS answers, and the default mode
where any key gets credentials."""

from __future__ import annotations

import json
import logging
import re
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.config import Config as BotoConfig
from harness import error_of, http_post_json, raw_request

from sqsemu.config import Config, Credential
from sqsemu.security.evaluate import principal_for
from sqsemu.security.identity import unique_id
from sqsemu.server import ServerThread
from sqsemu.sts.wire import XMLNS
from sqsemu.testing.boto import new_client

pytestmark = pytest.mark.integration

A, B = "111111111111", "222222222222"
REGION = "us-east-1"
ROLE = f"arn:aws:iam::{A}:role/deployer"
PINNED = f"arn:aws:iam::{A}:role/pinned"  # trusts the user dev only, with an ExternalId
LONG = f"arn:aws:iam::{A}:role/long"  # MaxSessionDuration 7,200
SHARED = f"arn:aws:iam::{B}:role/shared"  # account B's role, trusting account A
DEV = f"arn:aws:iam::{A}:user/dev"


def policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


ASSUME_ANY = policy({"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"})
ROLE_POLICY = policy(
    {"Sid": "own-queues", "Effect": "Allow", "Action": "sqs:*", "Resource": f"arn:aws:sqs:*:{A}:app-*",
     "Condition": {"StringEquals": {"aws:PrincipalArn": ROLE}}},
    {"Sid": "no-blocked-session", "Effect": "Deny", "Action": "sqs:SendMessage", "Resource": "*",
     "Condition": {"StringLike": {"aws:userid": "*:blocked"}}},
    {"Sid": "topics", "Effect": "Allow", "Action": "sns:CreateTopic", "Resource": f"arn:aws:sns:*:{A}:app-*"},
)  # fmt: skip
DENY_ALL = policy({"Effect": "Deny", "Action": "*", "Resource": "*"})
PINNED_TRUST = policy(
    {"Effect": "Allow", "Principal": {"AWS": DEV}, "Action": "sts:AssumeRole",
     "Condition": {"StringEquals": {"sts:ExternalId": "the-external-id"}}}
)  # fmt: skip
SHARED_TRUST = policy({"Effect": "Allow", "Principal": {"AWS": A}, "Action": "sts:AssumeRole"})
KEYS = {  # access key id: (principal, policies, trust policy, max session)
    "AKIDROOTA": (None, (), None, None),
    "AKIDDEV": (DEV, (ASSUME_ANY,), None, None),
    "AKIDNOBODY": (f"arn:aws:iam::{A}:user/nobody", (), None, None),
    "AKIDDENIED": (f"arn:aws:iam::{A}:user/denied", (ASSUME_ANY, DENY_ALL), None, None),
    "AKIDDEPLOYER": (ROLE, (ROLE_POLICY,), None, None),
    "AKIDPINNED": (PINNED, (ROLE_POLICY, ASSUME_ANY), PINNED_TRUST, None),
    "AKIDLONG": (LONG, (), None, 7200),
    "AKIDSHARED": (SHARED, (policy({"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}),), SHARED_TRUST, None),
}


def credentials() -> tuple[Credential, ...]:
    return tuple(
        Credential(key, f"secret-{key}", A if principal is None else None, principal, pols, trust, longest)
        for key, (principal, pols, trust, longest) in KEYS.items()
    )


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(Config(host="127.0.0.1", auth="iam", clock="manual", credentials=credentials())) as srv:
        yield srv


def client(srv: ServerThread, service: str, key: str, secret: str | None = None, token: str | None = None) -> Any:
    """A boto3 client of ``service`` signed with ``key`` (its ``secret-<key>`` unless given) and ``token``; no retries,
    no client-side validation (the server's errors are what is tested)."""
    config = BotoConfig(retries={"total_max_attempts": 1, "mode": "standard"}, parameter_validation=False)
    return new_client(
        service, endpoint_url=srv.endpoint_url, region_name=REGION, aws_access_key_id=key,
        aws_secret_access_key=secret or f"secret-{key}", aws_session_token=token, config=config,
    )  # fmt: skip


def as_session(srv: ServerThread, service: str, answer: dict[str, Any]) -> Any:
    """A client of ``service`` using the temporary credentials of an AssumeRole or GetSessionToken answer."""
    creds = answer["Credentials"]
    return client(srv, service, creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])


def assume(srv: ServerThread, key: str, role: str = ROLE, session: str = "ci", **more: Any) -> dict[str, Any]:
    return client(srv, "sts", key).assume_role(RoleArn=role, RoleSessionName=session, **more)


def identity(sts: Any) -> tuple[str, str, str]:
    answer = sts.get_caller_identity()
    return answer["Account"], answer["Arn"], answer["UserId"]


def role_id(arn: str) -> str:
    return unique_id(principal_for(arn, arn.split(":")[4]))


# ------------------------------------------------------------------------------------------- GetCallerIdentity


def test_get_caller_identity_answers_each_identity_as_the_model_has_it(server: ServerThread) -> None:
    assert identity(client(server, "sts", "AKIDROOTA")) == (A, f"arn:aws:iam::{A}:root", A)
    account, arn, user_id = identity(client(server, "sts", "AKIDDEV"))
    assert (account, arn) == (A, DEV)
    assert re.fullmatch(r"AIDA[A-Z2-7]{17}", user_id) and user_id == role_id(DEV)
    assert identity(client(server, "sts", "AKIDDEPLOYER")) == (
        A, f"arn:aws:sts::{A}:assumed-role/deployer/deployer", f"{role_id(ROLE)}:deployer"
    )  # fmt: skip  # a role's own key: a session named after the role
    # never denied by a policy: AWS documents that GetCallerIdentity needs no permission
    assert identity(client(server, "sts", "AKIDDENIED"))[1] == f"arn:aws:iam::{A}:user/denied"


def test_an_unsigned_or_unknown_caller_is_refused(server: ServerThread) -> None:
    code, status, _ = error_of(lambda: client(server, "sts", "AKIDUNKNOWN").get_caller_identity())
    assert (code, status) == ("InvalidClientTokenId", 403)
    answer = raw_request(server.endpoint_url, "POST", "/", b"Action=GetCallerIdentity&Version=2011-06-15",
                         {"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert answer.status == 403 and b"<Code>MissingAuthenticationToken</Code>" in answer.body


def test_a_presigned_get_caller_identity_url_is_answered(server: ServerThread) -> None:
    """A presigned GetCallerIdentity (what Vault's and EKS's AWS authentication forward) is recognised by its
    X-Amz-Credential's service."""
    url = client(server, "sts", "AKIDDEV").generate_presigned_url("get_caller_identity", ExpiresIn=60, HttpMethod="GET")
    with urllib.request.urlopen(url, timeout=10) as response:
        body = response.read().decode()
    assert f"<Arn>{DEV}</Arn>" in body and f'xmlns="{XMLNS}"' in body


# -------------------------------------------------------------------------------------------------- AssumeRole


def test_assume_role_gives_credentials_that_act_as_the_role(server: ServerThread) -> None:
    now_s = server.advance(0) // 1000
    answer = assume(server, "AKIDDEV", session="ci")
    creds, user = answer["Credentials"], answer["AssumedRoleUser"]
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", creds["AccessKeyId"]) and len(creds["SecretAccessKey"]) == 40
    assert creds["Expiration"] == datetime.fromtimestamp(now_s + 3600, UTC)  # default DurationSeconds
    session_arn = f"arn:aws:sts::{A}:assumed-role/deployer/ci"
    assert user == {"Arn": session_arn, "AssumedRoleId": f"{role_id(ROLE)}:ci"}
    assert identity(as_session(server, "sts", answer)) == (A, session_arn, f"{role_id(ROLE)}:ci")
    sqs = as_session(server, "sqs", answer)
    url = sqs.create_queue(QueueName="app-orders")["QueueUrl"]  # the role's policy, aws:PrincipalArn the role's
    assert f"/{A}/app-orders" in url
    sqs.send_message(QueueUrl=url, MessageBody="as the role")
    message = sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["SenderId"])["Messages"][0]
    assert message["Attributes"]["SenderId"] == f"{role_id(ROLE)}:ci"
    code, status, message_text = error_of(lambda: sqs.create_queue(QueueName="other"))
    assert (code, status) == ("AccessDenied", 403)
    assert message_text == (
        f"User: {session_arn} is not authorized to perform: sqs:createqueue on resource: "
        f"arn:aws:sqs:{REGION}:{A}:other because no identity-based policy allows the sqs:createqueue action"
    )
    blocked = as_session(server, "sqs", assume(server, "AKIDDEV", session="blocked"))  # aws:userid <role id>:blocked
    code, _, message_text = error_of(lambda: blocked.send_message(QueueUrl=url, MessageBody="x"))
    assert code == "AccessDenied" and message_text.endswith("with an explicit deny in an identity-based policy")
    sns = as_session(server, "sns", answer)  # SNS calls are decided as the role too
    assert sns.create_topic(Name="app-events")["TopicArn"] == f"arn:aws:sns:{REGION}:{A}:app-events"
    code, status, message_text = error_of(lambda: sns.create_topic(Name="other"))
    assert (code, status) == ("AuthorizationError", 403) and message_text.startswith(f"User: {session_arn} ")


def test_assume_role_is_decided_by_the_policies_and_the_trust_policy(server: ServerThread) -> None:
    def denied(key: str, role: str = ROLE, **more: Any) -> str:
        code, status, message = error_of(lambda: assume(server, key, role, **more))
        assert (code, status) == ("AccessDenied", 403), message
        return message

    deny = f"is not authorized to perform: sts:AssumeRole on resource: {ROLE}"
    assert denied("AKIDNOBODY") == f"User: arn:aws:iam::{A}:user/nobody {deny}"  # no identity policy allows
    assert denied("AKIDDENIED") == f"User: arn:aws:iam::{A}:user/denied {deny}"  # an explicit deny
    assert denied("AKIDROOTA") == "Roles may not be assumed by root accounts."
    missing = f"arn:aws:iam::{A}:role/missing"
    assert denied("AKIDDEV", missing) == f"User: {DEV} {deny.replace(ROLE, missing)}"
    # the pinned role trusts dev alone, with an ExternalId; an identity policy alone is not enough for others
    assert denied("AKIDDEV", PINNED).endswith(PINNED)
    assert denied("AKIDDEV", PINNED, ExternalId="wrong-id").endswith(PINNED)
    assert assume(server, "AKIDDEV", PINNED, ExternalId="the-external-id")["AssumedRoleUser"]["Arn"].endswith(
        "assumed-role/pinned/ci"
    )
    chained = as_session(server, "sts", assume(server, "AKIDDEV"))  # the deployer role's own policy: no sts:*
    code, _, message = error_of(lambda: chained.assume_role(RoleArn=LONG, RoleSessionName="again"))
    assert (code, message) == (
        "AccessDenied",
        f"User: arn:aws:sts::{A}:assumed-role/deployer/ci is not authorized to perform: sts:AssumeRole on "
        f"resource: {LONG}",
    )
    # another account's role trusting account A: A's user whose identity policy allows it may assume it
    shared = assume(server, "AKIDDEV", SHARED)
    assert identity(as_session(server, "sts", shared))[:2] == (B, f"arn:aws:sts::{B}:assumed-role/shared/ci")
    assert f"/{B}/" in as_session(server, "sqs", shared).create_queue(QueueName="in-b")["QueueUrl"]
    assert denied("AKIDNOBODY", SHARED).endswith(SHARED)


def test_an_assume_role_denial_is_logged_with_the_trust_policy(
    server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sqsemu.access")
    error_of(lambda: assume(server, "AKIDDEV", PINNED, session="logged"))
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("denied=sts:AssumeRole")]
    assert f"identity={DEV}" in line and f"resource={PINNED}" in line and "access_key_id=AKIDDEV" in line
    assert 'evaluated="identity policy 1: #1 (Allow) matched; trust policy: #1 (Allow) not matched: Condition' in line
    assert "StringEquals sts:ExternalId" in line


def test_durations_and_parameters_are_checked_as_aws_checks_them(server: ServerThread) -> None:
    sts = client(server, "sts", "AKIDDEV")

    def invalid(**params: Any) -> str:
        code, status, message = error_of(lambda: sts.assume_role(**params))
        assert (code, status) == ("ValidationError", 400), message
        return message

    constraint = "failed to satisfy constraint: Member must"
    assert invalid(RoleArn=ROLE, RoleSessionName="a b") == (
        f"1 validation error detected: Value 'a b' at 'roleSessionName' {constraint} satisfy regular expression "
        r"pattern: [\w+=,.@-]*"
    )
    assert invalid(RoleArn=ROLE, RoleSessionName="a") == (
        f"1 validation error detected: Value 'a' at 'roleSessionName' {constraint} have length greater than or "
        "equal to 2"
    )
    assert invalid(RoleArn=ROLE, RoleSessionName="x" * 65).endswith("have length less than or equal to 64")
    assert invalid(RoleArn=ROLE, RoleSessionName="ci", DurationSeconds=600) == (
        f"1 validation error detected: Value '600' at 'durationSeconds' {constraint} have value greater than or "
        "equal to 900"
    )
    assert invalid(RoleArn=ROLE, RoleSessionName="ci", DurationSeconds=43201).endswith("less than or equal to 43200")
    assert invalid(RoleSessionName="ci").startswith("1 validation error detected: Value null at 'roleArn'")
    assert invalid(RoleArn="short", RoleSessionName="a").startswith("2 validation errors detected: ")
    assert invalid(RoleArn=ROLE, RoleSessionName="ci", DurationSeconds=7200) == (
        "The requested DurationSeconds exceeds the MaxSessionDuration set for this role."
    )
    assert "session policies" in invalid(RoleArn=ROLE, RoleSessionName="ci", Policy=ASSUME_ANY)
    now_s = server.advance(0) // 1000
    long = sts.assume_role(RoleArn=LONG, RoleSessionName="ci", DurationSeconds=7200)  # within the role's maximum
    assert long["Credentials"]["Expiration"] == datetime.fromtimestamp(now_s + 7200, UTC)
    chained = as_session(server, "sts", assume(server, "AKIDDEV", PINNED, ExternalId="the-external-id"))
    code, status, message = error_of(
        lambda: chained.assume_role(RoleArn=LONG, RoleSessionName="ci", DurationSeconds=3601)
    )
    assert (code, status, message) == (
        "ValidationError",
        400,
        "The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.",
    )


def test_temporary_credentials_expire_on_the_server_clock(server: ServerThread) -> None:
    answer = assume(server, "AKIDDEV", session="short", DurationSeconds=900)
    sqs, sts = as_session(server, "sqs", answer), as_session(server, "sts", answer)
    url = sqs.create_queue(QueueName="app-expiry")["QueueUrl"]
    server.advance(899)
    sqs.send_message(QueueUrl=url, MessageBody="in time")
    server.advance(1)
    for call in (lambda: sqs.send_message(QueueUrl=url, MessageBody="late"), sts.get_caller_identity):
        assert error_of(call) == ("ExpiredToken", 403, "The security token included in the request is expired")
    assert client(server, "sqs", "AKIDDEPLOYER").get_queue_url(QueueName="app-expiry")["QueueUrl"] == url


def test_a_token_that_is_not_the_one_issued_is_refused(server: ServerThread) -> None:
    creds = assume(server, "AKIDDEV")["Credentials"]
    other = assume(server, "AKIDDEV", session="other")["Credentials"]
    for token in (None, other["SessionToken"], creds["SessionToken"][:-8] + "AAAAAAAA"):
        sqs = client(server, "sqs", creds["AccessKeyId"], creds["SecretAccessKey"], token)
        code, status, _ = error_of(sqs.list_queues)
        assert (code, status) == ("InvalidClientTokenId", 403)
    wrong_secret = client(server, "sqs", creds["AccessKeyId"], "x" * 40, creds["SessionToken"])
    assert error_of(wrong_secret.list_queues)[:2] == ("SignatureDoesNotMatch", 403)


def test_a_restarted_server_with_the_same_keys_accepts_its_tokens() -> None:
    config = Config(host="127.0.0.1", auth="iam", credentials=credentials())
    with ServerThread(config) as first:
        answer = assume(first, "AKIDDEV")
    with ServerThread(config) as second:
        assert identity(as_session(second, "sts", answer))[1] == f"arn:aws:sts::{A}:assumed-role/deployer/ci"


# --------------------------------------------------------------------------------------------- GetSessionToken


def test_get_session_token_gives_a_users_own_credentials(server: ServerThread) -> None:
    now_s = server.advance(0) // 1000
    answer = client(server, "sts", "AKIDDEV").get_session_token(DurationSeconds=1800)
    assert answer["Credentials"]["Expiration"] == datetime.fromtimestamp(now_s + 1800, UTC)
    assert identity(as_session(server, "sts", answer)) == (A, DEV, role_id(DEV))
    assert as_session(server, "sts", answer).assume_role(RoleArn=ROLE, RoleSessionName="from-session")
    session_sts = as_session(server, "sts", answer)
    assert error_of(session_sts.get_session_token) == (
        "AccessDenied", 403, "Cannot call GetSessionToken with session credentials"
    )  # fmt: skip
    role_key = client(server, "sts", "AKIDDEPLOYER")  # a role's credentials are session credentials on AWS
    assert error_of(role_key.get_session_token)[2] == "Cannot call GetSessionToken with session credentials"
    root = client(server, "sts", "AKIDROOTA").get_session_token(DurationSeconds=7200)  # a root user's: at most 1 h
    assert root["Credentials"]["Expiration"] == datetime.fromtimestamp(now_s + 3600, UTC)
    assert identity(as_session(server, "sts", root)) == (A, f"arn:aws:iam::{A}:root", A)
    code, _, message = error_of(lambda: client(server, "sts", "AKIDDEV").get_session_token(DurationSeconds=129601))
    assert (code, message) == (
        "ValidationError",
        "1 validation error detected: Value '129601' at 'durationSeconds' failed to satisfy constraint: Member must "
        "have value less than or equal to 129600",
    )
    denied = client(server, "sts", "AKIDDENIED").get_session_token()  # no policy controls it
    code, _, _ = error_of(lambda: as_session(server, "sqs", denied).list_queues())
    assert code == "AccessDenied"  # the user's own policies: its explicit deny


# ------------------------------------------------------------------------------------------------ not served


def test_web_identity_and_the_other_actions_are_answered_clearly(server: ServerThread) -> None:
    sts = client(server, "sts", "AKIDDEV")
    code, status, message = error_of(
        lambda: sts.assume_role_with_web_identity(RoleArn=ROLE, RoleSessionName="ci", WebIdentityToken="x" * 10)
    )
    assert (code, status) == ("InvalidAction", 400)
    assert "AssumeRoleWithWebIdentity is not served" in message and "GetCallerIdentity, AssumeRole" in message
    assert error_of(lambda: sts.get_federation_token(Name="fed"))[0] == "InvalidAction"


# ------------------------------------------------------------------------------------------- the default mode


def test_the_default_mode_gives_credentials_to_any_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sqsemu.access")
    with ServerThread(Config(host="127.0.0.1", access_log=True)) as srv:
        sts = client(srv, "sts", "anything", "whatever")
        assert identity(sts) == ("000000000000", "arn:aws:iam::000000000000:root", "000000000000")
        assert identity(client(srv, "sts", B, "x")) == (B, f"arn:aws:iam::{B}:root", B)  # 7.1: a 12-digit key
        answer = sts.assume_role(RoleArn=SHARED, RoleSessionName="local")
        assert answer["AssumedRoleUser"]["Arn"] == f"arn:aws:sts::{B}:assumed-role/shared/local"
        assert as_session(srv, "sqs", answer).list_queues().get("QueueUrls", []) == []
        code, _, message = error_of(lambda: sts.assume_role(RoleArn="arn:aws:iam::1:user/x", RoleSessionName="ci"))
        assert (code, message) == (
            "AccessDenied",
            "User: arn:aws:iam::000000000000:root is not authorized to perform: sts:AssumeRole on resource: "
            "arn:aws:iam::1:user/x",
        )
        assert sts.get_session_token()["Credentials"]["AccessKeyId"].startswith("ASIA")
    lines = [r.getMessage() for r in caplog.records if "service=sts" in r.getMessage()]
    assert lines[0].startswith("action=GetCallerIdentity service=sts protocol=query status=200 ")
    assert any(
        line.startswith("action=AssumeRole service=sts protocol=query status=403 error=AccessDenied") for line in lines
    )


def test_sigv4_mode_assumes_any_declared_role_without_policies() -> None:
    """``--auth sigv4`` checks signatures, no policies: a declared role may be assumed by any user, and its
    credentials are checked by SigV4 and act in the role's account."""
    keys = (Credential("AKIDUSER", "secret-AKIDUSER", principal=DEV), Credential("AKIDB", "secret-AKIDB", B,
            f"arn:aws:iam::{B}:role/worker"))  # fmt: skip
    with ServerThread(Config(host="127.0.0.1", auth="sigv4", credentials=keys)) as srv:
        answer = client(srv, "sts", "AKIDUSER").assume_role(
            RoleArn=f"arn:aws:iam::{B}:role/worker", RoleSessionName="s1"
        )
        assert identity(as_session(srv, "sts", answer)) == (
            B, f"arn:aws:sts::{B}:assumed-role/worker/s1", f"{role_id(f'arn:aws:iam::{B}:role/worker')}:s1"
        )  # fmt: skip
        assert f"/{B}/made" in as_session(srv, "sqs", answer).create_queue(QueueName="made")["QueueUrl"]
        code, _, message = error_of(
            lambda: client(srv, "sts", "AKIDUSER").assume_role(RoleArn=ROLE, RoleSessionName="s1")
        )
        assert (code, message) == ("AccessDenied", f"User: {DEV} is not authorized to perform: sts:AssumeRole on "
                                                   f"resource: {ROLE}")  # fmt: skip


def test_fault_rules_apply_to_sts_calls(server: ServerThread) -> None:
    rule = {"action": "GetCallerIdentity", "error": {"code": "Throttling", "status": 400}, "count": 1}
    status, added = http_post_json(f"{server.endpoint_url}/_sqsemu/faults", rule)
    assert status == 201, added
    sts = client(server, "sts", "AKIDDEV")
    assert error_of(sts.get_caller_identity)[:2] == ("Throttling", 400)
    assert identity(sts)[1] == DEV  # once
