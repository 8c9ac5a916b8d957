"""The data file when the machine runs out or its directory is cleaned: a write that cannot be stored is a 500
naming why, nothing acknowledged is lost, and an emptied file is never served as an empty cluster
(docs/exhaust41.md)."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from kjobs.api.errors import ApiError
from kjobs.store import SqliteStore
from kjobs.store.integrity import StoreDamaged
from tests.store.conftest import pod


def _names(path: Path) -> list[str]:
    with SqliteStore(str(path)) as store:
        raws, _ = store.list("pods", "ns")
        return sorted(p["metadata"]["name"] for p in raws)


def test_a_full_disk_fails_the_write_with_a_500_and_writes_resume_once_there_is_room(tmp_path: Path) -> None:
    """SQLITE_FULL (here through `max_page_count`, what SQLite answers a full disk with) fails the batch as
    kube-apiserver fails a write etcd refused: 500 InternalError naming the cause; what was acknowledged before
    and after is in the file."""
    db = tmp_path / "db"
    with SqliteStore(str(db)) as store:
        store.create("pods", "ns", "before", pod("before", "ns"))
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages}")
        big = pod("refused", "ns")
        big["metadata"]["annotations"] = {"blob": "x" * 200_000}
        with pytest.raises(ApiError) as info:
            store.create("pods", "ns", "refused", big)
        assert (info.value.code, info.value.reason) == (500, "InternalError")
        assert "storage write failed: database or disk is full" in info.value.message
        with pytest.raises(ApiError) as missing:
            store.get("pods", "ns", "refused")
        assert missing.value.code == 404
        store._conn.execute("PRAGMA max_page_count = 1073741823")
        store.create("pods", "ns", "after", pod("after", "ns"))
    assert _names(db) == ["after", "before"]


def test_an_empty_data_file_is_refused_not_served_as_a_new_cluster(tmp_path: Path) -> None:
    """A data file truncated to 0 bytes (a full disk, a copy cut short, `> kjobs.db`) held a cluster: SQLite
    takes an empty file for a new database, so before, `kjobs up` started empty over it without a word."""
    db = tmp_path / "kjobs.db"
    with SqliteStore(str(db)) as store:
        store.create("pods", "ns", "p", pod("p", "ns"))
    db.write_bytes(b"")
    with pytest.raises(StoreDamaged) as info:
        SqliteStore(str(db))
    assert not info.value.repairable
    assert "it is empty (0 bytes)" in info.value.message
    assert db.stat().st_size == 0  # left as found, for the user to restore


def test_a_new_data_file_is_made_whole_beside_and_renamed_into_place(tmp_path: Path) -> None:
    """So a data file kjobs made is never empty (what lets an empty one be called truncated)."""
    db = tmp_path / "kjobs.db"
    (tmp_path / "kjobs.db.new").write_bytes(b"left by a creation cut short")
    with SqliteStore(str(db)):
        pass
    assert not (tmp_path / "kjobs.db.new").exists()
    tables = {n for (n,) in sqlite3.connect(db).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"objects", "meta"} <= tables


def test_a_data_directory_removed_under_a_running_store_is_written_again_with_every_object(tmp_path: Path) -> None:
    """`rm -rf` of the data directory while `kjobs up` runs: before, every later write was acknowledged into the
    removed file and a restart found an empty cluster. Now the next write (or the writer's idle check) writes
    the file again from the open connection: what was stored before and after the removal survives a restart."""
    data = tmp_path / "data"
    data.mkdir()
    db = data / "kjobs.db"
    store = SqliteStore(str(db))
    try:
        store.create("pods", "ns", "before", pod("before", "ns"))
        shutil.rmtree(data)
        store.create("pods", "ns", "after", pod("after", "ns"))
        assert db.exists() and (data / "kjobs.db.lock").exists()
        assert [p.stat().st_mode & 0o777 for p in (data, db, data / "kjobs.db.lock")] == [0o700, 0o600, 0o600]
        # what a kill -9 now would leave: the file and the WAL at the path hold both (read beside the store)
        beside = sqlite3.connect(db)
        assert sorted(n for (n,) in beside.execute("SELECT name FROM objects WHERE resource = 'pods'")) == [
            "after",
            "before",
        ]
        beside.close()
        with pytest.raises(ApiError) as busy:  # the new lock is held: a second server waits
            SqliteStore(str(db))
        assert "in use by another process" in busy.value.message
    finally:
        store.close()
    assert _names(db) == ["after", "before"]


def test_a_data_directory_removed_while_no_write_comes_is_written_again_by_the_idle_check(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "kjobs.db"
    store = SqliteStore(str(db))
    try:
        store.create("pods", "ns", "p", pod("p", "ns"))
        shutil.rmtree(data)
        deadline = time.monotonic() + 15
        while not db.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert db.exists()
    finally:
        store.close()
    assert _names(db) == ["p"]


def test_a_data_file_replaced_under_a_running_store_takes_no_more_writes(tmp_path: Path) -> None:
    """Another file at the path (a backup restored, another server's): writes fail with a 500 naming it, rather
    than be acknowledged into a file no restart will read."""
    db = tmp_path / "kjobs.db"
    other = tmp_path / "other.db"
    with SqliteStore(str(other)) as elsewhere:
        elsewhere.create("pods", "ns", "theirs", pod("theirs", "ns"))
    store = SqliteStore(str(db))
    try:
        store.create("pods", "ns", "mine", pod("mine", "ns"))
        db.unlink()
        other.rename(db)
        with pytest.raises(ApiError) as info:
            store.create("pods", "ns", "late", pod("late", "ns"))
        assert info.value.code == 500
        assert "was replaced by another file" in info.value.message
    finally:
        store.close()
