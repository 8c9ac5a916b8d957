"""Fixtures: every behavioural store test runs against both backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.store import MemoryStore, SqliteStore, Store

StoreFactory = Callable[..., Store]


@pytest.fixture(params=["memory", "sqlite", "memory-packed", "sqlite-packed"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Build a store of the parametrized kind (options passed through); all are closed at teardown. The
    `-packed` kinds pack every record as soon as one more write follows it (`kjobs.store.packing`), the
    others never (`cold_after=0`): every answer must be the same."""
    made: list[Store] = []

    def make(**options: Any) -> Store:
        options.setdefault("cold_after", 1 if request.param.endswith("-packed") else 0)
        options.setdefault("pack_above", 0)
        if request.param.startswith("memory"):
            store: Store = MemoryStore(**options)
        else:
            store = SqliteStore(str(tmp_path / f"db{len(made)}.sqlite"), **options)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store: StoreFactory) -> Store:
    """A store with default options."""
    return make_store()


def pod(name: str, namespace: str = "default", **labels: str) -> Obj:
    """A small Pod object."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }


def rv(obj: Obj) -> int:
    """An object's resourceVersion as an integer."""
    return int(obj["metadata"]["resourceVersion"])
