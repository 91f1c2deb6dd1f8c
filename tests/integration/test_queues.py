"""Queue lifecycle and queue attributes over both wire protocols: CreateQueue, GetQueueUrl, ListQueues,
DeleteQueue, GetQueueAttributes, SetQueueAttributes (docs/behaviour.md sections 2.1-2.6, 3, 7).

Every error is checked by its Query-compatible code: boto3's JSON client reports the ``x-amzn-query-error`` code,
the Query client reports the XML ``<Code>``, so both protocols see the same ``Error.Code``.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlparse

import pytest
from botocore.exceptions import ClientError

from tests.integration.attributes import FRESH_STANDARD_KEYS

pytestmark = pytest.mark.integration


# settable numeric attributes: (name, min, max)
RANGES = [
    ("DelaySeconds", 0, 900),
    ("MaximumMessageSize", 1024, 1048576),
    ("MessageRetentionPeriod", 60, 1209600),
    ("ReceiveMessageWaitTimeSeconds", 0, 20),
    ("VisibilityTimeout", 0, 43200),
]


def uname(prefix: str = "q") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def http_status(exc: pytest.ExceptionInfo[ClientError]) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


def attrs(sqs, url: str, *names: str) -> dict[str, str]:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names) or ["All"]).get("Attributes", {})


# --- CreateQueue ---------------------------------------------------------------------------------------------


def test_create_queue_url_is_host_account_and_name(sqs, server):
    name = uname()
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    try:
        parsed = urlparse(url)
        assert parsed.scheme == "http"
        assert parsed.netloc == urlparse(server.endpoint_url).netloc
        assert parsed.path == f"/000000000000/{name}"
    finally:
        sqs.delete_queue(QueueUrl=url)


def test_create_queue_is_idempotent_without_attributes(sqs, make_queue):
    url = make_queue()
    name = url.rsplit("/", 1)[1]
    assert sqs.create_queue(QueueName=name)["QueueUrl"] == url


def test_create_queue_is_idempotent_with_equal_attributes(sqs, make_queue):
    url = make_queue(VisibilityTimeout="45", DelaySeconds="3")
    name = url.rsplit("/", 1)[1]
    again = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45", "DelaySeconds": "3"})
    assert again["QueueUrl"] == url
    # a subset of equal attributes is fine too, and so is no attribute at all
    assert sqs.create_queue(QueueName=name, Attributes={"DelaySeconds": "3"})["QueueUrl"] == url
    assert sqs.create_queue(QueueName=name)["QueueUrl"] == url


def test_create_queue_with_attribute_equal_to_default_is_idempotent(sqs, make_queue):
    url = make_queue()
    name = url.rsplit("/", 1)[1]
    assert sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"] == url


def test_create_queue_with_different_attribute_value_raises_queue_already_exists(sqs, make_queue):
    url = make_queue(VisibilityTimeout="45")
    name = url.rsplit("/", 1)[1]
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "46"})
    assert error_code(exc) == "QueueAlreadyExists"
    assert http_status(exc) == 400


def test_create_queue_compares_against_current_values_after_set(sqs, make_queue):
    url = make_queue(VisibilityTimeout="45")
    name = url.rsplit("/", 1)[1]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "50"})
    assert sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "50"})["QueueUrl"] == url
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "45"})
    assert error_code(exc) == "QueueAlreadyExists"


@pytest.mark.parametrize(
    "name",
    [
        "a" * 81,
        "has.dot",
        "has space",
        "has/slash",
        "bang!",
        "ümlaut",
        "plain.fifo",  # .fifo suffix without FifoQueue=true
    ],
    ids=["81-chars", "dot", "space", "slash", "bang", "non-ascii", "fifo-suffix-on-standard"],
)
def test_create_queue_rejects_invalid_name(sqs, name):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name)
    assert error_code(exc) == "InvalidParameterValue"
    assert http_status(exc) == 400


def test_create_queue_rejects_empty_name(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName="")
    assert error_code(exc) == "MissingParameter"
    assert http_status(exc) == 400


def test_create_queue_accepts_80_char_name_of_all_allowed_characters(sqs):
    name = ("Az09_-" + uuid.uuid4().hex + "x" * 80)[:80]
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    try:
        assert url.endswith("/" + name)
        assert sqs.get_queue_url(QueueName=name)["QueueUrl"] == url
    finally:
        sqs.delete_queue(QueueUrl=url)


def test_create_queue_accepts_one_char_name(sqs):
    url = sqs.create_queue(QueueName="Z")["QueueUrl"]
    try:
        assert url.endswith("/Z")
    finally:
        sqs.delete_queue(QueueUrl=url)


def test_create_queue_rejects_out_of_range_attribute_value(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=uname(), Attributes={"VisibilityTimeout": "43201"})
    assert error_code(exc) == "InvalidAttributeValue"


def test_create_queue_rejects_unknown_attribute_name(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=uname(), Attributes={"NoSuchAttribute": "1"})
    assert error_code(exc) == "InvalidAttributeName"


def test_create_queue_sets_attributes(sqs, make_queue):
    url = make_queue(VisibilityTimeout="45", DelaySeconds="7", MaximumMessageSize="2048")
    got = attrs(sqs, url)
    assert got["VisibilityTimeout"] == "45"
    assert got["DelaySeconds"] == "7"
    assert got["MaximumMessageSize"] == "2048"


# --- GetQueueUrl ---------------------------------------------------------------------------------------------


def test_get_queue_url_returns_the_create_url(sqs, make_queue):
    url = make_queue()
    assert sqs.get_queue_url(QueueName=url.rsplit("/", 1)[1])["QueueUrl"] == url


def test_get_queue_url_of_unknown_queue_is_non_existent_queue(sqs):
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_url(QueueName=uname("missing"))
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    assert http_status(exc) == 400


def test_queue_names_are_case_sensitive(sqs, make_queue):
    url = make_queue(name=uname("Case"))
    name = url.rsplit("/", 1)[1]
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_url(QueueName=name.lower())
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


# --- ListQueues ----------------------------------------------------------------------------------------------


def test_list_queues_filters_by_prefix(sqs, make_queue):
    prefix = uname("lst")
    mine = {make_queue(name=f"{prefix}-{i}") for i in range(3)}
    make_queue(name=uname("other"))
    got = sqs.list_queues(QueueNamePrefix=prefix)
    assert set(got["QueueUrls"]) == mine
    assert "NextToken" not in got


def test_list_queues_without_prefix_includes_new_queue(sqs, make_queue):
    url = make_queue()
    assert url in sqs.list_queues()["QueueUrls"]


def test_list_queues_prefix_is_case_sensitive(sqs, make_queue):
    prefix = uname("Cs")
    make_queue(name=prefix + "-a")
    assert "QueueUrls" not in sqs.list_queues(QueueNamePrefix=prefix.lower())


def test_list_queues_empty_result_has_no_queue_urls_key(sqs):
    got = sqs.list_queues(QueueNamePrefix=uname("nothing-here"))
    assert "QueueUrls" not in got
    assert "NextToken" not in got


def test_list_queues_paginates_with_max_results_and_next_token(sqs, make_queue):
    prefix = uname("pg")
    mine = {make_queue(name=f"{prefix}-{i}") for i in range(5)}
    seen: list[str] = []
    page = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2)
    pages = 1
    assert len(page["QueueUrls"]) == 2
    seen += page["QueueUrls"]
    while "NextToken" in page:
        page = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2, NextToken=page["NextToken"])
        pages += 1
        assert 1 <= len(page["QueueUrls"]) <= 2
        seen += page["QueueUrls"]
        assert pages <= 5
    assert pages == 3
    assert len(seen) == len(set(seen))
    assert set(seen) == mine


def test_list_queues_max_results_covering_all_has_no_next_token(sqs, make_queue):
    prefix = uname("pg")
    mine = {make_queue(name=f"{prefix}-{i}") for i in range(2)}
    got = sqs.list_queues(QueueNamePrefix=prefix, MaxResults=2)
    assert set(got["QueueUrls"]) == mine
    assert "NextToken" not in got


def test_list_queues_paginator_collects_every_queue(sqs, make_queue):
    prefix = uname("pgr")
    mine = {make_queue(name=f"{prefix}-{i}") for i in range(3)}
    urls: list[str] = []
    token = None
    while True:
        kwargs = {"QueueNamePrefix": prefix, "MaxResults": 1}
        if token:
            kwargs["NextToken"] = token
        page = sqs.list_queues(**kwargs)
        urls += page.get("QueueUrls", [])
        token = page.get("NextToken")
        if not token:
            break
    assert sorted(urls) == sorted(mine)


@pytest.mark.parametrize("max_results", [0, 1001])
def test_list_queues_max_results_out_of_range_is_invalid(sqs, max_results):
    with pytest.raises(ClientError) as exc:
        sqs.list_queues(MaxResults=max_results)
    assert error_code(exc) == "InvalidParameterValue"


def test_list_queues_accepts_max_results_limits(sqs, make_queue):
    prefix = uname("lim")
    make_queue(name=prefix)
    assert len(sqs.list_queues(QueueNamePrefix=prefix, MaxResults=1)["QueueUrls"]) == 1
    assert len(sqs.list_queues(QueueNamePrefix=prefix, MaxResults=1000)["QueueUrls"]) == 1


# --- DeleteQueue ---------------------------------------------------------------------------------------------


def test_delete_queue_then_queue_does_not_exist(sqs):
    name = uname("del")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="left behind")
    sqs.delete_queue(QueueUrl=url)
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_url(QueueName=name)
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    with pytest.raises(ClientError) as exc:
        sqs.send_message(QueueUrl=url, MessageBody="x")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
    assert url not in sqs.list_queues(QueueNamePrefix=name).get("QueueUrls", [])


def test_delete_unknown_queue_is_non_existent_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.delete_queue(QueueUrl=f"{server.endpoint_url}/000000000000/{uname('never')}")
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


# --- GetQueueAttributes --------------------------------------------------------------------------------------


def test_get_queue_attributes_all_of_fresh_queue_has_exactly_the_12_defaults(sqs, make_queue):
    url = make_queue()
    name = url.rsplit("/", 1)[1]
    got = attrs(sqs, url, "All")
    assert set(got) == FRESH_STANDARD_KEYS
    assert got["VisibilityTimeout"] == "30"
    assert got["MaximumMessageSize"] == "1048576"
    assert got["MessageRetentionPeriod"] == "345600"
    assert got["DelaySeconds"] == "0"
    assert got["ReceiveMessageWaitTimeSeconds"] == "0"
    assert got["SqsManagedSseEnabled"] == "true"
    assert got["ApproximateNumberOfMessages"] == "0"
    assert got["ApproximateNumberOfMessagesNotVisible"] == "0"
    assert got["ApproximateNumberOfMessagesDelayed"] == "0"
    assert got["QueueArn"] == f"arn:aws:sqs:us-east-1:000000000000:{name}"


@pytest.mark.parametrize("attribute", sorted(FRESH_STANDARD_KEYS))
def test_get_queue_attributes_single_name_returns_only_that_key(sqs, make_queue, attribute):
    url = make_queue()
    got = attrs(sqs, url, attribute)
    assert set(got) == {attribute}


def test_get_queue_attributes_several_names(sqs, make_queue):
    url = make_queue()
    got = attrs(sqs, url, "VisibilityTimeout", "QueueArn")
    assert set(got) == {"VisibilityTimeout", "QueueArn"}


def test_get_queue_attributes_without_names_returns_no_attributes(sqs, make_queue):
    url = make_queue()
    got = sqs.get_queue_attributes(QueueUrl=url)
    assert not got.get("Attributes")


def test_get_queue_attributes_unknown_name_is_invalid_attribute_name(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["NoSuchAttribute"])
    assert error_code(exc) == "InvalidAttributeName"
    assert http_status(exc) == 400


def test_get_queue_attributes_of_unknown_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_attributes(
            QueueUrl=f"{server.endpoint_url}/000000000000/{uname('never')}", AttributeNames=["All"]
        )
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


def test_created_and_last_modified_timestamps_are_epoch_seconds(manual_sqs, manual_server, manual_make_queue):
    now_s = manual_server.now_ms() // 1000
    url = manual_make_queue()
    got = attrs(manual_sqs, url, "CreatedTimestamp", "LastModifiedTimestamp")
    assert abs(int(got["CreatedTimestamp"]) - now_s) <= 1
    assert got["LastModifiedTimestamp"] == got["CreatedTimestamp"]


def test_last_modified_timestamp_changes_after_set_queue_attributes(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    before = attrs(manual_sqs, url, "CreatedTimestamp", "LastModifiedTimestamp")
    manual_server.advance(100)
    manual_sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "31"})
    after = attrs(manual_sqs, url, "CreatedTimestamp", "LastModifiedTimestamp")
    assert after["CreatedTimestamp"] == before["CreatedTimestamp"]
    assert int(after["LastModifiedTimestamp"]) - int(before["LastModifiedTimestamp"]) in (99, 100, 101)
    assert int(after["LastModifiedTimestamp"]) == manual_server.now_ms() // 1000


def test_approximate_counts_follow_messages(manual_sqs, manual_server, manual_make_queue):
    url = manual_make_queue()
    counts = (
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    )

    def snapshot() -> tuple[int, int, int]:
        got = attrs(manual_sqs, url, *counts)
        return tuple(int(got[c]) for c in counts)  # type: ignore[return-value]

    assert snapshot() == (0, 0, 0)
    for i in range(3):
        manual_sqs.send_message(QueueUrl=url, MessageBody=f"m{i}")
    manual_sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=60)
    assert snapshot() == (3, 0, 1)
    received = manual_sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=2, VisibilityTimeout=100)["Messages"]
    assert len(received) == 2
    assert snapshot() == (1, 2, 1)
    manual_sqs.delete_message(QueueUrl=url, ReceiptHandle=received[0]["ReceiptHandle"])
    assert snapshot() == (1, 1, 1)
    manual_server.advance(60)  # the delay ends
    assert snapshot() == (2, 1, 0)
    manual_server.advance(40)  # the visibility timeout of the remaining in-flight message ends
    assert snapshot() == (3, 0, 0)


# --- SetQueueAttributes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("attribute", "low", "high"), RANGES, ids=[r[0] for r in RANGES])
def test_set_queue_attributes_accepts_min_and_max(sqs, make_queue, attribute, low, high):
    url = make_queue()
    for value in (low, high):
        sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: str(value)})
        assert attrs(sqs, url, attribute) == {attribute: str(value)}


@pytest.mark.parametrize(("attribute", "low", "high"), RANGES, ids=[r[0] for r in RANGES])
def test_set_queue_attributes_rejects_below_min_and_above_max(sqs, make_queue, attribute, low, high):
    url = make_queue()
    original = attrs(sqs, url, attribute)
    for value in (low - 1, high + 1):
        with pytest.raises(ClientError) as exc:
            sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: str(value)})
        assert error_code(exc) == "InvalidAttributeValue", value
        assert http_status(exc) == 400
    assert attrs(sqs, url, attribute) == original


@pytest.mark.parametrize("attribute", [r[0] for r in RANGES])
def test_set_queue_attributes_rejects_non_numeric_value(sqs, make_queue, attribute):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: "abc"})
    assert error_code(exc) == "InvalidAttributeValue"


@pytest.mark.parametrize(
    "attribute",
    [
        "NoSuchAttribute",
        "QueueArn",
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
        "CreatedTimestamp",
        "LastModifiedTimestamp",
    ],
)
def test_set_queue_attributes_unknown_or_read_only_name_is_invalid_attribute_name(sqs, make_queue, attribute):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={attribute: "1"})
    assert error_code(exc) == "InvalidAttributeName"
    assert http_status(exc) == 400


def test_set_queue_attributes_several_at_once(sqs, make_queue):
    url = make_queue()
    sqs.set_queue_attributes(
        QueueUrl=url, Attributes={"VisibilityTimeout": "100", "DelaySeconds": "5", "MessageRetentionPeriod": "600"}
    )
    assert attrs(sqs, url, "VisibilityTimeout", "DelaySeconds", "MessageRetentionPeriod") == {
        "VisibilityTimeout": "100",
        "DelaySeconds": "5",
        "MessageRetentionPeriod": "600",
    }


def test_set_queue_attributes_on_unknown_queue(sqs, server):
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(
            QueueUrl=f"{server.endpoint_url}/000000000000/{uname('never')}", Attributes={"DelaySeconds": "1"}
        )
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
