"""A subscriber's check of an SNS signature, written from the AWS documentation alone (as an SDK's message validator
is), so the tests verify what sqsemu signs without using sqsemu's own string-to-sign."""

from __future__ import annotations

import base64
from collections.abc import Mapping

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

# SNS Developer Guide, "Verifying the signatures of Amazon SNS messages", step 5: the name-value pairs to sign,
# "listed in byte-sort order", Subject only "if included in the message".
SIGNED_NAMES = {
    "Notification": ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"],
    "SubscriptionConfirmation": ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"],
    "UnsubscribeConfirmation": ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"],
}


def documented_string_to_sign(doc: Mapping[str, object]) -> bytes:
    """Each pair as the name, a newline, the value, a newline."""
    names = SIGNED_NAMES[str(doc["Type"])]
    return "".join(f"{name}\n{doc[name]}\n" for name in names if doc.get(name) is not None).encode("utf-8")


def verify_as_subscriber(doc: Mapping[str, object], cert_pem: bytes) -> None:
    """Raise ``cryptography.exceptions.InvalidSignature`` unless ``doc``'s Signature verifies with the certificate:
    SHA1withRSA for SignatureVersion "1", SHA256withRSA for "2" ("HTTP/HTTPS notification JSON format")."""
    certificate = x509.load_pem_x509_certificate(cert_pem)
    public_key = certificate.public_key()
    assert isinstance(public_key, rsa.RSAPublicKey)
    algorithm: hashes.HashAlgorithm = {"1": hashes.SHA1(), "2": hashes.SHA256()}[str(doc["SignatureVersion"])]
    signature = base64.b64decode(str(doc["Signature"]), validate=True)
    public_key.verify(signature, documented_string_to_sign(doc), padding.PKCS1v15(), algorithm)
