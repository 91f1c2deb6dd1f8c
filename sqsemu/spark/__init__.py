"""``sqsemu.spark``: a PySpark data source named ``"sqs"`` for batch and Structured Streaming reads and writes.

Needs the ``spark`` extra (``pip install '.[spark]'`` from a checkout: PySpark 4.3 with ``pyspark[sql]``, pandas < 3,
boto3).
It is an ordinary SQS client (boto3, the public SQS API), so it works against sqsemu and Amazon SQS alike; only
``endpointUrl`` differs::

    from sqsemu.spark import register

    register(spark)                       # == spark.dataSource.register(SQSDataSource)
    df = (spark.readStream.format("sqs")
          .option("queueUrl", "http://127.0.0.1:9324/000000000000/orders")
          .option("region", "us-east-1")
          .load())

See docs/spark.md for the options, the schema and the at-least-once semantics.
"""

from __future__ import annotations

from typing import Any

from sqsemu.spark.options import SQSOptionError, SQSOptions, parse_options
from sqsemu.spark.schema import SCHEMA
from sqsemu.spark.source import SQSDataSource

__all__ = ["SCHEMA", "SQSDataSource", "SQSOptionError", "SQSOptions", "parse_options", "register"]


def register(spark: Any) -> None:
    """Register the ``"sqs"`` format with a ``SparkSession`` (``spark.dataSource.register(SQSDataSource)``)."""
    spark.dataSource.register(SQSDataSource)
