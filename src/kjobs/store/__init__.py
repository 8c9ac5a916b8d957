"""The versioned object store: JSON objects keyed by (resource, namespace, name), one global revision.

`Store` (in `base`) is the interface and the shared in-memory engine; `MemoryStore` keeps nothing on disk,
`SqliteStore` makes every acknowledged write durable in one SQLite file. `open_store` picks one for a data
directory. Watches (`Watch`) deliver `Event`s from a bounded per-resource history.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kjobs import lazy_module_getattr
from kjobs.files import private_dir, private_file
from kjobs.store.base import DEFAULT_HISTORY, Store, StoreStats, split_resource
from kjobs.store.events import Event, EventType
from kjobs.store.memory import MemoryStore
from kjobs.store.packing import PACK_ABOVE
from kjobs.store.watch import Watch

if TYPE_CHECKING:
    from kjobs.store.integrity import StoreDamaged
    from kjobs.store.sqlite import SqliteStore

_LAZY = {
    "SCRUB_INTERVAL": "kjobs.store.sqlite",
    "SqliteStore": "kjobs.store.sqlite",
    "StoreDamaged": "kjobs.store.integrity",
}
"""Names whose modules (with `sqlite3`) are imported when first asked for: a `kjobs run` or `kjobs simulate`
keeps its objects in a `MemoryStore` and never opens SQLite."""


__getattr__ = lazy_module_getattr(__name__, _LAZY, globals())
"""PEP 562: `from kjobs.store import SqliteStore` (`StoreDamaged`, `SCRUB_INTERVAL`) imports its module then."""


DB_FILE = "kjobs.db"
"""The database file inside a data directory."""


def open_store(
    data_dir: str | None, *, history_size: int = DEFAULT_HISTORY, repair: bool = False, pack_above: int = PACK_ABOVE
) -> Store:
    """The store for a data directory (`<dir>/kjobs.db`, created if missing), or a `MemoryStore` for None.

    The directory is 0700 and the store's files 0600 (`kjobs.files`): pods may run as other users. A damaged
    file raises `StoreDamaged`; `repair` deletes the damaged objects instead; while it runs the file is checked
    again every `SCRUB_INTERVAL` seconds (see `SqliteStore.verify`). `pack_above`: the objects a resource holds
    from which its cold records are packed (`kjobs.store.packing.PACK_ABOVE`; 0: from the first)."""
    if data_dir is None:
        return MemoryStore(history_size=history_size)
    from kjobs.store.sqlite import SCRUB_INTERVAL, SqliteStore

    private_dir(data_dir)
    path = os.path.join(data_dir, DB_FILE)
    # SQLite gives its -wal and -shm files the mode of the database file; ones an older kjobs left are tightened.
    # A missing data file is made by `SqliteStore` (0600 too), whole: an empty one is a truncated one.
    private_file(path + ".lock")
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            private_file(name)
    return SqliteStore(
        path, history_size=history_size, repair=repair, scrub_interval=SCRUB_INTERVAL, pack_above=pack_above
    )


__all__ = [
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
