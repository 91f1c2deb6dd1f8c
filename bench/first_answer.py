"""How long the README's Quick start takes: from ``pip install .`` in a fresh clone to the server's first answer.

    python bench/first_answer.py            # the compiled install (the README's command)
    python bench/first_answer.py --pure     # SQSEMU_PURE_PYTHON=1 pip install .
    python bench/first_answer.py --ref 0028112   # another commit of this checkout, to compare
    python bench/first_answer.py --wheel         # pip install of the wheel built from the clone (a release's user)
    python bench/first_answer.py --wheel dist/sqsemu-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl   # a given wheel

Each run clones this checkout's HEAD into a temporary folder, makes a virtual environment there (``python3 -m venv
.venv``, not timed: the README makes it once, before its command), then times ``pip install .`` and ``sqsemu`` until
a ``ListQueues`` call over a real socket is answered 200. pip's download and wheel cache is off (``--no-cache-dir``)
and so is sqsemu's build cache (``SQSEMU_BUILD_CACHE=off``), as on a machine that never installed sqsemu; the
packages still come from the index pip is configured with (a nearby mirror is faster than PyPI over the internet).
Prints one JSON line: ``install_s``, ``start_s`` (the server's start until its first answer), ``first_answer_s``
(their sum) and the ``build`` the server reports (``compiled (mypyc)`` or ``pure Python: ...``).

``--wheel`` times what a user of a published release waits for: ``pip install <wheel>`` into the fresh virtual
environment (the dependencies from the index, no cache, as above), then the server until its first answer. The
wheel is built from the clone first with ``python -m build --wheel`` (not timed: the release workflow builds it),
or given as a path; ``wheel`` in the JSON line names it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=b"{}",
        headers={"X-Amz-Target": "AmazonSQS.ListQueues", "Content-Type": "application/x-amz-json-1.0"},
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _build_wheel(clone: Path, python: str, env: dict[str, str]) -> Path:
    """The wheel of ``clone``, built with ``python -m build --wheel`` in a virtual environment of its own."""
    builder = clone.parent / "builder"
    subprocess.run([python, "-m", "venv", str(builder)], check=True)
    pip = builder / "bin" / "pip"
    subprocess.run([str(pip), "install", "-q", "build"], check=True, env=env)
    out = clone.parent / "wheelhouse"
    built = subprocess.run(
        [str(builder / "bin" / "python"), "-m", "build", "--wheel", "--outdir", str(out), str(clone)],
        env=env,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        raise SystemExit(f"python -m build failed:\n{built.stdout[-2000:]}{built.stderr[-2000:]}")
    (wheel,) = out.glob("sqsemu-*.whl")
    return wheel


def measure(pure: bool, python: str, ref: str = "HEAD", wheel: str | None = None) -> dict[str, object]:
    """One run (see the module docstring): ``{"install_s", "start_s", "first_answer_s", "build"}``, and ``wheel``
    when ``wheel`` is given (``"build"``: the clone's, built first; else a path)."""
    with tempfile.TemporaryDirectory(prefix="sqsemu-first-answer-") as tmp:
        clone = Path(tmp) / "sqsemu"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", ref], cwd=clone, check=True)
        subprocess.run([python, "-m", "venv", ".venv"], cwd=clone, check=True)
        env = {**os.environ, "SQSEMU_BUILD_CACHE": "off", "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        env.pop("PYTHONPATH", None)
        env.pop("SQSEMU_PURE_PYTHON", None)
        if pure:
            env["SQSEMU_PURE_PYTHON"] = "1"
        bin_dir = clone / ".venv" / "bin"
        target = "."
        if wheel is not None:
            target = str(_build_wheel(clone, python, env) if wheel == "build" else Path(wheel).resolve())
        started = time.monotonic()
        install = subprocess.run(
            [str(bin_dir / "pip"), "install", "-q", target], cwd=clone, env=env, capture_output=True, text=True
        )
        installed = time.monotonic()
        if install.returncode != 0:
            raise SystemExit(f"pip install failed:\n{install.stdout[-2000:]}{install.stderr[-2000:]}")
        port = _free_port()
        server = subprocess.Popen(
            [str(bin_dir / "sqsemu"), "--port", str(port), "--log-level", "warning"],
            cwd=clone,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while not _answers(port):
                if server.poll() is not None:
                    raise SystemExit(f"sqsemu exited with {server.returncode} before answering")
                time.sleep(0.02)
            answered = time.monotonic()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                build = json.loads(response.read())["build"]
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "ref": ref,
        "pure": pure,
        **({"wheel": Path(target).name} if wheel is not None else {}),
        "install_s": round(installed - started, 1),
        "start_s": round(answered - installed, 2),
        "first_answer_s": round(answered - started, 1),
        "build": build,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pure", action="store_true", help="install with SQSEMU_PURE_PYTHON=1 (no compile)")
    parser.add_argument("--python", default="python3", help="the Python that makes the virtual environment")
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default: HEAD), to compare builds")
    parser.add_argument(
        "--wheel",
        nargs="?",
        const="build",
        help="install a wheel instead of the clone: the clone's, built first (untimed), or the one given",
    )
    args = parser.parse_args()
    print(json.dumps(measure(args.pure, args.python, args.ref, args.wheel)), flush=True)


if __name__ == "__main__":
    main()
