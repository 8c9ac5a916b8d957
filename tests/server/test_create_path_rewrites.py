"""Stop 50: the pieces of a pod create that were rewritten give what they gave.

`_random_suffix` draws as `random.choices` did, without its list; `_qos_class` reads decoded resources without
generators; `_initial_status` asks the clock only for a status that holds the time; `_create_checked` omits the
empty collections of a metadata once when the stored and the decoded one are the same object (`_omit_empty` is
idempotent); the Priority plugin names the pod only for a refusal. The replaced forms are kept here and compared on
hypothesis-made inputs (malformed ones included: the same exception where the old form raised).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError, forbidden
from kjobs.server import admission as A
from kjobs.server import service as S
from kjobs.server.registry import lookup
from tests.hypothesis_budget import examples


def old_random_suffix() -> str:
    return "".join(random.choices(S.NAME_ALPHABET, k=5))


@settings(max_examples=examples(200), deadline=None)
@given(seed=st.integers(0, 2**32), count=st.integers(1, 5))
def test_random_suffix_draws_as_choices_did(seed: int, count: int) -> None:
    state = random.getstate()
    try:
        random.seed(seed)
        old = [old_random_suffix() for _ in range(count)]
        after_old = random.random()
        random.seed(seed)
        new = [S._random_suffix() for _ in range(count)]
        assert new == old and random.random() == after_old  # the same draws, no more
    finally:
        random.setstate(state)


def old_qos_class(pod: Any) -> str:
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests.update(req)
        limits.update(lim)
        if not all(k in lim for k in ("cpu", "memory")) or any(req.get(k, lim[k]) != lim[k] for k in lim):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


AMOUNT = st.sampled_from(["1", "2", "100m", 1, 1.0, "1Gi"])
AMOUNTS = st.one_of(
    st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]), AMOUNT, max_size=3),
    st.none(),
    st.just(""),
    st.just([["cpu", "1"]]),
    st.just("cpu"),
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.just("c")},
    optional={
        "resources": st.one_of(st.fixed_dictionaries({}, optional={"requests": AMOUNTS, "limits": AMOUNTS}), st.none())
    },
)
POD_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.one_of(st.lists(CONTAINER, max_size=3), st.none()),
        "initContainers": st.lists(CONTAINER, max_size=2),
    },
)


def outcome(run: Any) -> Any:
    try:
        return run()
    except (TypeError, ValueError, AttributeError, KeyError) as err:
        return type(err)


@settings(max_examples=examples(1000), deadline=None)
@given(spec=POD_SPEC)
def test_qos_class_as_before(spec: dict[str, Any]) -> None:
    pod = {"spec": spec}
    assert outcome(lambda: S._qos_class(pod)) == outcome(lambda: old_qos_class(pod))


def test_qos_classes_of_each_kind() -> None:
    both = {"cpu": "1", "memory": "1Gi"}
    assert S._qos_class({"spec": {"containers": [{"resources": {}}]}}) == "BestEffort"
    assert S._qos_class({"spec": {"containers": [{"resources": {"limits": both}}]}}) == "Guaranteed"
    assert S._qos_class({"spec": {"containers": [{"resources": {"limits": both, "requests": {"cpu": "2"}}}]}}) == (
        "Burstable"
    )


def test_initial_status_asks_the_time_only_where_it_is_written() -> None:
    asked: list[int] = []

    def now() -> str:
        asked.append(1)
        return "2026-01-01T00:00:00Z"

    pods, volumes = lookup("", "v1", "pods"), lookup("", "v1", "persistentvolumes")
    assert pods is not None and volumes is not None
    assert S._initial_status(pods, {"spec": {"containers": [{"name": "c"}]}}, now) == {
        "phase": "Pending",
        "qosClass": "BestEffort",
    }
    assert asked == []
    gated = S._initial_status(pods, {"spec": {"schedulingGates": [{"name": "g"}]}}, now)
    assert gated["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z" and asked == [1]
    assert S._initial_status(volumes, {}, now) == {
        "phase": "Pending",
        "lastPhaseTransitionTime": "2026-01-01T00:00:00Z",
    }


EMPTYISH = st.one_of(st.none(), st.just([]), st.just({}), st.just(""), st.just(0), st.just(["a"]), st.just({"a": "b"}))


@settings(max_examples=examples(300), deadline=None)
@given(meta=st.dictionaries(st.sampled_from([*S._OMITTED_WHEN_EMPTY, "name"]), EMPTYISH))
def test_omitting_empty_collections_twice_is_omitting_them_once(meta: dict[str, Any]) -> None:
    once = copy.deepcopy(meta)
    S._omit_empty(once)
    twice = copy.deepcopy(once)
    S._omit_empty(twice)
    assert twice == once


def old_admit_pod_priority(pod: Any, old: Any, classes: Any, *, generated: bool = False) -> Any:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    changes: dict[str, Any] = {}
    if old is not None:
        stored = old.get("spec")
        old_spec = stored if isinstance(stored, dict) else {}
        for key in ("priority", "preemptionPolicy"):
            if spec.get(key) is None and old_spec.get(key) is not None:
                changes[key] = old_spec[key]
        return {**pod, "spec": {**spec, **changes}} if changes else pod
    name = A.name_for_errors(pod.get("metadata") or {}, generated)
    class_name = spec.get("priorityClassName")
    policy: object = A.PREEMPT_LOWER_PRIORITY
    if not class_name:
        pc = A.default_priority_class(classes)
        priority = A.DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS
        if pc is not None:
            changes["priorityClassName"] = (pc.get("metadata") or {}).get("name")
            priority, policy = A._value(pc), pc.get("preemptionPolicy")
    else:
        pc = next((c for c in classes if (c.get("metadata") or {}).get("name") == class_name), None)
        if pc is None:
            raise forbidden("pods", name, f"no PriorityClass with name {class_name} was found")
        priority, policy = A._value(pc), pc.get("preemptionPolicy")
    given_priority = spec.get("priority")
    if given_priority is not None and given_priority != priority:
        raise forbidden(
            "pods",
            name,
            f"the integer value of priority ({given_priority}) must not be provided in pod spec; priority admission "
            f"controller computed {priority} from the given PriorityClass name",
        )
    changes["priority"] = priority
    if policy is not None:
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise forbidden(
                "pods",
                name,
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod spec; priority "
                f"admission controller computed {policy} from the given PriorityClass name",
            )
        changes["preemptionPolicy"] = policy
    return {**pod, "spec": {**spec, **changes}}


CLASS = st.fixed_dictionaries(
    {"metadata": st.fixed_dictionaries({"name": st.sampled_from(["high", "low", "system-node-critical"])})},
    optional={
        "value": st.sampled_from([0, 10, 1000, "x"]),
        "globalDefault": st.booleans(),
        "preemptionPolicy": st.sampled_from(["Never", "PreemptLowerPriority", None]),
    },
)
PRIORITY_POD = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({}, optional={"name": st.just("p"), "generateName": st.just("job-0-")}),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "priorityClassName": st.sampled_from(["high", "missing", ""]),
                "priority": st.sampled_from([0, 10, 1000]),
                "preemptionPolicy": st.sampled_from(["Never", "PreemptLowerPriority"]),
            },
        ),
    }
)


def admitted(run: Any) -> Any:
    try:
        return run()
    except ApiError as err:
        return (err.code, err.reason, err.message)


@settings(max_examples=examples(600), deadline=None)
@given(pod=PRIORITY_POD, classes=st.lists(CLASS, max_size=3), generated=st.booleans(), update=st.booleans())
def test_priority_admission_as_before(pod: dict[str, Any], classes: list[Any], generated: bool, update: bool) -> None:
    old = {"spec": {"priority": 7, "preemptionPolicy": "Never"}} if update else None
    new_result = admitted(lambda: A.admit_pod_priority(pod, old, classes, generated=generated))
    assert new_result == admitted(lambda: old_admit_pod_priority(pod, old, classes, generated=generated))


@pytest.mark.parametrize("generated", [False, True])
def test_a_refusal_names_the_pod_as_before(generated: bool) -> None:
    pod = {"metadata": {"name": "p", "generateName": "job-0-"}, "spec": {"priorityClassName": "missing"}}
    with pytest.raises(ApiError) as caught:
        A.admit_pod_priority(pod, None, [], generated=generated)
    assert f'pods "{"job-0-" if generated else "p"}" is forbidden' in caught.value.message
