"""Stop 52: the node lifecycle and taint eviction controllers' pod handlers return before making the pod's key when
the pod is on no node before and after the event (every new pod, not yet bound); the garbage collector's handler
checks a new object's owners with a loop rather than `any` over a generator; the Job controller's handler reads
the pod's controller reference and its Job inline; the disruption controller's reads the clock only for a pod with a
DisruptionTarget condition that may go stale (`stale_since`). Each handler is run beside its
previous form, kept here, on the same stub controller state and the same sequences of pod events: the same index
of pods by node and the same calls, in the same order."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.client.informer import key_of
from kjobs.controllers.disruption import stale_since, stale_wait
from kjobs.controllers.garbagecollector import (
    GarbageCollector,
    _Node,
    _refs,
    _same_graph_facts,
    _unblocked,
    is_deleting_dependents,
    is_orphaning,
)
from kjobs.controllers.garbagecollector import (
    _meta as _gc_meta,
)
from kjobs.controllers.nodelifecycle import NodeLifecycleController
from kjobs.controllers.tainteviction import TaintEvictionController, _node_name, _same_tolerations, _tolerations
from tests.controllers.test_job_pod_facts import PlainJobController, _state
from tests.controllers.test_upstream_job_controller import controller_ref, idle_controller, new_job
from tests.core.test_pod_path_rewrites import PODS, _plain_stale_wait
from tests.hypothesis_budget import examples


class _Stub:
    """The state both handlers read and write, recording every call they make."""

    def __init__(self, started: bool, not_ready: frozenset[str], tainted: dict[str, list[Obj]]) -> None:
        self._pods_by_node: dict[str, set[tuple[str, str]]] = {}
        self._started = started
        self._not_ready_nodes = not_ready
        self.tainted = tainted
        self.calls: list[tuple[Any, ...]] = []
        self.clock = self

    def now(self) -> float:
        return 5.0

    def _not_ready(self, node: str) -> bool:
        self.calls.append(("not_ready", node))
        return node in self._not_ready_nodes

    def _cancel(self, key: tuple[str, str]) -> None:
        self.calls.append(("cancel", key))

    def _process_pod(self, key: tuple[str, str], *args: Any) -> None:
        self.calls.append(("process", key, *args))


def old_lifecycle_on_pod(self: Any, old: Obj | None, new: Obj | None) -> None:
    """`NodeLifecycleController._on_pod` before stop 52 (the task it starts for a not-ready node is recorded)."""
    if (
        old is not None
        and new is not None
        and (old.get("spec") or {}).get("nodeName") == (new.get("spec") or {}).get("nodeName")
    ):
        return
    old_node = str(((old or {}).get("spec") or {}).get("nodeName") or "")
    new_node = str(((new or {}).get("spec") or {}).get("nodeName") or "")
    if old is not None and new is not None and old_node == new_node:
        return
    key = key_of(new or old or {})
    if old_node and (new is None or old_node != new_node):
        self._pods_by_node.get(old_node, set()).discard(key)
    if new is not None and new_node:
        self._pods_by_node.setdefault(new_node, set()).add(key)
        if new_node != old_node and self._not_ready(new_node):
            raise AssertionError("no node is not ready here")


def old_taint_on_pod(self: Any, old: Obj | None, new: Obj | None) -> None:
    """`TaintEvictionController._on_pod` before stop 52."""
    if old is not None and new is not None:
        old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
        if old_spec is new_spec or (
            old_spec.get("nodeName") == new_spec.get("nodeName")
            and old_spec.get("tolerations") == new_spec.get("tolerations")
        ):
            return
    old_node, new_node = _node_name(old), _node_name(new)
    if old is not None and new is not None and old_node == new_node and _same_tolerations(old, new):
        return
    key = key_of(new or old or {})
    if old_node and old_node != new_node:
        self._pods_by_node.get(old_node, set()).discard(key)
    if new_node:
        self._pods_by_node.setdefault(new_node, set()).add(key)
    if not self._started:
        return
    if new is None:
        self._cancel(key)
        return
    if not new_node:
        return
    taints = self.tainted.get(new_node)
    if taints is None:
        return
    self._process_pod(key, _tolerations(new), taints, self.clock.now())


NODES = st.sampled_from([None, "", "a", "b"])
TOLERATIONS = st.sampled_from([None, [], [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]])


@st.composite
def pods(draw: st.DrawFn) -> Obj | None:
    if draw(st.integers(0, 5)) == 0:
        return None  # the event of a pod gone (or, as `old`, an add)
    spec: Obj = {}
    node = draw(NODES)
    if node is not None:
        spec["nodeName"] = node
    tolerations = draw(TOLERATIONS)
    if tolerations is not None:
        spec["tolerations"] = tolerations
    meta = {"namespace": "ns", "name": draw(st.sampled_from(["p", "q"]))}
    return {"metadata": meta, "spec": spec} if draw(st.booleans()) else {"metadata": meta}


EVENTS = st.lists(st.tuples(pods(), pods()).filter(lambda e: e != (None, None)), max_size=12)


def _stubs(started: bool, not_ready: frozenset[str]) -> tuple[_Stub, _Stub]:
    tainted: dict[str, list[Obj]] = {"a": [{"key": "k", "effect": "NoExecute"}]}
    return _Stub(started, not_ready, tainted), _Stub(started, not_ready, tainted)


@given(events=EVENTS)
def test_node_lifecycle_on_pod_as_before(events: list[tuple[Obj | None, Obj | None]]) -> None:
    old_self, new_self = _stubs(True, frozenset())  # every node Ready: no task to start
    for old, new in events:
        old_lifecycle_on_pod(old_self, old, new)
        NodeLifecycleController._on_pod(new_self, old, new)  # type: ignore[arg-type]
    assert new_self._pods_by_node == old_self._pods_by_node
    assert new_self.calls == old_self.calls


@given(events=EVENTS, started=st.booleans())
def test_taint_eviction_on_pod_as_before(events: list[tuple[Obj | None, Obj | None]], started: bool) -> None:
    old_self, new_self = _stubs(started, frozenset())
    for old, new in events:
        old_taint_on_pod(old_self, old, new)
        TaintEvictionController._on_pod(new_self, old, new)  # type: ignore[arg-type]
    assert new_self._pods_by_node == old_self._pods_by_node
    assert new_self.calls == old_self.calls


def old_gc_observe(self: Any, resource: Any, old: Obj | None, new: Obj | None) -> None:
    """`GarbageCollector._observe` before stop 52 (its owners' check with `any` over a generator)."""
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
    new_owners = {str(r.get("uid")) for r in _refs(new)}
    old_owners: set[str] = set()
    if old is not None:
        old_owners = {str(r.get("uid")) for r in _refs(old)}
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
    unsure = any(o not in self.nodes or _gc_meta(self.nodes[o].obj).get("deletionTimestamp") for o in new_owners)
    if new_owners and (old is None or new_owners != old_owners) and unsure:
        self._enqueue("delete", node)
    deleting = bool(_gc_meta(new).get("deletionTimestamp"))
    if deleting and is_orphaning(new) and not (old is not None and is_orphaning(old)):
        self._enqueue("orphan", node)
    if deleting and is_deleting_dependents(new) and not (old is not None and is_deleting_dependents(old)):
        self._enqueue("delete", node)
        for dependent in sorted(self.dependents.get(uid, ())):
            dep = self.nodes.get(dependent)
            if dep is not None:
                self._enqueue("delete", dep)


class _Graph:
    """The collector's graph and queue, recording what it enqueues (action, and the node's key and object)."""

    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}
        self.dependents: dict[str, set[str]] = {}
        self.enqueued: list[tuple[str, str, str, Obj]] = []

    def _enqueue(self, action: str, node: _Node) -> None:
        self.enqueued.append((action, node.namespace, node.name, node.obj))

    _observe_gone = GarbageCollector._observe_gone  # a delete's part of `_observe` (docs/delete59.md)


UIDS = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def graph_objects(draw: st.DrawFn) -> Obj | None:
    """An object of a small graph: uid a-d (so each can own the others), owners among them, maybe deleting, with
    the collector's finalizers or not."""
    if draw(st.integers(0, 5)) == 0:
        return None
    uid = draw(UIDS)
    meta: Obj = {"namespace": "ns", "name": f"o-{uid}", "uid": uid}
    refs = [{"uid": o, "blockOwnerDeletion": draw(st.booleans())} for o in draw(st.lists(UIDS, max_size=2))]
    if refs or draw(st.booleans()):
        meta["ownerReferences"] = refs
    if draw(st.booleans()):
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    finalizers = draw(st.lists(st.sampled_from(["orphan", "foregroundDeletion", "other"]), max_size=2))
    if finalizers:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "status": {"n": draw(st.integers(0, 2))}}


@given(events=st.lists(st.tuples(graph_objects(), graph_objects()).filter(lambda e: e != (None, None)), max_size=14))
def test_garbage_collector_observe_as_before(events: list[tuple[Obj | None, Obj | None]]) -> None:
    before, after = _Graph(), _Graph()
    for old, new in events:
        if old is not None and new is not None:
            new = {**new, "metadata": {**new["metadata"], "uid": old["metadata"]["uid"]}}  # versions of one object
        old_gc_observe(before, "pods", old, new)
        GarbageCollector._observe(after, "pods", old, new)  # type: ignore[arg-type]
    assert after.enqueued == before.enqueued
    assert after.dependents == before.dependents
    assert {uid: node.obj for uid, node in after.nodes.items()} == {uid: node.obj for uid, node in before.nodes.items()}


REFS = st.lists(
    st.tuples(st.sampled_from(["job1", "job2"]), st.sampled_from([True, False, None]), st.sampled_from(["Job", "Pod"])),
    max_size=3,
)


@settings(max_examples=examples(100), deadline=None)
@given(
    events=st.lists(
        st.tuples(st.integers(0, 2), st.booleans(), REFS, st.sampled_from(["Running", "Failed"])), max_size=12
    )
)
def test_job_controller_on_pod_finds_the_controller_as_before(events: list[tuple[int, bool, list[Any], str]]) -> None:
    """The Job controller's pod handler finds the pod's controller reference (the first marked `controller`) and
    its Job with `_controller_ref` and `Informer.get` inline: the same state as the plain handler kept in
    tests/controllers/test_job_pod_facts.py, for owner references of any kind, controller or not, in any order."""

    async def scenario() -> None:
        job1, job2 = new_job("job1"), new_job("job2")
        jobs = {"job1": job1, "job2": job2}
        plain = await idle_controller(job1, job2)
        plain.__class__ = PlainJobController
        fast = await idle_controller(job1, job2)
        counted: dict[int, list[str]] = {id(plain): [], id(fast): []}
        for controller in (plain, fast):
            controller._count_tracking_finalizer = counted[id(controller)].append  # type: ignore[method-assign]
        versions: dict[int, Obj] = {}
        for n, gone, refs, phase in events:
            old = versions.get(n)
            new: Obj | None = None
            if gone:
                versions.pop(n, None)
                if old is None:
                    continue
            else:
                owners = []
                for job_name, controls, kind in refs:
                    ref = {**controller_ref(jobs[job_name]), "kind": kind}
                    if controls is None:
                        del ref["controller"]
                    else:
                        ref["controller"] = controls
                    owners.append(ref)
                meta = {"name": f"pod-{n}", "namespace": "default", "uid": f"uid-{n}", "labels": {"foo": "bar"}}
                meta["ownerReferences"] = owners
                meta["finalizers"] = [JOB_TRACKING_FINALIZER]
                new = versions[n] = {"metadata": meta, "spec": {}, "status": {"phase": phase}}
            for controller in (plain, fast):
                controller._on_pod(old, new)
            assert _state(fast, counted[id(fast)]) == _state(plain, counted[id(plain)])

    asyncio.run(scenario())


@settings(max_examples=examples(300), deadline=None)
@given(PODS, st.floats(0, 2e9))
def test_stale_since_is_none_exactly_when_stale_wait_is(pod: Obj, now: float) -> None:
    """The disruption controller's pod handler reads the clock only when `stale_since` finds a condition: exactly
    the pods for which `stale_wait` (as it was, `_plain_stale_wait`) has a wait."""
    assert (stale_since(pod) is None) == (_plain_stale_wait(pod, now, 120.0) is None)
    assert stale_wait(pod, now, 120.0) == _plain_stale_wait(pod, now, 120.0)
