"""Checksums of the SQLite store's rows, and the damage they reveal when the file is read back at start.

Every `objects` row carries `checksum`: a CRC-32 of its key (resource, namespace, name), its revision and the
encoded object, the bytes the store already has, so a write pays one CRC and no extra encode. The `meta` table
keeps the revision counter, the number of rows and the sum of their checksums, sealed by a CRC of those three:
a lost row, a row that reappears, or a flip in a counter is caught as well as a flip inside a row. SQLite's own
`PRAGMA integrity_check` (https://www.sqlite.org/pragma.html#pragma_integrity_check) catches damaged pages and
indexes that disagree with their table. etcd does the same kind of check before it serves
(`--experimental-initial-corrupt-check`, etcd's `server/etcdserver/corrupt.go`); kjobs names the damaged objects.

`PRAGMA user_version` marks a checksummed store with `FORMAT`, a value no single bit flip turns into the 0 of a
store written before checksums existed (such a store is checksummed on its first open; see `SqliteStore`).

A release from before checksums (main before b9bab5e, 2026-12-02) opens a checksummed file without complaint and
writes rows without checksums and counters without their seal: the next open would refuse those objects as
altered, and `--repair` would delete them. The trigger `GUARD` makes its writes fail instead (each of its writes is
an `INSERT ... ON CONFLICT DO UPDATE` naming no checksum, and SQLite runs BEFORE INSERT triggers before the
conflict check), so a user who goes back that far gets 503s from it and a file that today's kjobs still opens
(docs/upgrade41.md). Every checksumming release names the checksum, so none of them trips it.

A release that changes the file's format must mark it with a new `user_version` at least two bits away from
`FORMAT` (and from 0): this one refuses such a file by name (`NewerFormat`), and no `--repair` touches it, where a
value one bit away from `FORMAT` is a flipped bit, reported as damage.
"""

from __future__ import annotations

import sqlite3
import zlib
from dataclasses import dataclass

import orjson

from kjobs.api.errors import ApiError

FORMAT = 0x6B6A6F62
"""`PRAGMA user_version` of a store whose rows carry checksums ("kjob")."""

GUARD = "kjobs_rows_carry_checksums"
"""The trigger that refuses a row written without its checksum (by a kjobs release from before checksums)."""

_GUARD_SQL = (
    f"CREATE TRIGGER IF NOT EXISTS {GUARD} BEFORE INSERT ON objects WHEN NEW.checksum IS NULL BEGIN"
    " SELECT RAISE(ABORT, 'this kjobs data file carries checksums: a kjobs release from before 2026-12-02 cannot"
    " write it; upgrade kjobs'); END"
)

_DIGEST_MOD = 1 << 63  # the sum of row checksums is kept below SQLite's largest integer


def row_checksum(resource: str, namespace: str, name: str, revision: int, raw: bytes) -> int:
    """The CRC-32 of one stored row: key, revision and encoded object (every single-bit flip changes it)."""
    head = f"{resource}\0{namespace}\0{name}\0{revision}\0".encode()
    return zlib.crc32(raw, zlib.crc32(head))


def add_digest(digest: int, checksum: int) -> int:
    """`digest` with one more row's checksum in it (a sum, so two copies of one row do not cancel out)."""
    return (digest + checksum) % _DIGEST_MOD


def remove_digest(digest: int, checksum: int) -> int:
    """`digest` without one row's checksum."""
    return (digest - checksum) % _DIGEST_MOD


def seal(revision: int, count: int, digest: int) -> int:
    """The checksum of the `meta` rows: the revision counter, the number of objects and their digest."""
    return zlib.crc32(f"{revision}\0{count}\0{digest}".encode())


@dataclass(frozen=True)
class Damage:
    """One damaged thing found in the file: what it is (an object as `resource namespace/name`, or a part of the
    store), what is wrong, and the row to delete to repair it (None: repaired by re-sealing, or not at all)."""

    what: str
    problem: str
    rowid: int | None = None
    key: tuple[str, str, str] | None = None  # the object's key as its row reads

    def __str__(self) -> str:
        return f"{self.what}: {self.problem}"


class StoreDamaged(ApiError):
    """The data file is damaged: nothing of it is served. `damage` lists what was found; `repairable` says
    whether deleting the damaged objects and re-sealing the counters (`SqliteStore(..., repair=True)`) can fix
    it, or only a copy of the file can. A 503, as every other data file that cannot be opened."""

    def __init__(self, path: str, damage: list[Damage], *, repairable: bool) -> None:
        shown = [f"  {d}" for d in damage[:20]]
        if len(damage) > 20:
            shown.append(f"  ... and {len(damage) - 20} more")
        lines = "\n".join(shown)
        super().__init__(503, "ServiceUnavailable", f"cannot open the data file {path}: it is damaged\n{lines}")
        self.path = path
        self.damage = damage
        self.repairable = repairable


class NewerFormat(ApiError):
    """The data file carries another release's format marker: not damage, nothing to repair; a 503 naming it."""

    def __init__(self, path: str, version: int) -> None:
        super().__init__(
            503,
            "ServiceUnavailable",
            f"cannot open the data file {path}: its format marker (PRAGMA user_version) is {version} ({version:#x}),"
            f" not the {FORMAT} ({FORMAT:#x}) this kjobs reads: a newer kjobs wrote it (or it is not a kjobs file);"
            " run the kjobs that wrote it, or a newer one",
        )
        self.path = path
        self.version = version


def other_format(version: int) -> bool:
    """Whether `version` marks a format other than this release's, rather than `FORMAT` (or 0) with a flipped bit."""
    return (version ^ FORMAT).bit_count() > 1 and version.bit_count() > 1


def object_name(resource: str, namespace: str, name: str) -> str:
    """How a report names an object: `pods default/a`, `nodes n1`."""
    return f"{resource} {namespace}/{name}" if namespace else f"{resource} {name}"


Row = tuple[str, str, str, int, bytes]
"""One object row read back: resource, namespace, name, revision, encoded object."""


@dataclass
class Verified:
    """What `read_back` found good: the object rows, the revision counter, and the row count and digest the
    writer continues from; `repaired` lists what a repair removed or re-sealed, `migrated` how many rows of an
    earlier release's store were given checksums (None: the store had them)."""

    rows: list[Row]
    revision: int
    count: int
    digest: int
    repaired: list[Damage]
    migrated: int | None = None


_META_KEYS = ("revision", "objects", "digest", "seal")


def write_meta(conn: sqlite3.Connection, revision: int, count: int, digest: int) -> None:
    """Store the counters and their seal (inside the caller's transaction)."""
    conn.execute(
        "INSERT OR REPLACE INTO meta VALUES ('revision', ?), ('objects', ?), ('digest', ?), ('seal', ?)",
        (revision, count, digest, seal(revision, count, digest)),
    )


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the tables of an empty file, sealed and marked `FORMAT`, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(  # a rowid table, not WITHOUT ROWID: with ~3 KB rows it commits about twice as fast (measured)
        "CREATE TABLE objects (resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
        " revision INTEGER NOT NULL, data BLOB NOT NULL, checksum INTEGER, UNIQUE (resource, namespace, name))"
    )
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    write_meta(conn, 0, 0, 0)
    conn.execute(_GUARD_SQL)
    conn.execute(f"PRAGMA user_version = {FORMAT}")
    conn.execute("COMMIT")


def guard(conn: sqlite3.Connection) -> None:
    """Add `GUARD` to a checksummed file an earlier release made without it (no-op when it is there)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (GUARD,)).fetchone() is None:
        conn.execute(_GUARD_SQL)


def read_back(conn: sqlite3.Connection, path: str, *, repair: bool = False) -> Verified:
    """Check the whole file and return its objects; raise `StoreDamaged` naming what is damaged.

    Order: SQLite's page-level check (with `repair`, a `REINDEX` first fixes indexes that disagree with their
    table), the format marker, every row's checksum, then the counters against the rows. With `repair`
    damaged rows are deleted and the counters re-sealed in one transaction, and the removed objects are listed.
    A store of an earlier release (no `checksum` column, `user_version` not `FORMAT`) is checksummed in place.
    """
    reindexed = check_pages(conn, path, repair=repair)
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if other_format(version):
        raise NewerFormat(path, version)
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        pages = int(conn.execute("PRAGMA page_count").fetchone()[0])
        if pages > 1:  # a new file has at most its header page: this one's schema was lost, not never written
            lost = Damage("the file", f"it has {pages} pages but no tables (its schema page is damaged)")
            raise StoreDamaged(path, [lost], repairable=False)
        create_schema(conn)
        return Verified([], 0, 0, 0, [])
    if not {"objects", "meta"} <= tables:
        raise StoreDamaged(path, [Damage("the file", "the tables objects and meta are missing")], repairable=False)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(objects)")}
    if "checksum" not in columns:
        if version == FORMAT:  # a checksummed store whose schema text was altered
            lost = Damage("the file", "the objects table has lost its checksum column")
            raise StoreDamaged(path, [lost], repairable=False)
        return _migrate(conn, reindexed)
    damage: list[Damage] = []
    if version != FORMAT:
        damage.append(Damage("the file", f"its format marker (PRAGMA user_version) is {version}, not {FORMAT}"))
    rows, stored_sums, row_damage = read_rows(conn)
    damage += row_damage
    revision, meta_damage = check_meta(conn, len(stored_sums), stored_sums, bool(row_damage))
    damage += meta_damage
    revision = max([revision, *(row[3] for row in rows)])
    if damage and not repair:
        raise StoreDamaged(path, damage, repairable=True)
    guard(conn)
    count, digest = len(rows), 0
    for row in rows:
        digest = add_digest(digest, row_checksum(*row))
    if damage:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("DELETE FROM objects WHERE rowid = ?", [(d.rowid,) for d in damage if d.rowid is not None])
        conn.execute("DELETE FROM meta")
        write_meta(conn, revision, count, digest)
        conn.execute(f"PRAGMA user_version = {FORMAT}")
        conn.execute("COMMIT")
    return Verified(rows, revision, count, digest, reindexed + damage)


def check_pages(conn: sqlite3.Connection, path: str, *, repair: bool) -> list[Damage]:
    """SQLite's own check; an index that disagrees with its table is worth a `REINDEX` (it rebuilds the index).
    Returns what a repair fixed."""
    problems = integrity_problems(conn)
    if not problems:
        return []
    indexes = any("index" in p for p in problems)
    if repair and indexes:
        conn.execute("REINDEX")
        fixed = [Damage("the file", f"{p} (indexes rebuilt)") for p in problems]
        problems = integrity_problems(conn)
        if not problems:
            return fixed
        indexes = False
    raise StoreDamaged(path, [Damage("the file", p) for p in problems], repairable=indexes)


def integrity_problems(conn: sqlite3.Connection) -> list[str]:
    """What `PRAGMA integrity_check` reports (none: the pages and indexes are sound)."""
    found = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)")]
    if found == ["ok"]:
        return []
    return [line for p in found for line in p.splitlines() if not line.startswith("*** in database")]


def read_rows(conn: sqlite3.Connection) -> tuple[list[Row], list[int], list[Damage]]:
    """The good rows, every row's stored checksum, and the damaged rows (named as they read)."""
    rows: list[Row] = []
    sums: list[int] = []
    damage: list[Damage] = []
    seen: dict[tuple[str, str, str], int] = {}
    for rowid, resource, namespace, name, revision, data, checksum in conn.execute(
        "SELECT rowid, resource, namespace, name, revision, data, checksum FROM objects"
    ):
        sums.append(checksum if isinstance(checksum, int) else 0)
        what = object_name(str(resource), str(namespace), str(name))
        typed = (
            isinstance(resource, str)
            and isinstance(namespace, str)
            and isinstance(name, str)
            and isinstance(revision, int)
            and isinstance(data, bytes)
        )
        if not typed or checksum != row_checksum(resource, namespace, name, revision, data):
            named = isinstance(resource, str) and isinstance(namespace, str) and isinstance(name, str)
            key = (resource, namespace, name) if named else None
            problem = _UNCHECKSUMMED if checksum is None and typed else _mismatch(data, namespace, name)
            damage.append(Damage(what, problem, rowid, key))
            continue
        key = (resource, namespace, name)
        if key in seen:
            damage.append(Damage(what, "stored twice (a damaged index let a second copy in)", rowid, key))
            continue
        seen[key] = rowid
        rows.append((resource, namespace, name, revision, data))
    return rows, sums, damage


_UNCHECKSUMMED = (
    "it has no checksum (written by a kjobs release from before 2026-12-02, which cannot keep this file's"
    " checksums; other objects it changed read as altered)"
)


def _mismatch(data: object, namespace: object, name: object) -> str:
    """Why a row is damaged, with the name its object gives itself when that differs from the row's key."""
    problem = "its checksum does not match (the row was altered)"
    if isinstance(data, bytes):
        try:
            meta = orjson.loads(data).get("metadata") or {}
            own = (meta.get("namespace", ""), meta.get("name"))
        except (ValueError, AttributeError):
            return problem
        if own != (namespace, name) and isinstance(own[1], str):
            problem += (
                f"; its object calls itself {own[0]}/{own[1]}" if own[0] else f"; its object calls itself {own[1]}"
            )
    return problem


def check_meta(conn: sqlite3.Connection, count: int, sums: list[int], rows_damaged: bool) -> tuple[int, list[Damage]]:
    """The revision counter (0 if unreadable) and what is wrong with the counters."""
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    values = [meta.get(k) for k in _META_KEYS]
    revision = values[0] if isinstance(values[0], int) and values[0] >= 0 else 0
    if not all(isinstance(v, int) for v in values) or values[3] != seal(*values[:3]):  # type: ignore[arg-type]
        return revision, [Damage("the store's counters (table meta)", "their seal does not match")]
    digest = 0
    for checksum in sums:
        digest = add_digest(digest, checksum)
    if values[1] != count:
        problem = f"the counters say {values[1]} objects but the file holds {count}: an object was lost or added"
        return revision, [Damage("the store's objects", problem)]
    if values[2] != digest and not rows_damaged:
        return revision, [Damage("the store's objects", "their checksums do not add up: an object was replaced")]
    return revision, []


def _migrate(conn: sqlite3.Connection, reindexed: list[Damage]) -> Verified:
    """Give every row of an earlier release's store its checksum and seal the counters, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("ALTER TABLE objects ADD COLUMN checksum INTEGER")
    found = conn.execute("SELECT rowid, resource, namespace, name, revision, data FROM objects").fetchall()
    rows: list[Row] = []
    digest = 0
    updates = []
    for rowid, resource, namespace, name, revision, data in found:
        row: Row = (resource, namespace, name, int(revision), bytes(data))
        checksum = row_checksum(*row)
        updates.append((checksum, rowid))
        digest = add_digest(digest, checksum)
        rows.append(row)
    conn.executemany("UPDATE objects SET checksum = ? WHERE rowid = ?", updates)
    stored = conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()
    revision = max([int(stored[0]) if stored else 0, *(row[3] for row in rows)])
    conn.execute("DELETE FROM meta")
    write_meta(conn, revision, len(rows), digest)
    conn.execute(_GUARD_SQL)
    conn.execute(f"PRAGMA user_version = {FORMAT}")
    conn.execute("COMMIT")
    return Verified(rows, revision, len(rows), digest, reindexed, migrated=len(rows))


def compare(
    conn: sqlite3.Connection, served: dict[tuple[str, str, str], int]
) -> tuple[list[Damage], dict[tuple[str, str, str], str]]:
    """Check the file as it is now (in a read transaction the caller opened) against what the store serves
    (key -> revision, taken while no write was in flight): what is damaged, and which served objects it hits."""
    damage = [Damage("the file", p) for p in integrity_problems(conn)]
    rows, sums, row_damage = read_rows(conn)
    damage += row_damage
    damage += check_meta(conn, len(sums), sums, bool(row_damage))[1]
    hit = {d.key: d.problem for d in row_damage if d.key is not None and d.key in served}
    on_disk = {(r, ns, n): rev for r, ns, n, rev, _raw in rows}
    for key, revision in served.items():
        found = on_disk.get(key)
        if key in hit or found == revision:
            continue
        problem = "missing from the file" if found is None else f"the file holds revision {found}, not {revision}"
        damage.append(Damage(object_name(*key), problem, key=key))
        hit[key] = problem
    return damage, hit
