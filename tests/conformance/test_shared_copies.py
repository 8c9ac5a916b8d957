"""The repository's copies of shared material are the shared originals, when those are beside the checkout.

The conformance corpus (`tests/conformance/corpus/`) and the kubectl acceptance script
(`tests/e2e/kubectl/acceptance.sh`) are maintained in `../shared`; the copies let a fresh clone run every test.
When `../shared` exists and a file there differs from (or is missing in) the copy, this fails, so an update of
the shared material is noticed and copied in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.corpus import IN_REPO, REPO_ROOT, SHARED

_COPIES = [
    (SHARED / "conformance", IN_REPO),
    (SHARED / "kubectl", REPO_ROOT / "tests" / "e2e" / "kubectl"),
]


def differences(origin: Path, copy: Path) -> list[str]:
    """Names of the files of `origin` that `copy` lacks or holds with other bytes, and files only in `copy`."""
    theirs = {p.name: p for p in origin.iterdir() if p.is_file()}
    ours = {p.name: p for p in copy.iterdir() if p.is_file()}
    out = [name for name in sorted(theirs) if name not in ours or ours[name].read_bytes() != theirs[name].read_bytes()]
    return out + [f"{name} (only in the copy)" for name in sorted(set(ours) - set(theirs))]


@pytest.mark.parametrize(("origin", "copy"), _COPIES, ids=["conformance", "kubectl"])
def test_the_copy_is_the_shared_original(origin: Path, copy: Path) -> None:
    assert copy.is_dir() and any(copy.iterdir()), f"{copy} is part of the repository"
    if not origin.is_dir():
        pytest.skip(f"no {origin} beside the checkout: the copy is all there is")
    stale = differences(origin, copy)
    assert not stale, f"{origin} changed: copy {stale} into {copy}"


def test_a_changed_or_missing_file_is_reported(tmp_path: Path) -> None:
    origin, copy = tmp_path / "origin", tmp_path / "copy"
    origin.mkdir()
    copy.mkdir()
    (origin / "a.json").write_text("1")
    (copy / "a.json").write_text("1")
    assert differences(origin, copy) == []
    (origin / "a.json").write_text("2")
    (origin / "b.json").write_text("3")
    (copy / "old.json").write_text("4")
    assert differences(origin, copy) == ["a.json", "b.json", "old.json (only in the copy)"]
