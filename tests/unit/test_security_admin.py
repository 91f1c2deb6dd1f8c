"""The admin gate (sqsemu.security.admin): --admin-token and --no-admin, through the app (no sockets)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqsemu.clock import ManualClock
from sqsemu.config import Config
from sqsemu.engine.broker import Broker
from sqsemu.http.app import create_app
from tests.unit.app_helpers import call_asgi

TOKEN = "s3cr3t-t0ken"


def make_app(config: Config | None = None) -> tuple[Any, Broker]:
    clock = ManualClock(1_700_000_000_000)
    broker = Broker(clock)
    return create_app(config or Config(), broker, clock), broker


def call(app: Any, method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b"") -> Any:
    return asyncio.run(call_asgi(app, method, path, {"Host": "localhost:9324", **(headers or {})}, body))


def test_the_admin_token_is_required_on_admin_routes_only() -> None:
    app, _ = make_app(Config(admin_token=TOKEN))
    resp = call(app, "GET", "/_sqsemu/clock")
    assert resp.status == 401
    assert "X-Sqsemu-Admin-Token" in resp.json()["error"]
    resp = call(app, "POST", "/_sqsemu/reset", {"X-Sqsemu-Admin-Token": "wrong"}, b"{}")
    assert resp.status == 403 and "not the admin token" in resp.json()["error"]
    assert call(app, "GET", "/_sqsemu/clock", {"X-Sqsemu-Admin-Token": TOKEN}).status == 200
    assert call(app, "POST", "/_sqsemu/reset", {"X-Sqsemu-Admin-Token": TOKEN}, b"{}").status == 200
    assert call(app, "GET", "/health").status == 200


def test_without_a_token_the_admin_routes_stay_open() -> None:
    app, _ = make_app()
    assert call(app, "GET", "/_sqsemu/clock").status == 200


def test_no_admin_answers_404_but_health_stays() -> None:
    app, _ = make_app(Config(admin=False))
    for method, path in (("GET", "/_sqsemu/clock"), ("POST", "/_sqsemu/reset"), ("GET", "/_sqsemu/queues")):
        resp = call(app, method, path)
        assert resp.status == 404, path
        assert "switched off" in resp.json()["error"]
    assert call(app, "GET", "/health").json()["status"] == "ok"


def test_the_token_is_validated_and_not_shown() -> None:
    config = Config(admin_token=TOKEN)
    assert TOKEN not in repr(config)
    for bad in ("has space", "tab\there", "é"):
        try:
            Config(admin_token=bad)
        except ValueError as exc:
            assert "admin_token" in str(exc)
        else:
            raise AssertionError(f"{bad!r} accepted")
