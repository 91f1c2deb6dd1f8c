"""Fixtures of the Spark tests: one ``local[2]`` SparkSession and one real sqsemu server for the whole session.

- ``spark_server`` (session): :class:`sqsemu.testing.SQSServer` on 127.0.0.1 and a free port, real (system)
  clock, stopped at teardown. Spark's tasks reach it over HTTP like any SQS client.
- ``spark`` (session): ``local[2]``, UI off, bound to 127.0.0.1, 1 GiB driver, 2 shuffle partitions, UTC session
  time zone, the ``sqs`` format registered; its Python workers run this interpreter. It is also a Spark Connect
  server (the ``SparkConnectPlugin``, on 127.0.0.1 and a free port), so that the Spark Connect test needs no JVM
  of its own.
- ``spark_connect_port`` (session): that Spark Connect server's port.
- ``account`` (test): a fresh 12-digit account, so each test has its own empty set of queues.
- ``sqs``: a boto3 client of that account; ``sqs_options``: the data source's connection options for it
  (``endpointUrl``, ``region``, ``accessKeyId`` = the account, ``secretAccessKey``), to which a test adds
  ``queueUrl``.
- ``make_queue(name, **attributes) -> queue_url`` in that account.

Every test here carries the ``spark`` marker (``-m spark`` selects them, ``-m "not spark"`` leaves them out).
They are skipped when PySpark or Java is missing, except under CI (``CI`` set), where that is an error.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sqsemu.testing import SQSServer, new_account

_SPARK_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/spark carries the ``spark`` marker."""
    for item in items:
        if _SPARK_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.spark)


def _require_spark() -> None:
    problem = None
    try:
        import pyspark  # noqa: F401
    except ImportError:
        problem = "pyspark is not installed (pip install -e '.[test]' brings it)"
    if problem is None and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        problem = "no Java runtime (Spark needs Java 17+)"
    if problem is not None:
        if os.environ.get("CI"):
            raise RuntimeError(f"Spark tests cannot run: {problem}")
        pytest.skip(problem)


@pytest.fixture(scope="session")
def spark_server() -> Iterator[SQSServer]:
    """A real sqsemu server (system clock) for the Spark tests (skipped, or an error under CI, without Spark)."""
    _require_spark()
    with SQSServer(clock="system") as server:
        yield server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A session-wide ``local[2]`` SparkSession with the ``sqs`` format registered."""
    _require_spark()
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from sqsemu.spark import register

    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .config("spark.connect.grpc.binding.address", "127.0.0.1")
        .config("spark.connect.grpc.binding.port", str(_free_port()))
        .appName("sqsemu-spark-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.pollingDelay", "50ms")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_connect_port(spark: Any) -> int:
    """The port of the Spark Connect server that ``spark`` runs (listening on 127.0.0.1)."""
    return int(spark.conf.get("spark.connect.grpc.binding.port"))


@pytest.fixture
def account() -> str:
    """A fresh 12-digit account id: this test's own namespace of queues."""
    return new_account()


@pytest.fixture
def sqs(spark_server: SQSServer, account: str) -> Any:
    """A boto3 SQS client of ``account`` on ``spark_server``."""
    return spark_server.client(account=account)


@pytest.fixture
def sqs_options(spark_server: SQSServer, account: str) -> dict[str, str]:
    """Connection options of the ``sqs`` data source for ``account`` (add ``queueUrl``)."""
    return {
        "endpointUrl": spark_server.endpoint_url,
        "region": spark_server.region,
        "accessKeyId": account,
        "secretAccessKey": "sqsemu-test-secret",
    }


@pytest.fixture
def make_queue(sqs: Any) -> Callable[..., str]:
    """``make_queue(name, **attributes) -> queue_url``: create a queue in this test's account."""

    def make(name: str, **attributes: Any) -> str:
        attrs = {
            key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in attributes.items()
        }
        return str(sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"])

    return make
