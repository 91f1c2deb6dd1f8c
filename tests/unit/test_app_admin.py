"""Admin routes (/health, /_sqsemu/clock) and the ASGI lifespan."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sqsemu.clock import ManualClock, SystemClock
from sqsemu.config import Config
from sqsemu.http.app import create_app
from tests.unit.test_app_fakes import FakeBroker, call_asgi


def _get(app: Any, path: str) -> Any:
    return asyncio.run(call_asgi(app, "GET", path, {"Host": "h"}))


def _post(app: Any, path: str, body: bytes) -> Any:
    return asyncio.run(call_asgi(app, "POST", path, {"Host": "h", "Content-Type": "application/json"}, body))


def test_health_and_clock_manual() -> None:
    clock = ManualClock(1_000)
    app = create_app(Config(clock="manual"), FakeBroker(clock), clock)  # type: ignore[arg-type]
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
    app = create_app(Config(), FakeBroker(), clock)  # type: ignore[arg-type]
    assert _get(app, "/_sqsemu/clock").json()["mode"] == "system"
    resp = _post(app, "/_sqsemu/clock/advance", b'{"seconds": 1}')
    assert resp.status == 400
    assert "not manual" in resp.json()["error"]


def test_unknown_admin_path() -> None:
    app = create_app(Config(), FakeBroker(), SystemClock())  # type: ignore[arg-type]
    assert _get(app, "/_sqsemu/nothing").status == 404


def test_lifespan_starts_and_closes_broker() -> None:
    broker = FakeBroker()
    app = create_app(Config(), broker, broker.clock)  # type: ignore[arg-type]

    async def run() -> list[str]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        sent: list[str] = []
        await inbox.put({"type": "lifespan.startup"})
        await inbox.put({"type": "lifespan.shutdown"})

        async def send(message: dict[str, Any]) -> None:
            sent.append(message["type"])

        await app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, send)
        return sent

    assert asyncio.run(run()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert broker.started and broker.closed


def test_health_is_json() -> None:
    app = create_app(Config(), FakeBroker(), SystemClock())  # type: ignore[arg-type]
    resp = _get(app, "/health")
    assert json.loads(resp.body)["clock"] == "system"
