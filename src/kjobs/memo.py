"""`Memo`: remembered results of pure functions whose inputs repeat, bounded by starting over when full.

Design note: the objects a controller makes from one template (a Job's pods) repeat the same spec, labels and
status shapes thousands of times, so validation, `managedFields` trees and parsed requests are worth computing
once per distinct input. The inputs in play at a time are few, so a full memo is simply emptied (no LRU
bookkeeping on the hot path); what it holds is shared by every caller, so it must never be changed.
"""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """At most `size` remembered values by key; adding one to a full memo empties it first."""

    __slots__ = ("_size", "_values")

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        """The value remembered for `key`, if any."""
        return self._values.get(key)

    def put(self, key: K, value: V) -> V:
        """Remember `value` for `key` and return it."""
        if len(self._values) >= self._size:
            self._values.clear()
        self._values[key] = value
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)
