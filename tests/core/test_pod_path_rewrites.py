"""Stop 39 rewrote small functions on every pod's path (each run for every pod event or every stored write) to do
fewer calls and lookups: each must answer exactly what the plain version it replaced answers, for any input.

The plain versions are spelled out here as they were, and hypothesis feeds both the same objects: well-formed
pods, and values of the wrong JSON type wherever one can stand (a store indexes whatever a client sent)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import selectors
from kjobs.api.names import DISRUPTION_TARGET, JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.selectors import FIELD_ALIASES, FIELD_LABELS, field_value, selectable_fields
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.informer import key_of
from kjobs.clock import FakeClock
from kjobs.controllers.disruption import stale_wait
from kjobs.controllers.scheduling import PodInfo, pod_info, with_field
from kjobs.controllers.tainteviction import TaintEvictionController, _node_name, _same_tolerations, _tolerations
from kjobs.job import conditions as C
from kjobs.job import pods as P
from kjobs.job.context import is_finished
from kjobs.progress import pod_state
from tests.hypothesis_budget import examples

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "n1", "Running", "Succeeded", "Failed", "Pending", "Unknown", "true", "0", "7", "x"]),
)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(st.sampled_from(["a", "ip"]), SCALARS))


def _field(name: str) -> st.SearchStrategy[Any]:
    """A value for `name`: mostly a string, sometimes any JSON value."""
    return st.one_of(st.sampled_from(["", "a", "node-1", "Running", "Failed", "1"]), VALUES)


def _section(keys: list[str]) -> st.SearchStrategy[Any]:
    """A dict with some of `keys` (each holding any value), or now and then no dict at all."""
    return st.one_of(st.fixed_dictionaries({}, optional={k: _field(k) for k in keys}), VALUES)


OBJECTS = st.fixed_dictionaries(
    {},
    optional={
        "metadata": _section(["name", "namespace", "uid", "deletionTimestamp", "finalizers", "annotations"]),
        "spec": _section(["nodeName", "restartPolicy", "schedulerName", "serviceAccountName", "hostNetwork"]),
        "status": _section(["phase", "podIP", "podIPs", "nominatedNodeName", "succeeded", "conditions"]),
        "involvedObject": _section(["kind", "namespace", "name", "uid", "apiVersion", "fieldPath"]),
        "source": _section(["component", "host"]),
        "reason": _field("reason"),
        "type": _field("type"),
    },
)


def _plain_selectable_fields(resource: str, obj: Obj) -> dict[str, str]:
    """What `selectable_fields` answered before its plan was grouped: `field_value` of each label, in name order."""
    fields = FIELD_LABELS.get(resource, selectors._METADATA_FIELDS) - FIELD_ALIASES.get(resource, {}).keys()
    return {f: field_value(obj, f) for f in sorted(fields)}


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from([*sorted(FIELD_LABELS), "configmaps"]), OBJECTS)
def test_grouped_selectable_fields_are_each_fields_value(resource: str, obj: Obj) -> None:
    values = selectable_fields(resource, obj)
    assert values == _plain_selectable_fields(resource, obj)
    assert list(values) == sorted(values)  # the same order as before: the index keeps the dict


def test_a_field_whose_path_has_one_key_or_three() -> None:
    """The plan keeps paths of any length: one key (an event's `reason`, `type`) and three (no built-in label has
    one; a custom resource's `selectableFields` may)."""
    event = {"reason": "Killing", "type": "Normal", "source": {"component": "kubelet"}, "metadata": {"name": "e"}}
    assert selectable_fields("events", event)["reason"] == "Killing"
    assert selectable_fields("events", event)["source"] == "kubelet"
    FIELD_LABELS["things.example.com"] = selectors._METADATA_FIELDS | {"spec.a.b", "spec.c"}
    try:
        thing = {"metadata": {"name": "t"}, "spec": {"a": {"b": 3}, "c": "x"}}
        assert selectable_fields("things.example.com", thing) == _plain_selectable_fields("things.example.com", thing)
        assert selectable_fields("things.example.com", thing)["spec.a.b"] == "3"
    finally:
        del FIELD_LABELS["things.example.com"]
        selectors._PLANS.pop("things.example.com", None)


def _pod(name: str, *, node: str = "", phase: str = "Pending", deleting: bool = False) -> Obj:
    pod: Obj = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": "a"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
        "status": {"phase": phase},
    }
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return pod


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(PodInfo)])
def test_with_field_is_dataclasses_replace(name: str) -> None:
    info = pod_info(_pod("p", node="n1"), priority=7, preempt_never=True)
    value = object()  # a value no field holds: it must land in `name` and nowhere else
    replaced = with_field(info, name, value)
    assert replaced == dataclasses.replace(info, **{name: value})
    assert getattr(replaced, name) is value and replaced is not info
    assert getattr(info, name) is not value  # the original is left as it was


POD_META = st.fixed_dictionaries(
    {},
    optional={
        "uid": _field("uid"),
        "deletionTimestamp": _field("deletionTimestamp"),
        "finalizers": st.one_of(st.lists(st.sampled_from([JOB_TRACKING_FINALIZER, "x/y"]), max_size=2), VALUES),
        "annotations": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    JOB_COMPLETION_INDEX_ANNOTATION: st.one_of(st.sampled_from(["0", "12", "-1", "x", "007"]), VALUES),
                    "batch.kubernetes.io/job-index-failure-count": st.sampled_from(["0", "3", "-2", "99999999999"]),
                },
            ),
            st.none(),
        ),
    },
)
CONDITION = st.fixed_dictionaries(
    {
        "type": st.sampled_from([DISRUPTION_TARGET, "Ready", "Complete", "Failed"]),
        "status": st.sampled_from(["True", "False"]),
    },
    optional={
        "reason": st.sampled_from(["TerminationByKubelet", "PreemptionByScheduler"]),
        "lastTransitionTime": st.sampled_from(["2026-01-01T00:00:00Z", ""]),
    },
)
POD_STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": st.one_of(st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown", ""]), SCALARS),
        "conditions": st.lists(CONDITION, max_size=3),
    },
)
PODS = st.fixed_dictionaries({}, optional={"metadata": st.one_of(POD_META, st.none()), "status": POD_STATUS})


@settings(max_examples=examples(300), deadline=None)
@given(PODS)
def test_pod_facts_read_inline_answer_as_through_meta_and_status(pod: Obj) -> None:
    meta, status = P.meta(pod), P.status(pod)
    assert P.uid(pod) == str(meta.get("uid") or "")
    phase = str(status.get("phase") or "")
    assert P.phase(pod) == phase
    assert P.is_terminal(pod) is (phase in P.TERMINAL_PHASES)
    assert P.is_deleting(pod) is bool(meta.get("deletionTimestamp"))
    try:
        tracked: bool | None = JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ())
    except TypeError:  # a finalizers value no `in` can read: both raise alike
        tracked = None
    if tracked is None:
        with pytest.raises(TypeError):
            P.has_tracking_finalizer(pod)
    else:
        assert P.has_tracking_finalizer(pod) is tracked
    plain_state = phase or "Pending"
    if P.is_deleting(pod) and plain_state not in ("Succeeded", "Failed"):
        plain_state = "Terminating"
    states = ("Pending", "Running", "Terminating", "Succeeded", "Failed")
    assert pod_state(pod) == (plain_state if plain_state in states else "Pending")


def _plain_stale_wait(pod: Obj, now: float, timeout: float) -> float | None:
    """`stale_wait` as it was, through the pod helpers and `find_condition`."""
    if P.is_deleting(pod) or P.is_terminal(pod):
        return None
    cond = next(
        (c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == DISRUPTION_TARGET), None
    )
    if cond is None or cond.get("status") != "True" or cond.get("reason") == "TerminationByKubelet":
        return None
    since = cond.get("lastTransitionTime")
    start = parse_time(since) if isinstance(since, str) and since else 0.0
    return max(0.0, timeout - (now - start))


@settings(max_examples=examples(300), deadline=None)
@given(PODS, st.floats(0, 2e9))
def test_stale_wait_inlined_answers_as_before(pod: Obj, now: float) -> None:
    assert stale_wait(pod, now, 120.0) == _plain_stale_wait(pod, now, 120.0)


@settings(deadline=None)  # a loaded CI machine may take longer than the default 200 ms for one example
@given(st.one_of(st.none(), st.just([]), st.lists(CONDITION, max_size=3)))
def test_is_finished_without_conditions_is_false_as_before(conditions: list[Obj] | None) -> None:
    job: Obj = {"status": {} if conditions is None else {"conditions": conditions}}
    plain = C.is_true(conditions, "Complete") or C.is_true(conditions, "Failed")
    assert is_finished(job) is plain


def _plain_taint_on_pod(controller: TaintEvictionController, old: Obj | None, new: Obj | None) -> None:
    """`TaintEvictionController._on_pod` before its early exit read the two specs raw."""
    old_node, new_node = _node_name(old), _node_name(new)
    if old is not None and new is not None and old_node == new_node and _same_tolerations(old, new):
        return
    key = key_of(new or old or {})
    if old_node and old_node != new_node:
        controller._pods_by_node.get(old_node, set()).discard(key)
    if new_node:
        controller._pods_by_node.setdefault(new_node, set()).add(key)
    if new is None:
        controller._cancel(key)
        return
    if not new_node:
        return
    taints = controller.tainted.get(new_node)
    if taints is None:
        return
    controller._process_pod(key, _tolerations(new), taints, controller.clock.now())


_ABSENT = object()
SPEC_CHOICES: list[Any] = [None] + [
    {k: v for k, v in (("nodeName", node), ("tolerations", tolerations)) if v is not _ABSENT}
    for node in (_ABSENT, None, "", "n1", "n2")
    for tolerations in (_ABSENT, None, [], [{"key": "k", "operator": "Exists"}], ["junk"], [{"key": "j"}])
]
"""Every spec shape the handler tells apart: no spec, and each node (the tainted n1 among them) with each kind of
toleration list (absent, null, empty, one, one that is no object and is dropped, another)."""


def _taint_controller(calls: list[Any]) -> TaintEvictionController:
    controller = TaintEvictionController(client=None, clock=FakeClock())  # type: ignore[arg-type]
    controller._started = True
    controller.tainted = {"n1": [{"key": "t", "effect": "NoExecute"}]}
    controller._pods_by_node = {"n1": {("default", "p")}, "n2": {("default", "p")}}
    controller._cancel = lambda key: calls.append(("cancel", key))  # type: ignore[method-assign]
    controller._process_pod = lambda *args: calls.append(("process", args))  # type: ignore[method-assign]
    return controller


def test_taint_evictions_early_exit_acts_as_before() -> None:
    """Every pair of spec shapes, and each with itself (the same object, as a status write leaves it): the same
    index and the same evictions planned or cancelled as the handler without the raw early exit."""

    def pod(spec: Any) -> Obj:
        return {"metadata": {"name": "p", "namespace": "default"}, **({} if spec is None else {"spec": spec})}

    pairs = [(pod(a), pod(b)) for a in SPEC_CHOICES for b in SPEC_CHOICES]
    pairs += [(pod(a), {**pod(a)}) for a in SPEC_CHOICES]  # a status write: the spec object itself kept
    pairs += [(None, pod(a)) for a in SPEC_CHOICES] + [(pod(a), None) for a in SPEC_CHOICES]
    for old, new in pairs:
        fast_calls: list[Any] = []
        plain_calls: list[Any] = []
        fast, plain = _taint_controller(fast_calls), _taint_controller(plain_calls)
        fast._on_pod(old, new)
        _plain_taint_on_pod(plain, old, new)
        assert (fast._pods_by_node, fast_calls) == (plain._pods_by_node, plain_calls), (old, new)
