"""Mutation fuzzing of the HTTP layer over real sockets (``tests/fuzz/wire.py``): well-formed requests of every route
(every SQS action in both wire protocols, the admin and console routes, the Lambda API), pipelined, truncated,
flooded, with malformed headers, bad lengths, bad chunk sizes, flipped, inserted and deleted bytes, or garbage,
sent to a real server on its own connections.

One seeded run of ``CASES`` cases (about 660 requests; 10 s on an idle 2-core machine) is made once for the module;
each test asserts one part of the oracle over all of it, and on failure prints every kind of failure of that part
with one example case (``bench/fuzz.py --wire --seed S --case N`` runs one case again and shows its answers):

- no answer is a 5xx (an error a fault rule injected on purpose excepted);
- every answer is well-formed HTTP/1.1, and its ``Content-Length`` is exactly the bytes that follow;
- every connection is answered or closed by the server within the read deadline (2 s) plus a margin;
- valid requests (unmutated, validly chunked or with more headers under the cap, pipelined or not) are served;
- no connection is reset, nothing logs a traceback, and the server answers ``GET /health`` at the end.

``SQSEMU_WIRE_SEED`` and ``SQSEMU_WIRE_CASES`` pick another seed or size; ``bench/fuzz.py --wire`` runs the same
mutator as long as wanted and counts the failures by class.
"""

from __future__ import annotations

import os
import random

import pytest

from tests.fuzz.wire import CLASSES, Mutator, Report, run_wire, seed_requests

SEED = int(os.environ.get("SQSEMU_WIRE_SEED", "0"))
CASES = int(os.environ.get("SQSEMU_WIRE_CASES", "480"))
CONCURRENCY = 24
MARGIN_S = 3.0
"""Seconds beyond the 2-second read deadline a connection may take (the suite runs on every core)."""


@pytest.fixture(scope="module")
def report() -> Report:
    return run_wire(CASES, SEED, concurrency=CONCURRENCY, margin_s=MARGIN_S)


def explain(report: Report, kind: str) -> str:
    """The run's figures and the examples of failure class ``kind``."""
    summary = report.summary()
    head, *sections = summary.split("\n--- ")
    mine = "\n--- ".join(section for section in sections if section.startswith(kind))
    return f"{head}\n\n--- {mine}\n\n(one case again: python bench/fuzz.py --wire --seed {SEED} --case N)"


def test_the_run_reaches_every_route_and_every_mutation(report: Report) -> None:
    wanted = {make(random.Random(0)).label for make in seed_requests()}
    assert wanted <= report.labels, sorted(wanted - report.labels)
    assert report.kinds == {name for name, _ in Mutator.FAMILIES}
    assert report.cases == CASES


def test_the_server_still_answers_after_the_run(report: Report) -> None:
    assert report.alive, report.summary()


@pytest.mark.parametrize("kind", [k for k in CLASSES if k != "traceback"], ids=lambda k: k.replace(" ", "-"))
def test_no_connection_fails_the_oracle(report: Report, kind: str) -> None:
    cases, requests = report.counts()[kind]
    assert cases == 0, f"{kind}: {cases} cases ({requests} requests)\n" + explain(report, kind)


def test_nothing_logs_a_traceback(report: Report) -> None:
    assert not report.tracebacks, explain(report, "traceback")
