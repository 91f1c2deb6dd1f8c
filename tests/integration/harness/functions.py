"""In-process Lambda functions and signed boto3 clients of any service, for the tests of event source mappings
under ``--auth iam`` (tests/integration/test_lambda_iam.py, test_lambda_function_accounts.py)."""

from __future__ import annotations

import threading
from typing import Any

from botocore.config import Config

from sqsemu.testing.boto import new_client

from .clients import REGION


class Recorder:
    """A function (``handler(event, context)``) recording the bodies of the SQS records it was given, in order;
    safe to call from the server's worker threads."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, event: dict[str, Any], context: Any) -> None:
        with self.lock:
            self.bodies.extend(r["body"] for r in event["Records"])


def signed_client(endpoint_url: str, service: str, key: str, *, region: str = REGION) -> Any:
    """A current boto3 client of ``service`` ("sqs", "lambda"...) for ``endpoint_url``, signing with access key
    ``key`` and secret ``secret-<key>`` (the tests' [[credentials]] convention), in ``region``, without retries."""
    return new_client(
        service,
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=key,
        aws_secret_access_key=f"secret-{key}",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
