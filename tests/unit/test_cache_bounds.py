"""The caches the request path keeps of client-sent strings are bounded in bytes, not only in entries
(sqsemu.cachebound): distinct large ``QueueUrl`` values, ``Authorization`` credential scopes, Host headers, policy
documents, principal ARNs and credential-scope regions leave (almost) nothing behind, many distinct ordinary ones
stay under each cache's byte bound, and ordinary values are still remembered (the next call finds them: the same
object comes back).

What a cache holds is measured with tracemalloc: the bytes still allocated after the calls, with every value the
test made dropped, so only what the server's caches kept is counted."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from sqsemu.cachebound import CacheBound, size_of
from sqsemu.clock import ManualClock
from sqsemu.config import Config, Credential
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.protocol import urls
from sqsemu.protocol.shapes import SendMessageRequest
from sqsemu.protocol.urls import caller_namespace, credential_from_authorization, parse_queue_url
from sqsemu.security import evaluate, host, policy
from sqsemu.security.evaluate import candidates, principal_for
from sqsemu.security.host import GOOD_HOSTS, valid_host
from sqsemu.security.iam import FIXED_CONTEXTS, AccessControl
from sqsemu.security.policy import parse_policy

MIB = 1024 * 1024
SLACK = 256 * 1024
"""Bytes allowed beyond a bound: the interpreter's own small allocations while the calls ran."""
CONFIG = Config()


def retained(calls: Callable[[], None]) -> int:
    """Bytes still allocated after ``calls()`` (which keeps no reference to what it made): what caches kept."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        calls()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


@pytest.fixture(autouse=True)
def empty_caches() -> Iterator[None]:
    """Each test starts with the process-wide caches empty (earlier tests in this worker filled them)."""
    urls.URL_CACHE_BOUND.clear(urls._url_cache)
    urls.NAMESPACE_CACHE_BOUND.clear(urls._ns_cache)
    urls.SERVICE_CACHE_BOUND.clear(urls._services)
    host.GOOD_HOSTS_BOUND.clear(GOOD_HOSTS)
    policy.PARSED_BOUND.clear(policy._parsed)
    evaluate.CANDIDATES_BOUND.clear(evaluate._candidates)
    yield


# ------------------------------------------------------------------------------------------------ the bound itself


def test_a_bound_refuses_large_entries_and_empties_the_cache_when_full() -> None:
    bound = CacheBound(max_entries=3, max_bytes=100, max_entry_bytes=40)
    cache: dict[int, int] = {}
    assert not bound.admit(cache, 41)  # over the entry limit: not kept
    for n in range(3):
        assert bound.admit(cache, 30)
        cache[n] = n
    assert bound.held == 90 and len(cache) == 3
    assert bound.admit(cache, 20)  # 110 bytes would be over 100: emptied first
    assert cache == {} and bound.held == 20
    with pytest.raises(ValueError):
        CacheBound(1, 10, 11)
    assert size_of("ab", None) == size_of("ab")


# ------------------------------------------------------------------------------------------------ queue URLs


def test_distinct_large_queue_urls_are_not_held() -> None:
    def calls() -> None:
        for n in range(40):
            url = f"http://localhost:9324/000000000000/q{n}" + "x" * 1_000_000
            assert parse_queue_url(url) == ("000000000000", f"q{n}" + "x" * 1_000_000)

    assert retained(calls) < SLACK  # 80 MB before the bound: every URL and its name kept whole


def test_many_distinct_long_queue_urls_stay_under_the_cache_bound() -> None:
    def calls() -> None:
        for n in range(6000):
            parse_queue_url(f"http://{'h' * 1200}:9324/000000000000/q{n}")

    assert retained(calls) < urls.URL_CACHE_BOUND.max_bytes + SLACK  # 2.8 MB before the bound


def test_an_ordinary_queue_url_is_still_remembered() -> None:
    url = "http://localhost:9324/000000000000/orders"
    first = parse_queue_url(url)
    for n in range(50):
        parse_queue_url(f"http://localhost:9324/000000000000/other-{n}" + "y" * 100_000)
    # kept in the cache (compiled, a tuple result is boxed anew on each return, so identity says nothing)
    assert urls._url_cache.get(url) == first == ("000000000000", "orders")


# ------------------------------------------------------------------------------------------------ credentials


def authorization(key: str) -> str:
    return f"AWS4-HMAC-SHA256 Credential={key}/20240101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=0"


def test_distinct_large_credentials_are_not_held() -> None:
    def calls() -> None:
        for n in range(100):
            credential = credential_from_authorization(authorization(f"AKID{n}" + "a" * 100_000))
            assert caller_namespace(credential, CONFIG) == Namespace("000000000000", "eu-west-1")

    assert retained(calls) < SLACK  # 10 MB before the bound


def test_many_distinct_credentials_stay_under_the_cache_bound() -> None:
    def calls() -> None:
        for n in range(6000):
            caller_namespace(credential_from_authorization(authorization(f"AKID{n:06d}" + "k" * 600)), CONFIG)

    assert retained(calls) < urls.NAMESPACE_CACHE_BOUND.max_bytes + SLACK  # 1.8 MB before the bound


def test_many_distinct_credential_scopes_stay_under_the_service_cache_bound() -> None:
    def calls() -> None:
        for n in range(6000):
            assert urls.scope_service(credential_from_authorization(authorization(f"AKID{n:06d}" + "k" * 600))) == "sqs"

    assert retained(calls) < urls.SERVICE_CACHE_BOUND.max_bytes + SLACK


def test_the_service_of_a_scope_is_read_the_same_remembered_or_not() -> None:
    for credential in ("AKID/20240101/eu-west-1/sns/aws4_request", "AKID/20240101/eu-west-1", "a/b/c/d/e/f", None):
        first = urls.scope_service(credential)
        assert urls.scope_service(credential) == first  # the second time from the memo
    assert urls.scope_service("AKID/20240101/eu-west-1/sns/aws4_request") == "sns"
    assert urls.scope_service("AKID/20240101/eu-west-1") is None
    assert urls.scope_service("a/b/c/d/e/f") == "d"


def test_an_ordinary_credential_is_still_remembered() -> None:
    credential = credential_from_authorization(authorization("111122223333"))
    first = caller_namespace(credential, CONFIG)
    assert first == Namespace("111122223333", "eu-west-1")
    assert caller_namespace(credential, CONFIG) is first


# ------------------------------------------------------------------------------------------------ Host headers


def test_distinct_large_valid_hosts_are_not_held() -> None:
    def calls() -> None:
        for n in range(100):
            assert valid_host(f"[fe80::1%25z{n}" + "z" * 50_000 + "]:9324")  # a zone has no length limit

    assert retained(calls) < SLACK  # 5 MB before the bound


def test_an_ordinary_host_is_still_remembered_and_the_set_stays_bounded() -> None:
    for n in range(3000):
        assert valid_host(f"host-{n}.{'d' * 60}.example:9324")
    assert len(GOOD_HOSTS) <= host.GOOD_HOSTS_BOUND.max_entries
    assert sum(size_of(h) for h in GOOD_HOSTS) <= host.GOOD_HOSTS_BOUND.max_bytes
    assert valid_host("localhost:9324") and "localhost:9324" in GOOD_HOSTS


# ------------------------------------------------------------------------------------------------ policies


def document(sid: str, principal: str = "*") -> str:
    statement = {"Sid": sid, "Effect": "Allow", "Principal": principal, "Action": "sqs:SendMessage"}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def test_distinct_large_policies_are_not_held() -> None:
    def calls() -> None:
        for n in range(30):
            assert parse_policy(document(f"s{n}" + "s" * 300_000), True).statements

    assert retained(calls) < SLACK  # 18 MB before the bound: the text and the parsed Sid of each


def test_an_ordinary_policy_is_still_remembered() -> None:
    text = document("ordinary")
    first = parse_policy(text, True)
    for n in range(10):
        parse_policy(document(f"big-{n}" + "b" * 300_000), True)
    assert parse_policy(text, True) is first


def test_candidates_of_distinct_long_principal_arns_are_not_held() -> None:
    queue_policy = parse_policy(document("any"), True)

    def calls() -> None:
        for n in range(20):
            principal = principal_for(f"arn:aws:iam::111122223333:user/u{n}" + "u" * 500_000, "111122223333")
            assert candidates(queue_policy, principal, "sqs:SendMessage")

    assert retained(calls) < SLACK  # 10 MB before the bound
    alice = principal_for("arn:aws:iam::111122223333:user/alice", "111122223333")
    assert candidates(queue_policy, alice, "sqs:SendMessage") is candidates(queue_policy, alice, "sqs:SendMessage")


def test_the_context_keys_of_many_regions_stay_bounded() -> None:
    clock = ManualClock()
    allow = {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}
    identity_policy = json.dumps({"Version": "2012-10-17", "Statement": [allow]})
    credential = Credential("K", "s", "111111111111", "arn:aws:iam::111111111111:user/alice", (identity_policy,))
    config = Config(auth="iam", account_id="111111111111", credentials=(credential,))
    control = AccessControl(config, Broker(clock), clock)

    def calls() -> None:
        for n in range(4 * FIXED_CONTEXTS):  # a signed caller names any region in its credential scope
            caller = Namespace("111111111111", f"region-{n}")
            request = SendMessageRequest(queue_url="http://localhost/111111111111/orders")
            control.check("K", "SendMessage", request, ("111111111111", "orders"), caller, {"scheme": "http"}, "r")

    assert retained(calls) < control.fixed_bound.max_bytes + SLACK  # 2.9 MB before the bound, growing without end
