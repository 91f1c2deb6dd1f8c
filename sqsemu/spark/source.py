"""The ``sqs`` data source class: parses its options once and hands out readers and writers."""

from __future__ import annotations

import uuid

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from sqsemu.spark.client import resolve_queue_url
from sqsemu.spark.options import SQSOptions, parse_options
from sqsemu.spark.reader import SQSBatchReader
from sqsemu.spark.schema import SCHEMA
from sqsemu.spark.stream import SQSStreamReader
from sqsemu.spark.writer import SQSStreamWriter, SQSWriter, plan_write, refuse_overwrite

__all__ = ["SQSDataSource"]


class SQSDataSource(DataSource):
    """PySpark data source ``"sqs"``: batch and streaming reads and writes of one SQS queue.

    Register it with ``spark.dataSource.register(SQSDataSource)`` (or :func:`sqsemu.spark.register`), then use
    ``format("sqs")`` with the options listed in docs/spark.md (``queueUrl`` or ``queueName`` + ``region``,
    ``endpointUrl``, credentials, reading and writing options). Options are parsed when Spark first asks for the
    schema, a reader or a writer, so a bad option fails the ``load()`` / ``save()`` / ``start()`` call with
    ``SQSOptionError`` (a ``ValueError``). The schema is fixed (:data:`sqsemu.spark.schema.SCHEMA`): reads need no
    ``.schema(...)``.
    """

    _parsed: SQSOptions | None = None

    @property
    def sqs_options(self) -> SQSOptions:
        """The parsed options (parsed on first use; Spark's ``DataSource.__init__`` is not to be overridden)."""
        if self._parsed is None:
            self._parsed = parse_options(self.options)
        return self._parsed

    @classmethod
    def name(cls) -> str:
        return "sqs"

    def schema(self) -> StructType:
        self.sqs_options  # noqa: B018 (validate the options when Spark first asks for the schema)
        return SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return SQSBatchReader(self.sqs_options, resolve_queue_url(self.sqs_options.connection))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return SQSStreamReader(self.sqs_options)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        refuse_overwrite(overwrite)
        queue_url = resolve_queue_url(self.sqs_options.connection)
        return SQSWriter(self.sqs_options, plan_write(schema, self.sqs_options, queue_url), uuid.uuid4().hex)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        refuse_overwrite(overwrite)
        queue_url = resolve_queue_url(self.sqs_options.connection)
        return SQSStreamWriter(self.sqs_options, plan_write(schema, self.sqs_options, queue_url), uuid.uuid4().hex)
