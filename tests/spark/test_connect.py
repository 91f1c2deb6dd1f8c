"""The ``sqs`` data source from a Spark Connect client: registered, written, read and streamed through
``SparkSession.builder.remote(...)`` against a local Spark Connect server: the Spark tests' shared ``local[2]``
session, which runs the Spark Connect plugin (tests/spark/conftest.py), so that no second JVM is started for it.

The Python Data Source API works over Spark Connect (``spark.dataSource.register`` sends the class, pickled, to the
server; the server runs the reader's and writer's methods in its own Python workers), so the server's Python must be
able to import ``sqsemu.spark`` (here: the same interpreter).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sqsemu.testing import SQSServer

pytestmark = pytest.mark.spark

# The client: a Spark Connect session on that server; registers the data source and runs the steps the test
# names, printing one JSON line of results. (A process that runs a regular Spark session, as this test's does,
# cannot open a Spark Connect one.)
CLIENT = """
import json, sys
from pyspark.sql import SparkSession
from pyspark.sql.connect.session import SparkSession as ConnectSession
from sqsemu.spark import register
port, options, source, target, checkpoint = sys.argv[1], json.loads(sys.argv[2]), *sys.argv[3:6]
spark = SparkSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()
register(spark)
bodies = [f"event-{i:02d}" for i in range(25)]
spark.createDataFrame([(b,) for b in bodies], "body string").write.format("sqs").options(**options).option(
    "queueUrl", source).mode("append").save()
sent = int(spark.read.format("sqs").options(**options).option("queueUrl", source).option("maxMessages", "25")
           .option("waitTimeSeconds", "0").option("visibilityTimeout", "0").load().count())
query = (spark.readStream.format("sqs").options(**options).option("queueUrl", source)
         .option("maxMessagesPerTrigger", "10").option("waitTimeSeconds", "0").load()
         .selectExpr("upper(body) AS body")
         .writeStream.format("sqs").options(**options).option("queueUrl", target)
         .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
finished = query.awaitTermination(120)
failure = query.exception()
read = [r.body for r in spark.read.format("sqs").options(**options).option("queueUrl", target)
        .option("maxMessages", "25").option("waitTimeSeconds", "0").load().select("body").collect()]
print(json.dumps({"connect": isinstance(spark, ConnectSession), "sent": sent, "finished": finished,
                  "failure": str(failure) if failure else None, "read": sorted(read)}), flush=True)
spark.stop()
"""


@pytest.fixture
def connect_port(spark_connect_port: int) -> int:
    """The port of the session's Spark Connect server (tests/spark/conftest.py), once it listens."""
    try:
        import grpc  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("pyspark[connect] is not installed (the test extra brings it)")
    socket.create_connection(("127.0.0.1", spark_connect_port), timeout=10).close()
    return spark_connect_port


def _env() -> dict[str, str]:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}


@pytest.mark.timeout(600)  # 150 s on 2 cores beside a parallel run: room for a slower machine
def test_the_data_source_works_from_a_spark_connect_client(
    connect_port: int,
    spark_server: SQSServer,
    sqs_options: dict[str, str],
    make_queue: Callable[..., str],
    tmp_path: Path,
) -> None:
    source = make_queue("connect-in")
    target = make_queue("connect-out")
    command = [
        sys.executable,
        "-c",
        CLIENT,
        str(connect_port),
        json.dumps(sqs_options),
        source,
        target,
        str(tmp_path / "checkpoint"),
    ]
    done = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    bodies = [f"event-{i:02d}" for i in range(25)]
    assert result["connect"] is True
    assert result["sent"] == 25  # the batch write, seen by a batch read
    assert result["finished"] is True and result["failure"] is None
    assert spark_server.peek(source) == []  # streamed, and deleted after each commit
    assert sorted(m["body"] for m in spark_server.peek(target)) == [b.upper() for b in bodies]
    assert result["read"] == [b.upper() for b in bodies]
