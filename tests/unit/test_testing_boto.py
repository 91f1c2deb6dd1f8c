"""sqsemu.testing.boto: the testing aids' boto3 clients come from one session per process, and stay independent."""

from __future__ import annotations

import threading
from typing import Any

import botocore.loaders
import pytest
from botocore.config import Config
from botocore.exceptions import EndpointConnectionError

from sqsemu.testing import SQSServer
from sqsemu.testing.boto import new_client

OPTIONS = {"endpoint_url": "http://127.0.0.1:9", "region_name": "us-east-1"}


def test_a_second_client_reads_no_model_file_again(monkeypatch: pytest.MonkeyPatch) -> None:
    new_client("sqs", aws_access_key_id="a", aws_secret_access_key="s", **OPTIONS)  # the session has parsed SQS
    SQSServer.lambda_client_for("http://127.0.0.1:9")  # and Lambda
    read: list[str] = []
    original = botocore.loaders.JSONFileLoader.load_file

    def load_file(self: Any, file_path: str) -> Any:
        read.append(file_path)
        return original(self, file_path)

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", load_file)
    sqs = new_client("sqs", aws_access_key_id="b", aws_secret_access_key="s", **OPTIONS)
    functions = SQSServer.lambda_client_for("http://127.0.0.1:9")
    assert (sqs.meta.service_model.service_name, functions.meta.service_model.service_name) == ("sqs", "lambda")
    assert read == []  # a session of their own would have read each model, its rules and the partitions again


def test_clients_of_the_shared_session_keep_their_own_hooks_and_credentials() -> None:
    class Stopped(Exception):
        pass

    def stop(**_: Any) -> None:
        raise Stopped

    no_retries = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=2)
    first = new_client("sqs", aws_access_key_id="first-key", aws_secret_access_key="s1", config=no_retries, **OPTIONS)
    second = new_client("sqs", aws_access_key_id="second-key", aws_secret_access_key="s2", config=no_retries, **OPTIONS)
    first.meta.events.register("before-call.sqs.ListQueues", stop)
    with pytest.raises(Stopped):
        first.list_queues()
    with pytest.raises(EndpointConnectionError):  # the first client's hook is not the second's: it goes out
        second.list_queues()
    assert first._request_signer._credentials.access_key == "first-key"
    assert second._request_signer._credentials.access_key == "second-key"


def test_clients_are_made_from_many_threads_at_once() -> None:
    made: list[Any] = []
    errors: list[BaseException] = []

    def make(n: int) -> None:
        try:
            made.append(new_client("sqs", aws_access_key_id=f"key-{n}", aws_secret_access_key="s", **OPTIONS))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=make, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert sorted(c._request_signer._credentials.access_key for c in made) == [f"key-{n}" for n in range(8)]
