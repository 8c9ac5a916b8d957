"""Stop 52: the node lifecycle and taint eviction controllers' pod handlers return before making the pod's key when
the pod is on no node before and after the event (every new pod, not yet bound). Each handler is run beside its
previous form, kept here, on the same stub controller state and the same sequences of pod events: the same index
of pods by node and the same calls, in the same order."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.client.informer import key_of
from kjobs.controllers.nodelifecycle import NodeLifecycleController
from kjobs.controllers.tainteviction import TaintEvictionController, _node_name, _same_tolerations, _tolerations


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
