"""sqsemu.sns.envelope: what SNS delivers, compared byte for byte with deliveries recorded on real AWS.

Each recording below is the JSON-escaped ``Body`` of an SQS message as the source printed it; only the signature
(and, where the source redacted it, the certificate URL) differs from what sqsemu writes, since those come from
sqsemu's own key.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature

from sqsemu.sns.envelope import (
    http_headers,
    iso_timestamp,
    lambda_event,
    notification,
    subscription_confirmation,
    unsubscribe_confirmation,
)
from sqsemu.sns.signing import SigningKey
from tests.unit.sns_helpers import verify_as_subscriber


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.load_or_create(None)


def recorded(escaped_body: str, **replace: str) -> str:
    """The body text of a recording (given JSON-escaped, as printed), with placeholders replaced."""
    body: str = json.loads(escaped_body)
    for placeholder, value in replace.items():
        body = body.replace(f"<{placeholder}>", value)
    return body


# A standard topic's delivery to an SQS queue, no Subject, 2017-12-12: the ReceiveMessage result kept as a test
# fixture by nerves-project-attic/nerves_test_server (test/fixtures/sqs_message.exs). The recorded Signature is
# replaced by <SIGNATURE>.
NERVES = (
    r'"{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"2415c02c-0188-5ae1-9ae0-92861a2bbfce\",\n  \"TopicArn\" :'
    r" \"arn:aws:sns:us-east-1:991424406598:nerves-test-firmware\",\n  \"Message\" : \"{\\\"repo_org\\\":\\\"nerves-p"
    r"roject\\\",\\\"repo_name\\\":\\\"nerves_system_rpi3\\\",\\\"pr\\\":null,\\\"ci_build_url\\\":\\\"https://circle"
    r"ci.com/gh/nerves-project/nerves_system_rpi3/165\\\",\\\"ci_build_num\\\":\\\"165\\\",\\\"ci\\\":\\\"circleci\\\","
    r"\\\"tag\\\":true,\\\"sha\\\":\\\"11de7d26787207b14ee95cb6c788bdac31423dbe\\\",\\\"branch\\\":\\\"linux-4.9\\\"}"
    r"\",\n  \"Timestamp\" : \"2017-12-12T18:01:07.709Z\",\n  \"SignatureVersion\" : \"1\",\n  \"Signature\" : \"<SIG"
    r"NATURE>\",\n  \"SigningCertURL\" : \"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-433026a4050"
    r"d206028891664da859041.pem\",\n  \"UnsubscribeURL\" : \"https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe"
    r"&SubscriptionArn=arn:aws:sns:us-east-1:991424406598:nerves-test-firmware:18725b2b-5e07-4e77-a5ed-cff9c66c9089"
    r'\"\n}"'
)
NERVES_MESSAGE = (
    '{"repo_org":"nerves-project","repo_name":"nerves_system_rpi3","pr":null,'
    '"ci_build_url":"https://circleci.com/gh/nerves-project/nerves_system_rpi3/165","ci_build_num":"165",'
    '"ci":"circleci","tag":true,"sha":"11de7d26787207b14ee95cb6c788bdac31423dbe","branch":"linux-4.9"}'
)

# A standard topic's delivery with a Subject and a Message holding newlines, 2026-01-06: an SQS-triggered Lambda's
# CloudWatch log in a public course README (the "OrderTopic" fan-out lab). The source itself redacted the
# Signature and SigningCertURL (as "{SIGNATURE}" and "{URL}"): here <SIGNATURE> and <URL>.
ORDER_TOPIC = (
    r'"{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"fd49e18c-5340-50c5-b5f7-805af7f438cb\",\n  \"TopicArn\" :'
    r" \"arn:aws:sns:us-east-2:165015980598:OrderTopic\",\n  \"Subject\" : \"test\",\n  \"Message\" : \"{\\n  \\\"order"
    r"Id\\\": \\\"TEST-001\\\",\\n  \\\"type\\\": \\\"test\\\"\\n}\",\n  \"Timestamp\" : \"2026-01-06T05:49:40.302Z\","
    r"\n  \"SignatureVersion\" : \"1\",\n  \"Signature\" : \"<SIGNATURE>\",\n  \"SigningCertURL\" : \"<URL>\",\n  \"Un"
    r"subscribeURL\" : \"https://sns.us-east-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-"
    r'2:165015980598:OrderTopic:8cf04a76-985a-4c9e-9f74-f942dcc25b05\"\n}"'
)

# A FIFO topic's delivery with a Subject and one message attribute, 2022-03-29: an SQS-triggered Lambda's
# CloudWatch log in a public sample (fifo-sns-sqs-lambda-firehose-s3; the region, account and deployment id were
# replaced by the source's author). No SignatureVersion, Signature or SigningCertURL: FIFO topics' deliveries are
# unsigned (also aws/aws-sdk-net issue 3000, 2023, and its fix, pull request 4262, 2025).
FIFO = (
    r'"{\n  \"Type\" : \"Notification\",\n  \"MessageId\" : \"c6e8c718-ed12-5a3b-a27a-9da5ac1f4eef\",\n  \"SequenceNu'
    r"mber\" : \"10000000000000008000\",\n  \"TopicArn\" : \"arn:aws:sns:<YOUR-REGION-NAME>:xxxxxxxxxxx:fifo-sns-sqs-la"
    r"mbda-firehose-s3-topic-<YOUR-DEPLOYMENT-ID>.fifo\",\n  \"Subject\" : \"TEST MESSAGE\",\n  \"Message\" : \"TESTIN"
    r"G MESSAGE FROM CLI\",\n  \"Timestamp\" : \"2022-03-29T17:15:57.176Z\",\n  \"UnsubscribeURL\" : \"https://sns.<YO"
    r"UR-REGION-NAME>.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:<YOUR-REGION-NAME>:xxxxxxxxxxx:fi"
    r"fo-sns-sqs-lambda-firehose-s3-topic-<YOUR-DEPLOYMENT-ID>.fifo:06aa6509-19b1-4416-9099-68854a24b258\",\n  \"Messa"
    r'geAttributes\" : {\n    \"key1\" : {\"Type\":\"String\",\"Value\":\"value1\"}\n  }\n}"'
)
FIFO_TOPIC = (
    "arn:aws:sns:<YOUR-REGION-NAME>:xxxxxxxxxxx:fifo-sns-sqs-lambda-firehose-s3-topic-<YOUR-DEPLOYMENT-ID>.fifo"
)

# A standard topic's delivery with two message attributes, 2023-01-17: ahonnecke/SnsPublisher, README.md
# ("Delivered contents", there indented four spaces as a Markdown block). Signature replaced by <SIGNATURE>.
ASHTON = (
    "{\n"
    '  "Type" : "Notification",\n'
    '  "MessageId" : "2023301a-1a24-528f-aae4-6c5b3e4ebe63",\n'
    '  "TopicArn" : "arn:aws:sns:us-west-2:024726604032:AshtonTest",\n'
    '  "Message" : "{\\"foo\\": \\"bar\\"}",\n'
    '  "Timestamp" : "2023-01-17T22:33:14.087Z",\n'
    '  "SignatureVersion" : "1",\n'
    '  "Signature" : "<SIGNATURE>",\n'
    '  "SigningCertURL" : "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-56e67fcb41f6fec09b0196692'
    '625d385.pem",\n'
    '  "UnsubscribeURL" : "https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-we'
    'st-2:024726604032:AshtonTest:f1abc4f3-7665-4968-b39c-8a4c6f082d9b",\n'
    '  "MessageAttributes" : {\n'
    '    "SDLCEnv" : {"Type":"String","Value":"PROD"},\n'
    '    "CirrusVersion" : {"Type":"String","Value":"v1.1.0"}\n'
    "  }\n"
    "}"
)


def test_a_notification_without_subject_is_laid_out_as_recorded(key: SigningKey) -> None:
    body = notification(
        message_id="2415c02c-0188-5ae1-9ae0-92861a2bbfce",
        topic_arn="arn:aws:sns:us-east-1:991424406598:nerves-test-firmware",
        subject=None,
        message=NERVES_MESSAGE,
        timestamp_ms=1513101667709,
        signature_version="1",
        signing=key,
        cert_url="https://sns.us-east-1.amazonaws.com/SimpleNotificationService-433026a4050d206028891664da859041.pem",
        unsubscribe_url="https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:"
        "us-east-1:991424406598:nerves-test-firmware:18725b2b-5e07-4e77-a5ed-cff9c66c9089",
        message_attributes={},
        sequence_number=None,
    )
    document = json.loads(body)
    assert "Subject" not in document
    assert body == recorded(NERVES, SIGNATURE=document["Signature"])
    verify_as_subscriber(document, key.cert_pem())


def test_a_notification_with_subject_is_laid_out_as_recorded(key: SigningKey) -> None:
    body = notification(
        message_id="fd49e18c-5340-50c5-b5f7-805af7f438cb",
        topic_arn="arn:aws:sns:us-east-2:165015980598:OrderTopic",
        subject="test",
        message='{\n  "orderId": "TEST-001",\n  "type": "test"\n}',
        timestamp_ms=1767678580302,
        signature_version="1",
        signing=key,
        cert_url="http://localhost:9324/SimpleNotificationService-x.pem",
        unsubscribe_url="https://sns.us-east-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:"
        "us-east-2:165015980598:OrderTopic:8cf04a76-985a-4c9e-9f74-f942dcc25b05",
        message_attributes={},
        sequence_number=None,
    )
    document = json.loads(body)
    assert document["Subject"] == "test"
    expected = recorded(
        ORDER_TOPIC, SIGNATURE=document["Signature"], URL="http://localhost:9324/SimpleNotificationService-x.pem"
    )
    assert body == expected
    verify_as_subscriber(document, key.cert_pem())


def test_message_attributes_come_last_one_line_each(key: SigningKey) -> None:
    body = notification(
        message_id="2023301a-1a24-528f-aae4-6c5b3e4ebe63",
        topic_arn="arn:aws:sns:us-west-2:024726604032:AshtonTest",
        subject=None,
        message='{"foo": "bar"}',
        timestamp_ms=1673994794087,
        signature_version="1",
        signing=key,
        cert_url="https://sns.us-west-2.amazonaws.com/SimpleNotificationService-56e67fcb41f6fec09b0196692625d385.pem",
        unsubscribe_url="https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:"
        "us-west-2:024726604032:AshtonTest:f1abc4f3-7665-4968-b39c-8a4c6f082d9b",
        message_attributes={"SDLCEnv": ("String", "PROD"), "CirrusVersion": ("String", "v1.1.0")},
        sequence_number=None,
    )
    document = json.loads(body)
    assert body == ASHTON.replace("<SIGNATURE>", document["Signature"])
    verify_as_subscriber(document, key.cert_pem())


def test_a_fifo_notification_has_its_sequence_number_after_the_message_id_and_no_signature(key: SigningKey) -> None:
    body = notification(
        message_id="c6e8c718-ed12-5a3b-a27a-9da5ac1f4eef",
        topic_arn=FIFO_TOPIC,
        subject="TEST MESSAGE",
        message="TESTING MESSAGE FROM CLI",
        timestamp_ms=1648574157176,
        signature_version="1",
        signing=key,
        cert_url="https://unused.example/cert.pem",
        unsubscribe_url="https://sns.<YOUR-REGION-NAME>.amazonaws.com/?Action=Unsubscribe&SubscriptionArn="
        + FIFO_TOPIC
        + ":06aa6509-19b1-4416-9099-68854a24b258",
        message_attributes={"key1": ("String", "value1")},
        sequence_number="10000000000000008000",
    )
    assert body == recorded(FIFO)
    assert list(json.loads(body))[:3] == ["Type", "MessageId", "SequenceNumber"]


def test_every_attribute_type_is_written_as_type_and_value(key: SigningKey) -> None:
    body = notification(
        message_id="m",
        topic_arn="arn:aws:sns:us-east-1:000000000000:t",
        subject=None,
        message="x",
        timestamp_ms=0,
        signature_version="2",
        signing=key,
        cert_url="c",
        unsubscribe_url="u",
        message_attributes={
            "s": ("String", 'say "hi"'),
            "n": ("Number", "1.5"),
            "b": ("Binary", "AAEC"),
            "a": ("String.Array", '["x", 1]'),
        },
        sequence_number=None,
    )
    assert body.endswith(
        '  "MessageAttributes" : {\n'
        '    "s" : {"Type":"String","Value":"say \\"hi\\""},\n'
        '    "n" : {"Type":"Number","Value":"1.5"},\n'
        '    "b" : {"Type":"Binary","Value":"AAEC"},\n'
        '    "a" : {"Type":"String.Array","Value":"[\\"x\\", 1]"}\n'
        "  }\n}"
    )
    assert json.loads(body)["MessageAttributes"]["b"] == {"Type": "Binary", "Value": "AAEC"}


@pytest.mark.parametrize("version", ["1", "2"])
def test_both_signature_versions_verify_with_the_served_certificate(key: SigningKey, version: str) -> None:
    for subject in (None, "a subject"):
        body = notification(
            message_id="6f1b8a0e-0000-4000-8000-000000000001",
            topic_arn="arn:aws:sns:us-east-1:000000000000:orders",
            subject=subject,
            message='line 1\nline 2 "quoted" \\ tab\t',
            timestamp_ms=1_700_000_000_123,
            signature_version=version,
            signing=key,
            cert_url="http://localhost:9324/x.pem",
            unsubscribe_url="http://localhost:9324/?Action=Unsubscribe",
            message_attributes={"k": ("String", "v")},
            sequence_number=None,
        )
        document = json.loads(body)
        assert document["SignatureVersion"] == version
        verify_as_subscriber(document, key.cert_pem())
        with pytest.raises(InvalidSignature):
            verify_as_subscriber({**document, "Subject": "forged"}, key.cert_pem())


def test_an_unknown_signature_version_is_refused(key: SigningKey) -> None:
    with pytest.raises(ValueError, match="SignatureVersion"):
        notification(
            message_id="m",
            topic_arn="t",
            subject=None,
            message="x",
            timestamp_ms=0,
            signature_version="3",
            signing=key,
            cert_url="c",
            unsubscribe_url="u",
            message_attributes={},
            sequence_number=None,
        )


def test_strings_escape_only_what_json_requires(key: SigningKey) -> None:
    """'/' stays as it is (the recordings' URLs and Message show it); characters beyond ASCII are written as they are
    and control characters as short escapes or \\u00XX (sqsemu's choice where no recording shows it: the JSON
    writers' default)."""
    body = notification(
        message_id="m",
        topic_arn="t",
        subject="héllo ✓ 🚲",
        message='a/b "c" \\ \r\n\t\b\f \x01\x1f \u2028',
        timestamp_ms=0,
        signature_version="1",
        signing=key,
        cert_url="https://x/y.pem",
        unsubscribe_url="https://x/?a=1&b=2",
        message_attributes={},
        sequence_number=None,
    )
    assert '  "Subject" : "héllo ✓ 🚲",\n' in body
    assert '  "Message" : "a/b \\"c\\" \\\\ \\r\\n\\t\\b\\f \\u0001\\u001F \u2028",\n' in body
    assert '"SigningCertURL" : "https://x/y.pem"' in body
    assert json.loads(body)["Message"] == 'a/b "c" \\ \r\n\t\b\f \x01\x1f \u2028'


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (1_704_067_200_000, "2024-01-01T00:00:00.000Z"),
        (1_513_101_667_709, "2017-12-12T18:01:07.709Z"),
        (1_700_000_000_001, "2023-11-14T22:13:20.001Z"),
        (0, "1970-01-01T00:00:00.000Z"),
    ],
)
def test_timestamps_are_utc_with_milliseconds(ms: int, text: str) -> None:
    assert iso_timestamp(ms) == text


# "HTTP/HTTPS subscription confirmation JSON format" (SNS Developer Guide): the example POST body. The page closes
# it with "\n  }"; the recorded SQS delivery of a SubscriptionConfirmation kept as a Go test fixture (2020-08-19)
# closes it with "\n}" as every notification does, which sqsemu follows.
DOC_SUBSCRIBE = (
    "{\n"
    '  "Type" : "SubscriptionConfirmation",\n'
    '  "MessageId" : "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",\n'
    '  "Token" : "<TOKEN>",\n'
    '  "TopicArn" : "arn:aws:sns:us-west-2:123456789012:MyTopic",\n'
    '  "Message" : "You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.\\nTo '
    'confirm the subscription, visit the SubscribeURL included in this message.",\n'
    '  "SubscribeURL" : "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-wes'
    't-2:123456789012:MyTopic&Token=<TOKEN>",\n'
    '  "Timestamp" : "2012-04-26T20:45:04.751Z",\n'
    '  "SignatureVersion" : "1",\n'
    '  "Signature" : "<SIGNATURE>",\n'
    '  "SigningCertURL" : "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96d'
    'e52f.pem"\n'
    "}"
)
DOC_TOKEN = (
    "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece2941"
    "7f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736"
)

# "HTTP/HTTPS unsubscribe confirmation JSON format": the example POST body (closing brace as above).
DOC_UNSUBSCRIBE = (
    "{\n"
    '  "Type" : "UnsubscribeConfirmation",\n'
    '  "MessageId" : "47138184-6831-46b8-8f7c-afc488602d7d",\n'
    '  "Token" : "<TOKEN>",\n'
    '  "TopicArn" : "arn:aws:sns:us-west-2:123456789012:MyTopic",\n'
    '  "Message" : "You have chosen to deactivate subscription arn:aws:sns:us-west-2:123456789012:MyTopic:2bcfbf39-05'
    "c3-41de-beaa-fcfcc21c8f55.\\nTo cancel this operation and restore the subscription, visit the SubscribeURL inclu"
    'ded in this message.",\n'
    '  "SubscribeURL" : "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-wes'
    't-2:123456789012:MyTopic&Token=<TOKEN>",\n'
    '  "Timestamp" : "2012-04-26T20:06:41.581Z",\n'
    '  "SignatureVersion" : "1",\n'
    '  "Signature" : "<SIGNATURE>",\n'
    '  "SigningCertURL" : "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96d'
    'e52f.pem"\n'
    "}"
)
DOC_UNSUBSCRIBE_TOKEN = (
    "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f7948a98bac386edfe3e10314e873973b3e0a3c09119b722dedf2b5e31c59b13edbb2"
    "6417c19f109351e6f2169efa9085ffe97e10535f4179ac1a03590b0f541f209c190f9ae23219ed6c470453e06c19b5ba9fcbb27daeb7c7"
)
DOC_CERT = "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem"
CONFIRM_URL = "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:"


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_subscription_confirmation_is_laid_out_as_documented(key: SigningKey, version: str) -> None:
    body = subscription_confirmation(
        message_id="165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        token=DOC_TOKEN,
        topic_arn="arn:aws:sns:us-west-2:123456789012:MyTopic",
        subscribe_url=CONFIRM_URL + "123456789012:MyTopic&Token=" + DOC_TOKEN,
        timestamp_ms=1335473104751,
        signature_version=version,
        signing=key,
        cert_url=DOC_CERT,
    )
    document = json.loads(body)
    expected = DOC_SUBSCRIBE.replace("<TOKEN>", DOC_TOKEN).replace("<SIGNATURE>", document["Signature"])
    assert body == expected.replace('"SignatureVersion" : "1"', f'"SignatureVersion" : "{version}"')
    verify_as_subscriber(document, key.cert_pem())


def test_an_unsubscribe_confirmation_is_laid_out_as_documented(key: SigningKey) -> None:
    body = unsubscribe_confirmation(
        message_id="47138184-6831-46b8-8f7c-afc488602d7d",
        token=DOC_UNSUBSCRIBE_TOKEN,
        topic_arn="arn:aws:sns:us-west-2:123456789012:MyTopic",
        subscription_arn="arn:aws:sns:us-west-2:123456789012:MyTopic:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55",
        subscribe_url=CONFIRM_URL + "123456789012:MyTopic&Token=" + DOC_UNSUBSCRIBE_TOKEN,
        timestamp_ms=1335470801581,
        signature_version="1",
        signing=key,
        cert_url=DOC_CERT,
    )
    document = json.loads(body)
    expected = DOC_UNSUBSCRIBE.replace("<TOKEN>", DOC_UNSUBSCRIBE_TOKEN)
    assert body == expected.replace("<SIGNATURE>", document["Signature"])
    verify_as_subscriber(document, key.cert_pem())


def lambda_record(key: SigningKey, subject: str | None, attributes: dict[str, tuple[str, str]]) -> dict[str, Any]:
    event = lambda_event(
        subscription_arn="arn:aws:sns:us-east-2:123456789012:sns-lambda:21be56ed-a058-49f5-8c98-aedd2564c486",
        message_id="95df01b4-ee98-5cb9-9903-4c221d41eb5e",
        topic_arn="arn:aws:sns:us-east-2:123456789012:sns-lambda",
        subject=subject,
        message="Hello from SNS!",
        timestamp_ms=1546433107000,
        signature_version="1",
        signing=key,
        cert_url="http://localhost:9324/SimpleNotificationService-x.pem",
        unsubscribe_url="http://localhost:9324/?Action=Unsubscribe",
        message_attributes=attributes,
    )
    assert list(event) == ["Records"]
    assert len(event["Records"]) == 1
    record: dict[str, Any] = event["Records"][0]
    return record


def test_the_lambda_event_has_the_recorded_keys_in_order(key: SigningKey) -> None:
    """Order as recorded from real invocations (gists mikegrima/e4e754ccf22b1aa45ed9a6e18a063ee3, 2019, and
    purdy/8a8f6986a7b8fb427e1591e29ca22ec4, 2018; alexchristy/SSA-Document-Analyzer's fixtures, 2023): the Lambda
    Developer Guide's example ("Using AWS Lambda with Amazon SNS") has the same keys in another order."""
    record = lambda_record(key, None, {})
    assert list(record) == ["EventSource", "EventVersion", "EventSubscriptionArn", "Sns"]
    assert record["EventSource"] == "aws:sns"
    assert record["EventVersion"] == "1.0"
    assert record["EventSubscriptionArn"] == (
        "arn:aws:sns:us-east-2:123456789012:sns-lambda:21be56ed-a058-49f5-8c98-aedd2564c486"
    )
    sns = record["Sns"]
    assert isinstance(sns, dict)
    assert list(sns) == [
        "Type",
        "MessageId",
        "TopicArn",
        "Subject",
        "Message",
        "Timestamp",
        "SignatureVersion",
        "Signature",
        "SigningCertUrl",
        "UnsubscribeUrl",
        "MessageAttributes",
    ]
    assert sns["Subject"] is None
    assert sns["MessageAttributes"] == {}
    assert sns["Timestamp"] == "2019-01-02T12:45:07.000Z"
    assert sns["SigningCertUrl"] == "http://localhost:9324/SimpleNotificationService-x.pem"
    assert sns["UnsubscribeUrl"] == "http://localhost:9324/?Action=Unsubscribe"
    assert json.loads(json.dumps(record))["Sns"]["Subject"] is None


def test_the_lambda_event_carries_subject_attributes_and_a_valid_signature(key: SigningKey) -> None:
    record = lambda_record(key, "TestInvoke", {"Test": ("String", "TestString"), "TestBinary": ("Binary", "AAE=")})
    sns = record["Sns"]
    assert isinstance(sns, dict)
    assert sns["Subject"] == "TestInvoke"
    assert sns["MessageAttributes"] == {
        "Test": {"Type": "String", "Value": "TestString"},
        "TestBinary": {"Type": "Binary", "Value": "AAE="},
    }
    verify_as_subscriber(sns, key.cert_pem())
    verify_as_subscriber(lambda_record(key, None, {})["Sns"], key.cert_pem())


def test_http_headers_of_a_notification() -> None:
    """SNS Developer Guide, "HTTP/HTTPS headers": the example Notification POST, less the HTTP client's own
    Content-Length, Host and Connection."""
    assert http_headers(
        "Notification",
        "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
        "arn:aws:sns:us-west-2:123456789012:MyTopic",
        "arn:aws:sns:us-west-2:123456789012:MyTopic:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55",
        raw=False,
    ) == [
        ("x-amz-sns-message-type", "Notification"),
        ("x-amz-sns-message-id", "165545c9-2a5c-472c-8df2-7ff2be2b3b1b"),
        ("x-amz-sns-topic-arn", "arn:aws:sns:us-west-2:123456789012:MyTopic"),
        (
            "x-amz-sns-subscription-arn",
            "arn:aws:sns:us-west-2:123456789012:MyTopic:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55",
        ),
        ("Content-Type", "text/plain; charset=UTF-8"),
        ("User-Agent", "Amazon Simple Notification Service Agent"),
    ]


def test_http_headers_of_a_raw_delivery_say_so() -> None:
    """ "Amazon SNS raw message delivery": the header x-amz-sns-rawdelivery, value true, is added."""
    headers = http_headers("Notification", "m", "t", "s", raw=True)
    assert ("x-amz-sns-rawdelivery", "true") in headers
    assert [name for name, _ in headers].index("x-amz-sns-rawdelivery") == 4
    assert "x-amz-sns-rawdelivery" not in dict(http_headers("Notification", "m", "t", "s", raw=False))


def test_http_headers_of_a_subscription_confirmation_have_no_subscription_arn() -> None:
    """The documented SubscriptionConfirmation POST has no x-amz-sns-subscription-arn header."""
    headers = http_headers("SubscriptionConfirmation", "m", "t", None, raw=False)
    assert [name for name, _ in headers] == [
        "x-amz-sns-message-type",
        "x-amz-sns-message-id",
        "x-amz-sns-topic-arn",
        "Content-Type",
        "User-Agent",
    ]
    assert headers[0] == ("x-amz-sns-message-type", "SubscriptionConfirmation")
    unsubscribe = http_headers("UnsubscribeConfirmation", "m", "t", "s", raw=False)
    assert ("x-amz-sns-subscription-arn", "s") in unsubscribe


def test_http_headers_refuse_an_unknown_type() -> None:
    with pytest.raises(ValueError, match="not 'Event'"):
        http_headers("Event", "m", "t", None, raw=False)
