"""A node's root directory another user made first is refused (`kjobs.files.owned_dir`): the default root is a
name in a directory everyone may write (`/dev/shm/kjobs-<uid>`), where that user would read the pods' tokens and
Secrets (docs/security.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kjobs import files
from kjobs.files import NotOwned, owned_dir

ROOT = os.geteuid() == 0


def _as_someone_else(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `path` another user's: chown it when root, else pretend to be another user."""
    if ROOT:
        os.chown(path, 65534, 65534)
    else:
        real = os.geteuid()
        monkeypatch.setattr(files.os, "geteuid", lambda: real + 1)


def test_a_root_of_this_user_is_made_private(tmp_path: Path) -> None:
    root = owned_dir(tmp_path / "shm" / "kjobs-1000" / "kjobs-node")
    assert root.is_dir() and root.stat().st_mode & 0o777 == 0o700


def test_a_parent_another_user_made_first_is_refused_and_nothing_is_made_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    squatted = tmp_path / "kjobs-1000"
    squatted.mkdir(mode=0o777)
    _as_someone_else(squatted, monkeypatch)
    with pytest.raises(NotOwned, match=r"kjobs-1000 belongs to uid \d+, not to this user"):
        owned_dir(squatted / "kjobs-node")
    assert list(squatted.iterdir()) == []


@pytest.mark.skipif(not ROOT, reason="making a directory another user's needs root")
def test_a_root_another_user_made_first_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kjobs-node").mkdir()
    os.chown(tmp_path / "kjobs-node", 65534, 65534)
    with pytest.raises(NotOwned, match="kjobs-node belongs to uid 65534"):
        owned_dir(tmp_path / "kjobs-node")


@pytest.mark.skipif(not ROOT, reason="making a directory another user's needs root")
def test_kjobs_run_refuses_a_squatted_default_root_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "kjobs").mkdir(mode=0o777)
    os.chown(tmp_path / "kjobs", 65534, 65534)
    manifest = tmp_path / "job.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers: [{name: c, image: x, command: ['true']}]\n"
    )
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "kjobs", "run", "--plain", str(manifest)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"Error: {tmp_path}/kjobs belongs to uid 65534, not to this user (uid 0): refusing to keep pods' files there"
    )
    assert list((tmp_path / "kjobs").iterdir()) == []
