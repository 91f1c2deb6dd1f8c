"""The AWS Query client: boto3 1.28.64 / botocore 1.31.64 in its own virtual environment, over JSON lines.

botocore 1.31.64 is the last release whose SQS model speaks AWS Query (form-encoded requests, XML answers);
the test process itself has a current boto3 (AWS JSON 1.0). The two cannot share an interpreter, so the old
one runs in a virtual environment of its own, ``boto3-1.28.64-...`` in the kept test set-up
(harness/setupcache.py: ``~/.cache/sqsemu/tests/venvs``; created on first use, reused while valid, under a file
lock so parallel runs are safe) and :class:`LegacySQSClient` forwards each call to a long-lived worker process there.
"""

from __future__ import annotations

import base64
import fcntl
import itertools
import json
import os
import subprocess
import sys
import threading
import time
import venv
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import botocore.exceptions
from botocore.exceptions import ClientError

from sqsemu.testing.boto import new_client

from .setupcache import cache_root, digest

LEGACY_BOTO3 = "1.28.64"
LEGACY_BOTOCORE = "1.31.64"
# Kept between runs and checkouts (harness/setupcache.py), one per interpreter it was made from.
VENVS_DIR = cache_root() / "venvs"
LEGACY_VENV = VENVS_DIR / (
    f"boto3-{LEGACY_BOTO3}-py{sys.version_info[0]}{sys.version_info[1]}-"
    + digest(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
)
WORKER_SCRIPT = Path(__file__).with_name("legacy_worker.py")
_READY_MARKER = ".sqsemu-ready"
_CALL_TIMEOUT_S = 120.0

_venv_lock = threading.Lock()
_live_workers: list[_Worker] = []
# Workers whose client was closed, kept for the next LegacySQSClient of this process: starting one costs a quarter
# of a second of CPU (boto3's import, the SQS model parsed), a new client in a kept one a few milliseconds.
_idle_workers: list[_Worker] = []
_idle_lock = threading.Lock()
_MAX_IDLE_WORKERS = 4
_venv_python: Path | None = None
# How long the last creation of the legacy venv took (None when it was reused); printed by the fixtures.
venv_setup_seconds: float | None = None


def _python_in(env_dir: Path) -> Path:
    return env_dir / "bin" / "python"


def _is_ready(env_dir: Path) -> bool:
    marker = env_dir / _READY_MARKER
    python = _python_in(env_dir)
    if not marker.is_file() or not python.exists():
        return False
    if marker.read_text().strip() != f"boto3=={LEGACY_BOTO3} botocore=={LEGACY_BOTOCORE}":
        return False
    probe = subprocess.run(
        [str(python), "-I", "-c", "import boto3, botocore; print(boto3.__version__, botocore.__version__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return probe.returncode == 0 and probe.stdout.split() == [LEGACY_BOTO3, LEGACY_BOTOCORE]


def ensure_legacy_venv() -> Path:
    """Create (once) the legacy boto3 venv and return its python. Safe across threads and processes.

    ``SQSEMU_LEGACY_PYTHON`` may name an existing interpreter that already has boto3 1.28.64 instead.
    """
    global _venv_python, venv_setup_seconds
    override = os.environ.get("SQSEMU_LEGACY_PYTHON")
    if override:
        return Path(override)
    with _venv_lock:
        if _venv_python is not None:
            return _venv_python
        VENVS_DIR.mkdir(parents=True, exist_ok=True)
        with open(VENVS_DIR / f"boto3-{LEGACY_BOTO3}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not _is_ready(LEGACY_VENV):
                    started = time.monotonic()
                    venv.EnvBuilder(clear=True, with_pip=True).create(LEGACY_VENV)
                    subprocess.run(
                        [
                            str(_python_in(LEGACY_VENV)),
                            "-m",
                            "pip",
                            "install",
                            "--quiet",
                            "--disable-pip-version-check",
                            f"boto3=={LEGACY_BOTO3}",
                            f"botocore=={LEGACY_BOTOCORE}",
                        ],
                        check=True,
                        timeout=600,
                    )
                    (LEGACY_VENV / _READY_MARKER).write_text(f"boto3=={LEGACY_BOTO3} botocore=={LEGACY_BOTOCORE}\n")
                    venv_setup_seconds = time.monotonic() - started
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        _venv_python = _python_in(LEGACY_VENV)
        return _venv_python


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"__b64__": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__b64__"}:
            return base64.b64decode(value["__b64__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


class LegacyWorkerError(RuntimeError):
    """A non-ClientError exception raised inside the legacy worker (e.g. a connection or read timeout)."""

    def __init__(self, class_name: str, message: str) -> None:
        super().__init__(f"{class_name}: {message}")
        self.class_name = class_name


class _Worker:
    """One worker process and the thread that matches its answers to the calls waiting for them."""

    def __init__(self, python: Path, client_args: dict[str, Any]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BOTO", "PYTHON"))}
        env["AWS_CONFIG_FILE"] = os.devnull
        env["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
        self.proc = subprocess.Popen(
            [str(python), "-I", str(WORKER_SCRIPT), json.dumps(client_args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # the worker's tracebacks (if any) go straight to the test output
            text=True,
            bufsize=1,
            env=env,
        )
        assert self.proc.stdout is not None
        hello_line = self.proc.stdout.readline()
        if not hello_line:
            raise RuntimeError(f"legacy boto3 worker exited at start-up (status {self.proc.wait()})")
        self.hello: dict[str, Any] = json.loads(hello_line)["hello"]
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="legacy-boto3-reader", daemon=True)
        self._reader.start()
        _live_workers.append(self)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self._lock:
                future = self._pending.pop(message["id"], None)
            if future is not None:
                future.set_result(message)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(RuntimeError("legacy boto3 worker exited"))

    def call(self, op: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            if self.proc.poll() is not None:
                raise RuntimeError(f"legacy boto3 worker has exited (status {self.proc.returncode})")
            rid = next(self._ids)
            self._pending[rid] = future
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"id": rid, "op": op, "kwargs": _encode(kwargs)}) + "\n")
            self.proc.stdin.flush()
        return future.result(timeout=_CALL_TIMEOUT_S)

    def configure(self, client_args: dict[str, Any]) -> dict[str, Any]:
        """Give this worker a new client made with ``client_args``; returns its hello."""
        answer = self.call("__configure__", client_args)
        if "ok" not in answer:
            raise RuntimeError(f"legacy boto3 worker could not make a client: {answer}")
        self.hello = answer["ok"]
        return self.hello

    def release(self) -> None:
        """Close this worker's client (its connections with it) and keep the worker for the next client; a worker
        with calls still running (a test that left a long poll behind) is stopped at once, one that fails to
        release is stopped."""
        with self._lock:
            busy = bool(self._pending)
        if busy:  # the calls left running are the test's to abandon: the worker goes at once
            self.close(grace_s=0)
            return
        try:
            if self.proc.poll() is not None or "ok" not in self.call("__release__", {}):
                raise RuntimeError("not reusable")
        except Exception:  # noqa: BLE001 - any failure: the worker is not kept
            self.close()
            return
        with _idle_lock:
            if len(_idle_workers) < _MAX_IDLE_WORKERS:
                _idle_workers.append(self)
                return
        self.close()

    def close(self, grace_s: float = 10) -> None:
        """Stop the worker: its calls running get ``grace_s`` seconds to end (0: stopped at once, as a client
        process that dies; its connections close with it)."""
        with _idle_lock:
            if self in _idle_workers:
                _idle_workers.remove(self)
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        if self in _live_workers:
            _live_workers.remove(self)


def _kept_worker(client_args: dict[str, Any]) -> _Worker | None:
    """A kept worker given a client made with ``client_args``, or None when none is kept (or none could be)."""
    while True:
        with _idle_lock:
            if not _idle_workers:
                return None
            worker = _idle_workers.pop()
        try:
            worker.configure(client_args)
            return worker
        except Exception:  # noqa: BLE001 - a kept worker that fails is stopped; the next one is tried
            worker.close()


def close_all_workers() -> None:
    """Stop every legacy worker still running (called when the test session ends)."""
    for worker in list(_live_workers):
        worker.close()


class LegacySQSClient:
    """Looks like a boto3 SQS client; every call runs in boto3 1.28.64 (AWS Query) in the worker process.

    ``client.send_message(QueueUrl=..., MessageBody=...)`` returns the dict that boto3 returns (with
    ``ResponseMetadata``); a service error raises, in the calling process, the same exception class a current
    boto3 client would raise for that error shape (``client.exceptions.QueueDoesNotExist``...), which is a
    ``botocore.exceptions.ClientError`` with ``.response`` and ``.operation_name`` exactly as the old boto3
    gave them. ``client.meta.protocol`` and ``client.meta.service_model.protocol`` are ``"query"``.
    """

    def __init__(
        self,
        endpoint_url: str,
        *,
        region_name: str = "us-east-1",
        aws_access_key_id: str = "test",
        aws_secret_access_key: str = "test",
        read_timeout: float = 60,
        connect_timeout: float = 5,
        verify: str | None = None,
    ) -> None:
        python = ensure_legacy_venv()
        client_args = {
            "endpoint_url": endpoint_url,
            "region_name": region_name,
            "aws_access_key_id": aws_access_key_id,
            "aws_secret_access_key": aws_secret_access_key,
            "read_timeout": read_timeout,
            "connect_timeout": connect_timeout,
            "verify": verify,  # the CA bundle of an https:// endpoint (None: the system's)
        }
        self._worker = _kept_worker(client_args) or _Worker(python, client_args)
        hello = self._worker.hello
        if (hello["boto3"], hello["botocore"], hello["protocol"]) != (LEGACY_BOTO3, LEGACY_BOTOCORE, "query"):
            self._worker.close()
            raise RuntimeError(f"legacy worker is not boto3 {LEGACY_BOTO3} speaking query: {hello}")
        # A current client (never used to send) provides the modelled exception classes, so that
        # ``pytest.raises(client.exceptions.QueueDoesNotExist)`` works the same for both protocols.
        self._shape_client = new_client(
            "sqs",
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
        )
        self.exceptions = self._shape_client.exceptions
        self.meta = SimpleNamespace(
            protocol="query",
            region_name=region_name,
            endpoint_url=endpoint_url,
            service_model=SimpleNamespace(protocol="query", service_name="sqs"),
            versions={"boto3": hello["boto3"], "botocore": hello["botocore"]},
        )

    def _call(self, op: str, kwargs: dict[str, Any]) -> Any:
        answer = self._worker.call(op, kwargs)
        if "ok" in answer:
            return _decode(answer["ok"])
        if "error" in answer:
            error = answer["error"]
            response = _decode(error["response"])
            cls = getattr(self.exceptions, error["class"], None)
            if not (isinstance(cls, type) and issubclass(cls, ClientError)):
                cls = ClientError
            raise cls(response, error["operation"])
        exc = answer["exception"]
        if exc["class"] == "ParamValidationError":
            raise botocore.exceptions.ParamValidationError(report=exc["message"])
        raise LegacyWorkerError(exc["class"], exc["message"])

    def last_request(self) -> dict[str, Any]:
        """The last HTTP request this client sent: ``{"method", "url", "headers": {...}, "body": str}``."""
        return dict(self._call("__last_request__", {}))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if not hasattr(self._shape_client, name):
            raise AttributeError(f"'LegacySQSClient' object has no attribute {name!r}")

        def operation(**kwargs: Any) -> Any:
            return self._call(name, kwargs)

        operation.__name__ = name
        return operation

    def close(self) -> None:
        """Close the client: its connections close, and its worker process is kept for the next client of this
        process (or stopped, see ``_Worker.release``)."""
        self._worker.release()
        self._shape_client.close()

    def __repr__(self) -> str:
        return f"<LegacySQSClient query boto3=={LEGACY_BOTO3} endpoint={self.meta.endpoint_url}>"


if __name__ == "__main__":  # pragma: no cover - manual check: python legacy.py
    print(ensure_legacy_venv(), file=sys.stderr)
