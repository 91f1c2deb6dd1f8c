"""The Lambda API of event source mappings never answers 5xx and always answers Lambda's JSON error shape, whatever
the method, path, query and body (Hypothesis, derandomized, bounded), in-process on a ManualClock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.app_helpers import call_asgi, make_app

PARAMETERS = [
    "EventSourceArn", "FunctionName", "Enabled", "BatchSize", "MaximumBatchingWindowInSeconds", "FilterCriteria",
    "FunctionResponseTypes", "ScalingConfig", "StartingPosition", "UUID", "Filters", "Pattern", "MaximumConcurrency",
]  # fmt: skip

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["arn:aws:sqs:us-east-1:000000000000:q", "f", "ReportBatchItemFailures", '{"body": ["x"]}']),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(PARAMETERS) | st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
MAPPINGS = "/2015-03-31/event-source-mappings/"
VALID = {"EventSourceArn": "arn:aws:sqs:us-east-1:000000000000:q", "FunctionName": "f"}
bodies = st.one_of(
    # a valid request with some members replaced or added: each member's checks are reached
    st.dictionaries(st.sampled_from(PARAMETERS), json_values, max_size=3).map(
        lambda d: json.dumps({**VALID, **d}).encode()
    ),
    st.dictionaries(st.sampled_from(PARAMETERS), json_values, max_size=6).map(lambda d: json.dumps(d).encode()),
    st.binary(max_size=40),
)
paths = st.one_of(
    st.sampled_from(["/2015-03-31/event-source-mappings", "/2015-03-31/event-source-mappings/", "/2015-03-31/"]),
    st.text(max_size=40).map(lambda t: "/2015-03-31/event-source-mappings/" + t),
    st.text(max_size=20).map(lambda t: "/2015-03-31/" + t),
)
queries = st.dictionaries(
    st.sampled_from(["MaxItems", "Marker", "FunctionName", "EventSourceArn"]), st.text(max_size=12), max_size=3
).map(lambda q: urlencode(q).encode())


EXISTING: dict[str, str] = {}
"""``{"uuid": ...}``: the mapping the module's app starts with (kept here: a compiled ``SQSApp`` takes no new
attributes)."""


@pytest.fixture(scope="module")
def app() -> Iterator[tuple[Any, asyncio.AbstractEventLoop]]:
    loop = asyncio.new_event_loop()
    application, broker = make_app()
    application.event_sources.register_function("f", lambda event, context: None)
    broker.create_queue(broker_ns(application), "q", {}, {})
    created = loop.run_until_complete(
        call_asgi(application, "POST", MAPPINGS, {"Host": "localhost:9324"}, json.dumps(VALID).encode())
    )
    assert created.status == 202
    EXISTING["uuid"] = created.json()["UUID"]
    yield application, loop
    application.event_sources.close()
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()

    async def drain() -> None:
        await asyncio.gather(*pending, return_exceptions=True)

    loop.run_until_complete(drain())
    loop.close()
    broker.close()


def broker_ns(application: Any) -> Any:
    from sqsemu.engine.broker import Namespace

    return Namespace(application.config.account_id, application.config.region)


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]), path=paths, query=queries, body=bodies)
def test_never_a_server_error(
    app: tuple[Any, asyncio.AbstractEventLoop], method: str, path: str, query: bytes, body: bytes
) -> None:
    application, loop = app
    response = loop.run_until_complete(
        call_asgi(application, method, path, {"Host": "localhost:9324"}, body, query_string=query)
    )
    assert response.status < 500, (response.status, response.body)
    document = response.json()
    assert isinstance(document, dict)
    if response.status >= 400:
        assert document.get("Type") == "User"
        assert response.headers.get("x-amzn-errortype", "").endswith("Exception")


@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(update=st.booleans(), body=bodies)
def test_create_and_update_bodies_never_a_server_error(
    app: tuple[Any, asyncio.AbstractEventLoop], update: bool, body: bytes
) -> None:
    application, loop = app
    method, path = ("PUT", MAPPINGS + EXISTING["uuid"]) if update else ("POST", MAPPINGS)
    response = loop.run_until_complete(call_asgi(application, method, path, {"Host": "localhost:9324"}, body))
    assert response.status < 500, (response.status, response.body)
    if response.status == 202 and not update:  # leave the one mapping of the queue for the next example
        uuid = response.json()["UUID"]
        loop.run_until_complete(call_asgi(application, "DELETE", MAPPINGS + uuid, {"Host": "localhost:9324"}))
