"""Admin routes (/health, /_sqsemu/clock) and the ASGI lifespan."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

from sqsemu.clock import ManualClock, SystemClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.http.app import create_app
from tests.unit.app_helpers import call_asgi
from tests.unit.engine_helpers import NS


def _get(app: Any, path: str) -> Any:
    return asyncio.run(call_asgi(app, "GET", path, {"Host": "h"}))


def _post(app: Any, path: str, body: bytes) -> Any:
    return asyncio.run(call_asgi(app, "POST", path, {"Host": "h", "Content-Type": "application/json"}, body))


def test_health_and_clock_manual() -> None:
    clock = ManualClock(1_000)
    app = create_app(Config(clock="manual"), Broker(clock), clock)
    resp = _get(app, "/health")
    assert resp.status == 200
    data = resp.json()
    assert data["status"] == "ok" and data["clock"] == "manual" and data["version"]
    assert _get(app, "/_sqsemu/clock").json() == {"now_ms": 1_000, "mode": "manual"}
    resp = _post(app, "/_sqsemu/clock/advance", b'{"seconds": 2.5}')
    assert resp.status == 200
    assert resp.json() == {"now_ms": 3_500, "mode": "manual"}
    assert clock.now_ms() == 3_500
    for bad in (b"nope", b'{"seconds": "x"}', b'{"seconds": -1}', b"[]", b'{"seconds": true}'):
        resp = _post(app, "/_sqsemu/clock/advance", bad)
        assert resp.status == 400, bad
        assert "error" in resp.json()


def test_clock_system() -> None:
    clock = SystemClock()
    app = create_app(Config(), Broker(clock), clock)
    assert _get(app, "/_sqsemu/clock").json()["mode"] == "system"
    resp = _post(app, "/_sqsemu/clock/advance", b'{"seconds": 1}')
    assert resp.status == 400
    assert "not manual" in resp.json()["error"]


def test_unknown_admin_path_and_method_are_answered_in_json() -> None:
    clock = SystemClock()
    app = create_app(Config(), Broker(clock), clock)
    resp = _get(app, "/_sqsemu/nothing")
    assert (resp.status, resp.headers["content-type"], resp.json()) == (404, "application/json", {"error": "Not Found"})
    resp = asyncio.run(call_asgi(app, "DELETE", "/_sqsemu/clock", {"Host": "h"}))
    assert (resp.status, resp.json()) == (405, {"error": "Method Not Allowed"})
    assert set(resp.headers["allow"].split(", ")) == {"GET", "HEAD"}


def _driven(broker: Broker, clock: ManualClock) -> bool:
    """Whether ``clock`` drives ``broker``'s timers (the broker is started): a timer 1 ms ahead fires on advance."""
    fired: list[int] = []
    broker.schedule(clock.now_ms() + 1, lambda arg, _due: fired.append(arg), 1)
    clock.advance(0.001)
    return fired == [1]


def test_lifespan_starts_and_closes_broker() -> None:
    clock = ManualClock(1_000)
    broker = Broker(clock)
    app = create_app(Config(), broker, clock)
    queue = broker.create_queue(NS, "q", {}, {})
    assert not _driven(broker, clock)

    async def run() -> list[str]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        sent: list[str] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message["type"])

        async def serve() -> None:
            await app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, send)

        lifespan = asyncio.create_task(serve())
        await inbox.put({"type": "lifespan.startup"})
        for _ in range(100):
            if sent:
                break
            await asyncio.sleep(0)
        assert _driven(broker, clock)  # started: the clock runs the broker's timers
        poll = asyncio.create_task(broker.receive_message(queue, wait_time_seconds=20))
        await asyncio.sleep(0)
        assert queue.waiters.waiting_count() == 1
        await inbox.put({"type": "lifespan.shutdown"})
        await asyncio.wait_for(lifespan, 2)
        assert await asyncio.wait_for(poll, 2) == []  # closed: the waiting long poll was answered with no messages
        assert not queue.waiters
        return sent

    assert asyncio.run(run()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert not _driven(broker, clock)  # closed: detached from the clock


def test_health_is_json() -> None:
    clock = SystemClock()
    app = create_app(Config(), Broker(clock), clock)
    resp = _get(app, "/health")
    assert json.loads(resp.body)["clock"] == "system"
