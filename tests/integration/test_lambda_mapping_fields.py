"""The mapping fields of 2024-26 over real sockets with boto3's ``lambda`` client (issue 49, part 3):
``ProvisionedPollerConfig``, ``MetricsConfig``, ``KMSKeyArn``, ``Tags`` with ``EventSourceMappingArn`` and the
tagging API, the Kafka-only fields refused for an SQS mapping, a Terraform-shaped create-then-read that shows no
drift, provisioned mode's workers, and the fields kept by the config file and by durable mode (docs/lambda.md;
shapes from botocore's Lambda model; the choices where AWS is silent in docs/behaviour.md 12.14)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from harness import client_for

from sqsemu.declare import ConfigFileError, config_from_file
from sqsemu.server import ServerThread
from sqsemu.testing import SQSServer, new_account

pytestmark = pytest.mark.integration

KMS_KEY = "arn:aws:kms:us-east-1:000000000000:key/055efbb4-xmpl-4336-ba9c-538c7d31f599"
PATTERN = '{"body": {"kind": ["order"]}}'


def _noop(event: dict[str, Any], context: Any) -> None:
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[SQSServer]:
    with SQSServer(functions={"worker": _noop}) as srv:
        yield srv


@pytest.fixture
def account() -> str:
    return new_account()


@pytest.fixture
def lam(server: SQSServer, account: str) -> Any:
    return server.lambda_client(account)


@pytest.fixture
def sqs(server: SQSServer, protocol: str, account: str) -> Iterator[Any]:
    client = client_for(server.endpoint_url, protocol, access_key_id=account)
    yield client
    client.close()


def _queue(sqs: Any, name: str) -> str:
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])


def _error(exc: pytest.ExceptionInfo[ClientError]) -> tuple[str, int, str]:
    response = exc.value.response
    return response["Error"]["Code"], response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Message"]


def _shape(answer: dict[str, Any]) -> dict[str, Any]:
    """What a configuration answer says of the new fields."""
    keys = ("ProvisionedPollerConfig", "MetricsConfig", "KMSKeyArn", "ScalingConfig", "FilterCriteria")
    return {k: answer[k] for k in keys if k in answer}


def test_create_with_every_field_and_the_shapes_of_get_list_update_delete(lam: Any, sqs: Any, account: str) -> None:
    arn = _queue(sqs, "fields")
    created = lam.create_event_source_mapping(
        EventSourceArn=arn,
        FunctionName="worker",
        ProvisionedPollerConfig={"MinimumPollers": 3, "MaximumPollers": 40},
        MetricsConfig={"Metrics": ["EventCount"]},
        KMSKeyArn=KMS_KEY,
        FilterCriteria={"Filters": [{"Pattern": PATTERN}]},
        Tags={"team": "orders", "cost center": "42"},
    )
    uid = created["UUID"]
    mapping_arn = f"arn:aws:lambda:us-east-1:{account}:event-source-mapping:{uid}"
    expected = {
        "ProvisionedPollerConfig": {"MinimumPollers": 3, "MaximumPollers": 40},
        "MetricsConfig": {"Metrics": ["EventCount"]},
        "KMSKeyArn": KMS_KEY,
        "FilterCriteria": {"Filters": [{"Pattern": PATTERN}]},  # in clear: sqsemu has no KMS
    }
    assert created["State"] == "Creating" and created["EventSourceMappingArn"] == mapping_arn
    assert _shape(created) == expected
    assert "Tags" not in created and "FilterCriteriaError" not in created and "LoggingConfig" not in created
    got = lam.get_event_source_mapping(UUID=uid)
    assert _shape(got) == expected and got["EventSourceMappingArn"] == mapping_arn
    (listed,) = lam.list_event_source_mappings(EventSourceArn=arn)["EventSourceMappings"]
    assert _shape(listed) == expected and listed["EventSourceMappingArn"] == mapping_arn
    assert lam.list_tags(Resource=mapping_arn)["Tags"] == {"team": "orders", "cost center": "42"}

    # an update leaves what it does not name, and answers the whole configuration
    updated = lam.update_event_source_mapping(UUID=uid, BatchSize=7)
    assert updated["State"] == "Updating" and _shape(updated) == expected and updated["BatchSize"] == 7
    assert updated["EventSourceMappingArn"] == mapping_arn
    # back to standard mode with maximum concurrency, the KMS key and the metrics removed
    updated = lam.update_event_source_mapping(
        UUID=uid,
        ProvisionedPollerConfig={},
        ScalingConfig={"MaximumConcurrency": 4},
        KMSKeyArn="",
        MetricsConfig={"Metrics": []},
    )
    assert _shape(updated) == {"ScalingConfig": {"MaximumConcurrency": 4}, "FilterCriteria": expected["FilterCriteria"]}
    assert _shape(lam.get_event_source_mapping(UUID=uid)) == _shape(updated)
    # and into provisioned mode again: maximum concurrency removed in the same call
    updated = lam.update_event_source_mapping(
        UUID=uid, ScalingConfig={}, ProvisionedPollerConfig={"MaximumPollers": 9}, KMSKeyArn=KMS_KEY
    )
    assert updated["ProvisionedPollerConfig"] == {"MinimumPollers": 2, "MaximumPollers": 9}
    assert "ScalingConfig" not in updated and updated["KMSKeyArn"] == KMS_KEY
    assert lam.list_tags(Resource=mapping_arn)["Tags"] == {"team": "orders", "cost center": "42"}  # kept
    deleted = lam.delete_event_source_mapping(UUID=uid)
    assert deleted["State"] == "Deleting" and deleted["EventSourceMappingArn"] == mapping_arn
    assert deleted["ProvisionedPollerConfig"] == {"MinimumPollers": 2, "MaximumPollers": 9}


def test_provisioned_mode_defaults(lam: Any, sqs: Any) -> None:
    """A member left out takes its SQS default: ``MinimumPollers`` 2, ``MaximumPollers`` 200."""
    arn = _queue(sqs, "defaults")
    only_max = lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName="worker", ProvisionedPollerConfig={"MaximumPollers": 10_000}
    )
    assert only_max["ProvisionedPollerConfig"] == {"MinimumPollers": 2, "MaximumPollers": 10_000}
    only_min = lam.update_event_source_mapping(UUID=only_max["UUID"], ProvisionedPollerConfig={"MinimumPollers": 200})
    assert only_min["ProvisionedPollerConfig"] == {"MinimumPollers": 200, "MaximumPollers": 200}
    plain = lam.create_event_source_mapping(EventSourceArn=_queue(sqs, "plain"), FunctionName="worker")
    assert "ProvisionedPollerConfig" not in plain and "MetricsConfig" not in plain and "KMSKeyArn" not in plain


@pytest.mark.parametrize(
    ("params", "code", "message"),
    [
        (
            {"ProvisionedPollerConfig": {"MinimumPollers": 1}},
            "InvalidParameterValueException",
            "MinimumPollers must be between 2 and 200 for SQS event sources, got 1.",
        ),
        (
            {"ProvisionedPollerConfig": {"MaximumPollers": 1}},
            "InvalidParameterValueException",
            "MaximumPollers must be between 2 and 10000 for SQS event sources, got 1.",
        ),
        (
            {"ProvisionedPollerConfig": {"MaximumPollers": 10_001}},
            "InvalidParameterValueException",
            "MaximumPollers must be between 2 and 10000 for SQS event sources, got 10001.",
        ),
        (
            {"ProvisionedPollerConfig": {"MinimumPollers": 10, "MaximumPollers": 5}},
            "InvalidParameterValueException",
            "MinimumPollers (10) must be less than or equal to MaximumPollers (5).",
        ),
        (
            {"ProvisionedPollerConfig": {"PollerGroupName": "shared"}},
            "InvalidParameterValueException",
            "PollerGroupName is not valid for SQS event sources.",
        ),
        (
            {"ProvisionedPollerConfig": {"MinimumPollers": 2}, "ScalingConfig": {"MaximumConcurrency": 5}},
            "InvalidParameterValueException",
            "ScalingConfig.MaximumConcurrency and ProvisionedPollerConfig cannot both be set: an SQS event source "
            "mapping scales by maximum concurrency or in provisioned mode, not both.",
        ),
        (
            {"MetricsConfig": {"Metrics": ["EventCount", "ErrorCount"]}},
            "InvalidParameterValueException",
            "MetricsConfig ErrorCount is not valid for SQS event sources.",
        ),
        (
            {"MetricsConfig": {"Metrics": ["KafkaMetrics"]}},
            "InvalidParameterValueException",
            "MetricsConfig KafkaMetrics is not valid for SQS event sources.",
        ),
        (
            {"MetricsConfig": {"Metrics": ["EventCount", "Lag"]}},
            "ValidationException",
            "1 validation error detected: Value '[EventCount, Lag]' at 'metricsConfig.metrics' failed to satisfy "
            "constraint: Member must satisfy constraint: [Member must satisfy enum value set: [EventCount, "
            "ErrorCount, KafkaMetrics]]",
        ),
        (
            {"LoggingConfig": {"SystemLogLevel": "INFO"}},
            "InvalidParameterValueException",
            "LoggingConfig is not valid for SQS event sources.",
        ),
        (
            {"LoggingConfig": {"SystemLogLevel": "TRACE"}},
            "ValidationException",
            "1 validation error detected: Value 'TRACE' at 'loggingConfig.systemLogLevel' failed to satisfy "
            "constraint: Member must satisfy enum value set: [DEBUG, INFO, WARN]",
        ),
        (
            {"KMSKeyArn": "alias/orders"},
            "InvalidParameterValueException",
            "1 validation error detected: Value 'alias/orders' at 'kMSKeyArn' failed to satisfy constraint: Member "
            "must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:[a-z0-9-.]+:.*)|()",
        ),
        (
            {"Tags": {"aws:owner": "me"}},
            "InvalidParameterValueException",
            "Invalid tag key 'aws:owner': the aws: prefix is reserved for AWS.",
        ),
        (
            {"Tags": {"k" * 129: "v"}},
            "InvalidParameterValueException",
            f"Invalid tag key '{'k' * 129}': a key is 1 to 128 letters, digits, spaces and _ . : / = + - @.",
        ),
        (
            {"Tags": {"team": "a;b"}},
            "InvalidParameterValueException",
            "Invalid value for the tag 'team': a value is 0 to 256 letters, digits, spaces and _ . : / = + - @.",
        ),
        (
            {"Tags": {f"k{n}": "v" for n in range(51)}},
            "InvalidParameterValueException",
            "A resource holds at most 50 tags; these would be 51.",
        ),
    ],
)
def test_refusals_on_create_and_update(lam: Any, sqs: Any, params: dict[str, Any], code: str, message: str) -> None:
    arn = _queue(sqs, "refused")
    with pytest.raises(ClientError) as exc:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker", **params)
    assert _error(exc) == (code, 400, message)
    assert lam.list_event_source_mappings()["EventSourceMappings"] == []  # nothing created
    uid = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")["UUID"]
    before = lam.get_event_source_mapping(UUID=uid)
    if "Tags" not in params:  # UpdateEventSourceMapping takes no tags
        with pytest.raises(ClientError) as exc:
            lam.update_event_source_mapping(UUID=uid, **params)
        assert _error(exc) == (code, 400, message)
    after = lam.get_event_source_mapping(UUID=uid)
    assert {k: v for k, v in after.items() if k != "ResponseMetadata"} == {
        k: v for k, v in before.items() if k != "ResponseMetadata"
    }


def test_empty_kafka_only_objects_are_no_configuration(lam: Any, sqs: Any) -> None:
    """An empty ``LoggingConfig`` (as consoles and IaC tools send empty objects) sets nothing; a provisioned mode
    switched on while maximum concurrency is set must remove it in the same call."""
    arn = _queue(sqs, "empty")
    made = lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName="worker", LoggingConfig={}, ScalingConfig={"MaximumConcurrency": 3}
    )
    assert "LoggingConfig" not in made and made["ScalingConfig"] == {"MaximumConcurrency": 3}
    with pytest.raises(ClientError) as exc:
        lam.update_event_source_mapping(UUID=made["UUID"], ProvisionedPollerConfig={"MinimumPollers": 2})
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)


def test_the_tagging_api(server: SQSServer, lam: Any, sqs: Any, account: str) -> None:
    arn = _queue(sqs, "tagged")
    uid = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName="worker")["UUID"]
    resource = f"arn:aws:lambda:us-east-1:{account}:event-source-mapping:{uid}"
    assert lam.list_tags(Resource=resource)["Tags"] == {}
    answer = lam.tag_resource(Resource=resource, Tags={"team": "orders", "env": "dev"})
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 204
    lam.tag_resource(Resource=resource, Tags={"env": "prod"})  # a key it has takes the new value
    assert lam.list_tags(Resource=resource)["Tags"] == {"team": "orders", "env": "prod"}
    answer = lam.untag_resource(Resource=resource, TagKeys=["team", "absent"])
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert lam.list_tags(Resource=resource)["Tags"] == {"env": "prod"}
    lam.tag_resource(Resource=resource, Tags={f"k{n}": "v" for n in range(49)})  # 50 in all
    with pytest.raises(ClientError) as exc:
        lam.tag_resource(Resource=resource, Tags={"one-more": "v"})
    assert _error(exc) == (
        "InvalidParameterValueException",
        400,
        "A resource holds at most 50 tags; these would be 51.",
    )
    assert len(lam.list_tags(Resource=resource)["Tags"]) == 50

    # the wire: 204 without a body, as the model's TagResource and UntagResource answer
    request = urllib.request.Request(
        f"{server.endpoint_url}/2017-03-31/tags/{resource.replace(':', '%3A')}?tagKeys=env",
        method="DELETE",
        headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/us-east-1/lambda/aws4_request"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 204 and response.read() == b""
        assert response.headers.get("Content-Length") is None and response.headers.get("Content-Type") is None
    assert "env" not in lam.list_tags(Resource=resource)["Tags"]

    missing = f"arn:aws:lambda:us-east-1:{account}:event-source-mapping:{uuid.uuid4()}"
    another = server.lambda_client(new_account())
    for call in (
        lambda: lam.list_tags(Resource=missing),
        lambda: lam.tag_resource(Resource=missing, Tags={"a": "b"}),
        lambda: lam.untag_resource(Resource=missing, TagKeys=["a"]),
        lambda: another.list_tags(Resource=resource),  # another account's mapping, as one that does not exist
        lambda: another.tag_resource(Resource=resource, Tags={"a": "b"}),
    ):
        with pytest.raises(ClientError) as exc:
            call()
        assert _error(exc) == ("ResourceNotFoundException", 404, "The resource you requested does not exist.")
    function = f"arn:aws:lambda:us-east-1:{account}:function:worker"
    with pytest.raises(ClientError) as exc:
        lam.tag_resource(Resource=function, Tags={"a": "b"})
    assert _error(exc)[:2] == ("InvalidParameterValueException", 400)
    assert "sqsemu tags event source mappings only" in _error(exc)[2]
    with pytest.raises(ClientError) as exc:
        lam.list_tags(Resource="arn:aws:sqs:us-east-1:000000000000:q")
    code, status, message = _error(exc)
    assert (code, status) == ("InvalidParameterValueException", 400)
    assert message.startswith("1 validation error detected: Value 'arn:aws:sqs:us-east-1:000000000000:q' at 'resource'")


def _raw(server: SQSServer, method: str, path: str, body: Any, account: str) -> tuple[int, str, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.endpoint_url + path, data=data, method=method)
    request.add_header("Authorization", f"AWS4-HMAC-SHA256 Credential={account}/20260101/us-east-1/lambda/aws4_request")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, "", response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("X-Amzn-ErrorType", ""), exc.read()


def test_values_the_sdk_refuses_before_sending(server: SQSServer, sqs: Any, account: str) -> None:
    """Below the model's minimums (botocore checks those) and of the wrong type: the server's own answers."""
    arn = _queue(sqs, "raw")
    base = "/2015-03-31/event-source-mappings/"
    refused: list[dict[str, Any]] = [
        {"ProvisionedPollerConfig": {"MinimumPollers": 0}},
        {"ProvisionedPollerConfig": {"MinimumPollers": "2"}},
        {"ProvisionedPollerConfig": []},
        {"MetricsConfig": {"Metrics": "EventCount"}},
        {"KMSKeyArn": 5},
        {"Tags": ["team"]},
        {"Tags": {"": "empty key"}},
        {"Tags": {"team": 1}},
    ]
    for params in refused:
        status, code, body = _raw(
            server, "POST", base, {"EventSourceArn": arn, "FunctionName": "worker", **params}, account
        )
        assert (status, code) == (400, "InvalidParameterValueException"), params
        assert json.loads(body)["Type"] == "User"
    resource = "/2017-03-31/tags/" + f"arn:aws:lambda:us-east-1:{account}:event-source-mapping:{uuid.uuid4()}"
    status, code, _ = _raw(server, "PUT", resource, {}, account)  # no such operation
    assert (status, code) == (404, "UnknownOperationException")


def test_a_terraform_shaped_plan_shows_no_drift(lam: Any, sqs: Any, account: str) -> None:
    """The provider's create (every argument it sends for an SQS mapping), then its read (GetEventSourceMapping and
    ListTags on the mapping's ARN): each argument reads back as it was set, so the next plan is empty; an update of
    one argument reads back that change only."""
    arn = _queue(sqs, "terraform")
    config: dict[str, Any] = {
        "EventSourceArn": arn,
        "FunctionName": "worker",
        "Enabled": True,
        "BatchSize": 100,
        "MaximumBatchingWindowInSeconds": 5,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "FilterCriteria": {"Filters": [{"Pattern": PATTERN}]},
        "KMSKeyArn": KMS_KEY,
        "MetricsConfig": {"Metrics": ["EventCount"]},
        "ProvisionedPollerConfig": {"MinimumPollers": 5, "MaximumPollers": 50},
        "Tags": {"Name": "orders-consumer", "managed-by": "terraform"},
    }
    created = lam.create_event_source_mapping(**config)

    def read() -> dict[str, Any]:
        state = lam.get_event_source_mapping(UUID=created["UUID"])
        state["Tags"] = lam.list_tags(Resource=state["EventSourceMappingArn"])["Tags"]
        return state

    def drift(state: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
        return {
            key: (value, state.get(key))
            for key, value in wanted.items()
            if key != "FunctionName" and state.get(key) != value
        }

    state = read()
    assert drift(state, config) == {"Enabled": (True, None)}  # Enabled is read as State
    assert state["State"] == "Enabled" and state["FunctionArn"].endswith(":function:worker")
    changed = {**config, "ProvisionedPollerConfig": {"MinimumPollers": 5, "MaximumPollers": 80}}
    lam.update_event_source_mapping(UUID=created["UUID"], ProvisionedPollerConfig=changed["ProvisionedPollerConfig"])
    state = read()
    assert drift(state, changed) == {"Enabled": (True, None)}
    assert drift(state, config) == {
        "Enabled": (True, None),
        "ProvisionedPollerConfig": (config["ProvisionedPollerConfig"], changed["ProvisionedPollerConfig"]),
    }


def test_provisioned_mode_runs_ten_batches_per_minimum_poller(server: SQSServer, account: str) -> None:
    """``MinimumPollers`` 2: 20 batches in flight at once (10 concurrent invocations per SQS event poller)."""
    running = 0
    peak = 0
    wake: asyncio.Event | None = None

    async def handler(event: dict[str, Any], context: Any) -> None:
        nonlocal running, peak, wake
        if wake is None:
            wake = asyncio.Event()
        running += 1
        peak = max(peak, running)
        if running > 20:
            wake.set()
        try:  # wait (bounded) for a 21st invocation to run alongside: with 2 pollers none may
            await asyncio.wait_for(wake.wait(), 1.0)
        except TimeoutError:
            pass
        running -= 1

    server.function("provisioned", handler)
    sqs = client_for(server.endpoint_url, "json", access_key_id=account)
    url = sqs.create_queue(QueueName="provisioned")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    lam = server.lambda_client(account)
    uid = lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName="provisioned", BatchSize=1, ProvisionedPollerConfig={"MinimumPollers": 2}
    )["UUID"]
    server.settle()
    for start in range(0, 30, 10):
        entries = [{"Id": str(n), "MessageBody": f"m{n}"} for n in range(start, start + 10)]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    server.settle(timeout=30)
    assert peak == 20
    assert server.peek(url, account) == []
    lam.delete_event_source_mapping(UUID=uid)
    server.settle()
    sqs.close()


def _declared(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "sqsemu.toml"
    path.write_text(
        f"""
[[queues]]
name = "declared"

[[event_source_mappings]]
queue = "declared"
function = "worker"
{extra}
"""
    )
    return path


def test_the_config_file_and_durable_mode_keep_the_fields(tmp_path: Path) -> None:
    declared = _declared(
        tmp_path,
        'minimum_pollers = 4\nmaximum_pollers = 12\nmetrics = ["EventCount"]\n'
        f'kms_key_arn = "{KMS_KEY}"\ntags = {{ team = "orders" }}\n',
    )
    config = config_from_file(declared, clock="manual", log_level="warning", data_dir=str(tmp_path / "data"))
    with ServerThread(config) as srv:
        srv.app.event_sources.register_function("worker", _noop)  # type: ignore[attr-defined]
        lam = SQSServer.lambda_client_for(srv.endpoint_url)
        (mapping,) = lam.list_event_source_mappings()["EventSourceMappings"]
        assert _shape(mapping) == {
            "ProvisionedPollerConfig": {"MinimumPollers": 4, "MaximumPollers": 12},
            "MetricsConfig": {"Metrics": ["EventCount"]},
            "KMSKeyArn": KMS_KEY,
        }
        assert lam.list_tags(Resource=mapping["EventSourceMappingArn"])["Tags"] == {"team": "orders"}
        sqs = client_for(srv.endpoint_url, "json")
        sqs.create_queue(QueueName="made")
        sqs.close()
        made = lam.create_event_source_mapping(
            EventSourceArn=mapping["EventSourceArn"].replace(":declared", ":made"),
            FunctionName="worker",
            ProvisionedPollerConfig={"MaximumPollers": 30},
            MetricsConfig={"Metrics": ["EventCount"]},
            KMSKeyArn=KMS_KEY,
            Tags={"made": "by-api"},
        )
        lam.tag_resource(Resource=made["EventSourceMappingArn"], Tags={"later": "yes"})
    with ServerThread(config) as srv:  # restarted from the data folder
        lam = SQSServer.lambda_client_for(srv.endpoint_url)
        found = {m["UUID"]: m for m in lam.list_event_source_mappings()["EventSourceMappings"]}
        assert _shape(found[mapping["UUID"]]) == _shape(mapping)
        assert _shape(found[made["UUID"]]) == {
            "ProvisionedPollerConfig": {"MinimumPollers": 2, "MaximumPollers": 30},
            "MetricsConfig": {"Metrics": ["EventCount"]},
            "KMSKeyArn": KMS_KEY,
        }
        assert lam.list_tags(Resource=made["EventSourceMappingArn"])["Tags"] == {"made": "by-api", "later": "yes"}
        assert lam.list_tags(Resource=mapping["EventSourceMappingArn"])["Tags"] == {"team": "orders"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("minimum_pollers = 1", "MinimumPollers must be between 2 and 200 for SQS event sources, got 1."),
        ("maximum_concurrency = 5\nminimum_pollers = 2", "cannot both be set"),
        ('metrics = ["ErrorCount"]', "MetricsConfig ErrorCount is not valid for SQS event sources."),
        ("tags = { 'aws:x' = 'y' }", "Invalid tag key 'aws:x': the aws: prefix is reserved for AWS."),
        ('kms_key_arn = "nope"', "at 'kMSKeyArn' failed to satisfy constraint"),
        ("metrics = [1]", "metrics must be a list of strings"),
    ],
)
def test_the_config_file_refuses_what_the_api_refuses(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigFileError, match="event_source_mappings") as exc:
        config_from_file(_declared(tmp_path, extra))
    assert message in str(exc.value)
