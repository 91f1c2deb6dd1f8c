"""The README's comparison table, reproduced: every workload against the bare-uvicorn ceiling, sqsemu (in memory
and ``--data-dir``) and, when installed, fauxqs, moto and LocalStack.

    python bench/compare.py                      # the full table, 3 runs each, medians (about an hour)
    python bench/compare.py --quick              # 1 run, shorter windows, 200k backlog (a few minutes)
    python bench/compare.py --build before=/path/to/other/checkout   # another sqsemu source tree, same run

Each run starts a fresh server process on 127.0.0.1 (it refuses a port that is taken), hands its PID to the load
driver ``bench/sqsbench.py`` (which reads the server's CPU time and RSS from ``/proc``), and stops it by PID.
Servers are interleaved run by run, so a busy machine weighs on all of them alike; the figure that holds on a
shared machine is the server's CPU per message (printed as us/msg beside msgs/s for every server, and us/req where a
request carries several messages). Two ceilings: ``bench/hello_asgi.py`` under uvicorn (httptools, uvloop), an
ASGI app that reads the request and answers a fixed body; and the raw-protocol floor ``bench/raw_hello.py``, the same
answer from an ``asyncio.Protocol`` over httptools on uvloop with no uvicorn (what one keep-alive request costs in
Python at the least). Under the table, each server's CPU per message against fauxqs's and against the floor's CPU
per request.

The start row (``--only startup``) times each sqsemu build from spawning it to its first ``/health`` answer, with
its bytecode compiled, as an installed package has it, and its CPU time by then; then again with sqsemu's own
modules compiled from source at every start, as a checkout run with ``PYTHONDONTWRITEBYTECODE=1`` does. Each build
gets a bytecode cache of its own (``PYTHONPYCACHEPREFIX`` in a temporary folder): source trees are not written to.

``--pure`` adds sqsemu's pure-Python build beside the installed one (the same tree with ``SQSEMU_PURE_PYTHON=1``: the
modules that ``sqsemu.compiled`` lists run from their sources); each sqsemu's build (``compiled (mypyc)`` or ``pure
Python: ...``, from its ``/health``) is printed under the table.

The SNS fan-out rows (``--only fanout``) publish over the Query protocol to a topic with 1 and with 10 SQS
subscriptions (each its own queue) while receivers drain every queue, and check that every queue got every published
message once; they give deliveries per second and the server's CPU per delivery, for sqsemu (in memory and
``--data-dir``), fauxqs and moto (LocalStack is started with SQS only).

fauxqs (Node.js) is used when it is installed with npm in ``--fauxqs-dir`` (default ``bench/.fauxqs``, ignored by
git: ``npm install --prefix bench/.fauxqs fauxqs``; fauxqs 2.x needs Node.js 22.5 or later, ``--node``, which gets
``--experimental-sqlite`` before 22.13); it is started from there with Node, through the package's own
``startFauxqs`` with its request log off (as sqsemu runs without its access log). moto is used when ``moto_server``
is on the PATH (or ``--moto-cmd``); LocalStack when ``--localstack-python`` names a Python with ``localstack-core``
(host mode, SQS only). Raw results go to ``--out`` (JSON per run); the
table is printed as Markdown. The load driver needs ``uvloop`` and ``httptools`` for its own CPU to stay small
(both come with uvicorn's standard extras, installed with sqsemu).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DRIVER = os.path.join(HERE, "sqsbench.py")


@dataclass
class Server:
    """A server to start for every run: its label, command line (``{port}`` substituted), environment and how to
    know it is ready."""

    label: str
    cmd: list[str]
    env: dict[str, str] = field(default_factory=dict)
    health: str | None = None
    data_dir: bool = False  # a fresh temporary --data-dir per run
    ready_s: float = 60.0
    proc: subprocess.Popen[bytes] | None = None
    tmp: str | None = None
    tls_dir: str | None = None  # sqsemu --tls: its CA folder (ca.pem); the driver and the health check use https

    @property
    def scheme(self) -> str:
        return "https" if self.tls_dir else "http"

    def start(self, port: int, log: str) -> int:
        if _port_open(port):
            raise SystemExit(f"port {port} is already in use: not ours, refusing")
        cmd = [c.format(port=port) for c in self.cmd]
        if self.data_dir:
            self.tmp = tempfile.mkdtemp(prefix="sqsemu-bench-")
            cmd += ["--data-dir", self.tmp]
        env = dict(os.environ)
        env.update({k: v.format(port=port) for k, v in self.env.items()})
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=HERE, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        end = time.time() + self.ready_s
        while time.time() < end:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.label} exited early, see {log}")
            if _port_open(port) and (self.health is None or _healthy(port, self.health, self.tls_dir)):
                time.sleep(1.0)  # settle
                return self.proc.pid
            time.sleep(0.2)
        self.stop()
        raise SystemExit(f"{self.label} not ready in time, see {log}")

    def stop(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.proc = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _tls_context(tls_dir: str | None) -> Any:
    """The TLS context that trusts sqsemu's local CA in ``tls_dir`` (None: plain HTTP)."""
    if tls_dir is None:
        return None
    import ssl

    return ssl.create_default_context(cafile=os.path.join(tls_dir, "ca.pem"))


def _healthy(port: int, path: str, tls_dir: str | None = None) -> bool:
    scheme = "https" if tls_dir else "http"
    try:
        context = _tls_context(tls_dir)
        with urllib.request.urlopen(f"{scheme}://127.0.0.1:{port}{path}", timeout=2, context=context) as r:
            body = r.read()
    except OSError:
        return False
    if path.startswith("/_localstack"):
        return json.loads(body).get("services", {}).get("sqs") in ("running", "available")
    return True


def _sqsemu(
    label: str, python: str, src: str | None, data_dir: bool = False, pure: bool = False, tls_dir: str | None = None
) -> Server:
    env = {"PYTHONPATH": src} if src else {}
    if pure:
        env["SQSEMU_PURE_PYTHON"] = "1"
    cmd = [python, "-m", "sqsemu", "--host", "127.0.0.1", "--port", "{port}", "--log-level", "warning"]
    if tls_dir:
        cmd += ["--tls", "--tls-dir", tls_dir]
    return Server(label, cmd, env, health="/health", data_dir=data_dir, tls_dir=tls_dir)


# (row title, workload, protocol, servers it applies to: "all", "sqsemu" (in memory), "durable")
ROWS: list[tuple[str, str, str, str]] = [
    ("SendMessage, msgs/s (server CPU per message)", "send", "json", "all"),
    ("SendMessage, Query", "send", "query", "sqsemu"),
    ("SendMessageBatch, msgs/s", "send-batch", "json", "all"),
    ("round trip (batch send, receive 10, delete batch), msgs/s", "roundtrip", "json", "all"),
    ("round trip, Query", "roundtrip", "query", "sqsemu"),
    ("long-poll wake p50 / p99", "longpoll-latency", "json", "all"),
    ("visibility expiry lateness p99", "visibility-expiry", "json", "all"),
    ("durable: send", "send", "json", "durable"),
    ("durable: round trip", "roundtrip", "json", "durable"),
    ("durable: batch", "send-batch", "json", "durable"),
    ("backlog: RSS per 1 KiB message; receive+delete head vs tail", "backlog", "json", "all"),
    ("SNS fan-out, 1 subscription: deliveries/s (server CPU per delivery)", "fanout-1", "json", "sns"),
    ("SNS fan-out, 10 subscriptions", "fanout-10", "json", "sns"),
    ("durable: SNS fan-out, 10 subscriptions", "fanout-10", "json", "durable"),
]
FANOUT = {"fanout-1": 1, "fanout-10": 10}
"""The fan-out rows' workloads: ``bench/sqsbench.py --workload fanout --subscriptions N`` (Publish over Query to a
topic with N SQS subscriptions, one queue each, every queue drained with ReceiveMessage 10 and DeleteMessageBatch
over JSON, every delivery counted per queue). ``--only fanout`` selects them all."""


def _wanted(only: set[str], workload: str) -> bool:
    """Whether ``--only`` names ``workload`` (``fanout`` names every fan-out row)."""
    return workload in only or (workload in FANOUT and "fanout" in only)


def _driver_workload(workload: str) -> str:
    """The driver's ``--workload`` for a row's workload."""
    return "fanout" if workload in FANOUT else workload


def _node_version(node: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a Node.js (None when it cannot be run)."""
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major, minor = (int(x) for x in version.lstrip("v").split(".")[:2])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return major, minor


def _node_flags(version: tuple[int, int] | None) -> list[str]:
    """``--experimental-sqlite`` for a Node.js 22 before 22.13, where ``node:sqlite`` (which fauxqs 2.x imports) is
    behind that flag; nothing for other versions."""
    return ["--experimental-sqlite", "--no-warnings"] if version and version[0] == 22 and version[1] < 13 else []


def _fauxqs(directory: str, node: str) -> Server | None:
    """fauxqs installed with ``npm install --prefix DIRECTORY fauxqs``, started on ``{port}`` without its request
    log; None (said) when it is not installed there or ``node`` is too old for it. fauxqs serves SNS on the same
    port (a form-encoded POST is an SNS call to it; SQS calls are JSON)."""
    package = os.path.join(os.path.abspath(directory), "node_modules", "fauxqs")
    app = os.path.join(package, "dist", "app.js")
    if not os.path.isfile(app):
        print(f"fauxqs: not installed in {directory} (npm install --prefix {directory} fauxqs); skipped")
        return None
    with open(os.path.join(package, "package.json")) as f:
        release = str(json.load(f).get("version", "0"))
    version = _node_version(node)
    major = release.split(".")[0]
    if major.isdigit() and int(major) >= 2 and (version or (0, 0)) < (22, 5):
        print(f"fauxqs {release}: needs Node.js 22.5 or later (--node); {node} is {version}: skipped")
        return None
    script = (
        f"import {{ startFauxqs }} from {json.dumps('file://' + app)};"
        " await startFauxqs({ port: Number(process.env.FAUXQS_PORT), logger: false });"
    )
    script = script.replace("{", "{{").replace("}", "}}")  # the command line is str.format()ted with the port
    command = [node, *_node_flags(version), "--input-type=module", "-e", script]
    return Server("fauxqs", command, {"FAUXQS_PORT": "{port}"}, health="/health")


def _build_of(port: int, tls_dir: str | None = None) -> str:
    """What a running sqsemu's ``/health`` says of its build (``compiled (mypyc)`` or ``pure Python: ...``)."""
    try:
        scheme = "https" if tls_dir else "http"
        with urllib.request.urlopen(
            f"{scheme}://127.0.0.1:{port}/health", timeout=2, context=_tls_context(tls_dir)
        ) as r:
            return str(json.loads(r.read()).get("build", "not said (an sqsemu older than its build field)"))
    except (OSError, ValueError):
        return "unknown"


def _args(workload: str, a: argparse.Namespace) -> list[str]:
    d = str(a.duration)
    return {
        "hello": ["--duration", d, "--concurrency", "16"],
        "send": ["--duration", d, "--concurrency", "16"],
        "send-batch": ["--duration", d, "--concurrency", "16"],
        "roundtrip": ["--duration", d, "--concurrency", "16"],
        "longpoll-latency": ["--duration", d, "--consumers", "10"],
        "visibility-expiry": ["--messages", str(a.vis_messages), "--concurrency", "16"],
        "backlog": ["--messages", str(a.backlog_messages), "--concurrency", "8"],
        "fanout-1": ["--duration", d, "--concurrency", "16", "--subscriptions", "1"],
        "fanout-10": ["--duration", d, "--concurrency", "16", "--subscriptions", "10"],
    }[workload]


def _get(d: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def _median(results: list[dict[str, Any]], path: str) -> float | None:
    values = [v for v in (_get(r["result"], path) for r in results) if isinstance(v, int | float)]
    return statistics.median(values) if values else None


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _cell(workload: str, results: list[dict[str, Any]]) -> str:
    """The table cell of one server on one workload (medians over runs)."""
    if not results:
        return ""
    m = lambda path: _median(results, path)  # noqa: E731
    if workload == "hello":
        return f"{_fmt(m('req_per_s'))} req/s ({_fmt(m('server_cpu_us_per_req'), '.0f')} us/req)"
    if workload == "send":
        return f"{_fmt(m('msgs_per_s'))} ({_fmt(m('server_cpu_ms_per_1k_msgs'), '.1f')} us/msg)"
    if workload == "send-batch":
        per_req = m("server_cpu_us_per_req")
        return (
            f"{_fmt(m('msgs_per_s'))} ({_fmt(m('server_cpu_ms_per_1k_msgs'), '.1f')} us/msg, "
            f"{_fmt(per_req, '.0f')} us/req)"
        )
    if workload == "roundtrip":
        lost = sum(_get(r["result"], "verify.lost") or 0 for r in results)
        dup = sum(_get(r["result"], "verify.duplicate_receives") or 0 for r in results)
        return (
            f"{_fmt(m('e2e_msgs_per_s'))} ({_fmt(m('server_cpu_ms_per_1k_msgs'), '.1f')} us/msg), {lost} lost {dup} dup"
        )
    if workload in FANOUT:
        lost = sum(_get(r["result"], "verify.lost") or 0 for r in results)
        dup = sum(_get(r["result"], "verify.duplicate_receives") or 0 for r in results)
        return (
            f"{_fmt(m('deliveries_per_s'))} ({_fmt(m('server_cpu_ms_per_1k_msgs'), '.1f')} us/delivery), "
            f"{lost} lost {dup} dup"
        )
    if workload == "longpoll-latency":
        p50, p99 = m("latency_from_send_start_ms.p50"), m("latency_from_send_start_ms.p99")
        ack50, ack99 = m("latency_from_send_ack_ms.p50"), m("latency_from_send_ack_ms.p99")
        return (
            f"{_fmt(p50, '.2f')} / {_fmt(p99, '.2f')} ms from the send's start;"
            f" {_fmt(ack50, '.2f')} / {_fmt(ack99, '.2f')} ms from its answer"
        )
    if workload == "visibility-expiry":
        return f"{_fmt(m('lateness_ms.p99'))} ms ({_fmt(m('messages'))} in flight)"
    if workload == "backlog":
        tail_real = all(_get(r["result"], "tail_is_real") is not False for r in results)
        return (
            f"{_fmt(m('bytes_per_msg'))} B; {_fmt(m('head.msgs_per_s'))} vs {_fmt(m('tail.msgs_per_s'))}"
            f"{'' if tail_real else ' (tail on a fresh queue)'} msgs/s ({_fmt(m('messages'))} msgs)"
        )
    return "?"


def _selected(only: set[str] | None, workload: str, protocol: str, applies: str) -> bool:
    """Whether ``--only`` selects a row: by its workload, or ('durable') as a durable row or the in-memory row of
    the same workload and protocol that it is compared with."""
    if only is None or _wanted(only, workload):
        return True
    durable = {(w, p) for _, w, p, kind in ROWS if kind == "durable"}
    return "durable" in only and (workload, protocol) in durable


def _bytecode_env(cache: str, compiled: bool) -> dict[str, str]:
    """The environment of a start with Python's bytecode cache in ``cache`` (``PYTHONPYCACHEPREFIX``): written and
    read when ``compiled``, else neither (``PYTHONDONTWRITEBYTECODE``, and nothing of sqsemu's there to read)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPYCACHEPREFIX"] = cache
    if not compiled:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) the process has used so far (Linux ``/proc``; None elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_once(server: Server, port: int, env: dict[str, str]) -> tuple[float, float | None] | None:
    """Seconds from spawning ``server`` to its first answer on its health path, and its CPU seconds by then."""
    if _port_open(port):
        raise SystemExit(f"port {port} is already in use: not ours, refusing")
    env = {**env, **server.env}
    cmd = [c.format(port=port) for c in server.cmd]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    result = None
    try:
        while time.perf_counter() - t0 < 60 and proc.poll() is None:
            if _healthy(port, server.health or "/"):
                result = (time.perf_counter() - t0, _process_cpu_s(proc.pid))
                break
            time.sleep(0.002)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    while _port_open(port):
        time.sleep(0.05)
    return result


def _forget_sqsemu(cache: str) -> None:
    """Remove sqsemu's own bytecode from ``cache`` (a ``PYTHONPYCACHEPREFIX`` tree); the standard library's and the
    dependencies' stays."""
    for folder, dirs, files in os.walk(cache):
        if os.path.basename(folder) == "sqsemu" and any(f.startswith("__init__.") for f in files):
            shutil.rmtree(folder, ignore_errors=True)
            dirs.clear()


def startup_times(servers: list[Server], port: int, runs: int) -> dict[str, str]:
    """The start row's cell per server: median seconds from spawning the server to its first ``/health`` answer
    and its CPU seconds by then, with its bytecode compiled (as installed: pip compiles a package's bytecode when
    it installs it; the Docker image too), then the median start when sqsemu's own modules are compiled from
    source at every start (``PYTHONDONTWRITEBYTECODE=1`` and a checkout without ``__pycache__``). Runs are
    interleaved across servers; each server's bytecode lives in a cache of its own (``PYTHONPYCACHEPREFIX``),
    filled by one start that is not counted, and a copy of it without sqsemu's serves the starts from source."""
    caches = tempfile.mkdtemp(prefix="sqsemu-bench-pyc-")
    times: dict[str, dict[bool, list[tuple[float, float | None]]]] = {s.label: {True: [], False: []} for s in servers}
    try:
        for server in servers:
            cache = os.path.join(caches, server.label)
            _start_once(server, port, _bytecode_env(cache, True))  # fills the cache
            shutil.copytree(cache, cache + "-source")  # the same without sqsemu's own, never written to
            _forget_sqsemu(cache + "-source")
        for _ in range(runs):
            for server in servers:
                cache = os.path.join(caches, server.label)
                for compiled in (True, False):
                    env = _bytecode_env(cache if compiled else cache + "-source", compiled)
                    result = _start_once(server, port, env)
                    if result is not None:
                        times[server.label][compiled].append(result)
    finally:
        shutil.rmtree(caches, ignore_errors=True)
    cells = {}
    for label, by_mode in times.items():
        cached, source = by_mode[True], by_mode[False]
        if not cached:
            cells[label] = ""
            continue
        cell = f"{statistics.median(w for w, _ in cached):.2f} s"
        cpu = [c for _, c in cached if c is not None]
        if cpu:
            cell += f" ({statistics.median(cpu):.2f} s CPU)"
        if source:
            cell += f"; {statistics.median(w for w, _ in source):.2f} s compiling sqsemu's source"
        cells[label] = cell
    return cells


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--duration", type=float, default=15.0, help="seconds per throughput run")
    ap.add_argument("--vis-messages", type=int, default=20000)
    ap.add_argument("--backlog-messages", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="1 run, 8 s windows, 200k backlog")
    ap.add_argument("--port", type=int, default=9571)
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "sqsemu-bench"))
    ap.add_argument("--python", default=sys.executable, help="the Python that runs sqsemu, the ceiling and the driver")
    ap.add_argument(
        "--build",
        action="append",
        default=[],
        metavar="LABEL=SRC",
        help="also run sqsemu from another source tree (PYTHONPATH=SRC), e.g. before=../main",
    )
    ap.add_argument("--pure", action="store_true", help="also run sqsemu's pure-Python build (SQSEMU_PURE_PYTHON=1)")
    ap.add_argument(
        "--tls",
        action="store_true",
        help="also run sqsemu with --tls (HTTPS, its local CA in a temporary folder; the driver verifies it) and "
        "print TLS's server CPU per message against plain HTTP",
    )
    ap.add_argument(
        "--fauxqs-dir",
        default=os.path.join(HERE, ".fauxqs"),
        help="where fauxqs is installed with npm (npm install --prefix DIR fauxqs); skipped when it is not there",
    )
    ap.add_argument("--node", default=shutil.which("node") or "node", help="the Node.js that runs fauxqs")
    ap.add_argument("--moto-cmd", default=shutil.which("moto_server"), help="moto's server (default: on the PATH)")
    ap.add_argument("--localstack-python", help="a Python with localstack-core installed")
    ap.add_argument(
        "--only",
        help="comma-separated row workloads to run (e.g. send,roundtrip); 'durable': the durable rows and the "
        "in-memory rows they are compared with",
    )
    ap.add_argument("--no-durable", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.duration, a.backlog_messages = 1, 8.0, 200_000
    os.makedirs(a.out, exist_ok=True)
    py = a.python
    ceiling = Server(
        "ceiling",
        [
            py,
            "-m",
            "uvicorn",
            "hello_asgi:app",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
            "--http",
            "httptools",
            "--loop",
            "uvloop",
            "--no-access-log",
            "--log-level",
            "warning",
        ],
    )
    floor = Server("floor", [py, "raw_hello.py", "{port}"])
    builds = [("sqsemu", ROOT)] + [tuple(b.split("=", 1)) for b in a.build]  # type: ignore[misc]
    memory = [_sqsemu(label, py, src) for label, src in builds]
    durable = [] if a.no_durable else [_sqsemu(f"{label} --data-dir", py, src, True) for label, src in builds]
    if a.tls:
        memory.append(_sqsemu("sqsemu --tls", py, ROOT, tls_dir=tempfile.mkdtemp(prefix="sqsemu-bench-tls-")))
    if a.pure:
        memory.append(_sqsemu("sqsemu pure", py, ROOT, pure=True))
        if not a.no_durable:
            durable.append(_sqsemu("sqsemu pure --data-dir", py, ROOT, True, pure=True))
    others: list[Server] = []
    fauxqs = _fauxqs(a.fauxqs_dir, a.node)
    if fauxqs is not None:
        others.append(fauxqs)
    if a.moto_cmd:
        others.append(Server("moto", [a.moto_cmd, "-H", "127.0.0.1", "-p", "{port}"]))
    if a.localstack_python:
        state = tempfile.mkdtemp(prefix="sqsemu-bench-ls-")
        others.append(
            Server(
                "LocalStack",
                [a.localstack_python, "-m", "localstack.runtime.main"],
                {
                    "GATEWAY_LISTEN": "127.0.0.1:{port}",
                    "SERVICES": "sqs",
                    "EAGER_SERVICE_LOADING": "1",
                    "DNS_ADDRESS": "0",
                    "DEBUG": "0",
                    "PERSISTENCE": "0",
                    "SQS_ENDPOINT_STRATEGY": "path",
                    "LOCALSTACK_VOLUME_DIR": state,
                    "FILESYSTEM_ROOT": state,
                    "TMPDIR": state,
                    "DISABLE_EVENTS": "1",
                    "LOCALSTACK_TELEMETRY": "0",
                    "DISABLE_CORS_CHECKS": "1",
                },
                health="/_localstack/health",
                ready_s=120,
            )
        )
    only = set(a.only.split(",")) if a.only else None
    log = os.path.join(a.out, "servers.log")
    results: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    builds_seen: dict[str, list[str]] = {}  # every build each label ran as, first seen first (checked every run)

    def run(server: Server, workload: str, protocol: str, key: str, i: int) -> None:
        pid = server.start(a.port, log)
        if server.label.startswith("sqsemu") or server in memory + durable:
            build = _build_of(a.port, server.tls_dir)
            seen = builds_seen.setdefault(server.label, [])
            if seen and build not in seen:  # e.g. a compiled module's source edited mid-run: the pure build
                print(f"  WARNING: {server.label} runs as '{build}' now, as '{seen[0]}' before", flush=True)
            if build not in seen:
                seen.append(build)
        out = os.path.join(a.out, f"{server.label.replace(' ', '_')}__{workload}__{protocol}__r{i}.json")
        try:
            cmd = [
                py,
                DRIVER,
                "--endpoint",
                f"{server.scheme}://127.0.0.1:{a.port}",
                *(["--cafile", os.path.join(server.tls_dir, "ca.pem")] if server.tls_dir else []),
                "--protocol",
                protocol,
                "--workload",
                _driver_workload(workload),
                "--server-pid",
                str(pid),
                "--label",
                server.label,
                "--json-out",
                out,
                *_args(workload, a),
            ]
            print("$", shlex.join(cmd[1:]), flush=True)
            subprocess.run(cmd, cwd=HERE, timeout=3600, check=False)
        finally:
            server.stop()
        try:
            with open(out) as f:
                results.setdefault((key, server.label, workload, protocol), []).append(json.load(f))
        except (OSError, ValueError):
            print(f"  no result from {server.label} ({workload}, {protocol})", flush=True)

    for title, workload, protocol, applies in ROWS:
        if not _selected(only, workload, protocol, applies):
            continue
        sns = memory + [s for s in others if s.label != "LocalStack"]  # LocalStack is started with SQS only
        servers = {"all": memory + others, "sqsemu": memory, "durable": durable, "sns": sns}[applies]
        if only is not None and not _wanted(only, workload):  # chosen by 'durable': the in-memory figure it needs
            servers = [s for s in servers if s in memory + durable]
        for i in range(1, a.runs + 1):
            if title == ROWS[0][0] and (only is None or _wanted(only, workload)):
                run(ceiling, "hello", protocol, title, i)
                run(floor, "hello", protocol, title, i)
            for server in servers:
                run(server, workload, protocol, title, i)
    startup: dict[str, str] = {}
    if only is None or "startup" in only:
        startup = startup_times(memory, a.port, max(5, a.runs))

    labels = [s.label for s in memory] + [s.label for s in others]
    print()
    print(
        f"Machine: {os.cpu_count()} CPUs, load average {' '.join(open('/proc/loadavg').read().split()[:3])}; "
        f"{a.runs} run(s) each, medians; JSON unless said. Raw results: {a.out}"
    )
    print()
    print("| workload | bare-uvicorn ceiling | raw-protocol floor | " + " | ".join(labels) + " |")
    print("|---|---|---|" + "---|" * len(labels))
    ceiling_rps = _median(results.get((ROWS[0][0], "ceiling", "hello", "json"), []), "req_per_s")
    rate = {"send": "msgs_per_s", "send-batch": "msgs_per_s", "roundtrip": "e2e_msgs_per_s"}
    rate.update({workload: "deliveries_per_s" for workload in FANOUT})
    for title, workload, protocol, applies in ROWS:
        if not _selected(only, workload, protocol, applies) or (applies == "durable" and not durable):
            continue
        first = title == ROWS[0][0]
        hello = _cell("hello", results.get((title, "ceiling", "hello", "json"), [])) if first else ""
        hello += " | " + (_cell("hello", results.get((title, "floor", "hello", "json"), [])) if first else "")
        cells = []
        for label in labels:
            key = (title, label + (" --data-dir" if applies == "durable" else ""), workload, protocol)
            cell = _cell(workload, results.get(key, []))
            value = _median(results.get(key, []), rate[workload]) if workload in rate else None
            if value and applies == "durable":
                in_memory = [r for k, r in results.items() if k[1:] == (label, workload, protocol) and k != key]
                base = _median(in_memory[0], rate[workload]) if in_memory else None
                cell += f"; {value / base:.2f} of in memory" if base else ""
            elif value and ceiling_rps and workload in ("send", "roundtrip", "send-batch"):
                cell += f"; {value / ceiling_rps:.2f} of the ceiling"
            cells.append(cell)
        print(f"| {title} | {hello} | " + " | ".join(cells) + " |")
    fauxqs_ratios = []
    for title, workload, protocol, applies in ROWS:
        if workload not in rate or applies == "durable" or not _selected(only, workload, protocol, applies):
            continue
        theirs = _median(results.get((title, "fauxqs", workload, protocol), []), rate[workload])
        if not theirs:
            continue
        ours = [
            f"{label} {value / theirs:.2f}x"
            for label in [s.label for s in memory]
            if (value := _median(results.get((title, label, workload, protocol), []), rate[workload]))
        ]
        fauxqs_ratios.append(f"- {title}: " + ", ".join(ours))
    if fauxqs_ratios:
        print()
        print("msgs/s (fan-out: deliveries/s) against fauxqs's (same run):")
        print("\n".join(fauxqs_ratios))
    floor_us = _median(results.get((ROWS[0][0], "floor", "hello", "json"), []), "server_cpu_us_per_req")
    cpu_lines = []
    for title, workload, protocol, applies in ROWS:
        if workload not in rate or applies == "durable" or not _selected(only, workload, protocol, applies):
            continue
        cpu = "server_cpu_ms_per_1k_msgs"  # numerically us per message
        fauxqs_cpu = _median(results.get((title, "fauxqs", workload, protocol), []), cpu)
        parts = []
        for label in [s.label for s in memory]:
            own_cpu = _median(results.get((title, label, workload, protocol), []), cpu)
            if not own_cpu:
                continue
            part = f"{label} {own_cpu:.1f} us/msg"
            if fauxqs_cpu:
                part += f" = {own_cpu / fauxqs_cpu:.2f}x fauxqs's"
            if floor_us and workload == "send":
                part += f", {own_cpu / floor_us:.1f}x the floor's us/req"
            parts.append(part)
        if parts:
            cpu_lines.append(f"- {title}: " + "; ".join(parts))
    if cpu_lines:
        print()
        print("server CPU per message (fan-out: per delivery; same run):")
        print("\n".join(cpu_lines))
    tls_lines = []
    for title, workload, protocol, applies in ROWS if a.tls else ():
        if workload not in rate or applies == "durable" or not _selected(only, workload, protocol, applies):
            continue
        cpu = "server_cpu_ms_per_1k_msgs"
        plain = _median(results.get((title, "sqsemu", workload, protocol), []), cpu)
        secure = _median(results.get((title, "sqsemu --tls", workload, protocol), []), cpu)
        if plain and secure:
            tls_lines.append(
                f"- {title}: {secure:.1f} - {plain:.1f} = {secure - plain:+.1f} us/msg ({secure / plain:.2f}x)"
            )
    if tls_lines:
        print()
        print("TLS's server CPU per message (sqsemu --tls minus sqsemu over plain HTTP; same run):")
        print("\n".join(tls_lines))
    if builds_seen:
        print()
        print("builds: " + "; ".join(f"{label}: {' / '.join(builds)}" for label, builds in builds_seen.items()))
        mixed = [label for label, builds in builds_seen.items() if len(builds) > 1]
        if mixed:
            print(
                f"WARNING: {', '.join(mixed)} changed build during the run (a compiled module's source changed since "
                "the build makes sqsemu fall back to its pure sources): their figures mix builds; reinstall, run again"
            )
    if startup:
        cells = [startup.get(label, "") for label in labels]
        print("| start to first `/health` answer | | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
