"""The kept test set-up (harness/setupcache.py): node_modules made once are copied into later checkouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.setupcache import keep_node_modules, restore_node_modules


def _project(path: Path, lock: str) -> Path:
    path.mkdir()
    (path / "package-lock.json").write_text(lock)
    return path


def test_node_modules_kept_once_are_copied_into_a_checkout_with_the_same_lock_file_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SQSEMU_TEST_CACHE", str(tmp_path / "cache"))
    first = _project(tmp_path / "first", '{"lockfileVersion": 3}')
    (first / "node_modules" / "pkg").mkdir(parents=True)
    (first / "node_modules" / "pkg" / "package.json").write_text('{"name": "pkg"}')
    (first / "node_modules" / ".bin").mkdir()
    (first / "node_modules" / ".bin" / "pkg").symlink_to("../pkg/package.json")
    assert not restore_node_modules(first)  # nothing kept yet
    keep_node_modules(first)

    (tmp_path / "clone").mkdir()
    same = _project(tmp_path / "clone" / "first", '{"lockfileVersion": 3}')
    (same / "node_modules").mkdir()  # what an interrupted install left
    (same / "node_modules" / "half").write_text("")
    assert restore_node_modules(same)
    assert (same / "node_modules" / "pkg" / "package.json").read_text() == '{"name": "pkg"}'
    assert (same / "node_modules" / ".bin" / "pkg").is_symlink()
    assert not (same / "node_modules" / "half").exists()

    (tmp_path / "other").mkdir()
    changed = _project(tmp_path / "other" / "first", '{"lockfileVersion": 3, "changed": true}')
    assert not restore_node_modules(changed)
    assert not (changed / "node_modules").exists()
