"""The release's own steps (scripts/release.py) and the workflow that runs them (.github/workflows/release.yml):
the version a tag gives, the changelog it requires, PyPI's links and the README's, the inventory of a release's
files, and the workflow calling those scripts with the settings trusted publishing needs. The workflow itself runs
only on GitHub; what can run here (build, twine check, the wheel in a fresh venv, the smoke test) runs in
tests/integration/test_package.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from scripts import release

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
REPO = "https://github.com/example-org/sqsemu"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the files ``stamp`` reads and writes."""
    (tmp_path / "sqsemu").mkdir()
    shutil.copy(ROOT / "sqsemu" / "__init__.py", tmp_path / "sqsemu" / "__init__.py")
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _add_section(checkout: Path, version: str) -> None:
    changelog = checkout / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    changelog.write_text(
        text.replace("## [Unreleased]\n", f"## [Unreleased]\n\n## [{version}] - 2027-01-15\n"), encoding="utf-8"
    )


@pytest.mark.parametrize("tag", ["v0.2.0", "v1.0.0rc1", "v1.0.0.post1", "v2.0.0.dev3", "v10.4"])
def test_a_tag_gives_its_version(tag: str) -> None:
    assert release.version_of_tag(tag) == tag[1:]


@pytest.mark.parametrize("tag", ["0.2.0", "v1.0.0-rc.1", "v1.0.0RC1", "v1!2.0", "v1.0+local", "vnext", "v"])
def test_a_tag_that_is_not_v_and_a_normal_pep_440_version_is_refused(tag: str) -> None:
    with pytest.raises(release.ReleaseError, match="tag"):
        release.version_of_tag(tag)


def test_stamping_refuses_a_version_the_changelog_has_no_section_for(checkout: Path) -> None:
    before = (checkout / "sqsemu" / "__init__.py").read_text(encoding="utf-8")
    with pytest.raises(release.ReleaseError, match=r"CHANGELOG.md has no section '## \[0.2.0\]'"):
        release.stamp(checkout, "v0.2.0", REPO)
    assert (checkout / "sqsemu" / "__init__.py").read_text(encoding="utf-8") == before


def test_stamping_writes_the_tags_version_where_the_build_reads_it(checkout: Path) -> None:
    _add_section(checkout, "0.2.0")
    assert release.stamp(checkout, "v0.2.0", None) == "0.2.0"
    assert release.checkout_version(checkout) == "0.2.0"
    pyproject = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "sqsemu.__version__"}
    assert "urls" not in pyproject["project"]  # no repository given: no links made up


def test_stamping_gives_pypi_the_repositorys_links_and_an_absolute_readme(checkout: Path) -> None:
    _add_section(checkout, "0.2.0")
    release.stamp(checkout, "v0.2.0", REPO)
    urls = tomllib.loads((checkout / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Source"] == REPO
    assert urls["Changelog"] == f"{REPO}/blob/v0.2.0/CHANGELOG.md"
    assert urls["Documentation"] == f"{REPO}/blob/v0.2.0/docs/index.md"
    readme = (checkout / "README.md").read_text(encoding="utf-8")
    assert f"]({REPO}/blob/v0.2.0/docs/" in readme
    assert "](docs/" not in readme


def test_absolute_links_leave_addresses_and_anchors_alone() -> None:
    text = "[a](docs/x.md#y) [b](https://aws.amazon.com/sqs/) [c](#quick-start) [d](LICENSE)"
    assert release.absolute_links(text, "https://h/r/blob/v1") == (
        "[a](https://h/r/blob/v1/docs/x.md#y) [b](https://aws.amazon.com/sqs/) [c](#quick-start) "
        "[d](https://h/r/blob/v1/LICENSE)"
    )


def _release_names(version: str) -> list[str]:
    platforms = [
        "manylinux_2_27_x86_64.manylinux_2_28_x86_64",
        "manylinux_2_26_aarch64.manylinux_2_28_aarch64",
        "macosx_10_13_x86_64",
        "macosx_11_0_arm64",
        "win_amd64",
    ]
    return [f"sqsemu-{version}.tar.gz"] + [
        f"sqsemu-{version}-{py}-{py}-{platform}.whl" for py in release.PYTHONS for platform in platforms
    ]


def test_the_inventory_passes_a_complete_release() -> None:
    assert release.inventory(_release_names("0.2.0"), "0.2.0") == []


def test_the_inventory_names_a_missing_wheel_a_pure_wheel_and_a_wrong_version() -> None:
    names = [n for n in _release_names("0.2.0") if not ("cp312" in n and "aarch64" in n)]
    names += ["sqsemu-0.2.0-py3-none-any.whl", "sqsemu-0.1.0-cp311-cp311-win_amd64.whl"]
    assert release.inventory(names, "0.2.0") == [
        "sqsemu-0.1.0-cp311-cp311-win_amd64.whl is not of version 0.2.0",
        "no cp312 wheel for manylinux aarch64",
        "sqsemu-0.2.0-py3-none-any.whl is a pure wheel: the release publishes compiled wheels and the sdist",
    ]


def test_the_release_script_says_what_failed_and_exits_1(checkout: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "release.py"), "version", "--tag", "v1.0-beta"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "release: FAILED: the tag 'v1.0-beta' is not v followed by a PEP 440 version" in result.stderr


# ---- the workflow


def _workflow() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return document


def _runs(job: dict[str, Any]) -> list[str]:
    return [str(step["run"]) for step in job["steps"] if "run" in step]


def _uses(job: dict[str, Any]) -> list[str]:
    return [str(step["uses"]) for step in job["steps"] if "uses" in step]


def test_the_workflow_runs_on_a_version_tag_and_by_hand() -> None:
    document: dict[Any, Any] = _workflow()
    triggers = document[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"] == {"tags": ["v*"]}
    assert "workflow_dispatch" in triggers


def test_the_workflows_steps_are_the_scripts_ci_runs() -> None:
    jobs = _workflow()["jobs"]
    assert any("scripts/release.py all" in run and "--expect-build compiled" in run for run in _runs(jobs["sdist"]))
    assert any("scripts/release.py inventory" in run for run in _runs(jobs["inventory"]))
    assert any("scripts/smoke.py --url" in run for run in _runs(jobs["image"]))
    for name in ("sdist", "wheels", "image"):
        assert any("scripts/release.py stamp --tag" in run for run in _runs(jobs[name])), name
    # Every script a step names exists, with the subcommand it asks for.
    commands = {"version", "stamp", "build", "check", "all", "inventory"}
    for job in jobs.values():
        for run in _runs(job):
            for script in {w for w in run.split() if w.startswith("scripts/")}:
                assert (ROOT / script).is_file(), script
            for word in (w for w in run.split("scripts/release.py ")[1:]):
                assert word.split()[0] in commands, run


def test_each_wheel_is_tested_by_the_smoke_test_and_must_be_compiled() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["cibuildwheel"]
    assert settings["test-command"] == "python {project}/scripts/smoke.py --expect-build compiled"
    assert settings["build"] == [f"{python}-*" for python in release.PYTHONS]
    wheels = _workflow()["jobs"]["wheels"]
    assert any(use.startswith("pypa/cibuildwheel@") for use in _uses(wheels))
    rows = wheels["strategy"]["matrix"]["include"]
    built = {(row["archs"], row["os"].split("-")[0]) for row in rows}
    assert built == {("x86_64", "ubuntu"), ("aarch64", "ubuntu"), ("x86_64", "macos"), ("arm64", "macos"),
                     ("AMD64", "windows")}  # fmt: skip
    aarch64 = [row for row in rows if row["archs"] == "aarch64"]
    assert sorted(row["build"] for row in aarch64) == [f"{python}-*" for python in release.PYTHONS]
    assert all(row.get("qemu") for row in aarch64)
    assert "docker/setup-qemu-action@v3" in _uses(wheels)


def test_publishing_is_trusted_publishing_from_the_pypi_environment_on_a_tag_only() -> None:
    jobs = _workflow()["jobs"]
    publish = jobs["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    assert _uses(publish)[-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert publish["needs"] == ["inventory"] and set(jobs["inventory"]["needs"]) == {"sdist", "wheels"}
    # No other job can mint an OIDC token; the workflow reads the repository and nothing more by default.
    assert _workflow()["permissions"] == {"contents": "read"}
    assert all("id-token" not in job.get("permissions", {}) for name, job in jobs.items() if name != "publish")


def test_the_image_is_built_for_both_architectures_and_pushed_to_ghcr_on_a_tag() -> None:
    image = _workflow()["jobs"]["image"]
    assert image["permissions"]["packages"] == "write"
    pushes = [step for step in image["steps"] if str(step.get("uses", "")).startswith("docker/build-push-action@")]
    final = pushes[-1]["with"]
    assert final["platforms"] == "linux/amd64,linux/arm64"
    assert final["push"] == "${{ env.RELEASE_TAG != '' }}"
    assert any(step.get("with", {}).get("registry") == "ghcr.io" for step in image["steps"])
