"""The `maxUncountedPods` cap (500) of a tracking step, as Kubernetes has it.

`trackJobStatusAndRemoveFinalizers` (pkg/controller/job/job_controller.go) stops its loop over finished pods once
the new succeeded indexes plus the uncounted UIDs reach the cap: at most 500 are recorded and 500 finalizers
removed per step; the rest wait for the next sync. Its unit table (the corpus' `tracking` kind; upstream case
"too many indexed finished") starts the step from the stored `completedIndexes`, so an Indexed Job's 501st index
is left for the next step. A full `syncJob` first adds every succeeded pod's index (`calculateSucceededIndexes`),
so there the first write already lists them all while the finalizers still go 500 per sync.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from tests.conformance.harness import UnitScenario

PODS = 600


def _scenario(*, indexed: bool, completions: int = PODS) -> UnitScenario:
    spec: dict[str, Any] = {
        "completions": completions,
        "parallelism": PODS,
        "selector": {"matchLabels": {"job": "big"}},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main-container", "image": "i"}]}},
    }
    if indexed:
        spec["completionMode"] = "Indexed"
    sc = UnitScenario({"env": {}, "job": {"metadata": {"name": "big", "uid": "big-uid"}, "spec": spec}})
    sc.seed_pods(
        [
            {
                "metadata": {
                    "name": f"pod-{i:03}",
                    "annotations": {JOB_COMPLETION_INDEX_ANNOTATION: str(i)} if indexed else {},
                    "finalizers": [JOB_TRACKING_FINALIZER],
                },
                "status": {"phase": "Succeeded"},
            }
            for i in range(PODS)
        ]
    )
    return sc


def _track(sc: UnitScenario) -> None:
    sc.track({"finishedCondition": None, "expectedRmFinalizers": [], "needsFlush": False})


def _next_step(sc: UnitScenario, removed: int) -> None:
    """The first `removed` pods lost their finalizer and the Job's stored status is the last write."""
    for pod in sc.pods[:removed]:
        pod["metadata"]["finalizers"] = []
    sc.job["status"] = sc.status = sc.status_writer.writes[-1]
    sc.status_writer.writes.clear()
    sc.pod_control.finalizer_patches = 0


def _uncounted(status: dict[str, Any], key: str) -> list[str]:
    return list((status.get("uncountedTerminatedPods") or {}).get(key) or ())


def test_a_tracking_step_records_500_newly_succeeded_indexes_and_leaves_the_rest_for_the_next() -> None:
    sc = _scenario(indexed=True)
    _track(sc)
    assert sc.pod_control.finalizer_patches == 500
    [write] = sc.status_writer.writes
    assert (write["succeeded"], write["completedIndexes"]) == (500, "0-499")
    _next_step(sc, removed=500)
    _track(sc)
    assert sc.pod_control.finalizer_patches == PODS - 500
    [write] = sc.status_writer.writes
    assert (write["succeeded"], write["completedIndexes"]) == (PODS, f"0-{PODS - 1}")


def test_a_tracking_step_records_500_uids_of_a_non_indexed_job() -> None:
    sc = _scenario(indexed=False)
    _track(sc)
    assert sc.pod_control.finalizer_patches == 500
    first, last = sc.status_writer.writes
    assert len(_uncounted(first, "succeeded")) == 500
    assert (last["succeeded"], _uncounted(last, "succeeded")) == (500, [])
    _next_step(sc, removed=500)
    _track(sc)
    assert sc.pod_control.finalizer_patches == PODS - 500
    assert sc.status_writer.writes[-1]["succeeded"] == PODS


def test_a_full_sync_counts_every_succeeded_index_and_still_removes_500_finalizers() -> None:
    sc = _scenario(indexed=True, completions=2 * PODS)
    sc.sync()
    assert sc.pod_control.finalizer_patches == 500
    assert (sc.status["succeeded"], sc.status["completedIndexes"]) == (PODS, f"0-{PODS - 1}")
