"""The Job the end-to-end benchmarks run: an Indexed Job of `pods` completions, one busybox container.

Shared by bench_run, bench_run_xargs, bench_simulate, bench_http and bench_memory (each puts this directory on
`sys.path`); standard library only, so a benchmark that times its own process does not import kjobs for it.
"""

from __future__ import annotations

from typing import Any


def indexed_job(
    pods: int,
    parallelism: int,
    *,
    name: str = "bench",
    command: list[str] | None = None,
    backoff_limit_per_index: int | None = None,
    max_failed_indexes: int | None = None,
) -> dict[str, Any]:
    """Indexed, `restartPolicy: Never`; `command` for a process runtime (none: the simulated runtime's model
    decides), `backoffLimitPerIndex` and `maxFailedIndexes` when given."""
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    if command is not None:
        container["command"] = command
    spec: dict[str, Any] = {"completionMode": "Indexed", "completions": pods, "parallelism": parallelism}
    if backoff_limit_per_index is not None:
        spec["backoffLimitPerIndex"] = backoff_limit_per_index
    if max_failed_indexes is not None:
        spec["maxFailedIndexes"] = max_failed_indexes
    spec["template"] = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
