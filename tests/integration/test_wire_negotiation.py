"""Raw HTTP checks (http.client, no SDK) of three wire behaviours observed on AWS:

- Query response negotiation: a Query request with ``Accept: application/json`` gets its response (errors included)
  as JSON with ``Content-Type: application/json``, in the form recorded on AWS: every member of the result present
  (``null`` when absent or empty), API model member names but ``queueUrls`` / ``messages``, maps as Name/Value lists;
- protocol detection: JSON 1.0 needs a JSON content type, so a form body with an ``X-Amz-Target`` header (Perl's
  Amazon::SQS::Simple) is a Query request, and a target without a content type is not JSON;
- JSON 1.0 batch results leave out ``Successful`` / ``Failed`` when empty (raw bodies, and through both real
  clients with the ``protocol``-parametrised ``sqs`` fixture).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode, urlparse

import pytest
from harness import RawResponse, raw_request

pytestmark = pytest.mark.integration

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"
JSON_CT = "application/x-amz-json-1.0"
FORM_CT = "application/x-www-form-urlencoded; charset=utf-8"
ACCEPT_JSON = {"Accept": "application/json"}


def query(
    endpoint: str,
    params: dict[str, Any] | list[tuple[str, Any]],
    path: str = "/",
    headers: dict[str, str] | None = None,
) -> RawResponse:
    items = [*(params.items() if isinstance(params, dict) else params), ("Version", "2012-11-05")]
    return raw_request(endpoint, "POST", path, urlencode(items).encode(), {"Content-Type": FORM_CT, **(headers or {})})


def qjson(
    endpoint: str, params: dict[str, Any] | list[tuple[str, Any]], path: str = "/", account: str | None = None
) -> RawResponse:
    """A Query request asking for JSON (as ``account`` when given); checks the negotiated content type."""
    headers = dict(ACCEPT_JSON)
    if account is not None:  # signatures are not checked; a 12-digit access key id is the account
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={account}/20240101/us-east-1/sqs/aws4_request, "
            "SignedHeaders=host, Signature=0"
        )
    resp = query(endpoint, params, path, headers)
    assert resp.headers["content-type"] == "application/json", resp.body
    return resp


def jcall(endpoint: str, op: str, payload: dict[str, Any], headers: dict[str, str] | None = None) -> RawResponse:
    body = json.dumps(payload).encode()
    return raw_request(
        endpoint, "POST", "/", body, {"Content-Type": JSON_CT, "X-Amz-Target": f"AmazonSQS.{op}", **(headers or {})}
    )


def result_of(resp: RawResponse, action: str) -> Any:
    """The ``{Action}Result`` object of a JSON-rendered Query response, after checking the envelope."""
    assert resp.status == 200, resp.body
    body = resp.json()
    assert list(body) == [f"{action}Response"]
    response = body[f"{action}Response"]
    assert response["ResponseMetadata"] == {"RequestId": resp.headers["x-amzn-requestid"]}
    return response.get(f"{action}Result")


def exact(resp: RawResponse) -> Any:
    """The whole JSON body of a successful JSON-rendered Query response with its RequestId (checked against
    ``x-amzn-RequestId``) replaced by ``"rid"``, for exact comparisons."""
    assert resp.status == 200, resp.body
    body = resp.json()
    [response] = body.values()
    assert response["ResponseMetadata"] == {"RequestId": resp.headers["x-amzn-requestid"]}
    response["ResponseMetadata"]["RequestId"] = "rid"
    return body


def uname(prefix: str = "neg") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def queue(server: Any) -> Iterator[tuple[str, str, str]]:
    """A queue created over JSON 1.0: (name, url, path); deleted afterwards."""
    name = uname()
    url = jcall(server.endpoint_url, "CreateQueue", {"QueueName": name}).json()["QueueUrl"]
    yield name, url, urlparse(url).path
    jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url})


# --- item 4: Query answered in JSON ------------------------------------------------------------------------------


def test_list_queues_with_none_and_with_one_queue_in_json(server: Any) -> None:
    account = str(uuid.uuid4().int % 10**12).zfill(12)  # a fresh account: no queues
    none = qjson(server.endpoint_url, {"Action": "ListQueues"}, account=account)
    assert exact(none) == {  # recorded on AWS (2020)
        "ListQueuesResponse": {
            "ListQueuesResult": {"NextExclusiveStartQueueName": None, "NextToken": None, "queueUrls": None},
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    created = qjson(server.endpoint_url, {"Action": "CreateQueue", "QueueName": "a"}, account=account)
    url = result_of(created, "CreateQueue")["QueueUrl"]
    try:
        assert url == f"{server.endpoint_url}/{account}/a"
        one = qjson(server.endpoint_url, {"Action": "ListQueues"}, account=account)
        assert exact(one) == {
            "ListQueuesResponse": {
                "ListQueuesResult": {"NextExclusiveStartQueueName": None, "NextToken": None, "queueUrls": [url]},
                "ResponseMetadata": {"RequestId": "rid"},
            }
        }
        assert one.body.startswith(b'{"ListQueuesResponse":{"ListQueuesResult":{"NextExclusiveStartQueueName":')
    finally:
        qjson(server.endpoint_url, {"Action": "DeleteQueue", "QueueUrl": url}, account=account)


def test_create_queue_and_list_queues_in_json(server: Any) -> None:
    prefix = uname()
    urls = []
    try:
        for suffix in ("a", "b"):
            resp = qjson(server.endpoint_url, {"Action": "CreateQueue", "QueueName": f"{prefix}-{suffix}"})
            result = result_of(resp, "CreateQueue")
            assert list(result) == ["QueueUrl"]
            assert result["QueueUrl"].endswith(f"/000000000000/{prefix}-{suffix}")
            urls.append(result["QueueUrl"])
        listed = result_of(
            qjson(server.endpoint_url, {"Action": "ListQueues", "QueueNamePrefix": prefix}), "ListQueues"
        )
        assert listed == {"NextExclusiveStartQueueName": None, "NextToken": None, "queueUrls": urls}
        paged = result_of(
            qjson(server.endpoint_url, {"Action": "ListQueues", "QueueNamePrefix": prefix, "MaxResults": "1"}),
            "ListQueues",
        )
        assert paged["queueUrls"] == urls[:1] and isinstance(paged["NextToken"], str)
        none = qjson(server.endpoint_url, {"Action": "ListQueues", "QueueNamePrefix": uname("none")})
        assert result_of(none, "ListQueues") == {
            "NextExclusiveStartQueueName": None,
            "NextToken": None,
            "queueUrls": None,
        }
    finally:
        for url in urls:
            jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url})


def test_get_queue_attributes_in_json(server: Any, queue: tuple[str, str, str]) -> None:
    params = [
        ("Action", "GetQueueAttributes"),
        ("QueueUrl", queue[1]),
        ("AttributeName.1", "QueueArn"),
        ("AttributeName.2", "ApproximateNumberOfMessages"),
    ]
    assert exact(qjson(server.endpoint_url, params)) == {
        "GetQueueAttributesResponse": {
            "GetQueueAttributesResult": {
                "Attributes": [
                    {"Name": "QueueArn", "Value": f"arn:aws:sqs:us-east-1:000000000000:{queue[0]}"},
                    {"Name": "ApproximateNumberOfMessages", "Value": "0"},
                ]
            },
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    one = qjson(server.endpoint_url, [*params[:2], ("AttributeName.1", "VisibilityTimeout")])
    assert result_of(one, "GetQueueAttributes") == {"Attributes": [{"Name": "VisibilityTimeout", "Value": "30"}]}


def test_receive_one_message_and_none_in_json(server: Any, queue: tuple[str, str, str]) -> None:
    sent = result_of(
        qjson(server.endpoint_url, {"Action": "SendMessage", "QueueUrl": queue[1], "MessageBody": "plain"}),
        "SendMessage",
    )
    assert sent == {
        "MD5OfMessageAttributes": None,
        "MD5OfMessageBody": "ac7938d40cfc2307e2bf325d28e7884e",  # md5("plain")
        "MD5OfMessageSystemAttributes": None,
        "MessageId": sent["MessageId"],
        "SequenceNumber": None,
    }
    received = qjson(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1]})
    body = exact(received)
    handle = body["ReceiveMessageResponse"]["ReceiveMessageResult"]["messages"][0]["ReceiptHandle"]
    assert isinstance(handle, str) and handle
    assert body == {  # as recorded on AWS (2024)
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {
                "messages": [
                    {
                        "Attributes": None,
                        "Body": "plain",
                        "MD5OfBody": "ac7938d40cfc2307e2bf325d28e7884e",
                        "MD5OfMessageAttributes": None,
                        "MessageAttributes": None,
                        "MessageId": sent["MessageId"],
                        "ReceiptHandle": handle,
                    }
                ]
            },
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    empty = qjson(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1]})
    assert exact(empty) == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {"messages": None},
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }


def test_send_and_receive_message_with_attributes_in_json(server: Any, queue: tuple[str, str, str]) -> None:
    body = 'quote " cr \r lt < amp &'
    binary = base64.b64encode(b"\x00\x01\x02").decode()
    sent = qjson(
        server.endpoint_url,
        [
            ("Action", "SendMessage"),
            ("QueueUrl", queue[1]),
            ("MessageBody", body),
            ("MessageAttribute.1.Name", "Foo"),
            ("MessageAttribute.1.Value.DataType", "String"),
            ("MessageAttribute.1.Value.StringValue", "Bar"),
            ("MessageAttribute.2.Name", "b"),
            ("MessageAttribute.2.Value.DataType", "Binary"),
            ("MessageAttribute.2.Value.BinaryValue", binary),
        ],
    )
    sent_result = result_of(sent, "SendMessage")
    assert list(sent_result) == [
        "MD5OfMessageAttributes",
        "MD5OfMessageBody",
        "MD5OfMessageSystemAttributes",
        "MessageId",
        "SequenceNumber",
    ]
    assert sent_result["MD5OfMessageSystemAttributes"] is None and sent_result["SequenceNumber"] is None

    received = qjson(
        server.endpoint_url,
        [
            ("Action", "ReceiveMessage"),
            ("QueueUrl", queue[1]),
            ("AttributeName.1", "SentTimestamp"),
            ("MessageAttributeName.1", "All"),
        ],
    )
    result = result_of(received, "ReceiveMessage")
    assert list(result) == ["messages"]
    [message] = result["messages"]
    [sent_timestamp] = message["Attributes"]
    assert list(sent_timestamp) == ["Name", "Value"]
    assert sent_timestamp["Name"] == "SentTimestamp" and sent_timestamp["Value"].isdigit()
    assert message == {
        "Attributes": [sent_timestamp],
        "Body": body,
        "MD5OfBody": sent_result["MD5OfMessageBody"],
        "MD5OfMessageAttributes": sent_result["MD5OfMessageAttributes"],
        "MessageAttributes": [
            {
                "Name": "Foo",
                "Value": {
                    "BinaryListValues": None,
                    "BinaryValue": None,
                    "DataType": "String",
                    "StringListValues": None,
                    "StringValue": "Bar",
                },
            },
            {
                "Name": "b",
                "Value": {
                    "BinaryListValues": None,
                    "BinaryValue": binary,
                    "DataType": "Binary",
                    "StringListValues": None,
                    "StringValue": None,
                },
            },
        ],
        "MessageId": sent_result["MessageId"],
        "ReceiptHandle": message["ReceiptHandle"],
    }


def test_batch_with_a_failed_entry_in_json(server: Any, queue: tuple[str, str, str]) -> None:
    resp = qjson(
        server.endpoint_url,
        [
            ("Action", "SendMessageBatch"),
            ("QueueUrl", queue[1]),
            ("SendMessageBatchRequestEntry.1.Id", "first"),
            ("SendMessageBatchRequestEntry.1.MessageBody", "one"),
            ("SendMessageBatchRequestEntry.2.Id", "second"),
            ("SendMessageBatchRequestEntry.2.MessageBody", "bad\x00"),
        ],
    )
    body = exact(resp)
    result = body["SendMessageBatchResponse"]["SendMessageBatchResult"]
    [failed] = result["Failed"]
    assert isinstance(failed["Message"], str) and failed["Message"]
    assert body == {
        "SendMessageBatchResponse": {
            "SendMessageBatchResult": {
                "Failed": [
                    {
                        "Code": "InvalidMessageContents",
                        "Id": "second",
                        "Message": failed["Message"],
                        "SenderFault": True,
                    }
                ],
                "Successful": [
                    {
                        "Id": "first",
                        "MD5OfMessageAttributes": None,
                        "MD5OfMessageBody": "f97c5d29941bfb1b2fdab0874906ab82",  # md5("one")
                        "MD5OfMessageSystemAttributes": None,
                        "MessageId": result["Successful"][0]["MessageId"],
                        "SequenceNumber": None,
                    }
                ],
            },
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }

    handle = jcall(server.endpoint_url, "ReceiveMessage", {"QueueUrl": queue[1]}).json()["Messages"][0]
    deleted = qjson(
        server.endpoint_url,
        [
            ("Action", "DeleteMessageBatch"),
            ("QueueUrl", queue[1]),
            ("DeleteMessageBatchRequestEntry.1.Id", "d"),
            ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", handle["ReceiptHandle"]),
            ("DeleteMessageBatchRequestEntry.2.Id", "bad"),
            ("DeleteMessageBatchRequestEntry.2.ReceiptHandle", "garbage"),
        ],
    )
    result = result_of(deleted, "DeleteMessageBatch")
    assert result["Successful"] == [{"Id": "d"}]
    [failed] = result["Failed"]
    assert list(failed) == ["Code", "Id", "Message", "SenderFault"]
    assert (failed["Code"], failed["Id"], failed["SenderFault"]) == ("ReceiptHandleIsInvalid", "bad", True)
    only_failed = qjson(
        server.endpoint_url,
        [
            ("Action", "ChangeMessageVisibilityBatch"),
            ("QueueUrl", queue[1]),
            ("ChangeMessageVisibilityBatchRequestEntry.1.Id", "c"),
            ("ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", "garbage"),
            ("ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "0"),
        ],
    )
    assert result_of(only_failed, "ChangeMessageVisibilityBatch")["Successful"] is None


def test_action_without_output_in_json(server: Any, queue: tuple[str, str, str]) -> None:
    params = {"Action": "SetQueueAttributes", "QueueUrl": queue[1], "Attribute.1.Name": "DelaySeconds"}
    resp = qjson(server.endpoint_url, {**params, "Attribute.1.Value": "1"})
    assert resp.status == 200
    assert resp.json() == {
        "SetQueueAttributesResponse": {"ResponseMetadata": {"RequestId": resp.headers["x-amzn-requestid"]}}
    }


def test_errors_in_json_have_the_xml_code_and_status(server: Any, queue: tuple[str, str, str]) -> None:
    params = {"Action": "ListQueues"}
    resp = qjson(server.endpoint_url, params, path=queue[2])
    assert resp.status == query(server.endpoint_url, params, path=queue[2]).status == 400
    assert resp.headers["x-amzn-query-error"] == "InvalidAction;Sender"
    assert resp.json() == {
        "Error": {
            "Type": "Sender",
            "Code": "InvalidAction",
            "Message": "The action ListQueues is not valid for this endpoint.",
        },
        "RequestId": resp.headers["x-amzn-requestid"],
    }
    missing = {"Action": "GetQueueUrl", "QueueName": uname("missing")}
    resp = qjson(server.endpoint_url, missing)
    xml_resp = query(server.endpoint_url, missing)
    assert resp.status == xml_resp.status == 400
    assert resp.json()["Error"] == {
        "Type": "Sender",
        "Code": xml_resp.xml().findtext(f"{NS}Error/{NS}Code"),
        "Message": "The specified queue does not exist for this wsdl version.",
    }
    assert resp.json()["Error"]["Code"] == "AWS.SimpleQueueService.NonExistentQueue"


@pytest.mark.parametrize(
    ("accept", "content_type"),
    [
        ("application/json", "application/json"),
        ("application/json, text/plain", "application/json"),
        ("text/html, Application/JSON;q=0.9", "application/json"),
        ("*/*", "text/xml"),
        ("text/xml", "text/xml"),
        (None, "text/xml"),
    ],
)
def test_accept_header_picks_the_format(
    server: Any, queue: tuple[str, str, str], accept: str | None, content_type: str
) -> None:
    headers = {} if accept is None else {"Accept": accept}
    resp = query(server.endpoint_url, {"Action": "GetQueueUrl", "QueueName": queue[0]}, headers=headers)
    assert resp.status == 200
    assert resp.headers["content-type"] == content_type
    if content_type == "text/xml":
        assert resp.xml().findtext(f"{NS}GetQueueUrlResult/{NS}QueueUrl") == queue[1]
    else:
        assert result_of(resp, "GetQueueUrl") == {"QueueUrl": queue[1]}


def test_query_get_with_accept_json(server: Any, queue: tuple[str, str, str]) -> None:
    path = f"/?{urlencode({'Action': 'GetQueueUrl', 'QueueName': queue[0]})}"
    resp = raw_request(server.endpoint_url, "GET", path, headers=ACCEPT_JSON)
    assert resp.headers["content-type"] == "application/json"
    assert result_of(resp, "GetQueueUrl") == {"QueueUrl": queue[1]}


def test_non_sqs_request_with_accept_json_is_still_the_xml_404(server: Any, queue: tuple[str, str, str]) -> None:
    resp = raw_request(server.endpoint_url, "GET", queue[2], headers=ACCEPT_JSON)
    assert resp.status == 404
    assert resp.headers["content-type"] == "text/xml"
    assert resp.body == b"<UnknownOperationException/>"


def test_json_protocol_ignores_accept(server: Any, queue: tuple[str, str, str]) -> None:
    resp = jcall(server.endpoint_url, "GetQueueUrl", {"QueueName": queue[0]}, headers=ACCEPT_JSON)
    assert resp.headers["content-type"] == JSON_CT
    assert resp.json() == {"QueueUrl": queue[1]}


# --- item 9: protocol detection --------------------------------------------------------------------------------


def test_form_body_with_versioned_target_is_a_query_request(server: Any) -> None:
    name = uname("perl")
    body = urlencode({"Action": "CreateQueue", "QueueName": name, "Version": "2012-11-05"}).encode()
    headers = {"Content-Type": FORM_CT, "X-Amz-Target": "AmazonSQSv20121105.CreateQueue"}
    resp = raw_request(server.endpoint_url, "POST", "/", body, headers)
    try:
        assert resp.status == 200, resp.body
        assert resp.headers["content-type"] == "text/xml"
        url = resp.xml().findtext(f"{NS}CreateQueueResult/{NS}QueueUrl")
        assert url and url.endswith(f"/000000000000/{name}")
        assert jcall(server.endpoint_url, "GetQueueUrl", {"QueueName": name}).json() == {"QueueUrl": url}
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": f"{server.endpoint_url}/000000000000/{name}"})


def test_form_action_wins_over_an_sqs_target(server: Any, queue: tuple[str, str, str]) -> None:
    body = urlencode({"Action": "GetQueueUrl", "QueueName": queue[0]}).encode()
    headers = {"Content-Type": FORM_CT, "X-Amz-Target": "AmazonSQS.ListQueues", **ACCEPT_JSON}
    resp = raw_request(server.endpoint_url, "POST", "/", body, headers)
    assert resp.headers["content-type"] == "application/json"
    assert result_of(resp, "GetQueueUrl") == {"QueueUrl": queue[1]}


def test_target_without_content_type_is_not_json(server: Any, queue: tuple[str, str, str]) -> None:
    body = json.dumps({"QueueName": queue[0]}).encode()
    resp = raw_request(server.endpoint_url, "POST", "/", body, {"X-Amz-Target": "AmazonSQS.GetQueueUrl"})
    assert resp.status == 404
    assert resp.body == b"<UnknownOperationException/>"
    path = f"/?{urlencode({'Action': 'GetQueueUrl', 'QueueName': queue[0]})}"
    resp = raw_request(server.endpoint_url, "GET", path, headers={"X-Amz-Target": "AmazonSQS.GetQueueUrl"})
    assert resp.status == 200
    assert resp.xml().findtext(f"{NS}GetQueueUrlResult/{NS}QueueUrl") == queue[1]


def test_application_json_with_sqs_target_is_json(server: Any, queue: tuple[str, str, str]) -> None:
    body = json.dumps({"QueueName": queue[0]}).encode()
    headers = {"Content-Type": "application/json", "X-Amz-Target": "AmazonSQS.GetQueueUrl"}
    resp = raw_request(server.endpoint_url, "POST", "/", body, headers)
    assert resp.status == 200
    assert resp.headers["content-type"] == JSON_CT
    assert resp.json() == {"QueueUrl": queue[1]}


@pytest.mark.parametrize("target", [None, "AmazonSNS.Publish", "AmazonSQSv20121105.ListQueues"])
def test_amz_json_without_an_sqs_target_is_a_json_unknown_operation(server: Any, target: str | None) -> None:
    headers = {"Content-Type": JSON_CT, **({} if target is None else {"X-Amz-Target": target})}
    resp = raw_request(server.endpoint_url, "POST", "/", b"{}", headers)
    assert resp.status == 404
    assert resp.headers["content-type"] == JSON_CT
    assert resp.headers["x-amzn-query-error"] == "UnknownOperation;Sender"
    assert resp.json()["__type"].endswith("#UnknownOperationException")


# --- item 5: JSON 1.0 batch results leave out empty lists --------------------------------------------------------


def _receipt_handle(endpoint: str, url: str) -> str:
    jcall(endpoint, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
    return str(jcall(endpoint, "ReceiveMessage", {"QueueUrl": url}).json()["Messages"][0]["ReceiptHandle"])


def test_raw_json_batch_results_leave_out_empty_lists(server: Any, queue: tuple[str, str, str]) -> None:
    endpoint, url = server.endpoint_url, queue[1]
    resp = jcall(endpoint, "SendMessageBatch", {"QueueUrl": url, "Entries": [{"Id": "a", "MessageBody": "x"}]})
    assert resp.status == 200
    assert list(resp.json()) == ["Successful"]
    assert b"Failed" not in resp.body
    resp = jcall(endpoint, "SendMessageBatch", {"QueueUrl": url, "Entries": [{"Id": "b", "MessageBody": "\x00"}]})
    assert list(resp.json()) == ["Failed"]
    for action in ("ChangeMessageVisibilityBatch", "DeleteMessageBatch"):
        entry = {"Id": "ok", "ReceiptHandle": _receipt_handle(endpoint, url), "VisibilityTimeout": 0}
        if action == "DeleteMessageBatch":
            del entry["VisibilityTimeout"]
        resp = jcall(endpoint, action, {"QueueUrl": url, "Entries": [entry]})
        assert resp.json() == {"Successful": [{"Id": "ok"}]}, action
        resp = jcall(endpoint, action, {"QueueUrl": url, "Entries": [{**entry, "ReceiptHandle": "garbage"}]})
        assert list(resp.json()) == ["Failed"], action


def test_query_xml_batch_results_are_unchanged(server: Any, queue: tuple[str, str, str]) -> None:
    resp = query(
        server.endpoint_url,
        [
            ("Action", "DeleteMessageBatch"),
            ("QueueUrl", queue[1]),
            ("DeleteMessageBatchRequestEntry.1.Id", "bad"),
            ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", "garbage"),
        ],
    )
    result = resp.xml().find(f"{NS}DeleteMessageBatchResult")
    assert result is not None
    assert [child.tag for child in result] == [f"{NS}BatchResultErrorEntry"]
    assert result.findtext(f"{NS}BatchResultErrorEntry/{NS}Code") == "ReceiptHandleIsInvalid"


def test_client_batch_results_without_failures_have_no_failed_key(sqs: Any, make_queue: Any) -> None:
    url = make_queue()
    sent = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "x"}])
    assert [e["Id"] for e in sent["Successful"]] == ["a"]
    assert "Failed" not in sent
    handle = sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"]
    changed = sqs.change_message_visibility_batch(
        QueueUrl=url, Entries=[{"Id": "c", "ReceiptHandle": handle, "VisibilityTimeout": 0}]
    )
    assert changed["Successful"] == [{"Id": "c"}]
    assert "Failed" not in changed
    deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "d", "ReceiptHandle": handle}])
    assert deleted["Successful"] == [{"Id": "d"}]
    assert "Failed" not in deleted


def test_client_batch_results_without_successes_have_no_successful_key(sqs: Any, make_queue: Any) -> None:
    url = make_queue()
    sent = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "b", "MessageBody": "\x00"}])
    assert [(e["Id"], e["Code"]) for e in sent["Failed"]] == [("b", "InvalidMessageContents")]
    assert "Successful" not in sent
    deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[{"Id": "d", "ReceiptHandle": "garbage"}])
    assert [(e["Id"], e["Code"]) for e in deleted["Failed"]] == [("d", "ReceiptHandleIsInvalid")]
    assert "Successful" not in deleted
    changed = sqs.change_message_visibility_batch(
        QueueUrl=url, Entries=[{"Id": "c", "ReceiptHandle": "garbage", "VisibilityTimeout": 0}]
    )
    assert [(e["Id"], e["Code"]) for e in changed["Failed"]] == [("c", "ReceiptHandleIsInvalid")]
    assert "Successful" not in changed
