"""Every Python example of the README and of docs/ runs as it stands, or says why not and where it is in full.

Each ```python block is one test, named by its page and line. What the line just above the block (an HTML comment,
invisible on the site and on GitHub) says decides what happens:

- nothing: the block runs as a script in a fresh interpreter. Where it talks to ``http://127.0.0.1:9324`` (a server
  started with ``sqsemu``, as the README says), a real server is started for it on a free port and that address is
  put in its place: the only change made to an example.
- ``<!-- readme-example: NAME -->``: a pytest test file, run under the pytest plugin by
  tests/integration/test_pytest_plugin.py (``NAME`` must be one of its ``EXAMPLES``).
- ``<!-- example: pytest -->``: a pytest test file, run here under the pytest plugin.
- ``<!-- example: run by PATH -->``: run by that test file (which must name the page).
- ``<!-- docs-example: NAME -->``: read from the page and run by the test that names ``NAME`` (the compatibility
  pages: tests/integration/test_compat_docs.py and the container tests).
- ``<!-- example: fragment; in full: PATH -->``: a fragment (it needs a SparkSession, a Docker image...); ``PATH``
  (a file of this repository, maybe with ``#anchor``) holds it in full, and must exist.

:data:`RUN_HERE` counts the examples these tests run; docs/development.md says how to mark a new one.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import free_port
from test_pytest_plugin import EXAMPLES, run

from sqsemu.testing import SQSServer

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
DEFAULT_ENDPOINT = "http://127.0.0.1:9324"
_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_MARK = re.compile(r"<!--\s*(readme-example|docs-example|example):\s*(.*?)\s*-->\s*$")
TESTS = ROOT / "tests"


@dataclass(frozen=True)
class Example:
    """One ```python block: ``page`` (relative to the repository), ``line`` (of its fence), ``code``, ``kind``
    (``run``, ``pytest``, ``readme-example``, ``run-by``, ``fragment``) and ``detail`` (what the marker said)."""

    page: str
    line: int
    code: str
    kind: str
    detail: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            above = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            mark = _MARK.search(above)
            kind, detail = "run", ""
            if mark and mark.group(1) in ("readme-example", "docs-example"):
                kind, detail = mark.group(1), mark.group(2)
            elif mark:
                detail = mark.group(2)
                if detail == "pytest":
                    kind = "pytest"
                elif detail.startswith("run by "):
                    kind, detail = "run-by", detail.removeprefix("run by ").strip()
                elif detail.startswith("fragment"):
                    kind, detail = "fragment", detail.partition("in full:")[2].strip()
                else:
                    raise AssertionError(f"{page.relative_to(ROOT)}:{line}: unknown example marker {above!r}")
            found.append(Example(str(page.relative_to(ROOT)), line, match.group(1), kind, detail))
    return found


EXAMPLES_FOUND = _examples()
RUN_HERE = [e for e in EXAMPLES_FOUND if e.kind in ("run", "pytest")]
ELSEWHERE = [e for e in EXAMPLES_FOUND if e.kind not in ("run", "pytest")]


@pytest.mark.parametrize("example", [e for e in RUN_HERE if e.kind == "run"], ids=lambda e: e.id)
def test_the_example_runs_as_it_stands(example: Example, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    code = example.code
    server = None
    if DEFAULT_ENDPOINT in code:
        server = SQSServer(clock="system").start()
        code = code.replace(DEFAULT_ENDPOINT, server.endpoint_url)
    script.write_text(code, encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False
        )
    finally:
        if server is not None:
            server.stop()
    assert done.returncode == 0, f"{example.id} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("example", [e for e in RUN_HERE if e.kind == "pytest"], ids=lambda e: e.id)
def test_the_pytest_example_passes_under_the_plugin(example: Example, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_documented=example.code)
    result = run(pytester, "-q")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1 and not outcomes.get("failed"), result.stdout.str()[-3000:]


@pytest.mark.parametrize("example", ELSEWHERE, ids=lambda e: e.id)
def test_an_example_not_run_here_says_where_it_is_run_or_shown_in_full(example: Example) -> None:
    if example.kind == "readme-example":
        assert example.detail in EXAMPLES, f"{example.id}: test_pytest_plugin.py does not run {example.detail!r}"
        return
    if example.kind == "docs-example":
        readers = [p for p in TESTS.rglob("test_*.py") if f'"{example.detail}"' in p.read_text(encoding="utf-8")]
        assert readers, f"{example.id}: no test reads the docs-example {example.detail!r}"
        return
    assert example.detail, f"{example.id}: a {example.kind} example must name a file"
    target = ROOT / example.detail.partition("#")[0]
    assert target.is_file(), f"{example.id}: {example.detail} does not exist"
    if example.kind == "run-by":
        assert Path(example.page).name in target.read_text(encoding="utf-8"), (
            f"{example.detail} does not read {example.page}"
        )


def test_most_examples_run() -> None:
    """Fragments stay the exception: at least three examples in four are run."""
    assert len(EXAMPLES_FOUND) >= 10
    assert len(EXAMPLES_FOUND) - len([e for e in ELSEWHERE if e.kind == "fragment"]) >= 0.75 * len(EXAMPLES_FOUND)


_LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


def _normalised(lines: list[str], port: int) -> list[str]:
    """Lines without their timestamps, the pid and the port made 9324's, the build line cut to ``build:``."""
    out = []
    for line in lines:
        line = _LOG_PREFIX.sub("", line)
        line = re.sub(r"Started server process \[\d+\]", "Started server process [PID]", line)
        line = line.replace(f"127.0.0.1:{port}", "127.0.0.1:9324")
        out.append(line.split("build: ", 1)[0] + "build:" if "build: " in line else line)
    return out


def test_getting_started_shows_what_sqsemu_prints(tmp_path: Path) -> None:
    """The start-up output of docs/getting-started.md, line for line, is what ``sqsemu`` prints (on a free port,
    shown as 9324; the build line names whichever build runs here)."""
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    match = re.search(r"```text\n(.*?INFO sqsemu\.banner build: [^\n]*\n)```", text, re.S)
    assert match is not None, "docs/getting-started.md shows no start-up output"
    documented = match.group(1).splitlines()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqsemu", "--port", str(port)], stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    printed: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            printed.append(line.rstrip("\n"))
            if "sqsemu.banner build: " in line or len(printed) > 50:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert _normalised(printed, port) == _normalised(documented, 9324)


_DATA_BLOCK = re.compile(r"^```(toml|yaml|json)[^\n]*\n(.*?)^```", re.S | re.M)


def _data_blocks() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _DATA_BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", match.group(1), match.group(2)))
    return found


@pytest.mark.parametrize(("where", "language", "text"), [pytest.param(*b, id=b[0]) for b in _data_blocks()])
def test_every_configuration_example_loads(where: str, language: str, text: str, tmp_path: Path) -> None:
    """A TOML example is a sqsemu configuration file that loads (every key and declaration checked); a YAML or JSON
    example parses."""
    import json

    import yaml

    from sqsemu.declare import config_from_file

    if language == "toml":
        for name in re.findall(r'"([\w./-]+\.json)"', text):  # an identity-based policy file the example names
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(
                json.dumps(
                    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}]}
                )
            )
        path = tmp_path / "sqsemu.toml"
        path.write_text(text, encoding="utf-8")
        config_from_file(path)
    elif language == "yaml":
        assert yaml.safe_load(text) is not None, where
    else:
        json.loads(text)
