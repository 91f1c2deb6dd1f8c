"""Property-based fuzzing of the whole request path: both decoders, the operations table and the admin routes.

Property: every generated request, valid or not, gets an answer below HTTP 500 whose body parses in its format
(XML for Query, JSON for JSON 1.0, Query with ``Accept: application/json`` and the admin routes), and nothing raises
inside the app. Each example runs 1 to 4 requests against a fresh in-process server (``harness.World``: the real
Broker on a ManualClock, no sockets), so an example's outcome depends on nothing but its own draws.

Runs are bounded and reproducible: the ``ci`` profile (the default) is derandomized (the same examples every run, no
example database) with example counts that keep the module well under a minute here. For a wider search run with
``SQSEMU_FUZZ_PROFILE=random`` (a fresh seed per run, printed at the start; pin one with ``SQSEMU_FUZZ_SEED=<n>``) and
``SQSEMU_FUZZ_EXAMPLES=<factor>`` (multiplies the example counts). ``bench/fuzz.py`` drives the same grammar for a
million requests.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests.fuzz.grammar import (
    Draw,
    FuzzRequest,
    HypothesisDraw,
    State,
    admin_request,
    any_request,
    json_request,
    query_request,
)
from tests.fuzz.harness import World, problem

PROFILE = os.environ.get("SQSEMU_FUZZ_PROFILE", "ci")
SCALE = float(os.environ.get("SQSEMU_FUZZ_EXAMPLES", "1"))
if PROFILE == "random":
    SEED = int(os.environ.get("SQSEMU_FUZZ_SEED") or random.SystemRandom().randrange(2**32))
    print(f"sqsemu fuzz: SQSEMU_FUZZ_SEED={SEED}")
else:
    SEED = int(os.environ.get("SQSEMU_FUZZ_SEED", "0"))


# Shrinking a failing example re-runs it hundreds of times (a fresh server each): it can take longer than the whole
# run, so it is off unless asked for (SQSEMU_FUZZ_SHRINK=1). A failure reports the request, the answer and every
# traceback anyway.
PHASES = tuple(p for p in Phase if p is not Phase.shrink or os.environ.get("SQSEMU_FUZZ_SHRINK") == "1")


RUN = f"[fuzz profile {PROFILE}, SQSEMU_FUZZ_SEED={SEED}]"


def fuzz_settings(examples: int) -> settings:
    """Settings for one fuzz test: ``examples`` times ``SQSEMU_FUZZ_EXAMPLES`` examples, no deadline (the first
    example of a run pays for imports), derandomized unless the ``random`` profile is chosen."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        derandomize=PROFILE != "random",
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
        phases=PHASES,
    )


def run_requests(data: st.DataObject, make: Callable[[Draw, State], FuzzRequest], most: int) -> None:
    """Draw 1 to ``most`` requests with ``make`` and check every answer (see the module docstring)."""
    world = World()
    try:
        draw = HypothesisDraw(data)
        for _ in range(draw.integer(1, most)):
            request = make(draw, world.state)
            response = world.call(request)
            crashes = [f"{c.kind} at {c.where}\n{c.text}" for c in world.crashes]
            assert not crashes, f"{RUN}\n{request}\n" + "\n".join(crashes)
            wrong = problem(request, response)
            assert wrong is None, (
                f"{RUN}\n{wrong}\n{request}\n{response.status} {response.headers}\n{response.body[:2000]!r}"
            )
    finally:
        world.close()


maybe_seed: Callable[[Callable[..., None]], Callable[..., None]] = seed(SEED) if PROFILE == "random" else (lambda f: f)


@maybe_seed
@fuzz_settings(200)
@given(st.data())
def test_json_requests_get_a_json_answer_below_500(data: st.DataObject) -> None:
    run_requests(data, json_request, 3)


@maybe_seed
@fuzz_settings(200)
@given(st.data())
def test_query_requests_get_a_well_formed_answer_below_500(data: st.DataObject) -> None:
    run_requests(data, query_request, 3)


@maybe_seed
@fuzz_settings(120)
@given(st.data())
def test_admin_requests_get_a_json_answer_below_500(data: st.DataObject) -> None:
    run_requests(data, admin_request, 3)


@maybe_seed
@fuzz_settings(120)
@given(st.data())
def test_mixed_request_sequences_get_answers_below_500(data: st.DataObject) -> None:
    run_requests(data, any_request, 6)


@pytest.mark.parametrize("seed_value", range(4))
def test_random_draws_reach_every_action_without_failing(seed_value: int) -> None:
    """The fast generator of ``bench/fuzz.py`` on a fixed seed: 400 requests each, same property."""
    from tests.fuzz.grammar import RandomDraw

    world = World()
    try:
        draw = RandomDraw(seed_value)
        for _ in range(400):
            request = any_request(draw, world.state)
            response = world.call(request)
            assert not world.crashes, world.crashes[0].text
            wrong = problem(request, response)
            assert wrong is None, f"{wrong}\n{request}\n{response.body[:2000]!r}"
    finally:
        world.close()
