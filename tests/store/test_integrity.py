"""A damaged data file is refused at open, naming what is damaged; nothing altered is served, nothing lost silently.

Damage is made the way a disk makes it: bytes of the file changed behind kjobs' back (through sqlite3 for a
chosen row, or as single-bit flips anywhere in the file).
"""

from __future__ import annotations

import logging
import random
import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest

from kjobs.api.errors import ApiError
from kjobs.store import SqliteStore
from kjobs.store.integrity import FORMAT, Damage, NewerFormat, StoreDamaged
from tests.store.conftest import pod, rv


def _filled(path: Path, n: int = 3) -> dict[tuple[str, str, str], bytes]:
    """A store with `n` pods in `ns` and a node; returns every object's stored bytes by key."""
    with SqliteStore(str(path)) as store:
        for i in range(n):
            store.create("pods", "ns", f"p{i}", pod(f"p{i}", "ns", app="x"))
        store.create("nodes", "", "n1", {"metadata": {"name": "n1"}})
        store.update("pods", "ns", "p0", pod("p0", "ns", app="y"))
        return _contents(store)


def _contents(store: SqliteStore) -> dict[tuple[str, str, str], bytes]:
    out: dict[tuple[str, str, str], bytes] = {}
    for resource in ("pods", "nodes"):
        raws, _ = store.list_raw(resource)
        for raw in raws:
            meta = orjson.loads(raw)["metadata"]
            out[(resource, meta.get("namespace", ""), meta["name"])] = raw
    return out


def _edit(path: Path, sql: str, *args: object) -> None:
    """Change the file behind the store's back (kjobs is not running)."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, args)
    conn.close()


def _refused(path: Path) -> StoreDamaged:
    with pytest.raises(StoreDamaged) as info:
        SqliteStore(str(path))
    assert info.value.code == 503
    return info.value


def test_one_flipped_byte_in_an_objects_json_is_reported_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _filled(db)
    _edit(db, "UPDATE objects SET data = CAST(replace(data, 'busybox', 'busyboy') AS BLOB) WHERE name = 'p1'")
    err = _refused(db)
    assert [str(d) for d in err.damage] == ["pods ns/p1: its checksum does not match (the row was altered)"]
    assert err.repairable
    assert err.message.startswith(f"cannot open the data file {db}: it is damaged\n  pods ns/p1: ")


def test_a_flipped_name_is_reported_with_the_name_its_object_gives(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _filled(db)
    _edit(db, "UPDATE objects SET name = 'p3' WHERE name = 'p1'")  # '1' and '3' differ in one bit
    err = _refused(db)
    assert [str(d) for d in err.damage] == [
        "pods ns/p3: its checksum does not match (the row was altered); its object calls itself ns/p1"
    ]


def test_a_flipped_revision_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _filled(db)
    _edit(db, "UPDATE objects SET revision = (revision | 4) - (revision & 4) WHERE name = 'n1'")
    assert [d.what for d in _refused(db).damage] == ["nodes n1"]


def test_a_flipped_revision_counter_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _filled(db)
    _edit(db, "UPDATE meta SET value = (value | 1) - (value & 1) WHERE key = 'revision'")
    assert [str(d) for d in _refused(db).damage] == ["the store's counters (table meta): their seal does not match"]


def test_a_lost_object_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _filled(db)
    _edit(db, "DELETE FROM objects WHERE name = 'p2'")
    assert [str(d) for d in _refused(db).damage] == [
        "the store's objects: the counters say 4 objects but the file holds 3: an object was lost or added"
    ]


def test_a_replaced_object_with_a_valid_checksum_is_reported(tmp_path: Path) -> None:
    """A row copied from another store (or an older copy of this one) checks out alone; the digest does not."""
    db, other = tmp_path / "db", tmp_path / "other"
    _filled(db)
    with SqliteStore(str(other)) as store:
        store.create("pods", "ns", "p9", pod("p9", "ns"))
    row = sqlite3.connect(other).execute("SELECT revision, data, checksum FROM objects").fetchone()
    _edit(db, "UPDATE objects SET name = 'p9', revision = ?, data = ?, checksum = ? WHERE name = 'p2'", *row)
    assert [str(d) for d in _refused(db).damage] == [
        "the store's objects: their checksums do not add up: an object was replaced"
    ]


def test_repair_deletes_the_damaged_objects_and_serves_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "db"
    before = _filled(db)
    _edit(db, "UPDATE objects SET data = CAST(replace(data, 'busybox', 'busyboy') AS BLOB) WHERE name = 'p1'")
    _edit(db, "UPDATE meta SET value = value + 1 WHERE key = 'objects'")
    with SqliteStore(str(db), repair=True) as store:
        assert [str(d) for d in store.repaired] == [
            "pods ns/p1: its checksum does not match (the row was altered)",
            "the store's counters (table meta): their seal does not match",
        ]
        del before[("pods", "ns", "p1")]
        assert _contents(store) == before
        top = max(rv(orjson.loads(raw)) for raw in before.values())
        assert rv(store.create("pods", "ns", "p1", pod("p1", "ns"))) > top
    with SqliteStore(str(db)) as store:  # repaired for good
        assert store.repaired == []
        assert store.exists("pods", "ns", "p1")


def test_a_store_of_an_earlier_release_is_checksummed_on_first_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The schema kjobs wrote before checksums: no checksum column, no counters but the revision."""
    db = tmp_path / "db"
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE objects (resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
        " revision INTEGER NOT NULL, data BLOB NOT NULL, UNIQUE (resource, namespace, name))"
    )
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    obj = pod("old", "ns")
    obj["metadata"]["resourceVersion"] = "7"
    conn.execute("INSERT INTO objects VALUES ('pods', 'ns', 'old', 7, ?)", (orjson.dumps(obj),))
    conn.execute("INSERT INTO meta VALUES ('revision', 9)")
    conn.commit()
    conn.close()
    with caplog.at_level(logging.WARNING), SqliteStore(str(db)) as store:
        assert store.get("pods", "ns", "old") == obj
        assert store.revision == 9
    assert f"checksummed 1 objects of {db}, written by an earlier kjobs" in caplog.messages
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == FORMAT
    caplog.clear()
    with SqliteStore(str(db)) as store:  # checksummed once
        assert rv(store.create("pods", "ns", "new", pod("new", "ns"))) == 10
    assert caplog.messages == []
    _edit(db, "UPDATE objects SET data = CAST(replace(data, 'busybox', 'busyboy') AS BLOB) WHERE name = 'old'")
    assert [d.what for d in _refused(db).damage] == ["pods ns/old"]


def test_an_index_that_disagrees_with_its_table_is_refused_and_reindexed_by_repair(tmp_path: Path) -> None:
    db = tmp_path / "db"
    before = _filled(db)
    conn = sqlite3.connect(db)
    index_root = conn.execute("SELECT rootpage FROM sqlite_master WHERE type = 'index'").fetchone()[0]
    conn.close()
    raw = bytearray(db.read_bytes())
    page = 4096 * (index_root - 1)
    cells = int.from_bytes(raw[page + 3 : page + 5], "big")
    raw[page + 3 : page + 5] = (cells - 1).to_bytes(2, "big")  # the index page forgets its last entry
    db.write_bytes(bytes(raw))
    err = _refused(db)
    assert err.repairable and all(d.what == "the file" for d in err.damage)
    assert any("index" in d.problem for d in err.damage)
    with SqliteStore(str(db), repair=True) as store:
        assert [d.problem for d in store.repaired] == [f"{d.problem} (indexes rebuilt)" for d in err.damage]
        assert _contents(store) == before
        store.update("pods", "ns", "p1", pod("p1", "ns", app="z"))  # the repaired index finds the row
    with SqliteStore(str(db)) as store:
        assert len(_contents(store)) == len(before)


def test_random_single_bit_flips_are_refused_or_change_nothing(tmp_path: Path) -> None:
    """The issue's experiment, seeded: every flip either refuses to open clearly, or opens the very same store
    (a flip in unused bytes); never altered objects served, never an object lost under its name. The file is
    also written to after opening and read back, so a flip that only bites later is caught too."""
    original = tmp_path / "original"
    before = _filled(original, n=12)
    size = original.stat().st_size
    rng = random.Random(13)
    outcomes = {"refused": 0, "unchanged": 0}
    for trial in range(120):
        copy = tmp_path / f"copy{trial}"
        shutil.copyfile(original, copy)
        raw = bytearray(copy.read_bytes())
        bit = rng.randrange(size * 8)
        raw[bit // 8] ^= 1 << (bit % 8)
        copy.write_bytes(bytes(raw))
        try:
            store = SqliteStore(str(copy))
        except ApiError as err:
            assert err.code == 503 and err.message.startswith(f"cannot open the data file {copy}"), err.message
            outcomes["refused"] += 1
            continue
        with store:
            assert _contents(store) == before, f"bit {bit} altered the store silently"
            for key in before:
                if key[0] == "pods":
                    store.update(*key, pod(key[2], "ns", app="after"))
            store.create("pods", "ns", "fresh", pod("fresh", "ns"))
            after = _contents(store)
        with SqliteStore(str(copy)) as reopened:
            assert _contents(reopened) == after, f"bit {bit}: the writes after the flip did not read back"
        outcomes["unchanged"] += 1
    assert outcomes["refused"] > 0 and outcomes["unchanged"] > 0, outcomes


def test_damage_done_while_running_is_found_by_verify_and_read_as_a_500_naming_the_object(tmp_path: Path) -> None:
    db = tmp_path / "db"
    with SqliteStore(str(db)) as store:
        for name in ("a", "b"):
            store.create("pods", "ns", name, pod(name, "ns"))
        assert store.verify() == []
        _edit(db, "UPDATE objects SET data = CAST(replace(data, 'busybox', 'busyboy') AS BLOB) WHERE name = 'b'")
        assert [str(d) for d in store.verify()] == ["pods ns/b: its checksum does not match (the row was altered)"]
        expected = (
            "Internal error occurred: StorageError: corrupt object, Code: 7, Key: /registry/pods/ns/b,"
            " ResourceVersion: 0, AdditionalErrorMsg: its checksum does not match (the row was altered)"
        )
        for read in (
            lambda: store.get("pods", "ns", "b"),
            lambda: store.list("pods"),
            lambda: store.list_page("pods", "ns", limit=1),
            lambda: store.watch("pods", since=None),
        ):
            with pytest.raises(ApiError) as info:
                read()
            assert (info.value.code, info.value.reason, info.value.message) == (500, "InternalError", expected)
        assert store.get("pods", "ns", "a")["metadata"]["name"] == "a"  # the rest is served
        assert store.list("pods", "other") == ([], store.revision)
        store.update("pods", "ns", "b", pod("b", "ns", healed="yes"))  # the row is written whole again
        assert store.get("pods", "ns", "b")["metadata"]["labels"] == {"healed": "yes"}
        assert store.verify() == []


def test_verify_finds_a_row_lost_while_running(tmp_path: Path) -> None:
    db = tmp_path / "db"
    with SqliteStore(str(db)) as store:
        store.create("pods", "ns", "a", pod("a", "ns"))
        _edit(db, "DELETE FROM objects WHERE name = 'a'")
        assert [str(d) for d in store.verify()] == [
            "the store's objects: the counters say 1 objects but the file holds 0: an object was lost or added",
            "pods ns/a: missing from the file",
        ]
        with pytest.raises(ApiError) as info:
            store.get("pods", "ns", "a")
        assert info.value.code == 500 and "Key: /registry/pods/ns/a" in info.value.message


def test_a_damaged_object_is_a_kubernetes_status_500_over_http(tmp_path: Path) -> None:
    import httpx

    from kjobs.server.app import create_app
    from kjobs.server.runner import serve

    db = tmp_path / "db"
    with SqliteStore(str(db)) as store, serve(store, app=create_app(store)) as url:
        nodes = f"{url}/api/v1/nodes"
        assert httpx.post(nodes, json={"metadata": {"name": "n1"}}).status_code == 201
        _edit(db, "UPDATE objects SET revision = revision + 1 WHERE name = 'n1'")
        assert [d.what for d in store.verify()] == ["nodes n1"]
        for got in (httpx.get(f"{nodes}/n1"), httpx.get(nodes)):
            assert got.status_code == 500
            status = got.json()
            assert (status["kind"], status["reason"], status["code"]) == ("Status", "InternalError", 500)
            assert "StorageError: corrupt object, Code: 7, Key: /registry/nodes/n1" in status["message"]


def test_a_file_whose_schema_page_lost_its_tables_is_refused_not_started_afresh(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _filled(db)
    raw = bytearray(db.read_bytes())
    raw[103:105] = b"\0\0"  # page 1's b-tree header (after the 100-byte file header): no cells, so no tables
    db.write_bytes(bytes(raw))
    assert all(d.what == "the file" for d in _refused(db).damage)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0  # nothing was written over it
    conn.close()


def test_verify_reads_a_file_whose_path_needs_quoting_in_a_uri(tmp_path: Path) -> None:
    db = tmp_path / "my data?#%" / "db"
    db.parent.mkdir()
    with SqliteStore(str(db)) as store:
        store.create("pods", "ns", "a", pod("a", "ns"))
        assert store.verify() == []
        _edit(db, "UPDATE objects SET revision = revision + 1 WHERE name = 'a'")
        assert [d.what for d in store.verify()] == ["pods ns/a"]


def test_a_running_store_checks_its_file_every_scrub_interval_and_reports_damage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import threading

    db = tmp_path / "db"
    checked = threading.Event()

    class Watched(SqliteStore):
        def verify(self) -> list[Damage]:
            found = super().verify()
            if found:
                checked.set()
            return found

    with caplog.at_level(logging.ERROR), Watched(str(db), scrub_interval=0.01) as store:
        store.create("pods", "ns", "a", pod("a", "ns"))
        _edit(db, "UPDATE objects SET revision = revision + 1 WHERE name = 'a'")
        assert checked.wait(10)
        with pytest.raises(ApiError):
            store.get("pods", "ns", "a")
    assert f"the data file {db} is damaged: pods ns/a: its checksum does not match (the row was altered)" in (
        caplog.messages
    )


_PRE_CHECKSUM_UPSERT = (  # the one write a release from before checksums (main before b9bab5e) makes, verbatim
    "INSERT INTO objects (resource, namespace, name, revision, data) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (resource, namespace, name) DO UPDATE SET revision = excluded.revision, data = excluded.data"
)


def _write_as_a_release_before_checksums(db: Path, name: str, revision: int) -> None:
    """One write batch as that release commits it: its upsert, then its revision counter, unsealed."""
    obj = pod(name, "ns", app="downgraded")
    obj["metadata"]["resourceVersion"] = str(revision)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_PRE_CHECKSUM_UPSERT, ("pods", "ns", name, revision, orjson.dumps(obj)))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('revision', ?)", (revision,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["p0", "brand-new"])
def test_a_release_from_before_checksums_cannot_write_a_checksummed_store(tmp_path: Path, name: str) -> None:
    """A user who goes back to a release from before checksums: its writes fail (it answers 503), and the file
    opens afterwards as it was, instead of being refused with the objects it wrote named as altered (and deleted
    by `--repair`). Both an update (p0) and a create."""
    db = tmp_path / "db"
    before = _filled(db)
    with pytest.raises(sqlite3.IntegrityError, match="a kjobs release from before 2026-12-02 cannot write it"):
        _write_as_a_release_before_checksums(db, name, 50)
    with SqliteStore(str(db)) as store:
        assert _contents(store) == before
        assert store.repaired == []


def test_a_checksummed_store_an_earlier_release_made_without_the_guard_gets_it_at_open(tmp_path: Path) -> None:
    """Stores of the releases between checksums and the guard (stops 22-40) are guarded from their first open."""
    db = tmp_path / "db"
    before = _filled(db)
    _edit(db, "DROP TRIGGER kjobs_rows_carry_checksums")
    with SqliteStore(str(db)):
        pass
    with pytest.raises(sqlite3.IntegrityError, match="cannot write it"):
        _write_as_a_release_before_checksums(db, "p1", 50)
    with SqliteStore(str(db)) as store:
        assert _contents(store) == before


def test_a_row_a_release_from_before_checksums_wrote_is_named_for_what_it_is(tmp_path: Path) -> None:
    """A file such a release wrote before the guard existed: the refusal says why the row has no checksum."""
    db = tmp_path / "db"
    _filled(db)
    _edit(db, "DROP TRIGGER IF EXISTS kjobs_rows_carry_checksums")
    _write_as_a_release_before_checksums(db, "brand-new", 50)
    found = {d.what: d.problem for d in _refused(db).damage}
    assert found["pods ns/brand-new"].startswith("it has no checksum (written by a kjobs release from before")


@pytest.mark.parametrize("repair", [False, True])
def test_a_store_of_a_newer_format_is_refused_by_name_and_not_repaired(tmp_path: Path, repair: bool) -> None:
    """Another release's format marker is no flipped bit: refused as such, even with `repair`, the file untouched."""
    db = tmp_path / "db"
    _filled(db)
    _edit(db, f"PRAGMA user_version = {FORMAT + 0x100}")
    before = db.read_bytes()
    with pytest.raises(NewerFormat) as info:
        SqliteStore(str(db), repair=repair)
    assert info.value.code == 503 and info.value.version == FORMAT + 0x100
    assert db.read_bytes() == before
    _edit(db, f"PRAGMA user_version = {FORMAT ^ 0x400}")  # one bit from FORMAT: damage, as before
    assert [d.what for d in _refused(db).damage] == ["the file"]
