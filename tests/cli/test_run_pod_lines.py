"""`kjobs run`'s pod handler (`kjobs.run._pod_lines`, docs/run53.md): the Job's pods filtered by namespace and
`controller-uid` label, a changed pod handed to `RunView.pod_changed` with its metadata read once. Held against the
form it replaced (stop 52's `on_pod`: `ours` on the new or old object, then `RunView.update_pod`): the same pods
taken, the same lines, the same view, whatever the sequence of pod versions, deletions and Job states."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.types import Obj
from kjobs.progress import RunView
from kjobs.run import _pod_lines
from tests.core.test_progress_pod_changed import _event, _job, _pod, _state_of
from tests.hypothesis_budget import examples


def _old_on_pod(view: RunView, meta: Obj, old: Obj | None, new: Obj | None) -> list[str] | None:
    """Stop 52's `on_pod` up to its lines (None: not the Job's pod)."""

    def ours(obj: Obj) -> bool:
        pod_meta = obj.get("metadata") or {}
        labels = pod_meta.get("labels") or {}
        return bool(pod_meta.get("namespace") == meta["namespace"] and labels.get(CONTROLLER_UID_LABEL) == meta["uid"])

    if not ours(new if new is not None else old or {}):
        return None
    return view.update_pod(new, deleted=old if new is None else None)


# Whose a pod is: the Job's, another namespace's, another Job's (its label), or no Job's (no label or no labels).
_owner = st.sampled_from(["ours", "other-namespace", "other-job", "unlabelled", "no-labels"])


def _owned(pod: Obj, owner: str) -> Obj:
    meta = pod["metadata"]
    if owner != "no-labels":
        meta["labels"] = {} if owner == "unlabelled" else {CONTROLLER_UID_LABEL: "x" if owner == "other-job" else "j"}
    if owner == "other-namespace":
        meta["namespace"] = "elsewhere"
    return pod


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(0, 2),
    st.lists(st.tuples(_event, _owner), min_size=4, max_size=30),
    st.booleans(),
)
def test_pod_lines_take_and_say_what_stop_52s_handler_did(first: int, events: list[Any], no_old: bool) -> None:
    start = _job([None, 2, 2][first], 0, (), 1)
    meta = start["metadata"]
    before, after = (
        RunView(copy.deepcopy(start), show_restarts=True, show_blocked=True),
        RunView(copy.deepcopy(start), show_restarts=True, show_blocked=True),
    )
    last: dict[int, Obj] = {}
    for version, (event, owner) in enumerate(events, start=2):
        if event[0] == "job":
            state = _job(event[1], event[2], event[3], version)
            assert before.update_job(copy.deepcopy(state)) == after.update_job(copy.deepcopy(state))
        elif event[0] == "gone":
            if event[1] not in last:
                continue
            gone = last.pop(event[1])
            said = _old_on_pod(before, meta, gone, None)
            assert _pod_lines(after, meta["namespace"], meta["uid"], gone, None) == said
        else:
            pod = _owned(_pod(event[1], event[2], version), owner)
            old = None if no_old else last.get(event[1])
            last[event[1]] = pod
            said = _old_on_pod(before, meta, old, pod)
            assert _pod_lines(after, meta["namespace"], meta["uid"], old, pod) == said
        assert _state_of(after) == _state_of(before)
    assert _old_on_pod(before, meta, None, None) is None
    assert _pod_lines(after, meta["namespace"], meta["uid"], None, None) is None
