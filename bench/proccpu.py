"""CPU seconds per process of a Spark job and the sqsemu server, read from ``/proc/<pid>/stat`` (Linux only).

A figure that holds on a busy machine, unlike messages per second: the CPU a process spends on a run does not grow
when other work shares the cores. :class:`ProcessCPU` samples a process tree every ``interval`` seconds in a
background thread, keeps each process's last ``utime + stime`` (field 14 + 15 of ``/proc/<pid>/stat``, in clock
ticks) and, on :meth:`ProcessCPU.stop`, gives the CPU seconds each role spent since :meth:`ProcessCPU.start`:

- ``driver``: the root process (the one that builds the ``SparkSession``: PySpark's driver Python);
- ``jvm``: the ``java`` processes under it (Spark's driver and executors in ``local[N]``);
- ``source``: the Python process the JVM starts for a Python streaming data source (it runs the reader's
  ``latestOffset``, ``partitions`` and ``commit``: receiving, renewing and deleting happen there);
- ``workers``: the other Python processes under the JVM (the executors' Python workers and their daemon);
- ``server``: the sqsemu server process.

A process that starts and ends between two samples is missed (with the default 0.5 s interval, only short-lived
helpers are); Spark reuses its Python workers, so they are counted.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["ROLES", "ProcessCPU"]

ROLES = ("driver", "jvm", "source", "workers", "server")
_TICK = os.sysconf("SC_CLK_TCK")
_SOURCE_MARK = b"python_streaming_source_runner"


def _stat(pid: int) -> tuple[int, str, int] | None:
    """``(ppid, comm, utime + stime ticks)`` of a process, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    close = raw.rfind(b")")
    comm = raw[raw.find(b"(") + 1 : close].decode(errors="replace")
    fields = raw[close + 2 :].split()
    # fields[0] is the state (stat field 3): ppid is field 4, utime 14, stime 15.
    return int(fields[1]), comm, int(fields[11]) + int(fields[12])


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class ProcessCPU:
    """Samples the CPU of ``root``'s process tree and of ``server`` (pids); see the module docstring."""

    def __init__(self, root: int, server: int, interval: float = 0.5) -> None:
        self.root = root
        self.server = server
        self.interval = interval
        self._first: dict[int, int] = {}
        self._last: dict[int, int] = {}
        self._role: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self, first: bool) -> None:
        stats: dict[int, tuple[int, str, int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                stat = _stat(int(entry))
                if stat is not None:
                    stats[int(entry)] = stat
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in stats.items():
            children.setdefault(ppid, []).append(pid)

        def walk(pid: int, role: str) -> None:
            if pid not in stats:
                return
            comm = stats[pid][1]
            if role in ("driver", "jvm") and comm == "java":
                role = "jvm"
            elif role == "jvm" and pid not in self._role:
                role = "source" if _SOURCE_MARK in _cmdline(pid) else "workers"
            elif role == "jvm":
                role = self._role[pid]
            self._role[pid] = role
            ticks = stats[pid][2]
            if first:
                self._first[pid] = ticks
            else:
                self._first.setdefault(pid, 0)
            self._last[pid] = ticks
            for child in children.get(pid, ()):
                walk(child, role)

        walk(self.root, "driver")
        if self.server in stats:
            self._role[self.server] = "server"
            if first:
                self._first[self.server] = stats[self.server][2]
            self._last[self.server] = stats[self.server][2]

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample(first=False)

    def start(self) -> None:
        """Take the starting sample and sample on every ``interval`` until :meth:`stop`."""
        self._first.clear()
        self._last.clear()
        self._sample(first=True)
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="proccpu", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, float]:
        """The last sample; CPU seconds per role (every role of :data:`ROLES`, 0.0 when it had no process)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample(first=False)
        seconds = dict.fromkeys(ROLES, 0.0)
        for pid, last in self._last.items():
            seconds[self._role[pid]] += (last - self._first.get(pid, 0)) / _TICK
        return seconds
