"""Engine rules whose behaviour or wording follows what AWS was observed to do: SSE-KMS switched off with an empty
``KmsMasterKeyId``, batch-level error messages, the per-message delay message, the bare invalid-queue-name message
and the ASCII character set of message attribute names."""

from __future__ import annotations

from tests.unit.engine_helpers import Engine

# --- KMS -----------------------------------------------------------------------------------------------------


def test_empty_kms_key_drops_both_kms_attributes_and_keeps_sse_sqs_off(engine: Engine) -> None:
    q = engine.queue(KmsMasterKeyId="alias/k", KmsDataKeyReusePeriodSeconds="600")
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": ""})
    everything = engine.broker.get_queue_attributes(q, ["All"])
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything
    assert everything["SqsManagedSseEnabled"] == "false"
    assert engine.broker.get_queue_attributes(q, ["KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"]) == {}


def test_empty_kms_key_wins_over_a_reuse_period_in_the_same_call(engine: Engine) -> None:
    q = engine.queue(KmsMasterKeyId="alias/k")
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "", "KmsDataKeyReusePeriodSeconds": "900"})
    everything = engine.broker.get_queue_attributes(q, ["All"])
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything


def test_empty_kms_key_with_sqs_managed_sse_on(engine: Engine) -> None:
    q = engine.queue()
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "alias/k"})
    engine.broker.set_queue_attributes(q, {"KmsMasterKeyId": "", "SqsManagedSseEnabled": "true"})
    everything = engine.broker.get_queue_attributes(q, ["All"])
    assert everything["SqsManagedSseEnabled"] == "true"
    assert "KmsMasterKeyId" not in everything
    assert "KmsDataKeyReusePeriodSeconds" not in everything

