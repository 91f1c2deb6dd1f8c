"""The image's size, its start-up time and its ``docker stop`` time with a long poll open: the README's Docker figures.

    python bench/docker_start.py                      # build the image (base as the container tests pick it), 5 runs
    python bench/docker_start.py --image sqsemu -n 10 # an image built before, 10 runs

Each run starts the image detached with its port published on 127.0.0.1 and measures from just before
``docker run`` to the first 200 from /health through the published port; then opens one 20-second long poll
(ReceiveMessage), waits until the server counts it, and measures ``docker stop``. Prints each run and the medians,
and the image's size. Needs a Docker engine (see tests/integration/harness/docker.py). Not collected by pytest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from harness import free_port, json_client, start_long_poll, wait_for_health  # noqa: E402
from harness.docker import base_image, build_image, docker, ensure_engine, unique_name  # noqa: E402


def one_run(image: str) -> tuple[float, float]:
    """``(seconds from docker run to a healthy /health, seconds docker stop took with a long poll open)``."""
    name = unique_name("sqsemu-bench")
    port = free_port()
    try:
        started = time.monotonic()
        docker("run", "-d", "--name", name, "-p", f"127.0.0.1:{port}:9324", image)
        wait_for_health(f"http://127.0.0.1:{port}/health", 60)
        healthy_s = time.monotonic() - started
        sqs = json_client(f"http://127.0.0.1:{port}")
        url = sqs.create_queue(QueueName="bench")["QueueUrl"]
        poll = start_long_poll(f"http://127.0.0.1:{port}", sqs, QueueUrl=url, WaitTimeSeconds=20)
        started = time.monotonic()
        docker("stop", name)
        stop_s = time.monotonic() - started
        poll.join(10)
        status = docker("inspect", "--format", "{{.State.ExitCode}}", name)
        if status != "0":
            raise SystemExit(f"the container exited with status {status}")
        return healthy_s, stop_s
    finally:
        docker("rm", "--force", name, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", help="an image built before (default: build one, removed at the end)")
    parser.add_argument("-n", "--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"engine: {ensure_engine()}, Docker {docker('version', '--format', '{{.Server.Version}}')}")
    image = args.image
    if image is None:
        base = base_image()
        image = f"sqsemu-bench:{unique_name('image').split('-', 1)[1]}"
        print(f"built {image} on {base} in {build_image(image, base):.1f} s")
    try:
        size = int(docker("image", "inspect", "--format", "{{.Size}}", image))
        print(f"image size: {size / 1e6:.0f} MB")
        healthy, stops = [], []
        for i in range(args.runs):
            healthy_s, stop_s = one_run(image)
            healthy.append(healthy_s)
            stops.append(stop_s)
            print(f"run {i + 1}: healthy after {healthy_s:.2f} s, docker stop with a long poll open {stop_s:.2f} s")
        print(f"median: healthy after {statistics.median(healthy):.2f} s, docker stop {statistics.median(stops):.2f} s")
    finally:
        if args.image is None:
            docker("image", "rm", "--force", image, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
