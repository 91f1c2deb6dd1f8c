"""LocalStack's init hooks for the READY stage, and the ``Ready.`` line (``--compat localstack``).

Facts from LocalStack's documentation ("Initialization Hooks"): scripts live in ``/etc/localstack/init/<stage>.d``
(an init folder, or a stage folder, may be mounted there); ``ready.d`` runs once the services are ready; the known
script extensions are ``.sh`` and ``.py``, shell scripts must be executable; scripts run in name order, files of a
folder before its subfolders (alphabetically, depth first); a script that fails (non-zero exit status) is in state
``ERROR`` and the others still run; states are ``UNKNOWN``, ``RUNNING``, ``SUCCESSFUL``, ``ERROR``. The container
prints ``Ready.`` once started (Testcontainers' LocalStack modules and compose scripts wait for that line).

sqsemu runs only ``ready.d`` (:func:`ready_folder`): ``<--init-dir>/ready.d`` (default ``/etc/localstack/init``), or
the ``--init-dir`` folder itself when it is named ``ready.d`` and holds no ``ready.d`` of its own (a stage folder
given directly, as LocalStack lets one mount it). An ``--init-dir`` given that does not exist, is not a folder, or
holds scripts but no ``ready.d`` is refused at start (:func:`init_dir_problem`; the command line exits 2). Scripts
are ``.py`` files (run with this Python) and executable files; a non-executable ``.sh`` file is an ``ERROR``
(logged); any other file (``README.md``, ``.gitkeep``) is no script: it is left out, named in one INFO line.

Each script gets the server's environment plus ``AWS_ENDPOINT_URL`` (this server), and ``AWS_DEFAULT_REGION``,
``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` (the server's region, ``test``/``test``) where they are not set,
so the SDKs and AWS CLI v2 reach sqsemu (AWS CLI v1 reads no endpoint variable). The scripts' ``PATH`` starts with a
private temporary folder holding ``awslocal`` (:func:`write_awslocal`; removed once the scripts have run), as
LocalStack's scripts call it: it runs the AWS CLI found on ``PATH`` (``aws``, v1 or v2) with ``--endpoint-url`` of
this server and every argument passed on, and without an ``aws`` it fails (exit status 127) saying what to install.

What is logged (``sqsemu.compat``): one line saying which folder runs and how many scripts it holds (or that there
are none, and why); each script's output, line by line (INFO); one line per script once it has finished: ``init
script <name>: SUCCESSFUL (exit status 0, 0.42 s)`` at INFO, or ``init script <name> failed with exit status 3 after
0.01 s (ERROR); last output: <its last lines>`` at ERROR; then a summary. The scripts run one after the other in a
background thread (they call the server, which keeps serving). ``Ready.`` is printed on standard output once they
have all finished (at once without scripts), so whatever waits for the line finds the queues they created.
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
import time
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
    "init_dir_problem",
    "init_scripts_for",
    "ready_folder",
    "start_ready_stage",
    "write_awslocal",
]

logger = logging.getLogger("sqsemu.compat")

DEFAULT_INIT_DIR = "/etc/localstack/init"
READY_LINE = "Ready."
STAGES = ("BOOT", "START", "READY", "SHUTDOWN")
AWSLOCAL = "awslocal"
READY_FOLDER = "ready.d"
OTHER_STAGE_FOLDERS = ("boot.d", "start.d", "shutdown.d")
"""LocalStack's stage folders that sqsemu does not run (their scripts are counted in a warning)."""
SCRIPT_SUFFIXES = (".sh", ".py")
LAST_OUTPUT_LINES = 5
"""How many of a failed script's last output lines its ERROR line repeats (each cut to ``LAST_LINE_CHARS``)."""
LAST_LINE_CHARS = 300
LISTED_NAMES = 10
"""How many file names one line lists before ``and N more``."""

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
    """One init script: its stage, path, stage folder and state (``UNKNOWN``, ``RUNNING``, ``SUCCESSFUL``,
    ``ERROR``)."""

    stage: str
    path: Path
    folder: Path  # the stage folder it was found in (its name in the log is relative to it)
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

    def discover(self, folder: Path) -> list[Path]:
        """Find the scripts of ``folder`` (``.../ready.d``): files in name order, then subfolders, depth first; the
        files that are no script (:func:`is_script`) are left out and returned."""
        found = _ordered(folder)
        with self._lock:
            self.scripts = [Script("READY", path, folder) for path in found if is_script(path)]
        return [path for path in found if not is_script(path)]

    def set_state(self, script: Script, state: str) -> None:
        with self._lock:
            script.state = state

    def run_all(self, env: dict[str, str]) -> None:
        """Run every discovered script in order (each failure is logged and leaves the others running), log how
        many ended in each state, then mark READY completed."""
        for script in list(self.scripts):
            self.set_state(script, "RUNNING")
            self.set_state(script, "SUCCESSFUL" if _run(script, env) else "ERROR")
        with self._lock:
            states = [script.state for script in self.scripts]
        failed = states.count("ERROR")
        summary = f"init scripts: {len(states)} run, {states.count('SUCCESSFUL')} SUCCESSFUL, {failed} ERROR"
        (logger.warning if failed else logger.info)("%s", summary)
        self.mark_ready()

    def mark_ready(self) -> None:
        """The READY stage is complete."""
        with self._lock:
            self.completed["READY"] = True


def is_script(path: Path) -> bool:
    """Whether a file of ``ready.d`` is an init script: a ``.sh`` or ``.py`` file (LocalStack's known extensions),
    or an executable file. Anything else (``README.md``, ``.gitkeep``) is left out, not an ``ERROR``."""
    return path.suffix in SCRIPT_SUFFIXES or os.access(path, os.X_OK)


def _ordered(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    entries = sorted(folder.iterdir(), key=lambda p: p.name)
    files = [p for p in entries if p.is_file()]
    folders = [p for p in entries if p.is_dir()]
    return files + [path for sub in folders for path in _ordered(sub)]


def _names(paths: list[Path], folder: Path) -> str:
    """``a.sh, sub/b.py and 3 more``: at most ``LISTED_NAMES`` paths, relative to ``folder``."""
    names = [_relative(path, folder) for path in paths[:LISTED_NAMES]]
    more = len(paths) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def _relative(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def ready_folder(init_dir: str) -> tuple[Path, bool]:
    """``(the folder whose scripts run, whether it is the --init-dir itself)``: ``<init_dir>/ready.d``, or
    ``init_dir`` itself when it is named ``ready.d`` and holds no ``ready.d`` of its own (a stage folder given
    directly). ``init_dir`` empty: the default, ``/etc/localstack/init``."""
    root = Path(init_dir or DEFAULT_INIT_DIR)
    if root.name == READY_FOLDER and not (root / READY_FOLDER).is_dir():
        return root, True
    return root / READY_FOLDER, False


def _loose_scripts(root: Path) -> list[Path]:
    """The scripts lying directly in an init folder (not in a stage folder): LocalStack runs none of them."""
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [path for path in entries if path.is_file() and is_script(path)]


def init_dir_problem(init_dir: str) -> str | None:
    """Why an ``--init-dir`` that was given cannot be what its user meant, or None: it does not exist, is not a
    folder, or holds scripts but neither a ``ready.d`` folder nor the name ``ready.d`` (they would never run). The
    command line refuses it (exit status 2), as other bad options."""
    root = Path(init_dir)
    if not root.exists():
        return f"{init_dir!r} does not exist: give the folder that holds ready.d (LocalStack's /etc/localstack/init)"
    if not root.is_dir():
        return f"{init_dir!r} is not a folder: give the folder that holds ready.d (LocalStack's /etc/localstack/init)"
    folder, _ = ready_folder(init_dir)
    loose = _loose_scripts(root)
    if not folder.is_dir() and loose:
        return (
            f"{init_dir!r} holds scripts ({_names(loose, root)}) but no ready.d folder: sqsemu runs the scripts of "
            f"{os.path.join(init_dir, READY_FOLDER)} (LocalStack's layout, <init dir>/ready.d/*.sh): move them "
            "there, or give a folder named ready.d"
        )
    return None


def _announce(init_dir: str, folder: Path, itself: bool, scripts: int, skipped: list[Path]) -> None:
    """Say which folder runs and what it holds; warn about what will not run (another stage's folder, scripts
    lying in the init folder itself, a given --init-dir that is gone)."""
    root = Path(init_dir or DEFAULT_INIT_DIR)
    if init_dir and not root.is_dir():
        logger.error("init scripts: --init-dir %r is not a folder (any more): no init scripts run", init_dir)
        return
    if itself:
        logger.info("init scripts: --init-dir %s is a ready.d folder: its scripts run as the READY stage", root)
    for stage in OTHER_STAGE_FOLDERS:
        other = [path for path in _ordered(root / stage) if is_script(path)] if not itself else []
        if other:
            logger.warning(
                "init scripts: %s holds %d script(s) that do not run (sqsemu runs only ready.d): %s",
                root / stage, len(other), _names(other, root / stage),
            )  # fmt: skip
    loose = [] if itself else _loose_scripts(root)
    if loose:
        logger.warning(
            "init scripts: %s holds %d script(s) outside ready.d that do not run (move them into %s): %s",
            root, len(loose), folder, _names(loose, root),
        )  # fmt: skip
    if skipped:
        logger.info(
            "init scripts: not scripts, not run (neither .sh nor .py, nor executable): %s", _names(skipped, folder)
        )
    if scripts:
        logger.info("init scripts: %d in %s, run one after the other in name order", scripts, folder)
    elif folder.is_dir():
        logger.info("init scripts: none in %s", folder)
    else:
        logger.info("init scripts: none (%s does not exist)", folder)


def _last_lines(output: str) -> str:
    """The last ``LAST_OUTPUT_LINES`` non-blank lines of ``output``, each cut to ``LAST_LINE_CHARS``, joined by
    `` | ``; ``(none)`` when there are none."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()][-LAST_OUTPUT_LINES:]
    cut = [line if len(line) <= LAST_LINE_CHARS else line[: LAST_LINE_CHARS - 3] + "..." for line in lines]
    return " | ".join(cut) if cut else "(none)"


def _run(script: Script, env: dict[str, str]) -> bool:
    """Run one script, log its output and one line with its outcome (exit status, duration); True when it exited
    0."""
    path = script.path
    name = _relative(path, script.folder)
    if path.suffix == ".py":
        argv = [sys.executable, str(path)]
    elif os.access(path, os.X_OK):
        argv = [str(path)]
    else:
        logger.error("init script %s is not executable (chmod +x it): not run (ERROR)", name)
        return False
    logger.info("init script %s: running", name)
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", check=False
        )
    except OSError as exc:
        logger.error("init script %s could not be started: %s (ERROR)", name, exc)
        return False
    took = time.monotonic() - started
    for line in done.stdout.splitlines():
        logger.info("init script %s: %s", name, line)
    if done.returncode != 0:
        logger.error(
            "init script %s failed with exit status %d after %.2f s (ERROR); last output: %s",
            name, done.returncode, took, _last_lines(done.stdout),
        )  # fmt: skip
        return False
    logger.info("init script %s: SUCCESSFUL (exit status 0, %.2f s)", name, took)
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
    """The scripts' environment: the server's, with ``AWS_ENDPOINT_URL`` and defaults for the region and keys; with
    ``--tls`` the endpoint is ``https://`` and ``AWS_CA_BUNDLE`` defaults to the local CA's ``ca.pem`` (an
    operator's certificate, ``--tls-cert``, is left to the environment to trust)."""
    host = config.host
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    env = dict(os.environ)
    env["AWS_ENDPOINT_URL"] = f"{'https' if config.tls else 'http'}://{host}:{port}"
    if config.tls and not config.tls_cert:
        from sqsemu.security.localca import CA_FILE
        from sqsemu.security.tls import tls_folder

        env.setdefault("AWS_CA_BUNDLE", str(tls_folder(config).expanduser().resolve() / CA_FILE))
    env.setdefault("AWS_DEFAULT_REGION", config.region)
    env.setdefault("AWS_ACCESS_KEY_ID", "test")
    env.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    return env


def _say_ready() -> None:
    sys.stdout.write(READY_LINE + "\n")
    sys.stdout.flush()


def start_ready_stage(config: Config, broker: Broker, port: int) -> threading.Thread | None:
    """The server listens on ``port``: say which ``ready.d`` folder runs (:func:`ready_folder`), run its scripts in a
    background thread and print ``Ready.`` after them (at once, and no thread, when there are none)."""
    scripts = init_scripts_for(broker)
    folder, itself = ready_folder(config.init_dir)
    skipped = scripts.discover(folder)
    _announce(config.init_dir, folder, itself, len(scripts.scripts), skipped)
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
