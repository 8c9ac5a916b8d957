"""Stop 54: `P.sync_facts` reads the Ready condition of an active pod only (a terminal or deleted pod's readiness
is never counted: `new_context` adds it for active pods alone), and carries the completion index over from an
earlier version that holds the very same string as the annotation's value, though in another map (the binding
copies the map). Stop 53's `sync_facts` is kept here; on hypothesis pods (phase, deletion, conditions of every
shape, the index annotation absent, valid, invalid or not a string) and earlier versions sharing the map, the
value, an equal copy of it or nothing, the facts are stop 53's with Ready only for an active pod, the index is
`completion_index`'s, and `new_context` classifies the same from either facts."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.job import pods as P
from kjobs.job.pods import TERMINAL_PHASES, SyncFacts, completion_index
from kjobs.job.sync import new_context
from tests.hypothesis_budget import examples


def old_sync_facts(pod: Obj, earlier: Obj | None = None, earlier_facts: SyncFacts | None = None) -> SyncFacts:
    """Stop 53's `sync_facts`."""
    meta = pod.get("metadata") or {}
    pod_status = pod.get("status") or {}
    ready = False
    for cond in pod_status.get("conditions") or ():  # `is_ready`: the first Ready condition
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            ready = cond.get("status") == "True"
            break
    if (
        earlier_facts is not None
        and earlier is not None
        and (annotations := meta.get("annotations")) is not None
        and annotations is (earlier.get("metadata") or {}).get("annotations")
    ):
        index = earlier_facts[4]
    else:
        index = completion_index(pod)
    return (
        pod_status.get("phase") not in TERMINAL_PHASES,
        bool(meta.get("deletionTimestamp")),
        ready,
        JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ()),
        index,
        str(meta.get("uid") or ""),
    )


_conditions = st.one_of(
    st.none(),
    st.lists(
        st.one_of(
            st.builds(
                lambda t, s: {"type": t, "status": s},
                st.sampled_from(["Ready", "ContainersReady", "PodScheduled"]),
                st.sampled_from(["True", "False", "Unknown", True]),
            ),
            st.just("Ready"),
            st.none(),
        ),
        max_size=4,
    ),
)
_index = st.one_of(
    st.none(), st.sampled_from(["0", "7", "007", "-1", "x", "", " 3", "99999999999999999999"]), st.just(5)
)


def _pod(phase: Any, deleting: bool, conditions: Any, tracked: bool, index: Any, annotations: Obj | None) -> Obj:
    meta: Obj = {"name": "p", "uid": "u"}
    if annotations is not None:
        meta["annotations"] = annotations
    elif index is not None:
        meta["annotations"] = {"other": "x", JOB_COMPLETION_INDEX_ANNOTATION: index}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-07T00:00:00Z"
    if tracked:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    pod: Obj = {"metadata": meta}
    if phase is not None or conditions is not None:
        pod["status"] = {"phase": phase, "conditions": conditions}
    return pod


_phase = st.sampled_from(["Pending", "Running", "Succeeded", "Failed", None, 3])


@settings(max_examples=examples(300), deadline=None)
@given(
    now=st.tuples(_phase, st.booleans(), _conditions, st.booleans()),
    before=st.tuples(_phase, st.booleans(), _conditions, st.booleans()),
    index=_index,
    shared=st.sampled_from(["map", "value", "copy", "other", "none", "no earlier"]),
)
@example(now=("Succeeded", False, [{"type": "Ready", "status": "True"}], True), before=("Running", False, None, True),
         index="3", shared="value")  # fmt: skip
def test_sync_facts_are_stop_53s_with_ready_for_active_pods(
    now: tuple[Any, ...], before: tuple[Any, ...], index: Any, shared: str
) -> None:
    earlier = _pod(*before, index, None)
    earlier_map = earlier["metadata"].get("annotations")
    if shared == "map":
        annotations = earlier_map
    elif shared == "value" and earlier_map is not None:
        annotations = dict(earlier_map)  # the binding's copy: the same value object
    elif shared == "copy" and isinstance(index, str):
        annotations = {JOB_COMPLETION_INDEX_ANNOTATION: "".join(list(index)) + ""}  # equal, maybe another object
    elif shared == "other":
        annotations = {JOB_COMPLETION_INDEX_ANNOTATION: "12"}
    else:
        annotations = None
    pod = _pod(*now, index if shared not in ("other", "copy") else None, annotations)
    if shared == "no earlier":
        facts, old = P.sync_facts(pod), old_sync_facts(pod)
    else:
        facts = P.sync_facts(pod, earlier, P.sync_facts(earlier))
        old = old_sync_facts(pod, earlier, old_sync_facts(earlier))
    active = old[0] and not old[1]
    assert facts == (old[0], old[1], old[2] and active, old[3], old[4], old[5])
    assert facts[4] == completion_index(pod)
    assert facts[0] == ((pod.get("status") or {}).get("phase") not in TERMINAL_PHASES)
    job: Obj = {"metadata": {"name": "j", "uid": "j"}, "spec": {}, "status": {}}
    with_new = new_context(job, [pod], now=0.0, expected_rm_finalizers=frozenset(), facts={id(pod): facts})
    with_old = new_context(job, [pod], now=0.0, expected_rm_finalizers=frozenset(), facts={id(pod): old})
    assert with_new == with_old
