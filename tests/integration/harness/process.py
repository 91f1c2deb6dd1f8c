"""A real ``sqsemu`` server in a subprocess, on 127.0.0.1 and a free port.

``ServerProcess(...).start()`` spawns ``python -m sqsemu --host 127.0.0.1 --port <free> [args]``, waits until
``GET /health`` answers 200 (deadline, no fixed sleeps) and records how long that took; ``stop()`` sends
SIGINT and returns the exit status. The server's output goes to a log file whose tail is shown on failure.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

START_DEADLINE_S = 20.0
STOP_DEADLINE_S = 20.0


def listens(pid: int, port: int) -> bool | None:
    """Whether process ``pid`` or one of its descendants holds a TCP socket listening on ``port`` (Linux:
    ``/proc``); None when ``/proc`` cannot tell."""
    inodes: set[int] = set()
    pending = [pid]
    try:
        while pending:
            current = pending.pop()
            for fd in os.listdir(f"/proc/{current}/fd"):
                try:
                    link = os.readlink(f"/proc/{current}/fd/{fd}")
                except OSError:
                    continue
                if link.startswith("socket:["):
                    inodes.add(int(link[8:-1]))
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    pending += [int(child) for child in children.read().split()]
    except OSError:
        return None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port and int(fields[9]) in inodes:
                return True  # 0A: LISTEN
    return False


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (bind to port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def http_get(
    url: str, timeout: float = 2.0, context: ssl.SSLContext | None = None
) -> tuple[int, dict[str, str], bytes]:
    """``GET url`` -> ``(status, headers, body)``; HTTP error statuses are returned, not raised. ``context``: the TLS
    context of an ``https://`` URL (default: the system's trust)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()), err.read()


def http_post_json(url: str, payload: Any, timeout: float = 10.0) -> tuple[int, Any]:
    """``POST url`` with a JSON body -> ``(status, decoded JSON body or raw text)``."""
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as err:
        status, body = err.code, err.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode("utf-8", "replace")


def wait_for_health(
    url: str, deadline_s: float, proc: subprocess.Popen[bytes] | None = None, context: ssl.SSLContext | None = None
) -> float:
    """Poll ``url`` (a /health URL) until it answers 200; returns the seconds waited. ``context``: as
    :func:`http_get`'s.

    Raises ``TimeoutError`` after ``deadline_s`` seconds, or ``RuntimeError`` if ``proc`` exits first.
    """
    started = time.monotonic()
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode} before answering {url}")
        try:
            status, _, _ = http_get(url, timeout=1.0, context=context)
            if status == 200:
                return time.monotonic() - started
        except (OSError, http.client.HTTPException):
            pass  # not listening yet
        if time.monotonic() - started > deadline_s:
            raise TimeoutError(f"{url} did not answer 200 within {deadline_s} s")
        time.sleep(0.01)


class ServerProcess:
    """One ``sqsemu`` subprocess.

    - ``args``: extra command-line arguments (e.g. ``["--clock", "manual"]``).
    - ``command``: the program to run instead of ``[sys.executable, "-m", "sqsemu"]``.
    - ``env``: extra environment variables.
    - ``pass_host_port``: append ``--host 127.0.0.1 --port <free>`` (set False to give them another way).

    After :meth:`start`: ``port``, ``endpoint_url`` (``http://127.0.0.1:<port>``; ``https`` when ``args`` hold
    ``--tls``), ``proc`` and ``startup_seconds`` (spawn to first 200 from /health; a ``--tls`` server's /health is
    asked without verifying its certificate: the tests verify it themselves).
    """

    def __init__(
        self,
        args: list[str] | None = None,
        *,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
        port: int | None = None,
        pass_host_port: bool = True,
    ) -> None:
        self.args = list(args or [])
        self.command = command if command is not None else [sys.executable, "-m", "sqsemu"]
        self.extra_env = dict(env or {})
        self.host = "127.0.0.1"
        self.port = port if port is not None else free_port()
        self._port_chosen_here = port is None
        self.pass_host_port = pass_host_port
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="sqsemu-server-", suffix=".log", delete=False)
        self.log_path = Path(self._log.name)

    @property
    def tls(self) -> bool:
        """The server serves HTTPS (``--tls`` among its arguments)."""
        return "--tls" in self.args

    @property
    def endpoint_url(self) -> str:
        """``http://127.0.0.1:<port>`` (``https`` with ``--tls``)."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def argv(self) -> list[str]:
        """The full command line that :meth:`start` runs."""
        host_port = ["--host", self.host, "--port", str(self.port)] if self.pass_host_port else []
        return [*self.command, *host_port, *self.args]

    def start(self, deadline_s: float = START_DEADLINE_S) -> ServerProcess:
        """Spawn the server and wait until /health answers 200 (raises with the log tail if it does not).

        The answer must come from this server: a port that :func:`free_port` found free can be taken by another
        test's server (another worker) before this one listens, and that one's /health would answer. When the
        port was chosen here and the answering listener is not this server's (``/proc`` says whose it is), the
        server is stopped and started again on another free port (three tries)."""
        # The server is configured by its arguments and extra_env alone; the build the test process runs
        # (SQSEMU_PURE_PYTHON) carries over, so a suite run on the pure sources starts pure servers.
        env = {k: v for k, v in os.environ.items() if not k.startswith("SQSEMU_") or k == "SQSEMU_PURE_PYTHON"}
        env.update(self.extra_env)
        for attempt in range(3):
            spawned = time.monotonic()
            self.proc = subprocess.Popen(self.argv, stdout=self._log, stderr=subprocess.STDOUT, env=env)
            retry = self._port_chosen_here and attempt < 2
            try:
                unverified = ssl._create_unverified_context() if self.tls else None  # noqa: S323 - health only
                wait_for_health(f"{self.endpoint_url}/health", deadline_s, self.proc, unverified)
            except (TimeoutError, RuntimeError) as exc:
                self.kill()
                if retry and "cannot listen" in self.log_tail():  # taken before this server could listen
                    self.port = free_port()
                    continue
                raise RuntimeError(f"{exc}\n--- server log ({self.log_path}) ---\n{self.log_tail()}") from None
            if retry and listens(self.proc.pid, self.port) is False:
                self.kill()  # another process answered on this port: try another
                self.port = free_port()
                continue
            break
        self.startup_seconds = time.monotonic() - spawned
        return self

    def stop(self, sig: int = signal.SIGINT, deadline_s: float = STOP_DEADLINE_S) -> int:
        """Send ``sig`` (SIGINT: Ctrl-C) and return the exit status; kill and raise after ``deadline_s``."""
        proc = self.proc
        if proc is None:
            raise RuntimeError("server was not started")
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=deadline_s)
            except subprocess.TimeoutExpired:
                self.kill()
                raise RuntimeError(
                    f"server did not exit within {deadline_s} s of signal {sig}\n{self.log_tail()}"
                ) from None
        self._log.close()
        if proc.returncode == 0:
            self.log_path.unlink(missing_ok=True)  # kept for inspection only when something went wrong
        return proc.returncode

    def kill(self) -> None:
        """Kill the process (no graceful shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def log_tail(self, max_chars: int = 4000) -> str:
        """The end of the server's combined stdout/stderr."""
        if not self._log.closed:
            self._log.flush()
        if not self.log_path.exists():
            return ""
        text = self.log_path.read_text(errors="replace")
        return text[-max_chars:]

    # Manual-clock administration (POST /_sqsemu/clock/advance, GET /_sqsemu/clock).

    def advance(self, seconds: float) -> Any:
        """Move a ``--clock manual`` server's time forward by ``seconds``; returns its JSON answer."""
        status, body = http_post_json(f"{self.endpoint_url}/_sqsemu/clock/advance", {"seconds": seconds})
        if status != 200:
            raise RuntimeError(f"clock advance failed: HTTP {status}: {body}")
        return body

    def clock(self) -> Any:
        """The server's JSON answer to ``GET /_sqsemu/clock``: ``{"now_ms": <epoch ms>, "mode": ...}``."""
        status, _, body = http_get(f"{self.endpoint_url}/_sqsemu/clock", timeout=10)
        if status != 200:
            raise RuntimeError(f"GET /_sqsemu/clock failed: HTTP {status}: {body!r}")
        return json.loads(body)

    def now_ms(self) -> int:
        """The server clock's current time in epoch milliseconds."""
        return int(self.clock()["now_ms"])

    def __enter__(self) -> ServerProcess:
        if self.proc is not None and self.proc.poll() is None:  # ``with ServerProcess(...).start() as srv``
            return self
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()
