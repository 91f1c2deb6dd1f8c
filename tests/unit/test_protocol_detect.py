"""Protocol detection: JSON 1.0 needs a JSON content type; everything else is Query, whatever ``X-Amz-Target`` says
("Making query API requests using AWS JSON protocol in Amazon SQS", "... using AWS query protocol ...")."""

from __future__ import annotations

import random
from urllib.parse import parse_qsl, unquote

import pytest

from sqsemu.protocol import detect as detect_module
from sqsemu.protocol.detect import Protocol, detect, looks_like_json, parse_form, unquote_text

JSON_CT = "application/x-amz-json-1.0"
FORM_CT = "application/x-www-form-urlencoded; charset=utf-8"


def test_json_by_target_and_content_type() -> None:
    d = detect("POST", "AmazonSQS.SendMessage", JSON_CT, b"", b"{}")
    assert d.protocol is Protocol.JSON
    assert d.action == "SendMessage"
    assert d.params == []


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "Application/JSON", "APPLICATION/X-AMZ-JSON-1.0"],
)
def test_json_with_other_json_content_types(content_type: str) -> None:
    d = detect("POST", "AmazonSQS.ListQueues", content_type, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, "ListQueues")


def test_target_without_content_type_is_query() -> None:
    d = detect("POST", "AmazonSQS.ListQueues", None, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.QUERY, None)
    d = detect("GET", "AmazonSQS.ListQueues", None, b"Action=ListQueues", b"")
    assert (d.protocol, d.action) == (Protocol.QUERY, "ListQueues")


def test_form_body_with_target_is_query() -> None:
    # Perl's Amazon::SQS::Simple: a versioned target on a form-encoded body
    body = b"Action=CreateQueue&QueueName=perl-q&Version=2012-11-05"
    d = detect("POST", "AmazonSQSv20121105.CreateQueue", FORM_CT, b"", body)
    assert (d.protocol, d.action) == (Protocol.QUERY, "CreateQueue")
    assert ("QueueName", "perl-q") in d.params
    d = detect("POST", "AmazonSQS.ListQueues", FORM_CT, b"", b"Action=GetQueueUrl&QueueName=q")
    assert (d.protocol, d.action) == (Protocol.QUERY, "GetQueueUrl")  # the form's Action wins over the target


def test_json_foreign_target_has_no_action() -> None:
    d = detect("POST", "AmazonSNS.Publish", JSON_CT, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, None)
    d = detect("POST", "AmazonSQSv20121105.CreateQueue", JSON_CT, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, None)


def test_json_content_type_without_target() -> None:
    d = detect("POST", None, JSON_CT, b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.JSON, None)


def test_generic_json_content_type_without_sqs_target_is_query() -> None:
    d = detect("POST", None, "application/json", b"Action=ListQueues", b"{}")
    assert (d.protocol, d.action) == (Protocol.QUERY, "ListQueues")
    d = detect("POST", "AmazonSNS.Publish", "application/json", b"", b"{}")
    assert (d.protocol, d.action) == (Protocol.QUERY, None)


def test_query_form_body() -> None:
    d = detect("POST", None, FORM_CT, b"", b"Action=ListQueues&Version=2012-11-05")
    assert (d.protocol, d.action) == (Protocol.QUERY, "ListQueues")
    assert ("Version", "2012-11-05") in d.params


def test_query_string_get() -> None:
    d = detect("GET", None, None, b"Action=GetQueueUrl&QueueName=q", b"")
    assert (d.protocol, d.action) == (Protocol.QUERY, "GetQueueUrl")


def test_query_string_on_post() -> None:
    d = detect("POST", None, FORM_CT, b"Action=PurgeQueue", b"QueueUrl=x")
    assert d.action == "PurgeQueue"
    assert ("QueueUrl", "x") in d.params


def test_query_body_values_are_url_decoded() -> None:
    d = detect("POST", None, FORM_CT, b"", b"Action=SendMessage&MessageBody=a%20b+c%0D%22")
    assert ("MessageBody", 'a b c\r"') in d.params


def test_neither() -> None:
    d = detect("GET", None, None, b"", b"")
    assert (d.protocol, d.action) == (Protocol.QUERY, None)


def test_looks_like_json() -> None:
    assert looks_like_json("AmazonSQS.X", JSON_CT)
    assert looks_like_json(None, "application/x-amz-json-1.0")
    assert looks_like_json("AmazonSNS.Publish", "application/x-amz-json-1.1")
    assert looks_like_json("AmazonSQS.X", "application/json")
    assert not looks_like_json("AmazonSQS.X", None)
    assert not looks_like_json("AmazonSQS.X", FORM_CT)
    assert not looks_like_json(None, "application/json")
    assert not looks_like_json(None, FORM_CT)
    assert not looks_like_json(None, None)


@pytest.mark.parametrize(
    "text",
    ["", "a", "a=", "=b", "a=b&&c=d", "a+b=c+d", "q=%2F%41%zz%", "x=%E2%82%AC&y=%C3", "a=b=c&;", "k=v+%2B+w"],
)
def test_form_pairs_are_read_as_parse_qsl_reads_them(text: str) -> None:
    assert parse_form(text) == parse_qsl(text, keep_blank_values=True)


def test_unquote_text_reads_escapes_as_urllib_does() -> None:
    """Random texts of escapes (valid, either case, cut short, invalid UTF-8), ASCII and not: the same as
    ``urllib.parse.unquote(errors="replace")``."""
    rng = random.Random(32)
    pieces = ["%41", "%e2%82%ac", "%E2%82", "%zz", "%", "%4", "a", "+", "=", "€", "%C3%A9", "%ff", "%2F", "x%2"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert unquote_text(text) == unquote(text, errors="replace"), text


def test_remembered_unquoted_values_are_bounded() -> None:
    """Short escaped values are remembered (queue URLs repeat), never more than ``_UNQUOTED_LIMIT`` of them."""
    for i in range(detect_module._UNQUOTED_LIMIT * 2 + 5):
        assert parse_form(f"QueueUrl=http%3A%2F%2Fh%2F{i}") == [("QueueUrl", f"http://h/{i}")]
        assert len(detect_module._UNQUOTED) <= detect_module._UNQUOTED_LIMIT
