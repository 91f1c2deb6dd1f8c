"""``[[topics]]`` in the configuration file (sqsemu.declare): reading, SNS's rules applied before anything changes,
idempotent application over a restored state, and the CLI's usage error. No sockets: the server's SNS over a broker
on a ManualClock, click's CliRunner."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner

import sqsemu.server
from sqsemu import cli
from sqsemu.clock import ManualClock
from sqsemu.config import Config, SubscriptionDeclaration, TopicDeclaration
from sqsemu.declare import (
    ConfigFileError,
    DeclarationError,
    apply_declarations,
    apply_topic_declarations,
    check_declarations,
    config_from_file,
    load_file,
)
from sqsemu.engine.broker import Broker, Namespace
from sqsemu.sns.api import SNS
from sqsemu.sns.topics import Topics

ACCOUNT = "000000000000"
OTHER = "111111111111"

FULL = """
[[queues]]
name = "billing"
[[queues]]
name = "billing-dlq"
[[queues]]
name = "audit.fifo"

[[topics]]
name = "orders"
attributes = { DisplayName = "Orders", DeliveryPolicy = { http = { defaultHealthyRetryPolicy = { numRetries = 5 } } } }
tags = { team = "shop", tier = 1 }

[[topics.subscriptions]]
protocol = "sqs"
endpoint = "billing"
attributes = { RawMessageDelivery = true, FilterPolicy = { kind = ["placed"] } }
dead_letter_queue = "billing-dlq"

[[topics.subscriptions]]
protocol = "email"
endpoint = "ops@example.com"

[[topics]]
name = "audit.fifo"
account = "111111111111"
region = "eu-west-1"
attributes = { ContentBasedDeduplication = true }

[[topics.subscriptions]]
protocol = "sqs"
endpoint = "arn:aws:sqs:us-east-1:000000000000:audit.fifo"
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sqsemu.toml"
    path.write_text(text)
    return str(path)


def config_of(text: str, tmp_path: Path) -> Config:
    return config_from_file(write(tmp_path, text))


class Server:
    """A broker and the SNS of one server, the declarations applied as a server applies them at start-up."""

    def __init__(self) -> None:
        self.clock = ManualClock(1_700_000_000_000)
        self.broker = Broker(self.clock)
        self.sns = SNS(self.broker, self.clock)

    @property
    def topics(self) -> Topics:
        return self.sns.topics

    def declare(self, config: Config) -> None:
        apply_declarations(self.broker, config)
        apply_topic_declarations(self.topics, self.broker, config)

    def state(self) -> list[dict[str, Any]]:
        """Every topic's document, subscription ARNs and timestamps left out (they differ run to run)."""
        docs = []
        for topic in self.topics.by_arn.values():
            doc = topic.to_doc()
            doc["subscriptions"] = [
                {k: v for k, v in sub.items() if k not in ("arn", "created_ms")} for sub in doc["subscriptions"]
            ]
            docs.append(doc)
        return docs


def test_a_file_declares_topics_with_their_subscriptions(tmp_path: Path) -> None:
    loaded = load_file(write(tmp_path, FULL))
    orders, audit = loaded.topics
    assert orders == TopicDeclaration(
        "orders",
        attributes=(
            ("DisplayName", "Orders"),
            ("DeliveryPolicy", '{"http":{"defaultHealthyRetryPolicy":{"numRetries":5}}}'),
        ),
        tags=(("team", "shop"), ("tier", "1")),
        subscriptions=(
            SubscriptionDeclaration(
                "sqs",
                "billing",
                (("RawMessageDelivery", "true"), ("FilterPolicy", '{"kind":["placed"]}')),
                "billing-dlq",
            ),
            SubscriptionDeclaration("email", "ops@example.com"),
        ),
    )
    assert audit.attributes == (("FifoTopic", "true"), ("ContentBasedDeduplication", "true"))
    assert (audit.account, audit.region) == (OTHER, "eu-west-1")
    assert config_of(FULL, tmp_path).topics == loaded.topics


def test_declared_topics_and_subscriptions_are_made_by_snss_rules(tmp_path: Path) -> None:
    server = Server()
    server.declare(config_of(FULL, tmp_path))
    orders = server.topics.by_arn["arn:aws:sns:us-east-1:000000000000:orders"]
    assert orders.describe()["DisplayName"] == "Orders" and orders.tags == {"team": "shop", "tier": "1"}
    billing, email = orders.subscriptions.values()
    described = billing.describe()
    assert described["Endpoint"] == "arn:aws:sqs:us-east-1:000000000000:billing"  # a queue name, as its ARN
    assert described["RawMessageDelivery"] == "true" and described["FilterPolicy"] == '{"kind":["placed"]}'
    assert described["RedrivePolicy"] == '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:billing-dlq"}'
    assert billing.filter is not None
    # Confirmed at once, the e-mail one too: the file is the owner's word.
    assert [s.pending for s in (billing, email)] == [False, False]
    assert orders.describe()["SubscriptionsConfirmed"] == "2"
    assert (billing.owner, billing.principal) == (ACCOUNT, "arn:aws:iam::000000000000:root")
    audit = server.topics.by_arn["arn:aws:sns:eu-west-1:111111111111:audit.fifo"]
    assert audit.fifo and audit.describe()["ContentBasedDeduplication"] == "true"
    assert [s.owner for s in audit.subscriptions.values()] == [OTHER]


def test_declaring_again_over_the_same_state_changes_nothing(tmp_path: Path) -> None:
    config = config_of(FULL, tmp_path)
    server = Server()
    server.declare(config)
    before = server.state()
    arns = list(server.topics.subscriptions)
    apply_topic_declarations(server.topics, server.broker, config)
    assert server.state() == before and list(server.topics.subscriptions) == arns


def test_an_existing_topic_keeps_what_is_not_declared_and_gets_the_declared_tags() -> None:
    server = Server()
    topic = server.topics.create_topic(ACCOUNT, "us-east-1", "t", {"DisplayName": "T"}, {"a": "1", "b": "2"}, None)
    server.topics.subscribe(topic, "sqs", "arn:aws:sqs:us-east-1:000000000000:mine", None, ACCOUNT, "p")
    declared = TopicDeclaration(
        "t",
        tags=(("b", "3"), ("c", "4")),
        subscriptions=(SubscriptionDeclaration("sqs", "declared"),),
    )
    apply_topic_declarations(server.topics, None, Config(topics=(declared,)))
    assert topic.attributes == {"DisplayName": "T"} and topic.tags == {"a": "1", "b": "3", "c": "4"}
    assert [s.endpoint.rsplit(":", 1)[1] for s in topic.subscriptions.values()] == ["mine", "declared"]


def test_a_pending_subscription_that_is_declared_is_confirmed() -> None:
    server = Server()
    topic = server.topics.create_topic(ACCOUNT, "us-east-1", "t", None, None, None)
    sub, _ = server.topics.subscribe(topic, "https", "https://example.com/hook", None, ACCOUNT, "p")
    server.topics.mark_pending(sub)
    declared = TopicDeclaration("t", subscriptions=(SubscriptionDeclaration("https", "https://example.com/hook"),))
    apply_topic_declarations(server.topics, None, Config(topics=(declared,)))
    assert not sub.pending and len(topic.subscriptions) == 1
    assert sub.describe()["ConfirmationWasAuthenticated"] == "true"


def test_a_conflict_with_an_existing_topic_names_it_and_the_attribute_and_changes_nothing() -> None:
    server = Server()
    topic = server.topics.create_topic(ACCOUNT, "us-east-1", "t", {"DisplayName": "old"}, None, None)
    before = topic.to_doc()
    declared = (
        TopicDeclaration("new-one"),
        TopicDeclaration(
            "t",
            attributes=(("SignatureVersion", "1"), ("DisplayName", "new")),
            tags=(("k", "v"),),
            subscriptions=(SubscriptionDeclaration("sqs", "q"),),
        ),
    )
    with pytest.raises(DeclarationError) as caught:
        apply_topic_declarations(server.topics, None, Config(topics=declared))
    assert str(caught.value) == (
        "topic 't' (account 000000000000, region us-east-1) exists with a different value for attribute "
        "DisplayName: declared 'new', existing 'old'"
    )
    assert list(server.topics.by_arn) == [topic.arn] and topic.to_doc() == before


def test_a_subscription_declared_with_other_attributes_than_it_has_is_a_conflict() -> None:
    server = Server()
    topic = server.topics.create_topic(ACCOUNT, "us-east-1", "t", None, None, None)
    server.topics.subscribe(topic, "sqs", "arn:aws:sqs:us-east-1:000000000000:q", None, ACCOUNT, "p")
    declared = TopicDeclaration(
        "t", subscriptions=(SubscriptionDeclaration("sqs", "q", (("RawMessageDelivery", "true"),)),)
    )
    with pytest.raises(DeclarationError, match=r"subscription #1 \(sqs arn:aws:sqs:us-east-1:000000000000:q\): "):
        apply_topic_declarations(server.topics, None, Config(topics=(declared,)))
    assert not next(iter(topic.subscriptions.values())).raw


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (TopicDeclaration("bad name"), "topic 'bad name' (account 000000000000, region us-east-1): InvalidParameter"),
        (
            TopicDeclaration("t", attributes=(("Colour", "red"),)),
            "topic 't' (account 000000000000, region us-east-1): InvalidParameter: Invalid parameter: Attributes "
            "Reason: Unknown attribute Colour",
        ),
        (
            TopicDeclaration("t", subscriptions=(SubscriptionDeclaration("sqs", "jobs.fifo"),)),
            "subscription #1 (sqs arn:aws:sqs:us-east-1:000000000000:jobs.fifo): InvalidParameter: Invalid "
            "parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS "
            "topics",
        ),
        (
            TopicDeclaration(
                "t.fifo",
                attributes=(("FifoTopic", "true"),),
                subscriptions=(SubscriptionDeclaration("lambda", "arn:aws:lambda:us-east-1:000000000000:function:f"),),
            ),  # fmt: skip
            "subscription #1 (lambda arn:aws:lambda:us-east-1:000000000000:function:f): InvalidParameter: Invalid "
            "parameter: Invalid protocol type: lambda",
        ),
        (
            TopicDeclaration("t", subscriptions=(SubscriptionDeclaration("carrier-pigeon", "loft"),)),
            "Amazon SNS does not support this protocol string: carrier-pigeon",
        ),
        (
            TopicDeclaration("t", tags=(("aws:reserved", "x"),)),
            "Tag keys must not start with aws:",
        ),
    ],
)
def test_what_sns_refuses_names_the_topic_and_changes_nothing(declared: TopicDeclaration, expected: str) -> None:
    config = Config(topics=(TopicDeclaration("first"), declared))
    with pytest.raises(DeclarationError) as caught:
        check_declarations(config)
    assert expected in str(caught.value)
    server = Server()
    with pytest.raises(DeclarationError) as again:
        apply_topic_declarations(server.topics, server.broker, config)
    assert str(again.value) == str(caught.value)
    assert server.topics.by_arn == {}  # "first" was fine, and was not made either


def test_a_topic_declared_twice_is_an_error() -> None:
    config = Config(topics=(TopicDeclaration("t"), TopicDeclaration("t", region="eu-west-1"), TopicDeclaration("t")))
    with pytest.raises(DeclarationError, match=r"topic 't' \(account 000000000000, region us-east-1\) is declared"):
        check_declarations(config)


def test_a_subscription_to_a_queue_that_does_not_exist_is_made_and_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server()
    server.broker.create_queue(Namespace(ACCOUNT, "us-east-1"), "there", {}, {})
    subscriptions = (SubscriptionDeclaration("sqs", "there"), SubscriptionDeclaration("sqs", "missing"))
    with caplog.at_level(logging.WARNING, logger="sqsemu.config"):
        config = Config(topics=(TopicDeclaration("t", subscriptions=subscriptions),))
        apply_topic_declarations(server.topics, server.broker, config)
    assert len(server.topics.subscriptions) == 2
    warned = [r.getMessage() for r in caplog.records if r.name == "sqsemu.config"]
    assert len(warned) == 1 and "arn:aws:sqs:us-east-1:000000000000:missing: the queue does not exist" in warned[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("topics = 1", "topics must be an array of tables ([[topics]])"),
        ("[[topics]]\ntags = {}", "[[topics]] #1: name is required"),
        ("[[topics]]\nname = 't'\nqueue = 'q'", "[[topics]] #1 ('t'): unknown key(s) 'queue'"),
        ("[[topics]]\nname = 't'\naccount = 1", "[[topics]] #1 ('t'): account must be a quoted 12-digit string"),
        ("[[topics]]\nname = 't'\nattributes = { Policy = 1.5 }", "attributes.Policy must be a string, integer"),
        ("[[topics]]\nname = 't'\nattributes = { DisplayName = {} }", "attributes.DisplayName must be a string"),
        ("[[topics]]\nname = 't.fifo'\nattributes = { FifoTopic = false }", "FifoTopic must be true for a name"),
        ("[[topics]]\nname = 't'\nsubscriptions = 1", "subscriptions must be an array of tables"),
        ("[[topics]]\nname = 't'\n[[topics.subscriptions]]\nendpoint = 'q'", "subscription #1: protocol is required"),
        ("[[topics]]\nname = 't'\n[[topics.subscriptions]]\nprotocol = 'sqs'", "subscription #1: endpoint is required"),
        (
            "[[topics]]\nname = 't'\n[[topics.subscriptions]]\nprotocol = 'sqs'\nendpoint = 'q'\nraw = true",
            "[[topics]] #1 ('t'): subscription #1: unknown key(s) 'raw' (allowed: protocol, endpoint, attributes, "
            "dead_letter_queue)",
        ),
        (
            "[[topics]]\nname = 't'\n[[topics.subscriptions]]\nprotocol = 'sqs'\nendpoint = 'q'\n"
            "dead_letter_queue = 'd'\nattributes = { RedrivePolicy = { deadLetterTargetArn = 'x' } }",
            "give dead_letter_queue or attributes.RedrivePolicy, not both",
        ),
    ],
)
def test_a_bad_topics_table_names_the_file_and_the_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigFileError) as caught:
        load_file(path)
    assert str(caught.value).startswith(f"config file {path!r}: ") and expected in str(caught.value)


def invoke(args: list[str]) -> tuple[int, str, Config | None]:
    """Run ``sqsemu args`` with ``run`` replaced: (exit code, output, the Config it would serve)."""
    seen: list[Config] = []
    clean = {name: None for name in (f"SQSEMU_{f.upper()}" for f in Config.field_names())}
    with mock.patch.object(sqsemu.server, "run", seen.append):
        result = CliRunner().invoke(cli.main, args, env=clean)
    return result.exit_code, result.output, seen[0] if seen else None


def test_the_cli_refuses_a_declaration_sns_refuses_as_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, '[[topics]]\nname = "t"\n[[topics.subscriptions]]\nprotocol = "sqs"\nendpoint = "q.fifo"')
    code, output, config = invoke(["--config", path])
    assert (code, config) == (2, None), output
    assert f"config file {path!r}: topic 't' (account 000000000000, region us-east-1): subscription #1" in output
    assert "FIFO SQS Queues can not be subscribed to standard SNS topics" in output


def test_the_cli_passes_the_topics_on(tmp_path: Path) -> None:
    code, output, config = invoke(["--config", write(tmp_path, '[[topics]]\nname = "t"')])
    assert code == 0, output
    assert config is not None and config.topics == (TopicDeclaration("t"),)
