"""Property test: random write sequences give the same states and revisions in MemoryStore, SqliteStore
(also after reopening it) and a trivial dictionary model of Kubernetes' storage semantics."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.store import Event, MemoryStore, SqliteStore, Store

KEYS = [("pods", "a", "p1"), ("pods", "b", "p1"), ("pods", "a", "p2"), ("jobs.batch", "a", "p1")]


@dataclass
class Model:
    """Kubernetes storage semantics, written as plainly as possible."""

    objects: dict[tuple[str, str, str], tuple[int, Obj]] = field(default_factory=dict)
    revision: int = 0

    def apply(self, op: tuple[Any, ...]) -> tuple[str, Any]:
        kind, key, payload, version = op
        current = self.objects.get(key)
        if kind == "create":
            if current is not None:
                return ("error", 409)
            self.revision += 1
            self.objects[key] = (self.revision, payload)
            return ("ok", self.revision)
        if current is None:
            return ("error", 404)
        expected = _expected(version, current[0])
        if expected is not None and expected != str(current[0]):
            return ("error", 409)
        if kind == "update":
            if payload == current[1]:
                return ("ok", current[0])
            self.revision += 1
            self.objects[key] = (self.revision, payload)
            return ("ok", self.revision)
        self.revision += 1
        del self.objects[key]
        return ("ok", self.revision)


def _expected(version: str, current: int) -> str | None:
    """The expected_rv an op sends: none, the current one, or a stale one."""
    return {"none": None, "current": str(current), "stale": str(current - 1)}[version]


def _obj(key: tuple[str, str, str], payload: Obj) -> Obj:
    group = "one" if payload["v"] == 1 else "two"
    return {"metadata": {"name": key[2], "namespace": key[1], "labels": {"grp": group}}, "data": payload}


def run(store: Store, op: tuple[Any, ...], model_rv: int | None) -> tuple[str, Any]:
    kind, (resource, namespace, name), payload, version = op
    obj = _obj((resource, namespace, name), payload)
    try:
        if kind == "create":
            out = store.create(resource, namespace, name, obj)
        else:
            expected = _expected(version, model_rv if model_rv is not None else 1)
            if kind == "update":
                out = store.update(resource, namespace, name, obj, expected_rv=expected)
            else:
                out = store.delete(resource, namespace, name, expected_rv=expected)
    except ApiError as err:
        return ("error", err.code)
    return ("ok", int(out["metadata"]["resourceVersion"]))


def snapshot(store: Store) -> list[tuple[str, Obj]]:
    out = []
    for resource in ("pods", "jobs.batch"):
        items, _ = store.list(resource)
        out += [(resource, o) for o in items]
    return out


def replay(events: list[Event]) -> list[Obj]:
    """Rebuild a watched collection from its event stream; revisions must only grow."""
    state: dict[tuple[str, str], Obj] = {}
    last = 0
    for event in events:
        meta = event.object["metadata"]
        revision = int(meta["resourceVersion"])
        assert revision > last
        last = revision
        key = (meta["namespace"], meta["name"])
        if event.type == "DELETED":
            assert key in state
            del state[key]
        else:
            assert (key in state) == (event.type == "MODIFIED")
            state[key] = event.object
    return [state[k] for k in sorted(state, key=lambda k: f"{k[0]}/{k[1]}")]


ops = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete"]),
        st.sampled_from(KEYS),
        st.sampled_from([{"v": 1}, {"v": 2}, {"v": [1, "x"]}]),
        st.sampled_from(["none", "current", "stale"]),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_backends_agree_with_the_model(sequence: list[tuple[Any, ...]]) -> None:
    model = Model()
    memory = MemoryStore()
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/db"
        sqlite = SqliteStore(path)
        watches = [(store, store.watch("pods", since=None, label_selector="grp=one")) for store in (memory, sqlite)]
        try:
            for op in sequence:
                current = model.objects.get(op[1])
                current_rv = current[0] if current else None
                expected = model.apply(op)
                assert run(memory, op, current_rv) == expected, op
                assert run(sqlite, op, current_rv) == expected, op
            assert memory.revision == sqlite.revision == model.revision
            want = sorted(((key[0], key[1], key[2]), rev, payload) for key, (rev, payload) in model.objects.items())
            got = sorted(
                (
                    (r, o["metadata"]["namespace"], o["metadata"]["name"]),
                    int(o["metadata"]["resourceVersion"]),
                    o["data"],
                )
                for r, o in snapshot(memory)
            )
            assert got == want
            assert snapshot(sqlite) == snapshot(memory)
            for store in (memory, sqlite):
                for group in ("one", "two"):
                    for namespace in (None, "a"):
                        everything, _ = store.list("pods", namespace)
                        brute = [o for o in everything if o["metadata"]["labels"]["grp"] == group]
                        assert store.list("pods", namespace, label_selector=f"grp={group}")[0] == brute
            for store, w in watches:
                assert replay(w.drain()) == store.list("pods", label_selector="grp=one")[0]
        finally:
            sqlite.close()
        with SqliteStore(path) as reopened:
            assert snapshot(reopened) == snapshot(memory)
            assert reopened.revision == model.revision
