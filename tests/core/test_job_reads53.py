"""Stop 53's reads in the Job controller's per-pod steps (docs/node53.md), each against the form it replaced:
`P.finish_time` reads the containers' finish inline for a pod with no init containers, `is_index_failed` reads the
index failure count without `P.index_failure_count`'s call, and `_manage_pods` asks `remaining_time_per_index`
only for an index with a failed pod held (of None it is 0)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_INDEX_FAILURE_COUNT_ANNOTATION
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.backoff import remaining_time_per_index
from kjobs.job.context import is_index_failed, is_pod_failed, match_policy
from kjobs.policy import FAIL_INDEX
from tests.hypothesis_budget import examples


def old_finish_time(pod: Obj) -> float:
    """Stop 52's `finish_time`: the containers' finish always through `_containers_finish_time`."""
    latest = P._containers_finish_time(pod)
    if latest is not None:
        return latest
    ready = P.condition(pod, "Ready")
    if ready is not None and ready.get("status") == "False":
        changed = P._time(ready.get("lastTransitionTime"))
        if changed is not None and changed != P.GO_ZERO_TIME:
            return changed
    deleted = P._time(P.meta(pod).get("deletionTimestamp"))
    if deleted is not None:
        return deleted - float(P.meta(pod).get("deletionGracePeriodSeconds") or 0)
    return P.creation_time(pod)


def old_is_index_failed(job: Obj, pod: Obj) -> bool:
    """Stop 52's `is_index_failed`."""
    counted = False
    if is_pod_failed(pod, job):
        policy = (job.get("spec") or {}).get("podFailurePolicy")
        if policy is not None:
            decision = match_policy(job, pod)
            if decision.action == FAIL_INDEX:
                return True
            counted = decision.count_failed
        else:
            counted = True
    limit = (job.get("spec") or {}).get("backoffLimitPerIndex")
    return counted and limit is not None and P.index_failure_count(pod) >= int(limit)


_times = st.sampled_from([None, "", "2026-01-01T00:00:05Z", "2026-01-01T00:00:09Z", "0001-01-01T00:00:00Z", "bad", 7])


def _container_status(name: str) -> Any:
    state = st.one_of(
        st.just({}),
        st.just({"running": {"startedAt": "2026-01-01T00:00:00Z"}}),
        st.builds(lambda t: {"terminated": {"exitCode": 1, "finishedAt": t}}, _times),
        st.builds(lambda t: {"terminated": {"exitCode": 0} if t is None else {"exitCode": 0, "finishedAt": t}}, _times),
        st.just({"terminated": "x"}),
    )
    return st.one_of(st.none(), st.builds(lambda s: {"name": name, "state": s}, state))


_init = st.one_of(
    st.none(),
    st.just([]),
    st.lists(
        st.builds(
            lambda name, policy: {"name": name} if policy is None else {"name": name, "restartPolicy": policy},
            st.sampled_from(["i1", "i2"]),
            st.sampled_from([None, "Always", "Never"]),
        ),
        max_size=2,
    ),
)


def _ready(status: str, changed: Any) -> Obj:
    return {"type": "Ready", "status": status, "lastTransitionTime": changed}


_pods = st.builds(
    lambda statuses, init_statuses, init, ready, deleted, grace, created, annotations: {
        "metadata": {
            k: v
            for k, v in {
                "deletionTimestamp": deleted,
                "deletionGracePeriodSeconds": grace,
                "creationTimestamp": created,
                "annotations": annotations,
            }.items()
            if v is not None
        },
        "spec": {"containers": [{"name": "a"}], **({} if init is None else {"initContainers": init})},
        "status": {
            "phase": "Failed",
            "containerStatuses": statuses,
            "initContainerStatuses": init_statuses,
            "conditions": [] if ready is None else [_ready(*ready)],
        },
    },
    st.lists(_container_status("a"), max_size=3),
    st.lists(st.one_of(_container_status("i1"), _container_status("i2")), max_size=2),
    _init,
    st.one_of(st.none(), st.tuples(st.sampled_from(["False", "True"]), _times)),
    st.one_of(st.none(), _times),
    st.one_of(st.none(), st.sampled_from([0, 30])),
    st.one_of(st.none(), _times),
    st.one_of(
        st.none(),
        st.dictionaries(
            st.just(JOB_INDEX_FAILURE_COUNT_ANNOTATION), st.sampled_from(["0", "1", "2", "3", "x", "-1", "99999999999"])
        ),
    ),
)


@settings(max_examples=examples(1500), deadline=None)
@given(_pods)
def test_finish_time_is_stop_52s(pod: Obj) -> None:
    assert P.finish_time(pod) == old_finish_time(pod)


@settings(max_examples=examples(800), deadline=None)
@given(_pods, st.one_of(st.none(), st.integers(0, 3)), st.sampled_from([None, "Failed", "TerminatingOrFailed"]))
def test_is_index_failed_is_stop_52s(pod: Obj, limit: int | None, replacement: str | None) -> None:
    spec: Obj = {"completionMode": "Indexed", "completions": 4}
    if limit is not None:
        spec["backoffLimitPerIndex"] = limit
    if replacement is not None:
        spec["podReplacementPolicy"] = replacement
    assert is_index_failed({"spec": spec}, pod) is old_is_index_failed({"spec": spec}, pod)


def test_no_pod_held_means_no_wait() -> None:
    """What `_manage_pods` skips the call for."""
    for now in (0.0, 5.0, 1e9):
        assert remaining_time_per_index(None, now=now, base=10.0, cap=360.0) == 0.0
