"""Query decoding (key map and legacy forms, docs/behaviour.md 1.2), XML rendering (1.3) and JSON rendering (``Accept:
application/json``, in the form recorded on AWS)."""

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


def test_json_list_queues_with_none_and_with_one_queue() -> None:
    # Recorded on AWS (2020): queueUrls (lower-case q), NextExclusiveStartQueueName and NextToken always present.
    assert dec_json(query.encode_json("ListQueues", {}, "rid")) == {
        "ListQueuesResponse": {
            "ListQueuesResult": {"NextExclusiveStartQueueName": None, "NextToken": None, "queueUrls": None},
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    url = "https://sqs.us-east-1.amazonaws.com/123456789012/a"
    body = query.encode_json("ListQueues", {"QueueUrls": [url]}, "rid")
    assert dec_json(body) == {
        "ListQueuesResponse": {
            "ListQueuesResult": {"NextExclusiveStartQueueName": None, "NextToken": None, "queueUrls": [url]},
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    assert body.startswith(b'{"ListQueuesResponse":{"ListQueuesResult":{"NextExclusiveStartQueueName":null,')
    paged = dec_json(query.encode_json("ListQueues", {"QueueUrls": ["u1", "u2"], "NextToken": "t"}, "r"))
    assert paged["ListQueuesResponse"]["ListQueuesResult"] == {
        "NextExclusiveStartQueueName": None,
        "NextToken": "t",
        "queueUrls": ["u1", "u2"],
    }


def _attribute_value(data_type: str, string: str | None = None, binary: str | None = None) -> dict[str, Any]:
    return {
        "BinaryListValues": None,
        "BinaryValue": binary,
        "DataType": data_type,
        "StringListValues": None,
        "StringValue": string,
    }


def test_json_receive_message_with_one_message() -> None:
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
            }
        ]
    }
    body = query.encode_json("ReceiveMessage", result, "r")
    assert dec_json(body) == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {
                "messages": [
                    {
                        "Attributes": [
                            {"Name": "SentTimestamp", "Value": "1700000000000"},
                            {"Name": "ApproximateReceiveCount", "Value": "1"},
                        ],
                        "Body": '"&quot;\r<a>&',  # JSON needs none of XML's escaping
                        "MD5OfBody": "x",
                        "MD5OfMessageAttributes": "y",
                        "MessageAttributes": [
                            {"Name": "Foo", "Value": _attribute_value("String", string="Bar")},
                            {"Name": "b", "Value": _attribute_value("Binary", binary="AAEC")},
                        ],
                        "MessageId": "m-1",
                        "ReceiptHandle": "rh-1",
                    }
                ]
            },
            "ResponseMetadata": {"RequestId": "r"},
        }
    }
    # The recorded member order (ASCII order of the names).
    message = dec_json(body)["ReceiveMessageResponse"]["ReceiveMessageResult"]["messages"][0]
    assert list(message) == [
        "Attributes",
        "Body",
        "MD5OfBody",
        "MD5OfMessageAttributes",
        "MessageAttributes",
        "MessageId",
        "ReceiptHandle",
    ]
    assert list(message["MessageAttributes"][0]["Value"]) == [
        "BinaryListValues",
        "BinaryValue",
        "DataType",
        "StringListValues",
        "StringValue",
    ]


def test_json_receive_message_without_attributes_and_with_none() -> None:
    # Recorded on AWS (2024): a message without (message) attributes has them null; no messages is "messages": null.
    plain = {"MessageId": "m", "ReceiptHandle": "rh", "MD5OfBody": "x", "Body": "b"}
    assert dec_json(query.encode_json("ReceiveMessage", {"Messages": [plain]}, "r")) == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {
                "messages": [
                    {
                        "Attributes": None,
                        "Body": "b",
                        "MD5OfBody": "x",
                        "MD5OfMessageAttributes": None,
                        "MessageAttributes": None,
                        "MessageId": "m",
                        "ReceiptHandle": "rh",
                    }
                ]
            },
            "ResponseMetadata": {"RequestId": "r"},
        }
    }
    assert dec_json(query.encode_json("ReceiveMessage", {}, "r")) == {
        "ReceiveMessageResponse": {
            "ReceiveMessageResult": {"messages": None},
            "ResponseMetadata": {"RequestId": "r"},
        }
    }
    empty = {"Messages": [{**plain, "Attributes": {}, "MessageAttributes": {}}]}
    [message] = dec_json(query.encode_json("ReceiveMessage", empty, "r"))["ReceiveMessageResponse"][
        "ReceiveMessageResult"
    ]["messages"]
    assert message["Attributes"] is None and message["MessageAttributes"] is None
    assert dec_json(query.encode_json("ReceiveMessage", {"Messages": []}, "r"))["ReceiveMessageResponse"][
        "ReceiveMessageResult"
    ] == {"messages": None}


def test_json_get_queue_attributes() -> None:
    arn = "arn:aws:sqs:us-east-1:123456789012:q"
    result = {"Attributes": {"QueueArn": arn, "ApproximateNumberOfMessages": "0"}}
    assert dec_json(query.encode_json("GetQueueAttributes", result, "rid")) == {
        "GetQueueAttributesResponse": {
            "GetQueueAttributesResult": {
                "Attributes": [
                    {"Name": "QueueArn", "Value": arn},
                    {"Name": "ApproximateNumberOfMessages", "Value": "0"},
                ]
            },
            "ResponseMetadata": {"RequestId": "rid"},
        }
    }
    assert dec_json(query.encode_json("GetQueueAttributes", {}, "rid"))["GetQueueAttributesResponse"][
        "GetQueueAttributesResult"
    ] == {"Attributes": None}


def test_json_batch_result_with_one_success_and_one_failure() -> None:
    result = {
        "Successful": [{"Id": "a", "MD5OfMessageBody": "x", "MessageId": "m"}],
        "Failed": [{"Id": "b", "SenderFault": True, "Code": "InvalidMessageContents", "Message": "bad"}],
    }
    body = query.encode_json("SendMessageBatch", result, "r")
    assert dec_json(body) == {
        "SendMessageBatchResponse": {
            "SendMessageBatchResult": {
                "Failed": [{"Code": "InvalidMessageContents", "Id": "b", "Message": "bad", "SenderFault": True}],
                "Successful": [
                    {
                        "Id": "a",
                        "MD5OfMessageAttributes": None,
                        "MD5OfMessageBody": "x",
                        "MD5OfMessageSystemAttributes": None,
                        "MessageId": "m",
                        "SequenceNumber": None,
                    }
                ],
            },
            "ResponseMetadata": {"RequestId": "r"},
        }
    }
    assert b'"SenderFault":true' in body  # a boolean, not XML's text
    result = {"Successful": [{"Id": "a"}], "Failed": [{"Id": "b", "SenderFault": False, "Code": "C", "Message": "m"}]}
    for action in ("DeleteMessageBatch", "ChangeMessageVisibilityBatch"):
        assert dec_json(query.encode_json(action, result, "r"))[f"{action}Response"][f"{action}Result"] == {
            "Failed": [{"Code": "C", "Id": "b", "Message": "m", "SenderFault": False}],
            "Successful": [{"Id": "a"}],
        }
        assert dec_json(query.encode_json(action, {"Successful": [{"Id": "a"}]}, "r"))[f"{action}Response"][
            f"{action}Result"
        ] == {"Failed": None, "Successful": [{"Id": "a"}]}


def test_json_other_results() -> None:
    def result(action: str, value: dict[str, Any]) -> Any:
        return dec_json(query.encode_json(action, value, "r"))[f"{action}Response"][f"{action}Result"]

    assert result("CreateQueue", {"QueueUrl": "u"}) == {"QueueUrl": "u"}
    assert result("GetQueueUrl", {"QueueUrl": "u"}) == {"QueueUrl": "u"}
    assert result("SendMessage", {"MD5OfMessageBody": "x", "MessageId": "m", "SequenceNumber": "1"}) == {
        "MD5OfMessageAttributes": None,
        "MD5OfMessageBody": "x",
        "MD5OfMessageSystemAttributes": None,
        "MessageId": "m",
        "SequenceNumber": "1",
    }
    assert result("ListDeadLetterSourceQueues", {"queueUrls": ["u"]}) == {"NextToken": None, "queueUrls": ["u"]}
    assert result("ListDeadLetterSourceQueues", {"queueUrls": []}) == {"NextToken": None, "queueUrls": None}
    assert result("ListQueueTags", {"Tags": {"k": "v"}}) == {"Tags": [{"Key": "k", "Value": "v"}]}
    assert result("ListQueueTags", {}) == {"Tags": None}
    assert result("StartMessageMoveTask", {"TaskHandle": "h"}) == {"TaskHandle": "h"}
    assert result("CancelMessageMoveTask", {"ApproximateNumberOfMessagesMoved": 3}) == {
        "ApproximateNumberOfMessagesMoved": 3
    }
    task = {"TaskHandle": "h", "Status": "RUNNING", "SourceArn": "s", "ApproximateNumberOfMessagesMoved": 0}
    assert result("ListMessageMoveTasks", {"Results": [{**task, "StartedTimestamp": 5}]}) == {
        "Results": [
            {
                "ApproximateNumberOfMessagesMoved": 0,  # a zero is a value, not an absent member
                "ApproximateNumberOfMessagesToMove": None,
                "DestinationArn": None,
                "FailureReason": None,
                "MaxNumberOfMessagesPerSecond": None,
                "SourceArn": "s",
                "StartedTimestamp": 5,
                "Status": "RUNNING",
                "TaskHandle": "h",
            }
        ]
    }
    assert result("ListMessageMoveTasks", {"Results": []}) == {"Results": None}


def test_json_result_of_every_action_has_every_member() -> None:
    for action, members in query.JSON_RESULTS.items():
        expected = {member.name: None for member in members}
        assert dec_json(query.encode_json(action, {}, "r")) == {
            f"{action}Response": {f"{action}Result": expected, "ResponseMetadata": {"RequestId": "r"}}
        }, action
    assert set(query.JSON_RESULTS) == query.WITH_RESULT


def _xml_leaves(element: ET.Element) -> list[str]:
    children = list(element)
    if not children:
        return [element.text or ""]
    return [text for child in children for text in _xml_leaves(child)]


def _json_leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in _json_leaves(item)]
    if isinstance(value, list):
        return [text for item in value for text in _json_leaves(item)]
    if value is None:
        return []
    if isinstance(value, bool):
        return ["true" if value else "false"]
    return [str(value)]


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
def test_json_carries_the_values_xml_carries(action: str, result: dict[str, Any]) -> None:
    """The two renderings differ in names and layout, not in content: the same texts (map keys included)."""
    xml_texts = _xml_leaves(parse(query.encode(action, result, "r")))
    json_texts = _json_leaves(dec_json(query.encode_json(action, result, "r")))
    assert sorted(json_texts) == sorted(xml_texts)


# --- the JSON result table against the API model ----------------------------------------------------------------

# Recorded on AWS, where the JSON differs from the API model: member name → JSON name, and members the model lacks.
RECORDED_NAMES = {"ListQueues.QueueUrls": "queueUrls", "ReceiveMessage.Messages": "messages"}
RECORDED_EXTRAS = {"ListQueues.NextExclusiveStartQueueName"}
SCALAR_TYPES = {"string", "boolean", "integer", "long", "blob"}


def _check_structure(path: str, members: tuple[query.JsonMember, ...], shape: Any, seen: set[str]) -> None:
    """``members`` (the table) lists every member of the model structure ``shape`` under its model name (or its
    recorded name), with the kind its model type calls for, and nothing else but the recorded extras; adds the
    paths it checked to ``seen``."""
    names = [member.name for member in members]
    assert names == sorted(names), f"{path}: members not in ASCII order"
    extras = {f"{path}.{member.name}" for member in members if member.model is None}
    assert extras <= RECORDED_EXTRAS, f"{path}: members the model does not have: {extras - RECORDED_EXTRAS}"
    seen.update(extras)
    by_model = {member.model: member for member in members if member.model is not None}
    assert len(by_model) == len(members) - len(extras), f"{path}: a model member listed twice"
    assert set(by_model) == set(shape.members), path
    for name, member_shape in shape.members.items():
        member = by_model[name]
        where = f"{path}.{name}"
        seen.add(where)
        assert member.name == RECORDED_NAMES.get(where, name), where
        type_name = member_shape.type_name
        if type_name in SCALAR_TYPES:
            assert member.kind is query.JsonKind.SCALAR and not member.members, where
        elif type_name == "list" and member_shape.member.type_name == "structure":
            assert member.kind is query.JsonKind.STRUCT_LIST, where
            _check_structure(where, member.members, member_shape.member, seen)
        elif type_name == "list":
            assert member_shape.member.type_name in SCALAR_TYPES, where
            assert member.kind is query.JsonKind.LIST and not member.members, where
        elif type_name == "map" and member_shape.value.type_name == "structure":
            assert member.kind is query.JsonKind.STRUCT_MAP, where
            _check_structure(where, member.members, member_shape.value, seen)
        elif type_name == "map":
            assert member_shape.value.type_name in SCALAR_TYPES, where
            assert member.kind is query.JsonKind.MAP and not member.members, where
        else:
            pytest.fail(f"{where}: model type {type_name} has no JSON rendering")


def test_json_results_cover_the_api_model() -> None:
    """Every output member of every SQS operation in botocore's service model (the installed botocore) is in
    ``query.JSON_RESULTS``, and nothing else is but the members recorded on AWS."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("sqs")
    with_output = set()
    seen: set[str] = set()
    for operation in model.operation_names:
        output = model.operation_model(operation).output_shape
        if output is None or not output.members:
            assert operation not in query.JSON_RESULTS, operation
            continue
        with_output.add(operation)
        assert operation in query.JSON_RESULTS, operation
        _check_structure(operation, query.JSON_RESULTS[operation], output, seen)
    assert set(query.JSON_RESULTS) == with_output
    # Every recorded exception was met (the model still has the member it renames; the table has the extra).
    assert set(RECORDED_NAMES) <= seen and RECORDED_EXTRAS <= seen


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
