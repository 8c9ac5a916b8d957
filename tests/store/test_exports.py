"""The store's public surface: what other packages may import from `kjobs.store`."""

from __future__ import annotations

import kjobs.store


def test_exported_members() -> None:
    assert sorted(kjobs.store.__all__) == [
        "DB_FILE",
        "Event",
        "EventType",
        "MemoryStore",
        "SqliteStore",
        "Store",
        "StoreDamaged",
        "StoreStats",
        "Watch",
        "open_store",
        "split_resource",
    ]
    for name in kjobs.store.__all__:
        assert getattr(kjobs.store, name) is not None
    assert issubclass(kjobs.store.MemoryStore, kjobs.store.Store)
    assert issubclass(kjobs.store.SqliteStore, kjobs.store.Store)
