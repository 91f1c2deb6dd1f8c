"""The release's steps that are not GitHub's: what .github/workflows/release.yml runs, and CI runs here.

    python scripts/release.py stamp --tag v0.2.0 --repository-url https://github.com/OWNER/sqsemu
    python scripts/release.py build --outdir dist          # python -m build: the sdist, then the wheel from it
    python scripts/release.py check --dist dist            # twine check, a fresh venv with the wheel, the smoke test
    python scripts/release.py all --outdir dist            # build, then check
    python scripts/release.py inventory --dist dist --version 0.2.0   # every wheel the release promises is there
    python scripts/release.py version [--tag v0.2.0]       # the checkout's version, or the tag's

**The version** is ``__version__`` in ``sqsemu/__init__.py``, the one place it is written (pyproject.toml reads it:
``[tool.setuptools.dynamic]``), so a checkout builds and reports a version without any tag: the version the next
release will have. A tag ``vX.Y.Z`` decides the version of what is published: ``stamp`` (run by each job of the
release workflow before it builds) checks the tag is a PEP 440 version in its normal form, that CHANGELOG.md has a
section ``## [X.Y.Z]``, and writes the version into ``sqsemu/__init__.py`` of the workflow's checkout (the same
value when the release commit set it already, as docs/development.md asks). With ``--repository-url`` it also gives
PyPI the project's links (``[project.urls]``, unless pyproject.toml has them) and makes README.md's relative links
absolute (to the tag's files), since PyPI shows the README without the repository around it.

**check** runs ``twine check --strict`` on every distribution in ``--dist``, installs the wheel for this interpreter
into a fresh virtual environment (no pip of its own: this Python's pip installs into it, pip 22.3+) and runs
``scripts/smoke.py`` with that environment's Python. ``--expect-build auto`` (the default) expects the build the
wheel is: ``pure`` for a ``py3-none-any`` wheel (built where no C compiler was), else ``compiled``.

**inventory** lists what a release would publish and fails unless every file carries the version, there is one
sdist, and there is a wheel for each CPython (3.11 to 3.13) on each platform of the workflow (manylinux x86_64 and
aarch64, macOS x86_64 and arm64, Windows AMD64).

Standard library only, besides ``build``, ``twine`` and ``packaging`` where the subcommand needs them (the test
extra has all three). Exits 1 with what failed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "scripts" / "smoke.py"

PYTHONS = ("cp311", "cp312", "cp313")
"""The CPython versions the release builds wheels for (pyproject.toml's ``[tool.cibuildwheel]`` build selector)."""

PLATFORMS = {
    "manylinux x86_64": re.compile(r"manylinux.*_x86_64"),
    "manylinux aarch64": re.compile(r"manylinux.*_aarch64"),
    "macOS x86_64": re.compile(r"macosx_.*_x86_64"),
    "macOS arm64": re.compile(r"macosx_.*_arm64"),
    "Windows AMD64": re.compile(r"win_amd64"),
}
"""The platforms of the release's wheels, each recognised by its wheel's platform tag."""

_VERSION_LINE = re.compile(r'^__version__ = "([^"]*)"$', re.M)


class ReleaseError(Exception):
    """A release step cannot go on: what is wrong, and what to do."""


def _say(message: str) -> None:
    print(f"release: {message}", file=sys.stderr, flush=True)


def _clean_env(keep_pure: bool) -> dict[str, str]:
    """This environment less ``PYTHONPATH`` (a checkout on it would stand in for what is installed) and, unless
    ``keep_pure`` (a build asked to be pure: ``SQSEMU_PURE_PYTHON=1 scripts/release.py build``),
    ``SQSEMU_PURE_PYTHON`` (the installed server says which build it is by itself)."""
    drop = ("PYTHONPATH",) if keep_pure else ("PYTHONPATH", "SQSEMU_PURE_PYTHON")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _run(argv: Sequence[str | Path], cwd: Path = ROOT, keep_pure: bool = False) -> subprocess.CompletedProcess[str]:
    command = [str(a) for a in argv]
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=_clean_env(keep_pure))
    if result.returncode != 0:
        raise ReleaseError(
            f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
        )
    return result


# ---- stamp: the version from the tag


_NORMAL_VERSION = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")
"""A public PEP 440 version in its normal form (no epoch, no local part): ``1.2.0``, ``1.2.0rc1``, ``1.2.0.post1``."""


def version_of_tag(tag: str) -> str:
    """``X.Y.Z`` of the tag ``vX.Y.Z``. Raises ReleaseError unless the rest is a public PEP 440 version in its
    normal form (``v1.2.0rc1``, not ``v1.2.0-rc.1``, whose file names and PyPI page would read ``1.2.0rc1``)."""
    if not tag.startswith("v"):
        raise ReleaseError(f"the tag {tag!r} does not start with 'v' (a release tag is vX.Y.Z)")
    version = tag[1:]
    if _NORMAL_VERSION.fullmatch(version) is None:
        raise ReleaseError(
            f"the tag {tag!r} is not v followed by a PEP 440 version in its normal form (v1.2.0, v1.2.0rc1, "
            "v1.2.0.post1)"
        )
    return version


def checkout_version(root: Path) -> str:
    """The version the checkout at ``root`` says: ``__version__`` in ``sqsemu/__init__.py``."""
    found = _VERSION_LINE.findall((root / "sqsemu" / "__init__.py").read_text(encoding="utf-8"))
    if len(found) != 1:
        raise ReleaseError(f'sqsemu/__init__.py should have one line __version__ = "..."; it has {len(found)}')
    return str(found[0])


def changelog_has(changelog: str, version: str) -> bool:
    """Whether CHANGELOG.md's text has a section for ``version`` (``## [X.Y.Z]``, Keep a Changelog's heading)."""
    return re.search(rf"^## \[{re.escape(version)}\]", changelog, re.M) is not None


def absolute_links(markdown: str, base: str) -> str:
    """``markdown`` with its relative links (``](docs/x.md)``, ``](LICENSE)``) made ``<base>/<link>``; links with a
    scheme and in-page anchors are left as they are."""

    def fix(match: re.Match[str]) -> str:
        link = match.group(1)
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", link) or link.startswith(("#", "/")):
            return match.group(0)
        return f"]({base.rstrip('/')}/{link})"

    return re.sub(r"\]\(([^)\s]+)\)", fix, markdown)


def project_urls(repository: str, tag: str) -> str:
    """The ``[project.urls]`` table of a release from ``repository`` (its web address) at ``tag``."""
    repo = repository.rstrip("/")
    return (
        "\n[project.urls]\n"
        f'Homepage = "{repo}"\n'
        f'Documentation = "{repo}/blob/{tag}/docs/index.md"\n'
        f'Changelog = "{repo}/blob/{tag}/CHANGELOG.md"\n'
        f'Source = "{repo}"\n'
        f'Issues = "{repo}/issues"\n'
    )


def stamp(root: Path, tag: str, repository: str | None) -> str:
    """Stamp the checkout at ``root`` for the release ``tag`` (see the module docstring); returns the version."""
    version = version_of_tag(tag)
    changelog = root / "CHANGELOG.md"
    if not changelog.is_file() or not changelog_has(changelog.read_text(encoding="utf-8"), version):
        raise ReleaseError(
            f"CHANGELOG.md has no section '## [{version}]': move the Unreleased entries under "
            f"'## [{version}] - <date>' in a commit, and tag that commit (docs/development.md, 'Releasing')"
        )
    said = checkout_version(root)
    if said != version:
        _say(f"the checkout says {said}; the tag {tag} makes it {version}")
        init = root / "sqsemu" / "__init__.py"
        text = init.read_text(encoding="utf-8")
        init.write_text(_VERSION_LINE.sub(f'__version__ = "{version}"', text), encoding="utf-8")
    if repository:
        pyproject = root / "pyproject.toml"
        toml = pyproject.read_text(encoding="utf-8")
        if re.search(r"^\[project\.urls\]", toml, re.M) is None:
            pyproject.write_text(toml.rstrip("\n") + "\n" + project_urls(repository, tag), encoding="utf-8")
        readme = root / "README.md"
        base = f"{repository.rstrip('/')}/blob/{tag}"
        readme.write_text(absolute_links(readme.read_text(encoding="utf-8"), base), encoding="utf-8")
    return version


# ---- build and check


def build(outdir: Path) -> list[Path]:
    """``python -m build`` of this checkout into ``outdir``: the sdist, then the wheel built from it (so the sdist
    is known to be complete). Returns the new files; says what the build said about compiling."""
    outdir.mkdir(parents=True, exist_ok=True)
    before = set(outdir.iterdir())
    result = _run([sys.executable, "-m", "build", "--outdir", outdir, ROOT], keep_pure=True)
    for line in (result.stdout + result.stderr).splitlines():
        if line.startswith("sqsemu build: "):
            _say(line)
    made = sorted(set(outdir.iterdir()) - before)
    _say("built " + ", ".join(p.name for p in made))
    return made


def expected_build(wheel: Path) -> str:
    """``pure`` for a wheel without compiled code (``py3-none-any``), else ``compiled``."""
    return "pure" if wheel.name.endswith("-py3-none-any.whl") else "compiled"


def wheel_for_this_python(wheels: Sequence[Path]) -> Path:
    """The wheel among ``wheels`` that installs on this interpreter (its best-matching tag). Raises ReleaseError
    when none does."""
    from packaging.tags import sys_tags
    from packaging.utils import parse_wheel_filename

    ranks = {tag: rank for rank, tag in enumerate(sys_tags())}
    fitting = []
    for wheel in wheels:
        tags = parse_wheel_filename(wheel.name)[3]
        best = min((ranks[t] for t in tags if t in ranks), default=None)
        if best is not None:
            fitting.append((best, wheel.name, wheel))
    if not fitting:
        raise ReleaseError(f"no wheel for this Python ({sys.version.split()[0]}) among {[w.name for w in wheels]}")
    return min(fitting)[2]


def venv_python(venv: Path) -> Path:
    """The interpreter of the virtual environment ``venv`` (``bin/python``, ``Scripts\\python.exe``)."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def check(dist: Path, expect: str = "auto", venv: Path | None = None) -> str:
    """``twine check --strict`` on ``dist``'s distributions, the wheel for this Python installed into a fresh
    virtual environment (``venv``, else a temporary one), and the smoke test run there. Returns the smoke test's
    last line."""
    files = sorted(p for p in dist.iterdir() if p.name.endswith((".tar.gz", ".whl")))
    wheels = [p for p in files if p.name.endswith(".whl")]
    if not wheels:
        raise ReleaseError(f"{dist} holds no wheel")
    twine = _run([sys.executable, "-m", "twine", "check", "--strict", *files])
    if twine.stdout.count("PASSED") != len(files):
        raise ReleaseError(f"twine check:\n{twine.stdout}{twine.stderr}")
    _say(f"twine check --strict: {len(files)} distributions PASSED")
    wheel = wheel_for_this_python(wheels)
    build_expected = expected_build(wheel) if expect == "auto" else expect
    with tempfile.TemporaryDirectory(prefix="sqsemu-release-check-") as tmp:
        target = venv if venv is not None else Path(tmp) / "venv"
        if target.exists():
            shutil.rmtree(target)
        _run([sys.executable, "-m", "venv", "--without-pip", target])
        python = venv_python(target)
        _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile", wheel])
        _say(f"installed {wheel.name} into a fresh virtual environment ({target})")
        smoke = _run([python, SMOKE, "--expect-build", build_expected], cwd=Path(tmp))
    for line in smoke.stdout.splitlines():
        _say(line)
    return smoke.stdout.strip().splitlines()[-1]


# ---- inventory


def inventory(names: Sequence[str], version: str) -> list[str]:
    """What is missing or wrong among the distribution file ``names`` of a release of ``version`` (empty: all
    there): one sdist, a wheel for each of :data:`PYTHONS` on each of :data:`PLATFORMS`, every name of
    ``version``."""
    problems = [
        f"{name} is not of version {version}" for name in names if f"-{version}-" not in name.replace(".tar.gz", "-")
    ]
    sdists = [name for name in names if name.endswith(".tar.gz")]
    if len(sdists) != 1:
        problems.append(f"one sdist expected, found {sdists}")
    wheels = [name for name in names if name.endswith(".whl")]
    for python in PYTHONS:
        for platform, pattern in PLATFORMS.items():
            if not any(f"-{python}-{python}-" in w and pattern.search(w) for w in wheels):
                problems.append(f"no {python} wheel for {platform}")
    pure = [w for w in wheels if w.endswith("-none-any.whl")]
    problems += [f"{w} is a pure wheel: the release publishes compiled wheels and the sdist" for w in pure]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p_version = commands.add_parser("version", help="the checkout's version, or the tag's (checked)")
    p_version.add_argument("--tag")
    p_stamp = commands.add_parser("stamp", help="the version from the tag (prints it)")
    p_stamp.add_argument("--tag", required=True)
    p_stamp.add_argument("--repository-url", help="the repository's web address, for PyPI's links")
    p_build = commands.add_parser("build", help="the sdist and the wheel")
    p_build.add_argument("--outdir", type=Path, default=ROOT / "dist")
    p_check = commands.add_parser("check", help="twine check; the wheel in a fresh venv; the smoke test")
    p_check.add_argument("--dist", type=Path, default=ROOT / "dist")
    p_check.add_argument("--expect-build", choices=("auto", "compiled", "pure", "any"), default="auto")
    p_check.add_argument("--venv", type=Path, help="make the virtual environment here (kept); else a temporary one")
    p_all = commands.add_parser("all", help="build, then check")
    p_all.add_argument("--outdir", type=Path, default=ROOT / "dist")
    p_all.add_argument("--expect-build", choices=("auto", "compiled", "pure", "any"), default="auto")
    p_inventory = commands.add_parser("inventory", help="every file the release promises, of its version")
    p_inventory.add_argument("--dist", type=Path, default=ROOT / "dist")
    p_inventory.add_argument("--version", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "version":
            print(version_of_tag(args.tag) if args.tag else checkout_version(ROOT))
        elif args.command == "stamp":
            print(stamp(ROOT, args.tag, args.repository_url))
        elif args.command == "build":
            build(args.outdir)
        elif args.command == "check":
            print(check(args.dist, args.expect_build, args.venv))
        elif args.command == "all":
            build(args.outdir)
            print(check(args.outdir, args.expect_build))
        else:
            names = sorted(p.name for p in args.dist.iterdir())
            problems = inventory(names, args.version)
            for name in names:
                _say(name)
            if problems:
                raise ReleaseError("the release is incomplete:\n" + "\n".join(problems))
            _say(f"{len(names)} distributions of {args.version}: one sdist and every promised wheel")
    except ReleaseError as error:
        _say(f"FAILED: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
