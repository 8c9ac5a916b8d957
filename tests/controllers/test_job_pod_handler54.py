"""Stop 54: the Job controller's pod handler takes the new version into its Job's index inline (`_OwnedPods.observe`
without the call, the pod's name read once: docs/jobctl54.md). Held here against stop 53's handler, kept below as it
was, on the event sequences of test_job_pod_handler_inline.py (owners running, finished, absent, of another uid or
kind, or none; labels and references kept, copied or changed; gone), with empty versions (`{}`, which `new or old`
passes over) among them: the two controllers keep the same pods, facts, unsettled names and name order, and count,
claim, queue and expect the same."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.controllers.job import JobController
from kjobs.job import pods as P
from kjobs.job.context import is_finished
from tests.controllers.test_job_pod_handler_inline import _event, _jobs, _owner_refs, _state, _version
from tests.controllers.test_upstream_job_controller import idle_controller


class Stop53JobController(JobController):
    """The pod handler of stop 53, which called `_OwnedPods.observe`."""

    def _on_pod(self, old: Obj | None, new: Obj | None) -> None:
        pod = new or old
        assert pod is not None
        meta = pod.get("metadata") or {}
        pod_uid = str(meta.get("uid") or "")
        owner: Obj | None = None
        for ref in meta.get("ownerReferences") or ():  # `_controller_ref`, inline
            if ref.get("controller"):
                owner = ref
                break
        owner_uid = str(owner.get("uid") or "") if owner is not None else ""
        owned = self._pods_by_owner.get(owner_uid) if owner is not None else None
        # Each version's facts, read once: the old version's as they were read when it arrived (the index keeps
        # them by the object's id), the new one's once for both this handler and the syncs (`P.sync_facts`).
        remembered = owned.facts if owned is not None else None
        old_facts = None
        if old is not None:
            old_facts = remembered.get(id(old)) if remembered is not None else None
            if old_facts is None:
                old_facts = P.sync_facts(old)
            old_tracked, old_terminal, old_deleting = old_facts[3], not old_facts[0], old_facts[1]  # `_flags`
        else:
            old_tracked = old_terminal = old_deleting = False
        if new is not None:
            new_facts = remembered.get(id(new)) if remembered is not None else None
            if new_facts is None:
                new_facts = P.sync_facts(new, old, old_facts)
            new_tracked, new_terminal, new_deleting = new_facts[3], not new_facts[0], new_facts[1]
            if owner is not None:
                (owned or self._owned(owner_uid)).observe(pod_uid, new, new_facts)
        else:
            new_tracked = new_terminal = new_deleting = False
            if owner is not None:
                self._forget_pod(owner_uid, pod_uid)
        # `_job_for`; its key is the cache's (namespace, name), which `_key` of the Job found there spells the same.
        job = None
        if owner is not None and owner.get("kind") == "Job":
            namespace, name = str(meta.get("namespace") or ""), str(owner.get("name") or "")
            job = self.jobs.cache.get((namespace, name))  # `Informer.get`, inline
            if job is not None and job["metadata"].get("uid") != owner.get("uid"):
                job = None
        relevant = False  # labels or owner changed (`_claim_relevant`): read once for both uses below
        if old is not None and new is not None:
            old_meta = old.get("metadata") or {}
            new_meta = meta if pod is new else new.get("metadata") or {}  # `new or old` took an empty `new`'s old
            old_labels, new_labels = old_meta.get("labels"), new_meta.get("labels")
            old_refs, new_refs = old_meta.get("ownerReferences"), new_meta.get("ownerReferences")
            # A write that leaves them as they were hands the very objects on: no walk of equal ones.
            if (old_labels is not new_labels and old_labels != new_labels) or (
                old_refs is not new_refs and old_refs != new_refs
            ):
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
                self._enqueue_orphan(new)  # checked by `sync_orphan_pod` once the caches have synced
            return
        key = f"{namespace}/{name}"
        if new is None:
            if not old_deleting:
                self.book.deletion_observed(key)
            self.book.finalizer_removal_observed(key, pod_uid)
        else:
            if old is None and not new_deleting:
                self.book.creation_observed(key)
            if new_deleting and not old_deleting:
                self.book.deletion_observed(key)
            if not new_tracked and old_tracked:
                self.book.finalizer_removal_observed(key, pod_uid)
        if (job.get("status") or {}).get("conditions") and is_finished(job):  # a running Job has none
            if new is not None and new_tracked:
                self._enqueue_orphan(new)
            return
        self.queue.add_after(key, self.settings.batch_period)


def _versions(previous: Obj | None, n: int, refs: list[Obj] | None, how: tuple[Any, ...], empty: bool) -> Obj:
    return {} if empty else _version(previous, n, refs, *how)


def _facts_state(controller: JobController) -> dict[str, Any]:
    return {owner: dict(owned.facts) for owner, owned in controller._pods_by_owner.items()}


@settings(max_examples=40, deadline=None)
@given(events=st.lists(st.tuples(_event, st.booleans()), max_size=30))
@example(  # a settled pod, then an empty version: unsettled again, under the empty version's name ("")
    events=[
        ((0, False, "running", "new", "new", "Succeeded", False, False), False),
        ((0, False, "running", "new", "new", "Pending", False, False), True),
    ]
)
@example(
    events=[
        ((0, False, "running", "new", "new", "Pending", True, False), False),
        ((0, False, "running", "new", "new", "Pending", True, False), True),
        ((0, False, "running", "new", "new", "Succeeded", True, False), False),
    ]
)
def test_the_pod_handler_keeps_stop_53s_index(events: list[tuple[tuple[Any, ...], bool]]) -> None:
    async def scenario() -> None:
        jobs = _jobs()
        old_handler = await idle_controller(*jobs.values())
        old_handler.__class__ = Stop53JobController
        fast = await idle_controller(*jobs.values())
        counted: dict[int, list[str]] = {id(old_handler): [], id(fast): []}
        for controller in (old_handler, fast):
            for name in jobs:
                controller.book.expect(f"default/{name}", adds=9, dels=9, now=0.0)
                controller.book.finalizers[f"default/{name}"] = {"uid-0", "uid-1", "uid-2"}
            controller._count_tracking_finalizer = counted[id(controller)].append  # type: ignore[method-assign]
        versions: dict[int, Obj] = {}
        for (n, gone, owner, refs_made, labels, phase, tracked, deleting), empty in events:
            old = versions.get(n)
            if gone:
                if old is None:
                    continue
                del versions[n]
                new = None
            else:
                if empty and old is None:  # a pod's first version names it
                    continue
                how = (refs_made, labels, phase, tracked, deleting)
                new = versions[n] = _versions(old or None, n, _owner_refs(owner, jobs), how, empty)
            if not (old or new):
                continue  # nothing names the pod
            for controller in (old_handler, fast):
                controller._on_pod(old, new)
            assert _state(fast, counted[id(fast)]) == _state(old_handler, counted[id(old_handler)])
            assert _facts_state(fast) == _facts_state(old_handler)
            for controller in (old_handler, fast):
                controller._claims.clear()
                for timer in controller.queue._timers.values():
                    timer.cancel()
                controller.queue._timers.clear()
                controller.queue._waiting.clear()

    asyncio.run(scenario())
