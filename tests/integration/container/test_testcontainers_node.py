"""docs/docker.md's "Testcontainers for Node" recipe, run as it is written there: the code block is read from the
page and run with ``node --test`` in tests/js/testcontainers (Node's ``testcontainers`` and the AWS SDK v3, pinned in
its package-lock.json, installed with ``npm ci`` on first use), against the image built from the repository.

Like the other container tests it needs a Docker engine (skipped without one; an error when ``CI`` is set, through
the ``docker_engine`` fixture) and, like the JavaScript SDK check, Node.js (20+ for testcontainers 11) and npm
(skipped without them). Testcontainers' reaper container (Ryuk) is switched off (``TESTCONTAINERS_RYUK_DISABLED``),
as in the Python Testcontainers test: its image comes from Docker Hub; the recipe stops its container itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from harness.docker import BUILD_TIMEOUT_S
from harness.node import ensure_node_modules

# The first test to need the image builds it (and, on a machine without a base image, the base: minutes).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(BUILD_TIMEOUT_S * 2)]

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "docker.md"
RECIPE_DIR = ROOT / "tests" / "js" / "testcontainers"
MARKER = "<!-- docs-example: testcontainers-node -->"


def recipe() -> str:
    """The JavaScript block under the marker in docs/docker.md."""
    text = PAGE.read_text(encoding="utf-8")
    assert MARKER in text, "docs/docker.md lost its Testcontainers-for-Node recipe"
    match = re.search(r"```js\n(.*?)```", text[text.index(MARKER) :], re.S)
    assert match is not None
    return match.group(1)


def _node() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(name for name, found in (("node", node), ("npm", npm)) if found is None)
        pytest.skip(f"{missing} not on PATH: the Testcontainers-for-Node recipe needs Node.js 20+ and npm")
    return node, npm


def _write_recipe() -> Path:
    path = RECIPE_DIR / "recipe.test.mjs"  # beside its node_modules, so its imports resolve (git-ignored)
    path.write_text(recipe(), encoding="utf-8")
    return path


def test_the_node_recipe_is_valid_javascript() -> None:
    """Runs without Docker: the block parses as an ES module (``node --check``)."""
    node, _npm = _node()
    path = _write_recipe()
    result = subprocess.run([node, "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_node_recipe_starts_the_image_and_a_message_goes_through(sqsemu_image: str) -> None:
    node, npm = _node()
    ensure_node_modules(npm, RECIPE_DIR, RECIPE_DIR / "node_modules" / "testcontainers" / "package.json")
    path = _write_recipe()
    env = {**os.environ, "SQSEMU_IMAGE": sqsemu_image, "TESTCONTAINERS_RYUK_DISABLED": "true"}
    result = subprocess.run(
        [node, "--test", path.name], cwd=RECIPE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^# pass 1$", result.stdout, re.M), result.stdout
    assert re.search(r"^# fail 0$", result.stdout, re.M), result.stdout
