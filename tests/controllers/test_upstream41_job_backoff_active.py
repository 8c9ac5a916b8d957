"""kubernetes/kubernetes#139457 (June 2026, back-ported to 1.33–1.36): while the pod-failure back-off delays the
replacement of a failed pod, the Job controller reports the pods still running as `status.active`. Before the fix,
`manageJob` returned 0 on both back-off paths (global and per index), so the status write said `active: 0` beside
`ready: 1`, which the API refuses ("cannot set more ready pods than active", `RejectMoreReadyThanActivePods`): the
failed pod kept its finalizer and the Job its stale status until the back-off ran out.

kjobs' `plan_sync` never had the early return (the active count is the pods' own, docs/upstream41.md); these tests
pin it through the real controller, the in-process API (whose status validation has the same rule) and virtual
time, on the harness of the Job integration ports, within the 10 s back-off.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.names import JOB_TRACKING_FINALIZER
from tests.controllers.upstream_job_env import Env, finalizers, run, terminal

BACKOFF = 10.0
"""`DefaultJobPodFailureBackOff`: the replacement waits this long after the first failure."""


async def _fail_one_keep_one_ready(env: Env, job: Any, *, index: int | None = None) -> None:
    await env.wait_for_pods_to_be_active(job, 2)
    await env.set_job_pods_ready(job, 2)
    if index is None:
        await env.set_job_pods_phase(job, "Failed", 1)
    else:
        await env.set_job_phase_for_index(job, "Failed", index)


async def _failed_pod_released(env: Env, job: Any) -> None:
    async def check() -> None:
        failed = await env.job_pods(job, terminal)
        assert failed and all(JOB_TRACKING_FINALIZER not in finalizers(p) for p in failed), "finalizer still held"

    await env.until(check, "the failed pod's finalizer removed", timeout=BACKOFF / 2)


def test_global_backoff_keeps_active_and_ready() -> None:
    async def body(env: Env) -> None:
        job = await env.create_job({"parallelism": 2, "completions": 4})
        await _fail_one_keep_one_ready(env, job)
        await env.validate_job_pods_status_only(job, active=1, ready=1, failed=1, timeout=BACKOFF / 2)
        await _failed_pod_released(env, job)
        assert len(await env.job_pods(job)) == 2, "the replacement waits for the back-off"

    run(body, backoff=BACKOFF)


def test_per_index_backoff_keeps_active_and_ready() -> None:
    async def body(env: Env) -> None:
        spec = {"parallelism": 2, "completions": 2, "completionMode": "Indexed", "backoffLimitPerIndex": 1}
        job = await env.create_job(spec)
        await _fail_one_keep_one_ready(env, job, index=0)
        # the failed pod keeps its finalizer until its index is replaced, so it is not counted yet
        await env.validate_job_pods_status_only(job, active=1, ready=1, failed=0, timeout=BACKOFF / 2)
        assert len(await env.job_pods(job)) == 2, "index 0 is replaced after its back-off"
        await env.validate_job_pods_status_only(job, active=2, ready=1, failed=1, timeout=BACKOFF * 2)

    run(body, backoff=BACKOFF)
