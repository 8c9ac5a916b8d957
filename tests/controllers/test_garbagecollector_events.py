"""The garbage collector's graph builder skips, for an add, the old owners and unblocked references it cannot have,
and reads the deletion once for the orphan and foreground tests (docs/sched49.md). Held against `_observe` as it
was (`PlainGarbageCollector`) over sequences of events of objects whose owners come and go, block or not, and
which are deleted with either finalizer: the same graph, dependents and queue after every event."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.client.informer import key_of
from kjobs.client.resources import JOBS, PODS, ResourceRef
from kjobs.clock import FakeClock
from kjobs.controllers.garbagecollector import (
    GarbageCollector,
    _Node,
    _refs,
    _same_graph_facts,
    _unblocked,
    is_deleting_dependents,
    is_orphaning,
)
from tests.hypothesis_budget import examples


class PlainGarbageCollector(GarbageCollector):
    """`_observe` as it was before stop 49."""

    def _observe(self, resource: ResourceRef, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        uid = (obj.get("metadata") or {}).get("uid") or ""
        if type(uid) is not str:
            uid = str(uid)
        if not uid:
            return
        if old is not None and new is not None and _same_graph_facts(old, new):
            known = self.nodes.get(uid)
            if known is not None:
                known.obj = new
                return
        namespace, name = key_of(obj)
        old_owners = {str(r.get("uid")) for r in _refs(old)}
        new_owners = {str(r.get("uid")) for r in _refs(new)}
        for owner in old_owners - new_owners:
            dependents = self.dependents.get(owner)
            if dependents is not None:
                dependents.discard(uid)
                if not dependents:
                    del self.dependents[owner]
            owner_node = self.nodes.get(owner)
            if owner_node is not None and is_deleting_dependents(owner_node.obj):
                self._enqueue("delete", owner_node)
        for owner in _unblocked(old, new):
            owner_node = self.nodes.get(owner)
            if owner_node is not None and is_deleting_dependents(owner_node.obj):
                self._enqueue("delete", owner_node)
        if new is None:
            self.nodes.pop(uid, None)
            for dependent in sorted(self.dependents.get(uid, ())):
                node = self.nodes.get(dependent)
                if node is not None:
                    self._enqueue("delete", node)
            return
        node = _Node(resource, namespace, name, new)
        self.nodes[uid] = node
        for owner in new_owners:
            self.dependents.setdefault(owner, set()).add(uid)
        unsure = any(
            o not in self.nodes or (self.nodes[o].obj.get("metadata") or {}).get("deletionTimestamp")
            for o in new_owners
        )
        if new_owners and (old is None or new_owners != old_owners) and unsure:
            self._enqueue("delete", node)
        if is_orphaning(new) and not (old is not None and is_orphaning(old)):
            self._enqueue("orphan", node)
        if is_deleting_dependents(new) and not (old is not None and is_deleting_dependents(old)):
            self._enqueue("delete", node)
            for dependent in sorted(self.dependents.get(uid, ())):
                dep = self.nodes.get(dependent)
                if dep is not None:
                    self._enqueue("delete", dep)


_UIDS = ["j1", "j2", "p1", "p2"]


@st.composite
def versions(draw: st.DrawFn, uid: str) -> Obj:
    """A version of object `uid`: owners among the others (blocking or not), deleting or not, finalizers."""
    meta: Obj = {"uid": uid, "name": uid, "namespace": "ns"}
    owners = draw(st.lists(st.sampled_from([u for u in _UIDS if u != uid]), max_size=2, unique=True))
    if owners or draw(st.booleans()):
        meta["ownerReferences"] = [
            {"uid": o, "name": o, "kind": "Job", "apiVersion": "batch/v1", "blockOwnerDeletion": draw(st.booleans())}
            for o in owners
        ]
    if draw(st.booleans()):
        meta["deletionTimestamp"] = draw(st.sampled_from(["2026-01-01T00:00:00Z", ""]))
    finalizers = draw(
        st.sampled_from([None, [], ["orphan"], ["foregroundDeletion"], ["batch.kubernetes.io/job-tracking"]])
    )
    if finalizers is not None:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "status": {"phase": draw(st.sampled_from(["Pending", "Succeeded"]))}}


@st.composite
def event_sequences(draw: st.DrawFn) -> list[tuple[ResourceRef, Obj | None, Obj | None]]:
    """Events as an informer hands them: an add, updates, a delete of the version last seen, per object."""
    current: dict[str, Obj] = {}
    events: list[tuple[ResourceRef, Obj | None, Obj | None]] = []
    for _ in range(draw(st.integers(1, 14))):
        uid = draw(st.sampled_from(_UIDS))
        resource = JOBS if uid.startswith("j") else PODS
        old = current.get(uid)
        if old is not None and draw(st.integers(0, 4)) == 0:
            del current[uid]
            events.append((resource, old, None))
            continue
        new = draw(versions(uid))
        if old is not None and draw(st.booleans()):
            new["metadata"] = {**old["metadata"], "resourceVersion": "2"}  # an update the graph does not see
        current[uid] = new
        events.append((resource, old, new))
    return events


def _state(gc: GarbageCollector) -> tuple[Any, ...]:
    nodes = {uid: (node.resource, node.namespace, node.name, id(node.obj)) for uid, node in gc.nodes.items()}
    return nodes, {k: sorted(v) for k, v in gc.dependents.items()}, list(gc.queue._queue)


@settings(max_examples=examples(500), deadline=None)
@given(event_sequences())
def test_graph_as_before_after_every_event(events: list[tuple[ResourceRef, Obj | None, Obj | None]]) -> None:
    clock = FakeClock()
    made = GarbageCollector(cast(Any, None), clock)
    plain = PlainGarbageCollector(cast(Any, None), clock)
    for resource, old, new in events:
        made._observe(resource, old, new)
        plain._observe(resource, old, new)
        assert _state(made) == _state(plain)


def test_an_add_being_deleted_in_the_foreground_is_queued() -> None:
    gc = GarbageCollector(cast(Any, None), FakeClock())
    job: Obj = {
        "metadata": {
            "uid": "j1",
            "name": "j1",
            "namespace": "ns",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["foregroundDeletion"],
        }
    }
    gc._observe(JOBS, None, job)
    assert [item[0] for item in gc.queue._queue] == ["delete"]
    orphaned = {"metadata": {**job["metadata"], "uid": "j2", "name": "j2", "finalizers": ["orphan"]}}
    gc._observe(JOBS, None, orphaned)
    assert [item[0] for item in gc.queue._queue] == ["delete", "orphan"]
