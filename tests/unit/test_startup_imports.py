"""Start-up stays light: what a default server imports before it answers its first ``/health`` (no timings).

Each check runs in a fresh interpreter (``sys.modules`` of this one holds whatever other tests imported): it builds
the app from a default ``Config`` as ``sqsemu`` does (``sqsemu.server.build``, after importing the command line),
runs the ASGI lifespan, answers ``GET /health`` through the app, and lists the modules loaded by then. The heavy
ones below are imported later, by the feature that needs them: Starlette, the admin routes and the web console
with the first other admin request, prometheus-client with the first scrape, botocore with ``--auth sigv4``,
tomllib with ``--config``, sqlite3 with ``--data-dir``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

HEAVY = (
    "starlette",
    "anyio",
    "jinja2",
    "prometheus_client",
    "botocore",
    "importlib.metadata",
    "tomllib",
    "xml.sax",
    "urllib.request",
    "http.client",
    "sqlite3",
    "sqsemu.admin.app",
    "sqsemu.console.routes",  # the console; sqsemu.console.assets (its files, read at start) is the standard library's
    "sqsemu.console.views",
    "sqsemu.console.actions",
    "sqsemu.console.charts",
    "sqsemu.persistence.sqlite",
    "cryptography",  # SNS's message signatures: the key is made at the first signed document
    "sqsemu.sns.signing",
)
"""Modules (and their submodules) a default server must not have imported when it answers its first /health."""

_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys

    import sqsemu.cli  # the command line's own imports come first, as with `sqsemu`
    from sqsemu.config import Config
    from sqsemu.server import build

    app, broker, clock = build(Config())

    async def request(path):
        sent, answered = [], []
        messages = iter([{"type": "http.request", "body": b"", "more_body": False}])

        async def receive():
            return next(messages)

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": path, "query_string": b"", "scheme": "http",
                 "headers": [(b"host", b"localhost")], "http_version": "1.1", "root_path": "", "client": ("::1", 1)}
        await app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]).decode()

    class Answered(Exception):
        pass

    async def lifespan(kind):
        sent = []

        async def receive():
            return {"type": f"lifespan.{kind}"}

        async def send(message):
            sent.append(message["type"])
            raise Answered  # one answer is all this needs: leave the lifespan loop

        try:
            await app({"type": "lifespan"}, receive, send)
        except Answered:
            pass
        return sent

    async def main():
        report = {"startup": await lifespan("startup"), "health": await request("/health")}
        report["before"] = sorted(sys.modules)
        report["clock"] = await request(SECOND)
        report["after"] = sorted(sys.modules)
        broker.close()
        return report

    print(json.dumps(asyncio.run(main())))
    """
)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """What the fresh interpreter saw: lifespan answers, the /health and /_sqsemu/clock answers, and the modules
    loaded before and after the latter."""
    script = 'SECOND = "/_sqsemu/clock"\n' + _SCRIPT
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def _heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY)]


def test_a_default_server_answers_health_without_the_heavy_modules(report: dict[str, Any]) -> None:
    assert report["startup"] == ["lifespan.startup.complete"]
    status, body = report["health"]
    assert status == 200
    assert json.loads(body)["status"] == "ok"
    assert _heavy(report["before"]) == []


def test_the_admin_app_is_made_at_the_first_other_admin_request(report: dict[str, Any]) -> None:
    status, body = report["clock"]
    assert status == 200 and json.loads(body)["mode"] == "system"
    assert "starlette" in report["after"] and "sqsemu.admin.app" in report["after"]
