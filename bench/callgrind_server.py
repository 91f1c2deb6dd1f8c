"""Instructions per message over real sockets: a sqsemu server under valgrind's callgrind, driven request by request.

    python bench/callgrind_server.py [--workload send|send-batch|roundtrip] [--small 20] [--large 100]
                                     [--warmup 30] [--top 10] [--out DIR] [--pure]
                                     [--text ascii|latin|cjk] [--durable]

Starts ``valgrind --tool=callgrind --instr-atstart=no python -m sqsemu`` on a free port of 127.0.0.1 (the build
the ``sqsemu`` on ``PYTHONPATH`` has: compiled or, with ``--pure``, ``SQSEMU_PURE_PYTHON=1``), creates a queue and
sends ``--warmup`` requests with collection off, then measures two windows one after the other, ``--small`` and then
``--large`` cycles of the workload, each bracketed by ``callgrind_control --instr=on`` / ``--dump`` / ``--instr=off``.
One client connection (keep-alive, the same JSON-protocol requests as ``bench/sqsbench.py``, 1 KiB bodies) sends
each request after the previous answer, so the server does the same work per request as under sqsbench's load, only
serialised. A cycle is one SendMessage (``send``); one SendMessageBatch of 10 (``send-batch``); or one
SendMessageBatch of 10, one ReceiveMessage of up to 10 (WaitTimeSeconds 0) and one DeleteMessageBatch
(``roundtrip``). The per-message figures are the difference of the two windows divided by the difference of their
messages (so what a window costs once, whatever its length, cancels out): the total instructions (Ir) per message
and the ``--top`` functions by their own (exclusive) instructions per message, from ``callgrind_annotate``.
``--durable`` runs the server with ``--data-dir`` (a fresh folder): its writer process is not measured, and each
request is a group commit of its own. Needs valgrind; the dumps are kept in ``DIR`` (default: a temporary folder).
About a minute per workload.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sqsbench  # noqa: E402  (bench/sqsbench.py: the same requests as the load driver)

PER_CYCLE = {"send": 1, "send-batch": 10, "roundtrip": 10}
# --text: what the 1 KiB (1,024 characters) bodies are made of after their 16-character sequence number
TEXTS = {
    "ascii": "",  # sqsbench's bodies: letters and digits
    "latin": "Grüße aus Köln, café au lait. ",
    "cjk": "東京の天気は晴れです。",
}
TEXT = ""


def body(seq: int) -> str:
    """A body of 1,024 characters: sqsbench's, or ``TEXT`` repeated after the sequence number."""
    if not TEXT:
        return sqsbench.make_body(seq, 1024)
    return (f"{seq:015d}|" + TEXT * 1024)[:1024]


class Client:
    """One blocking keep-alive HTTP/1.1 connection: a request's bytes in, ``(status, body)`` out."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def call(self, request: bytes) -> tuple[int, bytes]:
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        length = int(match.group(1)) if match else 0
        while len(self.buf) < length:
            self.buf += self._recv()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, body

    def _recv(self) -> bytes:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data


def cycle(client: Client, proto: sqsbench.JsonProto, url: str, workload: str, seq: int) -> None:
    """One cycle of ``workload``; raises on any error answer."""
    if workload == "send":
        proto.parse_send(*client.call(proto.send(url, body(seq))))
        return
    bodies = [body(seq * 10 + i) for i in range(10)]
    ok, bad = proto.parse_send_batch(*client.call(proto.send_batch(url, bodies)))
    assert len(ok) == 10 and not bad, bad
    if workload == "roundtrip":
        got = proto.parse_receive(*client.call(proto.receive(url, 10, 0)))
        if got:
            ok, bad = proto.parse_delete_batch(*client.call(proto.delete_batch(url, [h for h, _ in got])))
            assert not bad, bad


def control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def newest_dump(out: str, before: set[str]) -> str:
    for _ in range(200):
        new = sorted(set(os.listdir(out)) - before)
        if new:
            time.sleep(0.5)  # let callgrind finish writing it
            return os.path.join(out, new[-1])
        time.sleep(0.1)
    raise RuntimeError("callgrind wrote no dump")


def own_costs(path: str) -> tuple[int, dict[str, int]]:
    """(total Ir, {function: own Ir}) of one dump, from callgrind_annotate."""
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", "--inclusive=no", path], capture_output=True, text=True, check=True
    ).stdout
    total = 0
    costs: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*\S)\s*$", line)
        if m is None:
            m2 = re.match(r"\s*([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", line)
            if m2:
                total = int(m2.group(1).replace(",", ""))
            continue
        name = m.group(2)
        if name == "PROGRAM TOTALS":
            total = int(m.group(1).replace(",", ""))
            continue
        obj = re.search(r"\[([^\]]*)\]$", name)
        name = re.sub(r"\s*\[[^\]]*\]$", "", name)  # the object file: named only where the function is not
        if name.startswith("???") and obj:
            name = f"{os.path.basename(obj.group(1))}:{name}"
        name = re.sub(r"^.*/(?=[^/]*:)", "", name)  # the source file's name without its folder
        costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    if not total:
        m3 = re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", text) or re.search(r"([\d,]+)\s+PROGRAM TOTALS", text)
        total = int(m3.group(1).replace(",", "")) if m3 else sum(costs.values())
    return total, costs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", choices=sorted(PER_CYCLE), default="send")
    ap.add_argument("--small", type=int, default=20, help="cycles of the first window")
    ap.add_argument("--large", type=int, default=100, help="cycles of the second window")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--out", default="")
    ap.add_argument("--pure", action="store_true")
    ap.add_argument("--durable", action="store_true", help="run the server with --data-dir (a fresh folder in --out)")
    ap.add_argument("--text", choices=sorted(TEXTS), default="ascii", help="the bodies' characters")
    a = ap.parse_args()
    global TEXT
    TEXT = TEXTS[a.text]
    out = a.out or tempfile.mkdtemp(prefix="sqsemu-callgrind-")
    os.makedirs(out, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = dict(os.environ)
    env.pop("SQSEMU_PURE_PYTHON", None)
    if a.pure:
        env["SQSEMU_PURE_PYTHON"] = "1"
    stem = os.path.join(out, f"callgrind.{a.workload}")
    server = subprocess.Popen(
        [
            shutil.which("valgrind") or "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={stem}.%p",
            sys.executable,
            "-m",
            "sqsemu",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            *(["--data-dir", os.path.join(out, "data")] if a.durable else []),
        ],
        env=env,
        cwd=out,  # not the checkout: ``-m`` puts the working folder first on sys.path
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                client = Client(port)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.5)
        proto = sqsbench.JsonProto(f"127.0.0.1:{port}")
        health = client.call(f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())[1]
        build = re.search(rb'"build": *"([^"]*)"', health)
        print("build:", build.group(1).decode() if build else health[:200].decode("latin1"))
        url = proto.parse_create_queue(*client.call(proto.create_queue(f"cg-{a.workload}")))
        seq = 0
        for _ in range(a.warmup):
            cycle(client, proto, url, a.workload, seq)
            seq += 1
        dumps = []
        for n in (a.small, a.large):
            before = set(os.listdir(out))
            control(server.pid, "--instr=on")
            control(server.pid, "--zero")
            for _ in range(n):
                cycle(client, proto, url, a.workload, seq)
                seq += 1
            control(server.pid, "--dump")
            control(server.pid, "--instr=off")
            dumps.append(newest_dump(out, before))
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
    (t1, c1), (t2, c2) = (own_costs(d) for d in dumps)
    messages = (a.large - a.small) * PER_CYCLE[a.workload]
    print(f"{a.workload} ({a.text} bodies): {a.small} and {a.large} cycles; dumps {dumps[0]} {dumps[1]}")
    print(
        f"Ir per message: {(t2 - t1) / messages:,.0f} (windows: {t1 / (a.small * PER_CYCLE[a.workload]):,.0f}, "
        f"{t2 / (a.large * PER_CYCLE[a.workload]):,.0f})"
    )
    diff = {name: (c2.get(name, 0) - c1.get(name, 0)) / messages for name in set(c1) | set(c2)}
    for name, cost in sorted(diff.items(), key=lambda kv: -kv[1])[: a.top]:
        print(f"{cost:>10,.0f}  {100 * cost * messages / (t2 - t1):5.1f}%  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
