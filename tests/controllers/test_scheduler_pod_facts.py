"""The scheduler's per-event `PodInfo` work (docs/sched49.md), held against the forms it replaced: `pod_info` builds
`PodInfo` by position and scans the conditions in place (`plain_pod_info`: by keyword, through `_dicts`), and
`_place` compares a placed pod's versions field by field (`_victim_view`: both sides made into sorted tuples).
Every field, every comparison, for pods varied in each thing those read."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import DISRUPTION_TARGET
from kjobs.api.types import Obj
from kjobs.controllers.scheduler import _same_victim_view
from kjobs.controllers.scheduling import (
    PodInfo,
    SpecInfo,
    _dicts,
    _time,
    pod_info,
    resolve_spread,
    resolve_terms,
    resolve_weighted,
    shared_spec_info,
    spec_info,
)
from tests.hypothesis_budget import examples


def plain_pod_info(pod: Obj, *, priority: int, preempt_never: bool, spec: SpecInfo | None = None) -> PodInfo:
    """`pod_info` as it was before stop 49: `PodInfo` by keyword, the conditions through `_dicts`."""
    meta = pod.get("metadata") or {}
    pod_spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    derived = spec if spec is not None else spec_info(pod_spec)
    target = False
    for condition in _dicts(status.get("conditions")):
        if condition.get("type") == DISRUPTION_TARGET:
            target = condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    namespace = str(meta.get("namespace") or "")
    labels = meta.get("labels") or {}
    return PodInfo(
        uid=str(meta.get("uid") or ""),
        namespace=namespace,
        name=str(meta.get("name") or ""),
        node_name=str(pod_spec.get("nodeName") or ""),
        scheduler_name=str(pod_spec.get("schedulerName") or ""),
        priority=priority,
        preempt_never=preempt_never,
        requests=derived.requests,
        non_zero_cpu=derived.non_zero_cpu,
        non_zero_memory=derived.non_zero_memory,
        labels=labels,
        node_selector=derived.node_selector,
        required_terms=derived.required_terms,
        preferred_terms=derived.preferred_terms,
        host_ports=derived.host_ports,
        tolerations=derived.tolerations,
        created=_time(meta.get("creationTimestamp")) or 0.0,
        started=_time(status.get("startTime")),
        deleting=bool(meta.get("deletionTimestamp")),
        terminal=status.get("phase") in ("Succeeded", "Failed"),
        preemption_target=target,
        nominated_node=str(status.get("nominatedNodeName") or ""),
        gated=bool(pod_spec.get("schedulingGates")),
        pod=pod,
        spec=derived,
        affinity_terms=resolve_terms(derived.pod_affinity, namespace) if derived.pod_affinity else (),
        anti_terms=resolve_terms(derived.pod_anti_affinity, namespace) if derived.pod_anti_affinity else (),
        spread=resolve_spread(derived.spread, labels) if derived.spread else (),
        preferred_affinity=(
            resolve_weighted(derived.preferred_pod_affinity, namespace) if derived.preferred_pod_affinity else ()
        ),
        preferred_anti=(
            resolve_weighted(derived.preferred_pod_anti_affinity, namespace)
            if derived.preferred_pod_anti_affinity
            else ()
        ),
        soft_spread=resolve_spread(derived.soft_spread, labels) if derived.soft_spread else (),
        any_spread=derived.any_spread,
    )


def _victim_view(pod: PodInfo) -> tuple[Any, ...]:
    """What `_place` compared before stop 49: a placed pod's contribution to decisions, as one tuple."""
    r = pod.requests
    return (
        pod.node_name,
        pod.priority,
        (r.milli_cpu, r.memory, r.ephemeral_storage, tuple(sorted(r.scalars.items()))),
        pod.non_zero_cpu,
        pod.non_zero_memory,
        pod.started,
        pod.deleting,
        pod.preemption_target,
        tuple(sorted(pod.labels.items())),
        pod.host_ports,
    )


_TIMES = st.sampled_from([None, "", "2026-01-01T00:00:00Z", "2026-01-01T00:00:07Z", "not a time", 5])
_TEXT = st.sampled_from([None, "", "a", "b", 0, 3])
_LABELS = st.one_of(
    st.none(), st.dictionaries(st.sampled_from(["app", "index", "zone"]), st.sampled_from(["x", "y"]), max_size=3)
)
_CONDITION = st.one_of(
    st.sampled_from(["junk", 7, None]),
    st.fixed_dictionaries(
        {
            "type": st.sampled_from([DISRUPTION_TARGET, "PodScheduled", "Ready"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
            "reason": st.sampled_from(["PreemptionByScheduler", "EvictionByEvictionAPI", ""]),
        }
    ),
)
_CONTAINER = st.fixed_dictionaries(
    {"name": st.just("c")},
    optional={
        "resources": st.fixed_dictionaries(
            {"requests": st.dictionaries(st.sampled_from(["cpu", "memory", "example.com/gpu"]), st.just("1"))}
        ),
        "ports": st.lists(
            st.fixed_dictionaries({"containerPort": st.just(80), "hostPort": st.sampled_from([0, 80, 81])}),
            max_size=2,
        ),
    },
)
_SPREAD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}
_AFFINITY = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", "labelSelector": {}}],
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {}}}
        ],
    },
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", "labelSelector": {}}]
    },
}


@st.composite
def pods(draw: st.DrawFn) -> Obj:
    """A pod varied in everything `pod_info` and `spec_info` read, malformed values included."""
    meta: Obj = {}
    for key, values in (
        ("uid", _TEXT),
        ("namespace", _TEXT),
        ("name", _TEXT),
        ("labels", _LABELS),
        ("creationTimestamp", _TIMES),
        ("deletionTimestamp", _TIMES),
    ):
        if draw(st.booleans()):
            meta[key] = draw(values)
    spec: Obj = {"containers": draw(st.lists(_CONTAINER, max_size=2))}
    for key, values in (
        ("nodeName", _TEXT),
        ("schedulerName", st.sampled_from([None, "", "default-scheduler", "other"])),
        ("schedulingGates", st.sampled_from([None, [], [{"name": "g"}]])),
        ("topologySpreadConstraints", st.sampled_from([None, [_SPREAD]])),
        ("affinity", st.sampled_from([None, _AFFINITY])),
        ("tolerations", st.sampled_from([None, [{"key": "k", "operator": "Exists"}]])),
    ):
        if draw(st.booleans()):
            spec[key] = draw(values)
    status: Obj = {}
    for key, values in (
        ("phase", st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed"])),
        ("startTime", _TIMES),
        ("nominatedNodeName", _TEXT),
        ("conditions", st.one_of(st.none(), st.just("junk"), st.lists(_CONDITION, max_size=4))),
    ):
        if draw(st.booleans()):
            status[key] = draw(values)
    pod: Obj = {"metadata": meta, "spec": spec}
    if draw(st.booleans()):
        pod["status"] = status
    return pod


@settings(max_examples=examples(400), deadline=None)
@given(pods(), st.integers(min_value=-5, max_value=5), st.booleans(), st.booleans())
def test_pod_info_is_the_keyword_form(pod: Obj, priority: int, never: bool, shared: bool) -> None:
    """Every field by position lands where the keyword form put it (a field order mismatch fails here)."""
    derived = shared_spec_info(pod["spec"]) if shared else None
    made = pod_info(pod, priority=priority, preempt_never=never, spec=derived)
    plain = plain_pod_info(pod, priority=priority, preempt_never=never, spec=derived)
    for f in dataclasses.fields(PodInfo):
        assert getattr(made, f.name) == getattr(plain, f.name), f.name
    assert made.pod is pod


def test_pod_info_fields_by_position_distinct() -> None:
    """One pod whose every field differs from its neighbours' (a swap of two fields of one type shows)."""
    pod: Obj = {
        "metadata": {"uid": "u", "namespace": "ns", "name": "n", "labels": {"a": "b"}},
        "spec": {"nodeName": "node", "schedulerName": "sched", "schedulingGates": [{"name": "g"}]},
        "status": {
            "startTime": "2026-01-01T00:00:07Z",
            "nominatedNodeName": "nom",
            "phase": "Failed",
            "conditions": [{"type": DISRUPTION_TARGET, "status": "True", "reason": "PreemptionByScheduler"}],
        },
    }
    pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:01Z"
    made = pod_info(pod, priority=4, preempt_never=True)
    assert (made.uid, made.namespace, made.name, made.node_name, made.scheduler_name) == (
        "u",
        "ns",
        "n",
        "node",
        "sched",
    )
    assert (made.priority, made.preempt_never, made.nominated_node, made.gated) == (4, True, "nom", True)
    assert (made.started, made.created, made.terminal, made.preemption_target) == (
        1767225607.0,
        1767225601.0,
        True,
        True,
    )
    assert made == plain_pod_info(pod, priority=4, preempt_never=True, spec=made.spec)


@st.composite
def versions(draw: st.DrawFn) -> tuple[PodInfo, PodInfo]:
    """Two versions of a placed pod: the second a copy, or its spec info, labels and status varied."""
    first = draw(pods())
    second = copy.deepcopy(first) if draw(st.booleans()) else draw(pods())
    if draw(st.booleans()):
        second["metadata"]["labels"] = first["metadata"].get("labels")  # the very labels object
    a_spec = shared_spec_info(first["spec"])
    b_spec = a_spec if draw(st.booleans()) else shared_spec_info(second["spec"])
    a = pod_info(first, priority=draw(st.integers(0, 2)), preempt_never=False, spec=a_spec)
    b = pod_info(second, priority=draw(st.integers(0, 2)), preempt_never=False, spec=b_spec)
    return a, (a if draw(st.integers(0, 9)) == 0 else b)


@settings(max_examples=examples(600), deadline=None)
@given(versions())
def test_same_victim_view_is_the_tuple_comparison(pair: tuple[PodInfo, PodInfo]) -> None:
    a, b = pair
    assert _same_victim_view(a, b) == (_victim_view(a) == _victim_view(b))
    assert _same_victim_view(b, a) == (_victim_view(b) == _victim_view(a))


def test_same_victim_view_sees_each_field() -> None:
    """A change in any one compared field is seen, and a status-only change is not."""
    base: Obj = {
        "metadata": {"uid": "u", "namespace": "ns", "name": "n", "labels": {"a": "b"}},
        "spec": {
            "nodeName": "node",
            "containers": [
                {
                    "name": "c",
                    "resources": {"requests": {"cpu": "1", "example.com/gpu": "1"}},
                    "ports": [{"containerPort": 80, "hostPort": 80}],
                }
            ],
        },
        "status": {"startTime": "2026-01-01T00:00:07Z"},
    }
    a = pod_info(base, priority=1, preempt_never=False)
    status_only = copy.deepcopy(base)
    status_only["status"]["podIP"] = "10.0.0.1"
    assert _same_victim_view(a, pod_info(status_only, priority=1, preempt_never=False))
    assert not _same_victim_view(a, pod_info(base, priority=2, preempt_never=False))
    for path, value in (
        (("spec", "nodeName"), "other"),
        (("status", "startTime"), "2026-01-01T00:00:08Z"),
        (("metadata", "deletionTimestamp"), "2026-01-01T00:00:09Z"),
        (("metadata", "labels"), {"a": "c"}),
        (("spec", "containers"), [{"name": "c", "resources": {"requests": {"cpu": "2", "example.com/gpu": "1"}}}]),
        (("spec", "containers"), [{"name": "c", "resources": {"requests": {"cpu": "1", "example.com/gpu": "2"}}}]),
        (("status", "conditions"), [{"type": DISRUPTION_TARGET, "status": "True", "reason": "PreemptionByScheduler"}]),
    ):
        changed = copy.deepcopy(base)
        changed[path[0]][path[1]] = value
        b = pod_info(changed, priority=1, preempt_never=False)
        assert not _same_victim_view(a, b), path
        assert _victim_view(a) != _victim_view(b), path


_MOUNTED = st.fixed_dictionaries(
    {"name": st.just("c")},
    optional={
        "resources": st.fixed_dictionaries(
            {"requests": st.dictionaries(st.sampled_from(["cpu", "memory"]), st.just("1"))}
        ),
        "volumeMounts": st.sampled_from([None, [], [{"name": "kube-api-access-abcde", "mountPath": "/var/run"}]]),
        "ports": st.just([{"containerPort": 80, "hostPort": 81}]),
    },
)


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"containers": st.lists(st.one_of(_MOUNTED, st.just("junk")), max_size=3)},
            optional={
                "initContainers": st.lists(_MOUNTED, max_size=2),
                "hostname": st.sampled_from(["a-0", "a-1"]),
                "volumes": st.just([{"name": "kube-api-access-fghij"}]),
            },
        ),
        min_size=1,
        max_size=6,
    )
)
def test_shared_spec_info_is_spec_info(specs: list[Obj]) -> None:
    """The remembered answer is the computed one, whatever was remembered before: a key that leaves out only
    what `spec_info` does not read (the containers' own list when none has `volumeMounts`)."""
    for spec in specs:
        assert shared_spec_info(spec) == spec_info(spec)
