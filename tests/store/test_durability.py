"""SqliteStore durability: reopen, failed commits, group commit, exclusive open, and kill -9 mid-stream."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kjobs.api.errors import ApiError
from kjobs.store import DB_FILE, SqliteStore, open_store
from kjobs.store.base import Key
from kjobs.store.events import Record
from tests.store.conftest import pod, rv


def test_reopen_restores_objects_and_revision(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    with SqliteStore(path) as store:
        store.create("pods", "ns", "a", pod("a", "ns", x="1"))
        job = store.create("jobs.batch", "ns", "j", {"metadata": {"name": "j", "namespace": "ns"}})
        store.update("pods", "ns", "a", pod("a", "ns", x="2"))
        newest = store.create("pods", "ns", "b", pod("b", "ns"))
        gone = store.delete("pods", "ns", "b")  # the newest object is gone; its revision must not be reused
        before = store.list("pods")
    with SqliteStore(path) as store:
        assert store.revision == rv(gone) > rv(newest)
        assert store.list("pods") == before
        assert store.get("jobs.batch", "ns", "j") == job
        assert rv(store.create("pods", "ns", "c", pod("c", "ns"))) == rv(gone) + 1


def test_watch_after_reopen_cannot_reach_before_it(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    with SqliteStore(path) as store:
        for i in range(3):
            store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns"))
    with SqliteStore(path) as store:
        with pytest.raises(ApiError) as info:
            store.watch("pods", since=1)
        assert info.value.message == "too old resource version: 1 (3)"
        with store.watch("pods", since=3) as w:
            store.delete("pods", "ns", "p0")
            ev = w.next(10)
            assert ev is not None and ev.type == "DELETED"


def test_a_failed_commit_acknowledges_nothing_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "db")
    store = SqliteStore(path)
    store.create("pods", "ns", "a", pod("a", "ns"))
    w = store.watch("pods", since=store.revision)
    real = SqliteStore._persist

    def broken(self: SqliteStore, final: dict[Key, Record | None], revision: int) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(SqliteStore, "_persist", broken)
    with pytest.raises(ApiError) as info:
        store.create("pods", "ns", "b", pod("b", "ns"))
    assert (info.value.code, info.value.reason) == (500, "InternalError")
    assert "disk on fire" in info.value.message
    assert store.revision == 1
    assert [o["metadata"]["name"] for o in store.list("pods")[0]] == ["a"]
    assert w.next(0) is None

    monkeypatch.setattr(SqliteStore, "_persist", real)
    b = store.create("pods", "ns", "b", pod("b", "ns"))
    assert rv(b) == 2
    ev = w.next(10)
    assert ev is not None and rv(ev.object) == 2
    store.close()
    with SqliteStore(path) as reopened:
        assert [o["metadata"]["name"] for o in reopened.list("pods")[0]] == ["a", "b"]


def test_concurrent_writers_share_commits(tmp_path: Path) -> None:
    threads, per_thread = 16, 20
    with SqliteStore(str(tmp_path / "db")) as store:

        def write(t: int) -> None:
            for i in range(per_thread):
                store.create("pods", "ns", f"t{t}-{i}", pod(f"t{t}-{i}", "ns"))

        workers = [threading.Thread(target=write, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=120)
        stats = store.stats()
    assert stats.revision == stats.committed_changes == threads * per_thread
    assert stats.objects == {"pods": threads * per_thread}
    assert stats.commits < threads * per_thread


def test_a_second_process_cannot_open_the_same_file(tmp_path: Path) -> None:
    path = str(tmp_path / "db")
    code = f"from kjobs.store import SqliteStore\nSqliteStore({path!r})\n"
    with SqliteStore(path):
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert child.returncode != 0
        assert "is in use by another process" in child.stderr
    # released on close
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


def test_writes_after_close_are_refused(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "db"))
    store.close()
    with pytest.raises(ApiError) as info:
        store.create("pods", "ns", "a", pod("a", "ns"))
    assert info.value.code == 503


def test_open_store_picks_the_backend(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with open_store(str(data)) as store:
        assert isinstance(store, SqliteStore)
        store.create("pods", "ns", "a", pod("a", "ns"))
    assert (data / DB_FILE).exists()
    with open_store(None) as memory:
        assert not isinstance(memory, SqliteStore)


@pytest.mark.e2e
def test_kill_minus_nine_loses_no_acknowledged_write(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("writer_child.py")), data, "8"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert child.stdout is not None
    acked: dict[str, int] = {}
    deadline = time.monotonic() + 60
    try:
        assert child.stdout.readline().strip() == "ready"
        while len(acked) < 300 and time.monotonic() < deadline:
            line = child.stdout.readline()
            assert line, "writer exited early"
            text_rv, name = line.split()
            acked[name] = max(acked.get(name, 0), int(text_rv))
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    # lines written before the kill but not yet read are acknowledged too
    for line in child.stdout.read().splitlines():
        if line.strip():
            text_rv, name = line.split()
            acked[name] = max(acked.get(name, 0), int(text_rv))
    assert len(acked) >= 300
    with open_store(data) as store:
        for name, revision in acked.items():
            stored = store.get("pods", "ns", name)
            assert rv(stored) >= revision, name
        highest = max(acked.values())
        assert store.revision >= highest
        fresh = store.create("pods", "ns", "after-restart", pod("after-restart", "ns"))
        assert rv(fresh) > highest


def _garbage_file(directory: Path) -> Path:
    path = directory / "db"
    path.write_bytes(b"not a database" * 100)
    return path


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(lambda d: d / "missing" / "db", "cannot open the data file", id="missing-directory"),
        pytest.param(
            lambda d: (d / "db").write_bytes(b"not a database" * 100) and d / "db", "cannot open", id="garbage"
        ),
    ],
)
def test_unusable_data_file_is_a_clean_error(tmp_path: Path, setup: Callable[[Path], Path], message: str) -> None:
    path = setup(tmp_path)
    with pytest.raises(ApiError) as info:
        SqliteStore(str(path))
    assert info.value.code == 503
    assert message in info.value.message
