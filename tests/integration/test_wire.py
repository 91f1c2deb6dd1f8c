"""Raw HTTP checks of both wire protocols, with http.client / sockets instead of an SDK (docs/behaviour.md 1, 7):
protocol detection, XML layout and escaping, JSON errors and ``x-amzn-query-error``, status codes, unknown actions,
malformed JSON, Query over GET, queue-URL paths, the Host header in queue URLs, accounts from the access key,
``X-Amzn-Trace-Id``, empty batches and a long-poll client that disconnects.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import socket
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlparse

import pytest
from harness import Receiver, start_long_poll, wait_for_long_polls, waiting_long_polls

pytestmark = pytest.mark.integration

NS = "http://queue.amazonaws.com/doc/2012-11-05/"
JSON_CT = "application/x-amz-json-1.0"
FORM_CT = "application/x-www-form-urlencoded; charset=utf-8"
TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"


# --- raw HTTP helpers ------------------------------------------------------------------------------------------


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def xml(self) -> ET.Element:
        return strip_ns(ET.fromstring(self.body))


def strip_ns(root: ET.Element) -> ET.Element:
    for el in root.iter():
        el.tag = el.tag.split("}", 1)[-1]
    return root


def raw(
    endpoint: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None, timeout: float = 30
) -> Response:
    parsed = urlparse(endpoint)
    assert parsed.hostname is not None
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def auth_header(access_key: str) -> dict[str, str]:
    return {
        "Authorization": f"AWS4-HMAC-SHA256 Credential={access_key}/20240101/us-east-1/sqs/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
        "X-Amz-Date": "20240101T000000Z",
    }


def query(
    endpoint: str,
    params: dict[str, Any] | list[tuple[str, Any]],
    path: str = "/",
    headers: dict[str, str] | None = None,
    version: bool = True,
) -> Response:
    items = list(params.items()) if isinstance(params, dict) else list(params)
    if version:
        items.append(("Version", "2012-11-05"))
    body = urlencode(items).encode()
    return raw(endpoint, "POST", path, body, {"Content-Type": FORM_CT, **(headers or {})})


def query_get(endpoint: str, params: dict[str, Any], path: str = "/") -> Response:
    return raw(endpoint, "GET", f"{path}?{urlencode(params)}")


def jcall(
    endpoint: str, op: str, payload: dict[str, Any], path: str = "/", headers: dict[str, str] | None = None
) -> Response:
    return raw(
        endpoint,
        "POST",
        path,
        json.dumps(payload).encode(),
        {
            "Content-Type": JSON_CT,
            "X-Amz-Target": f"AmazonSQS.{op}",
            "x-amzn-query-mode": "true",
            **(headers or {}),
        },
    )


def call(
    endpoint: str,
    protocol: str,
    op: str,
    payload: dict[str, Any],
    path: str = "/",
    headers: dict[str, str] | None = None,
) -> Response:
    """One operation in either protocol from a JSON-shaped payload of scalars (Query: Action + same names)."""
    if protocol == "json":
        return jcall(endpoint, op, payload, path, headers)
    return query(endpoint, {"Action": op, **payload}, path, headers)


def error_code(resp: Response, protocol: str) -> str:
    if protocol == "json":
        return resp.headers.get("x-amzn-query-error", "").split(";")[0]
    return resp.xml().findtext("Error/Code") or ""


def queue_url_of(resp: Response, protocol: str) -> str:
    assert resp.status == 200, resp.body
    if protocol == "json":
        return resp.json()["QueueUrl"]
    url = resp.xml().findtext("CreateQueueResult/QueueUrl") or resp.xml().findtext("GetQueueUrlResult/QueueUrl")
    assert url is not None, resp.body
    return url


def uname(prefix: str = "wire") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def queue(server) -> Any:
    """A queue created over raw JSON; yields (name, url, path); deleted afterwards."""
    name = uname()
    resp = jcall(server.endpoint_url, "CreateQueue", {"QueueName": name})
    url = resp.json()["QueueUrl"]
    yield name, url, urlparse(url).path
    jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url})


def receive_bodies(endpoint: str, url: str) -> list[str]:
    resp = jcall(endpoint, "ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 10})
    assert resp.status == 200, resp.body
    return [m["Body"] for m in resp.json().get("Messages", [])]


# --- protocol detection and response layout --------------------------------------------------------------------


def test_json_request_gets_json_response(server, queue):
    resp = jcall(server.endpoint_url, "GetQueueAttributes", {"QueueUrl": queue[1], "AttributeNames": ["All"]})
    assert resp.status == 200
    assert resp.headers["content-type"].startswith(JSON_CT)
    assert resp.headers.get("x-amzn-requestid")
    attributes = resp.json()["Attributes"]
    assert all(isinstance(v, str) for v in attributes.values())  # queue attributes are always strings
    assert attributes["VisibilityTimeout"] == "30"


def test_query_request_gets_xml_response_with_result_and_request_id(server):
    name = uname()
    resp = query(server.endpoint_url, {"Action": "CreateQueue", "QueueName": name})
    try:
        assert resp.status == 200
        assert resp.headers["content-type"].startswith("text/xml")
        root = ET.fromstring(resp.body)
        assert root.tag == f"{{{NS}}}CreateQueueResponse"
        strip_ns(root)
        assert (root.findtext("CreateQueueResult/QueueUrl") or "").endswith(f"/000000000000/{name}")
        assert root.findtext("ResponseMetadata/RequestId")
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": f"{server.endpoint_url}/000000000000/{name}"})


def test_query_without_version_is_accepted(server, queue):
    resp = query(server.endpoint_url, {"Action": "GetQueueUrl", "QueueName": queue[0]}, version=False)
    assert resp.status == 200
    assert resp.xml().findtext("GetQueueUrlResult/QueueUrl") == queue[1]


def test_query_over_get_with_parameters_in_url(server, queue):
    resp = query_get(server.endpoint_url, {"Action": "GetQueueUrl", "QueueName": queue[0], "Version": "2012-11-05"})
    assert resp.status == 200
    assert resp.xml().findtext("GetQueueUrlResult/QueueUrl") == queue[1]


def test_query_get_on_queue_url_path(server, queue):
    resp = query_get(
        server.endpoint_url, {"Action": "GetQueueAttributes", "AttributeName.1": "VisibilityTimeout"}, path=queue[2]
    )
    assert resp.status == 200
    root = resp.xml()
    attrs = {a.findtext("Name"): a.findtext("Value") for a in root.findall("GetQueueAttributesResult/Attribute")}
    assert attrs == {"VisibilityTimeout": "30"}


def test_query_action_without_output_has_only_response_metadata(server, queue):
    resp = query(
        server.endpoint_url,
        {
            "Action": "SetQueueAttributes",
            "QueueUrl": queue[1],
            "Attribute.1.Name": "DelaySeconds",
            "Attribute.1.Value": "1",
        },
    )
    assert resp.status == 200
    root = ET.fromstring(resp.body)
    assert root.tag == f"{{{NS}}}SetQueueAttributesResponse"
    strip_ns(root)
    assert [child.tag for child in root] == ["ResponseMetadata"]
    assert root.findtext("ResponseMetadata/RequestId")


def test_query_empty_receive_has_empty_result_element(server, queue):
    resp = query(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1]})
    assert resp.status == 200
    result = resp.xml().find("ReceiveMessageResult")
    assert result is not None
    assert list(result) == []


def test_json_empty_receive_is_empty_object(server, queue):
    resp = jcall(server.endpoint_url, "ReceiveMessage", {"QueueUrl": queue[1]})
    assert resp.status == 200
    assert resp.json() == {}


def test_json_empty_list_queues_omits_queue_urls(server):
    resp = jcall(server.endpoint_url, "ListQueues", {"QueueNamePrefix": uname("none")})
    assert resp.status == 200
    assert "QueueUrls" not in resp.json()


def test_json_batch_result_leaves_out_an_empty_failed_list(server, queue):
    resp = jcall(
        server.endpoint_url, "SendMessageBatch", {"QueueUrl": queue[1], "Entries": [{"Id": "a", "MessageBody": "x"}]}
    )
    assert resp.status == 200
    body = resp.json()
    assert "Failed" not in body
    assert [e["Id"] for e in body["Successful"]] == ["a"]


def test_query_receive_message_xml_layout(server, queue):
    url = queue[1]
    resp = query(
        server.endpoint_url,
        [
            ("Action", "SendMessage"),
            ("QueueUrl", url),
            ("MessageBody", "test"),
            ("MessageAttribute.1.Name", "Foo"),
            ("MessageAttribute.1.Value.DataType", "String"),
            ("MessageAttribute.1.Value.StringValue", "Bar"),
            ("MessageAttribute.2.Name", "b"),
            ("MessageAttribute.2.Value.DataType", "Binary"),
            ("MessageAttribute.2.Value.BinaryValue", base64.b64encode(b"\x00\x01\x02").decode()),
        ],
    )
    assert resp.status == 200, resp.body
    sent = resp.xml().find("SendMessageResult")
    assert sent is not None
    assert sent.findtext("MD5OfMessageBody") == "098f6bcd4621d373cade4e832627b4f6"
    assert sent.findtext("MessageId")
    assert sent.findtext("MD5OfMessageAttributes")
    resp = query(
        server.endpoint_url,
        [
            ("Action", "ReceiveMessage"),
            ("QueueUrl", url),
            ("AttributeName.1", "SentTimestamp"),
            ("MessageAttributeName.1", "All"),
        ],
    )
    assert resp.status == 200
    [message] = resp.xml().findall("ReceiveMessageResult/Message")
    assert message.findtext("MessageId") == sent.findtext("MessageId")
    assert message.findtext("ReceiptHandle")
    assert message.findtext("MD5OfBody") == "098f6bcd4621d373cade4e832627b4f6"
    assert message.findtext("Body") == "test"
    assert [(a.findtext("Name"), (a.findtext("Value") or "").isdigit()) for a in message.findall("Attribute")] == [
        ("SentTimestamp", True)
    ]
    assert message.findtext("MD5OfMessageAttributes") == sent.findtext("MD5OfMessageAttributes")
    attrs = {a.findtext("Name"): a.find("Value") for a in message.findall("MessageAttribute")}
    foo, b = attrs["Foo"], attrs["b"]
    assert foo is not None and b is not None
    assert foo.findtext("StringValue") == "Bar"
    assert foo.findtext("DataType") == "String"
    assert base64.b64decode(b.findtext("BinaryValue") or "") == b"\x00\x01\x02"
    assert b.findtext("DataType") == "Binary"


def test_query_xml_escapes_carriage_return_so_it_round_trips(server, queue):
    body = 'quote " cr \r crlf \r\n lt < amp & gt >'
    assert (
        query(server.endpoint_url, {"Action": "SendMessage", "QueueUrl": queue[1], "MessageBody": body}).status == 200
    )
    resp = query(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1]})
    assert resp.status == 200
    assert b"\r" not in resp.body  # a raw CR would be normalised away by every XML parser
    assert resp.xml().findtext("ReceiveMessageResult/Message/Body") == body


def test_query_xml_writes_quote_as_entity_and_cr_as_character_reference(server, queue):
    query(server.endpoint_url, {"Action": "SendMessage", "QueueUrl": queue[1], "MessageBody": '"&quot;\r'})
    resp = query(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1]})
    text = resp.body.decode()
    assert "<Body>&quot;&amp;quot;&#xD;</Body>" in text


def test_query_error_echoing_control_characters_is_well_formed_xml(server, queue):
    """A receipt handle with characters XML 1.0 cannot carry is echoed with U+FFFD, so the answer parses."""
    handle = "rh\x00\x01\x1f\ufffe\uffff"
    body = f"Action=DeleteMessage&QueueUrl={quote(queue[1], safe='')}&ReceiptHandle={quote(handle)}".encode()
    resp = raw(server.endpoint_url, "POST", "/", body, {"Content-Type": FORM_CT})
    assert resp.status == 400
    root = resp.xml()
    assert root.findtext("Error/Code") == "ReceiptHandleIsInvalid"
    assert root.findtext("Error/Message") == (
        'The input receipt handle "rh\ufffd\ufffd\ufffd\ufffd\ufffd" is not a valid receipt handle.'
    )


@pytest.mark.parametrize("index", ["%C2%B2", "0", "9" * 5000])
def test_query_malformed_list_index_is_malformed_input_not_a_server_error(server, index):
    body = (
        f"Action=CreateQueue&QueueName={uname()}&Attribute.{index}.Name=DelaySeconds&Attribute.{index}.Value=1"
    ).encode()
    resp = raw(server.endpoint_url, "POST", "/", body, {"Content-Type": FORM_CT})
    assert resp.status == 400
    assert resp.headers["x-amzn-query-error"] == "MalformedInput;Sender"
    assert resp.xml().findtext("Error/Code") == "MalformedInput"


@pytest.mark.parametrize("protocol", ["json", "query"])
def test_5000_digit_integer_and_deeply_nested_policy_are_client_errors(server, queue, protocol):
    resp = call(
        server.endpoint_url,
        protocol,
        "SendMessage",
        {"QueueUrl": queue[1], "MessageBody": "b", "DelaySeconds": "1" * 5000},
    )
    assert resp.status == 400 and error_code(resp, protocol) == "InvalidParameterValue"
    if protocol == "json":
        resp = jcall(
            server.endpoint_url,
            "SetQueueAttributes",
            {"QueueUrl": queue[1], "Attributes": {"Policy": "[" * 1000 + "]" * 1000}},
        )
    else:
        resp = query(
            server.endpoint_url,
            {
                "Action": "SetQueueAttributes",
                "QueueUrl": queue[1],
                "Attribute.1.Name": "Policy",
                "Attribute.1.Value": "[" * 1000,
            },
        )
    assert resp.status == 400 and error_code(resp, protocol) == "InvalidAttributeValue"


# --- errors ----------------------------------------------------------------------------------------------------


def test_query_error_layout_for_unknown_queue(server):
    resp = query(server.endpoint_url, {"Action": "GetQueueUrl", "QueueName": uname("missing")})
    assert resp.status == 400
    assert resp.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(resp.body)
    assert root.tag.endswith("ErrorResponse")
    strip_ns(root)
    assert root.findtext("Error/Type") == "Sender"
    assert root.findtext("Error/Code") == "AWS.SimpleQueueService.NonExistentQueue"
    assert root.findtext("Error/Message") == "The specified queue does not exist for this wsdl version."
    assert root.findtext("RequestId")  # a sibling of <Error>, not inside ResponseMetadata


def test_json_error_for_unknown_queue_has_type_message_and_query_error_header(server):
    resp = jcall(server.endpoint_url, "GetQueueUrl", {"QueueName": uname("missing")})
    assert resp.status == 400
    assert resp.headers["content-type"].startswith(JSON_CT)
    assert resp.headers["x-amzn-query-error"] == "AWS.SimpleQueueService.NonExistentQueue;Sender"
    assert resp.headers.get("x-amzn-requestid")
    body = resp.json()
    assert body["__type"].split("#")[-1] == "QueueDoesNotExist"
    assert body["message"] == "The specified queue does not exist."


def test_json_invalid_parameter_value_error(server, queue):
    resp = jcall(server.endpoint_url, "ReceiveMessage", {"QueueUrl": queue[1], "MaxNumberOfMessages": 11})
    assert resp.status == 400
    assert resp.headers["x-amzn-query-error"] == "InvalidParameterValue;Sender"
    body = resp.json()
    assert body["__type"].split("#")[-1].startswith("InvalidParameterValue")
    assert body["message"] == (
        "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."
    )


def test_query_invalid_parameter_value_error(server, queue):
    resp = query(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1], "MaxNumberOfMessages": 0})
    assert resp.status == 400
    root = resp.xml()
    assert root.findtext("Error/Code") == "InvalidParameterValue"
    assert root.findtext("Error/Type") == "Sender"


def test_json_queue_already_exists_error(server):
    name = uname()
    url = jcall(server.endpoint_url, "CreateQueue", {"QueueName": name, "Attributes": {"DelaySeconds": "1"}}).json()
    try:
        resp = jcall(server.endpoint_url, "CreateQueue", {"QueueName": name, "Attributes": {"DelaySeconds": "2"}})
        assert resp.status == 400
        assert resp.headers["x-amzn-query-error"] == "QueueAlreadyExists;Sender"
        assert resp.json()["__type"].split("#")[-1] == "QueueNameExists"
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url["QueueUrl"]})


def test_json_missing_parameter_error(server, queue):
    resp = jcall(server.endpoint_url, "SendMessage", {"QueueUrl": queue[1]})
    assert resp.status == 400
    assert resp.headers["x-amzn-query-error"] == "MissingParameter;Sender"
    assert resp.json()["message"] == "The request must contain the parameter MessageBody."


def test_query_missing_parameter_error(server, queue):
    resp = query(server.endpoint_url, {"Action": "SendMessage", "QueueUrl": queue[1]})
    assert resp.status == 400
    assert resp.xml().findtext("Error/Code") == "MissingParameter"


def test_query_unknown_action_is_invalid_action(server):
    resp = query(server.endpoint_url, {"Action": "Bogus"})
    assert resp.status == 400
    assert resp.xml().findtext("Error/Code") == "InvalidAction"


def test_query_unknown_action_on_queue_url_is_invalid_action(server, queue):
    resp = query(server.endpoint_url, {"Action": "Bogus"}, path=queue[2])
    assert resp.status == 400
    root = resp.xml()
    assert root.findtext("Error/Code") == "InvalidAction"
    assert root.findtext("Error/Message") == "The action Bogus is not valid for this endpoint."


@pytest.mark.parametrize("action", ["CreateQueue", "ListQueues"])
def test_query_queue_level_endpoint_rejects_account_level_actions(server, queue, action):
    params = {"Action": action}
    if action == "CreateQueue":
        params["QueueName"] = uname()
    resp = query(server.endpoint_url, params, path=queue[2])
    assert resp.status == 400
    root = resp.xml()
    assert root.findtext("Error/Code") == "InvalidAction"
    assert root.findtext("Error/Message") == f"The action {action} is not valid for this endpoint."


def test_json_unknown_operation_is_a_json_client_error(server):
    resp = jcall(server.endpoint_url, "Bogus", {})
    assert resp.status == 400
    assert resp.headers["content-type"].startswith(JSON_CT)
    assert resp.json()["__type"]


def test_json_malformed_body_is_a_json_client_error(server):
    resp = raw(
        server.endpoint_url,
        "POST",
        "/",
        b"{not json",
        {"Content-Type": JSON_CT, "X-Amz-Target": "AmazonSQS.ListQueues"},
    )
    assert resp.status == 400
    assert resp.headers["content-type"].startswith(JSON_CT)
    assert resp.json()["__type"]


def test_json_body_that_is_not_an_object_is_a_client_error(server):
    resp = raw(
        server.endpoint_url, "POST", "/", b"[1, 2]", {"Content-Type": JSON_CT, "X-Amz-Target": "AmazonSQS.ListQueues"}
    )
    assert resp.status == 400
    assert resp.json()["__type"]


def test_json_wrong_parameter_type_is_a_client_error(server, queue):
    resp = jcall(server.endpoint_url, "ReceiveMessage", {"QueueUrl": queue[1], "MaxNumberOfMessages": "ten"})
    assert 400 <= resp.status < 500
    assert resp.json()["__type"]


def test_bare_get_on_queue_url_is_unknown_operation_404(server, queue):
    resp = raw(server.endpoint_url, "GET", queue[2])
    assert resp.status == 404
    assert b"UnknownOperationException" in resp.body


# --- queue addressing ------------------------------------------------------------------------------------------


def test_query_on_queue_url_path_without_queue_url_parameter(server, queue):
    resp = query(server.endpoint_url, {"Action": "SendMessage", "MessageBody": "by path"}, path=queue[2])
    assert resp.status == 200, resp.body
    assert receive_bodies(server.endpoint_url, queue[1]) == ["by path"]


def test_queue_url_parameter_wins_over_path(server, queue):
    other = jcall(server.endpoint_url, "CreateQueue", {"QueueName": uname()}).json()["QueueUrl"]
    try:
        resp = query(
            server.endpoint_url, {"Action": "SendMessage", "QueueUrl": other, "MessageBody": "param"}, path=queue[2]
        )
        assert resp.status == 200
        assert receive_bodies(server.endpoint_url, other) == ["param"]
        assert receive_bodies(server.endpoint_url, queue[1]) == []
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": other})


def test_json_posted_to_queue_url_path_is_accepted(server, queue):
    resp = jcall(
        server.endpoint_url, "SendMessage", {"QueueUrl": queue[1], "MessageBody": "json on path"}, path=queue[2]
    )
    assert resp.status == 200, resp.body
    assert receive_bodies(server.endpoint_url, queue[1]) == ["json on path"]


def test_get_queue_url_sent_to_another_queues_url_works(server, queue):
    other_name = uname()
    other = jcall(server.endpoint_url, "CreateQueue", {"QueueName": other_name}).json()["QueueUrl"]
    try:
        resp = query(server.endpoint_url, {"Action": "GetQueueUrl", "QueueName": other_name}, path=queue[2])
        assert resp.status == 200
        assert resp.xml().findtext("GetQueueUrlResult/QueueUrl") == other
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": other})


def test_bare_queue_name_as_queue_url(server, queue, protocol):
    resp = call(server.endpoint_url, protocol, "SendMessage", {"QueueUrl": queue[0], "MessageBody": "by name"})
    assert resp.status == 200, resp.body
    assert receive_bodies(server.endpoint_url, queue[1]) == ["by name"]


def test_queue_url_with_another_host_is_resolved_by_account_and_name(server, queue, protocol):
    foreign = f"https://sqs.us-east-1.amazonaws.com{queue[2]}"
    resp = call(server.endpoint_url, protocol, "SendMessage", {"QueueUrl": foreign, "MessageBody": "foreign"})
    assert resp.status == 200, resp.body
    assert receive_bodies(server.endpoint_url, queue[1]) == ["foreign"]


def test_queue_url_uses_the_request_host_header(server, protocol):
    name = uname()
    headers = {"Host": "example.internal:1234"}
    resp = call(server.endpoint_url, protocol, "CreateQueue", {"QueueName": name}, headers=headers)
    url = queue_url_of(resp, protocol)
    try:
        assert url == f"http://example.internal:1234/000000000000/{name}"
        resp = call(server.endpoint_url, protocol, "GetQueueUrl", {"QueueName": name}, headers=headers)
        assert queue_url_of(resp, protocol) == url
        listed = call(server.endpoint_url, protocol, "ListQueues", {"QueueNamePrefix": name}, headers=headers)
        if protocol == "json":
            assert listed.json()["QueueUrls"] == [url]
        else:
            assert [e.text for e in listed.xml().findall("ListQueuesResult/QueueUrl")] == [url]
        # the URL with the other host still addresses the queue
        assert call(server.endpoint_url, protocol, "SendMessage", {"QueueUrl": url, "MessageBody": "x"}).status == 200
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url})


def test_twelve_digit_access_key_in_authorization_selects_account(server, protocol):
    name = uname()
    resp = call(server.endpoint_url, protocol, "CreateQueue", {"QueueName": name}, headers=auth_header("444455556666"))
    url = queue_url_of(resp, protocol)
    try:
        assert urlparse(url).path == f"/444455556666/{name}"
        # invisible to the default account
        missing = call(server.endpoint_url, protocol, "GetQueueUrl", {"QueueName": name})
        assert missing.status == 400
        assert error_code(missing, protocol) == "AWS.SimpleQueueService.NonExistentQueue"
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url}, headers=auth_header("444455556666"))


def test_other_access_key_uses_default_account(server, protocol):
    name = uname()
    resp = call(server.endpoint_url, protocol, "CreateQueue", {"QueueName": name}, headers=auth_header("AKIDEXAMPLE"))
    url = queue_url_of(resp, protocol)
    try:
        assert urlparse(url).path == f"/000000000000/{name}"
    finally:
        jcall(server.endpoint_url, "DeleteQueue", {"QueueUrl": url})


# --- empty batches (sent raw so no client-side behaviour can hide the server's answer) ---------------------------


@pytest.mark.parametrize("op", ["SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"])
def test_json_empty_batch_is_empty_batch_request(server, queue, op):
    resp = jcall(server.endpoint_url, op, {"QueueUrl": queue[1], "Entries": []})
    assert resp.status == 400
    assert resp.headers["x-amzn-query-error"] == "AWS.SimpleQueueService.EmptyBatchRequest;Sender"
    assert resp.json()["__type"].split("#")[-1] == "EmptyBatchRequest"


@pytest.mark.parametrize("op", ["SendMessageBatch", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"])
@pytest.mark.parametrize("form", ["no-entries", "botocore-empty-list"])
def test_query_empty_batch_is_empty_batch_request(server, queue, op, form):
    params = {"Action": op, "QueueUrl": queue[1]}
    if form == "botocore-empty-list":
        params["Entries"] = ""  # what botocore's query serializer emits for an empty list
    resp = query(server.endpoint_url, params)
    assert resp.status == 400
    assert resp.xml().findtext("Error/Code") == "AWS.SimpleQueueService.EmptyBatchRequest"


def test_query_batch_entries_are_read_from_flattened_keys(server, queue):
    resp = query(
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
    assert resp.status == 200
    root = resp.xml()
    assert [e.findtext("Id") for e in root.findall("SendMessageBatchResult/SendMessageBatchResultEntry")] == ["first"]
    [error] = root.findall("SendMessageBatchResult/BatchResultErrorEntry")
    assert error.findtext("Id") == "second"
    assert error.findtext("SenderFault") == "true"
    assert error.findtext("Code") == "InvalidMessageContents"


# --- trace header and system attribute names ----------------------------------------------------------------------


def test_x_amzn_trace_id_header_becomes_aws_trace_header(server, queue, protocol):
    resp = call(
        server.endpoint_url,
        protocol,
        "SendMessage",
        {"QueueUrl": queue[1], "MessageBody": "traced"},
        headers={"X-Amzn-Trace-Id": TRACE_HEADER},
    )
    assert resp.status == 200
    got = jcall(
        server.endpoint_url, "ReceiveMessage", {"QueueUrl": queue[1], "MessageSystemAttributeNames": ["AWSTraceHeader"]}
    ).json()
    assert got["Messages"][0]["Attributes"] == {"AWSTraceHeader": TRACE_HEADER}


@pytest.mark.parametrize("key", ["MessageSystemAttributeName.1", "MessageSystemAttributeNames.1"])
def test_query_receive_accepts_message_system_attribute_names(server, queue, key):
    jcall(
        server.endpoint_url,
        "SendMessage",
        {
            "QueueUrl": queue[1],
            "MessageBody": "x",
            "MessageSystemAttributes": {"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}},
        },
    )
    resp = query(server.endpoint_url, {"Action": "ReceiveMessage", "QueueUrl": queue[1], key: "AWSTraceHeader"})
    assert resp.status == 200
    attrs = {
        a.findtext("Name"): a.findtext("Value") for a in resp.xml().findall("ReceiveMessageResult/Message/Attribute")
    }
    assert attrs == {"AWSTraceHeader": TRACE_HEADER}


def test_query_send_with_system_attribute_returns_its_md5(server, queue):
    resp = query(
        server.endpoint_url,
        {
            "Action": "SendMessage",
            "QueueUrl": queue[1],
            "MessageBody": "x",
            "MessageSystemAttribute.1.Name": "AWSTraceHeader",
            "MessageSystemAttribute.1.Value.DataType": "String",
            "MessageSystemAttribute.1.Value.StringValue": TRACE_HEADER,
        },
    )
    assert resp.status == 200
    assert resp.xml().findtext("SendMessageResult/MD5OfMessageSystemAttributes") == "5ae4d5d7636402d80f4eb6d213245a88"


# --- a long-poll client that goes away ---------------------------------------------------------------------------


def _raw_long_poll_request(endpoint: str, protocol: str, url: str) -> bytes:
    host = urlparse(endpoint).netloc
    if protocol == "json":
        body = json.dumps({"QueueUrl": url, "WaitTimeSeconds": 20}).encode()
        head = (
            f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: {JSON_CT}\r\n"
            f"X-Amz-Target: AmazonSQS.ReceiveMessage\r\nContent-Length: {len(body)}\r\n\r\n"
        )
    else:
        body = urlencode(
            {"Action": "ReceiveMessage", "QueueUrl": url, "WaitTimeSeconds": 20, "Version": "2012-11-05"}
        ).encode()
        head = f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: {FORM_CT}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def test_disconnected_long_poll_leaves_nothing_behind_and_loses_no_message(
    manual_server, manual_sqs, manual_make_queue, protocol
):
    url = manual_make_queue()
    endpoint = manual_server.endpoint_url
    parsed = urlparse(endpoint)
    sock = socket.create_connection((parsed.hostname, parsed.port), timeout=10)
    try:
        sock.sendall(_raw_long_poll_request(endpoint, protocol, url))
        wait_for_long_polls(endpoint, url, 1)  # waiting (the manual clock never ends its 20 s on its own)
    finally:
        sock.close()
    wait_for_long_polls(endpoint, url, 0)  # the server saw the disconnect: nothing is left waiting
    manual_sqs.send_message(QueueUrl=url, MessageBody="for the living")
    got = manual_sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
    assert [m["Body"] for m in got] == ["for the living"], "the message went to the disconnected waiter"
    assert got[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    counts = manual_sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert counts == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "1"}
    manual_server.advance(20)  # a leftover waiter, if any, expires without taking anything


def test_many_disconnected_long_polls_then_a_live_one_is_served(manual_server, manual_sqs, manual_make_queue, protocol):
    # Five long polls park, a live one parks behind them, the five disconnect: a batch of three messages sent
    # then all goes to the live one, none to the dead ones ahead of it in the line.
    url = manual_make_queue()
    endpoint = manual_server.endpoint_url
    parsed = urlparse(endpoint)
    socks = []
    live: Receiver | None = None
    try:
        try:
            for _ in range(5):
                sock = socket.create_connection((parsed.hostname, parsed.port), timeout=10)
                socks.append(sock)
                sock.sendall(_raw_long_poll_request(endpoint, protocol, url))
            wait_for_long_polls(endpoint, url, 5)
            live = start_long_poll(endpoint, manual_sqs, QueueUrl=url, WaitTimeSeconds=20, MaxNumberOfMessages=10)
        finally:
            for sock in socks:
                sock.close()
        assert live is not None
        wait_for_long_polls(endpoint, url, 1, (live,))  # only the live one is still waiting
        manual_sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": f"m{i}"} for i in range(3)])
        assert waiting_long_polls(endpoint, url) == 0
        live.join(15)
        assert not live.is_alive()
        assert sorted(m["Body"] for m in live.messages()) == ["m0", "m1", "m2"]
        counts = manual_sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        assert counts == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "3"}
    finally:
        if live is not None and live.is_alive():
            manual_server.advance(20)
            live.join(5)


# --- message bodies written into the JSON as they stand (no escapes): the engine's check is skipped only when
# the request proves the body allowed (sqsemu.protocol.json.plain_strings) -----------------------------------


def _raw_json(endpoint: str, op: str, payload: dict[str, Any]) -> Response:
    """``payload`` as JSON with every non-ASCII character written as its UTF-8 (no ``\\u`` escapes)."""
    text = json.dumps(payload, ensure_ascii=False).encode()
    assert b"\\" not in text
    return raw(endpoint, "POST", "/", text, {"Content-Type": JSON_CT, "X-Amz-Target": f"AmazonSQS.{op}"})


@pytest.mark.parametrize("refused", ["\ufffe", "\uffff"])
def test_json_raw_unescaped_refused_character_is_still_refused(server, queue, refused):
    resp = _raw_json(server.endpoint_url, "SendMessage", {"QueueUrl": queue[1], "MessageBody": f"ok {refused}"})
    assert resp.status == 400, resp.body
    assert resp.json()["__type"].endswith("InvalidMessageContents")
    assert resp.json()["message"].startswith(f"Invalid binary character '#x{ord(refused):X}'")
    entries = [{"Id": "a", "MessageBody": "fine"}, {"Id": "b", "MessageBody": refused}]
    resp = _raw_json(server.endpoint_url, "SendMessageBatch", {"QueueUrl": queue[1], "Entries": entries})
    assert resp.status == 200, resp.body
    assert [e["Id"] for e in resp.json()["Successful"]] == ["a"]
    assert [(e["Id"], e["Code"]) for e in resp.json()["Failed"]] == [("b", "InvalidMessageContents")]
    assert receive_bodies(server.endpoint_url, queue[1]) == ["fine"]


def test_json_raw_unescaped_allowed_text_is_stored_as_sent(server, queue):
    text = "Gr\u00fc\u00dfe \u6771\u4eac \U0001f600 \ufffd \x7f"
    resp = _raw_json(server.endpoint_url, "SendMessage", {"QueueUrl": queue[1], "MessageBody": text})
    assert resp.status == 200, resp.body
    assert resp.json()["MD5OfMessageBody"] == hashlib.md5(text.encode()).hexdigest()
    assert receive_bodies(server.endpoint_url, queue[1]) == [text]
