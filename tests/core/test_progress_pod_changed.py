"""`RunView.pod_changed` (docs/follow48.md): `kjobs simulate`'s follower hands the view each pod event's uid, name,
phase and deletion it has read already, and turns `update_pod`'s lines off (`pod_lines`), as it reads none. Held
here against the plain view (`PlainRunView`: every field read again from the pod on every event, the restart limit
asked inside `_fails_job_in_place`): the same lines from `update_pod` and `update_job`, the same decisions and
the same remembered pods, whatever the sequence of pod versions and Job states."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.types import Obj
from kjobs.explanation import explain
from kjobs.job import pods as P
from kjobs.job.context import has_restart_limit
from kjobs.policy import FAIL_JOB
from kjobs.progress import RunView, _resource_version, _state, decide
from tests.hypothesis_budget import examples


class PlainRunView(RunView):
    """`update_pod` as it was before stop 48's follow48: each field read from the pod, lines always made."""

    def update_pod(self, pod: Obj | None, *, deleted: Obj | None = None) -> list[str]:
        lines: list[str] = []
        if pod is None:
            if deleted is not None:
                self.pods.pop(P.uid(deleted), None)
                if self._probe_kills or self._unhealthy:
                    self._forget_probes(P.uid(deleted))
                self._unseen_end.pop(P.uid(deleted), None)
                if P.uid(deleted) in self._terminating:
                    self._gone[P.uid(deleted)] = _resource_version(deleted)
            return lines
        uid = P.uid(pod)
        self.pods[uid] = pod
        phase, deleting = P.phase(pod), P.is_deleting(pod)
        if deleting and phase not in ("Succeeded", "Failed") and uid not in self._explained:
            self._terminating[uid] = pod
        name = str(pod["metadata"].get("name"))
        state = _state(phase, deleting)
        if self.show_restarts:
            lines.extend(self._restart_lines(uid, name, pod))
        if self._states.get(uid) != state:
            self._states[uid] = state
            grace = pod["metadata"].get("deletionGracePeriodSeconds") if state == "Terminating" else None
            lines.append(f"pod {name} {state}" + (f" (grace period {grace}s)" if isinstance(grace, int) else ""))
        if uid in self._unseen_end and phase in ("Succeeded", "Failed"):
            lines.extend(self._seen_end(uid, name, pod))
        if uid not in self._explained and (phase == "Failed" or self._plain_fails_job_in_place(pod)):
            self._explained.add(uid)
            self._terminating.pop(uid, None)
            index = (pod["metadata"].get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
            decision = decide(self.job, pod, index)
            if self._probe_kills:
                decision = replace(decision, cause=decision.cause + self._probe_kill_notes(uid, pod))
            self.decisions.append(decision)
            lines.append(decision.line())
        return lines

    def _plain_fails_job_in_place(self, pod: Obj) -> bool:
        return has_restart_limit(self.job) and explain(self.job, pod).action == FAIL_JOB


def _job(limit: int | None, conditions: int, uncounted: tuple[int, ...], version: int) -> Obj:
    """A Job with a FailJob rule for exit 42 (and one that ignores disruptions), OnFailure with `maxRestartTimes`
    `limit` or Never without; `conditions` 1 adds FailureTarget, 2 SuccessCriteriaMet; `uncounted` names pods."""
    template: Obj = {"restartPolicy": "OnFailure", "maxRestartTimes": limit} if limit else {"restartPolicy": "Never"}
    status: Obj = {"uncountedTerminatedPods": {"failed": [f"u{i}" for i in uncounted]}}
    if conditions:
        kind = "FailureTarget" if conditions == 1 else "SuccessCriteriaMet"
        status["conditions"] = [
            {"type": kind, "status": "True", "reason": "X", "lastTransitionTime": "2026-01-01T00:00:05Z"}
        ]
    return {
        "metadata": {"name": "demo", "namespace": "default", "uid": "j", "resourceVersion": str(version)},
        "spec": {
            "backoffLimit": 6,
            "template": {"spec": template},
            "podFailurePolicy": {
                "rules": [
                    {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
                ]
            },
        },
        "status": status,
    }


def _pod(i: int, fields: tuple[Any, ...], version: int) -> Obj:
    phase, deleting, grace, code, last, restarts, disrupted, index = fields
    meta: Obj = {"name": f"p{i}", "namespace": "default", "uid": f"u{i}", "resourceVersion": str(version)}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:10Z"
        if grace is not None:
            meta["deletionGracePeriodSeconds"] = grace
    if index is not None:
        meta["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: index}
    state: Obj = {"terminated": {"exitCode": code, "reason": "Error"}} if code is not None else {"running": {}}
    cs: Obj = {"name": "main", "restartCount": restarts, "state": state}
    if last is not None:
        cs["lastState"] = {"terminated": {"exitCode": last}}
    status: Obj = {"containerStatuses": [cs]}
    if phase is not None:
        status["phase"] = phase
    if disrupted:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]
    return {"metadata": meta, "status": status}


_pod_fields = st.tuples(
    st.sampled_from([None, "", "Pending", "Running", "Succeeded", "Failed", "Unknown"]),
    st.booleans(),
    st.sampled_from([None, 0, 30]),
    st.sampled_from([None, 0, 1, 42, 137]),
    st.sampled_from([None, 1, 42]),
    st.integers(0, 2),
    st.booleans(),
    st.sampled_from([None, "0", "3"]),
)
# An event: a pod's new version or its deletion, or a new Job state (restart limit, conditions, uncounted pods).
_event = st.one_of(
    st.tuples(st.just("pod"), st.integers(0, 2), _pod_fields),
    st.tuples(st.just("gone"), st.integers(0, 2)),
    st.tuples(
        st.just("job"),
        st.sampled_from([None, 2]),
        st.integers(0, 2),
        st.lists(st.integers(0, 2), max_size=2).map(tuple),
    ),
)


def _follower_update(view: RunView, pod: Obj) -> list[str]:
    """What `kjobs simulate`'s follower does with a pod's new version (`simulate/session.py`, `on_pod`)."""
    meta = pod.get("metadata") or {}
    phase = P.phase(pod) or "Pending"
    return view.pod_changed(
        pod, str(meta.get("uid") or ""), str(meta["name"]), phase, bool(meta.get("deletionTimestamp"))
    )


def _state_of(view: RunView) -> tuple[Any, ...]:
    return (
        view.pods,
        view._states,
        view._terminating,
        view._gone,
        view._explained,
        view._unseen_end,
        view.decisions,
        view.conditions,
        view.counts(),
        view.summary(),
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 2), st.lists(_event, min_size=4, max_size=30))
def test_pod_changed_and_update_pod_say_and_keep_what_the_plain_view_did(first: int, events: list[Any]) -> None:
    start = _job([None, 2, 2][first], 0, (), 1)
    plain, view, follower = PlainRunView(start), RunView(start), RunView(start, pod_lines=False)
    last: dict[int, Obj] = {}
    for version, event in enumerate(events, start=2):
        if event[0] == "job":
            state = _job(event[1], event[2], event[3], version)
            said = plain.update_job(copy.deepcopy(state))
            assert view.update_job(copy.deepcopy(state)) == said
            assert follower.update_job(state) == said  # the trace's lines
        elif event[0] == "gone":
            if event[1] not in last:
                continue
            gone = last.pop(event[1])
            assert plain.update_pod(None, deleted=gone) == view.update_pod(None, deleted=gone) == []
            assert follower.update_pod(None, deleted=gone) == []
        else:
            pod = _pod(event[1], event[2], version)
            last[event[1]] = pod
            said = plain.update_pod(pod)
            assert view.update_pod(pod) == said
            kept = [line for line in said if "had failed before its deletion stopped it" in line]  # not a pod line
            assert _follower_update(follower, pod) == kept
        assert _state_of(view) == _state_of(plain) == _state_of(follower)
