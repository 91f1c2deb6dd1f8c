"""A reinstall never breaks a running server: setup.py puts each compiled module in place with
:func:`sqsemu.compiled.install_file` (a new file renamed over the old), so a server running from the same files keeps
the modules it has mapped and goes on answering. A full ``pip install -e .`` takes minutes; the step that touches the
running server's files is this one, run here on a copy of the installed compiled package while it serves."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from harness import ServerProcess, json_client

import sqsemu
from sqsemu import compiled

pytestmark = pytest.mark.integration


def _mapped(pid: int) -> dict[str, bool]:
    """``{path: deleted}`` of the shared objects process ``pid`` has mapped (Linux ``/proc``)."""
    mapped: dict[str, bool] = {}
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and ".so" in fields[5]:
                path = fields[5].strip()
                deleted = path.endswith(" (deleted)")
                mapped[path.removesuffix(" (deleted)")] = deleted
    return mapped


def test_reinstalling_the_compiled_modules_under_a_serving_process_keeps_it_answering(tmp_path: Path) -> None:
    if not compiled.is_compiled():
        pytest.skip(f"nothing compiled is running here ({compiled.status()})")
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here: the test reads a process's mapped files from /proc/<pid>/maps")
    package = Path(sqsemu.__file__).resolve().parent
    shutil.copytree(package, tmp_path / "sqsemu", ignore=shutil.ignore_patterns("__pycache__"))
    for shared in package.parent.glob("*__mypyc*.so"):  # mypyc's shared library, beside the package
        shutil.copy2(shared, tmp_path / shared.name)
    built = {p: package.parent / p.relative_to(tmp_path) for p in tmp_path.rglob("*.so")}
    command = [sys.executable, "-P", "-m", "sqsemu"]  # -P: the copy (PYTHONPATH) comes first, not the working folder
    with ServerProcess(command=command, env={"PYTHONPATH": str(tmp_path)}) as srv:
        assert srv.proc is not None
        sqs = json_client(srv.endpoint_url)
        url = sqs.create_queue(QueueName="reinstalled-under-me")["QueueUrl"]
        loaded = [path for path in _mapped(srv.proc.pid) if path.startswith(str(tmp_path))]
        assert loaded, "the server did not load the copy's compiled modules"
        stop = threading.Event()
        errors: list[BaseException] = []

        def traffic() -> None:
            while not stop.is_set():
                try:
                    sqs.send_message(QueueUrl=url, MessageBody="during the reinstall")
                except BaseException as error:  # noqa: BLE001 - reported below
                    errors.append(error)
                    return

        sender = threading.Thread(target=traffic)
        sender.start()
        try:
            for _ in range(3):
                for target, source in built.items():
                    compiled.install_file(str(source), str(target))
        finally:
            stop.set()
            sender.join(timeout=30)
        assert srv.proc.poll() is None, f"the server died: exit {srv.proc.returncode}\n{srv.log_tail()}"
        assert not errors, errors
        sqs.send_message(QueueUrl=url, MessageBody="after the reinstall")
        bodies = {m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]}
        assert bodies <= {"during the reinstall", "after the reinstall"} and bodies
        # the running server still has the old files, replaced under their names, never rewritten in place
        after = _mapped(srv.proc.pid)
        assert all(after.get(path) for path in loaded), after
