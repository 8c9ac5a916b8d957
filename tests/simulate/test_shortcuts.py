"""What `kjobs simulate` leaves out for speed (issue #15 item 4) changes no decision: the same seed gives the same
Job status, the same trace and the same final state of every pod with and without each shortcut."""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.simulate import SimulationOptions, simulate


def indexed_job(completions: int = 20, parallelism: int = 5) -> Obj:
    """An Indexed Job of instant pods (the default model: every container succeeds at once)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "shortcuts", "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": completions,
            "parallelism": parallelism,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}},
        },
    }


def test_a_results_repr_leaves_out_the_trace_and_the_job() -> None:
    # asyncio.Runner reprs the main task's result when it restores SIGINT: a trace in it cost ~1 s per 10k pods.
    result = simulate(indexed_job(), SimulationOptions(seed=1))
    text = repr(result)
    assert "outcome='Complete'" in text
    assert "pod-created" not in text and "trace" not in text and "managedFields" not in text
