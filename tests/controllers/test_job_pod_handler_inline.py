"""The Job controller's pod handler with its helpers inlined (docs/consume50.md): the facts' flags, the Job looked up
and keyed by the cache's (namespace, name), labels and owner references compared by identity before value, a
running Job's empty conditions seen without `is_finished`. Held here against the handler as it was
(`PlainJobController` of test_job_pod_facts.py, which reads every fact again on each event): on sequences of pod
versions whose labels and owner references are the previous version's very objects, equal copies or changed, owned
by running, finished, absent or other-uid Jobs, by another kind of controller, or by none, the two controllers keep,
count, claim, queue and expect the same."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.controllers.job import JobController
from tests.controllers.test_job_pod_facts import PlainJobController
from tests.controllers.test_upstream_job_controller import controller_ref, idle_controller, new_job
from tests.hypothesis_budget import examples

_OWNERS = ("running", "conditions", "finished", "absent", "ghost", "replicaset", None)

# One event: the pod (0-2), gone or a new version (its owner and how its reference list is made, its labels, phase,
# finalizer, deletion).
_event = st.tuples(
    st.integers(0, 2),
    st.booleans(),
    st.sampled_from(_OWNERS),
    st.sampled_from(("kept", "copied", "new")),
    st.sampled_from(("kept", "copied", "other", "none")),
    st.sampled_from(("Pending", "Running", "Succeeded", "Failed", None)),
    st.booleans(),
    st.booleans(),
)


def _jobs() -> dict[str, Obj]:
    running, conditions, finished = new_job("running"), new_job("conditions"), new_job("finished")
    conditions["status"] = {"conditions": [{"type": "Suspended", "status": "False"}]}
    finished["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    return {"running": running, "conditions": conditions, "finished": finished}


def _owner_refs(owner: str | None, jobs: dict[str, Obj]) -> list[Obj] | None:
    if owner is None:
        return None
    if owner in jobs:
        return [controller_ref(jobs[owner])]
    if owner == "absent":  # no such Job in the cache
        return [controller_ref(new_job("absent"))]
    if owner == "ghost":  # a Job of that name, but another uid
        ref = controller_ref(new_job("running"))
        return [{**ref, "uid": "another"}]
    return [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}]


def _version(previous: Obj | None, n: int, refs: list[Obj] | None, refs_made: str, labels: str, phase: Any,
             tracked: bool, deleting: bool) -> Obj:  # fmt: skip
    before = (previous or {}).get("metadata", {})
    meta: Obj = {"name": f"pod-{n}", "namespace": "default", "uid": f"uid-{n}"}
    meta["annotations"] = {JOB_COMPLETION_INDEX_ANNOTATION: str(n)}
    earlier_refs = before.get("ownerReferences")
    if refs_made == "kept" and earlier_refs is not None and earlier_refs == refs:
        refs = earlier_refs
    elif refs_made == "copied" and refs is not None:
        refs = copy.deepcopy(refs)
    if refs is not None:
        meta["ownerReferences"] = refs
    earlier_labels = before.get("labels")
    if labels == "kept" and earlier_labels is not None:
        meta["labels"] = earlier_labels
    elif labels == "copied" and earlier_labels is not None:
        meta["labels"] = dict(earlier_labels)
    elif labels != "none":
        meta["labels"] = {"foo": "bar"} if labels != "other" else {"foo": "baz"}
    if tracked:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    if deleting:
        meta["deletionTimestamp"] = "2026-12-06T00:00:00Z"
    pod: Obj = {"metadata": meta, "spec": {"containers": [{"name": "c"}]}}
    if phase is not None:
        pod["status"] = {"phase": phase}
    return pod


def _state(controller: JobController, counted: list[str]) -> dict[str, Any]:
    return {
        "expectations": copy.deepcopy(controller.book.expectations),
        "finalizers": copy.deepcopy(controller.book.finalizers),
        "counted": list(counted),
        "owned": {
            owner: (owned.pods, dict(owned.unsettled), owned.in_name_order())
            for owner, owned in controller._pods_by_owner.items()
        },
        "claims": copy.deepcopy(controller._claims),
        "waiting": dict(controller.queue._waiting),
        "queued": list(controller.queue._queue),
        "orphans": list(controller.orphans._queue),
    }


@settings(max_examples=examples(300), deadline=None)
@given(events=st.lists(_event, max_size=30))
@example(
    events=[(0, False, None, "new", "other", None, False, False), (0, False, None, "new", "copied", None, False, False)]
)
@example(
    events=[
        (0, False, None, "kept", "new", None, False, False),
        (0, False, "running", "copied", "kept", None, False, False),
    ]
)
def test_the_inlined_pod_handler_does_what_the_plain_one_does(events: list[tuple[Any, ...]]) -> None:
    async def scenario() -> None:
        jobs = _jobs()
        plain = await idle_controller(*jobs.values())
        plain.__class__ = PlainJobController
        fast = await idle_controller(*jobs.values())
        counted: dict[int, list[str]] = {id(plain): [], id(fast): []}
        for controller in (plain, fast):
            for name in jobs:
                key = f"default/{name}"
                controller.book.expect(key, adds=9, dels=9, now=0.0)
                controller.book.finalizers[key] = {"uid-0", "uid-1", "uid-2"}
            controller._count_tracking_finalizer = counted[id(controller)].append  # type: ignore[method-assign]
        versions: dict[int, Obj] = {}
        for n, gone, owner, refs_made, labels, phase, tracked, deleting in events:
            old = versions.get(n)
            if gone:
                if old is None:
                    continue
                del versions[n]
                new = None
            else:
                refs = _owner_refs(owner, jobs)
                new = versions[n] = _version(old, n, refs, refs_made, labels, phase, tracked, deleting)
            for controller in (plain, fast):
                controller._on_pod(old, new)
            assert _state(fast, counted[id(fast)]) == _state(plain, counted[id(plain)])
            for controller in (plain, fast):  # what a sync takes: the next event's claims and queueing show alone
                controller._claims.clear()
                for timer in controller.queue._timers.values():
                    timer.cancel()
                controller.queue._timers.clear()
                controller.queue._waiting.clear()

    asyncio.run(scenario())
