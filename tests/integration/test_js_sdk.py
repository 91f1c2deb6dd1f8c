"""The AWS SDK for JavaScript v3 against a real server: send and receive with String, Number and Binary message
attributes; the SDK verifies MD5OfMessageBody itself, and tests/js/sdk_check.mjs checks every value and digest."""

from __future__ import annotations

from typing import Any

import pytest
from harness.node import run_js_check

pytestmark = pytest.mark.integration


def test_js_sdk_v3_sends_and_receives_with_message_attributes(server: Any) -> None:
    summary = run_js_check("sdk_check.mjs", server.endpoint_url)
    assert summary["ok"] is True
    assert summary["queueUrl"].startswith(server.endpoint_url)
