"""SetQueueAttributes without ``Attributes`` (a required member, API Reference "SetQueueAttributes") is
``MissingParameter`` over both wire protocols (issue 28: it answered 200 and changed nothing)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def test_set_queue_attributes_without_attributes_is_missing_parameter(sqs: Any, make_queue: Any) -> None:
    url = make_queue()
    with pytest.raises(ClientError) as caught:
        sqs.set_queue_attributes(QueueUrl=url, Attributes={})
    error = caught.value.response["Error"]
    assert error["Code"].removeprefix("AWS.SimpleQueueService.") == "MissingParameter"
    assert error["Message"] == "The request must contain the parameter Attributes."
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
