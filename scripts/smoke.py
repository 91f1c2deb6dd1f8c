"""Smoke test of an installed sqsemu: start it, walk one queue through SQS's JSON 1.0 protocol, say which build ran.

    python scripts/smoke.py                          # python -m sqsemu --port 0 with this interpreter
    python scripts/smoke.py --expect-build compiled  # fail unless /health says "compiled (mypyc)"
    python scripts/smoke.py --url http://127.0.0.1:9324   # a server already running (a container), waited for

Standard library only, so that it runs in any environment sqsemu is installed into: cibuildwheel's test
environment for each wheel of the release workflow (.github/workflows/release.yml), the fresh virtual environment
``scripts/release.py check`` makes (tests/integration/test_package.py runs it in CI), a container of the image.

Without ``--url`` it starts ``<python> -m sqsemu --host 127.0.0.1 --port 0`` (the interpreter running this script,
so the sqsemu installed beside it, never a checkout: ``PYTHONPATH`` is dropped) and reads the address the start-up
banner names. Then, over real sockets with ``urllib``: ``GET /health`` (``status`` ok; the ``version``; ``build``,
``compiled (mypyc)`` or ``pure Python: <reason>``), CreateQueue, SendMessage (the answer's MD5OfMessageBody is the
body's MD5), ReceiveMessage (the body again), DeleteMessage, a ReceiveMessage that finds nothing, DeleteQueue and
ListQueues without it; and, where the ``sqsemu`` console script is installed beside the interpreter,
``sqsemu --version`` naming the version ``/health`` gave. The server it started is stopped (SIGTERM; on POSIX it
must exit with status 0).

Prints what it did, one line a step, and a last line ``smoke: OK ...`` with the version and build; exits 1 with the
step that failed and the server's output otherwise. ``--expect-build``: ``compiled``, ``pure`` or ``any``
(default).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

COMPILED = "compiled (mypyc)"
PURE_PREFIX = "pure Python: "
BANNER = re.compile(r"serving SQS at (https?://[^\s;,()]+)")


class SmokeFailure(Exception):
    """A step of the smoke test found something other than what it expects."""


class Server:
    """``<python> -m sqsemu --host 127.0.0.1 --port 0`` in a child process; :attr:`url` once its banner names it.

    Its standard output and error are read by a thread (kept, for the report of a failure), so that a chatty
    server never blocks on a full pipe."""

    def __init__(self, python: str, timeout: float) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONUNBUFFERED"] = "1"
        self.lines: list[str] = []
        self.url = ""
        self._found = threading.Event()
        self._process = subprocess.Popen(
            [python, "-m", "sqsemu", "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not self._found.wait(0.05):
            if self._process.poll() is not None:
                time.sleep(0.2)  # the reader's last lines
                raise SmokeFailure(f"sqsemu exited with status {self._process.returncode} before serving")
            if time.monotonic() > deadline:
                raise SmokeFailure(f"sqsemu named no address within {timeout:.0f} s")

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self.lines.append(line.rstrip("\n"))
            match = BANNER.search(line)
            if match and not self.url:
                self.url = match.group(1).rstrip(".")
                self._found.set()

    def stop(self) -> int:
        """Stop the server (SIGTERM, or TerminateProcess on Windows) and return its exit status."""
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=30)
        return self._process.returncode


def _call(url: str, action: str, body: dict[str, Any]) -> dict[str, Any]:
    """One SQS call over JSON 1.0 (``X-Amz-Target: AmazonSQS.<action>``); the answer's JSON. Credentials are not
    checked by default, so the request is unsigned."""
    request = urllib.request.Request(
        url + "/",
        data=json.dumps(body).encode(),
        headers={"X-Amz-Target": f"AmazonSQS.{action}", "Content-Type": "application/x-amz-json-1.0"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
            return answer
    except urllib.error.HTTPError as error:
        raise SmokeFailure(f"{action} answered {error.code}: {error.read()[:500]!r}") from error


def _health(url: str, wait: float = 0.0) -> dict[str, Any]:
    """``GET /health``'s document; asked again for up to ``wait`` seconds while nothing answers (a container that
    is still starting)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=30) as response:
                document: dict[str, Any] = json.loads(response.read())
            break
        except (OSError, urllib.error.URLError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    if document.get("status") != "ok":
        raise SmokeFailure(f"/health answered {document}")
    return document


def _check_build(build: str, expect: str) -> None:
    if expect == "compiled" and build != COMPILED:
        raise SmokeFailure(f"the build is {build!r}, not {COMPILED!r} as expected")
    if expect == "pure" and not build.startswith(PURE_PREFIX):
        raise SmokeFailure(f"the build is {build!r}, not the pure-Python one as expected")


def _console_script(python: str) -> Path | None:
    """The ``sqsemu`` console script installed beside ``python`` (``bin/sqsemu``, ``Scripts\\sqsemu.exe``)."""
    folder = Path(python).parent
    for name in ("sqsemu", "sqsemu.exe"):
        if (folder / name).is_file():
            return folder / name
    return None


def walk(url: str, say: Callable[[str], None]) -> None:
    """Create a queue, send, receive and delete one message, delete the queue: each answer checked."""
    name = f"smoke-{os.getpid()}"
    queue_url = _call(url, "CreateQueue", {"QueueName": name})["QueueUrl"]
    if not queue_url.endswith(f"/{name}"):
        raise SmokeFailure(f"CreateQueue answered the URL {queue_url!r}")
    say(f"CreateQueue: {queue_url}")
    body = "héllo from the smoke test"
    sent = _call(url, "SendMessage", {"QueueUrl": queue_url, "MessageBody": body})
    if sent.get("MD5OfMessageBody") != hashlib.md5(body.encode()).hexdigest():
        raise SmokeFailure(f"SendMessage answered {sent}")
    say(f"SendMessage: {sent['MessageId']}")
    received = _call(url, "ReceiveMessage", {"QueueUrl": queue_url, "WaitTimeSeconds": 5}).get("Messages", [])
    if [m.get("Body") for m in received] != [body] or received[0]["MessageId"] != sent["MessageId"]:
        raise SmokeFailure(f"ReceiveMessage answered {received}")
    say("ReceiveMessage: the message, its body unchanged")
    _call(url, "DeleteMessage", {"QueueUrl": queue_url, "ReceiptHandle": received[0]["ReceiptHandle"]})
    again = _call(url, "ReceiveMessage", {"QueueUrl": queue_url, "VisibilityTimeout": 0}).get("Messages", [])
    if again:
        raise SmokeFailure(f"the deleted message was received again: {again}")
    say("DeleteMessage: the queue is empty")
    _call(url, "DeleteQueue", {"QueueUrl": queue_url})
    if queue_url in _call(url, "ListQueues", {}).get("QueueUrls", []):
        raise SmokeFailure("ListQueues still lists the deleted queue")
    say("DeleteQueue: ListQueues no longer lists it")


def run(url: str | None, python: str, expect: str, timeout: float) -> str:
    """The smoke test (see the module docstring); returns the last line it prints. Raises SmokeFailure."""
    started = time.monotonic()

    def say(step: str) -> None:
        print(f"smoke: {step}", flush=True)

    server = Server(python, timeout) if url is None else None
    try:
        endpoint = server.url if server is not None else str(url).rstrip("/")
        if server is not None:
            say(f"{python} -m sqsemu serving at {endpoint} ({time.monotonic() - started:.1f} s after the start)")
        health = _health(endpoint, wait=timeout if server is None else 0.0)
        build, version = str(health.get("build")), str(health.get("version"))
        say(f"/health: version {version}, build: {build}")
        _check_build(build, expect)
        walk(endpoint, say)
        script = _console_script(python) if server is not None else None
        if script is not None:
            printed = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120)
            if printed.returncode != 0 or version not in printed.stdout:
                raise SmokeFailure(f"{script} --version printed {printed.stdout!r} {printed.stderr!r}")
            say(f"{script.name} --version: {printed.stdout.strip()}")
    except BaseException:
        if server is not None:
            server.stop()
            print("smoke: the server's output:\n" + "\n".join(server.lines[-60:]), file=sys.stderr)
        raise
    if server is not None:
        status = server.stop()
        if status != 0 and os.name == "posix":
            raise SmokeFailure(f"sqsemu exited with status {status} on SIGTERM:\n" + "\n".join(server.lines[-30:]))
    return f"smoke: OK: sqsemu {version}, build: {build} ({time.monotonic() - started:.1f} s)"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--url", help="a running server's endpoint; else this script starts one")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs sqsemu (default: this)")
    parser.add_argument("--expect-build", choices=("compiled", "pure", "any"), default="any")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds the server may take to start (or answer)")
    args = parser.parse_args()
    if args.python and not os.path.isabs(args.python):
        args.python = shutil.which(args.python) or args.python
    try:
        print(run(args.url, args.python, args.expect_build, args.timeout), flush=True)
    except (SmokeFailure, OSError) as error:
        print(f"smoke: FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
