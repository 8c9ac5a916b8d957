"""`is_pod_failed` and the sync's passes read a pod's phase, its deletion mark and the Job's
`podReplacementPolicy` inline (docs/node53.md) rather than through `P.phase`, `P.is_deleting` and
`only_replace_failed_pods`: the answers are stop 52's for any JSON phase (strings, numbers, booleans, null, lists,
maps), a missing or null `status`, `metadata` and `spec`, and any deletion mark."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.context import is_pod_failed, only_replace_failed_pods
from tests.hypothesis_budget import examples

_MISSING = object()


def old_is_pod_failed(pod: Obj, job: Obj) -> bool:
    """Stop 52's form."""
    phase = P.phase(pod)
    if phase == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return P.is_deleting(pod) and phase != "Succeeded"


_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["", "Failed", "Succeeded", "Running", "Pending", "Unknown", "failed", "Failed ", "0"]),
)
_PHASES = st.sampled_from(["Failed", "Succeeded", "Running", "Pending"])
_json = st.one_of(
    _PHASES, _json_scalars, st.lists(_json_scalars, max_size=2), st.dictionaries(st.just("phase"), _json_scalars)
)


def _section(key: str, value: Any) -> st.SearchStrategy[Any]:
    """Mostly the key set (the cases that decide), sometimes the section missing, null or empty."""
    present = st.builds(lambda v: {key: v}, value)
    return st.one_of(present, present, present, st.just(_MISSING), st.none(), st.just({}))


def _obj(**sections: Any) -> Obj:
    return {k: v for k, v in sections.items() if v is not _MISSING}


_pods = st.builds(
    lambda status, metadata: _obj(status=status, metadata=metadata),
    _section("phase", _json),
    _section("deletionTimestamp", st.one_of(st.just("2026-01-01T00:00:00Z"), _json_scalars)),
)
_jobs = st.builds(
    lambda spec: _obj(spec=spec),
    _section("podReplacementPolicy", st.one_of(_json_scalars, st.sampled_from(["TerminatingOrFailed"]))),
)


@settings(max_examples=examples(2000), deadline=None)
@given(_pods, _jobs)
def test_is_pod_failed_is_stop_52s(pod: Obj, job: Obj) -> None:
    assert is_pod_failed(pod, job) is old_is_pod_failed(pod, job)


@settings(max_examples=examples(1000), deadline=None)
@given(_pods)
def test_the_inline_succeeded_test_is_p_phases(pod: Obj) -> None:
    """`(pod.get("status") or {}).get("phase") == "Succeeded"`, as `_new_finished_pods`, `_succeeded_indexes`,
    `can_remove_finalizer` and `plan_tracking` read it, against `P.phase(pod) == "Succeeded"`."""
    assert ((pod.get("status") or {}).get("phase") == "Succeeded") is (P.phase(pod) == "Succeeded")


@settings(max_examples=examples(500), deadline=None)
@given(st.integers(-3, 12), st.one_of(st.none(), st.integers(0, 10)))
def test_the_inline_index_test_is_index_within(index: int, total: int | None) -> None:
    """The passes' `index != P.UNKNOWN_INDEX and total is not None and index < total` against `index_within`."""
    from kjobs.job.context import index_within

    inline = index != P.UNKNOWN_INDEX and total is not None and index < total
    assert inline is (index_within(index, total) is not None)
