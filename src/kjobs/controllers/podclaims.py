"""Which pods a Job adopts or releases, and the patches that do it: `ClaimPods` of the Job controller.

Kubernetes' Job controller claims its pods on every sync (pkg/controller/job/job_controller.go `getPodsForJob`,
through pkg/controller/controller_ref_manager.go `PodControllerRefManager.ClaimPods` with the Job tracking
finalizer): a pod it controls whose labels no longer match the Job's selector is released (its controller
reference and the finalizer removed), and an orphan of the Job's namespace that the selector matches, not being
deleted, is adopted (a controller reference and the finalizer added), unless the Job is being deleted.
kjobs decides this when a pod's labels or owner change (the pod informer's events), not by matching every pod of
the namespace on every sync: the outcome is the same, at the cost of a pod event rather than of a Job's pods.
"""

from __future__ import annotations

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.selectors import label_selector_from_object
from kjobs.api.types import Obj


def selector_matches(job: Obj, pod: Obj) -> bool:
    """The Job's `spec.selector` matches the pod's labels (a missing selector matches nothing). A selector of
    `matchLabels` alone (the one the API generates) is compared label by label, each an Equals requirement,
    without building it: every pod the controller sees when it is first seen is asked this (a loop, not `all`
    over a generator, which is a call and a generator a pod on this Python: docs/jobctl54.md)."""
    selector = (job.get("spec") or {}).get("selector")
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if selector is not None and not selector.get("matchExpressions"):
        for key, value in (selector.get("matchLabels") or {}).items():  # noqa: SIM110
            if labels.get(key) != str(value):
                return False
        return True
    return label_selector_from_object(selector).matches_labels(labels)


def should_release(job: Obj, pod: Obj) -> bool:
    """`ClaimObject` for a pod the Job controls: release it when the selector no longer matches, unless the Job
    is being deleted (its pods then go with it)."""
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return not selector_matches(job, pod)


def may_adopt(job: Obj, pod: Obj) -> bool:
    """`ClaimObject` for an orphan: adopt it when it is in the Job's namespace, not being deleted, the selector
    matches it and the Job is not being deleted."""
    job_meta, pod_meta = job.get("metadata") or {}, pod.get("metadata") or {}
    if job_meta.get("deletionTimestamp") or pod_meta.get("deletionTimestamp"):
        return False
    if job_meta.get("namespace") != pod_meta.get("namespace"):
        return False
    return selector_matches(job, pod)


def adopt_patch(job: Obj, pod: Obj) -> Obj:
    """`ownerRefControllerPatch` with the tracking finalizer: a strategic merge patch that adds the Job as the
    pod's controller; the pod's uid makes it fail if the name now belongs to another pod."""
    meta = job["metadata"]
    ref = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "metadata": {"ownerReferences": [ref], "uid": pod["metadata"]["uid"], "finalizers": [JOB_TRACKING_FINALIZER]}
    }


def release_patch(job: Obj, pod: Obj) -> Obj:
    """`GenerateDeleteOwnerRefStrategicMergeBytes` with the tracking finalizer: remove the Job's owner reference
    (merged by uid) and the finalizer."""
    return {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": job["metadata"]["uid"]}],
            "uid": pod["metadata"]["uid"],
            "$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
        }
    }
