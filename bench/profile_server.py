"""py-spy on a running sqsemu server under load: the top functions by own and by inclusive samples.

    python bench/profile_server.py LABEL [--pure] [--native] [--workload send] [--seconds 10] [--out DIR]
                                         [--data-dir fresh|DIR] [--driver-args "--subscriptions 10"]

Starts ``python -m sqsemu`` on a free port of 127.0.0.1 (``SQSEMU_PURE_PYTHON=1`` with ``--pure``: the pure-Python
build), drives it with ``bench/sqsbench.py`` (16 connections) for ``seconds`` + 4 s, records ``py-spy record
--function --format raw`` (collapsed stacks, 200 samples a second) for ``seconds`` s in the middle into
``DIR/pyspy-LABEL.txt``, stops the server, and prints the top 25 functions by own samples and by inclusive samples.
``--native`` shows the C frames too (a compiled build's functions appear as ``CPyDef_<module>___<name>``; without
it py-spy counts compiled code to its nearest Python caller). Needs py-spy (``pip install py-spy``) and, for
``--native`` or another user's process, the right to ptrace the server (root, or ``kernel.yama.ptrace_scope=0``)."""

from __future__ import annotations

import argparse
import collections
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
SPY = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("--pure", action="store_true")
    ap.add_argument("--native", action="store_true")
    ap.add_argument("--workload", default="send")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--out", default=tempfile.gettempdir())
    ap.add_argument("--data-dir", help="durable mode: the server's --data-dir (a fresh temporary folder with 'fresh')")
    ap.add_argument("--driver-args", default="", help="more arguments for sqsbench.py (e.g. '--subscriptions 10')")
    a = ap.parse_args()
    port = free_port()
    env = dict(os.environ)
    env.pop("SQSEMU_PURE_PYTHON", None)
    if a.pure:
        env["SQSEMU_PURE_PYTHON"] = "1"
    command = [PY, "-m", "sqsemu", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if a.data_dir:
        command += ["--data-dir", tempfile.mkdtemp(prefix="sqsemu-profile-") if a.data_dir == "fresh" else a.data_dir]
    server = subprocess.Popen(
        command,
        env=env,
        cwd=HERE,
        start_new_session=True,
    )
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    print(r.read().decode())
                    break
            except OSError:
                time.sleep(0.1)
        load = subprocess.Popen(
            [
                PY,
                os.path.join(HERE, "sqsbench.py"),
                "--endpoint",
                f"http://127.0.0.1:{port}",
                "--workload",
                a.workload,
                "--duration",
                str(a.seconds + 4),
                "--concurrency",
                "16",
                "--server-pid",
                str(server.pid),
                *shlex.split(a.driver_args),
            ],
        )
        time.sleep(2)
        raw = f"{a.out}/pyspy-{a.label}.txt"
        cmd = [
            SPY,
            "record",
            "--function",
            "--format",
            "raw",
            "-o",
            raw,
            "-d",
            str(a.seconds),
            "-r",
            "200",
            "--pid",
            str(server.pid),
        ]
        if a.native:
            cmd.append("--native")
        subprocess.run(cmd, check=False, capture_output=True)
        load.wait(120)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(10)
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    with open(raw) as f:
        for line in f:
            stack, _, count = line.rstrip().rpartition(" ")
            n = int(count)
            frames = stack.split(";")
            total += n
            own[frames[-1]] += n
            for frame in set(frames):
                inclusive[frame] += n
    print(f"\n{a.label}: {total} samples; top own (leaf) frames:")
    for frame, n in own.most_common(25):
        print(f"  {100 * n / total:5.1f}%  {frame}")
    print(f"\n{a.label}: top inclusive frames:")
    for frame, n in inclusive.most_common(25):
        print(f"  {100 * n / total:5.1f}%  {frame}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
