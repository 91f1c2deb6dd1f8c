"""AddPermission / RemovePermission and the Policy, KMS and SSE-SQS queue attributes over both wire protocols
(docs/behaviour.md sections 2.16, 2.17, 3.1, 3.5, 3.7).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
OTHER = "111122223333"
THIRD = "444455556666"


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return exc.value.response["Error"]["Code"]


def http_status(exc: pytest.ExceptionInfo[ClientError]) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


def attrs(client: Any, url: str, names: list[str]) -> dict[str, str]:
    return client.get_queue_attributes(QueueUrl=url, AttributeNames=names).get("Attributes", {})


def policy_of(client: Any, url: str) -> dict:
    return json.loads(attrs(client, url, ["Policy"])["Policy"])


def statements(client: Any, url: str) -> dict[str, dict]:
    return {s["Sid"]: s for s in policy_of(client, url)["Statement"]}


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


# --- AddPermission / RemovePermission --------------------------------------------------------------------------


def test_add_permission_creates_the_policy(sqs, make_queue):
    url = make_queue()
    arn = attrs(sqs, url, ["QueueArn"])["QueueArn"]
    assert "Policy" not in attrs(sqs, url, ["All"])
    sqs.add_permission(QueueUrl=url, Label="send-from-other", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    policy = policy_of(sqs, url)
    assert policy["Version"] == "2008-10-17"
    (statement,) = policy["Statement"]
    assert statement["Sid"] == "send-from-other"
    assert statement["Effect"] == "Allow"
    assert statement["Principal"] == {"AWS": f"arn:aws:iam::{OTHER}:root"}
    assert statement["Action"] == "SQS:SendMessage"
    assert statement["Resource"] == arn
    assert "Policy" in attrs(sqs, url, ["All"])


def test_add_permission_with_several_accounts_and_actions_uses_lists(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(
        QueueUrl=url, Label="multi", AWSAccountIds=[OTHER, THIRD], Actions=["ReceiveMessage", "DeleteMessage"]
    )
    statement = statements(sqs, url)["multi"]
    assert sorted(as_list(statement["Principal"]["AWS"])) == sorted(
        [f"arn:aws:iam::{OTHER}:root", f"arn:aws:iam::{THIRD}:root"]
    )
    assert sorted(as_list(statement["Action"])) == ["SQS:DeleteMessage", "SQS:ReceiveMessage"]


def test_add_permission_wildcard_action(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="everything", AWSAccountIds=[OTHER], Actions=["*"])
    assert statements(sqs, url)["everything"]["Action"] == "SQS:*"


def test_add_permission_extends_the_policy(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="first", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    sqs.add_permission(QueueUrl=url, Label="second", AWSAccountIds=[THIRD], Actions=["ReceiveMessage"])
    found = statements(sqs, url)
    assert set(found) == {"first", "second"}
    assert found["second"]["Action"] == "SQS:ReceiveMessage"
    assert found["first"]["Principal"] == {"AWS": f"arn:aws:iam::{OTHER}:root"}


def test_add_permission_duplicate_label_is_invalid(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="dup", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    with pytest.raises(ClientError) as exc:
        sqs.add_permission(QueueUrl=url, Label="dup", AWSAccountIds=[THIRD], Actions=["ReceiveMessage"])
    assert error_code(exc) == "InvalidParameterValue"
    assert len(policy_of(sqs, url)["Statement"]) == 1


SEVEN_ACTIONS = [
    "SendMessage",
    "ReceiveMessage",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
]
"""Seven actions: the most one AddPermission call may name."""


def test_add_permission_accepts_seven_actions(sqs, make_queue):
    url = make_queue()
    actions = SEVEN_ACTIONS
    sqs.add_permission(QueueUrl=url, Label="seven", AWSAccountIds=[OTHER], Actions=actions)
    assert sorted(as_list(statements(sqs, url)["seven"]["Action"])) == sorted(f"SQS:{a}" for a in actions)


def test_add_permission_with_more_than_seven_actions_is_over_limit(sqs, make_queue):
    url = make_queue()
    actions = [*SEVEN_ACTIONS, "PurgeQueue"]
    with pytest.raises(ClientError) as exc:
        sqs.add_permission(QueueUrl=url, Label="eight", AWSAccountIds=[OTHER], Actions=actions)
    assert error_code(exc) == "OverLimit"
    assert http_status(exc) == 403
    assert "Policy" not in attrs(sqs, url, ["All"])


def test_remove_permission_of_unknown_label_is_invalid(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.remove_permission(QueueUrl=url, Label="never-added")
    assert error_code(exc) == "InvalidParameterValue"
    sqs.add_permission(QueueUrl=url, Label="present", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    with pytest.raises(ClientError) as exc:
        sqs.remove_permission(QueueUrl=url, Label="absent")
    assert error_code(exc) == "InvalidParameterValue"


def test_remove_permission_removes_one_statement_then_the_policy(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="first", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    sqs.add_permission(QueueUrl=url, Label="second", AWSAccountIds=[THIRD], Actions=["ReceiveMessage"])
    sqs.remove_permission(QueueUrl=url, Label="first")
    assert set(statements(sqs, url)) == {"second"}
    sqs.remove_permission(QueueUrl=url, Label="second")
    assert "Policy" not in attrs(sqs, url, ["All"])
    assert attrs(sqs, url, ["Policy"]) == {}


def test_label_can_be_reused_after_removal(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="again", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    sqs.remove_permission(QueueUrl=url, Label="again")
    sqs.add_permission(QueueUrl=url, Label="again", AWSAccountIds=[THIRD], Actions=["ReceiveMessage"])
    assert statements(sqs, url)["again"]["Action"] == "SQS:ReceiveMessage"


def test_add_permission_on_unknown_queue(sqs, server):
    url = f"{server.endpoint_url}/{ACCOUNT}/missing-{uuid.uuid4().hex}"
    with pytest.raises(ClientError) as exc:
        sqs.add_permission(QueueUrl=url, Label="x", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    assert error_code(exc) == "AWS.SimpleQueueService.NonExistentQueue"


# --- Policy attribute ------------------------------------------------------------------------------------------


def custom_policy(arn: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "custom", "Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": arn}
            ],
        }
    )


def test_policy_attribute_is_stored_and_returned(sqs, make_queue):
    url = make_queue()
    arn = attrs(sqs, url, ["QueueArn"])["QueueArn"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": custom_policy(arn)})
    assert policy_of(sqs, url) == json.loads(custom_policy(arn))


def test_policy_attribute_on_create_queue(sqs, make_queue):
    arn = "arn:aws:sqs:us-east-1:000000000000:whatever"
    url = make_queue(Policy=custom_policy(arn))
    assert policy_of(sqs, url) == json.loads(custom_policy(arn))


def test_empty_policy_removes_it(sqs, make_queue):
    url = make_queue()
    sqs.add_permission(QueueUrl=url, Label="p", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    assert "Policy" not in attrs(sqs, url, ["All"])


def test_add_permission_extends_a_policy_that_was_set(sqs, make_queue):
    url = make_queue()
    arn = attrs(sqs, url, ["QueueArn"])["QueueArn"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": custom_policy(arn)})
    sqs.add_permission(QueueUrl=url, Label="added", AWSAccountIds=[OTHER], Actions=["SendMessage"])
    assert set(statements(sqs, url)) == {"custom", "added"}


def test_policy_that_is_not_json_is_invalid_attribute_value(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": "{not json"})
    assert error_code(exc) == "InvalidAttributeValue"
    assert "Policy" not in attrs(sqs, url, ["All"])


# --- SSE attributes --------------------------------------------------------------------------------------------


def test_new_queue_has_sqs_managed_sse_and_no_kms_attributes(sqs, make_queue):
    everything = attrs(sqs, make_queue(), ["All"])
    assert everything["SqsManagedSseEnabled"] == "true"
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything


def test_sqs_managed_sse_can_be_disabled(sqs, make_queue):
    url = make_queue(SqsManagedSseEnabled=False)
    assert attrs(sqs, url, ["SqsManagedSseEnabled"]) == {"SqsManagedSseEnabled": "false"}
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"SqsManagedSseEnabled": "true"})
    assert attrs(sqs, url, ["SqsManagedSseEnabled"]) == {"SqsManagedSseEnabled": "true"}


def test_sqs_managed_sse_invalid_value(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"SqsManagedSseEnabled": "maybe"})
    assert error_code(exc) == "InvalidAttributeValue"


def test_kms_master_key_is_stored_and_switches_off_sqs_managed_sse(sqs, make_queue):
    url = make_queue()
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsMasterKeyId": "alias/aws/sqs"})
    everything = attrs(sqs, url, ["All"])
    assert everything["KmsMasterKeyId"] == "alias/aws/sqs"
    assert everything["SqsManagedSseEnabled"] == "false"
    assert everything["KmsDataKeyReusePeriodSeconds"] == "300"


def test_kms_attributes_on_create_queue(sqs, make_queue):
    url = make_queue(KmsMasterKeyId="alias/my-key", KmsDataKeyReusePeriodSeconds=600)
    assert attrs(sqs, url, ["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"]) == {
        "KmsMasterKeyId": "alias/my-key",
        "KmsDataKeyReusePeriodSeconds": "600",
    }


@pytest.mark.parametrize("value", ["60", "86400"])
def test_kms_data_key_reuse_period_limits_are_accepted(sqs, make_queue, value):
    url = make_queue(KmsMasterKeyId="alias/aws/sqs")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsDataKeyReusePeriodSeconds": value})
    assert attrs(sqs, url, ["KmsDataKeyReusePeriodSeconds"]) == {"KmsDataKeyReusePeriodSeconds": value}


@pytest.mark.parametrize("value", ["59", "86401", "abc"])
def test_kms_data_key_reuse_period_out_of_range_is_invalid(sqs, make_queue, value):
    url = make_queue(KmsMasterKeyId="alias/aws/sqs")
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"KmsDataKeyReusePeriodSeconds": value})
    assert error_code(exc) == "InvalidAttributeValue"
    assert attrs(sqs, url, ["KmsDataKeyReusePeriodSeconds"]) == {"KmsDataKeyReusePeriodSeconds": "300"}


def test_kms_and_sqs_managed_sse_together_are_rejected(sqs, make_queue):
    url = make_queue()
    with pytest.raises(ClientError) as exc:
        sqs.set_queue_attributes(
            QueueUrl=url, Attributes={"KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "true"}
        )
    assert error_code(exc) == "InvalidAttributeName"
