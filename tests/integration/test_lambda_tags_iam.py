"""``--auth iam`` over the tags of event source mappings (issue 49, part 3), boto3 clients signed with declared
keys over real sockets: a CreateEventSourceMapping with ``Tags`` needs ``lambda:TagResource`` on the new mapping's
ARN ("Using tags on event source mappings": tag on create); TagResource, UntagResource and ListTags are authorized on
the mapping's ARN; ``aws:RequestTag/<key>``, ``aws:TagKeys`` and ``aws:ResourceTag/<key>`` are the calls' condition
keys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsemu.declare import config_from_file
from sqsemu.server import ServerThread
from tests.integration.harness.clients import error_of
from tests.integration.harness.functions import Recorder, signed_client

pytestmark = pytest.mark.integration

A = "111111111111"
REGION = "us-east-1"
LAMBDA_BUT_TAGGING = [
    "lambda:CreateEventSourceMapping",
    "lambda:GetEventSourceMapping",
    "lambda:ListEventSourceMappings",
    "lambda:UpdateEventSourceMapping",
    "lambda:DeleteEventSourceMapping",
    "lambda:ListTags",
]


def _policy(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def _allow(actions: list[str]) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": actions, "Resource": "*"}


KEYS = {
    "AKIDDEV": [_policy(_allow(["lambda:*", "sqs:*"]))],
    "AKIDNOTAG": [_policy(_allow([*LAMBDA_BUT_TAGGING, "sqs:*"]))],
    "AKIDGUARDED": [
        _policy(
            _allow(["lambda:*", "sqs:*"]),
            {
                "Effect": "Deny",
                "Action": "lambda:GetEventSourceMapping",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:ResourceTag/team": "locked"}},
            },
            {
                "Effect": "Deny",
                "Action": ["lambda:TagResource", "lambda:CreateEventSourceMapping"],
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:RequestTag/env": "prod"}},
            },
            {
                "Effect": "Deny",
                "Action": "lambda:UntagResource",
                "Resource": "*",
                "Condition": {"ForAnyValue:StringEquals": {"aws:TagKeys": "team"}},
            },
        )
    ],
}
WORKER_ROLE = f"arn:aws:iam::{A}:role/worker"
WORKER_POLICY = _policy(_allow(["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    lines = [f'[server]\nauth = "iam"\naccount_id = "{A}"\n']
    lines.append(
        f'[[credentials]]\naccess_key_id = "AKIDROOT"\nsecret_access_key = "secret-AKIDROOT"\naccount = "{A}"\n'
    )
    for key, policies in KEYS.items():
        lines.append(f'[[credentials]]\naccess_key_id = "{key}"\nsecret_access_key = "secret-{key}"\n')
        lines.append(f'account = "{A}"\nprincipal = "arn:aws:iam::{A}:user/{key.lower()}"\n')
        lines.append(f"policies = {json.dumps(policies)}\n")
    lines.append(f'[functions.worker]\nrole = "{WORKER_ROLE}"\npolicies = {json.dumps([WORKER_POLICY])}\n')
    path = tmp_path / "sqsemu.toml"
    path.write_text("".join(lines))
    with ServerThread(config_from_file(path, clock="manual", log_level="warning")) as srv:
        srv.app.event_sources.register_function("worker", Recorder())  # type: ignore[attr-defined]
        yield srv


def _client(srv: ServerThread, service: str, key: str) -> Any:
    return signed_client(srv.endpoint_url, service, key, region=REGION)


def _queue(srv: ServerThread, name: str) -> str:
    sqs = _client(srv, "sqs", "AKIDROOT")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def test_a_create_with_tags_needs_tag_resource(server: ServerThread) -> None:
    arn = _queue(server, "orders")
    no_tag = _client(server, "lambda", "AKIDNOTAG")
    code, status, message = error_of(
        lambda: no_tag.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker", Tags={"team": "a"})
    )
    assert (code, status) == ("AccessDeniedException", 403)
    assert message.startswith(f"User: arn:aws:iam::{A}:user/akidnotag is not authorized to perform: lambda:TagResource")
    assert f"on resource: arn:aws:lambda:{REGION}:{A}:event-source-mapping:" in message
    assert message.endswith("because no identity-based policy allows the lambda:TagResource action")
    assert no_tag.list_event_source_mappings()["EventSourceMappings"] == []  # nothing created
    made = no_tag.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")  # without tags: allowed
    resource = made["EventSourceMappingArn"]
    assert no_tag.list_tags(Resource=resource)["Tags"] == {}
    for call in (
        lambda: no_tag.tag_resource(Resource=resource, Tags={"team": "a"}),
        lambda: no_tag.untag_resource(Resource=resource, TagKeys=["team"]),
    ):
        code, status, message = error_of(call)
        assert (code, status) == ("AccessDeniedException", 403)
        assert f"on resource: {resource} because no identity-based policy allows" in message
    dev = _client(server, "lambda", "AKIDDEV")
    tagged = dev.create_event_source_mapping(
        EventSourceArn=_queue(server, "tagged"), FunctionName="worker", Tags={"team": "a"}
    )
    assert dev.list_tags(Resource=tagged["EventSourceMappingArn"])["Tags"] == {"team": "a"}


def test_tag_condition_keys(server: ServerThread) -> None:
    guarded = _client(server, "lambda", "AKIDGUARDED")
    arn = _queue(server, "guarded")
    code, _, message = error_of(
        lambda: guarded.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker", Tags={"env": "prod"})
    )
    assert (
        code == "AccessDeniedException"
        and "lambda:CreateEventSourceMapping on resource: * with an explicit deny" in message
    )
    made = guarded.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker", Tags={"env": "dev"})
    uid, resource = made["UUID"], made["EventSourceMappingArn"]
    code, _, message = error_of(lambda: guarded.tag_resource(Resource=resource, Tags={"env": "prod"}))
    assert code == "AccessDeniedException" and message.endswith("with an explicit deny in an identity-based policy")
    guarded.tag_resource(Resource=resource, Tags={"team": "locked"})
    code, _, message = error_of(lambda: guarded.get_event_source_mapping(UUID=uid))  # aws:ResourceTag/team
    assert code == "AccessDeniedException" and f"lambda:GetEventSourceMapping on resource: {resource}" in message
    code, _, _ = error_of(lambda: guarded.untag_resource(Resource=resource, TagKeys=["team"]))  # aws:TagKeys
    assert code == "AccessDeniedException"
    guarded.untag_resource(Resource=resource, TagKeys=["env"])
    assert guarded.list_tags(Resource=resource)["Tags"] == {"team": "locked"}
    dev = _client(server, "lambda", "AKIDDEV")
    dev.untag_resource(Resource=resource, TagKeys=["team"])
    assert guarded.get_event_source_mapping(UUID=uid)["EventSourceMappingArn"] == resource  # the tag is gone
