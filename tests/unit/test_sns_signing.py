"""sqsemu.sns.signing: the server's SNS signing key, its certificate, the string to sign and the signatures, checked
the way a subscriber checks them (tests/unit/sns_helpers.py, from the SNS Developer Guide's "Verifying the signatures
of Amazon SNS messages")."""

from __future__ import annotations

import base64
import re
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from sqsemu.sns.signing import CERT_FILE, KEY_FILE, SigningKey, SigningKeyError, string_to_sign
from tests.unit.sns_helpers import verify_as_subscriber

# The example of "Verifying the signatures of Amazon SNS messages", step 5: a Notification and its string to sign.
DOC_NOTIFICATION: dict[str, str | None] = {
    "Type": "Notification",
    "MessageId": "4d4dc071-ddbf-465d-bba8-08f81c89da64",
    "TopicArn": "arn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P",
    "Subject": "My subject",
    "Message": "My Test Message",
    "Timestamp": "2019-01-31T04:37:04.321Z",
}
DOC_STRING_TO_SIGN = (
    "Message\nMy Test Message\n"
    "MessageId\n4d4dc071-ddbf-465d-bba8-08f81c89da64\n"
    "Subject\nMy subject\n"
    "Timestamp\n2019-01-31T04:37:04.321Z\n"
    "TopicArn\narn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P\n"
    "Type\nNotification\n"
)

# The same page's SubscriptionConfirmation example (its "233..." token shortened as the page shortens it).
DOC_CONFIRMATION: dict[str, str | None] = {
    "Type": "SubscriptionConfirmation",
    "MessageId": "3d891288-136d-417f-bc05-901c108273ee",
    "Token": "233...",
    "TopicArn": "arn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P",
    "Message": "My Test Message",
    "SubscribeURL": "https://sns.us-east-2.amazonaws.com/?Action=ConfirmSubscription"
    "&TopicArn=arn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P&Token=233...",
    "Timestamp": "2019-01-31T19:25:13.719Z",
}
DOC_CONFIRMATION_STRING_TO_SIGN = (
    "Message\nMy Test Message\n"
    "MessageId\n3d891288-136d-417f-bc05-901c108273ee\n"
    "SubscribeURL\nhttps://sns.us-east-2.amazonaws.com/?Action=ConfirmSubscription"
    "&TopicArn=arn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P&Token=233...\n"
    "Timestamp\n2019-01-31T19:25:13.719Z\n"
    "Token\n233...\n"
    "TopicArn\narn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P\n"
    "Type\nSubscriptionConfirmation\n"
)


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.load_or_create(None)


def signed(key: SigningKey, message: dict[str, str | None], version: str) -> dict[str, str | None]:
    return {**message, "SignatureVersion": version, "Signature": key.sign(message, version)}


def test_the_string_to_sign_of_a_notification_is_the_documented_one() -> None:
    assert string_to_sign(DOC_NOTIFICATION) == DOC_STRING_TO_SIGN.encode()


def test_a_notification_without_a_subject_leaves_the_subject_out() -> None:
    expected = DOC_STRING_TO_SIGN.replace("Subject\nMy subject\n", "").encode()
    assert string_to_sign({**DOC_NOTIFICATION, "Subject": None}) == expected
    without = {name: value for name, value in DOC_NOTIFICATION.items() if name != "Subject"}
    assert string_to_sign(without) == expected


def test_the_string_to_sign_of_a_confirmation_is_the_documented_one() -> None:
    assert string_to_sign(DOC_CONFIRMATION) == DOC_CONFIRMATION_STRING_TO_SIGN.encode()
    unsubscribe = {**DOC_CONFIRMATION, "Type": "UnsubscribeConfirmation"}
    expected = DOC_CONFIRMATION_STRING_TO_SIGN.replace("\nSubscriptionConfirmation\n", "\nUnsubscribeConfirmation\n")
    assert string_to_sign(unsubscribe) == expected.encode()


def test_unsigned_fields_do_not_change_the_string_to_sign() -> None:
    extra = {**DOC_NOTIFICATION, "SequenceNumber": "10000000000000000001", "UnsubscribeURL": "https://x/"}
    assert string_to_sign(extra) == string_to_sign(DOC_NOTIFICATION)


def test_non_ascii_values_are_signed_as_utf8() -> None:
    message = {**DOC_NOTIFICATION, "Message": "héllo ✓"}
    assert "Message\nhéllo ✓\n".encode() in string_to_sign(message)


@pytest.mark.parametrize("version", ["1", "2"])
@pytest.mark.parametrize(
    "message",
    [
        DOC_NOTIFICATION,
        {**DOC_NOTIFICATION, "Subject": None},
        DOC_CONFIRMATION,
        {**DOC_CONFIRMATION, "Type": "UnsubscribeConfirmation"},
    ],
    ids=["notification", "notification-no-subject", "subscribe", "unsubscribe"],
)
def test_a_subscriber_verifies_the_signature_with_the_served_certificate(
    key: SigningKey, message: dict[str, str | None], version: str
) -> None:
    verify_as_subscriber(signed(key, message, version), key.cert_pem())
    assert key.verify(message, key.sign(message, version), version)


@pytest.mark.parametrize(("version", "other"), [("1", hashes.SHA256()), ("2", hashes.SHA1())])
def test_each_version_uses_its_own_hash(key: SigningKey, version: str, other: hashes.HashAlgorithm) -> None:
    """Version 1 is SHA1withRSA and version 2 SHA256withRSA: neither verifies under the other's hash."""
    public_key = x509.load_pem_x509_certificate(key.cert_pem()).public_key()
    assert isinstance(public_key, rsa.RSAPublicKey)
    signature = base64.b64decode(key.sign(DOC_NOTIFICATION, version))
    with pytest.raises(InvalidSignature):
        public_key.verify(signature, string_to_sign(DOC_NOTIFICATION), padding.PKCS1v15(), other)


def test_a_changed_message_does_not_verify(key: SigningKey) -> None:
    document = signed(key, DOC_NOTIFICATION, "2")
    with pytest.raises(InvalidSignature):
        verify_as_subscriber({**document, "Message": "My Test Message!"}, key.cert_pem())
    assert not key.verify({**DOC_NOTIFICATION, "Subject": None}, str(document["Signature"]), "2")
    assert not key.verify(DOC_NOTIFICATION, "not base64!", "2")


def test_unknown_versions_and_types_are_refused(key: SigningKey) -> None:
    with pytest.raises(ValueError, match="SignatureVersion must be '1'"):
        key.sign(DOC_NOTIFICATION, "3")
    with pytest.raises(ValueError, match="Type 'Event'"):
        key.sign({**DOC_NOTIFICATION, "Type": "Event"}, "1")
    with pytest.raises(ValueError, match="must have Token"):
        key.sign({**DOC_CONFIRMATION, "Token": None}, "1")


def test_the_certificate_is_a_self_signed_rsa_2048_one(key: SigningKey) -> None:
    pem = key.cert_pem()
    assert pem.startswith(b"-----BEGIN CERTIFICATE-----\n")
    certificate = x509.load_pem_x509_certificate(pem)
    public_key = certificate.public_key()
    assert isinstance(public_key, rsa.RSAPublicKey)
    assert public_key.key_size == 2048
    assert certificate.issuer == certificate.subject
    certificate.verify_directly_issued_by(certificate)
    common_name = certificate.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value
    assert common_name == "sns.amazonaws.com"


def test_the_certificate_is_named_like_aws(key: SigningKey) -> None:
    assert re.fullmatch(r"SimpleNotificationService-[0-9a-f]{32}\.pem", key.cert_name)


def test_in_memory_keys_are_new_each_time(key: SigningKey) -> None:
    other = SigningKey.load_or_create(None)
    assert other.cert_pem() != key.cert_pem()
    assert other.cert_name != key.cert_name
    with pytest.raises(InvalidSignature):
        verify_as_subscriber(signed(other, DOC_NOTIFICATION, "1"), key.cert_pem())


def test_a_durable_key_survives_a_restart(tmp_path: Path) -> None:
    first = SigningKey.load_or_create(tmp_path)
    assert stat.S_IMODE((tmp_path / KEY_FILE).stat().st_mode) == 0o600
    assert (tmp_path / CERT_FILE).read_bytes() == first.cert_pem()
    again = SigningKey.load_or_create(tmp_path)
    assert again.cert_pem() == first.cert_pem()
    assert again.cert_name == first.cert_name
    verify_as_subscriber(signed(again, DOC_NOTIFICATION, "2"), first.cert_pem())
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([KEY_FILE, CERT_FILE])


def test_a_missing_certificate_is_made_again_for_the_saved_key(tmp_path: Path) -> None:
    first = SigningKey.load_or_create(tmp_path)
    key_pem = (tmp_path / KEY_FILE).read_bytes()
    (tmp_path / CERT_FILE).unlink()
    again = SigningKey.load_or_create(tmp_path)
    assert (tmp_path / KEY_FILE).read_bytes() == key_pem
    assert (tmp_path / CERT_FILE).read_bytes() == again.cert_pem()
    verify_as_subscriber(signed(first, DOC_NOTIFICATION, "1"), again.cert_pem())


def test_a_certificate_without_its_key_is_replaced(tmp_path: Path) -> None:
    first = SigningKey.load_or_create(tmp_path)
    (tmp_path / KEY_FILE).unlink()
    again = SigningKey.load_or_create(tmp_path)
    assert again.cert_pem() != first.cert_pem()
    assert (tmp_path / CERT_FILE).read_bytes() == again.cert_pem()
    assert (tmp_path / KEY_FILE).exists()


def test_unusable_files_stop_the_start(tmp_path: Path) -> None:
    SigningKey.load_or_create(tmp_path)
    (tmp_path / CERT_FILE).write_bytes(b"not a certificate")
    with pytest.raises(SigningKeyError, match="cannot read the SNS signing certificate"):
        SigningKey.load_or_create(tmp_path)
    (tmp_path / CERT_FILE).write_bytes(SigningKey.create().cert_pem())
    with pytest.raises(SigningKeyError, match="does not belong to the signing key"):
        SigningKey.load_or_create(tmp_path)
    (tmp_path / KEY_FILE).write_bytes(b"-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n")
    with pytest.raises(SigningKeyError, match="cannot read the SNS signing key"):
        SigningKey.load_or_create(tmp_path)
