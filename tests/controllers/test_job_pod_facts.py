"""The Job controller reads each pod version's facts once (docs/perf48.md): its pod handler takes the old version's
from what it remembered when that version arrived and the new one's once for itself and the syncs, carrying the
completion index over when a write kept the `annotations` object. Held here against the plain reading of each
version (`PlainJobController`: every fact read again from the objects on every event)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.controllers.job import JobController, _controller_ref, _facts, _key
from kjobs.job import pods as P
from kjobs.job.context import is_finished
from kjobs.job.sync import new_context
from tests.controllers.test_upstream_job_controller import controller_ref, idle_controller, new_job
from tests.hypothesis_budget import examples

_INDEXES = st.one_of(st.none(), st.sampled_from(["0", "3", "007", "-1", "x", "99999999999999999999", "", " 4"]))


def _claim_relevant(old: Obj, new: Obj) -> bool:
    """Labels or owner references changed between two versions of a pod (`updatePod`'s `labelChanged` and
    `controllerRefChanged`), compared by value as the handler did before stop 50."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    return old_meta.get("labels") != new_meta.get("labels") or old_meta.get("ownerReferences") != new_meta.get(
        "ownerReferences"
    )


class PlainJobController(JobController):
    """The handler as it was before stop 48: `_facts` of both versions read from the objects on every event, and
    `_OwnedPods.observe` reading the new version's sync facts again."""

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        assert pod is not None
        meta = pod.get("metadata") or {}
        pod_uid = str(meta.get("uid") or "")
        owner = _controller_ref(meta)
        old_tracked, old_terminal, old_deleting = _facts(old)
        new_tracked, new_terminal, new_deleting = _facts(new)
        if owner is not None:
            owner_uid = str(owner.get("uid") or "")
            if new is None:
                self._forget_pod(owner_uid, pod_uid)
            else:
                self._owned(owner_uid).observe(pod_uid, new)
        job = self._job_for(meta, owner)
        relevant = False
        if old is not None and new is not None and _claim_relevant(old, new):
            relevant = True
            self._owner_changed(old, owner, pod_uid)
        if new is not None and (old is None or relevant):
            self._note_claims(new, job, owner, pod_uid)
        if new_tracked and new_terminal and not (old_tracked and old_terminal):
            self._count_tracking_finalizer("add")
        if old_tracked and old_terminal and not new_tracked:
            self._count_tracking_finalizer("delete")
        if job is None:
            if new is not None and new_tracked:
                self._enqueue_orphan(new)
            return
        key = _key(job)
        if old is None and new is not None and not new_deleting:
            self.book.creation_observed(key)
        if new is not None and new_deleting and not old_deleting:
            self.book.deletion_observed(key)
        if new is None and not old_deleting:
            self.book.deletion_observed(key)
        if not new_tracked and old_tracked:
            self.book.finalizer_removal_observed(key, pod_uid)
        if new is None:
            self.book.finalizer_removal_observed(key, pod_uid)
        if is_finished(job):
            if new is not None and new_tracked:
                self._enqueue_orphan(new)
            return
        self.queue.add_after(key, self.settings.batch_period)


# One event: the pod (0-2), gone or a new version (owner, phase, finalizer, deletion, Ready, what its
# annotations are: the previous version's very object, an equal copy, or new ones with this index).
_event = st.tuples(
    st.integers(0, 2),
    st.booleans(),
    st.sampled_from(("job1", "job2", None)),
    st.sampled_from(("Pending", "Running", "Succeeded", "Failed", None)),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from(("kept", "copied", "new", "none")),
    _INDEXES,
)


def _version(previous: Obj | None, n: int, owner: Obj | None, phase: Any, tracked: bool, deleting: bool,
             ready: bool, annotations: str, index: str | None) -> Obj:  # fmt: skip
    meta: Obj = {"name": f"pod-{n}", "namespace": "default", "uid": f"uid-{n}", "labels": {"foo": "bar"}}
    if owner is not None:
        meta["ownerReferences"] = [controller_ref(owner)]
    earlier = (previous or {}).get("metadata", {}).get("annotations")
    if annotations == "kept" and earlier is not None:
        meta["annotations"] = earlier
    elif annotations == "copied" and earlier is not None:
        meta["annotations"] = dict(earlier)
    elif annotations != "none" and index is not None:
        meta["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: index}
    if tracked:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = "2026-12-06T00:00:00Z"
    pod: Obj = {"metadata": meta, "spec": {"containers": [{"name": "c"}]}}
    if phase is not None:
        pod["status"] = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return pod


def _state(controller: JobController, counted: list[str]) -> dict[str, Any]:
    return {
        "book": copy.deepcopy(controller.book),
        "counted": list(counted),
        "owned": {
            owner: (
                owned.pods,
                {uid: owned.facts[id(pod)] for uid, pod in owned.pods.items()},
                dict(owned.unsettled),
                owned.in_name_order(),
                owned.unsettled_in_name_order(),
            )
            for owner, owned in controller._pods_by_owner.items()
        },
        "claims": copy.deepcopy(controller._claims),
        "queued": len(controller.queue),
        "orphans": len(controller.orphans),
    }


@settings(max_examples=examples(150), deadline=None)
@given(events=st.lists(_event, max_size=30))
def test_the_pod_handler_keeps_and_counts_what_the_plain_reading_does(events: list[tuple[Any, ...]]) -> None:
    async def scenario() -> None:
        job1, job2 = new_job("job1"), new_job("job2")
        jobs = {"job1": job1, "job2": job2}
        plain = await idle_controller(job1, job2)
        plain.__class__ = PlainJobController
        fast = await idle_controller(job1, job2)
        counted: dict[int, list[str]] = {id(plain): [], id(fast): []}
        for controller in (plain, fast):
            for key in ("default/job1", "default/job2"):
                controller.book.expect(key, adds=9, dels=9, now=0.0)
                controller.book.finalizers[key] = {"uid-0", "uid-1", "uid-2"}
            log = counted[id(controller)]
            controller._count_tracking_finalizer = log.append  # type: ignore[method-assign]
        versions: dict[int, Obj] = {}
        for n, gone, owner, phase, tracked, deleting, ready, kept, index in events:
            old = versions.get(n)
            if gone:
                if old is None:
                    continue
                del versions[n]
                new = None
            else:
                new = versions[n] = _version(
                    old, n, jobs.get(owner or ""), phase, tracked, deleting, ready, kept, index
                )
            for controller in (plain, fast):
                controller._on_pod(old, new)
            assert _state(fast, counted[id(fast)]) == _state(plain, counted[id(plain)])
            for owned in fast._pods_by_owner.values():
                assert owned.facts == {id(pod): P.sync_facts(pod) for pod in owned.pods.values()}

    asyncio.run(scenario())


@settings(max_examples=examples(300), deadline=None)
@given(
    earlier_index=_INDEXES,
    index=_INDEXES,
    annotations=st.sampled_from(("kept", "copied", "new", "none")),
    extra=st.booleans(),
)
def test_a_carried_index_is_the_one_read_from_the_pod(
    earlier_index: str | None, index: str | None, annotations: str, extra: bool
) -> None:
    """`sync_facts(pod, earlier, facts of earlier)` is `sync_facts(pod)`: the index is carried over only from the
    very `annotations` object, never from equal or other ones."""
    earlier: Obj = {"metadata": {"uid": "u"}, "status": {"phase": "Running"}}
    if earlier_index is not None:
        earlier["metadata"]["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: earlier_index}
        if extra:
            earlier["metadata"]["annotations"]["other"] = "1"
    pod = _version(earlier, 0, None, "Succeeded", True, False, False, annotations, index)
    assert P.sync_facts(pod, earlier, P.sync_facts(earlier)) == P.sync_facts(pod)
    assert P.sync_facts(pod, None, None) == P.sync_facts(pod)


def test_a_sync_reads_the_tracked_uids_from_the_facts() -> None:
    """`new_context` hands the tracked pods' uids over from the remembered facts, in `tracked_pods` order, and
    reads them from the pods where none were remembered."""
    job = {"metadata": {"name": "j", "namespace": "default", "uid": "job"}, "spec": {}, "status": {}}
    pods = [_version(None, n, None, phase, True, False, False, "none", None) for n, phase in enumerate(("Running",
            "Succeeded", "Failed"))]  # fmt: skip
    facts = {id(p): P.sync_facts(p) for p in pods[:2]}
    for remembered in (facts, None):
        ctx = new_context(job, pods, now=0.0, expected_rm_finalizers=frozenset(), facts=remembered)
        assert ctx.tracked_uids() == [P.uid(p) for p in ctx.tracked_pods] == ["uid-0", "uid-1", "uid-2"]
