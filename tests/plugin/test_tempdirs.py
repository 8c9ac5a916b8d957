"""A killed test run's temporary directories are removed by the next one; a live run's never are."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kjobs.node.leftovers import start_time
from kjobs.testing import tempdirs


def _dead_identity() -> str:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    started = start_time(child.pid)
    assert child.stdin is not None
    child.stdin.close()
    child.wait()
    return f"{child.pid}-{started}"


def test_sweep_removes_only_the_directories_of_owners_that_are_gone(tmp_path: Path) -> None:
    me = f"{os.getpid()}-{start_time(os.getpid())}"
    dead = _dead_identity()
    for name in (
        f"kjobs-test-{dead}-abc",
        f"kjobs-pytest-{dead}-def",
        f"kjobs-test-{me}-ghi",  # a live run's
        f"kjobs-pytest-{me}-jkl",
        "kjobs-test-mno12345",  # the older form: whether its owner lives is unknown
        f"other-{dead}-x",
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kubeconfig").write_text("x")
    (tmp_path / f"kjobs-test-{dead}-file").write_text("not a directory")
    removed = tempdirs.sweep(tmp_path)
    assert sorted(p.name for p in removed) == [f"kjobs-pytest-{dead}-def", f"kjobs-test-{dead}-abc"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [
            f"kjobs-test-{me}-ghi",
            f"kjobs-pytest-{me}-jkl",
            "kjobs-test-mno12345",
            f"other-{dead}-x",
            f"kjobs-test-{dead}-file",
        ]
    )


def test_a_directory_is_named_by_its_owner() -> None:
    directory = tempdirs.make(tempdirs.CLUSTER_PREFIX)
    try:
        assert directory.name.startswith(f"kjobs-test-{os.getpid()}-{start_time(os.getpid())}-")
        assert directory not in tempdirs.sweep(directory.parent)
    finally:
        directory.rmdir()
