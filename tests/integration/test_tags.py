"""Queue tags over both wire protocols (docs/behaviour.md sections 2.18-2.20, 3.6): TagQueue merging, UntagQueue,
ListQueueTags, tags on CreateQueue (``tags`` in JSON, ``Tag.N.Key`` in Query) and tag validation.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def tags_of(client: Any, url: str) -> dict[str, str]:
    return client.list_queue_tags(QueueUrl=url).get("Tags", {})


def unique_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def created(sqs: Any) -> Any:
    """Queues a test creates directly with ``create_queue``; deleted at teardown."""
    urls: list[str] = []
    yield urls
    for url in urls:
        try:
            sqs.delete_queue(QueueUrl=url)
        except ClientError:
            pass


def test_new_queue_has_no_tags_key(sqs, make_queue):
    response = sqs.list_queue_tags(QueueUrl=make_queue())
    assert "Tags" not in response


def test_tag_queue_then_list(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"team": "core", "env": "test"})
    assert tags_of(sqs, url) == {"team": "core", "env": "test"}


def test_tag_queue_merges_and_overwrites_same_key(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"a": "1", "b": "2"})
    sqs.tag_queue(QueueUrl=url, Tags={"b": "3", "c": "4"})
    assert tags_of(sqs, url) == {"a": "1", "b": "3", "c": "4"}


def test_tag_keys_are_case_sensitive(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"MyTag": "upper"})
    sqs.tag_queue(QueueUrl=url, Tags={"mytag": "lower"})
    assert tags_of(sqs, url) == {"MyTag": "upper", "mytag": "lower"}


def test_empty_tag_value_is_allowed(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"flag": ""})
    assert tags_of(sqs, url) == {"flag": ""}


def test_tag_with_allowed_special_characters(sqs, make_queue):
    url = make_queue()
    tags = {"cost-center_1.x:y/z=+@": "value with spaces _.:/=+-@", "ключ": "значение"}
    sqs.tag_queue(QueueUrl=url, Tags=tags)
    assert tags_of(sqs, url) == tags


def test_untag_removes_listed_keys_and_ignores_unknown_ones(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"a": "1", "b": "2", "c": "3"})
    sqs.untag_queue(QueueUrl=url, TagKeys=["a", "does-not-exist"])
    assert tags_of(sqs, url) == {"b": "2", "c": "3"}
    sqs.untag_queue(QueueUrl=url, TagKeys=["nothing-here"])
    assert tags_of(sqs, url) == {"b": "2", "c": "3"}


def test_untag_is_case_sensitive(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"Key": "v"})
    sqs.untag_queue(QueueUrl=url, TagKeys=["key"])
    assert tags_of(sqs, url) == {"Key": "v"}


def test_untagging_every_key_leaves_no_tags_key(sqs, make_queue):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"a": "1"})
    sqs.untag_queue(QueueUrl=url, TagKeys=["a"])
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=url)


def test_create_queue_with_tags(sqs, created):
    response = sqs.create_queue(QueueName=unique_name("tagged"), tags={"team": "core", "empty": ""})
    created.append(response["QueueUrl"])
    assert tags_of(sqs, response["QueueUrl"]) == {"team": "core", "empty": ""}


def test_create_fifo_queue_with_tags_and_attributes(sqs, created):
    response = sqs.create_queue(
        QueueName=unique_name("tagged") + ".fifo", Attributes={"FifoQueue": "true"}, tags={"kind": "fifo"}
    )
    created.append(response["QueueUrl"])
    assert tags_of(sqs, response["QueueUrl"]) == {"kind": "fifo"}


def test_tags_are_per_queue(sqs, make_queue):
    first, second = make_queue(), make_queue()
    sqs.tag_queue(QueueUrl=first, Tags={"only": "first"})
    assert "Tags" not in sqs.list_queue_tags(QueueUrl=second)


def test_longest_key_and_value_are_accepted(sqs, make_queue):
    url = make_queue()
    tags = {"k" * 128: "v" * 256}
    sqs.tag_queue(QueueUrl=url, Tags=tags)
    assert tags_of(sqs, url) == tags


@pytest.mark.parametrize(
    "tags",
    [
        {"aws:reserved": "x"},
        {"k" * 129: "x"},
        {"key": "v" * 257},
    ],
    ids=["aws-prefix", "129-char-key", "257-char-value"],
)
def test_invalid_tag_on_tag_queue_is_invalid_parameter_value(sqs, make_queue, tags):
    url = make_queue()
    sqs.tag_queue(QueueUrl=url, Tags={"keep": "me"})
    with pytest.raises(ClientError) as exc:
        sqs.tag_queue(QueueUrl=url, Tags=tags)
    assert error_code(exc) == "InvalidParameterValue"
    assert tags_of(sqs, url) == {"keep": "me"}


@pytest.mark.parametrize("tags", [{"aws:reserved": "x"}, {"k" * 129: "x"}], ids=["aws-prefix", "129-char-key"])
def test_invalid_tag_on_create_queue_is_invalid_parameter_value(sqs, tags):
    name = unique_name("badtag")
    with pytest.raises(ClientError) as exc:
        sqs.create_queue(QueueName=name, tags=tags)
    assert error_code(exc) == "InvalidParameterValue"
    with pytest.raises(ClientError) as exc:
        sqs.get_queue_url(QueueName=name)  # the queue was not created
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


@pytest.mark.parametrize(
    "operation, kwargs",
    [
        ("tag_queue", {"Tags": {"a": "b"}}),
        ("untag_queue", {"TagKeys": ["a"]}),
        ("list_queue_tags", {}),
    ],
)
def test_tag_operations_on_unknown_queue(sqs, server, operation, kwargs):
    url = f"{server.endpoint_url}/{ACCOUNT}/missing-{uuid.uuid4().hex}"
    with pytest.raises(ClientError) as exc:
        getattr(sqs, operation)(QueueUrl=url, **kwargs)
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"
