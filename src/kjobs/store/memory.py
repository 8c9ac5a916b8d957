"""`MemoryStore`: the store with nothing behind it, for tests and simulation.

Writes are applied on the caller's thread under the store's write lock; "durable" means "committed to the
in-memory index", so the async twins complete without suspending.
"""

from __future__ import annotations

from kjobs.store.base import Key, Op, Store
from kjobs.store.events import Record


class MemoryStore(Store):
    """A `Store` that keeps everything in process memory (lost when the process exits)."""

    writes_inline = True

    def _persist(self, final: dict[Key, Record | None], revision: int) -> None:
        """Nothing to make durable."""

    def _submit(self, ops: list[Op]) -> None:
        with self._write_lock:
            self._apply(ops)

    async def _asubmit(self, op: Op) -> None:
        self._submit([op])
