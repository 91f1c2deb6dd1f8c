"""LocalStack's init hooks for the READY stage, and the ``Ready.`` line (``--compat localstack``).

Facts from LocalStack's documentation ("Initialization Hooks"): scripts live in ``/etc/localstack/init/<stage>.d``;
``ready.d`` runs once the services are ready; shell scripts must be executable and Python files are run; scripts
run in name order, files of a folder before its subfolders (alphabetically, depth first); a script that fails
(non-zero exit status) is in state ``ERROR`` and the others still run; states are ``UNKNOWN``, ``RUNNING``,
``SUCCESSFUL``, ``ERROR``. The container prints ``Ready.`` once started (Testcontainers' LocalStack modules and
compose scripts wait for that line).

sqsemu runs only ``ready.d`` (``--init-dir``, default ``/etc/localstack/init``): executable files, and ``.py`` files
with this Python; a non-executable ``.sh`` file is an ``ERROR`` (logged). Each script gets the server's environment
plus ``AWS_ENDPOINT_URL`` (this server), and ``AWS_DEFAULT_REGION``, ``AWS_ACCESS_KEY_ID`` and
``AWS_SECRET_ACCESS_KEY`` (the server's region, ``test``/``test``) where they are not set, so the SDKs and AWS CLI
v2 reach sqsemu (AWS CLI v1 reads no endpoint variable). The scripts' ``PATH`` starts with a private temporary
folder holding ``awslocal`` (:func:`write_awslocal`; removed once the scripts have run), as LocalStack's scripts
call it: it runs the AWS CLI found on ``PATH`` (``aws``, v1 or v2) with ``--endpoint-url`` of this server and every
argument passed on, and without an ``aws`` it fails (exit status 127) saying what to install. Each script's output
is logged line by line. The scripts run one after the other in a background thread (they call the server, which
keeps serving). ``Ready.`` is printed on standard output once they have all finished (at once without scripts), so
whatever waits for the line finds the queues they created.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqsemu.config import Config

if TYPE_CHECKING:
    from sqsemu.engine.broker import Broker

__all__ = [
    "AWSLOCAL",
    "DEFAULT_INIT_DIR",
    "READY_LINE",
    "STAGES",
    "InitScripts",
    "init_scripts_for",
    "start_ready_stage",
    "write_awslocal",
]

logger = logging.getLogger("sqsemu.compat")

DEFAULT_INIT_DIR = "/etc/localstack/init"
READY_LINE = "Ready."
STAGES = ("BOOT", "START", "READY", "SHUTDOWN")
AWSLOCAL = "awslocal"

# The launcher: POSIX sh, so that it runs wherever the scripts' /bin/sh does (the image has no bash). The endpoint
# goes first, as a global option, which AWS CLI v1 and v2 both take before the command; a later --endpoint-url of
# the caller's wins (the last one given is used).
_AWSLOCAL_SCRIPT = """\
#!/bin/sh
# awslocal, written by sqsemu for its ready.d init scripts: runs the AWS CLI (aws, v1 or v2) found on PATH with
# --endpoint-url of the sqsemu server that runs the scripts, and every argument given here passed on.
endpoint={quoted}
aws_cli=$(command -v aws 2>/dev/null) || aws_cli=
if [ -z "$aws_cli" ] && [ -x {beside} ]; then
    aws_cli={beside}
fi
if [ -z "$aws_cli" ]; then
    echo "awslocal: the AWS CLI (aws) is not on PATH; awslocal runs 'aws --endpoint-url $endpoint ...'." >&2
    echo "awslocal: install it where sqsemu's PATH finds it: 'pip install awscli' (AWS CLI v1) or AWS CLI v2\\
 (https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html); sqsemu's Docker image has it\\
 when built with --build-arg AWS_CLI=1." >&2
    exit 127
fi
exec "$aws_cli" --endpoint-url "$endpoint" "$@"
"""


@dataclass
class Script:
    """One init script: its stage, path and state (``UNKNOWN``, ``RUNNING``, ``SUCCESSFUL``, ``ERROR``)."""

    stage: str
    path: Path
    state: str = "UNKNOWN"


class InitScripts:
    """The init scripts of one server and the stages completed (``/_localstack/init`` reads it)."""

    def __init__(self) -> None:
        self.scripts: list[Script] = []
        self.completed = {"BOOT": True, "START": True, "READY": False, "SHUTDOWN": False}
        self._lock = threading.Lock()

    def document(self) -> dict[str, Any]:
        """``{"completed": {stage: bool}, "scripts": [{"stage", "name", "state"}]}``."""
        with self._lock:
            return {"completed": dict(self.completed), "scripts": [self._view(s) for s in self.scripts]}

    def stage_document(self, stage: str) -> dict[str, Any]:
        """``{"completed": bool, "scripts": [...]}`` of one stage (upper case)."""
        with self._lock:
            scripts = [self._view(s) for s in self.scripts if s.stage == stage]
            return {"completed": self.completed[stage], "scripts": scripts}

    @staticmethod
    def _view(script: Script) -> dict[str, str]:
        return {"stage": script.stage, "name": script.path.name, "state": script.state}

    def discover(self, folder: Path) -> None:
        """Find the scripts of ``folder`` (``.../ready.d``): files in name order, then subfolders, depth first."""
        with self._lock:
            self.scripts = [Script("READY", path) for path in _ordered(folder)]

    def set_state(self, script: Script, state: str) -> None:
        with self._lock:
            script.state = state

    def run_all(self, env: dict[str, str]) -> None:
        """Run every discovered script in order (each failure is logged and leaves the others running), then mark
        READY completed."""
        for script in list(self.scripts):
            self.set_state(script, "RUNNING")
            self.set_state(script, "SUCCESSFUL" if _run(script.path, env) else "ERROR")
        self.mark_ready()

    def mark_ready(self) -> None:
        """The READY stage is complete."""
        with self._lock:
            self.completed["READY"] = True


def _ordered(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    entries = sorted(folder.iterdir(), key=lambda p: p.name)
    files = [p for p in entries if p.is_file()]
    folders = [p for p in entries if p.is_dir()]
    return files + [path for sub in folders for path in _ordered(sub)]


def _run(path: Path, env: dict[str, str]) -> bool:
    """Run one script, log its output; True when it exited 0."""
    if path.suffix == ".py":
        argv = [sys.executable, str(path)]
    elif os.access(path, os.X_OK):
        argv = [str(path)]
    else:
        logger.error("init script %s is not executable (chmod +x it): not run", path)
        return False
    logger.info("init script %s: running", path)
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, errors="replace", check=False)
    except OSError as exc:
        logger.error("init script %s could not be started: %s", path, exc)
        return False
    for line in (done.stdout + done.stderr).splitlines():
        logger.info("init script %s: %s", path.name, line)
    if done.returncode != 0:
        logger.error("init script %s failed with exit status %d", path, done.returncode)
        return False
    return True


def write_awslocal(folder: Path, endpoint_url: str, beside: str | None = None) -> Path:
    """Write the ``awslocal`` launcher (executable) into ``folder``, pointed at ``endpoint_url``; its path.

    It runs ``aws --endpoint-url <endpoint_url> <its arguments>`` with the ``aws`` found on ``PATH``, else ``beside``
    (default: the ``aws`` beside this Python, so that a virtual environment's AWS CLI is found when the server runs
    from it without being activated), and fails with exit status 127 and a message naming what to install where
    there is none."""
    if beside is None:
        beside = os.path.join(os.path.dirname(sys.executable), "aws")
    path = folder / AWSLOCAL
    text = _AWSLOCAL_SCRIPT.format(quoted=shlex.quote(endpoint_url), beside=shlex.quote(beside))
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def _with_awslocal(env: dict[str, str]) -> Path | None:
    """Make a private folder with ``awslocal`` in it, put it first on ``env``'s ``PATH``; the folder, or ``None``
    where it cannot be made (logged: the scripts then run without ``awslocal``)."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="sqsemu-awslocal-"))
    except OSError as exc:
        logger.warning("init scripts: no temporary folder for awslocal (%s): the scripts run without it", exc)
        return None
    try:
        write_awslocal(folder, env["AWS_ENDPOINT_URL"])
    except OSError as exc:
        logger.warning("init scripts: could not write awslocal (%s): the scripts run without it", exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None
    env["PATH"] = os.pathsep.join([str(folder), env.get("PATH") or os.defpath])
    return folder


def init_scripts_for(broker: Broker) -> InitScripts:
    """The init scripts of the server that owns ``broker`` (one per server, made at first use)."""
    scripts = broker.layers.get("init scripts")
    if scripts is None:
        scripts = broker.layers["init scripts"] = InitScripts()
    assert isinstance(scripts, InitScripts)
    return scripts


def script_environment(config: Config, port: int) -> dict[str, str]:
    """The scripts' environment: the server's, with ``AWS_ENDPOINT_URL`` and defaults for the region and keys."""
    host = config.host
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    env = dict(os.environ)
    env["AWS_ENDPOINT_URL"] = f"http://{host}:{port}"
    env.setdefault("AWS_DEFAULT_REGION", config.region)
    env.setdefault("AWS_ACCESS_KEY_ID", "test")
    env.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    return env


def _say_ready() -> None:
    sys.stdout.write(READY_LINE + "\n")
    sys.stdout.flush()


def start_ready_stage(config: Config, broker: Broker, port: int) -> threading.Thread | None:
    """The server listens on ``port``: run the ``ready.d`` scripts in a background thread and print ``Ready.``
    after them (at once, and no thread, when there are none)."""
    scripts = init_scripts_for(broker)
    folder = Path(config.init_dir or DEFAULT_INIT_DIR) / "ready.d"
    scripts.discover(folder)
    if not scripts.scripts:
        scripts.mark_ready()
        _say_ready()
        return None
    env = script_environment(config, port)
    awslocal_folder = _with_awslocal(env)

    def work() -> None:
        try:
            scripts.run_all(env)
        except Exception:  # supervised: logged once, and the server still says it is ready
            logger.exception("the ready.d init scripts stopped")
            scripts.mark_ready()
        finally:
            if awslocal_folder is not None:
                shutil.rmtree(awslocal_folder, ignore_errors=True)
        _say_ready()

    thread = threading.Thread(target=work, name="sqsemu-init-ready", daemon=True)
    thread.start()
    return thread
