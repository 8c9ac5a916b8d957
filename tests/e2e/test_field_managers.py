"""The embedded cluster's components write under their Kubernetes counterparts' names, so `managedFields` (what
`kubectl get -o yaml --show-managed-fields` shows) reads as on a real cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from kjobs.api.types import Obj
from tests.e2e.support import Scenario, fast_settings, job_manifest, phase, run

pytestmark = pytest.mark.slow


def _managers(obj: Obj) -> set[tuple[str, str, str]]:
    return {(e["manager"], e["operation"], e.get("subresource", "")) for e in obj["metadata"]["managedFields"]}


def test_a_jobs_pod_is_managed_by_the_controller_manager_and_the_kubelet(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Scenario(tmp_path, fast_settings(tmp_path, nodes=1)) as s:
            job = await s.create_job(job_manifest("managers", "true"))
            done = await s.finished(job)
            (pod,) = s.history.of_job(job)
            assert phase(pod) == "Succeeded"
            # Created and stripped of its tracking finalizer by the Job controller; its status written by the
            # kubelet; the scheduler's binding records no field manager, as the apiserver's binding does not.
            assert _managers(pod) == {("kube-controller-manager", "Update", ""), ("kubelet", "Update", "status")}
            assert ("kube-controller-manager", "Update", "status") in _managers(done)

    run(scenario)
