"""A resource's watchers, indexed by a trigger field, so a write reaches only the watchers that may select it.

Kubernetes' watch cache does the same (`storage.IndexerFuncs` / the cacher's trigger functions: for pods,
`spec.nodeName`, registered in pkg/registry/core/pod/storage/storage.go as `NodeNameTriggerFunc`): every kubelet
watches pods with `fieldSelector=spec.nodeName=NODE`, and without the index each pod write would be offered to
every kubelet's watch. A watch whose field selector pins the trigger field (`field=value`) is filed under that
value; a change is offered to the watchers filed under its new and its previous value, and to every watcher not
filed under one. That is exact: a watcher pinned to a value selects neither state of a change that has another
value in both, so `Watch.filter` would have returned None for it.
"""

from __future__ import annotations

from kjobs.store.events import Change
from kjobs.store.watch import Watch

TRIGGER_FIELDS: dict[str, str] = {"pods": "spec.nodeName"}
"""The field each resource's watchers are indexed by (the store key of the resource → a selectable field)."""


class Watchers:
    """The watchers of one resource: a list in registration order, plus the trigger index.

    Copy-on-write: `add` and `remove` build new containers, so a publish iterating over them is never disturbed."""

    __slots__ = ("_by_value", "_field", "_plain", "_with", "all")

    def __init__(self, resource: str) -> None:
        self._field = TRIGGER_FIELDS.get(resource)
        self.all: tuple[Watch, ...] = ()
        self._plain: tuple[Watch, ...] = ()
        self._by_value: dict[str, tuple[Watch, ...]] = {}
        # `_plain` followed by each value's watchers, made when they change rather than at every write of an
        # object whose trigger value stays (most writes of a bound pod: its kubelet's status, a finalizer's removal)
        self._with: dict[str, tuple[Watch, ...]] = {}

    def __len__(self) -> int:
        return len(self.all)

    def _value(self, w: Watch) -> str | None:
        return None if self._field is None else w.field_selector.exact_match(self._field)

    def add(self, w: Watch) -> None:
        """Register a watcher."""
        self.all = (*self.all, w)
        value = self._value(w)
        if value is None:
            self._plain = (*self._plain, w)
        else:
            self._by_value = {**self._by_value, value: (*self._by_value.get(value, ()), w)}
        self._joined()

    def remove(self, w: Watch) -> bool:
        """Forget a watcher; False if it was not registered."""
        if w not in self.all:
            return False
        self.all = tuple(x for x in self.all if x is not w)
        value = self._value(w)
        if value is None:
            self._plain = tuple(x for x in self._plain if x is not w)
        else:
            rest = tuple(x for x in self._by_value.get(value, ()) if x is not w)
            by_value = dict(self._by_value)
            if rest:
                by_value[value] = rest
            else:
                by_value.pop(value, None)
            self._by_value = by_value
        self._joined()
        return True

    def _joined(self) -> None:
        plain = self._plain
        self._with = {value: plain + found for value, found in self._by_value.items()}

    def for_change(self, change: Change) -> tuple[Watch, ...]:
        """The watchers that may select either state of `change`: the unindexed ones, then those filed under the
        change's new and previous trigger value. A tuple, not a generator: most resources index nothing, and
        their watchers are `_plain` itself (every write of every object asks)."""
        plain = self._plain
        field = self._field
        if field is None or not self._by_value:
            return plain
        value = change.record.fields.get(field)
        prev = change.prev
        if prev is not None:
            before = prev.fields.get(field)
            if before is not None and before != value:  # the value changed: the watchers of both
                found = self._by_value.get(value, ()) if value is not None else ()
                found += self._by_value.get(before, ())
                return plain + found if found else plain
        return plain if value is None else self._with.get(value, plain)
