"""Query decoding (key map and legacy forms, SQS-REFERENCE 1.2) and XML rendering (1.3)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from sqsemu.engine.errors import InvalidParameterValue, SQSError
from sqsemu.engine.message import MessageAttributeValue, ReceiptEntry, SendEntry
from sqsemu.protocol import query
from sqsemu.protocol import shapes as s

NS = "{http://queue.amazonaws.com/doc/2012-11-05/}"


def dec(cls: type[s.Request], pairs: list[tuple[str, str]] | dict[str, str]) -> Any:
    items = list(pairs.items()) if isinstance(pairs, dict) else pairs
    return query.decode(cls, query.build_tree(items))


def test_build_tree_leaf_and_branch() -> None:
    tree = query.build_tree([("A", "x"), ("A.1", "y"), ("B.1.C", "z")])
    assert tree == {"A": {"": "x", "1": "y"}, "B": {"1": {"C": "z"}}}
    tree = query.build_tree([("A.1", "y"), ("A", "x")])
    assert tree == {"A": {"": "x", "1": "y"}}


def test_scalars_and_ints() -> None:
    r = dec(
        s.ReceiveMessageRequest,
        {"QueueUrl": "http://h/1/q", "MaxNumberOfMessages": "5", "VisibilityTimeout": "0", "WaitTimeSeconds": ""},
    )
    assert r.queue_url == "http://h/1/q"
    assert r.max_number_of_messages == 5
    assert r.visibility_timeout == 0
    assert r.wait_time_seconds is None
    assert r.receive_request_attempt_id is None


def test_bad_integer() -> None:
    with pytest.raises(InvalidParameterValue) as exc:
        dec(s.SendMessageRequest, {"DelaySeconds": "abc"})
    assert exc.value.message == "Value abc for parameter DelaySeconds is invalid. Reason: Must be an integer."


def test_negative_integer_passes_through() -> None:
    assert dec(s.ReceiveMessageRequest, {"WaitTimeSeconds": "-1"}).wait_time_seconds == -1


def test_attribute_map_indexed_and_legacy() -> None:
    r = dec(
        s.CreateQueueRequest,
        [
            ("QueueName", "q"),
            ("Attribute.2.Name", "DelaySeconds"),
            ("Attribute.2.Value", "5"),
            ("Attribute.1.Name", "VisibilityTimeout"),
            ("Attribute.1.Value", "60"),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", "a"),
        ],
    )
    assert r.queue_name == "q"
    assert r.attributes == {"VisibilityTimeout": "60", "DelaySeconds": "5"}
    assert r.tags == {"team": "a"}
    r = dec(s.SetQueueAttributesRequest, {"Attribute.Name": "Policy", "Attribute.Value": ""})
    assert r.attributes == {"Policy": ""}


def test_default_visibility_timeout_legacy() -> None:
    r = dec(s.CreateQueueRequest, {"QueueName": "q", "DefaultVisibilityTimeout": "40"})
    assert r.attributes == {"VisibilityTimeout": "40"}
    r = dec(
        s.CreateQueueRequest,
        {"DefaultVisibilityTimeout": "40", "Attribute.1.Name": "VisibilityTimeout", "Attribute.1.Value": "9"},
    )
    assert r.attributes == {"VisibilityTimeout": "9"}


def test_lists_indexed_legacy_and_empty() -> None:
    r = dec(
        s.GetQueueAttributesRequest, [("AttributeName.2", "B"), ("AttributeName.10", "C"), ("AttributeName.1", "A")]
    )
    assert r.attribute_names == ["A", "B", "C"]
    assert dec(s.GetQueueAttributesRequest, {"AttributeName": "All"}).attribute_names == ["All"]
    r = dec(s.ReceiveMessageRequest, {"MessageAttributeNames": "", "AttributeName": ""})
    assert r.message_attribute_names == []
    assert r.attribute_names == []


def test_message_system_attribute_names_both_keys() -> None:
    r = dec(
        s.ReceiveMessageRequest,
        [("MessageSystemAttributeName.1", "SenderId"), ("MessageSystemAttributeNames.1", "SentTimestamp")],
    )
    assert r.message_system_attribute_names == ["SenderId", "SentTimestamp"]
    r = dec(s.ReceiveMessageRequest, [("MessageAttributeName.1", "All"), ("AttributeName.1", "All")])
    assert r.message_attribute_names == ["All"]
    assert r.attribute_names == ["All"]


def test_message_attributes() -> None:
    r = dec(
        s.SendMessageRequest,
        [
            ("QueueUrl", "q"),
            ("MessageBody", "hello"),
            ("DelaySeconds", "5"),
            ("MessageAttribute.1.Name", "color"),
            ("MessageAttribute.1.Value.DataType", "String"),
            ("MessageAttribute.1.Value.StringValue", "red"),
            ("MessageAttribute.2.Name", "blob"),
            ("MessageAttribute.2.Value.DataType", "Binary"),
            ("MessageAttribute.2.Value.BinaryValue", "AAEC"),
            ("MessageSystemAttribute.1.Name", "AWSTraceHeader"),
            ("MessageSystemAttribute.1.Value.DataType", "String"),
            ("MessageSystemAttribute.1.Value.StringValue", "Root=1-5759e988-bd862e3fe1be46a994272793"),
            ("MessageGroupId", "g"),
            ("MessageDeduplicationId", "d"),
        ],
    )
    assert r.message_body == "hello"
    assert r.delay_seconds == 5
    assert r.message_attributes == {
        "color": MessageAttributeValue("String", "red"),
        "blob": MessageAttributeValue("Binary", None, b"\x00\x01\x02"),
    }
    assert r.message_system_attributes == {
        "AWSTraceHeader": MessageAttributeValue("String", "Root=1-5759e988-bd862e3fe1be46a994272793")
    }
    assert (r.message_group_id, r.message_deduplication_id) == ("g", "d")


def test_bad_base64() -> None:
    with pytest.raises(InvalidParameterValue):
        dec(
            s.SendMessageRequest,
            [
                ("MessageAttribute.1.Name", "b"),
                ("MessageAttribute.1.Value.DataType", "Binary"),
                ("MessageAttribute.1.Value.BinaryValue", "!!!"),
            ],
        )


def test_send_batch_entries() -> None:
    r = dec(
        s.SendMessageBatchRequest,
        [
            ("QueueUrl", "q"),
            ("SendMessageBatchRequestEntry.2.Id", "b"),
            ("SendMessageBatchRequestEntry.2.MessageBody", "two"),
            ("SendMessageBatchRequestEntry.1.Id", "a"),
            ("SendMessageBatchRequestEntry.1.MessageBody", "one"),
            ("SendMessageBatchRequestEntry.1.DelaySeconds", "3"),
            ("SendMessageBatchRequestEntry.1.MessageAttribute.1.Name", "k"),
            ("SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType", "Number"),
            ("SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue", "1"),
        ],
    )
    assert r.entries == [
        SendEntry("one", 3, {"k": MessageAttributeValue("Number", "1")}, id="a"),
        SendEntry("two", id="b"),
    ]


def test_batch_entry_without_id_or_body() -> None:
    r = dec(s.SendMessageBatchRequest, [("SendMessageBatchRequestEntry.1.DelaySeconds", "1")])
    assert r.entries == [SendEntry(None, 1, id="")]
    assert dec(s.SendMessageBatchRequest, {"Entries": ""}).entries == []


def test_delete_and_visibility_batch_entries() -> None:
    r = dec(
        s.DeleteMessageBatchRequest,
        [("DeleteMessageBatchRequestEntry.1.Id", "a"), ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", "rh")],
    )
    assert r.entries == [ReceiptEntry("a", "rh")]
    r = dec(
        s.ChangeMessageVisibilityBatchRequest,
        [
            ("ChangeMessageVisibilityBatchRequestEntry.1.Id", "a"),
            ("ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle", "rh"),
            ("ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout", "10"),
            ("ChangeMessageVisibilityBatchRequestEntry.2.Id", "b"),
        ],
    )
    assert r.entries == [ReceiptEntry("a", "rh", 10), ReceiptEntry("b", None, None)]


def test_permissions_tags_and_move_tasks() -> None:
    r = dec(
        s.AddPermissionRequest,
        [("Label", "l"), ("AWSAccountId.1", "111111111111"), ("ActionName.1", "SendMessage"), ("ActionName.2", "*")],
    )
    assert (r.label, r.aws_account_ids, r.actions) == ("l", ["111111111111"], ["SendMessage", "*"])
    assert dec(s.AddPermissionRequest, {"AWSAccountId": "1", "ActionName": "*"}).actions == ["*"]
    assert dec(s.TagQueueRequest, {"Tag.1.Key": "k", "Tag.1.Value": "v"}).tags == {"k": "v"}
    assert dec(s.UntagQueueRequest, {"TagKey.1": "k", "TagKey.2": "j"}).tag_keys == ["k", "j"]
    r = dec(s.StartMessageMoveTaskRequest, {"SourceArn": "a", "MaxNumberOfMessagesPerSecond": "10"})
    assert (r.source_arn, r.destination_arn, r.max_number_of_messages_per_second) == ("a", None, 10)


def test_all_23_actions_have_requests() -> None:
    assert len(s.REQUESTS) == 23
    for action, cls in s.REQUESTS.items():
        assert cls.ACTION == action
        assert isinstance(dec(cls, {}), cls)


# ------------------------------------------------------------------------------------------------ rendering


def parse(body: bytes) -> ET.Element:
    return ET.fromstring(body)


def test_no_output_response() -> None:
    body = query.encode("DeleteQueue", {}, "rid-1")
    root = parse(body)
    assert root.tag == NS + "DeleteQueueResponse"
    assert [c.tag for c in root] == [NS + "ResponseMetadata"]
    assert root.findtext(f"{NS}ResponseMetadata/{NS}RequestId") == "rid-1"


def test_empty_receive_result_is_self_closing() -> None:
    body = query.encode("ReceiveMessage", {}, "r")
    assert b"<ReceiveMessageResult/>" in body
    assert body.startswith(b'<?xml version="1.0"?><ReceiveMessageResponse xmlns="http://queue.amazonaws.com/')


def test_receive_layout_and_escaping() -> None:
    result = {
        "Messages": [
            {
                "MessageId": "m-1",
                "ReceiptHandle": "rh-1",
                "MD5OfBody": "x",
                "Body": '"&quot;&quot;\r<a>&',
                "Attributes": {"SentTimestamp": "1700000000000", "ApproximateReceiveCount": "1"},
                "MD5OfMessageAttributes": "y",
                "MessageAttributes": {
                    "Foo": {"StringValue": "Bar", "DataType": "String"},
                    "b": {"BinaryValue": "AAEC", "DataType": "Binary"},
                },
            }
        ]
    }
    body = query.encode("ReceiveMessage", result, "r")
    text = body.decode()
    assert "<Body>&quot;&amp;quot;&amp;quot;&#xD;&lt;a&gt;&amp;</Body>" in text
    assert '"' not in text.split("?>", 1)[1].split(">", 1)[1]  # only the root's xmlns uses quotes
    msg = parse(body).find(f"{NS}ReceiveMessageResult/{NS}Message")
    assert msg is not None
    assert msg.findtext(NS + "Body") == '"&quot;&quot;\r<a>&'  # round-trips exactly, CR included
    assert [(a.findtext(NS + "Name"), a.findtext(NS + "Value")) for a in msg.findall(NS + "Attribute")] == [
        ("SentTimestamp", "1700000000000"),
        ("ApproximateReceiveCount", "1"),
    ]
    attrs = msg.findall(NS + "MessageAttribute")
    assert attrs[0].findtext(NS + "Name") == "Foo"
    assert attrs[0].findtext(f"{NS}Value/{NS}StringValue") == "Bar"
    assert attrs[1].findtext(f"{NS}Value/{NS}BinaryValue") == "AAEC"
    assert attrs[1].findtext(f"{NS}Value/{NS}DataType") == "Binary"
    assert [c.tag.removeprefix(NS) for c in msg] == [
        "MessageId",
        "ReceiptHandle",
        "MD5OfBody",
        "Body",
        "Attribute",
        "Attribute",
        "MD5OfMessageAttributes",
        "MessageAttribute",
        "MessageAttribute",
    ]


def test_lists_and_maps_are_flattened() -> None:
    root = parse(query.encode("ListQueues", {"QueueUrls": ["u1", "u2"], "NextToken": "t"}, "r"))
    result = root.find(NS + "ListQueuesResult")
    assert result is not None
    assert [e.text for e in result.findall(NS + "QueueUrl")] == ["u1", "u2"]
    assert result.findtext(NS + "NextToken") == "t"
    root = parse(query.encode("ListDeadLetterSourceQueues", {"queueUrls": ["u"]}, "r"))
    assert root.findtext(f"{NS}ListDeadLetterSourceQueuesResult/{NS}QueueUrl") == "u"
    root = parse(query.encode("ListQueueTags", {"Tags": {"k": "v"}}, "r"))
    assert root.findtext(f"{NS}ListQueueTagsResult/{NS}Tag/{NS}Key") == "k"
    root = parse(query.encode("GetQueueAttributes", {"Attributes": {"DelaySeconds": "0"}}, "r"))
    assert root.findtext(f"{NS}GetQueueAttributesResult/{NS}Attribute/{NS}Name") == "DelaySeconds"


def test_batch_result() -> None:
    result = {
        "Successful": [{"Id": "a", "MessageId": "m", "MD5OfMessageBody": "x"}],
        "Failed": [{"Id": "b", "SenderFault": True, "Code": "InvalidMessageContents", "Message": "bad"}],
    }
    root = parse(query.encode("SendMessageBatch", result, "r"))
    res = root.find(NS + "SendMessageBatchResult")
    assert res is not None
    assert res.findtext(f"{NS}SendMessageBatchResultEntry/{NS}Id") == "a"
    assert res.findtext(f"{NS}BatchResultErrorEntry/{NS}SenderFault") == "true"
    root = parse(query.encode("DeleteMessageBatch", {"Successful": [{"Id": "a"}], "Failed": []}, "r"))
    assert root.findtext(f"{NS}DeleteMessageBatchResult/{NS}DeleteMessageBatchResultEntry/{NS}Id") == "a"


def test_cancel_move_task_integer() -> None:
    root = parse(query.encode("CancelMessageMoveTask", {"ApproximateNumberOfMessagesMoved": 3}, "r"))
    assert root.findtext(f"{NS}CancelMessageMoveTaskResult/{NS}ApproximateNumberOfMessagesMoved") == "3"


def test_error_document() -> None:
    from sqsemu.engine.errors import QueueDoesNotExist

    status, header, body = query.encode_error(QueueDoesNotExist(), "rid")
    assert status == 400
    assert header == b"AWS.SimpleQueueService.NonExistentQueue;Sender"
    root = parse(body)
    assert root.tag == NS + "ErrorResponse"
    assert root.findtext(f"{NS}Error/{NS}Type") == "Sender"
    assert root.findtext(f"{NS}Error/{NS}Code") == "AWS.SimpleQueueService.NonExistentQueue"
    assert root.findtext(f"{NS}Error/{NS}Message") == "The specified queue does not exist for this wsdl version."
    assert root.find(f"{NS}Error/{NS}Detail") is not None
    assert root.findtext(NS + "RequestId") == "rid"


def test_error_message_is_escaped() -> None:
    status, _, body = query.encode_error(SQSError('bad <"x"> & \r'), "rid")
    assert status == 500
    assert parse(body).findtext(f"{NS}Error/{NS}Message") == 'bad <"x"> & \r'


# ------------------------------------------------------------------------------- JSON rendering (Accept: json)


def dec_json(body: bytes) -> Any:
    return json.loads(body)


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, False),
        (b"*/*", False),
        (b"text/xml", False),
        (b"application/x-amz-json-1.0", False),
        (b"application/json", True),
        (b"application/json, text/plain", True),
        (b"text/plain, application/json;q=0.9", True),
        (b"Application/JSON", True),
    ],
)
def test_wants_json(accept: bytes | None, expected: bool) -> None:
    assert query.wants_json(accept) is expected


def test_json_no_output_response_has_only_response_metadata() -> None:
    assert dec_json(query.encode_json("DeleteQueue", {}, "rid-1")) == {
        "DeleteQueueResponse": {"ResponseMetadata": {"RequestId": "rid-1"}}
    }


def test_json_empty_result_is_an_empty_object() -> None:
    assert dec_json(query.encode_json("ReceiveMessage", {}, "r")) == {
        "ReceiveMessageResponse": {"ReceiveMessageResult": {}, "ResponseMetadata": {"RequestId": "r"}}
    }


def test_json_receive_layout() -> None:
    result = {
        "Messages": [
            {
                "MessageId": "m-1",
                "ReceiptHandle": "rh-1",
                "MD5OfBody": "x",
                "Body": '"&quot;\r<a>&',
                "Attributes": {"SentTimestamp": "1700000000000", "ApproximateReceiveCount": "1"},
                "MD5OfMessageAttributes": "y",
                "MessageAttributes": {
                    "Foo": {"StringValue": "Bar", "DataType": "String"},
                    "b": {"BinaryValue": "AAEC", "DataType": "Binary"},
                },
            },
            {"MessageId": "m-2", "ReceiptHandle": "rh-2", "MD5OfBody": "z", "Body": "two"},
        ]
    }
    assert dec_json(query.encode_json("ReceiveMessage", result, "r")) == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {
                "Message": [
                    {
                        "MessageId": "m-1",
                        "ReceiptHandle": "rh-1",
                        "MD5OfBody": "x",
                        "Body": '"&quot;\r<a>&',  # JSON needs none of XML's escaping
                        "Attribute": [
                            {"Name": "SentTimestamp", "Value": "1700000000000"},
                            {"Name": "ApproximateReceiveCount", "Value": "1"},
                        ],
                        "MD5OfMessageAttributes": "y",
                        "MessageAttribute": [
                            {"Name": "Foo", "Value": {"StringValue": "Bar", "DataType": "String"}},
                            {"Name": "b", "Value": {"BinaryValue": "AAEC", "DataType": "Binary"}},
                        ],
                    },
                    {"MessageId": "m-2", "ReceiptHandle": "rh-2", "MD5OfBody": "z", "Body": "two"},
                ]
            },
            "ResponseMetadata": {"RequestId": "r"},
        }
    }


def test_json_repeated_elements_are_lists_even_with_one_item() -> None:
    def result(action: str, value: dict[str, Any]) -> Any:
        return dec_json(query.encode_json(action, value, "r"))[f"{action}Response"][f"{action}Result"]

    assert result("ListQueues", {"QueueUrls": ["u1"], "NextToken": "t"}) == {"QueueUrl": ["u1"], "NextToken": "t"}
    assert result("ListDeadLetterSourceQueues", {"queueUrls": ["u"]}) == {"QueueUrl": ["u"]}
    assert result("ListQueueTags", {"Tags": {"k": "v"}}) == {"Tag": [{"Key": "k", "Value": "v"}]}
    assert result("GetQueueAttributes", {"Attributes": {"DelaySeconds": "0"}}) == {
        "Attributes": [{"Name": "DelaySeconds", "Value": "0"}]
    }
    assert result("ReceiveMessage", {"Messages": [{"MessageId": "m", "Attributes": {"SenderId": "1"}}]}) == {
        "Message": [{"MessageId": "m", "Attribute": [{"Name": "SenderId", "Value": "1"}]}]
    }


def test_json_leaves_out_what_xml_leaves_out() -> None:
    xml_result = parse(query.encode("ListDeadLetterSourceQueues", {"queueUrls": []}, "r"))[0]
    assert xml_result.tag == NS + "ListDeadLetterSourceQueuesResult" and list(xml_result) == []
    body = query.encode_json("ListDeadLetterSourceQueues", {"queueUrls": []}, "r")
    assert dec_json(body)["ListDeadLetterSourceQueuesResponse"]["ListDeadLetterSourceQueuesResult"] == {}
    result = {"Successful": [{"Id": "a"}], "Failed": []}
    assert dec_json(query.encode_json("DeleteMessageBatch", result, "r"))["DeleteMessageBatchResponse"][
        "DeleteMessageBatchResult"
    ] == {"DeleteMessageBatchResultEntry": [{"Id": "a"}]}
    message = {"MessageId": "m", "MD5OfMessageAttributes": None, "MessageAttributes": {}}
    assert dec_json(query.encode_json("ReceiveMessage", {"Messages": [message]}, "r"))["ReceiveMessageResponse"][
        "ReceiveMessageResult"
    ] == {"Message": [{"MessageId": "m"}]}


def test_json_batch_result_keeps_scalar_types() -> None:
    result = {
        "Successful": [{"Id": "a", "MessageId": "m", "MD5OfMessageBody": "x"}],
        "Failed": [{"Id": "b", "SenderFault": True, "Code": "InvalidMessageContents", "Message": "bad"}],
    }
    assert dec_json(query.encode_json("SendMessageBatch", result, "r"))["SendMessageBatchResponse"] == {
        "SendMessageBatchResult": {
            "SendMessageBatchResultEntry": [{"Id": "a", "MessageId": "m", "MD5OfMessageBody": "x"}],
            "BatchResultErrorEntry": [
                {"Id": "b", "SenderFault": True, "Code": "InvalidMessageContents", "Message": "bad"}
            ],
        },
        "ResponseMetadata": {"RequestId": "r"},
    }
    moved = dec_json(query.encode_json("CancelMessageMoveTask", {"ApproximateNumberOfMessagesMoved": 3}, "r"))
    assert moved["CancelMessageMoveTaskResponse"]["CancelMessageMoveTaskResult"] == {
        "ApproximateNumberOfMessagesMoved": 3
    }


def _xml_tree(element: ET.Element) -> Any:
    """An element as ``{child tag: [child trees]}`` (text for a leaf), namespace stripped."""
    children = list(element)
    if not children:
        return element.text or ""
    out: dict[str, list[Any]] = {}
    for child in children:
        out.setdefault(child.tag.removeprefix(NS), []).append(_xml_tree(child))
    return out


def _json_tree(value: Any) -> Any:
    """A JSON value in ``_xml_tree``'s form: every member a list, scalars as XML text."""
    if isinstance(value, dict):
        return {
            {"Attributes": "Attribute"}.get(k, k): [_json_tree(i) for i in (v if isinstance(v, list) else [v])]
            for k, v in value.items()
        }
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@pytest.mark.parametrize(
    ("action", "result"),
    [
        ("CreateQueue", {"QueueUrl": "http://h/1/q"}),
        ("ListQueues", {"QueueUrls": ["u1", "u2"], "NextToken": "t"}),
        ("GetQueueAttributes", {"Attributes": {"DelaySeconds": "0", "VisibilityTimeout": "30"}}),
        ("ListQueueTags", {"Tags": {"a": "1", "b": "2"}}),
        (
            "ReceiveMessage",
            {
                "Messages": [
                    {
                        "MessageId": "m",
                        "Body": "<&>",
                        "Attributes": {"SenderId": "1"},
                        "MessageAttributes": {"F": {"StringValue": "B", "DataType": "String"}},
                    }
                ]
            },
        ),
        (
            "ChangeMessageVisibilityBatch",
            {
                "Successful": [{"Id": "a"}],
                "Failed": [{"Id": "b", "SenderFault": False, "Code": "InternalError", "Message": "m"}],
            },
        ),
        ("ListMessageMoveTasks", {"Results": [{"TaskHandle": "h", "Status": "RUNNING", "StartedTimestamp": 5}]}),
    ],
)
def test_json_and_xml_render_the_same_document(action: str, result: dict[str, Any]) -> None:
    xml_doc = {action + "Response": [_xml_tree(parse(query.encode(action, result, "r")))]}
    assert _json_tree(dec_json(query.encode_json(action, result, "r"))) == xml_doc


def test_json_error_document_matches_xml_error() -> None:
    from sqsemu.engine.errors import QueueDoesNotExist

    status, header, body = query.encode_error_json(QueueDoesNotExist(), "rid")
    assert (status, header) == query.encode_error(QueueDoesNotExist(), "rid")[:2]
    assert dec_json(body) == {
        "Error": {
            "Type": "Sender",
            "Code": "AWS.SimpleQueueService.NonExistentQueue",
            "Message": "The specified queue does not exist for this wsdl version.",
        },
        "RequestId": "rid",
    }
    status, header, body = query.encode_error_json(SQSError('bad <"x"> & \r'), "rid")
    assert status == 500
    assert dec_json(body)["Error"]["Message"] == 'bad <"x"> & \r'
