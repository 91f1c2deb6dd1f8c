"""The cost of ``--auth iam``: SendMessage CPU per message, in-process (the ASGI app called directly, as
``bench/inproc.py`` does), with ``--auth none``, ``--auth sigv4`` and ``--auth iam`` (an IAM user whose identity
policy allows ``sqs:SendMessage``, and a 10-statement queue policy: nine statements that do not apply to the call,
with conditions, and one that allows it). The goal (issue 29): ``iam`` at most 1.3x ``sigv4``.

Each request is signed once, by botocore, and replayed (a header signature stays valid for 15 minutes), so the
figures are the server's work only. CPU microseconds per message (``time.process_time``), the best of ``--rounds``
rounds of ``--n`` messages each, the modes interleaved round by round.

    python bench/iam_cost.py [--n 3000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sqsemu.clock import ManualClock
from sqsemu.config import Config, Credential
from sqsemu.engine.broker import Broker
from sqsemu.http.app import SQSApp

ACCOUNT = "111111111111"
KEY, SECRET = "AKIDBENCHUSER", "bench-secret"
QUEUE = "bench"
ARN = f"arn:aws:sqs:us-east-1:{ACCOUNT}:{QUEUE}"
URL = f"http://localhost:9324/{ACCOUNT}/{QUEUE}"

IDENTITY_POLICY = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": ARN}]}
)


def queue_policy() -> str:
    """Ten statements: nine that do not apply to the user's SendMessage (other principals, actions, conditions on
    the source IP, the time, TLS), and one that allows it (last, so every statement is looked at)."""
    others: list[dict[str, Any]] = []
    for n in range(9):
        others.append(
            {
                "Sid": f"other-{n}",
                "Effect": "Deny" if n % 3 == 0 else "Allow",
                "Principal": {"AWS": f"arn:aws:iam::22222222222{n}:role/r{n}"},
                "Action": ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:Purge*"],
                "Resource": ARN,
                "Condition": {
                    "IpAddress": {"aws:SourceIp": "10.0.0.0/8"},
                    "DateLessThan": {"aws:CurrentTime": "2100-01-01T00:00:00Z"},
                },
            }
        )
    allow = {
        "Sid": "user-sends",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/bench"},
        "Action": "sqs:SendMessage",
        "Resource": ARN,
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [*others, allow]})


def signed_request() -> tuple[dict[str, Any], bytes]:
    body = json.dumps({"QueueUrl": URL, "MessageBody": "hello"}).encode()
    request = AWSRequest(
        method="POST",
        url="http://localhost:9324/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"},
    )
    SigV4Auth(Credentials(KEY, SECRET), "sqs", "us-east-1").add_auth(request)
    headers = [(b"host", b"localhost:9324")]
    headers += [(k.lower().encode(), str(v).encode()) for k, v in request.headers.items()]
    headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "headers": headers,
        "server": ("127.0.0.1", 9324),
        "client": ("127.0.0.1", 50000),
    }
    return scope, body


def make_app(auth: str) -> SQSApp:
    clock = ManualClock()
    broker = Broker(clock)
    credential = Credential(KEY, SECRET, ACCOUNT, f"arn:aws:iam::{ACCOUNT}:user/bench", (IDENTITY_POLICY,))
    if auth != "iam":
        credential = Credential(KEY, SECRET, ACCOUNT)
    config = Config(auth=auth, account_id=ACCOUNT, credentials=(credential,), metrics=False)
    app = SQSApp(config, broker, clock)
    from sqsemu.engine.broker import Namespace

    broker.create_queue(Namespace(ACCOUNT, "us-east-1"), QUEUE, {"Policy": queue_policy()} if auth == "iam" else {}, {})
    return app


async def run(app: SQSApp, scope: dict[str, Any], body: bytes, n: int) -> float:
    headers = dict(scope["headers"])

    async def read() -> bytes:
        return body

    def never() -> asyncio.Future[None]:
        return asyncio.get_running_loop().create_future()

    answer = await app.answer(scope, headers.get, read, never)
    assert answer is not None and answer[0] == 200, answer
    gc.collect()
    start = time.process_time()
    for _ in range(n):
        await app.answer(scope, headers.get, read, never)
    return (time.process_time() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    scope, body = signed_request()
    modes = ("none", "sigv4", "iam")
    apps = {mode: make_app(mode) for mode in modes}
    best = dict.fromkeys(modes, float("inf"))
    for _ in range(args.rounds):
        for mode in modes:
            best[mode] = min(best[mode], asyncio.run(run(apps[mode], scope, body, args.n)))
    for mode in modes:
        print(f"--auth {mode:6} {best[mode]:8.1f} us CPU per SendMessage")
    print(f"iam / sigv4 = {best['iam'] / best['sigv4']:.2f}x (goal: at most 1.3x)")
    print(f"sigv4 / none = {best['sigv4'] / best['none']:.2f}x")


if __name__ == "__main__":
    main()
