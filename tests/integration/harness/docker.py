"""A Docker engine for the container tests: found or started, a base image made, the sqsemu image built.

- :func:`ensure_engine` - a running engine answers ``docker info``. The tests never start one (a test run must not
  leave a system service running that it did not find; ``.ci/run`` starts ``dockerd`` as a machine set-up step).
  Raises :class:`DockerUnavailable` with the reason when none answers.
- :func:`base_image` - ``SQSEMU_DOCKER_BASE`` when set; else ``python:3.11-slim`` when present or pullable; else the
  stand-in ``docker/build-base.sh`` makes from Debian's packages (``sqsemu-base:bookworm``; reused when it exists).
- :func:`build_image` - ``docker build`` of the repository's Dockerfile with BuildKit (the Dockerfile mounts a
  build secret), the host's CA bundle as the ``pip_cert`` secret (for TLS-intercepting proxies). The Dockerfile's
  compile cache (the build cache mount ``sqsemu-mypyc``) is first given this machine's newest compiles (setup.py's
  build cache, which the editable install of these sources filled), so the image reuses the compile of the very
  sources the test run installed instead of compiling them again (a minute of CPU); where none fits (another mypy,
  another Python), the image compiles as a user's build does.
- :func:`docker` - run one ``docker`` command, checked, its output as text.
- :func:`unique_name` - a name for a container, volume, network or compose project that no other run uses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from .setupcache import user_cache

ROOT = Path(__file__).resolve().parents[3]
BASE_SCRIPT = ROOT / "docker" / "build-base.sh"
OFFICIAL_BASE = "python:3.11-slim"
LOCAL_BASE = "sqsemu-base:bookworm"
BUILD_TIMEOUT_S = 900
SEEDED_COMPILES = 3
"""How many of the host's newest compiles the image build's compile cache is given."""
# Not built with --no-cache (BuildKit then gives the step a cache mount of its own, thrown away after): SEEDED_AT,
# new at every build, makes the step run each time instead.
_SEED_DOCKERFILE = """ARG BASE_IMAGE
FROM ${BASE_IMAGE}
ARG SEEDED_AT
RUN --mount=type=cache,id=sqsemu-mypyc,target=/root/.cache/sqsemu --mount=type=bind,source=mypyc,target=/seed \\
    echo "seeded at ${SEEDED_AT}" && mkdir -p /root/.cache/sqsemu/mypyc && cp -rn /seed/. /root/.cache/sqsemu/mypyc/
"""


class DockerUnavailable(Exception):
    """No Docker engine can be had here; the message says why."""


def docker(*args: str, timeout: float = 120, check: bool = True, env: dict[str, str] | None = None) -> str:
    """``docker <args>``; its standard output (stripped). ``check``: a non-zero status raises AssertionError with
    the command's standard error."""
    result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout.strip()


def _engine_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def ensure_engine() -> str:
    """Make sure a running Docker engine answers; return ``"running"``. Raises :class:`DockerUnavailable`, saying
    how to get one, when none does: the tests never start ``dockerd`` themselves."""
    if shutil.which("docker") is None:
        raise DockerUnavailable("no docker command (install docker.io: apt-get install -y docker.io)")
    if _engine_answers():
        return "running"
    hint = "start it (as root: dockerd &, or systemctl start docker)" if shutil.which("dockerd") else "install it"
    raise DockerUnavailable(f"no running Docker engine answers `docker info`: {hint}")


def _image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, timeout=30).returncode == 0


def base_image() -> str:
    """The image the sqsemu image is built on (see the module's docstring)."""
    chosen = os.environ.get("SQSEMU_DOCKER_BASE")
    if chosen:
        return chosen
    if _image_exists(OFFICIAL_BASE):
        return OFFICIAL_BASE
    pulled = subprocess.run(["docker", "pull", OFFICIAL_BASE], capture_output=True, text=True, timeout=300)
    if pulled.returncode == 0:
        return OFFICIAL_BASE
    result = subprocess.run(["bash", str(BASE_SCRIPT)], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    if result.returncode != 0:
        raise AssertionError(
            f"{OFFICIAL_BASE} cannot be pulled ({pulled.stderr.strip()}) and {BASE_SCRIPT.name} failed:\n"
            f"{result.stdout}{result.stderr}"
        )
    return LOCAL_BASE


def _client_major(program: str) -> int:
    out = subprocess.run(
        [program, "version", "--format", "{{.Client.Version}}"], capture_output=True, text=True, timeout=30
    ).stdout
    try:
        return int(out.strip().split(".")[0])
    except ValueError:
        return 0


def _buildkit_command() -> list[str]:
    """A ``docker build`` that uses BuildKit: the CLI's buildx plugin (Docker 23+), or a CLI older than 23, whose
    BuildKit is built in (``DOCKER_BUILDKIT=1``; Debian 12's docker.io 20.10, at /usr/bin/docker)."""
    if subprocess.run(["docker", "buildx", "version"], capture_output=True, timeout=30).returncode == 0:
        return ["docker", "build"]
    for program in dict.fromkeys(p for p in (shutil.which("docker"), "/usr/bin/docker") if p and os.path.exists(p)):
        if 0 < _client_major(program) < 23:
            return [program, "build"]
    raise AssertionError("docker build needs BuildKit: install the buildx plugin (docker-buildx) for this CLI")


def _ca_bundle() -> str | None:
    """The host's CA bundle, given to pip inside the build (a TLS-intercepting proxy's certificate is in it)."""
    candidates = (os.environ.get("PIP_CERT"), os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt")
    for candidate in candidates:
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def _host_compiles() -> list[Path]:
    """The newest complete entries of this machine's build cache (setup.py: ``$SQSEMU_BUILD_CACHE``, else
    ``~/.cache/sqsemu/mypyc``), newest first."""
    chosen = os.environ.get("SQSEMU_BUILD_CACHE", "").strip()
    if chosen.lower() in ("off", "0", "false", "no"):
        return []
    root = Path(chosen) if chosen else user_cache() / "sqsemu" / "mypyc"
    if not root.is_dir():
        return []
    entries = [entry for entry in root.iterdir() if (entry / "MANIFEST").is_file()]
    return sorted(entries, key=lambda entry: entry.stat().st_mtime, reverse=True)[:SEEDED_COMPILES]


def _seed_compile_cache(builder: list[str], base: str) -> None:
    """Copy the host's newest compiles into the Dockerfile's compile cache mount (best effort: a failure only means
    the image compiles its modules itself)."""
    entries = _host_compiles()
    if not entries:
        return
    with tempfile.TemporaryDirectory(prefix="sqsemu-seed-") as context:
        for entry in entries:
            shutil.copytree(entry, Path(context) / "mypyc" / entry.name)
        (Path(context) / "Dockerfile").write_text(_SEED_DOCKERFILE)
        tag = f"sqsemu-compile-seed:{unique_name('seed')}"
        subprocess.run(
            [
                *builder,
                "--build-arg",
                f"BASE_IMAGE={base}",
                "--build-arg",
                f"SEEDED_AT={time.time()}",
                "-t",
                tag,
                context,
            ],
            capture_output=True,
            timeout=300,
            env={**os.environ, "DOCKER_BUILDKIT": "1"},
        )
        subprocess.run(["docker", "image", "rm", "--force", tag], capture_output=True, timeout=60)  # its mount stays


def build_image(tag: str, base: str, build_args: dict[str, str] | None = None) -> float:
    """Build the repository's Dockerfile as ``tag`` on ``base`` (and ``build_args``, e.g. ``{"AWS_CLI": "1"}``);
    return the seconds it took (the compile cache's seeding included)."""
    started = time.monotonic()
    builder = _buildkit_command()
    _seed_compile_cache(builder, base)
    argv = [*builder, "--build-arg", f"BASE_IMAGE={base}", "-t", tag]
    for name, value in (build_args or {}).items():
        argv += ["--build-arg", f"{name}={value}"]
    ca = _ca_bundle()
    if ca:
        argv += ["--secret", f"id=pip_cert,src={ca}"]
    result = subprocess.run(
        [*argv, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        env={**os.environ, "DOCKER_BUILDKIT": "1"},
    )
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    return time.monotonic() - started


def unique_name(prefix: str) -> str:
    """``<prefix>-<12 hex digits>``: Docker object names that no other test run uses."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def compose_command() -> list[str] | None:
    """``["docker", "compose"]`` (the v2 plugin) or ``["docker-compose"]`` (v1, Debian 12's package), whichever
    works; ``None`` when neither is installed."""
    if subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None
