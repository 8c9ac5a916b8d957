"""The SQLite store remembers the checksums of the rows it wrote last (`SqliteStore._sums`), so that a write takes
an object's old row out of the file's digest without a CRC over the old bytes. The digest must stay the sum of the
checksums of the rows the file holds whatever the order of writes, deletes and re-creates, and across the two
generations' turnover: `verify` and a reopen (which checks every row and the sealed counters) find nothing, and a
remembered checksum spares the CRC."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kjobs.store import SqliteStore
from kjobs.store import sqlite as sqlite_module
from tests.store.conftest import pod


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the CRCs of old rows and new (every `row_checksum` the writer computes)."""
    calls = [0]
    plain = sqlite_module.row_checksum

    def counted(*args: Any) -> int:
        calls[0] += 1
        return plain(*args)

    monkeypatch.setattr(sqlite_module, "row_checksum", counted)
    return calls


@pytest.mark.parametrize("kept", [1, 3, 1000])
def test_the_digest_stays_the_files_through_writes_deletes_and_turnover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: int
) -> None:
    """Random creates, updates and deletes of 12 pods (a generation of 1 or 3 turns over all the time; 1,000 keeps
    every one): after each step the store verifies clean, and it reopens."""
    monkeypatch.setattr(sqlite_module, "SUMS_KEPT", kept)
    rng = random.Random(kept)
    db = tmp_path / "db"
    alive: set[str] = set()
    with SqliteStore(str(db)) as store:
        for step in range(150):
            name = f"p{rng.randrange(12)}"
            if name not in alive:
                store.create("pods", "ns", name, pod(name, "ns", step=str(step)))
                alive.add(name)
            elif rng.random() < 0.2:
                store.delete("pods", "ns", name)
                alive.discard(name)
            else:
                store.update("pods", "ns", name, pod(name, "ns", step=str(step)))
            if step % 10 == 0:
                assert store.verify() == [], step
        assert store.verify() == []
    with SqliteStore(str(db)) as reopened:  # every row and the sealed counters checked at open
        assert sorted(o["metadata"]["name"] for o in reopened.list("pods", "ns")[0]) == sorted(alive)
        reopened.update("pods", "ns", sorted(alive)[0], pod(sorted(alive)[0], "ns", after="reopen"))
        assert reopened.verify() == []


def test_a_remembered_checksum_spares_the_crc_of_the_old_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update computes one CRC (the new row's) when the old row's checksum is remembered, two when it is not
    (a store just opened remembers nothing)."""
    db = tmp_path / "db"
    with SqliteStore(str(db)) as store:
        store.create("pods", "ns", "a", pod("a", "ns"))
        calls = _counting(monkeypatch)
        store.update("pods", "ns", "a", pod("a", "ns", v="1"))
        assert calls[0] == 1
    monkeypatch.undo()
    with SqliteStore(str(db)) as reopened:
        calls = _counting(monkeypatch)
        reopened.update("pods", "ns", "a", pod("a", "ns", v="2"))
        assert calls[0] == 2
        assert reopened.verify() == []
