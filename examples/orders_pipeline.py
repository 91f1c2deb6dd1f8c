"""Example pipeline: orders stream in from one SQS queue, are aggregated per micro-batch, and the totals go out
to another queue and to Parquet. Runs against a local sqsemu (or any SQS endpoint) with one command::

    sqsemu &                                                     # http://127.0.0.1:9324
    python examples/orders_pipeline.py --endpoint-url http://127.0.0.1:9324

What it does:

1. creates two queues, ``orders-<run>`` and ``order-totals-<run>`` (deleted at the end unless ``--keep``);
2. feeds ``--orders`` sample orders (JSON: order_id, customer, region, amount_cents, ordered_at) with
   SendMessageBatch from a few threads;
3. runs a Structured Streaming query, ``readStream.format("sqs")`` with ``trigger(availableNow=True)`` and
   ``maxMessagesPerTrigger`` admission control, which parses each order, aggregates every micro-batch per region
   (orders, revenue, average, largest), and writes the totals with ``write.format("sqs")`` to the totals queue and
   with ``write.parquet`` to ``--output``; each batch's orders are deleted from the queue once Spark commits it;
4. checks the result (orders queue empty, one totals message per region and batch, Parquet revenue equal to
   what was sent) and prints the throughput in messages per second: feeding, the streaming query alone, and end
   to end (first send to last delete).

Needs ``pip install 'sqsemu[spark]'`` (PySpark 4.3) and Java 17+.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REGIONS = ("north", "south", "east", "west", "central")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint-url", default="http://127.0.0.1:9324", help="SQS endpoint (default: %(default)s)")
    parser.add_argument("--region", default="us-east-1", help="region (default: %(default)s)")
    parser.add_argument("--orders", type=int, default=50_000, help="orders to send (default: %(default)s)")
    parser.add_argument(
        "--max-per-trigger", type=int, default=10_000, help="maxMessagesPerTrigger (default: %(default)s)"
    )
    parser.add_argument("--partitions", type=int, default=2, help="numPartitions per micro-batch (default: 2)")
    parser.add_argument("--master", default="local[2]", help="Spark master (default: %(default)s)")
    parser.add_argument("--output", default=None, help="Parquet output directory (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the queues and the output afterwards")
    return parser.parse_args(argv)


def sqs_client(args: argparse.Namespace) -> Any:
    import boto3

    return boto3.session.Session().client(
        "sqs",
        endpoint_url=args.endpoint_url,
        region_name=args.region,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
    )


def sample_orders(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` orders with a fixed seed: amounts in cents, so totals are exact."""
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    return [
        {
            "order_id": f"o-{i:07d}",
            "customer": f"c-{rng.randrange(1000):04d}",
            "region": rng.choice(REGIONS),
            "amount_cents": rng.randrange(100, 50_000),
            "ordered_at": now - rng.randrange(3_600_000),
        }
        for i in range(count)
    ]


def feed(client: Any, queue_url: str, orders: list[dict[str, Any]], threads: int = 4) -> None:
    """SendMessageBatch the orders, ten per call, from ``threads`` threads."""
    batches = [orders[i : i + 10] for i in range(0, len(orders), 10)]

    def send(batch: list[dict[str, Any]]) -> None:
        entries = [{"Id": str(n), "MessageBody": json.dumps(order)} for n, order in enumerate(batch)]
        failed = client.send_message_batch(QueueUrl=queue_url, Entries=entries).get("Failed")
        if failed:
            raise RuntimeError(f"SendMessageBatch failed: {failed}")

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(send, batches))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers must have sqsemu.spark
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from sqsemu.spark import register

    run = uuid.uuid4().hex[:8]
    client = sqs_client(args)
    orders_url = client.create_queue(QueueName=f"orders-{run}")["QueueUrl"]
    totals_url = client.create_queue(QueueName=f"order-totals-{run}")["QueueUrl"]
    output = Path(args.output) if args.output else Path(tempfile.mkdtemp(prefix="orders-pipeline-"))
    checkpoint = Path(tempfile.mkdtemp(prefix="orders-checkpoint-"))
    connection = {
        "endpointUrl": args.endpoint_url,
        "region": args.region,
        "accessKeyId": os.environ.get("AWS_ACCESS_KEY_ID", "test"),
        "secretAccessKey": os.environ.get("AWS_SECRET_ACCESS_KEY", "test"),
    }

    started = time.monotonic()
    spark = (
        SparkSession.builder.master(args.master)
        .appName("sqsemu-orders-pipeline")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    print(f"Spark {spark.version} up in {time.monotonic() - started:.1f} s")

    orders = sample_orders(args.orders)
    feed_start = time.monotonic()
    feed(client, orders_url, orders)
    feed_seconds = time.monotonic() - feed_start
    print(
        f"fed {len(orders)} orders to {orders_url} in {feed_seconds:.2f} s ({len(orders) / feed_seconds:,.0f} msg/s)",
        flush=True,
    )

    order_schema = StructType(
        [
            StructField("order_id", StringType()),
            StructField("customer", StringType()),
            StructField("region", StringType()),
            StructField("amount_cents", LongType()),
            StructField("ordered_at", LongType()),
        ]
    )
    batch_sizes: list[int] = []

    totals_schema = (
        "region string, orders long, revenue_cents long, avg_cents double, largest_cents long, batch_id long"
    )

    def aggregate(batch: DataFrame, batch_id: int) -> None:
        # One Spark job over the micro-batch's orders; the few total rows are then written twice from the driver.
        rows = (
            batch.select(F.from_json("body", order_schema).alias("o"))
            .select("o.*")
            .groupBy("region")
            .agg(
                F.count("*").alias("orders"),
                F.sum("amount_cents").alias("revenue_cents"),
                F.round(F.avg("amount_cents"), 2).alias("avg_cents"),
                F.max("amount_cents").alias("largest_cents"),
            )
            .withColumn("batch_id", F.lit(batch_id))
            .collect()
        )
        if not rows:
            return
        batch_sizes.append(sum(int(row["orders"]) for row in rows))
        totals = spark.createDataFrame(rows, totals_schema).coalesce(1)
        totals.write.mode("append").parquet(str(output))
        totals.select(F.to_json(F.struct("*")).alias("body")).write.format("sqs").options(**connection).option(
            "queueUrl", totals_url
        ).mode("append").save()

    query_start = time.monotonic()
    query = (
        spark.readStream.format("sqs")
        .options(**connection)
        .option("queueUrl", orders_url)
        .option("maxMessagesPerTrigger", str(args.max_per_trigger))
        .option("numPartitions", str(args.partitions))
        .option("waitTimeSeconds", "1")
        .option("visibilityTimeout", "60")
        .load()
        .writeStream.foreachBatch(aggregate)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise RuntimeError(f"the streaming query failed: {query.exception()}")
    query_seconds = time.monotonic() - query_start
    end_to_end = time.monotonic() - feed_start
    print(f"streaming query done in {query_seconds:.2f} s", flush=True)

    # Check the outcome.
    left = client.get_queue_attributes(
        QueueUrl=orders_url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    parquet = spark.read.parquet(str(output))
    revenue = parquet.agg(F.sum("revenue_cents")).first()[0]
    counted = parquet.agg(F.sum("orders")).first()[0]
    totals_sent = int(
        client.get_queue_attributes(QueueUrl=totals_url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"][
            "ApproximateNumberOfMessages"
        ]
    )
    print(f"micro-batches: {len(batch_sizes)} ({', '.join(map(str, batch_sizes))} orders)")
    print(f"totals: {totals_sent} messages in {totals_url}, {parquet.count()} rows in {output}")
    print("revenue by region:")
    parquet.groupBy("region").agg(
        F.sum("orders").alias("orders"), F.sum("revenue_cents").alias("revenue_cents")
    ).orderBy("region").show()
    expected_revenue = sum(order["amount_cents"] for order in orders)
    ok = (
        counted == len(orders)
        and revenue == expected_revenue
        and left == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}
    )
    print(
        f"check: {counted} orders aggregated, revenue {revenue} == {expected_revenue}, orders queue left {left}: "
        f"{'OK' if ok else 'MISMATCH'}"
    )
    # Steady state: the micro-batches after the first (which pays for Spark's and the Python workers' warm-up).
    later = [p for p in query.recentProgress if p["batchId"] > 0 and p["numInputRows"]]
    steady_rows = sum(p["numInputRows"] for p in later)
    steady_ms = sum(p["durationMs"]["triggerExecution"] for p in later)
    if steady_ms:
        print(f"steady state: {steady_rows * 1000 / steady_ms:,.0f} msg/s over micro-batches 1-{later[-1]['batchId']}")
    print(
        f"throughput: stream {len(orders) / query_seconds:,.0f} msg/s ({len(orders)} orders in {query_seconds:.2f} s:"
        f" receive, aggregate, write to SQS and Parquet, delete); end to end {len(orders) / end_to_end:,.0f} msg/s"
        f" ({end_to_end:.2f} s from the first send to the last delete)"
    )

    if not args.keep:
        client.delete_queue(QueueUrl=orders_url)
        client.delete_queue(QueueUrl=totals_url)
    spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
