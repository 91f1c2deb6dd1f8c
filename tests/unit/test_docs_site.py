"""The documentation: the MkDocs site (mkdocs.yml, pages under docs/) builds strictly, offline, with its own search,
and the README stays a short entry point whose links all land.

``mkdocs build --strict`` fails on a link to a missing page or anchor, on a page left out of the nav and on an
absolute link (mkdocs.yml's ``validation``). The build runs with every proxy variable pointed at a closed port, so
a plugin or theme feature that reached for the network would fail here rather than slow every CI run. mkdocs and
mkdocs-material come with the ``test`` extra (and the ``docs`` extra); without them the build is skipped, an error
when ``CI`` is set. A second build, of a copy with a page left out of the nav and a link to a missing anchor, must
fail and name both: the strictness the first build relies on is itself checked (Zensical 0.0.73, measured as a
replacement, let the first through; pyproject.toml's docs extra says why Material stays).

Material prints an end-of-life notice to stderr when run as ``mkdocs`` (from 9.8.0); ``NO_MKDOCS_2_WARNING=1``, the
switch it names, keeps it out of a failure's report. It is a print, not a logged warning: strict mode never counted
it, and the build's own warnings still fail the build and are shown in full.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 450
CLOSED = "http://127.0.0.1:9"
"""A proxy address where nothing listens: any HTTP(S) request of the build fails at once."""


def _mkdocs_missing() -> str | None:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError as exc:
        return f"mkdocs or mkdocs-material is not installed ({exc}): pip install -e '.[docs]'"
    return None


def _require_mkdocs() -> None:
    missing = _mkdocs_missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but the documentation cannot be built: {missing}")
        pytest.skip(missing)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_mkdocs()
    out = tmp_path_factory.mktemp("site")
    result = _build(ROOT, out)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    return out


def _build(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of root/mkdocs.yml into out, with the network closed and Material's notice off."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.update({name: CLOSED for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY")})
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(root / "mkdocs.yml"),
            "-d",
            str(out),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_strict_build_fails_on_a_page_outside_the_nav_and_a_missing_anchor(tmp_path: Path) -> None:
    """What the site's build is trusted to catch: a copy with an orphan page and a dead anchor does not build."""
    _require_mkdocs()
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    with (tmp_path / "docs" / "features.md").open("a", encoding="utf-8") as page:
        page.write("\nSee [the rules](behaviour.md#no-such-anchor).\n")
    result = _build(tmp_path, tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"the broken copy built:\n{output}"
    assert "orphan.md" in output, output
    assert "no-such-anchor" in output, output
    assert "end of life" not in output, output


def _pages() -> list[str]:
    """The Markdown pages under docs/, relative to it."""
    return sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))


def test_every_page_is_built(site: Path) -> None:
    for page in _pages():
        html = "index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html"
        assert (site / html).is_file(), f"docs/{page} was not built"


def test_the_site_searches_its_own_pages(site: Path) -> None:
    """Material's search plugin: the index is built with the site and searched in the browser, offline."""
    index = json.loads((site / "search" / "search_index.json").read_text())
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert {"", "getting-started/", "configuration/", "behaviour/", "performance/"} <= locations
    assert any("visibility timeout" in doc["text"].lower() for doc in index["docs"])
    assert list(site.glob("assets/javascripts/workers/search.*.min.js")), "the search worker is not in the site"


class _Loads(HTMLParser):
    """The addresses a page makes the browser load: scripts, images, stylesheets, fonts, preconnects."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("script", "img", "iframe") and found.get("src"):
            self.urls.append(found["src"] or "")
        elif tag == "link" and (found.get("rel") or "") in ("stylesheet", "preconnect", "preload", "icon"):
            self.urls.append(found.get("href") or "")


def test_no_page_loads_anything_from_another_site(site: Path) -> None:
    """No CDN, no web fonts: the pages' scripts, stylesheets and images are the site's own files."""
    for html in site.rglob("*.html"):
        parser = _Loads()
        parser.feed(html.read_text(encoding="utf-8"))
        remote = [url for url in parser.urls if re.match(r"(https?:)?//", url)]
        assert not remote, f"{html.relative_to(site)} loads {remote}"


def test_the_readme_is_short_and_its_links_land() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, at most {README_MAX_LINES}: move detail to docs/"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)", text)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in local)
    for link in local:
        assert (ROOT / link).exists(), f"README.md links to {link}, which does not exist"


def test_the_readme_starts_with_the_set_up_commands_ci_runs() -> None:
    """The README's first commands are a fresh machine's set-up; .ci/run runs the test command verbatim."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert blocks[:3] == [
        "python3 -m venv .venv && . .venv/bin/activate\n",
        "pip install . && sqsemu\n",
        "pip install -e '.[test]' && python -m pytest\n",
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 -m venv .venv" in ci and "source .venv/bin/activate" in ci
    assert "pip install -e '.[test]' && python -m pytest" in ci


def test_every_docs_page_is_in_the_readmes_documentation_table_and_the_sites_nav() -> None:
    """A new page under docs/ must be findable from both entry points: a row of the README's "Documentation" table
    and mkdocs.yml's nav (a page reachable only by search, or only on GitHub, is a page nobody finds)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    table = {link.removeprefix("docs/") for link in re.findall(r"\]\((docs/[^)#\s]+)", section)}
    nav_text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    nav = set(re.findall(r":\s*([\w./-]+\.md)\s*$", nav_text, re.M))
    pages = {page.replace(os.sep, "/") for page in _pages()}
    assert len(pages) > 20, pages
    assert not pages - table, f"docs pages missing from the README's Documentation table: {sorted(pages - table)}"
    assert not pages - nav, f"docs pages missing from mkdocs.yml's nav: {sorted(pages - nav)}"
    assert not (table | nav) - pages, f"links to pages that do not exist: {sorted((table | nav) - pages)}"
