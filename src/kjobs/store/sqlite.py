"""`SqliteStore`: the durable store, one SQLite file in WAL mode written by one group-committing thread.

SQLite holds the latest state of every object plus the revision counter (table `meta`); reads are served
from the in-memory index the base class keeps, which is rebuilt from the file on open. The writer thread
takes every write waiting in its queue, applies them as one batch (`Store._apply`: evaluate, one
transaction with `synchronous=FULL`, then publish) and acknowledges them all, so concurrent writers share one
fsync instead of paying one each. A caller learns of success only after COMMIT returned; a process killed at
any moment loses at most writes nobody was told about, and on reopen the revision counter resumes from the
largest revision ever committed (kept in `meta` even when that object was since deleted).

Every row carries a checksum and `meta` a sealed count and digest of them (`kjobs.store.integrity`); the open
reads the whole file back and refuses it (`StoreDamaged`, naming the damaged objects) unless everything checks
out, or, with `repair`, deletes the damaged objects first. A store written before checksums existed is
checksummed on its first open, with a warning in the log. Once open, reads never touch the file again.

Async callers get an asyncio future resolved from the writer thread with `loop.call_soon_threadsafe` (one
call per loop per batch). An exclusive `flock` on `<db>.lock` keeps a second process from opening the same
file.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import fcntl
import logging
import os
import queue
import sqlite3
import threading
from pathlib import Path
from typing import IO

import orjson

from kjobs.api.errors import ApiError
from kjobs.store.base import DEFAULT_HISTORY, Key, Op, Store
from kjobs.store.events import Record
from kjobs.store.integrity import (
    Damage,
    StoreDamaged,
    add_digest,
    compare,
    create_schema,
    object_name,
    read_back,
    remove_digest,
    row_checksum,
    write_meta,
)
from kjobs.store.packing import COLD_AFTER, PACK_ABOVE
from kjobs.store.watch import DEFAULT_MAX_QUEUE

MAX_BATCH = 2000
"""Most writes committed in one transaction."""

SUMS_KEPT = 16_384
"""Row checksums remembered per generation (`SqliteStore._sums`). A write replaces its object's entry, so the two
generations hold the current row's checksum of the 16,384–32,768 objects written last (a Job's running pods at a
parallelism of thousands), for at most about 4 MB."""

FILE_CHECK_INTERVAL = 2.0
"""Seconds the writer thread waits for a write before it checks that the data file is still there (each batch
checks too, with one `stat`)."""

SCRUB_INTERVAL = 600.0
"""Seconds between two `verify` passes of a running store (`scrub_interval`); a pass over 10,000 objects reads
about 40 MB and takes a few tenths of a second, without holding up writes."""

_UPSERT = (
    "INSERT INTO objects (resource, namespace, name, revision, data, checksum) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (resource, namespace, name) DO UPDATE"
    " SET revision = excluded.revision, data = excluded.data, checksum = excluded.checksum"
)

_STOP = object()

log = logging.getLogger(__name__)


def _unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


_ENVIRONMENT = ("unable to open", "readonly", "locked", "disk I/O error", "disk is full", "out of memory")
"""SQLite errors that say the file could not be used, not that its content is damaged."""


def _environmental(err: sqlite3.Error) -> bool:
    return any(words in str(err) for words in _ENVIRONMENT)


def _as_damage(path: str, err: Exception) -> StoreDamaged:
    """What SQLite could not read ("file is not a database", "malformed database schema", ...) as damage."""
    if isinstance(err, UnicodeDecodeError):  # SQLite's own message quoted damaged schema text
        return StoreDamaged(path, [Damage("the file", "its schema is damaged (not UTF-8)")], repairable=False)
    return StoreDamaged(path, [Damage("the file", str(err))], repairable=False)


def _resolve_all(futures: list[asyncio.Future[None]]) -> None:
    for fut in futures:
        if not fut.done():
            fut.set_result(None)


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def _file_id(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, None when there is none: which file the path names now."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _durable_rename(source: str, target: str) -> None:
    """Rename `source` (written and closed) over `target`, both made durable: the file, then its directory."""
    fd = os.open(source, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(source, target)
    directory = os.open(os.path.dirname(os.path.abspath(target)), os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _create(path: str) -> None:
    """Make a new data file with its tables, whole or not at all: written beside it, then renamed into place.
    So a data file kjobs made is never empty, and an empty one (`_refuse_empty`) was truncated."""
    fresh = path + ".new"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(fresh)  # a creation cut short
    try:
        os.close(os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))  # SQLite's get its mode
        conn = _connect(fresh)
        try:
            create_schema(conn)
        finally:
            conn.close()  # checkpoints the tables into the file and removes its WAL
        _durable_rename(fresh, path)
    except BaseException:  # no room for it (a full disk): nothing is left behind
        with contextlib.suppress(OSError):
            os.unlink(fresh)
        raise


def _refuse_empty(path: str) -> None:
    """A data file of 0 bytes, with no WAL holding its pages, lost what it held (truncated: a full disk, a copy
    cut short, `> kjobs.db`): refused as damaged, never served as an empty cluster over the user's objects.
    (SQLite itself takes an empty file for a new database.)"""
    try:
        if os.path.getsize(path) != 0 or os.path.getsize(path + "-wal") != 0:
            return
    except FileNotFoundError:
        if not os.path.lexists(path):
            return
    lost = Damage("the file", "it is empty (0 bytes): it was truncated, and the objects it held are gone")
    raise StoreDamaged(path, [lost], repairable=False)


class SqliteStore(Store):
    """A `Store` persisted to one SQLite database file (created if missing)."""

    def __init__(
        self,
        path: str,
        *,
        history_size: int = DEFAULT_HISTORY,
        watch_queue: int = DEFAULT_MAX_QUEUE,
        max_batch: int = MAX_BATCH,
        repair: bool = False,
        scrub_interval: float | None = None,
        cold_after: int = COLD_AFTER,
        pack_above: int = PACK_ABOVE,
    ) -> None:
        super().__init__(
            history_size=history_size, watch_queue=watch_queue, cold_after=cold_after, pack_above=pack_above
        )
        self.path = path
        self._max_batch = max_batch
        self._replaced = False
        """The path names another file than the one opened: no write is stored from then on."""
        self.repaired: list[Damage] = []
        """What `repair` removed or re-sealed when the store was opened."""
        self._count = self._digest = 0  # rows in the file and the sum of their checksums (`integrity`)
        self._sums: dict[tuple[Key, int], int] = {}
        self._older_sums: dict[tuple[Key, int], int] = {}
        """The checksums of the rows written last, by key and revision: a write takes its row's old checksum out
        of the digest, and an object's next write usually comes soon after (a pod's 4-5 writes), so its CRC is
        not computed over the old bytes again (the writer thread's CRCs were 1.8 % of `kjobs up`'s instructions
        over HTTP, docs/performance.md stop 40). Two generations of at most `SUMS_KEPT` each, the older dropped
        whole when the newer fills; a miss computes the CRC as before."""
        try:
            self._lockfile: IO[bytes] | None = open(path + ".lock", "wb")  # noqa: SIM115 - held until close()
        except OSError as err:
            raise _unavailable(f"cannot open the data file {path}: {err.strerror or err}") from None
        try:
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._release_lock()
            raise _unavailable(f"the data file {path} is in use by another process") from None
        try:
            _refuse_empty(path)
            if not os.path.lexists(path):
                _create(path)
            self._conn = _connect(path)
            self._file = _file_id(path)
            self._restore(repair)
        except (sqlite3.Error, UnicodeDecodeError) as err:
            self._give_up()
            if isinstance(err, UnicodeDecodeError) or not _environmental(err):
                raise _as_damage(path, err) from None
            raise _unavailable(f"cannot open the data file {path}: {err}") from None
        except BaseException:  # StoreDamaged, or a bug: never leave the file locked
            self._give_up()
            raise
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._closed = False
        self._closing = threading.Lock()  # orders every enqueue before the stop marker
        self._writer = threading.Thread(target=self._run, name="kjobs-store-writer", daemon=True)
        self._writer.start()
        self._stop_scrub = threading.Event()
        if scrub_interval:
            scrub = threading.Thread(target=self._scrub, args=(scrub_interval,), name="kjobs-store-scrub", daemon=True)
            scrub.start()

    def _restore(self, repair: bool) -> None:
        """Load the file's objects once every row and counter checked out (`integrity.read_back`)."""
        verified = read_back(self._conn, self.path, repair=repair)
        if verified.migrated is not None:
            log.warning("checksummed %d objects of %s, written by an earlier kjobs", verified.migrated, self.path)
        for found in verified.repaired:
            done = "deleted" if found.rowid is not None else "repaired"
            log.warning("repair of %s: %s %s", self.path, done, found)
        self.repaired = verified.repaired
        self._count, self._digest = verified.count, verified.digest
        records: list[tuple[str, str, str, Record]] = []
        for resource, namespace, name, rev, raw in verified.rows:
            try:
                obj = orjson.loads(raw)
            except ValueError as err:  # its checksum matched, so kjobs wrote it so; refuse it all the same
                bad = Damage(object_name(resource, namespace, name), f"not JSON: {err}")
                raise StoreDamaged(self.path, [bad], repairable=False) from None
            records.append((resource, namespace, name, Record.of(resource, obj, raw, rev)))
        self._load(records, verified.revision)

    def verify(self) -> list[Damage]:
        """Read the whole file back now and compare it with what is served; return what is damaged, and from
        then on answer reads of a damaged object with a 500 naming it (until a write stores it whole again).

        The running store serves from memory, which the file was checked against at open; this catches damage
        done to the file since, before a restart would find it, as etcd's periodic corruption check does
        (`--experimental-corrupt-check-time`). It reads through its own connection in one read transaction,
        pinned while no write is in flight, so writers wait only for that instant.
        """
        try:
            conn = sqlite3.connect(Path(self.path).absolute().as_uri() + "?mode=ro", uri=True)
        except sqlite3.Error as err:
            log.warning("cannot check the data file %s: %s", self.path, err)
            return []
        try:
            with self._write_lock:
                conn.execute("BEGIN")
                conn.execute("SELECT count(*) FROM meta").fetchone()  # the snapshot is taken here
                served: dict[Key, int] = {}
                with self._lock:
                    for resource, bucket in self._buckets.items():
                        for path, record in bucket.records.items():
                            namespace, _, name = path.partition("/")
                            served[(resource, namespace, name)] = record.revision
            damage, hit = compare(conn, served)
        except (sqlite3.Error, UnicodeDecodeError) as err:
            if isinstance(err, sqlite3.Error) and _environmental(err):
                log.warning("cannot check the data file %s: %s", self.path, err)
                return []
            damage, hit = [_as_damage(self.path, err).damage[0]], {}
        finally:
            conn.close()
        with self._lock:
            self._corrupt.update(hit)
        for found in damage:
            log.error("the data file %s is damaged: %s", self.path, found)
        return damage

    def _scrub(self, interval: float) -> None:
        while not self._stop_scrub.wait(interval):
            try:
                self.verify()
            except Exception:  # a check that failed must not end the checks
                log.exception("checking the data file %s failed", self.path)

    def _give_up(self) -> None:
        """Close what a failed open holds (an unfinished transaction is rolled back) and release the lock."""
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
        self._release_lock()

    # --- durability -----------------------------------------------------------------------------------------

    def _check_file(self) -> None:
        """Make sure the path still names the file this store writes (caller holds `_write_lock`). A data file
        removed under a running server (its directory cleaned) is written again from the open connection, which
        still reads the removed file: every object stays, and later writes reach a file a restart will read.
        A path that names another file now is refused (`_replaced`): nothing is written over it."""
        if self._replaced or _file_id(self.path) == self._file:
            return
        if os.path.lexists(self.path):
            self._replaced = True
            log.error("the data file %s was replaced by another file: this server writes no more", self.path)
            return
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fresh = self.path + ".new"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(fresh)
        os.close(os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        copy = sqlite3.connect(fresh)
        try:
            self._conn.backup(copy)
        finally:
            copy.close()
        # The old connection goes first: its close removes its WAL and shared-memory files by name, which must
        # not be the new connection's.
        self._conn.close()
        _durable_rename(fresh, self.path)
        self._file = _file_id(self.path)
        self._conn = _connect(self.path)
        self._release_lock()  # the lock file went with the directory: take a new one, so a second server waits
        try:
            lock = os.open(self.path + ".lock", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._lockfile = open(lock, "wb")  # noqa: SIM115 - held until close()
            fcntl.flock(self._lockfile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            log.error("cannot lock the data file %s again: %s", self.path, err)
        log.warning("the data file %s was removed while kjobs ran: written again with every object", self.path)

    def _persist(self, final: dict[Key, Record | None], revision: int) -> None:
        self._check_file()
        if self._replaced:
            raise OSError(f"the data file {self.path} was replaced by another file while this server ran")
        conn = self._conn
        upserts: list[tuple[str, str, str, int, bytes, int]] = []
        deletes: list[Key] = []
        count, digest = self._count, self._digest
        sums = self._sums
        written: list[tuple[tuple[Key, int], int]] = []
        for key, rec in final.items():
            old = self._lookup(key)  # what the file holds now: the index is published only after COMMIT
            if old is not None:
                count -= 1
                old_sum = sums.pop((key, old.revision), None)
                if old_sum is None:
                    old_sum = self._older_sums.pop((key, old.revision), None)
                if old_sum is None:
                    old_sum = row_checksum(*key, old.revision, old.raw)
                digest = remove_digest(digest, old_sum)
            if rec is None:
                deletes.append(key)
                continue
            checksum = row_checksum(*key, rec.revision, rec.raw)
            upserts.append((*key, rec.revision, rec.raw, checksum))
            written.append(((key, rec.revision), checksum))
            count += 1
            digest = add_digest(digest, checksum)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if upserts:
                conn.executemany(_UPSERT, upserts)
            if deletes:
                conn.executemany("DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?", deletes)
            write_meta(conn, revision, count, digest)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._count, self._digest = count, digest
        sums.update(written)  # only rows the file now holds
        if len(sums) > SUMS_KEPT:
            self._older_sums, self._sums = sums, {}

    # --- the writer thread ----------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=FILE_CHECK_INTERVAL)
            except queue.Empty:
                try:
                    with self._write_lock:
                        self._check_file()
                except Exception as err:  # no room for the copy yet: the next check or write tries again
                    log.error("cannot write the data file %s again: %s", self.path, err)
                continue
            if first is _STOP:
                return
            batch = [first]
            stop = False
            while len(batch) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            ops: list[Op] = [op for op in batch if isinstance(op, Op)]
            try:
                with self._write_lock:
                    self._apply(ops)
            except BaseException as err:  # a bug must not leave callers waiting forever, nor look like success
                failure = _unavailable(f"store writer failed: {err!r}")
                for op in ops:
                    op.result = None
                    op.error = op.error or failure
            self._acknowledge(ops)
            if stop:
                return

    @staticmethod
    def _acknowledge(ops: list[Op]) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        for op in ops:
            waiter = op.waiter
            if isinstance(waiter, tuple):
                loop, fut = waiter
                by_loop.setdefault(loop, []).append(fut)
            else:
                assert isinstance(waiter, _thread.LockType)
                waiter.release()
        for loop, futures in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed; nobody is waiting
                loop.call_soon_threadsafe(_resolve_all, futures)

    def _enqueue(self, op: Op) -> None:
        with self._closing:
            if self._closed:
                raise _unavailable("the store is closed")
            self._queue.put(op)

    def _submit(self, ops: list[Op]) -> None:
        for op in ops:
            done = threading.Lock()  # held until the writer releases it: the cheapest one-shot latch
            done.acquire()
            op.waiter = done
            self._enqueue(op)
        for op in ops:
            assert isinstance(op.waiter, _thread.LockType)
            op.waiter.acquire()

    async def _asubmit(self, op: Op) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        op.waiter = (loop, fut)
        self._enqueue(op)
        await fut

    def close(self) -> None:
        """Finish queued writes, stop the writer, close the database and release the file lock."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._stop_scrub.set()
        self._writer.join()
        super().close()
        self._conn.close()
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lockfile is not None:
            fcntl.flock(self._lockfile, fcntl.LOCK_UN)
            self._lockfile.close()
            self._lockfile = None
