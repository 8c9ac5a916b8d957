"""pkg/controller/job/tracking_utils_test.go at 47e79b815608, row by row (docs/upstream-job-utils.md).

`TestUIDTrackingExpectations` runs kjobs' finalizer expectations (`BookkeepingStore`); upstream adds and
observes from goroutines to check its lock, and kjobs' controller is one event loop, so the same calls run in
turn. `TestRecordFinishedPodWithTrackingFinalizer` hands the row's (old, new) pod to the Job controller's pod
event handler — what its informer calls — and reads `job_controller_terminated_pods_tracking_finalizer_total`.
"""

from __future__ import annotations

import asyncio

import pytest

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController
from kjobs.job.bookkeeping import BookkeepingStore
from tests.support import local_api

TRACKS = [
    ("foo", ["a", "b", "c", "d"], ["e", "f"]),
    ("bar", ["x", "y", "z"], ["u", "v", "w"]),
    ("baz", ["w"], ["a"]),
]


def test_uid_tracking_expectations() -> None:
    """Expected finalizer removals per Job: added, observed one by one, replaced, then forgotten."""
    book = BookkeepingStore()
    for key, first, _ in TRACKS:
        book.expect_finalizers_removed(key, first)
    for key, first, _ in TRACKS:
        assert sorted(book.snapshot(key, now=0).expected_rm_finalizers) == first
    for key, first, second in TRACKS:
        for uid in first:
            book.finalizer_removal_observed(key, uid)
        book.expect_finalizers_removed(key, second)
    for key, _, second in TRACKS:
        assert sorted(book.snapshot(key, now=0).expected_rm_finalizers) == second
    for key, _, _ in TRACKS:
        book.forget(key)
        assert key not in book.finalizers
        assert book.snapshot(key, now=0).expected_rm_finalizers == frozenset()


def pod(phase: str, *, finalizer: bool) -> Obj:
    """A pod with only a uid, the phase and maybe the tracking finalizer, as the rows' literals."""
    meta: Obj = {"name": "p", "namespace": "default", "uid": "u"}
    if finalizer:
        meta["finalizers"] = [JOB_TRACKING_FINALIZER]
    return {"metadata": meta, "status": {"phase": phase}}


# (old pod, new pod, wanted "add", wanted "delete")
ROWS: dict[str, tuple[Obj | None, Obj | None, int, int]] = {
    "new non-finished Pod with finalizer": (None, pod("Pending", finalizer=True), 0, 0),
    "pod with finalizer fails": (pod("Running", finalizer=True), pod("Failed", finalizer=True), 1, 0),
    "pod with finalizer succeeds": (pod("Running", finalizer=True), pod("Succeeded", finalizer=True), 1, 0),
    "succeeded pod loses finalizer": (pod("Succeeded", finalizer=True), pod("Succeeded", finalizer=False), 0, 1),
    "pod without finalizer removed": (pod("Succeeded", finalizer=False), None, 0, 0),
}


@pytest.mark.parametrize(("old", "new", "want_add", "want_delete"), list(ROWS.values()), ids=list(ROWS))
def test_record_finished_pod_with_tracking_finalizer(
    old: Obj | None, new: Obj | None, want_add: int, want_delete: int
) -> None:
    """A pod counts as "add" when it is finished and still carries the tracking finalizer, "delete" when it no
    longer does (the finalizer went, or the pod did)."""

    async def scenario() -> tuple[float, float]:
        clock = FakeClock()
        controller = JobController(await local_api(clock), clock=clock)
        controller._on_pod(old, new)
        name = "job_controller_terminated_pods_tracking_finalizer"
        return controller.metrics.value(name, {"event": "add"}), controller.metrics.value(name, {"event": "delete"})

    assert asyncio.run(scenario()) == (want_add, want_delete)
