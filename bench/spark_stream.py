"""Streaming read throughput of the Spark data source, with and without latency added to every SQS call.

    python bench/spark_stream.py                   # 0 ms and 20 ms, 3 runs each, both workloads
    python bench/spark_stream.py --latency-ms 20 --runs 1 --only receive

Starts sqsemu in its own process (``python -m sqsemu``, on a free port) and, for each added latency, a
fault-injection rule ``{"action": "*", "latency_ms": L}`` (``POST /_sqsemu/faults``): every SQS call then answers L
milliseconds late, as calls to Amazon SQS do. Two workloads, each run ``--runs`` times (the medians are printed):

- **receive**: ``--messages`` messages are sent beforehand (without the added latency), then a Structured Streaming
  query in this process (``local[2]``) reads them with ``readStream.format("sqs")`` (``maxMessagesPerTrigger``
  10,000, ``numPartitions`` 2, the data source's other defaults), transforms each row (upper-cased body and its
  length) into the ``noop`` sink, with ``trigger(availableNow=True)``; the run ends when the query has deleted
  everything. Figure: messages / seconds from ``start()`` to the end of the query (queue checked empty). A
  first small run warms the Spark session and its Python workers up and is not counted.
- **orders**: ``examples/orders_pipeline.py`` with its default options (50,000 orders, 10,000 per micro-batch) in
  its own process, the latency rule on for all of it (feeding included). Figures: its "stream" (the streaming query
  alone, from ``start()``: the first micro-batch pays for Spark's warm-up), "steady state" (the micro-batches after
  the first) and "end to end" (first send to last delete) messages/s.

CPU: besides messages/s (which fall when other work shares the cores), each run measures the CPU seconds every
process spent per 1,000 messages (:mod:`proccpu`: the driver Python, the JVM, the streaming source's Python process
that receives and deletes, the executors' Python workers, the sqsemu server; receive: from ``start()`` to the end
of the query; orders: from the end of feeding to the end of the streaming query), a figure that holds on a busy
machine. The medians per role are printed in a second table.

Prints ``uptime`` before and after: the machine's load changes the msgs/s figures. Needs the ``spark`` extra and
Java 17+.
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from proccpu import ROLES, ProcessCPU

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "orders_pipeline.py"
REGION = "us-east-1"
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=int, nargs="+", default=[0, 20], help="added latencies (default: 0 20)")
    parser.add_argument("--runs", type=int, default=3, help="runs per workload and latency (default: 3)")
    parser.add_argument("--messages", type=int, default=20_000, help="receive workload size (default: 20,000)")
    parser.add_argument("--orders", type=int, default=50_000, help="orders per pipeline run (default: 50,000)")
    parser.add_argument("--only", choices=("receive", "orders"), default=None, help="run one workload only")
    return parser.parse_args(argv)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def admin(endpoint: str, method: str, path: str, payload: Any = None) -> Any:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(endpoint + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with _opener.open(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "sqsemu", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            admin(endpoint, "GET", "/health")
            return process, endpoint
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("sqsemu did not start") from None
            time.sleep(0.1)


def set_latency(endpoint: str, latency_ms: int) -> None:
    admin(endpoint, "DELETE", "/_sqsemu/faults")
    if latency_ms:
        admin(endpoint, "POST", "/_sqsemu/faults", {"id": "latency", "action": "*", "latency_ms": latency_ms})


def sqs_client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "sqs",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(max_pool_connections=32),
    )


def feed(client: Any, queue_url: str, count: int) -> None:
    def send(start: int) -> None:
        entries = [{"Id": str(i), "MessageBody": f"message-{start + i:08d}"} for i in range(min(10, count - start))]
        if client.send_message_batch(QueueUrl=queue_url, Entries=entries).get("Failed"):
            raise RuntimeError("SendMessageBatch failed")

    with ThreadPoolExecutor(32) as pool:
        list(pool.map(send, range(0, count, 10)))


def spark_session() -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from sqsemu.spark import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sqsemu-bench-spark-stream")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def receive_run(spark: Any, endpoint: str, count: int, latency_ms: int, server: int) -> tuple[float, dict[str, float]]:
    """One receive → transform → delete run; messages/s and CPU seconds per 1,000 messages per role."""
    from pyspark.sql import functions as F

    client = sqs_client(endpoint)
    set_latency(endpoint, 0)
    url = client.create_queue(QueueName=f"bench-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    feed(client, url, count)
    set_latency(endpoint, latency_ms)
    checkpoint = tempfile.mkdtemp(prefix="bench-spark-stream-")
    meter = ProcessCPU(os.getpid(), server)
    meter.start()
    started = time.monotonic()
    query = (
        spark.readStream.format("sqs")
        .option("queueUrl", url)
        .option("endpointUrl", endpoint)
        .option("region", REGION)
        .option("accessKeyId", "test")
        .option("secretAccessKey", "test")
        .option("maxMessagesPerTrigger", "10000")
        .option("numPartitions", "2")
        .load()
        .select(F.upper("body").alias("body"), F.length("body").alias("size"))
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    seconds = time.monotonic() - started
    cpu = meter.stop()
    if query.exception() is not None:
        raise RuntimeError(f"query failed: {query.exception()}")
    set_latency(endpoint, 0)
    left = client.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    if left != {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}:
        raise RuntimeError(f"the queue was not drained: {left}")
    client.delete_queue(QueueUrl=url)
    return count / seconds, {role: value * 1000 / count for role, value in cpu.items()}


def orders_run(endpoint: str, orders: int, latency_ms: int, server: int) -> tuple[list[float], dict[str, float]]:
    """One run of the example pipeline; [stream, steady state, end to end] messages/s and the streaming query's
    CPU seconds per 1,000 messages per role (from the example's "fed" line to its "streaming query done" line)."""
    set_latency(endpoint, latency_ms)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    command = [sys.executable, str(EXAMPLE), "--endpoint-url", endpoint, "--orders", str(orders)]
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=errors, text=True)
        meter = ProcessCPU(process.pid, server)
        cpu: dict[str, float] = {}
        lines = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("fed "):
                meter.start()
            elif line.startswith("streaming query done"):
                cpu = meter.stop()
        code = process.wait(1800)
        errors.seek(0)
        stderr = errors.read()
    set_latency(endpoint, 0)
    stdout = "".join(lines)
    match = re.search(r"throughput: stream ([\d,]+) msg/s.*end to end ([\d,]+) msg/s", stdout)
    steady = re.search(r"steady state: ([\d,]+) msg/s", stdout)
    if code != 0 or match is None or steady is None or not cpu:
        raise RuntimeError(f"the pipeline failed:\n{stdout[-2000:]}\n{stderr[-2000:]}")
    rates = [float(text.replace(",", "")) for text in (match.group(1), steady.group(1), match.group(2))]
    return rates, {role: value * 1000 / orders for role, value in cpu.items()}


def cpu_text(cpu: dict[str, float]) -> str:
    """CPU seconds per 1,000 messages per role, in one line."""
    return "CPU s/1k msgs " + ", ".join(f"{role} {cpu[role]:.3f}" for role in ROLES)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"uptime before: {uptime()}", flush=True)
    server, endpoint = start_server()
    results: list[tuple[str, int, str, list[float]]] = []
    cpu_results: list[tuple[str, int, list[dict[str, float]]]] = []
    try:
        if args.only in (None, "receive"):
            spark = spark_session()
            receive_run(spark, endpoint, 1000, 0, server.pid)  # warm-up, not counted
            for latency in args.latency_ms:
                figures, cpus = [], []
                for run in range(args.runs):
                    rate, cpu = receive_run(spark, endpoint, args.messages, latency, server.pid)
                    figures.append(rate)
                    cpus.append(cpu)
                    print(f"receive, {latency} ms, run {run + 1}: {rate:,.0f} msgs/s; {cpu_text(cpu)}", flush=True)
                results.append(("receive → transform → delete", latency, f"{args.messages:,} msgs", figures))
                cpu_results.append(("receive → transform → delete", latency, cpus))
            spark.stop()
        if args.only in (None, "orders"):
            for latency in args.latency_ms:
                streams, steadies, ends, cpus = [], [], [], []
                for run in range(args.runs):
                    (stream, steady, end), cpu = orders_run(endpoint, args.orders, latency, server.pid)
                    streams.append(stream)
                    steadies.append(steady)
                    ends.append(end)
                    cpus.append(cpu)
                    print(
                        f"orders, {latency} ms, run {run + 1}: stream {stream:,.0f}, steady state {steady:,.0f}, "
                        f"end to end {end:,.0f} msgs/s; {cpu_text(cpu)}",
                        flush=True,
                    )
                cpu_results.append(("orders pipeline: stream", latency, cpus))
                size = f"{args.orders:,} orders"
                results.append(("orders pipeline: stream", latency, size, streams))
                results.append(("orders pipeline: steady state", latency, size, steadies))
                results.append(("orders pipeline: end to end", latency, size, ends))
    finally:
        server.terminate()
        server.wait(30)
    print(f"uptime after: {uptime()}")
    print()
    print("| Workload | Added latency per call | Size | msgs/s (median) | Runs |")
    print("|---|---|---|---|---|")
    for name, latency, size, figures in results:
        runs = ", ".join(f"{f:,.0f}" for f in figures)
        print(f"| {name} | {latency} ms | {size} | {statistics.median(figures):,.0f} | {runs} |")
    print()
    print("CPU seconds per 1,000 messages (medians of the runs):")
    print()
    print(f"| Workload | Added latency per call | {' | '.join(ROLES)} | total |")
    print(f"|---|---|{'---|' * (len(ROLES) + 1)}")
    for name, latency, cpus in cpu_results:
        medians = [statistics.median(cpu[role] for cpu in cpus) for role in ROLES]
        total = statistics.median(sum(cpu.values()) for cpu in cpus)
        print(f"| {name} | {latency} ms | {' | '.join(f'{m:.3f}' for m in medians)} | {total:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
