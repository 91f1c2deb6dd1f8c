"""The parts of STS below the wire: temporary credentials (sqsemu.security.sessions: issued, checked, expiring on the
server clock, tampering refused), the roles and their trust policies (sqsemu.security.roles, the evaluator's rule 9),
the unique ids of the identity model (sqsemu.security.identity) and the [[credentials]] keys a role takes."""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest

from sqsemu.clock import ManualClock
from sqsemu.config import Config, Credential
from sqsemu.declare import ConfigFileError, load_file
from sqsemu.security.errors import ExpiredToken, InvalidClientTokenId
from sqsemu.security.evaluate import Context, evaluate, principal_for
from sqsemu.security.identity import Identity, unique_id
from sqsemu.security.policy import parse_policy
from sqsemu.security.roles import default_trust_policy, roles
from sqsemu.security.sessions import Sessions, expiration_text
from sqsemu.sts.errors import STSError
from sqsemu.sts.wire import XMLNS, encode, encode_error

A, B = "111111111111", "222222222222"
ROLE = f"arn:aws:iam::{A}:role/deployer"
USER = f"arn:aws:iam::{A}:user/dev"


def policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def config(*credentials: Credential, auth: str = "iam") -> Config:
    return Config(auth=auth, credentials=credentials)


CREDENTIALS = (
    Credential("AKIDROOT", "secret-root", A),
    Credential("AKIDDEV", "secret-dev", principal=USER),
    Credential("AKIDROLE", "secret-role", principal=ROLE),
)


# ------------------------------------------------------------------------------------------- temporary credentials


def test_issued_credentials_have_aws_shapes_and_resolve_to_their_session() -> None:
    clock = ManualClock(1_700_000_000_000)
    sessions = Sessions(config(*CREDENTIALS), clock.now_ms)
    issued = sessions.issue(ROLE, A, "ci", "AKIDDEV", 900)
    assert re.fullmatch(r"ASIA[A-Z2-7]{16}", issued.access_key_id)
    assert len(issued.secret_access_key) == 40
    assert issued.expires_s == 1_700_000_000 + 900
    assert issued.expiration == "2023-11-14T22:28:20Z" == expiration_text(1_700_000_900)
    session, secret = sessions.resolve(issued.access_key_id, issued.session_token)
    assert (session.principal, session.account, session.session_name, session.source_key) == (ROLE, A, "ci", "AKIDDEV")
    assert secret == issued.secret_access_key
    assert sessions.issue(ROLE, A, "ci", "AKIDDEV", 900).access_key_id != issued.access_key_id  # a new set each time


def test_a_token_expires_on_the_server_clock() -> None:
    clock = ManualClock(1_700_000_000_000)
    sessions = Sessions(config(*CREDENTIALS), clock.now_ms)
    issued = sessions.issue(ROLE, A, "ci", "AKIDDEV", 900)
    clock.advance(899.999)
    sessions.resolve(issued.access_key_id, issued.session_token)
    clock.advance(0.001)
    with pytest.raises(ExpiredToken) as caught:
        sessions.resolve(issued.access_key_id, issued.session_token)
    assert caught.value.message == "The security token included in the request is expired"


def test_a_token_that_is_not_the_servers_is_refused() -> None:
    clock = ManualClock(1_700_000_000_000)
    sessions = Sessions(config(*CREDENTIALS), clock.now_ms)
    issued = sessions.issue(ROLE, A, "ci", "AKIDDEV", 3600)
    raw = base64.b64decode(issued.session_token)
    longer = raw.replace(b'"e":1700003600', b'"e":1800003600')  # a later expiry, the MAC left as it was
    assert longer != raw
    other = sessions.issue(ROLE, A, "other", "AKIDDEV", 3600)
    fresh = Sessions(config(*CREDENTIALS), clock.now_ms)  # same keys: the same session key, nothing remembered
    for token in (None, "", "not base64!", base64.b64encode(longer).decode(), other.session_token):
        with pytest.raises(InvalidClientTokenId):
            fresh.resolve(issued.access_key_id, token)
    fresh.resolve(issued.access_key_id, issued.session_token)  # a restart with the same keys accepts it
    changed = Credential("AKIDDEV", "a-new-secret", principal=USER)
    rotated = Sessions(config(CREDENTIALS[0], changed, CREDENTIALS[2]), clock.now_ms)
    with pytest.raises(InvalidClientTokenId):
        rotated.resolve(issued.access_key_id, issued.session_token)


def test_a_session_whose_principal_is_no_longer_declared_is_refused() -> None:
    clock = ManualClock(1_700_000_000_000)
    key = b"k" * 32
    before = Sessions(config(*CREDENTIALS), clock.now_ms, key)
    role_session = before.issue(ROLE, A, "ci", "AKIDDEV", 3600)
    user_session = before.issue(USER, A, None, "AKIDDEV", 3600)
    after = Sessions(config(CREDENTIALS[0]), clock.now_ms, key)  # the role and the user gone from the config
    for issued in (role_session, user_session):
        with pytest.raises(InvalidClientTokenId):
            after.resolve(issued.access_key_id, issued.session_token)


# ------------------------------------------------------------------------------------------------ identities


def test_unique_ids_are_derived_from_the_arn() -> None:
    user, role = principal_for(USER, A), principal_for(ROLE, A)
    assert re.fullmatch(r"AIDA[A-Z2-7]{17}", unique_id(user))
    assert re.fullmatch(r"AROA[A-Z2-7]{17}", unique_id(role))
    assert unique_id(user) == unique_id(principal_for(USER, A)) != unique_id(principal_for(USER + "x", A))
    assert unique_id(principal_for(None, A)) == A
    session = Identity("ASIAX", principal_for(f"arn:aws:iam::{A}:role/path/to/deployer", A), (), "ci", True)
    assert session.arn == f"arn:aws:sts::{A}:assumed-role/deployer/ci"
    assert session.user_id.endswith(":ci") and session.denial_arn == session.arn
    long_term = Identity("AKIDROLE", role, ())
    assert long_term.arn == f"arn:aws:sts::{A}:assumed-role/deployer/deployer"
    assert long_term.denial_arn == ROLE


# ----------------------------------------------------------------------------------------------------- roles


def _decide(caller: str, identity_policies: list[str], trust: str) -> str:
    principal = principal_for(caller, caller.split(":")[4])
    parsed = tuple((f"identity policy {n}", parse_policy(p, False)) for n, p in enumerate(identity_policies, 1))
    decision = evaluate(principal, "sts:AssumeRole", ROLE, A, parsed, parse_policy(trust, True),
                        Context({}, lambda: 0.0), "trust policy", resource_required=True)  # fmt: skip
    return "allowed" if decision.allowed else decision.reason


ALLOW_ASSUME = policy({"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": ROLE})


def test_a_trust_policy_must_allow_even_within_the_account() -> None:
    """The evaluator's rule 9 ("Policy evaluation for requests within a single account": a role's trust policy is
    required): naming the caller suffices in its account, naming the account delegates to identity policies, and an
    identity policy alone is not enough."""
    trusts_account = default_trust_policy(A)
    trusts_dev = policy({"Effect": "Allow", "Principal": {"AWS": USER}, "Action": "sts:AssumeRole"})
    trusts_other = policy({"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{A}:user/ops"},
                           "Action": "sts:AssumeRole"})  # fmt: skip
    assert _decide(USER, [ALLOW_ASSUME], trusts_account) == "allowed"
    assert _decide(USER, [], trusts_account) == "no identity-based policy allows"
    assert _decide(USER, [], trusts_dev) == "allowed"
    assert _decide(USER, [ALLOW_ASSUME], trusts_other) == "no resource-based policy allows"
    other = f"arn:aws:iam::{B}:user/dev"
    trusts_b = policy({"Effect": "Allow", "Principal": {"AWS": B}, "Action": "sts:AssumeRole"})
    assert _decide(other, [ALLOW_ASSUME], trusts_b) == "allowed"
    assert _decide(other, [], trusts_b) == "no identity-based policy allows"
    assert _decide(other, [ALLOW_ASSUME], trusts_account) == "no resource-based policy allows"
    deny = policy({"Effect": "Deny", "Principal": "*", "Action": "sts:AssumeRole"},
                  {"Effect": "Allow", "Principal": {"AWS": USER}, "Action": "sts:AssumeRole"})  # fmt: skip
    assert _decide(USER, [ALLOW_ASSUME], deny) == "explicit deny"


def test_roles_come_from_the_credentials_with_their_trust_and_longest_session() -> None:
    trust = policy({"Effect": "Allow", "Principal": {"AWS": USER}, "Action": "sts:AssumeRole"})
    found = roles(
        (*CREDENTIALS[:2], Credential("AKIDROLE", "s", principal=ROLE, trust_policy=trust, max_session_duration=7200)),
        A,
    )
    assert list(found) == [ROLE]
    assert (found[ROLE].max_session_s, found[ROLE].trust_declared) == (7200, True)
    assert roles(CREDENTIALS, A)[ROLE].max_session_s == 3600  # AWS's default MaxSessionDuration
    assert not roles(CREDENTIALS, A)[ROLE].trust_declared


@pytest.mark.parametrize(
    ("credential", "expected"),
    [
        (Credential("K", "s", principal=USER, trust_policy="{}"), "its principal is not an IAM role"),
        (Credential("K", "s", principal=ROLE, max_session_duration=3599), "from 3600 to 43200"),
        (Credential("K", "s", principal=ROLE, max_session_duration=43201), "from 3600 to 43200"),
        (Credential("K", "s", principal=ROLE, trust_policy='{"Statement": []}'), "trust_policy of 'K'"),
    ],
)
def test_bad_role_settings_are_refused(credential: Credential, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        config(credential)


def test_a_role_declared_twice_must_agree() -> None:
    with pytest.raises(ValueError, match="declared again by 'K2'"):
        config(Credential("K1", "s", principal=ROLE), Credential("K2", "s", principal=ROLE, max_session_duration=7200))
    config(Credential("K1", "s", principal=ROLE), Credential("K2", "s", principal=ROLE))


def test_the_config_file_takes_a_roles_trust_policy_and_longest_session(tmp_path: Any) -> None:
    (tmp_path / "trust.json").write_text(default_trust_policy(A))
    (tmp_path / "sqsemu.toml").write_text(
        '[server]\nauth = "iam"\n[[credentials]]\naccess_key_id = "AKIDROLE"\nsecret_access_key = "s"\n'
        f'principal = "{ROLE}"\ntrust_policy = "trust.json"\nmax_session_duration = 7200\n'
    )
    loaded = load_file(tmp_path / "sqsemu.toml")
    (credential,) = loaded.credentials
    assert credential.max_session_duration == 7200
    assert roles(loaded.credentials, A)[ROLE].trust_declared
    (tmp_path / "bad.toml").write_text(
        '[server]\nauth = "iam"\n[[credentials]]\naccess_key_id = "AKIDROLE"\nsecret_access_key = "s"\n'
        f'principal = "{ROLE}"\nmax_session_duration = "long"\n'
    )
    with pytest.raises(ConfigFileError, match="max_session_duration"):
        load_file(tmp_path / "bad.toml")


# ------------------------------------------------------------------------------------------------------- wire


def test_answers_and_errors_are_stss_xml() -> None:
    body = encode("GetCallerIdentity", [("Arn", "a&b"), ("Account", A)], "rid").decode()
    assert body.startswith(f'<GetCallerIdentityResponse xmlns="{XMLNS}">\n  <GetCallerIdentityResult>\n')
    assert "<Arn>a&amp;b</Arn>" in body and "<RequestId>rid</RequestId>" in body
    status, raw = encode_error(STSError("no <way>", "AccessDenied", 403), "rid")
    assert status == 403
    assert raw.decode() == (
        f'<ErrorResponse xmlns="{XMLNS}">\n  <Error>\n    <Type>Sender</Type>\n    <Code>AccessDenied</Code>\n'
        "    <Message>no &lt;way&gt;</Message>\n  </Error>\n  <RequestId>rid</RequestId>\n</ErrorResponse>\n"
    )


def test_every_action_of_botocores_sts_model_is_served_or_answered_as_not_served() -> None:
    import botocore.session

    from sqsemu.sts.service import ACTIONS, NOT_SERVED

    operations = set(botocore.session.get_session().get_service_model("sts").operation_names)
    assert set(ACTIONS) | NOT_SERVED == operations
    assert not set(ACTIONS) & NOT_SERVED
