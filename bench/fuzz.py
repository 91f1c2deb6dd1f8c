"""Long fuzz run: the grammar of tests/fuzz for N requests (default 1,000,000) against the in-process app, or (with
``--wire``) the byte-level mutator of tests/fuzz/wire.py against a real server over sockets.

    python bench/fuzz.py                      # 1,000,000 requests, seed 1
    python bench/fuzz.py -n 200000 --seed 7   # fewer, another seed
    python bench/fuzz.py --jobs 2             # split over two processes (seeds seed, seed+1, ...)
    python bench/fuzz.py --wire --requests 20000 --seed 3   # mutated requests over real sockets
    python bench/fuzz.py --wire --seed 3 --case 117         # one of those cases again, with what came back

With ``--wire`` (tests/fuzz/test_wire_mutation.py's oracle, as long as asked): ``--requests`` cases (each one
connection: one request or several pipelined; default 5,000), ``--concurrency`` connections at once (default 24),
``--margin`` seconds allowed beyond the 2-second read deadline (default 3). It prints the cases and requests of each
failure class (5xx, malformed answer, length mismatch, not answered or closed in time, valid request refused, reset,
traceback) and, per kind of failure, one example request with what the server sent. Exit status 1 when anything
failed.

Same property as tests/fuzz/test_fuzz.py: every request gets an answer below HTTP 500 whose body parses in its
format, and nothing raises inside the app. Requests come from ``RandomDraw`` (``random.Random``: fast), on a World
(real Broker, ManualClock, no sockets) that is rebuilt every ``--world`` requests so state stays bounded. At the end it
prints the number of requests, answers by status, 5xx answers, answers that did not parse, and the distinct
tracebacks grouped by exception type and innermost frame, each with a count and one example request. Exit status 1
when anything failed.

Not collected by pytest (bench/ is outside ``testpaths`` and the file is no ``test_*.py``).
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz.grammar import RandomDraw, any_request  # noqa: E402
from tests.fuzz.harness import ClockExhausted, World, problem  # noqa: E402
from tests.fuzz.wire import run_one, run_wire  # noqa: E402


def run(n: int, seed: int, world_every: int, progress: bool) -> dict[str, Any]:
    """``n`` requests from ``RandomDraw(seed)``; the figures as a plain dict (pickled back from worker processes)."""
    draw = RandomDraw(seed)
    world = World()
    statuses: collections.Counter[int] = collections.Counter()
    problems: collections.Counter[str] = collections.Counter()
    crashes: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[Any, str] = {}
    started = time.perf_counter()
    done = 0
    since_world = 0
    while done < n:
        if since_world >= world_every:
            world.close()
            world = World()
            since_world = 0
        request = any_request(draw, world.state)
        try:
            response = world.call(request)
        except ClockExhausted:  # fuzzed clock advances reached the end of time: start over
            world.close()
            world = World()
            since_world = 0
            continue
        done += 1
        since_world += 1
        statuses[response.status] += 1
        wrong = problem(request, response)
        if wrong is not None:
            key = re.sub(r"\d+", "N", wrong[:100])  # one kind per message, whatever line and column
            problems[key] += 1
            examples.setdefault(key, f"{request}\n-> {response.status} {response.body[:500]!r}")
        if world.crashes:
            for crash in world.crashes:
                crashes[(crash.kind, crash.where)] += 1
                examples.setdefault((crash.kind, crash.where), f"{request}\n{crash.text}")
            world.crashes.clear()
        if progress and done % 50_000 == 0:
            rate = done / (time.perf_counter() - started)
            print(
                f"  seed {seed}: {done:,} requests, {rate:,.0f}/s, problems {sum(problems.values())}, "
                f"crashes {sum(crashes.values())}",
                flush=True,
            )
    world.close()
    return {
        "requests": done,
        "seconds": time.perf_counter() - started,
        "statuses": dict(statuses),
        "problems": dict(problems),
        "crashes": {f"{kind} at {where}": count for (kind, where), count in crashes.items()},
        "examples": {(k if isinstance(k, str) else f"{k[0]} at {k[1]}"): v for k, v in examples.items()},
    }


def _worker(args: tuple[int, int, int]) -> dict[str, Any]:
    n, seed, world_every = args
    return run(n, seed, world_every, progress=True)


def wire(args: argparse.Namespace) -> int:
    """``--wire``: the mutator of tests/fuzz/wire.py against a real server; 1 when anything failed."""
    if args.case is not None:
        outcome = run_one(args.seed, args.case, args.margin)
        print(outcome.case.describe(4000))
        print(f"statuses {outcome.statuses}, {'closed' if outcome.closed else 'reset' if outcome.reset else 'open'}"
              f" after {outcome.seconds:.2f} s; received {outcome.received!r}")  # fmt: skip
        for kind, detail in zip(outcome.classes, outcome.details, strict=True):
            print(f"FAILED {kind}: {detail}")
        return 1 if outcome.classes else 0
    cases = args.requests if args.requests is not None else 5_000
    step = max(1, cases // 20)

    def progress(done: int) -> None:
        if done % step == 0:
            print(f"  {done:,} of {cases:,} cases", flush=True)

    report = run_wire(cases, args.seed, args.concurrency, args.margin, progress)
    print(report.summary(examples=args.examples))
    return 1 if any(n for n, _ in report.counts().values()) or not report.alive else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "-n", "--requests", type=int, default=None, help="requests in all (default 1,000,000; --wire: cases, 5,000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the first process (default 1)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1); job i uses seed + i")
    parser.add_argument("--world", type=int, default=20_000, help="requests per fresh server (default 20,000)")
    parser.add_argument("--wire", action="store_true", help="mutated requests over real sockets (tests/fuzz/wire.py)")
    parser.add_argument("--concurrency", type=int, default=24, help="--wire: connections at once (default 24)")
    parser.add_argument("--margin", type=float, default=3.0, help="--wire: seconds beyond the read deadline (3)")
    parser.add_argument("--examples", type=int, default=4, help="--wire: example kinds per failure class (4)")
    parser.add_argument("--case", type=int, default=None, help="--wire: run this one case again and show it")
    args = parser.parse_args()
    if args.wire:
        return wire(args)
    if args.requests is None:
        args.requests = 1_000_000

    jobs = max(1, args.jobs)
    shares = [args.requests // jobs + (1 if i < args.requests % jobs else 0) for i in range(jobs)]
    tasks = [(share, args.seed + i, args.world) for i, share in enumerate(shares)]
    started = time.perf_counter()
    if jobs == 1:
        results = [_worker(tasks[0])]
    else:
        with multiprocessing.Pool(jobs) as pool:
            results = pool.map(_worker, tasks)
    wall = time.perf_counter() - started

    statuses: collections.Counter[int] = collections.Counter()
    problems: collections.Counter[str] = collections.Counter()
    crashes: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    for result in results:
        statuses.update(result["statuses"])
        problems.update(result["problems"])
        crashes.update(result["crashes"])
        for key, text in result["examples"].items():
            examples.setdefault(key, text)
    total = sum(r["requests"] for r in results)
    five_xx = sum(count for status, count in statuses.items() if status >= 500)
    print(f"requests: {total:,} in {wall:,.0f} s ({total / wall:,.0f}/s), seeds {args.seed}..{args.seed + jobs - 1}")
    print("statuses: " + ", ".join(f"{status}: {count:,}" for status, count in sorted(statuses.items())))
    print(f"5xx: {five_xx:,}")
    print(f"answers that broke the property: {sum(problems.values()):,} ({len(problems)} kinds)")
    print(f"distinct tracebacks: {len(crashes)} ({sum(crashes.values()):,} in all)")
    for key, count in problems.most_common():
        print(f"\n--- problem x{count}: {key}\n{examples[key][:3000]}")
    for key, count in crashes.most_common():
        print(f"\n--- traceback x{count}: {key}\n{examples[key][-3000:]}")
    return 1 if five_xx or problems or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
