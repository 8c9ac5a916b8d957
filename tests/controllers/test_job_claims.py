"""The Job controller claims pods as Kubernetes' `ClaimPods` does (`kjobs.controllers.podclaims`).

test/e2e/apps/job.go "should adopt matching orphans and release non-matching pods": a pod whose owner
reference is removed is adopted again by the Job its labels match, with the tracking finalizer; a pod whose
labels no longer match its Job's selector is released (owner reference and finalizer removed) and replaced.
"""

from __future__ import annotations

import asyncio

from kjobs.api.names import JOB_TRACKING_FINALIZER
from kjobs.api.types import Obj
from kjobs.client.resources import JOBS, PODS
from kjobs.clock import FakeClock
from kjobs.controllers.job import JobController, JobControllerSettings
from tests.controllers.test_job_controller import job_manifest
from tests.support import local_api, settle


def _controller_uid(pod: Obj) -> str | None:
    refs = [r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return str(refs[0]["uid"]) if refs else None


def test_an_orphan_is_adopted_and_a_pod_whose_labels_stop_matching_is_released() -> None:
    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        controller = JobController(client, clock=clock, settings=JobControllerSettings(batch_period=1.0))
        await controller.start()
        job = await client.create(JOBS, "default", job_manifest(completions=4, parallelism=2))
        uid = job["metadata"]["uid"]
        await settle(clock, lambda: len(controller.pods.list("default")) == 2)
        name = sorted(p["metadata"]["name"] for p in controller.pods.list("default"))[0]

        await client.patch(PODS, "default", name, {"metadata": {"ownerReferences": None}})
        owner_seen = [_controller_uid(controller.pods.get("default", name) or {"metadata": {}})]

        def seen(old: Obj | None, new: Obj | None) -> None:
            if new is not None and new["metadata"]["name"] == name:
                owner_seen.append(_controller_uid(new))

        controller.pods.add_handler(seen)
        await settle(clock, lambda: None in owner_seen)
        await settle(clock, lambda: _controller_uid(controller.pods.get("default", name) or {"metadata": {}}) == uid)
        adopted = await client.get(PODS, "default", name)
        assert JOB_TRACKING_FINALIZER in adopted["metadata"]["finalizers"]
        (ref,) = adopted["metadata"]["ownerReferences"]
        assert ref == {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "work",
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
        assert len(controller.pods.list("default")) == 2  # adopted, not replaced

        await client.patch(PODS, "default", name, {"metadata": {"labels": None}})
        await settle(clock, lambda: _controller_uid(controller.pods.get("default", name) or {"metadata": {}}) is None)
        released = await client.get(PODS, "default", name)
        assert JOB_TRACKING_FINALIZER not in (released["metadata"].get("finalizers") or [])
        await settle(clock, lambda: len(controller.pods.list("default")) == 3)  # the Job replaced it
        owned = [p for p in controller.pods.list("default") if _controller_uid(p) == uid]
        assert len(owned) == 2
        await controller.stop()

    asyncio.run(scenario())


def _job(**meta: object) -> Obj:
    return {
        "metadata": {"name": "work", "namespace": "default", "uid": "j1", **meta},
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
    }


def _pod(labels: dict[str, str] | None, **meta: object) -> Obj:
    return {"metadata": {"name": "p", "namespace": "default", "uid": "p1", "labels": labels, **meta}}


def test_claim_decisions_follow_claim_object() -> None:
    from kjobs.controllers import podclaims

    assert podclaims.may_adopt(_job(), _pod({"app": "a", "extra": "x"}))
    assert not podclaims.may_adopt(_job(), _pod({"app": "b"}))
    assert not podclaims.may_adopt(_job(), _pod({"app": "a"}, namespace="other"))
    assert not podclaims.may_adopt(_job(), _pod({"app": "a"}, deletionTimestamp="2026-01-01T00:00:00Z"))
    assert not podclaims.may_adopt(_job(deletionTimestamp="2026-01-01T00:00:00Z"), _pod({"app": "a"}))
    assert podclaims.should_release(_job(), _pod(None))
    assert not podclaims.should_release(_job(), _pod({"app": "a"}))
    assert not podclaims.should_release(_job(deletionTimestamp="2026-01-01T00:00:00Z"), _pod(None))
    assert podclaims.release_patch(_job(), _pod(None)) == {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": "j1"}],
            "uid": "p1",
            "$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
        }
    }


def test_a_new_job_with_a_manual_selector_adopts_the_orphans_it_matches_before_creating_pods() -> None:
    """job.md "Specifying your own Pod selector": after `kubectl delete jobs/old --cascade=orphan`, a Job `new`
    with `manualSelector: true` and old's selector adopts old's running pods (`getPodsForJob` claims them on
    its first sync, before `manageJob` counts the active pods) instead of creating pods of its own."""

    async def scenario() -> None:
        clock = FakeClock()
        client = await local_api(clock)
        template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}
        for name in ("old-a", "old-b", "other"):
            labels = {"app": "old"} if name != "other" else {"app": "other"}
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, **template}
            await client.create(PODS, "default", pod)
        controller = JobController(client, clock=clock, settings=JobControllerSettings(batch_period=1.0))
        await controller.start()
        await settle(clock, lambda: len(controller.pods.list("default")) == 3)
        manifest = job_manifest(
            manualSelector=True, selector={"matchLabels": {"app": "old"}}, completions=2, parallelism=2
        )
        manifest["spec"]["template"]["metadata"] = {"labels": {"app": "old"}}
        job = await client.create(JOBS, "default", manifest)
        uid = job["metadata"]["uid"]

        def adopted() -> list[str]:
            return sorted(p["metadata"]["name"] for p in controller.pods.list("default") if _controller_uid(p) == uid)

        await settle(clock, lambda: adopted() == ["old-a", "old-b"])
        for _ in range(5):  # a few batch periods: the Job counts both as active and creates no pod
            clock.advance(1.0)
            await settle(clock, lambda: True)
        assert len(controller.pods.list("default")) == 3
        other = await client.get(PODS, "default", "other")
        assert not other["metadata"].get("ownerReferences")
        pod = await client.get(PODS, "default", "old-a")
        assert JOB_TRACKING_FINALIZER in pod["metadata"]["finalizers"]
        await controller.stop()

    asyncio.run(scenario())
