"""Benchmark of API-side Job handling: defaulting, PrepareForCreate and validation of a typical manifest.

Run: python bench/bench_validation.py   (prints µs per call; no assertions — figures go to the README)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kjobs.api.defaults import default_job, prepare_job_for_create
from kjobs.api.validation import validate_job, validate_job_status_update, validate_job_update

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default", "labels": {"app": "pi"}},
    "spec": {
        "backoffLimit": 4,
        "podFailurePolicy": {
            "rules": [
                {"action": "FailJob", "onExitCodes": {"containerName": "pi", "operator": "In", "values": [42]}},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            ]
        },
        "template": {
            "metadata": {"labels": {"app": "pi"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "pi",
                        "image": "perl:5.34.0",
                        "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"],
                        "env": [{"name": "MODE", "value": "fast"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                    }
                ],
            },
        },
    },
}


def per_call_us(fn: Callable[[], object], n: int = 20000) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    created = prepare_job_for_create(default_job(JOB), uid="0b7c5a8e-1111-2222-3333-444455556666")
    stored = default_job(created)
    stored["metadata"]["resourceVersion"] = "1"
    status = dict(stored, status={"active": 1, "startTime": "2026-01-01T00:00:00Z"})
    rows = [
        ("default_job", per_call_us(lambda: default_job(JOB))),
        ("prepare_job_for_create", per_call_us(lambda: prepare_job_for_create(JOB, uid="u"))),
        ("validate_job", per_call_us(lambda: validate_job(created))),
        ("validate_job_update", per_call_us(lambda: validate_job_update(stored, stored))),
        ("validate_job_status_update", per_call_us(lambda: validate_job_status_update(status, stored))),
    ]
    for name, us in rows:
        print(f"{name:28s} {us:8.1f} µs")


if __name__ == "__main__":
    main()
