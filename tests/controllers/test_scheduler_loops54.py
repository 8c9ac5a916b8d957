"""Small rewrites on the scheduler's per-pod path (docs/sched54.md), each against the form it replaced: the loops
that ask whether any node has pods with anti-affinity, pods with affinity terms or PreferNoSchedule taints
(`any` over a generator before), and `_same_but_node_name`'s subset test for a spec that only gained `nodeName`
(two copies compared before)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.controllers.interpod import _any_affinity_pods, _any_anti_pods
from kjobs.controllers.scheduler import _same_but_node_name
from kjobs.controllers.scheduling import NodeInfo, Taint, _any_soft_taints, pod_info
from tests.hypothesis_budget import examples

_POD = pod_info({"metadata": {"uid": "u"}, "spec": {}}, priority=0, preempt_never=False)


def _node(anti: bool, affinity: bool, soft: bool) -> NodeInfo:
    info = NodeInfo("n")
    if anti:
        info.anti_pods["u"] = _POD
    if affinity:
        info.affinity_pods["u"] = _POD
    if soft:
        info.soft_taints = (Taint("k", "", "PreferNoSchedule"),)
    return info


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), max_size=6))
def test_node_loops_are_any(flags: list[tuple[bool, bool, bool]]) -> None:
    nodes = [_node(*f) for f in flags]
    assert _any_anti_pods(nodes) == any(node.anti_pods for node in nodes)
    assert _any_affinity_pods(nodes) == any(node.affinity_pods for node in nodes)
    assert _any_soft_taints(nodes) == any(node.soft_taints for node in nodes)


def _copies_form(a: Obj, b: Obj) -> bool:
    """`_same_but_node_name` before stop 54."""
    return {**a, "nodeName": None} == {**b, "nodeName": None}


_VALUES = st.sampled_from([None, 0, 1, 1.0, True, False, "", "x", "n1", [], [1], {}, {"a": 1}])
_KEYS = st.sampled_from(["containers", "hostname", "nodeName", "priority", "schedulerName", "volumes"])


@st.composite
def spec_pairs(draw: st.DrawFn) -> tuple[Obj, Obj]:
    a = draw(st.dictionaries(_KEYS, _VALUES, max_size=5))
    b = dict(a)
    for _ in range(draw(st.integers(0, 3))):
        key = draw(_KEYS)
        if draw(st.booleans()):
            b[key] = draw(_VALUES)
        else:
            b.pop(key, None)
    if draw(st.booleans()):
        b["nodeName"] = draw(_VALUES)  # a binding
    return a, b


@settings(max_examples=examples(300), deadline=None)
@given(spec_pairs())
def test_same_but_node_name_is_the_copies_form(pair: tuple[Obj, Obj]) -> None:
    a, b = pair
    assert _same_but_node_name(a, b) == _copies_form(a, b)
    assert _same_but_node_name(b, a) == _copies_form(b, a)


def test_a_binding_and_its_near_misses() -> None:
    spec = {"containers": [{"name": "c"}], "hostname": "h"}
    assert _same_but_node_name(spec, {**spec, "nodeName": "n1"})
    assert not _same_but_node_name(spec, {**spec, "nodeName": "n1", "hostname": "other"})
    assert not _same_but_node_name(spec, {"containers": [{"name": "c"}], "nodeName": "n1", "priority": 0})
    assert not _same_but_node_name({**spec, "priority": 1}, {**spec, "nodeName": "n1", "hostname": "h", "x": 1})
