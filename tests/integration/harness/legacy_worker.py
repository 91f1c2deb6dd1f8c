"""Runs INSIDE the legacy virtual environment (boto3 1.28.64 / botocore 1.31.64, the AWS Query SQS model).

Standard library + boto3 only; no imports from the project. Protocol, one JSON object per line:

- start-up: the worker prints ``{"hello": {"boto3": ..., "botocore": ..., "protocol": ...}}``.
- request on stdin: ``{"id": n, "op": "send_message", "kwargs": {...}}``; ``op`` is a boto3 method name, or
  ``"__last_request__"`` (the method, URL, headers and body of the last HTTP request the client sent), or
  ``"__configure__"`` (``kwargs``: the client's settings, as on the command line: the current client is closed and
  a new one made; answered with the hello), or ``"__release__"`` (the current client is closed, its connections
  with it; the worker waits to be configured again). A worker is so reused by one client after another: clients
  are made from one boto3 session, which parses the SQS model once.
- answer on stdout: ``{"id": n, "ok": result}``, ``{"id": n, "error": {"response": e.response, "class": name,
  "operation": op}}`` for a ``ClientError``, or ``{"id": n, "exception": {"class": name, "message": str}}``.

Bytes travel as ``{"__b64__": "<base64>"}`` both ways. Requests are served concurrently (one thread each),
as a real boto3 client may be used from several threads at once.
"""

from __future__ import annotations

import base64
import datetime
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError


def encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return {"__b64__": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, datetime.datetime):
        return {"__datetime__": value.isoformat()}
    return value


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__b64__"}:
            return base64.b64decode(value["__b64__"])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def main() -> None:
    session = boto3.session.Session()
    last_request: dict[str, Any] = {}

    def record(request: Any, **_: Any) -> None:
        body = request.body
        if isinstance(body, bytes):
            body = body.decode("utf-8", "replace")
        last_request.clear()
        last_request.update(
            method=request.method,
            url=request.url,
            headers={k: (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()},
            body=body,
        )

    def make_client(args: dict[str, Any]) -> Any:
        made = session.client(
            "sqs",
            endpoint_url=args["endpoint_url"],
            region_name=args["region_name"],
            aws_access_key_id=args["aws_access_key_id"],
            aws_secret_access_key=args["aws_secret_access_key"],
            verify=args.get("verify"),
            config=Config(
                retries={"total_max_attempts": 1, "mode": "standard"},
                connect_timeout=args.get("connect_timeout", 5),
                read_timeout=args.get("read_timeout", 60),
                max_pool_connections=32,
            ),
        )
        made.meta.events.register("before-send.sqs", record)
        return made

    current: dict[str, Any] = {"client": make_client(json.loads(sys.argv[1]))}

    def hello() -> dict[str, Any]:
        return {
            "boto3": boto3.__version__,
            "botocore": botocore.__version__,
            "protocol": current["client"].meta.service_model.protocol,
        }

    def release() -> None:
        old = current.pop("client", None)
        if old is not None:
            old.close()
        last_request.clear()

    write_lock = threading.Lock()

    def reply(message: dict[str, Any]) -> None:
        line = json.dumps(encode(message))
        with write_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def serve(request: dict[str, Any]) -> None:
        rid = request.get("id")
        op = request.get("op", "")
        try:
            if op == "__last_request__":
                reply({"id": rid, "ok": dict(last_request)})
                return
            if op == "__configure__":
                release()
                current["client"] = make_client(request["kwargs"])
                reply({"id": rid, "ok": hello()})
                return
            if op == "__release__":
                release()
                reply({"id": rid, "ok": {}})
                return
            client = current.get("client")
            if client is None:
                raise RuntimeError("the worker has no client: it was released")
            if op.startswith("_") or not hasattr(client, op):
                raise AttributeError(f"SQS client has no operation {op!r}")
            result = getattr(client, op)(**decode(request.get("kwargs") or {}))
            reply({"id": rid, "ok": result})
        except ClientError as exc:
            reply(
                {
                    "id": rid,
                    "error": {
                        "response": exc.response,
                        "class": type(exc).__name__,
                        "operation": exc.operation_name,
                    },
                }
            )
        except Exception as exc:  # noqa: BLE001 - forwarded to the test process
            reply({"id": rid, "exception": {"class": type(exc).__name__, "message": str(exc)}})

    reply({"hello": hello()})
    with ThreadPoolExecutor(max_workers=32) as pool:
        for line in sys.stdin:
            if line.strip():
                pool.submit(serve, json.loads(line))


if __name__ == "__main__":
    main()
