"""Benchmark of the pure core: pod failure policy decisions per second, and the cost of one Job reconcile
(plan_sync + tracking plan) for Indexed Jobs of growing size, to show it is linear in the number of pods.

Run: python bench/bench_core.py   (prints a table; no assertions — figures go to the README)
"""

from __future__ import annotations

import time
from typing import Any

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from kjobs.api.timeutil import parse_time
from kjobs.job.sync import plan_sync
from kjobs.policy import match_pod_failure_policy

NOW = parse_time("2026-01-01T00:00:00Z")
POLICY = {
    "rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0, 1, 2]}},
    ]
}


def failed_pod(i: int, code: int, disrupted: bool = False) -> dict[str, Any]:
    conditions = [{"type": "DisruptionTarget", "status": "True"}] if disrupted else []
    conditions.append({"type": "Ready", "status": "False", "lastTransitionTime": "2025-12-31T23:59:00Z"})
    return {
        "metadata": {
            "name": f"job-{i}-x",
            "namespace": "default",
            "uid": f"uid-{i}",
            "finalizers": [JOB_TRACKING_FINALIZER],
            "annotations": {JOB_COMPLETION_INDEX_ANNOTATION: str(i)},
        },
        "status": {
            "phase": "Failed",
            "conditions": conditions,
            "containerStatuses": [
                {"name": "main", "state": {"terminated": {"exitCode": code, "finishedAt": "2025-12-31T23:59:00Z"}}}
            ],
        },
    }


def bench_decisions(seconds: float = 2.0) -> float:
    pods = [failed_pod(i, code, disrupted=(i % 3 == 0)) for i, code in enumerate([1, 42, 7, 137, 3, 2])]
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for pod in pods:
            match_pod_failure_policy(POLICY, pod)
        count += len(pods)
    return count / (time.perf_counter() - start)


def indexed_job(n: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "big", "namespace": "default", "uid": "big-uid"},
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": n,
            "backoffLimit": n,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {"rules": POLICY["rules"][1:]},
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}]}},
        },
        "status": {"startTime": "2025-12-31T23:00:00Z", "uncountedTerminatedPods": {}},
    }


def pods_for(n: int) -> list[dict[str, Any]]:
    pods = []
    for i in range(n):
        if i % 10 < 5:
            pod = failed_pod(i, 0)
            pod["status"]["phase"] = "Succeeded"
        elif i % 10 < 8:
            pod = failed_pod(i, 0)
            pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        else:
            pod = failed_pod(i, 1)
        pods.append(pod)
    return pods


def bench_reconcile(n: int, repeat: int = 5) -> float:
    job, pods = indexed_job(n), pods_for(n)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        plan = plan_sync(job, pods, now=NOW)
        plan.after_pod_actions()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    rate = bench_decisions()
    print(f"policy decisions/s (one core, 3-rule policy): {rate:,.0f}")
    print(f"{'pods':>8} {'reconcile ms':>13} {'µs/pod':>8}")
    for n in (1_000, 2_500, 5_000, 10_000):
        seconds = bench_reconcile(n)
        print(f"{n:>8} {seconds * 1000:>13.1f} {seconds / n * 1e6:>8.2f}")


if __name__ == "__main__":
    main()
