"""The example pipeline (examples/orders_pipeline.py) runs with one command against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sqsemu.testing import SQSServer

pytestmark = pytest.mark.spark

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "orders_pipeline.py"


# Spark's start and three micro-batches: about 60 s alone, 150-180 s on 2 cores beside the rest of a parallel run;
# the limits leave room for that (the test checks what the pipeline computes, not how fast).
@pytest.mark.timeout(600)
def test_orders_pipeline_runs_end_to_end(spark_server: SQSServer, tmp_path: Path) -> None:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    command = [
        sys.executable,
        str(EXAMPLE),
        "--endpoint-url",
        spark_server.endpoint_url,
        "--orders",
        "300",
        "--max-per-trigger",
        "120",
        "--output",
        str(tmp_path / "totals"),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "micro-batches: 3 (120, 120, 60 orders)" in done.stdout
    assert ": OK" in done.stdout and "throughput: stream" in done.stdout
    assert list((tmp_path / "totals").glob("*.parquet"))
